/* MPI-1 routines removed from the standard (so absent from pympistandard)
 * that vmpi's C library and MPICH's Fortran library still have. Their
 * addresses and displacements are default INTEGERs in Fortran. */
#include "fortran.h"

#include <stdlib.h>

VF_EXPORT void pmpi_address_(void *location, MPI_Fint *address, MPI_Fint *ierror);
void pmpi_address_(void *location, MPI_Fint *address, MPI_Fint *ierror)
{
    MPI_Aint a = 0;
    *ierror = MPI_Address(vf_buf(location), &a);
    *address = (MPI_Fint)a;
}
VF_NAMES(address, ADDRESS)

VF_EXPORT void pmpi_type_hvector_(MPI_Fint *count, MPI_Fint *blocklength, MPI_Fint *stride,
                                  MPI_Fint *oldtype, MPI_Fint *newtype, MPI_Fint *ierror);
void pmpi_type_hvector_(MPI_Fint *count, MPI_Fint *blocklength, MPI_Fint *stride,
                        MPI_Fint *oldtype, MPI_Fint *newtype, MPI_Fint *ierror)
{
    *ierror = MPI_Type_hvector(*count, *blocklength, *stride, *oldtype, newtype);
}
VF_NAMES(type_hvector, TYPE_HVECTOR)

/* INTEGER displacements widened to MPI_Aint; NULL when out of memory. */
static MPI_Aint *vf_aints(const MPI_Fint *d, MPI_Fint n)
{
    MPI_Aint *a = malloc((n > 0 ? (size_t)n : 1) * sizeof *a);
    for (MPI_Fint i = 0; a && i < n; i++)
        a[i] = d[i];
    return a;
}

VF_EXPORT void pmpi_type_hindexed_(MPI_Fint *count, MPI_Fint *blocklens, MPI_Fint *displs,
                                   MPI_Fint *oldtype, MPI_Fint *newtype, MPI_Fint *ierror);
void pmpi_type_hindexed_(MPI_Fint *count, MPI_Fint *blocklens, MPI_Fint *displs,
                         MPI_Fint *oldtype, MPI_Fint *newtype, MPI_Fint *ierror)
{
    MPI_Aint *d = vf_aints(displs, *count);
    *ierror = d ? MPI_Type_hindexed(*count, blocklens, d, *oldtype, newtype) : vf_nomem();
    free(d);
}
VF_NAMES(type_hindexed, TYPE_HINDEXED)

VF_EXPORT void pmpi_type_struct_(MPI_Fint *count, MPI_Fint *blocklens, MPI_Fint *displs,
                                 MPI_Fint *types, MPI_Fint *newtype, MPI_Fint *ierror);
void pmpi_type_struct_(MPI_Fint *count, MPI_Fint *blocklens, MPI_Fint *displs, MPI_Fint *types,
                       MPI_Fint *newtype, MPI_Fint *ierror)
{
    MPI_Aint *d = vf_aints(displs, *count);
    *ierror = d ? MPI_Type_struct(*count, blocklens, d, types, newtype) : vf_nomem();
    free(d);
}
VF_NAMES(type_struct, TYPE_STRUCT)

/* Type_extent, Type_lb and Type_ub: an MPI_Aint result as INTEGER. */
#define VF_TYPE_AINT(lo, UP, Cname)                                                         \
    VF_EXPORT void pmpi_##lo##_(MPI_Fint *datatype, MPI_Fint *out, MPI_Fint *ierror);       \
    void pmpi_##lo##_(MPI_Fint *datatype, MPI_Fint *out, MPI_Fint *ierror)                  \
    {                                                                                        \
        MPI_Aint a = 0;                                                                      \
        *ierror = Cname(*datatype, &a);                                                      \
        *out = (MPI_Fint)a;                                                                  \
    }                                                                                        \
    VF_NAMES(lo, UP)

VF_TYPE_AINT(type_extent, TYPE_EXTENT, MPI_Type_extent)
VF_TYPE_AINT(type_lb, TYPE_LB, MPI_Type_lb)
VF_TYPE_AINT(type_ub, TYPE_UB, MPI_Type_ub)

/* A Fortran error handler takes (comm, code) by reference: C's signature. */
VF_EXPORT void pmpi_errhandler_create_(MPI_Handler_function *fn, MPI_Fint *errhandler,
                                       MPI_Fint *ierror);
void pmpi_errhandler_create_(MPI_Handler_function *fn, MPI_Fint *errhandler, MPI_Fint *ierror)
{
    *ierror = MPI_Errhandler_create(fn, errhandler);
}
VF_NAMES(errhandler_create, ERRHANDLER_CREATE)

VF_EXPORT void pmpi_errhandler_set_(MPI_Fint *comm, MPI_Fint *errhandler, MPI_Fint *ierror);
void pmpi_errhandler_set_(MPI_Fint *comm, MPI_Fint *errhandler, MPI_Fint *ierror)
{
    *ierror = MPI_Errhandler_set(*comm, *errhandler);
}
VF_NAMES(errhandler_set, ERRHANDLER_SET)

VF_EXPORT void pmpi_errhandler_get_(MPI_Fint *comm, MPI_Fint *errhandler, MPI_Fint *ierror);
void pmpi_errhandler_get_(MPI_Fint *comm, MPI_Fint *errhandler, MPI_Fint *ierror)
{
    *ierror = MPI_Errhandler_get(*comm, errhandler);
}
VF_NAMES(errhandler_get, ERRHANDLER_GET)
