/* core/: what the layers above it (coll/, comm/, rma/, api/) use. One
 * header per part, all included here: dtype.h (datatypes, operations),
 * communicator.h (groups, the communicator object), info.h (info objects),
 * request.h (requests, point-to-point), progress.h (the progress engine);
 * this file adds handles, errors raised on a communicator, the
 * process-wide state and start-up.
 * Layers below core (locality/, channel/, shm/, pmi/, base/) never include
 * it. Public MPI names appear only in api/; everything here is vmpi_<part>_. */
#ifndef VMPI_CORE_VMPI_H
#define VMPI_CORE_VMPI_H

#include "../base/base.h"
#include "../channel/chan.h"

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- handles ------------------------------------------------------------
 * MPICH's encoding: bits 31-30 kind, 29-26 object type, 25-0 index.
 * Predefined objects are "builtin" (kind 1); objects vmpi creates use
 * kind 3 ("indirect") so they never collide with MPICH's direct-kind
 * predefined pair types (0x8c00000x). */
#define VMPI_HKIND(h) (((uint32_t)(h)) >> 30)
#define VMPI_HTYPE(h) ((((uint32_t)(h)) >> 26) & 0xfu)
#define VMPI_HINDEX(h) (((uint32_t)(h)) & 0x03ffffffu)
#define VMPI_HMAKE(kind, type, idx) \
    ((int)(((uint32_t)(kind) << 30) | ((uint32_t)(type) << 26) | (uint32_t)(idx)))
enum { VMPI_HK_INVALID = 0, VMPI_HK_BUILTIN = 1, VMPI_HK_DIRECT = 2, VMPI_HK_INDIRECT = 3 };
enum {
    VMPI_OBJ_COMM = 1, VMPI_OBJ_GROUP = 2, VMPI_OBJ_DTYPE = 3, VMPI_OBJ_ERRH = 5,
    VMPI_OBJ_OP = 6, VMPI_OBJ_INFO = 7, VMPI_OBJ_WIN = 8, VMPI_OBJ_REQ = 11
};

/* ---- errors (core/err.c) ----------------------------------------------------
 * An error raised on a communicator goes through its error handler: the
 * code comes back (MPI_ERRORS_RETURN) or the job ends. */
struct vmpi_comm;
int vmpi_err(struct vmpi_comm *comm, int errclass, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int vmpi_err_handle(struct vmpi_comm *comm, int code); /* apply errhandler to an existing code */

#include "dtype.h"
#include "communicator.h"
#include "info.h"
#include "request.h"
#include "progress.h"
#include "attr.h"
#include "proc.h"

/* ---- process-wide state --------------------------------------------------- */
struct vmpi_global {
    int state; /* 0 before Init, 1 initialized, 2 finalized */
    int thread_level;
    unsigned yield_polls;        /* oversubscribed: sched_yield after this many idle polls */
    bool yield_auto;             /* yield_polls is the computed default (core/thread.c may turn it on) */
    bool yield_threads;          /* ... and it was turned on for threads sharing a processor */
    struct vmpi_comm *world; /* MPI_COMM_WORLD, for the lookup fast path */
    size_t unexp_bytes, unexp_max; /* unexpected eager data held, and its cap */
    uint64_t unexp_len, unexp_hwm; /* unexpected messages queued, and the most ever (MPI_T) */
};
extern struct vmpi_global vmpi_g;

/* vmpi_comm_get with MPI_COMM_WORLD inline. */
static inline struct vmpi_comm *vmpi_comm_lookup(MPI_Comm h)
{
    if (VMPI_LIKELY(h == MPI_COMM_WORLD && vmpi_g.world))
        return vmpi_g.world;
    return vmpi_comm_get(h);
}

int vmpi_core_init(int required, int *provided);
/* After MPI_Finalize has run the attribute callbacks and a barrier. */
int vmpi_core_finalize(void);

#endif
