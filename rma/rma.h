/* One-sided communication: windows (win.c), data movement (ops.c), the
 * active-message service for targets whose memory this process cannot map
 * (am.c), and synchronization (sync.c).
 *
 * Every target of a window is reached in one of these ways, fixed when the
 * window is made:
 *   direct  the target's window memory is mapped here (same VM, or another
 *           VM of this host through the region): loads, stores and atomics;
 *   net     another host whose window memory is registered with the
 *           network (a provider with RMA): Put and Get of contiguous target
 *           data are libfabric writes and reads; everything else is am;
 *   am      a request message to the target's process, which applies it to
 *           its memory when it makes MPI progress (any MPI call) and answers
 *           reads; requests from one origin are applied in order.
 * Window locks and the accumulate lock of a rank live in its control block
 * (struct vmpi_win_ctl), in memory its node shares; origins of the node
 * use them directly, others send lock requests that the target's process
 * takes with try-locks on their behalf. */
#ifndef VMPI_RMA_RMA_H
#define VMPI_RMA_RMA_H

#include "../coll/coll.h"
#include "../core/vmpi.h"
#include "vmpi/lock.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Control block of one rank of a window, in the memory its node shares
 * (the host region, a per-window file in the VM's /dev/shm, or private
 * memory when no other rank can map it). Another VM may write any of it:
 * the words are used only as lock counters, never as offsets or sizes.
 *   tl       writers' queue: ticket lock (oticket, or spark for comparison)
 *   readers  shared-lock holders; an exclusive holder waits for 0 while
 *            it holds tl, so a new reader (who must pass tl) waits behind it
 *   acc      accumulate lock: every accumulating operation on this rank's
 *            memory combines under it (ops.c) */
struct vmpi_win_ctl {
    vmpi_park_ticket_lock tl;
    _Atomic uint32_t readers;
    char pad0[60];
    _Atomic uint32_t acc;
    char pad1[60];
};
static_assert(sizeof(struct vmpi_win_ctl) == sizeof(vmpi_park_ticket_lock) + 128,
              "window control block layout");
static_assert(offsetof(struct vmpi_win_ctl, readers) % 64 == 0, "readers on its own line");
static_assert(offsetof(struct vmpi_win_ctl, acc) % 64 == 0, "acc on its own line");

/* How this process reaches one target. */
struct win_target {
    char *base;              /* direct: its window memory here; NULL: am */
    struct vmpi_win_ctl *ctl; /* its control block when this node maps it */
    uint64_t size;           /* window bytes (0 for dynamic windows) */
    int disp_unit;
    int world;
    uint8_t lock;            /* 0, or the MPI_LOCK_* type held on it */
    uint8_t dirty;           /* am requests sent since its last flush */
    uint8_t in_start;        /* a member of the current MPI_Win_start group */
    uint8_t net;             /* reachable by the network's RMA at net_key */
    struct vmpi_mem_key net_key;
};

/* A region attached to a dynamic window (target side). */
struct win_attach {
    char *base;
    size_t size;
};

/* A request of this process still in flight on the window. */
struct win_pend {
    struct win_pend *next;
    struct vmpi_req *req;    /* internal send or receive */
    struct vmpi_req *user;   /* Rget/Rget_accumulate request to complete, or NULL */
    void *buf;               /* freed when req completes */
    int target;
    size_t expect;           /* a reply's bytes (fewer: the target refused) */
    int *status;             /* a control reply's error word */
    bool net;                /* a libfabric write or read */
};

/* A lock request of a process that cannot reach our control block, waiting
 * at its target. */
struct win_waiter {
    struct win_waiter *next;
    int origin, type;
    uint32_t id;
    bool holds_tl;           /* exclusive: tl taken, waiting for readers */
};

enum { VMPI_RMA_LOCK_OTICKET = 0, VMPI_RMA_LOCK_SPARK = 1 };

struct vmpi_win {
    int handle;
    int flavor;
    struct vmpi_comm *comm;  /* private duplicate: am traffic and errors */
    struct vmpi_group *group;
    int rank, size;
    char *base;              /* this rank's window memory */
    uint64_t my_size;
    int disp_unit;
    struct win_target *t;    /* by comm rank */
    int *rank_of_world;      /* world rank -> comm rank or -1 (vmpi_proc_count()) */
    /* memory this window owns */
    void *node_mem;          /* the node block (region block, file mapping, or malloc) */
    size_t node_bytes;
    int node_kind;
    bool node_leader;        /* this rank allocated node_mem */
    void *own_mem;           /* Win_allocate memory in this rank's heap slice */
    bool own_private;        /* ... or in private memory: the slice could not hold it */
    struct vmpi_mem_reg net_mem; /* this rank's memory as the network exposes it */
    /* epochs at this origin */
    bool fence_open;         /* a fence without NOSUCCEED opened one */
    bool fence_ops;          /* operations issued since that fence */
    bool lock_all;
    int nlocks;              /* targets locked by MPI_Win_lock */
    bool started;            /* MPI_Win_start .. MPI_Win_complete */
    bool posted;             /* MPI_Win_post .. MPI_Win_wait */
    struct vmpi_req **post_done; /* Complete messages awaited by Win_wait */
    int npost;
    /* in flight */
    struct win_pend *pend;
    uint32_t next_id;        /* reply tags */
    int am_err;              /* first error a target reported, kept for the sync call */
    /* target side */
    bool am_active;          /* some origin reaches this rank by am */
    struct win_attach *att;  /* dynamic: attached regions */
    int natt;
    struct win_waiter *waiters;
    struct vmpi_req *am_recv;    /* posted receive of the next request, or NULL */
    void *am_buf;                /* and its buffer */
    int *err_for;            /* by origin comm rank: first error to report */
    int lock_kind;           /* VMPI_RMA_LOCK_* */
    MPI_Aint attr_size;      /* MPI_Win_get_attr hands out pointers to these */
    int attr_model;
    char name[MPI_MAX_OBJECT_NAME];
    struct vmpi_win *next, *prev; /* windows with an am service */
};

/* Tags on the window's private communicator. */
enum {
    RMA_TAG_AM = 1,      /* requests */
    RMA_TAG_POST = 2,    /* MPI_Win_post -> origins */
    RMA_TAG_DONE = 3,    /* MPI_Win_complete -> targets */
    RMA_TAG_REPLY = 16,  /* replies: RMA_TAG_REPLY + (id & RMA_ID_MASK) */
};
#define RMA_ID_MASK 0x0fffffffu

/* win.c */
struct vmpi_win *vmpi_win_get(MPI_Win h); /* NULL: invalid */
int vmpi_win_create(void *base, MPI_Aint size, int disp_unit, struct vmpi_comm *c, int flavor,
                    void *baseptr, struct vmpi_win **out);
int vmpi_win_free(struct vmpi_win *w);
int vmpi_win_attach(struct vmpi_win *w, void *base, MPI_Aint size);
int vmpi_win_detach(struct vmpi_win *w, const void *base);

/* ops.c: one operation on one target. `res` receives fetched data
 * (Get: the origin buffer; Get_accumulate: the result buffer). */
enum { RMA_PUT = 1, RMA_GET, RMA_ACC, RMA_GACC, RMA_CAS };
struct rma_op {
    int kind;
    const void *oaddr;
    MPI_Count ocount;
    struct vmpi_dtype *odt;
    void *raddr;
    MPI_Count rcount;
    struct vmpi_dtype *rdt;
    const void *compare;     /* CAS */
    int target;
    MPI_Aint disp;
    MPI_Count tcount;
    struct vmpi_dtype *tdt;
    MPI_Op op;
};
int vmpi_rma_op(const char *fn, struct vmpi_win *w, const struct rma_op *o,
                struct vmpi_req **user);
/* Applies an operation to memory at `at`, described by the target type's
 * runs (the target's layout), with packed origin data `in` and packed
 * results to `out`. Atomic for accumulates (see ops.c). Returns
 * MPI_SUCCESS or MPI_ERR_RMA_RANGE when a run leaves [lo, hi). */
struct rma_layout {
    MPI_Count count;
    MPI_Aint extent;
    size_t nblk;
    const struct vmpi_dblk *blk;
    MPI_Datatype basic;
    size_t esize;
};
int vmpi_rma_apply(int kind, char *at, const char *lo, const char *hi,
                   const struct rma_layout *L, const void *in, const void *cmp, void *out,
                   MPI_Op op, struct vmpi_win_ctl *ctl);

/* am.c. A request message: struct rma_am_hdr, nblk runs of the target
 * datatype (struct rma_am_run, the element's flattened layout), then dlen
 * bytes of packed origin data (CAS: the compare value, then the origin
 * value). The target checks every field before use: the message may come
 * from another VM. Replies are raw data (rlen bytes; 0 bytes when the
 * target refused the operation) or, for lock, unlock and flush, one int:
 * the first error the target met in this origin's requests since its last
 * unlock or flush. */
struct rma_am_hdr {
    uint32_t kind;   /* RMA_PUT .. RMA_CAS, or RMA_AM_* */
    uint32_t id;     /* the reply's tag is RMA_TAG_REPLY + id */
    int32_t op;      /* MPI_Op; lock: the MPI_LOCK_* type; unlock: the type held */
    int32_t basic;   /* predefined type of the elements (accumulates) */
    uint64_t esize;  /* its size */
    int64_t disp;    /* byte offset in the window (dynamic: the address) */
    int64_t count;   /* elements of the target datatype */
    int64_t extent;  /* and its extent */
    uint64_t nblk;   /* runs that follow */
    uint64_t dlen;   /* bytes of origin data after the runs */
    uint64_t rlen;   /* bytes the reply carries */
};
static_assert(sizeof(struct rma_am_hdr) == 72, "am request header layout");
struct rma_am_run {
    int64_t off, len, rep, stride;
};
enum { RMA_AM_LOCK = 16, RMA_AM_UNLOCK, RMA_AM_FLUSH };
#define RMA_AM_MAX_RUNS 4096

/* The am service: a progress poller while some window is served. */
int vmpi_rma_progress(void);
void vmpi_rma_am_enable(struct vmpi_win *w);
void vmpi_rma_am_disable(struct vmpi_win *w);
/* Sends request msg (len bytes, freed when sent) to target t; when rbuf is
 * set the reply goes to (rbuf, rcount, rdt) and completes `user`. */
int vmpi_rma_am_send(struct vmpi_win *w, int t, void *msg, size_t len, void *rbuf,
                     MPI_Count rcount, struct vmpi_dtype *rdt, struct vmpi_req *user);
/* Lock, unlock, flush requests to an am target (blocking). */
int vmpi_rma_am_lock(struct vmpi_win *w, int t, int type);
int vmpi_rma_am_unlock(struct vmpi_win *w, int t, int type);
int vmpi_rma_am_flush(struct vmpi_win *w, int t);
/* Waits for this process's pending requests (target t, or all with -1). */
void vmpi_rma_wait_pending(struct vmpi_win *w, int t);
/* Waits for its libfabric writes and reads to target t only. */
void vmpi_rma_wait_net(struct vmpi_win *w, int t);
/* Tracks a libfabric operation: req completes `user` too; buf is freed. */
void vmpi_rma_pend_net(struct vmpi_win *w, struct vmpi_req *req, struct vmpi_req *user,
                       void *buf, int t);
void vmpi_rma_reap(struct vmpi_win *w);

/* sync.c */
void vmpi_rma_poll(void *arg); /* progress while waiting for a lock */
bool vmpi_rma_try_lock(struct vmpi_win *w, struct vmpi_win_ctl *ctl, int type, bool *holds_tl);
void vmpi_rma_unlock_ctl(struct vmpi_win *w, struct vmpi_win_ctl *ctl, int type);
int vmpi_rma_fence(const char *fn, struct vmpi_win *w, int assert_);
int vmpi_rma_post(const char *fn, struct vmpi_win *w, struct vmpi_group *g, int assert_);
int vmpi_rma_start(const char *fn, struct vmpi_win *w, struct vmpi_group *g, int assert_);
int vmpi_rma_complete(const char *fn, struct vmpi_win *w);
int vmpi_rma_wait(const char *fn, struct vmpi_win *w, int *flag);
int vmpi_rma_lock(const char *fn, struct vmpi_win *w, int type, int t, int assert_);
int vmpi_rma_unlock(const char *fn, struct vmpi_win *w, int t);
int vmpi_rma_lock_all(const char *fn, struct vmpi_win *w, int assert_);
int vmpi_rma_unlock_all(const char *fn, struct vmpi_win *w);
/* t < 0: every target of the epoch (callers handle MPI_PROC_NULL). */
int vmpi_rma_flush(const char *fn, struct vmpi_win *w, int t, bool local);
/* May origin `w` access target t now (an epoch covers it)? */
bool vmpi_rma_in_epoch(const struct vmpi_win *w, int t);

#endif
