/* MPI-IO file manipulation (MPI-3.1 13.2), consistency (13.6.1, 13.6.2),
 * error handlers on files (8.3.3) and handle conversion: argument checks,
 * then io/. */
#include "file_args.h"

#include <string.h>

static const int ACCESS_BITS = MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR;
static const int ALL_BITS = MPI_MODE_CREATE | MPI_MODE_RDONLY | MPI_MODE_WRONLY |
                            MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN |
                            MPI_MODE_EXCL | MPI_MODE_APPEND | MPI_MODE_SEQUENTIAL;

/* amode as 13.2.1 allows it: exactly one access mode; no creation with
 * MPI_MODE_RDONLY; no MPI_MODE_SEQUENTIAL with MPI_MODE_RDWR. */
static const char *amode_problem(int amode)
{
    int acc = amode & ACCESS_BITS;
    if (amode & ~ALL_BITS)
        return "holds bits that are no MPI_MODE_* flag";
    if (acc != MPI_MODE_RDONLY && acc != MPI_MODE_WRONLY && acc != MPI_MODE_RDWR)
        return "must hold exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY and MPI_MODE_RDWR";
    if (acc == MPI_MODE_RDONLY && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        return "combines MPI_MODE_RDONLY with MPI_MODE_CREATE or MPI_MODE_EXCL";
    if (acc == MPI_MODE_RDWR && (amode & MPI_MODE_SEQUENTIAL))
        return "combines MPI_MODE_RDWR with MPI_MODE_SEQUENTIAL";
    return NULL;
}

int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    static const char fn[] = "MPI_File_open";
    VMPI_ENTER(fn);
    struct vmpi_comm *nc = vmpi_io_errcomm(NULL), *c = vmpi_comm_get(comm);
    VMPI_CHECK(c, nc, MPI_ERR_COMM, "%s: comm is not a valid communicator (%#x)", fn,
               (unsigned)comm);
    VMPI_CHECK(!c->local, nc, MPI_ERR_COMM, "%s: comm is an intercommunicator", fn);
    PTR_ARG(filename, nc, fn, "filename");
    PTR_ARG(fh, nc, fn, "fh");
    const char *bad = amode_problem(amode);
    VMPI_CHECK(!bad, nc, MPI_ERR_AMODE, "%s: amode %#x %s", fn, (unsigned)amode, bad);
    VMPI_CHECK_INFO(info, nc, fn);
    struct vmpi_file *f;
    int rc = vmpi_io_open(c, filename, amode, vmpi_info_get(info), &f);
    if (rc != MPI_SUCCESS)
        return vmpi_err_handle(nc, rc);
    *fh = vmpi_io_handle(f);
    return MPI_SUCCESS;
}
VMPI_WEAK(File_open);

int PMPI_File_close(MPI_File *fh)
{
    static const char fn[] = "MPI_File_close";
    VMPI_ENTER(fn);
    PTR_ARG(fh, vmpi_io_errcomm(NULL), fn, "fh");
    FILE_ARG(f, *fh, fn);
    int rc = vmpi_err_handle(f->comm, vmpi_io_close(f));
    vmpi_io_free(f);
    *fh = MPI_FILE_NULL;
    return rc;
}
VMPI_WEAK(File_close);

int PMPI_File_delete(const char *filename, MPI_Info info)
{
    static const char fn[] = "MPI_File_delete";
    VMPI_ENTER(fn);
    struct vmpi_comm *nc = vmpi_io_errcomm(NULL);
    PTR_ARG(filename, nc, fn, "filename");
    VMPI_CHECK_INFO(info, nc, fn);
    return vmpi_err_handle(nc, vmpi_io_delete(filename));
}
VMPI_WEAK(File_delete);

static int set_size(const char *fn, MPI_File fh, MPI_Offset size, bool prealloc)
{
    FILE_ARG(f, fh, fn);
    VMPI_CHECK(size >= 0, f->comm, MPI_ERR_ARG, "%s: size %ld is negative", fn, (long)size);
    VMPI_CHECK(!(f->amode & MPI_MODE_RDONLY), f->comm, MPI_ERR_READ_ONLY,
               "%s: the file was opened MPI_MODE_RDONLY", fn);
    FILE_NOT_SEQ(f, fn);
    return vmpi_err_handle(f->comm, vmpi_io_set_size(f, size, prealloc, fn));
}

int PMPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    VMPI_ENTER("MPI_File_set_size");
    return set_size("MPI_File_set_size", fh, size, false);
}
VMPI_WEAK(File_set_size);

int PMPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    VMPI_ENTER("MPI_File_preallocate");
    return set_size("MPI_File_preallocate", fh, size, true);
}
VMPI_WEAK(File_preallocate);

int PMPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    static const char fn[] = "MPI_File_get_size";
    VMPI_ENTER(fn);
    FILE_ARG(f, fh, fn);
    PTR_ARG(size, f->comm, fn, "size");
    return vmpi_err_handle(f->comm, vmpi_io_get_size(f, size, fn));
}
VMPI_WEAK(File_get_size);

/* A new reference to the file's group (MPI-3.1 13.2.7). */
int PMPI_File_get_group(MPI_File fh, MPI_Group *group)
{
    static const char fn[] = "MPI_File_get_group";
    VMPI_ENTER(fn);
    FILE_ARG(f, fh, fn);
    PTR_ARG(group, f->comm, fn, "group");
    vmpi_group_retain(f->comm->group);
    *group = f->comm->group->handle;
    return MPI_SUCCESS;
}
VMPI_WEAK(File_get_group);

int PMPI_File_get_amode(MPI_File fh, int *amode)
{
    static const char fn[] = "MPI_File_get_amode";
    VMPI_ENTER(fn);
    FILE_ARG(f, fh, fn);
    PTR_ARG(amode, f->comm, fn, "amode");
    *amode = f->amode;
    return MPI_SUCCESS;
}
VMPI_WEAK(File_get_amode);

/* Hints are kept and reported back; vmpi uses none of them yet, which the
 * standard allows (13.2.8). */
int PMPI_File_set_info(MPI_File fh, MPI_Info info)
{
    static const char fn[] = "MPI_File_set_info";
    VMPI_ENTER(fn);
    FILE_ARG(f, fh, fn);
    VMPI_CHECK_INFO(info, f->comm, fn);
    struct vmpi_info *i = vmpi_info_get(info);
    int rc = i ? vmpi_io_add_hints(f, i, fn) : MPI_SUCCESS;
    return vmpi_err_handle(f->comm, vmpi_io_agree(f->comm, rc, fn));
}
VMPI_WEAK(File_set_info);

int PMPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    static const char fn[] = "MPI_File_get_info";
    VMPI_ENTER(fn);
    FILE_ARG(f, fh, fn);
    PTR_ARG(info_used, f->comm, fn, "info_used");
    struct vmpi_info *i = f->hints ? vmpi_info_dup(f->hints) : vmpi_info_new();
    VMPI_CHECK(i, f->comm, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    *info_used = i->handle;
    return MPI_SUCCESS;
}
VMPI_WEAK(File_get_info);

int PMPI_File_set_atomicity(MPI_File fh, int flag)
{
    static const char fn[] = "MPI_File_set_atomicity";
    VMPI_ENTER(fn);
    FILE_ARG(f, fh, fn);
    return vmpi_err_handle(f->comm, vmpi_io_set_atomicity(f, flag != 0));
}
VMPI_WEAK(File_set_atomicity);

int PMPI_File_get_atomicity(MPI_File fh, int *flag)
{
    static const char fn[] = "MPI_File_get_atomicity";
    VMPI_ENTER(fn);
    FILE_ARG(f, fh, fn);
    PTR_ARG(flag, f->comm, fn, "flag");
    *flag = f->atomic;
    return MPI_SUCCESS;
}
VMPI_WEAK(File_get_atomicity);

int PMPI_File_sync(MPI_File fh)
{
    static const char fn[] = "MPI_File_sync";
    VMPI_ENTER(fn);
    FILE_ARG(f, fh, fn);
    return vmpi_err_handle(f->comm, vmpi_io_sync(f));
}
VMPI_WEAK(File_sync);

/* A user-defined data representation (13.5.3): set_view then takes its
 * name. Its errors go to MPI_FILE_NULL's handler (no file is involved). */
int PMPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                          MPI_Datarep_conversion_function *write_conversion_fn,
                          MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    static const char fn[] = "MPI_Register_datarep";
    VMPI_ENTER(fn);
    struct vmpi_comm *nc = vmpi_io_errcomm(NULL);
    PTR_ARG(datarep, nc, fn, "datarep");
    size_t len = strnlen(datarep, MPI_MAX_DATAREP_STRING);
    VMPI_CHECK(len > 0 && len < MPI_MAX_DATAREP_STRING, nc, MPI_ERR_ARG,
               "%s: datarep is %s (it takes 1 to %d characters)", fn,
               len ? "too long" : "empty", MPI_MAX_DATAREP_STRING - 1);
    PTR_ARG(dtype_file_extent_fn, nc, fn, "dtype_file_extent_fn");
    return vmpi_err_handle(nc, vmpi_io_datarep_register(datarep, read_conversion_fn,
                                                        write_conversion_fn,
                                                        dtype_file_extent_fn, extra_state, fn));
}
VMPI_WEAK(Register_datarep);

/* ---- error handlers ------------------------------------------------------------ */

int PMPI_File_create_errhandler(MPI_File_errhandler_function *file_errhandler_fn,
                                MPI_Errhandler *errhandler)
{
    static const char fn[] = "MPI_File_create_errhandler";
    VMPI_ENTER(fn);
    PTR_ARG(file_errhandler_fn, NULL, fn, "file_errhandler_fn");
    PTR_ARG(errhandler, NULL, fn, "errhandler");
    MPI_Errhandler e = vmpi_errh_new(VMPI_ERRH_FILE, (vmpi_errh_fn *)(void *)file_errhandler_fn);
    VMPI_CHECK(e != MPI_ERRHANDLER_NULL, NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    *errhandler = e;
    return MPI_SUCCESS;
}
VMPI_WEAK(File_create_errhandler);

/* On MPI_FILE_NULL: the handler of files opened from now on and of
 * errors with no file (13.7). */
int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    static const char fn[] = "MPI_File_set_errhandler";
    VMPI_ENTER(fn);
    FILE_OR_NULL_ARG(f, file, fn);
    VMPI_CHECK(vmpi_errh_valid(errhandler, VMPI_ERRH_FILE), vmpi_io_errcomm(f), MPI_ERR_ARG,
               "%s: errhandler (%#x) is neither predefined nor a file error handler", fn,
               (unsigned)errhandler);
    vmpi_io_set_errh(f, errhandler);
    return MPI_SUCCESS;
}
VMPI_WEAK(File_set_errhandler);

int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    static const char fn[] = "MPI_File_get_errhandler";
    VMPI_ENTER(fn);
    FILE_OR_NULL_ARG(f, file, fn);
    PTR_ARG(errhandler, vmpi_io_errcomm(f), fn, "errhandler");
    *errhandler = vmpi_io_errcomm(f)->errh;
    vmpi_errh_retain(*errhandler);
    return MPI_SUCCESS;
}
VMPI_WEAK(File_get_errhandler);

int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    static const char fn[] = "MPI_File_call_errhandler";
    VMPI_ENTER(fn);
    FILE_OR_NULL_ARG(f, fh, fn);
    vmpi_err_handle(vmpi_io_errcomm(f), errorcode);
    return MPI_SUCCESS;
}
VMPI_WEAK(File_call_errhandler);

/* The handle's int in either language; MPI_FILE_NULL is 0 in both. */
MPI_Fint PMPI_File_c2f(MPI_File file)
{
    return (MPI_Fint)(uint32_t)(uintptr_t)file;
}
VMPI_WEAK(File_c2f);

MPI_File PMPI_File_f2c(MPI_Fint file)
{
    return (MPI_File)(uintptr_t)(uint32_t)file;
}
VMPI_WEAK(File_f2c);
