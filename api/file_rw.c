/* MPI-IO views (MPI-3.1 13.3), blocking data access with explicit
 * offsets, individual and shared file pointers (13.4.2-13.4.4), the
 * individual pointer's positioning, and MPI_File_get_type_extent
 * (13.5.1): argument checks, then io/.
 *
 * The collective forms (_all) go through two-phase collective buffering
 * (io/two_phase.c); a rank whose arguments fail the checks returns before
 * it, as in any collective with bad arguments. */
#include "file_args.h"

#include <stdint.h>
#include <string.h>

/* A datatype argument: valid and committed, else MPI_ERR_TYPE. */
static int type_arg(struct vmpi_file *f, MPI_Datatype h, const char *fn, const char *name,
                    struct vmpi_dtype **out)
{
    struct vmpi_comm *ec = vmpi_io_errcomm(f);
    *out = vmpi_dtype_get(h);
    VMPI_CHECK(*out, ec, MPI_ERR_TYPE, "%s: %s is not a valid datatype (%#x)", fn, name,
               (unsigned)h);
    VMPI_CHECK(vmpi_dtype_committed(*out), ec, MPI_ERR_TYPE, "%s: %s (%#x) is not committed",
               fn, name, (unsigned)h);
    return MPI_SUCCESS;
}

int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                       const char *datarep, MPI_Info info)
{
    static const char fn[] = "MPI_File_set_view";
    VMPI_ENTER(fn);
    FILE_ARG(f, fh, fn);
    struct vmpi_dtype *et, *ft;
    TRY(type_arg(f, etype, fn, "etype", &et));
    TRY(type_arg(f, filetype, fn, "filetype", &ft));
    PTR_ARG(datarep, f->comm, fn, "datarep");
    VMPI_CHECK_INFO(info, f->comm, fn);
    if (disp == MPI_DISPLACEMENT_CURRENT) {
        /* Only in sequential mode: where the shared file pointer is. */
        VMPI_CHECK(f->amode & MPI_MODE_SEQUENTIAL, f->comm, MPI_ERR_ARG,
                   "%s: MPI_DISPLACEMENT_CURRENT needs a file opened MPI_MODE_SEQUENTIAL", fn);
        MPI_Offset left, pos;
        TRY(vmpi_err_handle(f->comm, vmpi_io_shared_fetch_add(f, 0, &pos, fn)));
        disp = vmpi_io_byte_of(f, pos * f->esize, &left);
    }
    int rc = vmpi_io_set_view(f, disp, et, ft, datarep, fn);
    struct vmpi_info *i = vmpi_info_get(info);
    if (rc == MPI_SUCCESS && i)
        rc = vmpi_io_agree(f->comm, vmpi_io_add_hints(f, i, fn), fn);
    return vmpi_err_handle(f->comm, rc);
}
VMPI_WEAK(File_set_view);

/* A derived etype or filetype comes back as a new type the caller frees
 * (13.3); a predefined one as itself. */
static int view_type(struct vmpi_file *f, struct vmpi_dtype *dt, MPI_Datatype *out,
                     const char *fn)
{
    if (dt->builtin) {
        *out = dt->handle;
        return MPI_SUCCESS;
    }
    struct vmpi_dtype *copy;
    int rc = vmpi_dtype_dup(dt, &copy);
    VMPI_CHECK(rc == MPI_SUCCESS, f->comm, rc, "%s: cannot copy the view's datatype", fn);
    *out = copy->handle;
    return MPI_SUCCESS;
}

int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype,
                       MPI_Datatype *filetype, char *datarep)
{
    static const char fn[] = "MPI_File_get_view";
    VMPI_ENTER(fn);
    FILE_ARG(f, fh, fn);
    PTR_ARG(disp, f->comm, fn, "disp");
    PTR_ARG(etype, f->comm, fn, "etype");
    PTR_ARG(filetype, f->comm, fn, "filetype");
    PTR_ARG(datarep, f->comm, fn, "datarep");
    TRY(view_type(f, f->etype, etype, fn));
    TRY(view_type(f, f->ftype, filetype, fn));
    *disp = f->disp;
    strcpy(datarep, f->datarep);
    return MPI_SUCCESS;
}
VMPI_WEAK(File_get_view);

/* ---- data access ------------------------------------------------------------------- */

/* The checks of an access of (buf, count, datatype) on f; gives *dt. */
static int rw_check(struct vmpi_file *f, bool write, int how, const void *buf, int count,
                    MPI_Datatype datatype, struct vmpi_dtype **dt, const char *fn)
{
    struct vmpi_comm *ec = f->comm;
    VMPI_CHECK(count >= 0, ec, MPI_ERR_COUNT, "%s: count %d is negative", fn, count);
    TRY(type_arg(f, datatype, fn, "datatype", dt));
    VMPI_CHECK(buf || count == 0 || !(*dt)->builtin || (*dt)->size == 0, ec, MPI_ERR_BUFFER,
               "%s: buf is NULL with count %d", fn, count);
    if (how == FILE_AT || how == FILE_INDIV)
        FILE_NOT_SEQ(f, fn);
    if (write)
        VMPI_CHECK(!(f->amode & MPI_MODE_RDONLY), ec, MPI_ERR_READ_ONLY,
                   "%s: the file was opened MPI_MODE_RDONLY", fn);
    else
        VMPI_CHECK(!(f->amode & MPI_MODE_WRONLY), ec, MPI_ERR_ACCESS,
                   "%s: the file was opened MPI_MODE_WRONLY", fn);
    MPI_Offset sz;
    if (f->rep)
        TRY(vmpi_err_handle(ec, vmpi_io_datarep_size(f->rep, *dt, &sz, fn)));
    else
        sz = vmpi_io_stream_size(f, *dt);
    VMPI_CHECK(sz >= 0 && sz % f->esize == 0, ec, MPI_ERR_TYPE,
               "%s: the datatype's size (%ld bytes in the file) is not a multiple of the "
               "etype's (%ld)", fn, (long)sz, (long)f->esize);
    return MPI_SUCCESS;
}

/* Where an access of n etypes goes: the offset given, a file pointer's
 * position (a shared one moves past the access now). The ordered forms
 * agree on every rank's check (local_rc) first. */
static int rw_offset(struct vmpi_file *f, int how, int local_rc, MPI_Offset n,
                     MPI_Offset *offset, const char *fn)
{
    if (how == FILE_INDIV)
        *offset = f->fp;
    else if (how == FILE_SHARED)
        return vmpi_io_shared_fetch_add(f, n, offset, fn);
    else if (how == FILE_ORDERED)
        return vmpi_io_shared_ordered(f, local_rc, n, offset, fn);
    return MPI_SUCCESS;
}

int file_rw(const char *fn, MPI_File fh, bool write, int how, MPI_Offset offset, void *buf,
            int count, MPI_Datatype datatype, MPI_Status *status)
{
    FILE_ARG(f, fh, fn);
    struct vmpi_comm *ec = f->comm;
    struct vmpi_dtype *dt = NULL;
    int local = rw_check(f, write, how, buf, count, datatype, &dt, fn);
    if (local != MPI_SUCCESS && how != FILE_ORDERED)
        return local; /* its handler has run */
    MPI_Offset n = local == MPI_SUCCESS ? count * (vmpi_io_stream_size(f, dt) / f->esize) : 0;
    int rc = rw_offset(f, how, local, n, &offset, fn);
    if (local != MPI_SUCCESS)
        return local;
    TRY(vmpi_err_handle(ec, rc));
    VMPI_CHECK(offset >= 0, ec, MPI_ERR_ARG, "%s: offset %ld is negative", fn, (long)offset);
    VMPI_CHECK(offset <= INT64_MAX / f->esize - n, ec, MPI_ERR_ARG,
               "%s: offset %ld is too large", fn, (long)offset);
    MPI_Count done, bytes;
    /* The collective forms (_all, _all_begin) are the two-phase access. */
    if (strstr(fn, "_all"))
        rc = vmpi_io_rw_all(f, write, offset, buf, count, dt, &done, &bytes, fn);
    else
        rc = vmpi_io_rw(f, write, offset, buf, count, dt, &done, &bytes, fn);
    if (how == FILE_INDIV)
        f->fp += done / f->esize;
    if (status != MPI_STATUS_IGNORE) {
        status->count_hi_and_cancelled = 0;
        vmpi_req_status_set_count(status, bytes);
    }
    return vmpi_err_handle(ec, rc);
}

#define RW_AT(Name, write, Buf)                                                   \
    int PMPI_File_##Name(MPI_File fh, MPI_Offset offset, Buf buf, int count,      \
                         MPI_Datatype datatype, MPI_Status *status)               \
    {                                                                             \
        VMPI_ENTER("MPI_File_" #Name);                                            \
        return file_rw("MPI_File_" #Name, fh, write, FILE_AT, offset, (void *)buf, \
                       count, datatype, status);                                  \
    }                                                                             \
    VMPI_WEAK(File_##Name)

/* The individual (how FILE_INDIV) and shared (FILE_SHARED, FILE_ORDERED)
 * pointers' forms. */
#define RW_FP(Name, write, Buf, how)                                                 \
    int PMPI_File_##Name(MPI_File fh, Buf buf, int count, MPI_Datatype datatype,     \
                         MPI_Status *status)                                         \
    {                                                                                \
        VMPI_ENTER("MPI_File_" #Name);                                               \
        return file_rw("MPI_File_" #Name, fh, write, how, 0, (void *)buf, count,     \
                       datatype, status);                                            \
    }                                                                                \
    VMPI_WEAK(File_##Name)

RW_AT(read_at, false, void *);
RW_AT(read_at_all, false, void *);
RW_AT(write_at, true, const void *);
RW_AT(write_at_all, true, const void *);
RW_FP(read, false, void *, FILE_INDIV);
RW_FP(read_all, false, void *, FILE_INDIV);
RW_FP(write, true, const void *, FILE_INDIV);
RW_FP(write_all, true, const void *, FILE_INDIV);
RW_FP(read_shared, false, void *, FILE_SHARED);
RW_FP(write_shared, true, const void *, FILE_SHARED);
RW_FP(read_ordered, false, void *, FILE_ORDERED);
RW_FP(write_ordered, true, const void *, FILE_ORDERED);

/* ---- file pointer ---------------------------------------------------------------- */

int file_seek_to(struct vmpi_file *f, MPI_Offset offset, int whence, MPI_Offset cur,
                 MPI_Offset *pos, const char *fn)
{
    MPI_Offset base = cur;
    if (whence == MPI_SEEK_SET) {
        base = 0;
    } else if (whence != MPI_SEEK_CUR) {
        VMPI_CHECK(whence == MPI_SEEK_END, f->comm, MPI_ERR_ARG,
                   "%s: whence %d is not MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END", fn, whence);
        /* The end of file in etypes of the view: the first etype whose
         * data is past the last byte (a partial one counts). */
        MPI_Offset size;
        TRY(vmpi_err_handle(f->comm, vmpi_io_get_size(f, &size, fn)));
        base = (vmpi_io_stream_before(f, size) + f->esize - 1) / f->esize;
    }
    VMPI_CHECK(offset >= 0 ? base <= INT64_MAX - offset : base + offset >= 0, f->comm,
               MPI_ERR_ARG, "%s: the new position (%ld %+ld etypes) is negative or too large",
               fn, (long)base, (long)offset);
    *pos = base + offset;
    return MPI_SUCCESS;
}

int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    static const char fn[] = "MPI_File_seek";
    VMPI_ENTER(fn);
    FILE_ARG(f, fh, fn);
    FILE_NOT_SEQ(f, fn);
    return file_seek_to(f, offset, whence, f->fp, &f->fp, fn);
}
VMPI_WEAK(File_seek);

int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    static const char fn[] = "MPI_File_get_position";
    VMPI_ENTER(fn);
    FILE_ARG(f, fh, fn);
    PTR_ARG(offset, f->comm, fn, "offset");
    FILE_NOT_SEQ(f, fn);
    *offset = f->fp;
    return MPI_SUCCESS;
}
VMPI_WEAK(File_get_position);

int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    static const char fn[] = "MPI_File_get_byte_offset";
    VMPI_ENTER(fn);
    FILE_ARG(f, fh, fn);
    PTR_ARG(disp, f->comm, fn, "disp");
    FILE_NOT_SEQ(f, fn);
    VMPI_CHECK(offset >= 0 && offset <= INT64_MAX / f->esize, f->comm, MPI_ERR_ARG,
               "%s: offset %ld is negative or too large", fn, (long)offset);
    MPI_Offset left;
    *disp = vmpi_io_byte_of(f, offset * f->esize, &left);
    return MPI_SUCCESS;
}
VMPI_WEAK(File_get_byte_offset);

/* In "native" and "internal" a type takes in the file what it takes in
 * memory; in "external32" its external32 size when it has no holes (a
 * predefined type, or one whose data is one block), else its memory
 * extent when its types are as large in external32 as in memory; in a
 * user's representation its extent laid out with the file extents of
 * its predefined types (13.5.3). */
int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
    static const char fn[] = "MPI_File_get_type_extent";
    VMPI_ENTER(fn);
    FILE_ARG(f, fh, fn);
    PTR_ARG(extent, f->comm, fn, "extent");
    struct vmpi_dtype *dt = vmpi_dtype_get(datatype);
    VMPI_CHECK(dt, f->comm, MPI_ERR_TYPE, "%s: datatype is not a valid datatype (%#x)", fn,
               (unsigned)datatype);
    if (f->rep)
        return vmpi_err_handle(f->comm, vmpi_io_datarep_extent(f->rep, dt, extent, fn));
    MPI_Aint x32 = f->ext32 ? vmpi_dtype_ext32_size(dt) : vmpi_dtype_size(dt);
    bool dense = dt->builtin || (vmpi_dtype_is_contig(dt) && vmpi_dtype_extent(dt) ==
                                                                 vmpi_dtype_size(dt));
    VMPI_CHECK(!f->ext32 || dense || x32 == vmpi_dtype_size(dt), f->comm,
               MPI_ERR_UNSUPPORTED_DATAREP,
               "%s: the external32 extent of a type with holes whose types change size in "
               "external32 is not supported", fn);
    *extent = f->ext32 && dense ? x32 : vmpi_dtype_extent(dt);
    return MPI_SUCCESS;
}
VMPI_WEAK(File_get_type_extent);
