/* The shared file pointer (MPI-3.1 13.4.4): one counter, in etypes of the
 * view, that every process of the file's group moves.
 *
 * It lives in a small file next to the data file,
 * "<dir>/.<name>.shfp.<id>" (id: chosen by rank 0 at open), holding the
 * value as 8 bytes; a process takes an fcntl lock on it to read and move
 * it. So it needs no progress from the other processes and works wherever
 * the data file is shared (one machine's VMs, NFS with locks). The file is
 * made by the first process that moves the pointer (an open that never
 * uses it leaves nothing behind) and removed at close. While it is empty
 * the pointer is f->shfp_init, which every process knows: 0, or the end
 * of the file for MPI_MODE_APPEND; set_view empties it again (pointer 0). */
#include "io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int vmpi_io_shared_name(struct vmpi_file *f, uint64_t id)
{
    const char *slash = strrchr(f->name, '/');
    int dir = slash ? (int)(slash - f->name + 1) : 0;
    if (asprintf(&f->shfp_name, "%.*s.%s.shfp.%016llx", dir, f->name, f->name + dir,
                 (unsigned long long)id) < 0) {
        f->shfp_name = NULL;
        return vmpi_err_make(MPI_ERR_NO_MEM, "MPI_File_open: out of memory");
    }
    return MPI_SUCCESS;
}

static int shfp_open(struct vmpi_file *f, const char *fn)
{
    if (f->shfd < 0 && (f->shfd = open(f->shfp_name, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0)
        return vmpi_io_errno(errno, "%s: cannot open the shared file pointer's file '%s'", fn,
                             f->shfp_name);
    return MPI_SUCCESS;
}

/* Under the lock: *old = the pointer; it becomes *old + add, or `set`
 * when set >= 0. */
static int shfp_move(struct vmpi_file *f, MPI_Offset add, MPI_Offset set, MPI_Offset *old,
                     const char *fn)
{
    int rc = shfp_open(f, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    int e = vmpi_io_lock_file(f->shfd, F_WRLCK);
    int64_t v = f->shfp_init;
    if (!e) {
        ssize_t n = pread(f->shfd, &v, sizeof v, 0);
        if (n < 0)
            e = errno;
        else if (n < (ssize_t)sizeof v)
            v = f->shfp_init; /* not moved since open or set_view */
    }
    int64_t nv = set >= 0 ? set : v + add;
    if (!e && (add != 0 || set >= 0) && pwrite(f->shfd, &nv, sizeof nv, 0) != sizeof nv)
        e = errno ? errno : EIO;
    vmpi_io_lock_file(f->shfd, F_UNLCK);
    if (e)
        return vmpi_io_errno(e, "%s: moving the shared file pointer ('%s')", fn, f->shfp_name);
    *old = v;
    return MPI_SUCCESS;
}

int vmpi_io_shared_fetch_add(struct vmpi_file *f, MPI_Offset n, MPI_Offset *old, const char *fn)
{
    return shfp_move(f, n, -1, old, fn);
}

int vmpi_io_shared_ordered(struct vmpi_file *f, int local_rc, MPI_Offset n, MPI_Offset *off,
                           const char *fn)
{
    struct vmpi_comm *c = f->comm;
    MPI_Offset *all = malloc(sizeof *all * (size_t)c->size), base = 0;
    if (!all && local_rc == MPI_SUCCESS)
        local_rc = vmpi_err_make(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    int rc = vmpi_io_agree(c, local_rc, fn);
    if (rc == MPI_SUCCESS)
        rc = vmpi_coll_allgather(&n, all, 1, vmpi_dtype_lookup(MPI_OFFSET), c);
    /* Rank 0 moves the pointer past everyone's data; rank r's part starts
     * after the parts of ranks 0 .. r-1. */
    MPI_Offset total = 0, before = 0;
    for (int r = 0; rc == MPI_SUCCESS && r < c->size; r++) {
        before += r < c->rank ? all[r] : 0;
        total += all[r];
    }
    int local = MPI_SUCCESS;
    if (rc == MPI_SUCCESS && c->rank == 0)
        local = shfp_move(f, total, -1, &base, fn);
    if (rc == MPI_SUCCESS)
        rc = vmpi_io_agree(c, local, fn);
    if (rc == MPI_SUCCESS)
        rc = vmpi_coll_bcast(&base, 1, vmpi_dtype_lookup(MPI_OFFSET), 0, c);
    free(all);
    *off = base + before;
    return rc;
}

int vmpi_io_shared_set(struct vmpi_file *f, int local_rc, MPI_Offset pos, const char *fn)
{
    int rc = vmpi_io_agree(f->comm, local_rc, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Offset old;
    int local = f->comm->rank == 0 ? shfp_move(f, 0, pos, &old, fn) : MPI_SUCCESS;
    return vmpi_io_agree(f->comm, local, fn);
}

int vmpi_io_shared_reset(struct vmpi_file *f, const char *fn)
{
    f->shfp_init = 0;
    int local = MPI_SUCCESS;
    /* No file yet: nothing to reset. */
    if (f->comm->rank == 0 && truncate(f->shfp_name, 0) != 0 && errno != ENOENT)
        local = vmpi_io_errno(errno, "%s: resetting the shared file pointer ('%s')", fn,
                              f->shfp_name);
    return vmpi_io_agree(f->comm, local, fn);
}

void vmpi_io_shared_remove(struct vmpi_file *f)
{
    if (f->shfd >= 0)
        close(f->shfd);
    f->shfd = -1;
    if (f->comm->rank == 0)
        unlink(f->shfp_name);
}
