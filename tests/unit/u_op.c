/* Unit test of core/op.c: every predefined op on the types it is defined
 * for, against plain reference loops; MINLOC/MAXLOC with ties; derived
 * types (block walk, contiguous, and pairs split across blocks); REPLACE and
 * NO_OP; unaligned buffers; which op/type pairs vmpi_op_check refuses; and
 * user operations (order of operands, what the function is called with, a
 * freed op that a pending operation still holds).
 * Exits non-zero on any failure. */
#include "../../core/dtype_impl.h"

#include <complex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "u_check.h"

static struct vmpi_dtype *T(MPI_Datatype h)
{
    struct vmpi_dtype *dt = vmpi_dtype_get(h);
    if (!dt) {
        fprintf(stderr, "FAILED: no datatype for handle 0x%x\n", (unsigned)h);
        exit(1);
    }
    return dt;
}

/* The type a constructor made in *dtp (read after the call, hence the pointer). */
static struct vmpi_dtype *ok(int rc, struct vmpi_dtype **dtp, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "FAILED: constructing %s returned %d\n", what, rc);
        exit(1);
    }
    return *dtp;
}

static unsigned long long rng = 0x9e3779b97f4a7c15ull;
static unsigned long long rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static const char *op_name(MPI_Op op)
{
    static const char *const names[] = { "?", "MAX", "MIN", "SUM", "PROD", "LAND", "BAND",
                                         "LOR", "BOR", "LXOR", "BXOR", "MINLOC", "MAXLOC",
                                         "REPLACE", "NO_OP" };
    unsigned i = (unsigned)op & 0xffu;
    return i < sizeof names / sizeof names[0] ? names[i] : "?";
}

enum { N = 1003 }; /* odd: exercises the scalar tail after vector loops */

static const MPI_Op int_ops[] = { MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND,
                                  MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR };
#define BIT(op) (1u << ((unsigned)(op) & 0xffu))
#define ARITH (BIT(MPI_MAX) | BIT(MPI_MIN) | BIT(MPI_SUM) | BIT(MPI_PROD))
#define LOGIC (BIT(MPI_LAND) | BIT(MPI_LOR) | BIT(MPI_LXOR))
#define BITS (BIT(MPI_BAND) | BIT(MPI_BOR) | BIT(MPI_BXOR))

/* One test per integer type: ops in `allowed` must pass vmpi_op_check and
 * match the reference; the others must be refused. Signed values stay small
 * so the reference's own arithmetic cannot overflow; unsigned ones use the
 * full range and wrap. A fifth of the values are 0 for the logical ops. */
#define INT_TEST(fn, C, MT, SIGNED, allowed)                                          \
    static void fn(void)                                                              \
    {                                                                                 \
        static C in[N], io[N], want[N];                                               \
        for (size_t o = 0; o < sizeof int_ops / sizeof int_ops[0]; o++) {             \
            MPI_Op op = int_ops[o];                                                   \
            int rc = vmpi_op_check(op, T(MT));                                        \
            if (!((allowed) & BIT(op))) {                                             \
                CHECK(rc == MPI_ERR_OP, "%s on %s must be refused", op_name(op), #MT); \
                continue;                                                             \
            }                                                                         \
            CHECK(rc == MPI_SUCCESS, "%s on %s must be allowed", op_name(op), #MT);  \
            for (int i = 0; i < N; i++) {                                             \
                in[i] = rnd() % 5 == 0 ? 0 : SIGNED ? (C)((int)(rnd() % 23) - 11) : (C)rnd(); \
                io[i] = rnd() % 5 == 0 ? 0 : SIGNED ? (C)((int)(rnd() % 23) - 11) : (C)rnd(); \
                C a = in[i], b = io[i];                                               \
                switch ((unsigned)op & 0xffu) {                                       \
                case 1: want[i] = a > b ? a : b; break;                               \
                case 2: want[i] = a < b ? a : b; break;                               \
                case 3: want[i] = (C)((unsigned long long)a + (unsigned long long)b); break; \
                case 4: want[i] = (C)((unsigned long long)a * (unsigned long long)b); break; \
                case 5: want[i] = (C)(a != 0 && b != 0); break;                       \
                case 6: want[i] = (C)(a & b); break;                                  \
                case 7: want[i] = (C)(a != 0 || b != 0); break;                       \
                case 8: want[i] = (C)(a | b); break;                                  \
                case 9: want[i] = (C)((a != 0) != (b != 0)); break;                   \
                case 10: want[i] = (C)(a ^ b); break;                                 \
                }                                                                     \
            }                                                                         \
            vmpi_op_apply(op, in, io, N, T(MT));                                      \
            CHECK(memcmp(io, want, sizeof want) == 0, "%s on %s differs", op_name(op), #MT); \
        }                                                                             \
    }

INT_TEST(t_i8, int8_t, MPI_INT8_T, 1, ARITH | LOGIC | BITS)
INT_TEST(t_u8, uint8_t, MPI_UINT8_T, 0, ARITH | LOGIC | BITS)
INT_TEST(t_schar, signed char, MPI_SIGNED_CHAR, 1, ARITH | LOGIC | BITS)
INT_TEST(t_uchar, unsigned char, MPI_UNSIGNED_CHAR, 0, ARITH | LOGIC | BITS)
INT_TEST(t_char, char, MPI_CHAR, 1, ARITH | LOGIC | BITS)
INT_TEST(t_i16, short, MPI_SHORT, 1, ARITH | LOGIC | BITS)
INT_TEST(t_u16, uint16_t, MPI_UINT16_T, 0, ARITH | LOGIC | BITS)
INT_TEST(t_int, int, MPI_INT, 1, ARITH | LOGIC | BITS)
INT_TEST(t_uint, unsigned, MPI_UNSIGNED, 0, ARITH | LOGIC | BITS)
INT_TEST(t_long, long, MPI_LONG, 1, ARITH | LOGIC | BITS)
INT_TEST(t_ulong, unsigned long, MPI_UNSIGNED_LONG, 0, ARITH | LOGIC | BITS)
INT_TEST(t_ll, long long, MPI_LONG_LONG, 1, ARITH | LOGIC | BITS)
INT_TEST(t_ull, unsigned long long, MPI_UNSIGNED_LONG_LONG, 0, ARITH | LOGIC | BITS)
INT_TEST(t_u64, uint64_t, MPI_UINT64_T, 0, ARITH | LOGIC | BITS)
INT_TEST(t_aint, MPI_Aint, MPI_AINT, 1, ARITH | BITS)
INT_TEST(t_count, MPI_Count, MPI_COUNT, 1, ARITH | BITS)
INT_TEST(t_byte, unsigned char, MPI_BYTE, 0, BITS)
INT_TEST(t_bool, unsigned char, MPI_C_BOOL, 0, LOGIC)
/* The Fortran integers take no logical ops; LOGICAL only those. */
INT_TEST(t_integer, int, MPI_INTEGER, 1, ARITH | BITS)
INT_TEST(t_integer1, int8_t, MPI_INTEGER1, 1, ARITH | BITS)
INT_TEST(t_integer8, int64_t, MPI_INTEGER8, 1, ARITH | BITS)
INT_TEST(t_logical, int, MPI_LOGICAL, 0, LOGIC)
INT_TEST(t_cxxbool, unsigned char, MPI_CXX_BOOL, 0, LOGIC)
INT_TEST(t_character, char, MPI_CHARACTER, 0, 0)

#define FLOAT_TEST(fn, C, MT)                                                         \
    static void fn(void)                                                              \
    {                                                                                 \
        static C in[N], io[N], want[N];                                               \
        static const MPI_Op ops[] = { MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD };          \
        for (size_t o = 0; o < 4; o++) {                                              \
            MPI_Op op = ops[o];                                                       \
            CHECK(vmpi_op_check(op, T(MT)) == MPI_SUCCESS, "%s on %s", op_name(op), #MT); \
            for (int i = 0; i < N; i++) {                                             \
                in[i] = (C)((double)(rnd() % 2001) / 8 - 125);                        \
                io[i] = (C)((double)(rnd() % 2001) / 8 - 125);                        \
                C a = in[i], b = io[i];                                               \
                want[i] = o == 0 ? (a > b ? a : b) : o == 1 ? (a < b ? a : b)         \
                        : o == 2 ? a + b : a * b;                                     \
            }                                                                         \
            vmpi_op_apply(op, in, io, N, T(MT));                                      \
            int bad = 0;                                                              \
            for (int i = 0; i < N; i++)                                               \
                bad += io[i] != want[i];                                              \
            CHECK(bad == 0, "%s on %s: %d elements differ", op_name(op), #MT, bad);   \
        }                                                                             \
        for (size_t o = 0; o < sizeof int_ops / sizeof int_ops[0]; o++)               \
            if (!(ARITH & BIT(int_ops[o])))                                           \
                CHECK(vmpi_op_check(int_ops[o], T(MT)) == MPI_ERR_OP,                 \
                      "%s on %s must be refused", op_name(int_ops[o]), #MT);          \
    }

FLOAT_TEST(t_float, float, MPI_FLOAT)
FLOAT_TEST(t_double, double, MPI_DOUBLE)
FLOAT_TEST(t_ldouble, long double, MPI_LONG_DOUBLE)
FLOAT_TEST(t_real, float, MPI_REAL)
FLOAT_TEST(t_dprec, double, MPI_DOUBLE_PRECISION)
FLOAT_TEST(t_real16, vmpi_real16, MPI_REAL16)

#define COMPLEX_TEST(fn, C, MT)                                                       \
    static void fn(void)                                                              \
    {                                                                                 \
        static C in[N], io[N], want[N];                                               \
        for (int o = 0; o < 2; o++) {                                                 \
            MPI_Op op = o ? MPI_PROD : MPI_SUM;                                       \
            CHECK(vmpi_op_check(op, T(MT)) == MPI_SUCCESS, "%s on %s", op_name(op), #MT); \
            for (int i = 0; i < N; i++) {                                             \
                in[i] = (C)((double)(rnd() % 64) / 4 + (double)(rnd() % 64) / 4 * I);  \
                io[i] = (C)((double)(rnd() % 64) / 4 + (double)(rnd() % 64) / 4 * I);  \
                want[i] = o ? in[i] * io[i] : in[i] + io[i];                          \
            }                                                                         \
            vmpi_op_apply(op, in, io, N, T(MT));                                      \
            int bad = 0;                                                              \
            for (int i = 0; i < N; i++)                                               \
                bad += io[i] != want[i];                                              \
            CHECK(bad == 0, "%s on %s: %d elements differ", op_name(op), #MT, bad);   \
        }                                                                             \
        CHECK(vmpi_op_check(MPI_MAX, T(MT)) == MPI_ERR_OP, "MAX on %s", #MT);         \
        CHECK(vmpi_op_check(MPI_LAND, T(MT)) == MPI_ERR_OP, "LAND on %s", #MT);       \
    }

COMPLEX_TEST(t_cfloat, float _Complex, MPI_C_FLOAT_COMPLEX)
COMPLEX_TEST(t_cdouble, double _Complex, MPI_C_DOUBLE_COMPLEX)
COMPLEX_TEST(t_cldouble, long double _Complex, MPI_C_LONG_DOUBLE_COMPLEX)
COMPLEX_TEST(t_complex, float _Complex, MPI_COMPLEX)
COMPLEX_TEST(t_dcomplex, double _Complex, MPI_DOUBLE_COMPLEX)
COMPLEX_TEST(t_complex32, vmpi_complex32, MPI_COMPLEX32)
COMPLEX_TEST(t_cxxcomplex, double _Complex, MPI_CXX_DOUBLE_COMPLEX)

/* MINLOC/MAXLOC over values 0..2 so most pairs tie; the smaller index must
 * win a tie, and a winning value carries its own index. */
#define PAIR_TEST(fn, S, V, MT)                                                       \
    static void fn(void)                                                              \
    {                                                                                 \
        static struct S in[N], io[N], want[N];                                        \
        for (int o = 0; o < 2; o++) {                                                 \
            MPI_Op op = o ? MPI_MAXLOC : MPI_MINLOC;                                  \
            CHECK(vmpi_op_check(op, T(MT)) == MPI_SUCCESS, "%s on %s", op_name(op), #MT); \
            memset(in, 0, sizeof in);                                                 \
            memset(io, 0, sizeof io);                                                 \
            int ties = 0;                                                             \
            for (int i = 0; i < N; i++) {                                             \
                in[i].v = (V)(rnd() % 3);                                             \
                in[i].i = (int)(rnd() % 100);                                         \
                io[i].v = (V)(rnd() % 3);                                             \
                io[i].i = (int)(rnd() % 100);                                         \
                bool in_wins = o ? in[i].v > io[i].v : in[i].v < io[i].v;             \
                ties += in[i].v == io[i].v;                                           \
                want[i] = in_wins ? in[i] : io[i];                                    \
                if (in[i].v == io[i].v)                                               \
                    want[i].i = in[i].i < io[i].i ? in[i].i : io[i].i;                \
            }                                                                         \
            vmpi_op_apply(op, in, io, N, T(MT));                                      \
            int bad = 0;                                                              \
            for (int i = 0; i < N; i++)                                               \
                bad += io[i].v != want[i].v || io[i].i != want[i].i;                  \
            CHECK(bad == 0 && ties > N / 5, "%s on %s: %d pairs differ (%d ties)",    \
                  op_name(op), #MT, bad, ties);                                       \
        }                                                                             \
        CHECK(vmpi_op_check(MPI_MAX, T(MT)) == MPI_ERR_OP, "MAX on %s", #MT);         \
        CHECK(vmpi_op_check(MPI_SUM, T(MT)) == MPI_ERR_OP, "SUM on %s", #MT);         \
    }

PAIR_TEST(t_fi, vmpi_minloc_fi, float, MPI_FLOAT_INT)
PAIR_TEST(t_di, vmpi_minloc_di, double, MPI_DOUBLE_INT)
PAIR_TEST(t_li, vmpi_minloc_li, long, MPI_LONG_INT)
PAIR_TEST(t_si, vmpi_minloc_si, short, MPI_SHORT_INT)
PAIR_TEST(t_2i, vmpi_minloc_2i, int, MPI_2INT)
PAIR_TEST(t_ldi, vmpi_minloc_ldi, long double, MPI_LONG_DOUBLE_INT)
PAIR_TEST(t_2integer, vmpi_minloc_2i, int, MPI_2INTEGER)
PAIR_TEST(t_2real, vmpi_minloc_2r, float, MPI_2REAL) /* the index is a REAL */
PAIR_TEST(t_2dprec, vmpi_minloc_2d, double, MPI_2DOUBLE_PRECISION)

/* ---- derived types --------------------------------------------------------- */

static void test_derived(void)
{
    struct vmpi_dtype *dt;

    /* SUM over vector(4, 1, 2, INT) x3: extent 7 ints; gaps stay untouched. */
    dt = ok(vmpi_dtype_hvector(4, 1, 8, T(MPI_INT), &dt), &dt, "vector");
    CHECK(vmpi_op_check(MPI_SUM, dt) == MPI_SUCCESS, "SUM on vector of INT");
    int in[21], io[21], want[21];
    for (int i = 0; i < 21; i++) {
        in[i] = i + 100;
        io[i] = want[i] = -i;
    }
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 4; j++)
            want[7 * k + 2 * j] += in[7 * k + 2 * j];
    vmpi_op_apply(MPI_SUM, in, io, 3, dt);
    CHECK(memcmp(io, want, sizeof io) == 0, "SUM on vector of INT");

    /* A contiguous derived type reduces in one call. */
    dt = ok(vmpi_dtype_contiguous(3, T(MPI_DOUBLE), &dt), &dt, "contiguous");
    double din[6] = { 1, 2, 3, 4, 5, 6 }, dio[6] = { 6, 5, 4, 3, 2, 1 };
    vmpi_op_apply(MPI_PROD, din, dio, 2, dt);
    CHECK(dio[0] == 6 && dio[1] == 10 && dio[2] == 12 && dio[5] == 6, "PROD on contiguous");

    /* MAXLOC over a strided DOUBLE_INT vector: more pairs than one chunk of
     * the packed path holds. */
    enum { NP = 1200 };
    static struct vmpi_minloc_di pin[2 * NP], pio[2 * NP], pwant[2 * NP];
    dt = ok(vmpi_dtype_hvector(NP / 2, 1, 2 * sizeof(struct vmpi_minloc_di), T(MPI_DOUBLE_INT),
                               &dt), &dt, "vector of DOUBLE_INT");
    CHECK(vmpi_op_check(MPI_MAXLOC, dt) == MPI_SUCCESS, "MAXLOC on vector of DOUBLE_INT");
    for (int i = 0; i < 2 * NP; i++) {
        pin[i] = (struct vmpi_minloc_di){ (double)(rnd() % 3), (int)(rnd() % 50) };
        pio[i] = pwant[i] = (struct vmpi_minloc_di){ (double)(rnd() % 3), (int)(rnd() % 50) };
    }
    MPI_Aint ext = vmpi_dtype_extent(dt) / (MPI_Aint)sizeof(struct vmpi_minloc_di);
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < NP / 2; j++) {
            struct vmpi_minloc_di *a = &pin[k * ext + 2 * j], *b = &pwant[k * ext + 2 * j];
            if (a->v > b->v)
                *b = *a;
            else if (a->v == b->v && a->i < b->i)
                b->i = a->i;
        }
    vmpi_op_apply(MPI_MAXLOC, pin, pio, 2, dt);
    int bad = 0;
    for (int i = 0; i < 2 * NP; i++)
        bad += pio[i].v != pwant[i].v || pio[i].i != pwant[i].i;
    CHECK(bad == 0, "MAXLOC on vector of DOUBLE_INT: %d pairs differ", bad);

    /* MINLOC on contiguous SHORT_INT (packed value and index are adjacent,
     * unlike the struct) and on contiguous 2INT (one contiguous run). */
    static const MPI_Datatype pts[] = { MPI_SHORT_INT, MPI_2INT };
    for (int t = 0; t < 2; t++) {
        dt = ok(vmpi_dtype_contiguous(3, T(pts[t]), &dt), &dt, "contiguous pairs");
        struct vmpi_minloc_si sin[12], sio[12], swant[12];
        struct vmpi_minloc_2i tin[12], tio[12], twant[12];
        memset(sin, 0, sizeof sin);
        memset(sio, 0, sizeof sio);
        for (int i = 0; i < 12; i++) {
            sin[i].v = (short)(rnd() % 2);
            sin[i].i = tin[i].i = (int)(rnd() % 9);
            sio[i].v = (short)(rnd() % 2);
            sio[i].i = tio[i].i = (int)(rnd() % 9);
            tin[i].v = sin[i].v;
            tio[i].v = sio[i].v;
            swant[i] = sin[i].v < sio[i].v ? sin[i] : sio[i];
            if (sin[i].v == sio[i].v)
                swant[i].i = sin[i].i < sio[i].i ? sin[i].i : sio[i].i;
            twant[i] = (struct vmpi_minloc_2i){ swant[i].v, swant[i].i };
        }
        if (t == 0)
            vmpi_op_apply(MPI_MINLOC, sin, sio, 4, dt);
        else
            vmpi_op_apply(MPI_MINLOC, tin, tio, 4, dt);
        bad = 0;
        for (int i = 0; i < 12; i++)
            bad += t == 0 ? sio[i].v != swant[i].v || sio[i].i != swant[i].i
                          : tio[i].v != twant[i].v || tio[i].i != twant[i].i;
        CHECK(bad == 0, "MINLOC on contiguous(3, %s): %d pairs differ",
              t ? "2INT" : "SHORT_INT", bad);
    }
}

/* REPLACE copies exactly the data (never padding or gaps); NO_OP nothing. */
struct gappy { char c; double d; short s; };

static void test_replace_noop(void)
{
    static const int bl[] = { 1, 1, 1 };
    static const MPI_Aint disp[] = { offsetof(struct gappy, c), offsetof(struct gappy, d),
                                     offsetof(struct gappy, s) };
    static const MPI_Datatype types[] = { MPI_CHAR, MPI_DOUBLE, MPI_SHORT };
    struct vmpi_dtype_blocks d = { .count = 3, .bl = bl, .adisp = disp, .types = types };
    struct vmpi_dtype *st = ok(vmpi_dtype_indexed(&d, &st), &st, "struct");
    CHECK(vmpi_op_check(MPI_REPLACE, st) == MPI_SUCCESS, "REPLACE on a mixed struct");
    CHECK(vmpi_op_check(MPI_NO_OP, st) == MPI_SUCCESS, "NO_OP on a mixed struct");
    CHECK(vmpi_op_check(MPI_SUM, st) == MPI_ERR_OP, "SUM on a mixed struct");

    unsigned char in[3 * sizeof(struct gappy)], io[sizeof in], want[sizeof in];
    for (size_t i = 0; i < sizeof in; i++) {
        in[i] = (unsigned char)rnd();
        io[i] = want[i] = (unsigned char)rnd();
    }
    for (int k = 0; k < 3; k++)
        for (int m = 0; m < 3; m++) {
            size_t at = k * sizeof(struct gappy) + (size_t)disp[m];
            size_t len = m == 0 ? 1 : m == 1 ? 8 : 2;
            memcpy(want + at, in + at, len);
        }
    vmpi_op_apply(MPI_NO_OP, in, io, 3, st);
    CHECK(memcmp(io, want, sizeof io) != 0, "NO_OP changed nothing (sanity)");
    unsigned char before[sizeof io];
    memcpy(before, io, sizeof io);
    vmpi_op_apply(MPI_NO_OP, in, io, 3, st);
    CHECK(memcmp(io, before, sizeof io) == 0, "NO_OP leaves inout alone");
    vmpi_op_apply(MPI_REPLACE, in, io, 3, st);
    CHECK(memcmp(io, want, sizeof io) == 0, "REPLACE copies data only");

    /* On a builtin with padding too, and on a plain contiguous type. */
    struct vmpi_minloc_di pin[4], pio[4];
    memset(pin, 0x11, sizeof pin);
    memset(pio, 0x22, sizeof pio);
    vmpi_op_apply(MPI_REPLACE, pin, pio, 4, T(MPI_DOUBLE_INT));
    const unsigned char *raw = (const unsigned char *)pio;
    int bad = 0;
    for (int k = 0; k < 4; k++)
        for (size_t b = 0; b < sizeof pio[0]; b++)
            bad += raw[k * sizeof pio[0] + b] != (b < 12 ? 0x11 : 0x22);
    CHECK(bad == 0, "REPLACE on DOUBLE_INT: %d bytes wrong (data copied, padding kept)", bad);
    int a[5] = { 1, 2, 3, 4, 5 }, b[5] = { 0 };
    vmpi_op_apply(MPI_REPLACE, a, b, 5, T(MPI_INT));
    CHECK(memcmp(a, b, sizeof a) == 0, "REPLACE on INT");
    CHECK(vmpi_op_check(MPI_REPLACE, T(MPI_WCHAR)) == MPI_SUCCESS, "REPLACE on WCHAR");
}

/* Kernels must not assume alignment: doubles at an odd address. */
static void test_unaligned(void)
{
    enum { M = 101 };
    unsigned char bin[M * sizeof(double) + 1], bio[sizeof bin];
    double want[M];
    for (int i = 0; i < M; i++) {
        double a = i * 0.5, b = i * 2.0;
        memcpy(bin + 1 + i * sizeof(double), &a, sizeof a);
        memcpy(bio + 1 + i * sizeof(double), &b, sizeof b);
        want[i] = a + b;
    }
    vmpi_op_apply(MPI_SUM, bin + 1, bio + 1, M, T(MPI_DOUBLE));
    CHECK(memcmp(bio + 1, want, sizeof want) == 0, "SUM on unaligned doubles");
}

static void test_check(void)
{
    static const struct { MPI_Op op; MPI_Datatype t; int rc; } cases[] = {
        { MPI_BAND, MPI_DOUBLE, MPI_ERR_OP },     { MPI_BOR, MPI_FLOAT, MPI_ERR_OP },
        { MPI_SUM, MPI_C_BOOL, MPI_ERR_OP },      { MPI_MAX, MPI_C_BOOL, MPI_ERR_OP },
        { MPI_LAND, MPI_C_BOOL, MPI_SUCCESS },    { MPI_LAND, MPI_DOUBLE, MPI_ERR_OP },
        { MPI_LAND, MPI_AINT, MPI_ERR_OP },       { MPI_BAND, MPI_OFFSET, MPI_SUCCESS },
        { MPI_SUM, MPI_BYTE, MPI_ERR_OP },        { MPI_BXOR, MPI_BYTE, MPI_SUCCESS },
        { MPI_MINLOC, MPI_INT, MPI_ERR_OP },      { MPI_MAXLOC, MPI_2INT, MPI_SUCCESS },
        { MPI_SUM, MPI_2INT, MPI_ERR_OP },        { MPI_SUM, MPI_WCHAR, MPI_ERR_OP },
        { MPI_SUM, MPI_PACKED, MPI_ERR_OP },      { MPI_NO_OP, MPI_PACKED, MPI_SUCCESS },
        { MPI_OP_NULL, MPI_INT, MPI_ERR_OP },     { (MPI_Op)0x58000000, MPI_INT, MPI_ERR_OP },
        { (MPI_Op)0x5800000f, MPI_INT, MPI_ERR_OP },
        { (MPI_Op)MPI_COMM_WORLD, MPI_INT, MPI_ERR_OP },
        { (MPI_Op)0x98000003, MPI_INT, MPI_ERR_OP },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CHECK(vmpi_op_check(cases[i].op, T(cases[i].t)) == cases[i].rc,
              "vmpi_op_check(0x%x, %s) should be %d", (unsigned)cases[i].op,
              T(cases[i].t)->name, cases[i].rc);

    /* A derived type of one basic type takes the ops of that type. */
    struct vmpi_dtype *dt = ok(vmpi_dtype_hvector(2, 1, 16, T(MPI_DOUBLE), &dt), &dt, "vector");
    CHECK(vmpi_op_check(MPI_SUM, dt) == MPI_SUCCESS, "SUM on vector of DOUBLE");
    CHECK(vmpi_op_check(MPI_BAND, dt) == MPI_ERR_OP, "BAND on vector of DOUBLE");

    /* count 0 touches nothing */
    int x = 5, y = 7;
    vmpi_op_apply(MPI_SUM, &x, &y, 0, T(MPI_INT));
    CHECK(y == 7, "count 0 leaves inout alone");
}

/* ---- user operations ------------------------------------------------------- */

/* What the user function saw, for the checks. */
static int seen_calls, seen_len;
static MPI_Datatype seen_type;

/* inout = in - inout on ints: not commutative, and the order shows. Writes
 * through len and datatype, which must not reach the library's copies. */
static void user_sub(void *in, void *inout, int *len, MPI_Datatype *datatype)
{
    seen_calls++;
    seen_len = *len;
    seen_type = *datatype;
    struct vmpi_dtype *dt = vmpi_dtype_get(*datatype);
    MPI_Aint ext = vmpi_dtype_extent(dt);
    /* one int at the start of each element (the types used below) */
    for (int i = 0; i < *len; i++) {
        int *a = (int *)((char *)in + i * ext), *b = (int *)((char *)inout + i * ext);
        *b = *a - *b;
    }
    *len = -1;
    *datatype = MPI_DATATYPE_NULL;
}

static void test_user(void)
{
    MPI_Op op, op2;
    CHECK(vmpi_op_create(user_sub, false, &op) == MPI_SUCCESS, "create");
    CHECK(vmpi_op_create(user_sub, true, &op2) == MPI_SUCCESS, "create commutative");
    CHECK(op != op2 && VMPI_HKIND(op) == VMPI_HK_INDIRECT && VMPI_HTYPE(op) == VMPI_OBJ_OP,
          "user op handles 0x%x 0x%x", (unsigned)op, (unsigned)op2);
    CHECK(!vmpi_op_commutative(op) && vmpi_op_commutative(op2), "commute flags");
    CHECK(vmpi_op_commutative(MPI_SUM) && vmpi_op_commutative(MPI_MAXLOC) &&
              !vmpi_op_commutative(MPI_REPLACE),
          "predefined commute flags");
    CHECK(vmpi_op_is_user(op) && !vmpi_op_is_user(MPI_SUM), "is_user");
    /* defined on any type, even a mixed struct */
    CHECK(vmpi_op_check(op, T(MPI_DOUBLE)) == MPI_SUCCESS, "user op on DOUBLE");

    int in[4] = { 10, 20, 30, 40 }, io[4] = { 1, 2, 3, 4 };
    seen_calls = 0;
    vmpi_op_apply(op, in, io, 4, T(MPI_INT));
    CHECK(io[0] == 9 && io[3] == 36, "in op inout order: %d %d", io[0], io[3]);
    CHECK(seen_calls == 1 && seen_len == 4 && seen_type == MPI_INT, "called with (4, MPI_INT)");

    /* A derived type: the function gets count elements of it and its handle. */
    struct vmpi_dtype *vec = ok(vmpi_dtype_hvector(1, 1, 8, T(MPI_INT), &vec), &vec, "vector");
    struct vmpi_dtype *rs = ok(vmpi_dtype_resized(vec, 0, 8, &rs), &rs, "resized");
    int vin[6] = { 5, -1, 6, -1, 7, -1 }, vio[6] = { 1, 99, 1, 99, 1, 99 };
    vmpi_op_apply(op, vin, vio, 3, rs);
    CHECK(seen_len == 3 && seen_type == rs->handle, "called with (3, derived) not %d 0x%x",
          seen_len, (unsigned)seen_type);
    CHECK(vio[0] == 4 && vio[2] == 5 && vio[4] == 6 && vio[1] == 99 && vio[5] == 99,
          "derived layout");

    /* Freed: invalid for the user, but a holder can still apply it. */
    vmpi_op_retain(op);
    CHECK(vmpi_op_free(op) == MPI_SUCCESS, "free");
    CHECK(vmpi_op_check(op, T(MPI_INT)) == MPI_ERR_OP && !vmpi_op_is_user(op),
          "a freed op is refused");
    CHECK(vmpi_op_free(op) == MPI_ERR_OP, "double free");
    MPI_Op op3;
    CHECK(vmpi_op_create(user_sub, true, &op3) == MPI_SUCCESS && op3 != op,
          "a held handle is not reused");
    io[0] = 1;
    vmpi_op_apply(op, in, io, 1, T(MPI_INT));
    CHECK(io[0] == 9, "a held op still applies");
    vmpi_op_release(op);
    CHECK(vmpi_op_check(op, T(MPI_INT)) == MPI_ERR_OP, "released op");
    CHECK(vmpi_op_free(MPI_SUM) == MPI_ERR_OP, "predefined ops cannot be freed");
    CHECK(vmpi_op_free(op2) == MPI_SUCCESS && vmpi_op_free(op3) == MPI_SUCCESS, "free others");
}

int main(void)
{
    if (vmpi_dtype_init() != MPI_SUCCESS) {
        fprintf(stderr, "FAILED: vmpi_dtype_init\n");
        return 1;
    }
    void (*const tests[])(void) = {
        t_i8, t_u8, t_schar, t_uchar, t_char, t_i16, t_u16, t_int, t_uint, t_long, t_ulong,
        t_ll, t_ull, t_u64, t_aint, t_count, t_byte, t_bool, t_float, t_double, t_ldouble,
        t_cfloat, t_cdouble, t_cldouble, t_fi, t_di, t_li, t_si, t_2i, t_ldi,
        t_integer, t_integer1, t_integer8, t_logical, t_cxxbool, t_character, t_real, t_dprec,
        t_real16, t_complex, t_dcomplex, t_complex32, t_cxxcomplex, t_2integer, t_2real,
        t_2dprec,
        test_derived, test_replace_noop, test_unaligned, test_check, test_user,
    };
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
        tests[i]();
    vmpi_dtype_finalize();
    if (failures) {
        fprintf(stderr, "u_op: %d check(s) failed\n", failures);
        return 1;
    }
    printf("u_op: all checks passed\n");
    return 0;
}
