/* Non-blocking reductions that scatter or scan, as schedules (coll/sched.c
 * runs them; coll_impl.h has the building API). Flat on all ranks, like the
 * blocking forms:
 *   ireduce_scatter(_block)  pairwise in one round: rank j's block of every
 *               rank's input goes to rank j, which keeps the p contributions
 *               apart and combines them in rank order in a second round
 *               (any operation, commutative or not)
 *   iscan, iexscan  recursive doubling: at step k a rank swaps with r ^ 2^k
 *               the combination of its 2^k-group so far; what comes from a
 *               lower group goes on the left
 * Every rank needs scratch of p times its block (reduce_scatter) or two
 * buffers of count elements (scans). */
#include "../core/dtype_impl.h" /* vmpi_dtype_addr */
#include "coll_impl.h"

/* counts NULL: every block is block elements. */
static int redscat(struct vmpi_comm *c, const void *sbuf, void *rbuf, const int *counts,
                   MPI_Count block, struct vmpi_dtype *dt, MPI_Op op, const char *fn,
                   struct vmpi_req **out)
{
    struct coll_sched *s = coll_sched_new(c, op);
    if (!s)
        return vmpi_err(c, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    coll_sched_hold(s, dt);
    int p = c->size, r = c->rank;
    MPI_Aint ext = vmpi_dtype_extent(dt);
    const char *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    MPI_Count mine = counts ? counts[r] : block;
    char *slots = NULL; /* slot i (mine elements): rank i's contribution */
    if (mine > 0 && !(slots = coll_sched_tmp(s, (MPI_Count)p * mine, dt)))
        return coll_sched_launch(s, fn, out);
    MPI_Aint slot = (MPI_Aint)mine * ext;
    MPI_Count start = 0; /* of block j in the input */
    for (int j = 0; j < r; j++)
        start += counts ? counts[j] : block;
    if (mine > 0) {
        coll_sched_copy(s, vmpi_dtype_addr(in, start * ext), mine, dt, slots + r * slot, mine,
                        dt);
        for (int i = 1; i < p; i++) {
            int from = (r - i + p) % p;
            coll_sched_recv(s, slots + from * slot, mine, dt, from, 0);
        }
    }
    start = 0;
    for (int j = 0; j < p; j++) {
        MPI_Count n = counts ? counts[j] : block;
        if (j != r && n > 0)
            coll_sched_send(s, vmpi_dtype_addr(in, start * ext), n, dt, j, 0);
        start += n;
    }
    coll_sched_round(s);
    if (mine > 0) {
        /* x_0 op (x_1 op (... op x_{p-1})): rank order for any op */
        char *acc = slots + (MPI_Aint)(p - 1) * slot;
        for (int i = p - 2; i >= 0; i--)
            coll_sched_reduce(s, slots + i * slot, acc, mine, dt);
        coll_sched_copy(s, acc, mine, dt, rbuf, mine, dt);
    }
    return coll_sched_launch(s, fn, out);
}

int vmpi_coll_ireduce_scatter(const void *sbuf, void *rbuf, const int *counts,
                              struct vmpi_dtype *dt, MPI_Op op, struct vmpi_comm *c,
                              struct vmpi_req **out)
{
    return redscat(c, sbuf, rbuf, counts, 0, dt, op, "MPI_Ireduce_scatter", out);
}

int vmpi_coll_ireduce_scatter_block(const void *sbuf, void *rbuf, MPI_Count count,
                                    struct vmpi_dtype *dt, MPI_Op op, struct vmpi_comm *c,
                                    struct vmpi_req **out)
{
    return redscat(c, sbuf, rbuf, NULL, count, dt, op, "MPI_Ireduce_scatter_block", out);
}

/* Inclusive (rbuf gets ranks 0..r) or exclusive (0..r-1; rank 0's rbuf is
 * left as it was). */
static int scan(struct vmpi_comm *c, const void *sbuf, void *rbuf, MPI_Count count,
                struct vmpi_dtype *dt, MPI_Op op, bool inclusive, const char *fn,
                struct vmpi_req **out)
{
    struct coll_sched *s = coll_sched_new(c, op);
    if (!s)
        return vmpi_err(c, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    coll_sched_hold(s, dt);
    int p = c->size, r = c->rank;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (count == 0)
        return coll_sched_launch(s, fn, out);
    if (inclusive)
        coll_sched_copy(s, in, count, dt, rbuf, count, dt);
    if (p == 1)
        return coll_sched_launch(s, fn, out);
    void *partial = coll_sched_tmp(s, count, dt); /* this rank's group so far */
    void *t = coll_sched_tmp(s, count, dt);
    if (coll_sched_oom(s)) /* rbuf may be MPI_BOTTOM: test the flag, not the pointers */
        return coll_sched_launch(s, fn, out);
    coll_sched_copy(s, in, count, dt, partial, count, dt);
    bool commut = vmpi_op_commutative(op), have = inclusive; /* rbuf holds a value */
    for (int mask = 1, k = 0; mask < p; mask <<= 1, k++) {
        int peer = r ^ mask;
        if (peer >= p)
            continue;
        coll_sched_send(s, partial, count, dt, peer, k);
        coll_sched_recv(s, t, count, dt, peer, k);
        coll_sched_round(s);
        if (peer > r) {
            coll_sched_combine_higher(s, t, partial, count, dt, commut);
            continue;
        }
        if (have)
            coll_sched_reduce(s, t, rbuf, count, dt);
        else
            coll_sched_copy(s, t, count, dt, rbuf, count, dt);
        have = true;
        coll_sched_reduce(s, t, partial, count, dt);
    }
    return coll_sched_launch(s, fn, out);
}

int vmpi_coll_iscan(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                    MPI_Op op, struct vmpi_comm *c, struct vmpi_req **out)
{
    return scan(c, sbuf, rbuf, count, dt, op, true, "MPI_Iscan", out);
}

int vmpi_coll_iexscan(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                      MPI_Op op, struct vmpi_comm *c, struct vmpi_req **out)
{
    return scan(c, sbuf, rbuf, count, dt, op, false, "MPI_Iexscan", out);
}
