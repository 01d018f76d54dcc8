/* MPI entry points for the Fortran-kind datatypes usable from C (MPI-3.1
 * 17.1.9): MPI_Type_match_size and MPI_Type_create_f90_real/_complex/
 * _integer, with gfortran's kinds on x86_64: REAL(4), REAL(8), REAL(10) (the
 * x87 long double), REAL(16) (IEEE quad), INTEGER(1/2/4/8). */
#include "type_args.h"

/* The smallest kind with at least p decimal digits and exponent range r
 * (MPI_UNDEFINED: any), as SELECTED_REAL_KIND chooses; 0 if none. */
static MPI_Datatype real_kind(int p, int r, bool complex)
{
    static const struct { int p, r; MPI_Datatype real, cplx; } kinds[] = {
        { 6, 37, MPI_REAL4, MPI_COMPLEX8 },
        { 15, 307, MPI_REAL8, MPI_COMPLEX16 },
        { 18, 4931, MPI_LONG_DOUBLE, MPI_C_LONG_DOUBLE_COMPLEX },
        { 33, 4931, MPI_REAL16, MPI_COMPLEX32 },
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if ((p == MPI_UNDEFINED || p <= kinds[i].p) && (r == MPI_UNDEFINED || r <= kinds[i].r))
            return complex ? kinds[i].cplx : kinds[i].real;
    return 0;
}

static int f90(int combiner, int p, int r, MPI_Datatype base, MPI_Datatype *newtype,
               const char *fn)
{
    VMPI_CHECK(newtype, NULL, MPI_ERR_ARG, "%s: newtype is NULL", fn);
    if (!base) {
        if (combiner == MPI_COMBINER_F90_INTEGER)
            return vmpi_err(NULL, MPI_ERR_ARG, "%s: no integer kind has a decimal exponent "
                            "range of %d (at most 18)", fn, p);
        return vmpi_err(NULL, MPI_ERR_ARG, "%s: no real kind has both %d digits of precision "
                        "and an exponent range of %d (at most 33 and 4931)", fn, p, r);
    }
    struct vmpi_dtype *dt;
    if (vmpi_dtype_f90(combiner, p, r, base, &dt) != MPI_SUCCESS)
        return vmpi_err(NULL, MPI_ERR_NO_MEM, "%s: out of memory for the new datatype", fn);
    *newtype = dt->handle;
    return MPI_SUCCESS;
}

int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    VMPI_ENTER("MPI_Type_create_f90_real");
    return f90(MPI_COMBINER_F90_REAL, p, r, real_kind(p, r, false), newtype,
               "MPI_Type_create_f90_real");
}
VMPI_WEAK(Type_create_f90_real);

int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    VMPI_ENTER("MPI_Type_create_f90_complex");
    return f90(MPI_COMBINER_F90_COMPLEX, p, r, real_kind(p, r, true), newtype,
               "MPI_Type_create_f90_complex");
}
VMPI_WEAK(Type_create_f90_complex);

int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    VMPI_ENTER("MPI_Type_create_f90_integer");
    MPI_Datatype base = r == MPI_UNDEFINED || r <= 2 ? MPI_INTEGER1
                        : r <= 4                      ? MPI_INTEGER2
                        : r <= 9                      ? MPI_INTEGER4
                        : r <= 18                     ? MPI_INTEGER8
                                                      : 0;
    return f90(MPI_COMBINER_F90_INTEGER, r, 0, base, newtype, "MPI_Type_create_f90_integer");
}
VMPI_WEAK(Type_create_f90_integer);

int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    static const char fn[] = "MPI_Type_match_size";
    VMPI_ENTER(fn);
    static const MPI_Datatype real[] = { MPI_REAL4, MPI_REAL8, MPI_REAL16 },
                              integer[] = { MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4,
                                            MPI_INTEGER8 },
                              complex[] = { MPI_COMPLEX8, MPI_COMPLEX16, MPI_COMPLEX32 };
    const MPI_Datatype *set;
    size_t n;
    static const char *const cls[] = { "MPI_TYPECLASS_REAL", "MPI_TYPECLASS_INTEGER",
                                       "MPI_TYPECLASS_COMPLEX" };
    switch (typeclass) {
    case MPI_TYPECLASS_REAL: set = real, n = 3; break;
    case MPI_TYPECLASS_INTEGER: set = integer, n = 4; break;
    case MPI_TYPECLASS_COMPLEX: set = complex, n = 3; break;
    default:
        return vmpi_err(NULL, MPI_ERR_ARG, "%s: typeclass %d is not MPI_TYPECLASS_REAL, "
                        "_INTEGER or _COMPLEX", fn, typeclass);
    }
    CHECK_PTR(datatype, "MPI_Type_match_size");
    for (size_t i = 0; i < n; i++) {
        if (vmpi_dtype_size(vmpi_dtype_get(set[i])) == size) {
            *datatype = set[i];
            return MPI_SUCCESS;
        }
    }
    return vmpi_err(NULL, MPI_ERR_ARG, "%s: no predefined type of %s has size %d", fn,
                    cls[typeclass - 1], size);
}
VMPI_WEAK(Type_match_size);
