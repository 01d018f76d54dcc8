/* Simple, flat, locality-unaware collectives over vmpi_p2p_* (the
 * communicator's collective context). They are the correctness baseline and
 * the fallback of the hierarchical algorithms:
 *   barrier    dissemination (ceil(log2 p) rounds of zero-byte sendrecv)
 *   bcast      binomial tree rooted at root
 *   reduce     binomial tree towards root (predefined ops are commutative)
 *   allreduce  recursive doubling; with p not a power of two the first
 *              2*(p - p') ranks pair up first (p' = largest power of two <= p)
 *   allgather  ring (used by communicator creation)
 * Every message goes through vmpi_p2p_* with coll = 1, so it can never match a
 * user receive; each algorithm has its own tag range. */
#include <stdlib.h>
#include <string.h>

#include "../core/dtype_impl.h" /* true_ub */
#include "../core/vmpi.h"

enum {
    TAG_BARRIER = 0x100, /* + round */
    TAG_BCAST = 0x200,
    TAG_REDUCE = 0x300,
    TAG_ALLREDUCE = 0x400, /* + step */
    TAG_ALLGATHER = 0x500
};

/* Scratch space laid out like (count, dt) in user memory. *raw is what to
 * free; the returned pointer is the buffer address to pass with (count, dt). */
static void *tmp_alloc(MPI_Count count, const struct vmpi_dtype *dt, void **raw)
{
    MPI_Aint ext = vmpi_dtype_extent(dt);
    MPI_Aint tlb = vmpi_dtype_true_lb(dt);
    MPI_Aint text = dt->true_ub - dt->true_lb;
    MPI_Aint step = (MPI_Aint)(count - 1) * ext;
    MPI_Aint lo = tlb + (step < 0 ? step : 0);
    MPI_Aint hi = tlb + text + (step > 0 ? step : 0);
    size_t len = hi > lo ? (size_t)(hi - lo) : 1;
    *raw = malloc(len);
    if (!*raw)
        return NULL;
    return vmpi_dtype_addr(*raw, -lo);
}

/* dst = src for (count, dt) layouts, through a bounce buffer. */
static int local_copy(void *dst, const void *src, MPI_Count count,
                      const struct vmpi_dtype *dt)
{
    size_t total = (size_t)(count * vmpi_dtype_size(dt));
    if (total == 0 || dst == src)
        return MPI_SUCCESS;
    if (vmpi_dtype_is_contig(dt)) {
        MPI_Aint lb = vmpi_dtype_true_lb(dt);
        memcpy(vmpi_dtype_addr(dst, lb), vmpi_dtype_addr(src, lb), total);
        return MPI_SUCCESS;
    }
    size_t chunk = total < (1u << 16) ? total : (1u << 16);
    char stackbuf[512];
    char *tmp = chunk <= sizeof stackbuf ? stackbuf : malloc(chunk);
    if (!tmp)
        return vmpi_err(NULL, MPI_ERR_NO_MEM, "collective: out of memory for a copy");
    for (size_t off = 0; off < total;) {
        size_t n = vmpi_dtype_pack(tmp, src, count, dt, off, chunk);
        if (n == 0)
            break;
        vmpi_dtype_unpack(dst, count, dt, off, tmp, n);
        off += n;
    }
    if (tmp != stackbuf)
        free(tmp);
    return MPI_SUCCESS;
}

static struct vmpi_dtype *byte_type(void)
{
    return vmpi_dtype_get(MPI_BYTE);
}

int vmpi_coll_barrier(struct vmpi_comm *c)
{
    int p = c->size, r = c->rank;
    if (p == 1)
        return MPI_SUCCESS;
    struct vmpi_dtype *bt = byte_type();
    char dummy = 0, sink;
    int round = 0;
    for (int d = 1; d < p; d <<= 1, round++) {
        int rc = vmpi_p2p_sendrecv(&dummy, 0, bt, (r + d) % p, TAG_BARRIER + round, &sink, 0,
                                   bt, (r - d + p) % p, TAG_BARRIER + round, c, 1,
                                   MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

int vmpi_coll_bcast(void *buf, MPI_Count count, struct vmpi_dtype *dt, int root,
                    struct vmpi_comm *c)
{
    int p = c->size;
    if (p == 1 || count == 0)
        return MPI_SUCCESS;
    int vr = (c->rank - root + p) % p;
    int mask = 1;
    while (mask < p) {
        if (vr & mask) {
            int src = (vr - mask + root) % p;
            int rc = vmpi_p2p_recv(buf, count, dt, src, TAG_BCAST, c, 1, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS)
                return rc;
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (vr + mask < p) {
            int dst = (vr + mask + root) % p;
            int rc = vmpi_p2p_send(buf, count, dt, dst, TAG_BCAST, c, 1);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    }
    return MPI_SUCCESS;
}

/* sbuf may be MPI_IN_PLACE at the root (the input is then in rbuf). rbuf is
 * only used at the root. */
int vmpi_coll_reduce(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                     MPI_Op op, int root, struct vmpi_comm *c)
{
    int p = c->size, rank = c->rank;
    if (count == 0)
        return MPI_SUCCESS;
    if (p == 1) {
        if (sbuf != MPI_IN_PLACE)
            return local_copy(rbuf, sbuf, count, dt);
        return MPI_SUCCESS;
    }
    int vr = (rank - root + p) % p;
    int rc = MPI_SUCCESS;
    void *acc_raw = NULL, *tmp_raw = NULL, *tmp = NULL;
    /* acc: the partial result of this subtree. At the root it is rbuf; at an
     * inner node a scratch buffer; a leaf sends its input directly. */
    const void *acc_in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    void *acc = NULL;
    int has_child = (vr & 1) == 0 && vr + 1 < p;
    if (has_child) {
        if (rank == root) {
            acc = rbuf;
        } else {
            acc = tmp_alloc(count, dt, &acc_raw);
            if (!acc) {
                rc = vmpi_err(c, MPI_ERR_NO_MEM, "MPI_Reduce: out of memory");
                goto out;
            }
        }
        if ((rc = local_copy(acc, acc_in, count, dt)) != MPI_SUCCESS)
            goto out;
        tmp = tmp_alloc(count, dt, &tmp_raw);
        if (!tmp) {
            rc = vmpi_err(c, MPI_ERR_NO_MEM, "MPI_Reduce: out of memory");
            goto out;
        }
    } else if (rank == root) { /* root without children: only if p == 1 */
        rc = local_copy(rbuf, acc_in, count, dt);
        goto out;
    }
    for (int mask = 1; mask < p; mask <<= 1) {
        if (vr & mask) {
            int dst = (vr - mask + root) % p;
            rc = vmpi_p2p_send(acc ? acc : acc_in, count, dt, dst, TAG_REDUCE, c, 1);
            break;
        }
        if (vr + mask < p) {
            int src = (vr + mask + root) % p;
            rc = vmpi_p2p_recv(tmp, count, dt, src, TAG_REDUCE, c, 1, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS)
                break;
            vmpi_op_apply(op, tmp, acc, count, dt);
        }
    }
out:
    free(acc_raw);
    free(tmp_raw);
    return rc;
}

/* sbuf may be MPI_IN_PLACE (the input is then in rbuf). */
int vmpi_coll_allreduce(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                        MPI_Op op, struct vmpi_comm *c)
{
    int p = c->size, rank = c->rank;
    int rc;
    if (count == 0)
        return MPI_SUCCESS;
    if (sbuf != MPI_IN_PLACE && (rc = local_copy(rbuf, sbuf, count, dt)) != MPI_SUCCESS)
        return rc;
    if (p == 1)
        return MPI_SUCCESS;
    void *raw;
    void *tmp = tmp_alloc(count, dt, &raw);
    if (!tmp)
        return vmpi_err(c, MPI_ERR_NO_MEM, "MPI_Allreduce: out of memory");
    int pof2 = 1;
    while (pof2 * 2 <= p)
        pof2 *= 2;
    int rem = p - pof2;
    int newrank;
    rc = MPI_SUCCESS;
    /* Fold the first 2*rem ranks in pairs: even ones hand their data to the
     * odd neighbour and wait for the result. */
    if (rank < 2 * rem) {
        if (rank % 2 == 0) {
            rc = vmpi_p2p_send(rbuf, count, dt, rank + 1, TAG_ALLREDUCE, c, 1);
            newrank = -1;
        } else {
            rc = vmpi_p2p_recv(tmp, count, dt, rank - 1, TAG_ALLREDUCE, c, 1,
                               MPI_STATUS_IGNORE);
            if (rc == MPI_SUCCESS)
                vmpi_op_apply(op, tmp, rbuf, count, dt);
            newrank = rank / 2;
        }
    } else {
        newrank = rank - rem;
    }
    if (rc != MPI_SUCCESS)
        goto out;
    if (newrank >= 0) {
        int step = 1;
        for (int mask = 1; mask < pof2; mask <<= 1, step++) {
            int newdst = newrank ^ mask;
            int dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
            rc = vmpi_p2p_sendrecv(rbuf, count, dt, dst, TAG_ALLREDUCE + step, tmp, count, dt,
                                   dst, TAG_ALLREDUCE + step, c, 1, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS)
                goto out;
            /* Predefined ops are commutative, and a op b == b op a holds bit
             * for bit (IEEE + and * included), so both partners end equal. */
            vmpi_op_apply(op, tmp, rbuf, count, dt);
        }
    }
    if (rank < 2 * rem) {
        if (rank % 2)
            rc = vmpi_p2p_send(rbuf, count, dt, rank - 1, TAG_ALLREDUCE, c, 1);
        else
            rc = vmpi_p2p_recv(rbuf, count, dt, rank + 1, TAG_ALLREDUCE, c, 1,
                               MPI_STATUS_IGNORE);
    }
out:
    free(raw);
    return rc;
}

/* rbuf receives p blocks of (count, dt), block i from rank i, one extent
 * apart. sbuf may be MPI_IN_PLACE (this rank's block is already in rbuf). */
int vmpi_coll_allgather(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                        struct vmpi_comm *c)
{
    int p = c->size, r = c->rank;
    MPI_Aint blk = (MPI_Aint)count * vmpi_dtype_extent(dt);
    char *rb = rbuf;
    int rc;
    if (sbuf != MPI_IN_PLACE &&
        (rc = local_copy(rb + (MPI_Aint)r * blk, sbuf, count, dt)) != MPI_SUCCESS)
        return rc;
    if (count == 0)
        return MPI_SUCCESS;
    int right = (r + 1) % p, left = (r - 1 + p) % p;
    /* step s: pass on the block that came from rank r - s */
    for (int s = 0; s < p - 1; s++) {
        int sendblk = (r - s + p) % p, recvblk = (r - s - 1 + p) % p;
        rc = vmpi_p2p_sendrecv(rb + (MPI_Aint)sendblk * blk, count, dt, right, TAG_ALLGATHER,
                               rb + (MPI_Aint)recvblk * blk, count, dt, left, TAG_ALLGATHER,
                               c, 1, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}
