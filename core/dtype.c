/* Datatypes: the predefined ones with MPICH's handles, the derived-type
 * constructors (flattened to a list of contiguous runs), pack/unpack over
 * arbitrary windows of the packed stream, and basic-element counting.
 * Layout rules (bounds, markers, struct padding) follow MPI-3.1 section 4.1. */
#include "dtype_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* ---- predefined types ------------------------------------------------- */

struct bdesc {
    MPI_Datatype h;
    const char *name;
    MPI_Aint size, align, esize;
};
#define B(h, T) { h, #h, sizeof(T), _Alignof(T), sizeof(T) }

static const struct bdesc basic_desc[] = {
    B(MPI_CHAR, char), B(MPI_UNSIGNED_CHAR, unsigned char), B(MPI_SHORT, short),
    B(MPI_UNSIGNED_SHORT, unsigned short), B(MPI_INT, int), B(MPI_UNSIGNED, unsigned),
    B(MPI_LONG, long), B(MPI_UNSIGNED_LONG, unsigned long),
    B(MPI_LONG_LONG_INT, long long), B(MPI_FLOAT, float), B(MPI_DOUBLE, double),
    B(MPI_LONG_DOUBLE, long double), B(MPI_BYTE, unsigned char), B(MPI_WCHAR, wchar_t),
    B(MPI_PACKED, unsigned char), B(MPI_SIGNED_CHAR, signed char),
    B(MPI_UNSIGNED_LONG_LONG, unsigned long long),
    B(MPI_INT8_T, int8_t), B(MPI_INT16_T, int16_t), B(MPI_INT32_T, int32_t),
    B(MPI_INT64_T, int64_t), B(MPI_UINT8_T, uint8_t), B(MPI_UINT16_T, uint16_t),
    B(MPI_UINT32_T, uint32_t), B(MPI_UINT64_T, uint64_t), B(MPI_C_BOOL, _Bool),
    /* MPICH names it by its short alias. */
    { MPI_C_FLOAT_COMPLEX, "MPI_C_COMPLEX", sizeof(float _Complex), _Alignof(float _Complex),
      sizeof(float _Complex) },
    B(MPI_C_DOUBLE_COMPLEX, double _Complex),
    B(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex),
    B(MPI_AINT, MPI_Aint), B(MPI_OFFSET, MPI_Offset), B(MPI_COUNT, MPI_Count),
    /* Fortran types as gfortran lays them out, and C++'s. */
    B(MPI_CHARACTER, char), B(MPI_INTEGER, int32_t), B(MPI_REAL, float),
    B(MPI_LOGICAL, int32_t), B(MPI_COMPLEX, float _Complex), B(MPI_DOUBLE_PRECISION, double),
    B(MPI_DOUBLE_COMPLEX, double _Complex), B(MPI_REAL4, float), B(MPI_REAL8, double),
    B(MPI_REAL16, vmpi_real16), B(MPI_COMPLEX8, float _Complex),
    B(MPI_COMPLEX16, double _Complex), B(MPI_COMPLEX32, vmpi_complex32),
    B(MPI_INTEGER1, int8_t), B(MPI_INTEGER2, int16_t), B(MPI_INTEGER4, int32_t),
    B(MPI_INTEGER8, int64_t), B(MPI_CXX_BOOL, _Bool), B(MPI_CXX_FLOAT_COMPLEX, float _Complex),
    B(MPI_CXX_DOUBLE_COMPLEX, double _Complex),
    B(MPI_CXX_LONG_DOUBLE_COMPLEX, long double _Complex),
    /* MPI_2INT is a basic handle but holds two int elements. */
    { MPI_2INT, "MPI_2INT", sizeof(struct vmpi_minloc_2i), _Alignof(struct vmpi_minloc_2i),
      sizeof(int) },
    { MPI_2INTEGER, "MPI_2INTEGER", 8, 4, 4 },
    { MPI_2REAL, "MPI_2REAL", sizeof(struct vmpi_minloc_2r), _Alignof(float), sizeof(float) },
    { MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", sizeof(struct vmpi_minloc_2d),
      _Alignof(double), sizeof(double) },
    /* The deprecated bound markers: no data, only a bound. */
    { MPI_LB, "MPI_LB", 0, 1, 0 },
    { MPI_UB, "MPI_UB", 0, 1, 0 },
};
#undef B

/* The padded pairs, MPICH's direct-kind handles 0x8c000000 + index. */
struct pdesc {
    MPI_Datatype h;
    const char *name;
    MPI_Aint vsize, ioff, extent, align;
};
#define P(h, V, S)                                                                   \
    { h, #h, sizeof(V), offsetof(struct S, i), sizeof(struct S), _Alignof(struct S) }
static const struct pdesc pair_desc[] = {
    P(MPI_FLOAT_INT, float, vmpi_minloc_fi), P(MPI_DOUBLE_INT, double, vmpi_minloc_di),
    P(MPI_LONG_INT, long, vmpi_minloc_li), P(MPI_SHORT_INT, short, vmpi_minloc_si),
    P(MPI_LONG_DOUBLE_INT, long double, vmpi_minloc_ldi),
};
#undef P

#define NBASIC (sizeof basic_desc / sizeof basic_desc[0])
#define NPAIR (sizeof pair_desc / sizeof pair_desc[0])

static struct vmpi_dtype builtin[NBASIC + NPAIR];
static struct vmpi_dblk builtin_blk[NBASIC + NPAIR][2];
struct vmpi_dtype *vmpi_dtype_basic[256]; /* basic builtins by handle bits 0-7 */
static struct vmpi_htab user_types;

static void set_builtin(struct vmpi_dtype *dt, struct vmpi_dblk *blk, MPI_Datatype h,
                        const char *name, MPI_Aint extent, MPI_Aint align)
{
    memset(dt, 0, sizeof *dt);
    dt->handle = h;
    dt->builtin = dt->committed = true;
    dt->blk = blk;
    dt->ub = dt->true_ub = extent;
    dt->align = align;
    dt->basic = h;
    snprintf(dt->name, sizeof dt->name, "%s", name);
}

/* Appends a run to a builtin's block list, merging as derived types do. */
static void builtin_run(struct vmpi_dtype *dt, MPI_Aint off, MPI_Aint len, MPI_Aint esize)
{
    struct vmpi_dblk *last = dt->nblk ? &dt->blk[dt->nblk - 1] : NULL;
    if (last && last->esize == esize && last->off + last->len == off) {
        last->len += len;
    } else {
        dt->blk[dt->nblk++] =
            (struct vmpi_dblk){ .off = off, .len = len, .rep = 1, .pos = dt->size, .esize = esize };
    }
    dt->size += len;
    dt->nelem += len / esize;
}

int vmpi_dtype_init(void)
{
    memset(vmpi_dtype_basic, 0, sizeof vmpi_dtype_basic);
    for (size_t i = 0; i < NBASIC; i++) {
        const struct bdesc *d = &basic_desc[i];
        struct vmpi_dtype *dt = &builtin[i];
        set_builtin(dt, builtin_blk[i], d->h, d->name, d->size, d->align);
        if (d->size > 0) {
            builtin_run(dt, 0, d->size, d->esize);
        } else {
            /* A bound marker carries no data, so no kernel and no true extent. */
            dt->basic = 0;
            dt->has_lb = d->h == MPI_LB;
            dt->has_ub = d->h == MPI_UB;
        }
        dt->contig = d->size > 0;
        vmpi_dtype_basic[(uint32_t)d->h & 0xffu] = dt;
    }
    for (size_t i = 0; i < NPAIR; i++) {
        const struct pdesc *d = &pair_desc[i];
        struct vmpi_dtype *dt = &builtin[NBASIC + i];
        set_builtin(dt, builtin_blk[NBASIC + i], d->h, d->name, d->extent, d->align);
        builtin_run(dt, 0, d->vsize, d->vsize);
        builtin_run(dt, d->ioff, sizeof(int), sizeof(int));
        dt->true_ub = d->ioff + (MPI_Aint)sizeof(int);
        dt->contig = dt->nblk == 1 && dt->size == d->extent;
    }
    return MPI_SUCCESS;
}

static void destroy(struct vmpi_dtype *dt)
{
    vmpi_dtype_env_release(dt->env);
    free(dt->blk);
    free(dt);
}

void vmpi_dtype_finalize(void)
{
    /* Envelopes first: that frees the inner types the user freed, which
     * only envelopes held, while every live type keeps its handle's count. */
    for (uint32_t i = 1; i < user_types.used; i++) { /* slot 0 is never used */
        struct vmpi_dtype *dt = vmpi_htab_get(&user_types, i);
        if (dt && dt->env) {
            struct vmpi_dtype_env *e = dt->env;
            dt->env = NULL;
            vmpi_dtype_env_release(e);
        }
    }
    for (uint32_t i = 1; i < user_types.used; i++) {
        struct vmpi_dtype *dt = vmpi_htab_get(&user_types, i);
        if (dt)
            destroy(dt);
    }
    vmpi_htab_destroy(&user_types);
    vmpi_dtype_f90_finalize();
}

struct vmpi_dtype *vmpi_dtype_get(MPI_Datatype h)
{
    if (VMPI_HTYPE(h) != VMPI_OBJ_DTYPE)
        return NULL;
    switch (VMPI_HKIND(h)) {
    case VMPI_HK_BUILTIN: {
        struct vmpi_dtype *dt = vmpi_dtype_basic[(uint32_t)h & 0xffu];
        return dt && dt->handle == h ? dt : NULL;
    }
    case VMPI_HK_DIRECT:
        return VMPI_HINDEX(h) < NPAIR ? &builtin[NBASIC + VMPI_HINDEX(h)] : NULL;
    case VMPI_HK_INDIRECT:
        return vmpi_htab_get(&user_types, VMPI_HINDEX(h));
    default:
        return NULL;
    }
}

bool vmpi_dtype_is_contig(const struct vmpi_dtype *dt) { return dt->contig; }
MPI_Count vmpi_dtype_size(const struct vmpi_dtype *dt) { return dt->size; }
MPI_Aint vmpi_dtype_extent(const struct vmpi_dtype *dt) { return vmpi_dtype_ext(dt); }
MPI_Aint vmpi_dtype_true_lb(const struct vmpi_dtype *dt) { return dt->true_lb; }
bool vmpi_dtype_committed(const struct vmpi_dtype *dt) { return dt->committed; }

/* ---- reference counting ----------------------------------------------- */

void vmpi_dtype_ref(struct vmpi_dtype *dt)
{
    if (!dt->builtin)
        dt->refcount++;
}

void vmpi_dtype_unref(struct vmpi_dtype *dt)
{
    if (!dt->builtin && --dt->refcount == 0)
        destroy(dt);
}

void vmpi_dtype_free(struct vmpi_dtype *dt)
{
    vmpi_htab_del(&user_types, VMPI_HINDEX(dt->handle));
    vmpi_dtype_unref(dt);
}

/* ---- construction ------------------------------------------------------
 * A derived type is built by appending copies of old types at byte
 * displacements. Bounds follow MPI-3.1 4.1.7: when any copy carries an
 * lb (ub) marker, lb (ub) is the extreme marker; otherwise it is the extreme
 * of the data-carrying copies' own bounds. */

struct build {
    struct vmpi_dtype *dt;
    size_t cap;     /* of dt->blk */
    int err;        /* first error, sticky */
    bool dlb_set, dub_set, true_set;
    MPI_Aint mlb, mub; /* extreme markers, valid when dt->has_lb / has_ub */
    MPI_Aint dlb, dub; /* extreme bounds of copies without markers */
};

static int b_start(struct build *b)
{
    memset(b, 0, sizeof *b);
    b->dt = calloc(1, sizeof *b->dt);
    if (!b->dt)
        return MPI_ERR_NO_MEM;
    b->dt->align = 1;
    return MPI_SUCCESS;
}

/* r = a + s * c, with overflow reported through b->err. */
static MPI_Aint b_axpy(struct build *b, MPI_Aint a, MPI_Aint s, MPI_Aint c)
{
    MPI_Aint r;
    if (__builtin_mul_overflow(s, c, &r) || __builtin_add_overflow(a, r, &r)) {
        b->err = MPI_ERR_ARG;
        return 0;
    }
    return r;
}

static MPI_Aint min_a(MPI_Aint a, MPI_Aint b) { return a < b ? a : b; }
static MPI_Aint max_a(MPI_Aint a, MPI_Aint b) { return a > b ? a : b; }

/* Accounts for the bounds of one copy of old at displacement d. */
static void b_bounds(struct build *b, const struct vmpi_dtype *old, MPI_Aint d)
{
    struct vmpi_dtype *dt = b->dt;
    MPI_Aint lb = b_axpy(b, d, 1, old->lb), ub = b_axpy(b, d, 1, old->ub);
    if (old->has_lb) {
        b->mlb = dt->has_lb ? min_a(b->mlb, lb) : lb;
        dt->has_lb = true;
    } else if (old->size > 0) {
        b->dlb = b->dlb_set ? min_a(b->dlb, lb) : lb;
        b->dlb_set = true;
    }
    if (old->has_ub) {
        b->mub = dt->has_ub ? max_a(b->mub, ub) : ub;
        dt->has_ub = true;
    } else if (old->size > 0) {
        b->dub = b->dub_set ? max_a(b->dub, ub) : ub;
        b->dub_set = true;
    }
    if (old->size > 0) {
        MPI_Aint tlb = b_axpy(b, d, 1, old->true_lb), tub = b_axpy(b, d, 1, old->true_ub);
        dt->true_lb = b->true_set ? min_a(dt->true_lb, tlb) : tlb;
        dt->true_ub = b->true_set ? max_a(dt->true_ub, tub) : tub;
        b->true_set = true;
    }
}

/* Appends rep runs of len bytes at off, stride apart: merged into the last
 * entry when they extend it, either as one longer run (adjacent single runs)
 * or as more repetitions of it (same length, same spacing). */
static void b_rec(struct build *b, MPI_Aint off, MPI_Aint len, MPI_Aint rep, MPI_Aint stride,
                  MPI_Aint esize)
{
    struct vmpi_dtype *dt = b->dt;
    if (dt->nblk && dt->blk[dt->nblk - 1].esize == esize) {
        struct vmpi_dblk *last = &dt->blk[dt->nblk - 1];
        if (rep == 1 && last->rep == 1 && last->off + last->len == off) {
            last->len += len;
            return;
        }
        MPI_Aint s = last->rep == 1 ? off - last->off : last->stride, next;
        if (last->len == len && (rep == 1 || stride == s) &&
            !__builtin_mul_overflow(last->rep, s, &next) &&
            !__builtin_add_overflow(last->off, next, &next) && next == off) {
            last->stride = s;
            last->rep += rep;
            return;
        }
    }
    if (dt->nblk == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 8;
        struct vmpi_dblk *nb = cap > SIZE_MAX / sizeof *nb ? NULL
                                                           : realloc(dt->blk, cap * sizeof *nb);
        if (!nb) {
            b->err = MPI_ERR_NO_MEM;
            return;
        }
        dt->blk = nb;
        b->cap = cap;
    }
    dt->blk[dt->nblk++] = (struct vmpi_dblk){ .off = off, .len = len, .rep = rep,
                                              .stride = rep > 1 ? stride : 0, .esize = esize };
}

/* Appends n copies of old, the first at disp, the next ones every extent. */
static void b_add(struct build *b, const struct vmpi_dtype *old, MPI_Aint disp, MPI_Count n)
{
    struct vmpi_dtype *dt = b->dt;
    if (b->err)
        return;
    if (old->basic)
        dt->basic = !dt->basic || dt->basic == old->basic ? old->basic : MPI_DATATYPE_NULL;
    dt->align = max_a(dt->align, old->align);
    if (n == 0)
        return;
    MPI_Aint ext = vmpi_dtype_ext(old);
    /* In an evenly spaced sequence the extreme copies are the end ones. */
    b_bounds(b, old, disp);
    b_bounds(b, old, b_axpy(b, disp, n - 1, ext));
    MPI_Aint size;
    if (__builtin_mul_overflow(n, old->size, &size) ||
        __builtin_add_overflow(dt->size, size, &dt->size))
        b->err = MPI_ERR_ARG;
    if (b->err || old->size == 0)
        return;
    /* Every run now lies between the end copies' true bounds, checked above. */
    const struct vmpi_dblk *o = old->blk;
    if (old->nblk == 1 && o->rep == 1) {
        if (o->len == ext) /* the copies touch: one run for all */
            b_rec(b, disp + o->off, size, 1, 0, o->esize);
        else
            b_rec(b, disp + o->off, o->len, n, ext, o->esize);
        return;
    }
    for (MPI_Count j = 0; j < n && !b->err; j++) {
        MPI_Aint base = disp + j * ext;
        for (size_t i = 0; i < old->nblk; i++)
            b_rec(b, base + o[i].off, o[i].len, o[i].rep, o[i].stride, o[i].esize);
    }
}

/* Derives what the block list implies and gives the type a handle. */
static int b_register(struct vmpi_dtype *dt)
{
    MPI_Aint pos = 0;
    dt->nelem = 0;
    for (size_t i = 0; i < dt->nblk; i++) {
        dt->blk[i].pos = pos;
        pos += dt->blk[i].len * dt->blk[i].rep;
        dt->nelem += dt->blk[i].len / dt->blk[i].esize * dt->blk[i].rep;
    }
    dt->contig = dt->nblk == 1 && dt->blk[0].rep == 1 && dt->blk[0].off == dt->true_lb &&
                 dt->blk[0].len == dt->size && vmpi_dtype_ext(dt) == dt->size;
    dt->refcount = 1;
    uint32_t idx;
    if (vmpi_htab_add(&user_types, dt, &idx) != 0)
        return MPI_ERR_NO_MEM;
    dt->handle = VMPI_HMAKE(VMPI_HK_INDIRECT, VMPI_OBJ_DTYPE, idx);
    return MPI_SUCCESS;
}

static int b_finish(struct build *b, bool pad, struct vmpi_dtype **out)
{
    struct vmpi_dtype *dt = b->dt;
    if (!b->err) {
        /* A side with neither marker nor data is 0, as MPICH has it: a
         * struct of only (LB, 10) has ub 0 and extent -10. */
        dt->lb = dt->has_lb ? b->mlb : b->dlb_set ? b->dlb : 0;
        dt->ub = dt->has_ub ? b->mub : b->dub_set ? b->dub : 0;
        if (!b->true_set)
            dt->true_lb = dt->true_ub = 0;
        MPI_Aint ext;
        if (__builtin_sub_overflow(dt->ub, dt->lb, &ext))
            b->err = MPI_ERR_ARG;
        /* MPI-1 3.12.3 epsilon: without a UB marker a struct's ub is its
         * data's plus what rounds the extent (ub - lb, an LB marker's lb
         * too) up to a multiple of the alignment; a UB marker fixes it. */
        else if (pad && !dt->has_ub) {
            MPI_Aint r = ext % dt->align;
            if (r < 0)
                r += dt->align; /* a negative extent rounds towards 0 */
            if (r)
                dt->ub = b_axpy(b, dt->ub, 1, dt->align - r);
        }
    }
    if (!b->err && dt->nblk && dt->nblk < b->cap) {
        struct vmpi_dblk *nb = realloc(dt->blk, dt->nblk * sizeof *nb);
        if (nb)
            dt->blk = nb;
    }
    if (!b->err)
        b->err = b_register(dt);
    if (b->err) {
        destroy(dt);
        return b->err;
    }
    *out = dt;
    return MPI_SUCCESS;
}

int vmpi_dtype_contiguous(MPI_Count count, const struct vmpi_dtype *old,
                          struct vmpi_dtype **out)
{
    struct build b;
    if (b_start(&b) != MPI_SUCCESS)
        return MPI_ERR_NO_MEM;
    b_add(&b, old, 0, count);
    return b_finish(&b, false, out);
}

int vmpi_dtype_hvector(MPI_Count count, MPI_Count blocklen, MPI_Aint stride,
                       const struct vmpi_dtype *old, struct vmpi_dtype **out)
{
    struct build b;
    if (b_start(&b) != MPI_SUCCESS)
        return MPI_ERR_NO_MEM;
    for (MPI_Count i = 0; i < count && !b.err; i++)
        b_add(&b, old, b_axpy(&b, 0, i, stride), blocklen);
    if (count == 0)
        b_add(&b, old, 0, 0); /* still records the basic type */
    return b_finish(&b, false, out);
}

int vmpi_dtype_indexed(const struct vmpi_dtype_blocks *d, struct vmpi_dtype **out)
{
    struct build b;
    if (b_start(&b) != MPI_SUCCESS)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < d->count && !b.err; i++) {
        const struct vmpi_dtype *t = d->types ? vmpi_dtype_get(d->types[i]) : d->old;
        MPI_Aint disp = d->adisp ? d->adisp[i] : b_axpy(&b, 0, d->idisp[i], vmpi_dtype_ext(t));
        b_add(&b, t, disp, d->bl ? d->bl[i] : d->bl_all);
    }
    if (d->count == 0 && d->old)
        b_add(&b, d->old, 0, 0);
    return b_finish(&b, d->types != NULL, out);
}

static int copy_type(const struct vmpi_dtype *old, struct vmpi_dtype **out)
{
    struct vmpi_dtype *dt = malloc(sizeof *dt);
    if (!dt)
        return MPI_ERR_NO_MEM;
    *dt = *old;
    dt->builtin = dt->f90 = false;
    dt->name[0] = '\0';
    dt->blk = NULL;
    dt->env = NULL;
    if (old->nblk) {
        dt->blk = malloc(old->nblk * sizeof *dt->blk);
        if (!dt->blk) {
            free(dt);
            return MPI_ERR_NO_MEM;
        }
        memcpy(dt->blk, old->blk, old->nblk * sizeof *dt->blk);
    }
    *out = dt;
    return MPI_SUCCESS;
}

int vmpi_dtype_resized(const struct vmpi_dtype *old, MPI_Aint lb, MPI_Aint extent,
                       struct vmpi_dtype **out)
{
    MPI_Aint ub;
    if (__builtin_add_overflow(lb, extent, &ub))
        return MPI_ERR_ARG;
    struct vmpi_dtype *dt;
    int rc = copy_type(old, &dt);
    if (rc != MPI_SUCCESS)
        return rc;
    /* MPI-3.1 4.1.7: old markers are erased, new ones set at lb and ub. */
    dt->lb = lb;
    dt->ub = ub;
    dt->has_lb = dt->has_ub = true;
    dt->committed = false;
    rc = b_register(dt);
    if (rc != MPI_SUCCESS) {
        destroy(dt);
        return rc;
    }
    *out = dt;
    return MPI_SUCCESS;
}

int vmpi_dtype_dup(const struct vmpi_dtype *old, struct vmpi_dtype **out)
{
    struct vmpi_dtype *dt;
    int rc = copy_type(old, &dt);
    if (rc == MPI_SUCCESS && (rc = b_register(dt)) != MPI_SUCCESS)
        destroy(dt);
    if (rc == MPI_SUCCESS)
        *out = dt;
    return rc;
}

/* ---- pack / unpack ------------------------------------------------------ */

/* The entry holding byte r of one element's packed form. */
static size_t find_block(const struct vmpi_dtype *dt, MPI_Aint r)
{
    size_t lo = 0, hi = dt->nblk - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        if (dt->blk[mid].pos <= r)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Moves bytes [off, off + len) of the packed stream of (buf, count, dt)
 * between `packed` and buf: to the stream if pack, from it otherwise. */
static size_t move(char *packed, const void *buf, MPI_Count count,
                   const struct vmpi_dtype *dt, size_t off, size_t len, bool pack)
{
    if (count <= 0 || dt->size == 0)
        return 0;
    size_t size = (size_t)dt->size, total = (size_t)count * size;
    if (off >= total || len == 0)
        return 0;
    if (len > total - off)
        len = total - off;
    if (dt->contig) {
        char *p = vmpi_dtype_addr(buf, dt->true_lb + (MPI_Aint)off);
        memcpy(pack ? packed : p, pack ? p : packed, len);
        return len;
    }
    MPI_Aint ext = vmpi_dtype_ext(dt);
    MPI_Aint r = (MPI_Aint)(off % size); /* position inside the current element */
    const char *elem = vmpi_dtype_addr(buf, (MPI_Aint)(off / size) * ext);
    size_t i = find_block(dt, r);
    /* The window may start inside a run: which repetition, and how far in. */
    MPI_Aint j = (r - dt->blk[i].pos) / dt->blk[i].len;
    MPI_Aint in = (r - dt->blk[i].pos) % dt->blk[i].len;
    for (size_t done = 0;;) {
        const struct vmpi_dblk *b = &dt->blk[i];
        for (; j < b->rep; j++, in = 0) {
            size_t n = (size_t)(b->len - in);
            if (n > len - done)
                n = len - done;
            char *p = vmpi_dtype_addr(elem, b->off + j * b->stride + in);
            memcpy(pack ? packed + done : p, pack ? p : packed + done, n);
            done += n;
            if (done == len)
                return len;
        }
        j = 0;
        if (++i == dt->nblk) {
            i = 0;
            elem = vmpi_dtype_addr(elem, ext);
        }
    }
}

size_t vmpi_dtype_pack(void *out, const void *buf, MPI_Count count,
                       const struct vmpi_dtype *dt, size_t off, size_t max)
{
    return move(out, buf, count, dt, off, max, true);
}

size_t vmpi_dtype_unpack(void *buf, MPI_Count count, const struct vmpi_dtype *dt,
                         size_t off, const void *in, size_t len)
{
    /* move() writes into buf when unpacking; the stream is only read. */
    return move((char *)(uintptr_t)in, buf, count, dt, off, len, false);
}

MPI_Count vmpi_dtype_elements(const struct vmpi_dtype *dt, MPI_Count bytes)
{
    if (bytes <= 0 || dt->size == 0)
        return 0;
    MPI_Count n = bytes / dt->size * dt->nelem;
    MPI_Aint r = bytes % dt->size;
    for (size_t i = 0; r > 0; i++) {
        MPI_Aint t = min_a(r, dt->blk[i].len * dt->blk[i].rep);
        if (t % dt->blk[i].esize)
            return MPI_UNDEFINED;
        n += t / dt->blk[i].esize;
        r -= t;
    }
    return n;
}
