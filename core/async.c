/* Asynchronous progress: a helper thread that runs the progress engine
 * while the application computes outside MPI.
 *
 * A target whose window is served by active messages (rma/am.c) must answer
 * its origins even when it makes no MPI calls for a long time. While some
 * part of the library asks for it (vmpi_async_want_for), a helper thread wakes
 * every VMPI_ASYNC_MIN_US microseconds (backing off to VMPI_ASYNC_MAX_US
 * while nothing arrives) and, if the application is not inside an MPI call,
 * polls every channel a few times. VMPI_ASYNC=0 turns the helper off.
 *
 * Mutual exclusion is the library's critical section (core/thread.c):
 * while the helper runs, every outermost MPI call holds it; the helper only
 * try-locks and holds it for one short burst of polls. The helper starts
 * and stops only when an outermost call returns, never in the middle of
 * one.
 *
 * What the helper progresses is everything the progress engine does:
 * point-to-point transfers and non-blocking collective schedules move on
 * in the background too, as with MPICH's asynchronous progress thread. */
#include "vmpi.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <time.h>

/* Polls per helper burst: enough that a rank with shared-memory peers,
 * which polls the network on every 16th call, polls it twice. */
#define BURST_POLLS 32

bool vmpi_async_on;
unsigned vmpi_async_wanted;

static atomic_bool stopping;
static pthread_t helper;
static unsigned min_us, max_us;

static void *helper_main(void *arg)
{
    (void)arg;
    /* Without this the kernel may stretch each sleep by its default 50 us
     * of timer slack. */
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    unsigned us = min_us;
    while (!atomic_load_explicit(&stopping, memory_order_relaxed)) {
        struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
        nanosleep(&ts, NULL);
        if (!vmpi_cs_try())
            continue; /* inside an MPI call, the application progresses itself */
        int n = 0;
        if (!atomic_load_explicit(&stopping, memory_order_relaxed))
            for (int i = 0; i < BURST_POLLS; i++)
                n += vmpi_progress();
        vmpi_cs_exit();
        us = n ? min_us : (us > max_us / 2 ? max_us : 2 * us);
    }
    return NULL;
}

void vmpi_async_want_for(unsigned reason, bool on)
{
    if (on)
        vmpi_async_wanted |= reason;
    else
        vmpi_async_wanted &= ~reason;
}

static void set_on(bool on)
{
    vmpi_async_on = on;
    if (!vmpi_cs_multiple) /* under MULTIPLE the lock is always on: no write to race with */
        vmpi_cs_on = on;
}

void vmpi_async_leave(void)
{
    bool want = vmpi_async_wanted && vmpi_g.state == 1;
    if (vmpi_async_on == want)
        return;
    if (vmpi_async_on) {
        /* While the helper runs every outermost call holds the lock, so
         * the helper is between bursts; it only try-locks. */
        atomic_store_explicit(&stopping, true, memory_order_relaxed);
        pthread_join(helper, NULL);
        set_on(false);
        return;
    }
    if (!vmpi_env_u64("VMPI_ASYNC", 1, 0, 1)) {
        vmpi_async_wanted = 0;
        return;
    }
    min_us = (unsigned)vmpi_env_u64("VMPI_ASYNC_MIN_US", 50, 1, 1000000);
    max_us = (unsigned)vmpi_env_u64("VMPI_ASYNC_MAX_US", 1000, min_us, 1000000);
    atomic_store(&stopping, false);
    int rc = pthread_create(&helper, NULL, helper_main, NULL);
    if (rc) {
        fprintf(stderr, "vmpi: rank %d: cannot start the progress helper thread (error %d); "
                "passive targets served by active messages now progress only inside MPI "
                "calls\n", vmpi_job.rank, rc);
        vmpi_async_wanted = 0;
        return;
    }
    set_on(true);
}
