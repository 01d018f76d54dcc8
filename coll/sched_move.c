/* Non-blocking collectives that move data, as schedules (coll/sched.c runs
 * them; coll_impl.h has the building API). Flat on all ranks of the
 * communicator, like the blocking v/w forms:
 *   igather(v)     linear: the root posts every receive in one round;
 *                  small equal blocks on 8 ranks or more: a binomial tree
 *   iscatter(v)    the mirror of igather(v)
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

/* Binomial trees for small equal blocks (igather, iscatter): log2(p) rounds
 * instead of p - 1 messages at the root. Relative rank vr = (rank - root)
 * mod p holds the blocks of relative ranks [vr, vr + n), n = min(lowbit(vr),
 * p - vr) (the root: all p), packed as bytes in relative order in scratch;
 * its children are vr + m for the powers of two m < lowbit(vr), its parent
 * vr - lowbit(vr). The root packs or unpacks the blocks in rank order. */
enum { TREE_MIN_RANKS = 8, TREE_MAX_BLOCK = 1024 };

static bool tree_fits(const struct vmpi_comm *c, MPI_Count bb)
{
    return c->size >= TREE_MIN_RANKS && bb > 0 && bb <= TREE_MAX_BLOCK;
}

struct tree {
    int p, vr, low, n; /* low: lowbit(vr), p at the root */
    struct blocks t;   /* the scratch, blocks of bb bytes; buf NULL on leaves */
};

static struct tree tree_at(struct coll_sched *s, const struct vmpi_comm *c, int root,
                           MPI_Count bb)
{
    struct tree k = {.p = c->size, .vr = (c->rank - root + c->size) % c->size};
    k.low = k.vr ? k.vr & -k.vr : k.p;
    k.n = k.low < k.p - k.vr ? k.low : k.p - k.vr;
    k.t = (struct blocks){.count = bb, .dt = coll_byte_type()};
    if (k.n > 1)
        k.t.buf = coll_sched_tmp(s, k.n * bb, k.t.dt);
    return k;
}

/* The subtree of child vr + m: its blocks' place in the scratch and size. */
static void tree_child(struct coll_sched *s, const struct tree *k, int m, int root, bool send)
{
    int at = k->vr + m, nb = m < k->p - at ? m : k->p - at;
    void *buf = vmpi_dtype_addr(k->t.buf, m * k->t.count);
    if (send)
        coll_sched_send(s, buf, nb * k->t.count, k->t.dt, (at + root) % k->p, 0);
    else
        coll_sched_recv(s, buf, nb * k->t.count, k->t.dt, (at + root) % k->p, 0);
}

static void tree_gather(struct coll_sched *s, struct vmpi_comm *c, const void *sbuf,
                        const struct blocks *sd, const struct blocks *rd, int root,
                        MPI_Count bb)
{
    struct tree k = tree_at(s, c, root, bb);
    int parent = (k.vr - k.low + root) % k.p;
    if (k.n == 1) {
        send_blk(s, sd, 0, parent, 0);
        return;
    }
    if (coll_sched_oom(s))
        return;
    if (sbuf == MPI_IN_PLACE)
        copy_blk(s, rd, root, &k.t, 0);
    else
        copy_blk(s, sd, 0, &k.t, 0);
    for (int m = 1; m < k.low && k.vr + m < k.p; m <<= 1)
        tree_child(s, &k, m, root, false);
    coll_sched_round(s);
    if (k.vr) {
        coll_sched_send(s, k.t.buf, k.n * bb, k.t.dt, parent, 0);
        return;
    }
    for (int i = 0; i < k.p; i++)
        copy_blk(s, &k.t, i, rd, (i + root) % k.p);
}

static void tree_scatter(struct coll_sched *s, struct vmpi_comm *c, const struct blocks *sd,
                         void *rbuf, const struct blocks *rd, int root, MPI_Count bb)
{
    struct tree k = tree_at(s, c, root, bb);
    int parent = (k.vr - k.low + root) % k.p;
    if (k.n == 1) {
        recv_blk(s, rd, 0, parent, 0);
        return;
    }
    if (coll_sched_oom(s))
        return;
    if (k.vr) {
        coll_sched_recv(s, k.t.buf, k.n * bb, k.t.dt, parent, 0);
        coll_sched_round(s);
    } else {
        for (int i = 0; i < k.p; i++)
            copy_blk(s, sd, (i + root) % k.p, &k.t, i);
    }
    int m = 1; /* largest subtree first: it has the longest way to go */
    while (m * 2 < k.low && k.vr + m * 2 < k.p)
        m *= 2;
    for (; m > 0; m >>= 1)
        if (k.vr + m < k.p)
            tree_child(s, &k, m, root, true);
    if (rbuf != MPI_IN_PLACE)
        copy_blk(s, &k.t, 0, rd, 0);
}

/* rd (the root's receive side) is used at the root only; sd is absent at
 * the root with MPI_IN_PLACE. */
static int gather(struct vmpi_comm *c, const void *sbuf, const struct blocks *sd,
                  const struct blocks *rd, int root, bool vform, const char *fn,
                  struct vmpi_req **out)
{
    struct coll_sched *s = coll_sched_new(c, MPI_OP_NULL);
    if (!s)
        return vmpi_err(c, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    MPI_Count bb = c->rank == root ? blk_bytes(rd, 0) : blk_bytes(sd, 0);
    if (!vform && tree_fits(c, bb)) {
        if (c->rank == root)
            coll_sched_hold(s, rd->dt);
        if (sbuf != MPI_IN_PLACE)
            coll_sched_hold(s, sd->dt);
        tree_gather(s, c, sbuf, sd, rd, root, bb);
        return coll_sched_launch(s, fn, out);
    }
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
                   const struct blocks *rd, int root, bool vform, const char *fn,
                   struct vmpi_req **out)
{
    struct coll_sched *s = coll_sched_new(c, MPI_OP_NULL);
    if (!s)
        return vmpi_err(c, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    MPI_Count bb = c->rank == root ? blk_bytes(sd, 0) : blk_bytes(rd, 0);
    if (!vform && tree_fits(c, bb)) {
        if (c->rank == root)
            coll_sched_hold(s, sd->dt);
        if (rbuf != MPI_IN_PLACE)
            coll_sched_hold(s, rd->dt);
        tree_scatter(s, c, sd, rbuf, rd, root, bb);
        return coll_sched_launch(s, fn, out);
    }
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
    return gather(c, sbuf, &sd, &rd, root, false, "MPI_Igather", out);
}

int vmpi_coll_igatherv(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                       const int *rcounts, const int *displs, struct vmpi_dtype *rdt, int root,
                       struct vmpi_comm *c, struct vmpi_req **out)
{
    struct blocks sd = one_block(sbuf, scount, sdt);
    struct blocks rd = {.buf = rbuf, .counts = rcounts, .displs = displs, .dt = rdt};
    return gather(c, sbuf, &sd, &rd, root, true, "MPI_Igatherv", out);
}

int vmpi_coll_iscatter(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                       MPI_Count rcount, struct vmpi_dtype *rdt, int root, struct vmpi_comm *c,
                       struct vmpi_req **out)
{
    struct blocks sd = one_block(sbuf, scount, sdt), rd = one_block(rbuf, rcount, rdt);
    return scatter(c, &sd, rbuf, &rd, root, false, "MPI_Iscatter", out);
}

int vmpi_coll_iscatterv(const void *sbuf, const int *scounts, const int *displs,
                        struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                        struct vmpi_dtype *rdt, int root, struct vmpi_comm *c,
                        struct vmpi_req **out)
{
    struct blocks sd = {.buf = (char *)sbuf, .counts = scounts, .displs = displs, .dt = sdt};
    struct blocks rd = one_block(rbuf, rcount, rdt);
    return scatter(c, &sd, rbuf, &rd, root, true, "MPI_Iscatterv", out);
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
