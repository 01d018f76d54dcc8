/* File views (MPI-3.1 13.3): the filetype tiled from the displacement,
 * and the mapping between the view's data stream (the bytes a process
 * sees, in order) and file bytes.
 *
 * A filetype is kept flattened by core (struct vmpi_dtype: blocks of rep
 * runs of len bytes at off + i * stride, pos = where the block starts in
 * the element's packed form). The standard requires non-negative,
 * non-decreasing displacements; set_view checks that the runs of a tile
 * start in file order, and notes whether a tile's runs start before the
 * next tile's; then stream order is file order (for runs that do not
 * overlap) and both mappings are monotone. Byte p of the stream is in tile p / fsize, at packed byte
 * p % fsize of it. */
#include "io.h"

#include <stdio.h>
#include <string.h>

/* Whether the runs of ft start at or after 0, each where or after the one
 * before it starts, and, unless `overlap`, after it ends (overlapping runs
 * can only be read: MPICH allows them on read-only files); with `tiles`,
 * whether the last starts within one extent of the first (tile k + 1
 * then starts after tile k's runs; when not, vmpi_io_rw refuses accesses
 * past the first tile, whose file bytes would not be in stream order). */
static bool monotone(const struct vmpi_dtype *ft, bool overlap, bool tiles)
{
    MPI_Aint start = 0, end = 0;
    for (size_t i = 0; i < ft->nblk; i++) {
        const struct vmpi_dblk *b = &ft->blk[i];
        if (b->off < (overlap ? start : end) ||
            (b->rep > 1 && b->stride < (overlap ? 0 : b->len)))
            return false;
        start = b->off + (b->rep - 1) * b->stride;
        end = start + b->len;
    }
    return !tiles || ft->nblk == 0 || start - ft->blk[0].off <= vmpi_dtype_ext(ft);
}

/* The problem of a view (disp, etype, filetype laid out as lay, their
 * sizes in the file), as an error code, or MPI_SUCCESS. */
static int view_problem(bool ro, bool ext32, MPI_Offset disp, const struct vmpi_dtype *etype,
                        const struct vmpi_dtype *ftype, const struct vmpi_dtype *lay,
                        MPI_Offset esize, const char *fn)
{
    MPI_Offset fsize = vmpi_dtype_size(lay);
    if (ext32 && (vmpi_dtype_ext32_size(etype) != esize ||
                  vmpi_dtype_ext32_size(ftype) != fsize))
        return vmpi_err_make(MPI_ERR_UNSUPPORTED_DATAREP,
                             "%s: an \"external32\" view whose etype or filetype holds types "
                             "of another size in external32 than in memory (such as MPI_LONG) "
                             "is not supported",
                             fn);
    if (disp < 0)
        return vmpi_err_make(MPI_ERR_ARG, "%s: displacement %ld is negative", fn, (long)disp);
    if (esize <= 0)
        return vmpi_err_make(MPI_ERR_TYPE, "%s: etype %#x holds no data", fn,
                             (unsigned)etype->handle);
    if (fsize % esize != 0)
        return vmpi_err_make(MPI_ERR_ARG,
                             "%s: the filetype's size (%ld bytes) is not a multiple of the "
                             "etype's (%ld bytes)%s",
                             fn, (long)fsize, (long)esize, lay != ftype ? " in the file" : "");
    /* MPI_ERR_IO for a layout a file cannot have, as MPICH reports it. */
    if (!monotone(etype, ro, false) ||
        (fsize > 0 && (!monotone(lay, ro, false) || vmpi_dtype_ext(lay) <= 0)))
        return vmpi_err_make(MPI_ERR_IO,
                             "%s: the %s's displacements are not non-negative and "
                             "monotonically non-decreasing%s",
                             fn, monotone(etype, ro, false) ? "filetype" : "etype",
                             ro ? "" : " (or overlap in a file opened for writing)");
    return MPI_SUCCESS;
}

int vmpi_io_set_view(struct vmpi_file *f, MPI_Offset disp, struct vmpi_dtype *etype,
                     struct vmpi_dtype *ftype, const char *datarep, const char *fn)
{
    int local = MPI_SUCCESS;
    bool ro = f->amode & MPI_MODE_RDONLY;
    /* "internal" is native here: the layout vmpi itself reads back on any
     * of its processes (all of one architecture). "external32" keeps the
     * native layout of the view when its types take as many bytes in
     * external32 as in memory (int, double, char, ...: their displacements
     * and extents are then the same), and converts the data. A user's
     * representation lays the filetype out with its file extents. */
    bool ext32 = !strcmp(datarep, "external32");
    const struct vmpi_io_datarep *rep = NULL;
    struct vmpi_dtype *lay = ftype;
    MPI_Offset esize = vmpi_dtype_size(etype);
    if (strcmp(datarep, "native") && strcmp(datarep, "internal") && !ext32 &&
        !(rep = vmpi_io_datarep_find(datarep)))
        local = vmpi_err_make(MPI_ERR_UNSUPPORTED_DATAREP,
                              "%s: data representation '%s' is not supported (\"native\", "
                              "\"internal\", \"external32\" and those registered with "
                              "MPI_Register_datarep are)",
                              fn, datarep);
    if (local == MPI_SUCCESS && rep &&
        (local = vmpi_io_datarep_size(rep, etype, &esize, fn)) == MPI_SUCCESS)
        local = vmpi_io_datarep_layout(rep, ftype, &lay, fn);
    if (local == MPI_SUCCESS)
        local = view_problem(ro, ext32, disp, etype, ftype, lay, esize, fn);
    int rc = vmpi_io_agree(f->comm, local, fn);
    if (rc != MPI_SUCCESS) {
        if (lay != ftype && lay)
            vmpi_dtype_unref(lay);
        return rc;
    }
    if (lay == ftype)
        vmpi_dtype_ref(lay);
    vmpi_dtype_ref(etype);
    vmpi_dtype_ref(ftype);
    vmpi_dtype_unref(f->etype);
    vmpi_dtype_unref(f->ftype);
    vmpi_dtype_unref(f->flay);
    f->etype = etype;
    f->ftype = ftype;
    f->flay = lay;
    f->disp = disp;
    f->esize = esize;
    f->fsize = vmpi_dtype_size(lay);
    f->fext = vmpi_dtype_ext(lay);
    snprintf(f->datarep, sizeof f->datarep, "%s", datarep);
    f->ext32 = ext32;
    f->rep = rep;
    /* HDF5's chunked datasets make such filetypes (a struct of resized
     * hyperslab types: its lb is the least resized lb, above its first
     * data); like ROMIO, accept them for the one tile that is accessed. */
    f->one_tile = f->fsize > 0 && !monotone(lay, ro, true);
    f->fp = 0;
    return vmpi_io_shared_reset(f, fn);
}

/* The block of ft holding packed byte q of an element (q < size). */
static const struct vmpi_dblk *block_of(const struct vmpi_dtype *ft, MPI_Offset q)
{
    size_t lo = 0, hi = ft->nblk;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (ft->blk[mid].pos <= q)
            lo = mid;
        else
            hi = mid;
    }
    return &ft->blk[lo];
}

MPI_Offset vmpi_io_byte_of(const struct vmpi_file *f, MPI_Offset pos, MPI_Offset *left)
{
    const struct vmpi_dtype *ft = f->flay;
    if (f->fsize == 0 || (f->fsize == f->fext && vmpi_dtype_is_contig(ft))) {
        *left = INT64_MAX; /* the view is the file from disp (and lb) on */
        return f->disp + (f->fsize ? vmpi_dtype_true_lb(ft) : 0) + pos;
    }
    MPI_Offset k = pos / f->fsize, q = pos % f->fsize;
    const struct vmpi_dblk *b = block_of(ft, q);
    MPI_Offset in = q - b->pos, r = in / b->len;
    *left = b->len - in % b->len;
    return f->disp + k * f->fext + b->off + r * b->stride + in % b->len;
}

/* Stream bytes of one tile that lie before tile offset r. */
static MPI_Offset tile_before(const struct vmpi_dtype *ft, MPI_Offset r)
{
    MPI_Offset n = 0;
    for (size_t i = 0; i < ft->nblk; i++) {
        const struct vmpi_dblk *b = &ft->blk[i];
        if (r <= b->off)
            break;
        /* Runs that start before r; the last may be cut by r. */
        MPI_Offset started = b->rep == 1 || b->stride == 0 ? b->rep
                                                            : (r - b->off - 1) / b->stride + 1;
        if (started > b->rep)
            started = b->rep;
        MPI_Offset last = b->off + (started - 1) * b->stride;
        MPI_Offset cut = r - last < b->len ? r - last : b->len;
        n += (started - 1) * b->len + cut;
    }
    return n;
}

MPI_Offset vmpi_io_stream_before(const struct vmpi_file *f, MPI_Offset off)
{
    if (f->fsize == 0)
        return 0;
    /* Tile k's data lies in [k * fext + base, k * fext + base + fext). */
    MPI_Offset base = f->flay->blk[0].off, rel = off - f->disp - base;
    if (rel <= 0)
        return 0;
    return rel / f->fext * f->fsize + tile_before(f->flay, rel % f->fext + base);
}
