/* Generalized requests (MPI-3.1 12.2): requests whose operation the
 * application runs itself and completes with MPI_Grequest_complete.
 *
 * The callbacks are called where the standard says: query when a
 * completion call (MPI_Wait, MPI_Test and their array forms) retires the
 * request, and by MPI_Request_get_status; free after query in that same
 * call, or, for a request the user freed with MPI_Request_free, when both
 * MPI_Request_free and MPI_Grequest_complete have happened; cancel on
 * MPI_Cancel, told whether the request is complete already. A NULL
 * callback does nothing and succeeds. */
#include "vmpi.h"

#include <stdlib.h>

struct greq {
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *free;
    MPI_Grequest_cancel_function *cancel;
    void *extra;
    MPI_Status st; /* what the query callback last filled */
    bool freed;    /* the free callback has run */
};

struct vmpi_req *vmpi_greq_start(MPI_Grequest_query_function *query_fn,
                                 MPI_Grequest_free_function *free_fn,
                                 MPI_Grequest_cancel_function *cancel_fn, void *extra_state)
{
    struct greq *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    struct vmpi_req *r = vmpi_req_alloc(VMPI_REQ_GREQ);
    g->query = query_fn;
    g->free = free_fn;
    g->cancel = cancel_fn;
    g->extra = extra_state;
    r->tmp = g; /* freed with the request */
    return r;
}

void vmpi_greq_query(struct vmpi_req *r)
{
    struct greq *g = r->tmp;
    /* What a query callback that sets nothing leaves (MPICH does the same). */
    g->st = (MPI_Status){.MPI_SOURCE = MPI_UNDEFINED, .MPI_TAG = MPI_UNDEFINED,
                         .MPI_ERROR = MPI_SUCCESS};
    r->st_error = g->query ? g->query(g->extra, &g->st) : MPI_SUCCESS;
}

void vmpi_greq_release(struct vmpi_req *r)
{
    struct greq *g = r->tmp;
    if (g->freed)
        return;
    g->freed = true;
    int rc = g->free ? g->free(g->extra) : MPI_SUCCESS;
    if (r->st_error == MPI_SUCCESS)
        r->st_error = rc;
}

void vmpi_greq_retire(struct vmpi_req *r)
{
    struct greq *g = r->tmp;
    if (g->freed)
        return; /* retired already (an array call settles before it finishes) */
    vmpi_greq_query(r);
    vmpi_greq_release(r);
}

void vmpi_greq_status(MPI_Status *st, const struct vmpi_req *r)
{
    const struct greq *g = r->tmp;
    st->MPI_SOURCE = g->st.MPI_SOURCE;
    st->MPI_TAG = g->st.MPI_TAG;
    st->count_lo = g->st.count_lo;
    st->count_hi_and_cancelled = g->st.count_hi_and_cancelled;
}

int vmpi_greq_cancel(struct vmpi_req *r)
{
    struct greq *g = r->tmp;
    return g->cancel ? g->cancel(g->extra, r->done) : MPI_SUCCESS;
}
