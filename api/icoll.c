/* Non-blocking collective entry points: the argument checks of the blocking
 * forms plus the request, then vmpi_coll_i* (coll/sched.c); the v/w forms,
 * reduce_scatter and the scans are in api/icoll_v.c. */
#include "inter_coll.h"

int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    static const char fn[] = "MPI_Ibarrier";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    REQUEST_ARG(request, c, fn);
    INTER_BRANCH(c, inter_barrier(c, request));
    struct vmpi_req *r = NULL;
    int rc = vmpi_coll_ibarrier(c, &r);
    return coll_started(rc, r, request);
}
VMPI_WEAK(Ibarrier);

int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                MPI_Request *request)
{
    static const char fn[] = "MPI_Ibcast";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    REQUEST_ARG(request, c, fn);
    INTER_BRANCH(c, inter_bcast(fn, buffer, count, datatype, root, c, request));
    COUNT_ARG(count, c, fn);
    TYPE_ARG(dt, datatype, c, fn);
    ROOT_ARG(root, c, fn);
    BUF_ARG(buffer, count, datatype, c, fn, "buffer");
    struct vmpi_req *r = NULL;
    int rc = vmpi_coll_ibcast(buffer, count, dt, root, c, &r);
    return coll_started(rc, r, request);
}
VMPI_WEAK(Ibcast);

int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                 MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
    static const char fn[] = "MPI_Ireduce";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    REQUEST_ARG(request, c, fn);
    INTER_BRANCH(c, inter_reduce(fn, sendbuf, recvbuf, count, datatype, op, root, c, request));
    struct vmpi_dtype *dt;
    int rc = coll_reduce_args(c, fn, sendbuf, recvbuf, count, datatype, op, root, &dt);
    if (rc != MPI_SUCCESS)
        return rc;
    struct vmpi_req *r = NULL;
    rc = vmpi_coll_ireduce(sendbuf, recvbuf, count, dt, op, root, c, &r);
    return coll_started(rc, r, request);
}
VMPI_WEAK(Ireduce);

int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    static const char fn[] = "MPI_Iallreduce";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    REQUEST_ARG(request, c, fn);
    INTER_BRANCH(c, inter_allreduce(fn, sendbuf, recvbuf, count, datatype, op, c, request));
    struct vmpi_dtype *dt;
    int rc = coll_allreduce_args(c, fn, sendbuf, recvbuf, count, datatype, op, &dt);
    if (rc != MPI_SUCCESS)
        return rc;
    struct vmpi_req *r = NULL;
    rc = vmpi_coll_iallreduce(sendbuf, recvbuf, count, dt, op, c, &r);
    return coll_started(rc, r, request);
}
VMPI_WEAK(Iallreduce);

/* ---- Iallgather, Ialltoall ------------------------------------------------ */

/* Beyond the blocking forms' checks: the block this rank sends must fit the
 * block it receives (its own block shows a mismatch here, before any
 * message; every rank with the same arguments refuses alike). */
static int fits_arg(struct vmpi_comm *c, const char *fn, const void *sendbuf, int sendcount,
                    const struct vmpi_dtype *sdt, int recvcount, const struct vmpi_dtype *rdt)
{
    if (sendbuf == MPI_IN_PLACE)
        return MPI_SUCCESS;
    MPI_Count sbytes = sendcount * vmpi_dtype_size(sdt);
    MPI_Count rbytes = recvcount * vmpi_dtype_size(rdt);
    if (sbytes > rbytes)
        return vmpi_err(c, MPI_ERR_TRUNCATE,
                        "%s: a block of sendcount x sendtype (%lld bytes) does not fit in "
                        "recvcount x recvtype (%lld bytes)",
                        fn, (long long)sbytes, (long long)rbytes);
    return MPI_SUCCESS;
}

int PMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    static const char fn[] = "MPI_Iallgather";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    REQUEST_ARG(request, c, fn);
    INTER_BRANCH(c, inter_allgather(fn, sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                                    NULL, recvtype, c, request));
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    TRY(coll_blocks_args(c, fn, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                         true, &sdt, &rdt));
    TRY(fits_arg(c, fn, sendbuf, sendcount, sdt, recvcount, rdt));
    struct vmpi_req *r = NULL;
    int rc = vmpi_coll_iallgather(sendbuf, sendcount, sdt, recvbuf, recvcount, rdt, c, &r);
    return coll_started(rc, r, request);
}
VMPI_WEAK(Iallgather);

int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    static const char fn[] = "MPI_Ialltoall";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    REQUEST_ARG(request, c, fn);
    INTER_BRANCH(c, inter_alltoall(fn, sendbuf, sendcount, NULL, NULL, sendtype, NULL, recvbuf,
                                   recvcount, NULL, NULL, recvtype, NULL, c, request));
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    TRY(coll_blocks_args(c, fn, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                         false, &sdt, &rdt));
    TRY(fits_arg(c, fn, sendbuf, sendcount, sdt, recvcount, rdt));
    struct vmpi_req *r = NULL;
    int rc = vmpi_coll_ialltoall(sendbuf, sendcount, sdt, recvbuf, recvcount, rdt, c, &r);
    return coll_started(rc, r, request);
}
VMPI_WEAK(Ialltoall);
