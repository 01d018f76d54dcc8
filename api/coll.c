/* Collective entry points that move data: argument checks, then
 * vmpi_coll_* (coll/select.c). */
#include <stdlib.h>

#include "inter_coll.h"

int PMPI_Barrier(MPI_Comm comm)
{
    VMPI_ENTER("MPI_Barrier");
    COMM_ARG(c, comm, "MPI_Barrier");
    INTER_BRANCH(c, inter_barrier(c, NULL));
    int rc = vmpi_coll_barrier(c);
    return rc == MPI_SUCCESS ? rc : vmpi_err_handle(c, rc);
}
VMPI_WEAK(Barrier);

int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    static const char fn[] = "MPI_Bcast";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    INTER_BRANCH(c, inter_bcast(fn, buffer, count, datatype, root, c, NULL));
    COUNT_ARG(count, c, fn);
    TYPE_ARG(dt, datatype, c, fn);
    ROOT_ARG(root, c, fn);
    BUF_ARG(buffer, count, datatype, c, fn, "buffer");
    int rc = vmpi_coll_bcast(buffer, count, dt, root, c);
    return rc == MPI_SUCCESS ? rc : vmpi_err_handle(c, rc);
}
VMPI_WEAK(Bcast);

/* ---- argument checks shared by the entry points below -------------------- */

/* Returns the collective's result through the communicator's handler. */
#define DONE(c, call)                                              \
    do {                                                           \
        int rc_ = (call);                                          \
        return rc_ == MPI_SUCCESS ? rc_ : vmpi_err_handle(c, rc_); \
    } while (0)

/* ---- gather and scatter ------------------------------------------------- */

int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    static const char fn[] = "MPI_Gather";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    INTER_BRANCH(c, inter_gather(fn, false, sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                                 NULL, recvtype, root, c, NULL));
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    TRY(coll_gather_args(c, fn, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, NULL,
                         NULL, false, root, &sdt, &rdt));
    DONE(c, vmpi_coll_gather(sendbuf, sendcount, sdt, recvbuf, recvcount, rdt, root, c));
}
VMPI_WEAK(Gather);

int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm)
{
    static const char fn[] = "MPI_Gatherv";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    INTER_BRANCH(c, inter_gather(fn, true, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                                 displs, recvtype, root, c, NULL));
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    TRY(coll_gather_args(c, fn, sendbuf, sendcount, sendtype, recvbuf, 0, recvtype, recvcounts,
                         displs, true, root, &sdt, &rdt));
    DONE(c, vmpi_coll_gatherv(sendbuf, sendcount, sdt, recvbuf, recvcounts, displs, rdt, root,
                              c));
}
VMPI_WEAK(Gatherv);

int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    static const char fn[] = "MPI_Scatter";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    INTER_BRANCH(c, inter_scatter(fn, false, sendbuf, sendcount, NULL, NULL, sendtype, recvbuf,
                                  recvcount, recvtype, root, c, NULL));
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    TRY(coll_scatter_args(c, fn, sendbuf, sendcount, NULL, NULL, false, sendtype, recvbuf,
                          recvcount, recvtype, root, &sdt, &rdt));
    DONE(c, vmpi_coll_scatter(sendbuf, sendcount, sdt, recvbuf, recvcount, rdt, root, c));
}
VMPI_WEAK(Scatter);

int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm)
{
    static const char fn[] = "MPI_Scatterv";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    INTER_BRANCH(c, inter_scatter(fn, true, sendbuf, 0, sendcounts, displs, sendtype, recvbuf,
                                  recvcount, recvtype, root, c, NULL));
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    TRY(coll_scatter_args(c, fn, sendbuf, 0, sendcounts, displs, true, sendtype, recvbuf,
                          recvcount, recvtype, root, &sdt, &rdt));
    DONE(c, vmpi_coll_scatterv(sendbuf, sendcounts, displs, sdt, recvbuf, recvcount, rdt, root,
                               c));
}
VMPI_WEAK(Scatterv);

/* ---- allgather ---------------------------------------------------------- */

int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char fn[] = "MPI_Allgather";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    INTER_BRANCH(c, inter_allgather(fn, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                    NULL, NULL, recvtype, c, NULL));
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    TRY(coll_blocks_args(c, fn, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                         true, &sdt, &rdt));
    DONE(c, vmpi_coll_allgather2(sendbuf, sendcount, sdt, recvbuf, recvcount, rdt, c));
}
VMPI_WEAK(Allgather);

int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm)
{
    static const char fn[] = "MPI_Allgatherv";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    INTER_BRANCH(c, inter_allgather(fn, sendbuf, sendcount, sendtype, recvbuf, 0,
                                    recvcounts, displs, recvtype, c, NULL));
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    TRY(coll_allgatherv_args(c, fn, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                             recvtype, &sdt, &rdt));
    DONE(c, vmpi_coll_allgatherv(sendbuf, sendcount, sdt, recvbuf, recvcounts, displs, rdt, c));
}
VMPI_WEAK(Allgatherv);

/* ---- alltoall ----------------------------------------------------------- */

int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char fn[] = "MPI_Alltoall";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    INTER_BRANCH(c, inter_alltoall(fn, sendbuf, sendcount, NULL, NULL, sendtype, NULL,
                                   recvbuf, recvcount, NULL, NULL, recvtype, NULL, c, NULL));
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    TRY(coll_blocks_args(c, fn, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                         false, &sdt, &rdt));
    DONE(c, vmpi_coll_alltoall(sendbuf, sendcount, sdt, recvbuf, recvcount, rdt, c));
}
VMPI_WEAK(Alltoall);

int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char fn[] = "MPI_Alltoallv";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    INTER_BRANCH(c, inter_alltoall(fn, sendbuf, 0, sendcounts, sdispls, sendtype, NULL,
                                   recvbuf, 0, recvcounts, rdispls, recvtype, NULL, c, NULL));
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    TRY(coll_alltoallv_args(c, fn, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                            rdispls, recvtype, &sdt, &rdt));
    DONE(c, vmpi_coll_alltoallv(sendbuf, sendcounts, sdispls, sdt, recvbuf, recvcounts,
                                rdispls, rdt, c));
}
VMPI_WEAK(Alltoallv);

int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    static const char fn[] = "MPI_Alltoallw";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    INTER_BRANCH(c, inter_alltoall(fn, sendbuf, 0, sendcounts, sdispls, MPI_DATATYPE_NULL,
                                   sendtypes, recvbuf, 0, recvcounts, rdispls,
                                   MPI_DATATYPE_NULL, recvtypes, c, NULL));
    int rc;
    struct vmpi_dtype **dts = coll_alltoallw_args(c, fn, sendbuf, sendcounts, sdispls, sendtypes,
                                                  recvbuf, recvcounts, rdispls, recvtypes, &rc);
    if (!dts)
        return rc;
    rc = vmpi_coll_alltoallw(sendbuf, sendcounts, sdispls, dts, recvbuf, recvcounts, rdispls,
                             dts + c->size, c);
    free(dts);
    return rc == MPI_SUCCESS ? rc : vmpi_err_handle(c, rc);
}
VMPI_WEAK(Alltoallw);
