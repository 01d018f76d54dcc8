/* The progress engine (core/progress.c, vmpi_progress_) and asynchronous
 * progress (core/async.c, vmpi_async_). */
#ifndef VMPI_CORE_PROGRESS_H
#define VMPI_CORE_PROGRESS_H

#include "../channel/chan.h"
#include <mpi.h>
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
 * MPI_THREAD_MULTIPLE or while the asynchronous progress helper runs. */
extern __thread int vmpi_cs_depth; /* MPI calls this thread is inside (nested count) */
extern bool vmpi_cs_on;       /* outermost calls take the lock */
extern bool vmpi_cs_multiple; /* the job asked for MPI_THREAD_MULTIPLE */
void vmpi_cs_init(int level);
void vmpi_cs_enter(void);
bool vmpi_cs_try(void);
void vmpi_cs_exit(void);
/* A thread that waits lets a queued one in (between two polls). */
void vmpi_cs_yield(void);
/* The outermost call returns: start or stop the helper, then drop the lock
 * if this call took it. */
void vmpi_cs_leave(int held);

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
