/* ofi channel: the network path, over libfabric reliable-datagram (RDM)
 * endpoints. It serves every peer the coordinator does not give to a
 * shared-memory channel: ranks on other hosts, or every peer when
 * VMPI_CHANNELS leaves smp out (the locality-unaware baseline); fabric.c
 * loads libfabric and picks the provider.
 *
 * Addresses travel through the PMI key-value space as hex strings under
 * "vmpi-ofi-<rank>". Processes of other jobs (dynamic processes) are added
 * by connect: their packets carry their job and their rank in it, and the
 * first word between two jobs is a greeting on its own tag. Between two
 * processes of different jobs only the one of the lower job opens the
 * connection (with a bare CREDIT, at connect); the other sends nothing
 * before that came: two processes opening connections to each other at once
 * can lose packets, as the net provider of libfabric 1.17 does.
 *
 * Packets: each core packet is one tagged message (tag OFI_TAG_PKT) that
 * starts with struct ofi_wire. Receives go into a pool of pre-posted
 * buffers. A per-pair sequence number restores the sending order when a
 * provider completes receives out of order (early packets wait in the
 * peer's stash), so MPI's non-overtaking rule holds over any provider.
 *
 * Flow control: a sender holds `ncredits` credits per peer and spends one
 * per packet; the receiver hands credits back once it has consumed the
 * packet (piggybacked on its next packet to that peer, or in an explicit
 * CREDIT packet once half are owed). When core refuses a packet (its
 * unexpected-data cap, VMPI_AGAIN) the packet waits in the stash and its
 * credit is not returned, so the sender stalls after ncredits packets:
 * unexpected data per peer is bounded by ncredits * eager_max here, plus
 * core's cap.
 *
 * Rendezvous: where the provider offers FI_RMA, the sender registers its
 * buffer and sends the key in the RTS; the receiver reads the data with
 * fi_read in chunks and answers FIN. Without FI_RMA (or VMPI_OFI_RMA=0)
 * the receiver pre-posts tagged receives for the chunks straight into its
 * buffer, then sends CTS with their tag; the sender sends the chunks.
 *
 * One-sided access (the memory face: put and get to windows): window memory is
 * registered for remote reads and writes, and writes ask for delivery
 * completion, so a completed write is visible at the target: a flush needs
 * no message of its own.
 *
 * Memory registration follows the provider's mr_mode: local buffers are
 * registered only under FI_MR_LOCAL, keys are chosen by us unless
 * FI_MR_PROV_KEY, remote addresses are offsets unless FI_MR_VIRT_ADDR.
 */
#include "../chan.h"
#include "../../pmi/pmi.h"
#include "fabric.h"

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <signal.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OFI_TAG_PKT 0ull
#define OFI_TAG_DATA (1ull << 63) /* | transfer id << 24 | chunk index */
#define OFI_CHUNK_BITS 24
#define OFI_TAG_HELLO (1ull << 62) /* | port: a greeting (dynamic processes) */

enum { OFI_CTS = VMPI_PKT_CHAN, OFI_FIN, OFI_CREDIT };

/* Start of every packet on the wire. */
struct ofi_wire {
    int32_t src;      /* sender's world rank */
    uint32_t seq;     /* packet number from src to this rank (not for CREDIT) */
    uint32_t credits; /* credits the sender hands back to this rank */
    uint32_t job;     /* sender's job when this rank is in another one, else 0 */
    struct vmpi_hdr h;
};
static_assert(sizeof(struct ofi_wire) == 40, "ofi packet header is 40 bytes");

/* RTS payload. rma == 0: the receiver must send CTS (pipelined sends). */
struct ofi_rts {
    uint64_t scookie;
    uint64_t addr; /* remote address for fi_read (offset 0 without FI_MR_VIRT_ADDR) */
    uint64_t key;
    uint64_t rma;
};

/* CTS payload: "send the chunks of scookie with tags tag + i". */
struct ofi_cts {
    uint64_t scookie;
    uint64_t tag;
    uint64_t chunk;
};

/* Every operation's context starts with the provider's scratch space. */
enum { CTX_RX = 1, CTX_TX, CTX_CHUNK, CTX_RMA, CTX_HELLO };
struct ofi_ctx {
    struct fi_context2 fc;
    int kind;
};

struct ofi_peer;

/* A packet buffer: receive pool, or an outgoing packet. */
struct buf {
    struct ofi_ctx c;
    struct buf *next;
    struct ofi_peer *p; /* outgoing: destination */
    void *desc;         /* registration descriptor (FI_MR_LOCAL) */
    size_t len;         /* bytes on the wire */
    uint32_t port;      /* a greeting receive: its port */
    alignas(64) unsigned char data[];
};

/* The bulk data of one rendezvous, in chunks. */
enum { X_READ = 1, X_RECV, X_SEND };
struct xfer {
    struct xfer *next; /* in `posting` while chunks wait for queue room */
    int kind;
    struct ofi_peer *p;
    struct vmpi_xfer *req;
    struct fid_mr *mr;
    void *desc;
    char *buf;       /* where the data is or goes */
    bool tmp;        /* buf is ours (non-contiguous or short receive buffer) */
    size_t len;
    size_t nchunks, posted, done; /* chunks of chunk_max bytes */
    uint64_t scookie; /* X_READ: the send to FIN */
    uint64_t raddr, rkey;
    uint64_t tag;     /* X_RECV, X_SEND: tag of chunk 0 */
    struct chunk {
        struct ofi_ctx c;
        struct xfer *x;
    } ch[];
};

/* A one-sided write or read of a window (vmpi_ofi_write/read), in pieces
 * of at most chunk_max bytes that may complete in any order. */
struct rma_op {
    struct vmpi_xfer *req;
    size_t left; /* pieces not yet completed */
    int world;
};
struct rma_piece {
    struct ofi_ctx c;
    struct rma_op *op;
    struct fid_mr *mr;
};

/* A send buffer exposed for fi_read until the receiver's FIN. */
struct reg {
    struct reg *next;
    uint64_t scookie;
    struct fid_mr *mr;
};

struct ofi_peer {
    int world;
    uint32_t job;                  /* a process of another job: its job and its rank */
    int rank;                      /* there (dynamic processes), else 0 and unused */
    fi_addr_t addr;
    uint32_t tx_seq, rx_seq;
    uint32_t credits;              /* packets we may still send */
    uint32_t owed;                 /* consumed from it, not yet handed back */
    bool credit_unsent;            /* owed >= ncredits / 2 and no CREDIT went out */
    bool quiet;                    /* another job's, which opens the connection */
    struct buf *resv;              /* reserve()d, waiting for commit() */
    struct buf *q_head, *q_tail;   /* waiting for credits or queue room */
    struct buf *st_head;           /* received ahead of order or refused by core,
                                      by sequence number; buffers not reposted */
    struct reg *regs;
};

static struct fi_info *info;
static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_av *av;
static struct fid_cq *cq;
static struct fid_ep *ep;
static bool opened, closing;
static bool rma, mr_local, mr_virt, mr_prov_key, mr_endpoint;
static size_t inject_max, eager_max, chunk_max;
static uint32_t ncredits;
static uint64_t next_key = 1, next_xfer;

static const struct vmpi_chan_up *up;
static struct ofi_peer **peers;      /* the network peers: the job's, then other jobs' */
static struct ofi_peer *job_peers;   /* storage of the first njob */
static struct ofi_peer **peer_of;    /* world rank -> its peer, or NULL (nproc entries) */
static int npeers, njob, nproc;
static uint32_t my_job;
static size_t addr_len;              /* of this process's address: another job's are as long */
static struct buf *greets;           /* greetings awaited: posted receives, one per port */
static uint64_t *spoke;              /* job << 32 | rank: opened before we connected */
static size_t nspoke;

static size_t buf_stride, buf_cap;   /* buffer size in memory, payload room */
static struct buf *tx_free;
static struct buf *rx_repost;        /* receive buffers to post again */
static struct fid_mr **slab_mrs;
static void **slabs;
static int nslabs;
static unsigned tx_busy;             /* fi_tsend() not yet completed */
static struct vmpi_chan_stats stats;
static unsigned nxfers;              /* rendezvous transfers under way */
static unsigned nrma;                /* one-sided operations under way */
static struct xfer *posting;
static bool flush_needed;            /* queued packets, stash, owed credits */

/* ---- helpers ------------------------------------------------------------ */

static _Noreturn void ofi_die(const char *what, int rc)
{
    vmpi_fatal("ofi: %s: %s", what, vmpi_ofi_lf.strerror(-rc));
}

static struct fid_mr *mr_reg(void *addr, size_t len, uint64_t access, void **desc)
{
    struct fid_mr *mr;
    int rc = fi_mr_reg(domain, addr, len ? len : 1, access, 0, mr_prov_key ? 0 : next_key++,
                       0, &mr, NULL);
    if (rc)
        ofi_die("cannot register memory", rc);
    if (mr_endpoint && ((rc = fi_mr_bind(mr, &ep->fid, 0)) || (rc = fi_mr_enable(mr))))
        ofi_die("cannot bind registered memory to the endpoint", rc);
    if (desc)
        *desc = fi_mr_desc(mr);
    return mr;
}

/* Local buffers need a registration only under FI_MR_LOCAL. */
static struct fid_mr *local_reg(void *addr, size_t len, uint64_t access, void **desc)
{
    *desc = NULL;
    return mr_local ? mr_reg(addr, len, access, desc) : NULL;
}

static void mr_close(struct fid_mr *mr)
{
    if (mr)
        fi_close(&mr->fid);
}

/* Allocates n packet buffers in one (registered) slab; returns the list. */
static struct buf *slab_new(size_t n)
{
    void *mem = aligned_alloc(64, n * buf_stride);
    void **ns = realloc(slabs, (size_t)(nslabs + 1) * sizeof *ns);
    struct fid_mr **nm = realloc(slab_mrs, (size_t)(nslabs + 1) * sizeof *nm);
    if (ns)
        slabs = ns;
    if (nm)
        slab_mrs = nm;
    if (!mem || !ns || !nm)
        vmpi_fatal("ofi: out of memory for packet buffers");
    void *desc = NULL;
    slabs[nslabs] = mem;
    slab_mrs[nslabs] = local_reg(mem, n * buf_stride, FI_SEND | FI_RECV, &desc);
    nslabs++;
    struct buf *head = NULL;
    for (size_t i = n; i-- > 0;) {
        struct buf *b = (struct buf *)((char *)mem + i * buf_stride);
        b->desc = desc;
        b->next = head;
        head = b;
    }
    return head;
}

static struct buf *tx_get(void)
{
    if (!tx_free)
        tx_free = slab_new(64);
    struct buf *b = tx_free;
    tx_free = b->next;
    b->c.kind = CTX_TX;
    return b;
}

static void tx_put(struct buf *b)
{
    b->next = tx_free;
    tx_free = b;
}

/* ---- sending packets ---------------------------------------------------- */

static struct buf *pkt_new(struct ofi_peer *p, const struct vmpi_hdr *h, size_t paylen)
{
    if (paylen > buf_cap)
        vmpi_fatal("ofi: packet of %zu bytes exceeds the buffer size %zu", paylen, buf_cap);
    struct buf *b = tx_get();
    b->p = p;
    b->len = sizeof(struct ofi_wire) + paylen;
    struct ofi_wire *w = (struct ofi_wire *)b->data;
    w->src = vmpi_job.rank;
    w->seq = p->tx_seq++;
    if (h)
        w->h = *h;
    return b;
}

/* Hands b to the provider: 0, or -FI_EAGAIN when its queue is full. */
static int post_raw(struct buf *b, bool credit)
{
    struct ofi_peer *p = b->p;
    struct ofi_wire *w = (struct ofi_wire *)b->data;
    w->credits = p->owed;
    w->job = p->job ? my_job : 0;
    ssize_t rc;
    if (b->len <= inject_max) {
        rc = fi_tinject(ep, b->data, b->len, p->addr, OFI_TAG_PKT);
        if (rc == 0)
            tx_put(b);
    } else {
        rc = fi_tsend(ep, b->data, b->len, b->desc, p->addr, OFI_TAG_PKT, &b->c);
        if (rc == 0)
            tx_busy++;
    }
    if (rc == -FI_EAGAIN)
        return (int)rc;
    if (rc)
        vmpi_fatal("ofi: cannot send to rank %d: %s", p->world, vmpi_ofi_lf.strerror((int)-rc));
    p->owed = 0;
    p->credit_unsent = false;
    if (credit)
        p->credits--;
    return 0;
}

static void enqueue(struct ofi_peer *p, struct buf *b)
{
    b->next = NULL;
    if (p->q_tail)
        p->q_tail->next = b;
    else
        p->q_head = b;
    p->q_tail = b;
    flush_needed = true;
}

/* Sends a sequenced packet now or, keeping the order, later. */
static void post(struct ofi_peer *p, struct buf *b)
{
    if (p->q_head || p->credits == 0 || p->quiet || post_raw(b, true))
        enqueue(p, b);
}

static bool room(const struct ofi_peer *p)
{
    return !p->q_head && p->credits > 0 && !p->quiet;
}

static int ofi_send(void *cs, const struct vmpi_hdr *h, const void *buf, size_t len)
{
    struct ofi_peer *p = cs;
    if (!room(p))
        return 1;
    struct buf *b = pkt_new(p, h, len);
    if (len)
        memcpy(b->data + sizeof(struct ofi_wire), buf, len);
    post(p, b);
    vmpi_chan_count_sent(&stats, h, false);
    return 0;
}

static void *ofi_reserve(void *cs, size_t paylen)
{
    struct ofi_peer *p = cs;
    if (!room(p))
        return NULL;
    p->resv = pkt_new(p, NULL, paylen);
    return p->resv->data + sizeof(struct ofi_wire);
}

static void ofi_commit(void *cs, const struct vmpi_hdr *h, size_t paylen)
{
    struct ofi_peer *p = cs;
    struct buf *b = p->resv;
    p->resv = NULL;
    ((struct ofi_wire *)b->data)->h = *h;
    b->len = sizeof(struct ofi_wire) + paylen;
    post(p, b);
    vmpi_chan_count_sent(&stats, h, false);
}

static void ofi_send_ctl(void *cs, const struct vmpi_hdr *h, const void *pay, size_t paylen)
{
    struct ofi_peer *p = cs;
    struct buf *b = pkt_new(p, h, paylen);
    if (paylen)
        memcpy(b->data + sizeof(struct ofi_wire), pay, paylen);
    post(p, b);
}

static void ctl(struct ofi_peer *p, int type, const void *pay, size_t paylen)
{
    struct vmpi_hdr h = {.type = (uint8_t)type};
    ofi_send_ctl(p, &h, pay, paylen);
}

/* An explicit CREDIT packet; it takes no credit and no sequence number. */
static bool send_credit(struct ofi_peer *p)
{
    struct buf *b = tx_get();
    b->p = p;
    b->len = sizeof(struct ofi_wire);
    struct ofi_wire *w = (struct ofi_wire *)b->data;
    *w = (struct ofi_wire){.src = vmpi_job.rank, .h = {.type = OFI_CREDIT}};
    if (post_raw(b, false)) {
        tx_put(b);
        return false;
    }
    return true;
}

/* ---- rendezvous ---------------------------------------------------------- */

static struct xfer *xfer_new(int kind, struct ofi_peer *p, struct vmpi_xfer *req, size_t len)
{
    size_t n = len ? (len + chunk_max - 1) / chunk_max : 1;
    if (n >= (1ull << OFI_CHUNK_BITS))
        vmpi_fatal("ofi: message of %zu bytes needs too many chunks", len);
    struct xfer *x = calloc(1, sizeof *x + n * sizeof x->ch[0]);
    if (!x)
        vmpi_fatal("ofi: out of memory for a rendezvous");
    x->kind = kind;
    x->p = p;
    x->req = req;
    x->len = len;
    x->nchunks = n;
    for (size_t i = 0; i < n; i++) {
        x->ch[i].c.kind = CTX_CHUNK;
        x->ch[i].x = x;
    }
    nxfers++;
    return x;
}

static void xfer_finish(struct xfer *x)
{
    struct vmpi_xfer *r = x->req;
    mr_close(x->mr);
    if (x->kind == X_SEND) {
        up->complete(r);
    } else {
        if (x->tmp) {
            up->deliver(r, 0, x->buf, x->len);
            free(x->buf);
        }
        if (x->kind == X_READ)
            ctl(x->p, OFI_FIN, &x->scookie, sizeof x->scookie);
        up->complete(r);
    }
    nxfers--;
    free(x);
}

static size_t chunk_len(const struct xfer *x, size_t i)
{
    size_t off = i * chunk_max;
    return x->len - off < chunk_max ? x->len - off : chunk_max;
}

/* Posts the chunks not yet posted; false when the provider queue is full. */
static bool xfer_post(struct xfer *x)
{
    while (x->posted < x->nchunks) {
        size_t i = x->posted, off = i * chunk_max, n = chunk_len(x, i);
        void *ctx = &x->ch[i].c;
        ssize_t rc;
        if (x->kind == X_READ)
            rc = fi_read(ep, x->buf + off, n, x->desc, x->p->addr, x->raddr + off, x->rkey, ctx);
        else if (x->kind == X_RECV)
            rc = fi_trecv(ep, x->buf + off, n, x->desc, x->p->addr, x->tag + i, 0, ctx);
        else
            rc = fi_tsend(ep, x->buf + off, n, x->desc, x->p->addr, x->tag + i, ctx);
        if (rc == -FI_EAGAIN)
            return false;
        if (rc)
            vmpi_fatal("ofi: cannot move rendezvous data with rank %d: %s", x->p->world,
                       vmpi_ofi_lf.strerror((int)-rc));
        x->posted++;
    }
    if (x->kind == X_RECV) {
        /* Every chunk has a receive: now the sender may send them. */
        struct ofi_cts cts = {x->scookie, x->tag, chunk_max};
        ctl(x->p, OFI_CTS, &cts, sizeof cts);
    }
    return true;
}

static void xfer_start(struct xfer *x)
{
    if (!xfer_post(x)) {
        x->next = posting;
        posting = x;
        flush_needed = true;
    }
}

static int ofi_rndv_send(void *cs, struct vmpi_xfer *sreq, const struct vmpi_hdr *h)
{
    struct ofi_peer *p = cs;
    if (!room(p))
        return 1;
    struct ofi_rts rts = {.scookie = sreq->cookie};
    if (rma) {
        void *data = (void *)up->sdata(sreq);
        struct reg *g = malloc(sizeof *g);
        if (!g)
            vmpi_fatal("ofi: out of memory");
        g->scookie = rts.scookie;
        g->mr = mr_reg(data, sreq->size, FI_REMOTE_READ, NULL);
        g->next = p->regs;
        p->regs = g;
        rts.addr = mr_virt ? (uint64_t)(uintptr_t)data : 0;
        rts.key = fi_mr_key(g->mr);
        rts.rma = 1;
    }
    ofi_send_ctl(p, h, &rts, sizeof rts);
    vmpi_chan_count_sent(&stats, h, false);
    stats.rndv_sent++;
    return 0;
}

static void ofi_rndv_recv(void *cs, struct vmpi_xfer *r, const void *info_, size_t infolen)
{
    struct ofi_peer *p = cs;
    struct ofi_rts rts;
    if (infolen != sizeof rts)
        vmpi_fatal("ofi: malformed rendezvous request from rank %d", p->world);
    memcpy(&rts, info_, sizeof rts);
    if (rts.rma && !rma)
        vmpi_fatal("ofi: rank %d offers an RMA read this provider cannot do", p->world);
    struct xfer *x = xfer_new(rts.rma ? X_READ : X_RECV, p, r, r->size);
    size_t cap = 0;
    x->buf = up->rdata(r, &cap);
    if (!x->buf || cap < r->size) {
        x->buf = malloc(r->size ? r->size : 1);
        if (!x->buf)
            vmpi_fatal("ofi: out of memory for a %zu-byte receive", r->size);
        x->tmp = true;
    }
    x->scookie = rts.scookie;
    if (rts.rma) {
        x->raddr = rts.addr;
        x->rkey = rts.key;
        x->mr = local_reg(x->buf, x->len, FI_READ, &x->desc);
    } else {
        x->tag = OFI_TAG_DATA | ((++next_xfer & ((1ull << (63 - OFI_CHUNK_BITS)) - 1))
                                 << OFI_CHUNK_BITS);
        x->mr = local_reg(x->buf, x->len, FI_RECV, &x->desc);
    }
    xfer_start(x);
}

static struct vmpi_xfer *pending_send(struct ofi_peer *p, uint64_t cookie)
{
    struct vmpi_xfer *s = up->send_of(cookie, p->world);
    if (!s)
        vmpi_fatal("ofi: control packet from rank %d names no pending send", p->world);
    return s;
}

static void channel_packet(struct ofi_peer *p, const struct vmpi_hdr *h, const void *pay,
                           size_t paylen)
{
    if (h->type == OFI_FIN) {
        uint64_t cookie;
        if (paylen != sizeof cookie)
            vmpi_fatal("ofi: malformed FIN from rank %d", p->world);
        memcpy(&cookie, pay, sizeof cookie);
        struct reg **gp = &p->regs;
        while (*gp && (*gp)->scookie != cookie)
            gp = &(*gp)->next;
        if (!*gp)
            vmpi_fatal("ofi: FIN from rank %d names no exposed send", p->world);
        struct reg *g = *gp;
        *gp = g->next;
        struct vmpi_xfer *s = pending_send(p, cookie);
        mr_close(g->mr);
        free(g);
        up->complete(s);
    } else if (h->type == OFI_CTS) {
        struct ofi_cts cts;
        if (paylen != sizeof cts)
            vmpi_fatal("ofi: malformed CTS from rank %d", p->world);
        memcpy(&cts, pay, sizeof cts);
        struct vmpi_xfer *s = pending_send(p, cts.scookie);
        if (cts.chunk != chunk_max || !(cts.tag & OFI_TAG_DATA))
            vmpi_fatal("ofi: CTS from rank %d with chunk size %llu (ours %zu)", p->world,
                       (unsigned long long)cts.chunk, chunk_max);
        struct xfer *x = xfer_new(X_SEND, p, s, s->size);
        x->buf = (char *)up->sdata(s);
        x->tag = cts.tag;
        x->mr = local_reg(x->buf, x->len, FI_SEND, &x->desc);
        xfer_start(x);
    } else {
        vmpi_fatal("ofi: unknown packet type %u from rank %d", h->type, p->world);
    }
}

/* ---- receiving packets --------------------------------------------------- */

static void rx_post(struct buf *b)
{
    b->c.kind = CTX_RX;
    ssize_t rc = fi_trecv(ep, b->data, sizeof(struct ofi_wire) + buf_cap, b->desc,
                          FI_ADDR_UNSPEC, OFI_TAG_PKT, 0, &b->c);
    if (rc == -FI_EAGAIN) {
        b->next = rx_repost;
        rx_repost = b;
        flush_needed = true;
    } else if (rc) {
        vmpi_fatal("ofi: cannot post a receive buffer: %s", vmpi_ofi_lf.strerror((int)-rc));
    }
}

/* Receive buffers for n more peers: their credits, plus CREDIT packets in flight. */
static void rx_grow(size_t n)
{
    for (struct buf *b = slab_new(n * (ncredits + 2)), *next; b; b = next) {
        next = b->next;
        rx_post(b);
    }
}

/* Hands one in-order packet to the channel or to core: false if core
 * cannot take it now. */
static bool deliver(struct ofi_peer *p, const struct vmpi_hdr *h, const void *pay, size_t paylen)
{
    if (h->type >= VMPI_PKT_CHAN)
        channel_packet(p, h, pay, paylen);
    else if (up->incoming(p->world, h, pay, paylen) == VMPI_AGAIN)
        return false;
    else
        vmpi_chan_count_recvd(&stats, h);
    p->rx_seq++;
    if (++p->owed >= ncredits / 2 && !p->credit_unsent) {
        p->credit_unsent = true;
        flush_needed = true;
    }
    return true;
}

static uint32_t buf_seq(const struct buf *b)
{
    return ((const struct ofi_wire *)b->data)->seq;
}

/* Keeps a received packet (its buffer stays out of the pool) until it is
 * next in order and core takes it. Held buffers per peer are bounded by
 * its credits, so the pool covers them. */
static void stash(struct ofi_peer *p, struct buf *b)
{
    uint32_t seq = buf_seq(b);
    struct buf **sp = &p->st_head;
    while (*sp && (int32_t)(buf_seq(*sp) - seq) < 0)
        sp = &(*sp)->next;
    if (*sp && buf_seq(*sp) == seq)
        vmpi_fatal("ofi: rank %d sent packet %u twice", p->world, seq);
    b->next = *sp;
    *sp = b;
    flush_needed = true;
}

static bool deliver_buf(struct ofi_peer *p, struct buf *b)
{
    const struct ofi_wire *w = (const struct ofi_wire *)b->data;
    return deliver(p, &w->h, b->data + sizeof *w, b->len - sizeof *w);
}

/* Delivers stashed packets that are next in order. */
static int unstash(struct ofi_peer *p)
{
    int n = 0;
    struct buf *b;
    while ((b = p->st_head) && buf_seq(b) == p->rx_seq) {
        if (!deliver_buf(p, b))
            break;
        p->st_head = b->next;
        rx_post(b);
        n++;
    }
    return n;
}

static struct ofi_peer *foreign(uint32_t job, int rank)
{
    for (int i = njob; i < npeers; i++)
        if (peers[i]->job == job && peers[i]->rank == rank)
            return peers[i];
    return NULL;
}

static void rx_packet(struct buf *b, size_t len)
{
    struct ofi_wire w;
    if (len < sizeof w)
        vmpi_fatal("ofi: runt packet of %zu bytes", len);
    memcpy(&w, b->data, sizeof w);
    struct ofi_peer *p = w.job ? foreign(w.job, w.src)
                               : w.src >= 0 && w.src < vmpi_job.size ? peer_of[w.src] : NULL;
    if (!p && w.job && w.h.type == OFI_CREDIT && !w.credits) {
        uint64_t *n = realloc(spoke, sizeof *n * (nspoke + 1));
        if (!n)
            vmpi_fatal("ofi: out of memory");
        spoke = n;
        spoke[nspoke++] = (uint64_t)w.job << 32 | (uint32_t)w.src;
        rx_post(b);
        return;
    }
    if (!p)
        vmpi_fatal("ofi: packet from rank %d of job %08x, which is not a network peer", w.src,
                   w.job ? w.job : my_job);
    if (w.credits > ncredits - p->credits)
        vmpi_fatal("ofi: rank %d returned %u credits but holds %u", p->world, w.credits,
                   ncredits - p->credits);
    p->credits += w.credits;
    p->quiet = false;
    if (p->q_head)
        flush_needed = true;
    b->len = len;
    if (w.h.type != OFI_CREDIT &&
        (w.seq != p->rx_seq || p->st_head || !deliver_buf(p, b))) {
        stash(p, b);
        return;
    }
    rx_post(b);
}

/* ---- progress ------------------------------------------------------------ */

static _Noreturn void cq_failed(void)
{
    struct fi_cq_err_entry e = {0};
    if (fi_cq_readerr(cq, &e, 0) < 1)
        vmpi_fatal("ofi: the completion queue failed without an error entry");
    int world = -1;
    struct ofi_ctx *c = e.op_context;
    if (c && c->kind == CTX_TX)
        world = ((struct buf *)c)->p->world;
    else if (c && c->kind == CTX_CHUNK)
        world = ((struct chunk *)c)->x->p->world;
    else if (c && c->kind == CTX_RMA)
        world = ((struct rma_piece *)c)->op->world;
    char detail[256];
    const char *prov = fi_cq_strerror(cq, e.prov_errno, e.err_data, detail, sizeof detail);
    if (world >= 0)
        vmpi_fatal("ofi: lost rank %d: %s (%s)", world, vmpi_ofi_lf.strerror(e.err), prov ? prov : "");
    vmpi_fatal("ofi: network failure: %s (%s)", vmpi_ofi_lf.strerror(e.err), prov ? prov : "");
}

static int cq_drain(void)
{
    struct fi_cq_tagged_entry ev[16];
    ssize_t k = fi_cq_read(cq, ev, 16);
    if (k == -FI_EAGAIN)
        return 0;
    if (k == -FI_EAVAIL) {
        if (closing)
            return 0;
        cq_failed();
    }
    if (k < 0)
        ofi_die("cannot read the completion queue", (int)k);
    for (ssize_t i = 0; i < k; i++) {
        struct ofi_ctx *c = ev[i].op_context;
        if (c->kind == CTX_RX) {
            rx_packet((struct buf *)c, ev[i].len);
        } else if (c->kind == CTX_HELLO) {
            ((struct buf *)c)->len = ev[i].len;
        } else if (c->kind == CTX_TX) {
            tx_busy--;
            tx_put((struct buf *)c);
        } else if (c->kind == CTX_RMA) {
            struct rma_piece *pc = (struct rma_piece *)c;
            struct rma_op *o = pc->op;
            mr_close(pc->mr);
            free(pc);
            if (--o->left == 0) {
                up->complete(o->req);
                nrma--;
                free(o);
            }
        } else {
            struct chunk *ch = (struct chunk *)c;
            struct xfer *x = ch->x;
            if (x->kind == X_RECV && ev[i].len != chunk_len(x, (size_t)(ch - x->ch)))
                vmpi_fatal("ofi: rank %d sent a chunk of the wrong size", x->p->world);
            if (++x->done == x->nchunks)
                xfer_finish(x);
        }
    }
    return (int)k;
}

/* Queued packets, early or refused packets, owed credits, unposted work. */
__attribute__((noinline)) static int flush(void)
{
    int n = 0;
    flush_needed = false;
    while (rx_repost) {
        struct buf *b = rx_repost;
        rx_repost = b->next;
        rx_post(b);
        if (rx_repost == b)
            break;
    }
    for (struct xfer **xp = &posting; *xp;) {
        struct xfer *x = *xp;
        if (xfer_post(x)) {
            *xp = x->next;
            n++;
        } else {
            xp = &x->next;
            flush_needed = true;
        }
    }
    for (int i = 0; i < npeers; i++) {
        struct ofi_peer *p = peers[i];
        while (p->q_head && p->credits > 0 && !p->quiet) {
            struct buf *b = p->q_head;
            struct buf *next = b->next;
            if (post_raw(b, true))
                break;
            p->q_head = next;
            if (!p->q_head)
                p->q_tail = NULL;
            n++;
        }
        if (p->st_head)
            n += unstash(p);
        if (p->credit_unsent && !send_credit(p))
            flush_needed = true;
        if (p->q_head || p->st_head)
            flush_needed = true;
    }
    return n;
}

static int ofi_poll(void)
{
    int n = cq_drain();
    if (VMPI_UNLIKELY(flush_needed))
        n += flush();
    return n;
}

static bool ofi_busy(void)
{
    if (tx_busy || nxfers || nrma || posting)
        return true;
    for (int i = 0; i < npeers; i++)
        if (peers[i]->q_head)
            return true;
    return false;
}

static void ofi_finalize(void)
{
    if (!opened)
        return;
    closing = true;
    fi_close(&ep->fid);
    for (int i = 0; i < npeers; i++) {
        struct ofi_peer *p = peers[i];
        while (p->regs) {
            struct reg *g = p->regs;
            p->regs = g->next;
            mr_close(g->mr);
            free(g);
        }
        if (p->job)
            free(p);
    }
    for (int i = 0; i < nslabs; i++) {
        mr_close(slab_mrs[i]);
        free(slabs[i]);
    }
    free(slabs);
    free(slab_mrs);
    fi_close(&av->fid);
    fi_close(&cq->fid);
    fi_close(&domain->fid);
    fi_close(&fabric->fid);
    vmpi_ofi_lf.freeinfo(info);
    free(peers);
    free(job_peers);
    free(peer_of);
    free(spoke);
    slabs = NULL, slab_mrs = NULL, peers = NULL, job_peers = NULL, peer_of = NULL, spoke = NULL;
    tx_free = rx_repost = greets = NULL;
    npeers = njob = nproc = nslabs = 0;
    nspoke = 0;
    addr_len = 0;
    opened = closing = false;
}

/* ---- start-up ------------------------------------------------------------ */

static void open_endpoint(size_t npeer)
{
    static const int fatal_sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    struct sigaction saved[sizeof fatal_sigs / sizeof fatal_sigs[0]];
    for (size_t i = 0; i < sizeof fatal_sigs / sizeof fatal_sigs[0]; i++)
        sigaction(fatal_sigs[i], NULL, &saved[i]);
    vmpi_ofi_load();
    bool try_rma = vmpi_knob_num("VMPI_OFI_RMA") != 0;
    info = try_rma ? vmpi_ofi_query(true) : NULL;
    rma = info != NULL;
    if (!info)
        info = vmpi_ofi_query(false);
    if (!info)
        vmpi_ofi_no_provider();
    uint64_t mm = info->domain_attr->mr_mode;
    mr_local = mm & FI_MR_LOCAL;
    mr_virt = mm & FI_MR_VIRT_ADDR;
    mr_prov_key = mm & FI_MR_PROV_KEY;
    mr_endpoint = mm & FI_MR_ENDPOINT;
    inject_max = info->tx_attr->inject_size;
    size_t max_msg = info->ep_attr->max_msg_size;
    if (max_msg < 4096 + sizeof(struct ofi_wire))
        vmpi_fatal("ofi: provider %s sends at most %zu bytes per message",
                   info->fabric_attr->prov_name, max_msg);
    eager_max = vmpi_knob_num("VMPI_OFI_EAGER_MAX");
    if (eager_max + sizeof(struct ofi_wire) + sizeof(uint64_t) > max_msg)
        eager_max = max_msg - sizeof(struct ofi_wire) - sizeof(uint64_t);
    /* 256 KiB chunks keep several reads in flight: measured best of 64 KiB
     * to 4 MiB over TCP (docs/PERFORMANCE.md). */
    chunk_max = vmpi_knob_num("VMPI_OFI_CHUNK");
    if (chunk_max > max_msg)
        chunk_max = max_msg;
    uint64_t defcred = 1024 / npeer;
    defcred = defcred < 4 ? 4 : defcred > 64 ? 64 : defcred;
    ncredits = (uint32_t)vmpi_env_u64("VMPI_OFI_CREDITS", defcred, 2, 4096);
    buf_cap = eager_max + sizeof(uint64_t);
    if (buf_cap < sizeof(struct ofi_rts))
        buf_cap = sizeof(struct ofi_rts);
    buf_stride = (sizeof(struct buf) + sizeof(struct ofi_wire) + buf_cap + 63) & ~(size_t)63;

    int rc;
    struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_NONE};
    struct fi_av_attr ava = {.type = FI_AV_UNSPEC, .count = npeer};
    if ((rc = vmpi_ofi_lf.fabric(info->fabric_attr, &fabric, NULL)))
        ofi_die("cannot open the fabric", rc);
    if ((rc = fi_domain(fabric, info, &domain, NULL)))
        ofi_die("cannot open the domain", rc);
    if ((rc = fi_cq_open(domain, &cqa, &cq, NULL)))
        ofi_die("cannot open a completion queue", rc);
    if ((rc = fi_av_open(domain, &ava, &av, NULL)))
        ofi_die("cannot open an address vector", rc);
    if ((rc = fi_endpoint(domain, info, &ep, NULL)))
        ofi_die("cannot open an endpoint", rc);
    if ((rc = fi_ep_bind(ep, &av->fid, 0)) || (rc = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV)))
        ofi_die("cannot bind the endpoint", rc);
    if ((rc = fi_enable(ep)))
        ofi_die("cannot enable the endpoint", rc);
    opened = true;
    for (size_t i = 0; i < sizeof fatal_sigs / sizeof fatal_sigs[0]; i++)
        sigaction(fatal_sigs[i], &saved[i], NULL);
}

/* Collective over the job when any rank uses the network (one PMI barrier
 * for the address exchange). */
static void ofi_init(const struct vmpi_chan_up *upcalls, const struct vmpi_chan_setup *s)
{
    const int *worlds = s->peers;
    int n = s->npeers;
    up = upcalls;
    my_job = s->job;
    if (!s->used)
        return;
    char key[VMPI_PMI_KEYLEN], val[VMPI_PMI_VALLEN];
    unsigned char addr[VMPI_PMI_VALLEN / 2];
    if (n > 0) {
        open_endpoint((size_t)n);
        size_t alen = sizeof addr;
        int rc = fi_getname(&ep->fid, addr, &alen);
        if (rc)
            ofi_die("cannot read the endpoint address", rc);
        if (2 * alen + 1 > sizeof val)
            vmpi_fatal("ofi: endpoint address of %zu bytes does not fit in PMI", alen);
        vmpi_hex_encode(val, addr, alen);
        snprintf(key, sizeof key, "vmpi-ofi-%d", vmpi_job.rank);
        if (vmpi_pmi_put(key, val))
            vmpi_fatal("ofi: cannot publish the endpoint address through PMI");
    }
    if (vmpi_pmi_fence())
        vmpi_fatal("ofi: PMI barrier failed during the address exchange");
    if (n <= 0)
        return;
    peers = calloc((size_t)n, sizeof *peers);
    job_peers = calloc((size_t)n, sizeof *job_peers);
    peer_of = calloc((size_t)vmpi_job.size, sizeof *peer_of);
    if (!peers || !job_peers || !peer_of)
        vmpi_fatal("ofi: out of memory");
    npeers = njob = n;
    nproc = vmpi_job.size;
    for (int i = 0; i < n; i++) {
        struct ofi_peer *p = peers[i] = &job_peers[i];
        p->world = worlds[i];
        p->credits = ncredits;
        snprintf(key, sizeof key, "vmpi-ofi-%d", p->world);
        if (vmpi_pmi_get(key, val, sizeof val))
            vmpi_fatal("ofi: rank %d published no network address (PMI key %s is missing)",
                       p->world, key);
        size_t alen = vmpi_hex_decode(addr, sizeof addr, val);
        if (!alen)
            vmpi_fatal("ofi: malformed network address of rank %d: %s", p->world, val);
        if (fi_av_insert(av, addr, 1, &p->addr, 0, NULL) != 1)
            vmpi_fatal("ofi: libfabric rejects the network address of rank %d", p->world);
        peer_of[p->world] = p;
    }
    rx_grow((size_t)n);
}

static void *ofi_add_peer(int world, size_t *eager)
{
    *eager = eager_max;
    return peer_of[world];
}

/* ---- dynamic processes ------------------------------------------------------ */

static size_t ofi_address(void *buf, size_t cap)
{
    if (!opened)
        open_endpoint(1);
    addr_len = cap;
    return fi_getname(&ep->fid, buf, &addr_len) ? 0 : addr_len;
}

static void *ofi_connect(int world, uint32_t job, int rank, const void *addr, size_t alen,
                         size_t *eager)
{
    unsigned char mine[256];
    if (!addr_len)
        ofi_address(mine, sizeof mine);
    struct ofi_peer *p = calloc(1, sizeof *p);
    struct ofi_peer **np = realloc(peers, sizeof *np * (size_t)(npeers + 1));
    struct ofi_peer **po = world < nproc ? peer_of : realloc(peer_of, sizeof *po * (size_t)(world + 1));
    peers = np ? np : peers;
    peer_of = po ? po : peer_of;
    if (!p || !np || !po)
        vmpi_fatal("ofi: out of memory");
    for (; nproc <= world; nproc++)
        peer_of[nproc] = NULL;
    *p = (struct ofi_peer){.world = world, .job = job, .rank = rank, .credits = ncredits,
                           .quiet = job < my_job, .credit_unsent = job > my_job};
    if (alen != addr_len || fi_av_insert(av, addr, 1, &p->addr, 0, NULL) != 1) {
        free(p);
        return NULL;
    }
    for (size_t i = 0; i < nspoke; i++)
        if (spoke[i] == ((uint64_t)job << 32 | (uint32_t)rank)) {
            p->quiet = false;
            spoke[i] = spoke[--nspoke];
            break;
        }
    flush_needed = true;
    peers[npeers++] = peer_of[world] = p;
    rx_grow(1);
    *eager = eager_max;
    return p;
}

static void ofi_greet(void *cs, uint32_t port, const void *msg, size_t len)
{
    struct ofi_peer *p = cs;
    struct buf *b = tx_get();
    b->p = p;
    len = len < buf_cap ? len : buf_cap;
    memcpy(b->data, msg, len);
    ssize_t rc;
    while ((rc = fi_tsend(ep, b->data, len, b->desc, p->addr, OFI_TAG_HELLO | port, &b->c)) ==
           -FI_EAGAIN)
        cq_drain();
    if (rc)
        vmpi_fatal("ofi: cannot greet rank %d of job %08x: %s", p->rank, p->job,
                   vmpi_ofi_lf.strerror((int)-rc));
    tx_busy++;
}

static size_t ofi_greeting(uint32_t port, void *msg, size_t cap)
{
    struct buf **g = &greets;
    while (*g && (*g)->port != port)
        g = &(*g)->next;
    if (!*g) {
        struct buf *b = tx_get();
        *b = (struct buf){.c.kind = CTX_HELLO, .desc = b->desc, .port = port};
        ssize_t rc = fi_trecv(ep, b->data, buf_cap, b->desc, FI_ADDR_UNSPEC,
                              OFI_TAG_HELLO | port, 0, &b->c);
        if (rc == -FI_EAGAIN)
            tx_put(b);
        else if (rc)
            vmpi_fatal("ofi: cannot wait for a greeting: %s", vmpi_ofi_lf.strerror((int)-rc));
        else
            *g = b;
        return 0;
    }
    struct buf *b = *g;
    if (!b->len && (cq_drain(), !b->len))
        return 0;
    size_t n = b->len < cap ? b->len : cap;
    memcpy(msg, b->data, n);
    *g = b->next;
    tx_put(b);
    return n;
}

static const char *ofi_describe(void)
{
    static char line[160];
    if (!opened)
        return NULL;
    snprintf(line, sizeof line, "ofi provider %s, rendezvous by %s",
             info->fabric_attr->prov_name, rma ? "RMA read" : "pipelined sends");
    return line;
}

/* ---- one-sided access ---------------------------------------------------- */

static bool ofi_reaches(int world)
{
    return rma && world >= 0 && world < nproc && peer_of[world];
}

static bool ofi_expose(void *base, size_t len, struct vmpi_mem_reg *m)
{
    if (!opened || !rma || !base || !len)
        return false;
    struct fid_mr *mr = mr_reg(base, len, FI_REMOTE_READ | FI_REMOTE_WRITE, NULL);
    m->handle = mr;
    m->key.addr = mr_virt ? (uint64_t)(uintptr_t)base : 0;
    m->key.key = fi_mr_key(mr);
    return true;
}

static void ofi_unexpose(struct vmpi_mem_reg *m)
{
    mr_close(m->handle);
    m->handle = NULL;
}

static void rma_start(bool write, int world, char *buf, size_t len, uint64_t raddr,
                      uint64_t key, struct vmpi_xfer *req)
{
    struct ofi_peer *p = peer_of[world];
    struct rma_op *o = malloc(sizeof *o);
    if (!o)
        vmpi_fatal("ofi: out of memory for a one-sided operation");
    *o = (struct rma_op){req, len ? (len + chunk_max - 1) / chunk_max : 1, world};
    nrma++;
    for (size_t off = 0, i = 0, n = o->left; i < n; i++, off += chunk_max) {
        size_t k = len - off < chunk_max ? len - off : chunk_max;
        struct rma_piece *pc = calloc(1, sizeof *pc);
        if (!pc)
            vmpi_fatal("ofi: out of memory for a one-sided operation");
        pc->c.kind = CTX_RMA;
        pc->op = o;
        void *desc = NULL;
        pc->mr = local_reg(buf + off, k, write ? FI_WRITE : FI_READ, &desc);
        struct iovec iov = {buf + off, k};
        struct fi_rma_iov riov = {raddr + off, k, key};
        struct fi_msg_rma msg = {.msg_iov = &iov, .desc = &desc, .iov_count = 1,
                                 .addr = p->addr, .rma_iov = &riov, .rma_iov_count = 1,
                                 .context = &pc->c};
        for (;;) {
            ssize_t rc = write ? fi_writemsg(ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE)
                               : fi_readmsg(ep, &msg, FI_COMPLETION);
            if (rc == 0)
                break;
            if (rc != -FI_EAGAIN)
                vmpi_fatal("ofi: cannot %s rank %d's window memory: %s",
                           write ? "write" : "read", world, vmpi_ofi_lf.strerror((int)-rc));
            ofi_poll();
        }
    }
}

static void ofi_put(int world, const void *buf, size_t len, const struct vmpi_mem_key *key,
                    uint64_t off, struct vmpi_xfer *x)
{
    rma_start(true, world, (char *)buf, len, key->addr + off, key->key, x);
}

static void ofi_get(int world, void *buf, size_t len, const struct vmpi_mem_key *key,
                    uint64_t off, struct vmpi_xfer *x)
{
    rma_start(false, world, buf, len, key->addr + off, key->key, x);
}

static const struct vmpi_chan_mem ofi_mem = {
    .expose = ofi_expose,
    .unexpose = ofi_unexpose,
    .reaches = ofi_reaches,
    .put = ofi_put,
    .get = ofi_get,
};

const struct vmpi_chan vmpi_ofi_chan = {
    .name = "ofi",
    .reach = VMPI_REACH_NET,
    .slow_poll = true,
    .init = ofi_init,
    .add_peer = ofi_add_peer,
    .send = ofi_send,
    .reserve = ofi_reserve,
    .commit = ofi_commit,
    .send_ctl = ofi_send_ctl,
    .rndv_send = ofi_rndv_send,
    .rndv_recv = ofi_rndv_recv,
    .poll = ofi_poll,
    .busy = ofi_busy,
    .finalize = ofi_finalize,
    .describe = ofi_describe,
    .address = ofi_address,
    .connect = ofi_connect,
    .greet = ofi_greet,
    .greeting = ofi_greeting,
    .mem = &ofi_mem,
    .stats = &stats,
};
