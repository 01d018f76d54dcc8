/* Argument checks shared by the collective entry points (api/coll.c,
 * api/reduce.c, api/icoll.c). */
#ifndef VMPI_API_COLL_ARGS_H
#define VMPI_API_COLL_ARGS_H

#include "api.h"

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

static inline int op_arg(struct vmpi_comm *c, MPI_Op op, struct vmpi_dtype *dt, MPI_Datatype h,
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

#define REQUEST_ARG(request, c, fn) \
    VMPI_CHECK(request, c, MPI_ERR_ARG, "%s: request is NULL", fn)

/* Hands a started non-blocking collective to the user. A collective that
 * did not start has reported why through vmpi_err (its handler has run
 * once), so rc is only passed on. */
static inline int coll_started(int rc, struct vmpi_req *r, MPI_Request *request)
{
    if (rc != MPI_SUCCESS)
        return rc;
    *request = vmpi_req_handle(r);
    return MPI_SUCCESS;
}

/* Checks that report through vmpi_err (api/coll_args.c); each returns
 * MPI_SUCCESS or the error code. */
/* A datatype argument; idx >= 0 names an element of a types array. */
int coll_type_arg(struct vmpi_comm *c, const char *fn, const char *name, int idx,
                  MPI_Datatype h, struct vmpi_dtype **dt);
/* Whether buf is NULL with a predefined datatype (with a derived one NULL
 * may be MPI_BOTTOM plus absolute displacements). */
int coll_null_buf(const void *buf, MPI_Datatype h);
/* (buf, count, type) of one side, on a rank where it is significant; side
 * is "send" or "recv". */
int coll_data_arg(struct vmpi_comm *c, const char *fn, const char *side, const void *buf,
                  int count, MPI_Datatype h, struct vmpi_dtype **dt);
/* sendbuf == recvbuf when data moves (moves != 0) and both are not MPI_BOTTOM. */
int coll_alias_arg(struct vmpi_comm *c, const char *fn, const void *sendbuf,
                   const void *recvbuf, int moves);
/* buf must not be MPI_IN_PLACE; where completes the message. */
int coll_not_in_place(struct vmpi_comm *c, const char *fn, const void *buf, const char *name,
                      const char *where);

/* The checks of whole collectives, shared by the blocking and non-blocking
 * forms (fn names the caller). vform: the v form, with a counts array
 * (recvcounts / sendcounts) and displs instead of one count. The datatypes
 * significant on this rank come back in *sdt, *rdt, *dt. */
int coll_gather_args(struct vmpi_comm *c, const char *fn, const void *sendbuf, int sendcount,
                     MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                     const int *recvcounts, const int *displs, bool vform, int root,
                     struct vmpi_dtype **sdt, struct vmpi_dtype **rdt);
int coll_scatter_args(struct vmpi_comm *c, const char *fn, const void *sendbuf, int sendcount,
                      const int *sendcounts, const int *displs, bool vform,
                      MPI_Datatype sendtype, void *recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root,
                      struct vmpi_dtype **sdt, struct vmpi_dtype **rdt);
int coll_allgatherv_args(struct vmpi_comm *c, const char *fn, const void *sendbuf,
                         int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         const int *recvcounts, const int *displs, MPI_Datatype recvtype,
                         struct vmpi_dtype **sdt, struct vmpi_dtype **rdt);
/* Allgather (gather: also sendbuf at this rank's block of recvbuf is
 * aliasing) and Alltoall: every rank sends one block to every rank, itself
 * included. */
int coll_blocks_args(struct vmpi_comm *c, const char *fn, const void *sendbuf, int sendcount,
                     MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                     bool gather, struct vmpi_dtype **sdt, struct vmpi_dtype **rdt);
int coll_alltoallv_args(struct vmpi_comm *c, const char *fn, const void *sendbuf,
                        const int *sendcounts, const int *sdispls, MPI_Datatype sendtype,
                        void *recvbuf, const int *recvcounts, const int *rdispls,
                        MPI_Datatype recvtype, struct vmpi_dtype **sdt, struct vmpi_dtype **rdt);
/* The send types at [0, p), the receive types at [p, 2p) of the returned
 * array (free it), or NULL with the error in *rc. */
struct vmpi_dtype **coll_alltoallw_args(struct vmpi_comm *c, const char *fn,
                                        const void *sendbuf, const int *sendcounts,
                                        const int *sdispls, const MPI_Datatype *sendtypes,
                                        void *recvbuf, const int *recvcounts,
                                        const int *rdispls, const MPI_Datatype *recvtypes,
                                        int *rc);
/* Allreduce, Scan, Exscan (and their non-blocking forms). */
int coll_allreduce_args(struct vmpi_comm *c, const char *fn, const void *sendbuf, void *recvbuf,
                        int count, MPI_Datatype datatype, MPI_Op op, struct vmpi_dtype **dt);
/* Reduce and Ireduce: the same at root; elsewhere only sendbuf counts. */
int coll_reduce_args(struct vmpi_comm *c, const char *fn, const void *sendbuf, void *recvbuf,
                     int count, MPI_Datatype datatype, MPI_Op op, int root,
                     struct vmpi_dtype **dt);
/* Reduce_scatter (vform: recvcounts) and Reduce_scatter_block (recvcount). */
int coll_redscat_args(struct vmpi_comm *c, const char *fn, const void *sendbuf, void *recvbuf,
                      const int *recvcounts, int recvcount, bool vform, MPI_Datatype datatype,
                      MPI_Op op, struct vmpi_dtype **dt);

#endif
