/* Integrity of the pair protocol (VMPI_INTEGRITY=crc32c; layout: pair.h).
 *
 * The sender computes the checksum (base/sum.c) while it copies into shared
 * memory; the receiver copies out into its own memory, computing it again,
 * and compares before a byte is used, so bytes changed in shared memory
 * after the check cannot reach the program. A record is packed in private
 * memory first (reserve/commit), for the same reason on the sending side.
 *
 * Each checksum's seed comes from a secret that is never written to shared
 * memory, the two ends, the kind (ring record or bulk chunk) and where the
 * bytes belong: the record's first cell or the chunk's number. Between
 * ranks of one job the secret is the job's (drawn by rank 0 and passed
 * through PMI) and the ends are the two ranks; between processes of two
 * jobs of one trust domain it is the domain's (handed to each job by its
 * process manager) and the ends are named by job and rank, so rank r of
 * one job cannot pass for rank r of another. SipHash of the secret and the
 * two ends gives each direction and kind of a pair its own 64-bit key, and
 * a record's seed is that key times an odd number made of its place,
 * folded to 32 bits: the seeds of two places differ by nothing one can
 * compute without the key. A record or chunk written by someone without
 * the secret, moved to another place, kind or pair, or replayed from an
 * earlier lap fails the check. The checksum is a CRC, linear in the data:
 * it catches any writer that does not know the secret and every accidental
 * change, not a writer that can also read the traffic, who can change the
 * bytes of a record in place and its checksum with them, and by trying
 * 2^32 keys can learn one direction's key from the seeds its records show
 * (docs/SECURITY.md). */
#include "pair.h"

#include <stdlib.h>
#include <string.h>

#define SUM_BYTES sizeof(uint32_t)

/* The seed at place `where` under a direction's key: one multiplication,
 * which the processor does while the record's bytes load (a seed of 32
 * bits shifts the checksum by itself, base/sum.c). */
static inline uint32_t seed(uint64_t key, uint64_t where)
{
    uint64_t s = key * (2 * where + 1);
    return (uint32_t)(s ^ s >> 32);
}

enum { KIND_RECORD = 'R', KIND_CHUNK = 'C' };

/* The key of what `from` sends `to` of one kind under the secret: ordered,
 * so the two directions of a pair, and pairs that share one end, differ. */
static uint64_t dir_key(uint64_t secret, uint64_t from, uint64_t to, uint64_t kind)
{
    const uint64_t what[3] = {from, to, kind};
    return vmpi_siphash(secret, ~secret, what, sizeof what);
}

static _Noreturn void sum_failed(const struct vmpi_pair_peer *p, const char *what,
                                 unsigned long long where)
{
    vmpi_fatal("%s: integrity check failed on %s %llu from %s: its bytes were changed in "
               "shared memory",
               p->in->where, what, where, p->name);
}

void vmpi_pair_sum_on(struct vmpi_pair_inst *in, uint64_t key)
{
    /* peers attached before would reserve records without the checksum */
    if (in->npeers || in->nextra)
        vmpi_fatal("%s: integrity checks switched on after peers were attached", in->where);
    size_t rec = vmpi_ring_max_len(in->ncells);
    size_t b = rec > in->slot_bytes ? rec : in->slot_bytes;
    in->stage = malloc(rec);
    in->bounce = malloc(b);
    if (!in->stage || !in->bounce)
        vmpi_fatal("%s: out of memory for integrity checks", in->where);
    in->sum_key = key;
    vmpi_sum_init(false);
}

void vmpi_pair_sum_names(struct vmpi_pair_peer *p, uint64_t key, uint64_t me, uint64_t them)
{
    p->sum_tx_rec = dir_key(key, me, them, KIND_RECORD);
    p->sum_tx_chunk = dir_key(key, me, them, KIND_CHUNK);
    p->sum_rx_rec = dir_key(key, them, me, KIND_RECORD);
    p->sum_rx_chunk = dir_key(key, them, me, KIND_CHUNK);
}

void *vmpi_pair_sum_reserve(struct vmpi_pair_peer *p, size_t paylen)
{
    char *r = vmpi_ring_reserve(&p->tx, paylen + sizeof(struct vmpi_hdr) + SUM_BYTES);
    if (!r) {
        vmpi_pair_ring_check(p);
        return NULL;
    }
    p->resv = r;
    return p->in->stage;
}

/* Copies header and payload, both in private memory (the caller's, or the
 * stage core packed into), to the reserved cells with their checksum and
 * publishes the record. */
static void publish(struct vmpi_pair_peer *p, const struct vmpi_hdr *h, const void *pay,
                    size_t paylen)
{
    static_assert(sizeof *h == 24, "the header is the checksum's first block");
    uint32_t s = vmpi_sum_copy_head(seed(p->sum_tx_rec, p->tx.tail), p->resv,
                                    h, pay, paylen);
    memcpy(p->resv + sizeof *h + paylen, &s, sizeof s);
    vmpi_ring_commit(&p->tx, sizeof *h + paylen + sizeof s);
}

void vmpi_pair_sum_commit(struct vmpi_pair_peer *p, const struct vmpi_hdr *h, size_t paylen)
{
    publish(p, h, p->in->stage, paylen);
}

bool vmpi_pair_sum_put(struct vmpi_pair_peer *p, const struct vmpi_hdr *h, const void *pay,
                       size_t paylen)
{
    if (!vmpi_pair_sum_reserve(p, paylen))
        return false;
    publish(p, h, pay, paylen);
    return true;
}

const void *vmpi_pair_sum_take(struct vmpi_pair_peer *p, const void *rec, size_t *len)
{
    if (*len < sizeof(struct vmpi_hdr) + SUM_BYTES)
        vmpi_fatal("%s: corrupt ring from %s", p->in->where, p->name);
    size_t n = *len - SUM_BYTES;
    uint32_t want, got = vmpi_sum_copy(seed(p->sum_rx_rec, p->rx.head),
                                       p->in->bounce, rec, n);
    memcpy(&want, (const char *)rec + n, sizeof want);
    if (got != want)
        sum_failed(p, "the ring record at cell", (unsigned long long)p->rx.head);
    *len = n;
    return p->in->bounce;
}

void vmpi_pair_sum_out(struct vmpi_pair_peer *p, struct vmpi_pair_slot *sl, const char *src,
                       size_t k, uint64_t chunk)
{
    sl->sum = vmpi_sum_copy(seed(p->sum_tx_chunk, chunk), sl + 1, src, k);
}

/* Straight into a contiguous receive buffer (private memory, where the
 * copy is checked), else through the bounce buffer. */
void vmpi_pair_sum_in(struct vmpi_pair_peer *p, struct vmpi_xfer *r, struct vmpi_pair_slot *sl,
                      size_t k, uint64_t chunk)
{
    size_t cap;
    char *dst = p->in->up->rdata(r, &cap);
    bool direct = dst && r->off <= cap && k <= cap - r->off;
    uint64_t want = *(volatile uint64_t *)&sl->sum; /* read once */
    uint32_t got = vmpi_sum_copy(seed(p->sum_rx_chunk, chunk),
                                 direct ? dst + r->off : p->in->bounce, sl + 1, k);
    if (got != want)
        sum_failed(p, "bulk chunk", (unsigned long long)chunk);
    if (!direct)
        p->in->up->deliver(r, r->off, p->in->bounce, k);
}
