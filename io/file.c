/* The file object: the handle table, open/close/delete, size, hints,
 * atomicity, sync, and the errors of the layer (errno to MPI classes,
 * agreement on the error of a collective call).
 *
 * Open: rank 0 creates the file first (MPI_MODE_CREATE, with O_EXCL for
 * MPI_MODE_EXCL), so "exists already" means it existed before this open;
 * the ranks agree on that outcome, then every rank opens the file without
 * O_CREAT and they agree again. A rank that cannot see the file (a
 * directory not shared with rank 0) fails the open on every rank. */
#include "io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

static struct vmpi_htab files;
/* MPI_FILE_NULL's error handler, on a pseudo-communicator that only
 * vmpi_err_handle reads (errh, errh_obj = MPI_FILE_NULL). */
static struct vmpi_comm null_comm = {.errh = MPI_ERRORS_RETURN};

struct vmpi_file *vmpi_io_get(MPI_File fh)
{
    uintptr_t v = (uintptr_t)fh;
    if (v > UINT32_MAX)
        return NULL;
    int h = (int)(uint32_t)v;
    if (VMPI_HKIND(h) != VMPI_HK_INDIRECT || VMPI_HTYPE(h) != VMPI_IO_OBJ_FILE)
        return NULL;
    return vmpi_htab_get(&files, VMPI_HINDEX(h));
}

struct vmpi_comm *vmpi_io_errcomm(struct vmpi_file *f)
{
    return f ? f->comm : &null_comm;
}

MPI_Errhandler vmpi_io_null_errh(void)
{
    return null_comm.errh;
}

void vmpi_io_set_errh(struct vmpi_file *f, MPI_Errhandler e)
{
    vmpi_errh_set(vmpi_io_errcomm(f), e);
}

int vmpi_io_errno(int e, const char *fmt, ...)
{
    int cls;
    switch (e) {
    case ENOENT: case ENOTDIR: cls = MPI_ERR_NO_SUCH_FILE; break;
    case EACCES: case EPERM: cls = MPI_ERR_ACCESS; break;
    case EROFS: cls = MPI_ERR_READ_ONLY; break;
    case EEXIST: cls = MPI_ERR_FILE_EXISTS; break;
    case ENOSPC: cls = MPI_ERR_NO_SPACE; break;
    case EDQUOT: cls = MPI_ERR_QUOTA; break;
    case ETXTBSY: case EBUSY: cls = MPI_ERR_FILE_IN_USE; break;
    case ENAMETOOLONG: case EISDIR: case ELOOP: cls = MPI_ERR_BAD_FILE; break;
    default: cls = MPI_ERR_IO;
    }
    char msg[MPI_MAX_ERROR_STRING];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return vmpi_err_make(cls, "%s: %s", msg, strerror(e));
}

int vmpi_io_agree(struct vmpi_comm *c, int local_rc, const char *fn)
{
    int mine = local_rc == MPI_SUCCESS ? c->size : c->rank, first;
    int rc = vmpi_coll_allreduce(&mine, &first, 1, vmpi_dtype_lookup(MPI_INT), MPI_MIN, c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (first == c->size)
        return MPI_SUCCESS;
    /* The failing rank's class and message, for everyone. */
    struct {
        int cls;
        char msg[MPI_MAX_ERROR_STRING];
    } e = {0, ""};
    if (c->rank == first) {
        const char *t = vmpi_err_text(local_rc);
        e.cls = vmpi_err_class_of(local_rc);
        snprintf(e.msg, sizeof e.msg, "%s", t ? t : fn);
    }
    rc = vmpi_coll_bcast(&e, sizeof e, vmpi_dtype_lookup(MPI_BYTE), first, c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (c->rank == first)
        return local_rc;
    return vmpi_err_make(e.cls, "%s (on rank %d of the file's group)", e.msg, first);
}

/* ROMIO lets a name start with its file system ("ufs:/data/x",
 * "nfs:...", "lustre:..."); MPICH programs use that, so the prefix is
 * skipped: every file system is reached through POSIX here. */
static const char *fs_path(const char *name)
{
    static const char *const fs[] = {"ufs:", "nfs:", "lustre:", "gpfs:", "pvfs2:", "xfs:",
                                     "panfs:", "daos:", "testfs:"};
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
        if (!strncmp(name, fs[i], strlen(fs[i])))
            return name + strlen(fs[i]);
    return name;
}

static int open_flags(int amode)
{
    return (amode & MPI_MODE_RDONLY ? O_RDONLY : amode & MPI_MODE_WRONLY ? O_WRONLY : O_RDWR) |
           O_CLOEXEC;
}

static void file_free(struct vmpi_file *f)
{
    if (f->handle)
        vmpi_htab_del(&files, VMPI_HINDEX(f->handle));
    if (f->fd >= 0)
        close(f->fd);
    if (f->shfd >= 0)
        close(f->shfd);
    free(f->shfp_name);
    if (f->comm)
        vmpi_comm_free(f->comm);
    if (f->hints)
        vmpi_info_free(f->hints);
    if (f->etype)
        vmpi_dtype_unref(f->etype);
    if (f->ftype)
        vmpi_dtype_unref(f->ftype);
    if (f->flay)
        vmpi_dtype_unref(f->flay);
    free(f->name);
    free(f);
}

/* A new file object with the default view (13.3: displacement 0, etype
 * and filetype MPI_BYTE, "native") and a handle. */
static int file_new(struct vmpi_comm *c, const char *name, int amode, struct vmpi_file **out)
{
    struct vmpi_file *f = calloc(1, sizeof *f);
    if (!f)
        return vmpi_err_make(MPI_ERR_NO_MEM, "MPI_File_open: out of memory");
    f->fd = f->shfd = -1;
    f->amode = amode;
    f->name = strdup(name);
    uint32_t idx;
    int rc = vmpi_comm_dup(c, &f->comm);
    if (rc == MPI_SUCCESS && (!f->name || vmpi_htab_add(&files, f, &idx) != 0))
        rc = vmpi_err_make(MPI_ERR_NO_MEM, "MPI_File_open: out of memory");
    if (rc != MPI_SUCCESS) {
        file_free(f);
        return rc;
    }
    f->handle = VMPI_HMAKE(VMPI_HK_INDIRECT, VMPI_IO_OBJ_FILE, idx);
    vmpi_errh_set(f->comm, null_comm.errh);
    f->comm->errh_obj = f->handle;
    f->etype = f->ftype = f->flay = vmpi_dtype_lookup(MPI_BYTE);
    f->esize = f->fsize = f->fext = 1;
    strcpy(f->datarep, "native");
    *out = f;
    return MPI_SUCCESS;
}

static bool on_local_fs(int fd)
{
    static const long local[] = {0xEF53, 0x58465342, 0x9123683E, 0x01021994};
    struct statfs s;
    if (fstatfs(fd, &s))
        return false;
    for (size_t i = 0; i < sizeof local / sizeof local[0]; i++)
        if ((long)s.f_type == local[i])
            return true;
    return false;
}

/* After every rank opened f: whether all opened one file (the same inode
 * number everywhere, and the same device under one kernel: a shared file
 * system gives every client the server's inode numbers, while a directory
 * of one VM or host gives each its own file), and whether it is on a file
 * system of the machine (f->local_fs, which collective buffering decides
 * by and so must be alike everywhere). */
static int same_file(struct vmpi_file *f, const char *fn)
{
    struct vmpi_comm *c = f->comm;
    struct stat st;
    uint64_t me[4] = {on_local_fs(f->fd), vmpi_self_boot(), 0, 0};
    if (fstat(f->fd, &st) == 0)
        me[2] = (uint64_t)st.st_dev, me[3] = (uint64_t)st.st_ino;
    uint64_t *all = malloc(sizeof me * (size_t)c->size);
    if (!all)
        return vmpi_err_make(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    int rc = vmpi_coll_allgather(me, all, 4, vmpi_dtype_lookup(MPI_UINT64_T), c);
    f->local_fs = true;
    for (int r = 0; rc == MPI_SUCCESS && r < c->size; r++) {
        const uint64_t *q = all + 4 * r;
        f->local_fs = f->local_fs && q[0];
        if (q[3] != all[3] || (q[1] == all[1] && q[2] != all[2]))
            rc = vmpi_err_make(MPI_ERR_NOT_SAME,
                               "%s: '%s' is another file on rank %d than on rank 0: its "
                               "directory is not shared between them (a disk of one VM or host?)",
                               fn, f->name, r);
    }
    free(all);
    return rc;
}

int vmpi_io_open(struct vmpi_comm *c, const char *name, int amode, struct vmpi_info *hints,
                 struct vmpi_file **out)
{
    static const char fn[] = "MPI_File_open";
    struct vmpi_file *f = NULL;
    name = fs_path(name);
    int rc = file_new(c, name, amode, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    struct vmpi_comm *fc = f->comm;
    /* Rank 0's amode (all must agree) and the id of the shared file
     * pointer's file: unique enough among the jobs sharing a directory. */
    int local = MPI_SUCCESS;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t root[2] = {(uint64_t)amode,
                        (uint64_t)getpid() << 32 ^ (uint64_t)ts.tv_sec << 20 ^ (uint64_t)ts.tv_nsec};
    rc = vmpi_coll_bcast(root, 2, vmpi_dtype_lookup(MPI_UINT64_T), 0, fc);
    if (rc == MPI_SUCCESS && root[0] != (uint64_t)amode)
        local = vmpi_err_make(MPI_ERR_NOT_SAME, "%s: amode %#x differs from rank 0's %#x", fn,
                              (unsigned)amode, (unsigned)root[0]);
    if (rc == MPI_SUCCESS && local == MPI_SUCCESS)
        local = vmpi_io_shared_name(f, root[1]);
    if (rc == MPI_SUCCESS && local == MPI_SUCCESS && hints)
        local = vmpi_io_add_hints(f, hints, fn);
    if (local == MPI_SUCCESS && (amode & MPI_MODE_CREATE) && fc->rank == 0) {
        int flags = open_flags(amode) | O_CREAT | (amode & MPI_MODE_EXCL ? O_EXCL : 0);
        f->fd = open(name, flags, 0666);
        if (f->fd < 0)
            local = vmpi_io_errno(errno, "%s: cannot create '%s'", fn, name);
    }
    if (rc == MPI_SUCCESS)
        rc = vmpi_io_agree(fc, local, fn);
    if (rc == MPI_SUCCESS) {
        if (f->fd < 0)
            f->fd = open(name, open_flags(amode));
        if (f->fd < 0)
            local = vmpi_io_errno(errno, "%s: cannot open '%s'%s", fn, name,
                                  errno == ENOENT && (amode & MPI_MODE_CREATE)
                                      ? " that rank 0 created (is its directory shared?)"
                                      : "");
        rc = vmpi_io_agree(fc, local, fn);
    }
    if (rc == MPI_SUCCESS)
        rc = same_file(f, fn);
    if (rc == MPI_SUCCESS && (amode & MPI_MODE_APPEND)) {
        /* The file pointers start at the end of the file (13.2.1). */
        struct stat st;
        if (fstat(f->fd, &st) == 0)
            f->fp = f->shfp_init = st.st_size;
        else
            local = vmpi_io_errno(errno, "%s: cannot stat '%s'", fn, name);
        rc = vmpi_io_agree(fc, local, fn);
    }
    if (rc != MPI_SUCCESS) {
        file_free(f);
        return rc;
    }
    *out = f;
    return MPI_SUCCESS;
}

int vmpi_io_close(struct vmpi_file *f)
{
    static const char fn[] = "MPI_File_close";
    int local = MPI_SUCCESS;
    if (close(f->fd) != 0)
        local = vmpi_io_errno(errno, "%s: closing '%s'", fn, f->name);
    f->fd = -1;
    /* Every rank has closed before the file goes. */
    int rc = vmpi_io_agree(f->comm, local, fn);
    vmpi_io_shared_remove(f);
    if ((f->amode & MPI_MODE_DELETE_ON_CLOSE) && f->comm->rank == 0)
        unlink(f->name);
    return rc;
}

void vmpi_io_free(struct vmpi_file *f)
{
    file_free(f);
}

int vmpi_io_delete(const char *name)
{
    name = fs_path(name);
    if (unlink(name) != 0)
        return vmpi_io_errno(errno, "MPI_File_delete: cannot delete '%s'", name);
    return MPI_SUCCESS;
}

int vmpi_io_set_size(struct vmpi_file *f, MPI_Offset size, bool prealloc, const char *fn)
{
    struct vmpi_comm *c = f->comm;
    MPI_Offset root = size;
    int rc = vmpi_coll_bcast(&root, 1, vmpi_dtype_lookup(MPI_OFFSET), 0, c);
    if (rc != MPI_SUCCESS)
        return rc;
    int local = MPI_SUCCESS;
    if (root != size)
        local = vmpi_err_make(MPI_ERR_ARG, "%s: size %ld differs from rank 0's %ld", fn,
                              (long)size, (long)root);
    rc = vmpi_io_agree(c, local, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Rank 0 changes the file; the others wait in the agreement. */
    bool root0 = c->rank == 0;
    if (root0 && prealloc) {
        int e = size > 0 ? posix_fallocate(f->fd, 0, size) : 0;
        if (e != 0)
            local = vmpi_io_errno(e, "%s: cannot allocate %ld bytes of '%s'", fn, (long)size,
                                  f->name);
    } else if (root0 && ftruncate(f->fd, size) != 0) {
        local = vmpi_io_errno(errno, "%s: cannot resize '%s' to %ld bytes", fn, f->name,
                              (long)size);
    }
    return vmpi_io_agree(c, local, fn);
}

int vmpi_io_get_size(struct vmpi_file *f, MPI_Offset *size, const char *fn)
{
    struct stat st;
    if (fstat(f->fd, &st) != 0)
        return vmpi_io_errno(errno, "%s: cannot stat '%s'", fn, f->name);
    *size = st.st_size;
    return MPI_SUCCESS;
}

int vmpi_io_sync(struct vmpi_file *f)
{
    static const char fn[] = "MPI_File_sync";
    int local = MPI_SUCCESS;
    if (!(f->amode & MPI_MODE_RDONLY) && fsync(f->fd) != 0)
        local = vmpi_io_errno(errno, "%s: fsync of '%s'", fn, f->name);
    return vmpi_io_agree(f->comm, local, fn);
}

int vmpi_io_set_atomicity(struct vmpi_file *f, bool atomic)
{
    static const char fn[] = "MPI_File_set_atomicity";
    int root = atomic;
    int rc = vmpi_coll_bcast(&root, 1, vmpi_dtype_lookup(MPI_INT), 0, f->comm);
    if (rc != MPI_SUCCESS)
        return rc;
    int local = MPI_SUCCESS;
    if (root != atomic)
        local = vmpi_err_make(MPI_ERR_ARG, "%s: flag %d differs from rank 0's %d", fn, atomic,
                              root);
    rc = vmpi_io_agree(f->comm, local, fn);
    if (rc == MPI_SUCCESS)
        f->atomic = atomic;
    return rc;
}

int64_t vmpi_io_hint_int(const struct vmpi_file *f, const char *key, int64_t def)
{
    const char *v = f->hints ? vmpi_info_find(f->hints, key) : NULL;
    char *end;
    long long x = v ? strtoll(v, &end, 10) : 0;
    return v && *v && !*end && x > 0 ? x : def;
}

int vmpi_io_add_hints(struct vmpi_file *f, const struct vmpi_info *info, const char *fn)
{
    if (!f->hints && !(f->hints = vmpi_info_new()))
        return vmpi_err_make(MPI_ERR_NO_MEM, "%s: out of memory for hints", fn);
    for (int i = 0; i < info->n; i++)
        if (vmpi_info_set(f->hints, info->e[i].key, info->e[i].val) != MPI_SUCCESS)
            return vmpi_err_make(MPI_ERR_NO_MEM, "%s: out of memory for hints", fn);
    return MPI_SUCCESS;
}
