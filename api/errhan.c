/* Error handlers (MPI-3.1 8.3) and user error classes, codes and strings
 * (8.5): argument checks, then core/err.c, which also calls the handlers
 * when an error is raised. Window handlers live on the window's private
 * communicator and get the window's handle (MPI_Win_set_errhandler is
 * api/win.c's). */
#include "api.h"
#include "../rma/rma.h"

#include <string.h>

static int create(const char *fn, int kind, vmpi_errh_fn *f, MPI_Errhandler *errhandler)
{
    VMPI_CHECK(f, NULL, MPI_ERR_ARG, "%s: the handler function is NULL", fn);
    VMPI_CHECK(errhandler, NULL, MPI_ERR_ARG, "%s: errhandler is NULL", fn);
    MPI_Errhandler e = vmpi_errh_new(kind, f);
    VMPI_CHECK(e != MPI_ERRHANDLER_NULL, NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    *errhandler = e;
    return MPI_SUCCESS;
}

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *comm_errhandler_fn,
                                MPI_Errhandler *errhandler)
{
    VMPI_ENTER("MPI_Comm_create_errhandler");
    return create("MPI_Comm_create_errhandler", VMPI_ERRH_COMM, comm_errhandler_fn, errhandler);
}
VMPI_WEAK(Comm_create_errhandler);

int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *win_errhandler_fn,
                               MPI_Errhandler *errhandler)
{
    VMPI_ENTER("MPI_Win_create_errhandler");
    return create("MPI_Win_create_errhandler", VMPI_ERRH_WIN, win_errhandler_fn, errhandler);
}
VMPI_WEAK(Win_create_errhandler);

static int comm_set(const char *fn, MPI_Comm comm, MPI_Errhandler errhandler)
{
    COMM_ARG(c, comm, fn);
    VMPI_CHECK(vmpi_errh_valid(errhandler, VMPI_ERRH_COMM), c, MPI_ERR_ARG,
               "%s: errhandler (0x%x) is neither predefined nor a communicator error handler",
               fn, (unsigned)errhandler);
    vmpi_errh_set(c, errhandler);
    return MPI_SUCCESS;
}

/* The handle returned is a new reference: the caller frees it
 * (MPI-3.1 8.3.1). */
static int comm_get(const char *fn, MPI_Comm comm, MPI_Errhandler *errhandler)
{
    COMM_ARG(c, comm, fn);
    VMPI_CHECK(errhandler, c, MPI_ERR_ARG, "%s: errhandler is NULL", fn);
    vmpi_errh_retain(c->errh);
    *errhandler = c->errh;
    return MPI_SUCCESS;
}

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    VMPI_ENTER("MPI_Comm_set_errhandler");
    return comm_set("MPI_Comm_set_errhandler", comm, errhandler);
}
VMPI_WEAK(Comm_set_errhandler);

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    VMPI_ENTER("MPI_Comm_get_errhandler");
    return comm_get("MPI_Comm_get_errhandler", comm, errhandler);
}
VMPI_WEAK(Comm_get_errhandler);

/* The MPI-1 names, removed by MPI-3.0 but still exported by MPICH (and
 * called by programs built against it). */
int PMPI_Errhandler_create(MPI_Comm_errhandler_function *function, MPI_Errhandler *errhandler)
{
    VMPI_ENTER("MPI_Errhandler_create");
    return create("MPI_Errhandler_create", VMPI_ERRH_COMM, function, errhandler);
}
VMPI_WEAK(Errhandler_create);

int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    VMPI_ENTER("MPI_Errhandler_set");
    return comm_set("MPI_Errhandler_set", comm, errhandler);
}
VMPI_WEAK(Errhandler_set);

int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    VMPI_ENTER("MPI_Errhandler_get");
    return comm_get("MPI_Errhandler_get", comm, errhandler);
}
VMPI_WEAK(Errhandler_get);

/* A user handler stays while a communicator or window uses it; freeing a
 * predefined one only nulls the handle (as MPICH does). */
int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    static const char fn[] = "MPI_Errhandler_free";
    VMPI_ENTER(fn);
    VMPI_CHECK(errhandler, NULL, MPI_ERR_ARG, "%s: errhandler is NULL", fn);
    VMPI_CHECK(vmpi_errh_valid(*errhandler, 0), NULL, MPI_ERR_ARG,
               "%s: *errhandler (0x%x) is not a valid error handler", fn,
               (unsigned)*errhandler);
    vmpi_errh_release(*errhandler);
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}
VMPI_WEAK(Errhandler_free);

/* The handler runs as for an error raised by an MPI call; the call
 * returns MPI_SUCCESS when it comes back (MPI-3.1 8.3.6). */
int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    static const char fn[] = "MPI_Comm_call_errhandler";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    vmpi_err_handle(c, errorcode);
    return MPI_SUCCESS;
}
VMPI_WEAK(Comm_call_errhandler);

int PMPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    static const char fn[] = "MPI_Win_call_errhandler";
    VMPI_ENTER(fn);
    struct vmpi_win *w = vmpi_win_get(win);
    VMPI_CHECK(w, NULL, MPI_ERR_WIN, "%s: win is not a valid window (0x%x)", fn,
               (unsigned)win);
    vmpi_err_handle(w->comm, errorcode);
    return MPI_SUCCESS;
}
VMPI_WEAK(Win_call_errhandler);

/* ---- user error classes, codes, strings ------------------------------------------ */

int PMPI_Add_error_class(int *errorclass)
{
    static const char fn[] = "MPI_Add_error_class";
    VMPI_ENTER(fn);
    VMPI_CHECK(errorclass, NULL, MPI_ERR_ARG, "%s: errorclass is NULL", fn);
    int cls = vmpi_err_add(-1);
    VMPI_CHECK(cls >= 0, NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    *errorclass = cls;
    return MPI_SUCCESS;
}
VMPI_WEAK(Add_error_class);

int PMPI_Add_error_code(int errorclass, int *errorcode)
{
    static const char fn[] = "MPI_Add_error_code";
    VMPI_ENTER(fn);
    VMPI_CHECK(errorcode, NULL, MPI_ERR_ARG, "%s: errorcode is NULL", fn);
    bool user = vmpi_err_dyn_valid(errorclass) && vmpi_err_dyn_class(errorclass) == errorclass;
    VMPI_CHECK(user || (errorclass > MPI_SUCCESS && errorclass <= MPI_T_ERR_INVALID), NULL,
               MPI_ERR_ARG, "%s: errorclass %d (0x%x) is not an error class", fn, errorclass,
               (unsigned)errorclass);
    int code = vmpi_err_add(errorclass);
    VMPI_CHECK(code >= 0, NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    *errorcode = code;
    return MPI_SUCCESS;
}
VMPI_WEAK(Add_error_code);

int PMPI_Add_error_string(int errorcode, const char *string)
{
    static const char fn[] = "MPI_Add_error_string";
    VMPI_ENTER(fn);
    VMPI_CHECK(string, NULL, MPI_ERR_ARG, "%s: string is NULL", fn);
    VMPI_CHECK(vmpi_err_dyn_valid(errorcode), NULL, MPI_ERR_ARG,
               "%s: errorcode %d (0x%x) is not a user error class or code (only those made by "
               "MPI_Add_error_class or MPI_Add_error_code take a string)",
               fn, errorcode, (unsigned)errorcode);
    VMPI_CHECK(strlen(string) < MPI_MAX_ERROR_STRING, NULL, MPI_ERR_ARG,
               "%s: string is %zu characters long, more than MPI_MAX_ERROR_STRING - 1 (%d)", fn,
               strlen(string), MPI_MAX_ERROR_STRING - 1);
    VMPI_CHECK(vmpi_err_dyn_set_text(errorcode, string) == MPI_SUCCESS, NULL, MPI_ERR_NO_MEM,
               "%s: out of memory", fn);
    return MPI_SUCCESS;
}
VMPI_WEAK(Add_error_string);
