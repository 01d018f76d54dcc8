/* MPI-IO (MPI-3.1 13): the file object (file.c), views and the mapping of
 * a view's data onto file bytes (view.c), and data access (access.c).
 * Prefix vmpi_io_.
 *
 * Every process of the file's group opens the file itself (a plain fd,
 * pread/pwrite), so the layer is correct on a local disk shared by the
 * ranks of a host and on a shared file system (NFS, Lustre, a cloud file
 * share) that gives POSIX visibility after a write returns. Nothing is
 * cached in user space: a write is visible to every rank once it returns.
 *
 * Errors: functions here return MPI_SUCCESS or an error code made with
 * vmpi_err_make (message naming the MPI function); the entry points apply
 * the file's error handler (vmpi_io_errcomm). Errors of collective calls
 * are agreed on (every rank returns the same class). */
#ifndef VMPI_IO_IO_H
#define VMPI_IO_IO_H

#include "../coll/coll.h"
#include "../comm/comm.h"
#include "../core/dtype_impl.h"

#include <stdbool.h>
#include <sys/types.h>

/* A representation of MPI_Register_datarep (datarep.c). */
struct vmpi_io_datarep {
    struct vmpi_io_datarep *next;
    char name[MPI_MAX_DATAREP_STRING];
    MPI_Datarep_conversion_function *read, *write; /* NULL: the data is native */
    MPI_Datarep_extent_function *extent;
    void *extra;
};

/* MPICH's object number for files: handles look like the others (kind 3,
 * object 4, index), and MPI_File is that int in a pointer. */
#define VMPI_IO_OBJ_FILE 4

struct vmpi_file {
    int handle;
    int fd;
    int amode;
    char *name;
    /* Private duplicate of the communicator given to MPI_File_open: the
     * internal collectives run on it, and its error handler and errh_obj
     * are the file's (MPI_File_set_errhandler). */
    struct vmpi_comm *comm;
    struct vmpi_info *hints; /* hints given at open, set_info, set_view; NULL: none */
    /* The view (13.3): data is the filetype tiled from disp, in etypes. */
    MPI_Offset disp;
    struct vmpi_dtype *etype, *ftype; /* referenced */
    /* The filetype as laid out in the file (referenced): ftype, or in a
     * user's representation (rep) ftype with its types' file extents. */
    struct vmpi_dtype *flay;
    MPI_Offset esize;                 /* etype size in the file, > 0 */
    MPI_Offset fsize, fext;           /* flay's size and extent */
    char datarep[MPI_MAX_DATAREP_STRING];
    bool ext32; /* "external32": data in the file is big-endian (view.c) */
    const struct vmpi_io_datarep *rep; /* a user's representation, else NULL */
    bool one_tile; /* the filetype's data spans more than its extent (view.c) */
    MPI_Offset fp; /* individual file pointer, in etypes of the view */
    bool atomic;
    /* On a file system of this machine (ext4, xfs, btrfs, tmpfs: fstatfs
     * at open), whose page cache merges neighbouring writes: automatic
     * collective buffering leaves large runs to each rank (two_phase.c). */
    bool local_fs;
    /* The shared file pointer (shared.c): its file, fd (-1 until used),
     * and its value while that file is empty. */
    char *shfp_name;
    int shfd;
    MPI_Offset shfp_init;
    /* A split collective begun and not ended (api/file_nb.c): its kind
     * (0: none) and outcome. */
    int split;
    MPI_Status split_st;
};

/* ---- the file object (file.c) --------------------------------------------- */
/* The open file fh names, or NULL. */
struct vmpi_file *vmpi_io_get(MPI_File fh);
static inline MPI_File vmpi_io_handle(const struct vmpi_file *f)
{
    return (MPI_File)(uintptr_t)(uint32_t)f->handle;
}
/* Where an error on f goes: f's communicator (its handler), or, for f NULL
 * (no file yet: MPI_File_open, MPI_File_delete, a bad handle), the
 * pseudo-communicator holding MPI_FILE_NULL's handler. */
struct vmpi_comm *vmpi_io_errcomm(struct vmpi_file *f);
/* The handler new files get: MPI_FILE_NULL's (MPI_ERRORS_RETURN at first). */
MPI_Errhandler vmpi_io_null_errh(void);
void vmpi_io_set_errh(struct vmpi_file *f, MPI_Errhandler e); /* f NULL: MPI_FILE_NULL's */

/* Collective over c: opens (creating it as amode says) and gives *out. */
int vmpi_io_open(struct vmpi_comm *c, const char *name, int amode, struct vmpi_info *hints,
                 struct vmpi_file **out);
/* Collective: closes f (deleting the file with MPI_MODE_DELETE_ON_CLOSE);
 * vmpi_io_free then frees it, once its error handler has run. */
int vmpi_io_close(struct vmpi_file *f);
void vmpi_io_free(struct vmpi_file *f);
int vmpi_io_delete(const char *name);
/* Collective; size the same on every rank (checked). */
int vmpi_io_set_size(struct vmpi_file *f, MPI_Offset size, bool prealloc, const char *fn);
int vmpi_io_get_size(struct vmpi_file *f, MPI_Offset *size, const char *fn);
int vmpi_io_sync(struct vmpi_file *f);
int vmpi_io_set_atomicity(struct vmpi_file *f, bool atomic);
/* The hint key of f as a positive integer, else def. */
int64_t vmpi_io_hint_int(const struct vmpi_file *f, const char *key, int64_t def);
/* Adds (replaces) the hints of info to f's. */
int vmpi_io_add_hints(struct vmpi_file *f, const struct vmpi_info *info, const char *fn);
/* Whole-file fcntl lock (F_RDLCK, F_WRLCK) or unlock (F_UNLCK) of fd,
 * waiting for it: 0 or an errno (io/access.c; atomic mode and the shared
 * file pointer's file). */
int vmpi_io_lock_file(int fd, short type);
/* A code of class cls for errno e (ENOENT: MPI_ERR_NO_SUCH_FILE, ...). */
int vmpi_io_errno(int e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Collective over f's group: every rank gets the first failing rank's code
 * (local_rc of each), so a collective call fails alike everywhere. */
int vmpi_io_agree(struct vmpi_comm *c, int local_rc, const char *fn);

/* ---- views (view.c) ----------------------------------------------------------- */
/* Collective; etype and filetype checked committed by the caller. */
int vmpi_io_set_view(struct vmpi_file *f, MPI_Offset disp, struct vmpi_dtype *etype,
                     struct vmpi_dtype *ftype, const char *datarep, const char *fn);
/* The file byte of byte pos of the view's data stream; *left: how many
 * stream bytes from pos on follow it contiguously in the file (to the end
 * of its run of the filetype). */
MPI_Offset vmpi_io_byte_of(const struct vmpi_file *f, MPI_Offset pos, MPI_Offset *left);
/* Bytes one element of dt takes in the view's data stream: its size, its
 * external32 size, or its size in the user's representation (-1 if that
 * representation's dtype_file_extent_fn fails). */
static inline MPI_Offset vmpi_io_stream_size(const struct vmpi_file *f,
                                             const struct vmpi_dtype *dt);
/* Bytes of the view's data stream that lie before file byte `off`. */
MPI_Offset vmpi_io_stream_before(const struct vmpi_file *f, MPI_Offset off);

/* ---- user-defined data representations (datarep.c) ----------------------- */
int vmpi_io_datarep_register(const char *name, MPI_Datarep_conversion_function *read,
                             MPI_Datarep_conversion_function *write,
                             MPI_Datarep_extent_function *extent, void *extra, const char *fn);
/* The representation registered as name, or NULL. */
const struct vmpi_io_datarep *vmpi_io_datarep_find(const char *name);
/* dt laid out in the file in rep: a type only io/ holds (no handle, one
 * reference: vmpi_dtype_unref it). */
int vmpi_io_datarep_layout(const struct vmpi_io_datarep *rep, const struct vmpi_dtype *dt,
                           struct vmpi_dtype **out, const char *fn);
/* MPI_File_get_type_extent in rep. */
int vmpi_io_datarep_extent(const struct vmpi_io_datarep *rep, const struct vmpi_dtype *dt,
                           MPI_Aint *extent, const char *fn);
/* The file bytes of one element of dt's data in rep (-1 on error). */
int vmpi_io_datarep_size(const struct vmpi_io_datarep *rep, const struct vmpi_dtype *dt,
                         MPI_Offset *size, const char *fn);
/* vmpi_io_rw of a view in f->rep, from stream byte pos: the data converted
 * a chunk at a time. *done: stream bytes moved; *bytes: the native bytes
 * of the items moved whole. */
int vmpi_io_datarep_rw(struct vmpi_file *f, bool write, MPI_Offset pos, void *buf,
                       MPI_Count count, struct vmpi_dtype *dt, MPI_Count *done,
                       MPI_Count *bytes, const char *fn);

static inline MPI_Offset vmpi_io_stream_size(const struct vmpi_file *f,
                                             const struct vmpi_dtype *dt)
{
    MPI_Offset sz;
    if (f->rep)
        return vmpi_io_datarep_size(f->rep, dt, &sz, "") == MPI_SUCCESS ? sz : -1;
    return f->ext32 ? vmpi_dtype_ext32_size(dt) : vmpi_dtype_size(dt);
}

/* ---- the shared file pointer (shared.c) ------------------------------------- */
/* At open: the name of the pointer's file, from rank 0's id. */
int vmpi_io_shared_name(struct vmpi_file *f, uint64_t id);
/* *old = the pointer, which moves n etypes on (n 0: a read). */
int vmpi_io_shared_fetch_add(struct vmpi_file *f, MPI_Offset n, MPI_Offset *old,
                             const char *fn);
/* Collective, in rank order: *off = where this rank's n etypes go; the
 * pointer moves past all of them. local_rc: this rank's check, agreed on
 * first. */
int vmpi_io_shared_ordered(struct vmpi_file *f, int local_rc, MPI_Offset n, MPI_Offset *off,
                           const char *fn);
/* Collective: the pointer becomes pos (after agreeing on local_rc). */
int vmpi_io_shared_set(struct vmpi_file *f, int local_rc, MPI_Offset pos, const char *fn);
/* Collective (set_view): the pointer goes back to 0. */
int vmpi_io_shared_reset(struct vmpi_file *f, const char *fn);
/* At close: closes and removes the pointer's file. */
void vmpi_io_shared_remove(struct vmpi_file *f);

/* ---- data access (access.c) ------------------------------------------------- */
/* Reads or writes (buf, count, dt) at view offset `offset` (etypes). The
 * stream bytes moved go to *done (reads stop at the end of the file), the
 * bytes of dt's data they hold (what a status counts) to *bytes. */
int vmpi_io_rw(struct vmpi_file *f, bool write, MPI_Offset offset, void *buf, MPI_Count count,
               struct vmpi_dtype *dt, MPI_Count *done, MPI_Count *bytes, const char *fn);
/* Moves len stream bytes of the view from pos on between mem and the
 * file; *moved: the bytes done (fewer at the end of the file). Returns 0
 * or an errno. */
int vmpi_io_view_rw(const struct vmpi_file *f, bool write, char *mem, MPI_Offset pos,
                    MPI_Offset len, MPI_Offset *moved);
/* pread or pwrite of all n bytes, short only at the end of the file
 * (reads). Returns the bytes moved, or -errno. */
ssize_t vmpi_io_full(int fd, bool write, char *mem, size_t n, MPI_Offset off);

/* ---- collective access (two_phase.c) ----------------------------------------- */
/* vmpi_io_rw as a collective over f's group (the _all forms): two-phase
 * collective buffering where it applies, else each rank's own access.
 * Errors are agreed on (every rank returns the first failing rank's). */
int vmpi_io_rw_all(struct vmpi_file *f, bool write, MPI_Offset offset, void *buf,
                   MPI_Count count, struct vmpi_dtype *dt, MPI_Count *done, MPI_Count *bytes,
                   const char *fn);
/* At MPI_Finalize: frees the buffers kept between collective accesses. */
void vmpi_io_tp_finalize(void);

#endif
