/* MPI-IO nonblocking and split collective data access (MPI-3.1 13.4.2-
 * 13.4.5) and the shared file pointer's positioning (13.4.4).
 *
 * A nonblocking access is done when the call returns: its request is a
 * generalized request already complete, whose status tells the bytes
 * moved (MPI_Wait, MPI_Test and friends work on it as on any request;
 * cancelling it does nothing, as for any completed operation). A split
 * collective does its access in the _begin call and keeps the status for
 * the _end call; one may be active per file (13.4.5). */
#include "file_args.h"

#include <stdlib.h>

static int done_query(void *extra, MPI_Status *status)
{
    const MPI_Status *st = extra;
    status->count_lo = st->count_lo;
    status->count_hi_and_cancelled = st->count_hi_and_cancelled;
    return MPI_SUCCESS;
}

static int done_free(void *extra)
{
    free(extra);
    return MPI_SUCCESS;
}

/* A complete request with status st (the access's) in *request. */
static int done_request(struct vmpi_file *f, const MPI_Status *st, MPI_Request *request,
                        const char *fn)
{
    MPI_Status *keep = malloc(sizeof *keep);
    struct vmpi_req *r = keep ? vmpi_greq_start(done_query, done_free, NULL, keep) : NULL;
    if (!r)
        free(keep);
    VMPI_CHECK(r, f->comm, MPI_ERR_NO_MEM, "%s: out of memory for the request", fn);
    *keep = *st;
    vmpi_req_complete(r);
    *request = vmpi_req_handle(r);
    return MPI_SUCCESS;
}

static int nb(const char *fn, MPI_File fh, bool write, int how, MPI_Offset offset, void *buf,
              int count, MPI_Datatype datatype, MPI_Request *request)
{
    FILE_ARG(f, fh, fn);
    PTR_ARG(request, f->comm, fn, "request");
    MPI_Status st = {0};
    TRY(file_rw(fn, fh, write, how, offset, buf, count, datatype, &st));
    return done_request(f, &st, request, fn);
}

#define NB_AT(Name, write, Buf)                                                           \
    int PMPI_File_##Name(MPI_File fh, MPI_Offset offset, Buf buf, int count,              \
                         MPI_Datatype datatype, MPI_Request *request)                     \
    {                                                                                     \
        VMPI_ENTER("MPI_File_" #Name);                                                    \
        return nb("MPI_File_" #Name, fh, write, FILE_AT, offset, (void *)buf, count,      \
                  datatype, request);                                                     \
    }                                                                                     \
    VMPI_WEAK(File_##Name)

#define NB_FP(Name, write, Buf, how)                                                      \
    int PMPI_File_##Name(MPI_File fh, Buf buf, int count, MPI_Datatype datatype,          \
                         MPI_Request *request)                                            \
    {                                                                                     \
        VMPI_ENTER("MPI_File_" #Name);                                                    \
        return nb("MPI_File_" #Name, fh, write, how, 0, (void *)buf, count, datatype,     \
                  request);                                                               \
    }                                                                                     \
    VMPI_WEAK(File_##Name)

NB_AT(iread_at, false, void *);
NB_AT(iwrite_at, true, const void *);
NB_AT(iread_at_all, false, void *);
NB_AT(iwrite_at_all, true, const void *);
NB_FP(iread, false, void *, FILE_INDIV);
NB_FP(iwrite, true, const void *, FILE_INDIV);
NB_FP(iread_all, false, void *, FILE_INDIV);
NB_FP(iwrite_all, true, const void *, FILE_INDIV);
NB_FP(iread_shared, false, void *, FILE_SHARED);
NB_FP(iwrite_shared, true, const void *, FILE_SHARED);

/* ---- split collectives ------------------------------------------------------------ */

/* Which _begin is active (struct vmpi_file's split). */
enum { SPLIT_READ_AT = 1, SPLIT_WRITE_AT, SPLIT_READ, SPLIT_WRITE, SPLIT_READ_ORD,
       SPLIT_WRITE_ORD };

static int split_begin(const char *fn, MPI_File fh, int kind, bool write, int how,
                       MPI_Offset offset, void *buf, int count, MPI_Datatype datatype)
{
    FILE_ARG(f, fh, fn);
    VMPI_CHECK(!f->split, f->comm, MPI_ERR_IO,
               "%s: another split collective is active on the file (end it first)", fn);
    f->split_st = (MPI_Status){0};
    TRY(file_rw(fn, fh, write, how, offset, buf, count, datatype, &f->split_st));
    f->split = kind;
    return MPI_SUCCESS;
}

static int split_end(const char *fn, MPI_File fh, int kind, MPI_Status *status)
{
    FILE_ARG(f, fh, fn);
    VMPI_CHECK(f->split == kind, f->comm, MPI_ERR_IO,
               "%s: the file has no active split collective of this kind (its _begin call)",
               fn);
    f->split = 0;
    if (status != MPI_STATUS_IGNORE) {
        status->count_lo = f->split_st.count_lo;
        status->count_hi_and_cancelled = f->split_st.count_hi_and_cancelled;
    }
    return MPI_SUCCESS;
}

#define SPLIT_END(Name, Buf, kind)                                                        \
    int PMPI_File_##Name##_end(MPI_File fh, Buf buf, MPI_Status *status)                  \
    {                                                                                     \
        (void)buf;                                                                        \
        VMPI_ENTER("MPI_File_" #Name "_end");                                             \
        return split_end("MPI_File_" #Name "_end", fh, kind, status);                     \
    }                                                                                     \
    VMPI_WEAK(File_##Name##_end)

#define SPLIT_AT(Name, write, Buf, kind)                                                  \
    int PMPI_File_##Name##_begin(MPI_File fh, MPI_Offset offset, Buf buf, int count,      \
                                 MPI_Datatype datatype)                                   \
    {                                                                                     \
        VMPI_ENTER("MPI_File_" #Name "_begin");                                           \
        return split_begin("MPI_File_" #Name "_begin", fh, kind, write, FILE_AT, offset,  \
                           (void *)buf, count, datatype);                                 \
    }                                                                                     \
    VMPI_WEAK(File_##Name##_begin);                                                       \
    SPLIT_END(Name, Buf, kind)

#define SPLIT_FP(Name, write, Buf, kind, how)                                             \
    int PMPI_File_##Name##_begin(MPI_File fh, Buf buf, int count, MPI_Datatype datatype)  \
    {                                                                                     \
        VMPI_ENTER("MPI_File_" #Name "_begin");                                           \
        return split_begin("MPI_File_" #Name "_begin", fh, kind, write, how, 0,           \
                           (void *)buf, count, datatype);                                 \
    }                                                                                     \
    VMPI_WEAK(File_##Name##_begin);                                                       \
    SPLIT_END(Name, Buf, kind)

SPLIT_AT(read_at_all, false, void *, SPLIT_READ_AT);
SPLIT_AT(write_at_all, true, const void *, SPLIT_WRITE_AT);
SPLIT_FP(read_all, false, void *, SPLIT_READ, FILE_INDIV);
SPLIT_FP(write_all, true, const void *, SPLIT_WRITE, FILE_INDIV);
SPLIT_FP(read_ordered, false, void *, SPLIT_READ_ORD, FILE_ORDERED);
SPLIT_FP(write_ordered, true, const void *, SPLIT_WRITE_ORD, FILE_ORDERED);

/* ---- the shared file pointer ------------------------------------------------------- */

/* Collective; every rank passes the same offset and whence (13.4.4). */
int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    static const char fn[] = "MPI_File_seek_shared";
    VMPI_ENTER(fn);
    FILE_ARG(f, fh, fn);
    MPI_Offset cur = 0, pos = 0;
    int local = MPI_SUCCESS;
    if (whence == MPI_SEEK_CUR)
        local = vmpi_err_handle(f->comm, vmpi_io_shared_fetch_add(f, 0, &cur, fn));
    if (local == MPI_SUCCESS)
        local = file_seek_to(f, offset, whence, cur, &pos, fn);
    int rc = vmpi_io_shared_set(f, local, pos, fn);
    return local != MPI_SUCCESS ? local : vmpi_err_handle(f->comm, rc);
}
VMPI_WEAK(File_seek_shared);

int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    static const char fn[] = "MPI_File_get_position_shared";
    VMPI_ENTER(fn);
    FILE_ARG(f, fh, fn);
    PTR_ARG(offset, f->comm, fn, "offset");
    return vmpi_err_handle(f->comm, vmpi_io_shared_fetch_add(f, 0, offset, fn));
}
VMPI_WEAK(File_get_position_shared);
