/* The library's critical section: how MPI_THREAD_MULTIPLE and the
 * asynchronous progress helper (core/async.c) share one process.
 *
 * The library's state is serialized by one lock, as MPICH's default
 * "global" granularity does. The level is known at MPI_Init, so a program
 * that asked for less than MULTIPLE and runs no helper never touches the
 * lock: its calls pay a thread-local depth counter and one predictable
 * branch (VMPI_ENTER, api/api.h).
 *
 * Under MULTIPLE every outermost MPI call holds the lock, and a thread that
 * waits (a blocking call polling the progress engine) lets a queued thread
 * in between two polls (vmpi_cs_yield, from core/progress.c), never inside
 * a poller, so each thread's blocking call keeps its own state on its own
 * stack and the engine's state stays consistent. Whichever thread polls
 * completes everybody's requests: a receive another thread waits for is
 * matched and filled by this one.
 *
 * The lock is vmpi's opportunistic ticket lock (include/vmpi/lock.h), made
 * for more threads than processors: threads that are running take a free
 * lock without queueing, queued ones spin a budget and then park in the
 * kernel, and the head of the queue claims a hand-off after a short steal
 * window (VMPI_THREAD_STEAL_NS, default 20 us) so a thread spinning in
 * MPI_Test cannot keep a sleeper out for long. */
#include "vmpi.h"

#include "vmpi/lock.h"

#include <sched.h>

__thread int vmpi_cs_depth __attribute__((tls_model("initial-exec")));
bool vmpi_cs_on;
bool vmpi_cs_multiple;

static vmpi_park_ticket_lock cs;

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

void vmpi_cs_init(int level)
{
    vmpi_lock_params p;
    vmpi_lock_params_default(&p);
    p.steal_ns = (uint32_t)vmpi_knob_num("VMPI_THREAD_STEAL_NS");
    vmpi_oticket_init(&cs, &p);
    vmpi_cs_multiple = level == MPI_THREAD_MULTIPLE;
    vmpi_cs_on = vmpi_cs_multiple || vmpi_async_on;
}

void vmpi_cs_enter(void)
{
    vmpi_oticket_lock_acquire(&cs);
}

bool vmpi_cs_try(void)
{
    return vmpi_oticket_trylock(&cs);
}

void vmpi_cs_exit(void)
{
    vmpi_oticket_unlock(&cs);
}

void vmpi_cs_yield(void)
{
    /* Only threads in the queue count: one still polling for a free lock
     * before queueing takes it at the next release anyway. */
    if (atomic_load_explicit(&cs.next, memory_order_relaxed) ==
        atomic_load_explicit(&cs.owner, memory_order_relaxed))
        return;
    vmpi_oticket_unlock(&cs);
    /* Re-acquiring at once would steal the lock back from the head of the
     * queue (it may take it only after the steal window): give it a moment,
     * and the processor if it was woken from parking on this one. */
    for (unsigned i = 1; i <= 1024 && !(atomic_load_explicit(&cs.state, memory_order_relaxed) & 1);
         i++)
        if (i % 128 == 0)
            sched_yield();
        else
            relax();
    vmpi_oticket_lock_acquire(&cs);
}

void vmpi_cs_leave(int held)
{
    vmpi_async_leave();
    if (held)
        vmpi_oticket_unlock(&cs);
}
