/* Collectives on intercommunicators (coll/inter.c, vmpi_inter_): MPI-3.1
 * 5.2.2's meaning, where one group gives and the other receives. `root` is
 * MPI_ROOT on the root, MPI_PROC_NULL on the rest of the root's group and
 * the root's rank in the remote group on the other group; counts, types and
 * displacement arrays are those MPI defines for each side (arrays indexed by
 * remote rank). No MPI_IN_PLACE. Arguments are checked by the caller. */
#ifndef VMPI_COLL_INTER_H
#define VMPI_COLL_INTER_H

#include "../core/vmpi.h"

int vmpi_inter_barrier(struct vmpi_comm *c);
int vmpi_inter_bcast(void *buf, MPI_Count count, struct vmpi_dtype *dt, int root,
                     struct vmpi_comm *c);
int vmpi_inter_gather(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                      MPI_Count rcount, struct vmpi_dtype *rdt, int root, struct vmpi_comm *c);
int vmpi_inter_gatherv(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                       const int *rcounts, const int *displs, struct vmpi_dtype *rdt, int root,
                       struct vmpi_comm *c);
int vmpi_inter_scatter(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                       MPI_Count rcount, struct vmpi_dtype *rdt, int root, struct vmpi_comm *c);
int vmpi_inter_scatterv(const void *sbuf, const int *scounts, const int *displs,
                        struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                        struct vmpi_dtype *rdt, int root, struct vmpi_comm *c);
int vmpi_inter_allgather(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt,
                         void *rbuf, MPI_Count rcount, struct vmpi_dtype *rdt,
                         struct vmpi_comm *c);
/* The v and w forms and alltoall exchange with every remote process
 * directly; alltoallw displacements are in bytes, one type per peer. */
int vmpi_inter_exchange(const void *sbuf, const int *scounts, const MPI_Aint *sdispls,
                        struct vmpi_dtype *const *sdts, void *rbuf, const int *rcounts,
                        const MPI_Aint *rdispls, struct vmpi_dtype *const *rdts,
                        struct vmpi_comm *c);
int vmpi_inter_reduce(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                      MPI_Op op, int root, struct vmpi_comm *c);
int vmpi_inter_allreduce(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                         MPI_Op op, struct vmpi_comm *c);
/* counts: this group's share of the result, c->size entries; their sum
 * must equal the other group's. */
int vmpi_inter_reduce_scatter(const void *sbuf, void *rbuf, const int *counts,
                              struct vmpi_dtype *dt, MPI_Op op, struct vmpi_comm *c);

/* The non-blocking forms (coll/inter_sched.c): the same arguments and a
 * request (*out). gather and scatter take counts NULL for the plain form
 * (count, blocks i * count apart) and the v form's counts and displs;
 * iexchange serves alltoall(v,w) and allgather(v), named fn. */
int vmpi_inter_ibarrier(struct vmpi_comm *c, struct vmpi_req **out);
int vmpi_inter_ibcast(void *buf, MPI_Count count, struct vmpi_dtype *dt, int root,
                      struct vmpi_comm *c, struct vmpi_req **out);
int vmpi_inter_igather(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                       MPI_Count rcount, const int *rcounts, const int *displs,
                       struct vmpi_dtype *rdt, int root, struct vmpi_comm *c,
                       struct vmpi_req **out);
int vmpi_inter_iscatter(const void *sbuf, MPI_Count scount, const int *scounts,
                        const int *displs, struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                        struct vmpi_dtype *rdt, int root, struct vmpi_comm *c,
                        struct vmpi_req **out);
int vmpi_inter_iexchange(const char *fn, const void *sbuf, const int *scounts,
                         const MPI_Aint *sdispls, struct vmpi_dtype *const *sdts, void *rbuf,
                         const int *rcounts, const MPI_Aint *rdispls,
                         struct vmpi_dtype *const *rdts, struct vmpi_comm *c,
                         struct vmpi_req **out);
int vmpi_inter_ireduce(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                       MPI_Op op, int root, struct vmpi_comm *c, struct vmpi_req **out);
int vmpi_inter_iallreduce(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                          MPI_Op op, struct vmpi_comm *c, struct vmpi_req **out);
int vmpi_inter_ireduce_scatter(const char *fn, const void *sbuf, void *rbuf, const int *counts,
                               struct vmpi_dtype *dt, MPI_Op op, struct vmpi_comm *c,
                               struct vmpi_req **out);

#endif
