/* Reduction entry points and user operations: argument checks, then
 * vmpi_coll_* (coll/select.c) or core/op.c. */
#include <stdlib.h>

#include "inter_coll.h"

int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                MPI_Op op, int root, MPI_Comm comm)
{
    static const char fn[] = "MPI_Reduce";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    INTER_BRANCH(c, inter_reduce(fn, sendbuf, recvbuf, count, datatype, op, root, c, NULL));
    struct vmpi_dtype *dt;
    int rc = coll_reduce_args(c, fn, sendbuf, recvbuf, count, datatype, op, root, &dt);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = vmpi_coll_reduce(sendbuf, recvbuf, count, dt, op, root, c);
    return rc == MPI_SUCCESS ? rc : vmpi_err_handle(c, rc);
}
VMPI_WEAK(Reduce);

int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm)
{
    static const char fn[] = "MPI_Allreduce";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    INTER_BRANCH(c, inter_allreduce(fn, sendbuf, recvbuf, count, datatype, op, c, NULL));
    struct vmpi_dtype *dt;
    int rc = coll_allreduce_args(c, fn, sendbuf, recvbuf, count, datatype, op, &dt);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = vmpi_coll_allreduce(sendbuf, recvbuf, count, dt, op, c);
    return rc == MPI_SUCCESS ? rc : vmpi_err_handle(c, rc);
}
VMPI_WEAK(Allreduce);

int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    static const char fn[] = "MPI_Reduce_scatter";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    INTER_BRANCH(c, inter_reduce_scatter(fn, sendbuf, recvbuf, recvcounts, 0, datatype,
                                         op, c, NULL));
    struct vmpi_dtype *dt;
    int rc = coll_redscat_args(c, fn, sendbuf, recvbuf, recvcounts, 0, true, datatype, op, &dt);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Count *counts = malloc((size_t)c->size * sizeof *counts);
    if (!counts)
        return vmpi_err(c, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    for (int i = 0; i < c->size; i++)
        counts[i] = recvcounts[i];
    rc = vmpi_coll_reduce_scatter(sendbuf, recvbuf, counts, dt, op, c);
    free(counts);
    return rc == MPI_SUCCESS ? rc : vmpi_err_handle(c, rc);
}
VMPI_WEAK(Reduce_scatter);

int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    static const char fn[] = "MPI_Reduce_scatter_block";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    INTER_BRANCH(c, inter_reduce_scatter(fn, sendbuf, recvbuf, NULL, recvcount, datatype,
                                         op, c, NULL));
    struct vmpi_dtype *dt;
    int rc = coll_redscat_args(c, fn, sendbuf, recvbuf, NULL, recvcount, false, datatype, op,
                               &dt);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = vmpi_coll_reduce_scatter_block(sendbuf, recvbuf, recvcount, dt, op, c);
    return rc == MPI_SUCCESS ? rc : vmpi_err_handle(c, rc);
}
VMPI_WEAK(Reduce_scatter_block);

int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm)
{
    static const char fn[] = "MPI_Scan";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    INTER_BRANCH(c, inter_none(c, fn));
    struct vmpi_dtype *dt;
    int rc = coll_allreduce_args(c, fn, sendbuf, recvbuf, count, datatype, op, &dt);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = vmpi_coll_scan(sendbuf, recvbuf, count, dt, op, c);
    return rc == MPI_SUCCESS ? rc : vmpi_err_handle(c, rc);
}
VMPI_WEAK(Scan);

/* recvbuf at rank 0 is left as it was (MPI leaves it undefined). */
int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                MPI_Op op, MPI_Comm comm)
{
    static const char fn[] = "MPI_Exscan";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    INTER_BRANCH(c, inter_none(c, fn));
    struct vmpi_dtype *dt;
    int rc = coll_allreduce_args(c, fn, sendbuf, recvbuf, count, datatype, op, &dt);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = vmpi_coll_exscan(sendbuf, recvbuf, count, dt, op, c);
    return rc == MPI_SUCCESS ? rc : vmpi_err_handle(c, rc);
}
VMPI_WEAK(Exscan);

int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
                      MPI_Op op)
{
    static const char fn[] = "MPI_Reduce_local";
    VMPI_ENTER(fn);
    COUNT_ARG(count, NULL, fn);
    TYPE_ARG(dt, datatype, NULL, fn);
    int rc = op_arg(NULL, op, dt, datatype, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    VMPI_CHECK(inbuf != MPI_IN_PLACE && inoutbuf != MPI_IN_PLACE, NULL, MPI_ERR_BUFFER,
               "%s: MPI_IN_PLACE is not allowed", fn);
    BUF_ARG(inbuf, count, datatype, NULL, fn, "inbuf");
    BUF_ARG(inoutbuf, count, datatype, NULL, fn, "inoutbuf");
    VMPI_CHECK(count == 0 || inbuf != inoutbuf, NULL, MPI_ERR_BUFFER,
               "%s: inbuf and inoutbuf are the same buffer", fn);
    vmpi_op_apply(op, inbuf, inoutbuf, count, dt);
    return MPI_SUCCESS;
}
VMPI_WEAK(Reduce_local);

/* MPI_MAX .. MPI_NO_OP: the predefined ops, which cannot be freed. */
static bool op_predefined(MPI_Op op)
{
    return op >= MPI_MAX && op <= MPI_NO_OP;
}

int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    static const char fn[] = "MPI_Op_create";
    VMPI_ENTER(fn);
    VMPI_CHECK(user_fn != NULL, NULL, MPI_ERR_ARG, "%s: user_fn is NULL", fn);
    VMPI_CHECK(op != NULL, NULL, MPI_ERR_ARG, "%s: op is NULL", fn);
    if (vmpi_op_create(user_fn, commute != 0, op) != MPI_SUCCESS)
        return vmpi_err(NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    return MPI_SUCCESS;
}
VMPI_WEAK(Op_create);

/* An operation still in progress keeps the op alive (vmpi_op_retain). */
int PMPI_Op_free(MPI_Op *op)
{
    static const char fn[] = "MPI_Op_free";
    VMPI_ENTER(fn);
    VMPI_CHECK(op != NULL, NULL, MPI_ERR_ARG, "%s: op is NULL", fn);
    VMPI_CHECK(!op_predefined(*op), NULL, MPI_ERR_OP,
               "%s: op 0x%x is predefined and cannot be freed", fn, (unsigned)*op);
    VMPI_CHECK(vmpi_op_free(*op) == MPI_SUCCESS, NULL, MPI_ERR_OP,
               "%s: op 0x%x is not a valid operation (already freed?)", fn, (unsigned)*op);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}
VMPI_WEAK(Op_free);

int PMPI_Op_commutative(MPI_Op op, int *commute)
{
    static const char fn[] = "MPI_Op_commutative";
    VMPI_ENTER(fn);
    VMPI_CHECK(op_predefined(op) || vmpi_op_is_user(op), NULL, MPI_ERR_OP,
               "%s: op 0x%x is not a valid operation", fn, (unsigned)op);
    VMPI_CHECK(commute != NULL, NULL, MPI_ERR_ARG, "%s: commute is NULL", fn);
    *commute = vmpi_op_commutative(op);
    return MPI_SUCCESS;
}
VMPI_WEAK(Op_commutative);
