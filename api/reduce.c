/* Reduction entry points and user operations: argument checks, then
 * vmpi_coll_* (coll/select.c). */
#include "coll_args.h"

int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                MPI_Op op, int root, MPI_Comm comm)
{
    static const char fn[] = "MPI_Reduce";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    COUNT_ARG(count, c, fn);
    TYPE_ARG(dt, datatype, c, fn);
    ROOT_ARG(root, c, fn);
    int rc = op_arg(c, op, dt, datatype, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    if (c->rank == root) {
        BUF_ARG(recvbuf, count, datatype, c, fn, "recvbuf");
        VMPI_CHECK(recvbuf != MPI_IN_PLACE, c, MPI_ERR_BUFFER, "%s: recvbuf is MPI_IN_PLACE",
                   fn);
        if (sendbuf != MPI_IN_PLACE)
            BUF_ARG(sendbuf, count, datatype, c, fn, "sendbuf");
        VMPI_CHECK(count == 0 || sendbuf != recvbuf, c, MPI_ERR_BUFFER,
                   "%s: sendbuf and recvbuf are the same buffer (use MPI_IN_PLACE)", fn);
    } else {
        VMPI_CHECK(sendbuf != MPI_IN_PLACE, c, MPI_ERR_BUFFER,
                   "%s: sendbuf is MPI_IN_PLACE on a rank that is not the root", fn);
        BUF_ARG(sendbuf, count, datatype, c, fn, "sendbuf");
    }
    rc = vmpi_coll_reduce(sendbuf, recvbuf, count, dt, op, root, c);
    return rc == MPI_SUCCESS ? rc : vmpi_err_handle(c, rc);
}
VMPI_WEAK(Reduce)

int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm)
{
    static const char fn[] = "MPI_Allreduce";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    COUNT_ARG(count, c, fn);
    TYPE_ARG(dt, datatype, c, fn);
    int rc = op_arg(c, op, dt, datatype, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    BUF_ARG(recvbuf, count, datatype, c, fn, "recvbuf");
    VMPI_CHECK(recvbuf != MPI_IN_PLACE, c, MPI_ERR_BUFFER, "%s: recvbuf is MPI_IN_PLACE", fn);
    if (sendbuf != MPI_IN_PLACE)
        BUF_ARG(sendbuf, count, datatype, c, fn, "sendbuf");
    VMPI_CHECK(count == 0 || sendbuf != recvbuf, c, MPI_ERR_BUFFER,
               "%s: sendbuf and recvbuf are the same buffer (use MPI_IN_PLACE)", fn);
    rc = vmpi_coll_allreduce(sendbuf, recvbuf, count, dt, op, c);
    return rc == MPI_SUCCESS ? rc : vmpi_err_handle(c, rc);
}
VMPI_WEAK(Allreduce)
