/* Unit test of core/dtype_array.c, dtype_env.c and dtype_ext32.c: subarray
 * and darray type maps against hand-computed ones (every distribution, both
 * orders, partial last blocks), their bounds (lb 0, extent of the whole
 * array), envelopes kept through clones and frees, and external32 byte
 * images (big-endian, 4-byte long, IEEE quad long double, pairs, a struct
 * mixing types) with their round trips. Exits non-zero on any failure. */
#include "../../core/dtype_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "u_check.h"

#define CHECK_EQ(a, b, what)                                                  \
    CHECK((long)(a) == (long)(b), "%s: got %ld, want %ld", what, (long)(a), (long)(b))

static struct vmpi_dtype *T(MPI_Datatype h) { return vmpi_dtype_get(h); }

/* The type map of dt, a type of ints laid over int cells 0, 1, 2, ...:
 * packing a buffer whose cell i holds i lists the cells in type-map order. */
static void expect_map(const struct vmpi_dtype *dt, const int *want, int n, MPI_Aint extent,
                       const char *what)
{
    char buf[160];
    snprintf(buf, sizeof buf, "%s size", what);
    CHECK_EQ(dt->size, n * 4, buf);
    snprintf(buf, sizeof buf, "%s lb", what);
    CHECK_EQ(dt->lb, 0, buf);
    snprintf(buf, sizeof buf, "%s extent", what);
    CHECK_EQ(vmpi_dtype_ext(dt), extent, buf);
    int cells[256], got[64] = { 0 };
    for (int i = 0; i < 256; i++)
        cells[i] = i;
    vmpi_dtype_pack(got, cells, 1, dt, 0, sizeof got);
    for (int i = 0; i < n; i++) {
        snprintf(buf, sizeof buf, "%s: element %d", what, i);
        CHECK_EQ(got[i], want[i], buf);
    }
}

/* The type a constructor made in *dtp (read after the call). */
static struct vmpi_dtype *made(int rc, struct vmpi_dtype **dtp, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "FAILED: %s returned %d\n", what, rc);
        exit(1);
    }
    return *dtp;
}

static void test_subarray(void)
{
    struct vmpi_dtype *dt = NULL;
    int sizes[] = { 4, 5 }, sub[] = { 2, 3 }, starts[] = { 1, 2 };
    /* C order: rows 1-2 of 5 columns, columns 2-4. */
    made(vmpi_dtype_subarray(2, sizes, sub, starts, MPI_ORDER_C, T(MPI_INT), &dt), &dt, "C");
    static const int c[] = { 7, 8, 9, 12, 13, 14 };
    expect_map(dt, c, 6, 80, "subarray C");
    CHECK_EQ(dt->env->combiner, MPI_COMBINER_SUBARRAY, "subarray combiner");
    CHECK_EQ(dt->env->ni, 8, "subarray ints");
    CHECK_EQ(dt->env->ints[7], MPI_ORDER_C, "subarray order");
    CHECK(dt->env->types[0] == T(MPI_INT) && dt->env->inner, "subarray types");
    vmpi_dtype_free(dt);
    /* Fortran order: dimension 0 (4 long) varies fastest. */
    made(vmpi_dtype_subarray(2, sizes, sub, starts, MPI_ORDER_FORTRAN, T(MPI_INT), &dt), &dt,
         "Fortran");
    static const int f[] = { 9, 10, 13, 14, 17, 18 };
    expect_map(dt, f, 6, 80, "subarray Fortran");
    vmpi_dtype_free(dt);
    /* A 3-d C block and an empty one (a zero subsize). */
    int s3[] = { 2, 3, 4 }, u3[] = { 1, 2, 2 }, t3[] = { 1, 1, 1 };
    made(vmpi_dtype_subarray(3, s3, u3, t3, MPI_ORDER_C, T(MPI_INT), &dt), &dt, "3-d");
    static const int c3[] = { 17, 18, 21, 22 };
    expect_map(dt, c3, 4, 96, "subarray 3-d");
    vmpi_dtype_free(dt);
    u3[1] = 0;
    made(vmpi_dtype_subarray(3, s3, u3, t3, MPI_ORDER_C, T(MPI_INT), &dt), &dt, "empty");
    expect_map(dt, NULL, 0, 96, "subarray empty");
    vmpi_dtype_free(dt);
}

static struct vmpi_dtype *darray(int size, int rank, int nd, const int *g, const int *dist,
                                 const int *darg, const int *ps, int order)
{
    struct vmpi_darray d = { size, rank, nd, g, dist, darg, ps, order };
    struct vmpi_dtype *dt = NULL;
    return made(vmpi_dtype_darray(&d, T(MPI_INT), &dt), &dt, "darray");
}

static void test_darray(void)
{
    const int B = MPI_DISTRIBUTE_BLOCK, C = MPI_DISTRIBUTE_CYCLIC, N = MPI_DISTRIBUTE_NONE,
              D = MPI_DISTRIBUTE_DFLT_DARG;
    /* 4 x 6, C order, 2 x 2 grid, rank 3 at (1, 1): block rows 2-3,
     * cyclic(1) columns 1, 3, 5. */
    int g[] = { 4, 6 }, dist[] = { B, C }, dargs[] = { D, D }, ps[] = { 2, 2 };
    struct vmpi_dtype *dt = darray(4, 3, 2, g, dist, dargs, ps, MPI_ORDER_C);
    static const int m1[] = { 13, 15, 17, 19, 21, 23 };
    expect_map(dt, m1, 6, 96, "darray block x cyclic");
    CHECK_EQ(dt->env->combiner, MPI_COMBINER_DARRAY, "darray combiner");
    CHECK_EQ(dt->env->ni, 4 * 2 + 4, "darray ints");
    vmpi_dtype_free(dt);
    /* Block of 7 over 2: rank 1 gets the short last block 4-6. */
    int g1[] = { 7 }, b1[] = { B }, d1[] = { D }, p1[] = { 2 };
    dt = darray(2, 1, 1, g1, b1, d1, p1, MPI_ORDER_FORTRAN);
    static const int m2[] = { 4, 5, 6 };
    expect_map(dt, m2, 3, 28, "darray short block");
    vmpi_dtype_free(dt);
    /* cyclic(2) of 7 over 2: rank 1 has 2-3 and the cut block 6. */
    int c1[] = { C }, k2[] = { 2 };
    dt = darray(2, 1, 1, g1, c1, k2, p1, MPI_ORDER_C);
    static const int m3[] = { 2, 3, 6 };
    expect_map(dt, m3, 3, 28, "darray cyclic(2)");
    vmpi_dtype_free(dt);
    /* Fortran 3 x 2, dimension 0 not distributed, dimension 1 cyclic over
     * 2: rank 1 has column 1 (cells 3-5). */
    int g2[] = { 3, 2 }, n2[] = { N, C }, dd[] = { D, D }, p2[] = { 1, 2 };
    dt = darray(2, 1, 2, g2, n2, dd, p2, MPI_ORDER_FORTRAN);
    static const int m4[] = { 3, 4, 5 };
    expect_map(dt, m4, 3, 24, "darray none x cyclic");
    vmpi_dtype_free(dt);
    /* A process with nothing: block(3) of 4 over 3, rank 2. */
    int g3[] = { 4 }, b3[] = { B }, k3[] = { 3 }, p3[] = { 3 };
    dt = darray(3, 2, 1, g3, b3, k3, p3, MPI_ORDER_C);
    expect_map(dt, NULL, 0, 16, "darray empty part");
    vmpi_dtype_free(dt);
}

/* Envelopes survive the user freeing the inner type, and clones share them. */
static void test_envelope_refs(void)
{
    struct vmpi_dtype *v = NULL, *c = NULL, *k = NULL;
    made(vmpi_dtype_hvector(3, 1, 8, T(MPI_INT), &v), &v, "vector");
    int three = 3, one = 1;
    MPI_Aint st = 8;
    struct vmpi_dtype_args a = { .combiner = MPI_COMBINER_HVECTOR, .nseg = 2,
                                 .seg = { { &three, 1 }, { &one, 1 } }, .aints = &st, .na = 1,
                                 .old = T(MPI_INT), .nt = 1 };
    made(vmpi_dtype_record(v, &a), &v, "record vector");
    made(vmpi_dtype_contiguous(2, v, &c), &c, "contiguous");
    struct vmpi_dtype_args ca = { .combiner = MPI_COMBINER_CONTIGUOUS, .nseg = 1,
                                  .seg = { { &three, 1 } }, .old = v, .nt = 1 };
    made(vmpi_dtype_record(c, &ca), &c, "record contiguous");
    CHECK_EQ(v->refcount, 2, "inner type referenced by the envelope");
    vmpi_dtype_free(v); /* the user frees it: the envelope keeps it */
    CHECK_EQ(c->env->types[0]->env->aints[0], 8, "freed inner type still readable");
    made(vmpi_dtype_clone(c, &k), &k, "clone");
    CHECK(k->env == c->env && k->handle != c->handle, "clone shares the envelope");
    CHECK_EQ(c->env->refs, 2, "envelope shared");
    vmpi_dtype_free(c);
    CHECK_EQ(k->env->types[0]->env->combiner, MPI_COMBINER_HVECTOR, "clone's inner type");
    vmpi_dtype_free(k);
}

static void expect_bytes(const unsigned char *got, const unsigned char *want, size_t n,
                         const char *what)
{
    for (size_t i = 0; i < n; i++)
        CHECK(got[i] == want[i], "%s: byte %zu is %02x, want %02x", what, i, got[i], want[i]);
}

static void test_external32(void)
{
    unsigned char out[64];
    /* ints and longs: big-endian, long in 4 bytes (sign kept on the way back). */
    int iv[2] = { 1, -2 };
    static const unsigned char ie[] = { 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe };
    CHECK_EQ(vmpi_dtype_ext32_size(T(MPI_INT)), 4, "int size");
    vmpi_dtype_ext32_pack(out, iv, 2, T(MPI_INT));
    expect_bytes(out, ie, 8, "int image");
    long lv[2] = { -2, 0x12345678 }, lb[2] = { 0, 0 };
    static const unsigned char le[] = { 0xff, 0xff, 0xff, 0xfe, 0x12, 0x34, 0x56, 0x78 };
    CHECK_EQ(vmpi_dtype_ext32_size(T(MPI_LONG)), 4, "long size");
    vmpi_dtype_ext32_pack(out, lv, 2, T(MPI_LONG));
    expect_bytes(out, le, 8, "long image");
    vmpi_dtype_ext32_unpack(lb, 2, T(MPI_LONG), out);
    CHECK(lb[0] == -2 && lb[1] == 0x12345678, "long round trip %ld %ld", lb[0], lb[1]);
    /* double 1.0 and long double -2.5 (IEEE quad: c000 4000 0...). */
    double d = 1.0, db = 0;
    static const unsigned char de[] = { 0x3f, 0xf0, 0, 0, 0, 0, 0, 0 };
    vmpi_dtype_ext32_pack(out, &d, 1, T(MPI_DOUBLE));
    expect_bytes(out, de, 8, "double image");
    vmpi_dtype_ext32_unpack(&db, 1, T(MPI_DOUBLE), out);
    CHECK(db == 1.0, "double round trip");
    long double ld = -2.5L, ldb = 0;
    static const unsigned char qe[16] = { 0xc0, 0x00, 0x40 };
    vmpi_dtype_ext32_pack(out, &ld, 1, T(MPI_LONG_DOUBLE));
    expect_bytes(out, qe, 16, "long double image");
    vmpi_dtype_ext32_unpack(&ldb, 1, T(MPI_LONG_DOUBLE), out);
    CHECK(ldb == -2.5L, "long double round trip");
    /* A padded pair: value then index, no padding. */
    struct vmpi_minloc_si si = { 7, 9 }, sb = { 0, 0 };
    static const unsigned char se[] = { 0, 7, 0, 0, 0, 9 };
    CHECK_EQ(vmpi_dtype_ext32_size(T(MPI_SHORT_INT)), 6, "short_int size");
    vmpi_dtype_ext32_pack(out, &si, 1, T(MPI_SHORT_INT));
    expect_bytes(out, se, 6, "short_int image");
    vmpi_dtype_ext32_unpack(&sb, 1, T(MPI_SHORT_INT), out);
    CHECK(sb.v == 7 && sb.i == 9, "short_int round trip");
    /* struct { char c; long l; float f[2]; } (walked through its envelope) x 2. */
    struct s { char c; long l; float f[2]; } sv[2] = { { 'a', -1, { 1.0f, 2.0f } },
                                                      { 'b', 256, { -1.0f, 0.5f } } }, sr[2];
    int bl[] = { 1, 1, 2 };
    MPI_Aint disp[] = { offsetof(struct s, c), offsetof(struct s, l), offsetof(struct s, f) };
    MPI_Datatype ty[] = { MPI_CHAR, MPI_LONG, MPI_FLOAT };
    struct vmpi_dtype_blocks b = { .count = 3, .bl = bl, .adisp = disp, .types = ty };
    struct vmpi_dtype *st = NULL;
    made(vmpi_dtype_indexed(&b, &st), &st, "struct");
    int three = 3;
    struct vmpi_dtype_args a = { .combiner = MPI_COMBINER_STRUCT, .nseg = 2,
                                 .seg = { { &three, 1 }, { bl, 3 } }, .aints = disp, .na = 3,
                                 .types = ty, .nt = 3 };
    made(vmpi_dtype_record(st, &a), &st, "record struct");
    CHECK_EQ(vmpi_dtype_ext32_size(st), 13, "struct size");
    static const unsigned char ste[] = { 'a', 0xff, 0xff, 0xff, 0xff, 0x3f, 0x80, 0, 0,
                                         0x40, 0, 0, 0, 'b', 0, 0, 1, 0, 0xbf, 0x80, 0, 0,
                                         0x3f, 0, 0, 0 };
    vmpi_dtype_ext32_pack(out, sv, 2, st);
    expect_bytes(out, ste, 26, "struct image");
    memset(sr, 0, sizeof sr);
    vmpi_dtype_ext32_unpack(sr, 2, st, out);
    CHECK(sr[0].c == 'a' && sr[0].l == -1 && sr[0].f[1] == 2.0f && sr[1].c == 'b' &&
              sr[1].l == 256 && sr[1].f[0] == -1.0f && sr[1].f[1] == 0.5f,
          "struct round trip");
    vmpi_dtype_free(st);
}

int main(void)
{
    if (vmpi_dtype_init() != MPI_SUCCESS) {
        fprintf(stderr, "FAILED: vmpi_dtype_init\n");
        return 1;
    }
    test_subarray();
    test_darray();
    test_envelope_refs();
    test_external32();
    vmpi_dtype_finalize();
    if (failures) {
        fprintf(stderr, "u_dtype_env: %d check(s) failed\n", failures);
        return 1;
    }
    printf("u_dtype_env: all checks passed\n");
    return 0;
}
