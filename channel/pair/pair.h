/* The protocol both shared-memory channels speak between two ranks: smp
 * (same VM, pairs in a per-VM segment) and ivshmem (other VM of the host,
 * pairs in the job's area of the host region).
 *
 * Per ordered pair (from, to) a block of shared memory holds
 *   ring    vmpi_ring_bytes(ncells): packets from `from` to `to`
 *   claims  struct vmpi_pair_claims: split-copy offers made by `to`
 *   bulk    nslots * (sizeof(struct vmpi_pair_slot) + slot_bytes): chunks
 *           of a pipelined rendezvous from `from` to `to`
 *
 * Rendezvous: the RTS carries the sender's data address as the channel's
 * `addr_of` names it (smp: the virtual address, read with CMA; ivshmem: an
 * offset into the sender's heap slice in the region, read with memcpy), or
 * VMPI_PAIR_NOADDR. With an address the receiver copies once (and may offer
 * the sender the second half, see pair.c); without one, or when the kernel
 * refuses CMA, the data streams through the bulk slots after a CTS.
 *
 * Everything read from the pair's memory is checked before use: with
 * ivshmem, another VM can write it. With integrity on (sum.c) every ring
 * record ends in a 4-byte checksum of its header and payload, and every
 * bulk chunk has one in its slot header; the receiver checks a copy in its
 * own memory, never the shared bytes, before it uses them. */
#ifndef VMPI_CHANNEL_PAIR_H
#define VMPI_CHANNEL_PAIR_H

#include "../chan.h"
#include "../../shm/ring.h"

#include <assert.h>
#include <sys/types.h>

#define VMPI_PAIR_NOADDR UINT64_MAX

/* A bulk slot: `full` is written by the producer (chunk number + 1, release,
 * after data, len and sum), `empty` by the consumer after copying out; `sum`
 * is the chunk's checksum when the channel checks integrity (sum.c). */
struct vmpi_pair_slot {
    alignas(64) _Atomic uint64_t full;
    uint64_t len;
    uint64_t sum;
    alignas(64) _Atomic uint64_t empty;
    char pad[56];
};
static_assert(sizeof(struct vmpi_pair_slot) == 128, "slot header is two cache lines");

/* Split-copy claims of the pair (from, to). For each offer the receiver
 * `to` stores a fresh even id in word[(id / 2) % VMPI_PAIR_NSPLIT]; the side
 * that moves it to id + 1 (CAS) copies the offered range, and a stale id
 * means the offer is gone. At most VMPI_PAIR_NSPLIT offers are open at once:
 * as many as the usual window of a bandwidth benchmark, since the sender's
 * replies queue behind the requests still in the ring. Claims are rare (two
 * per large message), so they share cache lines. */
#define VMPI_PAIR_NSPLIT 64
struct vmpi_pair_claims {
    alignas(64) _Atomic uint64_t word[VMPI_PAIR_NSPLIT];
};
static_assert(sizeof(struct vmpi_pair_claims) == 8 * VMPI_PAIR_NSPLIT, "claims are packed words");

struct vmpi_pair_peer;

/* What differs between the channels: how a buffer is named to the peer and
 * how one copy reaches the peer's memory. */
struct vmpi_pair_ops {
    /* The name of [buf, buf + n) for the peer, or VMPI_PAIR_NOADDR. */
    uint64_t (*addr_of)(const void *buf, size_t n);
    /* Copies n bytes between local memory and the peer's memory named
     * remote (write: to the peer). False when the kernel refuses single
     * copies (then the channel streams); a bad name is a fatal error. */
    bool (*copy)(struct vmpi_pair_peer *p, char *local, uint64_t remote, size_t n, bool write);
};

/* One channel's pairs, owned by that channel. */
struct vmpi_pair_inst {
    const struct vmpi_chan_up *up; /* given to the channel's init */
    const struct vmpi_pair_ops *ops;
    const char *where; /* for error messages: "smp", "ivshmem region <path>" */
    struct vmpi_pair_peer *peers;
    int npeers;
    /* Peers added after init (processes of other jobs), each allocated on
     * its own so their addresses stay put (vmpi_pair_new_peer). */
    struct vmpi_pair_peer **extra;
    int nextra;
    uint32_t ncells, nslots;
    size_t slot_bytes;
    size_t split_min; /* smallest transfer shared by both sides */
    struct vmpi_chan_stats stats;
    /* Integrity (sum.c), NULL when off: a payload being packed, a record
     * or chunk being checked; the job's secret, which keys the checksums
     * of the job's own peers. */
    char *stage, *bounce;
    uint64_t sum_key;
    /* Called, for a peer whose `gated` is set, before each ring record is
     * put and before a rendezvous receive starts (ivshmem: a process of
     * another job, whose area may be taken back); the writes of transfers
     * under way (bulk slots, ring releases) rely on the channel's poll. */
    void (*gate)(struct vmpi_pair_peer *p);
};

struct vmpi_pair_ctl;

struct vmpi_pair_peer {
    struct vmpi_pair_inst *in;
    int world;
    pid_t pid;                /* smp: the peer's process (CMA) */
    uint64_t lo, hi;          /* ivshmem: the peer's heap slice, area offsets */
    bool single;              /* try single copies */
    bool single_seen;         /* a single copy from this peer has worked */
    bool split_ok;            /* the sender's writes have not been refused */
    bool gated;               /* in->gate runs before each record to it */
    bool slow;                /* gated, or integrity on: what a send tests first */
    size_t eager_max;         /* largest eager message to this peer */
    struct vmpi_ring_tx tx;
    /* Held by whoever writes to the peer while vmpi_chan_mt is set (a
     * split sender, or a thread under the library's lock): the tx ring,
     * the control packets waiting for room (bl_*). */
    atomic_uint txl;
    bool resv_locked;         /* reserve() took txl; commit() drops it */
    struct vmpi_ring_rx rx;
    char *resv;               /* record reserved by reserve() */
    /* integrity: the keys of the seeds of what goes to it and comes from
     * it, ring records and bulk chunks (sum.c) */
    uint64_t sum_tx_rec, sum_tx_chunk, sum_rx_rec, sum_rx_chunk;
    struct vmpi_pair_ctl *bl_head, *bl_tail; /* control packets waiting for ring room */
    char *bulk_out, *bulk_in;
    uint64_t out_chunk, in_chunk;
    struct vmpi_xfer *out_stream;  /* send being streamed after its CTS */
    struct vmpi_xfer *in_stream;   /* receive being filled */
    struct vmpi_xfer *in_wait, *in_wait_tail; /* matched, waiting for in_stream */
    struct vmpi_pair_claims *claim_in;  /* claims of the pair (peer, me) */
    struct vmpi_pair_claims *claim_out; /* claims of the pair (me, peer) */
    uint64_t offer;                /* last offer id made to this peer */
    int nsplit;                    /* receives whose second half the sender copies */
    struct {
        struct vmpi_xfer *r;
        uint64_t scookie;
        uint64_t addr;             /* the sender's data, for a refused half */
        size_t from;
        uint64_t offer;
    } split[VMPI_PAIR_NSPLIT];     /* indexed like the claims */
    /* the peer in messages ("rank 3", "rank 0 of job 1a2b3c4d"); last, away
     * from the fields every message touches */
    char name[48];
};

/* Ring cells, bulk slots and slot bytes of each pair when n ranks share
 * the channel's memory (geom.c), from the knobs VMPI_<chan>_RING_CELLS,
 * _BULK_SLOTS and _BULK_SLOT_BYTES when set; slot_def is the channel's
 * slot size at up to 16 ranks. */
void vmpi_pair_geom(const char *chan, uint64_t n, uint64_t slot_def, uint32_t *ncells,
                    uint32_t *nslots, uint64_t *slot_bytes);
/* Ends the job if the peer published a ring position beyond ours (after
 * a reserve found no room). */
static inline void vmpi_pair_ring_check(const struct vmpi_pair_peer *p)
{
    if (VMPI_UNLIKELY(p->tx.corrupt))
        vmpi_fatal("%s: corrupt ring position published by %s", p->in->where, p->name);
}

/* Bytes of one pair's block. */
uint64_t vmpi_pair_stride(uint32_t ncells, uint32_t nslots, uint64_t slot_bytes);
/* Zeroes the control words of the pair block at base (not the bulk data). */
void vmpi_pair_clear(char *base, uint32_t ncells, uint32_t nslots, uint64_t slot_bytes);
/* Sets p up to send through the block `out` and receive through `in`,
 * with eager messages up to eager_max bytes (less if the ring is smaller);
 * names it "rank <world>" unless it has a name (attached before). */
void vmpi_pair_attach(struct vmpi_pair_inst *in, struct vmpi_pair_peer *p, int world, char *out,
                      char *inb, size_t eager_max);
/* From now on in->gate runs before each record to p (after attach; the
 * channel sets in->gate). */
static inline void vmpi_pair_set_gated(struct vmpi_pair_peer *p)
{
    assert(p->in && p->in->gate);
    p->gated = p->slow = true;
}
/* A zeroed peer added to in's peers after init (attach it next), or NULL
 * if out of memory. */
struct vmpi_pair_peer *vmpi_pair_new_peer(struct vmpi_pair_inst *in);
/* The channel's add_peer: the attached peer of world rank `world`. */
void *vmpi_pair_add_peer(struct vmpi_pair_inst *in, int world, size_t *eager_max);

/* The message operations of a channel that speaks the pair protocol, for
 * its struct vmpi_chan initializer. */
#define VMPI_PAIR_CHAN_OPS                                                          \
    .send = vmpi_pair_send, .reserve = vmpi_pair_reserve, .commit = vmpi_pair_commit, \
    .send_ctl = vmpi_pair_send_ctl, .rndv_send = vmpi_pair_rndv_send,                 \
    .rndv_recv = vmpi_pair_rndv_recv, .send_split = vmpi_pair_send_split

int vmpi_pair_send(void *cs, const struct vmpi_hdr *h, const void *buf, size_t len);
int vmpi_pair_send_split(void *cs, const struct vmpi_hdr *h, const void *buf, size_t len);
void *vmpi_pair_reserve(void *cs, size_t paylen);
void vmpi_pair_commit(void *cs, const struct vmpi_hdr *h, size_t paylen);
void vmpi_pair_send_ctl(void *cs, const struct vmpi_hdr *h, const void *pay, size_t paylen);
int vmpi_pair_rndv_send(void *cs, struct vmpi_xfer *x, const struct vmpi_hdr *h);
void vmpi_pair_rndv_recv(void *cs, struct vmpi_xfer *r, const void *info, size_t infolen);
int vmpi_pair_poll(struct vmpi_pair_inst *in);

/* Integrity (sum.c): on for in's peers, keyed by key (the job's secret)
 * and the two ranks; before its first attach (so sizes agree, and each
 * peer's `slow` is set). The ring and bulk operations above call the
 * others when in->stage is set. */
void vmpi_pair_sum_on(struct vmpi_pair_inst *in, uint64_t key);
/* Keys p's checksums by another secret (key) and names of the two ends
 * that tell processes of different jobs apart: `me` this process's, `them`
 * the peer's, as the peer gives them the other way round. After attach. */
void vmpi_pair_sum_names(struct vmpi_pair_peer *p, uint64_t key, uint64_t me, uint64_t them);
/* p is rank `rank` of job `job`, another job's process: so messages name it. */
void vmpi_pair_peer_of_job(struct vmpi_pair_peer *p, uint32_t job, int rank);
void *vmpi_pair_sum_reserve(struct vmpi_pair_peer *p, size_t paylen);
void vmpi_pair_sum_commit(struct vmpi_pair_peer *p, const struct vmpi_hdr *h, size_t paylen);
bool vmpi_pair_sum_put(struct vmpi_pair_peer *p, const struct vmpi_hdr *h, const void *pay,
                       size_t paylen);
/* The checked copy of the record at rec (len: its bytes, then without the
 * checksum); the job ends if the check fails. */
const void *vmpi_pair_sum_take(struct vmpi_pair_peer *p, const void *rec, size_t *len);
void vmpi_pair_sum_out(struct vmpi_pair_peer *p, struct vmpi_pair_slot *sl, const char *src,
                       size_t k, uint64_t chunk);
void vmpi_pair_sum_in(struct vmpi_pair_peer *p, struct vmpi_xfer *r, struct vmpi_pair_slot *sl,
                      size_t k, uint64_t chunk);
bool vmpi_pair_busy(const struct vmpi_pair_inst *in);
void vmpi_pair_finalize(struct vmpi_pair_inst *in);

#endif
