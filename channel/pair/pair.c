/* The shared-memory pair protocol of the smp and ivshmem channels (layout:
 * pair.h).
 *
 * Split copy: a large single-copy transfer is shared by both sides. The
 * receiver offers the second half in the pair's claim word and tells the
 * sender (SPLIT); it copies the first half itself, then claims the second
 * half unless the sender already has. Whoever wins copies it (the sender
 * writes into the receiver's buffer), so two cores copy at once when the
 * sender is in MPI, and the receiver never waits for a sender that is busy
 * elsewhere. */
#include "pair.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PAIR_CTS = VMPI_PKT_CHAN, PAIR_FIN, PAIR_SPLIT, PAIR_PART_DONE };

/* SPLIT: "copy bytes [from, to) of send scookie to raddr + from". */
struct pair_split {
    uint64_t scookie;
    uint64_t raddr;
    uint64_t from, to;
    uint64_t offer;
};

struct pair_rts {
    uint64_t scookie;
    uint64_t addr;
};

struct vmpi_pair_ctl {
    struct vmpi_pair_ctl *next;
    struct vmpi_hdr h;
    size_t paylen;
    unsigned char pay[];
};

static inline struct vmpi_pair_slot *slot_at(const struct vmpi_pair_inst *in, char *bulk,
                                             uint64_t chunk)
{
    return (struct vmpi_pair_slot *)(bulk + (chunk % in->nslots) *
                                                (sizeof(struct vmpi_pair_slot) + in->slot_bytes));
}

/* The peer's send lock, while split senders may run (vmpi_chan_mt): a
 * record's copy is short, so a waiter spins, and gives its processor away
 * now and then in case the holder is a thread that lost its own. */
static void tx_take(struct vmpi_pair_peer *p)
{
    for (unsigned i = 1; atomic_load_explicit(&p->txl, memory_order_relaxed) ||
                         atomic_exchange_explicit(&p->txl, 1, memory_order_acquire);
         i++)
        if (i % 64 == 0)
            sched_yield();
        else
            vmpi_relax();
}

/* Takes the lock while vmpi_chan_mt is set; whether it did, for the
 * matching tx_unlock. */
static inline bool tx_lock(struct vmpi_pair_peer *p)
{
    if (VMPI_LIKELY(!atomic_load_explicit(&vmpi_chan_mt, memory_order_relaxed)))
        return false;
    tx_take(p);
    return true;
}

static inline void tx_unlock(struct vmpi_pair_peer *p, bool locked)
{
    if (locked)
        atomic_store_explicit(&p->txl, 0, memory_order_release);
}

static void *reserve(struct vmpi_pair_peer *p, size_t paylen)
{
    if (VMPI_UNLIKELY(p->bl_head != NULL))
        return NULL;
    if (VMPI_UNLIKELY(p->slow)) {
        if (p->gated)
            p->in->gate(p);
        if (p->in->stage)
            return vmpi_pair_sum_reserve(p, paylen);
    }
    char *r = vmpi_ring_reserve(&p->tx, paylen + sizeof(struct vmpi_hdr));
    if (!r) {
        vmpi_pair_ring_check(p);
        return NULL;
    }
    p->resv = r;
    return r + sizeof(struct vmpi_hdr);
}

/* A reserved record holds the send lock until its commit. */
void *vmpi_pair_reserve(void *cs, size_t paylen)
{
    struct vmpi_pair_peer *p = cs;
    bool l = tx_lock(p);
    void *r = reserve(p, paylen);
    if (r)
        p->resv_locked = l;
    else
        tx_unlock(p, l);
    return r;
}

void vmpi_pair_commit(void *cs, const struct vmpi_hdr *h, size_t paylen)
{
    struct vmpi_pair_peer *p = cs;
    if (VMPI_UNLIKELY(p->slow) && p->in->stage) {
        vmpi_pair_sum_commit(p, h, paylen);
    } else {
        memcpy(p->resv, h, sizeof *h);
        vmpi_ring_commit(&p->tx, paylen + sizeof *h);
    }
    bool l = p->resv_locked;
    vmpi_chan_count_sent(&p->in->stats, h, l);
    p->resv_locked = false;
    tx_unlock(p, l);
}

static bool ring_put(struct vmpi_pair_peer *p, const struct vmpi_hdr *h, const void *pay,
                     size_t paylen)
{
    if (VMPI_UNLIKELY(p->slow)) {
        if (p->gated)
            p->in->gate(p);
        if (p->in->stage)
            return vmpi_pair_sum_put(p, h, pay, paylen);
    }
    char *r = vmpi_ring_reserve(&p->tx, paylen + sizeof *h);
    if (!r) {
        vmpi_pair_ring_check(p);
        return false;
    }
    memcpy(r, h, sizeof *h);
    vmpi_copy(r + sizeof *h, pay, paylen);
    vmpi_ring_commit(&p->tx, paylen + sizeof *h);
    return true;
}

/* The send of a packet with the lock as tx_lock left it (locked); drops it. */
static int send_locked(struct vmpi_pair_peer *p, const struct vmpi_hdr *h, const void *buf,
                       size_t len, bool locked)
{
    int rc = 1;
    if (!p->bl_head && ring_put(p, h, buf, len)) {
        vmpi_chan_count_sent(&p->in->stats, h, locked);
        rc = 0;
    }
    tx_unlock(p, locked);
    return rc;
}

int vmpi_pair_send(void *cs, const struct vmpi_hdr *h, const void *buf, size_t len)
{
    struct vmpi_pair_peer *p = cs;
    return send_locked(p, h, buf, len, tx_lock(p));
}

/* Peers whose records are checked or gated go under the library's lock:
 * the integrity stage is one per channel, and a gate may move the pair.
 * A split sender always takes the peer's lock: vmpi_chan_mt may go off
 * while it is inside, after a revocation it did not see (core/thread.c). */
int vmpi_pair_send_split(void *cs, const struct vmpi_hdr *h, const void *buf, size_t len)
{
    struct vmpi_pair_peer *p = cs;
    if (p->slow)
        return 1;
    tx_take(p);
    return send_locked(p, h, buf, len, true);
}

void vmpi_pair_send_ctl(void *cs, const struct vmpi_hdr *h, const void *pay, size_t paylen)
{
    struct vmpi_pair_peer *p = cs;
    bool l = tx_lock(p);
    if (p->bl_head || !ring_put(p, h, pay, paylen)) {
        struct vmpi_pair_ctl *c = malloc(sizeof *c + paylen);
        if (!c)
            vmpi_fatal("%s: out of memory queueing a control packet", p->in->where);
        c->next = NULL;
        c->h = *h;
        c->paylen = paylen;
        memcpy(c->pay, pay, paylen);
        if (p->bl_tail)
            p->bl_tail->next = c;
        else
            p->bl_head = c;
        p->bl_tail = c;
    }
    tx_unlock(p, l);
}

static void ctl_cookie(struct vmpi_pair_peer *p, int type, uint64_t cookie)
{
    struct vmpi_hdr h = {.type = (uint8_t)type};
    vmpi_pair_send_ctl(p, &h, &cookie, sizeof cookie);
}

int vmpi_pair_rndv_send(void *cs, struct vmpi_xfer *x, const struct vmpi_hdr *h)
{
    struct vmpi_pair_peer *p = cs;
    struct pair_rts *rts = vmpi_pair_reserve(p, sizeof *rts);
    if (!rts)
        return 1;
    rts->scookie = x->cookie;
    rts->addr = p->in->ops->addr_of(p->in->up->sdata(x), x->size);
    vmpi_pair_commit(p, h, sizeof *rts);
    vmpi_chan_add(&p->in->stats.rndv_sent, 1,
                  atomic_load_explicit(&vmpi_chan_mt, memory_order_relaxed));
    return 0;
}

/* The receiver and the sender split a large contiguous transfer. Returns
 * false if it cannot be split (then the caller copies it whole). */
static bool split_read(struct vmpi_pair_peer *p, struct vmpi_xfer *r, const struct pair_rts *rts)
{
    size_t n = r->fit, cap;
    char *dst = p->in->up->rdata(r, &cap);
    if (!dst || n < p->in->split_min || !p->single_seen || !p->split_ok ||
        p->nsplit == VMPI_PAIR_NSPLIT)
        return false;
    uint64_t raddr = p->in->ops->addr_of(dst, n);
    if (raddr == VMPI_PAIR_NOADDR)
        return false;
    size_t half = (n / 2) & ~(size_t)4095;
    /* The next claim slot may still be open from an older offer: skip to a
     * free one (its receive pointer is NULL). */
    do
        p->offer += 2;
    while (p->split[(p->offer / 2) % VMPI_PAIR_NSPLIT].r);
    unsigned slot = (unsigned)((p->offer / 2) % VMPI_PAIR_NSPLIT);
    _Atomic uint64_t *claim = &p->claim_in->word[slot];
    atomic_store_explicit(claim, p->offer, memory_order_release);
    struct pair_split sp = {rts->scookie, raddr, half, n, p->offer};
    struct vmpi_hdr h = {.type = PAIR_SPLIT};
    vmpi_pair_send_ctl(p, &h, &sp, sizeof sp);
    if (!p->in->ops->copy(p, dst, rts->addr, half, false))
        vmpi_fatal("%s: single copy from %s stopped working", p->in->where, p->name);
    uint64_t offer = p->offer;
    if (atomic_compare_exchange_strong(claim, &offer, offer + 1)) {
        /* The sender has not started: take the second half too. */
        if (!p->in->ops->copy(p, dst + half, rts->addr + half, n - half, false))
            vmpi_fatal("%s: single copy from %s stopped working", p->in->where, p->name);
        ctl_cookie(p, PAIR_FIN, rts->scookie);
        p->in->up->complete(r);
    } else {
        /* Only the sender may have moved the claim, and only to offer + 1. */
        if (offer != p->offer + 1)
            vmpi_fatal("%s: corrupt split-copy claim of %s", p->in->where, p->name);
        p->split[slot].r = r; /* the sender is copying; PART_DONE completes r */
        p->split[slot].scookie = rts->scookie;
        p->split[slot].addr = rts->addr;
        p->split[slot].from = half;
        p->split[slot].offer = p->offer;
        p->nsplit++;
    }
    return true;
}

/* Single copy from the sender's memory; false if the kernel refuses. */
static bool single_read(struct vmpi_pair_peer *p, struct vmpi_xfer *r, uint64_t addr)
{
    size_t n = r->fit, cap;
    char *dst = p->in->up->rdata(r, &cap);
    char *tmp = NULL;
    if (!dst) {
        dst = tmp = malloc(n ? n : 1);
        if (!tmp)
            vmpi_fatal("%s: out of memory receiving %zu bytes", p->in->where, n);
    }
    if (!p->in->ops->copy(p, dst, addr, n, false)) {
        free(tmp);
        return false;
    }
    p->single_seen = true;
    if (tmp) {
        p->in->up->deliver(r, 0, tmp, n);
        free(tmp);
    }
    return true;
}

static void stream_in_start(struct vmpi_pair_peer *p, struct vmpi_xfer *r)
{
    p->in_stream = r;
    r->off = 0;
    ctl_cookie(p, PAIR_CTS, r->rcookie);
}

void vmpi_pair_rndv_recv(void *cs, struct vmpi_xfer *r, const void *info, size_t infolen)
{
    struct vmpi_pair_peer *p = cs;
    struct pair_rts rts;
    if (VMPI_UNLIKELY(p->gated))
        p->in->gate(p);
    if (infolen != sizeof rts)
        vmpi_fatal("%s: malformed rendezvous request from %s", p->in->where, p->name);
    memcpy(&rts, info, sizeof rts);
    if (p->single && rts.addr != VMPI_PAIR_NOADDR) {
        if (split_read(p, r, &rts))
            return;
        if (single_read(p, r, rts.addr)) {
            ctl_cookie(p, PAIR_FIN, rts.scookie);
            p->in->up->complete(r);
            return;
        }
        p->single = false;
    }
    r->rcookie = rts.scookie;
    if (!p->in_stream) {
        stream_in_start(p, r);
        return;
    }
    r->next = NULL;
    if (p->in_wait_tail)
        p->in_wait_tail->next = r;
    else
        p->in_wait = r;
    p->in_wait_tail = r;
}

/* A slot word that is not yet `want` may hold 0 or the value of an earlier
 * lap (want - k * nslots); anything else was written by someone else. */
static void slot_check(const struct vmpi_pair_peer *p, uint64_t v, uint64_t want)
{
    if (v > want || (v && (want - v) % p->in->nslots))
        vmpi_fatal("%s: corrupt bulk slot shared with %s", p->in->where, p->name);
}

/* Sender: fill free slots with the next chunks of out_stream. */
static int stream_out(struct vmpi_pair_peer *p)
{
    struct vmpi_xfer *s = p->out_stream;
    const char *src = p->in->up->sdata(s);
    int n = 0;
    while (s->off < s->size) {
        uint64_t c = p->out_chunk;
        struct vmpi_pair_slot *sl = slot_at(p->in, p->bulk_out, c);
        if (c >= p->in->nslots) {
            uint64_t want = c - p->in->nslots + 1,
                     e = atomic_load_explicit(&sl->empty, memory_order_acquire);
            if (e != want) {
                slot_check(p, e, want);
                break;
            }
        }
        size_t sb = p->in->slot_bytes;
        size_t k = s->size - s->off < sb ? s->size - s->off : sb;
        if (p->in->stage)
            vmpi_pair_sum_out(p, sl, src + s->off, k, c);
        else
            memcpy(sl + 1, src + s->off, k);
        sl->len = k;
        atomic_store_explicit(&sl->full, c + 1, memory_order_release);
        p->out_chunk++;
        s->off += k;
        n++;
    }
    if (s->off == s->size) {
        p->out_stream = NULL;
        p->in->up->complete(s);
    }
    return n;
}

/* Receiver: drain filled slots into in_stream. */
static int stream_in(struct vmpi_pair_peer *p)
{
    struct vmpi_xfer *r = p->in_stream;
    int n = 0;
    while (r->off < r->size) {
        uint64_t c = p->in_chunk;
        struct vmpi_pair_slot *sl = slot_at(p->in, p->bulk_in, c);
        uint64_t f = atomic_load_explicit(&sl->full, memory_order_acquire);
        if (f != c + 1) {
            slot_check(p, f, c + 1);
            break;
        }
        uint64_t k = *(volatile uint64_t *)&sl->len; /* read once: checked, then used */
        if (k == 0 || k > p->in->slot_bytes || k > r->size - r->off)
            vmpi_fatal("%s: corrupt bulk slot from %s (length %llu)", p->in->where, p->name,
                       (unsigned long long)k);
        if (p->in->stage)
            vmpi_pair_sum_in(p, r, sl, (size_t)k, c);
        else
            p->in->up->deliver(r, r->off, sl + 1, (size_t)k);
        atomic_store_explicit(&sl->empty, c + 1, memory_order_release);
        p->in_chunk++;
        r->off += (size_t)k;
        n++;
    }
    if (r->off == r->size) {
        p->in->up->complete(r);
        p->in_stream = NULL;
        struct vmpi_xfer *next = p->in_wait;
        if (next) {
            p->in_wait = next->next;
            if (!p->in_wait)
                p->in_wait_tail = NULL;
            stream_in_start(p, next);
        }
    }
    return n;
}

static struct vmpi_xfer *cookie_send(struct vmpi_pair_peer *p, const void *pay, size_t paylen)
{
    uint64_t cookie;
    if (paylen != sizeof cookie)
        vmpi_fatal("%s: malformed control packet from %s", p->in->where, p->name);
    memcpy(&cookie, pay, sizeof cookie);
    struct vmpi_xfer *s = p->in->up->send_of(cookie, p->world);
    if (!s)
        vmpi_fatal("%s: control packet from %s names no pending send", p->in->where, p->name);
    return s;
}

/* Sender: copy the offered half unless the receiver took it back. */
static void split_write(struct vmpi_pair_peer *p, const void *pay, size_t paylen)
{
    struct pair_split sp;
    if (paylen != sizeof sp)
        vmpi_fatal("%s: malformed SPLIT from %s", p->in->where, p->name);
    memcpy(&sp, pay, sizeof sp);
    struct vmpi_xfer *s = cookie_send(p, &sp.scookie, sizeof sp.scookie);
    if (sp.from > sp.to || sp.to > s->size)
        vmpi_fatal("%s: SPLIT from %s names bytes outside the message", p->in->where, p->name);
    uint64_t offer = sp.offer;
    _Atomic uint64_t *claim = &p->claim_out->word[(offer / 2) % VMPI_PAIR_NSPLIT];
    if (!atomic_compare_exchange_strong(claim, &offer, offer + 1)) {
        /* The receiver took it back (offer + 1), or reused the word since. */
        if (offer < sp.offer + 1)
            vmpi_fatal("%s: corrupt split-copy claim of %s", p->in->where, p->name);
        return;
    }
    uint64_t done[2] = {sp.offer, 0};
    done[1] = p->in->ops->copy(p, (char *)p->in->up->sdata(s) + sp.from, sp.raddr + sp.from,
                       (size_t)(sp.to - sp.from), true);
    struct vmpi_hdr h = {.type = PAIR_PART_DONE};
    vmpi_pair_send_ctl(p, &h, done, sizeof done);
}

/* Receiver: the sender finished (or could not do) its half. */
static void split_done(struct vmpi_pair_peer *p, const void *pay, size_t paylen)
{
    uint64_t done[2]; /* offer id, success */
    if (paylen != sizeof done)
        vmpi_fatal("%s: malformed PART_DONE from %s", p->in->where, p->name);
    memcpy(done, pay, sizeof done);
    unsigned slot = (unsigned)((done[0] / 2) % VMPI_PAIR_NSPLIT);
    struct vmpi_xfer *r = p->split[slot].r;
    if (!r || p->split[slot].offer != done[0])
        vmpi_fatal("%s: PART_DONE from %s names no open split", p->in->where, p->name);
    if (!done[1]) {
        /* The kernel let us read the sender but not it write us (ptrace
         * rules can differ by direction): copy that half here, stop splitting. */
        size_t cap, from = p->split[slot].from;
        char *dst = p->in->up->rdata(r, &cap);
        if (!p->in->ops->copy(p, dst + from, p->split[slot].addr + from, r->fit - from, false))
            vmpi_fatal("%s: single copy from %s stopped working", p->in->where, p->name);
        p->split_ok = false;
    }
    p->split[slot].r = NULL;
    p->nsplit--;
    ctl_cookie(p, PAIR_FIN, p->split[slot].scookie);
    p->in->up->complete(r);
}

static void channel_packet(struct vmpi_pair_peer *p, const struct vmpi_hdr *h, const void *pay,
                           size_t paylen)
{
    if (h->type == PAIR_SPLIT) {
        split_write(p, pay, paylen);
        return;
    }
    if (h->type == PAIR_PART_DONE) {
        split_done(p, pay, paylen);
        return;
    }
    struct vmpi_xfer *s = cookie_send(p, pay, paylen);
    if (h->type == PAIR_FIN) {
        p->in->up->complete(s);
    } else if (h->type == PAIR_CTS) {
        if (p->out_stream)
            vmpi_fatal("%s: %s sent a second CTS during a transfer", p->in->where, p->name);
        p->out_stream = s;
        s->off = 0;
    } else {
        vmpi_fatal("%s: unknown packet type %u from %s", p->in->where, h->type, p->name);
    }
}

/* Sends queued control packets and advances pipelined transfers. */
__attribute__((noinline)) static int poll_other(struct vmpi_pair_peer *p)
{
    int n = 0;
    bool l = tx_lock(p);
    while (p->bl_head) {
        struct vmpi_pair_ctl *c = p->bl_head;
        if (!ring_put(p, &c->h, c->pay, c->paylen))
            break;
        p->bl_head = c->next;
        if (!p->bl_head)
            p->bl_tail = NULL;
        free(c);
    }
    tx_unlock(p, l);
    if (p->out_stream)
        n += stream_out(p);
    if (p->in_stream)
        n += stream_in(p);
    return n;
}

/* Hands the records waiting in p's ring to core (or to the channel). */
__attribute__((noinline)) static int drain(struct vmpi_pair_peer *p)
{
    int n = 0;
    for (int budget = 64; budget > 0; budget--) {
        const void *rec;
        size_t len;
        int st = vmpi_ring_peek(&p->rx, &rec, &len);
        if (st == VMPI_RING_EMPTY)
            break;
        if (st == VMPI_RING_CORRUPT || len < sizeof(struct vmpi_hdr))
            vmpi_fatal("%s: corrupt ring from %s", p->in->where, p->name);
        size_t rlen = len;
        if (VMPI_UNLIKELY(p->in->stage))
            rec = vmpi_pair_sum_take(p, rec, &len);
        struct vmpi_hdr h;
        memcpy(&h, rec, sizeof h);
        const char *pay = (const char *)rec + sizeof h;
        size_t paylen = len - sizeof h;
        int rc = 0;
        if (h.type >= VMPI_PKT_CHAN)
            channel_packet(p, &h, pay, paylen);
        else if ((rc = p->in->up->incoming(p->world, &h, pay, paylen)) == VMPI_AGAIN)
            break;
        else
            vmpi_chan_count_recvd(&p->in->stats, &h);
        vmpi_ring_release(&p->rx, rlen);
        n++;
        if (rc == VMPI_MATCHED)
            break;
    }
    return n;
}

/* The idle path is a few loads per peer, so a waiting rank notices a new
 * record soon after it lands; the work is in the functions above. */
static inline int poll_peer(struct vmpi_pair_peer *p)
{
    int n = 0;
    if (vmpi_ring_ready(&p->rx))
        n += drain(p);
    if (VMPI_UNLIKELY(p->bl_head || p->out_stream || p->in_stream))
        n += poll_other(p);
    return n;
}

int vmpi_pair_poll(struct vmpi_pair_inst *in)
{
    int n = 0;
    for (int i = 0; i < in->npeers; i++)
        n += poll_peer(&in->peers[i]);
    for (int i = 0; VMPI_UNLIKELY(i < in->nextra); i++)
        n += poll_peer(in->extra[i]);
    return n;
}

static bool peer_busy(const struct vmpi_pair_peer *p)
{
    return p->bl_head || p->out_stream || p->in_stream || p->nsplit;
}

bool vmpi_pair_busy(const struct vmpi_pair_inst *in)
{
    for (int i = 0; i < in->npeers; i++)
        if (peer_busy(&in->peers[i]))
            return true;
    for (int i = 0; i < in->nextra; i++)
        if (peer_busy(in->extra[i]))
            return true;
    return false;
}

struct vmpi_pair_peer *vmpi_pair_new_peer(struct vmpi_pair_inst *in)
{
    struct vmpi_pair_peer *p = calloc(1, sizeof *p);
    struct vmpi_pair_peer **e = p ? realloc(in->extra, sizeof *e * (size_t)(in->nextra + 1))
                                  : NULL;
    if (!e) {
        free(p);
        return NULL;
    }
    in->extra = e;
    in->extra[in->nextra++] = p;
    return p;
}

static void peer_drop(struct vmpi_pair_peer *p)
{
    while (p->bl_head) {
        struct vmpi_pair_ctl *c = p->bl_head;
        p->bl_head = c->next;
        free(c);
    }
}

void vmpi_pair_finalize(struct vmpi_pair_inst *in)
{
    for (int i = 0; i < in->npeers; i++)
        peer_drop(&in->peers[i]);
    for (int i = 0; i < in->nextra; i++) {
        peer_drop(in->extra[i]);
        free(in->extra[i]);
    }
    free(in->peers);
    free(in->extra);
    free(in->stage);
    free(in->bounce);
    in->stage = in->bounce = NULL;
    in->peers = NULL;
    in->extra = NULL;
    in->npeers = in->nextra = 0;
}

uint64_t vmpi_pair_stride(uint32_t ncells, uint32_t nslots, uint64_t slot_bytes)
{
    return (vmpi_ring_bytes(ncells) + sizeof(struct vmpi_pair_claims) +
            nslots * (sizeof(struct vmpi_pair_slot) + slot_bytes) + 4095) &
           ~4095ull;
}

void vmpi_pair_clear(char *base, uint32_t ncells, uint32_t nslots, uint64_t slot_bytes)
{
    vmpi_ring_init(base, ncells);
    char *claims = base + vmpi_ring_bytes(ncells);
    memset(claims, 0, sizeof(struct vmpi_pair_claims));
    char *bulk = claims + sizeof(struct vmpi_pair_claims);
    for (uint32_t i = 0; i < nslots; i++)
        memset(bulk + i * (sizeof(struct vmpi_pair_slot) + slot_bytes), 0,
               sizeof(struct vmpi_pair_slot));
}

void vmpi_pair_attach(struct vmpi_pair_inst *in, struct vmpi_pair_peer *p, int world, char *out,
                      char *inb, size_t eager_max)
{
    size_t cap = vmpi_ring_max_len(in->ncells) - sizeof(struct vmpi_hdr) - sizeof(uint64_t) -
                 (in->stage ? sizeof(uint32_t) : 0);
    p->in = in;
    p->world = world;
    if (!p->name[0]) /* a peer attached again (ivshmem moves one) keeps its name */
        snprintf(p->name, sizeof p->name, "rank %d", world);
    p->split_ok = true;
    p->slow = p->gated || in->stage;
    vmpi_ring_tx_attach(&p->tx, out, in->ncells);
    vmpi_ring_rx_attach(&p->rx, inb, in->ncells);
    p->claim_out = (struct vmpi_pair_claims *)(out + vmpi_ring_bytes(in->ncells));
    p->claim_in = (struct vmpi_pair_claims *)(inb + vmpi_ring_bytes(in->ncells));
    p->bulk_out = (char *)(p->claim_out + 1);
    p->bulk_in = (char *)(p->claim_in + 1);
    p->eager_max = eager_max < cap ? eager_max : cap;
    if (in->stage)
        vmpi_pair_sum_names(p, in->sum_key, (uint64_t)vmpi_job.rank, (uint64_t)world);
}

void vmpi_pair_peer_of_job(struct vmpi_pair_peer *p, uint32_t job, int rank)
{
    snprintf(p->name, sizeof p->name, "rank %d of job %08x", rank, (unsigned)job);
}

void *vmpi_pair_add_peer(struct vmpi_pair_inst *in, int world, size_t *eager_max)
{
    for (int i = 0; i < in->npeers; i++)
        if (in->peers[i].world == world) {
            *eager_max = in->peers[i].eager_max;
            return &in->peers[i];
        }
    vmpi_fatal("%s: rank %d is not a peer of this channel", in->where, world);
}
