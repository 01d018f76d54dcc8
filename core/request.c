/* Requests: a pool of objects, each with a fixed table index. The index and
 * a generation number form the cookie a peer echoes back (ACK, CTS, FIN), so
 * a stale or forged cookie is detected instead of dereferenced. */
#include "vmpi.h"
#include "dtype_impl.h"

#include <stdlib.h>
#include <string.h>

static struct vmpi_htab req_tab;
static struct vmpi_req *req_free;

/* A handle's 26 index bits carry the table index (low 20) and the low 6
 * bits of the generation: a stale handle whose slot was reused is refused
 * (63 times in 64) instead of acting on the request that now lives there. */
enum { REQ_INDEX_BITS = 20, REQ_GEN_BITS = 6 };
#define REQ_INDEX_MASK ((1u << REQ_INDEX_BITS) - 1)

struct vmpi_req *vmpi_req_alloc(int kind)
{
    struct vmpi_req *r = req_free;
    uint32_t index, gen;
    if (r) {
        req_free = r->next;
        index = r->index;
        gen = r->gen;
    } else {
        r = malloc(sizeof *r);
        if (!r || vmpi_htab_add(&req_tab, r, &index)) {
            free(r);
            vmpi_fatal("out of memory allocating a request");
        }
        if (index > REQ_INDEX_MASK)
            vmpi_fatal("more than %u requests exist at once", REQ_INDEX_MASK + 1);
        gen = 1;
    }
    memset(r, 0, sizeof *r);
    r->index = index;
    r->gen = gen;
    r->kind = (uint8_t)kind;
    r->x.cookie = ((uint64_t)gen << 32) | index;
    r->handle = MPI_REQUEST_NULL;
    r->st_error = MPI_SUCCESS;
    return r;
}

int vmpi_req_handle(struct vmpi_req *r)
{
    uint32_t gen = r->gen & ((1u << REQ_GEN_BITS) - 1);
    r->handle = VMPI_HMAKE(VMPI_HK_INDIRECT, VMPI_OBJ_REQ, r->index | gen << REQ_INDEX_BITS);
    return r->handle;
}

struct vmpi_req *vmpi_req_from_handle(MPI_Request h)
{
    if (VMPI_HKIND(h) != VMPI_HK_INDIRECT || VMPI_HTYPE(h) != VMPI_OBJ_REQ)
        return NULL;
    struct vmpi_req *r = vmpi_htab_get(&req_tab, VMPI_HINDEX(h) & REQ_INDEX_MASK);
    return r && r->handle == h ? r : NULL;
}

struct vmpi_req *vmpi_req_from_cookie(uint64_t cookie)
{
    struct vmpi_req *r = vmpi_htab_get(&req_tab, (uint32_t)cookie);
    if (!r || r->gen != (uint32_t)(cookie >> 32) || r->kind == 0)
        return NULL;
    return r;
}

void vmpi_req_free(struct vmpi_req *r)
{
    if (VMPI_UNLIKELY(r->kind == VMPI_REQ_GREQ))
        vmpi_greq_release(r);
    if (r->dt)
        vmpi_dtype_unref(r->dt);
    r->dt = NULL;
    /* Requests keep their communicator alive past MPI_Comm_free. */
    if (r->comm)
        vmpi_comm_release(r->comm);
    r->comm = NULL;
    free(r->tmp);
    r->tmp = NULL;
    r->kind = 0;
    r->handle = MPI_REQUEST_NULL;
    r->gen++;
    r->next = req_free;
    req_free = r;
}

void vmpi_req_complete(struct vmpi_req *r)
{
    r->done = 1;
    if (r->inflight)
        vmpi_p2p_inflight_end(r);
    if (r->user_freed)
        vmpi_req_free(r);
}

void vmpi_req_status_set_count(MPI_Status *st, MPI_Count bytes)
{
    /* MPICH's layout: low 32 bits in count_lo, the rest shifted left by one
     * above the cancelled bit. */
    st->count_lo = (int)(uint32_t)bytes;
    st->count_hi_and_cancelled =
        (st->count_hi_and_cancelled & 1) | (int)(((uint64_t)bytes >> 32) << 1);
}

MPI_Count vmpi_req_status_count(const MPI_Status *st)
{
    return (MPI_Count)(((uint64_t)((uint32_t)st->count_hi_and_cancelled >> 1) << 32) |
                       (uint32_t)st->count_lo);
}

void vmpi_req_status(MPI_Status *st, const struct vmpi_req *r)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    st->count_hi_and_cancelled = r->cancelled ? 1 : 0;
    if (r->kind == VMPI_REQ_RECV) {
        st->MPI_SOURCE = r->st_source;
        st->MPI_TAG = r->st_tag;
        vmpi_req_status_set_count(st, (MPI_Count)r->st_bytes);
    } else if (VMPI_UNLIKELY(r->kind == VMPI_REQ_GREQ)) {
        vmpi_greq_status(st, r);
    } else {
        st->MPI_SOURCE = MPI_ANY_SOURCE;
        st->MPI_TAG = MPI_ANY_TAG;
        vmpi_req_status_set_count(st, 0);
    }
}

int vmpi_req_cancel(struct vmpi_req *r)
{
    if (r->kind == VMPI_REQ_GREQ)
        return vmpi_greq_cancel(r);
    vmpi_p2p_cancel_recv(r);
    return MPI_SUCCESS;
}

/* Last step of MPI_Finalize: the requests in the pool, and those the
 * program never completed or freed (their communicators and datatypes are
 * gone already, so only their own memory is left). */
void vmpi_req_pool_finalize(void)
{
    req_free = NULL;
    for (uint32_t i = 0; i < req_tab.used; i++) {
        struct vmpi_req *r = vmpi_htab_get(&req_tab, i);
        if (r) {
            free(r->tmp);
            free(r);
        }
    }
    vmpi_htab_destroy(&req_tab);
}
