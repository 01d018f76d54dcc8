/* Errors raised on a communicator (or a window, through its private
 * communicator): its error handler decides. Also the user's handlers and
 * the user's error classes and codes (core/attr.h). */
#include "vmpi.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct errh {
    int handle;
    int refs;
    int kind; /* VMPI_ERRH_COMM, _WIN or _FILE */
    vmpi_errh_fn *fn;
};
static struct vmpi_htab errh_tab;

static struct errh *errh_get(MPI_Errhandler e)
{
    if (VMPI_HKIND(e) != VMPI_HK_INDIRECT || VMPI_HTYPE(e) != VMPI_OBJ_ERRH || !VMPI_HINDEX(e))
        return NULL;
    return vmpi_htab_get(&errh_tab, VMPI_HINDEX(e));
}

MPI_Errhandler vmpi_errh_new(int kind, vmpi_errh_fn *fn)
{
    struct errh *h = malloc(sizeof *h);
    uint32_t idx;
    if (!h || vmpi_htab_add(&errh_tab, h, &idx) != 0) {
        free(h);
        return MPI_ERRHANDLER_NULL;
    }
    *h = (struct errh){VMPI_HMAKE(VMPI_HK_INDIRECT, VMPI_OBJ_ERRH, idx), 1, kind, fn};
    return h->handle;
}

bool vmpi_errh_valid(MPI_Errhandler e, int kind)
{
    if (e == MPI_ERRORS_ARE_FATAL || e == MPI_ERRORS_RETURN || e == MPI_ERRORS_ABORT)
        return true;
    struct errh *h = errh_get(e);
    return h && (kind == 0 || h->kind == kind);
}

void vmpi_errh_retain(MPI_Errhandler e)
{
    struct errh *h = errh_get(e);
    if (h)
        h->refs++;
}

void vmpi_errh_release(MPI_Errhandler e)
{
    struct errh *h = errh_get(e);
    if (h && --h->refs == 0) {
        vmpi_htab_del(&errh_tab, VMPI_HINDEX(e));
        free(h);
    }
}

/* ---- user error classes and codes ------------------------------------------ */

struct dyn_err {
    int cls;
    char *text;
};
static struct dyn_err *dyn;
static int ndyn, dyn_cap;
int vmpi_err_lastused = MPI_ERR_LASTCODE;

bool vmpi_err_dyn_valid(int code)
{
    return code > 0 && (code & VMPI_ERR_DYN) && (code & ~VMPI_ERR_DYN) < ndyn;
}

int vmpi_err_add(int errclass)
{
    if (ndyn == dyn_cap) {
        int cap = dyn_cap ? 2 * dyn_cap : 16;
        struct dyn_err *d = realloc(dyn, sizeof *d * (size_t)cap);
        if (!d)
            return -1;
        dyn = d;
        dyn_cap = cap;
    }
    int code = VMPI_ERR_DYN | ndyn;
    dyn[ndyn++] = (struct dyn_err){errclass < 0 ? code : errclass, NULL};
    vmpi_err_lastused = code;
    return code;
}

int vmpi_err_dyn_class(int code)
{
    return dyn[code & ~VMPI_ERR_DYN].cls;
}

/* A user class or code without a string of its own has the empty string
 * (MPI-3.1 8.5), whatever its class says. */
const char *vmpi_err_dyn_text(int code)
{
    const struct dyn_err *e = &dyn[code & ~VMPI_ERR_DYN];
    return e->text ? e->text : "";
}

int vmpi_err_dyn_set_text(int code, const char *text)
{
    char *t = strndup(text, MPI_MAX_ERROR_STRING - 1);
    if (!t)
        return MPI_ERR_NO_MEM;
    struct dyn_err *e = &dyn[code & ~VMPI_ERR_DYN];
    free(e->text);
    e->text = t;
    return MPI_SUCCESS;
}

int vmpi_err_class_of(int code)
{
    if (!(code & VMPI_ERR_DYN))
        return vmpi_err_class(code);
    return vmpi_err_dyn_valid(code) ? vmpi_err_dyn_class(code) : -1;
}

/* User classes and codes stay until MPI_Finalize. */
static void dyn_finalize(void)
{
    for (int i = 0; i < ndyn; i++)
        free(dyn[i].text);
    free(dyn);
    dyn = NULL;
    ndyn = dyn_cap = 0;
    vmpi_err_lastused = MPI_ERR_LASTCODE;
}

void vmpi_errh_set(struct vmpi_comm *c, MPI_Errhandler e)
{
    vmpi_errh_retain(e);
    vmpi_errh_release(c->errh);
    c->errh = e;
}

void vmpi_errh_finalize(void)
{
    for (uint32_t i = 1; i < errh_tab.used; i++)
        free(vmpi_htab_get(&errh_tab, i));
    vmpi_htab_destroy(&errh_tab);
    dyn_finalize();
}

/* ---- raising -------------------------------------------------------------------- */

int vmpi_err_handle(struct vmpi_comm *comm, int code)
{
    if (code == MPI_SUCCESS)
        return code;
    if (!comm)
        comm = vmpi_comm_get(MPI_COMM_WORLD);
    MPI_Errhandler e = comm ? comm->errh : MPI_ERRORS_ARE_FATAL;
    if (e == MPI_ERRORS_RETURN)
        return code;
    struct errh *h = errh_get(e);
    if (h) {
        /* The handler gets the communicator's or the window's handle and
         * the code; the call then returns the code (MPI-3.1 8.3). */
        int obj = comm->errh_obj, c = code;
        MPI_File file = (MPI_File)(uintptr_t)(uint32_t)obj;
        h->fn(h->kind == VMPI_ERRH_FILE ? (int *)(void *)&file : &obj, &c);
        return code;
    }
    /* MPI_ERRORS_ARE_FATAL, and MPI_ERRORS_ABORT (MPI-4.0, in MPICH's
     * header): vmpi aborts the whole job for both, which MPI allows where
     * it cannot abort only the communicator's processes. */
    int cls = vmpi_err_class_of(code);
    const char *text = code & VMPI_ERR_DYN ? (vmpi_err_dyn_valid(code) ? vmpi_err_dyn_text(code)
                                                                        : NULL)
                                           : vmpi_err_text(code);
    vmpi_fatal_status(cls, "%s (error class %d); %s: aborting job",
                      text && *text ? text : "unknown error", cls,
                      e == MPI_ERRORS_ABORT ? "MPI_ERRORS_ABORT" : "MPI_ERRORS_ARE_FATAL");
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
