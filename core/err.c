/* Errors raised on a communicator: its error handler decides. */
#include "vmpi.h"

#include <stdarg.h>
#include <stdio.h>

int vmpi_err_handle(struct vmpi_comm *comm, int code)
{
    if (code == MPI_SUCCESS)
        return code;
    if (!comm)
        comm = vmpi_comm_get(MPI_COMM_WORLD);
    if (comm && comm->errh == MPI_ERRORS_RETURN)
        return code;
    const char *text = vmpi_err_text(code);
    vmpi_fatal_status(vmpi_err_class(code), "%s (error class %d); MPI_ERRORS_ARE_FATAL: "
                      "aborting job", text ? text : "unknown error", vmpi_err_class(code));
}

int vmpi_err(struct vmpi_comm *comm, int errclass, const char *fmt, ...)
{
    char msg[MPI_MAX_ERROR_STRING];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return vmpi_err_handle(comm, vmpi_err_make(errclass, "%s", msg));
}
