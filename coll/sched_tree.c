/* Non-blocking collectives on trees and hypercubes (coll/coll_impl.h),
 * flat on all ranks of the communicator:
 *   ibarrier    dissemination (ceil(log2 p) rounds of empty messages)
 *   ibcast      binomial tree from the root, a node's sends in one round
 *   ireduce     binomial tree; for a non-commutative op the tree is rooted
 *               at rank 0, so every node combines lower ranks on the left,
 *               and rank 0 sends the result on to the root
 *   iallreduce  recursive doubling; with p not a power of two the first
 *               2 * (p - p') ranks fold in pairs first (p' the largest power
 *               of two <= p); the lower ranks' data is always on the left
 * The bcast and reduce trees are also steps other schedules append
 * (coll/inter_sched.c). */
#include "coll_impl.h"

static char nbc_dummy; /* the address of empty messages */

int vmpi_coll_ibarrier(struct vmpi_comm *c, struct vmpi_req **out)
{
    struct coll_sched *s = coll_sched_new(c, MPI_OP_NULL);
    if (!s)
        return vmpi_err(c, MPI_ERR_NO_MEM, "MPI_Ibarrier: out of memory");
    int p = c->size, r = c->rank;
    struct vmpi_dtype *bt = coll_byte_type();
    for (int d = 1, k = 0; d < p; d <<= 1, k++) {
        coll_sched_send(s, &nbc_dummy, 0, bt, (r + d) % p, k);
        coll_sched_recv(s, &nbc_dummy, 0, bt, (r - d + p) % p, k);
        coll_sched_round(s);
    }
    return coll_sched_launch(s, "MPI_Ibarrier", out);
}

void coll_sched_bcast(struct coll_sched *s, void *buf, MPI_Count count, struct vmpi_dtype *dt,
                      int root, int tag)
{
    const struct vmpi_comm *c = coll_sched_comm(s);
    int p = c->size, vr = (c->rank - root + p) % p;
    if (p == 1 || count * vmpi_dtype_size(dt) == 0)
        return;
    int mask = 1;
    for (; mask < p; mask <<= 1)
        if (vr & mask) {
            coll_sched_recv(s, buf, count, dt, (vr - mask + root) % p, tag);
            coll_sched_round(s);
            break;
        }
    /* children vr + mask below the lowest set bit, largest subtree first */
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < p)
            coll_sched_send(s, buf, count, dt, (vr + mask + root) % p, tag);
    coll_sched_round(s);
}

int vmpi_coll_ibcast(void *buf, MPI_Count count, struct vmpi_dtype *dt, int root,
                     struct vmpi_comm *c, struct vmpi_req **out)
{
    struct coll_sched *s = coll_sched_new(c, MPI_OP_NULL);
    if (!s)
        return vmpi_err(c, MPI_ERR_NO_MEM, "MPI_Ibcast: out of memory");
    coll_sched_hold(s, dt);
    coll_sched_bcast(s, buf, count, dt, root, 0);
    return coll_sched_launch(s, "MPI_Ibcast", out);
}

void coll_sched_combine_higher(struct coll_sched *s, void *t, void *acc, MPI_Count count,
                               struct vmpi_dtype *dt, bool commut)
{
    if (commut) {
        coll_sched_reduce(s, t, acc, count, dt);
    } else {
        coll_sched_reduce(s, acc, t, count, dt);
        coll_sched_copy(s, t, count, dt, acc, count, dt);
    }
}

void coll_sched_reduce_tree(struct coll_sched *s, const void *in, void *out, MPI_Count count,
                            struct vmpi_dtype *dt, int root, int tag)
{
    const struct vmpi_comm *c = coll_sched_comm(s);
    int p = c->size, rank = c->rank;
    if (count == 0)
        return;
    if (p == 1) {
        coll_sched_copy(s, in, count, dt, out, count, dt);
        return;
    }
    bool commut = vmpi_op_commutative(coll_sched_op(s));
    int troot = commut ? root : 0; /* the tree's root */
    int vr = (rank - troot + p) % p;
    int low = vr & -vr; /* children are vr + m for m < low (vr 0: any m < p) */
    bool leaf = vr & 1 || vr + 1 >= p;
    const void *acc = in;
    if (!leaf) {
        void *a = rank == root && troot == root ? out : coll_sched_tmp(s, count, dt);
        void *t = coll_sched_tmp(s, count, dt);
        if (coll_sched_oom(s)) /* out may be MPI_BOTTOM: test the flag, not the pointers */
            return;
        coll_sched_copy(s, in, count, dt, a, count, dt);
        bool first = true;
        for (int m = 1; m < p && (vr == 0 || m < low) && vr + m < p; m <<= 1) {
            if (!first)
                coll_sched_combine_higher(s, t, a, count, dt, commut);
            coll_sched_recv(s, t, count, dt, (vr + m + troot) % p, tag);
            coll_sched_round(s);
            first = false;
        }
        coll_sched_combine_higher(s, t, a, count, dt, commut);
        acc = a;
    }
    if (vr)
        coll_sched_send(s, acc, count, dt, (vr - low + troot) % p, tag);
    else if (rank != root)
        coll_sched_send(s, acc, count, dt, root, tag + 1);
    coll_sched_round(s);
    if (rank == root && troot != root)
        coll_sched_recv(s, out, count, dt, troot, tag + 1);
    coll_sched_round(s);
}

int vmpi_coll_ireduce(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                      MPI_Op op, int root, struct vmpi_comm *c, struct vmpi_req **out)
{
    struct coll_sched *s = coll_sched_new(c, op);
    if (!s)
        return vmpi_err(c, MPI_ERR_NO_MEM, "MPI_Ireduce: out of memory");
    coll_sched_hold(s, dt);
    const void *in = c->rank == root && sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    coll_sched_reduce_tree(s, in, rbuf, count, dt, root, 0);
    return coll_sched_launch(s, "MPI_Ireduce", out);
}

int vmpi_coll_iallreduce(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                         MPI_Op op, struct vmpi_comm *c, struct vmpi_req **out)
{
    struct coll_sched *s = coll_sched_new(c, op);
    if (!s)
        return vmpi_err(c, MPI_ERR_NO_MEM, "MPI_Iallreduce: out of memory");
    coll_sched_hold(s, dt);
    int p = c->size, rank = c->rank;
    if (count == 0)
        return coll_sched_launch(s, "MPI_Iallreduce", out);
    if (sbuf != MPI_IN_PLACE)
        coll_sched_copy(s, sbuf, count, dt, rbuf, count, dt);
    if (p == 1)
        return coll_sched_launch(s, "MPI_Iallreduce", out);
    void *t = coll_sched_tmp(s, count, dt);
    if (coll_sched_oom(s))
        return coll_sched_launch(s, "MPI_Iallreduce", out);
    bool commut = vmpi_op_commutative(op);
    int pof2 = 1, steps = 0;
    while (pof2 * 2 <= p) {
        pof2 *= 2;
        steps++;
    }
    int rem = p - pof2, newrank;
    const int last = steps + 1; /* the tag of the folded pairs' result */
    /* Fold: an even rank of the first 2 * rem hands its data to the odd one
     * above it and gets the result back at the end. */
    if (rank < 2 * rem) {
        if (rank % 2 == 0) {
            coll_sched_send(s, rbuf, count, dt, rank + 1, 0);
            coll_sched_round(s);
            coll_sched_recv(s, rbuf, count, dt, rank + 1, last);
            return coll_sched_launch(s, "MPI_Iallreduce", out);
        }
        coll_sched_recv(s, t, count, dt, rank - 1, 0);
        coll_sched_round(s);
        coll_sched_reduce(s, t, rbuf, count, dt);
        newrank = rank / 2;
    } else {
        newrank = rank - rem;
    }
    /* New rank i holds ranks {2i, 2i + 1} (i < rem) or {i + rem}: increasing,
     * so a lower new rank means lower ranks' data. */
    for (int mask = 1, step = 1; mask < pof2; mask <<= 1, step++) {
        int newdst = newrank ^ mask;
        int dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
        coll_sched_send(s, rbuf, count, dt, dst, step);
        coll_sched_recv(s, t, count, dt, dst, step);
        coll_sched_round(s);
        if (newdst < newrank)
            coll_sched_reduce(s, t, rbuf, count, dt);
        else
            coll_sched_combine_higher(s, t, rbuf, count, dt, commut);
    }
    if (rank < 2 * rem)
        coll_sched_send(s, rbuf, count, dt, rank - 1, last);
    return coll_sched_launch(s, "MPI_Iallreduce", out);
}

