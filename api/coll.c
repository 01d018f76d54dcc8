/* Collective entry points: argument checks, then the algorithms in coll/. */
#include "api.h"

#define COMM_ARG(c, h, fn)                                                              \
    struct vmpi_comm *c = vmpi_comm_get(h);                                             \
    VMPI_CHECK(c, NULL, MPI_ERR_COMM, "%s: comm is not a valid communicator (0x%x)", fn, \
               (unsigned)(h))

#define COUNT_ARG(count, c, fn) \
    VMPI_CHECK((count) >= 0, c, MPI_ERR_COUNT, "%s: count = %d is negative", fn, (count))

#define TYPE_ARG(dt, h, c, fn)                                                           \
    struct vmpi_dtype *dt = vmpi_dtype_get(h);                                           \
    VMPI_CHECK(dt, c, MPI_ERR_TYPE, "%s: datatype is not a valid datatype (0x%x)", fn,    \
               (unsigned)(h));                                                           \
    VMPI_CHECK(vmpi_dtype_committed(dt), c, MPI_ERR_TYPE,                                \
               "%s: datatype is not committed (call MPI_Type_commit)", fn)

#define ROOT_ARG(root, c, fn)                                                         \
    VMPI_CHECK((root) >= 0 && (root) < (c)->size, c, MPI_ERR_ROOT,                   \
               "%s: root = %d is not a rank of the communicator (size %d)", fn, (root), \
               (c)->size)

/* A NULL buffer is an error only with a predefined datatype: with a derived
 * one it may be MPI_BOTTOM plus absolute displacements. */
#define BUF_ARG(buf, count, h, c, fn, name)                                              \
    VMPI_CHECK(!((count) > 0 && (buf) == NULL && VMPI_HKIND(h) != VMPI_HK_INDIRECT), c, \
               MPI_ERR_BUFFER, "%s: %s is NULL with count = %d", fn, name, (count))

static int op_arg(struct vmpi_comm *c, MPI_Op op, struct vmpi_dtype *dt, MPI_Datatype h,
                  const char *fn)
{
    if (op == MPI_REPLACE || op == MPI_NO_OP)
        return vmpi_err(c, MPI_ERR_OP, "%s: MPI_REPLACE and MPI_NO_OP are for one-sided "
                        "accumulates only", fn);
    if (vmpi_op_check(op, dt) != MPI_SUCCESS)
        return vmpi_err(c, MPI_ERR_OP, "%s: op (0x%x) is not a valid operation for datatype "
                        "0x%x", fn, (unsigned)op, (unsigned)h);
    return MPI_SUCCESS;
}

int PMPI_Barrier(MPI_Comm comm)
{
    VMPI_ENTER("MPI_Barrier");
    COMM_ARG(c, comm, "MPI_Barrier");
    int rc = vmpi_coll_barrier(c);
    return rc == MPI_SUCCESS ? rc : vmpi_err_handle(c, rc);
}
VMPI_WEAK(Barrier)

int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    static const char fn[] = "MPI_Bcast";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    COUNT_ARG(count, c, fn);
    TYPE_ARG(dt, datatype, c, fn);
    ROOT_ARG(root, c, fn);
    BUF_ARG(buffer, count, datatype, c, fn, "buffer");
    int rc = vmpi_coll_bcast(buffer, count, dt, root, c);
    return rc == MPI_SUCCESS ? rc : vmpi_err_handle(c, rc);
}
VMPI_WEAK(Bcast)

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
