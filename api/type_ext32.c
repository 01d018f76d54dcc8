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

/* MPI_Pack_external (pack) and MPI_Unpack_external: count elements of
 * datatype at buf to or from the external32 bytes at ext + *position. */
static int ext_move(bool pack, const char *datarep, void *buf, int count, MPI_Datatype datatype,
                    void *ext, MPI_Aint extsize, MPI_Aint *position, const char *fn)
{
    struct vmpi_dtype *dt;
    MPI_Aint bytes;
    TRY(ext_args(datarep, count, datatype, &dt, &bytes, fn));
    TRY(window(position, extsize, bytes, ext, fn, pack ? "outsize" : "insize"));
    if (pack)
        vmpi_dtype_ext32_pack((char *)ext + *position, buf, count, dt);
    else
        vmpi_dtype_ext32_unpack(buf, count, dt, (char *)ext + *position);
    *position += bytes;
    return MPI_SUCCESS;
}

int PMPI_Pack_external(const char datarep[], const void *inbuf, int incount,
                       MPI_Datatype datatype, void *outbuf, MPI_Aint outsize,
                       MPI_Aint *position)
{
    VMPI_ENTER("MPI_Pack_external");
    /* The input is only read when packing. */
    return ext_move(true, datarep, (void *)(uintptr_t)inbuf, incount, datatype, outbuf, outsize,
                    position, "MPI_Pack_external");
}
VMPI_WEAK(Pack_external);

int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                         MPI_Aint *position, void *outbuf, int outcount,
                         MPI_Datatype datatype)
{
    VMPI_ENTER("MPI_Unpack_external");
    /* The external32 bytes are only read when unpacking. */
    return ext_move(false, datarep, outbuf, outcount, datatype, (void *)(uintptr_t)inbuf, insize,
                    position, "MPI_Unpack_external");
}
VMPI_WEAK(Unpack_external);

int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                            MPI_Aint *size)
{
    static const char fn[] = "MPI_Pack_external_size";
    VMPI_ENTER(fn);
    struct vmpi_dtype *dt;
    MPI_Aint bytes;
    TRY(ext_args(datarep, incount, datatype, &dt, &bytes, fn));
    CHECK_PTR(size, "MPI_Pack_external_size");
    *size = bytes;
    return MPI_SUCCESS;
}
VMPI_WEAK(Pack_external_size);
