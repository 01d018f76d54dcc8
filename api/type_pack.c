/* MPI entry points that move data between a datatype layout and a packed
 * buffer (MPI_Pack, MPI_Unpack, MPI_Pack_size) and count the basic
 * elements a status holds (MPI_Get_elements(_x)). */
#include "type_args.h"

#include <limits.h>

/* ---- pack / unpack ------------------------------------------------------- */

/* Checks what MPI_Pack, MPI_Unpack and MPI_Pack_size share and returns the
 * packed size of (count, datatype) in *bytes. */
static int pack_args(MPI_Comm comm, int count, MPI_Datatype datatype, struct vmpi_comm **c,
                     struct vmpi_dtype **dtp, MPI_Count *bytes, const char *fn)
{
    *c = vmpi_comm_get(comm);
    VMPI_CHECK(*c, NULL, MPI_ERR_COMM, "%s: comm 0x%08x is not a valid communicator", fn,
               (unsigned)comm);
    VMPI_CHECK(count >= 0, *c, MPI_ERR_COUNT, "%s: count %d is negative", fn, count);
    GET_TYPE(dt, datatype, *c, fn, "datatype");
    VMPI_CHECK(dt->committed, *c, MPI_ERR_TYPE,
               "%s: datatype 0x%08x is not committed (MPI_Type_commit it first)", fn,
               (unsigned)datatype);
    VMPI_CHECK(!__builtin_mul_overflow(count, dt->size, bytes), *c, MPI_ERR_COUNT,
               "%s: count %d times the datatype size overflows", fn, count);
    *dtp = dt;
    return MPI_SUCCESS;
}

int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf,
              int outsize, int *position, MPI_Comm comm)
{
    VMPI_ENTER("MPI_Pack");
    struct vmpi_comm *c;
    struct vmpi_dtype *dt;
    MPI_Count bytes;
    int rc = pack_args(comm, incount, datatype, &c, &dt, &bytes, "MPI_Pack");
    if (rc != MPI_SUCCESS)
        return rc;
    VMPI_CHECK(position, c, MPI_ERR_ARG, "MPI_Pack: position is NULL");
    VMPI_CHECK(*position >= 0 && *position <= outsize, c, MPI_ERR_ARG,
               "MPI_Pack: *position %d is outside [0, outsize %d]", *position, outsize);
    VMPI_CHECK(bytes <= outsize - *position, c, MPI_ERR_TRUNCATE,
               "MPI_Pack: %ld bytes of data do not fit in the %d bytes left after *position %d",
               (long)bytes, outsize - *position, *position);
    VMPI_CHECK(bytes == 0 || outbuf, c, MPI_ERR_BUFFER, "MPI_Pack: outbuf is NULL");
    vmpi_dtype_pack((char *)outbuf + *position, inbuf, incount, dt, 0, (size_t)bytes);
    *position += (int)bytes;
    return MPI_SUCCESS;
}
VMPI_WEAK(Pack);

int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                MPI_Datatype datatype, MPI_Comm comm)
{
    VMPI_ENTER("MPI_Unpack");
    struct vmpi_comm *c;
    struct vmpi_dtype *dt;
    MPI_Count bytes;
    int rc = pack_args(comm, outcount, datatype, &c, &dt, &bytes, "MPI_Unpack");
    if (rc != MPI_SUCCESS)
        return rc;
    VMPI_CHECK(position, c, MPI_ERR_ARG, "MPI_Unpack: position is NULL");
    VMPI_CHECK(*position >= 0 && *position <= insize, c, MPI_ERR_ARG,
               "MPI_Unpack: *position %d is outside [0, insize %d]", *position, insize);
    VMPI_CHECK(bytes <= insize - *position, c, MPI_ERR_TRUNCATE,
               "MPI_Unpack: %ld bytes of data wanted but only %d left after *position %d",
               (long)bytes, insize - *position, *position);
    VMPI_CHECK(bytes == 0 || inbuf, c, MPI_ERR_BUFFER, "MPI_Unpack: inbuf is NULL");
    vmpi_dtype_unpack(outbuf, outcount, dt, 0, (const char *)inbuf + *position, (size_t)bytes);
    *position += (int)bytes;
    return MPI_SUCCESS;
}
VMPI_WEAK(Unpack);

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    VMPI_ENTER("MPI_Pack_size");
    struct vmpi_comm *c;
    struct vmpi_dtype *dt;
    MPI_Count bytes;
    int rc = pack_args(comm, incount, datatype, &c, &dt, &bytes, "MPI_Pack_size");
    if (rc != MPI_SUCCESS)
        return rc;
    VMPI_CHECK(size, c, MPI_ERR_ARG, "MPI_Pack_size: size is NULL");
    VMPI_CHECK(bytes <= INT_MAX, c, MPI_ERR_COUNT,
               "MPI_Pack_size: the packed size %ld does not fit in an int", (long)bytes);
    *size = (int)bytes;
    return MPI_SUCCESS;
}
VMPI_WEAK(Pack_size);

/* ---- element counts ------------------------------------------------------ */

static int elements(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *n,
                    const char *fn)
{
    VMPI_CHECK(status && status != MPI_STATUS_IGNORE, NULL, MPI_ERR_ARG,
               "%s: status is NULL or MPI_STATUS_IGNORE", fn);
    GET_TYPE(dt, datatype, NULL, fn, "datatype");
    *n = vmpi_dtype_elements(dt, vmpi_req_status_count(status));
    return MPI_SUCCESS;
}

int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    VMPI_ENTER("MPI_Get_elements");
    CHECK_PTR(count, "MPI_Get_elements");
    MPI_Count n;
    int rc = elements(status, datatype, &n, "MPI_Get_elements");
    if (rc == MPI_SUCCESS)
        *count = n > INT_MAX ? MPI_UNDEFINED : (int)n;
    return rc;
}
VMPI_WEAK(Get_elements);

int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    VMPI_ENTER("MPI_Get_elements_x");
    CHECK_PTR(count, "MPI_Get_elements_x");
    return elements(status, datatype, count, "MPI_Get_elements_x");
}
VMPI_WEAK(Get_elements_x);
