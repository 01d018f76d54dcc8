/* Pools of pair slots for processes of other jobs (dynamic processes),
 * shared by the smp channel (a pool per process, in a memfd) and the
 * ivshmem channel (a pool per job area, in the host region).
 *
 * A pool is nslots claim words and, for slot i, two pair blocks (pair.h)
 * at slots + stride * 2i (from the pool's owner to the other) and
 * + stride (back). Two processes of different jobs talk through one slot
 * of the pool of the one with the lower name (pool_name: job, rank).
 * Either end may claim the slot, found by probing from a hash of the
 * pair's key, so both find the same one in whatever order they come and
 * neither waits for the other to arrive, only for a claim being set up.
 * Slots are never given back, so a full pool sends both ends to the next
 * channel alike.
 *
 * claim[i]: 0 free, else key << 8 | POOL_INIT (being cleared by its
 * claimant) or POOL_READY. Keys are 56 bits and never 0. The words may lie
 * in memory other VMs write: nothing read from them is used as an index,
 * and a claim that never becomes ready ends the job. */
#ifndef VMPI_CHANNEL_PAIR_POOL_H
#define VMPI_CHANNEL_PAIR_POOL_H

#include "pair.h"

/* A process's name for pools: its job's name << 24 | its rank (< 2^24). */
static inline uint64_t vmpi_pair_pool_name(uint32_t job, int rank)
{
    return (uint64_t)job << 24 | (uint32_t)rank;
}

/* The slot of `key` among the n claim words, claimed and its blocks
 * cleared by whichever end comes first; -1 when all are taken. */
int vmpi_pair_pool_claim(const struct vmpi_pair_inst *in, _Atomic uint64_t *claim, uint32_t n,
                         char *slots, uint64_t stride, uint64_t key);
/* Attaches p (world rank `world`) to slot i of a pool: owner is true on
 * the pool's owner's side. */
void vmpi_pair_pool_attach(struct vmpi_pair_inst *in, struct vmpi_pair_peer *p, int world,
                           char *slots, uint64_t stride, int i, bool owner, size_t eager_max);

#endif
