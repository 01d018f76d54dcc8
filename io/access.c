/* Data access (MPI-3.1 13.4): the user's (buf, count, datatype) against
 * the view's data stream.
 *
 * The memory side is used in place when the datatype is contiguous, else
 * packed (writes) or unpacked (reads) through a bounded buffer, a chunk at
 * a time. The file side walks the view: stream bytes whose file bytes
 * follow each other form one range, moved with one pread or pwrite.
 * Reads of many small ranges close together are sieved: one pread covers
 * them and the ranges are copied out, so a strided read costs a few large
 * reads. Writes are not sieved (a read-modify-write would need every
 * writer to lock): each range is its own pwrite.
 *
 * Atomic mode (13.6.1) holds an fcntl lock on the file for the whole
 * access (shared for reads, exclusive for writes), so a non-contiguous
 * access is atomic against the other processes' accesses too; fcntl locks
 * hold across processes, VMs sharing a kernel and NFS (lockd). */
#include "io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    PACK_CHUNK = 4 << 20, /* memory-side buffer for non-contiguous datatypes */
    SIEVE_SPAN = 1 << 20, /* most file bytes one sieved read covers */
    SIEVE_RUNS = 256,     /* most ranges one sieved read serves */
};

/* The next file range of the access: stream bytes [pos, pos + *n) at file
 * byte *off, at most max of them, merging runs that touch in the file. */
static MPI_Offset next_range(const struct vmpi_file *f, MPI_Offset pos, MPI_Offset max,
                             MPI_Offset *n)
{
    MPI_Offset left, off = vmpi_io_byte_of(f, pos, &left);
    *n = left < max ? left : max;
    while (*n < max) {
        MPI_Offset l2, o2 = vmpi_io_byte_of(f, pos + *n, &l2);
        if (o2 != off + *n)
            break;
        *n += l2 < max - *n ? l2 : max - *n;
    }
    return off;
}

ssize_t vmpi_io_full(int fd, bool write, char *mem, size_t n, MPI_Offset off)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = write ? pwrite(fd, mem + done, n - done, off + (MPI_Offset)done)
                          : pread(fd, mem + done, n - done, off + (MPI_Offset)done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        if (r == 0) {
            if (write)
                return -EIO;
            break;
        }
        done += (size_t)r;
    }
    return (ssize_t)done;
}

struct range {
    MPI_Offset off, n;
    char *mem;
};

/* One pread over ranges r[0..nr) (in file order), copied out; returns the
 * stream bytes delivered (fewer at the end of the file), or -errno. */
static ssize_t sieve_read(int fd, const struct range *r, int nr, char *tmp)
{
    MPI_Offset base = r[0].off, span = r[nr - 1].off + r[nr - 1].n - base;
    ssize_t got = vmpi_io_full(fd, false, tmp, (size_t)span, base);
    if (got < 0)
        return got;
    ssize_t moved = 0;
    for (int i = 0; i < nr; i++) {
        MPI_Offset at = r[i].off - base, n = r[i].n;
        if (at + n > got)
            n = got > at ? got - at : 0;
        memcpy(r[i].mem, tmp + at, (size_t)n);
        moved += n;
        if (n < r[i].n)
            break;
    }
    return moved;
}

int vmpi_io_view_rw(const struct vmpi_file *f, bool write, char *mem, MPI_Offset pos,
                    MPI_Offset len, MPI_Offset *moved)
{
    struct range r[SIEVE_RUNS];
    char *tmp = NULL;
    int e = 0;
    *moved = 0;
    while (*moved < len && !e) {
        int nr = 0;
        MPI_Offset want = 0;
        do { /* ranges for one pwrite, or for one sieved pread */
            MPI_Offset n, off = next_range(f, pos + *moved + want, len - *moved - want, &n);
            if (nr > 0 && (write || off + n - r[0].off > SIEVE_SPAN))
                break;
            r[nr++] = (struct range){off, n, mem + *moved + want};
            want += n;
        } while (nr < SIEVE_RUNS && *moved + want < len);
        ssize_t got;
        if (nr == 1) {
            got = vmpi_io_full(f->fd, write, r[0].mem, (size_t)r[0].n, r[0].off);
        } else {
            if (!tmp && !(tmp = malloc(SIEVE_SPAN))) {
                e = ENOMEM;
                break;
            }
            got = sieve_read(f->fd, r, nr, tmp);
        }
        if (got < 0)
            e = (int)-got;
        else
            *moved += got;
        if (got >= 0 && got < want)
            break; /* end of file */
    }
    free(tmp);
    return e;
}

int vmpi_io_lock_file(int fd, short type)
{
    struct flock l = {.l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    while (fcntl(fd, F_SETLKW, &l) != 0)
        if (errno != EINTR)
            return errno;
    return 0;
}

/* external32: the whole buffer converted to (writes) or from (reads) its
 * big-endian form; *bytes counts the whole elements moved. */
static int rw_ext32(struct vmpi_file *f, bool write, MPI_Offset pos, void *buf,
                    MPI_Count count, struct vmpi_dtype *dt, MPI_Offset *moved,
                    MPI_Count *bytes)
{
    MPI_Offset esz = vmpi_dtype_ext32_size(dt), total = count * esz;
    char *tmp = malloc((size_t)total);
    if (!tmp)
        return ENOMEM;
    if (write)
        vmpi_dtype_ext32_pack(tmp, buf, count, dt);
    int e = vmpi_io_view_rw(f, write, tmp, pos, total, moved);
    if (!write)
        vmpi_dtype_ext32_unpack(buf, *moved / esz, dt, tmp);
    *bytes = *moved / esz * vmpi_dtype_size(dt);
    free(tmp);
    return e;
}

int vmpi_io_rw(struct vmpi_file *f, bool write, MPI_Offset offset, void *buf, MPI_Count count,
               struct vmpi_dtype *dt, MPI_Count *done, MPI_Count *bytes, const char *fn)
{
    MPI_Offset total, pos = offset * f->esize, moved = 0;
    int rc = f->rep ? vmpi_io_datarep_size(f->rep, dt, &total, fn) : MPI_SUCCESS;
    *done = *bytes = 0;
    if (rc != MPI_SUCCESS)
        return rc;
    total = count * (f->rep ? total : vmpi_io_stream_size(f, dt));
    if (total == 0)
        return MPI_SUCCESS;
    if (f->fsize == 0) {
        if (!write)
            return MPI_SUCCESS; /* nothing to read through an empty view */
        return vmpi_err_make(MPI_ERR_IO, "%s: the view's filetype holds no data: cannot "
                             "write %ld bytes", fn, (long)total);
    }
    if (f->one_tile && pos + total > f->fsize)
        return vmpi_err_make(MPI_ERR_IO, "%s: the view's filetype spans more file bytes than "
                             "its extent, so its tiles overlap: only its first %ld bytes of "
                             "data can be accessed, not bytes %ld to %ld", fn, (long)f->fsize,
                             (long)pos, (long)(pos + total));
    int e = f->atomic ? vmpi_io_lock_file(f->fd, write ? F_WRLCK : F_RDLCK) : 0;
    if (!e && f->rep) {
        rc = vmpi_io_datarep_rw(f, write, pos, buf, count, dt, done, bytes, fn);
        if (f->atomic)
            vmpi_io_lock_file(f->fd, F_UNLCK);
        return rc;
    }
    if (!e && f->ext32) {
        e = rw_ext32(f, write, pos, buf, count, dt, &moved, bytes);
    } else if (!e && vmpi_dtype_is_contig(dt)) {
        e = vmpi_io_view_rw(f, write, vmpi_dtype_addr(buf, vmpi_dtype_true_lb(dt)), pos, total,
                            &moved);
    } else if (!e) {
        MPI_Offset cap = total < PACK_CHUNK ? total : PACK_CHUNK;
        char *tmp = malloc((size_t)cap);
        if (!tmp)
            e = ENOMEM;
        while (!e && moved < total) {
            MPI_Offset n = total - moved < cap ? total - moved : cap, got;
            if (write)
                vmpi_dtype_pack(tmp, buf, count, dt, (size_t)moved, (size_t)n);
            e = vmpi_io_view_rw(f, write, tmp, pos + moved, n, &got);
            if (!write)
                vmpi_dtype_unpack(buf, count, dt, (size_t)moved, tmp, (size_t)got);
            moved += got;
            if (got < n)
                break;
        }
        free(tmp);
    }
    if (f->atomic)
        vmpi_io_lock_file(f->fd, F_UNLCK);
    *done = moved;
    if (!f->ext32)
        *bytes = moved;
    if (e)
        return vmpi_io_errno(e, "%s: %s '%s' at byte %ld of the view", fn,
                             write ? "writing" : "reading", f->name, (long)(pos + moved));
    return MPI_SUCCESS;
}
