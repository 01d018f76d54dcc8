/* The progress engine (core/progress.c, vmpi_progress_) and asynchronous
 * progress (core/async.c, vmpi_async_). */
#ifndef VMPI_CORE_PROGRESS_H
#define VMPI_CORE_PROGRESS_H

#include "../channel/chan.h"
#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- progress (core/progress.c) -------------------------------------------- */
int vmpi_progress(void); /* runs every poller once; returns events handled */
/* Registers fn to run on progress calls where (count & mask) == 0 (no-op if
 * it is registered); VMPI_POLL_WAIT: MPI_Finalize waits while it is. */
enum { VMPI_POLL_WAIT = 1 };
void vmpi_progress_add(int (*fn)(void), unsigned mask, unsigned flags);
void vmpi_progress_remove(int (*fn)(void));
/* Nothing queued anywhere: no waiting poller, p2p quiet, no channel busy. */
bool vmpi_progress_idle(void);
void vmpi_progress_finalize(void);
/* Point-to-point's share of progress (core/p2p.c): the deferred sends and
 * pulls (returns events), the idle-time pull of unexpected rendezvous data,
 * and whether anything of it is still under way. */
int vmpi_p2p_deferred(void);
void vmpi_p2p_idle_pull(void);
bool vmpi_p2p_quiet(void);
/* The up-call table the channels get (core/p2p.c). */
extern const struct vmpi_chan_up vmpi_p2p_up;

/* The critical section (core/thread.c): outermost MPI calls hold it under
 * MPI_THREAD_MULTIPLE or while the asynchronous progress helper runs;
 * under MULTIPLE it is biased to the initial thread until another enters. */
extern __thread int vmpi_cs_depth; /* MPI calls this thread is inside (nested count) */
extern __thread bool vmpi_cs_held;  /* its outermost call holds the lock */
extern __thread bool vmpi_cs_owner; /* its outermost call runs without it, as the bias's owner */
extern __thread int vmpi_cs_slot;   /* its bias slot, -1 until it needs one */
extern bool vmpi_cs_on;       /* outermost calls take the lock */
extern bool vmpi_cs_multiple; /* the job asked for MPI_THREAD_MULTIPLE */
extern atomic_int vmpi_cs_biased; /* VMPI_CS_BIASED: the owner may run without the lock */
/* The bias's states: BIASED, REVOKING while one thread revokes it, then
 * REVOKED (also from the start when there is none), until the lock is
 * biased again to a thread that uses it alone (core/thread.c). */
enum { VMPI_CS_REVOKED, VMPI_CS_BIASED, VMPI_CS_REVOKING };
/* The slot of the thread the bias is for, and each slot's flag: its thread
 * is in a call it did not lock. Slots are never reused, so a flag outlives
 * its thread. */
enum { VMPI_CS_SLOTS = 64 };
extern atomic_int vmpi_cs_bias_slot;
struct vmpi_cs_flag {
    atomic_int inside;
    uint32_t rsvd_;
    _Atomic uint64_t split_sends; /* its thread's split sends (written by it alone) */
    char pad_[48]; /* a cache line each: the owner writes its own at every call */
};
extern struct vmpi_cs_flag vmpi_cs_flags[VMPI_CS_SLOTS];
extern _Atomic uint64_t vmpi_cs_bias_moves; /* times the lock was biased to another thread (MPI_T) */
/* Split sends (core/thread.c): true when this thread may send without the
 * lock now (marked inside until vmpi_cs_split_leave; sent: it did), and
 * the sends so far of all threads (MPI_T). */
bool vmpi_cs_split_enter(void);
void vmpi_cs_split_leave(bool sent);
uint64_t vmpi_cs_split_sends(void);
void vmpi_cs_init(int level);
void vmpi_cs_enter(void); /* takes the lock (revoking the bias if needed) */
bool vmpi_cs_try(void);
void vmpi_cs_exit(void);
/* A thread that waits lets a queued one in (between two polls). */
void vmpi_cs_yield(void);
/* A thread that waits gives its processor away, without the lock, so a
 * thread that runs in its place can take it (between two polls). */
void vmpi_cs_sched_yield(void);
extern _Atomic uint64_t vmpi_cs_yields; /* times it did (MPI_T) */
/* The outermost call returns: start or stop the helper, then drop the lock
 * or the owner's mark. */
void vmpi_cs_leave(void);

/* An outermost call begins: the owner marks itself inside while the bias
 * holds (no atomic read-modify-write; see core/thread.c), others lock. The
 * slot is read again after the mark: the bias may have moved to another
 * thread meanwhile, which this thread's own flag does not disturb. */
static inline void vmpi_cs_begin(void)
{
    int s = vmpi_cs_slot;
    if (s >= 0 && atomic_load_explicit(&vmpi_cs_bias_slot, memory_order_relaxed) == s) {
        atomic_store_explicit(&vmpi_cs_flags[s].inside, 1, memory_order_relaxed);
        atomic_signal_fence(memory_order_seq_cst);
        if (VMPI_LIKELY(atomic_load_explicit(&vmpi_cs_biased, memory_order_acquire) ==
                            VMPI_CS_BIASED &&
                        atomic_load_explicit(&vmpi_cs_bias_slot, memory_order_relaxed) == s)) {
            vmpi_cs_owner = true;
            return;
        }
        atomic_store_explicit(&vmpi_cs_flags[s].inside, 0, memory_order_release);
    }
    vmpi_cs_enter();
}

static inline void vmpi_cs_owner_leave(void)
{
    atomic_signal_fence(memory_order_seq_cst);
    vmpi_cs_owner = false;
    atomic_store_explicit(&vmpi_cs_flags[vmpi_cs_slot].inside, 0, memory_order_release);
}

/* Asynchronous progress (core/async.c): a helper thread polls while the
 * application is outside MPI, for as long as something wants it. */
extern bool vmpi_async_on;     /* the helper runs */
extern unsigned vmpi_async_wanted; /* the VMPI_ASYNC_* reasons that want the helper */
/* Each part that needs the helper sets and clears its own reason; it takes
 * effect when the outermost MPI call returns. */
enum { VMPI_ASYNC_RMA = 1, VMPI_ASYNC_BSEND = 2 };
void vmpi_async_want_for(unsigned reason, bool on);
static inline void vmpi_async_want(bool on) /* the RMA reason (rma/am.c) */
{
    vmpi_async_want_for(VMPI_ASYNC_RMA, on);
}
void vmpi_async_leave(void); /* start or stop the helper as wanted */

#endif
