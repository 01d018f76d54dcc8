/* vmpi/lock.h: locks that live in process-shared memory.
 *
 * Every lock here is a plain struct with no pointers and no process-local
 * state, so it may be placed in any shared mapping (MAP_SHARED anonymous
 * memory inherited over fork, a /dev/shm file, an ivshmem BAR shared between
 * VMs) and used by threads of every process that maps it, at any address.
 * Initialise exactly once (vmpi_*_init) before any other process uses it.
 *
 * Lock kinds
 *   tas     test-and-test-and-set with exponential back-off (pure spin)
 *   ticket  FIFO ticket lock (pure spin)
 *   pticket ticket lock, back-off proportional to the distance to the head
 *   spark   spin-then-park ticket: spin a fixed budget, then park; the
 *           unlocker wakes exactly the next ticket holder (user-space twin
 *           of Linux's PV ticket lock)
 *   oticket opportunistic ticket: spin budget MAX >> (distance - 1) while the
 *           distance to the head is below a cut-off, a small default beyond
 *           it, and never longer than a time cap; the unlocker wakes the
 *           next N waiters so their wake-up overlaps the sections before
 *           them. While spinning, a waiter that is not next yields its
 *           core once every 64 polls (the holder or the next waiter may be
 *           runnable behind it); a parked waiter re-enters the spin phase
 *           with the budget of its new distance when woken.
 *           Bounded stealing: a thread that arrives while the lock is free
 *           takes it without queueing, and one that finds it held polls it
 *           steal_spin times before taking a ticket, so the threads that
 *           are running keep the lock among themselves while the queue
 *           sleeps (no hand-off, hence no wake-up, per acquisition). The
 *           queue's head competes for the free lock too; once it has
 *           waited steal_ns it claims a direct hand-off and nobody may
 *           steal until it has the lock, so no waiter waits more than
 *           about steal_ns per position ahead of it. steal_ns =
 *           VMPI_LOCK_NO_STEAL makes the lock strictly FIFO
 *   mcs     MCS queue lock; the queue nodes are an array inside the lock,
 *           indexed by a per-caller slot (0 .. VMPI_MCS_MAX_SLOTS-1); a
 *           waiter spins a budget on its own node, then parks
 *   mutex   pthread mutex with PTHREAD_PROCESS_SHARED (baseline)
 *
 * Parking modes (chosen at init, spark/oticket/mcs; the pure spin locks and
 * the mutex ignore it)
 *   VMPI_PARK_FUTEX  all contenders share one kernel: FUTEX_WAIT on a
 *                    per-ticket slot word (or the MCS node), and FUTEX_WAKE
 *                    on exactly the slots of the waiters to be woken.
 *   VMPI_PARK_YIELD  contenders may be in different VMs (no shared kernel,
 *                    no pids): sched_yield, then short nanosleeps with
 *                    exponential back-off, re-checking the lock in between.
 *
 * All operations use C11 atomics with explicit memory orders; acquiring a
 * lock has acquire semantics, releasing it release semantics.
 */
#ifndef VMPI_LOCK_H
#define VMPI_LOCK_H

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VMPI_LOCK_API __attribute__((visibility("default")))
#define VMPI_LOCK_CACHELINE 64

/* Number of per-ticket wake-up slots of spark/oticket. Tickets t and
 * t + VMPI_TICKET_SLOTS share a slot: more waiters than this is still
 * correct, a wake of that slot then also wakes the alias (which re-checks
 * and parks again). */
#define VMPI_TICKET_SLOTS 64
/* Maximum number of MCS contenders: callers pass slot < this. */
#define VMPI_MCS_MAX_SLOTS 128

typedef enum { VMPI_PARK_FUTEX = 0, VMPI_PARK_YIELD = 1 } vmpi_park_mode;

/* vmpi_lock_params.steal_ns: the opportunistic lock never lets a thread
 * pass a queued waiter. */
#define VMPI_LOCK_NO_STEAL UINT32_MAX

/* Parameters; vmpi_lock_params_default() fills in the documented defaults.
 * Zero in any numeric field also means "the default". */
typedef struct vmpi_lock_params {
    vmpi_park_mode park;  /* default VMPI_PARK_FUTEX */
    uint32_t spin_max;    /* spark: fixed spin budget; oticket: MAX (budget of
                             the waiter at distance 1); mcs: spin budget.
                             Iterations of a pause loop. Default 4096 */
    uint32_t cutoff;      /* oticket: distances >= cutoff get far_spin.
                             Default 4 */
    uint32_t far_spin;    /* oticket: budget beyond the cut-off. Default 64 */
    uint32_t wake_n;      /* oticket: waiters woken per unlock (N). Default 4 */
    uint32_t time_cap_ns; /* oticket: no spin phase lasts longer. Default
                             20000 (20 us) */
    uint32_t steal_ns;    /* oticket: how long the queue's head lets others
                             take the free lock before it claims a hand-off.
                             Default 1000000 (1 ms); VMPI_LOCK_NO_STEAL:
                             strict FIFO, nobody passes a queued waiter */
    uint32_t steal_spin;  /* oticket: polls of a held lock by an arriving
                             thread before it queues. Default 256 */
    uint32_t backoff_min; /* tas: first back-off, pause iterations. Def. 4 */
    uint32_t backoff_max; /* tas: back-off ceiling. Default 1024 */
    uint32_t backoff_unit;/* pticket: pauses per unit of distance. Def. 64 */
} vmpi_lock_params;

VMPI_LOCK_API void vmpi_lock_params_default(vmpi_lock_params *p);

/* ---- test-and-set with exponential back-off ------------------------------
 * Layout (64 bytes, one cache line): word (0 free, 1 held) at offset 0,
 * back-off bounds at 4 and 8, padding. */
typedef struct vmpi_tas_lock {
    _Atomic uint32_t word;
    uint32_t backoff_min, backoff_max;
    char pad_[VMPI_LOCK_CACHELINE - 12];
} __attribute__((aligned(VMPI_LOCK_CACHELINE))) vmpi_tas_lock;
static_assert(sizeof(vmpi_tas_lock) == 64, "vmpi_tas_lock layout");

VMPI_LOCK_API void vmpi_tas_init(vmpi_tas_lock *l, const vmpi_lock_params *p);
VMPI_LOCK_API void vmpi_tas_lock_acquire(vmpi_tas_lock *l);
VMPI_LOCK_API int vmpi_tas_trylock(vmpi_tas_lock *l); /* 1 = acquired */
VMPI_LOCK_API void vmpi_tas_unlock(vmpi_tas_lock *l);

/* ---- ticket and proportional-back-off ticket ----------------------------
 * Layout (128 bytes, two cache lines): line 0: next (next ticket to hand
 * out), backoff_unit (pticket only); line 1: owner (ticket being served).
 * Lock free iff next == owner; both wrap modulo 2^32. */
typedef struct vmpi_ticket_lock {
    _Atomic uint32_t next;
    uint32_t backoff_unit;
    char pad0_[VMPI_LOCK_CACHELINE - 8];
    _Atomic uint32_t owner;
    char pad1_[VMPI_LOCK_CACHELINE - 4];
} __attribute__((aligned(VMPI_LOCK_CACHELINE))) vmpi_ticket_lock;
static_assert(sizeof(vmpi_ticket_lock) == 128, "vmpi_ticket_lock layout");

VMPI_LOCK_API void vmpi_ticket_init(vmpi_ticket_lock *l, const vmpi_lock_params *p);
VMPI_LOCK_API void vmpi_ticket_lock_acquire(vmpi_ticket_lock *l);
VMPI_LOCK_API int vmpi_ticket_trylock(vmpi_ticket_lock *l);
VMPI_LOCK_API void vmpi_ticket_unlock(vmpi_ticket_lock *l);

/* pticket uses the same struct; waiter at distance d pauses d*backoff_unit
 * iterations between polls of owner. */
VMPI_LOCK_API void vmpi_pticket_init(vmpi_ticket_lock *l, const vmpi_lock_params *p);
VMPI_LOCK_API void vmpi_pticket_lock_acquire(vmpi_ticket_lock *l);
VMPI_LOCK_API int vmpi_pticket_trylock(vmpi_ticket_lock *l);
VMPI_LOCK_API void vmpi_pticket_unlock(vmpi_ticket_lock *l);

/* ---- parking ticket locks: spark and oticket ------------------------------
 * Layout (256 + 64*VMPI_TICKET_SLOTS = 4352 bytes), one line per role so
 * that no word another thread writes shares a line with what is read on
 * every step:
 *   line 0 (offset 0):   the parameters (read-only after init)
 *   line 1 (offset 64):  next ticket to hand out
 *   line 2 (offset 128): owner: for spark the ticket being served (free iff
 *                        next == owner); for oticket the ticket at the head
 *                        of the queue (no waiter iff next == owner)
 *   line 3 (offset 192): oticket only: state (bit 0 held, bit 1 hand-off
 *                        claimed by the queue's head), then wake_pending
 *                        (set by a holder that came through the queue, so
 *                        its unlock wakes the next N; on the line the
 *                        holder owns anyway). The running threads hammer
 *                        this line; the queue polls owner
 *   offset 256 + 64*i:   slot i, for tickets t with t % SLOTS == i:
 *                        seq (futex word, bumped by each wake of the slot),
 *                        parked (nonzero while a waiter parks there; the
 *                        waker clears it).
 * In yield mode the slots are unused. */
typedef struct vmpi_ticket_slot {
    _Atomic uint32_t seq;
    _Atomic uint32_t parked;
    char pad_[VMPI_LOCK_CACHELINE - 8];
} vmpi_ticket_slot;
static_assert(sizeof(vmpi_ticket_slot) == 64, "vmpi_ticket_slot layout");

typedef struct vmpi_park_ticket_lock {
    uint32_t park;        /* vmpi_park_mode */
    uint32_t spin_max, cutoff, far_spin, wake_n, time_cap_ns, steal_ns, steal_spin;
    char pad0_[VMPI_LOCK_CACHELINE - 32];
    _Atomic uint32_t next;
    char pad1_[VMPI_LOCK_CACHELINE - 4];
    _Atomic uint32_t owner;
    char pad2_[VMPI_LOCK_CACHELINE - 4];
    _Atomic uint32_t state;
    _Atomic uint32_t wake_pending;
    char pad3_[VMPI_LOCK_CACHELINE - 8];
    vmpi_ticket_slot slot[VMPI_TICKET_SLOTS];
} __attribute__((aligned(VMPI_LOCK_CACHELINE))) vmpi_park_ticket_lock;
static_assert(sizeof(vmpi_park_ticket_lock) == 256 + 64 * VMPI_TICKET_SLOTS,
              "vmpi_park_ticket_lock layout");
static_assert(offsetof(vmpi_park_ticket_lock, next) == 64, "next offset");
static_assert(offsetof(vmpi_park_ticket_lock, owner) == 128, "owner offset");
static_assert(offsetof(vmpi_park_ticket_lock, state) == 192, "state offset");
static_assert(offsetof(vmpi_park_ticket_lock, slot) == 256, "slot offset");

/* Park rounds of this process: each time a waiter of a spark or oticket
 * lock parked (futex wait) or backed off (yield, sleep). vmpi shows it as
 * the MPI_T performance variable vmpi_lock_parks. */
extern VMPI_LOCK_API _Atomic uint64_t vmpi_lock_parks;

VMPI_LOCK_API void vmpi_spark_init(vmpi_park_ticket_lock *l, const vmpi_lock_params *p);
VMPI_LOCK_API void vmpi_spark_lock_acquire(vmpi_park_ticket_lock *l);
VMPI_LOCK_API int vmpi_spark_trylock(vmpi_park_ticket_lock *l);
VMPI_LOCK_API void vmpi_spark_unlock(vmpi_park_ticket_lock *l);

VMPI_LOCK_API void vmpi_oticket_init(vmpi_park_ticket_lock *l, const vmpi_lock_params *p);
VMPI_LOCK_API void vmpi_oticket_lock_acquire(vmpi_park_ticket_lock *l);
/* Takes the lock iff it is free and, with stealing, no hand-off is claimed;
 * strictly FIFO (VMPI_LOCK_NO_STEAL), only if no waiter is queued. */
VMPI_LOCK_API int vmpi_oticket_trylock(vmpi_park_ticket_lock *l);
VMPI_LOCK_API void vmpi_oticket_unlock(vmpi_park_ticket_lock *l);
/* Acquire while the caller keeps doing other work: wherever the waiter
 * would park, it calls poll(arg) and then backs off as in yield mode
 * (whatever the lock's park mode), so a waiter never sleeps in the kernel.
 * vmpi's MPI windows use these to keep MPI progress going while a rank
 * waits for a window lock (rma/). */
typedef void (*vmpi_lock_poll_fn)(void *arg);
VMPI_LOCK_API void vmpi_spark_lock_acquire_poll(vmpi_park_ticket_lock *l,
                                                vmpi_lock_poll_fn poll, void *arg);
VMPI_LOCK_API void vmpi_oticket_lock_acquire_poll(vmpi_park_ticket_lock *l,
                                                  vmpi_lock_poll_fn poll, void *arg);

/* ---- MCS -------------------------------------------------------------------
 * Layout (64 + 64*VMPI_MCS_MAX_SLOTS = 8256 bytes):
 *   line 0: tail (slot+1 of the last queued node, 0 = free), park mode,
 *           spin budget
 *   offset 64 + 64*i: node of slot i: next (slot+1 of the successor, 0 =
 *           none yet), locked (1 while waiting; the futex word), parked.
 * A slot identifies one caller: no two concurrent acquirers may use the
 * same slot; up to VMPI_MCS_MAX_SLOTS contenders. */
typedef struct vmpi_mcs_node {
    _Atomic uint32_t next;
    _Atomic uint32_t locked;
    _Atomic uint32_t parked;
    char pad_[VMPI_LOCK_CACHELINE - 12];
} vmpi_mcs_node;
static_assert(sizeof(vmpi_mcs_node) == 64, "vmpi_mcs_node layout");

typedef struct vmpi_mcs_lock {
    _Atomic uint32_t tail;
    uint32_t park, spin_max;
    char pad_[VMPI_LOCK_CACHELINE - 12];
    vmpi_mcs_node node[VMPI_MCS_MAX_SLOTS];
} __attribute__((aligned(VMPI_LOCK_CACHELINE))) vmpi_mcs_lock;
static_assert(sizeof(vmpi_mcs_lock) == 64 + 64 * VMPI_MCS_MAX_SLOTS,
              "vmpi_mcs_lock layout");

VMPI_LOCK_API void vmpi_mcs_init(vmpi_mcs_lock *l, const vmpi_lock_params *p);
VMPI_LOCK_API void vmpi_mcs_lock_acquire(vmpi_mcs_lock *l, unsigned slot);
VMPI_LOCK_API int vmpi_mcs_trylock(vmpi_mcs_lock *l, unsigned slot);
VMPI_LOCK_API void vmpi_mcs_unlock(vmpi_mcs_lock *l, unsigned slot);

/* ---- pthread mutex (baseline) ----------------------------------------------
 * Layout (64 bytes): a pthread_mutex_t with PTHREAD_PROCESS_SHARED at
 * offset 0 (glibc x86-64: 40 bytes), padding. Only valid between processes
 * sharing one kernel (it is futex based): not across VMs. */
typedef struct vmpi_mutex_lock {
    union {
        pthread_mutex_t m;
        char pad_[VMPI_LOCK_CACHELINE];
    } u;
} __attribute__((aligned(VMPI_LOCK_CACHELINE))) vmpi_mutex_lock;
static_assert(sizeof(vmpi_mutex_lock) == 64, "vmpi_mutex_lock layout");

VMPI_LOCK_API int vmpi_mutex_init(vmpi_mutex_lock *l, const vmpi_lock_params *p);
VMPI_LOCK_API void vmpi_mutex_lock_acquire(vmpi_mutex_lock *l);
VMPI_LOCK_API int vmpi_mutex_trylock(vmpi_mutex_lock *l);
VMPI_LOCK_API void vmpi_mutex_unlock(vmpi_mutex_lock *l);

/* ---- generic interface ------------------------------------------------------
 * A vmpi_lock is a 64-byte header (kind at offset 0) followed by the lock of
 * that kind at offset 64; vmpi_lock_bytes(kind) is the total size. Used by
 * lockbench and the tests to treat every kind alike. `slot` is only used by
 * mcs (ignored otherwise). */
typedef enum {
    VMPI_LOCK_TAS,
    VMPI_LOCK_TICKET,
    VMPI_LOCK_PTICKET,
    VMPI_LOCK_SPARK,
    VMPI_LOCK_OTICKET,
    VMPI_LOCK_MCS,
    VMPI_LOCK_MUTEX,
    VMPI_LOCK_NKINDS
} vmpi_lock_kind;

typedef struct vmpi_lock {
    uint32_t kind;
    char pad_[VMPI_LOCK_CACHELINE - 4];
} __attribute__((aligned(VMPI_LOCK_CACHELINE))) vmpi_lock;
static_assert(sizeof(vmpi_lock) == 64, "vmpi_lock header");

VMPI_LOCK_API const char *vmpi_lock_kind_name(vmpi_lock_kind k);
/* Returns -1 for an unknown name. */
VMPI_LOCK_API int vmpi_lock_kind_parse(const char *name);
VMPI_LOCK_API size_t vmpi_lock_bytes(vmpi_lock_kind k);
/* mem: vmpi_lock_bytes(k) bytes, 64-byte aligned. 0 on success. */
VMPI_LOCK_API int vmpi_lock_init(vmpi_lock *l, vmpi_lock_kind k, const vmpi_lock_params *p);
VMPI_LOCK_API void vmpi_lock_acquire(vmpi_lock *l, unsigned slot);
VMPI_LOCK_API int vmpi_lock_try(vmpi_lock *l, unsigned slot);
VMPI_LOCK_API void vmpi_lock_release(vmpi_lock *l, unsigned slot);

#ifdef __cplusplus
}
#endif
#endif
