/* Non-blocking collectives: each one is a schedule that the progress engine
 * runs (coll/coll.h).
 *
 * A schedule is a list of rounds. The steps of a round start together, in
 * the order they were added: local reductions and copies run at once, sends
 * and receives (between view ranks, in the collective context) are posted.
 * The next round starts when every send and receive of the round has
 * completed. Buffers the schedule needs are allocated when it is built and
 * freed when it ends, so a running schedule never allocates, unless a CALL
 * step (code, for comm/idup.c) adds rounds while it runs.
 *
 * The request the user holds (kind VMPI_REQ_COLL) completes when the last
 * round does. It keeps the communicator alive; the schedule keeps references
 * on the user's datatypes and operation, so MPI_Comm_free, MPI_Type_free and
 * MPI_Op_free may come before the wait. MPI_Request_free of a pending one
 * lets the schedule run to its end (the peers need its messages), then the
 * request goes.
 *
 * The algorithms are in coll/sched_tree.c (barrier, bcast, reduce,
 * allreduce), coll/sched_move.c (gather, scatter, allgather, alltoall and
 * their v/w forms), coll/sched_reduce.c (reduce_scatter, the scans) and
 * coll/inter_sched.c (all of them on intercommunicators).
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

enum { ST_SEND, ST_RECV, ST_REDUCE, ST_COPY, ST_CALL };

struct step {
    int kind;
    int peer;                /* SEND, RECV: view rank (of via, when set) */
    struct vmpi_comm *via;   /* SEND, RECV: another communicator, or NULL */
    coll_sched_fn *fn;       /* CALL: runs with arg dst */
    int tag;                 /* SEND, RECV: message step, < NBC_STRIDE */
    const void *src;         /* SEND: data; REDUCE: left operand; COPY: source */
    void *dst;               /* RECV: buffer; REDUCE: right operand and result; COPY: target */
    MPI_Count count;         /* of dt, at dst (SEND: at src) */
    struct vmpi_dtype *dt;
    MPI_Count scount;        /* COPY: the source layout */
    struct vmpi_dtype *sdt;
};

#define SCHED_RAW 3 /* scratch buffers a schedule holds at most */

struct coll_sched {
    struct coll_sched *next, *prev; /* the active list */
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
    int npreq, ndone, cappreq, maxp; /* maxp: sends and receives of the largest round */
    int call;                        /* a CALL step to run again (its index + 1), or 0 */
    void *raw[SCHED_RAW];
    int nraw;
    struct vmpi_dtype **ref; /* user datatypes it holds (alltoallw: up to 2p) */
    int nref, capref;
    bool oom; /* building ran out of memory */
    int err;  /* first error class of a completed send or receive */
};

static struct coll_sched *active;

/* ---- building -------------------------------------------------------------- */

struct coll_sched *coll_sched_new(struct vmpi_comm *c, MPI_Op op)
{
    struct coll_sched *s = calloc(1, sizeof *s);
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

static struct step *add_step(struct coll_sched *s, int kind)
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

void coll_sched_send(struct coll_sched *s, const void *buf, MPI_Count count,
                     struct vmpi_dtype *dt, int peer, int tag)
{
    struct step *t = add_step(s, ST_SEND);
    if (t)
        *t = (struct step){.kind = ST_SEND, .peer = peer, .tag = tag % NBC_STRIDE, .src = buf,
                           .count = count, .dt = dt};
}

void coll_sched_recv(struct coll_sched *s, void *buf, MPI_Count count, struct vmpi_dtype *dt,
                     int peer, int tag)
{
    struct step *t = add_step(s, ST_RECV);
    if (t)
        *t = (struct step){.kind = ST_RECV, .peer = peer, .tag = tag % NBC_STRIDE, .dst = buf,
                           .count = count, .dt = dt};
}

void coll_sched_reduce(struct coll_sched *s, const void *in, void *inout, MPI_Count count,
                       struct vmpi_dtype *dt)
{
    struct step *t = add_step(s, ST_REDUCE);
    if (t)
        *t = (struct step){.kind = ST_REDUCE, .src = in, .dst = inout, .count = count,
                           .dt = dt};
}

void coll_sched_copy(struct coll_sched *s, const void *src, MPI_Count scount,
                     struct vmpi_dtype *sdt, void *dst, MPI_Count count, struct vmpi_dtype *dt)
{
    if (src == dst && scount == count && sdt == dt)
        return;
    struct step *t = add_step(s, ST_COPY);
    if (t)
        *t = (struct step){.kind = ST_COPY, .src = src, .dst = dst, .count = count, .dt = dt,
                           .scount = scount, .sdt = sdt};
}

void coll_sched_call(struct coll_sched *s, coll_sched_fn *fn, void *arg)
{
    struct step *t = add_step(s, ST_CALL);
    if (t) {
        t->fn = fn;
        t->dst = arg;
    }
}

void coll_sched_via(struct coll_sched *s, struct vmpi_comm *via, bool send, void *buf,
                    MPI_Count count, struct vmpi_dtype *dt, int peer, int tag)
{
    int n = s->nstep;
    if (send)
        coll_sched_send(s, buf, count, dt, peer, tag);
    else
        coll_sched_recv(s, buf, count, dt, peer, tag);
    if (s->nstep > n)
        s->step[n].via = via;
}

void coll_sched_fail(struct coll_sched *s, int code)
{
    if (!s->err)
        s->err = code;
}

int coll_sched_error(const struct coll_sched *s)
{
    return s->err;
}

int coll_sched_tag0(const struct coll_sched *s)
{
    return s->tag0;
}

struct vmpi_comm *coll_sched_comm(const struct coll_sched *s)
{
    return s->view.comm;
}

MPI_Op coll_sched_op(const struct coll_sched *s)
{
    return s->op;
}

void coll_sched_round(struct coll_sched *s)
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
    int n = 0;
    for (int i = begin; i < s->nstep; i++)
        n += s->step[i].kind == ST_SEND || s->step[i].kind == ST_RECV;
    s->maxp = n > s->maxp ? n : s->maxp;
    s->rend[s->nround++] = s->nstep;
}

void *coll_sched_tmp(struct coll_sched *s, MPI_Count count, const struct vmpi_dtype *dt)
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

void coll_sched_hold(struct coll_sched *s, struct vmpi_dtype *dt)
{
    for (int i = 0; i < s->nref; i++)
        if (s->ref[i] == dt)
            return;
    if (s->nref == s->capref) {
        int cap = s->capref ? 2 * s->capref : 4;
        struct vmpi_dtype **n = realloc(s->ref, sizeof *n * (size_t)cap);
        if (!n) {
            s->oom = true;
            return;
        }
        s->ref = n;
        s->capref = cap;
    }
    vmpi_dtype_ref(dt);
    s->ref[s->nref++] = dt;
}

bool coll_sched_oom(const struct coll_sched *s)
{
    return s->oom;
}

static void sched_free(struct coll_sched *s)
{
    vmpi_op_release(s->op);
    for (int i = 0; i < s->nraw; i++)
        free(s->raw[i]);
    for (int i = 0; i < s->nref; i++)
        vmpi_dtype_unref(s->ref[i]);
    free(s->ref);
    free(s->step);
    free(s->rend);
    free(s->preq);
    free(s);
}

/* ---- running ---------------------------------------------------------------- */

/* Starts round s->cur: local steps run now, in order with the posts. */
static void round_start(struct coll_sched *s)
{
    const struct coll_view *v = &s->view;
    int begin = s->cur ? s->rend[s->cur - 1] : 0, end = s->rend[s->cur];
    s->npreq = s->ndone = 0;
    if (s->maxp > s->cappreq) { /* rounds a CALL step added */
        struct vmpi_req **n = realloc(s->preq, sizeof *n * (size_t)s->maxp);
        if (!n) {
            s->err = MPI_ERR_NO_MEM;
            return;
        }
        s->preq = n;
        s->cappreq = s->maxp;
    }
    for (int i = begin; i < end; i++) {
        const struct step *t = &s->step[i];
        switch (t->kind) {
        case ST_SEND:
            vmpi_p2p_isend(t->src, t->count, t->dt, t->via ? t->peer : coll_peer(v, t->peer),
                           s->tag0 + t->tag, t->via ? t->via : v->comm, 1, VMPI_MODE_STD,
                           &s->preq[s->npreq++]);
            break;
        case ST_RECV:
            vmpi_p2p_irecv(t->dst, t->count, t->dt, t->via ? t->peer : coll_peer(v, t->peer),
                           s->tag0 + t->tag, t->via ? t->via : v->comm, 1,
                           &s->preq[s->npreq++]);
            break;
        case ST_CALL:
            if (!t->fn(s, t->dst))
                s->call = i + 1;
            coll_sched_round(s); /* closes the steps it added */
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
static bool sched_advance(struct coll_sched *s, int *events)
{
    for (;;) {
        if (s->call) {
            const struct step *t = &s->step[s->call - 1];
            if (!t->fn(s, t->dst))
                return false;
            s->call = 0;
            coll_sched_round(s);
        }
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

static void sched_finish(struct coll_sched *s)
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
    for (struct coll_sched *s = active, *next; s; s = next) {
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

int coll_sched_launch(struct coll_sched *s, const char *fn, struct vmpi_req **out)
{
    return coll_sched_launch_for(s, s->view.comm, fn, out);
}

int coll_sched_launch_for(struct coll_sched *s, struct vmpi_comm *owner, const char *fn,
                          struct vmpi_req **out)
{
    coll_sched_round(s);
    if (s->maxp && !s->oom && !(s->preq = malloc(sizeof *s->preq * (size_t)s->maxp)))
        s->oom = true;
    s->cappreq = s->maxp;
    if (s->oom) {
        sched_free(s);
        return vmpi_err(owner, MPI_ERR_NO_MEM, "%s: out of memory for the schedule", fn);
    }
    struct vmpi_req *r = vmpi_req_alloc(VMPI_REQ_COLL);
    r->comm = owner;
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
