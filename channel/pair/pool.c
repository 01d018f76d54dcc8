/* Pools of pair slots for processes of other jobs (layout: pool.h). */
#include "pool.h"

#include <sched.h>
#include <stdatomic.h>
#include <time.h>

enum { POOL_INIT = 1, POOL_READY = 2, SETUP_LIMIT_S = 30 };

int vmpi_pair_pool_claim(const struct vmpi_pair_inst *in, _Atomic uint64_t *claim, uint32_t n,
                         char *slots, uint64_t stride, uint64_t key)
{
    key &= (1ull << 56) - 1;
    uint32_t first = (uint32_t)(vmpi_fnv(VMPI_FNV_BASIS, &key, sizeof key) % n);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = (first + k) % n;
        uint64_t v = atomic_load_explicit(&claim[i], memory_order_acquire);
        if (v == 0 && atomic_compare_exchange_strong(&claim[i], &v, key << 8 | POOL_INIT)) {
            char *b = slots + stride * 2 * i;
            vmpi_pair_clear(b, in->ncells, in->nslots, in->slot_bytes);
            vmpi_pair_clear(b + stride, in->ncells, in->nslots, in->slot_bytes);
            atomic_store_explicit(&claim[i], key << 8 | POOL_READY, memory_order_release);
            return (int)i;
        }
        if (v >> 8 != key)
            continue;
        /* The claimant clears two rings and their bulk slots: a slot still
         * not ready after SETUP_LIMIT_S has lost its claimant, or another
         * VM wrote the claim word. A count of yields would be no limit: on a
         * busy processor one yield can take milliseconds. */
        time_t limit = 0;
        for (unsigned t = 0; (v & 0xff) != POOL_READY; t++) {
            if (t % 1024 == 0) {
                struct timespec now;
                clock_gettime(CLOCK_MONOTONIC, &now);
                if (!limit)
                    limit = now.tv_sec + SETUP_LIMIT_S;
                else if (now.tv_sec > limit)
                    vmpi_fatal("%s: pair slot %u of a pool was not set up within %d s (its "
                               "claimant died, or its claim word was overwritten)",
                               in->where, i, SETUP_LIMIT_S);
            }
            sched_yield();
            v = atomic_load_explicit(&claim[i], memory_order_acquire);
        }
        return (int)i;
    }
    return -1;
}

void vmpi_pair_pool_attach(struct vmpi_pair_inst *in, struct vmpi_pair_peer *p, int world,
                           char *slots, uint64_t stride, int i, bool owner, size_t eager_max)
{
    char *b = slots + stride * 2 * (uint64_t)i;
    vmpi_pair_attach(in, p, world, owner ? b : b + stride, owner ? b + stride : b, eager_max);
}
