/* Error codes, messages and error handlers. */
#include "vmpi.h"
#include "../pmi/pmi.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Formatted messages live in a ring; a code remembers its slot (1..RING)
 * so MPI_Error_string can give the detailed text while it is recent. */
#define ERR_RING 64
#define ERR_CLASS_BITS 7
static char err_msgs[ERR_RING][MPI_MAX_ERROR_STRING];
static int err_codes[ERR_RING];
static unsigned err_next;

int vmpi_err_class(int code)
{
    return code & ((1 << ERR_CLASS_BITS) - 1);
}

const char *vmpi_err_text(int code)
{
    int slot = code >> ERR_CLASS_BITS;
    if (slot >= 1 && slot <= ERR_RING && err_codes[slot - 1] == code)
        return err_msgs[slot - 1];
    return NULL;
}

_Noreturn void vmpi_fatal(const char *fmt, ...)
{
    char msg[MPI_MAX_ERROR_STRING];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "vmpi: rank %d: %s\n", vmpi_g.rank, msg);
    fflush(stderr);
    vmpi_pmi_abort(1, msg);
    _exit(1);
}

int vmpi_err_handle(struct vmpi_comm *comm, int code)
{
    if (code == MPI_SUCCESS)
        return code;
    if (!comm)
        comm = vmpi_comm_get(MPI_COMM_WORLD);
    if (comm && comm->errh == MPI_ERRORS_RETURN)
        return code;
    const char *text = vmpi_err_text(code);
    vmpi_fatal("%s (error class %d); MPI_ERRORS_ARE_FATAL: aborting job",
               text ? text : "unknown error", vmpi_err_class(code));
}

int vmpi_err(struct vmpi_comm *comm, int errclass, const char *fmt, ...)
{
    unsigned i = err_next++ % ERR_RING;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err_msgs[i], sizeof err_msgs[i], fmt, ap);
    va_end(ap);
    int code = errclass | (int)((i + 1) << ERR_CLASS_BITS);
    err_codes[i] = code;
    return vmpi_err_handle(comm, code);
}
