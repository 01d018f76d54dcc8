/* Non-blocking collectives: each one is a schedule that the progress engine
 * runs (coll/coll.h).
 *
 * A schedule is a list of rounds. The steps of a round start together, in
 * the order they were added: local reductions and copies run at once, sends
 * and receives (between view ranks, in the collective context) are posted.
 * The next round starts when every send and receive of the round has
 * completed. Buffers the schedule needs are allocated when it is built and
 * freed when it ends, so a running schedule never allocates.
 *
 * The request the user holds (kind VMPI_REQ_COLL) completes when the last
 * round does. It keeps the communicator alive; the schedule keeps references
 * on the user's datatypes and operation, so MPI_Comm_free, MPI_Type_free and
 * MPI_Op_free may come before the wait. MPI_Request_free of a pending one
 * lets the schedule run to its end (the peers need its messages), then the
 * request goes.
 *
 * Algorithms, flat on all ranks of the communicator:
 *   ibarrier    dissemination (ceil(log2 p) rounds of empty messages)
 *   ibcast      binomial tree from the root, a node's sends in one round
 *   ireduce     binomial tree; for a non-commutative op the tree is rooted
 *               at rank 0, so every node combines lower ranks on the left,
 *               and rank 0 sends the result on to the root
 *   iallreduce  recursive doubling; with p not a power of two the first
 *               2 * (p - p') ranks fold in pairs first (p' the largest power
 *               of two <= p); the lower ranks' data is always on the left
 *   iallgather  recursive doubling when p is a power of two, else a ring
 *   ialltoall   linear: every receive and send in one round
 *
 * Tags: COLL_TAG_NBC + (seq mod NBC_WINDOW) * NBC_STRIDE + step, where seq
 * numbers the non-blocking collectives of the communicator (all members
 * start them in the same order) and step is the algorithm's message step
 * mod NBC_STRIDE. Messages of one pair within one collective are posted in
 * the same order on both sides, so steps that wrap still match correctly;
 * different collectives, and the blocking ones (tags below COLL_TAG_NBC),
 * never share a tag. */
#include <stdlib.h>
#include <string.h>

#include "../core/dtype_impl.h" /* vmpi_dtype_addr, vmpi_dtype_ref */
#include "coll_impl.h"

_Static_assert(COLL_TAG_NBC + (long long)NBC_WINDOW * NBC_STRIDE - 1 <= VMPI_TAG_UB,
               "non-blocking collective tags stay valid tags");

static unsigned nbc_active; /* schedules running: progress runs them */

enum { ST_SEND, ST_RECV, ST_REDUCE, ST_COPY };

struct step {
    int kind;
    int peer;                /* SEND, RECV: view rank */
    int tag;                 /* SEND, RECV: message step, < NBC_STRIDE */
    const void *src;         /* SEND: data; REDUCE: left operand; COPY: source */
    void *dst;               /* RECV: buffer; REDUCE: right operand and result; COPY: target */
    MPI_Count count;         /* of dt, at dst (SEND: at src) */
    struct vmpi_dtype *dt;
    MPI_Count scount;        /* COPY: the source layout */
    struct vmpi_dtype *sdt;
};

#define SCHED_RAW 2  /* scratch buffers a schedule holds at most */
#define SCHED_REFS 2 /* user datatypes it holds */

struct sched {
    struct sched *next, *prev; /* the active list */
    struct vmpi_req *req;
    struct coll_view view;
    int tag0;
    MPI_Op op;
    struct step *step;
    int nstep, capstep;
    int *rend; /* round r is steps [r ? rend[r - 1] : 0, rend[r]) */
    int nround, capround;
    int cur; /* the running round, -1 before the first */
    struct vmpi_req **preq; /* the running round's sends and receives */
    int npreq, ndone;
    void *raw[SCHED_RAW];
    int nraw;
    struct vmpi_dtype *ref[SCHED_REFS];
    int nref;
    bool oom; /* building ran out of memory */
    int err;  /* first error class of a completed send or receive */
};

static struct sched *active;

/* ---- building -------------------------------------------------------------- */

static struct sched *sched_new(struct vmpi_comm *c, MPI_Op op)
{
    struct sched *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->view = coll_view_all(c);
    s->op = op;
    vmpi_op_retain(op); /* the user may free a user op before the wait */
    s->cur = -1;
    uint32_t seq = vmpi_hier_nbc_seq(c);
    s->tag0 = COLL_TAG_NBC + (int)(seq % NBC_WINDOW) * NBC_STRIDE;
    return s;
}

static struct step *add_step(struct sched *s, int kind)
{
    if (s->nstep == s->capstep) {
        int cap = s->capstep ? 2 * s->capstep : 8;
        struct step *n = realloc(s->step, sizeof *n * (size_t)cap);
        if (!n) {
            s->oom = true;
            return NULL;
        }
        s->step = n;
        s->capstep = cap;
    }
    struct step *t = &s->step[s->nstep++];
    memset(t, 0, sizeof *t);
    t->kind = kind;
    return t;
}

static void add_send(struct sched *s, const void *buf, MPI_Count count, struct vmpi_dtype *dt,
                     int peer, int tag)
{
    struct step *t = add_step(s, ST_SEND);
    if (t)
        *t = (struct step){.kind = ST_SEND, .peer = peer, .tag = tag % NBC_STRIDE, .src = buf,
                           .count = count, .dt = dt};
}

static void add_recv(struct sched *s, void *buf, MPI_Count count, struct vmpi_dtype *dt,
                     int peer, int tag)
{
    struct step *t = add_step(s, ST_RECV);
    if (t)
        *t = (struct step){.kind = ST_RECV, .peer = peer, .tag = tag % NBC_STRIDE, .dst = buf,
                           .count = count, .dt = dt};
}

/* inout = in op inout: in is the left operand. */
static void add_reduce(struct sched *s, const void *in, void *inout, MPI_Count count,
                       struct vmpi_dtype *dt)
{
    struct step *t = add_step(s, ST_REDUCE);
    if (t)
        *t = (struct step){.kind = ST_REDUCE, .src = in, .dst = inout, .count = count,
                           .dt = dt};
}

/* Same packed size on both sides (checked by the caller). */
static void add_copy(struct sched *s, const void *src, MPI_Count scount, struct vmpi_dtype *sdt,
                     void *dst, MPI_Count count, struct vmpi_dtype *dt)
{
    if (src == dst && scount == count && sdt == dt)
        return;
    struct step *t = add_step(s, ST_COPY);
    if (t)
        *t = (struct step){.kind = ST_COPY, .src = src, .dst = dst, .count = count, .dt = dt,
                           .scount = scount, .sdt = sdt};
}

/* Closes the round being added to (nothing if it is empty). */
static void end_round(struct sched *s)
{
    int begin = s->nround ? s->rend[s->nround - 1] : 0;
    if (s->nstep == begin)
        return;
    if (s->nround == s->capround) {
        int cap = s->capround ? 2 * s->capround : 8;
        int *n = realloc(s->rend, sizeof *n * (size_t)cap);
        if (!n) {
            s->oom = true;
            return;
        }
        s->rend = n;
        s->capround = cap;
    }
    s->rend[s->nround++] = s->nstep;
}

/* Scratch laid out like (count, dt); freed with the schedule. */
static void *add_tmp(struct sched *s, MPI_Count count, const struct vmpi_dtype *dt)
{
    if (s->nraw == SCHED_RAW)
        vmpi_fatal("coll/sched.c: a schedule asked for more than %d scratch buffers", SCHED_RAW);
    void *raw;
    void *p = coll_tmp_alloc(count, dt, &raw);
    if (!p) {
        s->oom = true;
        return NULL;
    }
    s->raw[s->nraw++] = raw;
    return p;
}

static void hold_type(struct sched *s, struct vmpi_dtype *dt)
{
    for (int i = 0; i < s->nref; i++)
        if (s->ref[i] == dt)
            return;
    vmpi_dtype_ref(dt);
    s->ref[s->nref++] = dt;
}

static void sched_free(struct sched *s)
{
    vmpi_op_release(s->op);
    for (int i = 0; i < s->nraw; i++)
        free(s->raw[i]);
    for (int i = 0; i < s->nref; i++)
        vmpi_dtype_unref(s->ref[i]);
    free(s->step);
    free(s->rend);
    free(s->preq);
    free(s);
}

/* ---- running ---------------------------------------------------------------- */

/* Starts round s->cur: local steps run now, in order with the posts. */
static void round_start(struct sched *s)
{
    const struct coll_view *v = &s->view;
    int begin = s->cur ? s->rend[s->cur - 1] : 0, end = s->rend[s->cur];
    s->npreq = s->ndone = 0;
    for (int i = begin; i < end; i++) {
        const struct step *t = &s->step[i];
        switch (t->kind) {
        case ST_SEND:
            vmpi_p2p_isend(t->src, t->count, t->dt, coll_peer(v, t->peer), s->tag0 + t->tag,
                           v->comm, 1, VMPI_MODE_STD, &s->preq[s->npreq++]);
            break;
        case ST_RECV:
            vmpi_p2p_irecv(t->dst, t->count, t->dt, coll_peer(v, t->peer), s->tag0 + t->tag,
                           v->comm, 1, &s->preq[s->npreq++]);
            break;
        case ST_REDUCE:
            vmpi_op_apply(s->op, t->src, t->dst, t->count, t->dt);
            break;
        case ST_COPY:
            if (coll_local_copy2(t->dst, t->count, t->dt, t->src, t->scount, t->sdt) !=
                    MPI_SUCCESS &&
                !s->err)
                s->err = MPI_ERR_NO_MEM;
            break;
        }
    }
}

/* Moves s on as far as it can; true when its last round has completed. */
static bool sched_advance(struct sched *s, int *events)
{
    for (;;) {
        while (s->ndone < s->npreq && s->preq[s->ndone]->done)
            s->ndone++;
        if (s->ndone < s->npreq)
            return false;
        for (int i = 0; i < s->npreq; i++) {
            if (s->preq[i]->st_error != MPI_SUCCESS && !s->err)
                s->err = s->preq[i]->st_error;
            vmpi_req_free(s->preq[i]);
        }
        s->npreq = s->ndone = 0;
        if (++s->cur == s->nround)
            return true;
        round_start(s);
        (*events)++;
    }
}

static void sched_finish(struct sched *s)
{
    struct vmpi_req *r = s->req;
    r->st_error = s->err;
    sched_free(s);
    vmpi_req_complete(r); /* frees r if the user already has */
}

int vmpi_coll_nbc_progress(void)
{
    /* A user reduction function that calls MPI_Test must not re-enter. */
    static bool running;
    if (running)
        return 0;
    running = true;
    int events = 0;
    for (struct sched *s = active, *next; s; s = next) {
        next = s->next;
        if (!sched_advance(s, &events))
            continue;
        if (s->prev)
            s->prev->next = s->next;
        else
            active = s->next;
        if (s->next)
            s->next->prev = s->prev;
        if (--nbc_active == 0)
            vmpi_progress_remove(vmpi_coll_nbc_progress);
        sched_finish(s);
        events++;
    }
    running = false;
    return events;
}

/* Gives a built schedule its request and starts it. */
static int sched_launch(struct sched *s, const char *fn, struct vmpi_req **out)
{
    end_round(s);
    int maxp = 0;
    for (int r = 0; r < s->nround; r++) {
        int n = 0;
        for (int i = r ? s->rend[r - 1] : 0; i < s->rend[r]; i++)
            n += s->step[i].kind == ST_SEND || s->step[i].kind == ST_RECV;
        maxp = n > maxp ? n : maxp;
    }
    if (maxp && !s->oom && !(s->preq = malloc(sizeof *s->preq * (size_t)maxp)))
        s->oom = true;
    if (s->oom) {
        struct vmpi_comm *c = s->view.comm;
        sched_free(s);
        return vmpi_err(c, MPI_ERR_NO_MEM, "%s: out of memory for the schedule", fn);
    }
    struct vmpi_req *r = vmpi_req_alloc(VMPI_REQ_COLL);
    r->comm = s->view.comm;
    vmpi_comm_retain(r->comm);
    s->req = r;
    *out = r;
    int events = 0;
    if (sched_advance(s, &events)) {
        sched_finish(s);
        return MPI_SUCCESS;
    }
    s->prev = NULL;
    s->next = active;
    if (active)
        active->prev = s;
    active = s;
    if (nbc_active++ == 0)
        vmpi_progress_add(vmpi_coll_nbc_progress, 0, VMPI_POLL_WAIT);
    return MPI_SUCCESS;
}

/* ---- algorithms ---------------------------------------------------------------- */

static char nbc_dummy; /* the address of empty messages */

int vmpi_coll_ibarrier(struct vmpi_comm *c, struct vmpi_req **out)
{
    struct sched *s = sched_new(c, MPI_OP_NULL);
    if (!s)
        return vmpi_err(c, MPI_ERR_NO_MEM, "MPI_Ibarrier: out of memory");
    int p = c->size, r = c->rank;
    struct vmpi_dtype *bt = coll_byte_type();
    for (int d = 1, k = 0; d < p; d <<= 1, k++) {
        add_send(s, &nbc_dummy, 0, bt, (r + d) % p, k);
        add_recv(s, &nbc_dummy, 0, bt, (r - d + p) % p, k);
        end_round(s);
    }
    return sched_launch(s, "MPI_Ibarrier", out);
}

int vmpi_coll_ibcast(void *buf, MPI_Count count, struct vmpi_dtype *dt, int root,
                     struct vmpi_comm *c, struct vmpi_req **out)
{
    struct sched *s = sched_new(c, MPI_OP_NULL);
    if (!s)
        return vmpi_err(c, MPI_ERR_NO_MEM, "MPI_Ibcast: out of memory");
    hold_type(s, dt);
    int p = c->size, vr = (c->rank - root + p) % p;
    if (p > 1 && count * vmpi_dtype_size(dt) > 0) {
        int mask = 1;
        for (; mask < p; mask <<= 1)
            if (vr & mask) {
                add_recv(s, buf, count, dt, (vr - mask + root) % p, 0);
                end_round(s);
                break;
            }
        /* children vr + mask below the lowest set bit, largest subtree first */
        for (mask >>= 1; mask > 0; mask >>= 1)
            if (vr + mask < p)
                add_send(s, buf, count, dt, (vr + mask + root) % p, 0);
    }
    return sched_launch(s, "MPI_Ibcast", out);
}

/* acc = acc op t, where t holds data of higher ranks than acc. */
static void combine_higher(struct sched *s, void *t, void *acc, MPI_Count count,
                           struct vmpi_dtype *dt, bool commut)
{
    if (commut) {
        add_reduce(s, t, acc, count, dt);
    } else {
        add_reduce(s, acc, t, count, dt);
        add_copy(s, t, count, dt, acc, count, dt);
    }
}

int vmpi_coll_ireduce(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                      MPI_Op op, int root, struct vmpi_comm *c, struct vmpi_req **out)
{
    struct sched *s = sched_new(c, op);
    if (!s)
        return vmpi_err(c, MPI_ERR_NO_MEM, "MPI_Ireduce: out of memory");
    hold_type(s, dt);
    int p = c->size, rank = c->rank;
    const void *in = rank == root && sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (count == 0)
        return sched_launch(s, "MPI_Ireduce", out);
    if (p == 1) {
        add_copy(s, in, count, dt, rbuf, count, dt);
        return sched_launch(s, "MPI_Ireduce", out);
    }
    bool commut = vmpi_op_commutative(op);
    int troot = commut ? root : 0; /* the tree's root */
    int vr = (rank - troot + p) % p;
    int low = vr & -vr; /* children are vr + m for m < low (vr 0: any m < p) */
    bool leaf = vr & 1 || vr + 1 >= p;
    const void *acc = in;
    if (!leaf) {
        void *a = rank == root && troot == root ? rbuf : add_tmp(s, count, dt);
        void *t = add_tmp(s, count, dt);
        if (s->oom) /* rbuf may be MPI_BOTTOM: test the flag, not the pointers */
            return sched_launch(s, "MPI_Ireduce", out);
        add_copy(s, in, count, dt, a, count, dt);
        bool first = true;
        for (int m = 1; m < p && (vr == 0 || m < low) && vr + m < p; m <<= 1) {
            if (!first)
                combine_higher(s, t, a, count, dt, commut);
            add_recv(s, t, count, dt, (vr + m + troot) % p, 0);
            end_round(s);
            first = false;
        }
        combine_higher(s, t, a, count, dt, commut);
        acc = a;
    }
    if (vr)
        add_send(s, acc, count, dt, (vr - low + troot) % p, 0);
    else if (rank != root)
        add_send(s, acc, count, dt, root, 1);
    end_round(s);
    if (rank == root && troot != root)
        add_recv(s, rbuf, count, dt, troot, 1);
    return sched_launch(s, "MPI_Ireduce", out);
}

int vmpi_coll_iallreduce(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                         MPI_Op op, struct vmpi_comm *c, struct vmpi_req **out)
{
    struct sched *s = sched_new(c, op);
    if (!s)
        return vmpi_err(c, MPI_ERR_NO_MEM, "MPI_Iallreduce: out of memory");
    hold_type(s, dt);
    int p = c->size, rank = c->rank;
    if (count == 0)
        return sched_launch(s, "MPI_Iallreduce", out);
    if (sbuf != MPI_IN_PLACE)
        add_copy(s, sbuf, count, dt, rbuf, count, dt);
    if (p == 1)
        return sched_launch(s, "MPI_Iallreduce", out);
    void *t = add_tmp(s, count, dt);
    if (s->oom)
        return sched_launch(s, "MPI_Iallreduce", out);
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
            add_send(s, rbuf, count, dt, rank + 1, 0);
            end_round(s);
            add_recv(s, rbuf, count, dt, rank + 1, last);
            return sched_launch(s, "MPI_Iallreduce", out);
        }
        add_recv(s, t, count, dt, rank - 1, 0);
        end_round(s);
        add_reduce(s, t, rbuf, count, dt);
        newrank = rank / 2;
    } else {
        newrank = rank - rem;
    }
    /* New rank i holds ranks {2i, 2i + 1} (i < rem) or {i + rem}: increasing,
     * so a lower new rank means lower ranks' data. */
    for (int mask = 1, step = 1; mask < pof2; mask <<= 1, step++) {
        int newdst = newrank ^ mask;
        int dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
        add_send(s, rbuf, count, dt, dst, step);
        add_recv(s, t, count, dt, dst, step);
        end_round(s);
        if (newdst < newrank)
            add_reduce(s, t, rbuf, count, dt);
        else
            combine_higher(s, t, rbuf, count, dt, commut);
    }
    if (rank < 2 * rem)
        add_send(s, rbuf, count, dt, rank - 1, last);
    return sched_launch(s, "MPI_Iallreduce", out);
}

/* rbuf holds p blocks of (rcount, rdt), block i from rank i. sbuf may be
 * MPI_IN_PLACE (this rank's block is already in place). */
int vmpi_coll_iallgather(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt,
                         void *rbuf, MPI_Count rcount, struct vmpi_dtype *rdt,
                         struct vmpi_comm *c, struct vmpi_req **out)
{
    struct sched *s = sched_new(c, MPI_OP_NULL);
    if (!s)
        return vmpi_err(c, MPI_ERR_NO_MEM, "MPI_Iallgather: out of memory");
    int p = c->size, r = c->rank;
    MPI_Aint blk = (MPI_Aint)rcount * vmpi_dtype_extent(rdt);
    hold_type(s, rdt);
    if (sbuf != MPI_IN_PLACE) {
        hold_type(s, sdt);
        add_copy(s, sbuf, scount, sdt, vmpi_dtype_addr(rbuf, r * blk), rcount, rdt);
    }
    if (p == 1 || rcount * vmpi_dtype_size(rdt) == 0)
        return sched_launch(s, "MPI_Iallgather", out);
    if ((p & (p - 1)) == 0) {
        /* step k: swap the 2^k blocks each side has gathered so far */
        for (int mask = 1, k = 0; mask < p; mask <<= 1, k++) {
            int peer = r ^ mask;
            MPI_Aint mine = (MPI_Aint)(r & ~(mask - 1)), theirs = (MPI_Aint)(peer & ~(mask - 1));
            add_send(s, vmpi_dtype_addr(rbuf, mine * blk), mask * rcount, rdt, peer, k);
            add_recv(s, vmpi_dtype_addr(rbuf, theirs * blk), mask * rcount, rdt, peer, k);
            end_round(s);
        }
    } else {
        /* step k: pass on the block that came from rank r - k */
        int right = (r + 1) % p, left = (r - 1 + p) % p;
        for (int k = 0; k < p - 1; k++) {
            MPI_Aint sb = (r - k + p) % p, rb = (r - k - 1 + p) % p;
            add_send(s, vmpi_dtype_addr(rbuf, sb * blk), rcount, rdt, right, k);
            add_recv(s, vmpi_dtype_addr(rbuf, rb * blk), rcount, rdt, left, k);
            end_round(s);
        }
    }
    return sched_launch(s, "MPI_Iallgather", out);
}

/* Block i of sbuf goes to rank i; block i of rbuf comes from rank i. sbuf
 * may be MPI_IN_PLACE: the data to send is in rbuf, as (rcount, rdt). */
int vmpi_coll_ialltoall(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt,
                        void *rbuf, MPI_Count rcount, struct vmpi_dtype *rdt,
                        struct vmpi_comm *c, struct vmpi_req **out)
{
    struct sched *s = sched_new(c, MPI_OP_NULL);
    if (!s)
        return vmpi_err(c, MPI_ERR_NO_MEM, "MPI_Ialltoall: out of memory");
    int p = c->size, r = c->rank;
    hold_type(s, rdt);
    if (sbuf == MPI_IN_PLACE) {
        /* Received blocks overwrite rbuf while others are still to be sent
         * from it, so the sends take a copy. */
        if (p > 1 && rcount * vmpi_dtype_size(rdt) > 0) {
            void *copy = add_tmp(s, (MPI_Count)p * rcount, rdt);
            if (s->oom)
                return sched_launch(s, "MPI_Ialltoall", out);
            add_copy(s, rbuf, (MPI_Count)p * rcount, rdt, copy, (MPI_Count)p * rcount, rdt);
            sbuf = copy;
        } else {
            sbuf = rbuf;
        }
        scount = rcount;
        sdt = rdt;
    } else {
        hold_type(s, sdt);
    }
    MPI_Aint sblk = (MPI_Aint)scount * vmpi_dtype_extent(sdt);
    MPI_Aint rblk = (MPI_Aint)rcount * vmpi_dtype_extent(rdt);
    add_copy(s, vmpi_dtype_addr(sbuf, r * sblk), scount, sdt, vmpi_dtype_addr(rbuf, r * rblk),
             rcount, rdt);
    if (p > 1 && rcount * vmpi_dtype_size(rdt) > 0) {
        /* receives first, so most messages find theirs posted; peers in a
         * staggered order so no rank is everyone's first target */
        for (int i = 1; i < p; i++) {
            int from = (r - i + p) % p;
            add_recv(s, vmpi_dtype_addr(rbuf, from * rblk), rcount, rdt, from, 0);
        }
        for (int i = 1; i < p; i++) {
            int to = (r + i) % p;
            add_send(s, vmpi_dtype_addr(sbuf, to * sblk), scount, sdt, to, 0);
        }
    }
    return sched_launch(s, "MPI_Ialltoall", out);
}
