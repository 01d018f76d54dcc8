/* The progress engine: every progress call runs the registered pollers,
 * then point-to-point's deferred work (sends that found no room, pulled
 * rendezvous data).
 *
 * Pollers are the active channels (registered at MPI_Init in channel-list
 * order, smp first, each with the interval the coordinator chose) and the
 * layers above while they have work: coll while non-blocking collectives
 * run, rma while a window is served by active messages. A poller may add
 * or remove pollers, itself included, from inside its call. */
#include "vmpi.h"
#include "../locality/locality.h"

#include <sched.h>

#define MAX_POLLERS 16
struct poller {
    int (*fn)(void);
    unsigned mask;  /* runs on calls where (count & mask) == 0 */
    unsigned flags; /* VMPI_POLL_* */
};
static struct poller pollers[MAX_POLLERS];
static unsigned npollers, nwaiting, depth;
static bool holes; /* removed entries (fn NULL) to squeeze out */

void vmpi_progress_add(int (*fn)(void), unsigned mask, unsigned flags)
{
    unsigned at = npollers;
    for (unsigned i = 0; i < npollers; i++) {
        if (pollers[i].fn == fn)
            return;
        if (!pollers[i].fn && at == npollers)
            at = i; /* a removed entry not squeezed out yet (inside a poller) */
    }
    if (at == MAX_POLLERS)
        vmpi_fatal("more than %d progress pollers", MAX_POLLERS);
    pollers[at] = (struct poller){fn, mask, flags};
    if (at == npollers)
        npollers++;
    if (flags & VMPI_POLL_WAIT)
        nwaiting++;
}

void vmpi_progress_remove(int (*fn)(void))
{
    for (unsigned i = 0; i < npollers; i++)
        if (pollers[i].fn == fn) {
            if (pollers[i].flags & VMPI_POLL_WAIT)
                nwaiting--;
            pollers[i].fn = NULL;
            holes = true;
            return;
        }
}

/* Only outside every poller's call, so no loop over the array shifts. */
static void squeeze(void)
{
    unsigned k = 0;
    for (unsigned i = 0; i < npollers; i++)
        if (pollers[i].fn)
            pollers[k++] = pollers[i];
    npollers = k;
    holes = false;
}

/* After this many idle polls in a row, unexpected rendezvous data is pulled
 * (core/p2p.c, "Crossing rendezvous"). */
#define PULL_IDLE_POLLS 4096

int vmpi_progress(void)
{
    static unsigned idle, calls;
    int n = 0;
    ++calls;
    depth++;
    for (unsigned i = 0; i < npollers; i++) {
        const struct poller *p = &pollers[i];
        if (p->fn && !(calls & p->mask))
            n += p->fn();
    }
    if (--depth == 0 && VMPI_UNLIKELY(holes))
        squeeze();
    n += vmpi_p2p_deferred();
    /* Under MULTIPLE a thread waiting in a blocking call lets the others in
     * after a poll that found nothing (one that moves data keeps the lock:
     * handing it over costs a wake-up); never from inside a poller, nor
     * from the helper. */
    if (VMPI_UNLIKELY(vmpi_cs_multiple) && !n && depth == 0 && vmpi_cs_depth > 0)
        vmpi_cs_yield();
    if (n) {
        idle = 0;
        return n;
    }
    ++idle;
    if (VMPI_UNLIKELY(vmpi_g.yield_polls) && idle % vmpi_g.yield_polls == 0) {
        if (VMPI_UNLIKELY(vmpi_cs_multiple) && depth == 0 && vmpi_cs_depth > 0)
            vmpi_cs_sched_yield();
        else if (!vmpi_g.yield_threads)
            sched_yield();
    }
    if (VMPI_UNLIKELY(idle >= PULL_IDLE_POLLS)) {
        idle = 0;
        vmpi_p2p_idle_pull();
    }
    return 0;
}

/* Non-blocking collectives count too (they register with VMPI_POLL_WAIT):
 * one the user freed must still send its part before MPI_Finalize leaves. */
bool vmpi_progress_idle(void)
{
    return nwaiting == 0 && vmpi_p2p_quiet() && !vmpi_locality_busy();
}

void vmpi_progress_finalize(void)
{
    npollers = nwaiting = 0;
    holes = false;
}
