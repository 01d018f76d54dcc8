/* Point-to-point: matching, the eager and rendezvous protocols, and the
 * progress engine.
 *
 * Matching follows MPI's rules with two global queues: posted receives in
 * the order they were posted, unexpected messages in arrival order. A
 * message matches the first posted receive with the same context, a source
 * equal to its sender or MPI_ANY_SOURCE, and a tag equal to its tag or
 * MPI_ANY_TAG. Each pair of ranks uses one channel that delivers in order,
 * so non-overtaking holds.
 *
 * Messages up to the peer's eager_max (set by its channel) go eagerly (header + data in one
 * packet); larger ones by rendezvous, whose data movement belongs to the
 * channel (single copy by CMA, or a pipeline through shared buffers).
 *
 * Flow control: unexpected eager data is copied to the heap only while the
 * total held stays under vmpi_g.unexp_max (VMPI_UNEXPECTED_MAX bytes,
 * default 64 MiB). Past that, the incoming up-call answers VMPI_AGAIN and
 * the channel leaves the message in its ring, so the sender stalls when the
 * ring is full instead of the receiver's memory growing without bound.
 * The cap never blocks a peer that this rank is waiting for (a posted
 * receive or a probe could match it), since the wanted message may sit in
 * the ring behind the unwanted ones.
 *
 * Crossing rendezvous: two ranks that block in large sends to each other
 * would wait forever for each other's receive. When the progress engine has
 * spun idle for a while (PULL_IDLE_POLLS polls in a row), it pulls the data
 * of unexpected rendezvous messages into heap buffers (within the same
 * cap), which completes their senders. A receive posted in time still gets
 * the single copy straight into its buffer. */
#include "vmpi.h"
#include "dtype_impl.h"
#include "../locality/locality.h"

#include <stdlib.h>
#include <string.h>

struct vmpi_unexp {
    struct vmpi_unexp *next, *prev;
    struct vmpi_hdr h;
    int src_world;
    size_t paylen;      /* bytes at data: message (EAGER) or RTS info */
    uint64_t scookie;   /* sync send to acknowledge, or 0 */
    struct vmpi_req *pull; /* rendezvous data being pulled into pullbuf */
    unsigned char *pullbuf;
    struct vmpi_req *waiter; /* matched receive waiting for the pull */
    unsigned char data[];  /* eager message or RTS info */
};

static struct vmpi_req *pq_head, *pq_tail; /* posted receives */
static struct vmpi_unexp *uq_head, *uq_tail;
static struct vmpi_unexp *pulling;  /* matched while their pull was under way */

/* Sends that found no room in their channel, in order; per-peer counts
 * keep later sends to that peer behind them. */
static struct vmpi_req *pend_head, *pend_tail;
static unsigned *pend_count;
/* Sends queued for any peer, for split senders (core/thread.c), which
 * read it without the lock: a queued send leaves it only once it is in
 * its channel, so a thread whose own send was queued sends its next one
 * after it. */
static _Atomic unsigned pend_total;

static void pend_total_add(int d)
{
    atomic_store_explicit(&pend_total,
                          atomic_load_explicit(&pend_total, memory_order_relaxed) + (unsigned)d,
                          memory_order_release);
}

/* Operations with each peer that have started but wait for a packet from
 * it (a rendezvous or sync send awaiting its FIN/ACK, a matched rendezvous
 * receive awaiting data or PART_DONE). While any exists, that peer's ring
 * is always drained, whatever the unexpected cap, and MPI_Finalize keeps
 * making progress. */
static unsigned *inflight;
static unsigned inflight_total;

static void inflight_start(struct vmpi_req *r, int peer)
{
    if (r->done || r->inflight)
        return;
    r->inflight = 1;
    inflight[peer]++;
    inflight_total++;
}

void vmpi_p2p_inflight_end(struct vmpi_req *r)
{
    r->inflight = 0;
    inflight[r->x.peer]--;
    inflight_total--;
}

static void posted_append(struct vmpi_req *r)
{
    r->next = NULL;
    r->prev = pq_tail;
    if (pq_tail)
        pq_tail->next = r;
    else
        pq_head = r;
    pq_tail = r;
}

static void posted_remove(struct vmpi_req *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        pq_head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        pq_tail = r->prev;
    r->next = r->prev = NULL;
}

static void unexp_remove(struct vmpi_unexp *u)
{
    vmpi_g.unexp_len--;
    if (u->prev)
        u->prev->next = u->next;
    else
        uq_head = u->next;
    if (u->next)
        u->next->prev = u->prev;
    else
        uq_tail = u->prev;
}

static inline bool matches(const struct vmpi_req *r, const struct vmpi_hdr *h)
{
    return r->ctx == h->ctx && (r->peer == h->src || r->peer == MPI_ANY_SOURCE) &&
           (r->tag == h->tag || r->tag == MPI_ANY_TAG);
}

/* A matched header must name the sender's own rank in the receive's
 * communicator: headers from another VM's memory are untrusted, and the
 * source and tag end up in the user's status. */
static void src_check(const struct vmpi_comm *c, const struct vmpi_hdr *h, int world)
{
    if (VMPI_UNLIKELY(h->src < 0 || h->src >= c->peers->size || h->tag < 0 ||
                      vmpi_comm_world_rank(c, h->src) != world))
        vmpi_fatal("rank %d sent a message claiming source %d, tag %d in a communicator of %d",
                   world, (int)h->src, (int)h->tag, c->peers->size);
}

/* ---- the up-calls of the channels ------------------------------------------ */

/* Where a send request's packed data is (contiguous): user memory or tmp. */
static const void *req_sdata(const struct vmpi_req *sreq)
{
    if (sreq->tmp)
        return sreq->tmp;
    return vmpi_dtype_addr(sreq->buf, sreq->dt->true_lb);
}

static void *req_rdata(struct vmpi_req *rreq, size_t *n)
{
    if (!rreq->dt->contig)
        return NULL;
    *n = rreq->len;
    return vmpi_dtype_addr(rreq->buf, rreq->dt->true_lb);
}

static void req_deliver(struct vmpi_req *rreq, size_t off, const void *src, size_t len)
{
    if (off >= rreq->len)
        return;
    if (len > rreq->len - off)
        len = rreq->len - off;
    if (rreq->dt->contig)
        memcpy(vmpi_dtype_addr(rreq->buf, rreq->dt->true_lb + (MPI_Aint)off), src, len);
    else
        vmpi_dtype_unpack(rreq->buf, rreq->count, rreq->dt, off, src, len);
}

/* Records the outcome of a matched receive of msglen bytes from h. */
static void recv_outcome(struct vmpi_req *r, const struct vmpi_hdr *h)
{
    r->st_source = h->src;
    r->st_tag = h->tag;
    r->matched = 1;
    r->msglen = h->len;
    if (h->len > r->len) {
        r->st_bytes = r->len;
        r->st_error = MPI_ERR_TRUNCATE;
    } else {
        r->st_bytes = h->len;
    }
    r->x.size = r->msglen;
    r->x.fit = r->st_bytes;
}

static const void *up_sdata(const struct vmpi_xfer *x)
{
    return req_sdata(vmpi_req_of((struct vmpi_xfer *)x));
}

static void *up_rdata(struct vmpi_xfer *x, size_t *n)
{
    return req_rdata(vmpi_req_of(x), n);
}

static void up_deliver(struct vmpi_xfer *x, size_t off, const void *src, size_t len)
{
    req_deliver(vmpi_req_of(x), off, src, len);
}

static void up_complete(struct vmpi_xfer *x)
{
    vmpi_req_complete(vmpi_req_of(x));
}

static struct vmpi_xfer *up_send_of(uint64_t cookie, int peer)
{
    struct vmpi_req *s = vmpi_req_from_cookie(cookie);
    if (!s || s->kind != VMPI_REQ_SEND || s->done || s->x.peer != peer)
        return NULL;
    return &s->x;
}

static int incoming(int src, const struct vmpi_hdr *h, const void *pay, size_t paylen);
static bool up_awaits(int src);

const struct vmpi_chan_up vmpi_p2p_up = {
    .incoming = incoming,
    .send_of = up_send_of,
    .sdata = up_sdata,
    .rdata = up_rdata,
    .deliver = up_deliver,
    .complete = up_complete,
    .awaits = up_awaits,
};

static void send_ack(int world, uint64_t cookie)
{
    if (world == vmpi_job.rank) {
        struct vmpi_req *s = vmpi_req_from_cookie(cookie);
        if (s)
            vmpi_req_complete(s);
        return;
    }
    struct vmpi_peer *p = &vmpi_locality_peers[world];
    struct vmpi_hdr h = {.type = VMPI_PKT_ACK, .len = 0};
    p->chan->send_ctl(p->cstate, &h, &cookie, sizeof cookie);
}

/* A receive matched an eager message whose data is at pay. */
static inline void recv_eager(struct vmpi_req *r, const struct vmpi_hdr *h, const void *pay)
{
    recv_outcome(r, h);
    if (VMPI_LIKELY(r->dt->contig))
        vmpi_copy(vmpi_dtype_addr(r->buf, r->dt->true_lb), pay, r->st_bytes);
    else
        vmpi_dtype_unpack(r->buf, r->count, r->dt, 0, pay, r->st_bytes);
    vmpi_req_complete(r);
}

/* ---- incoming packets ---------------------------------------------------- */

/* World rank a probe is looking at (or ANY_SOURCE) while it polls; -3 none. */
static int probing = -3;

/* Does something wait for world rank src: a posted receive or an active
 * probe that names it (with any, also one for MPI_ANY_SOURCE), or an
 * operation that awaits a packet from it? */
static bool waits_for(int src, bool any)
{
    if ((any && probing == MPI_ANY_SOURCE) || probing == src || inflight[src])
        return true;
    for (struct vmpi_req *r = pq_head; r; r = r->next)
        if (r->peer == MPI_ANY_SOURCE ? any : vmpi_comm_world_rank(r->comm, r->peer) == src)
            return true;
    return false;
}

static bool up_awaits(int src)
{
    return waits_for(src, false);
}

/* A packet from world rank src (the channels' up-call; see chan.h). */
static int incoming(int src, const struct vmpi_hdr *h, const void *pay, size_t paylen)
{
    uint64_t scookie = 0;
    if (VMPI_LIKELY(h->type == VMPI_PKT_EAGER)) {
        if (VMPI_UNLIKELY(h->flags & VMPI_HF_SYNC)) {
            if (paylen < sizeof scookie)
                vmpi_fatal("malformed sync packet from rank %d", src);
            memcpy(&scookie, pay, sizeof scookie);
            pay = (const char *)pay + sizeof scookie;
            paylen -= sizeof scookie;
        }
        if (VMPI_UNLIKELY(paylen != h->len))
            vmpi_fatal("eager packet from rank %d: length %zu, header says %llu", src,
                       paylen, (unsigned long long)h->len);
    } else if (h->type == VMPI_PKT_ACK) {
        if (paylen != sizeof scookie)
            vmpi_fatal("malformed ACK packet from rank %d", src);
        memcpy(&scookie, pay, sizeof scookie);
        struct vmpi_req *s = vmpi_req_from_cookie(scookie);
        if (!s || s->kind != VMPI_REQ_SEND || s->mode != VMPI_MODE_SYNC || s->done ||
            s->x.peer != src)
            vmpi_fatal("ACK from rank %d names no pending synchronous send to it", src);
        vmpi_req_complete(s);
        return 0;
    } else if (h->type != VMPI_PKT_RTS) {
        vmpi_fatal("unknown packet type %u from rank %d", h->type, src);
    }

    for (struct vmpi_req *r = pq_head; r; r = r->next) {
        if (!matches(r, h))
            continue;
        src_check(r->comm, h, src);
        posted_remove(r);
        if (h->type == VMPI_PKT_EAGER) {
            if (scookie)
                send_ack(src, scookie);
            recv_eager(r, h, pay);
        } else {
            struct vmpi_peer *p = &vmpi_locality_peers[src];
            recv_outcome(r, h);
            r->x.peer = src;
            p->chan->rndv_recv(p->cstate, &r->x, pay, paylen);
            inflight_start(r, src);
        }
        return VMPI_MATCHED;
    }

    size_t hold = h->type == VMPI_PKT_EAGER ? paylen : 0;
    if (hold && hold > vmpi_g.unexp_max - vmpi_g.unexp_bytes && vmpi_g.unexp_bytes > 0 &&
        !waits_for(src, true))
        return VMPI_AGAIN;
    struct vmpi_unexp *u = malloc(sizeof *u + paylen);
    if (!u)
        vmpi_fatal("out of memory queueing an unexpected message of %zu bytes", paylen);
    u->h = *h;
    u->src_world = src;
    u->paylen = paylen;
    u->scookie = scookie;
    u->pull = NULL;
    u->pullbuf = NULL;
    u->waiter = NULL;
    vmpi_g.unexp_bytes += hold;
    if (paylen) /* a zero-byte self send may come with a NULL buffer */
        memcpy(u->data, pay, paylen);
    u->next = NULL;
    u->prev = uq_tail;
    if (uq_tail)
        uq_tail->next = u;
    else
        uq_head = u;
    uq_tail = u;
    vmpi_g.unexp_hwm += ++vmpi_g.unexp_len > vmpi_g.unexp_hwm;
    return 0;
}

/* ---- sends ----------------------------------------------------------------- */

/* Tries to put sreq on its channel; false when there is no room now. */
static bool send_try(struct vmpi_req *s)
{
    struct vmpi_peer *p = &vmpi_locality_peers[s->x.peer];
    const struct vmpi_chan *ch = p->chan;
    struct vmpi_hdr h = {.type = VMPI_PKT_EAGER, .src = s->comm->rank, .tag = s->tag,
                         .ctx = s->ctx, .len = s->len};
    if (s->len <= p->eager_max) {
        bool sync = s->mode == VMPI_MODE_SYNC;
        if (!sync && (s->tmp || s->dt->contig)) {
            if (ch->send(p->cstate, &h, req_sdata(s), s->len))
                return false;
            vmpi_req_complete(s);
            return true;
        }
        size_t paylen = s->len + (sync ? sizeof(uint64_t) : 0);
        char *out = ch->reserve(p->cstate, paylen);
        if (!out)
            return false;
        if (sync) {
            uint64_t c = vmpi_req_cookie(s);
            h.flags = VMPI_HF_SYNC;
            memcpy(out, &c, sizeof c);
            out += sizeof c;
        }
        if (s->tmp || s->dt->contig)
            memcpy(out, req_sdata(s), s->len);
        else
            vmpi_dtype_pack(out, s->buf, s->count, s->dt, 0, s->len);
        ch->commit(p->cstate, &h, paylen);
        if (!sync)
            vmpi_req_complete(s);
        return true;
    }
    h.type = VMPI_PKT_RTS;
    /* A sync send must not be pulled before it is matched (see below). */
    if (s->mode == VMPI_MODE_SYNC)
        h.flags = VMPI_HF_SYNC;
    if (!s->tmp && !vmpi_dtype_is_contig(s->dt)) {
        s->tmp = malloc(s->len);
        if (!s->tmp)
            vmpi_fatal("out of memory packing a %zu-byte message", s->len);
        vmpi_dtype_pack(s->tmp, s->buf, s->count, s->dt, 0, s->len);
    }
    return ch->rndv_send(p->cstate, &s->x, &h) == 0;
}

/* Send to self: the packet goes straight to the matching code. */
static bool send_self(struct vmpi_req *s)
{
    struct vmpi_hdr h = {.type = VMPI_PKT_EAGER, .src = s->comm->rank, .tag = s->tag,
                         .ctx = s->ctx, .len = s->len};
    const void *data;
    if (!s->tmp && !vmpi_dtype_is_contig(s->dt)) {
        s->tmp = malloc(s->len ? s->len : 1);
        if (!s->tmp)
            vmpi_fatal("out of memory packing a %zu-byte message", s->len);
        vmpi_dtype_pack(s->tmp, s->buf, s->count, s->dt, 0, s->len);
    }
    data = req_sdata(s);
    bool sync = s->mode == VMPI_MODE_SYNC;
    int rc;
    if (sync) {
        unsigned char *tmp = malloc(s->len + sizeof(uint64_t));
        if (!tmp)
            vmpi_fatal("out of memory sending %zu bytes to self", s->len);
        uint64_t c = vmpi_req_cookie(s);
        memcpy(tmp, &c, sizeof c);
        memcpy(tmp + sizeof c, data, s->len);
        h.flags = VMPI_HF_SYNC;
        rc = incoming(vmpi_job.rank, &h, tmp, s->len + sizeof c);
        free(tmp);
    } else {
        rc = incoming(vmpi_job.rank, &h, data, s->len);
        if (rc != VMPI_AGAIN)
            vmpi_req_complete(s);
    }
    return rc != VMPI_AGAIN;
}

static void pend_append(struct vmpi_req *s)
{
    s->next = NULL;
    s->prev = pend_tail;
    if (pend_tail)
        pend_tail->next = s;
    else
        pend_head = s;
    pend_tail = s;
    pend_count[s->x.peer]++;
    pend_total_add(1);
}

static void pend_remove(struct vmpi_req *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        pend_head = s->next;
    if (s->next)
        s->next->prev = s->prev;
    else
        pend_tail = s->prev;
    pend_count[s->x.peer]--;
}

/* Retries queued sends in order; a peer whose send found no room keeps its
 * later sends queued behind it. Returns the sends that left the queue. */
__attribute__((noinline, cold)) static int pend_progress(void)
{
    int n = 0;
    unsigned char blocked[64] = {0}; /* hashed per-peer "already full" marks */
    for (struct vmpi_req *s = pend_head, *next; s; s = next) {
        next = s->next;
        unsigned b = (unsigned)s->x.peer % (8 * sizeof blocked);
        if (blocked[b / 8] & (1u << (b % 8)))
            continue;
        pend_remove(s);
        bool ok = s->x.peer == vmpi_job.rank ? send_self(s) : send_try(s);
        if (ok) {
            inflight_start(s, s->x.peer);
            pend_total_add(-1);
        }
        if (!ok) {
            /* Put it back where it was. */
            pend_count[s->x.peer]++;
            s->prev = next ? next->prev : pend_tail;
            s->next = next;
            if (s->prev)
                s->prev->next = s;
            else
                pend_head = s;
            if (next)
                next->prev = s;
            else
                pend_tail = s;
            blocked[b / 8] |= (unsigned char)(1u << (b % 8));
            continue;
        }
        n++;
    }
    return n;
}

int vmpi_p2p_isend(const void *buf, MPI_Count count, struct vmpi_dtype *dt, int dest,
                   int tag, struct vmpi_comm *c, int coll, int mode, struct vmpi_req **out)
{
    struct vmpi_req *s = vmpi_req_alloc(VMPI_REQ_SEND);
    s->mode = (uint8_t)mode;
    s->buf = (void *)buf;
    s->count = count;
    s->dt = dt;
    vmpi_dtype_ref(dt);
    s->len = (size_t)(count * dt->size);
    s->x.size = s->len;
    s->tag = tag;
    s->peer = dest;
    s->comm = c;
    vmpi_comm_retain(c);
    s->ctx = c->ctx + (coll ? 1u : 0u);
    *out = s;
    if (dest == MPI_PROC_NULL) {
        vmpi_req_complete(s);
        return MPI_SUCCESS;
    }
    s->x.peer = vmpi_comm_world_rank(c, dest);
    if (pend_count[s->x.peer] == 0) {
        bool ok = s->x.peer == vmpi_job.rank ? send_self(s) : send_try(s);
        if (ok) {
            inflight_start(s, s->x.peer);
            return MPI_SUCCESS;
        }
    }
    pend_append(s);
    return MPI_SUCCESS;
}

/* ---- receives -------------------------------------------------------------- */

/* Receive r takes message u, already out of the unexpected queue (found by
 * vmpi_p2p_post_recv, or taken by a matched probe). */
void vmpi_p2p_recv_taken(struct vmpi_req *r, struct vmpi_unexp *u)
{
    if (u->pull) {
        /* The receive completes when the pull does (see finish_pulls), so
         * posting it never waits. */
        r->matched = 1;
        u->waiter = r;
        u->next = pulling;
        pulling = u;
        return;
    } else if (u->h.type == VMPI_PKT_EAGER) {
        vmpi_g.unexp_bytes -= u->paylen;
        if (u->scookie)
            send_ack(u->src_world, u->scookie);
        recv_eager(r, &u->h, u->data);
    } else {
        struct vmpi_peer *p = &vmpi_locality_peers[u->src_world];
        recv_outcome(r, &u->h);
        r->x.peer = u->src_world;
        p->chan->rndv_recv(p->cstate, &r->x, u->data, u->paylen);
        inflight_start(r, u->src_world);
    }
    free(u);
}

static struct vmpi_unexp *unexp_find(const struct vmpi_req *r)
{
    for (struct vmpi_unexp *u = uq_head; u; u = u->next)
        if (matches(r, &u->h))
            return u;
    return NULL;
}

void vmpi_p2p_post_recv(struct vmpi_req *r)
{
    if (r->peer == MPI_PROC_NULL) {
        r->st_source = MPI_PROC_NULL;
        r->st_tag = MPI_ANY_TAG;
        r->st_bytes = 0; /* MPI_Recv's request lives on the stack, uninitialized */
        vmpi_req_complete(r);
        return;
    }
    struct vmpi_unexp *u = uq_head ? unexp_find(r) : NULL;
    if (!u) {
        posted_append(r);
        return;
    }
    src_check(r->comm, &u->h, u->src_world);
    unexp_remove(u);
    vmpi_p2p_recv_taken(r, u);
}

void vmpi_p2p_recv_fill(struct vmpi_req *r, void *buf, MPI_Count count, struct vmpi_dtype *dt,
                        int src, int tag, struct vmpi_comm *c, int coll)
{
    r->buf = buf;
    r->count = count;
    r->dt = dt;
    r->len = (size_t)(count * dt->size);
    r->tag = tag;
    r->peer = src;
    r->comm = c;
    r->ctx = c->ctx + (coll ? 1u : 0u);
}

int vmpi_p2p_irecv(void *buf, MPI_Count count, struct vmpi_dtype *dt, int src, int tag,
                   struct vmpi_comm *c, int coll, struct vmpi_req **out)
{
    struct vmpi_req *r = vmpi_req_alloc(VMPI_REQ_RECV);
    vmpi_p2p_recv_fill(r, buf, count, dt, src, tag, c, coll);
    vmpi_dtype_ref(dt);
    vmpi_comm_retain(c);
    *out = r;
    vmpi_p2p_post_recv(r);
    return MPI_SUCCESS;
}

bool vmpi_p2p_send_fast(const void *buf, size_t len, const struct vmpi_dtype *dt, int dest,
                        int tag, struct vmpi_comm *c)
{
    int w = vmpi_comm_world_rank(c, dest);
    struct vmpi_peer *p = &vmpi_locality_peers[w];
    if (!p->chan || len > p->eager_max || !dt->contig || pend_count[w])
        return false;
    struct vmpi_hdr h = {.type = VMPI_PKT_EAGER, .src = c->rank, .tag = tag, .ctx = c->ctx,
                         .len = len};
    return p->chan->send(p->cstate, &h, vmpi_dtype_addr(buf, dt->true_lb), len) == 0;
}

bool vmpi_p2p_send_split(const void *buf, size_t len, const struct vmpi_dtype *dt, int dest,
                         int tag, struct vmpi_comm *c)
{
    int w = vmpi_comm_world_rank(c, dest);
    if (w >= vmpi_job.size)
        return false;
    const struct vmpi_peer *p = &vmpi_locality_job_peers[w];
    if (!p->chan || !p->chan->send_split || len > p->eager_max || !dt->contig ||
        atomic_load_explicit(&pend_total, memory_order_acquire))
        return false;
    struct vmpi_hdr h = {.type = VMPI_PKT_EAGER, .src = c->rank, .tag = tag, .ctx = c->ctx,
                         .len = len};
    return p->chan->send_split(p->cstate, &h, vmpi_dtype_addr(buf, dt->true_lb), len) == 0;
}

/* The requests a thread's split MPI_Isends hand out: taken from the pool
 * under the lock, up to SPLIT_REQS at a time, by threads that may split
 * (at most VMPI_CS_SLOTS, so at most that many caches are ever left by
 * threads that end); whoever retires one (MPI_Wait and the like, under
 * the lock) gives it back to the pool. Kind 0 while cached, so no peer's
 * cookie names one. */
#define SPLIT_REQS 64
static __thread struct vmpi_req *split_reqs[SPLIT_REQS] __attribute__((tls_model("initial-exec")));
static __thread int nsplit_reqs __attribute__((tls_model("initial-exec")));

void vmpi_p2p_split_refill(void)
{
    while (nsplit_reqs < SPLIT_REQS) {
        struct vmpi_req *r = vmpi_req_alloc(VMPI_REQ_SEND);
        r->kind = 0;
        split_reqs[nsplit_reqs++] = r;
    }
}

struct vmpi_req *vmpi_p2p_isend_split(const void *buf, size_t len, const struct vmpi_dtype *dt,
                                      int dest, int tag, struct vmpi_comm *c)
{
    if (!nsplit_reqs || !vmpi_p2p_send_split(buf, len, dt, dest, tag, c))
        return NULL;
    struct vmpi_req *r = split_reqs[--nsplit_reqs];
    r->kind = VMPI_REQ_SEND;
    r->done = 1;
    return r;
}

bool vmpi_p2p_cancel_recv(struct vmpi_req *r)
{
    if (r->kind != VMPI_REQ_RECV || r->matched || r->done)
        return false;
    posted_remove(r);
    r->cancelled = 1;
    vmpi_req_complete(r);
    return true;
}

/* Probe: the first unexpected message that a receive (src, tag, ctx) would
 * match. Fills the status fields into *st when found. */
static bool probe_found(struct vmpi_unexp *u, struct vmpi_comm *c, MPI_Status *st)
{
    if (!u)
        return false;
    src_check(c, &u->h, u->src_world);
    if (st != MPI_STATUS_IGNORE) {
        st->MPI_SOURCE = u->h.src;
        st->MPI_TAG = u->h.tag;
        vmpi_req_status_set_count(st, (MPI_Count)u->h.len);
    }
    return true;
}

struct vmpi_unexp *vmpi_p2p_probe(int src, int tag, struct vmpi_comm *c, MPI_Status *st,
                                  unsigned how)
{
    struct vmpi_req probe = {.peer = src, .tag = tag, .ctx = c->ctx};
    struct vmpi_unexp *u = unexp_find(&probe);
    if (!u && (how & VMPI_PROBE_POLL)) {
        probing = src == MPI_ANY_SOURCE ? src : vmpi_comm_world_rank(c, src);
        vmpi_progress();
        probing = -3;
        u = unexp_find(&probe);
    }
    if (probe_found(u, c, st) && (how & VMPI_PROBE_TAKE))
        unexp_remove(u);
    return u;
}

/* ---- progress ---------------------------------------------------------------- */

/* Starts pulling every unexpected rendezvous message that memory allows.
 * Sync sends are left alone: their completion must mean "matched". */
/* Completes receives whose pulled data has arrived. */
__attribute__((noinline, cold)) static int finish_pulls(void)
{
    int n = 0;
    for (struct vmpi_unexp **pp = &pulling, *u; (u = *pp);) {
        if (!u->pull->done) {
            pp = &u->next;
            continue;
        }
        *pp = u->next;
        vmpi_req_free(u->pull);
        vmpi_g.unexp_bytes -= u->h.len;
        recv_eager(u->waiter, &u->h, u->pullbuf);
        free(u->pullbuf);
        free(u);
        n++;
    }
    return n;
}

__attribute__((noinline, cold)) static void pull_unexpected(void)
{
    for (struct vmpi_unexp *u = uq_head; u; u = u->next) {
        if (u->h.type != VMPI_PKT_RTS || u->pull || (u->h.flags & VMPI_HF_SYNC) ||
            u->h.len > vmpi_g.unexp_max - vmpi_g.unexp_bytes)
            continue;
        u->pullbuf = malloc(u->h.len ? u->h.len : 1);
        if (!u->pullbuf)
            continue;
        struct vmpi_req *r = vmpi_req_alloc(VMPI_REQ_RECV);
        r->buf = u->pullbuf;
        r->count = (MPI_Count)u->h.len;
        r->dt = vmpi_dtype_get(MPI_BYTE);
        r->len = u->h.len;
        r->x.peer = u->src_world;
        recv_outcome(r, &u->h);
        u->pull = r;
        vmpi_g.unexp_bytes += u->h.len;
        struct vmpi_peer *p = &vmpi_locality_peers[u->src_world];
        p->chan->rndv_recv(p->cstate, &r->x, u->data, u->paylen);
        inflight_start(r, u->src_world);
    }
}

int vmpi_p2p_deferred(void)
{
    int n = 0;
    if (VMPI_UNLIKELY(pend_head != NULL))
        n += pend_progress();
    if (VMPI_UNLIKELY(pulling != NULL))
        n += finish_pulls();
    return n;
}

void vmpi_p2p_idle_pull(void)
{
    if (uq_head)
        pull_unexpected();
}

bool vmpi_p2p_quiet(void)
{
    return !pend_head && !pulling && !inflight_total;
}

static int ncounts; /* processes pend_count and inflight cover */

int vmpi_p2p_init(int nproc)
{
    unsigned *pc = realloc(pend_count, sizeof *pc * (size_t)nproc);
    unsigned *in = pc ? realloc(inflight, sizeof *in * (size_t)nproc) : NULL;
    pend_count = pc ? pc : pend_count;
    inflight = in ? in : inflight;
    if (!in)
        return -1;
    memset(pc + ncounts, 0, sizeof *pc * (size_t)(nproc - ncounts));
    memset(in + ncounts, 0, sizeof *in * (size_t)(nproc - ncounts));
    ncounts = nproc;
    return 0;
}

void vmpi_p2p_finalize(void)
{
    while (pulling) {
        struct vmpi_unexp *u = pulling;
        pulling = u->next;
        vmpi_req_free(u->pull);
        free(u->pullbuf);
        free(u);
    }
    while (uq_head) {
        struct vmpi_unexp *u = uq_head;
        unexp_remove(u);
        if (u->pull)
            vmpi_req_free(u->pull);
        free(u->pullbuf);
        free(u);
    }
    vmpi_g.unexp_bytes = 0;
    free(pend_count);
    free(inflight);
    atomic_store(&pend_total, 0);
    pend_count = NULL;
    inflight = NULL;
    inflight_total = ncounts = 0;
}
