/* Flat reductions, on a view (coll/coll.h).
 *
 * Algorithms. coll_choice[COLL_X].alg forces one (Exscan follows SCAN);
 * 0 picks by the rules below, where bytes = count * type size of the whole
 * vector, p the view size and p' the largest power of two <= p.
 *   reduce          binomial tree; Rabenseifner (reduce-scatter by recursive
 *                   halving, then a binomial gather of the pieces to the root)
 *                   when the op commutes, bytes >= 8 KiB and count >= p'.
 *   allreduce       recursive doubling when bytes < 8 KiB, count < p' or the
 *                   op does not commute; else ring when p is not a power of
 *                   two and bytes >= 1 MiB (Rabenseifner's fold would double
 *                   the traffic of 2(p - p') ranks), else Rabenseifner
 *                   (recursive-halving reduce-scatter + recursive-doubling
 *                   allgather).
 *   reduce_scatter  recursive halving when the op commutes and the whole
 *                   vector is < 512 KiB; pairwise otherwise.
 *   scan, exscan    recursive doubling.
 * Rabenseifner, ring and recursive halving need a commutative op; forced on
 * a non-commutative one they give way to binomial (reduce), recursive
 * doubling (allreduce) and pairwise (reduce_scatter), which preserve order.
 *
 * p not a power of two: Rabenseifner, recursive doubling and recursive
 * halving first fold ranks 2i and 2i+1 (i < p - p'): 2i hands its vector to
 * 2i+1, which stands for both as "new rank" i; rank r >= 2(p - p') is new
 * rank r - (p - p'). New ranks keep view order, so a new rank stands for a
 * contiguous range of ranks.
 *
 * Segmenting algorithms split the vector into blocks of whole elements of
 * the user's type, addressed by extent, and send (n, dt) from there; so
 * derived types need no fallback, and scratch space is laid out like
 * (count, dt) (coll_tmp_alloc). Combining is vmpi_op_apply(op, a, b):
 * b = a op b.
 *
 * Order of combination. It depends only on (p, root, count, algorithm),
 * never on timing: each rank combines what fixed partners send, in a fixed
 * sequence. So floating-point results repeat bit for bit from run to run.
 *   - Non-commutative ops get v0 op v1 op ... op v(p-1) over view ranks, in
 *     some bracketing (MPI lets us rely on associativity): every combine
 *     puts the operand that holds lower ranks on the left. Binomial reduce
 *     then builds the tree at view rank 0 and sends the result to the root.
 *   - Commutative ops combine in the order of the tree/ring/halving steps
 *     (the partner's partial on the left, except where noted).
 *   - Allreduce gives every rank the same bits: in Rabenseifner and ring
 *     each element is reduced by one rank and then copied; recursive doubling
 *     always puts the lower ranks' partial on the left, so both partners of
 *     an exchange compute the same expression on the same bits -- this
 *     matters even for commutative ops: MAX/MIN of +0 and -0, or with a NaN,
 *     depend on the operand order. */
#include <stdlib.h>
#include <string.h>

#include "coll_impl.h"

enum {
    ALLREDUCE_SMALL = 8 << 10, /* bytes below which allreduce uses recursive doubling */
    ALLREDUCE_RING_MIN = 1 << 20,
    REDUCE_LARGE = 8 << 10,     /* bytes from which reduce uses Rabenseifner */
    REDSCAT_HALVING_MAX = 512 << 10
};

/* Tag offsets of the phases within a collective's tag range. */
enum { PH_FOLD, PH_STEP, PH_GATHER, PH_UNFOLD, PH_ROOT };

/* What every algorithm needs about the call. */
struct red {
    const struct coll_view *v;
    struct vmpi_dtype *dt;
    MPI_Op op;
    MPI_Aint ext;
    const char *fn; /* for error messages */
    int tag;        /* the collective's base tag */
};

/* Element i of a (count, dt) layout at buf (buf may be MPI_BOTTOM). */
static inline void *elem(const struct red *r, const void *buf, MPI_Count i)
{
    return (void *)((uintptr_t)buf + (uintptr_t)(i * r->ext));
}

static void apply(const struct red *r, const void *in, void *inout, MPI_Count n)
{
    vmpi_op_apply(r->op, in, inout, n, r->dt);
}

/* Scratch for (n, dt); on failure reports MPI_ERR_NO_MEM through *rc. */
static void *scratch(const struct red *r, MPI_Count n, void **raw, int *rc)
{
    void *p = coll_tmp_alloc(n > 0 ? n : 1, r->dt, raw);
    if (!p)
        *rc = vmpi_err(r->v->comm, MPI_ERR_NO_MEM, "%s: out of memory for %lld elements "
                       "of scratch", r->fn, (long long)n);
    return p;
}

static void swap(void **a, void **b)
{
    void *t = *a;
    *a = *b;
    *b = t;
}

/* ---- folding to a power of two --------------------------------------------- */

struct fold {
    int pof2, rem;
    int newrank; /* -1 for a rank that handed its data to its odd neighbour */
};

static struct fold fold_of(int p, int rank)
{
    struct fold f = { 1, 0, 0 };
    while (f.pof2 * 2 <= p)
        f.pof2 *= 2;
    f.rem = p - f.pof2;
    if (rank < 2 * f.rem)
        f.newrank = rank % 2 ? rank / 2 : -1;
    else
        f.newrank = rank - f.rem;
    return f;
}

/* The view rank that acts as new rank n. */
static int fold_rank(const struct fold *f, int n)
{
    return n < f->rem ? 2 * n + 1 : n + f->rem;
}

/* Ranks 2i hand (n, dt) at acc to 2i+1, which makes acc = theirs op its own
 * (the lower rank's on the left). */
static int fold_in(const struct red *r, const struct fold *f, void *acc, void *tmp, MPI_Count n)
{
    int rank = r->v->rank, rc = MPI_SUCCESS;
    if (rank >= 2 * f->rem)
        return MPI_SUCCESS;
    if (rank % 2 == 0)
        return coll_send(r->v, acc, n, r->dt, rank + 1, r->tag + PH_FOLD);
    rc = coll_recv(r->v, tmp, n, r->dt, rank - 1, r->tag + PH_FOLD);
    if (rc == MPI_SUCCESS)
        apply(r, tmp, acc, n);
    return rc;
}

/* Reduce-scatter by recursive halving among the pof2 new ranks: new rank n
 * ends with elements [disp[n], disp[n+1]) of acc reduced over all of them.
 * tmp is scratch of acc's layout. Commutative ops only. */
static int rs_halving(const struct red *r, const struct fold *f, void *acc, void *tmp,
                      const MPI_Count *disp)
{
    int n = f->newrank, lo = 0, hi = f->pof2;
    for (int mask = f->pof2 >> 1; mask > 0; mask >>= 1) {
        int peer = fold_rank(f, n ^ mask), mid = lo + mask;
        int klo = n & mask ? mid : lo, khi = n & mask ? hi : mid; /* kept half */
        int slo = n & mask ? lo : mid, shi = n & mask ? mid : hi; /* sent half */
        int rc = coll_sendrecv(r->v, elem(r, acc, disp[slo]), disp[shi] - disp[slo], r->dt,
                               peer, elem(r, tmp, disp[klo]), disp[khi] - disp[klo], r->dt,
                               peer, r->tag + PH_STEP);
        if (rc != MPI_SUCCESS)
            return rc;
        apply(r, elem(r, tmp, disp[klo]), elem(r, acc, disp[klo]), disp[khi] - disp[klo]);
        lo = klo;
        hi = khi;
    }
    return MPI_SUCCESS;
}

/* After rs_halving: allgather the blocks by recursive doubling, each new
 * rank sending the aligned group of blocks it holds. */
static int ag_doubling(const struct red *r, const struct fold *f, void *acc,
                       const MPI_Count *disp)
{
    int n = f->newrank;
    for (int mask = 1; mask < f->pof2; mask <<= 1) {
        int pn = n ^ mask, peer = fold_rank(f, pn);
        int mlo = n & ~(mask - 1), plo = pn & ~(mask - 1);
        int rc = coll_sendrecv(r->v, elem(r, acc, disp[mlo]), disp[mlo + mask] - disp[mlo],
                               r->dt, peer, elem(r, acc, disp[plo]),
                               disp[plo + mask] - disp[plo], r->dt, peer, r->tag + PH_GATHER);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* After rs_halving: binomial gather of the blocks to new rank newroot. At
 * step mask the ranks still active agree with newroot in the bits below
 * mask and hold the aligned group of mask blocks around them. */
static int gather_binomial(const struct red *r, const struct fold *f, void *acc,
                           const MPI_Count *disp, int newroot)
{
    int n = f->newrank;
    for (int mask = 1; mask < f->pof2; mask <<= 1) {
        int pn = n ^ mask, peer = fold_rank(f, pn);
        int mlo = n & ~(mask - 1), plo = pn & ~(mask - 1);
        if ((n & mask) != (newroot & mask))
            return coll_send(r->v, elem(r, acc, disp[mlo]), disp[mlo + mask] - disp[mlo], r->dt,
                             peer, r->tag + PH_GATHER);
        int rc = coll_recv(r->v, elem(r, acc, disp[plo]), disp[plo + mask] - disp[plo], r->dt,
                           peer, r->tag + PH_GATHER);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* disp[0..nblk] for count elements in nblk blocks differing by at most one. */
static MPI_Count *even_blocks(const struct red *r, MPI_Count count, int nblk, int *rc)
{
    MPI_Count *disp = malloc((size_t)(nblk + 1) * sizeof *disp);
    if (!disp) {
        *rc = vmpi_err(r->v->comm, MPI_ERR_NO_MEM, "%s: out of memory", r->fn);
        return NULL;
    }
    for (int i = 0; i <= nblk; i++)
        disp[i] = count / nblk * i + (i < count % nblk ? i : count % nblk);
    return disp;
}

/* ---- reduce ---------------------------------------------------------------- */

/* Binomial tree. A commutative op builds it at the root (relative ranks) and
 * combines child op own; a non-commutative one builds it at view rank 0,
 * combines own op child (a child's subtree holds higher ranks) and rank 0
 * sends the result to the root. */
static int reduce_binomial(const struct red *r, const void *sbuf, void *rbuf, MPI_Count count,
                           int root)
{
    int p = r->v->size, rank = r->v->rank, rc = MPI_SUCCESS;
    bool commute = vmpi_op_commutative(r->op);
    int top = commute ? root : 0;
    int vr = (rank - top + p) % p;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    void *acc = NULL, *tmp = NULL, *acc_raw = NULL, *tmp_raw = NULL;
    /* A rank with children accumulates: in rbuf at the root, else in scratch. */
    if (vr % 2 == 0 && vr + 1 < p) {
        acc = rank == root ? rbuf : scratch(r, count, &acc_raw, &rc);
        tmp = acc ? scratch(r, count, &tmp_raw, &rc) : NULL;
        if (!tmp)
            goto out;
        if ((rc = coll_local_copy(acc, in, count, r->dt)) != MPI_SUCCESS)
            goto out;
    }
    for (int mask = 1; mask < p; mask <<= 1) {
        if (vr & mask) {
            rc = coll_send(r->v, acc ? acc : in, count, r->dt, (vr - mask + top) % p, r->tag);
            break;
        }
        if (vr + mask < p) {
            rc = coll_recv(r->v, tmp, count, r->dt, (vr + mask + top) % p, r->tag);
            if (rc != MPI_SUCCESS)
                break;
            if (commute) {
                apply(r, tmp, acc, count);
            } else {
                apply(r, acc, tmp, count);
                swap(&acc, &tmp);
            }
        }
    }
    if (rc != MPI_SUCCESS)
        goto out;
    if (top != root) {
        if (rank == top)
            rc = coll_send(r->v, acc, count, r->dt, root, r->tag + PH_ROOT);
        else if (rank == root)
            rc = coll_recv(r->v, rbuf, count, r->dt, top, r->tag + PH_ROOT);
    } else if (rank == root && acc != rbuf) {
        rc = coll_local_copy(rbuf, acc, count, r->dt);
    }
out:
    free(acc_raw);
    free(tmp_raw);
    return rc;
}

/* Rabenseifner: fold, recursive-halving reduce-scatter, binomial gather to
 * the new rank that stands for the root; if that is the root's odd
 * neighbour, it sends the whole result on. Commutative ops only. */
static int reduce_rabenseifner(const struct red *r, const void *sbuf, void *rbuf,
                               MPI_Count count, int root)
{
    int p = r->v->size, rank = r->v->rank, rc = MPI_SUCCESS;
    struct fold f = fold_of(p, rank);
    int rep = root < 2 * f.rem ? root | 1 : root; /* root's stand-in */
    void *acc_raw = NULL, *tmp_raw = NULL, *tmp = NULL;
    MPI_Count *disp = even_blocks(r, count, f.pof2, &rc);
    void *acc = !disp ? NULL : rank == root ? rbuf : scratch(r, count, &acc_raw, &rc);
    if (acc)
        tmp = scratch(r, count, &tmp_raw, &rc);
    if (!tmp)
        goto out;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if ((rc = coll_local_copy(acc, in, count, r->dt)) != MPI_SUCCESS ||
        (rc = fold_in(r, &f, acc, tmp, count)) != MPI_SUCCESS)
        goto out;
    if (f.newrank >= 0) {
        int newroot = rep < 2 * f.rem ? rep / 2 : rep - f.rem;
        if ((rc = rs_halving(r, &f, acc, tmp, disp)) != MPI_SUCCESS ||
            (rc = gather_binomial(r, &f, acc, disp, newroot)) != MPI_SUCCESS)
            goto out;
    }
    if (rep != root) {
        if (rank == rep)
            rc = coll_send(r->v, acc, count, r->dt, root, r->tag + PH_ROOT);
        else if (rank == root)
            rc = coll_recv(r->v, rbuf, count, r->dt, rep, r->tag + PH_ROOT);
    }
out:
    free(disp);
    free(acc_raw);
    free(tmp_raw);
    return rc;
}

/* sbuf may be MPI_IN_PLACE at the root (the input is then in rbuf). rbuf is
 * only used at the root. */
int vmpi_flat_reduce(const struct coll_view *v, const void *sbuf, void *rbuf, MPI_Count count,
                     struct vmpi_dtype *dt, MPI_Op op, int root)
{
    struct red r = { v, dt, op, vmpi_dtype_extent(dt), "MPI_Reduce", COLL_TAG_REDUCE };
    if (count == 0)
        return MPI_SUCCESS;
    if (v->size == 1)
        return sbuf == MPI_IN_PLACE ? MPI_SUCCESS : coll_local_copy(rbuf, sbuf, count, dt);
    int alg = coll_choice[COLL_REDUCE].alg;
    int pof2 = fold_of(v->size, 0).pof2;
    if (alg == 0)
        alg = vmpi_op_commutative(op) && count * vmpi_dtype_size(dt) >= REDUCE_LARGE &&
                      count >= pof2
                  ? REDUCE_RABENSEIFNER
                  : REDUCE_BINOMIAL;
    if (alg == REDUCE_RABENSEIFNER && vmpi_op_commutative(op))
        return reduce_rabenseifner(&r, sbuf, rbuf, count, root);
    return reduce_binomial(&r, sbuf, rbuf, count, root);
}

/* ---- allreduce ------------------------------------------------------------- */

/* After the fold: odd ranks below 2 rem send the result in acc back to
 * their even neighbour, which receives it into rbuf. */
static int fold_out(const struct red *r, const struct fold *f, const void *acc, void *rbuf,
                    MPI_Count n)
{
    int rank = r->v->rank;
    if (rank >= 2 * f->rem)
        return MPI_SUCCESS;
    if (rank % 2)
        return coll_send(r->v, acc, n, r->dt, rank - 1, r->tag + PH_UNFOLD);
    return coll_recv(r->v, rbuf, n, r->dt, rank + 1, r->tag + PH_UNFOLD);
}

/* Recursive doubling on rbuf (which holds the input). The partner with the
 * lower new rank holds lower ranks: its partial goes on the left. */
static int allreduce_doubling(const struct red *r, void *rbuf, MPI_Count count)
{
    int rc = MPI_SUCCESS;
    struct fold f = fold_of(r->v->size, r->v->rank);
    void *raw, *tmp = scratch(r, count, &raw, &rc), *acc = rbuf;
    if (!tmp)
        return rc;
    if ((rc = fold_in(r, &f, acc, tmp, count)) != MPI_SUCCESS)
        goto out;
    for (int mask = 1; f.newrank >= 0 && mask < f.pof2; mask <<= 1) {
        int pn = f.newrank ^ mask, peer = fold_rank(&f, pn);
        rc = coll_sendrecv(r->v, acc, count, r->dt, peer, tmp, count, r->dt, peer,
                           r->tag + PH_STEP);
        if (rc != MPI_SUCCESS)
            goto out;
        if (pn < f.newrank) {
            apply(r, tmp, acc, count);
        } else {
            apply(r, acc, tmp, count);
            swap(&acc, &tmp);
        }
    }
    if (f.newrank >= 0 && acc != rbuf &&
        (rc = coll_local_copy(rbuf, acc, count, r->dt)) != MPI_SUCCESS)
        goto out;
    rc = fold_out(r, &f, rbuf, rbuf, count);
out:
    free(raw);
    return rc;
}

static int allreduce_rabenseifner(const struct red *r, void *rbuf, MPI_Count count)
{
    int rc = MPI_SUCCESS;
    struct fold f = fold_of(r->v->size, r->v->rank);
    void *raw = NULL, *tmp = NULL;
    MPI_Count *disp = even_blocks(r, count, f.pof2, &rc);
    if (disp)
        tmp = scratch(r, count, &raw, &rc);
    if (!tmp)
        goto out;
    if ((rc = fold_in(r, &f, rbuf, tmp, count)) != MPI_SUCCESS)
        goto out;
    if (f.newrank >= 0 && ((rc = rs_halving(r, &f, rbuf, tmp, disp)) != MPI_SUCCESS ||
                           (rc = ag_doubling(r, &f, rbuf, disp)) != MPI_SUCCESS))
        goto out;
    rc = fold_out(r, &f, rbuf, rbuf, count);
out:
    free(disp);
    free(raw);
    return rc;
}

/* Ring: p - 1 steps of reduce-scatter (block b is reduced along the ring
 * from rank b, the left neighbour's partial on the left, and completes at
 * rank b - 1), then p - 1 steps of allgather. */
static int allreduce_ring(const struct red *r, void *rbuf, MPI_Count count)
{
    int p = r->v->size, rank = r->v->rank, rc = MPI_SUCCESS;
    int right = (rank + 1) % p, left = (rank - 1 + p) % p;
    void *raw = NULL, *tmp = NULL;
    MPI_Count *disp = even_blocks(r, count, p, &rc);
    if (disp)
        tmp = scratch(r, disp[1] - disp[0], &raw, &rc);
    if (!tmp)
        goto out;
    for (int s = 0; s < p - 1; s++) {
        int sb = (rank - s + p) % p, rb = (rank - s - 1 + p) % p;
        MPI_Count rn = disp[rb + 1] - disp[rb];
        rc = coll_sendrecv(r->v, elem(r, rbuf, disp[sb]), disp[sb + 1] - disp[sb], r->dt, right,
                           tmp, rn, r->dt, left, r->tag + PH_STEP);
        if (rc != MPI_SUCCESS)
            goto out;
        apply(r, tmp, elem(r, rbuf, disp[rb]), rn);
    }
    for (int s = 0; s < p - 1; s++) {
        int sb = (rank + 1 - s + p) % p, rb = (rank - s + p) % p;
        rc = coll_sendrecv(r->v, elem(r, rbuf, disp[sb]), disp[sb + 1] - disp[sb], r->dt, right,
                           elem(r, rbuf, disp[rb]), disp[rb + 1] - disp[rb], r->dt, left,
                           r->tag + PH_GATHER);
        if (rc != MPI_SUCCESS)
            goto out;
    }
out:
    free(disp);
    free(raw);
    return rc;
}

/* sbuf may be MPI_IN_PLACE (the input is then in rbuf). */
int vmpi_flat_allreduce(const struct coll_view *v, const void *sbuf, void *rbuf,
                        MPI_Count count, struct vmpi_dtype *dt, MPI_Op op)
{
    struct red r = { v, dt, op, vmpi_dtype_extent(dt), "MPI_Allreduce", COLL_TAG_ALLREDUCE };
    int rc;
    if (count == 0)
        return MPI_SUCCESS;
    if (sbuf != MPI_IN_PLACE && (rc = coll_local_copy(rbuf, sbuf, count, dt)) != MPI_SUCCESS)
        return rc;
    int p = v->size;
    if (p == 1)
        return MPI_SUCCESS;
    int pof2 = fold_of(p, 0).pof2;
    MPI_Count bytes = count * vmpi_dtype_size(dt);
    int alg = coll_choice[COLL_ALLREDUCE].alg;
    if (!vmpi_op_commutative(op))
        alg = ALLREDUCE_RECURSIVE_DOUBLING;
    else if (alg == 0)
        alg = bytes < ALLREDUCE_SMALL || count < pof2 ? ALLREDUCE_RECURSIVE_DOUBLING
              : pof2 != p && bytes >= ALLREDUCE_RING_MIN ? ALLREDUCE_RING
                                                         : ALLREDUCE_RABENSEIFNER;
    switch (alg) {
    case ALLREDUCE_RABENSEIFNER:
        return allreduce_rabenseifner(&r, rbuf, count);
    case ALLREDUCE_RING:
        return allreduce_ring(&r, rbuf, count);
    default:
        return allreduce_doubling(&r, rbuf, count);
    }
}

/* ---- reduce_scatter -------------------------------------------------------- */

/* Recursive halving over new ranks, new rank n standing for the blocks of
 * the ranks it folds; at the end an odd folding rank passes its even
 * neighbour's block on. in is the whole input (sbuf, or rbuf in place). */
static int redscat_halving(const struct red *r, const void *in, void *rbuf,
                           const MPI_Count *counts, const MPI_Count *rdisp)
{
    int p = r->v->size, rank = r->v->rank, rc = MPI_SUCCESS;
    struct fold f = fold_of(p, rank);
    MPI_Count total = rdisp[p];
    void *acc_raw = NULL, *tmp_raw = NULL, *tmp = NULL;
    MPI_Count *ndisp = malloc((size_t)(f.pof2 + 1) * sizeof *ndisp);
    void *acc = ndisp ? scratch(r, total, &acc_raw, &rc) : NULL;
    if (!ndisp)
        rc = vmpi_err(r->v->comm, MPI_ERR_NO_MEM, "%s: out of memory", r->fn);
    if (acc)
        tmp = scratch(r, total, &tmp_raw, &rc);
    if (!tmp)
        goto out;
    for (int n = 0; n <= f.pof2; n++)
        ndisp[n] = rdisp[n < f.rem ? 2 * n : n + f.rem];
    if ((rc = coll_local_copy(acc, in, total, r->dt)) != MPI_SUCCESS ||
        (rc = fold_in(r, &f, acc, tmp, total)) != MPI_SUCCESS)
        goto out;
    if (f.newrank >= 0 && (rc = rs_halving(r, &f, acc, tmp, ndisp)) != MPI_SUCCESS)
        goto out;
    if (rank < 2 * f.rem && rank % 2 == 0) {
        rc = coll_recv(r->v, rbuf, counts[rank], r->dt, rank + 1, r->tag + PH_UNFOLD);
        goto out;
    }
    if (rank < 2 * f.rem &&
        (rc = coll_send(r->v, elem(r, acc, rdisp[rank - 1]), counts[rank - 1], r->dt, rank - 1,
                        r->tag + PH_UNFOLD)) != MPI_SUCCESS)
        goto out;
    rc = coll_local_copy(rbuf, elem(r, acc, rdisp[rank]), counts[rank], r->dt);
out:
    free(ndisp);
    free(acc_raw);
    free(tmp_raw);
    return rc;
}

/* Pairwise: at step s send block rank+s to that rank and receive this
 * rank's block from rank-s. Those come from rank-1 down to 0, then from p-1
 * down to rank+1: two runs each combined with the newcomer on the left,
 * lo = v0 op .. op v(rank) and hi = v(rank+1) op .. op v(p-1), then lo op hi
 * -- order-preserving, so any op. */
static int redscat_pairwise(const struct red *r, const void *sbuf, void *rbuf,
                            const MPI_Count *counts, const MPI_Count *rdisp)
{
    int p = r->v->size, rank = r->v->rank, rc = MPI_SUCCESS;
    MPI_Count n = counts[rank];
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    void *raw[3] = { NULL, NULL, NULL };
    /* In place, rbuf still holds blocks to send: lo accumulates in scratch. */
    void *lo = sbuf == MPI_IN_PLACE ? scratch(r, n, &raw[0], &rc) : rbuf;
    void *hi = lo ? scratch(r, n, &raw[1], &rc) : NULL;
    void *tmp = hi ? scratch(r, n, &raw[2], &rc) : NULL;
    bool have_hi = false;
    if (!tmp)
        goto out;
    if ((rc = coll_local_copy(lo, elem(r, in, rdisp[rank]), n, r->dt)) != MPI_SUCCESS)
        goto out;
    for (int s = 1; s < p; s++) {
        int dst = (rank + s) % p, src = (rank - s + p) % p;
        rc = coll_sendrecv(r->v, elem(r, in, rdisp[dst]), counts[dst], r->dt, dst, tmp, n,
                           r->dt, src, r->tag);
        if (rc != MPI_SUCCESS)
            goto out;
        if (src < rank) {
            apply(r, tmp, lo, n);
        } else if (!have_hi) {
            swap(&hi, &tmp);
            have_hi = true;
        } else {
            apply(r, tmp, hi, n);
        }
    }
    void *res = lo;
    if (have_hi) {
        apply(r, lo, hi, n);
        res = hi;
    }
    if (res != rbuf)
        rc = coll_local_copy(rbuf, res, n, r->dt);
out:
    for (int i = 0; i < 3; i++)
        free(raw[i]);
    return rc;
}

/* counts[i] elements of the result go to view rank i. sbuf holds the sum
 * of the counts elements, or is MPI_IN_PLACE with the input in rbuf. */
int vmpi_flat_reduce_scatter(const struct coll_view *v, const void *sbuf, void *rbuf,
                             const MPI_Count *counts, struct vmpi_dtype *dt, MPI_Op op)
{
    struct red r = { v, dt, op, vmpi_dtype_extent(dt), "MPI_Reduce_scatter", COLL_TAG_REDSCAT };
    int p = v->size, rc = MPI_SUCCESS;
    MPI_Count *rdisp = malloc((size_t)(p + 1) * sizeof *rdisp);
    if (!rdisp)
        return vmpi_err(v->comm, MPI_ERR_NO_MEM, "%s: out of memory", r.fn);
    rdisp[0] = 0;
    for (int i = 0; i < p; i++)
        rdisp[i + 1] = rdisp[i] + counts[i];
    if (rdisp[p] == 0)
        goto out;
    if (p == 1) {
        if (sbuf != MPI_IN_PLACE)
            rc = coll_local_copy(rbuf, sbuf, counts[0], dt);
        goto out;
    }
    int alg = coll_choice[COLL_REDUCE_SCATTER].alg;
    if (!vmpi_op_commutative(op))
        alg = REDUCE_SCATTER_PAIRWISE;
    else if (alg == 0)
        alg = rdisp[p] * vmpi_dtype_size(dt) < REDSCAT_HALVING_MAX
                  ? REDUCE_SCATTER_RECURSIVE_HALVING
                  : REDUCE_SCATTER_PAIRWISE;
    if (alg == REDUCE_SCATTER_RECURSIVE_HALVING)
        rc = redscat_halving(&r, sbuf == MPI_IN_PLACE ? rbuf : sbuf, rbuf, counts, rdisp);
    else
        rc = redscat_pairwise(&r, sbuf, rbuf, counts, rdisp);
out:
    free(rdisp);
    return rc;
}

int vmpi_flat_reduce_scatter_block(const struct coll_view *v, const void *sbuf, void *rbuf,
                                   MPI_Count count, struct vmpi_dtype *dt, MPI_Op op)
{
    if (count == 0)
        return MPI_SUCCESS;
    MPI_Count *counts = malloc((size_t)v->size * sizeof *counts);
    if (!counts)
        return vmpi_err(v->comm, MPI_ERR_NO_MEM, "MPI_Reduce_scatter_block: out of memory");
    for (int i = 0; i < v->size; i++)
        counts[i] = count;
    int rc = vmpi_flat_reduce_scatter(v, sbuf, rbuf, counts, dt, op);
    free(counts);
    return rc;
}

/* ---- scan, exscan ---------------------------------------------------------- */

/* Recursive doubling: partial holds the reduction over this rank's aligned
 * group of 2^k ranks (cut at p); at each step the partner's partial goes
 * on the left of ours if it is lower, and then also into the result. The
 * exclusive scan starts its result with the first lower partial. */
static int scan_doubling(const struct red *r, const void *sbuf, void *rbuf, MPI_Count count,
                         bool exclusive)
{
    int p = r->v->size, rank = r->v->rank, rc = MPI_SUCCESS;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    void *raw[2] = { NULL, NULL };
    void *partial = scratch(r, count, &raw[0], &rc);
    void *tmp = partial ? scratch(r, count, &raw[1], &rc) : NULL;
    bool have_result = !exclusive;
    if (!tmp)
        goto out;
    if ((rc = coll_local_copy(partial, in, count, r->dt)) != MPI_SUCCESS)
        goto out;
    if (!exclusive && sbuf != MPI_IN_PLACE &&
        (rc = coll_local_copy(rbuf, sbuf, count, r->dt)) != MPI_SUCCESS)
        goto out;
    for (int mask = 1; mask < p; mask <<= 1) {
        int peer = rank ^ mask;
        if (peer >= p)
            continue;
        rc = coll_sendrecv(r->v, partial, count, r->dt, peer, tmp, count, r->dt, peer, r->tag);
        if (rc != MPI_SUCCESS)
            goto out;
        if (peer < rank) {
            apply(r, tmp, partial, count);
            if (have_result) {
                apply(r, tmp, rbuf, count);
            } else if ((rc = coll_local_copy(rbuf, tmp, count, r->dt)) != MPI_SUCCESS) {
                goto out;
            }
            have_result = true;
        } else {
            apply(r, partial, tmp, count);
            swap(&partial, &tmp);
        }
    }
out:
    free(raw[0]);
    free(raw[1]);
    return rc;
}

/* sbuf may be MPI_IN_PLACE (the input is then in rbuf). */
int vmpi_flat_scan(const struct coll_view *v, const void *sbuf, void *rbuf, MPI_Count count,
                   struct vmpi_dtype *dt, MPI_Op op)
{
    struct red r = { v, dt, op, vmpi_dtype_extent(dt), "MPI_Scan", COLL_TAG_SCAN };
    if (count == 0)
        return MPI_SUCCESS;
    if (v->size == 1)
        return sbuf == MPI_IN_PLACE ? MPI_SUCCESS : coll_local_copy(rbuf, sbuf, count, dt);
    return scan_doubling(&r, sbuf, rbuf, count, false);
}

/* rbuf at view rank 0 is left untouched. sbuf may be MPI_IN_PLACE. */
int vmpi_flat_exscan(const struct coll_view *v, const void *sbuf, void *rbuf, MPI_Count count,
                     struct vmpi_dtype *dt, MPI_Op op)
{
    struct red r = { v, dt, op, vmpi_dtype_extent(dt), "MPI_Exscan", COLL_TAG_SCAN };
    if (count == 0 || v->size == 1)
        return MPI_SUCCESS;
    return scan_doubling(&r, sbuf, rbuf, count, true);
}
