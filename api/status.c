/* Status objects and request status without completion (MPI-3.1 3.7.3,
 * 12.2): MPI_Request_get_status and the setters a generalized request's
 * query callback uses. A status holds the received size in bytes
 * (vmpi_req_status_set_count); MPI_Status_set_elements stores the bytes of
 * `count` basic elements of the datatype, so MPI_Get_elements gives count
 * back and MPI_Get_count gives what that many bytes are in whole
 * datatype elements. */
#include "p2p_args.h"
#include "../core/dtype_impl.h"

#include <stdint.h>

int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    VMPI_ENTER("MPI_Request_get_status");
    VMPI_CHECK(flag, NULL, MPI_ERR_ARG, "MPI_Request_get_status: flag is NULL");
    struct vmpi_req *r = NULL;
    if (request != MPI_REQUEST_NULL) {
        r = vmpi_req_from_handle(request);
        VMPI_CHECK(r && r->kind != VMPI_REQ_MSG, NULL, MPI_ERR_REQUEST,
                   "MPI_Request_get_status: invalid request %#x", (unsigned)request);
        if (r->persistent)
            r = r->active ? r->inner : NULL;
    }
    *flag = 1;
    if (!r) { /* null or inactive: an empty status */
        p2p_empty_status(status);
        return MPI_SUCCESS;
    }
    if (!r->done)
        vmpi_progress();
    if (!(*flag = r->done))
        return MPI_SUCCESS;
    if (r->kind == VMPI_REQ_GREQ)
        vmpi_greq_query(r);
    vmpi_req_status(status, r);
    if (r->kind == VMPI_REQ_RECV)
        return p2p_recv_error("MPI_Request_get_status", r);
    if (r->st_error != MPI_SUCCESS)
        return vmpi_err(r->comm, r->st_error,
                        "MPI_Request_get_status: the operation of request %#x failed",
                        (unsigned)request);
    return MPI_SUCCESS;
}
VMPI_WEAK(Request_get_status);

int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    VMPI_ENTER("MPI_Status_set_cancelled");
    VMPI_CHECK(status && status != MPI_STATUS_IGNORE, NULL, MPI_ERR_ARG,
               "MPI_Status_set_cancelled: status is NULL or MPI_STATUS_IGNORE");
    status->count_hi_and_cancelled = (status->count_hi_and_cancelled & ~1) | (flag ? 1 : 0);
    return MPI_SUCCESS;
}
VMPI_WEAK(Status_set_cancelled);

/* The largest byte count a status holds: 32 bits in count_lo, 31 above the
 * cancelled bit. */
#define STATUS_COUNT_MAX ((MPI_Count)INT64_MAX)

/* Bytes of the first n basic elements of the packed form of dt elements
 * (the inverse of vmpi_dtype_elements); false if a status cannot hold them. */
static bool elements_bytes(const struct vmpi_dtype *dt, MPI_Count n, MPI_Count *bytes)
{
    *bytes = 0;
    if (n == 0 || dt->nelem == 0)
        return true;
    MPI_Count whole = n / dt->nelem, rest = n % dt->nelem;
    if (whole > (STATUS_COUNT_MAX - dt->size) / dt->size)
        return false;
    MPI_Count b = whole * dt->size;
    for (size_t i = 0; rest > 0 && i < dt->nblk; i++) {
        const struct vmpi_dblk *k = &dt->blk[i];
        MPI_Count in = k->len * k->rep / k->esize;
        MPI_Count t = rest < in ? rest : in;
        b += t * k->esize;
        rest -= t;
    }
    *bytes = b;
    return true;
}

static int set_elements(const char *fn, MPI_Status *status, MPI_Datatype datatype,
                        MPI_Count count)
{
    VMPI_CHECK(status && status != MPI_STATUS_IGNORE, NULL, MPI_ERR_ARG,
               "%s: status is NULL or MPI_STATUS_IGNORE", fn);
    struct vmpi_dtype *dt = vmpi_dtype_get(datatype);
    VMPI_CHECK(dt, NULL, MPI_ERR_TYPE, "%s: invalid datatype %#x", fn, (unsigned)datatype);
    VMPI_CHECK(count >= 0, NULL, MPI_ERR_COUNT, "%s: count %lld is negative", fn,
               (long long)count);
    MPI_Count bytes;
    VMPI_CHECK(elements_bytes(dt, count, &bytes), NULL, MPI_ERR_COUNT,
               "%s: %lld elements of datatype %#x are more bytes than a status holds", fn,
               (long long)count, (unsigned)datatype);
    vmpi_req_status_set_count(status, bytes);
    return MPI_SUCCESS;
}

int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
    VMPI_ENTER("MPI_Status_set_elements");
    return set_elements("MPI_Status_set_elements", status, datatype, count);
}
VMPI_WEAK(Status_set_elements);

int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    VMPI_ENTER("MPI_Status_set_elements_x");
    return set_elements("MPI_Status_set_elements_x", status, datatype, count);
}
VMPI_WEAK(Status_set_elements_x);
