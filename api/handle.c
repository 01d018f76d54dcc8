/* Handle and status conversion between C and Fortran (MPI-3.1 17.2.4-5).
 *
 * A handle is the same integer in both languages (MPICH's ABI), so the
 * conversions are the identity and are legal at any time, like MPICH's
 * macros; they are functions here so that bindings which look symbols up
 * (Fortran, FFI libraries) find them. */
#include "api.h"

#include <string.h>

#define VMPI_HANDLE_CONV(Kind, CType)                                 \
    MPI_Fint PMPI_##Kind##_c2f(CType h) { return (MPI_Fint)h; }       \
    CType PMPI_##Kind##_f2c(MPI_Fint h) { return (CType)h; }          \
    VMPI_WEAK(Kind##_c2f);                                            \
    VMPI_WEAK(Kind##_f2c)

VMPI_HANDLE_CONV(Comm, MPI_Comm);
VMPI_HANDLE_CONV(Type, MPI_Datatype);
VMPI_HANDLE_CONV(Group, MPI_Group);
VMPI_HANDLE_CONV(Info, MPI_Info);
VMPI_HANDLE_CONV(Request, MPI_Request);
VMPI_HANDLE_CONV(Op, MPI_Op);
VMPI_HANDLE_CONV(Errhandler, MPI_Errhandler);
VMPI_HANDLE_CONV(Win, MPI_Win);
VMPI_HANDLE_CONV(Message, MPI_Message);

/* Storage behind the Fortran IGNORE sentinels: only their addresses matter. */
static MPI_Fint f_status_ignore[sizeof(MPI_Status) / sizeof(MPI_Fint)];
static MPI_Fint f_statuses_ignore[sizeof(MPI_Status) / sizeof(MPI_Fint)];
VMPI_API_ATTR MPI_Fint *MPI_F_STATUS_IGNORE = f_status_ignore;
VMPI_API_ATTR MPI_Fint *MPI_F_STATUSES_IGNORE = f_statuses_ignore;

_Static_assert(sizeof(MPI_Status) == 5 * sizeof(MPI_Fint),
               "a Fortran status is MPI_Status's five integers");

/* Neither side may be NULL or one of the IGNORE sentinels: there is no
 * status to convert (MPI-3.1 17.2.5). */
static int status_ptr(const void *p, const char *fn, const char *name)
{
    if (!p || p == (const void *)MPI_STATUS_IGNORE || p == (const void *)MPI_STATUSES_IGNORE ||
        p == (const void *)MPI_F_STATUS_IGNORE || p == (const void *)MPI_F_STATUSES_IGNORE)
        return vmpi_err(NULL, MPI_ERR_ARG, "%s: %s is %s", fn, name,
                        p ? "an IGNORE sentinel, not a status" : "NULL");
    return MPI_SUCCESS;
}

int PMPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    int rc = status_ptr(c_status, "MPI_Status_c2f", "c_status");
    if (rc == MPI_SUCCESS)
        rc = status_ptr(f_status, "MPI_Status_c2f", "f_status");
    if (rc == MPI_SUCCESS)
        memcpy(f_status, c_status, sizeof *c_status);
    return rc;
}
VMPI_WEAK(Status_c2f);

int PMPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    int rc = status_ptr(f_status, "MPI_Status_f2c", "f_status");
    if (rc == MPI_SUCCESS)
        rc = status_ptr(c_status, "MPI_Status_f2c", "c_status");
    if (rc == MPI_SUCCESS)
        memcpy(c_status, f_status, sizeof *c_status);
    return rc;
}
VMPI_WEAK(Status_f2c);
