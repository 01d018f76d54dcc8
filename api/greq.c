/* Generalized requests (MPI-3.1 12.2); core/greq.c calls the callbacks,
 * the completion calls of api/p2p.c retire them like any request. */
#include "api.h"

int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn,
                        MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                        MPI_Request *request)
{
    VMPI_ENTER("MPI_Grequest_start");
    VMPI_CHECK(request, NULL, MPI_ERR_ARG, "MPI_Grequest_start: request is NULL");
    struct vmpi_req *r = vmpi_greq_start(query_fn, free_fn, cancel_fn, extra_state);
    VMPI_CHECK(r, NULL, MPI_ERR_NO_MEM,
               "MPI_Grequest_start: out of memory for a generalized request");
    *request = vmpi_req_handle(r);
    return MPI_SUCCESS;
}
VMPI_WEAK(Grequest_start);

int PMPI_Grequest_complete(MPI_Request request)
{
    VMPI_ENTER("MPI_Grequest_complete");
    struct vmpi_req *r = vmpi_req_from_handle(request);
    VMPI_CHECK(r && r->kind == VMPI_REQ_GREQ, NULL, MPI_ERR_REQUEST,
               "MPI_Grequest_complete: request %#x is not a generalized request "
               "(MPI_Grequest_start)",
               (unsigned)request);
    VMPI_CHECK(!r->done, NULL, MPI_ERR_REQUEST,
               "MPI_Grequest_complete: generalized request %#x is complete already",
               (unsigned)request);
    vmpi_req_complete(r);
    return MPI_SUCCESS;
}
VMPI_WEAK(Grequest_complete);
