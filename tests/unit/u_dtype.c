/* Unit test of core/dtype.c: predefined types, every constructor's bounds
 * against hand-computed values, pack/unpack round trips (whole and in
 * random windows) against a reference built element by element here, basic
 * element counting, and reference counting. Exits non-zero on any failure. */
#include "../../core/dtype_impl.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "u_check.h"

#define CHECK_EQ(a, b, what)                                                  \
    CHECK((long)(a) == (long)(b), "%s: got %ld, want %ld", what, (long)(a), (long)(b))

static struct vmpi_dtype *T(MPI_Datatype h)
{
    struct vmpi_dtype *dt = vmpi_dtype_get(h);
    if (!dt) {
        fprintf(stderr, "FAILED: no datatype for handle 0x%x\n", (unsigned)h);
        exit(1);
    }
    return dt;
}

/* The type a constructor made in *dtp (read after the call, hence the
 * pointer); stops at a failure since everything after would be noise. */
static struct vmpi_dtype *ok(int rc, struct vmpi_dtype **dtp, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "FAILED: constructing %s returned %d\n", what, rc);
        exit(1);
    }
    return *dtp;
}

static void check_bounds(const struct vmpi_dtype *dt, const char *what, MPI_Count size,
                         MPI_Aint lb, MPI_Aint extent, MPI_Aint true_lb, MPI_Aint true_extent)
{
    char buf[160];
    snprintf(buf, sizeof buf, "%s size", what);
    CHECK_EQ(vmpi_dtype_size(dt), size, buf);
    snprintf(buf, sizeof buf, "%s lb", what);
    CHECK_EQ(dt->lb, lb, buf);
    snprintf(buf, sizeof buf, "%s extent", what);
    CHECK_EQ(vmpi_dtype_extent(dt), extent, buf);
    snprintf(buf, sizeof buf, "%s true_lb", what);
    CHECK_EQ(vmpi_dtype_true_lb(dt), true_lb, buf);
    snprintf(buf, sizeof buf, "%s true extent", what);
    CHECK_EQ(dt->true_ub - dt->true_lb, true_extent, buf);
}

/* ---- predefined types -------------------------------------------------- */

static void test_builtins(void)
{
    static const struct { MPI_Datatype h; const char *name; } basic[] = {
        { MPI_CHAR, "MPI_CHAR" }, { MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR" },
        { MPI_SHORT, "MPI_SHORT" }, { MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT" },
        { MPI_INT, "MPI_INT" }, { MPI_UNSIGNED, "MPI_UNSIGNED" }, { MPI_LONG, "MPI_LONG" },
        { MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG" }, { MPI_LONG_LONG, "MPI_LONG_LONG_INT" },
        { MPI_FLOAT, "MPI_FLOAT" }, { MPI_DOUBLE, "MPI_DOUBLE" },
        { MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE" }, { MPI_BYTE, "MPI_BYTE" },
        { MPI_WCHAR, "MPI_WCHAR" }, { MPI_PACKED, "MPI_PACKED" },
        { MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR" },
        { MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG" },
        { MPI_INT8_T, "MPI_INT8_T" }, { MPI_INT16_T, "MPI_INT16_T" },
        { MPI_INT32_T, "MPI_INT32_T" }, { MPI_INT64_T, "MPI_INT64_T" },
        { MPI_UINT8_T, "MPI_UINT8_T" }, { MPI_UINT16_T, "MPI_UINT16_T" },
        { MPI_UINT32_T, "MPI_UINT32_T" }, { MPI_UINT64_T, "MPI_UINT64_T" },
        { MPI_C_BOOL, "MPI_C_BOOL" }, { MPI_C_COMPLEX, "MPI_C_COMPLEX" },
        { MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX" },
        { MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX" },
        { MPI_AINT, "MPI_AINT" }, { MPI_OFFSET, "MPI_OFFSET" }, { MPI_COUNT, "MPI_COUNT" },
        { MPI_2INT, "MPI_2INT" },
    };
    for (size_t i = 0; i < sizeof basic / sizeof basic[0]; i++) {
        struct vmpi_dtype *dt = T(basic[i].h);
        MPI_Count hsize = ((uint32_t)basic[i].h >> 8) & 0xff; /* MPICH's size bits */
        CHECK(strcmp(dt->name, basic[i].name) == 0, "name %s, want %s", dt->name,
              basic[i].name);
        check_bounds(dt, basic[i].name, hsize, 0, hsize, 0, hsize);
        CHECK(vmpi_dtype_committed(dt) && vmpi_dtype_is_contig(dt),
              "%s is committed and contiguous", basic[i].name);
        CHECK_EQ(vmpi_dtype_elements(dt, hsize * 3), basic[i].h == MPI_2INT ? 6 : 3,
                 basic[i].name);
    }

    /* Pairs with the C struct layouts of { T value; int index; }. */
    check_bounds(T(MPI_FLOAT_INT), "MPI_FLOAT_INT", 8, 0, 8, 0, 8);
    check_bounds(T(MPI_DOUBLE_INT), "MPI_DOUBLE_INT", 12, 0, 16, 0, 12);
    check_bounds(T(MPI_LONG_INT), "MPI_LONG_INT", 12, 0, 16, 0, 12);
    check_bounds(T(MPI_SHORT_INT), "MPI_SHORT_INT", 6, 0, 8, 0, 8);
    check_bounds(T(MPI_LONG_DOUBLE_INT), "MPI_LONG_DOUBLE_INT", 20, 0, 32, 0, 20);
    CHECK(vmpi_dtype_is_contig(T(MPI_FLOAT_INT)), "MPI_FLOAT_INT is contiguous");
    CHECK(!vmpi_dtype_is_contig(T(MPI_DOUBLE_INT)), "MPI_DOUBLE_INT has padding");
    CHECK(strcmp(T(MPI_SHORT_INT)->name, "MPI_SHORT_INT") == 0, "pair name");
    CHECK_EQ(vmpi_dtype_elements(T(MPI_DOUBLE_INT), 24), 4, "DOUBLE_INT elements of 24 B");
    CHECK_EQ(vmpi_dtype_elements(T(MPI_DOUBLE_INT), 8), 1, "DOUBLE_INT elements of 8 B");
    CHECK_EQ(vmpi_dtype_elements(T(MPI_DOUBLE_INT), 10), MPI_UNDEFINED,
             "DOUBLE_INT elements of 10 B");
    CHECK_EQ(vmpi_dtype_elements(T(MPI_SHORT_INT), 2), 1, "SHORT_INT elements of 2 B");

    check_bounds(T(MPI_LB), "MPI_LB", 0, 0, 0, 0, 0);
    check_bounds(T(MPI_UB), "MPI_UB", 0, 0, 0, 0, 0);

    /* Invalid handles: null, wrong size bits, unknown pair, other objects. */
    static const MPI_Datatype bad[] = {
        MPI_DATATYPE_NULL, (MPI_Datatype)0x4c000105, (MPI_Datatype)0x4c000412,
        (MPI_Datatype)0x8c000005, (MPI_Datatype)0xcc000000, MPI_COMM_WORLD, MPI_SUM, 0,
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(vmpi_dtype_get(bad[i]) == NULL, "handle 0x%x must be invalid",
              (unsigned)bad[i]);
}

/* ---- constructors ------------------------------------------------------ */

struct dbl_char { double d; char c; };
struct gappy { char c; double d; short s; };

static void test_constructors(void)
{
    struct vmpi_dtype *dt;
    struct vmpi_dtype *i32 = T(MPI_INT), *f64 = T(MPI_DOUBLE);

    dt = ok(vmpi_dtype_contiguous(3, i32, &dt), &dt, "contiguous");
    check_bounds(dt, "contiguous(3, INT)", 12, 0, 12, 0, 12);
    CHECK(vmpi_dtype_is_contig(dt) && dt->nblk == 1, "contiguous(3, INT) is one block");
    CHECK(!vmpi_dtype_committed(dt), "new types are uncommitted");
    CHECK(VMPI_HKIND(dt->handle) == VMPI_HK_INDIRECT && vmpi_dtype_get(dt->handle) == dt,
          "user handle round trip");

    dt = ok(vmpi_dtype_contiguous(0, i32, &dt), &dt, "contiguous(0)");
    check_bounds(dt, "contiguous(0, INT)", 0, 0, 0, 0, 0);

    /* vector(3, 2, 4, INT): blocks at 0, 16, 32 bytes, 8 bytes each. */
    dt = ok(vmpi_dtype_hvector(3, 2, 16, i32, &dt), &dt, "vector");
    check_bounds(dt, "vector(3,2,4,INT)", 24, 0, 40, 0, 40);
    CHECK(!vmpi_dtype_is_contig(dt) && dt->nblk == 1 && dt->blk[0].rep == 3,
          "vector is one entry of 3 runs, got %zu entries", dt->nblk);

    /* Stride equal to the block: the blocks merge into one. */
    dt = ok(vmpi_dtype_hvector(4, 3, 12, i32, &dt), &dt, "dense vector");
    check_bounds(dt, "vector(4,3,3,INT)", 48, 0, 48, 0, 48);
    CHECK(vmpi_dtype_is_contig(dt) && dt->nblk == 1, "dense vector is contiguous");

    /* Negative stride: copies at 0, -8, -16. */
    dt = ok(vmpi_dtype_hvector(3, 1, -8, i32, &dt), &dt, "negative vector");
    check_bounds(dt, "vector(3,1,-2,INT)", 12, -16, 20, -16, 20);

    /* indexed({2,1,3}, {4,0,8}, DOUBLE): 32..48, 0..8, 64..88. */
    static const int ibl[] = { 2, 1, 3 }, idisp[] = { 4, 0, 8 };
    struct vmpi_dtype_blocks d = { .count = 3, .bl = ibl, .idisp = idisp, .old = f64 };
    dt = ok(vmpi_dtype_indexed(&d, &dt), &dt, "indexed");
    check_bounds(dt, "indexed", 48, 0, 88, 0, 88);

    /* indexed_block(2, {5,1,9}, SHORT): 10..14, 2..6, 18..22. */
    static const int bdisp[] = { 5, 1, 9 };
    d = (struct vmpi_dtype_blocks){ .count = 3, .bl_all = 2, .idisp = bdisp,
                                    .old = T(MPI_SHORT) };
    dt = ok(vmpi_dtype_indexed(&d, &dt), &dt, "indexed_block");
    check_bounds(dt, "indexed_block", 12, 2, 20, 2, 20);

    /* hindexed({1,2}, {100,-4} bytes, INT). */
    static const int hbl[] = { 1, 2 };
    static const MPI_Aint hdisp[] = { 100, -4 };
    d = (struct vmpi_dtype_blocks){ .count = 2, .bl = hbl, .adisp = hdisp, .old = i32 };
    dt = ok(vmpi_dtype_indexed(&d, &dt), &dt, "hindexed");
    check_bounds(dt, "hindexed", 12, -4, 108, -4, 108);

    /* struct { double; char; }: the extent is padded to 16 as C pads it. */
    static const int sbl[] = { 1, 1 };
    static const MPI_Aint sdisp[] = { offsetof(struct dbl_char, d), offsetof(struct dbl_char, c) };
    static const MPI_Datatype stypes[] = { MPI_DOUBLE, MPI_CHAR };
    d = (struct vmpi_dtype_blocks){ .count = 2, .bl = sbl, .adisp = sdisp, .types = stypes };
    dt = ok(vmpi_dtype_indexed(&d, &dt), &dt, "struct");
    check_bounds(dt, "struct{double;char}", 9, 0, sizeof(struct dbl_char), 0, 9);

    /* The old bound markers: lb -4, ub 20, overriding the data's bounds. */
    static const int mbl[] = { 1, 1, 1 };
    static const MPI_Aint mdisp[] = { -4, 0, 20 };
    static const MPI_Datatype mtypes[] = { MPI_LB, MPI_INT, MPI_UB };
    d = (struct vmpi_dtype_blocks){ .count = 3, .bl = mbl, .adisp = mdisp, .types = mtypes };
    struct vmpi_dtype *marked = ok(vmpi_dtype_indexed(&d, &dt), &dt, "struct with LB/UB");
    check_bounds(marked, "struct{LB,INT,UB}", 4, -4, 24, 0, 4);
    /* Markers are inherited by a type built from it: contiguous(2) spans 2 extents. */
    dt = ok(vmpi_dtype_contiguous(2, marked, &dt), &dt, "contiguous of marked");
    check_bounds(dt, "contiguous(2, marked)", 8, -4, 48, 0, 28);

    /* resized(INT, -2, 10) */
    struct vmpi_dtype *rs = ok(vmpi_dtype_resized(i32, -2, 10, &dt), &dt, "resized");
    check_bounds(rs, "resized(INT,-2,10)", 4, -2, 10, 0, 4);
    CHECK(!vmpi_dtype_is_contig(rs), "resized with a gap is not contiguous");
    dt = ok(vmpi_dtype_contiguous(3, rs, &dt), &dt, "contiguous of resized");
    check_bounds(dt, "contiguous(3, resized)", 12, -2, 30, 0, 24);
    CHECK(dt->nblk == 1 && dt->blk[0].rep == 3 && dt->blk[0].stride == 10,
          "contiguous of resized: one entry of 3 runs 10 bytes apart");

    /* A resized subtype's markers stop the struct padding: ub stays at 12. */
    struct vmpi_dtype *r12 = ok(vmpi_dtype_resized(f64, 0, 12, &dt), &dt, "resized(DOUBLE,0,12)");
    MPI_Datatype ptypes[] = { r12->handle, MPI_CHAR };
    static const MPI_Aint pdisp[] = { 0, 12 };
    d = (struct vmpi_dtype_blocks){ .count = 2, .bl = sbl, .adisp = pdisp, .types = ptypes };
    dt = ok(vmpi_dtype_indexed(&d, &dt), &dt, "struct of resized");
    check_bounds(dt, "struct{resized,char}", 9, 0, 12, 0, 13);

    /* resized without a gap stays contiguous. */
    struct vmpi_dtype *c3;
    c3 = ok(vmpi_dtype_contiguous(3, i32, &c3), &c3, "contiguous(3)");
    dt = ok(vmpi_dtype_resized(c3, 0, 12, &dt), &dt, "resized(contig, 0, 12)");
    CHECK(vmpi_dtype_is_contig(dt), "resized to its own extent is contiguous");

    /* Pairs in derived types. */
    dt = ok(vmpi_dtype_contiguous(4, T(MPI_FLOAT_INT), &dt), &dt, "contiguous FLOAT_INT");
    CHECK(vmpi_dtype_is_contig(dt), "contiguous(4, FLOAT_INT) is contiguous");
    CHECK_EQ(vmpi_dtype_elements(dt, 32), 8, "contiguous(4, FLOAT_INT) elements");
    dt = ok(vmpi_dtype_contiguous(2, T(MPI_DOUBLE_INT), &dt), &dt, "contiguous DOUBLE_INT");
    check_bounds(dt, "contiguous(2, DOUBLE_INT)", 24, 0, 32, 0, 28);
    CHECK(!vmpi_dtype_is_contig(dt), "contiguous(2, DOUBLE_INT) has holes");

    /* dup keeps the type map and the committed state, not the name. */
    dt->committed = true;
    snprintf(dt->name, sizeof dt->name, "pairs");
    struct vmpi_dtype *dup = ok(vmpi_dtype_dup(dt, &dup), &dup, "dup");
    check_bounds(dup, "dup", 24, 0, 32, 0, 28);
    CHECK(vmpi_dtype_committed(dup) && dup->name[0] == '\0' && dup->handle != dt->handle,
          "dup: committed, unnamed, new handle");
    struct vmpi_dtype *dupi = ok(vmpi_dtype_dup(i32, &dupi), &dupi, "dup of builtin");
    CHECK(!dupi->builtin && vmpi_dtype_is_contig(dupi) && dupi->basic == MPI_INT,
          "dup of MPI_INT is an ordinary contiguous int type");

    /* Overflowing bounds are refused, not wrapped. */
    CHECK_EQ(vmpi_dtype_hvector(4, 1, (MPI_Aint)1 << 62, i32, &dt), MPI_ERR_ARG,
             "vector beyond MPI_Aint");
    CHECK_EQ(vmpi_dtype_resized(i32, (MPI_Aint)1 << 62, (MPI_Aint)1 << 62, &dt), MPI_ERR_ARG,
             "resized beyond MPI_Aint");
}

/* ---- round trips --------------------------------------------------------
 * The reference is an explicit type map: one (displacement, size) entry per
 * basic element, built by straightforward loops, never merged. */

struct ref {
    size_t n;
    MPI_Aint disp[512];
    int size[512];
    MPI_Aint ext;
};

static void r_push(struct ref *r, MPI_Aint disp, int size)
{
    if (r->n == sizeof r->disp / sizeof r->disp[0]) {
        fprintf(stderr, "FAILED: reference type map too long\n");
        exit(1);
    }
    r->disp[r->n] = disp;
    r->size[r->n++] = size;
}

static void r_basic(struct ref *r, int size)
{
    r->n = 0;
    r_push(r, 0, size);
    r->ext = size;
}

/* count blocks of bl old elements at disp[i] bytes; ext given by the caller. */
static void r_blocks(struct ref *r, const struct ref *const old[], int count, const int bl[],
                     const MPI_Aint disp[], MPI_Aint ext)
{
    r->n = 0;
    for (int i = 0; i < count; i++)
        for (int j = 0; j < bl[i]; j++)
            for (size_t e = 0; e < old[i]->n; e++)
                r_push(r, disp[i] + j * old[i]->ext + old[i]->disp[e], old[i]->size[e]);
    r->ext = ext;
}

static void r_vector(struct ref *r, const struct ref *old, int count, int bl, MPI_Aint stride,
                     MPI_Aint ext)
{
    const struct ref *olds[64];
    int bls[64];
    MPI_Aint disps[64];
    for (int i = 0; i < count; i++) {
        olds[i] = old;
        bls[i] = bl;
        disps[i] = i * stride;
    }
    r_blocks(r, olds, count, bls, disps, ext);
}

static unsigned long long rng = 88172645463325252ull;
static unsigned rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng >> 11);
}

static void round_trip(const char *what, struct vmpi_dtype *dt, const struct ref *r,
                       MPI_Count count)
{
    CHECK_EQ(vmpi_dtype_extent(dt), r->ext, what);
    /* The user buffer covers every address the type map touches. */
    MPI_Aint lo = 0, hi = 0, psize = 0;
    for (size_t e = 0; e < r->n; e++) {
        for (MPI_Count k = 0; k < count; k += count - 1 > 0 ? count - 1 : 1) {
            MPI_Aint a = k * r->ext + r->disp[e];
            lo = a < lo ? a : lo;
            hi = a + r->size[e] > hi ? a + r->size[e] : hi;
        }
        psize += r->size[e];
    }
    CHECK_EQ(vmpi_dtype_size(dt), psize, what);
    size_t span = (size_t)(hi - lo), total = (size_t)(psize * count);
    unsigned char *src = malloc(span + 1), *want = malloc(total + 1), *got = malloc(total + 1);
    unsigned char *dst = malloc(span + 1), *dref = malloc(span + 1);
    for (size_t i = 0; i < span; i++)
        src[i] = (unsigned char)rnd();
    const unsigned char *base = src - lo; /* element 0's address */

    size_t p = 0;
    for (MPI_Count k = 0; k < count; k++)
        for (size_t e = 0; e < r->n; e++) {
            memcpy(want + p, base + k * r->ext + r->disp[e], (size_t)r->size[e]);
            p += (size_t)r->size[e];
        }

    memset(got, 0xee, total + 1);
    size_t n = vmpi_dtype_pack(got, base, count, dt, 0, total + 100);
    CHECK(n == total && memcmp(got, want, total) == 0 && got[total] == 0xee,
          "%s: whole pack differs (%zu of %zu bytes)", what, n, total);
    CHECK(vmpi_dtype_pack(got, base, count, dt, total, 10) == 0, "%s: pack past the end", what);

    /* Pipelined: the stream in random-size windows, small and large. */
    for (int rep = 0; rep < 20; rep++) {
        memset(got, 0xee, total + 1);
        for (size_t off = 0; off < total;) {
            size_t max = rep % 2 ? 1 + rnd() % 7 : 1 + rnd() % (total + 3);
            size_t w = vmpi_dtype_pack(got + off, base, count, dt, off, max);
            size_t expect = max < total - off ? max : total - off;
            if (w != expect) {
                CHECK(w == expect, "%s: window at %zu of %zu returned %zu", what, off, max, w);
                break;
            }
            off += w;
        }
        CHECK(memcmp(got, want, total) == 0 && got[total] == 0xee,
              "%s: windowed pack differs (rep %d)", what, rep);
    }

    /* Unpack fills exactly the type map's bytes and leaves the gaps alone. */
    memset(dref, 0x5a, span);
    unsigned char *dbase = dref - lo;
    p = 0;
    for (MPI_Count k = 0; k < count; k++)
        for (size_t e = 0; e < r->n; e++) {
            memcpy(dbase + k * r->ext + r->disp[e], want + p, (size_t)r->size[e]);
            p += (size_t)r->size[e];
        }
    for (int rep = 0; rep < 10; rep++) {
        memset(dst, 0x5a, span);
        for (size_t off = 0; off < total;) {
            size_t max = rep == 0 ? total : 1 + rnd() % (rep % 2 ? 5 : total);
            size_t w = vmpi_dtype_unpack(dst - lo, count, dt, off, want + off, max);
            if (w == 0) {
                CHECK(w > 0, "%s: unpack window at %zu returned 0", what, off);
                break;
            }
            off += w;
        }
        CHECK(memcmp(dst, dref, span) == 0, "%s: unpack differs (rep %d)", what, rep);
    }
    free(src);
    free(want);
    free(got);
    free(dst);
    free(dref);
}

static void test_round_trips(void)
{
    struct vmpi_dtype *dt, *st, *col;
    struct ref ri, rd, rc, rs, rsh, r, rst;
    r_basic(&ri, 4);
    r_basic(&rd, 8);
    r_basic(&rc, 1);
    r_basic(&rsh, 2);

    /* vector(5, 2, 3, INT) */
    dt = ok(vmpi_dtype_hvector(5, 2, 12, T(MPI_INT), &dt), &dt, "vector");
    r_vector(&r, &ri, 5, 2, 12, 56);
    round_trip("vector(5,2,3,INT) x3", dt, &r, 3);

    /* indexed({2,1,3}, {4,0,8}, DOUBLE): blocks out of address order. */
    static const int ibl[] = { 2, 1, 3 }, idisp[] = { 4, 0, 8 };
    struct vmpi_dtype_blocks d = { .count = 3, .bl = ibl, .idisp = idisp,
                                   .old = T(MPI_DOUBLE) };
    dt = ok(vmpi_dtype_indexed(&d, &dt), &dt, "indexed");
    {
        const struct ref *o[] = { &rd, &rd, &rd };
        const MPI_Aint b[] = { 32, 0, 64 };
        r_blocks(&r, o, 3, ibl, b, 88);
    }
    round_trip("indexed x2", dt, &r, 2);

    /* struct { char; double; short; } with gaps between the members. */
    static const int sbl[] = { 1, 1, 1 };
    static const MPI_Aint sdisp[] = { offsetof(struct gappy, c), offsetof(struct gappy, d),
                                      offsetof(struct gappy, s) };
    static const MPI_Datatype stypes[] = { MPI_CHAR, MPI_DOUBLE, MPI_SHORT };
    d = (struct vmpi_dtype_blocks){ .count = 3, .bl = sbl, .adisp = sdisp, .types = stypes };
    st = ok(vmpi_dtype_indexed(&d, &st), &st, "struct");
    {
        const struct ref *o[] = { &rc, &rd, &rsh };
        r_blocks(&rs, o, 3, sbl, sdisp, sizeof(struct gappy));
    }
    round_trip("struct gappy x4", st, &rs, 4);
    CHECK_EQ(vmpi_dtype_elements(st, 1), 1, "struct elements of 1 B");
    CHECK_EQ(vmpi_dtype_elements(st, 9), 2, "struct elements of 9 B");
    CHECK_EQ(vmpi_dtype_elements(st, 11), 3, "struct elements of 11 B");
    CHECK_EQ(vmpi_dtype_elements(st, 5), MPI_UNDEFINED, "struct elements of 5 B");
    CHECK_EQ(vmpi_dtype_elements(st, 20), 5, "struct elements of 20 B");
    CHECK_EQ(vmpi_dtype_elements(st, 22), 6, "struct elements of 22 B");
    CHECK_EQ(vmpi_dtype_elements(st, 0), 0, "struct elements of 0 B");

    /* A matrix column resized to one int: count 5 interleaves 5 columns. */
    dt = ok(vmpi_dtype_hvector(4, 1, 20, T(MPI_INT), &dt), &dt, "column");
    col = ok(vmpi_dtype_resized(dt, 0, 4, &col), &col, "resized column");
    r_vector(&r, &ri, 4, 1, 20, 4);
    round_trip("resized column x5", col, &r, 5);

    /* Nested: vector(3, 2, 4) of the gappy struct. */
    dt = ok(vmpi_dtype_hvector(3, 2, 4 * (MPI_Aint)sizeof(struct gappy), st, &dt), &dt,
            "vector of struct");
    r_vector(&rst, &rs, 3, 2, 4 * sizeof(struct gappy), 10 * sizeof(struct gappy));
    round_trip("vector of struct x2", dt, &rst, 2);

    /* Negative byte stride. */
    dt = ok(vmpi_dtype_hvector(4, 3, -20, T(MPI_SHORT), &dt), &dt, "negative hvector");
    r_vector(&r, &rsh, 4, 3, -20, 66);
    round_trip("hvector(4,3,-20,SHORT) x2", dt, &r, 2);

    /* Repeated runs: equal spacing merges (even across copies of a
     * repeated entry), anything else starts a new entry. */
    dt = ok(vmpi_dtype_hvector(2, 1, 8, T(MPI_INT), &dt), &dt, "vector(2,1,2)");
    col = ok(vmpi_dtype_resized(dt, 0, 16, &col), &col, "resized to 16");
    dt = ok(vmpi_dtype_contiguous(3, col, &dt), &dt, "contiguous of resized vector");
    CHECK(dt->nblk == 1 && dt->blk[0].rep == 6 && dt->blk[0].stride == 8,
          "contiguous(3, resized vector) is one entry of 6 runs");
    r_vector(&r, &ri, 6, 1, 8, 48);
    round_trip("contiguous(3, resized vector) x2", dt, &r, 2);
    static const int hbl3[] = { 1, 1, 1, 2, 1, 1 };
    static const MPI_Aint hd3[] = { 0, 8, 12, 40, 40, 40 };
    d = (struct vmpi_dtype_blocks){ .count = 6, .bl = hbl3, .adisp = hd3, .old = T(MPI_INT) };
    dt = ok(vmpi_dtype_indexed(&d, &dt), &dt, "hindexed with repeats");
    {
        const struct ref *o[] = { &ri, &ri, &ri, &ri, &ri, &ri };
        r_blocks(&r, o, 6, hbl3, hd3, 48);
    }
    round_trip("hindexed {0,8,12,40x3} x3", dt, &r, 3);
    /* A single int, then a repeated entry with a different spacing. */
    struct vmpi_dtype *v2 = ok(vmpi_dtype_hvector(2, 1, 8, T(MPI_INT), &v2), &v2, "vector");
    MPI_Datatype mix[] = { MPI_INT, v2->handle };
    static const int mbl[] = { 1, 1 };
    static const MPI_Aint mdisp[] = { 0, 4 };
    d = (struct vmpi_dtype_blocks){ .count = 2, .bl = mbl, .adisp = mdisp, .types = mix };
    dt = ok(vmpi_dtype_indexed(&d, &dt), &dt, "struct {int; vector}");
    {
        const struct ref *o[] = { &ri, &ri, &ri };
        const int one[] = { 1, 1, 1 };
        const MPI_Aint b[] = { 0, 4, 12 };
        r_blocks(&r, o, 3, one, b, 16);
    }
    round_trip("struct {int at 0; vector(2,1,2,INT) at 4} x2", dt, &r, 2);
    dt = ok(vmpi_dtype_hvector(3, 2, 100, col, &dt), &dt, "hvector of resized vector");
    {
        struct ref rv;
        r_vector(&rv, &ri, 2, 1, 8, 16);
        r_vector(&r, &rv, 3, 2, 100, 232);
    }
    round_trip("hvector(3,2,100, resized vector) x2", dt, &r, 2);

    /* A padded builtin pair and a contiguous type (one memcpy path). */
    {
        const struct ref *o[] = { &rd, &ri };
        const int one[] = { 1, 1 };
        const MPI_Aint b[] = { 0, 8 };
        r_blocks(&r, o, 2, one, b, 16);
    }
    round_trip("DOUBLE_INT x5", T(MPI_DOUBLE_INT), &r, 5);
    dt = ok(vmpi_dtype_contiguous(7, T(MPI_CHAR), &dt), &dt, "contiguous chars");
    r_vector(&r, &rc, 7, 1, 1, 7);
    round_trip("contiguous(7,CHAR) x9", dt, &r, 9);

    /* MPI_BOTTOM with absolute addresses as displacements. */
    static double xs[3] = { 1.5, 2.5, 3.5 };
    const int bl2[] = { 1, 1 };
    const MPI_Aint abs2[] = { (MPI_Aint)(uintptr_t)&xs[2], (MPI_Aint)(uintptr_t)&xs[0] };
    d = (struct vmpi_dtype_blocks){ .count = 2, .bl = bl2, .adisp = abs2, .old = T(MPI_DOUBLE) };
    dt = ok(vmpi_dtype_indexed(&d, &dt), &dt, "absolute hindexed");
    double out[2] = { 0, 0 };
    CHECK(vmpi_dtype_pack(out, MPI_BOTTOM, 1, dt, 0, sizeof out) == sizeof out &&
              out[0] == 3.5 && out[1] == 1.5,
          "pack from MPI_BOTTOM: %g %g", out[0], out[1]);
}

/* ---- reference counting --------------------------------------------------- */

static void test_refcount(void)
{
    struct vmpi_dtype *dt = ok(vmpi_dtype_hvector(2, 1, 8, T(MPI_INT), &dt), &dt, "vector");
    MPI_Datatype h = dt->handle;
    vmpi_dtype_ref(dt); /* a pending request */
    vmpi_dtype_free(dt);
    CHECK(vmpi_dtype_get(h) == NULL, "a freed handle is invalid");
    int in[3] = { 7, -1, 9 }, out[2] = { 0, 0 };
    CHECK(vmpi_dtype_pack(out, in, 1, dt, 0, sizeof out) == 8 && out[0] == 7 && out[1] == 9,
          "a freed type still works for its holders");
    vmpi_dtype_unref(dt); /* the request completes: memory released (ASan checks) */

    vmpi_dtype_ref(T(MPI_INT)); /* builtins ignore reference counting */
    vmpi_dtype_unref(T(MPI_INT));
    vmpi_dtype_unref(T(MPI_INT));
    CHECK(vmpi_dtype_get(MPI_INT) != NULL, "builtins are never freed");
}

int main(void)
{
    if (vmpi_dtype_init() != MPI_SUCCESS) {
        fprintf(stderr, "FAILED: vmpi_dtype_init\n");
        return 1;
    }
    test_builtins();
    test_constructors();
    test_round_trips();
    test_refcount();
    vmpi_dtype_finalize();
    if (failures) {
        fprintf(stderr, "u_dtype: %d check(s) failed\n", failures);
        return 1;
    }
    printf("u_dtype: all checks passed\n");
    return 0;
}
