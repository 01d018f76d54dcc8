/* smp channel: ranks in the same VM.
 *
 * One segment per VM, created by the VM's lowest rank and unlinked as soon
 * as every local rank has mapped it. Per ordered pair of local ranks it
 * holds an SPSC ring (shm/ring.h) for packets and a bulk area for the
 * pipelined rendezvous. A rendezvous moves data with one process_vm_readv
 * (CMA) by the receiver; if the kernel refuses (ptrace rules) or
 * VMPI_SMP_CMA=0, the sender streams it through the bulk slots instead.
 *
 * Split copy: a large single-copy transfer is shared by both sides. The
 * receiver offers the second half in the pair's claim word and tells the
 * sender (SPLIT); it copies the first half itself, then claims the second
 * half unless the sender already has. Whoever wins copies it (the sender
 * with process_vm_writev), so two cores copy at once when the sender is in
 * MPI, and the receiver never waits for a sender that is busy elsewhere. */
#include "smp.h"
#include "../chan.h"
#include "../../pmi/pmi.h"
#include "../../shm/ring.h"
#include "../../shm/seg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* Segment layout:
 *   struct smp_seg_hdr                  (one page)
 *   pair (from, to) at hdr.pair_stride * (from * nlocal + to):
 *     ring  vmpi_ring_bytes(ncells)
 *     claims struct smp_claims           (SMP_NSPLIT words)
 *     bulk  nslots * (sizeof(struct smp_slot) + slot_bytes)
 * Sizes are chosen by the creator and read back by the others. */
#define SMP_MAGIC 0x766d70692d736d70ull /* "vmpi-smp" */
#define SMP_VERSION 2
struct smp_seg_hdr {
    uint64_t magic;
    uint32_t version, nlocal;
    uint32_t ncells, nslots;
    uint64_t slot_bytes;
    uint64_t pair_stride;
    char pad[4096 - 40];
};
static_assert(sizeof(struct smp_seg_hdr) == 4096, "segment header is one page");

/* A bulk slot: `full` is written by the producer (chunk number + 1, release,
 * after data and len), `empty` by the consumer after copying out. */
struct smp_slot {
    alignas(64) _Atomic uint64_t full;
    uint64_t len;
    alignas(64) _Atomic uint64_t empty;
    char pad[56];
};
static_assert(sizeof(struct smp_slot) == 128, "slot header is two cache lines");

/* Split-copy claims of the pair (from, to). For each offer the receiver
 * `to` stores a fresh even id in claim[(id / 2) % SMP_NSPLIT]; the side that
 * moves it to id + 1 (CAS) copies the offered range, and a stale id means
 * the offer is gone. At most SMP_NSPLIT offers are open at once: as many as
 * the usual window of a bandwidth benchmark, since the sender's replies
 * queue behind the requests still in the ring. Claims are rare (two per
 * large message), so they share cache lines. */
#define SMP_NSPLIT 64
struct smp_claims {
    alignas(64) _Atomic uint64_t word[SMP_NSPLIT];
};
static_assert(sizeof(struct smp_claims) == 8 * SMP_NSPLIT, "claims are packed words");

enum { SMP_CTS = VMPI_PKT_CHAN, SMP_FIN, SMP_SPLIT, SMP_PART_DONE };

/* SPLIT: "copy bytes [from, to) of send scookie to raddr + from". */
struct smp_split {
    uint64_t scookie;
    uint64_t raddr;
    uint64_t from, to;
    uint64_t offer;
};

struct smp_rts {
    uint64_t scookie;
    uint64_t addr;
};

struct ctl {
    struct ctl *next;
    struct vmpi_hdr h;
    size_t paylen;
    unsigned char pay[];
};

struct smp_peer {
    int world;
    pid_t pid;
    bool cma;
    struct vmpi_ring_tx tx;
    struct vmpi_ring_rx rx;
    char *resv;               /* record reserved by reserve() */
    struct ctl *bl_head, *bl_tail; /* control packets waiting for ring room */
    char *bulk_out, *bulk_in;
    uint64_t out_chunk, in_chunk;
    struct vmpi_req *out_stream;   /* send being streamed after its CTS */
    struct vmpi_req *in_stream;    /* receive being filled */
    struct vmpi_req *in_wait, *in_wait_tail; /* matched, waiting for in_stream */
    bool cma_seen;                 /* a single copy from this peer has worked */
    struct smp_claims *claim_in;   /* claims of the pair (peer, me) */
    struct smp_claims *claim_out;  /* claims of the pair (me, peer) */
    uint64_t offer;                /* last offer id made to this peer */
    int nsplit;                    /* receives whose second half the sender copies */
    bool split_ok;                 /* the sender's writes have not been refused */
    struct {
        struct vmpi_req *r;
        uint64_t scookie;
        uint64_t addr;             /* the sender's data, for a refused half */
        size_t from;
        uint64_t offer;
    } split[SMP_NSPLIT];           /* indexed like the claims */
};

static struct smp_peer *peers;   /* the local peers (not self) */
static size_t split_min;         /* smallest transfer shared by both sides */
static int npeers;
static char *seg;
static size_t seg_size;
static uint32_t nslots;
static size_t slot_bytes;

static inline struct smp_slot *slot_at(char *bulk, uint64_t chunk)
{
    return (struct smp_slot *)(bulk + (chunk % nslots) * (sizeof(struct smp_slot) + slot_bytes));
}

static void *smp_reserve(void *cs, size_t paylen)
{
    struct smp_peer *p = cs;
    if (VMPI_UNLIKELY(p->bl_head != NULL))
        return NULL;
    char *r = vmpi_ring_reserve(&p->tx, paylen + sizeof(struct vmpi_hdr));
    if (!r)
        return NULL;
    p->resv = r;
    return r + sizeof(struct vmpi_hdr);
}

static void smp_commit(void *cs, const struct vmpi_hdr *h, size_t paylen)
{
    struct smp_peer *p = cs;
    memcpy(p->resv, h, sizeof *h);
    vmpi_ring_commit(&p->tx, paylen + sizeof *h);
}

static bool ring_put(struct smp_peer *p, const struct vmpi_hdr *h, const void *pay,
                     size_t paylen)
{
    char *r = vmpi_ring_reserve(&p->tx, paylen + sizeof *h);
    if (!r)
        return false;
    memcpy(r, h, sizeof *h);
    vmpi_copy(r + sizeof *h, pay, paylen);
    vmpi_ring_commit(&p->tx, paylen + sizeof *h);
    return true;
}

static int smp_send(void *cs, const struct vmpi_hdr *h, const void *buf, size_t len)
{
    struct smp_peer *p = cs;
    return !p->bl_head && ring_put(p, h, buf, len) ? 0 : 1;
}

static void smp_send_ctl(void *cs, const struct vmpi_hdr *h, const void *pay, size_t paylen)
{
    struct smp_peer *p = cs;
    if (!p->bl_head && ring_put(p, h, pay, paylen))
        return;
    struct ctl *c = malloc(sizeof *c + paylen);
    if (!c)
        vmpi_fatal("smp: out of memory queueing a control packet");
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

static void ctl_cookie(struct smp_peer *p, int type, uint64_t cookie)
{
    struct vmpi_hdr h = {.type = (uint8_t)type};
    smp_send_ctl(p, &h, &cookie, sizeof cookie);
}

static int smp_rndv_send(void *cs, struct vmpi_req *sreq, const struct vmpi_hdr *h)
{
    struct smp_peer *p = cs;
    struct smp_rts *rts = smp_reserve(p, sizeof *rts);
    if (!rts)
        return 1;
    rts->scookie = vmpi_req_cookie(sreq);
    rts->addr = (uint64_t)(uintptr_t)vmpi_req_sdata(sreq);
    smp_commit(p, h, sizeof *rts);
    return 0;
}

/* Moves n bytes between local and remote memory of p's process (read or
 * write); false if the kernel refuses single copies, fatal on other errors. */
static bool cma_copy(struct smp_peer *p, char *local, uint64_t remote, size_t n, bool write)
{
    size_t done = 0;
    while (done < n) {
        struct iovec l = {local + done, n - done};
        struct iovec rem = {(void *)(uintptr_t)(remote + done), n - done};
        ssize_t got = write ? process_vm_writev(p->pid, &l, 1, &rem, 1, 0)
                            : process_vm_readv(p->pid, &l, 1, &rem, 1, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            if (done == 0 && (errno == EPERM || errno == ENOSYS || errno == EACCES))
                return false;
            vmpi_fatal("smp: process_vm_%s with rank %d failed: %s", write ? "writev" : "readv",
                       p->world, strerror(got < 0 ? errno : EIO));
        }
        done += (size_t)got;
    }
    return true;
}

/* The receiver and the sender split a large contiguous transfer. Returns
 * false if it cannot be split (then the caller copies it whole). */
static bool split_read(struct smp_peer *p, struct vmpi_req *r, const struct smp_rts *rts)
{
    size_t n = r->st_bytes, cap;
    char *dst = vmpi_req_rdata(r, &cap);
    if (!dst || n < split_min || !p->cma_seen || !p->split_ok || p->nsplit == SMP_NSPLIT)
        return false;
    size_t half = (n / 2) & ~(size_t)4095;
    /* The next claim slot may still be open from an older offer: skip to a
     * free one (its receive pointer is NULL). */
    do
        p->offer += 2;
    while (p->split[(p->offer / 2) % SMP_NSPLIT].r);
    unsigned slot = (unsigned)((p->offer / 2) % SMP_NSPLIT);
    _Atomic uint64_t *claim = &p->claim_in->word[slot];
    atomic_store_explicit(claim, p->offer, memory_order_release);
    struct smp_split sp = {rts->scookie, (uint64_t)(uintptr_t)dst, half, n, p->offer};
    struct vmpi_hdr h = {.type = SMP_SPLIT};
    smp_send_ctl(p, &h, &sp, sizeof sp);
    if (!cma_copy(p, dst, rts->addr, half, false))
        vmpi_fatal("smp: single copy from rank %d stopped working", p->world);
    uint64_t offer = p->offer;
    if (atomic_compare_exchange_strong(claim, &offer, offer + 1)) {
        /* The sender has not started: take the second half too. */
        if (!cma_copy(p, dst + half, rts->addr + half, n - half, false))
            vmpi_fatal("smp: single copy from rank %d stopped working", p->world);
        ctl_cookie(p, SMP_FIN, rts->scookie);
        vmpi_req_recv_done(r);
    } else {
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
static bool cma_read(struct smp_peer *p, struct vmpi_req *r, uint64_t addr)
{
    size_t n = r->st_bytes, cap;
    char *dst = vmpi_req_rdata(r, &cap);
    char *tmp = NULL;
    if (!dst) {
        dst = tmp = malloc(n ? n : 1);
        if (!tmp)
            vmpi_fatal("smp: out of memory receiving %zu bytes", n);
    }
    if (!cma_copy(p, dst, addr, n, false)) {
        free(tmp);
        return false;
    }
    p->cma_seen = true;
    if (tmp) {
        vmpi_req_deliver(r, 0, tmp, n);
        free(tmp);
    }
    return true;
}

static void stream_in_start(struct smp_peer *p, struct vmpi_req *r)
{
    p->in_stream = r;
    r->off = 0;
    ctl_cookie(p, SMP_CTS, r->rcookie);
}

static void smp_rndv_recv(void *cs, struct vmpi_req *r, const void *info, size_t infolen)
{
    struct smp_peer *p = cs;
    struct smp_rts rts;
    if (infolen != sizeof rts)
        vmpi_fatal("smp: malformed rendezvous request from rank %d", p->world);
    memcpy(&rts, info, sizeof rts);
    if (p->cma && split_read(p, r, &rts))
        return;
    if (p->cma && cma_read(p, r, rts.addr)) {
        ctl_cookie(p, SMP_FIN, rts.scookie);
        vmpi_req_recv_done(r);
        return;
    }
    p->cma = false;
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

/* Sender: fill free slots with the next chunks of out_stream. */
static int stream_out(struct smp_peer *p)
{
    struct vmpi_req *s = p->out_stream;
    const char *src = vmpi_req_sdata(s);
    int n = 0;
    while (s->off < s->len) {
        uint64_t c = p->out_chunk;
        struct smp_slot *sl = slot_at(p->bulk_out, c);
        if (c >= nslots &&
            atomic_load_explicit(&sl->empty, memory_order_acquire) != c - nslots + 1)
            break;
        size_t k = s->len - s->off < slot_bytes ? s->len - s->off : slot_bytes;
        memcpy(sl + 1, src + s->off, k);
        sl->len = k;
        atomic_store_explicit(&sl->full, c + 1, memory_order_release);
        p->out_chunk++;
        s->off += k;
        n++;
    }
    if (s->off == s->len) {
        p->out_stream = NULL;
        vmpi_req_complete(s);
    }
    return n;
}

/* Receiver: drain filled slots into in_stream. */
static int stream_in(struct smp_peer *p)
{
    struct vmpi_req *r = p->in_stream;
    int n = 0;
    while (r->off < r->msglen) {
        uint64_t c = p->in_chunk;
        struct smp_slot *sl = slot_at(p->bulk_in, c);
        if (atomic_load_explicit(&sl->full, memory_order_acquire) != c + 1)
            break;
        uint64_t k = sl->len;
        if (k == 0 || k > slot_bytes || k > r->msglen - r->off)
            vmpi_fatal("smp: corrupt bulk slot from rank %d (length %llu)", p->world,
                       (unsigned long long)k);
        vmpi_req_deliver(r, r->off, sl + 1, (size_t)k);
        atomic_store_explicit(&sl->empty, c + 1, memory_order_release);
        p->in_chunk++;
        r->off += (size_t)k;
        n++;
    }
    if (r->off == r->msglen) {
        vmpi_req_recv_done(r);
        p->in_stream = NULL;
        struct vmpi_req *next = p->in_wait;
        if (next) {
            p->in_wait = next->next;
            if (!p->in_wait)
                p->in_wait_tail = NULL;
            stream_in_start(p, next);
        }
    }
    return n;
}

static struct vmpi_req *cookie_send(struct smp_peer *p, const void *pay, size_t paylen)
{
    uint64_t cookie;
    if (paylen != sizeof cookie)
        vmpi_fatal("smp: malformed control packet from rank %d", p->world);
    memcpy(&cookie, pay, sizeof cookie);
    struct vmpi_req *s = vmpi_req_from_cookie(cookie);
    if (!s || s->kind != VMPI_REQ_SEND || s->peer_world != p->world)
        vmpi_fatal("smp: control packet from rank %d names no pending send", p->world);
    return s;
}

/* Sender: copy the offered half unless the receiver took it back. */
static void split_write(struct smp_peer *p, const void *pay, size_t paylen)
{
    struct smp_split sp;
    if (paylen != sizeof sp)
        vmpi_fatal("smp: malformed SPLIT from rank %d", p->world);
    memcpy(&sp, pay, sizeof sp);
    struct vmpi_req *s = cookie_send(p, &sp.scookie, sizeof sp.scookie);
    if (sp.from > sp.to || sp.to > s->len)
        vmpi_fatal("smp: SPLIT from rank %d names bytes outside the message", p->world);
    uint64_t offer = sp.offer;
    _Atomic uint64_t *claim = &p->claim_out->word[(offer / 2) % SMP_NSPLIT];
    if (!atomic_compare_exchange_strong(claim, &offer, offer + 1))
        return;
    uint64_t done[2] = {sp.offer, 0};
    done[1] = cma_copy(p, (char *)vmpi_req_sdata(s) + sp.from, sp.raddr + sp.from,
                       (size_t)(sp.to - sp.from), true);
    struct vmpi_hdr h = {.type = SMP_PART_DONE};
    smp_send_ctl(p, &h, done, sizeof done);
}

/* Receiver: the sender finished (or could not do) its half. */
static void split_done(struct smp_peer *p, const void *pay, size_t paylen)
{
    uint64_t done[2]; /* offer id, success */
    if (paylen != sizeof done)
        vmpi_fatal("smp: malformed PART_DONE from rank %d", p->world);
    memcpy(done, pay, sizeof done);
    unsigned slot = (unsigned)((done[0] / 2) % SMP_NSPLIT);
    struct vmpi_req *r = p->split[slot].r;
    if (!r || p->split[slot].offer != done[0])
        vmpi_fatal("smp: PART_DONE from rank %d names no open split", p->world);
    if (!done[1]) {
        /* The kernel let us read the sender but not it write us (ptrace
         * rules can differ by direction): copy that half here, stop splitting. */
        size_t cap, from = p->split[slot].from;
        char *dst = vmpi_req_rdata(r, &cap);
        if (!cma_copy(p, dst + from, p->split[slot].addr + from, r->st_bytes - from, false))
            vmpi_fatal("smp: single copy from rank %d stopped working", p->world);
        p->split_ok = false;
    }
    p->split[slot].r = NULL;
    p->nsplit--;
    ctl_cookie(p, SMP_FIN, p->split[slot].scookie);
    vmpi_req_recv_done(r);
}

static void channel_packet(struct smp_peer *p, const struct vmpi_hdr *h, const void *pay,
                           size_t paylen)
{
    if (h->type == SMP_SPLIT) {
        split_write(p, pay, paylen);
        return;
    }
    if (h->type == SMP_PART_DONE) {
        split_done(p, pay, paylen);
        return;
    }
    struct vmpi_req *s = cookie_send(p, pay, paylen);
    if (h->type == SMP_FIN) {
        vmpi_req_complete(s);
    } else if (h->type == SMP_CTS) {
        if (p->out_stream)
            vmpi_fatal("smp: rank %d sent a second CTS during a transfer", p->world);
        p->out_stream = s;
        s->off = 0;
    } else {
        vmpi_fatal("smp: unknown packet type %u from rank %d", h->type, p->world);
    }
}

/* Sends queued control packets and advances pipelined transfers. */
__attribute__((noinline)) static int poll_other(struct smp_peer *p)
{
    int n = 0;
    while (p->bl_head) {
        struct ctl *c = p->bl_head;
        if (!ring_put(p, &c->h, c->pay, c->paylen))
            break;
        p->bl_head = c->next;
        if (!p->bl_head)
            p->bl_tail = NULL;
        free(c);
    }
    if (p->out_stream)
        n += stream_out(p);
    if (p->in_stream)
        n += stream_in(p);
    return n;
}

/* Hands the records waiting in p's ring to core (or to the channel). */
__attribute__((noinline)) static int drain(struct smp_peer *p)
{
    int n = 0;
    for (int budget = 64; budget > 0; budget--) {
        const void *rec;
        size_t len;
        int st = vmpi_ring_peek(&p->rx, &rec, &len);
        if (st == VMPI_RING_EMPTY)
            break;
        if (st == VMPI_RING_CORRUPT || len < sizeof(struct vmpi_hdr))
            vmpi_fatal("smp: corrupt ring from rank %d", p->world);
        struct vmpi_hdr h;
        memcpy(&h, rec, sizeof h);
        const char *pay = (const char *)rec + sizeof h;
        size_t paylen = len - sizeof h;
        int rc = 0;
        if (h.type >= VMPI_PKT_CHAN)
            channel_packet(p, &h, pay, paylen);
        else if ((rc = vmpi_core_incoming(p->world, &h, pay, paylen)) == VMPI_AGAIN)
            break;
        vmpi_ring_release(&p->rx, len);
        n++;
        if (rc == VMPI_MATCHED)
            break;
    }
    return n;
}

/* The idle path is a few loads per peer, so a waiting rank notices a new
 * record soon after it lands; the work is in the functions above. */
static int smp_poll(void)
{
    int n = 0;
    for (int i = 0; i < npeers; i++) {
        struct smp_peer *p = &peers[i];
        if (vmpi_ring_ready(&p->rx))
            n += drain(p);
        if (VMPI_UNLIKELY(p->bl_head || p->out_stream || p->in_stream))
            n += poll_other(p);
    }
    return n;
}

static bool smp_busy(void)
{
    for (int i = 0; i < npeers; i++)
        if (peers[i].bl_head || peers[i].out_stream || peers[i].in_stream || peers[i].nsplit)
            return true;
    return false;
}

static void smp_finalize(void)
{
    for (int i = 0; i < npeers; i++)
        while (peers[i].bl_head) {
            struct ctl *c = peers[i].bl_head;
            peers[i].bl_head = c->next;
            free(c);
        }
    free(peers);
    peers = NULL;
    npeers = 0;
    vmpi_shm_detach(seg, seg_size);
    seg = NULL;
}

const struct vmpi_chan vmpi_smp_chan = {
    .name = "smp",
    .send = smp_send,
    .reserve = smp_reserve,
    .commit = smp_commit,
    .send_ctl = smp_send_ctl,
    .rndv_send = smp_rndv_send,
    .rndv_recv = smp_rndv_recv,
    .poll = smp_poll,
    .busy = smp_busy,
    .finalize = smp_finalize,
};

int vmpi_smp_init(const int *worlds, const int *pids, int nlocal, int me)
{
    uint32_t ncells = (uint32_t)vmpi_env_u64("VMPI_SMP_RING_CELLS", 2048, 64, 1u << 20);
    if (ncells & (ncells - 1))
        vmpi_fatal("VMPI_SMP_RING_CELLS=%u is not a power of two", ncells);
    uint32_t ns = (uint32_t)vmpi_env_u64("VMPI_SMP_BULK_SLOTS", 8, 2, 1024);
    uint64_t sb = vmpi_env_u64("VMPI_SMP_BULK_SLOT_BYTES", 32768, 4096, 1u << 26) & ~63ull;
    bool cma = vmpi_env_u64("VMPI_SMP_CMA", 1, 0, 1) != 0;
    split_min = vmpi_env_u64("VMPI_SMP_SPLIT_MIN", 131072, 8192, UINT64_MAX);
    size_t eager_max = vmpi_env_u64("VMPI_SMP_EAGER_MAX", 8192, 0, 1u << 26);

    char name[128];
    if (vmpi_shm_name(name, sizeof name, vmpi_g.job_id, "smp") ||
        (size_t)snprintf(name + strlen(name), sizeof name - strlen(name), "%d", worlds[0]) >=
            sizeof name - strlen(name))
        vmpi_fatal("smp: job id too long for a segment name");
    uint64_t stride = (vmpi_ring_bytes(ncells) + sizeof(struct smp_claims) +
                       ns * (sizeof(struct smp_slot) + sb) + 4095) &
                      ~4095ull;
    size_t size = sizeof(struct smp_seg_hdr) + stride * (uint64_t)nlocal * (uint64_t)nlocal;

    if (nlocal > 1 && me == 0) {
        seg = vmpi_shm_create(name, size);
        if (!seg)
            vmpi_fatal("smp: cannot create shared segment %s (%zu bytes): %s", name, size,
                       strerror(errno));
        struct smp_seg_hdr *hd = (struct smp_seg_hdr *)seg;
        hd->magic = SMP_MAGIC;
        hd->version = SMP_VERSION;
        hd->nlocal = (uint32_t)nlocal;
        hd->ncells = ncells;
        hd->nslots = ns;
        hd->slot_bytes = sb;
        hd->pair_stride = stride;
    }
    if (vmpi_pmi_fence())
        vmpi_fatal("smp: PMI barrier failed");
    if (nlocal > 1 && me != 0) {
        seg = vmpi_shm_attach(name, sizeof(struct smp_seg_hdr));
        if (!seg)
            vmpi_fatal("smp: cannot map shared segment %s: %s", name, strerror(errno));
        struct smp_seg_hdr hd = *(struct smp_seg_hdr *)seg;
        vmpi_shm_detach(seg, sizeof hd);
        if (hd.magic != SMP_MAGIC || hd.version != SMP_VERSION || hd.nlocal != (uint32_t)nlocal)
            vmpi_fatal("smp: segment %s has an unexpected header", name);
        ncells = hd.ncells;
        ns = hd.nslots;
        sb = hd.slot_bytes;
        stride = hd.pair_stride;
        /* The creator's sizes must describe a layout we can index safely. */
        if (ncells < 64 || (ncells & (ncells - 1)) || ncells > (1u << 20) || ns < 2 ||
            ns > 1024 || sb < 4096 || sb % 64 || sb > (1u << 26) ||
            stride < vmpi_ring_bytes(ncells) + sizeof(struct smp_claims) +
                         ns * (sizeof(struct smp_slot) + sb) ||
            stride > (1ull << 40) / ((uint64_t)nlocal * (uint64_t)nlocal))
            vmpi_fatal("smp: segment %s describes an impossible layout", name);
        size = sizeof(struct smp_seg_hdr) + stride * (uint64_t)nlocal * (uint64_t)nlocal;
        seg = vmpi_shm_attach(name, size);
        if (!seg)
            vmpi_fatal("smp: cannot map shared segment %s: %s", name, strerror(errno));
    }
    if (vmpi_pmi_fence())
        vmpi_fatal("smp: PMI barrier failed");
    if (nlocal > 1 && me == 0)
        vmpi_shm_unlink(name);

    seg_size = size;
    nslots = ns;
    slot_bytes = sb;
    size_t cap = vmpi_ring_max_len(ncells) - sizeof(struct vmpi_hdr) - sizeof(uint64_t);
    if (eager_max > cap)
        eager_max = cap;
    peers = calloc(nlocal > 1 ? (size_t)nlocal - 1 : 1, sizeof *peers);
    if (!peers)
        vmpi_fatal("smp: out of memory");
    npeers = 0;
    for (int i = 0; i < nlocal; i++) {
        if (i == me)
            continue;
        struct smp_peer *p = &peers[npeers++];
        char *out = seg + sizeof(struct smp_seg_hdr) + stride * ((uint64_t)me * nlocal + i);
        char *in = seg + sizeof(struct smp_seg_hdr) + stride * ((uint64_t)i * nlocal + me);
        p->world = worlds[i];
        p->pid = pids[i];
        p->cma = cma;
        p->split_ok = true;
        vmpi_ring_tx_attach(&p->tx, out, ncells);
        vmpi_ring_rx_attach(&p->rx, in, ncells);
        p->claim_out = (struct smp_claims *)(out + vmpi_ring_bytes(ncells));
        p->claim_in = (struct smp_claims *)(in + vmpi_ring_bytes(ncells));
        p->bulk_out = (char *)(p->claim_out + 1);
        p->bulk_in = (char *)(p->claim_in + 1);
        vmpi_g.peers[p->world].chan = &vmpi_smp_chan;
        vmpi_g.peers[p->world].cstate = p;
        vmpi_g.peers[p->world].eager_max = eager_max;
    }
    return 0;
}
