/* MPI_Comm_idup (MPI-3.1 6.4.2): argument checks and the attribute copies,
 * which run here, at the call, as MPI_Comm_dup's do; the duplicate itself is
 * comm/idup.c's schedule. *newcomm is written when the request completes:
 * the program must not use it before (MPI-3.1 6.4.2). A copy callback that
 * fails returns its error here and the idup does not start on this process
 * (the others' then never completes, as a collective one member left). */
#include "api.h"
#include "../core/attr.h"

int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    static const char fn[] = "MPI_Comm_idup";
    VMPI_ENTER(fn);
    struct vmpi_comm *c = vmpi_comm_get(comm);
    VMPI_CHECK(c, NULL, MPI_ERR_COMM, "%s: comm is not a valid communicator (0x%x)", fn,
               (unsigned)comm);
    VMPI_CHECK(newcomm, c, MPI_ERR_ARG, "%s: newcomm is NULL", fn);
    VMPI_CHECK(request, c, MPI_ERR_ARG, "%s: request is NULL", fn);
    struct vmpi_attr *attrs = NULL;
    int rc = vmpi_attr_copy(c->attrs, c->handle, &attrs, MPI_COMM_NULL);
    if (rc != MPI_SUCCESS)
        return rc > 0 && rc <= MPI_T_ERR_INVALID
                   ? vmpi_err(c, rc, "%s: an attribute copy callback returned error class %d",
                              fn, rc)
                   : vmpi_err_handle(c, rc);
    struct vmpi_req *r = NULL;
    rc = vmpi_comm_idup(c, attrs, newcomm, &r);
    if (rc != MPI_SUCCESS) {
        vmpi_attr_clear(&attrs, MPI_COMM_NULL);
        vmpi_attr_drop(&attrs);
        return vmpi_err_handle(c, rc);
    }
    *request = vmpi_req_handle(r);
    return MPI_SUCCESS;
}
VMPI_WEAK(Comm_idup);
