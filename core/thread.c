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
 * MPI_Test cannot keep a sleeper out for long.
 *
 * Most programs that ask for MULTIPLE still call MPI from one thread. The
 * lock is therefore biased to the thread that called MPI_Init_thread: while
 * no other thread has entered MPI, that thread marks itself inside (a plain
 * store) instead of taking the lock, which costs no atomic operation. The
 * first other thread to enter revokes the bias for good: it marks it
 * revoking, runs membarrier(2), which puts a full barrier into every
 * running thread of the process, so that either the owner sees the mark or
 * the revoker sees the owner inside, waits until the owner is outside or
 * has taken the lock (an owner waiting inside MPI takes it at its next idle
 * poll), and then marks it revoked; threads arriving meanwhile wait for
 * that. Without membarrier the lock is never biased.
 *
 * A program may also hand MPI to one worker thread while the initial thread
 * waits (a thread pool of one, or the initial thread blocked in
 * pthread_join). So a thread that alone takes the lock for 20 ms, with
 * nobody queued, gets the bias itself, and the next other thread revokes
 * it the same way. Each thread has its own slot and inside flag
 * (vmpi_cs_flags): a former owner that still finds its old slot named
 * while it checks only ever writes its own flag.
 *
 * Split sends. Once a second thread uses MPI, an eager MPI_Send or
 * MPI_Isend to a rank of the job that a shared-memory channel serves (the
 * common message of a hybrid code) does not take the lock at all
 * (VMPI_THREAD_SPLIT; an Isend's request comes from a cache of the
 * thread's, core/p2p.c): it
 * marks its thread inside in its slot's flag, checks that the lock is not
 * biased (so no owner runs unlocked beside it; a bias set while it is
 * inside backs off: the two halves of a Dekker exchange, whose fence is
 * the bias's membarrier, as for the owner's mark), and
 * writes the record holding only that peer's send lock
 * (channel/chan.h: vmpi_chan_mt, which also makes every locked path of
 * the channel take the peer's lock). Threads sending to different peers
 * then take no lock in common, and none waits behind a thread that
 * polls. Whatever it cannot do so (no room, a send of the process still
 * queued, a checked or another job's peer) it does under the lock, as
 * before. vmpi_chan_mt is turned on only by a holder of the lock (the
 * second thread, a thread that takes the lock after a revocation) and off
 * by a bias that found no split sender inside. */
#include "vmpi.h"

#include "vmpi/lock.h"

#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

__thread int vmpi_cs_depth __attribute__((tls_model("initial-exec")));
__thread bool vmpi_cs_held __attribute__((tls_model("initial-exec")));
__thread bool vmpi_cs_owner __attribute__((tls_model("initial-exec")));
__thread int vmpi_cs_slot __attribute__((tls_model("initial-exec"))) = -1;
bool vmpi_cs_on;
bool vmpi_cs_multiple;
atomic_int vmpi_cs_biased;
atomic_int vmpi_cs_bias_slot = -1;
struct vmpi_cs_flag vmpi_cs_flags[VMPI_CS_SLOTS];
static_assert(sizeof(struct vmpi_cs_flag) == 64, "one flag a cache line");
_Atomic uint64_t vmpi_cs_bias_moves;

/* Whether the lock may be biased (membarrier works), the slots handed out,
 * and the current run of acquisitions by one thread: its length and, from
 * its REBIAS_CHECK-th acquisition on, when it began. A run that lasts
 * rebias_ns biases the lock to its thread. That is longer than the time
 * slices of threads that share a processor, whose runs end when the other
 * gets it (revoking a bias each time would cost them more than the lock);
 * it doubles with each new bias, so threads that take turns in longer runs
 * soon stop moving it. All under the lock after vmpi_cs_init. */
#define REBIAS_CHECK 1024
#define REBIAS_NS 20000000ull
static bool can_bias;
static bool can_split; /* VMPI_THREAD_SPLIT under MULTIPLE */
static bool split_on;  /* ... and a second thread has used MPI: vmpi_chan_mt when revoked */
static int nslots;
static unsigned long streak;
static uint64_t streak_t0, rebias_ns = REBIAS_NS;
static uint64_t streak_splits; /* split sends when the run's clock started */
static bool rebias_due;

static vmpi_park_ticket_lock cs;

void vmpi_cs_init(int level)
{
    vmpi_lock_params p;
    vmpi_lock_params_default(&p);
    p.steal_ns = (uint32_t)vmpi_knob_num("VMPI_THREAD_STEAL_NS");
    vmpi_oticket_init(&cs, &p);
    vmpi_cs_multiple = level == MPI_THREAD_MULTIPLE;
    vmpi_cs_on = vmpi_cs_multiple || vmpi_async_on;
    can_split = vmpi_cs_multiple && vmpi_knob_num("VMPI_THREAD_SPLIT");
    can_bias = vmpi_cs_multiple && vmpi_knob_num("VMPI_THREAD_BIAS") &&
               syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
    if (can_bias) {
        vmpi_cs_slot = nslots++;
        atomic_store(&vmpi_cs_bias_slot, vmpi_cs_slot);
    }
    atomic_store(&vmpi_cs_biased, can_bias ? VMPI_CS_BIASED : VMPI_CS_REVOKED);
}

/* Spins, giving the processor away now and then, until *w == v. */
static void wait_for(atomic_int *w, int v)
{
    for (unsigned i = 0; atomic_load_explicit(w, memory_order_acquire) != v; i++)
        if (i % 64 == 63)
            sched_yield();
        else
            vmpi_relax();
}

/* Returns once the bias is revoked. Other threads wait until the
 * revocation is complete: until then the owner may still run without the
 * lock. The state is read afresh each time round: by the time one thread
 * sees REVOKED another may have biased the lock again. */
static void revoke_bias(void)
{
    for (unsigned i = 0;; i++) {
        int b = atomic_load_explicit(&vmpi_cs_biased, memory_order_acquire);
        if (b == VMPI_CS_REVOKED)
            return;
        if (b == VMPI_CS_BIASED &&
            atomic_compare_exchange_strong(&vmpi_cs_biased, &b, VMPI_CS_REVOKING)) {
            int s = atomic_load_explicit(&vmpi_cs_bias_slot, memory_order_relaxed);
            if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
                vmpi_fatal("membarrier failed after it was registered");
            wait_for(&vmpi_cs_flags[s].inside, 0);
            atomic_store_explicit(&vmpi_cs_biased, VMPI_CS_REVOKED, memory_order_release);
            return;
        }
        if (i % 64 == 63)
            sched_yield();
        else
            vmpi_relax();
    }
}

/* A second application thread calls MPI. Threads may outnumber the
 * processors now, and one that is not in MPI cannot queue for the lock
 * until it runs: a thread waiting in a blocking call, which would spin
 * away its whole time slice, gives the processor up now and then (as the
 * computed VMPI_YIELD_POLLS does when ranks outnumber processors). When
 * nothing else is runnable, sched_yield returns at once. */
#define SHARED_YIELD_POLLS 64

static void second_thread(void)
{
    if (can_split) {
        /* Under the lock, the bias revoked: nobody is in a channel call. */
        split_on = true;
        atomic_store_explicit(&vmpi_chan_mt, true, memory_order_relaxed);
    }
    if (vmpi_g.yield_auto && vmpi_g.yield_polls == 0) {
        vmpi_g.yield_polls = SHARED_YIELD_POLLS;
        vmpi_g.yield_threads = true;
    }
}

/* Hand-overs of the lock from one application thread to another, and the
 * last holder (a thread-local address names the thread). Written under
 * the lock; atomic because a waiter reads them in vmpi_cs_sched_yield. */
static atomic_ulong handoffs;
static const void *_Atomic holder;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The holder biases the lock to itself: its run has lasted rebias_ns,
 * nobody is queued, and no progress helper needs the lock. Decided as its
 * outermost call ends, still holding the lock, once that call has started
 * or stopped the helper (deciding as it began would miss a helper the call
 * itself starts, which would then run beside a lockless owner); its next
 * calls run without the lock. A thread that then arrives revokes the bias
 * as from the first owner. */
static void rebias(void)
{
    streak = 0;
    if (vmpi_async_on || vmpi_async_wanted ||
        atomic_load_explicit(&vmpi_cs_biased, memory_order_relaxed) != VMPI_CS_REVOKED ||
        atomic_load_explicit(&cs.next, memory_order_relaxed) !=
            atomic_load_explicit(&cs.owner, memory_order_relaxed))
        return;
    if (vmpi_cs_slot < 0) {
        if (nslots == VMPI_CS_SLOTS)
            return;
        vmpi_cs_slot = nslots++;
    }
    atomic_store_explicit(&vmpi_cs_bias_slot, vmpi_cs_slot, memory_order_relaxed);
    atomic_store_explicit(&vmpi_cs_biased, VMPI_CS_BIASED, memory_order_seq_cst);
    /* A split sender inside (it saw REVOKED before this store) keeps the
     * lock unbiased; one that comes later sees BIASED and locks. Its mark
     * is a plain store: the barrier makes it visible here, or this store
     * to it (the two halves of a Dekker exchange). */
    if (split_on && syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
        vmpi_fatal("membarrier failed after it was registered");
    for (int i = 0; split_on && i < nslots; i++)
        if (i != vmpi_cs_slot &&
            atomic_load_explicit(&vmpi_cs_flags[i].inside, memory_order_seq_cst)) {
            int b = VMPI_CS_BIASED;
            atomic_compare_exchange_strong(&vmpi_cs_biased, &b, VMPI_CS_REVOKED);
            return;
        }
    /* A thread that revoked the bias meanwhile sets vmpi_chan_mt again
     * when it takes the lock (relock); a split sender that came after
     * that revocation locks its peer whatever the flag says. */
    if (atomic_load_explicit(&vmpi_cs_biased, memory_order_acquire) == VMPI_CS_BIASED)
        atomic_store_explicit(&vmpi_chan_mt, false, memory_order_relaxed);
    rebias_ns *= 2;
    atomic_fetch_add_explicit(&vmpi_cs_bias_moves, 1, memory_order_relaxed);
}

/* The split sends of every thread but the one in slot `except`. */
static uint64_t split_sends_but(int except)
{
    uint64_t n = 0;
    for (int i = 0; i < VMPI_CS_SLOTS; i++)
        if (i != except)
            n += atomic_load_explicit(&vmpi_cs_flags[i].split_sends, memory_order_relaxed);
    return n;
}

static inline void took(void)
{
    vmpi_cs_held = true;
    const void *me = &vmpi_cs_depth;
    if (atomic_load_explicit(&holder, memory_order_relaxed) != me) {
        atomic_store_explicit(&holder, me, memory_order_relaxed);
        atomic_store_explicit(&handoffs,
                              atomic_load_explicit(&handoffs, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        streak = 0;
        rebias_due = false;
    } else if (VMPI_UNLIKELY(++streak % REBIAS_CHECK == 0) && can_bias) {
        /* Threads that send without the lock use MPI too: their sends
         * restart the run's clock. */
        uint64_t splits = can_split ? split_sends_but(vmpi_cs_slot) : 0;
        if (streak == REBIAS_CHECK || splits != streak_splits) {
            streak_t0 = now_ns();
            streak_splits = splits;
        } else if (now_ns() - streak_t0 >= rebias_ns) {
            rebias_due = true; /* decided in vmpi_cs_leave, once this call's helper is known */
        }
    }
}

/* Takes the lock for a thread that is not the owner: never while a bias set
 * since this thread last looked may let an owner run without it. */
static void relock(void)
{
    for (;;) {
        vmpi_oticket_lock_acquire(&cs);
        if (VMPI_LIKELY(atomic_load_explicit(&vmpi_cs_biased, memory_order_acquire) ==
                        VMPI_CS_REVOKED))
            break;
        vmpi_oticket_unlock(&cs);
        revoke_bias();
    }
    /* Only a holder of the lock, between two channel calls, turns split
     * sends on after a bias: a former owner that took the lock inside a
     * call polls on with the flag as it found it. */
    if (VMPI_UNLIKELY(split_on) && !atomic_load_explicit(&vmpi_chan_mt, memory_order_relaxed))
        atomic_store_explicit(&vmpi_chan_mt, true, memory_order_relaxed);
    took();
}

void vmpi_cs_enter(void)
{
    static __thread bool counted __attribute__((tls_model("initial-exec")));
    static int threads; /* application threads that took the lock; under it */
    if (VMPI_UNLIKELY(atomic_load_explicit(&vmpi_cs_biased, memory_order_acquire) !=
                      VMPI_CS_REVOKED))
        revoke_bias();
    relock();
    /* Counted once the bias is gone, so the owner reads yield_polls under
     * the lock from then on. The owner counts too: it may enter here only
     * after the revocation. */
    if (VMPI_UNLIKELY(!counted)) {
        counted = true;
        if (++threads == 2 && vmpi_cs_multiple)
            second_thread();
        if (can_split && vmpi_cs_slot < 0 && nslots < VMPI_CS_SLOTS)
            vmpi_cs_slot = nslots++;
    }
}

bool vmpi_cs_split_enter(void)
{
    int s = vmpi_cs_slot;
    if (s < 0)
        return false;
    /* No fence: a bias set meanwhile runs membarrier(2) before it looks
     * at the flags (rebias), as a revocation does for the owner's. */
    atomic_store_explicit(&vmpi_cs_flags[s].inside, 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    if (VMPI_LIKELY(atomic_load_explicit(&vmpi_cs_biased, memory_order_acquire) ==
                        VMPI_CS_REVOKED &&
                    atomic_load_explicit(&vmpi_chan_mt, memory_order_relaxed)))
        return true;
    atomic_store_explicit(&vmpi_cs_flags[s].inside, 0, memory_order_release);
    return false;
}

void vmpi_cs_split_leave(bool sent)
{
    struct vmpi_cs_flag *f = &vmpi_cs_flags[vmpi_cs_slot];
    if (sent)
        atomic_store_explicit(&f->split_sends,
                              atomic_load_explicit(&f->split_sends, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    atomic_store_explicit(&f->inside, 0, memory_order_release);
}

uint64_t vmpi_cs_split_sends(void)
{
    return split_sends_but(-1);
}

/* The owner, inside without the lock, takes it: the bias is being revoked,
 * or the owner gives it up. */
static void owner_lock(void)
{
    vmpi_oticket_lock_acquire(&cs);
    took();
    vmpi_cs_owner_leave();
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
    if (!vmpi_cs_held) {
        /* The owner, inside without the lock: another thread revokes the
         * bias and waits for it to take the lock. */
        if (vmpi_cs_owner &&
            atomic_load_explicit(&vmpi_cs_biased, memory_order_relaxed) != VMPI_CS_BIASED)
            owner_lock();
        return;
    }
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
            vmpi_relax();
    relock();
}

/* Yielding for threads (not for ranks that outnumber the processors) costs
 * a system call every SHARED_YIELD_POLLS idle polls and helps only while
 * another application thread uses MPI. A waiter that has yielded this many
 * times in a row without any other thread taking the lock in between stops
 * until one does: another thread that becomes runnable on its processor
 * gets it at the end of the time slice and queues for the lock, which the
 * waiter hands over between two polls (vmpi_cs_yield). */
#define ALONE_YIELDS 16

_Atomic uint64_t vmpi_cs_yields;

void vmpi_cs_sched_yield(void)
{
    static __thread unsigned long seen __attribute__((tls_model("initial-exec")));
    static __thread unsigned quiet __attribute__((tls_model("initial-exec")));
    if (vmpi_g.yield_threads) {
        /* Another thread's split send shows it runs as a hand-off would. */
        unsigned long h = atomic_load_explicit(&handoffs, memory_order_relaxed) +
                          (can_split ? split_sends_but(vmpi_cs_slot) : 0);
        if (h != seen) {
            seen = h;
            quiet = 0;
        } else if (quiet >= ALONE_YIELDS) {
            return;
        } else {
            quiet++;
        }
    }
    atomic_fetch_add_explicit(&vmpi_cs_yields, 1, memory_order_relaxed);
    if (!vmpi_cs_held) {
        sched_yield();
        return;
    }
    vmpi_oticket_unlock(&cs);
    sched_yield();
    relock();
}

void vmpi_cs_leave(void)
{
    if (!vmpi_cs_held && vmpi_cs_owner && vmpi_async_wanted && !vmpi_async_on) {
        /* The helper is about to start and takes the lock: the owner gives
         * the bias up (a revocation under way completes on its own) and
         * holds the lock while it starts the helper. */
        owner_lock();
        atomic_store_explicit(&vmpi_chan_mt, split_on, memory_order_relaxed);
        int b = VMPI_CS_BIASED;
        atomic_compare_exchange_strong(&vmpi_cs_biased, &b, VMPI_CS_REVOKED);
    }
    vmpi_async_leave();
    if (vmpi_cs_held) {
        if (VMPI_UNLIKELY(rebias_due)) {
            rebias_due = false;
            rebias();
        }
        vmpi_cs_held = false;
        vmpi_oticket_unlock(&cs);
    } else if (vmpi_cs_owner) {
        vmpi_cs_owner_leave();
    }
}
