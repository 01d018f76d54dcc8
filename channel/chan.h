/* The contract between a channel (smp, ivshmem, ofi) and the layers above.
 *
 * core/ owns matching and decides eager vs rendezvous; a channel moves
 * packets and bulk data to one peer. Every packet starts with struct
 * vmpi_hdr. Core packet types are below 16; a channel's own control packets
 * (CTS, FIN, ...) use 16 and up and never leave the channel.
 *
 * Calls go down only: what a channel hands back (an arrived packet, data
 * for a request, a finished transfer) goes through the up-call table it was
 * given at init, as Open MPI's btl delivers through its active-message
 * table and UCX through uct_iface_set_am_handler. The coordinator
 * (locality/coord.c) decides which channel serves which peer, from the
 * channel's `reach`, and keeps the peer table; the channels are listed once,
 * in channel/list.c, in order of preference. */
#ifndef VMPI_CHANNEL_CHAN_H
#define VMPI_CHANNEL_CHAN_H

#include "../base/base.h"

#include <assert.h>

/* The most bytes of a process's address for other jobs (all channels'). */
#define VMPI_ADDR_MAX 52

enum vmpi_pkt_type {
    VMPI_PKT_EAGER = 1, /* payload: the packed message ([cookie] first if SYNC) */
    VMPI_PKT_RTS = 2,   /* payload: the channel's rendezvous info */
    VMPI_PKT_ACK = 3,   /* payload: u64 sender cookie; a sync send was matched */
    VMPI_PKT_CHAN = 16  /* first channel-private type */
};
enum { VMPI_HF_SYNC = 1 }; /* the sender wants an ACK when matched */

/* On the wire (and in shared memory) in this exact layout. */
struct vmpi_hdr {
    uint8_t type;
    uint8_t flags;
    uint16_t rsvd;
    int32_t src; /* sender's rank in the communicator */
    int32_t tag;
    uint32_t ctx;
    uint64_t len; /* message bytes (packed) */
};
static_assert(sizeof(struct vmpi_hdr) == 24, "packet header is 24 bytes");

/* What a channel sees of a request whose data it moves; the request above
 * embeds one. The first block is set before the request is handed to the
 * channel, the second belongs to the channel while it moves the data. */
struct vmpi_xfer {
    uint64_t cookie; /* names this transfer to the peer, which echoes it back */
    size_t size;     /* send: packed bytes; receive: bytes of the matched message */
    size_t fit;      /* receive: of those, the bytes the receive buffer takes */
    int peer;        /* world rank of the partner */
    struct vmpi_xfer *next; /* the channel's queues */
    size_t off;             /* bytes moved so far */
    uint64_t rcookie;       /* the partner's cookie */
};

/* Core entry for a packet that arrived from world rank src (up->incoming).
 * Returns 0 when consumed, VMPI_MATCHED when it matched a posted receive,
 * or VMPI_AGAIN when it cannot be taken now (the channel keeps it and stops
 * reading that peer until the next poll). After VMPI_MATCHED the channel
 * should return to its caller rather than look for more: a waiting rank's
 * reply must not queue behind the cache miss of polling the next, still
 * empty cell. */
#define VMPI_AGAIN 1
#define VMPI_MATCHED 2

/* The up-call table a channel gets at init. */
struct vmpi_chan_up {
    int (*incoming)(int src, const struct vmpi_hdr *h, const void *pay, size_t paylen);
    /* The send to world rank `peer` that `cookie` names while it is under
     * way, else NULL (a peer's packet that names no such send is corrupt). */
    struct vmpi_xfer *(*send_of)(uint64_t cookie, int peer);
    /* Where a send's packed data is (contiguous, x->size bytes). */
    const void *(*sdata)(const struct vmpi_xfer *x);
    /* A contiguous destination for the first *n bytes of a receive, or NULL
     * if its buffer is not contiguous (then use deliver). */
    void *(*rdata)(struct vmpi_xfer *x, size_t *n);
    /* Stores len bytes at offset off of the message into the receive's
     * buffer; bytes beyond what it takes are dropped. */
    void (*deliver)(struct vmpi_xfer *x, size_t off, const void *src, size_t len);
    /* The transfer is over: a send's data has left its buffer, a receive's
     * (or a one-sided operation's) data is in place. */
    void (*complete)(struct vmpi_xfer *x);
    /* Whether a receive or probe naming world rank `peer`, or an operation
     * awaiting a packet from it, is under way (a channel that has lost the
     * peer for good ends the job then instead of leaving it waiting). */
    bool (*awaits)(int peer);
};

/* How two ranks relate, as the coordinator sees them; a channel's `reach`
 * names the relation it needs to serve a pair. */
enum {
    VMPI_REACH_VM = 1,     /* the same VM (one kernel) */
    VMPI_REACH_REGION = 2, /* the same host region (VMs of one host) */
    VMPI_REACH_NET = 4     /* any two ranks */
};

/* What the coordinator tells a channel at init. */
struct vmpi_chan_setup {
    const int *peers; /* world ranks this channel serves for this rank */
    int npeers;
    const int *group; /* the ranks that share its reach with this rank, this rank
                       * included, in world-rank order */
    int ngroup, me;   /* me: this rank's index in group */
    const int *pid;   /* world rank -> process id (in its own PID namespace) */
    bool used;        /* some rank of the job uses the channel: every rank passes
                       * the same value, and a collective init runs only then */
    uint32_t job;     /* names this job to processes of other jobs (never 0) */
};

/* Set while threads may send through a channel's send_split outside the
 * library's lock (core/thread.c: under MPI_THREAD_MULTIPLE, once a second
 * thread uses MPI). Then every path of such a channel that writes to a
 * peer takes that peer's send lock, and the counters below are added
 * atomically. Changed only while no thread is inside a channel call. */
extern atomic_bool vmpi_chan_mt;

/* What a channel counts for the tool interface (MPI_T performance
 * variables, core/mpit.c): plain per-process counters, one add each where
 * a message enters or leaves the channel. Messages are core packets (eager
 * or rendezvous announcement) and bytes are theirs; a rendezvous counts
 * when announced. */
struct vmpi_chan_stats {
    uint64_t msgs_sent, bytes_sent, rndv_sent;
    uint64_t msgs_recvd, bytes_recvd;
};
/* The sent counters, which split senders also add to: atomically when mt
 * (vmpi_chan_mt as the caller last read it; it does not change during a
 * channel call). */
static inline void vmpi_chan_add(uint64_t *c, uint64_t v, bool mt)
{
    if (VMPI_UNLIKELY(mt))
        __atomic_fetch_add(c, v, __ATOMIC_RELAXED);
    else
        *c += v;
}
static inline void vmpi_chan_count_sent(struct vmpi_chan_stats *st, const struct vmpi_hdr *h,
                                        bool mt)
{
    vmpi_chan_add(&st->msgs_sent, 1, mt);
    vmpi_chan_add(&st->bytes_sent, h->len, mt);
}
/* h was taken by core (under the library's lock): an ACK (len 0) is not
 * a message. */
static inline void vmpi_chan_count_recvd(struct vmpi_chan_stats *st, const struct vmpi_hdr *h)
{
    st->msgs_recvd += h->type != VMPI_PKT_ACK;
    st->bytes_recvd += h->len;
}

struct vmpi_cslot;
struct vmpi_chan_mem;

struct vmpi_chan {
    const char *name;
    unsigned reach;  /* VMPI_REACH_* this channel needs between two ranks */
    bool slow_poll;  /* a poll is a system call: poll it less often than memory */
    /* Collective over the job when the channel needs it (see `used`). */
    void (*init)(const struct vmpi_chan_up *up, const struct vmpi_chan_setup *s);
    /* The channel's state for world rank `world`, one of the peers of init,
     * and the largest message it sends eagerly to it. */
    void *(*add_peer)(int world, size_t *eager_max);
    /* Sends a packet whose payload is len contiguous bytes at buf: 0, or 1
     * when there is no room now. */
    int (*send)(void *cstate, const struct vmpi_hdr *h, const void *buf, size_t len);
    /* Optional: send, callable by several threads at once outside the
     * library's lock while vmpi_chan_mt is set (for peers of the job's
     * own). 1 also when the peer's packets must go another way (control
     * packets queued, checks on): the caller then sends under the lock. */
    int (*send_split)(void *cstate, const struct vmpi_hdr *h, const void *buf, size_t len);
    /* Room for a packet carrying paylen bytes after the header; returns
     * where the payload goes, or NULL when there is no room now. */
    void *(*reserve)(void *cstate, size_t paylen);
    /* Publishes the reserved packet. */
    void (*commit)(void *cstate, const struct vmpi_hdr *h, size_t paylen);
    /* Sends a small packet now or later, preserving order; never fails. */
    void (*send_ctl)(void *cstate, const struct vmpi_hdr *h, const void *pay, size_t paylen);
    /* Sender side of a rendezvous: announce x (its data: up->sdata(x)).
     * Returns 0, or 1 when there is no room now (the caller retries). The
     * channel completes x when the data has left its buffer. */
    int (*rndv_send)(void *cstate, struct vmpi_xfer *x, const struct vmpi_hdr *h);
    /* Receiver side: x matched a rendezvous whose RTS payload is info. The
     * channel moves the data with up->deliver (or into up->rdata) and
     * completes x. */
    void (*rndv_recv)(void *cstate, struct vmpi_xfer *x, const void *info, size_t infolen);
    /* Polls for incoming packets and advances transfers; returns events. */
    int (*poll)(void);
    /* True while packets or transfers are still queued in the channel. */
    bool (*busy)(void);
    void (*finalize)(void);
    /* Optional (NULL when absent): */
    /* A line for the start-up report ("ivshmem region /dev/shm/x"), or NULL. */
    const char *(*describe)(void);
    /* Dynamic processes (MPI_Comm_connect, accept, spawn, join): peers in
     * other jobs. address: this process's address for them, into buf (cap
     * bytes); its length, 0 if it does not fit (opens the channel if the
     * job did not use it). connect: adds world rank `world` (beyond the
     * job's), rank `rank` of job `job`, at that address; its state as from
     * add_peer, NULL if the address is refused (a channel that shares
     * memory refuses processes outside its reach, deciding as the other
     * end will). A network channel also has greet: the first words (at
     * most 256 bytes) to such a peer, under port number `port`; and
     * greeting: one that arrived for `port` (copied into msg, cap bytes;
     * its length), or 0 while none has. */
    size_t (*address)(void *buf, size_t cap);
    void *(*connect)(int world, uint32_t job, int rank, const void *addr, size_t alen,
                     size_t *eager_max);
    void (*greet)(void *cstate, uint32_t port, const void *msg, size_t len);
    size_t (*greeting)(uint32_t port, void *msg, size_t cap);
    /* The collective slot (shm/cslot.h) of world rank `world` in the memory
     * the channel shares among its group, or NULL. */
    struct vmpi_cslot *(*cslot)(int world);
    /* The channel's memory face. */
    const struct vmpi_chan_mem *mem;
    struct vmpi_chan_stats *stats; /* its counters (never NULL) */
};

/* The memory face of a channel (as UCX's memory domain or libfabric's
 * fi_mr): memory its peers can reach, and the names they reach it by.
 * Windows and MPI_Alloc_mem use it through the coordinator, never a
 * channel by name. Every member may be NULL. */
struct vmpi_mem_key {
    uint64_t addr, key; /* what a peer needs to reach exposed memory */
};
struct vmpi_mem_reg {
    void *handle; /* the channel's registration, or NULL */
    struct vmpi_mem_key key;
};
struct vmpi_chan_mem {
    /* Memory that the channel's group can map (NULL: none or no room), and
     * its release (false: p is not such memory). */
    void *(*alloc)(size_t n);
    bool (*free)(void *p);
    /* Makes [base, base + len) reachable by peers; false when it cannot. */
    bool (*expose)(void *base, size_t len, struct vmpi_mem_reg *reg);
    void (*unexpose)(struct vmpi_mem_reg *reg);
    /* Where len bytes that world rank `world` exposed under key lie in this
     * process, for loads and stores; NULL when they are not all there. */
    void *(*map)(int world, const struct vmpi_mem_key *key, uint64_t len);
    /* One-sided access to exposed memory of world rank `world`: reaches()
     * says whether it is possible; put and get move len bytes between buf
     * and the peer's key.addr + off, and complete x when a put is visible
     * at the target or a get's data is in buf. */
    bool (*reaches)(int world);
    void (*put)(int world, const void *buf, size_t len, const struct vmpi_mem_key *key,
                uint64_t off, struct vmpi_xfer *x);
    void (*get)(int world, void *buf, size_t len, const struct vmpi_mem_key *key, uint64_t off,
                struct vmpi_xfer *x);
};

/* The channels, in order of preference (channel/list.c), NULL-terminated. */
extern const struct vmpi_chan *const vmpi_channels[];

#endif
