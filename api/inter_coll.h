/* The collective entry points' intercommunicator branch (api/inter_coll.c):
 * the collectives call these when comm is an intercommunicator (c->local
 * set). Each checks the arguments as MPI-3.1 5.2.2 defines them there
 * (root: MPI_ROOT, MPI_PROC_NULL or a remote rank; no MPI_IN_PLACE), runs
 * coll/inter.c, or with a request (the non-blocking forms, request already
 * checked) coll/inter_sched.c, and reports through the communicator's
 * handler. fn names the caller. */
#ifndef VMPI_API_INTER_COLL_H
#define VMPI_API_INTER_COLL_H

#include "coll_args.h"

int inter_barrier(struct vmpi_comm *c, MPI_Request *request);
/* vform: Gatherv / Scatterv, whose counts and displs only the root gives. */
int inter_bcast(const char *fn, void *buf, int count, MPI_Datatype datatype, int root,
                struct vmpi_comm *c, MPI_Request *request);
int inter_gather(const char *fn, bool vform, const void *sendbuf, int sendcount,
                 MPI_Datatype sendtype,
                 void *recvbuf, int recvcount, const int *recvcounts, const int *displs,
                 MPI_Datatype recvtype, int root, struct vmpi_comm *c, MPI_Request *request);
int inter_scatter(const char *fn, bool vform, const void *sendbuf, int sendcount,
                  const int *sendcounts,
                  const int *displs, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, int root, struct vmpi_comm *c, MPI_Request *request);
/* Allgather (recvcounts NULL) and Allgatherv. */
int inter_allgather(const char *fn, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                    void *recvbuf, int recvcount, const int *recvcounts, const int *displs,
                    MPI_Datatype recvtype, struct vmpi_comm *c, MPI_Request *request);
/* Alltoall (counts NULL: sendcount, recvcount), Alltoallv (sendtypes NULL)
 * and Alltoallw. */
int inter_alltoall(const char *fn, const void *sendbuf, int sendcount, const int *sendcounts,
                   const int *sdispls, MPI_Datatype sendtype, const MPI_Datatype *sendtypes,
                   void *recvbuf, int recvcount, const int *recvcounts, const int *rdispls,
                   MPI_Datatype recvtype, const MPI_Datatype *recvtypes, struct vmpi_comm *c,
                   MPI_Request *request);
int inter_reduce(const char *fn, const void *sendbuf, void *recvbuf, int count,
                 MPI_Datatype datatype, MPI_Op op, int root, struct vmpi_comm *c,
                 MPI_Request *request);
int inter_allreduce(const char *fn, const void *sendbuf, void *recvbuf, int count,
                    MPI_Datatype datatype, MPI_Op op, struct vmpi_comm *c, MPI_Request *request);
/* Reduce_scatter (recvcounts) and Reduce_scatter_block (recvcounts NULL). */
int inter_reduce_scatter(const char *fn, const void *sendbuf, void *recvbuf,
                         const int *recvcounts, int recvcount, MPI_Datatype datatype,
                         MPI_Op op, struct vmpi_comm *c, MPI_Request *request);
/* Scan, Exscan and their non-blocking forms, which MPI does not define on
 * intercommunicators: MPI_ERR_COMM naming fn. */
int inter_none(struct vmpi_comm *c, const char *fn);

#define INTER_BRANCH(c, call)              \
    do {                                   \
        if (VMPI_UNLIKELY((c)->local))     \
            return (call);                 \
    } while (0)

#endif
