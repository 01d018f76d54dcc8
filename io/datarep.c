/* User-defined data representations (MPI-3.1 13.5.3): the registry of
 * MPI_Register_datarep, a view's layout in such a representation, and
 * converted data access.
 *
 * Layout: a predefined type takes the bytes dtype_file_extent_fn gives,
 * with byte alignment. 13.5 scales the displacements of types built
 * without byte displacements and takes byte displacements as given, so a
 * view's filetype is rebuilt from its envelope with each predefined type
 * replaced by that many MPI_BYTEs: contiguous, vector, indexed,
 * indexed_block, subarray and darray (which count in elements of their
 * old type) scale, hvector, hindexed, hindexed_block, struct and resized
 * keep their bytes. view.c maps the data stream through the rebuilt type.
 *
 * Access: the data stream is the predefined items of (buf, count,
 * datatype) in type-map order, each taking its file extent. The signature
 * of one element (runs of one predefined type) locates item p in the
 * stream and in the user's data. Data moves a chunk of whole items at a
 * time through a buffer of at most the hint vmpi_datarep_buffer_size bytes
 * (default 4 MiB): writes call write_conversion_fn into it and write it
 * through the view; reads fill it and call read_conversion_fn. position is
 * the index of the chunk's first item, userbuf always the user's buf, as
 * 13.5.3 describes. A direction whose function is MPI_CONVERSION_FN_NULL
 * moves the native bytes, which needs every item to take as many bytes in
 * the file as in memory. */
#include "io.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CONV_CHUNK = 4 << 20 };

/* Registered representations, newest first. The standard has no call to
 * remove one: they live as long as the process. */
static struct vmpi_io_datarep *reps;

const struct vmpi_io_datarep *vmpi_io_datarep_find(const char *name)
{
    for (struct vmpi_io_datarep *r = reps; r; r = r->next)
        if (!strcmp(r->name, name))
            return r;
    return NULL;
}

int vmpi_io_datarep_register(const char *name, MPI_Datarep_conversion_function *read,
                             MPI_Datarep_conversion_function *write,
                             MPI_Datarep_extent_function *extent, void *extra, const char *fn)
{
    if (!strcmp(name, "native") || !strcmp(name, "internal") || !strcmp(name, "external32") ||
        vmpi_io_datarep_find(name))
        return vmpi_err_make(MPI_ERR_DUP_DATAREP,
                             "%s: data representation '%s' is already defined", fn, name);
    struct vmpi_io_datarep *r = calloc(1, sizeof *r);
    if (!r)
        return vmpi_err_make(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    *r = (struct vmpi_io_datarep){reps, {0}, read, write, extent, extra};
    snprintf(r->name, sizeof r->name, "%s", name);
    reps = r;
    return MPI_SUCCESS;
}

/* The file extent of predefined type t (> 0). */
static int file_extent(const struct vmpi_io_datarep *rep, MPI_Datatype t, MPI_Aint *fe,
                       const char *fn)
{
    *fe = 0;
    int rc = rep->extent(t, fe, rep->extra);
    if (rc != MPI_SUCCESS)
        return vmpi_err_make(MPI_ERR_CONVERSION,
                             "%s: dtype_file_extent_fn of data representation '%s' returned "
                             "error %d for datatype %#x", fn, rep->name, rc, (unsigned)t);
    if (*fe <= 0)
        return vmpi_err_make(MPI_ERR_CONVERSION,
                             "%s: dtype_file_extent_fn of data representation '%s' gave "
                             "extent %ld for datatype %#x (it must be positive)", fn,
                             rep->name, (long)*fe, (unsigned)t);
    return MPI_SUCCESS;
}

/* A type the standard's constructors do not break down further. */
static bool is_leaf(const struct vmpi_dtype *dt)
{
    return dt->builtin || dt->f90 || !dt->env;
}

/* ---- layout -------------------------------------------------------------------- */

/* Drops a type relay made (markers MPI_LB, MPI_UB are the builtins). */
static void drop(struct vmpi_dtype *t)
{
    if (t && !t->builtin)
        vmpi_dtype_free(t);
}

/* dt as laid out in the file: a new type with a handle (or a marker
 * builtin) in *out. */
static int relay(const struct vmpi_io_datarep *rep, const struct vmpi_dtype *dt,
                 struct vmpi_dtype **out, const char *fn)
{
    *out = NULL;
    if (dt->builtin && dt->size == 0) {
        *out = (struct vmpi_dtype *)(uintptr_t)dt;
        return MPI_SUCCESS;
    }
    if (is_leaf(dt)) {
        MPI_Aint fe;
        int rc = file_extent(rep, dt->handle, &fe, fn);
        return rc != MPI_SUCCESS ? rc
                                 : vmpi_dtype_contiguous(fe, vmpi_dtype_lookup(MPI_BYTE), out);
    }
    const struct vmpi_dtype_env *e = dt->env;
    const int *in = e->ints;
    int n = in[0], rc = MPI_SUCCESS;
    if (e->combiner == MPI_COMBINER_STRUCT) {
        struct vmpi_dtype **t = calloc((size_t)n + 1, sizeof *t);
        MPI_Datatype *h = calloc((size_t)n + 1, sizeof *h);
        rc = t && h ? MPI_SUCCESS : MPI_ERR_NO_MEM;
        for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
            if ((rc = relay(rep, e->types[i], &t[i], fn)) == MPI_SUCCESS)
                h[i] = t[i]->handle;
        if (rc == MPI_SUCCESS) {
            struct vmpi_dtype_blocks b = {.count = n, .bl = in + 1, .adisp = e->aints, .types = h};
            rc = vmpi_dtype_indexed(&b, out);
        }
        for (int i = 0; t && i < n; i++)
            drop(t[i]);
        free(t);
        free(h);
        return rc;
    }
    struct vmpi_dtype *c;
    if ((rc = relay(rep, e->types[0], &c, fn)) != MPI_SUCCESS)
        return rc;
    struct vmpi_dtype_blocks b = {.count = n, .old = c};
    switch (e->combiner) {
    case MPI_COMBINER_DUP:
        *out = c;
        return MPI_SUCCESS;
    case MPI_COMBINER_RESIZED:
        rc = vmpi_dtype_resized(c, e->aints[0], e->aints[1], out);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        rc = vmpi_dtype_contiguous(n, c, out);
        break;
    case MPI_COMBINER_VECTOR:
        rc = vmpi_dtype_hvector(n, in[1], in[2] * vmpi_dtype_ext(c), c, out);
        break;
    case MPI_COMBINER_HVECTOR:
        rc = vmpi_dtype_hvector(n, in[1], e->aints[0], c, out);
        break;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
        b.bl = in + 1;
        if (e->combiner == MPI_COMBINER_INDEXED)
            b.idisp = in + 1 + n;
        else
            b.adisp = e->aints;
        rc = vmpi_dtype_indexed(&b, out);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
        b.bl_all = in[1];
        if (e->combiner == MPI_COMBINER_INDEXED_BLOCK)
            b.idisp = in + 2;
        else
            b.adisp = e->aints;
        rc = vmpi_dtype_indexed(&b, out);
        break;
    case MPI_COMBINER_SUBARRAY:
        rc = vmpi_dtype_subarray(n, in + 1, in + 1 + n, in + 1 + 2 * n, in[1 + 3 * n], c, out);
        break;
    case MPI_COMBINER_DARRAY: {
        int nd = in[2];
        struct vmpi_darray d = {in[0], in[1], nd, in + 3, in + 3 + nd, in + 3 + 2 * nd,
                                in + 3 + 3 * nd, in[3 + 4 * nd]};
        rc = vmpi_dtype_darray(&d, c, out);
        break;
    }
    default:
        rc = vmpi_err_make(MPI_ERR_TYPE, "%s: datatype %#x was made by a constructor (combiner "
                           "%d) that user data representations do not support", fn,
                           (unsigned)dt->handle, e->combiner);
    }
    drop(c);
    return rc;
}

int vmpi_io_datarep_layout(const struct vmpi_io_datarep *rep, const struct vmpi_dtype *dt,
                           struct vmpi_dtype **out, const char *fn)
{
    struct vmpi_dtype *t;
    int rc = relay(rep, dt, &t, fn);
    if (rc != MPI_SUCCESS && rc == vmpi_err_class(rc)) /* a constructor's */
        return vmpi_err_make(rc, "%s: cannot lay datatype %#x out in data representation "
                             "'%s' (%s)", fn, (unsigned)dt->handle, rep->name,
                             rc == MPI_ERR_NO_MEM ? "out of memory" : "its bounds overflow");
    if (rc != MPI_SUCCESS)
        return rc;
    if (t->builtin) { /* a marker alone: no data */
        *out = t;
        return MPI_SUCCESS;
    }
    /* Only io/ holds it: the handle goes, the reference stays. */
    t->committed = true;
    vmpi_dtype_ref(t);
    vmpi_dtype_free(t);
    *out = t;
    return MPI_SUCCESS;
}

int vmpi_io_datarep_extent(const struct vmpi_io_datarep *rep, const struct vmpi_dtype *dt,
                           MPI_Aint *extent, const char *fn)
{
    if (is_leaf(dt) && dt->size > 0)
        return file_extent(rep, dt->handle, extent, fn);
    struct vmpi_dtype *t;
    int rc = vmpi_io_datarep_layout(rep, dt, &t, fn);
    if (rc == MPI_SUCCESS) {
        *extent = vmpi_dtype_ext(t);
        vmpi_dtype_unref(t);
    }
    return rc;
}

/* ---- signatures ------------------------------------------------------------------ */

/* n items of predefined type `type`, each fe bytes in the file and ne in
 * memory; item0, fpos, npos: the items, file and native bytes of the
 * element before the run. */
struct run {
    MPI_Datatype type;
    MPI_Offset n, fe, ne, item0, fpos, npos;
};

struct sig {
    const struct vmpi_io_datarep *rep;
    struct run *r;
    size_t nr, cap;
    int rc;
    const char *fn;
    MPI_Offset items, fsize, nsize, maxfe; /* of one element */
    const struct run *unequal;             /* a run with fe != ne, if any */
};

static void sig_add(struct sig *s, const struct vmpi_dtype *t, MPI_Offset n)
{
    if (s->nr > 0 && s->r[s->nr - 1].type == t->handle) {
        s->r[s->nr - 1].n += n;
        return;
    }
    MPI_Aint fe = 0;
    for (size_t i = 0; i < s->nr && !fe; i++) /* the extent of a type seen before */
        if (s->r[i].type == t->handle)
            fe = (MPI_Aint)s->r[i].fe;
    if (!fe && (s->rc = file_extent(s->rep, t->handle, &fe, s->fn)) != MPI_SUCCESS)
        return;
    if (s->nr == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 8;
        struct run *r = realloc(s->r, cap * sizeof *r);
        if (!r) {
            s->rc = vmpi_err_make(MPI_ERR_NO_MEM, "%s: out of memory", s->fn);
            return;
        }
        s->r = r, s->cap = cap;
    }
    s->r[s->nr++] = (struct run){t->handle, n, fe, vmpi_dtype_size(t), 0, 0, 0};
}

/* The items of count elements of dt, appended to s. */
static void sig_walk(struct sig *s, const struct vmpi_dtype *dt, MPI_Offset count)
{
    if (count <= 0 || dt->size == 0 || s->rc != MPI_SUCCESS)
        return;
    if (is_leaf(dt)) {
        sig_add(s, dt, count);
        return;
    }
    const struct vmpi_dtype_env *e = dt->env;
    const int *in = e->ints;
    MPI_Offset per = 0; /* elements of the old type per element */
    switch (e->combiner) {
    case MPI_COMBINER_STRUCT:
        for (MPI_Offset c = 0; c < count; c++)
            for (int i = 0; i < in[0]; i++)
                sig_walk(s, e->types[i], in[1 + i]);
        return;
    case MPI_COMBINER_SUBARRAY:
    case MPI_COMBINER_DARRAY:
        sig_walk(s, e->inner, count);
        return;
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        per = 1;
        break;
    case MPI_COMBINER_CONTIGUOUS:
        per = in[0];
        break;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
        for (int i = 0; i < in[0]; i++)
            per += in[1 + i];
        break;
    default: /* vector, hvector, (h)indexed_block: count blocks of in[1] */
        per = (MPI_Offset)in[0] * in[1];
    }
    sig_walk(s, e->types[0], count * per);
}

static void sig_free(struct sig *s)
{
    free(s->r);
}

/* The signature of one element of dt; on error s holds nothing. */
static int sig_make(const struct vmpi_io_datarep *rep, const struct vmpi_dtype *dt,
                    struct sig *s, const char *fn)
{
    *s = (struct sig){.rep = rep, .fn = fn};
    sig_walk(s, dt, 1);
    if (s->rc != MPI_SUCCESS) {
        sig_free(s);
        s->r = NULL;
        return s->rc;
    }
    for (size_t i = 0; i < s->nr; i++) {
        struct run *r = &s->r[i];
        r->item0 = s->items, r->fpos = s->fsize, r->npos = s->nsize;
        s->items += r->n, s->fsize += r->n * r->fe, s->nsize += r->n * r->ne;
        s->maxfe = r->fe > s->maxfe ? r->fe : s->maxfe;
        if (r->fe != r->ne && !s->unequal)
            s->unequal = r;
    }
    return MPI_SUCCESS;
}

int vmpi_io_datarep_size(const struct vmpi_io_datarep *rep, const struct vmpi_dtype *dt,
                         MPI_Offset *size, const char *fn)
{
    struct sig s;
    int rc = sig_make(rep, dt, &s, fn);
    *size = rc == MPI_SUCCESS ? s.fsize : -1;
    sig_free(&s);
    return rc;
}

/* The run holding item j of an element (j < items). */
static const struct run *run_of(const struct sig *s, MPI_Offset j)
{
    size_t lo = 0, hi = s->nr;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (s->r[mid].item0 <= j)
            lo = mid;
        else
            hi = mid;
    }
    return &s->r[lo];
}

/* Where item p of the stream starts: in the file stream (*fo) and in the
 * native packed data (*no). */
static void locate(const struct sig *s, MPI_Offset p, MPI_Offset *fo, MPI_Offset *no)
{
    MPI_Offset k = p / s->items, j = p % s->items;
    const struct run *r = run_of(s, j);
    *fo = k * s->fsize + r->fpos + (j - r->item0) * r->fe;
    *no = k * s->nsize + r->npos + (j - r->item0) * r->ne;
}

/* How many whole items from item p on (at most max) fit in budget file
 * bytes; *used: their file bytes. */
static MPI_Offset take(const struct sig *s, MPI_Offset p, MPI_Offset max, MPI_Offset budget,
                       MPI_Offset *used)
{
    MPI_Offset n = 0;
    *used = 0;
    while (n < max) {
        MPI_Offset j = (p + n) % s->items;
        const struct run *r = run_of(s, j);
        /* One run: the items of successive elements follow each other. */
        MPI_Offset avail = s->nr == 1 ? max - n : r->item0 + r->n - j;
        MPI_Offset fit = (budget - *used) / r->fe;
        if (avail > max - n)
            avail = max - n;
        if (fit == 0)
            break;
        MPI_Offset t = avail < fit ? avail : fit;
        n += t;
        *used += t * r->fe;
    }
    return n;
}

/* ---- access ------------------------------------------------------------------- */

struct conv {
    struct vmpi_file *f;
    bool write;
    void *buf;
    MPI_Count count;
    struct vmpi_dtype *dt;
    const struct sig *s;
    MPI_Datarep_conversion_function *fn; /* NULL: native bytes */
    const char *mpi_fn;
};

/* Items [p, p + n) between the user's data and the file-side bytes tmp. */
static int convert(const struct conv *c, char *tmp, MPI_Offset p, MPI_Offset n)
{
    if (!c->fn) { /* native: the packed bytes are the file's */
        MPI_Offset fo, no, fe, ne;
        locate(c->s, p, &fo, &no);
        locate(c->s, p + n, &fe, &ne);
        if (c->write)
            vmpi_dtype_pack(tmp, c->buf, c->count, c->dt, (size_t)no, (size_t)(ne - no));
        else
            vmpi_dtype_unpack(c->buf, c->count, c->dt, (size_t)no, tmp, (size_t)(ne - no));
        return MPI_SUCCESS;
    }
    int rc = c->fn(c->buf, c->dt->handle, (int)n, tmp, p, c->f->rep->extra);
    if (rc != MPI_SUCCESS)
        return vmpi_err_make(MPI_ERR_CONVERSION,
                             "%s: the %s conversion function of data representation '%s' "
                             "returned error %d (items %ld to %ld of the access)", c->mpi_fn,
                             c->write ? "write" : "read", c->f->rep->name, rc, (long)p,
                             (long)(p + n - 1));
    return MPI_SUCCESS;
}

int vmpi_io_datarep_rw(struct vmpi_file *f, bool write, MPI_Offset pos, void *buf,
                       MPI_Count count, struct vmpi_dtype *dt, MPI_Count *done,
                       MPI_Count *bytes, const char *fn)
{
    struct sig s;
    int rc = sig_make(f->rep, dt, &s, fn);
    *done = *bytes = 0;
    if (rc != MPI_SUCCESS)
        return rc;
    struct conv c = {f, write, buf, count, dt, &s, write ? f->rep->write : f->rep->read, fn};
    MPI_Offset items = count * s.items, total = count * s.fsize;
    MPI_Offset cap = vmpi_io_hint_int(f, "vmpi_datarep_buffer_size", CONV_CHUNK);
    cap = cap < s.maxfe ? s.maxfe : cap;
    cap = cap > total ? total : cap;
    char *tmp = NULL;
    if (!c.fn && s.unequal)
        rc = vmpi_err_make(MPI_ERR_CONVERSION,
                           "%s: data representation '%s' has no %s conversion function (the "
                           "data is native) but datatype %#x takes %ld bytes in the file and "
                           "%ld in memory", fn, f->rep->name, write ? "write" : "read",
                           (unsigned)s.unequal->type, (long)s.unequal->fe,
                           (long)s.unequal->ne);
    else if (total > 0 && !(tmp = malloc((size_t)cap)))
        rc = vmpi_err_make(MPI_ERR_NO_MEM, "%s: out of memory for the conversion buffer", fn);
    MPI_Offset p = 0, moved = 0;
    int e = 0;
    while (rc == MPI_SUCCESS && !e && p < items) {
        MPI_Offset len, got;
        MPI_Offset n = take(&s, p, items - p < INT_MAX ? items - p : INT_MAX, cap, &len);
        if (write && (rc = convert(&c, tmp, p, n)) != MPI_SUCCESS)
            break;
        e = vmpi_io_view_rw(f, write, tmp, pos + moved, len, &got);
        moved += got;
        bool cut = got < len; /* the end of the file, or an error */
        if (cut)
            n = take(&s, p, n, got, &len); /* the items moved whole */
        if (!write && !e && n > 0 && (rc = convert(&c, tmp, p, n)) != MPI_SUCCESS)
            break;
        p += n;
        if (cut)
            break;
    }
    MPI_Offset fo, no = 0;
    if (p > 0)
        locate(&s, p, &fo, &no);
    free(tmp);
    sig_free(&s);
    *done = moved;
    *bytes = no;
    if (rc == MPI_SUCCESS && e)
        rc = vmpi_io_errno(e, "%s: %s '%s' at byte %ld of the view", fn,
                           write ? "writing" : "reading", f->name, (long)(pos + moved));
    return rc;
}
