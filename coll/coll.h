/* The collectives: what the layers above (comm/, rma/, api/) call. Every
 * one picks a flat or a hierarchical algorithm by size and locality
 * (coll/select.c); the parts of coll/ and their interfaces are in
 * coll_impl.h. Prefix vmpi_coll_ (and, inside coll/, vmpi_flat_,
 * vmpi_hier_, vmpi_node_ for its parts). */
#ifndef VMPI_COLL_COLL_H
#define VMPI_COLL_COLL_H

#include "../core/vmpi.h"

/* Reads VMPI_COLL_* and takes coll's communicator slot; at MPI_Init, after
 * core. */
void vmpi_coll_init(void);

/* data movement */
int vmpi_coll_barrier(struct vmpi_comm *c);
int vmpi_coll_bcast(void *buf, MPI_Count count, struct vmpi_dtype *dt, int root,
                    struct vmpi_comm *c);
/* Same layout on the send and the receive side (count, dt). */
int vmpi_coll_allgather(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                        struct vmpi_comm *c);
/* The MPI forms: send and receive sides may use different type signatures
 * of equal size; counts/displs arrays are indexed by rank; MPI_IN_PLACE as
 * in MPI; alltoallw displacements in bytes. Arguments MPI ignores on a rank
 * (recv side off the gather root, send side with MPI_IN_PLACE, ...) may be
 * NULL, datatypes included. */
int vmpi_coll_allgather2(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt,
                         void *rbuf, MPI_Count rcount, struct vmpi_dtype *rdt,
                         struct vmpi_comm *c);
int vmpi_coll_allgatherv(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt,
                         void *rbuf, const int *rcounts, const int *displs,
                         struct vmpi_dtype *rdt, struct vmpi_comm *c);
int vmpi_coll_gather(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                     MPI_Count rcount, struct vmpi_dtype *rdt, int root, struct vmpi_comm *c);
int vmpi_coll_gatherv(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                      const int *rcounts, const int *displs, struct vmpi_dtype *rdt, int root,
                      struct vmpi_comm *c);
int vmpi_coll_scatter(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                      MPI_Count rcount, struct vmpi_dtype *rdt, int root, struct vmpi_comm *c);
int vmpi_coll_scatterv(const void *sbuf, const int *scounts, const int *displs,
                       struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                       struct vmpi_dtype *rdt, int root, struct vmpi_comm *c);
int vmpi_coll_alltoall(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                       MPI_Count rcount, struct vmpi_dtype *rdt, struct vmpi_comm *c);
int vmpi_coll_alltoallv(const void *sbuf, const int *scounts, const int *sdispls,
                        struct vmpi_dtype *sdt, void *rbuf, const int *rcounts,
                        const int *rdispls, struct vmpi_dtype *rdt, struct vmpi_comm *c);
int vmpi_coll_alltoallw(const void *sbuf, const int *scounts, const int *sdispls,
                        struct vmpi_dtype *const *sdts, void *rbuf, const int *rcounts,
                        const int *rdispls, struct vmpi_dtype *const *rdts, struct vmpi_comm *c);

/* reductions */
int vmpi_coll_reduce(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                     MPI_Op op, int root, struct vmpi_comm *c);
int vmpi_coll_allreduce(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                        MPI_Op op, struct vmpi_comm *c);
/* counts[i] elements of the result go to rank i (c->size entries). */
int vmpi_coll_reduce_scatter(const void *sbuf, void *rbuf, const MPI_Count *counts,
                             struct vmpi_dtype *dt, MPI_Op op, struct vmpi_comm *c);
int vmpi_coll_reduce_scatter_block(const void *sbuf, void *rbuf, MPI_Count count,
                                   struct vmpi_dtype *dt, MPI_Op op, struct vmpi_comm *c);
int vmpi_coll_scan(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                   MPI_Op op, struct vmpi_comm *c);
int vmpi_coll_exscan(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                     MPI_Op op, struct vmpi_comm *c);

/* non-blocking (coll/sched.c): each builds a schedule and starts it; *out
 * is a request of kind VMPI_REQ_COLL that completes when the schedule
 * has. Arguments are checked by the caller; errors: MPI_ERR_NO_MEM. */
struct vmpi_req;
int vmpi_coll_ibarrier(struct vmpi_comm *c, struct vmpi_req **out);
int vmpi_coll_ibcast(void *buf, MPI_Count count, struct vmpi_dtype *dt, int root,
                     struct vmpi_comm *c, struct vmpi_req **out);
int vmpi_coll_ireduce(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                      MPI_Op op, int root, struct vmpi_comm *c, struct vmpi_req **out);
int vmpi_coll_iallreduce(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                         MPI_Op op, struct vmpi_comm *c, struct vmpi_req **out);
int vmpi_coll_iallgather(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt,
                         void *rbuf, MPI_Count rcount, struct vmpi_dtype *rdt,
                         struct vmpi_comm *c, struct vmpi_req **out);
int vmpi_coll_ialltoall(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt,
                        void *rbuf, MPI_Count rcount, struct vmpi_dtype *rdt,
                        struct vmpi_comm *c, struct vmpi_req **out);
/* The other forms, arguments as for the blocking ones (coll/sched_move.c,
 * coll/sched_reduce.c); counts and displacements are read while the
 * schedule is built, so the caller may reuse the arrays at once. */
int vmpi_coll_igather(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                      MPI_Count rcount, struct vmpi_dtype *rdt, int root, struct vmpi_comm *c,
                      struct vmpi_req **out);
int vmpi_coll_igatherv(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                       const int *rcounts, const int *displs, struct vmpi_dtype *rdt, int root,
                       struct vmpi_comm *c, struct vmpi_req **out);
int vmpi_coll_iscatter(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                       MPI_Count rcount, struct vmpi_dtype *rdt, int root, struct vmpi_comm *c,
                       struct vmpi_req **out);
int vmpi_coll_iscatterv(const void *sbuf, const int *scounts, const int *displs,
                        struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                        struct vmpi_dtype *rdt, int root, struct vmpi_comm *c,
                        struct vmpi_req **out);
int vmpi_coll_iallgatherv(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt,
                          void *rbuf, const int *rcounts, const int *displs,
                          struct vmpi_dtype *rdt, struct vmpi_comm *c, struct vmpi_req **out);
int vmpi_coll_ialltoallv(const void *sbuf, const int *scounts, const int *sdispls,
                         struct vmpi_dtype *sdt, void *rbuf, const int *rcounts,
                         const int *rdispls, struct vmpi_dtype *rdt, struct vmpi_comm *c,
                         struct vmpi_req **out);
int vmpi_coll_ialltoallw(const void *sbuf, const int *scounts, const int *sdispls,
                         struct vmpi_dtype *const *sdts, void *rbuf, const int *rcounts,
                         const int *rdispls, struct vmpi_dtype *const *rdts,
                         struct vmpi_comm *c, struct vmpi_req **out);
int vmpi_coll_ireduce_scatter(const void *sbuf, void *rbuf, const int *counts,
                              struct vmpi_dtype *dt, MPI_Op op, struct vmpi_comm *c,
                              struct vmpi_req **out);
int vmpi_coll_ireduce_scatter_block(const void *sbuf, void *rbuf, MPI_Count count,
                                    struct vmpi_dtype *dt, MPI_Op op, struct vmpi_comm *c,
                                    struct vmpi_req **out);
int vmpi_coll_iscan(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                    MPI_Op op, struct vmpi_comm *c, struct vmpi_req **out);
int vmpi_coll_iexscan(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                      MPI_Op op, struct vmpi_comm *c, struct vmpi_req **out);

#endif
