/* Framework of the collective correctness matrix (t_coll_ref.c): every
 * collective is checked against a serial reference that each rank computes
 * on its own, from data that any rank can regenerate (a hash of the seed,
 * the case, the owner rank and the element index), so checking needs no
 * communication through the collectives under test.
 *
 * A case is one call (twice for reductions: the repetition must give the same
 * bits) with parameters drawn from dimensions that are cycled so that each
 * value of each dimension comes up once per cycle: operation (reductions),
 * type family (data movement), layout (basic type or a derived type with
 * gaps), count, root, MPI_IN_PLACE, and whether arguments that are not
 * significant are passed as NULL. Buffers are surrounded by guard bytes and
 * filled with a position-dependent sentinel: a check compares every byte of
 * a buffer, so a write into a gap of a derived type or past the end fails as
 * well as a wrong value. Floating-point sums and products are compared with
 * a tolerance against a reference in long double; everything else bit for
 * bit. Only the programs' own point-to-point messages on a duplicate of
 * MPI_COMM_WORLD carry the verdicts between ranks. */
#ifndef VMPI_TESTS_COLL_REF_H
#define VMPI_TESTS_COLL_REF_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* sigaction, strtok_r, getopt, nanosleep */
#endif

/* The checks go over every byte of every buffer several times; unoptimized
 * (the sanitizer build is -O0) they would take most of the test's time. */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__OPTIMIZE__)
#pragma GCC optimize("O2")
#define CR_HOT __attribute__((always_inline)) inline /* -O0 inlines nothing */
#else
#define CR_HOT inline
#endif

#include <float.h>
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- random numbers --------------------------------------------------- */

static CR_HOT uint64_t cr_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static CR_HOT uint64_t cr_hash(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    return cr_mix(a ^ cr_mix(b ^ cr_mix(c ^ cr_mix(d))));
}

struct cr_rng {
    uint64_t s;
};

static CR_HOT uint64_t cr_next(struct cr_rng *r)
{
    r->s += 0x9e3779b97f4a7c15ull;
    return cr_mix(r->s);
}

static CR_HOT uint64_t cr_below(struct cr_rng *r, uint64_t n)
{
    return n ? cr_next(r) % n : 0;
}

/* uniform in [0, 1) */
static CR_HOT double cr_unit(struct cr_rng *r)
{
    return (double)(cr_next(r) >> 11) * 0x1.0p-53;
}

/* ---- element kinds and basic types ------------------------------------ */

enum cr_kind {
    K_I8, K_U8, K_I16, K_U16, K_I32, K_U32, K_I64, K_U64,
    K_F, K_D, K_LD, K_CF, K_CD, K_CLD,
    K_BOOL, K_BYTE, K_CHAR, K_WCHAR,
    K_FI, K_DI, K_LI, K_SI, K_2I, K_LDI,
    K_MAT, /* 2x2 matrix of unsigned (user non-commutative op), extent 24 */
    NKINDS
};

struct cr_fi { float v; int i; };
struct cr_di { double v; int i; };
struct cr_li { long v; int i; };
struct cr_si { short v; int i; };
struct cr_2i { int v; int i; };
struct cr_ldi { long double v; int i; };

#define CR_MAT_EXT 24
/* Bytes of a long double that hold its value: x87 extended precision keeps
 * 10 in its 16; the rest is padding that copies need not preserve. */
#define CR_LD_SIG (LDBL_MANT_DIG == 64 ? 10 : (int)sizeof(long double))

/* ext: C size of one element; sig: the byte ranges that carry its value
 * (the rest is padding, ignored by the checks, except for `gapped` kinds,
 * where it is a hole of the type map that must stay untouched). */
struct cr_kinfo {
    size_t ext;
    int nsig;
    size_t so[2], sl[2];
    int gapped;
};

#define KI1(n) {n, 1, {0, 0}, {n, 0}, 0}
#define KIP(T, V) {sizeof(T), 2, {0, offsetof(T, i)}, {sizeof(V), sizeof(int)}, 0}
static const struct cr_kinfo cr_ki[NKINDS] = {
    [K_I8] = KI1(1), [K_U8] = KI1(1), [K_I16] = KI1(2), [K_U16] = KI1(2),
    [K_I32] = KI1(4), [K_U32] = KI1(4), [K_I64] = KI1(8), [K_U64] = KI1(8),
    [K_F] = KI1(4), [K_D] = KI1(8),
    [K_LD] = {sizeof(long double), 1, {0, 0}, {CR_LD_SIG, 0}, 0},
    [K_CF] = KI1(8), [K_CD] = KI1(16),
    [K_CLD] = {2 * sizeof(long double), 2, {0, sizeof(long double)}, {CR_LD_SIG, CR_LD_SIG}, 0},
    [K_BOOL] = KI1(1), [K_BYTE] = KI1(1), [K_CHAR] = KI1(1), [K_WCHAR] = KI1(4),
    [K_FI] = KIP(struct cr_fi, float), [K_DI] = KIP(struct cr_di, double),
    [K_LI] = KIP(struct cr_li, long), [K_SI] = KIP(struct cr_si, short),
    [K_2I] = KIP(struct cr_2i, int),
    [K_LDI] = {sizeof(struct cr_ldi), 2, {0, offsetof(struct cr_ldi, i)},
               {CR_LD_SIG, sizeof(int)}, 0},
    [K_MAT] = {CR_MAT_EXT, 1, {0, 0}, {16, 0}, 1},
};
#undef KI1
#undef KIP

/* Type classes of MPI-3.1 5.9.2 (which op applies to which type), plus
 * types only moved (MOVE) and the types of the two user operations. */
enum cr_cls { CL_INT, CL_ML, CL_FLT, CL_CPLX, CL_BOOL, CL_BYTE, CL_PAIR, CL_MOVE, CL_UCOMM,
              CL_UNONC, NCLS };

struct cr_btype {
    const char *name;
    MPI_Datatype dt; /* CL_UNONC: made at start */
    int cls, kind;
};

static struct cr_btype cr_bt[] = {
    {"MPI_SIGNED_CHAR", MPI_SIGNED_CHAR, CL_INT, K_I8},
    {"MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, CL_INT, K_U8},
    {"MPI_SHORT", MPI_SHORT, CL_INT, K_I16},
    {"MPI_UNSIGNED_SHORT", MPI_UNSIGNED_SHORT, CL_INT, K_U16},
    {"MPI_INT", MPI_INT, CL_INT, K_I32},
    {"MPI_UNSIGNED", MPI_UNSIGNED, CL_INT, K_U32},
    {"MPI_LONG", MPI_LONG, CL_INT, K_I64},
    {"MPI_UNSIGNED_LONG", MPI_UNSIGNED_LONG, CL_INT, K_U64},
    {"MPI_LONG_LONG", MPI_LONG_LONG, CL_INT, K_I64},
    {"MPI_UNSIGNED_LONG_LONG", MPI_UNSIGNED_LONG_LONG, CL_INT, K_U64},
    {"MPI_INT8_T", MPI_INT8_T, CL_INT, K_I8},
    {"MPI_UINT8_T", MPI_UINT8_T, CL_INT, K_U8},
    {"MPI_INT16_T", MPI_INT16_T, CL_INT, K_I16},
    {"MPI_UINT16_T", MPI_UINT16_T, CL_INT, K_U16},
    {"MPI_INT32_T", MPI_INT32_T, CL_INT, K_I32},
    {"MPI_UINT32_T", MPI_UINT32_T, CL_INT, K_U32},
    {"MPI_INT64_T", MPI_INT64_T, CL_INT, K_I64},
    {"MPI_UINT64_T", MPI_UINT64_T, CL_INT, K_U64},
    {"MPI_AINT", MPI_AINT, CL_ML, K_I64},
    {"MPI_OFFSET", MPI_OFFSET, CL_ML, K_I64},
    {"MPI_COUNT", MPI_COUNT, CL_ML, K_I64},
    {"MPI_FLOAT", MPI_FLOAT, CL_FLT, K_F},
    {"MPI_DOUBLE", MPI_DOUBLE, CL_FLT, K_D},
    {"MPI_LONG_DOUBLE", MPI_LONG_DOUBLE, CL_FLT, K_LD},
    {"MPI_C_FLOAT_COMPLEX", MPI_C_FLOAT_COMPLEX, CL_CPLX, K_CF},
    {"MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, CL_CPLX, K_CD},
    {"MPI_C_LONG_DOUBLE_COMPLEX", MPI_C_LONG_DOUBLE_COMPLEX, CL_CPLX, K_CLD},
    {"MPI_C_BOOL", MPI_C_BOOL, CL_BOOL, K_BOOL},
    {"MPI_BYTE", MPI_BYTE, CL_BYTE, K_BYTE},
    {"MPI_FLOAT_INT", MPI_FLOAT_INT, CL_PAIR, K_FI},
    {"MPI_DOUBLE_INT", MPI_DOUBLE_INT, CL_PAIR, K_DI},
    {"MPI_LONG_INT", MPI_LONG_INT, CL_PAIR, K_LI},
    {"MPI_SHORT_INT", MPI_SHORT_INT, CL_PAIR, K_SI},
    {"MPI_2INT", MPI_2INT, CL_PAIR, K_2I},
    {"MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT, CL_PAIR, K_LDI},
    {"MPI_CHAR", MPI_CHAR, CL_MOVE, K_CHAR},
    {"MPI_WCHAR", MPI_WCHAR, CL_MOVE, K_WCHAR},
    {"MPI_UNSIGNED", MPI_UNSIGNED, CL_UCOMM, K_U32},
    {"2x2 matrix (resized contiguous of 4 MPI_UNSIGNED, extent 24)", MPI_DATATYPE_NULL,
     CL_UNONC, K_MAT},
};
#define NBT ((int)(sizeof cr_bt / sizeof cr_bt[0]))
#define BT_HET (-1) /* the heterogeneous struct family (data movement only) */

/* ---- operations ----------------------------------------------------- */

enum { O_MAX, O_MIN, O_SUM, O_PROD, O_LAND, O_BAND, O_LOR, O_BOR, O_LXOR, O_BXOR, O_MINLOC,
       O_MAXLOC, O_UCOMM, O_UNONC, NOPS };

static const char *const cr_opname[NOPS] = {
    "MPI_MAX", "MPI_MIN", "MPI_SUM", "MPI_PROD", "MPI_LAND", "MPI_BAND", "MPI_LOR", "MPI_BOR",
    "MPI_LXOR", "MPI_BXOR", "MPI_MINLOC", "MPI_MAXLOC", "user commutative op",
    "user non-commutative op"};

/* classes each op is defined on (MPI-3.1 5.9.2) */
#define CB(c) (1u << (c))
static const unsigned cr_opcls[NOPS] = {
    [O_MAX] = CB(CL_INT) | CB(CL_ML) | CB(CL_FLT),
    [O_MIN] = CB(CL_INT) | CB(CL_ML) | CB(CL_FLT),
    [O_SUM] = CB(CL_INT) | CB(CL_ML) | CB(CL_FLT) | CB(CL_CPLX),
    [O_PROD] = CB(CL_INT) | CB(CL_ML) | CB(CL_FLT) | CB(CL_CPLX),
    [O_LAND] = CB(CL_INT) | CB(CL_BOOL),
    [O_LOR] = CB(CL_INT) | CB(CL_BOOL),
    [O_LXOR] = CB(CL_INT) | CB(CL_BOOL),
    [O_BAND] = CB(CL_INT) | CB(CL_ML) | CB(CL_BYTE),
    [O_BOR] = CB(CL_INT) | CB(CL_ML) | CB(CL_BYTE),
    [O_BXOR] = CB(CL_INT) | CB(CL_ML) | CB(CL_BYTE),
    [O_MINLOC] = CB(CL_PAIR),
    [O_MAXLOC] = CB(CL_PAIR),
    [O_UCOMM] = CB(CL_UCOMM),
    [O_UNONC] = CB(CL_UNONC),
};

/* ---- layouts: a basic type or a derived type over it -------------------- */

/* Homogeneous templates hold 6 elements of the basic type u (except BASIC):
 *   CONTIG   contiguous(6)                                 no gaps
 *   VECTOR   vector(3 blocks of 2, stride 3)               gaps of 1
 *   INDEXED  indexed({2,1,3} at {1,4,6}): lb = u           gaps, leading hole
 *   STRUCT   struct(2@0, 3@3u, 1@8u)                        gaps of 1 and 2
 *   RESIZED  vector(2 blocks of 3, stride 4) resized to lb -u, extent 10u
 * Heterogeneous struct {int, double, char, short} (4 fields per element):
 *   H1 natural C offsets, H2 packed (extent by the library's alignment rule),
 *   H3 = H2 resized to lb -8, extent 32. */
enum { T_BASIC, T_CONTIG, T_VECTOR, T_INDEXED, T_STRUCT, T_RESIZED, NT_HOMOG };
enum { T_H1, T_H2, T_H3, NT_HET };
static const char *const cr_tname[NT_HOMOG] = {"basic", "contiguous", "vector", "indexed",
                                               "struct", "resized"};
static const char *const cr_hname[NT_HET] = {"struct H1", "struct H2 (packed)",
                                             "struct H3 (resized)"};

struct cr_layout {
    const char *name;
    int k;          /* basic elements per element of dt */
    int bt[6];      /* basic type of each */
    MPI_Aint off[6];
    MPI_Aint ext;
    MPI_Aint minoff, maxend; /* bytes touched by one element: [minoff, maxend) */
    MPI_Datatype dt;
    int dense; /* elements back to back from offset 0, no padding: one memcpy */
};

/* ---- options and global state ------------------------------------------ */

struct cr_opts {
    uint64_t seed;
    char colls[512];
    long kcase;      /* -1: all */
    int cases;       /* per collective on MPI_COMM_WORLD */
    int comms;       /* bit mask of CK_* */
    int counts[16], ncounts; /* -1: large */
    size_t lbytes;
    int verbose, timeout, maxfail;
};

enum { CK_WORLD, CK_SELF, CK_SPLIT, CK_SHUFFLE, NCK };
static const char *const cr_ckname[NCK] = {"world", "self", "split", "shuffle"};

static struct {
    struct cr_opts o;
    const char *prog;
    int wrank, wsize;
    MPI_Comm ctl;        /* private channel for verdicts */
    MPI_Comm comm[NCK];
    int color[NCK];
    MPI_Op uop[2];       /* user commutative, non-commutative */
    volatile sig_atomic_t ufn_baddt;
    const struct cr_layout *ufn_lay;
    struct cr_layout lay[NBT][NT_HOMOG];
    struct cr_layout het[NT_HET];
    int bt_int, bt_double, bt_char, bt_short, bt_shortint;
    char desc[1024];
    size_t desclen;
    char alarm_msg[64]; /* what the watchdog prints before desc */
    size_t alarm_len;
    long ncases, nfailed;
} G;

/* ---- one case ------------------------------------------------------- */

struct coll_test;

struct cr_case {
    const struct coll_test *co;
    int ck;
    long idx;
    MPI_Comm comm;
    int p, me;
    uint64_t seed; /* data of this case (differs between the halves of a split) */
    int opi;       /* reductions */
    MPI_Op op;
    int bt;        /* basic type index or BT_HET */
    int mix;       /* layout template of all buffers, unless mixed: */
    int mixed;     /* a template per rank and side */
    int cnt;       /* count parameter; n = cnt * U basic elements */
    int U;
    size_t n;
    int root, inplace, nullarg;
    int fails;
};

struct coll_test {
    const char *name;
    const char *fn;
    int flags;
    void (*run)(struct cr_case *);
};
/* F_ROOT: rooted; F_INPLACE: takes MPI_IN_PLACE; F_RED: a reduction (op
 * dimension); F_V: counts per rank; F_BLOCKS: one block per rank (large
 * counts are split over them); F_LOCAL: no communicator; F_NOCOUNT: no
 * data; F_NULLARG: has arguments that are not significant on some ranks. */
enum { F_ROOT = 1, F_INPLACE = 2, F_RED = 4, F_V = 8, F_BLOCKS = 16, F_LOCAL = 32,
       F_NOCOUNT = 64, F_NULLARG = 128 };

/* ---- messages --------------------------------------------------------- */

static inline void cr_say(const char *fmt, ...)
{
    char b[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    fputs(b, stderr);
    fflush(stderr);
}

/* A failed check: one line naming rank, call, types, op, count, root, and
 * what differs. At most a few per rank and case, the first difference of
 * each buffer. */
static inline void cr_fail(struct cr_case *cs, const char *fmt, ...)
{
    cs->fails++;
    if (cs->fails > 4)
        return;
    char b[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    cr_say("FAIL rank %d (of %d in comm %s, world rank %d): %s: %s\n", cs->me, cs->p,
           cr_ckname[cs->ck], G.wrank, G.desc, b);
}

static inline void cr_die(const char *fmt, ...)
{
    char b[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    cr_say("t_coll_ref: rank %d: %s\n", G.wrank, b);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* Every call's return code: with MPI_ERRORS_RETURN set on the test
 * communicators an error becomes a failure of the case, not an abort. */
static inline void cr_rc(struct cr_case *cs, const char *fn, int len, int rc)
{
    if (rc == MPI_SUCCESS)
        return;
    char es[MPI_MAX_ERROR_STRING + 1] = "";
    int el = 0;
    MPI_Error_string(rc, es, &el);
    cr_fail(cs, "%.*s returned error %d: %s", len, fn, rc, es);
}

/* the function's name is the call's text up to the parenthesis */
#define CR_CALL(cs, call) cr_rc(cs, #call, (int)strcspn(#call, "("), (call))

#define CR_OK(call)                                             \
    do {                                                        \
        if ((call) != MPI_SUCCESS)                              \
            cr_die("%s:%d: %s failed", __FILE__, __LINE__, #call); \
    } while (0)

static inline void *cr_alloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        cr_die("out of memory (%zu bytes)", n);
    return p;
}

/* ---- layouts ---------------------------------------------------------- */

static inline void cr_lay_finish(struct cr_layout *L)
{
    L->minoff = L->k ? L->off[0] : 0;
    L->maxend = L->minoff;
    for (int j = 0; j < L->k; j++) {
        MPI_Aint e = L->off[j] + (MPI_Aint)cr_ki[cr_bt[L->bt[j]].kind].ext;
        if (L->off[j] < L->minoff)
            L->minoff = L->off[j];
        if (e > L->maxend)
            L->maxend = e;
    }
    CR_OK(MPI_Type_commit(&L->dt));
    MPI_Aint lb, ext;
    CR_OK(MPI_Type_get_extent(L->dt, &lb, &ext));
    if (L->ext == 0) /* structs: the library's alignment rule decides */
        L->ext = ext;
    if (ext != L->ext)
        cr_die("layout %s of %s: MPI_Type_get_extent says %ld, expected %ld", L->name,
               cr_bt[L->bt[0]].name, (long)ext, (long)L->ext);
}

static inline const struct cr_layout *cr_lay(int bt, int t)
{
    struct cr_layout *L = bt == BT_HET ? &G.het[t] : &G.lay[bt][t];
    if (L->name)
        return L;
    if (bt == BT_HET) {
        static const MPI_Aint o1[4] = {0, 8, 16, 18}, o2[4] = {0, 4, 12, 13};
        int bl[4] = {1, 1, 1, 1};
        int bts[4] = {G.bt_int, G.bt_double, G.bt_char, G.bt_short};
        MPI_Datatype ts[4];
        for (int j = 0; j < 4; j++)
            ts[j] = cr_bt[bts[j]].dt;
        L->name = cr_hname[t];
        L->k = 4;
        memcpy(L->bt, bts, sizeof bts);
        memcpy(L->off, t == T_H1 ? o1 : o2, sizeof o1);
        if (t == T_H3) {
            MPI_Datatype h2;
            CR_OK(MPI_Type_create_struct(4, bl, o2, ts, &h2));
            CR_OK(MPI_Type_create_resized(h2, -8, 32, &L->dt));
            CR_OK(MPI_Type_free(&h2));
            L->ext = 32;
        } else {
            CR_OK(MPI_Type_create_struct(4, bl, t == T_H1 ? o1 : o2, ts, &L->dt));
            L->ext = t == T_H1 ? 24 : 0;
        }
        cr_lay_finish(L);
        return L;
    }
    MPI_Datatype b = cr_bt[bt].dt;
    MPI_Aint u = (MPI_Aint)cr_ki[cr_bt[bt].kind].ext;
    static const int offs[NT_HOMOG][6] = {
        {0}, {0, 1, 2, 3, 4, 5}, {0, 1, 3, 4, 6, 7}, {1, 2, 4, 6, 7, 8}, {0, 1, 3, 4, 5, 8},
        {0, 1, 2, 4, 5, 6}};
    static const int exts[NT_HOMOG] = {1, 6, 8, 8, 9, 10};
    L->name = cr_tname[t];
    L->k = t == T_BASIC ? 1 : 6;
    for (int j = 0; j < L->k; j++) {
        L->bt[j] = bt;
        L->off[j] = offs[t][j] * u;
    }
    L->ext = exts[t] * u;
    switch (t) {
    case T_BASIC:
        CR_OK(MPI_Type_dup(b, &L->dt));
        break;
    case T_CONTIG:
        CR_OK(MPI_Type_contiguous(6, b, &L->dt));
        break;
    case T_VECTOR:
        CR_OK(MPI_Type_vector(3, 2, 3, b, &L->dt));
        break;
    case T_INDEXED: {
        int bl[3] = {2, 1, 3}, d[3] = {1, 4, 6};
        CR_OK(MPI_Type_indexed(3, bl, d, b, &L->dt));
        break;
    }
    case T_STRUCT: {
        int bl[3] = {2, 3, 1};
        MPI_Aint d[3] = {0, 3 * u, 8 * u};
        MPI_Datatype ts[3] = {b, b, b};
        CR_OK(MPI_Type_create_struct(3, bl, d, ts, &L->dt));
        break;
    }
    default: {
        MPI_Datatype v;
        CR_OK(MPI_Type_vector(2, 3, 4, b, &v));
        CR_OK(MPI_Type_create_resized(v, -u, 10 * u, &L->dt));
        CR_OK(MPI_Type_free(&v));
        break;
    }
    }
    const struct cr_kinfo *ki = &cr_ki[cr_bt[bt].kind];
    L->dense = (t == T_BASIC || t == T_CONTIG) && ki->nsig == 1 && ki->sl[0] == ki->ext;
    if (t == T_BASIC) {
        /* MPI_Type_dup of a basic type is still that type to the op rules;
         * reductions use the predefined handle itself. */
        CR_OK(MPI_Type_free(&L->dt));
        L->dt = b;
        MPI_Aint lb, ext;
        CR_OK(MPI_Type_get_extent(b, &lb, &ext));
        if (ext != L->ext)
            cr_die("%s: MPI_Type_get_extent says %ld, C says %ld", cr_bt[bt].name, (long)ext,
                   (long)L->ext);
        L->minoff = 0;
        L->maxend = u;
        return L;
    }
    cr_lay_finish(L);
    return L;
}

static inline int cr_nt(int bt)
{
    return bt == BT_HET ? NT_HET : NT_HOMOG;
}

/* Elements per unit of count: every layout of a case holds a whole number
 * of units, so any two of them can carry the same data. */
static inline int cr_unit_of(int bt, int mix, int mixed)
{
    if (bt == BT_HET)
        return 4;
    return mixed || mix != T_BASIC ? 6 : 1;
}

/* Layout of `rank` on `side` (0 send, 1 receive; peers > 0 for the w form). */
static inline const struct cr_layout *cr_lay_of(const struct cr_case *cs, int bt, int rank,
                                                int side)
{
    if (!cs->mixed)
        return cr_lay(bt, cs->mix % cr_nt(bt));
    struct cr_rng r = {cr_hash(cs->seed, 0x1a7, (uint64_t)rank, (uint64_t)side)};
    return cr_lay(bt, (int)cr_below(&r, (uint64_t)cr_nt(bt)));
}

/* ---- element values ------------------------------------------------------ */

static CR_HOT int cr_kind_at(int bt, size_t f)
{
    if (bt == BT_HET) {
        int k4[4] = {K_I32, K_D, K_CHAR, K_I16};
        return k4[f % 4];
    }
    return cr_bt[bt].kind;
}

static inline size_t cr_slot(int bt)
{
    return bt == BT_HET ? 8 : cr_ki[cr_bt[bt].kind].ext;
}

/* An integer of the kind's width (bits) as stored bytes. */
static CR_HOT void cr_put_int(void *out, size_t w, uint64_t v)
{
    switch (w) {
    case 1: { uint8_t x = (uint8_t)v; memcpy(out, &x, 1); break; }
    case 2: { uint16_t x = (uint16_t)v; memcpy(out, &x, 2); break; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(out, &x, 4); break; }
    default: memcpy(out, &v, 8); break;
    }
}

static CR_HOT int cr_signed_kind(int k)
{
    return k == K_I8 || k == K_I16 || k == K_I32 || k == K_I64;
}

/* A floating value for the op: sums get [-1, 1), products a magnitude in
 * [0.5, 2) (so products of 9 stay near 1), the rest any exponent. */
static CR_HOT long double cr_fval(struct cr_rng *r, int op)
{
    double u = cr_unit(r);
    if (op == O_SUM)
        return 2 * u - 1;
    if (op == O_PROD)
        return (cr_next(r) & 1 ? -1 : 1) * (0.5 + 1.5 * u);
    double m = 2 * u - 1;
    if (m == 0)
        m = 0.5;
    return ldexpl((long double)m, (int)cr_below(r, 61) - 30);
}

/* Value of one element for op `op` (-1: data movement). Padding stays 0. */
static inline void cr_gen_val(int kind, int op, struct cr_rng *r, unsigned char *out)
{
    size_t w = cr_ki[kind].ext;
    switch (kind) {
    case K_I8: case K_U8: case K_I16: case K_U16: case K_I32: case K_U32: case K_I64:
    case K_U64: case K_BYTE: {
        uint64_t v = cr_next(r);
        int sg = cr_signed_kind(kind);
        switch (op) {
        case O_SUM: {
            uint64_t R = w == 1 ? 12 : 1000;
            v = cr_below(r, 2 * R + 1);
            if (sg)
                v -= R;
            break;
        }
        case O_PROD: { /* |product of 9| <= 2^9 fits every signed width > 8 */
            static const int64_t sv[4] = {-2, -1, 1, 2};
            if (sg)
                v = (uint64_t)(w == 1 ? (cr_next(r) & 1 ? -1 : 1) : sv[cr_below(r, 4)]);
            else
                v = 1 + cr_below(r, 3);
            break;
        }
        case O_LAND: case O_LOR: case O_LXOR: {
            /* zeros often enough that LAND and LOR of 9 are not constant */
            uint64_t z = op == O_LAND ? 8 : op == O_LOR ? 1 : 4;
            if (cr_below(r, 9) < z)
                v = 0;
            else if ((v & ((w == 8 ? 0 : 1ull << (8 * w)) - 1)) == 0)
                v = 1;
            break;
        }
        case O_BAND:
            v |= cr_next(r);
            break;
        case O_BOR:
            v &= cr_next(r);
            break;
        default:
            break;
        }
        cr_put_int(out, w, v);
        break;
    }
    case K_BOOL: {
        uint64_t z = op == O_LAND ? 1 : op == O_LOR ? 8 : 4;
        out[0] = cr_below(r, 9) >= z;
        break;
    }
    case K_CHAR:
        out[0] = (unsigned char)(' ' + cr_below(r, 95));
        break;
    case K_WCHAR:
        cr_put_int(out, 4, cr_below(r, 0x10ffff));
        break;
    case K_F: { float x = (float)cr_fval(r, op); memcpy(out, &x, sizeof x); break; }
    case K_D: { double x = (double)cr_fval(r, op); memcpy(out, &x, sizeof x); break; }
    case K_LD: { long double x = cr_fval(r, op); memcpy(out, &x, (size_t)CR_LD_SIG); break; }
    case K_CF: case K_CD: case K_CLD: {
        long double re, im;
        if (op == O_PROD) { /* magnitude in [0.5, 2), any phase */
            long double m = 0.5L + 1.5L * cr_unit(r), a = 6.283185307179586L * cr_unit(r);
            re = m * cosl(a);
            im = m * sinl(a);
        } else {
            re = cr_fval(r, op);
            im = cr_fval(r, op);
        }
        if (kind == K_CF) {
            float x[2] = {(float)re, (float)im};
            memcpy(out, x, sizeof x);
        } else if (kind == K_CD) {
            double x[2] = {(double)re, (double)im};
            memcpy(out, x, sizeof x);
        } else {
            memcpy(out, &re, (size_t)CR_LD_SIG);
            memcpy(out + sizeof(long double), &im, (size_t)CR_LD_SIG);
        }
        break;
    }
    case K_FI: case K_DI: case K_LI: case K_SI: case K_2I: case K_LDI: {
        /* few distinct values, so MINLOC/MAXLOC meet ties and must keep
         * the smallest index; indices are not the ranks */
        int v = op == O_MINLOC || op == O_MAXLOC ? (int)cr_below(r, 4)
                                                 : (int)cr_below(r, 20001) - 10000;
        int idx = (int)cr_below(r, 1000);
        const struct cr_kinfo *ki = &cr_ki[kind];
        if (kind == K_FI) {
            float x = (float)v;
            memcpy(out, &x, sizeof x);
        } else if (kind == K_DI) {
            double x = v;
            memcpy(out, &x, sizeof x);
        } else if (kind == K_LI) {
            long x = v;
            memcpy(out, &x, sizeof x);
        } else if (kind == K_SI) {
            short x = (short)v;
            memcpy(out, &x, sizeof x);
        } else if (kind == K_2I) {
            memcpy(out, &v, sizeof v);
        } else {
            long double x = v;
            memcpy(out, &x, (size_t)CR_LD_SIG);
        }
        memcpy(out + ki->so[1], &idx, sizeof idx);
        break;
    }
    case K_MAT:
        for (int i = 0; i < 4; i++) {
            uint32_t x = (uint32_t)cr_next(r);
            memcpy(out + 4 * i, &x, 4);
        }
        break;
    default:
        break;
    }
}

/* A stream: the sequence of basic elements one rank sends or receives, in
 * type-signature order, one slot each. Element f of the stream of
 * (owner, peer) depends only on the case, owner, peer and f. */
struct cr_fref; /* below */
struct cr_stream {
    size_t base; /* index of the first element held (d holds [base, base + n)) */
    size_t n, slot;
    int bt;
    unsigned char *d;
    struct cr_fref *f; /* float sums/products: reference values */
};

static inline void cr_gen(const struct cr_case *cs, int bt, int op, int owner, int peer,
                          size_t first, size_t n, unsigned char *out)
{
    size_t slot = cr_slot(bt);
    uint64_t base = cr_hash(cs->seed, (uint64_t)owner, (uint64_t)peer, (uint64_t)bt);
    memset(out, 0, n * slot);
    for (size_t i = 0; i < n; i++) {
        struct cr_rng r = {cr_mix(base + first + i)};
        cr_gen_val(cr_kind_at(bt, first + i), op, &r, out + i * slot);
    }
}

static inline struct cr_stream cr_stream_new(int bt, size_t n)
{
    struct cr_stream s = {0, n, cr_slot(bt), bt, NULL, NULL};
    s.d = cr_alloc(n * s.slot);
    memset(s.d, 0, n * s.slot);
    return s;
}

static inline struct cr_stream cr_stream_gen(const struct cr_case *cs, int bt, int op, int owner,
                                             int peer, size_t first, size_t n)
{
    struct cr_stream s = cr_stream_new(bt, n);
    s.base = first;
    cr_gen(cs, bt, op, owner, peer, first, n, s.d);
    return s;
}

static inline void cr_stream_free(struct cr_stream *s)
{
    free(s->d);
    free(s->f);
    s->d = NULL;
    s->f = NULL;
}

/* ---- serial reference of reductions ---------------------------------- */

static inline void cr_fget(int kind, const unsigned char *p, long double *re, long double *im)
{
    *im = 0;
    switch (kind) {
    case K_F: { float x; memcpy(&x, p, 4); *re = x; break; }
    case K_D: { double x; memcpy(&x, p, 8); *re = x; break; }
    case K_LD: { long double x = 0; memcpy(&x, p, (size_t)CR_LD_SIG); *re = x; break; }
    case K_CF: { float x[2]; memcpy(x, p, 8); *re = x[0]; *im = x[1]; break; }
    case K_CD: { double x[2]; memcpy(x, p, 16); *re = x[0]; *im = x[1]; break; }
    default: {
        long double x = 0, y = 0;
        memcpy(&x, p, (size_t)CR_LD_SIG);
        memcpy(&y, p + sizeof(long double), (size_t)CR_LD_SIG);
        *re = x;
        *im = y;
        break;
    }
    }
}

/* out = a op b for one element (a from the lower ranks). */
#define CR_INT_OP(T, U)                                                   \
    do {                                                                  \
        T x, y, z = 0;                                                    \
        memcpy(&x, a, sizeof x);                                          \
        memcpy(&y, b, sizeof y);                                          \
        switch (op) {                                                     \
        case O_MAX: z = x > y ? x : y; break;                             \
        case O_MIN: z = x < y ? x : y; break;                             \
        case O_SUM: z = (T)((U)x + (U)y); break;                          \
        case O_PROD: z = (T)((U)x * (U)y); break;                         \
        case O_LAND: z = (T)(x && y); break;                              \
        case O_LOR: z = (T)(x || y); break;                               \
        case O_LXOR: z = (T)(!x != !y); break;                            \
        case O_BAND: z = (T)(x & y); break;                               \
        case O_BOR: z = (T)(x | y); break;                                \
        case O_BXOR: z = (T)(x ^ y); break;                               \
        case O_UCOMM: z = (T)((U)x + (U)y + (U)x * (U)y); break;          \
        default: break;                                                   \
        }                                                                 \
        memcpy(out, &z, sizeof z);                                        \
    } while (0)

#define CR_PAIR_OP(P)                                                             \
    do {                                                                          \
        P x, y;                                                                   \
        memcpy(&x, a, sizeof x);                                                  \
        memcpy(&y, b, sizeof y);                                                  \
        int lt = x.v < y.v, eq = x.v == y.v;                                      \
        int takex = op == O_MINLOC ? lt || (eq && x.i < y.i)                      \
                                   : (!lt && !eq) || (eq && x.i < y.i);           \
        memcpy(out, takex ? a : b, sizeof x);                                     \
    } while (0)

static inline void cr_op1(int op, int kind, const unsigned char *a, const unsigned char *b,
                          unsigned char *out)
{
    switch (kind) {
    case K_I8: CR_INT_OP(int8_t, unsigned); break;
    case K_U8: case K_BYTE: case K_BOOL: CR_INT_OP(uint8_t, unsigned); break;
    case K_I16: CR_INT_OP(int16_t, unsigned); break;
    case K_U16: CR_INT_OP(uint16_t, unsigned); break;
    case K_I32: CR_INT_OP(int32_t, uint32_t); break;
    case K_U32: CR_INT_OP(uint32_t, uint32_t); break;
    case K_I64: CR_INT_OP(int64_t, uint64_t); break;
    case K_U64: CR_INT_OP(uint64_t, uint64_t); break;
    case K_F: case K_D: case K_LD: { /* MAX and MIN (sums and products: cr_fold) */
        long double x, y, im;
        cr_fget(kind, a, &x, &im);
        cr_fget(kind, b, &y, &im);
        int takea = op == O_MAX ? x > y : x < y;
        memcpy(out, takea ? a : b, cr_ki[kind].ext);
        break;
    }
    case K_FI: CR_PAIR_OP(struct cr_fi); break;
    case K_DI: CR_PAIR_OP(struct cr_di); break;
    case K_LI: CR_PAIR_OP(struct cr_li); break;
    case K_SI: CR_PAIR_OP(struct cr_si); break;
    case K_2I: CR_PAIR_OP(struct cr_2i); break;
    case K_LDI: {
        struct cr_ldi x, y;
        memset(&x, 0, sizeof x);
        memset(&y, 0, sizeof y);
        memcpy(&x.v, a, (size_t)CR_LD_SIG);
        memcpy(&x.i, a + offsetof(struct cr_ldi, i), 4);
        memcpy(&y.v, b, (size_t)CR_LD_SIG);
        memcpy(&y.i, b + offsetof(struct cr_ldi, i), 4);
        int lt = x.v < y.v, eq = x.v == y.v;
        int takex = op == O_MINLOC ? lt || (eq && x.i < y.i) : (!lt && !eq) || (eq && x.i < y.i);
        memcpy(out, takex ? a : b, sizeof x);
        break;
    }
    case K_MAT: { /* out = a * b, 2x2 row-major, mod 2^32 */
        uint32_t x[4], y[4], z[4];
        memcpy(x, a, 16);
        memcpy(y, b, 16);
        z[0] = x[0] * y[0] + x[1] * y[2];
        z[1] = x[0] * y[1] + x[1] * y[3];
        z[2] = x[2] * y[0] + x[3] * y[2];
        z[3] = x[2] * y[1] + x[3] * y[3];
        memcpy(out, z, 16);
        break;
    }
    default:
        break;
    }
}

/* Floating sums and products: the exact-ish result in long double and the
 * scale its rounding error is bounded by (sum of |x|, product of |x|). */
struct cr_fref {
    long double re, im, scale;
};

static inline int cr_is_fref(int op, int kind)
{
    return (op == O_SUM || op == O_PROD) &&
           (kind == K_F || kind == K_D || kind == K_LD || kind == K_CF || kind == K_CD ||
            kind == K_CLD);
}


static inline long double cr_eps(int kind)
{
    return kind == K_F || kind == K_CF ? FLT_EPSILON
           : kind == K_D || kind == K_CD ? DBL_EPSILON
                                         : LDBL_EPSILON;
}

/* acc = acc op x over a stream (first fold: acc holds the first rank's
 * data, `started` 0). */
static inline void cr_fold(int op, struct cr_stream *acc, const unsigned char *x, int started)
{
    for (size_t i = 0; i < acc->n; i++) {
        int kind = cr_kind_at(acc->bt, acc->base + i);
        unsigned char *a = acc->d + i * acc->slot;
        const unsigned char *b = x + i * acc->slot;
        if (cr_is_fref(op, kind)) {
            if (!acc->f) {
                acc->f = cr_alloc(acc->n * sizeof *acc->f);
                memset(acc->f, 0, acc->n * sizeof *acc->f);
            }
            struct cr_fref *f = &acc->f[i];
            long double re, im;
            cr_fget(kind, b, &re, &im);
            if (!started) {
                f->re = re;
                f->im = im;
                f->scale = fabsl(re) + fabsl(im);
            } else if (op == O_SUM) {
                f->re += re;
                f->im += im;
                f->scale += fabsl(re) + fabsl(im);
            } else {
                long double r2 = f->re * re - f->im * im, i2 = f->re * im + f->im * re;
                f->re = r2;
                f->im = i2;
                f->scale *= fabsl(re) + fabsl(im);
            }
            continue;
        }
        if (!started)
            memcpy(a, b, acc->slot);
        else
            cr_op1(op, kind, a, b, a);
    }
}

/* Reduction over comm ranks [r0, r1) of fields [first, first + n) of each
 * rank's input stream (owner r, peer `peer`). */
static inline struct cr_stream cr_ref_reduce(const struct cr_case *cs, int r0, int r1, int peer,
                                             size_t first, size_t n)
{
    struct cr_stream acc = cr_stream_new(cs->bt, n);
    acc.base = first;
    unsigned char *x = cr_alloc(n * acc.slot);
    for (int r = r0; r < r1; r++) {
        cr_gen(cs, cs->bt, cs->opi, r, peer, first, n, x);
        cr_fold(cs->opi, &acc, x, r > r0);
    }
    free(x);
    return acc;
}

/* ---- buffers ------------------------------------------------------------ */

/* A placement: count elements of layout L at disp bytes from the buffer
 * pointer, holding stream elements [first, first + count * L->k). label:
 * the rank whose block this is (-1: none). */
struct cr_place {
    const struct cr_layout *L;
    MPI_Aint count, disp;
    int label;
    size_t first;
};

static inline struct cr_place cr_pl(const struct cr_layout *L, MPI_Aint count, MPI_Aint disp,
                                    int label)
{
    return (struct cr_place){L, count, disp, label, 0};
}

#define CR_GUARD 64

/* raw: guard, the span the placements touch, guard; p: the buffer pointer. */
struct cr_buf {
    unsigned char *raw, *p;
    size_t len;
};

/* The sentinel repeats every 251 bytes (a prime, so a shifted copy of it
 * differs from it at every element size). */
#define CR_SPERIOD 251
static CR_HOT unsigned char cr_sentinel(size_t i)
{
    return (unsigned char)(0xa5 ^ ((i % CR_SPERIOD) * 0x3b));
}

static inline void cr_sentinel_fill(unsigned char *d, size_t len)
{
    size_t have = len < CR_SPERIOD ? len : CR_SPERIOD;
    for (size_t i = 0; i < have; i++)
        d[i] = cr_sentinel(i);
    while (have < len) { /* have stays a multiple of the period */
        size_t c = have <= len - have ? have : len - have;
        memcpy(d + have, d, c);
        have += c;
    }
}

static inline struct cr_buf cr_buf_make(const struct cr_place *pl, int npl)
{
    MPI_Aint lo = 0, hi = 0;
    int any = 0;
    for (int i = 0; i < npl; i++) {
        if (pl[i].count <= 0)
            continue;
        MPI_Aint a = pl[i].disp + pl[i].L->minoff;
        MPI_Aint b = pl[i].disp + (pl[i].count - 1) * pl[i].L->ext + pl[i].L->maxend;
        if (!any || a < lo)
            lo = a;
        if (!any || b > hi)
            hi = b;
        any = 1;
    }
    struct cr_buf b;
    b.len = (size_t)(hi - lo) + 2 * CR_GUARD;
    b.raw = cr_alloc(b.len);
    cr_sentinel_fill(b.raw, b.len);
    b.p = b.raw + CR_GUARD - lo;
    return b;
}

static inline void cr_buf_free(struct cr_buf *b)
{
    free(b->raw);
    b->raw = b->p = NULL;
}

static inline unsigned char *cr_buf_snap(const struct cr_buf *b)
{
    unsigned char *s = cr_alloc(b->len);
    memcpy(s, b->raw, b->len);
    return s;
}

/* Walks the basic elements of a placement in stream order: it.f is the
 * element's index in the placement, *at its offset in raw. */
struct cr_it {
    const struct cr_layout *L;
    MPI_Aint count, e, f;
    int j;
    size_t base;
};

static inline struct cr_it cr_it_begin(const struct cr_buf *b, const struct cr_place *pl)
{
    return (struct cr_it){pl->L, pl->count, 0, -1, 0, (size_t)((b->p - b->raw) + pl->disp)};
}

static CR_HOT int cr_it_next(struct cr_it *it, size_t *at, int *kind)
{
    if (it->e >= it->count)
        return 0;
    *at = it->base + (size_t)(it->e * it->L->ext + it->L->off[it->j]);
    *kind = cr_bt[it->L->bt[it->j]].kind;
    it->f++;
    if (++it->j == it->L->k) {
        it->j = 0;
        it->e++;
    }
    return 1;
}

/* Copies the value bytes of one element (fixed sizes inline). */
static CR_HOT void cr_copy_sig(unsigned char *d, const unsigned char *s, int kind)
{
    const struct cr_kinfo *ki = &cr_ki[kind];
    if (ki->nsig == 1 && ki->so[0] == 0) {
        switch (ki->sl[0]) {
        case 1: d[0] = s[0]; return;
        case 2: memcpy(d, s, 2); return;
        case 4: memcpy(d, s, 4); return;
        case 8: memcpy(d, s, 8); return;
        case 16: memcpy(d, s, 16); return;
        default: break;
        }
    }
    for (int r = 0; r < ki->nsig; r++)
        memcpy(d + ki->so[r], s + ki->so[r], ki->sl[r]);
}

/* Writes the value bytes of stream elements into the placement. */
static inline void cr_buf_put(struct cr_buf *b, const struct cr_place *pl,
                              const struct cr_stream *s)
{
    if (pl->L->dense) {
        memcpy(b->raw + (b->p - b->raw) + pl->disp, s->d + (pl->first - s->base) * s->slot,
               (size_t)(pl->count * pl->L->k) * s->slot);
        return;
    }
    size_t at;
    int kind;
    for (struct cr_it it = cr_it_begin(b, pl); cr_it_next(&it, &at, &kind);)
        cr_copy_sig(b->raw + at, s->d + (pl->first + (size_t)it.f - s->base) * s->slot, kind);
}

/* What a buffer must hold after the call: img where msk is 0; bytes with msk
 * 1 are not checked (padding, undefined results, floating values checked by
 * value instead). Same geometry as the buffer. */
struct cr_expect {
    unsigned char *img, *msk;
    size_t len;
};

static inline struct cr_expect cr_exp_make(const struct cr_buf *b)
{
    struct cr_expect e = {cr_alloc(b->len), cr_alloc(b->len), b->len};
    cr_sentinel_fill(e.img, b->len);
    memset(e.msk, 0, b->len);
    return e;
}

static inline void cr_exp_free(struct cr_expect *e)
{
    free(e->img);
    free(e->msk);
}

/* mode 0: exact value of s; 1: undefined (not checked); 2: floating value
 * checked against s->f by cr_check_float */
static inline void cr_exp_put(struct cr_expect *e, const struct cr_buf *b,
                              const struct cr_place *pl, const struct cr_stream *s, int mode)
{
    if (pl->L->dense && (mode != 2 || !s->f)) {
        size_t at = (size_t)((b->p - b->raw) + pl->disp), n = (size_t)(pl->count * pl->L->k);
        if (mode == 1)
            memset(e->msk + at, 1, n * s->slot);
        else
            memcpy(e->img + at, s->d + (pl->first - s->base) * s->slot, n * s->slot);
        return;
    }
    size_t at;
    int kind;
    for (struct cr_it it = cr_it_begin(b, pl); cr_it_next(&it, &at, &kind);) {
        const struct cr_kinfo *ki = &cr_ki[kind];
        int m = mode;
        if (m == 2 && !(s->f && cr_is_fref(O_SUM, kind)))
            m = 0;
        if (m == 0) {
            cr_copy_sig(e->img + at, s->d + (pl->first + (size_t)it.f - s->base) * s->slot,
                        kind);
            if (ki->nsig == 1 && ki->sl[0] == ki->ext)
                continue; /* no padding: msk stays 0 */
        }
        /* padding inside the element is not checked; a gapped kind's
         * padding is a hole of the type map and stays checked */
        if (!ki->gapped)
            memset(e->msk + at, 1, ki->ext);
        for (int r = 0; r < ki->nsig; r++)
            memset(e->msk + at + ki->so[r], m == 0 ? 0 : 1, ki->sl[r]);
    }
}

static inline void cr_fmt_val(char *o, size_t on, int kind, const unsigned char *p)
{
    long double re, im;
    int64_t iv;
    uint64_t uv;
    switch (kind) {
    case K_F: case K_D: case K_LD:
        cr_fget(kind, p, &re, &im);
        snprintf(o, on, "%.21Lg", re);
        return;
    case K_CF: case K_CD: case K_CLD:
        cr_fget(kind, p, &re, &im);
        snprintf(o, on, "(%.21Lg, %.21Lg)", re, im);
        return;
    case K_I8: { int8_t x; memcpy(&x, p, 1); iv = x; break; }
    case K_I16: { int16_t x; memcpy(&x, p, 2); iv = x; break; }
    case K_I32: { int32_t x; memcpy(&x, p, 4); iv = x; break; }
    case K_I64: { memcpy(&iv, p, 8); break; }
    case K_U8: case K_BOOL: case K_BYTE: case K_CHAR: uv = p[0]; goto unsig;
    case K_U16: { uint16_t x; memcpy(&x, p, 2); uv = x; goto unsig; }
    case K_U32: case K_WCHAR: { uint32_t x; memcpy(&x, p, 4); uv = x; goto unsig; }
    case K_U64: memcpy(&uv, p, 8); goto unsig;
    case K_MAT: {
        uint32_t x[4];
        memcpy(x, p, 16);
        snprintf(o, on, "[%u %u; %u %u]", x[0], x[1], x[2], x[3]);
        return;
    }
    default: {
        const struct cr_kinfo *ki = &cr_ki[kind];
        int i;
        memcpy(&i, p + ki->so[1], 4);
        long double v = 0;
        if (kind == K_FI) { float x; memcpy(&x, p, 4); v = x; }
        else if (kind == K_DI) { double x; memcpy(&x, p, 8); v = x; }
        else if (kind == K_LI) { long x; memcpy(&x, p, 8); v = x; }
        else if (kind == K_SI) { short x; memcpy(&x, p, 2); v = x; }
        else if (kind == K_2I) { int x; memcpy(&x, p, 4); v = x; }
        else memcpy(&v, p, (size_t)CR_LD_SIG);
        snprintf(o, on, "(value %Lg, index %d)", v, i);
        return;
    }
    }
    snprintf(o, on, "%lld", (long long)iv);
    return;
unsig:
    snprintf(o, on, "%llu (0x%llx)", (unsigned long long)uv, (unsigned long long)uv);
}

/* Where byte `at` of raw lies: "element f (rank r's block, its element e)" or
 * a gap. */
static inline void cr_locate(char *o, size_t on, const struct cr_buf *b, const struct cr_place *pl,
                             int npl, size_t at, int *fkind, size_t *fat)
{
    *fkind = -1;
    for (int i = 0; i < npl; i++) {
        size_t a;
        int kind;
        for (struct cr_it it = cr_it_begin(b, &pl[i]); cr_it_next(&it, &a, &kind);) {
            if (at >= a && at < a + cr_ki[kind].ext) {
                char lab[48] = "";
                if (pl[i].label >= 0)
                    snprintf(lab, sizeof lab, " of the block of rank %d", pl[i].label);
                snprintf(o, on, "element %ld%s (layout %s, type %s, byte %zu of it)",
                         (long)(pl[i].first + (size_t)it.f), lab, pl[i].L->name,
                         cr_bt[pl[i].L->bt[it.f % pl[i].L->k]].name, at - a);
                *fkind = kind;
                *fat = a;
                return;
            }
        }
    }
    long off = (long)at - (long)(b->p - b->raw);
    if (at < CR_GUARD || at >= b->len - CR_GUARD)
        snprintf(o, on, "guard byte at offset %ld from the buffer pointer (outside the data)",
                 off);
    else
        snprintf(o, on, "byte at offset %ld from the buffer pointer, in a gap of the datatype",
                 off);
}

/* Exact part of a check: the first byte that differs is reported with the
 * element it belongs to. Returns 1 if all equal. */
static inline int cr_check_exact(struct cr_case *cs, const char *what, const struct cr_buf *b,
                                 const struct cr_expect *e, const struct cr_place *pl, int npl)
{
    /* runs of checked bytes at a time; byte by byte only where they differ */
    for (size_t i = 0; i < b->len;) {
        const unsigned char *m = memchr(e->msk + i, 1, b->len - i);
        size_t end = m ? (size_t)(m - e->msk) : b->len;
        if (end > i && memcmp(b->raw + i, e->img + i, end - i)) {
            while (b->raw[i] == e->img[i])
                i++;
        } else {
            i = end;
            while (i < b->len && e->msk[i])
                i++;
            continue;
        }
        char where[256], gv[128] = "", ev[128] = "";
        int kind;
        size_t a;
        cr_locate(where, sizeof where, b, pl, npl, i, &kind, &a);
        if (kind >= 0) {
            cr_fmt_val(gv, sizeof gv, kind, b->raw + a);
            cr_fmt_val(ev, sizeof ev, kind, e->img + a);
            cr_fail(cs, "%s: first difference at %s: got %s, expected %s", what, where, gv, ev);
        } else {
            cr_fail(cs, "%s: first difference at %s: got 0x%02x, expected 0x%02x (untouched)",
                    what, where, b->raw[i], e->img[i]);
        }
        return 0;
    }
    return 1;
}

/* Floating sums and products of placement elements against the reference:
 * |got - ref| <= 4 (p + 1) eps scale (scale: sum or product of |inputs|). */
static inline int cr_check_float(struct cr_case *cs, const char *what, const struct cr_buf *b,
                                 const struct cr_place *pl, const struct cr_stream *s)
{
    if (!s->f)
        return 1;
    size_t at;
    int kind;
    for (struct cr_it it = cr_it_begin(b, pl); cr_it_next(&it, &at, &kind);) {
        MPI_Aint f = it.f;
        const struct cr_fref *r = &s->f[pl->first + (size_t)f - s->base];
        long double re, im;
        cr_fget(kind, b->raw + at, &re, &im);
        long double tol = 4 * (cs->p + 1) * cr_eps(kind) * r->scale;
        long double err = fabsl(re - r->re) + fabsl(im - r->im);
        if (!(err <= tol)) {
            char lab[48] = "", gv[128], rv[128];
            if (pl->label >= 0)
                snprintf(lab, sizeof lab, " of the block of rank %d", pl->label);
            if (kind == K_F || kind == K_D || kind == K_LD) {
                snprintf(gv, sizeof gv, "%.21Lg", re);
                snprintf(rv, sizeof rv, "%.21Lg", r->re);
            } else {
                snprintf(gv, sizeof gv, "(%.21Lg, %.21Lg)", re, im);
                snprintf(rv, sizeof rv, "(%.21Lg, %.21Lg)", r->re, r->im);
            }
            cr_fail(cs, "%s: first difference at element %ld%s (layout %s): got %s, reference %s, "
                        "error %Lg > tolerance %Lg", what, (long)(pl->first + (size_t)f), lab,
                    pl->L->name, gv, rv, err, tol);
            return 0;
        }
    }
    return 1;
}

/* Buffer must equal expected: exact bytes, gaps, guards, then floats. */
static inline int cr_check(struct cr_case *cs, const char *what, const struct cr_buf *b,
                           const struct cr_expect *e, const struct cr_place *pl, int npl,
                           const struct cr_stream *const *fs)
{
    int ok = cr_check_exact(cs, what, b, e, pl, npl);
    if (fs)
        for (int i = 0; i < npl && ok; i++)
            if (fs[i])
                ok = cr_check_float(cs, what, b, &pl[i], fs[i]);
    return ok;
}

/* An input buffer must be left as it was. */
static inline int cr_check_same(struct cr_case *cs, const char *what, const struct cr_buf *b,
                                const unsigned char *snap, const struct cr_place *pl, int npl)
{
    if (!memcmp(b->raw, snap, b->len))
        return 1;
    for (size_t i = 0; i < b->len; i++) {
        if (b->raw[i] == snap[i])
            continue;
        char where[256];
        int kind;
        size_t a;
        cr_locate(where, sizeof where, b, pl, npl, i, &kind, &a);
        cr_fail(cs, "%s was modified: first difference at %s: byte 0x%02x, was 0x%02x", what,
                where, b->raw[i], snap[i]);
        return 0;
    }
    return 1;
}

/* Value bytes of the placements' elements, packed (for bitwise comparisons
 * of results between repetitions and ranks). */
static inline unsigned char *cr_sig_pack(const struct cr_buf *b, const struct cr_place *pl, int npl,
                                         size_t slot, size_t *n)
{
    size_t tot = 0;
    for (int i = 0; i < npl; i++)
        tot += (size_t)(pl[i].count * pl[i].L->k);
    unsigned char *o = cr_alloc(tot * slot);
    memset(o, 0, tot * slot);
    size_t at = 0;
    for (int i = 0; i < npl; i++) {
        size_t a, n = (size_t)(pl[i].count * pl[i].L->k);
        int kind;
        if (pl[i].L->dense) {
            memcpy(o + at * slot, b->p + pl[i].disp, n * slot);
            at += n;
            continue;
        }
        for (struct cr_it it = cr_it_begin(b, &pl[i]); cr_it_next(&it, &a, &kind); at++)
            cr_copy_sig(o + at * slot, b->raw + a, kind);
    }
    *n = tot;
    return o;
}

static inline long cr_first_diff(const unsigned char *a, const unsigned char *b, size_t n,
                                 size_t slot)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(a + i * slot, b + i * slot, slot))
            return (long)i;
    return -1;
}

/* Reproducibility: the same call on the same data gives the same bits. */
static inline void cr_check_repeat(struct cr_case *cs, const unsigned char *first,
                                   const unsigned char *second, size_t n, int bt)
{
    size_t slot = cr_slot(bt);
    long d = cr_first_diff(first, second, n, slot);
    if (d >= 0) {
        char a[128], b[128];
        cr_fmt_val(a, sizeof a, cr_kind_at(bt, (size_t)d), first + (size_t)d * slot);
        cr_fmt_val(b, sizeof b, cr_kind_at(bt, (size_t)d), second + (size_t)d * slot);
        cr_fail(cs, "not reproducible: repeating the call changed result element %ld from %s to %s",
                d, a, b);
    }
}

/* Every rank of cs->comm has the same result bits (point-to-point only):
 * hashes go to rank 0, ranks whose hash differs send their result there, and
 * rank 0 names the first differing element. */
static inline void cr_check_same_on_all(struct cr_case *cs, const unsigned char *res, size_t n,
                                        int bt)
{
    size_t slot = cr_slot(bt);
    uint64_t h = 0x1234;
    for (size_t i = 0; i < n * slot; i += 8) {
        uint64_t w = 0;
        memcpy(&w, res + i, n * slot - i < 8 ? n * slot - i : 8);
        h = cr_mix(h ^ w);
    }
    uint64_t *hs = cr_alloc((size_t)cs->p * sizeof *hs);
    enum { TAG_H = 9001, TAG_D, TAG_V };
    if (cs->me == 0) {
        hs[0] = h;
        for (int r = 1; r < cs->p; r++)
            CR_OK(MPI_Recv(&hs[r], 1, MPI_UINT64_T, r, TAG_H, cs->comm, MPI_STATUS_IGNORE));
    } else {
        CR_OK(MPI_Send(&h, 1, MPI_UINT64_T, 0, TAG_H, cs->comm));
    }
    for (int r = 1; r < cs->p; r++) {
        if (cs->me == 0)
            CR_OK(MPI_Send(&h, 1, MPI_UINT64_T, r, TAG_V, cs->comm));
        else if (cs->me == r)
            CR_OK(MPI_Recv(&hs[0], 1, MPI_UINT64_T, 0, TAG_V, cs->comm, MPI_STATUS_IGNORE));
    }
    if (cs->me != 0) {
        if (hs[0] != h)
            CR_OK(MPI_Send(res, (int)(n * slot), MPI_BYTE, 0, TAG_D, cs->comm));
    } else {
        unsigned char *o = cr_alloc(n * slot);
        for (int r = 1; r < cs->p; r++) {
            if (hs[r] == h)
                continue;
            CR_OK(MPI_Recv(o, (int)(n * slot), MPI_BYTE, r, TAG_D, cs->comm, MPI_STATUS_IGNORE));
            long d = cr_first_diff(res, o, n, slot);
            char a[128] = "?", b[128] = "?";
            if (d >= 0) {
                cr_fmt_val(a, sizeof a, cr_kind_at(bt, (size_t)d), res + (size_t)d * slot);
                cr_fmt_val(b, sizeof b, cr_kind_at(bt, (size_t)d), o + (size_t)d * slot);
            }
            cr_fail(cs, "results differ between ranks: rank 0 and rank %d first differ at "
                        "element %ld: %s on rank 0, %s on rank %d", r, d, a, b, r);
        }
        free(o);
    }
    free(hs);
}

/* ---- user operations ------------------------------------------------------ */

/* The user functions work on the layout of the case (G.ufn_lay), whose
 * datatype they must be given (MPI-3.1 5.9.5): a derived type with gaps
 * reaches them as it is. */
static inline void cr_user_apply(int op, void *in, void *inout, int len, MPI_Datatype dt)
{
    const struct cr_layout *L = G.ufn_lay;
    if (!L || dt != L->dt) {
        G.ufn_baddt = 1;
        return;
    }
    for (int i = 0; i < len; i++)
        for (int j = 0; j < L->k; j++) {
            MPI_Aint o = i * L->ext + L->off[j];
            cr_op1(op, cr_bt[L->bt[j]].kind, (unsigned char *)in + o,
                   (unsigned char *)inout + o, (unsigned char *)inout + o);
        }
}

static void cr_ucomm_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    cr_user_apply(O_UCOMM, in, inout, *len, *dt);
}

/* inout = in * inout: in holds the lower ranks' part (MPI-3.1 5.9.5) */
static void cr_unonc_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    cr_user_apply(O_UNONC, in, inout, *len, *dt);
}


/* ---- helpers of the collectives ------------------------------------------ */

/* Elements one rank sends another in a v or w form: U * m, m in
 * [0, 2 cnt], and now and then none. Key (a, b): the pair it is for. */
static inline size_t cr_vn(const struct cr_case *cs, int a, int b, int U)
{
    struct cr_rng r = {cr_hash(cs->seed, 0x7c, (uint64_t)a, (uint64_t)b)};
    if (cr_below(&r, 5) == 0)
        return 0;
    return (size_t)U * cr_below(&r, 2 * (uint64_t)cs->cnt + 1);
}

static inline void cr_perm(struct cr_rng *r, int *perm, int n)
{
    for (int i = 0; i < n; i++)
        perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)cr_below(r, (uint64_t)i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

/* Blocks of cnt[i] elements of L, block i for rank i, in a random order
 * with random gaps; displ[i] in units of L's extent (the v forms). */
static inline void cr_blocks(const struct cr_case *cs, uint64_t salt, int nb,
                             const struct cr_layout *L, const MPI_Aint *cnt, int *displ,
                             struct cr_place *pl)
{
    struct cr_rng r = {cr_hash(cs->seed, salt, (uint64_t)cs->me, 0xb10c)};
    int *perm = cr_alloc((size_t)nb * sizeof *perm);
    cr_perm(&r, perm, nb);
    MPI_Aint cur = 0;
    for (int q = 0; q < nb; q++) {
        int i = perm[q];
        cur += (MPI_Aint)cr_below(&r, 3);
        displ[i] = (int)cur;
        pl[i] = cr_pl(L, cnt[i], cur * L->ext, i);
        cur += cnt[i];
    }
    free(perm);
}

/* The same with a layout per block and byte displacements (alltoallw). */
static inline void cr_wblocks(const struct cr_case *cs, uint64_t salt, int nb,
                              const struct cr_layout *const *L, const MPI_Aint *cnt, int *bdispl,
                              struct cr_place *pl)
{
    struct cr_rng r = {cr_hash(cs->seed, salt, (uint64_t)cs->me, 0xb10d)};
    int *perm = cr_alloc((size_t)nb * sizeof *perm);
    cr_perm(&r, perm, nb);
    MPI_Aint cur = 0;
    for (int q = 0; q < nb; q++) {
        int i = perm[q];
        MPI_Aint d = cur - L[i]->minoff;
        d += ((-d) % 16 + 16) % 16 + 16 * (MPI_Aint)cr_below(&r, 2);
        bdispl[i] = (int)d;
        pl[i] = cr_pl(L[i], cnt[i], d, i);
        if (cnt[i] > 0)
            cur = d + (cnt[i] - 1) * L[i]->ext + L[i]->maxend;
    }
    free(perm);
}

static inline double cr_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- the driver ------------------------------------------------------------ */

static inline uint64_t cr_strhash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Value of dimension d (of `size` values) for this case: each cycle of
 * `size` consecutive cases takes every value once, in a random order (one
 * per job size, so the ctest runs at different sizes cover different
 * values). */
enum { D_OP, D_FAM, D_MIX, D_CNT, D_ROOT, D_INPL };
#define CR_LARGE_MAX 140000
static inline int cr_dim(const struct cr_case *cs, int d, int size)
{
    if (size <= 1)
        return 0;
    int perm[64];
    struct cr_rng r = {cr_hash(G.o.seed ^ ((uint64_t)G.wsize << 32), cr_strhash(cs->co->name),
                               (uint64_t)(d * 16 + cs->ck), (uint64_t)(cs->idx / size))};
    cr_perm(&r, perm, size);
    return perm[cs->idx % size];
}

static inline void cr_setup(struct cr_case *cs)
{
    int fl = cs->co->flags;
    uint64_t ch = cr_strhash(cs->co->name);
    cs->seed = cr_hash(G.o.seed, ch, (uint64_t)(cs->ck * 64 + G.color[cs->ck]), (uint64_t)cs->idx);
    struct cr_rng r = {cr_hash(cs->seed, 1, 2, 3)};
    cs->opi = -1;
    cs->op = MPI_OP_NULL;
    cs->bt = G.bt_int;
    if (fl & F_RED) {
        cs->opi = cr_dim(cs, D_OP, NOPS);
        int cls[NCLS], nc = 0;
        for (int c = 0; c < NCLS; c++)
            if (cr_opcls[cs->opi] & CB(c))
                cls[nc++] = c;
        int c = cls[cr_below(&r, (uint64_t)nc)];
        int bts[NBT], nb = 0;
        for (int b = 0; b < NBT; b++)
            if (cr_bt[b].cls == c)
                bts[nb++] = b;
        cs->bt = bts[cr_below(&r, (uint64_t)nb)];
        static const MPI_Op builtin[O_UCOMM] = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND,
                                                MPI_BAND, MPI_LOR, MPI_BOR, MPI_LXOR, MPI_BXOR,
                                                MPI_MINLOC, MPI_MAXLOC};
        cs->op = cs->opi < O_UCOMM ? builtin[cs->opi] : G.uop[cs->opi - O_UCOMM];
    } else if (!(fl & F_NOCOUNT)) {
        int bts[NBT + 1], nb = 0;
        for (int b = 0; b < NBT; b++)
            if (cr_bt[b].cls < CL_UCOMM)
                bts[nb++] = b;
        bts[nb++] = BT_HET;
        cs->bt = bts[cr_dim(cs, D_FAM, nb)];
    }
    /* Reductions need the same datatype everywhere, so no mixed layouts;
     * predefined ops are defined on predefined types only (MPI-3.1 5.9.2),
     * derived types are for user ops. */
    cs->mix = cr_dim(cs, D_MIX, NT_HOMOG + !(fl & F_RED));
    cs->mixed = cs->mix == NT_HOMOG;
    if ((fl & F_RED) && cs->opi < O_UCOMM)
        cs->mix = T_BASIC;
    cs->U = cr_unit_of(cs->bt, cs->mix, cs->mixed);
    int c = G.o.counts[cr_dim(cs, D_CNT, G.o.ncounts)];
    if (c < 0) {
        /* large: -L bytes, at most CR_LARGE_MAX elements (so byte types stay
         * cheap to check), split over the blocks */
        size_t n = G.o.lbytes / cr_slot(cs->bt);
        if (n > CR_LARGE_MAX)
            n = CR_LARGE_MAX;
        n /= (size_t)(fl & F_BLOCKS ? cs->p : 1);
        c = (int)(n / (size_t)cs->U);
        if (c < 1)
            c = 1;
    }
    cs->cnt = c;
    cs->n = (size_t)c * (size_t)cs->U;
    cs->root = fl & F_ROOT ? cr_dim(cs, D_ROOT, cs->p) : -1;
    cs->inplace = fl & F_INPLACE ? cr_dim(cs, D_INPL, 2) : 0;
    cs->nullarg = fl & F_NULLARG ? (int)cr_below(&r, 2) : 0;
    cs->fails = 0;

    char ty[160] = "", ro[32] = "";
    if (!(fl & F_NOCOUNT)) {
        const char *lay = cs->mixed ? "a layout per rank and side"
                          : cs->bt == BT_HET ? cr_hname[cs->mix % NT_HET]
                                             : cr_tname[cs->mix];
        snprintf(ty, sizeof ty, ", %s%s, layout %s%s%s, count %d (%zu basic elements)",
                 cs->bt == BT_HET ? "struct {int, double, char, short}" : cr_bt[cs->bt].name,
                 fl & F_V ? " (counts vary per rank)" : "", lay, cs->opi >= 0 ? ", op " : "",
                 cs->opi >= 0 ? cr_opname[cs->opi] : "", cs->cnt, cs->n);
    }
    if (cs->root >= 0)
        snprintf(ro, sizeof ro, ", root %d", cs->root);
    G.desclen = (size_t)snprintf(G.desc, sizeof G.desc,
                                 "%s case %ld on %s (%d ranks)%s%s%s%s, seed %llu", cs->co->fn,
                                 cs->idx, cr_ckname[cs->ck], cs->p, ty, ro,
                                 cs->inplace ? ", MPI_IN_PLACE" : "",
                                 cs->nullarg ? ", unused arguments NULL" : "",
                                 (unsigned long long)G.o.seed);
    if (G.desclen >= sizeof G.desc)
        G.desclen = sizeof G.desc - 1;
}

/* Sum of v over MPI_COMM_WORLD, on the private communicator. */
static inline long cr_agree(long v)
{
    enum { TAG_UP = 9100, TAG_DOWN };
    if (G.wrank == 0) {
        for (int r = 1; r < G.wsize; r++) {
            long x;
            CR_OK(MPI_Recv(&x, 1, MPI_LONG, r, TAG_UP, G.ctl, MPI_STATUS_IGNORE));
            v += x;
        }
        for (int r = 1; r < G.wsize; r++)
            CR_OK(MPI_Send(&v, 1, MPI_LONG, r, TAG_DOWN, G.ctl));
    } else {
        CR_OK(MPI_Send(&v, 1, MPI_LONG, 0, TAG_UP, G.ctl));
        CR_OK(MPI_Recv(&v, 1, MPI_LONG, 0, TAG_DOWN, G.ctl, MPI_STATUS_IGNORE));
    }
    return v;
}

static void cr_on_alarm(int sig)
{
    (void)sig;
    ssize_t rc = write(2, G.alarm_msg, G.alarm_len);
    rc = write(2, G.desc, G.desclen);
    rc = write(2, "\n", 1);
    (void)rc;
    _exit(3);
}

static inline void cr_usage(void)
{
    cr_say("usage: %s [-c COLLS] [-m COMMS] [-n COUNTS] [-r CASES] [-k CASE] [-s SEED]\n"
           "          [-L BYTES] [-t SECONDS] [-f FAILS] [-v]\n"
           "  -c  collectives, comma list (a trailing * matches a prefix, ^name leaves one\n"
           "      out; default all)\n"
           "  -m  communicators: world,self,split,shuffle (default all)\n"
           "  -n  counts, comma list; L = large: -L bytes (default 1100000, at most 140000\n"
           "      elements) per rank, split over the blocks of the collectives that have one\n"
           "      block per rank; default 0,1,7,100,3000,L\n"
           "  -r  cases per collective on world (split r/2, shuffle r/3, self r/4; default 3)\n"
           "  -k  run only case K (to reproduce a failure)\n"
           "  -s  seed (default 1)    -t  seconds without progress before giving up (60)\n"
           "  -f  stop after this many failing cases (default 1)    -v  print every case\n",
           G.prog);
}

/* -c: names, `pre*` for a prefix, `^name` to leave one out (a list of
 * only exclusions starts from all). */
static inline int cr_selected(const char *name)
{
    char buf[sizeof G.o.colls];
    snprintf(buf, sizeof buf, "%s", G.o.colls);
    int pos = 0, hit = 0, out = 0;
    char *save = NULL;
    for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        int neg = *w == '^';
        w += neg;
        size_t l = strlen(w);
        int m = l && w[l - 1] == '*' ? !strncmp(w, name, l - 1) : !strcmp(w, name);
        if (neg) {
            out |= m;
        } else {
            pos = 1;
            hit |= m;
        }
    }
    return !out && (!pos || hit);
}

static inline void cr_opts(int argc, char **argv, const struct coll_test *t, int nt)
{
    struct cr_opts *o = &G.o;
    o->seed = 1;
    o->kcase = -1;
    o->cases = 3; /* the trimmed set ctest runs; coll_matrix.sh asks for more */
    o->comms = (1 << NCK) - 1;
    o->lbytes = 1100000; /* above the 1 MiB of vmpi's largest switch (ring allreduce) */
    o->timeout = 60;
    o->maxfail = 1;
    static const int defc[] = {0, 1, 7, 100, 3000, -1};
    memcpy(o->counts, defc, sizeof defc);
    o->ncounts = 6;
    int c;
    while ((c = getopt(argc, argv, "c:m:n:r:k:s:L:t:f:vh")) != -1) {
        switch (c) {
        case 'c':
            snprintf(o->colls, sizeof o->colls, "%s", optarg);
            break;
        case 'm': {
            o->comms = 0;
            char *save = NULL;
            for (char *w = strtok_r(optarg, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
                int k = 0;
                while (k < NCK && strcmp(w, cr_ckname[k]))
                    k++;
                if (k == NCK) {
                    if (G.wrank == 0)
                        cr_usage();
                    MPI_Finalize();
                    exit(2);
                }
                o->comms |= 1 << k;
            }
            break;
        }
        case 'n': {
            o->ncounts = 0;
            char *save = NULL;
            for (char *w = strtok_r(optarg, ",", &save); w && o->ncounts < 16;
                 w = strtok_r(NULL, ",", &save))
                o->counts[o->ncounts++] = !strcmp(w, "L") ? -1 : atoi(w);
            break;
        }
        case 'r': o->cases = atoi(optarg); break;
        case 'k': o->kcase = atol(optarg); break;
        case 's': o->seed = strtoull(optarg, NULL, 0); break;
        case 'L': o->lbytes = strtoull(optarg, NULL, 0); break;
        case 't': o->timeout = atoi(optarg); break;
        case 'f': o->maxfail = atoi(optarg); break;
        case 'v': o->verbose = 1; break;
        default:
            if (G.wrank == 0)
                cr_usage();
            MPI_Finalize();
            exit(c == 'h' ? 0 : 2);
        }
    }
    int any = 0;
    for (int i = 0; i < nt; i++)
        any |= cr_selected(t[i].name);
    if (!any || o->ncounts == 0 || o->cases < 1) {
        if (G.wrank == 0) {
            cr_say("%s: nothing selected; collectives:", G.prog);
            for (int i = 0; i < nt; i++)
                cr_say(" %s", t[i].name);
            cr_say("\n");
        }
        MPI_Finalize();
        exit(2);
    }
}

static inline void cr_init(void)
{
    CR_OK(MPI_Comm_rank(MPI_COMM_WORLD, &G.wrank));
    CR_OK(MPI_Comm_size(MPI_COMM_WORLD, &G.wsize));
    CR_OK(MPI_Comm_dup(MPI_COMM_WORLD, &G.ctl));
    for (int b = 0; b < NBT; b++) {
        if (cr_bt[b].dt == MPI_INT && cr_bt[b].cls == CL_INT)
            G.bt_int = b;
        if (cr_bt[b].dt == MPI_DOUBLE)
            G.bt_double = b;
        if (cr_bt[b].dt == MPI_CHAR)
            G.bt_char = b;
        if (cr_bt[b].dt == MPI_SHORT)
            G.bt_short = b;
        if (cr_bt[b].dt == MPI_SHORT_INT)
            G.bt_shortint = b;
    }
    /* the comms under test */
    G.comm[CK_WORLD] = MPI_COMM_WORLD;
    G.comm[CK_SELF] = MPI_COMM_SELF;
    /* odd and even world ranks, in reverse order: non-contiguous, and the
     * reduction order (comm rank order) is not world order */
    G.color[CK_SPLIT] = G.wrank % 2;
    CR_OK(MPI_Comm_split(MPI_COMM_WORLD, G.color[CK_SPLIT], G.wsize - G.wrank,
                         &G.comm[CK_SPLIT]));
    /* all ranks in a random order (node leaders are not the low ranks) */
    struct cr_rng r = {cr_hash(G.o.seed, 77, 77, 77)};
    int *perm = cr_alloc((size_t)G.wsize * sizeof *perm);
    cr_perm(&r, perm, G.wsize);
    CR_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, perm[G.wrank], &G.comm[CK_SHUFFLE]));
    free(perm);
    for (int k = 0; k < NCK; k++)
        CR_OK(MPI_Comm_set_errhandler(G.comm[k], MPI_ERRORS_RETURN));

    /* the user operations and the type of the non-commutative one */
    MPI_Datatype c4;
    CR_OK(MPI_Type_contiguous(4, MPI_UNSIGNED, &c4));
    for (int b = 0; b < NBT; b++)
        if (cr_bt[b].cls == CL_UNONC) {
            CR_OK(MPI_Type_create_resized(c4, 0, CR_MAT_EXT, &cr_bt[b].dt));
            CR_OK(MPI_Type_commit(&cr_bt[b].dt));
        }
    CR_OK(MPI_Type_free(&c4));
    CR_OK(MPI_Op_create(cr_ucomm_fn, 1, &G.uop[0]));
    CR_OK(MPI_Op_create(cr_unonc_fn, 0, &G.uop[1]));

    G.alarm_len = (size_t)snprintf(G.alarm_msg, sizeof G.alarm_msg,
                                   "TIMEOUT: world rank %d made no progress in ", G.wrank);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = cr_on_alarm;
    sigaction(SIGALRM, &sa, NULL);
}

static inline void cr_fini(void)
{
    for (int b = 0; b < NBT; b++) {
        for (int t = 0; t < NT_HOMOG; t++)
            if (G.lay[b][t].name && t != T_BASIC)
                CR_OK(MPI_Type_free(&G.lay[b][t].dt));
        if (cr_bt[b].cls == CL_UNONC)
            CR_OK(MPI_Type_free(&cr_bt[b].dt));
    }
    for (int t = 0; t < NT_HET; t++)
        if (G.het[t].name)
            CR_OK(MPI_Type_free(&G.het[t].dt));
    for (int i = 0; i < 2; i++) {
        CR_OK(MPI_Op_free(&G.uop[i]));
        if (G.uop[i] != MPI_OP_NULL)
            cr_die("MPI_Op_free did not set the handle to MPI_OP_NULL");
    }
    CR_OK(MPI_Comm_free(&G.comm[CK_SPLIT]));
    CR_OK(MPI_Comm_free(&G.comm[CK_SHUFFLE]));
    CR_OK(MPI_Comm_free(&G.ctl));
}

static inline void cr_repro(const struct cr_case *cs)
{
    extern char **environ;
    char env[512] = "";
    for (char **e = environ; *e; e++)
        if (!strncmp(*e, "VMPI_COLL_", 10) || !strncmp(*e, "VMPI_CHANNELS=", 14)) {
            strncat(env, "-x ", sizeof env - strlen(env) - 1);
            strncat(env, *e, sizeof env - strlen(env) - 1);
            strncat(env, " ", sizeof env - strlen(env) - 1);
        }
    char counts[128] = "";
    for (int i = 0; i < G.o.ncounts; i++) {
        size_t l = strlen(counts);
        if (G.o.counts[i] < 0)
            snprintf(counts + l, sizeof counts - l, "%sL", i ? "," : "");
        else
            snprintf(counts + l, sizeof counts - l, "%s%d", i ? "," : "", G.o.counts[i]);
    }
    cr_say("reproduce with: vmpirun -n %d [same --hosts/--vms] %s%s -s %llu -n %s -L %zu -c %s "
           "-m %s -k %ld\n", G.wsize, env, G.prog, (unsigned long long)G.o.seed, counts,
           G.o.lbytes, cs->co->name, cr_ckname[cs->ck], cs->idx);
}

static inline int cr_main(int argc, char **argv, const struct coll_test *tests, int nt)
{
    MPI_Init(&argc, &argv);
    G.prog = argv[0];
    CR_OK(MPI_Comm_rank(MPI_COMM_WORLD, &G.wrank));
    cr_opts(argc, argv, tests, nt);
    cr_init();
    int stop = 0;
    for (int i = 0; i < nt && !stop; i++) {
        const struct coll_test *co = &tests[i];
        if (!cr_selected(co->name))
            continue;
        long per = 0;
        for (int ck = 0; ck < NCK && !stop; ck++) {
            if (!(G.o.comms & (1 << ck)) || ((co->flags & F_LOCAL) && ck != CK_WORLD))
                continue;
            static const int div[NCK] = {1, 4, 2, 3};
            long n = G.o.cases / div[ck];
            if (n < 1)
                n = 1;
            long first = 0;
            if (G.o.kcase >= 0) { /* just that one */
                first = G.o.kcase;
                n = first + 1;
            }
            for (long idx = first; idx < n && !stop; idx++) {
                struct cr_case cs;
                memset(&cs, 0, sizeof cs);
                cs.co = co;
                cs.ck = ck;
                cs.idx = idx;
                cs.comm = G.comm[ck];
                CR_OK(MPI_Comm_size(cs.comm, &cs.p));
                CR_OK(MPI_Comm_rank(cs.comm, &cs.me));
                cr_setup(&cs);
                if (G.o.verbose && G.wrank == 0)
                    cr_say("%s\n", G.desc);
                G.ufn_baddt = 0;
                alarm((unsigned)G.o.timeout);
                co->run(&cs);
                if (G.ufn_baddt)
                    cr_fail(&cs, "the user function was called with a datatype other than the "
                                 "one passed to %s", co->fn);
                alarm(0);
                G.ncases++;
                per++;
                if (cr_agree(cs.fails > 0)) {
                    G.nfailed++;
                    /* the failing ranks have printed; wait for them before
                     * the hint, so it comes last */
                    cr_agree(0);
                    if (G.wrank == 0)
                        cr_repro(&cs);
                    if (G.nfailed >= G.o.maxfail)
                        stop = 1;
                }
            }
        }
        if (G.o.verbose && G.wrank == 0)
            cr_say("%s: %ld cases\n", co->fn, per);
    }
    cr_fini();
    if (G.wrank == 0)
        cr_say("%s: %d ranks, seed %llu: %ld cases, %ld failed\n", G.prog, G.wsize,
               (unsigned long long)G.o.seed, G.ncases, G.nfailed);
    MPI_Finalize();
    return G.nfailed ? 1 : 0;
}

#endif
