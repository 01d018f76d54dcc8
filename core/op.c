/* Reduction operations: the predefined ones (MPI-3.1 5.9.2) -- which op is
 * defined on which type, and the kernels that apply them -- and user
 * operations (MPI_Op_create, 5.9.5).
 *
 * Kernels load and store through memcpy, so a buffer at any alignment (a
 * packed stream, an hindexed block at an odd address) is fine, and the
 * compiler still turns each loop into plain vector loads. Signed sums and
 * products are computed in the unsigned type: overflow wraps instead of
 * being undefined. */
#include "dtype_impl.h"

#include <assert.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__)
/* GCC's -O2 cost model leaves loops with a run-time trip count scalar;
 * these loops are the arithmetic of every reduction. */
#pragma GCC optimize("vect-cost-model=dynamic")
#endif

/* The kinds below map MPI types onto fixed-width C types (LP64, as the
 * MPICH ABI this library follows). */
static_assert(sizeof(short) == 2 && sizeof(int) == 4 && sizeof(long) == 8 &&
                  sizeof(long long) == 8 && sizeof(_Bool) == 1,
              "LP64 integer sizes");
static_assert(sizeof(MPI_Aint) == 8 && sizeof(MPI_Offset) == 8 && sizeof(MPI_Count) == 8,
              "64-bit MPI integers");

#define OPI(op) ((uint32_t)(op) & 0xffu) /* MPI_MAX 1 ... MPI_NO_OP 14 */
#define NOPS (OPI(MPI_NO_OP) + 1)

/* ---- element-wise kernels ---------------------------------------------- */

typedef void kern_fn(const void *restrict in, void *restrict io, size_t n);

/* io[i] = in[i] op io[i], as the expression of a (in) and b (io). */
#define KERNEL(name, T, expr)                                                   \
    static void name(const void *restrict in_, void *restrict io_, size_t n)   \
    {                                                                           \
        const unsigned char *in = in_;                                          \
        unsigned char *io = io_;                                                \
        for (size_t i = 0; i < n; i++) {                                        \
            T a, b;                                                             \
            memcpy(&a, in + i * sizeof(T), sizeof(T));                          \
            memcpy(&b, io + i * sizeof(T), sizeof(T));                          \
            b = (expr);                                                         \
            memcpy(io + i * sizeof(T), &b, sizeof(T));                          \
        }                                                                       \
    }

/* U: the unsigned type the arithmetic is done in (no promotion to int). */
#define INT_KERNELS(s, T, U)                       \
    KERNEL(max_##s, T, a > b ? a : b)              \
    KERNEL(min_##s, T, a < b ? a : b)              \
    KERNEL(sum_##s, T, (T)((U)a + (U)b))           \
    KERNEL(prod_##s, T, (T)((U)a * (U)b))          \
    KERNEL(land_##s, T, (T)(a && b))               \
    KERNEL(lor_##s, T, (T)(a || b))                \
    KERNEL(lxor_##s, T, (T)(!a != !b))             \
    KERNEL(band_##s, T, (T)(a & b))                \
    KERNEL(bor_##s, T, (T)(a | b))                 \
    KERNEL(bxor_##s, T, (T)(a ^ b))

#define FLOAT_KERNELS(s, T)                        \
    KERNEL(max_##s, T, a > b ? a : b)              \
    KERNEL(min_##s, T, a < b ? a : b)              \
    KERNEL(sum_##s, T, a + b)                      \
    KERNEL(prod_##s, T, a * b)

#define COMPLEX_KERNELS(s, T)                      \
    KERNEL(sum_##s, T, a + b)                      \
    KERNEL(prod_##s, T, a * b)

INT_KERNELS(i8, int8_t, unsigned)
INT_KERNELS(u8, uint8_t, unsigned)
INT_KERNELS(i16, int16_t, unsigned)
INT_KERNELS(u16, uint16_t, unsigned)
INT_KERNELS(i32, int32_t, uint32_t)
INT_KERNELS(u32, uint32_t, uint32_t)
INT_KERNELS(i64, int64_t, uint64_t)
INT_KERNELS(u64, uint64_t, uint64_t)
FLOAT_KERNELS(f, float)
FLOAT_KERNELS(d, double)
FLOAT_KERNELS(ld, long double)
FLOAT_KERNELS(q, vmpi_real16)
COMPLEX_KERNELS(cf, float _Complex)
COMPLEX_KERNELS(cd, double _Complex)
COMPLEX_KERNELS(cld, long double _Complex)
COMPLEX_KERNELS(cq, vmpi_complex32)

/* MPI_REPLACE: the data of in, byte for byte. */
static void copy_bytes(const void *restrict in, void *restrict io, size_t n)
{
    memcpy(io, in, n);
}

/* Machine kinds: the C type a kernel works on. */
enum { MK_I8, MK_U8, MK_I16, MK_U16, MK_I32, MK_U32, MK_I64, MK_U64,
       MK_F, MK_D, MK_LD, MK_Q, MK_CF, MK_CD, MK_CLD, MK_CQ, NMK };

static const size_t mk_size[NMK] = {
    1, 1, 2, 2, 4, 4, 8, 8, sizeof(float), sizeof(double), sizeof(long double),
    sizeof(vmpi_real16), sizeof(float _Complex), sizeof(double _Complex),
    sizeof(long double _Complex), sizeof(vmpi_complex32),
};

#define INT_ROW(s)                                                             \
    { [OPI(MPI_MAX)] = max_##s, [OPI(MPI_MIN)] = min_##s,                      \
      [OPI(MPI_SUM)] = sum_##s, [OPI(MPI_PROD)] = prod_##s,                    \
      [OPI(MPI_LAND)] = land_##s, [OPI(MPI_LOR)] = lor_##s,                    \
      [OPI(MPI_LXOR)] = lxor_##s, [OPI(MPI_BAND)] = band_##s,                  \
      [OPI(MPI_BOR)] = bor_##s, [OPI(MPI_BXOR)] = bxor_##s }
#define FLOAT_ROW(s)                                                           \
    { [OPI(MPI_MAX)] = max_##s, [OPI(MPI_MIN)] = min_##s,                      \
      [OPI(MPI_SUM)] = sum_##s, [OPI(MPI_PROD)] = prod_##s }
#define COMPLEX_ROW(s) { [OPI(MPI_SUM)] = sum_##s, [OPI(MPI_PROD)] = prod_##s }

static kern_fn *const kernel[NMK][NOPS] = {
    [MK_I8] = INT_ROW(i8), [MK_U8] = INT_ROW(u8), [MK_I16] = INT_ROW(i16),
    [MK_U16] = INT_ROW(u16), [MK_I32] = INT_ROW(i32), [MK_U32] = INT_ROW(u32),
    [MK_I64] = INT_ROW(i64), [MK_U64] = INT_ROW(u64),
    [MK_F] = FLOAT_ROW(f), [MK_D] = FLOAT_ROW(d), [MK_LD] = FLOAT_ROW(ld),
    [MK_Q] = FLOAT_ROW(q), [MK_CF] = COMPLEX_ROW(cf), [MK_CD] = COMPLEX_ROW(cd),
    [MK_CLD] = COMPLEX_ROW(cld), [MK_CQ] = COMPLEX_ROW(cq),
};

/* ---- MINLOC / MAXLOC ----------------------------------------------------- */

/* n pairs, `stride` bytes apart, value at 0 and index at ioff (an int, or
 * of the value's type for the Fortran pairs). On equal values the smaller
 * index wins (MPI-3.1 5.9.4). */
typedef void pair_fn(const void *restrict in, void *restrict io, size_t n, size_t stride,
                     size_t ioff);

#define PAIR_KERNEL(name, V, I, better)                                         \
    static void name(const void *restrict in_, void *restrict io_, size_t n,   \
                     size_t stride, size_t ioff)                                \
    {                                                                           \
        const unsigned char *in = in_;                                          \
        unsigned char *io = io_;                                                \
        for (size_t k = 0; k < n; k++) {                                        \
            const unsigned char *p = in + k * stride;                           \
            unsigned char *q = io + k * stride;                                 \
            V a, b;                                                             \
            I ai, bi;                                                           \
            memcpy(&a, p, sizeof a);                                            \
            memcpy(&b, q, sizeof b);                                            \
            memcpy(&ai, p + ioff, sizeof ai);                                   \
            memcpy(&bi, q + ioff, sizeof bi);                                   \
            if (a better b) {                                                   \
                memcpy(q, &a, sizeof a);                                        \
                memcpy(q + ioff, &ai, sizeof ai);                               \
            } else if (a == b && ai < bi) {                                     \
                memcpy(q + ioff, &ai, sizeof ai);                               \
            }                                                                   \
        }                                                                       \
    }

#define PAIR_KERNELS(s, V, I)            \
    PAIR_KERNEL(minloc_##s, V, I, <)     \
    PAIR_KERNEL(maxloc_##s, V, I, >)

PAIR_KERNELS(fi, float, int)
PAIR_KERNELS(di, double, int)
PAIR_KERNELS(li, long, int)
PAIR_KERNELS(si, short, int)
PAIR_KERNELS(2i, int, int)
PAIR_KERNELS(ldi, long double, int)
PAIR_KERNELS(2r, float, float)
PAIR_KERNELS(2d, double, double)

enum { PK_FI, PK_DI, PK_LI, PK_SI, PK_2I, PK_LDI, PK_2R, PK_2D, NPK };

static const struct pair_info {
    pair_fn *minloc, *maxloc;
    size_t vsize; /* value bytes; the packed form puts the index right after */
    size_t isize; /* index bytes */
    size_t ioff;  /* the index's offset in the C struct (the builtin layout) */
} pairs[NPK] = {
#define PI(k, s, V, S) \
    [k] = { minloc_##s, maxloc_##s, sizeof(V), sizeof(((struct S *)0)->i), offsetof(struct S, i) }
    PI(PK_FI, fi, float, vmpi_minloc_fi),    PI(PK_DI, di, double, vmpi_minloc_di),
    PI(PK_LI, li, long, vmpi_minloc_li),     PI(PK_SI, si, short, vmpi_minloc_si),
    PI(PK_2I, 2i, int, vmpi_minloc_2i),      PI(PK_LDI, ldi, long double, vmpi_minloc_ldi),
    PI(PK_2R, 2r, float, vmpi_minloc_2r),    PI(PK_2D, 2d, double, vmpi_minloc_2d),
#undef PI
};

/* ---- which op on which type ---------------------------------------------- */

/* MPI-3.1 5.9.2 type groups; ML are the multi-language MPI_AINT, MPI_OFFSET,
 * MPI_COUNT; FINT the Fortran integers. */
enum { G_NONE, G_CINT, G_ML, G_FLOAT, G_LOGICAL, G_COMPLEX, G_BYTE, G_PAIR, G_FINT };
#define GB(g) (1u << (g))

static const unsigned allowed[NOPS] = {
    [OPI(MPI_MAX)] = GB(G_CINT) | GB(G_FINT) | GB(G_ML) | GB(G_FLOAT),
    [OPI(MPI_MIN)] = GB(G_CINT) | GB(G_FINT) | GB(G_ML) | GB(G_FLOAT),
    [OPI(MPI_SUM)] = GB(G_CINT) | GB(G_FINT) | GB(G_ML) | GB(G_FLOAT) | GB(G_COMPLEX),
    [OPI(MPI_PROD)] = GB(G_CINT) | GB(G_FINT) | GB(G_ML) | GB(G_FLOAT) | GB(G_COMPLEX),
    [OPI(MPI_LAND)] = GB(G_CINT) | GB(G_LOGICAL),
    [OPI(MPI_LOR)] = GB(G_CINT) | GB(G_LOGICAL),
    [OPI(MPI_LXOR)] = GB(G_CINT) | GB(G_LOGICAL),
    [OPI(MPI_BAND)] = GB(G_CINT) | GB(G_FINT) | GB(G_ML) | GB(G_BYTE),
    [OPI(MPI_BOR)] = GB(G_CINT) | GB(G_FINT) | GB(G_ML) | GB(G_BYTE),
    [OPI(MPI_BXOR)] = GB(G_CINT) | GB(G_FINT) | GB(G_ML) | GB(G_BYTE),
    [OPI(MPI_MINLOC)] = GB(G_PAIR),
    [OPI(MPI_MAXLOC)] = GB(G_PAIR),
};

struct tinfo {
    unsigned char grp;
    unsigned char k; /* MK_ kind, or PK_ kind for G_PAIR */
};

static struct tinfo tinfo_of(MPI_Datatype t)
{
    switch (t) {
    /* MPICH also reduces MPI_CHAR as an integer; binaries built against it
     * rely on that, so it is accepted here too. */
    case MPI_CHAR: return (struct tinfo){ G_CINT, CHAR_MIN < 0 ? MK_I8 : MK_U8 };
    case MPI_SIGNED_CHAR: case MPI_INT8_T: return (struct tinfo){ G_CINT, MK_I8 };
    case MPI_UNSIGNED_CHAR: case MPI_UINT8_T: return (struct tinfo){ G_CINT, MK_U8 };
    case MPI_SHORT: case MPI_INT16_T: return (struct tinfo){ G_CINT, MK_I16 };
    case MPI_UNSIGNED_SHORT: case MPI_UINT16_T: return (struct tinfo){ G_CINT, MK_U16 };
    case MPI_INT: case MPI_INT32_T: return (struct tinfo){ G_CINT, MK_I32 };
    case MPI_UNSIGNED: case MPI_UINT32_T: return (struct tinfo){ G_CINT, MK_U32 };
    case MPI_LONG: case MPI_LONG_LONG_INT: case MPI_INT64_T:
        return (struct tinfo){ G_CINT, MK_I64 };
    case MPI_UNSIGNED_LONG: case MPI_UNSIGNED_LONG_LONG: case MPI_UINT64_T:
        return (struct tinfo){ G_CINT, MK_U64 };
    case MPI_AINT: case MPI_OFFSET: case MPI_COUNT: return (struct tinfo){ G_ML, MK_I64 };
    case MPI_INTEGER1: return (struct tinfo){ G_FINT, MK_I8 };
    case MPI_INTEGER2: return (struct tinfo){ G_FINT, MK_I16 };
    case MPI_INTEGER: case MPI_INTEGER4: return (struct tinfo){ G_FINT, MK_I32 };
    case MPI_INTEGER8: return (struct tinfo){ G_FINT, MK_I64 };
    case MPI_FLOAT: case MPI_REAL: case MPI_REAL4: return (struct tinfo){ G_FLOAT, MK_F };
    case MPI_DOUBLE: case MPI_DOUBLE_PRECISION: case MPI_REAL8:
        return (struct tinfo){ G_FLOAT, MK_D };
    case MPI_LONG_DOUBLE: return (struct tinfo){ G_FLOAT, MK_LD };
    case MPI_REAL16: return (struct tinfo){ G_FLOAT, MK_Q };
    /* _Bool is one byte holding 0 or 1: the logical byte kernels apply; a
     * gfortran LOGICAL is an int, .TRUE. 1, and they give 0 or 1 too. */
    case MPI_C_BOOL: case MPI_CXX_BOOL: return (struct tinfo){ G_LOGICAL, MK_U8 };
    case MPI_LOGICAL: return (struct tinfo){ G_LOGICAL, MK_I32 };
    case MPI_C_FLOAT_COMPLEX: case MPI_CXX_FLOAT_COMPLEX: case MPI_COMPLEX: case MPI_COMPLEX8:
        return (struct tinfo){ G_COMPLEX, MK_CF };
    case MPI_C_DOUBLE_COMPLEX: case MPI_CXX_DOUBLE_COMPLEX: case MPI_DOUBLE_COMPLEX:
    case MPI_COMPLEX16:
        return (struct tinfo){ G_COMPLEX, MK_CD };
    case MPI_C_LONG_DOUBLE_COMPLEX: case MPI_CXX_LONG_DOUBLE_COMPLEX:
        return (struct tinfo){ G_COMPLEX, MK_CLD };
    case MPI_COMPLEX32: return (struct tinfo){ G_COMPLEX, MK_CQ };
    case MPI_BYTE: return (struct tinfo){ G_BYTE, MK_U8 };
    case MPI_FLOAT_INT: return (struct tinfo){ G_PAIR, PK_FI };
    case MPI_DOUBLE_INT: return (struct tinfo){ G_PAIR, PK_DI };
    case MPI_LONG_INT: return (struct tinfo){ G_PAIR, PK_LI };
    case MPI_SHORT_INT: return (struct tinfo){ G_PAIR, PK_SI };
    case MPI_2INT: case MPI_2INTEGER: return (struct tinfo){ G_PAIR, PK_2I };
    case MPI_2REAL: return (struct tinfo){ G_PAIR, PK_2R };
    case MPI_2DOUBLE_PRECISION: return (struct tinfo){ G_PAIR, PK_2D };
    case MPI_LONG_DOUBLE_INT: return (struct tinfo){ G_PAIR, PK_LDI };
    default: return (struct tinfo){ G_NONE, 0 };
    }
}

static uint32_t op_index(MPI_Op op)
{
    bool ok = VMPI_HKIND(op) == VMPI_HK_BUILTIN && VMPI_HTYPE(op) == VMPI_OBJ_OP &&
              VMPI_HINDEX(op) >= OPI(MPI_MAX) && VMPI_HINDEX(op) <= OPI(MPI_NO_OP);
    return ok ? VMPI_HINDEX(op) : 0;
}

/* ---- user operations ------------------------------------------------------
 * A user op lives in a handle table (indirect kind). MPI_Op_free only marks
 * it freed: the handle is then invalid for the user, but its slot -- and so
 * the handle value -- stays taken until the last reference is dropped, so a
 * pending operation holding the handle (vmpi_op_retain) can still apply it
 * and the value is not handed to a new op meanwhile. */
struct user_op {
    MPI_User_function *fn;
    bool commute;
    bool freed;
    int refs; /* the user's handle until freed, plus one per pending operation */
};

static struct vmpi_htab user_ops;

/* The op behind a user handle, freed or not; NULL for anything else. */
static struct user_op *user_op(MPI_Op op)
{
    if (VMPI_HKIND(op) != VMPI_HK_INDIRECT || VMPI_HTYPE(op) != VMPI_OBJ_OP)
        return NULL;
    return vmpi_htab_get(&user_ops, VMPI_HINDEX(op));
}

int vmpi_op_create(MPI_User_function *fn, bool commute, MPI_Op *out)
{
    struct user_op *u = malloc(sizeof *u);
    uint32_t idx;
    if (!u || vmpi_htab_add(&user_ops, u, &idx) != 0) {
        free(u);
        return MPI_ERR_NO_MEM;
    }
    *u = (struct user_op){ .fn = fn, .commute = commute, .refs = 1 };
    *out = VMPI_HMAKE(VMPI_HK_INDIRECT, VMPI_OBJ_OP, idx);
    return MPI_SUCCESS;
}

bool vmpi_op_is_user(MPI_Op op)
{
    struct user_op *u = user_op(op);
    return u && !u->freed;
}

void vmpi_op_retain(MPI_Op op)
{
    struct user_op *u = user_op(op);
    if (u)
        u->refs++;
}

void vmpi_op_release(MPI_Op op)
{
    struct user_op *u = user_op(op);
    if (u && --u->refs == 0) {
        vmpi_htab_del(&user_ops, VMPI_HINDEX(op));
        free(u);
    }
}

int vmpi_op_free(MPI_Op op)
{
    struct user_op *u = user_op(op);
    if (!u || u->freed)
        return MPI_ERR_OP;
    u->freed = true;
    vmpi_op_release(op);
    return MPI_SUCCESS;
}

bool vmpi_op_commutative(MPI_Op op)
{
    struct user_op *u = user_op(op);
    if (u)
        return u->commute;
    /* REPLACE keeps its left operand and NO_OP its right one. */
    uint32_t i = op_index(op);
    return i != OPI(MPI_REPLACE) && i != OPI(MPI_NO_OP);
}

/* ---- checking -------------------------------------------------------------- */

int vmpi_op_check(MPI_Op op, const struct vmpi_dtype *dt)
{
    /* A user op is defined on whatever the user gives it. */
    if (user_op(op))
        return vmpi_op_is_user(op) ? MPI_SUCCESS : MPI_ERR_OP;
    uint32_t i = op_index(op);
    if (!i)
        return MPI_ERR_OP;
    /* REPLACE and NO_OP (one-sided accumulate) apply to any type, and a type
     * without data gives an op nothing to be undefined on. */
    if (i == OPI(MPI_REPLACE) || i == OPI(MPI_NO_OP) || dt->basic == 0)
        return MPI_SUCCESS;
    return allowed[i] & GB(tinfo_of(dt->basic).grp) ? MPI_SUCCESS : MPI_ERR_OP;
}

/* ---- applying ---------------------------------------------------------- */

/* Runs k over every run of count elements: one call for a contiguous type,
 * else one per run (every run holds whole esize elements). */
static void run(kern_fn *k, size_t esize, const void *in, void *io, MPI_Count count,
                const struct vmpi_dtype *dt)
{
    if (dt->contig) {
        k(vmpi_dtype_addr(in, dt->true_lb), vmpi_dtype_addr(io, dt->true_lb),
          (size_t)count * (size_t)dt->size / esize);
        return;
    }
    MPI_Aint ext = vmpi_dtype_ext(dt);
    for (MPI_Count c = 0; c < count; c++) {
        for (size_t i = 0; i < dt->nblk; i++) {
            const struct vmpi_dblk *b = &dt->blk[i];
            for (MPI_Aint j = 0; j < b->rep; j++) {
                MPI_Aint off = c * ext + b->off + j * b->stride;
                k(vmpi_dtype_addr(in, off), vmpi_dtype_addr(io, off), (size_t)(b->len / esize));
            }
        }
    }
}

/* A derived type's runs may split a pair between value and index, so a
 * non-contiguous one goes through the packed stream, where pair j sits at
 * j * (vsize + isize) with its index right after the value. */
static void run_pairs(pair_fn *f, const struct pair_info *pi, const void *in, void *io,
                      MPI_Count count, const struct vmpi_dtype *dt)
{
    size_t psize = pi->vsize + pi->isize;
    if (dt->builtin) {
        f(in, io, (size_t)count, (size_t)vmpi_dtype_ext(dt), pi->ioff);
        return;
    }
    if (dt->contig) {
        f(vmpi_dtype_addr(in, dt->true_lb), vmpi_dtype_addr(io, dt->true_lb),
          (size_t)count * (size_t)dt->size / psize, psize, pi->vsize);
        return;
    }
    unsigned char tin[4096], tio[4096];
    size_t chunk = sizeof tin / psize * psize, total = (size_t)count * (size_t)dt->size;
    for (size_t off = 0; off < total; off += chunk) {
        size_t n = vmpi_dtype_pack(tin, in, count, dt, off, chunk);
        vmpi_dtype_pack(tio, io, count, dt, off, chunk);
        f(tin, tio, n / psize, psize, pi->vsize);
        vmpi_dtype_unpack(io, count, dt, off, tio, n);
    }
}

/* The user function takes an int count: larger counts go in pieces, each
 * starting count elements (extents) further on. It gets copies of the count
 * and handle, since it may write through both pointers. */
static void apply_user(const struct user_op *u, const void *in, void *inout, MPI_Count count,
                       const struct vmpi_dtype *dt)
{
    MPI_Aint ext = vmpi_dtype_ext(dt);
    for (MPI_Count done = 0, n; done < count; done += n) {
        n = count - done > INT_MAX ? INT_MAX : count - done;
        int len = (int)n;
        MPI_Datatype h = dt->handle;
        u->fn(vmpi_dtype_addr(in, done * ext), vmpi_dtype_addr(inout, done * ext), &len, &h);
    }
}

void vmpi_op_apply(MPI_Op op, const void *in, void *inout, MPI_Count count,
                   const struct vmpi_dtype *dt)
{
    uint32_t i = op_index(op);
    if (i == OPI(MPI_NO_OP) || count <= 0 || dt->size == 0)
        return;
    struct user_op *u = user_op(op);
    if (u) {
        apply_user(u, in, inout, count, dt);
        return;
    }
    if (i == OPI(MPI_REPLACE)) {
        run(copy_bytes, 1, in, inout, count, dt);
        return;
    }
    if (vmpi_op_check(op, dt) != MPI_SUCCESS)
        vmpi_fatal("vmpi_op_apply: op 0x%x is not defined on datatype 0x%x "
                   "(callers must vmpi_op_check first)", (unsigned)op, (unsigned)dt->handle);
    struct tinfo ti = tinfo_of(dt->basic);
    if (ti.grp == G_PAIR) {
        const struct pair_info *pi = &pairs[ti.k];
        run_pairs(i == OPI(MPI_MINLOC) ? pi->minloc : pi->maxloc, pi, in, inout, count, dt);
        return;
    }
    run(kernel[ti.k][i], mk_size[ti.k], in, inout, count, dt);
}
