/* Flat algorithms that move data, on a view (coll/coll.h). The per-rank
 * arrays of the v and w forms (counts, displacements, types) are indexed by
 * view rank. "Block" is the data one rank contributes or receives; its size
 * in bytes (count * type size) is the same on every rank for the fixed-size
 * collectives, so every rank picks the same algorithm.
 *
 *   barrier     dissemination: ceil(log2 p) rounds of zero-byte sendrecv.
 *   bcast       binomial tree; from BCAST_LONG bytes with p >= 3, binomial
 *               scatter of p chunks then ring allgather (van de Geijn): each
 *               rank moves ~2n bytes instead of n per tree level. That one
 *               works on the packed byte stream: contiguous buffers in
 *               place, others packed at the root into scratch and unpacked
 *               at the end on the other ranks.
 *   gather      binomial tree on packed blocks while a block is below
 *   scatter     GATHER_SHORT bytes and p > 2 (log p messages at the root
 *               instead of p - 1); linear above (the root posts all
 *               receives / sends at once, data lands in place).
 *   gatherv,    linear.
 *   scatterv
 *   allgather   recursive doubling for p a power of two and p * block below
 *               ALLGATHER_LONG; Bruck (any p, log p steps on packed
 *               blocks) below ALLGATHER_SHORT; ring above.
 *   allgatherv  ring.
 *   alltoall    Bruck (log p steps on packed blocks) for blocks up to
 *               ALLTOALL_SHORT bytes with p >= 8; linear (all receives and
 *               sends posted, then waited for) up to ALLTOALL_MEDIUM; pairwise
 *               exchange (step s: send to r + s, receive from r - s) above.
 *   alltoallv,  linear up to ALLTOALLV_LINEAR_P ranks, pairwise above
 *   alltoallw   (block sizes differ per rank, so only p decides).
 *
 * coll_choice[COLL_X].alg forces an algorithm; the v/w forms follow their
 * base collective. A forced algorithm that cannot run falls back to the
 * default choice: recursive doubling allgather when p is not a power of two,
 * binomial gatherv/scatterv, ring-only allgatherv, Bruck alltoallv/w.
 *
 * MPI_IN_PLACE in alltoall (linear, pairwise), alltoallv and alltoallw: the
 * outgoing blocks are first packed from recvbuf into scratch, then the
 * exchange runs as usual from there (one extra copy of the data, no extra
 * messages). Bruck alltoall already packs its input first.
 *
 * Zero-byte blocks are not sent in the linear algorithms (both sides compute
 * the same size); the step-wise ones send them to keep steps paired. */
#include <stdlib.h>
#include <string.h>

#include "../core/dtype_impl.h" /* vmpi_dtype_addr */
#include "coll_impl.h"

enum {
    BCAST_LONG = 128 * 1024,
    GATHER_SHORT = 4096,
    ALLGATHER_SHORT = 80 * 1024,
    ALLGATHER_LONG = 512 * 1024,
    ALLTOALL_SHORT = 256,
    ALLTOALL_MEDIUM = 32 * 1024,
    ALLTOALLV_LINEAR_P = 64,
};

/* ---- helpers ------------------------------------------------------------ */

static int nomem(const struct coll_view *v)
{
    return vmpi_err(v->comm, MPI_ERR_NO_MEM, "collective: out of memory for scratch space");
}

static MPI_Count nbytes(MPI_Count count, const struct vmpi_dtype *dt)
{
    return count * vmpi_dtype_size(dt);
}

static int post_recv(const struct coll_view *v, void *buf, MPI_Count count,
                     struct vmpi_dtype *dt, int from, int tag, struct vmpi_req **r)
{
    return vmpi_p2p_irecv(buf, count, dt, coll_peer(v, from), tag, v->comm, 1, r);
}

static int post_send(const struct coll_view *v, const void *buf, MPI_Count count,
                     struct vmpi_dtype *dt, int to, int tag, struct vmpi_req **r)
{
    return vmpi_p2p_isend(buf, count, dt, coll_peer(v, to), tag, v->comm, 1, VMPI_MODE_STD, r);
}

/* Waits for all n requests (also after an error, so none is left behind);
 * returns rc or the first error. */
static int wait_all(struct vmpi_req **reqs, int n, int rc)
{
    for (int k = 0; k < n; k++) {
        int e = vmpi_p2p_wait(reqs[k], MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = e;
    }
    return rc;
}

/* A rank's own block: (src, sc, sdt) into (dst, dc, ddt), like a message
 * to itself (a longer send is a truncation error). */
static int copy_own(const struct coll_view *v, void *dst, MPI_Count dc,
                    const struct vmpi_dtype *ddt, const void *src, MPI_Count sc,
                    const struct vmpi_dtype *sdt)
{
    MPI_Count sb = nbytes(sc, sdt), db = nbytes(dc, ddt);
    if (sb > db)
        return vmpi_err(v->comm, MPI_ERR_TRUNCATE,
                        "collective: this rank's own block has %lld bytes, its receive "
                        "block room for %lld",
                        (long long)sb, (long long)db);
    return coll_local_copy2(dst, dc, ddt, src, sc, sdt);
}

/* Lowest set bit of the relative rank vr (the root, vr = 0, gets the first
 * power of two >= p): vr's parent is vr - mask, its subtree is
 * [vr, vr + mask) cut at p. */
static int tree_mask(int vr, int p)
{
    int mask = 1;
    while (mask < p && !(vr & mask))
        mask <<= 1;
    return mask;
}

static int imin(int a, int b)
{
    return a < b ? a : b;
}

/* ---- barrier ------------------------------------------------------------ */

int vmpi_flat_barrier(const struct coll_view *v)
{
    int p = v->size, r = v->rank;
    if (p == 1)
        return MPI_SUCCESS;
    struct vmpi_dtype *bt = coll_byte_type();
    char dummy = 0, sink;
    int round = 0;
    for (int d = 1; d < p; d <<= 1, round++) {
        int rc = coll_sendrecv(v, &dummy, 0, bt, (r + d) % p, &sink, 0,
                                   bt, (r - d + p) % p, COLL_TAG_BARRIER + round);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* ---- bcast -------------------------------------------------------------- */

static int bcast_binomial(const struct coll_view *v, void *buf, MPI_Count count,
                          struct vmpi_dtype *dt, int root)
{
    int p = v->size;
    int vr = (v->rank - root + p) % p;
    int mask = tree_mask(vr, p);
    if (vr != 0) {
        int rc = coll_recv(v, buf, count, dt, (vr - mask + root) % p, COLL_TAG_BCAST);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (vr + mask < p) {
            int rc = coll_send(v, buf, count, dt, (vr + mask + root) % p, COLL_TAG_BCAST);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    }
    return MPI_SUCCESS;
}

/* Start of chunk i of n bytes: chunk i (relative rank i) is
 * [i * chunk, (i + 1) * chunk) cut at n, possibly empty. */
static MPI_Count chunk_at(int i, MPI_Count chunk, MPI_Count n)
{
    return (MPI_Count)i * chunk < n ? (MPI_Count)i * chunk : n;
}

/* n bytes at b, root's data sent to every rank. */
static int bcast_scatter_allgather(const struct coll_view *v, char *b, MPI_Count n, int root)
{
    int p = v->size;
    int vr = (v->rank - root + p) % p;
    MPI_Count chunk = (n + p - 1) / p;
    struct vmpi_dtype *bt = coll_byte_type();
    int rc;
    /* binomial scatter: a subtree [vr, vr + mask) gets its chunks */
    int mask = tree_mask(vr, p);
    if (vr != 0) {
        MPI_Count lo = chunk_at(vr, chunk, n), hi = chunk_at(imin(p, vr + mask), chunk, n);
        if (hi > lo &&
            (rc = coll_recv(v, b + lo, hi - lo, bt, (vr - mask + root) % p, COLL_TAG_BCAST)) !=
                MPI_SUCCESS)
            return rc;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (vr + mask >= p)
            continue;
        MPI_Count lo = chunk_at(vr + mask, chunk, n);
        MPI_Count hi = chunk_at(imin(p, vr + 2 * mask), chunk, n);
        if (hi > lo && (rc = coll_send(v, b + lo, hi - lo, bt, (vr + mask + root) % p,
                                       COLL_TAG_BCAST)) != MPI_SUCCESS)
            return rc;
    }
    /* ring allgather of the chunks, in relative ranks */
    int right = (vr + 1) % p, left = (vr - 1 + p) % p;
    for (int s = 0; s < p - 1; s++) {
        int sc = (vr - s + p) % p, rcv = (vr - s - 1 + p) % p;
        MPI_Count slo = chunk_at(sc, chunk, n), shi = chunk_at(sc + 1, chunk, n);
        MPI_Count rlo = chunk_at(rcv, chunk, n), rhi = chunk_at(rcv + 1, chunk, n);
        rc = coll_sendrecv(v, b + slo, shi - slo, bt, (right + root) % p, b + rlo, rhi - rlo,
                           bt, (left + root) % p, COLL_TAG_BCAST);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

int vmpi_flat_bcast(const struct coll_view *v, void *buf, MPI_Count count,
                    struct vmpi_dtype *dt, int root)
{
    int p = v->size;
    MPI_Count n = nbytes(count, dt);
    if (p == 1 || n == 0)
        return MPI_SUCCESS;
    int alg = coll_choice[COLL_BCAST].alg;
    if (!alg)
        alg = n >= BCAST_LONG && p >= 3 ? BCAST_SCATTER_ALLGATHER : BCAST_BINOMIAL;
    if (alg == BCAST_BINOMIAL)
        return bcast_binomial(v, buf, count, dt, root);
    if (vmpi_dtype_is_contig(dt))
        return bcast_scatter_allgather(v, vmpi_dtype_addr(buf, vmpi_dtype_true_lb(dt)), n,
                                       root);
    char *tmp = malloc((size_t)n);
    if (!tmp)
        return nomem(v);
    if (v->rank == root)
        vmpi_dtype_pack(tmp, buf, count, dt, 0, (size_t)n);
    int rc = bcast_scatter_allgather(v, tmp, n, root);
    if (rc == MPI_SUCCESS && v->rank != root)
        vmpi_dtype_unpack(buf, count, dt, 0, tmp, (size_t)n);
    free(tmp);
    return rc;
}

/* ---- gather ------------------------------------------------------------- */

static int gather_linear(const struct coll_view *v, const void *sbuf, MPI_Count scount,
                         struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                         struct vmpi_dtype *rdt, int root)
{
    int p = v->size;
    if (v->rank != root)
        return coll_send(v, sbuf, scount, sdt, root, COLL_TAG_GATHER);
    MPI_Aint stride = (MPI_Aint)rcount * vmpi_dtype_extent(rdt);
    struct vmpi_req **reqs = malloc(sizeof *reqs * (size_t)p);
    if (!reqs)
        return nomem(v);
    int n = 0, rc = MPI_SUCCESS;
    for (int i = 0; i < p && rc == MPI_SUCCESS; i++)
        if (i != root)
            rc = post_recv(v, vmpi_dtype_addr(rbuf, (MPI_Aint)i * stride), rcount, rdt, i,
                           COLL_TAG_GATHER, &reqs[n++]);
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        rc = copy_own(v, vmpi_dtype_addr(rbuf, (MPI_Aint)root * stride), rcount, rdt, sbuf,
                      scount, sdt);
    rc = wait_all(reqs, n, rc);
    free(reqs);
    return rc;
}

/* Each inner node collects the packed blocks of its subtree, in relative
 * rank order, and passes them up; the root unpacks them into place. */
static int gather_binomial(const struct coll_view *v, const void *sbuf, MPI_Count scount,
                           struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                           struct vmpi_dtype *rdt, int root, MPI_Count blk)
{
    int p = v->size, r = v->rank;
    int vr = (r - root + p) % p;
    int mask = tree_mask(vr, p);
    int nsub = imin(mask, p - vr);
    int parent = (vr - mask + root) % p;
    if (nsub == 1) /* a leaf (never the root: p > 1) */
        return coll_send(v, sbuf, scount, sdt, parent, COLL_TAG_GATHER);
    struct vmpi_dtype *bt = coll_byte_type();
    char *tmp = malloc((size_t)(nsub * blk));
    if (!tmp)
        return nomem(v);
    int rc = MPI_SUCCESS;
    if (r != root)
        vmpi_dtype_pack(tmp, sbuf, scount, sdt, 0, (size_t)blk);
    for (int m = 1; m < mask && vr + m < p && rc == MPI_SUCCESS; m <<= 1) {
        int csub = imin(m, p - (vr + m));
        rc = coll_recv(v, tmp + (MPI_Aint)m * blk, csub * blk, bt, (vr + m + root) % p,
                       COLL_TAG_GATHER);
    }
    if (rc == MPI_SUCCESS && r != root)
        rc = coll_send(v, tmp, nsub * blk, bt, parent, COLL_TAG_GATHER);
    if (rc == MPI_SUCCESS && r == root) {
        MPI_Aint stride = (MPI_Aint)rcount * vmpi_dtype_extent(rdt);
        for (int j = 1; j < p; j++)
            vmpi_dtype_unpack(vmpi_dtype_addr(rbuf, (MPI_Aint)((j + root) % p) * stride),
                              rcount, rdt, 0, tmp + (MPI_Aint)j * blk, (size_t)blk);
        if (sbuf != MPI_IN_PLACE)
            rc = copy_own(v, vmpi_dtype_addr(rbuf, (MPI_Aint)root * stride), rcount, rdt, sbuf,
                          scount, sdt);
    }
    free(tmp);
    return rc;
}

/* sbuf may be MPI_IN_PLACE at the root (its block is already in rbuf);
 * rbuf, rcount and rdt are used only at the root. */
int vmpi_flat_gather(const struct coll_view *v, const void *sbuf, MPI_Count scount,
                     struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                     struct vmpi_dtype *rdt, int root)
{
    int p = v->size;
    MPI_Count blk = v->rank == root ? nbytes(rcount, rdt) : nbytes(scount, sdt);
    if (blk == 0)
        return MPI_SUCCESS;
    if (p == 1)
        return sbuf == MPI_IN_PLACE ? MPI_SUCCESS
                                    : copy_own(v, rbuf, rcount, rdt, sbuf, scount, sdt);
    int alg = coll_choice[COLL_GATHER].alg;
    if (!alg)
        alg = blk < GATHER_SHORT && p > 2 ? GATHER_BINOMIAL : GATHER_LINEAR;
    if (alg == GATHER_BINOMIAL)
        return gather_binomial(v, sbuf, scount, sdt, rbuf, rcount, rdt, root, blk);
    return gather_linear(v, sbuf, scount, sdt, rbuf, rcount, rdt, root);
}

/* rcounts, displs (in extents of rdt) and rbuf are used only at the root. */
int vmpi_flat_gatherv(const struct coll_view *v, const void *sbuf, MPI_Count scount,
                      struct vmpi_dtype *sdt, void *rbuf, const int *rcounts,
                      const int *displs, struct vmpi_dtype *rdt, int root)
{
    int p = v->size;
    if (v->rank != root)
        return nbytes(scount, sdt) == 0 ? MPI_SUCCESS
                                        : coll_send(v, sbuf, scount, sdt, root, COLL_TAG_GATHER);
    MPI_Aint ext = vmpi_dtype_extent(rdt);
    struct vmpi_req **reqs = malloc(sizeof *reqs * (size_t)p);
    if (!reqs)
        return nomem(v);
    int n = 0, rc = MPI_SUCCESS;
    for (int i = 0; i < p && rc == MPI_SUCCESS; i++)
        if (i != root && nbytes(rcounts[i], rdt) > 0)
            rc = post_recv(v, vmpi_dtype_addr(rbuf, (MPI_Aint)displs[i] * ext), rcounts[i],
                           rdt, i, COLL_TAG_GATHER, &reqs[n++]);
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        rc = copy_own(v, vmpi_dtype_addr(rbuf, (MPI_Aint)displs[root] * ext), rcounts[root],
                      rdt, sbuf, scount, sdt);
    rc = wait_all(reqs, n, rc);
    free(reqs);
    return rc;
}

/* ---- scatter ------------------------------------------------------------ */

static int scatter_linear(const struct coll_view *v, const void *sbuf, MPI_Count scount,
                          struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                          struct vmpi_dtype *rdt, int root)
{
    int p = v->size;
    if (v->rank != root)
        return coll_recv(v, rbuf, rcount, rdt, root, COLL_TAG_SCATTER);
    MPI_Aint stride = (MPI_Aint)scount * vmpi_dtype_extent(sdt);
    struct vmpi_req **reqs = malloc(sizeof *reqs * (size_t)p);
    if (!reqs)
        return nomem(v);
    int n = 0, rc = MPI_SUCCESS;
    for (int i = 0; i < p && rc == MPI_SUCCESS; i++)
        if (i != root)
            rc = post_send(v, vmpi_dtype_addr(sbuf, (MPI_Aint)i * stride), scount, sdt, i,
                           COLL_TAG_SCATTER, &reqs[n++]);
    if (rc == MPI_SUCCESS && rbuf != MPI_IN_PLACE)
        rc = copy_own(v, rbuf, rcount, rdt, vmpi_dtype_addr(sbuf, (MPI_Aint)root * stride),
                      scount, sdt);
    rc = wait_all(reqs, n, rc);
    free(reqs);
    return rc;
}

/* The root packs the blocks in relative rank order; each inner node
 * receives its subtree's blocks, passes the children's parts on and
 * unpacks its own. */
static int scatter_binomial(const struct coll_view *v, const void *sbuf, MPI_Count scount,
                            struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                            struct vmpi_dtype *rdt, int root, MPI_Count blk)
{
    int p = v->size, r = v->rank;
    int vr = (r - root + p) % p;
    int mask = tree_mask(vr, p);
    int nsub = imin(mask, p - vr);
    if (nsub == 1) /* a leaf (never the root: p > 1) */
        return coll_recv(v, rbuf, rcount, rdt, (vr - mask + root) % p, COLL_TAG_SCATTER);
    struct vmpi_dtype *bt = coll_byte_type();
    char *tmp = malloc((size_t)(nsub * blk));
    if (!tmp)
        return nomem(v);
    int rc = MPI_SUCCESS;
    if (r == root) {
        MPI_Aint stride = (MPI_Aint)scount * vmpi_dtype_extent(sdt);
        for (int j = 1; j < p; j++)
            vmpi_dtype_pack(tmp + (MPI_Aint)j * blk,
                            vmpi_dtype_addr(sbuf, (MPI_Aint)((j + root) % p) * stride), scount,
                            sdt, 0, (size_t)blk);
    } else {
        rc = coll_recv(v, tmp, nsub * blk, bt, (vr - mask + root) % p, COLL_TAG_SCATTER);
    }
    /* largest subtree first: it has the most forwarding left to do */
    for (int m = mask >> 1; m > 0 && rc == MPI_SUCCESS; m >>= 1) {
        if (vr + m >= p)
            continue;
        int csub = imin(m, p - (vr + m));
        rc = coll_send(v, tmp + (MPI_Aint)m * blk, csub * blk, bt, (vr + m + root) % p,
                       COLL_TAG_SCATTER);
    }
    if (rc == MPI_SUCCESS) {
        if (r != root) {
            vmpi_dtype_unpack(rbuf, rcount, rdt, 0, tmp, (size_t)blk);
        } else if (rbuf != MPI_IN_PLACE) {
            MPI_Aint stride = (MPI_Aint)scount * vmpi_dtype_extent(sdt);
            rc = copy_own(v, rbuf, rcount, rdt, vmpi_dtype_addr(sbuf, (MPI_Aint)root * stride),
                          scount, sdt);
        }
    }
    free(tmp);
    return rc;
}

/* rbuf may be MPI_IN_PLACE at the root (its block stays in sbuf); sbuf,
 * scount and sdt are used only at the root. */
int vmpi_flat_scatter(const struct coll_view *v, const void *sbuf, MPI_Count scount,
                      struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                      struct vmpi_dtype *rdt, int root)
{
    int p = v->size;
    MPI_Count blk = v->rank == root ? nbytes(scount, sdt) : nbytes(rcount, rdt);
    if (blk == 0)
        return MPI_SUCCESS;
    if (p == 1)
        return rbuf == MPI_IN_PLACE ? MPI_SUCCESS
                                    : copy_own(v, rbuf, rcount, rdt, sbuf, scount, sdt);
    int alg = coll_choice[COLL_SCATTER].alg;
    if (!alg)
        alg = blk < GATHER_SHORT && p > 2 ? SCATTER_BINOMIAL : SCATTER_LINEAR;
    if (alg == SCATTER_BINOMIAL)
        return scatter_binomial(v, sbuf, scount, sdt, rbuf, rcount, rdt, root, blk);
    return scatter_linear(v, sbuf, scount, sdt, rbuf, rcount, rdt, root);
}

/* scounts, displs (in extents of sdt) and sbuf are used only at the root. */
int vmpi_flat_scatterv(const struct coll_view *v, const void *sbuf, const int *scounts,
                       const int *displs, struct vmpi_dtype *sdt, void *rbuf,
                       MPI_Count rcount, struct vmpi_dtype *rdt, int root)
{
    int p = v->size;
    if (v->rank != root)
        return nbytes(rcount, rdt) == 0
                   ? MPI_SUCCESS
                   : coll_recv(v, rbuf, rcount, rdt, root, COLL_TAG_SCATTER);
    MPI_Aint ext = vmpi_dtype_extent(sdt);
    struct vmpi_req **reqs = malloc(sizeof *reqs * (size_t)p);
    if (!reqs)
        return nomem(v);
    int n = 0, rc = MPI_SUCCESS;
    for (int i = 0; i < p && rc == MPI_SUCCESS; i++)
        if (i != root && nbytes(scounts[i], sdt) > 0)
            rc = post_send(v, vmpi_dtype_addr(sbuf, (MPI_Aint)displs[i] * ext), scounts[i],
                           sdt, i, COLL_TAG_SCATTER, &reqs[n++]);
    if (rc == MPI_SUCCESS && rbuf != MPI_IN_PLACE)
        rc = copy_own(v, rbuf, rcount, rdt, vmpi_dtype_addr(sbuf, (MPI_Aint)displs[root] * ext),
                      scounts[root], sdt);
    rc = wait_all(reqs, n, rc);
    free(reqs);
    return rc;
}

/* ---- allgather ---------------------------------------------------------- */

/* Blocks of (count, dt), stride bytes apart; this rank's block is in place. */
static int allgather_ring(const struct coll_view *v, char *rb, MPI_Count count,
                          struct vmpi_dtype *dt, MPI_Aint stride)
{
    int p = v->size, r = v->rank;
    int right = (r + 1) % p, left = (r - 1 + p) % p;
    /* step s: pass on the block that came from rank r - s */
    for (int s = 0; s < p - 1; s++) {
        int sendblk = (r - s + p) % p, recvblk = (r - s - 1 + p) % p;
        int rc = coll_sendrecv(v, rb + (MPI_Aint)sendblk * stride, count, dt, right,
                               rb + (MPI_Aint)recvblk * stride, count, dt, left,
                               COLL_TAG_ALLGATHER);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* p a power of two: at step mask, the aligned group of mask blocks holding
 * this rank's is swapped for the partner's group (adjacent blocks of
 * (count, dt) are mask * count elements of dt). */
static int allgather_recursive_doubling(const struct coll_view *v, char *rb, MPI_Count count,
                                        struct vmpi_dtype *dt, MPI_Aint stride)
{
    int p = v->size, r = v->rank;
    for (int mask = 1; mask < p; mask <<= 1) {
        int base = r & ~(mask - 1), pbase = base ^ mask;
        int rc = coll_sendrecv(v, rb + (MPI_Aint)base * stride, mask * count, dt, r ^ mask,
                               rb + (MPI_Aint)pbase * stride, mask * count, dt, r ^ mask,
                               COLL_TAG_ALLGATHER);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* Bruck: tmp[i] (packed) is the block of rank r + i; at distance d a rank
 * gets the first min(d, p - d) blocks of rank r + d, so after ceil(log2 p)
 * steps it has all of them, then rotates them into place. */
static int allgather_bruck(const struct coll_view *v, char *rb, MPI_Count count,
                           struct vmpi_dtype *dt, MPI_Aint stride, MPI_Count blk)
{
    int p = v->size, r = v->rank;
    struct vmpi_dtype *bt = coll_byte_type();
    char *tmp = malloc((size_t)(p * blk));
    if (!tmp)
        return nomem(v);
    vmpi_dtype_pack(tmp, rb + (MPI_Aint)r * stride, count, dt, 0, (size_t)blk);
    int rc = MPI_SUCCESS;
    for (int d = 1; d < p && rc == MPI_SUCCESS; d <<= 1) {
        MPI_Count len = imin(d, p - d) * blk;
        rc = coll_sendrecv(v, tmp, len, bt, (r - d + p) % p, tmp + (MPI_Aint)d * blk, len, bt,
                           (r + d) % p, COLL_TAG_ALLGATHER);
    }
    if (rc == MPI_SUCCESS)
        for (int i = 1; i < p; i++)
            vmpi_dtype_unpack(rb + (MPI_Aint)((r + i) % p) * stride, count, dt, 0,
                              tmp + (MPI_Aint)i * blk, (size_t)blk);
    free(tmp);
    return rc;
}

/* rbuf receives p blocks of (rcount, rdt), block i from view rank i, one
 * rcount * extent apart. sbuf may be MPI_IN_PLACE (this rank's block is
 * already in rbuf). */
int vmpi_flat_allgather(const struct coll_view *v, const void *sbuf, MPI_Count scount,
                        struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                        struct vmpi_dtype *rdt)
{
    int p = v->size, r = v->rank;
    MPI_Aint stride = (MPI_Aint)rcount * vmpi_dtype_extent(rdt);
    MPI_Count blk = nbytes(rcount, rdt);
    char *rb = rbuf;
    int rc;
    if (sbuf != MPI_IN_PLACE &&
        (rc = copy_own(v, vmpi_dtype_addr(rb, (MPI_Aint)r * stride), rcount, rdt, sbuf, scount,
                       sdt)) != MPI_SUCCESS)
        return rc;
    if (p == 1 || blk == 0)
        return MPI_SUCCESS;
    int pof2 = (p & (p - 1)) == 0;
    int alg = coll_choice[COLL_ALLGATHER].alg;
    if (alg == ALLGATHER_RECURSIVE_DOUBLING && !pof2)
        alg = 0; /* needs a power of two: take the default */
    if (!alg)
        alg = pof2 && p * blk < ALLGATHER_LONG ? ALLGATHER_RECURSIVE_DOUBLING
              : p * blk < ALLGATHER_SHORT      ? ALLGATHER_BRUCK
                                               : ALLGATHER_RING;
    if (alg == ALLGATHER_RECURSIVE_DOUBLING)
        return allgather_recursive_doubling(v, rb, rcount, rdt, stride);
    if (alg == ALLGATHER_BRUCK)
        return allgather_bruck(v, rb, rcount, rdt, stride, blk);
    return allgather_ring(v, rb, rcount, rdt, stride);
}

/* Ring; rcounts and displs (in extents of rdt) are significant everywhere. */
int vmpi_flat_allgatherv(const struct coll_view *v, const void *sbuf, MPI_Count scount,
                         struct vmpi_dtype *sdt, void *rbuf, const int *rcounts,
                         const int *displs, struct vmpi_dtype *rdt)
{
    int p = v->size, r = v->rank;
    MPI_Aint ext = vmpi_dtype_extent(rdt);
    int rc;
    if (sbuf != MPI_IN_PLACE &&
        (rc = copy_own(v, vmpi_dtype_addr(rbuf, (MPI_Aint)displs[r] * ext), rcounts[r], rdt,
                       sbuf, scount, sdt)) != MPI_SUCCESS)
        return rc;
    MPI_Count total = 0;
    for (int i = 0; i < p; i++)
        total += rcounts[i];
    if (p == 1 || nbytes(total, rdt) == 0)
        return MPI_SUCCESS;
    int right = (r + 1) % p, left = (r - 1 + p) % p;
    for (int s = 0; s < p - 1; s++) {
        int sb = (r - s + p) % p, rb = (r - s - 1 + p) % p;
        rc = coll_sendrecv(v, vmpi_dtype_addr(rbuf, (MPI_Aint)displs[sb] * ext), rcounts[sb],
                           rdt, right, vmpi_dtype_addr(rbuf, (MPI_Aint)displs[rb] * ext),
                           rcounts[rb], rdt, left, COLL_TAG_ALLGATHER);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* ---- alltoall ----------------------------------------------------------- */

/* Where block j (to or from view rank j) of an all-to-all lives. */
enum { BLK_UNIFORM, BLK_V, BLK_W, BLK_PACKED };
struct blocks {
    int kind;
    char *buf;
    MPI_Count count;               /* UNIFORM: count per block */
    struct vmpi_dtype *dt;         /* UNIFORM, V */
    const int *counts, *displs;    /* V: displs in extents of dt; W: in bytes */
    struct vmpi_dtype *const *dts; /* W (NULL entries allowed where counts is 0) */
    MPI_Aint *offs;                /* PACKED: bytes [offs[j], offs[j + 1]) of buf */
};

static void blk_at(const struct blocks *b, int j, char **addr, MPI_Count *count,
                   struct vmpi_dtype **dt)
{
    switch (b->kind) {
    case BLK_UNIFORM:
        *addr = vmpi_dtype_addr(b->buf, (MPI_Aint)j * b->count * vmpi_dtype_extent(b->dt));
        *count = b->count;
        *dt = b->dt;
        break;
    case BLK_V:
        *addr = vmpi_dtype_addr(b->buf, (MPI_Aint)b->displs[j] * vmpi_dtype_extent(b->dt));
        *count = b->counts[j];
        *dt = b->dt;
        break;
    case BLK_W:
        *addr = vmpi_dtype_addr(b->buf, b->displs[j]);
        *count = b->counts[j];
        *dt = b->dts[j];
        break;
    default:
        *addr = b->buf + b->offs[j];
        *count = b->offs[j + 1] - b->offs[j];
        *dt = coll_byte_type();
        break;
    }
    if (*count == 0)
        *dt = coll_byte_type();
}

/* Packs every block of rd but this rank's own into scratch, for in-place
 * exchanges; *sd then describes it (free sd->buf and sd->offs). */
static int pack_in_place(const struct coll_view *v, const struct blocks *rd, struct blocks *sd)
{
    int p = v->size, r = v->rank;
    MPI_Aint *offs = malloc(sizeof *offs * (size_t)(p + 1));
    if (!offs)
        return nomem(v);
    char *a;
    MPI_Count n;
    struct vmpi_dtype *dt;
    offs[0] = 0;
    for (int j = 0; j < p; j++) {
        blk_at(rd, j, &a, &n, &dt);
        offs[j + 1] = offs[j] + (j == r ? 0 : (MPI_Aint)nbytes(n, dt));
    }
    char *tmp = malloc(offs[p] > 0 ? (size_t)offs[p] : 1);
    if (!tmp) {
        free(offs);
        return nomem(v);
    }
    for (int j = 0; j < p; j++) {
        if (j == r)
            continue;
        blk_at(rd, j, &a, &n, &dt);
        vmpi_dtype_pack(tmp + offs[j], a, n, dt, 0, (size_t)(offs[j + 1] - offs[j]));
    }
    *sd = (struct blocks){.kind = BLK_PACKED, .buf = tmp, .offs = offs};
    return MPI_SUCCESS;
}

/* Linear or pairwise exchange of sd's blocks into rd's. */
static int exchange(const struct coll_view *v, const struct blocks *sd, const struct blocks *rd,
                    int alg)
{
    int p = v->size, r = v->rank;
    char *sa, *ra;
    MPI_Count sn, rn;
    struct vmpi_dtype *st, *rt;
    blk_at(sd, r, &sa, &sn, &st);
    blk_at(rd, r, &ra, &rn, &rt);
    int rc = copy_own(v, ra, rn, rt, sa, sn, st);
    if (rc != MPI_SUCCESS || p == 1)
        return rc;
    if (alg == ALLTOALL_PAIRWISE) {
        for (int s = 1; s < p && rc == MPI_SUCCESS; s++) {
            int to = (r + s) % p, from = (r - s + p) % p;
            blk_at(sd, to, &sa, &sn, &st);
            blk_at(rd, from, &ra, &rn, &rt);
            rc = coll_sendrecv(v, sa, sn, st, to, ra, rn, rt, from, COLL_TAG_ALLTOALL);
        }
        return rc;
    }
    struct vmpi_req **reqs = malloc(sizeof *reqs * (size_t)(2 * p));
    if (!reqs)
        return nomem(v);
    int n = 0;
    for (int s = 1; s < p && rc == MPI_SUCCESS; s++) {
        int from = (r - s + p) % p;
        blk_at(rd, from, &ra, &rn, &rt);
        if (nbytes(rn, rt) > 0)
            rc = post_recv(v, ra, rn, rt, from, COLL_TAG_ALLTOALL, &reqs[n++]);
    }
    for (int s = 1; s < p && rc == MPI_SUCCESS; s++) {
        int to = (r + s) % p;
        blk_at(sd, to, &sa, &sn, &st);
        if (nbytes(sn, st) > 0)
            rc = post_send(v, sa, sn, st, to, COLL_TAG_ALLTOALL, &reqs[n++]);
    }
    rc = wait_all(reqs, n, rc);
    free(reqs);
    return rc;
}

/* In-place or not, as the exchange wants it. */
static int exchange_maybe_in_place(const struct coll_view *v, const void *sbuf,
                                   const struct blocks *sd, const struct blocks *rd, int alg)
{
    if (sbuf != MPI_IN_PLACE)
        return exchange(v, sd, rd, alg);
    struct blocks tmp;
    int rc = pack_in_place(v, rd, &tmp);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = exchange(v, &tmp, rd, alg);
    free(tmp.buf);
    free(tmp.offs);
    return rc;
}

/* Bruck: tmp[i] (packed) holds data bound for rank r + i; at step k the
 * blocks with bit k of i set move k ranks on, keeping their index, so data
 * from rank s ends at rank s + i = its destination, index i. */
static int alltoall_bruck(const struct coll_view *v, const void *src, MPI_Count scount,
                          struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                          struct vmpi_dtype *rdt, MPI_Count blk)
{
    int p = v->size, r = v->rank;
    struct vmpi_dtype *bt = coll_byte_type();
    int half = (p + 1) / 2; /* at most this many indices have a given bit set */
    char *tmp = malloc((size_t)((p + 2 * half) * blk));
    if (!tmp)
        return nomem(v);
    char *sendpk = tmp + (MPI_Aint)p * blk, *recvpk = sendpk + (MPI_Aint)half * blk;
    MPI_Aint sstride = (MPI_Aint)scount * vmpi_dtype_extent(sdt);
    MPI_Aint rstride = (MPI_Aint)rcount * vmpi_dtype_extent(rdt);
    for (int i = 0; i < p; i++)
        vmpi_dtype_pack(tmp + (MPI_Aint)i * blk,
                        vmpi_dtype_addr(src, (MPI_Aint)((r + i) % p) * sstride), scount, sdt, 0,
                        (size_t)blk);
    int rc = MPI_SUCCESS;
    for (int k = 1; k < p && rc == MPI_SUCCESS; k <<= 1) {
        int n = 0;
        for (int i = k; i < p; i++)
            if (i & k)
                memcpy(sendpk + (MPI_Aint)(n++) * blk, tmp + (MPI_Aint)i * blk, (size_t)blk);
        rc = coll_sendrecv(v, sendpk, n * blk, bt, (r + k) % p, recvpk, n * blk, bt,
                           (r - k + p) % p, COLL_TAG_ALLTOALL);
        n = 0;
        for (int i = k; i < p && rc == MPI_SUCCESS; i++)
            if (i & k)
                memcpy(tmp + (MPI_Aint)i * blk, recvpk + (MPI_Aint)(n++) * blk, (size_t)blk);
    }
    if (rc == MPI_SUCCESS)
        for (int i = 0; i < p; i++)
            vmpi_dtype_unpack(vmpi_dtype_addr(rbuf, (MPI_Aint)((r - i + p) % p) * rstride),
                              rcount, rdt, 0, tmp + (MPI_Aint)i * blk, (size_t)blk);
    free(tmp);
    return rc;
}

/* sbuf may be MPI_IN_PLACE: the blocks to send are then in rbuf, laid out
 * as (rcount, rdt), and are replaced by the received ones. */
int vmpi_flat_alltoall(const struct coll_view *v, const void *sbuf, MPI_Count scount,
                       struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                       struct vmpi_dtype *rdt)
{
    int p = v->size;
    MPI_Count blk = nbytes(rcount, rdt);
    if (blk == 0 || (p == 1 && sbuf == MPI_IN_PLACE))
        return MPI_SUCCESS;
    int alg = coll_choice[COLL_ALLTOALL].alg;
    if (!alg)
        alg = blk <= ALLTOALL_SHORT && p >= 8 ? ALLTOALL_BRUCK
              : blk <= ALLTOALL_MEDIUM        ? ALLTOALL_LINEAR
                                              : ALLTOALL_PAIRWISE;
    if (alg == ALLTOALL_BRUCK && p > 1) {
        if (sbuf == MPI_IN_PLACE)
            return alltoall_bruck(v, rbuf, rcount, rdt, rbuf, rcount, rdt, blk);
        return alltoall_bruck(v, sbuf, scount, sdt, rbuf, rcount, rdt, blk);
    }
    struct blocks sd = {.kind = BLK_UNIFORM, .buf = (char *)sbuf, .count = scount, .dt = sdt};
    struct blocks rd = {.kind = BLK_UNIFORM, .buf = rbuf, .count = rcount, .dt = rdt};
    return exchange_maybe_in_place(v, sbuf, &sd, &rd, alg);
}

static int alltoallv_alg(int p)
{
    int alg = coll_choice[COLL_ALLTOALL].alg;
    if (alg == ALLTOALL_PAIRWISE || alg == ALLTOALL_LINEAR)
        return alg;
    /* default, and Bruck (it needs equal block sizes) */
    return p <= ALLTOALLV_LINEAR_P ? ALLTOALL_LINEAR : ALLTOALL_PAIRWISE;
}

/* Displacements in extents of the type; with sbuf MPI_IN_PLACE the send
 * arguments are ignored (the receive ones describe both). */
int vmpi_flat_alltoallv(const struct coll_view *v, const void *sbuf, const int *scounts,
                        const int *sdispls, struct vmpi_dtype *sdt, void *rbuf,
                        const int *rcounts, const int *rdispls, struct vmpi_dtype *rdt)
{
    struct blocks sd = {.kind = BLK_V, .buf = (char *)sbuf, .counts = scounts,
                        .displs = sdispls, .dt = sdt};
    struct blocks rd = {.kind = BLK_V, .buf = rbuf, .counts = rcounts, .displs = rdispls,
                        .dt = rdt};
    return exchange_maybe_in_place(v, sbuf, &sd, &rd, alltoallv_alg(v->size));
}

/* Displacements in bytes, a type per block (NULL allowed where the count
 * is 0); MPI_IN_PLACE as for alltoallv. */
int vmpi_flat_alltoallw(const struct coll_view *v, const void *sbuf, const int *scounts,
                        const int *sdispls, struct vmpi_dtype *const *sdts, void *rbuf,
                        const int *rcounts, const int *rdispls, struct vmpi_dtype *const *rdts)
{
    struct blocks sd = {.kind = BLK_W, .buf = (char *)sbuf, .counts = scounts,
                        .displs = sdispls, .dts = sdts};
    struct blocks rd = {.kind = BLK_W, .buf = rbuf, .counts = rcounts, .displs = rdispls,
                        .dts = rdts};
    return exchange_maybe_in_place(v, sbuf, &sd, &rd, alltoallv_alg(v->size));
}
