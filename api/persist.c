/* Persistent point-to-point requests (MPI-3.1 3.9): the *_init calls keep
 * the arguments; MPI_Start posts the operation, which the request's
 * `inner` holds until a completion call retires it (api/p2p.c). */
#include "p2p_args.h"
#include "../core/dtype_impl.h"

static int persistent_init(const char *fn, void *buf, int count, MPI_Datatype datatype,
                           int peer, int tag, MPI_Comm comm, int kind, int mode,
                           MPI_Request *request)
{
    struct vmpi_comm *c;
    struct vmpi_dtype *dt;
    int rc = p2p_check_buf(fn, comm, &c, buf, count, datatype, &dt);
    if (rc == MPI_SUCCESS)
        rc = kind == VMPI_REQ_SEND ? p2p_check_dest(fn, c, peer, tag)
                                   : p2p_check_src(fn, c, peer, tag);
    if (rc != MPI_SUCCESS)
        return rc;
    VMPI_CHECK(request, c, MPI_ERR_ARG, "%s: request is NULL", fn);
    struct vmpi_req *r = vmpi_req_alloc(kind);
    r->persistent = 1;
    r->mode = (uint8_t)mode;
    r->buf = buf;
    r->count = count;
    r->dt = dt;
    r->peer = peer;
    r->tag = tag;
    r->comm = c;
    vmpi_comm_retain(c);
    vmpi_dtype_ref(dt);
    *request = vmpi_req_handle(r);
    return MPI_SUCCESS;
}

int PMPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
    VMPI_ENTER("MPI_Send_init");
    return persistent_init("MPI_Send_init", (void *)buf, count, datatype, dest, tag, comm,
                           VMPI_REQ_SEND, VMPI_MODE_STD, request);
}
VMPI_WEAK(Send_init);

int PMPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request *request)
{
    VMPI_ENTER("MPI_Ssend_init");
    return persistent_init("MPI_Ssend_init", (void *)buf, count, datatype, dest, tag, comm,
                           VMPI_REQ_SEND, VMPI_MODE_SYNC, request);
}
VMPI_WEAK(Ssend_init);

int PMPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request *request)
{
    VMPI_ENTER("MPI_Rsend_init");
    return persistent_init("MPI_Rsend_init", (void *)buf, count, datatype, dest, tag, comm,
                           VMPI_REQ_SEND, VMPI_MODE_READY, request);
}
VMPI_WEAK(Rsend_init);

int PMPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request *request)
{
    VMPI_ENTER("MPI_Bsend_init");
    return persistent_init("MPI_Bsend_init", (void *)buf, count, datatype, dest, tag, comm,
                           VMPI_REQ_SEND, VMPI_MODE_BUFFERED, request);
}
VMPI_WEAK(Bsend_init);

int PMPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
    VMPI_ENTER("MPI_Recv_init");
    return persistent_init("MPI_Recv_init", buf, count, datatype, source, tag, comm,
                           VMPI_REQ_RECV, VMPI_MODE_STD, request);
}
VMPI_WEAK(Recv_init);

static int start_one(const char *fn, MPI_Request *request)
{
    VMPI_CHECK(request, NULL, MPI_ERR_ARG, "%s: request is NULL", fn);
    struct vmpi_req *r = vmpi_req_from_handle(*request);
    VMPI_CHECK(r && r->persistent, NULL, MPI_ERR_REQUEST,
               "%s: request %#x is not a persistent request", fn, (unsigned)*request);
    VMPI_CHECK(!r->active, r->comm, MPI_ERR_REQUEST, "%s: request %#x is already active", fn,
               (unsigned)*request);
    if (r->mode == VMPI_MODE_BUFFERED) {
        /* The message is in the attached buffer when MPI_Start returns:
         * the operation is complete at once, as MPI_Ibsend's is. */
        int rc = vmpi_bsend(fn, r->buf, r->count, r->dt, r->peer, r->tag, r->comm);
        if (rc != MPI_SUCCESS)
            return rc;
        r->inner = vmpi_bsend_req();
    } else if (r->kind == VMPI_REQ_SEND) {
        vmpi_p2p_isend(r->buf, r->count, r->dt, r->peer, r->tag, r->comm, 0, r->mode,
                       &r->inner);
    } else {
        vmpi_p2p_irecv(r->buf, r->count, r->dt, r->peer, r->tag, r->comm, 0, &r->inner);
    }
    r->active = 1;
    return MPI_SUCCESS;
}

int PMPI_Start(MPI_Request *request)
{
    VMPI_ENTER("MPI_Start");
    return start_one("MPI_Start", request);
}
VMPI_WEAK(Start);

int PMPI_Startall(int count, MPI_Request array_of_requests[])
{
    VMPI_ENTER("MPI_Startall");
    VMPI_CHECK(count >= 0, NULL, MPI_ERR_COUNT, "MPI_Startall: count %d is negative", count);
    VMPI_CHECK(count == 0 || array_of_requests, NULL, MPI_ERR_ARG,
               "MPI_Startall: array_of_requests is NULL");
    for (int i = 0; i < count; i++) {
        int rc = start_one("MPI_Startall", &array_of_requests[i]);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}
VMPI_WEAK(Startall);
