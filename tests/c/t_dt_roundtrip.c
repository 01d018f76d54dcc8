/* np: 2 */
/* env: VMPI_SMP_CMA=1 */
/* env: VMPI_SMP_CMA=0 */
/* net: ofi h2 */
/* vms: v2 v4 h2v2 v2net v2iv */
/* Non-contiguous datatypes through point-to-point, checked byte by byte
 * against a reference computed here, element by element, from the MPI
 * type-map rules (MPI-3.1 4.1): vector, hvector, indexed, indexed_block
 * (unordered displacements), hindexed (negative displacement), struct with
 * gaps and mixed types (padding rule), resized (negative lb), and nested
 * types (vector of struct, hvector of indexed). Each message is sent with
 * one type and received with another of the same type signature, both
 * small (eager) and large (> 1 MiB of data, rendezvous), in both
 * directions. Bytes the receive type does not cover must stay untouched.
 * Also: lb/extent/size/true extent of each type against the model,
 * Get_count/Get_elements (including a partial last element), and
 * Pack/Unpack/Pack_size round trips, also through MPI_PACKED messages. */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#include "t_check.h"

/* The communicator of this rank's pair (t_pair_comm). */
static MPI_Comm tw;

/* ---- the reference model: a type map as a list of basic elements --------- */

struct ent {
    long off;
    int sz;
};

struct model {
    struct ent *e;
    long n, cap;
    long lb, ub;   /* bounds (extent = ub - lb) */
    int align;     /* largest alignment of the basic types inside */
    int placed;
};

static long ext(const struct model *m)
{
    return m->ub - m->lb;
}

static void m_init(struct model *m)
{
    memset(m, 0, sizeof *m);
    m->align = 1;
}

static void m_push(struct model *m, long off, int sz)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 16;
        m->e = realloc(m->e, (size_t)m->cap * sizeof *m->e);
        CHECK(m->e, "realloc");
    }
    m->e[m->n].off = off;
    m->e[m->n].sz = sz;
    m->n++;
}

/* Places a copy of t at displacement d (its type map shifted, its bounds
 * contributing to the new bounds). */
static void m_place(struct model *m, const struct model *t, long d)
{
    for (long i = 0; i < t->n; i++)
        m_push(m, t->e[i].off + d, t->e[i].sz);
    if (!m->placed || d + t->lb < m->lb)
        m->lb = d + t->lb;
    if (!m->placed || d + t->ub > m->ub)
        m->ub = d + t->ub;
    if (t->align > m->align)
        m->align = t->align;
    m->placed = 1;
}

static struct model m_basic(int sz)
{
    struct model m;
    m_init(&m);
    m_push(&m, 0, sz);
    m.lb = 0;
    m.ub = sz;
    m.align = sz;
    m.placed = 1;
    return m;
}

static struct model m_contig(int count, const struct model *t)
{
    struct model m;
    m_init(&m);
    for (int i = 0; i < count; i++)
        m_place(&m, t, i * ext(t));
    return m;
}

static struct model m_vector(int count, int bl, int stride, const struct model *t)
{
    struct model m;
    m_init(&m);
    for (int i = 0; i < count; i++)
        for (int j = 0; j < bl; j++)
            m_place(&m, t, ((long)i * stride + j) * ext(t));
    return m;
}

static struct model m_hvector(int count, int bl, long stride, const struct model *t)
{
    struct model m;
    m_init(&m);
    for (int i = 0; i < count; i++)
        for (int j = 0; j < bl; j++)
            m_place(&m, t, (long)i * stride + j * ext(t));
    return m;
}

static struct model m_indexed(int count, const int *bl, const int *disp, const struct model *t)
{
    struct model m;
    m_init(&m);
    for (int i = 0; i < count; i++)
        for (int j = 0; j < bl[i]; j++)
            m_place(&m, t, ((long)disp[i] + j) * ext(t));
    return m;
}

static struct model m_hindexed(int count, const int *bl, const MPI_Aint *disp,
                               const struct model *t)
{
    struct model m;
    m_init(&m);
    for (int i = 0; i < count; i++)
        for (int j = 0; j < bl[i]; j++)
            m_place(&m, t, disp[i] + j * ext(t));
    return m;
}

static struct model m_struct(int count, const int *bl, const MPI_Aint *disp,
                             struct model *const *t)
{
    struct model m;
    m_init(&m);
    for (int i = 0; i < count; i++)
        for (int j = 0; j < bl[i]; j++)
            m_place(&m, t[i], disp[i] + j * ext(t[i]));
    /* MPI-3.1 4.1.6: the extent is padded up to the largest alignment. */
    long e = ext(&m);
    if (e % m.align)
        m.ub += m.align - e % m.align;
    return m;
}

static struct model m_resized(const struct model *t, long lb, long extent)
{
    struct model m;
    m_init(&m);
    m_place(&m, t, 0);
    m.lb = lb;
    m.ub = lb + extent;
    return m;
}

static long m_size(const struct model *m)
{
    long s = 0;
    for (long i = 0; i < m->n; i++)
        s += m->e[i].sz;
    return s;
}

static void m_true(const struct model *m, long *tlb, long *tub)
{
    *tlb = m->e[0].off;
    *tub = m->e[0].off + m->e[0].sz;
    for (long i = 1; i < m->n; i++) {
        if (m->e[i].off < *tlb)
            *tlb = m->e[i].off;
        if (m->e[i].off + m->e[i].sz > *tub)
            *tub = m->e[i].off + m->e[i].sz;
    }
}

/* A datatype and its model. */
struct ty {
    const char *name;
    MPI_Datatype h;
    struct model m;
};

static void check_type(const struct ty *t)
{
    MPI_Aint lb, extent, tlb, textent;
    int sz;
    long mtlb, mtub;
    OK(MPI_Type_get_extent(t->h, &lb, &extent));
    OK(MPI_Type_size(t->h, &sz));
    OK(MPI_Type_get_true_extent(t->h, &tlb, &textent));
    m_true(&t->m, &mtlb, &mtub);
    CHECK(lb == t->m.lb && extent == ext(&t->m), "%s: lb %ld extent %ld, model says %ld %ld",
          t->name, (long)lb, (long)extent, t->m.lb, ext(&t->m));
    CHECK(sz == m_size(&t->m), "%s: size %d, model says %ld", t->name, sz, m_size(&t->m));
    CHECK(tlb == mtlb && textent == mtub - mtlb, "%s: true lb %ld extent %ld, model %ld %ld",
          t->name, (long)tlb, (long)textent, mtlb, mtub - mtlb);
}

/* ---- buffers ---------------------------------------------------------------- */

/* Memory for count instances of t: [lo, hi) relative to the buffer pointer. */
static void span(const struct model *m, long count, long *lo, long *hi)
{
    long tlb, tub;
    m_true(m, &tlb, &tub);
    *lo = tlb;
    *hi = (count - 1) * ext(m) + tub;
}

struct buf {
    unsigned char *mem;
    long lo, hi;
    unsigned char *base; /* the pointer handed to MPI */
};

static void buf_alloc(struct buf *b, const struct model *m, long count)
{
    span(m, count, &b->lo, &b->hi);
    b->mem = malloc((size_t)(b->hi - b->lo) + 1);
    CHECK(b->mem, "malloc %ld", b->hi - b->lo);
    b->base = b->mem - b->lo;
}

static unsigned char src_byte(int seed, long pos)
{
    uint32_t x = (uint32_t)pos * 2654435761u + (uint32_t)seed * 0x9e3779b9u;
    x ^= x >> 16;
    x *= 0x7feb352du;
    return (unsigned char)(x >> 24);
}

static unsigned char dst_byte(long pos)
{
    return (unsigned char)(0xe0 ^ (pos & 0x1f));
}

/* The packed stream of count instances of m in buf, as the model sees it. */
static unsigned char *model_pack(const struct buf *b, const struct model *m, long count,
                                 long *len)
{
    *len = m_size(m) * count;
    unsigned char *s = malloc((size_t)*len + 1);
    CHECK(s, "malloc");
    long k = 0;
    for (long i = 0; i < count; i++)
        for (long j = 0; j < m->n; j++) {
            memcpy(s + k, b->base + i * ext(m) + m->e[j].off, (size_t)m->e[j].sz);
            k += m->e[j].sz;
        }
    return s;
}

/* What the receive buffer must hold after receiving stream s. */
static void model_unpack(unsigned char *out, long lo, const struct model *m, long count,
                         const unsigned char *s, long len)
{
    long k = 0;
    for (long i = 0; i < count && k < len; i++)
        for (long j = 0; j < m->n && k < len; j++) {
            long n = m->e[j].sz < len - k ? m->e[j].sz : len - k;
            memcpy(out + (i * ext(m) + m->e[j].off - lo), s + k, (size_t)n);
            k += n;
        }
}

static void compare(const struct buf *b, const unsigned char *want, const char *what)
{
    for (long p = b->lo; p < b->hi; p++)
        CHECK(b->base[p] == want[p - b->lo], "%s: byte at offset %ld is %#x, want %#x%s", what,
              p, b->base[p], want[p - b->lo],
              want[p - b->lo] == dst_byte(p) ? " (a byte outside the type map was written)"
                                             : "");
}

/* ---- the round trip ----------------------------------------------------------- */

static int ncases;

/* from sends cs instances of S, to receives cr instances of R. */
static void roundtrip(const struct ty *S, long cs, const struct ty *R, long cr, int from,
                      int seed)
{
    char what[200];
    long ssz = m_size(&S->m), rsz = m_size(&R->m);
    CHECK(ssz * cs <= rsz * cr, "test bug: %s x %ld does not fit %s x %ld", S->name, cs,
          R->name, cr);
    snprintf(what, sizeof what, "%s x %ld -> %s x %ld (%ld bytes, rank %d -> %d)", S->name, cs,
             R->name, cr, ssz * cs, from, 1 - from);
    ncases++;
    struct buf sb;
    buf_alloc(&sb, &S->m, cs);
    for (long p = sb.lo; p < sb.hi; p++)
        sb.base[p] = src_byte(seed, p);
    long len;
    unsigned char *stream = model_pack(&sb, &S->m, cs, &len);
    if (rank == from) {
        OK(MPI_Send(sb.base, (int)cs, S->h, 1 - from, seed, tw));
    } else {
        struct buf rb;
        buf_alloc(&rb, &R->m, cr);
        for (long p = rb.lo; p < rb.hi; p++)
            rb.base[p] = dst_byte(p);
        unsigned char *want = malloc((size_t)(rb.hi - rb.lo) + 1);
        CHECK(want, "malloc");
        memcpy(want, rb.mem, (size_t)(rb.hi - rb.lo));
        model_unpack(want, rb.lo, &R->m, cr, stream, len);
        MPI_Status st;
        OK(MPI_Recv(rb.base, (int)cr, R->h, from, seed, tw, &st));
        compare(&rb, want, what);
        int cnt, el;
        OK(MPI_Get_count(&st, R->h, &cnt));
        OK(MPI_Get_elements(&st, R->h, &el));
        if (len % rsz == 0)
            CHECK(cnt == len / rsz, "%s: Get_count %d, want %ld", what, cnt, len / rsz);
        else
            CHECK(cnt == MPI_UNDEFINED, "%s: Get_count %d for a partial element", what, cnt);
        CHECK(el == S->m.n * cs, "%s: Get_elements %d, want %ld", what, el, S->m.n * cs);
        free(want);
        free(rb.mem);
    }
    free(stream);
    free(sb.mem);
}

/* Pack with S, unpack with R (locally), and the same through an MPI_PACKED
 * message. */
static void packtrip(const struct ty *S, long cs, const struct ty *R, long cr, int seed)
{
    char what[200];
    snprintf(what, sizeof what, "Pack %s x %ld / Unpack %s x %ld", S->name, cs, R->name, cr);
    struct buf sb, rb;
    buf_alloc(&sb, &S->m, cs);
    buf_alloc(&rb, &R->m, cr);
    for (long p = sb.lo; p < sb.hi; p++)
        sb.base[p] = src_byte(seed, p);
    long len;
    unsigned char *stream = model_pack(&sb, &S->m, cs, &len);
    int psz, isz;
    OK(MPI_Pack_size((int)cs, S->h, tw, &psz));
    OK(MPI_Pack_size(1, MPI_INT, tw, &isz));
    CHECK(psz >= len, "%s: Pack_size %d < %ld data bytes", what, psz, len);
    int total = psz + isz + isz;
    unsigned char *pk = malloc((size_t)total);
    CHECK(pk, "malloc");
    int pos = 0, marker = 0x12345678 + seed, tail = -seed;
    OK(MPI_Pack(&marker, 1, MPI_INT, pk, total, &pos, tw));
    int p1 = pos;
    OK(MPI_Pack(sb.base, (int)cs, S->h, pk, total, &pos, tw));
    CHECK(pos - p1 <= psz && pos - p1 >= len, "%s: Pack advanced %d bytes (size %d, data %ld)",
          what, pos - p1, psz, len);
    OK(MPI_Pack(&tail, 1, MPI_INT, pk, total, &pos, tw));
    int used = pos;

    for (int via_msg = 0; via_msg < 2; via_msg++) {
        unsigned char *in = pk;
        int insz = used;
        if (via_msg) {
            /* rank 0 sends its packed buffer as MPI_PACKED; rank 1 unpacks */
            if (rank == 0) {
                OK(MPI_Send(pk, used, MPI_PACKED, 1, 900 + seed, tw));
                break;
            }
            MPI_Status st;
            in = malloc((size_t)total);
            CHECK(in, "malloc");
            OK(MPI_Recv(in, total, MPI_PACKED, 0, 900 + seed, tw, &st));
            OK(MPI_Get_count(&st, MPI_PACKED, &insz));
            CHECK(insz == used, "%s: MPI_PACKED message of %d bytes, want %d", what, insz, used);
        }
        for (long p = rb.lo; p < rb.hi; p++)
            rb.base[p] = dst_byte(p);
        unsigned char *want = malloc((size_t)(rb.hi - rb.lo) + 1);
        CHECK(want, "malloc");
        memcpy(want, rb.mem, (size_t)(rb.hi - rb.lo));
        model_unpack(want, rb.lo, &R->m, cr, stream, len);
        int m2 = 0, t2 = 0;
        pos = 0;
        OK(MPI_Unpack(in, insz, &pos, &m2, 1, MPI_INT, tw));
        CHECK(m2 == marker, "%s: leading int %#x, want %#x", what, m2, marker);
        OK(MPI_Unpack(in, insz, &pos, rb.base, (int)cr, R->h, tw));
        OK(MPI_Unpack(in, insz, &pos, &t2, 1, MPI_INT, tw));
        CHECK(t2 == tail, "%s: trailing int %d, want %d", what, t2, tail);
        CHECK(pos == insz, "%s: Unpack consumed %d of %d bytes", what, pos, insz);
        compare(&rb, want, what);
        free(want);
        if (via_msg)
            free(in);
    }
    free(pk);
    free(stream);
    free(sb.mem);
    free(rb.mem);
}

/* ---- the types ----------------------------------------------------------------- */

struct A {
    char c;
    double d[2];
    int i;
    short s;
};

static struct ty make(const char *name, MPI_Datatype h, struct model m)
{
    struct ty t = {name, h, m};
    OK(MPI_Type_commit(&t.h));
    check_type(&t);
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tw = t_pair_comm();
    MPI_Comm_rank(tw, &rank);
    MPI_Comm_size(tw, &size);
    CHECK(size == 2, "needs 2 ranks");

    struct model mi = m_basic(4), md = m_basic(8), ms = m_basic(2), mc = m_basic(1),
                 mf = m_basic(4);
    struct ty INT = {"int", MPI_INT, mi}, DBL = {"double", MPI_DOUBLE, md},
              SHORT = {"short", MPI_SHORT, ms}, FLT = {"float", MPI_FLOAT, mf};
    MPI_Datatype h;

    /* vector(4, 3, 5) of int, and the same ints contiguous */
    OK(MPI_Type_vector(4, 3, 5, MPI_INT, &h));
    struct ty vec = make("vector(4,3,5,int)", h, m_vector(4, 3, 5, &mi));

    /* hvector(3, 2, 40 bytes) of double, received as vector(3, 2, 3) */
    OK(MPI_Type_create_hvector(3, 2, 40, MPI_DOUBLE, &h));
    struct ty hvec = make("hvector(3,2,40B,double)", h, m_hvector(3, 2, 40, &md));
    OK(MPI_Type_vector(3, 2, 3, MPI_DOUBLE, &h));
    struct ty vecd = make("vector(3,2,3,double)", h, m_vector(3, 2, 3, &md));

    /* indexed of short */
    static const int ibl[4] = {1, 3, 2, 4}, idp[4] = {0, 2, 9, 14};
    OK(MPI_Type_indexed(4, ibl, idp, MPI_SHORT, &h));
    struct ty idx = make("indexed(short)", h, m_indexed(4, ibl, idp, &ms));

    /* indexed_block with unordered displacements, and an indexed with the
     * same signature but another layout */
    static const int bdp[4] = {7, 0, 12, 3};
    static const int bbl[4] = {2, 2, 2, 2};
    OK(MPI_Type_create_indexed_block(4, 2, bdp, MPI_INT, &h));
    struct ty iblk = make("indexed_block(4,2,{7,0,12,3},int)", h, m_indexed(4, bbl, bdp, &mi));
    static const int i2bl[3] = {3, 4, 1}, i2dp[3] = {10, 1, 6};
    OK(MPI_Type_indexed(3, i2bl, i2dp, MPI_INT, &h));
    struct ty idx2 = make("indexed({3,4,1},{10,1,6},int)", h, m_indexed(3, i2bl, i2dp, &mi));

    /* hindexed of float with a negative displacement */
    static const int hbl[3] = {2, 1, 3};
    static const MPI_Aint hdp[3] = {40, -8, 100};
    OK(MPI_Type_create_hindexed(3, hbl, hdp, MPI_FLOAT, &h));
    struct ty hidx = make("hindexed({2,1,3},{40,-8,100},float)", h, m_hindexed(3, hbl, hdp, &mf));

    /* struct A with its C layout (gaps), unresized: the padding rule must
     * give sizeof(struct A) */
    static const int sbl[4] = {1, 2, 1, 1};
    MPI_Aint sdp[4] = {offsetof(struct A, c), offsetof(struct A, d), offsetof(struct A, i),
                       offsetof(struct A, s)};
    MPI_Datatype sty[4] = {MPI_CHAR, MPI_DOUBLE, MPI_INT, MPI_SHORT};
    struct model *smod[4] = {&mc, &md, &mi, &ms};
    OK(MPI_Type_create_struct(4, sbl, sdp, sty, &h));
    struct ty sA = make("struct A", h, m_struct(4, sbl, sdp, smod));
    CHECK(ext(&sA.m) == (long)sizeof(struct A), "model: struct A extent %ld, sizeof %zu",
          ext(&sA.m), sizeof(struct A));

    /* struct B: same signature, other displacements (char last in memory) */
    static const MPI_Aint bdisp[4] = {30, 0, 16, 20};
    OK(MPI_Type_create_struct(4, sbl, bdisp, sty, &h));
    struct ty sB = make("struct B", h, m_struct(4, sbl, bdisp, smod));

    /* struct C: a packed layout with odd displacements, resized to 24 */
    static const MPI_Aint cdisp[4] = {0, 1, 17, 21};
    OK(MPI_Type_create_struct(4, sbl, cdisp, sty, &h));
    struct ty sC0 = make("struct C (unresized)", h, m_struct(4, sbl, cdisp, smod));
    OK(MPI_Type_create_resized(sC0.h, 0, 24, &h));
    struct ty sC = make("resized(struct C, 0, 24)", h, m_resized(&sC0.m, 0, 24));

    /* resized int with negative lb: one int every 12 bytes */
    OK(MPI_Type_create_resized(MPI_INT, -4, 12, &h));
    struct ty rint = make("resized(int,-4,12)", h, m_resized(&mi, -4, 12));

    /* nested: vector(3, 2, 3) of struct A, and contiguous(6) of struct B */
    OK(MPI_Type_vector(3, 2, 3, sA.h, &h));
    struct ty vA = make("vector(3,2,3,struct A)", h, m_vector(3, 2, 3, &sA.m));
    OK(MPI_Type_contiguous(6, sB.h, &h));
    struct ty cB = make("contiguous(6,struct B)", h, m_contig(6, &sB.m));
    /* nested: hvector(2, 1, 100 B) of the short indexed type */
    OK(MPI_Type_create_hvector(2, 1, 100, idx.h, &h));
    struct ty hvi = make("hvector(2,1,100B,indexed(short))", h, m_hvector(2, 1, 100, &idx.m));
    /* a resized struct inside a vector */
    OK(MPI_Type_vector(2, 3, 4, sC.h, &h));
    struct ty vC = make("vector(2,3,4,resized struct C)", h, m_vector(2, 3, 4, &sC.m));

    /* a 3-int element to see Get_count with a partial last element */
    OK(MPI_Type_contiguous(3, MPI_INT, &h));
    struct ty c3 = make("contiguous(3,int)", h, m_contig(3, &mi));

    struct {
        const struct ty *S, *R;
        long ratio; /* R instances per S instance, or negative: S per R */
    } cases[] = {
        {&vec, &INT, 12},  {&INT, &vec, -12},  {&hvec, &vecd, 1},  {&vecd, &hvec, 1},
        {&idx, &SHORT, 10}, {&iblk, &idx2, 1}, {&idx2, &iblk, 1}, {&hidx, &FLT, 6},
        {&FLT, &hidx, -6},  {&sA, &sB, 1},     {&sB, &sA, 1},     {&sA, &sC, 1},
        {&sC, &sB, 1},     {&rint, &INT, 1},   {&INT, &rint, 1},  {&vA, &cB, 1},
        {&cB, &vA, 1},     {&hvi, &SHORT, 20}, {&vC, &sA, 6},     {&sB, &vC, -6},
        {&hvec, &DBL, 6},  {&DBL, &vecd, -6},
    };
    const int ncase = (int)(sizeof cases / sizeof cases[0]);
    int seed = 1;
    for (int dir = 0; dir < 2; dir++) {
        for (int big = 0; big < 2; big++) {
            for (int k = 0; k < ncase; k++) {
                const struct ty *S = cases[k].S, *R = cases[k].R;
                long r = cases[k].ratio;
                long unit = r > 0 ? 1 : -r; /* S instances per step */
                long per = r > 0 ? r : 1;   /* R instances per step */
                long ssz = m_size(&S->m) * unit;
                long steps = big ? ((5L << 20) / 4 + ssz - 1) / ssz : 3;
                roundtrip(S, steps * unit, R, steps * per, dir, seed++);
            }
        }
        OK(MPI_Barrier(tw));
    }
    /* The receive may be larger than the message: partial last element. */
    roundtrip(&INT, 7, &c3, 5, 0, seed++);
    roundtrip(&INT, 300001, &c3, 100001, 1, seed++);
    roundtrip(&sA, 2, &vA, 3, 0, seed++); /* 2 of 18 struct A's */

    /* Pack / Unpack */
    for (int k = 0; k < ncase; k++) {
        const struct ty *S = cases[k].S, *R = cases[k].R;
        long r = cases[k].ratio;
        long unit = r > 0 ? 1 : -r, per = r > 0 ? r : 1;
        packtrip(S, 2 * unit, R, 2 * per, seed++);
        if (k % 4 == 0)
            packtrip(S, 5000 * unit, R, 5000 * per, seed++);
    }

    struct ty *all[] = {&vec, &hvec, &vecd, &idx, &iblk, &idx2, &hidx, &sA, &sB, &sC0,
                        &sC,  &rint, &vA,   &cB,  &hvi,  &vC,   &c3};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        OK(MPI_Type_free(&all[i]->h));
        free(all[i]->m.e);
    }
    free(mi.e);
    free(md.e);
    free(ms.e);
    free(mc.e);
    free(mf.e);
    OK(MPI_Barrier(tw));
    if (rank == 0)
        printf("t_dt_roundtrip: OK (%d transfers)\n", ncases);
    MPI_Finalize();
    return 0;
}
