/* Node collectives through shared memory: the ranks of one node (coll/hier.c)
 * pass data through their collective slots (shm/cslot.h) instead of sending
 * point-to-point messages, so a broadcast is one copy in and one copy out,
 * and no step waits for a message to be matched.
 *
 *   barrier    every rank but the leader (node rank 0) publishes an empty
 *              step; the leader waits for all of them, runs the leaders'
 *              part, and publishes the release the others wait for. (A
 *              one-round barrier, each rank reading every flag, is faster
 *              alone but lets every rank leave at once: on an oversubscribed
 *              host the collective that follows then waits longer, three
 *              times as long for a broadcast in bench/coll.)
 *   bcast      the root publishes the packed message in chunks of half a
 *              slot, alternating halves, so it fills one half while the
 *              others empty the other; the others unpack each chunk
 *   reduce,    each rank publishes its contribution (a chunk at a time);
 *   allreduce  up to NODE_SLICE_MIN bytes the root (every rank, for
 *              allreduce) combines all contributions itself; above, rank i
 *              combines slice i of the chunk over all contributions into its
 *              slot's other half, and the root (every rank) copies the
 *              slices out. Only layouts whose packed form is (count, dt)
 *              itself (node_reduce_ok); others use point-to-point.
 *   gather, scatter, allgather, alltoall and their v forms: each rank's
 *              block is copied into a slot once and out once by each
 *              reader (below, "data movement").
 *
 * Reduction order: x0 op (x1 op (... op x(n-1))) over node ranks, for every
 * element, whatever the path; so results are the same on every rank and
 * from run to run.
 *
 * A step's tag names the communicator (its instance number, which no other
 * communicator of the rank ever had, core/comm.c), the node collective (a
 * per-communicator count every node member advances in step) and the step,
 * so a reader never takes another collective's data for its own, not even a
 * late reader of a freed communicator. */
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "../core/dtype_impl.h" /* vmpi_dtype_addr */
#include "../shm/cslot.h"
#include "coll_impl.h"

/* Below this many bytes one rank combines everything (one round of
 * publications); above, the work is split in slices (two rounds). */
#define NODE_SLICE_MIN 4096

/* Nonzero: instances start at 1. seq and step wrap, but a half's live step
 * is at most one collective behind its owner. */
static uint64_t node_tag(const struct coll_node *nd, uint32_t seq, uint32_t step)
{
    return (uint64_t)nd->inst << 32 | (uint64_t)(seq & 0xffffu) << 16 | (step & 0xffffu);
}

/* The half a step uses: consecutive node collectives start on different
 * halves, so a rank that published last can publish again at once (the
 * barrier's release, then a broadcast from the leader). */
static unsigned half(uint32_t seq, uint32_t step)
{
    return (seq + step) & 1;
}

/* One round of waiting for a flag. With more ranks than processors the
 * rank that will set it needs this processor, and a poll of the progress
 * engine reads every peer's ring (63 of them at 64 ranks, out of a cache
 * the other ranks' time slices have filled): between two polls the waiter
 * only gives the processor away. Without oversubscription it polls (with
 * threads that share a processor the progress engine yields for them). */
#define NODE_POLL_EVERY 8

static void idle(unsigned *round)
{
    if (!vmpi_g.yield_polls || vmpi_g.yield_threads || ++*round % NODE_POLL_EVERY == 0)
        vmpi_progress();
    else
        sched_yield();
}

/* Halves whose readers only count themselves in (the v-variants, below):
 * their owner frees them before it uses them again, in whatever collective
 * that is. A rank owns at most two slots (its VM's and its host's). */
static struct owed {
    struct vmpi_cslot_flag *f;
    uint32_t readers;
} owed[4];
static int nowed;

static void settle(struct owed *o)
{
    for (unsigned r = 0; atomic_load_explicit(&o->f->ack, memory_order_acquire) < o->readers;)
        idle(&r);
    atomic_store_explicit(&o->f->ack, 0, memory_order_relaxed);
    atomic_store_explicit(&o->f->tag, 0, memory_order_release);
    o->f = NULL;
    nowed--;
}

static void owe(struct vmpi_cslot_flag *f, uint32_t readers)
{
    if (!readers)
        return;
    struct owed *o = &owed[0];
    for (size_t i = 0; i < sizeof owed / sizeof *owed; i++)
        if (!owed[i].f) {
            o = &owed[i];
            break;
        }
    if (o->f)
        settle(o);
    *o = (struct owed){f, readers};
    nowed++;
}

/* The owner waits until the half is free. */
static void wait_free(struct vmpi_cslot_flag *f)
{
    if (VMPI_UNLIKELY(nowed))
        for (size_t i = 0; i < sizeof owed / sizeof *owed; i++)
            if (owed[i].f == f)
                settle(&owed[i]);
    for (unsigned r = 0; atomic_load_explicit(&f->tag, memory_order_acquire) != 0;)
        idle(&r);
}

static void wait_tag(struct vmpi_cslot_flag *f, uint64_t tag)
{
    for (unsigned r = 0; atomic_load_explicit(&f->tag, memory_order_acquire) != tag;)
        idle(&r);
}

static void publish(struct vmpi_cslot_flag *f, uint64_t tag, int readers)
{
    if (readers > 0)
        atomic_store_explicit(&f->tag, tag, memory_order_release);
}

/* A reader is done with the live step; the last of `readers` frees the half. */
static void consume(struct vmpi_cslot_flag *f, int readers)
{
    if (atomic_fetch_add_explicit(&f->ack, 1, memory_order_acq_rel) + 1 == (uint32_t)readers) {
        atomic_store_explicit(&f->ack, 0, memory_order_relaxed);
        atomic_store_explicit(&f->tag, 0, memory_order_release);
    }
}

int vmpi_node_barrier(struct coll_node *nd, int (*between)(void *), void *arg)
{
    int n = nd->n;
    uint32_t seq = nd->seq++;
    uint64_t tag = node_tag(nd, seq, 0);
    unsigned h = half(seq, 0);
    struct vmpi_cslot_flag *lead = &nd->slot[0]->flag[h];
    if (nd->me != 0) {
        struct vmpi_cslot_flag *mine = &nd->slot[nd->me]->flag[h];
        wait_free(mine);
        publish(mine, tag, 1);
        wait_tag(lead, tag);
        consume(lead, n - 1);
        /* A message another rank of the node sent before the barrier is
         * in shared memory by now: one poll matches it, as a barrier of
         * messages on the same ordered channels would have. */
        vmpi_progress();
        return MPI_SUCCESS;
    }
    for (int i = 1; i < n; i++) {
        wait_tag(&nd->slot[i]->flag[h], tag);
        consume(&nd->slot[i]->flag[h], 1);
    }
    int rc = between ? between(arg) : MPI_SUCCESS;
    /* Released even on error, so no rank of the node hangs. */
    wait_free(lead);
    publish(lead, tag, n - 1);
    vmpi_progress();
    return rc;
}

int vmpi_node_bcast(struct coll_node *nd, void *buf, MPI_Count count, struct vmpi_dtype *dt,
                    int root)
{
    uint32_t seq = nd->seq++;
    size_t total = (size_t)(count * vmpi_dtype_size(dt));
    bool contig = vmpi_dtype_is_contig(dt);
    char *base = contig ? vmpi_dtype_addr(buf, vmpi_dtype_true_lb(dt)) : NULL;
    struct vmpi_cslot *s = nd->slot[root];
    uint32_t step = 0;
    for (size_t off = 0; off < total; off += VMPI_CSLOT_HALF, step++) {
        size_t len = total - off < VMPI_CSLOT_HALF ? total - off : VMPI_CSLOT_HALF;
        struct vmpi_cslot_flag *f = &s->flag[half(seq, step)];
        char *data = s->data[half(seq, step)];
        if (nd->me == root) {
            wait_free(f);
            if (contig)
                memcpy(data, base + off, len);
            else
                vmpi_dtype_pack(data, buf, count, dt, off, len);
            publish(f, node_tag(nd, seq, step), nd->n - 1);
        } else {
            wait_tag(f, node_tag(nd, seq, step));
            if (contig)
                memcpy(base + off, data, len);
            else
                vmpi_dtype_unpack(buf, count, dt, off, data, len);
            consume(f, nd->n - 1);
        }
    }
    return MPI_SUCCESS;
}

bool vmpi_node_reduce_ok(const struct vmpi_dtype *dt)
{
    MPI_Count size = vmpi_dtype_size(dt);
    return vmpi_dtype_is_contig(dt) && vmpi_dtype_true_lb(dt) == 0 &&
           vmpi_dtype_extent(dt) == size && size > 0 && size <= VMPI_CSLOT_HALF;
}

/* dst = x0 op (x1 op ... x(n-1)) over elements [lo, lo + k) of the
 * contribution chunks (half h of every slot). */
static void fold(struct coll_node *nd, unsigned h, char *dst, size_t lo, MPI_Count k,
                 size_t esz, struct vmpi_dtype *dt, MPI_Op op)
{
    int n = nd->n;
    memcpy(dst, nd->slot[n - 1]->data[h] + lo * esz, (size_t)k * esz);
    for (int j = n - 2; j >= 0; j--)
        vmpi_op_apply(op, nd->slot[j]->data[h] + lo * esz, dst, k, dt);
}

/* root < 0: allreduce (every rank gets the result). */
static int node_reduce(struct coll_node *nd, const void *sbuf, void *rbuf, MPI_Count count,
                       struct vmpi_dtype *dt, MPI_Op op, int root)
{
    int n = nd->n, me = nd->me;
    uint32_t seq = nd->seq++;
    bool all = root < 0, gets = all || me == root;
    size_t esz = (size_t)vmpi_dtype_size(dt);
    size_t per = VMPI_CSLOT_HALF / esz;
    const char *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    bool sliced = (size_t)count * esz > NODE_SLICE_MIN;
    /* Readers of one rank's result (slices) and of the contributions. */
    int res_readers = all ? n - 1 : (me == root ? 0 : 1);
    int in_readers = sliced || all ? n - 1 : res_readers;
    struct vmpi_cslot *mine = nd->slot[me];
    /* Contributions in half hi, result slices in the other. */
    unsigned hi = half(seq, 0), hr = half(seq, 1);
    uint32_t step = 0;
    for (size_t lo = 0; lo < (size_t)count; lo += per, step += 2) {
        MPI_Count k = (size_t)count - lo < per ? (MPI_Count)((size_t)count - lo) : (MPI_Count)per;
        uint64_t tin = node_tag(nd, seq, step), tres = node_tag(nd, seq, step + 1);
        wait_free(&mine->flag[hi]);
        memcpy(mine->data[hi], in + lo * esz, (size_t)k * esz);
        publish(&mine->flag[hi], tin, in_readers);
        if (!sliced) {
            if (!gets)
                continue;
            for (int j = 0; j < n; j++)
                if (j != me)
                    wait_tag(&nd->slot[j]->flag[hi], tin);
            fold(nd, hi, (char *)rbuf + lo * esz, 0, k, esz, dt, op);
            for (int j = 0; j < n; j++)
                if (j != me)
                    consume(&nd->slot[j]->flag[hi], all ? n - 1 : 1);
            continue;
        }
        /* Slice me of this chunk, combined into the other half of my slot. */
        MPI_Count s0 = k * me / n, s1 = k * (me + 1) / n;
        for (int j = 0; j < n; j++)
            if (j != me)
                wait_tag(&nd->slot[j]->flag[hi], tin);
        wait_free(&mine->flag[hr]);
        fold(nd, hi, mine->data[hr] + (size_t)s0 * esz, (size_t)s0, s1 - s0, esz, dt, op);
        for (int j = 0; j < n; j++)
            if (j != me)
                consume(&nd->slot[j]->flag[hi], n - 1);
        publish(&mine->flag[hr], tres, res_readers);
        if (!gets)
            continue;
        for (int j = 0; j < n; j++) {
            MPI_Count a = k * j / n, b = k * (j + 1) / n;
            struct vmpi_cslot *s = nd->slot[j];
            if (j != me)
                wait_tag(&s->flag[hr], tres);
            memcpy((char *)rbuf + (lo + (size_t)a) * esz, s->data[hr] + (size_t)a * esz,
                   (size_t)(b - a) * esz);
            if (j != me)
                consume(&s->flag[hr], all ? n - 1 : 1);
        }
    }
    return MPI_SUCCESS;
}

int vmpi_node_reduce(struct coll_node *nd, const void *sbuf, void *rbuf, MPI_Count count,
                     struct vmpi_dtype *dt, MPI_Op op, int root)
{
    return node_reduce(nd, sbuf, rbuf, count, dt, op, root);
}

int vmpi_node_allreduce(struct coll_node *nd, const void *sbuf, void *rbuf, MPI_Count count,
                        struct vmpi_dtype *dt, MPI_Op op)
{
    return node_reduce(nd, sbuf, rbuf, count, dt, op, -1);
}

/* ---- data movement on one node -------------------------------------------
 * Each rank's block is moved packed, in steps of at most a half slot (or, in
 * scatter and alltoall, of a 1/n part of one: one part per destination).
 * Step s of every collective moves bytes [s * piece, ...) of every block. */

/* Bytes [off, off + len) of the packed form of (buf, count, dt) to dst. */
static void put(char *dst, const void *buf, MPI_Count count, struct vmpi_dtype *dt, size_t off,
                size_t len)
{
    if (vmpi_dtype_is_contig(dt))
        memcpy(dst, vmpi_dtype_addr(buf, vmpi_dtype_true_lb(dt)) + off, len);
    else
        vmpi_dtype_pack(dst, buf, count, dt, off, len);
}

static void get(void *buf, MPI_Count count, struct vmpi_dtype *dt, size_t off, const char *src,
                size_t len)
{
    if (vmpi_dtype_is_contig(dt))
        memcpy(vmpi_dtype_addr(buf, vmpi_dtype_true_lb(dt)) + off, src, len);
    else
        vmpi_dtype_unpack(buf, count, dt, off, src, len);
}

/* Block j of a buffer of blocks of (count, dt). */
static char *block(const void *buf, int j, MPI_Count count, const struct vmpi_dtype *dt)
{
    return vmpi_dtype_addr(buf, (MPI_Aint)j * (MPI_Aint)count * vmpi_dtype_extent(dt));
}

/* The per-destination part of a half for n destinations (cache lines). */
static size_t part_bytes(int n)
{
    return (VMPI_CSLOT_HALF / (size_t)n) & ~(size_t)63;
}

bool vmpi_node_move_ok(const struct coll_node *nd)
{
    return nd->slot && part_bytes(nd->n) > 0;
}

static int steps_of(size_t total, size_t piece)
{
    return total ? (int)((total + piece - 1) / piece) : 0;
}

/* Step st of a collective that moves total bytes per block in pieces. */
struct step {
    size_t off, len;
    unsigned h;
    uint64_t tag;
};

static struct step step_at(const struct coll_node *nd, uint32_t seq, int st, size_t total,
                           size_t piece)
{
    size_t off = (size_t)st * piece;
    return (struct step){off, total - off < piece ? total - off : piece,
                         half(seq, (uint32_t)st), node_tag(nd, seq, (uint32_t)st)};
}

/* Bytes of one block: the root side's (count, dt) or the other side's, which
 * MPI requires to have the same signature. */
static size_t block_bytes(bool root_side, MPI_Count rc, const struct vmpi_dtype *rdt,
                          MPI_Count oc, const struct vmpi_dtype *odt)
{
    return root_side ? (size_t)(rc * vmpi_dtype_size(rdt)) : (size_t)(oc * vmpi_dtype_size(odt));
}

int vmpi_node_allgather(struct coll_node *nd, const void *sbuf, MPI_Count scount,
                        struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                        struct vmpi_dtype *rdt)
{
    int n = nd->n, me = nd->me;
    uint32_t seq = nd->seq++;
    size_t total = (size_t)(rcount * vmpi_dtype_size(rdt));
    struct vmpi_cslot *mine = nd->slot[me];
    for (int st = 0; st < steps_of(total, VMPI_CSLOT_HALF); st++) {
        struct step p = step_at(nd, seq, st, total, VMPI_CSLOT_HALF);
        wait_free(&mine->flag[p.h]);
        if (sbuf == MPI_IN_PLACE)
            put(mine->data[p.h], block(rbuf, me, rcount, rdt), rcount, rdt, p.off, p.len);
        else
            put(mine->data[p.h], sbuf, scount, sdt, p.off, p.len);
        publish(&mine->flag[p.h], p.tag, n - 1);
        for (int i = 1; i < n; i++) {
            int j = (me + i) % n;
            struct vmpi_cslot *s = nd->slot[j];
            wait_tag(&s->flag[p.h], p.tag);
            get(block(rbuf, j, rcount, rdt), rcount, rdt, p.off, s->data[p.h], p.len);
            consume(&s->flag[p.h], n - 1);
        }
        if (sbuf != MPI_IN_PLACE)
            get(block(rbuf, me, rcount, rdt), rcount, rdt, p.off, mine->data[p.h], p.len);
    }
    return MPI_SUCCESS;
}

int vmpi_node_gather(struct coll_node *nd, const void *sbuf, MPI_Count scount,
                     struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                     struct vmpi_dtype *rdt, int root)
{
    int n = nd->n, me = nd->me;
    uint32_t seq = nd->seq++;
    size_t total = block_bytes(me == root, rcount, rdt, scount, sdt);
    for (int st = 0; st < steps_of(total, VMPI_CSLOT_HALF); st++) {
        struct step p = step_at(nd, seq, st, total, VMPI_CSLOT_HALF);
        if (me != root) {
            struct vmpi_cslot *s = nd->slot[me];
            wait_free(&s->flag[p.h]);
            put(s->data[p.h], sbuf, scount, sdt, p.off, p.len);
            publish(&s->flag[p.h], p.tag, 1);
            continue;
        }
        for (int j = 0; j < n; j++) {
            if (j == me)
                continue;
            struct vmpi_cslot *s = nd->slot[j];
            wait_tag(&s->flag[p.h], p.tag);
            get(block(rbuf, j, rcount, rdt), rcount, rdt, p.off, s->data[p.h], p.len);
            consume(&s->flag[p.h], 1);
        }
    }
    /* The root's own block last: a failed copy must not stop the others. */
    if (me == root && sbuf != MPI_IN_PLACE)
        return coll_local_copy2(block(rbuf, me, rcount, rdt), rcount, rdt, sbuf, scount, sdt);
    return MPI_SUCCESS;
}

int vmpi_node_scatter(struct coll_node *nd, const void *sbuf, MPI_Count scount,
                      struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                      struct vmpi_dtype *rdt, int root)
{
    int n = nd->n, me = nd->me;
    uint32_t seq = nd->seq++;
    size_t piece = part_bytes(n);
    size_t total = block_bytes(me == root, scount, sdt, rcount, rdt);
    struct vmpi_cslot *s = nd->slot[root];
    for (int st = 0; st < steps_of(total, piece); st++) {
        struct step p = step_at(nd, seq, st, total, piece);
        if (me == root) {
            wait_free(&s->flag[p.h]);
            for (int j = 0; j < n; j++)
                if (j != me)
                    put(s->data[p.h] + (size_t)j * piece, block(sbuf, j, scount, sdt), scount, sdt,
                        p.off, p.len);
            publish(&s->flag[p.h], p.tag, n - 1);
        } else {
            wait_tag(&s->flag[p.h], p.tag);
            get(rbuf, rcount, rdt, p.off, s->data[p.h] + (size_t)me * piece, p.len);
            consume(&s->flag[p.h], n - 1);
        }
    }
    if (me == root && rbuf != MPI_IN_PLACE)
        return coll_local_copy2(rbuf, rcount, rdt, block(sbuf, me, scount, sdt), scount, sdt);
    return MPI_SUCCESS;
}

int vmpi_node_alltoall(struct coll_node *nd, const void *sbuf, MPI_Count scount,
                       struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                       struct vmpi_dtype *rdt)
{
    int n = nd->n, me = nd->me;
    uint32_t seq = nd->seq++;
    size_t piece = part_bytes(n);
    size_t total = (size_t)(rcount * vmpi_dtype_size(rdt));
    /* In place, the blocks go out of rbuf as (rcount, rdt); each step has
     * published bytes [off, off + len) of every block before it receives
     * into them. */
    const void *src = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    MPI_Count sc = sbuf == MPI_IN_PLACE ? rcount : scount;
    struct vmpi_dtype *sdt2 = sbuf == MPI_IN_PLACE ? rdt : sdt;
    struct vmpi_cslot *mine = nd->slot[me];
    for (int st = 0; st < steps_of(total, piece); st++) {
        struct step p = step_at(nd, seq, st, total, piece);
        wait_free(&mine->flag[p.h]);
        for (int j = 0; j < n; j++)
            if (j != me)
                put(mine->data[p.h] + (size_t)j * piece, block(src, j, sc, sdt2), sc, sdt2, p.off,
                    p.len);
        publish(&mine->flag[p.h], p.tag, n - 1);
        for (int i = 1; i < n; i++) {
            int j = (me + i) % n;
            struct vmpi_cslot *s = nd->slot[j];
            wait_tag(&s->flag[p.h], p.tag);
            get(block(rbuf, j, rcount, rdt), rcount, rdt, p.off, s->data[p.h] + (size_t)me * piece,
                p.len);
            consume(&s->flag[p.h], n - 1);
        }
    }
    /* In place, this rank's own block is already where it belongs. */
    if (sbuf != MPI_IN_PLACE)
        return coll_local_copy2(block(rbuf, me, rcount, rdt), rcount, rdt,
                                block(sbuf, me, scount, sdt), scount, sdt);
    return MPI_SUCCESS;
}

/* ---- the v-variants --------------------------------------------------------
 * Blocks differ in size, so the ranks do not all take the same number of
 * steps. Allgatherv and Gatherv still know every step's readers (all ranks,
 * or the root). In Scatterv and Alltoallv a reader knows only its own
 * blocks, not how many others read a step: readers only count themselves
 * in, and the owner, who knows the count, frees the half when it next
 * needs it (owe, wait_free), so it does not wait for the readers here. */

static size_t vbytes(const int *counts, int j, const struct vmpi_dtype *dt)
{
    return (size_t)counts[j] * (size_t)vmpi_dtype_size(dt);
}

/* The largest block of counts (of dt) but block `skip`'s (-1: none). */
static size_t most_bytes(const int *counts, int n, int skip, const struct vmpi_dtype *dt)
{
    size_t most = 0;
    for (int j = 0; j < n; j++)
        if (j != skip && vbytes(counts, j, dt) > most)
            most = vbytes(counts, j, dt);
    return most;
}

/* Block j of a v-variant's buffer: at displs[j] extents of dt. */
static char *vblock(const void *buf, const int *displs, int j, const struct vmpi_dtype *dt)
{
    return vmpi_dtype_addr(buf, (MPI_Aint)displs[j] * vmpi_dtype_extent(dt));
}

/* Bytes of a block of `total` bytes that step p moves (0 past its end). */
static size_t piece_len(const struct step *p, size_t total, size_t piece)
{
    return total > p->off ? (total - p->off < piece ? total - p->off : piece) : 0;
}

static void count_in(struct vmpi_cslot_flag *f)
{
    atomic_fetch_add_explicit(&f->ack, 1, memory_order_acq_rel);
}

/* Step p of an owner whose blocks go one to each other rank (Scatterv's
 * root, every rank in Alltoallv): the parts of the blocks that reach this
 * far, into half p->h of slot s, published to the ranks that get one. */
static void put_parts(struct vmpi_cslot *s, int n, int me, const struct step *p, size_t piece,
                      const void *buf, const int *counts, const int *displs,
                      struct vmpi_dtype *dt)
{
    wait_free(&s->flag[p->h]);
    uint32_t readers = 0;
    for (int j = 0; j < n; j++) {
        size_t lj = piece_len(p, vbytes(counts, j, dt), piece);
        if (j == me || !lj)
            continue;
        put(s->data[p->h] + (size_t)j * piece, vblock(buf, displs, j, dt), counts[j], dt, p->off,
            lj);
        readers++;
    }
    publish(&s->flag[p->h], p->tag, (int)readers);
    owe(&s->flag[p->h], readers);
}

int vmpi_node_allgatherv(struct coll_node *nd, const void *sbuf, MPI_Count scount,
                         struct vmpi_dtype *sdt, void *rbuf, const int *rcounts,
                         const int *displs, struct vmpi_dtype *rdt)
{
    int n = nd->n, me = nd->me;
    uint32_t seq = nd->seq++;
    size_t most = most_bytes(rcounts, n, -1, rdt);
    struct vmpi_cslot *mine = nd->slot[me];
    char *own = vblock(rbuf, displs, me, rdt);
    for (int st = 0; st < steps_of(most, VMPI_CSLOT_HALF); st++) {
        struct step p = step_at(nd, seq, st, most, VMPI_CSLOT_HALF);
        size_t len = piece_len(&p, vbytes(rcounts, me, rdt), VMPI_CSLOT_HALF);
        wait_free(&mine->flag[p.h]);
        if (len && sbuf == MPI_IN_PLACE)
            put(mine->data[p.h], own, rcounts[me], rdt, p.off, len);
        else if (len)
            put(mine->data[p.h], sbuf, scount, sdt, p.off, len);
        publish(&mine->flag[p.h], p.tag, n - 1);
        for (int i = 1; i < n; i++) {
            int j = (me + i) % n;
            struct vmpi_cslot *s = nd->slot[j];
            size_t lj = piece_len(&p, vbytes(rcounts, j, rdt), VMPI_CSLOT_HALF);
            wait_tag(&s->flag[p.h], p.tag);
            if (lj)
                get(vblock(rbuf, displs, j, rdt), rcounts[j], rdt, p.off, s->data[p.h], lj);
            consume(&s->flag[p.h], n - 1);
        }
        if (len && sbuf != MPI_IN_PLACE)
            get(own, rcounts[me], rdt, p.off, mine->data[p.h], len);
    }
    return MPI_SUCCESS;
}

int vmpi_node_gatherv(struct coll_node *nd, const void *sbuf, MPI_Count scount,
                      struct vmpi_dtype *sdt, void *rbuf, const int *rcounts, const int *displs,
                      struct vmpi_dtype *rdt, int root)
{
    int n = nd->n, me = nd->me;
    uint32_t seq = nd->seq++;
    if (me != root) {
        struct vmpi_cslot *s = nd->slot[me];
        size_t total = (size_t)(scount * vmpi_dtype_size(sdt));
        for (int st = 0; st < steps_of(total, VMPI_CSLOT_HALF); st++) {
            struct step p = step_at(nd, seq, st, total, VMPI_CSLOT_HALF);
            wait_free(&s->flag[p.h]);
            put(s->data[p.h], sbuf, scount, sdt, p.off, p.len);
            publish(&s->flag[p.h], p.tag, 1);
        }
        return MPI_SUCCESS;
    }
    size_t most = most_bytes(rcounts, n, me, rdt);
    for (int st = 0; st < steps_of(most, VMPI_CSLOT_HALF); st++) {
        struct step p = step_at(nd, seq, st, most, VMPI_CSLOT_HALF);
        for (int j = 0; j < n; j++) {
            size_t lj = piece_len(&p, vbytes(rcounts, j, rdt), VMPI_CSLOT_HALF);
            if (j == me || !lj)
                continue;
            struct vmpi_cslot *s = nd->slot[j];
            wait_tag(&s->flag[p.h], p.tag);
            get(vblock(rbuf, displs, j, rdt), rcounts[j], rdt, p.off, s->data[p.h], lj);
            consume(&s->flag[p.h], 1);
        }
    }
    if (sbuf != MPI_IN_PLACE)
        return coll_local_copy2(vblock(rbuf, displs, me, rdt), rcounts[me], rdt, sbuf, scount,
                                sdt);
    return MPI_SUCCESS;
}

int vmpi_node_scatterv(struct coll_node *nd, const void *sbuf, const int *scounts,
                       const int *displs, struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                       struct vmpi_dtype *rdt, int root)
{
    int n = nd->n, me = nd->me;
    uint32_t seq = nd->seq++;
    size_t piece = part_bytes(n);
    struct vmpi_cslot *s = nd->slot[root];
    if (me != root) {
        size_t total = (size_t)(rcount * vmpi_dtype_size(rdt));
        for (int st = 0; st < steps_of(total, piece); st++) {
            struct step p = step_at(nd, seq, st, total, piece);
            wait_tag(&s->flag[p.h], p.tag);
            get(rbuf, rcount, rdt, p.off, s->data[p.h] + (size_t)me * piece, p.len);
            count_in(&s->flag[p.h]);
        }
        return MPI_SUCCESS;
    }
    size_t most = most_bytes(scounts, n, me, sdt);
    for (int st = 0; st < steps_of(most, piece); st++) {
        struct step p = step_at(nd, seq, st, most, piece);
        put_parts(s, n, me, &p, piece, sbuf, scounts, displs, sdt);
    }
    if (rbuf != MPI_IN_PLACE)
        return coll_local_copy2(rbuf, rcount, rdt, vblock(sbuf, displs, me, sdt), scounts[me],
                                sdt);
    return MPI_SUCCESS;
}

int vmpi_node_alltoallv(struct coll_node *nd, const void *sbuf, const int *scounts,
                        const int *sdispls, struct vmpi_dtype *sdt, void *rbuf,
                        const int *rcounts, const int *rdispls, struct vmpi_dtype *rdt)
{
    int n = nd->n, me = nd->me;
    uint32_t seq = nd->seq++;
    size_t piece = part_bytes(n);
    /* In place the blocks go out of rbuf, as in vmpi_node_alltoall. */
    bool inplace = sbuf == MPI_IN_PLACE;
    const void *src = inplace ? rbuf : sbuf;
    const int *sc = inplace ? rcounts : scounts, *sd = inplace ? rdispls : sdispls;
    struct vmpi_dtype *sdt2 = inplace ? rdt : sdt;
    size_t most = most_bytes(sc, n, me, sdt2), rmost = most_bytes(rcounts, n, me, rdt);
    most = rmost > most ? rmost : most;
    struct vmpi_cslot *mine = nd->slot[me];
    for (int st = 0; st < steps_of(most, piece); st++) {
        struct step p = step_at(nd, seq, st, most, piece);
        put_parts(mine, n, me, &p, piece, src, sc, sd, sdt2);
        for (int i = 1; i < n; i++) {
            int j = (me + i) % n;
            size_t lj = piece_len(&p, vbytes(rcounts, j, rdt), piece);
            if (!lj)
                continue;
            struct vmpi_cslot *s = nd->slot[j];
            wait_tag(&s->flag[p.h], p.tag);
            get(vblock(rbuf, rdispls, j, rdt), rcounts[j], rdt, p.off,
                s->data[p.h] + (size_t)me * piece, lj);
            count_in(&s->flag[p.h]);
        }
    }
    if (!inplace)
        return coll_local_copy2(vblock(rbuf, rdispls, me, rdt), rcounts[me], rdt,
                                vblock(sbuf, sdispls, me, sdt), scounts[me], sdt);
    return MPI_SUCCESS;
}
