/* Active messages: targets whose memory an origin cannot map.
 *
 * Origin: a request is one message on the window's private communicator
 * (tag RMA_TAG_AM); a reply, when there is one, is received straight into
 * the origin's buffer with its datatype (tag RMA_TAG_REPLY + id). Requests
 * and their replies stay on the window's pending list until they complete.
 *
 * Target: every progress call (so any MPI call, blocking ones while they
 * wait) looks for a request that has arrived, receives it whole and
 * applies it. Messages from one origin match in the order they were sent,
 * and each is applied before the next is looked at, so one origin's
 * operations take effect in order, and the reply to a flush or an unlock
 * means every earlier request of that origin has been applied. While this
 * process serves a window, a helper thread (core/async.c) makes the same
 * progress calls whenever the application is outside MPI, so a target
 * that computes for a long time still serves its origins. */
#include "rma.h"
#include "../core/dtype_impl.h"

#include <stdlib.h>
#include <string.h>

static struct vmpi_win *served; /* windows with an am service */

void vmpi_rma_am_enable(struct vmpi_win *w)
{
    w->next = served;
    w->prev = NULL;
    if (served)
        served->prev = w;
    served = w;
    w->am_active = true;
    vmpi_progress_add(vmpi_rma_progress, 0, 0);
    vmpi_async_want(true);
}

void vmpi_rma_am_disable(struct vmpi_win *w)
{
    if (!w->am_active)
        return;
    if (w->prev)
        w->prev->next = w->next;
    else
        served = w->next;
    if (w->next)
        w->next->prev = w->prev;
    w->am_active = false;
    if (!served)
        vmpi_progress_remove(vmpi_rma_progress);
    vmpi_async_want(served != NULL);
}

/* ---- the origin's side ---------------------------------------------------------- */

static void pend_add(struct vmpi_win *w, struct vmpi_req *req, struct vmpi_req *user, void *buf,
                     int target, size_t expect, int *status)
{
    struct win_pend *p = malloc(sizeof *p);
    if (!p)
        vmpi_fatal("rma: out of memory tracking a request");
    *p = (struct win_pend){w->pend, req, user, buf, target, expect, status, false};
    w->pend = p;
}

void vmpi_rma_pend_net(struct vmpi_win *w, struct vmpi_req *req, struct vmpi_req *user,
                       void *buf, int t)
{
    pend_add(w, req, user, buf, t, 0, NULL);
    w->pend->net = true;
}

/* Retires completed requests; a reply shorter than expected is the
 * target's refusal (a range it found outside its window). */
void vmpi_rma_reap(struct vmpi_win *w)
{
    for (struct win_pend **pp = &w->pend; *pp;) {
        struct win_pend *p = *pp;
        if (!p->req->done) {
            pp = &p->next;
            continue;
        }
        int err = p->req->st_error;
        if (!err && p->req->kind == VMPI_REQ_RECV && p->req->st_bytes != p->expect)
            err = MPI_ERR_RMA_RANGE;
        if (!err && p->status && *p->status)
            err = *p->status;
        if (err && !w->am_err)
            w->am_err = err;
        if (p->user) {
            p->user->st_error = err;
            vmpi_req_complete(p->user);
        }
        vmpi_req_free(p->req);
        free(p->buf);
        *pp = p->next;
        free(p);
    }
}

static void wait_for(struct vmpi_win *w, int t, bool net_only)
{
    for (;;) {
        vmpi_rma_reap(w);
        bool left = false;
        for (struct win_pend *p = w->pend; p && !left; p = p->next)
            left = (t < 0 || p->target == t) && (p->net || !net_only);
        if (!left)
            return;
        vmpi_progress();
    }
}

void vmpi_rma_wait_pending(struct vmpi_win *w, int t)
{
    wait_for(w, t, false);
}

void vmpi_rma_wait_net(struct vmpi_win *w, int t)
{
    wait_for(w, t, true);
}

int vmpi_rma_am_send(struct vmpi_win *w, int t, void *msg, size_t len, void *rbuf,
                     MPI_Count rcount, struct vmpi_dtype *rdt, struct vmpi_req *user)
{
    struct rma_am_hdr *h = msg;
    h->id = w->next_id++ & RMA_ID_MASK;
    struct vmpi_req *r;
    if (rbuf) {
        vmpi_p2p_irecv(rbuf, rcount, rdt, t, RMA_TAG_REPLY + (int)h->id, w->comm, 0, &r);
        pend_add(w, r, user, NULL, t, (size_t)h->rlen, NULL);
    }
    int rc = vmpi_p2p_isend(msg, (MPI_Count)len, vmpi_dtype_get(MPI_BYTE), t, RMA_TAG_AM,
                            w->comm, 0, VMPI_MODE_STD, &r);
    if (rc != MPI_SUCCESS) {
        free(msg);
        return rc;
    }
    pend_add(w, r, NULL, msg, t, 0, NULL);
    w->t[t].dirty = 1;
    return MPI_SUCCESS;
}

/* A control request (lock, unlock, flush) and its one-int reply. */
static int am_control(struct vmpi_win *w, int t, uint32_t kind, int32_t arg)
{
    struct rma_am_hdr *h = calloc(1, sizeof *h);
    int *reply = malloc(sizeof *reply);
    if (!h || !reply) {
        free(h);
        free(reply);
        return MPI_ERR_NO_MEM;
    }
    h->kind = kind;
    h->op = arg;
    h->rlen = sizeof(int);
    *reply = 0;
    struct vmpi_req *r;
    h->id = w->next_id++ & RMA_ID_MASK;
    vmpi_p2p_irecv(reply, 1, vmpi_dtype_get(MPI_INT), t, RMA_TAG_REPLY + (int)h->id, w->comm, 0,
                   &r);
    pend_add(w, r, NULL, reply, t, sizeof(int), reply);
    int rc = vmpi_p2p_isend(h, sizeof *h, vmpi_dtype_get(MPI_BYTE), t, RMA_TAG_AM, w->comm, 0,
                            VMPI_MODE_STD, &r);
    if (rc != MPI_SUCCESS) {
        free(h);
        return rc;
    }
    pend_add(w, r, NULL, h, t, 0, NULL);
    vmpi_rma_wait_pending(w, t);
    w->t[t].dirty = 0;
    int err = w->am_err;
    w->am_err = MPI_SUCCESS;
    return err;
}

int vmpi_rma_am_lock(struct vmpi_win *w, int t, int type)
{
    return am_control(w, t, RMA_AM_LOCK, type);
}

int vmpi_rma_am_unlock(struct vmpi_win *w, int t, int type)
{
    return am_control(w, t, RMA_AM_UNLOCK, type);
}

int vmpi_rma_am_flush(struct vmpi_win *w, int t)
{
    return am_control(w, t, RMA_AM_FLUSH, 0);
}

/* ---- the target's side ---------------------------------------------------------- */

static void reply(struct vmpi_win *w, int origin, uint32_t id, void *buf, size_t len)
{
    struct vmpi_req *r;
    if (vmpi_p2p_isend(buf, (MPI_Count)len, vmpi_dtype_get(MPI_BYTE), origin,
                       RMA_TAG_REPLY + (int)(id & RMA_ID_MASK), w->comm, 0, VMPI_MODE_STD,
                       &r) != MPI_SUCCESS) {
        free(buf);
        return;
    }
    pend_add(w, r, NULL, buf, origin, 0, NULL);
}

static void reply_int(struct vmpi_win *w, int origin, uint32_t id, int v)
{
    int *b = malloc(sizeof *b);
    if (!b)
        vmpi_fatal("rma: out of memory for a reply");
    *b = v;
    reply(w, origin, id, b, sizeof *b);
}

static void note_err(struct vmpi_win *w, int origin, int err)
{
    if (err && !w->err_for[origin])
        w->err_for[origin] = err;
}

/* Where the request's bytes lie here: [lo, hi) of this rank's window, or
 * for a dynamic window the attached region holding the address, widened
 * over the regions attached right next to it (one access may span two
 * attachments that touch, as all its bytes are attached). */
static bool bounds_for(struct vmpi_win *w, int64_t disp, char **at, const char **lo,
                       const char **hi)
{
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
        if (disp < 0 || (uint64_t)disp > w->my_size)
            return false;
        *at = w->base + disp;
        *lo = w->base;
        *hi = w->base + w->my_size;
        return true;
    }
    uintptr_t a = (uintptr_t)disp;
    for (int i = 0; i < w->natt; i++) {
        uintptr_t b = (uintptr_t)w->att[i].base;
        if (a >= b && a - b <= w->att[i].size) {
            const char *l = w->att[i].base, *h = l + w->att[i].size;
            for (bool grew = true; grew;) {
                grew = false;
                for (int j = 0; j < w->natt; j++) {
                    const char *jb = w->att[j].base, *je = jb + w->att[j].size;
                    if (w->att[j].size && je == l) {
                        l = jb;
                        grew = true;
                    } else if (w->att[j].size && jb == h) {
                        h = je;
                        grew = true;
                    }
                }
            }
            *at = (char *)a;
            *lo = l;
            *hi = h;
            return true;
        }
    }
    return false;
}

static void serve_data(struct vmpi_win *w, int origin, const char *msg, size_t len)
{
    const struct rma_am_hdr *h = (const void *)msg;
    size_t body = len - sizeof *h;
    bool fetch = h->kind == RMA_GET || h->kind == RMA_GACC || h->kind == RMA_CAS;
    int err = MPI_SUCCESS;
    if (h->nblk > RMA_AM_MAX_RUNS || h->nblk * sizeof(struct rma_am_run) > body ||
        h->dlen != body - h->nblk * sizeof(struct rma_am_run) || h->count < 0 ||
        h->rlen > ((uint64_t)1 << 40))
        err = MPI_ERR_OTHER;
    struct vmpi_dblk *blk = NULL;
    void *out = NULL;
    if (!err && h->nblk && !(blk = malloc(h->nblk * sizeof *blk)))
        err = MPI_ERR_NO_MEM;
    if (!err && fetch && h->rlen && !(out = malloc(h->rlen)))
        err = MPI_ERR_NO_MEM;
    uint64_t bytes = 0;
    const struct rma_am_run *run = (const void *)(msg + sizeof *h);
    for (uint64_t b = 0; !err && b < h->nblk; b++) {
        struct rma_am_run r;
        memcpy(&r, &run[b], sizeof r);
        blk[b] = (struct vmpi_dblk){.off = r.off, .len = r.len, .rep = r.rep, .stride = r.stride};
        uint64_t n;
        if (r.len <= 0 || r.rep <= 0 ||
            __builtin_mul_overflow((uint64_t)r.len, (uint64_t)r.rep, &n) ||
            __builtin_add_overflow(bytes, n, &bytes))
            err = MPI_ERR_OTHER;
    }
    uint64_t total = 0;
    bool takes_in = h->kind != RMA_GET && !(h->kind == RMA_GACC && h->op == MPI_NO_OP);
    if (!err && (__builtin_mul_overflow(bytes, (uint64_t)h->count, &total) ||
                 (fetch && total != h->rlen) ||
                 h->dlen != (takes_in ? total * (h->kind == RMA_CAS ? 2 : 1) : 0)))
        err = MPI_ERR_OTHER;
    char *at = NULL;
    const char *lo = NULL, *hi = NULL;
    if (!err && !bounds_for(w, h->disp, &at, &lo, &hi))
        err = MPI_ERR_RMA_RANGE;
    if (!err) {
        struct rma_layout L = {h->count, h->extent, h->nblk, blk, h->basic, h->esize};
        const char *data = msg + sizeof *h + h->nblk * sizeof(struct rma_am_run);
        const char *in = takes_in ? data + (h->kind == RMA_CAS ? total : 0) : NULL;
        const char *cmp = h->kind == RMA_CAS ? data : NULL;
        err = vmpi_rma_apply((int)h->kind, at, lo, hi, &L, in, cmp, out, h->op,
                             w->t[w->rank].ctl);
    }
    free(blk);
    note_err(w, origin, err);
    if (fetch) {
        if (err) {
            free(out);
            out = NULL;
        }
        reply(w, origin, h->id, out, err ? 0 : h->rlen);
    }
}

/* Grants the waiting lock requests that can be granted now, in order; an
 * exclusive request that cannot be stops the ones behind it. */
static void grant_waiters(struct vmpi_win *w)
{
    struct vmpi_win_ctl *ctl = w->t[w->rank].ctl;
    while (w->waiters) {
        struct win_waiter *q = w->waiters;
        if (!vmpi_rma_try_lock(w, ctl, q->type, &q->holds_tl))
            return;
        w->waiters = q->next;
        reply_int(w, q->origin, q->id, MPI_SUCCESS);
        free(q);
    }
}

static void serve_control(struct vmpi_win *w, int origin, const struct rma_am_hdr *h)
{
    if (h->kind == RMA_AM_LOCK) {
        struct win_waiter *q = malloc(sizeof *q);
        if (!q)
            vmpi_fatal("rma: out of memory queueing a lock request");
        *q = (struct win_waiter){NULL, origin, h->op, h->id, false};
        struct win_waiter **pp = &w->waiters;
        while (*pp)
            pp = &(*pp)->next;
        *pp = q;
        grant_waiters(w);
        return;
    }
    if (h->kind == RMA_AM_UNLOCK && (h->op == MPI_LOCK_SHARED || h->op == MPI_LOCK_EXCLUSIVE))
        vmpi_rma_unlock_ctl(w, w->t[w->rank].ctl, h->op);
    int err = w->err_for[origin];
    w->err_for[origin] = MPI_SUCCESS;
    reply_int(w, origin, h->id, err);
    if (h->kind == RMA_AM_UNLOCK)
        grant_waiters(w);
}

static void serve(struct vmpi_win *w, int origin, char *msg, size_t len)
{
    const struct rma_am_hdr *h = (const void *)msg;
    if (len < sizeof *h || origin < 0 || origin >= w->size)
        return; /* not a request: nothing to answer */
    if (h->kind >= RMA_PUT && h->kind <= RMA_CAS)
        serve_data(w, origin, msg, len);
    else if (h->kind >= RMA_AM_LOCK && h->kind <= RMA_AM_FLUSH)
        serve_control(w, origin, h);
    else
        note_err(w, origin, MPI_ERR_OTHER);
}

/* Receives and applies what has arrived for window w. */
static int serve_window(struct vmpi_win *w)
{
    int n = 0;
    for (;;) {
        if (!w->am_recv) {
            MPI_Status st;
            if (!vmpi_p2p_peek(MPI_ANY_SOURCE, RMA_TAG_AM, w->comm, &st))
                break;
            size_t len = (size_t)vmpi_req_status_count(&st);
            w->am_buf = malloc(len ? len : 1);
            if (!w->am_buf)
                vmpi_fatal("rma: out of memory for a %zu-byte request", len);
            vmpi_p2p_irecv(w->am_buf, (MPI_Count)len, vmpi_dtype_get(MPI_BYTE), st.MPI_SOURCE,
                           RMA_TAG_AM, w->comm, 0, &w->am_recv);
        }
        if (!w->am_recv->done)
            break;
        struct vmpi_req *r = w->am_recv;
        w->am_recv = NULL;
        if (r->st_error == MPI_SUCCESS)
            serve(w, r->st_source, w->am_buf, r->st_bytes);
        vmpi_req_free(r);
        free(w->am_buf);
        w->am_buf = NULL;
        n++;
    }
    if (w->waiters)
        grant_waiters(w);
    if (w->pend)
        vmpi_rma_reap(w);
    return n;
}

int vmpi_rma_progress(void)
{
    /* Applying a request may wait (a lock's progress calls): no re-entry. */
    static bool running;
    if (running)
        return 0;
    running = true;
    int n = 0;
    for (struct vmpi_win *w = served; w; w = w->next)
        n += serve_window(w);
    running = false;
    return n;
}
