/* MPI entry points for the portable packed form (MPI-3.1 4.2.2):
 * MPI_Pack_external, MPI_Unpack_external, MPI_Pack_external_size with the
 * one data representation they take, "external32" (core/dtype_ext32.c). */
#include "type_args.h"

#include <string.h>

/* Checks what the three share and returns the packed size of
 * (count, datatype) in *bytes. */
static int ext_args(const char *datarep, int count, MPI_Datatype datatype,
                    struct vmpi_dtype **dtp, MPI_Aint *bytes, const char *fn)
{
    VMPI_CHECK(datarep, NULL, MPI_ERR_ARG, "%s: datarep is NULL", fn);
    VMPI_CHECK(strcmp(datarep, "external32") == 0, NULL, MPI_ERR_ARG,
               "%s: datarep \"%.64s\" is not supported (the only one is \"external32\")", fn,
               datarep);
    VMPI_CHECK(count >= 0, NULL, MPI_ERR_COUNT, "%s: count %d is negative", fn, count);
    GET_TYPE(dt, datatype, NULL, fn, "datatype");
    VMPI_CHECK(dt->committed, NULL, MPI_ERR_TYPE,
               "%s: datatype 0x%08x is not committed (MPI_Type_commit it first)", fn,
               (unsigned)datatype);
    VMPI_CHECK(!__builtin_mul_overflow(vmpi_dtype_ext32_size(dt), (MPI_Aint)count, bytes), NULL,
               MPI_ERR_COUNT, "%s: count %d times the external32 size overflows MPI_Aint", fn,
               count);
    *dtp = dt;
    return MPI_SUCCESS;
}

/* Checks *position in a buffer of size bytes with room for need more. */
static int window(const MPI_Aint *position, MPI_Aint size, MPI_Aint need, const void *buf,
                  const char *fn, const char *what)
{
    VMPI_CHECK(position, NULL, MPI_ERR_ARG, "%s: position is NULL", fn);
    VMPI_CHECK(*position >= 0 && *position <= size, NULL, MPI_ERR_ARG,
               "%s: *position %ld is outside [0, %s %ld]", fn, (long)*position, what,
               (long)size);
    VMPI_CHECK(need <= size - *position, NULL, MPI_ERR_TRUNCATE,
               "%s: %ld bytes of external32 data do not fit in the %ld bytes of %s after "
               "*position %ld", fn, (long)need, (long)(size - *position), what,
               (long)*position);
    VMPI_CHECK(need == 0 || buf, NULL, MPI_ERR_BUFFER, "%s: the packed buffer is NULL", fn);
    return MPI_SUCCESS;
}

int PMPI_Pack_external(const char datarep[], const void *inbuf, int incount,
                       MPI_Datatype datatype, void *outbuf, MPI_Aint outsize,
                       MPI_Aint *position)
{
    static const char fn[] = "MPI_Pack_external";
    VMPI_ENTER(fn);
    struct vmpi_dtype *dt;
    MPI_Aint bytes;
    int rc = ext_args(datarep, incount, datatype, &dt, &bytes, fn);
    if (rc == MPI_SUCCESS)
        rc = window(position, outsize, bytes, outbuf, fn, "outsize");
    if (rc != MPI_SUCCESS)
        return rc;
    vmpi_dtype_ext32_pack((char *)outbuf + *position, inbuf, incount, dt);
    *position += bytes;
    return MPI_SUCCESS;
}
VMPI_WEAK(Pack_external);

int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                         MPI_Aint *position, void *outbuf, int outcount,
                         MPI_Datatype datatype)
{
    static const char fn[] = "MPI_Unpack_external";
    VMPI_ENTER(fn);
    struct vmpi_dtype *dt;
    MPI_Aint bytes;
    int rc = ext_args(datarep, outcount, datatype, &dt, &bytes, fn);
    if (rc == MPI_SUCCESS)
        rc = window(position, insize, bytes, inbuf, fn, "insize");
    if (rc != MPI_SUCCESS)
        return rc;
    vmpi_dtype_ext32_unpack(outbuf, outcount, dt, (const char *)inbuf + *position);
    *position += bytes;
    return MPI_SUCCESS;
}
VMPI_WEAK(Unpack_external);

int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                            MPI_Aint *size)
{
    static const char fn[] = "MPI_Pack_external_size";
    VMPI_ENTER(fn);
    struct vmpi_dtype *dt;
    MPI_Aint bytes;
    int rc = ext_args(datarep, incount, datatype, &dt, &bytes, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    CHECK_PTR(size, "MPI_Pack_external_size");
    *size = bytes;
    return MPI_SUCCESS;
}
VMPI_WEAK(Pack_external_size);
