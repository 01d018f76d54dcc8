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

/* Asynchronous progress (core/async.c): a helper thread polls while the
 * application is outside MPI, for as long as something wants it. */
extern int vmpi_async_depth;     /* MPI calls the application is inside (nested count) */
extern bool vmpi_async_on;     /* the helper runs: outermost calls take its lock */
extern unsigned vmpi_async_wanted; /* the VMPI_ASYNC_* reasons that want the helper */
/* Each part that needs the helper sets and clears its own reason; it takes
 * effect when the outermost MPI call returns. */
enum { VMPI_ASYNC_RMA = 1, VMPI_ASYNC_BSEND = 2 };
void vmpi_async_want_for(unsigned reason, bool on);
static inline void vmpi_async_want(bool on) /* the RMA reason (rma/am.c) */
{
    vmpi_async_want_for(VMPI_ASYNC_RMA, on);
}
void vmpi_async_acquire(void);
void vmpi_async_leave(void);   /* outermost return: drop the lock, start or stop the helper */

#endif
