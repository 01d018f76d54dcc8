/* The size of each pair's rings and bulk slots (layout: pair.h), for a
 * channel whose memory n ranks share.
 *
 * Every pair has its own ring and slots, so a rank's share of the memory
 * is n times one pair's. Up to 16 ranks the defaults hold (2048 cells of
 * ring, 8 slots of the channel's slot size); beyond, one pair gets a 16/n
 * share (a power of two), first off the ring and the slot size, then off
 * the number of slots, down to 256 cells and 2 slots of 16 KiB, so a rank
 * holds about as much at 64 or 128 ranks as at 16 (docs/PERFORMANCE.md,
 * "Memory per rank"). Pages are only touched as traffic reaches them, but a
 * long run reaches all of them. A knob the user sets wins. */
#include "pair.h"

#include <stdio.h>

static uint64_t knob(const char *chan, const char *what, uint64_t def, uint64_t lo, uint64_t hi)
{
    char name[64];
    snprintf(name, sizeof name, "VMPI_%s_%s", chan, what);
    return vmpi_env_u64(name, def, lo, hi);
}

void vmpi_pair_geom(const char *chan, uint64_t n, uint64_t slot_def, uint32_t *ncells,
                    uint32_t *nslots, uint64_t *slot_bytes)
{
    uint64_t k = 1;
    while (16 * k < n)
        k *= 2;
    uint64_t cells = 2048 / k < 256 ? 256 : 2048 / k;
    uint64_t sb = slot_def / k < 16384 ? 16384 : slot_def / k;
    uint64_t ns = 8 * slot_def / (k * sb);
    *ncells = (uint32_t)knob(chan, "RING_CELLS", cells, 64, 1u << 20);
    if (*ncells & (*ncells - 1))
        vmpi_fatal("VMPI_%s_RING_CELLS=%u is not a power of two", chan, *ncells);
    *nslots = (uint32_t)knob(chan, "BULK_SLOTS", ns < 2 ? 2 : ns > 8 ? 8 : ns, 2, 1024);
    *slot_bytes = knob(chan, "BULK_SLOT_BYTES", sb, 4096, 1u << 26) & ~63ull;
}
