/* Non-blocking collectives that move data, as schedules (coll/sched.c runs
 * them; coll_impl.h has the building API). Flat on all ranks of the
 * communicator, like the blocking v/w forms:
 *   igather(v)     linear: the root posts every receive in one round
 *   iscatter(v)    linear: the root posts every send in one round
 *   iallgather     recursive doubling when p is a power of two, else a ring
 *   iallgatherv    a ring: step k passes on the block of rank r - k
 *   ialltoall(v/w) linear: every receive, then every send, in one round
 *
 * Each rank's part of a buffer is a block (struct blocks): its address,
 * count and datatype come from one (count, type) pair, from counts and
 * displacements in extents (v forms), or from displacements in bytes and a
 * type per rank (w form). Blocks of zero bytes are not sent: both sides
 * compute the same size, as MPI requires equal type signatures.
 *
 * MPI_IN_PLACE in ialltoall(v/w): received blocks overwrite recvbuf while
 * others still have to go out of it, so the outgoing blocks are packed into
 * scratch in the first round's first steps and sent from there as bytes. */
#include "../core/dtype_impl.h" /* vmpi_dtype_addr */
#include "coll_impl.h"

/* One side of a collective: p blocks. */
struct blocks {
    char *buf;
    MPI_Count count;                /* counts NULL: every block is (count, dt) */
    const int *counts, *displs;     /* v forms: displs in extents of dt */
    struct vmpi_dtype *dt;          /* NULL: dts[i] per block, displs in bytes */
    struct vmpi_dtype *const *dts;
};

static void *blk_addr(const struct blocks *b, int i)
{
    if (!b->dt)
        return vmpi_dtype_addr(b->buf, b->displs[i]);
    MPI_Aint ext = vmpi_dtype_extent(b->dt);
    MPI_Aint at = b->counts ? (MPI_Aint)b->displs[i] : (MPI_Aint)(i * b->count);
    return vmpi_dtype_addr(b->buf, at * ext);
}

static MPI_Count blk_count(const struct blocks *b, int i)
{
    return b->counts ? b->counts[i] : b->count;
}

static struct vmpi_dtype *blk_type(const struct blocks *b, int i)
{
    return b->dt ? b->dt : b->dts[i];
}

static MPI_Count blk_bytes(const struct blocks *b, int i)
{
    MPI_Count n = blk_count(b, i);
    return n ? n * vmpi_dtype_size(blk_type(b, i)) : 0; /* a zero block's type may be NULL */
}

static void send_blk(struct coll_sched *s, const struct blocks *b, int i, int to, int tag)
{
    if (blk_bytes(b, i))
        coll_sched_send(s, blk_addr(b, i), blk_count(b, i), blk_type(b, i), to, tag);
}

static void recv_blk(struct coll_sched *s, const struct blocks *b, int i, int from, int tag)
{
    if (blk_bytes(b, i))
        coll_sched_recv(s, blk_addr(b, i), blk_count(b, i), blk_type(b, i), from, tag);
}

/* Block i of a to block j of b, on this rank. */
static void copy_blk(struct coll_sched *s, const struct blocks *a, int i, const struct blocks *b,
                     int j)
{
    if (blk_bytes(a, i))
        coll_sched_copy(s, blk_addr(a, i), blk_count(a, i), blk_type(a, i), blk_addr(b, j),
                        blk_count(b, j), blk_type(b, j));
}

/* The datatypes of b's non-empty blocks (n of them) live until the end. */
static void hold_blocks(struct coll_sched *s, const struct blocks *b, int n)
{
    if (b->dt) {
        coll_sched_hold(s, b->dt);
        return;
    }
    for (int i = 0; i < n; i++)
        if (b->counts[i])
            coll_sched_hold(s, b->dts[i]);
}

/* A single block (buf, count, dt), for the root-less side of gather/scatter. */
static struct blocks one_block(const void *buf, MPI_Count count, struct vmpi_dtype *dt)
{
    return (struct blocks){.buf = (char *)buf, .count = count, .dt = dt};
}

/* ---- gather and scatter ------------------------------------------------------ */

/* rd (the root's receive side) is used at the root only; sd is absent at
 * the root with MPI_IN_PLACE. */
static int gather(struct vmpi_comm *c, const void *sbuf, const struct blocks *sd,
                  const struct blocks *rd, int root, const char *fn, struct vmpi_req **out)
{
    struct coll_sched *s = coll_sched_new(c, MPI_OP_NULL);
    if (!s)
        return vmpi_err(c, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    if (c->rank != root) {
        coll_sched_hold(s, sd->dt);
        send_blk(s, sd, 0, root, 0);
        return coll_sched_launch(s, fn, out);
    }
    hold_blocks(s, rd, c->size);
    for (int i = 0; i < c->size; i++)
        if (i != root)
            recv_blk(s, rd, i, i, 0);
    if (sbuf != MPI_IN_PLACE) {
        coll_sched_hold(s, sd->dt);
        copy_blk(s, sd, 0, rd, root);
    }
    return coll_sched_launch(s, fn, out);
}

/* The mirror of gather: sd at the root only; rd absent at the root with
 * MPI_IN_PLACE. */
static int scatter(struct vmpi_comm *c, const struct blocks *sd, void *rbuf,
                   const struct blocks *rd, int root, const char *fn, struct vmpi_req **out)
{
    struct coll_sched *s = coll_sched_new(c, MPI_OP_NULL);
    if (!s)
        return vmpi_err(c, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    if (c->rank != root) {
        coll_sched_hold(s, rd->dt);
        recv_blk(s, rd, 0, root, 0);
        return coll_sched_launch(s, fn, out);
    }
    hold_blocks(s, sd, c->size);
    if (rbuf != MPI_IN_PLACE) {
        coll_sched_hold(s, rd->dt);
        copy_blk(s, sd, root, rd, 0);
    }
    for (int i = 1; i < c->size; i++) /* staggered: the root's next rank first */
        send_blk(s, sd, (root + i) % c->size, (root + i) % c->size, 0);
    return coll_sched_launch(s, fn, out);
}

int vmpi_coll_igather(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                      MPI_Count rcount, struct vmpi_dtype *rdt, int root, struct vmpi_comm *c,
                      struct vmpi_req **out)
{
    struct blocks sd = one_block(sbuf, scount, sdt), rd = one_block(rbuf, rcount, rdt);
    return gather(c, sbuf, &sd, &rd, root, "MPI_Igather", out);
}

int vmpi_coll_igatherv(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                       const int *rcounts, const int *displs, struct vmpi_dtype *rdt, int root,
                       struct vmpi_comm *c, struct vmpi_req **out)
{
    struct blocks sd = one_block(sbuf, scount, sdt);
    struct blocks rd = {.buf = rbuf, .counts = rcounts, .displs = displs, .dt = rdt};
    return gather(c, sbuf, &sd, &rd, root, "MPI_Igatherv", out);
}

int vmpi_coll_iscatter(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                       MPI_Count rcount, struct vmpi_dtype *rdt, int root, struct vmpi_comm *c,
                       struct vmpi_req **out)
{
    struct blocks sd = one_block(sbuf, scount, sdt), rd = one_block(rbuf, rcount, rdt);
    return scatter(c, &sd, rbuf, &rd, root, "MPI_Iscatter", out);
}

int vmpi_coll_iscatterv(const void *sbuf, const int *scounts, const int *displs,
                        struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                        struct vmpi_dtype *rdt, int root, struct vmpi_comm *c,
                        struct vmpi_req **out)
{
    struct blocks sd = {.buf = (char *)sbuf, .counts = scounts, .displs = displs, .dt = sdt};
    struct blocks rd = one_block(rbuf, rcount, rdt);
    return scatter(c, &sd, rbuf, &rd, root, "MPI_Iscatterv", out);
}

/* ---- allgather ---------------------------------------------------------------- */

/* Step k: pass the block of rank r - k on to the right, take the block of
 * rank r - k - 1 from the left (every rank knows every block's size). */
static void ring(struct coll_sched *s, const struct blocks *rd, int p, int r)
{
    int right = (r + 1) % p, left = (r - 1 + p) % p;
    for (int k = 0; k < p - 1; k++) {
        send_blk(s, rd, (r - k + p) % p, right, k);
        recv_blk(s, rd, (r - k - 1 + p) % p, left, k);
        coll_sched_round(s);
    }
}

/* rbuf holds p blocks of (rcount, rdt), block i from rank i. sbuf may be
 * MPI_IN_PLACE (this rank's block is already in place). */
int vmpi_coll_iallgather(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt,
                         void *rbuf, MPI_Count rcount, struct vmpi_dtype *rdt,
                         struct vmpi_comm *c, struct vmpi_req **out)
{
    struct coll_sched *s = coll_sched_new(c, MPI_OP_NULL);
    if (!s)
        return vmpi_err(c, MPI_ERR_NO_MEM, "MPI_Iallgather: out of memory");
    int p = c->size, r = c->rank;
    MPI_Aint blk = (MPI_Aint)rcount * vmpi_dtype_extent(rdt);
    coll_sched_hold(s, rdt);
    if (sbuf != MPI_IN_PLACE) {
        coll_sched_hold(s, sdt);
        coll_sched_copy(s, sbuf, scount, sdt, vmpi_dtype_addr(rbuf, r * blk), rcount, rdt);
    }
    if (p == 1 || rcount * vmpi_dtype_size(rdt) == 0)
        return coll_sched_launch(s, "MPI_Iallgather", out);
    if ((p & (p - 1)) == 0) {
        /* step k: swap the 2^k blocks each side has gathered so far */
        for (int mask = 1, k = 0; mask < p; mask <<= 1, k++) {
            int peer = r ^ mask;
            MPI_Aint mine = (MPI_Aint)(r & ~(mask - 1)), theirs = (MPI_Aint)(peer & ~(mask - 1));
            coll_sched_send(s, vmpi_dtype_addr(rbuf, mine * blk), mask * rcount, rdt, peer, k);
            coll_sched_recv(s, vmpi_dtype_addr(rbuf, theirs * blk), mask * rcount, rdt, peer, k);
            coll_sched_round(s);
        }
    } else {
        struct blocks rd = one_block(rbuf, rcount, rdt);
        ring(s, &rd, p, r);
    }
    return coll_sched_launch(s, "MPI_Iallgather", out);
}

int vmpi_coll_iallgatherv(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt,
                          void *rbuf, const int *rcounts, const int *displs,
                          struct vmpi_dtype *rdt, struct vmpi_comm *c, struct vmpi_req **out)
{
    struct coll_sched *s = coll_sched_new(c, MPI_OP_NULL);
    if (!s)
        return vmpi_err(c, MPI_ERR_NO_MEM, "MPI_Iallgatherv: out of memory");
    struct blocks rd = {.buf = rbuf, .counts = rcounts, .displs = displs, .dt = rdt};
    coll_sched_hold(s, rdt);
    if (sbuf != MPI_IN_PLACE) {
        struct blocks sd = one_block(sbuf, scount, sdt);
        coll_sched_hold(s, sdt);
        copy_blk(s, &sd, 0, &rd, c->rank);
    }
    ring(s, &rd, c->size, c->rank);
    return coll_sched_launch(s, "MPI_Iallgatherv", out);
}

/* ---- alltoall ------------------------------------------------------------------ */

/* Block i of sd goes to rank i, block i of rd comes from rank i; sbuf
 * MPI_IN_PLACE: the data to send is rd's. Peers go in a staggered order
 * (receives from r - i, sends to r + i) so no rank is everyone's first
 * target; receives first, so most messages find theirs posted. */
static int exchange(struct vmpi_comm *c, const void *sbuf, const struct blocks *sd,
                    const struct blocks *rd, const char *fn, struct vmpi_req **out)
{
    struct coll_sched *s = coll_sched_new(c, MPI_OP_NULL);
    if (!s)
        return vmpi_err(c, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    int p = c->size, r = c->rank;
    bool in_place = sbuf == MPI_IN_PLACE;
    struct vmpi_dtype *bt = coll_byte_type();
    char *packed = NULL; /* in place: the outgoing blocks, in sending order */
    hold_blocks(s, rd, p);
    if (in_place) {
        MPI_Count total = 0;
        for (int i = 1; i < p; i++)
            total += blk_bytes(rd, (r + i) % p);
        if (total && !(packed = coll_sched_tmp(s, total, bt)))
            return coll_sched_launch(s, fn, out);
        MPI_Count off = 0;
        for (int i = 1; i < p; i++) {
            int to = (r + i) % p;
            MPI_Count n = blk_bytes(rd, to);
            if (n)
                coll_sched_copy(s, blk_addr(rd, to), blk_count(rd, to), blk_type(rd, to),
                                packed + off, n, bt);
            off += n;
        }
    } else {
        hold_blocks(s, sd, p);
        copy_blk(s, sd, r, rd, r);
    }
    for (int i = 1; i < p; i++)
        recv_blk(s, rd, (r - i + p) % p, (r - i + p) % p, 0);
    MPI_Count off = 0;
    for (int i = 1; i < p; i++) {
        int to = (r + i) % p;
        if (!in_place) {
            send_blk(s, sd, to, to, 0);
            continue;
        }
        MPI_Count n = blk_bytes(rd, to);
        if (n)
            coll_sched_send(s, packed + off, n, bt, to, 0);
        off += n;
    }
    return coll_sched_launch(s, fn, out);
}

int vmpi_coll_ialltoall(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt,
                        void *rbuf, MPI_Count rcount, struct vmpi_dtype *rdt,
                        struct vmpi_comm *c, struct vmpi_req **out)
{
    struct blocks sd = one_block(sbuf, scount, sdt), rd = one_block(rbuf, rcount, rdt);
    return exchange(c, sbuf, &sd, &rd, "MPI_Ialltoall", out);
}

int vmpi_coll_ialltoallv(const void *sbuf, const int *scounts, const int *sdispls,
                         struct vmpi_dtype *sdt, void *rbuf, const int *rcounts,
                         const int *rdispls, struct vmpi_dtype *rdt, struct vmpi_comm *c,
                         struct vmpi_req **out)
{
    struct blocks sd = {.buf = (char *)sbuf, .counts = scounts, .displs = sdispls, .dt = sdt};
    struct blocks rd = {.buf = rbuf, .counts = rcounts, .displs = rdispls, .dt = rdt};
    return exchange(c, sbuf, &sd, &rd, "MPI_Ialltoallv", out);
}

int vmpi_coll_ialltoallw(const void *sbuf, const int *scounts, const int *sdispls,
                         struct vmpi_dtype *const *sdts, void *rbuf, const int *rcounts,
                         const int *rdispls, struct vmpi_dtype *const *rdts,
                         struct vmpi_comm *c, struct vmpi_req **out)
{
    struct blocks sd = {.buf = (char *)sbuf, .counts = scounts, .displs = sdispls, .dts = sdts};
    struct blocks rd = {.buf = rbuf, .counts = rcounts, .displs = rdispls, .dts = rdts};
    return exchange(c, sbuf, &sd, &rd, "MPI_Ialltoallw", out);
}
