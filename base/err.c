/* Error codes with their messages, and the fatal exit. */
#include "base.h"

#include <stdarg.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

struct vmpi_job vmpi_job;

/* Formatted messages live in a ring; a code remembers its slot (1..RING)
 * so MPI_Error_string can give the detailed text while it is recent. */
#define ERR_RING 64
#define ERR_CLASS_BITS 7
static char err_msgs[ERR_RING][MPI_MAX_ERROR_STRING];
static int err_codes[ERR_RING];
static unsigned err_next;
static void (*abort_hook)(int status, const char *msg);
static bool abort_reported;

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

int vmpi_err_make(int errclass, const char *fmt, ...)
{
    unsigned i = err_next++ % ERR_RING;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err_msgs[i], sizeof err_msgs[i], fmt, ap);
    va_end(ap);
    int code = errclass | (int)((i + 1) << ERR_CLASS_BITS);
    err_codes[i] = code;
    return code;
}

void vmpi_fatal_hook(void (*abort_job)(int status, const char *msg), bool reported)
{
    abort_hook = abort_job;
    abort_reported = reported;
}

/* A process manager that forwards our output and kills the job on an abort
 * (Hydra) may take the abort before it has read the last words still in the
 * stdout/stderr pipes, and they are lost. Once the pipes are empty, the
 * output is ahead of the abort; bounded, as a stuck reader must not hold
 * the exit. */
static void drain_output(void)
{
    for (int waited_ms = 0; waited_ms < 1000; waited_ms++) {
        int left = 0, n;
        for (int fd = 1; fd <= 2; fd++)
            if (ioctl(fd, FIONREAD, &n) == 0)
                left += n;
        if (left == 0)
            return;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
}

static _Noreturn void fatal(int status, const char *fmt, va_list ap)
{
    char msg[MPI_MAX_ERROR_STRING];
    vsnprintf(msg, sizeof msg, fmt, ap);
    fflush(stdout);
    if (!abort_hook || !abort_reported) {
        fprintf(stderr, "vmpi: rank %d: %s\n", vmpi_job.rank, msg);
        fflush(stderr);
    }
    if (abort_hook) {
        drain_output();
        abort_hook(status, msg);
    }
    _exit(status & 0xff ? status & 0xff : 1);
}

_Noreturn void vmpi_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fatal(1, fmt, ap);
}

_Noreturn void vmpi_fatal_status(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fatal(status, fmt, ap);
}
