/* Process-shared locks: see include/vmpi/lock.h for layouts and semantics. */
#include "vmpi/lock.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield" ::: "memory")
#else
#define cpu_relax() __asm__ __volatile__("" ::: "memory")
#endif

#define rlx memory_order_relaxed
#define acq memory_order_acquire
#define rel memory_order_release
#define sc memory_order_seq_cst

/* ---- helpers --------------------------------------------------------------- */

/* Shared (not FUTEX_PRIVATE) operations: waiters may be in other processes. */
/* timeout_ns 0: no timeout. */
static void futex_wait(_Atomic uint32_t *w, uint32_t val, uint64_t timeout_ns)
{
    struct timespec ts = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT, val, timeout_ns ? &ts : NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *w, int n)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE, n, NULL, NULL, 0);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void pause_n(uint32_t n)
{
    while (n--)
        cpu_relax();
}

/* Yield-mode back-off: the first rounds only sched_yield, then sleep
 * 1 us, 2 us, ... up to 64 us. `round` counts consecutive park rounds. */
static void yield_backoff(unsigned round)
{
    if (round < 4) {
        sched_yield();
        return;
    }
    unsigned sh = round - 4;
    if (sh > 6)
        sh = 6;
    struct timespec ts = {0, 1000L << sh};
    nanosleep(&ts, NULL);
}

void vmpi_lock_params_default(vmpi_lock_params *p)
{
    p->park = VMPI_PARK_FUTEX;
    p->spin_max = 4096;
    p->cutoff = 4;
    p->far_spin = 64;
    p->wake_n = 4;
    p->time_cap_ns = 20000;
    p->steal_ns = 1000000;
    p->steal_spin = 256;
    p->backoff_min = 4;
    p->backoff_max = 1024;
    p->backoff_unit = 64;
}

/* Copy of *p with zero fields replaced by the defaults (p may be NULL). */
static vmpi_lock_params resolve(const vmpi_lock_params *p)
{
    vmpi_lock_params d;
    vmpi_lock_params_default(&d);
    if (!p)
        return d;
    vmpi_lock_params r = *p;
    if (r.park != VMPI_PARK_YIELD)
        r.park = VMPI_PARK_FUTEX;
#define DEF(f) if (!r.f) r.f = d.f
    DEF(spin_max);
    DEF(cutoff);
    DEF(far_spin);
    DEF(wake_n);
    DEF(time_cap_ns);
    DEF(steal_ns);
    DEF(steal_spin);
    DEF(backoff_min);
    DEF(backoff_max);
    DEF(backoff_unit);
#undef DEF
    if (r.backoff_max < r.backoff_min)
        r.backoff_max = r.backoff_min;
    return r;
}

/* ---- TAS ------------------------------------------------------------------- */

void vmpi_tas_init(vmpi_tas_lock *l, const vmpi_lock_params *p)
{
    vmpi_lock_params r = resolve(p);
    memset(l, 0, sizeof *l);
    l->backoff_min = r.backoff_min;
    l->backoff_max = r.backoff_max;
    atomic_store_explicit(&l->word, 0, rel);
}

void vmpi_tas_lock_acquire(vmpi_tas_lock *l)
{
    uint32_t b = l->backoff_min;
    for (;;) {
        if (atomic_load_explicit(&l->word, rlx) == 0 &&
            atomic_exchange_explicit(&l->word, 1, acq) == 0)
            return;
        pause_n(b);
        b = b * 2 > l->backoff_max ? l->backoff_max : b * 2;
    }
}

int vmpi_tas_trylock(vmpi_tas_lock *l)
{
    return atomic_load_explicit(&l->word, rlx) == 0 &&
           atomic_exchange_explicit(&l->word, 1, acq) == 0;
}

void vmpi_tas_unlock(vmpi_tas_lock *l)
{
    atomic_store_explicit(&l->word, 0, rel);
}

/* ---- ticket / pticket ------------------------------------------------------ */

void vmpi_ticket_init(vmpi_ticket_lock *l, const vmpi_lock_params *p)
{
    vmpi_lock_params r = resolve(p);
    memset(l, 0, sizeof *l);
    l->backoff_unit = r.backoff_unit;
    atomic_store_explicit(&l->owner, 0, rlx);
    atomic_store_explicit(&l->next, 0, rel);
}

void vmpi_ticket_lock_acquire(vmpi_ticket_lock *l)
{
    uint32_t t = atomic_fetch_add_explicit(&l->next, 1, rlx);
    while (atomic_load_explicit(&l->owner, acq) != t)
        cpu_relax();
}

/* Free iff owner == next; taking ticket `next` by CAS then makes us owner:
 * owner cannot move past next, and only the holder moves owner. */
int vmpi_ticket_trylock(vmpi_ticket_lock *l)
{
    uint32_t o = atomic_load_explicit(&l->owner, acq);
    uint32_t n = o;
    return atomic_compare_exchange_strong_explicit(&l->next, &n, o + 1, acq, rlx);
}

void vmpi_ticket_unlock(vmpi_ticket_lock *l)
{
    uint32_t o = atomic_load_explicit(&l->owner, rlx);
    atomic_store_explicit(&l->owner, o + 1, rel);
}

void vmpi_pticket_init(vmpi_ticket_lock *l, const vmpi_lock_params *p)
{
    vmpi_ticket_init(l, p);
}

void vmpi_pticket_lock_acquire(vmpi_ticket_lock *l)
{
    uint32_t t = atomic_fetch_add_explicit(&l->next, 1, rlx);
    for (;;) {
        uint32_t o = atomic_load_explicit(&l->owner, acq);
        if (o == t)
            return;
        pause_n((t - o) * l->backoff_unit);
    }
}

int vmpi_pticket_trylock(vmpi_ticket_lock *l) { return vmpi_ticket_trylock(l); }
void vmpi_pticket_unlock(vmpi_ticket_lock *l) { vmpi_ticket_unlock(l); }

/* ---- parking ticket locks ----------------------------------------------------
 *
 * Futex protocol for ticket t on slot s = slot[t % SLOTS], waiting for a
 * condition C on one word (spark and a queued oticket waiter: owner == t;
 * oticket's queue head: state not held):
 *   waiter:  parked++ (sc); v = seq; if C (sc): done;
 *            if parked (sc) != 0: futex_wait(&seq, v); re-check.
 *   waker:   make C true (sc); if exchange(parked, 0) (sc) != 0: seq++,
 *            futex_wake(&seq, all on that slot).
 * Both sides write then read with seq_cst, so either the waker sees the
 * waiter's parked count, or the waiter sees C. If the waiter read seq
 * before the waker's bump the wait returns at once. The waker clears
 * parked, so later wakers of the same slot skip the system call until
 * the waiter parks again; a wake may come before C holds (the early
 * wake-ups of the opportunistic lock), so a waiter that finds parked
 * cleared under it returns rather than sleep on a seq it may have read
 * after the bump. A waiter never takes its count back: it could not tell
 * its own from that of a sleeper on an aliasing ticket (t +- SLOTS), and
 * taking that one would hide the sleeper from its waker. A count left by a
 * waiter that did not sleep, timed out or was interrupted costs the next
 * waker of that slot one needless FUTEX_WAKE. Only the holders of tickets
 * congruent to t modulo SLOTS sleep on that word, so a wake never reaches
 * all waiters (unless there are > SLOTS of them). */

static void ptl_init(vmpi_park_ticket_lock *l, const vmpi_lock_params *p)
{
    vmpi_lock_params r = resolve(p);
    memset(l, 0, sizeof *l);
    l->park = r.park;
    l->spin_max = r.spin_max;
    l->cutoff = r.cutoff;
    l->far_spin = r.far_spin;
    l->wake_n = r.wake_n;
    if (l->wake_n > VMPI_TICKET_SLOTS)
        l->wake_n = VMPI_TICKET_SLOTS;
    l->time_cap_ns = r.time_cap_ns;
    l->steal_ns = r.steal_ns;
    l->steal_spin = r.steal_spin;
    atomic_store_explicit(&l->owner, 0, rlx);
    atomic_store_explicit(&l->next, 0, sc);
}

/* Park ticket t until possibly woken (or timeout_ns passed, 0: no limit),
 * unless (*w & mask) == want already; returns when the caller should
 * re-check (spurious returns are allowed). With a poll function the
 * waiter polls and backs off instead of sleeping in the kernel. */
static void ptl_park(vmpi_park_ticket_lock *l, uint32_t t, unsigned round,
                     vmpi_lock_poll_fn poll, void *arg,
                     _Atomic uint32_t *w, uint32_t mask, uint32_t want, uint64_t timeout_ns)
{
    atomic_fetch_add_explicit(&vmpi_lock_parks, 1, rlx);
    if (poll) {
        poll(arg);
        yield_backoff(round);
        return;
    }
    if (l->park == VMPI_PARK_YIELD) {
        yield_backoff(round);
        return;
    }
    vmpi_ticket_slot *s = &l->slot[t % VMPI_TICKET_SLOTS];
    atomic_fetch_add_explicit(&s->parked, 1, sc);
    uint32_t v = atomic_load_explicit(&s->seq, sc);
    /* A waker that cleared parked after our increment has bumped, or is
     * about to bump, seq: if it read seq after the bump our wait would
     * miss it, so return to re-check instead. */
    if ((atomic_load_explicit(w, sc) & mask) != want &&
        atomic_load_explicit(&s->parked, sc) != 0)
        futex_wait(&s->seq, v, timeout_ns);
}

static void ptl_wake(vmpi_park_ticket_lock *l, uint32_t u)
{
    vmpi_ticket_slot *s = &l->slot[u % VMPI_TICKET_SLOTS];
    if (atomic_load_explicit(&s->parked, sc) != 0 &&
        atomic_exchange_explicit(&s->parked, 0, sc) != 0) {
        atomic_fetch_add_explicit(&s->seq, 1, sc);
        futex_wake(&s->seq, INT_MAX);
    }
}

void vmpi_spark_init(vmpi_park_ticket_lock *l, const vmpi_lock_params *p)
{
    ptl_init(l, p);
}

static void spark_acquire(vmpi_park_ticket_lock *l, vmpi_lock_poll_fn poll, void *arg)
{
    uint32_t t = atomic_fetch_add_explicit(&l->next, 1, rlx);
    for (unsigned round = 0;; round++) {
        for (uint32_t i = 0; i < l->spin_max; i++) {
            if (atomic_load_explicit(&l->owner, acq) == t)
                return;
            cpu_relax();
        }
        if (atomic_load_explicit(&l->owner, acq) == t)
            return;
        ptl_park(l, t, round, poll, arg, &l->owner, UINT32_MAX, t, 0);
    }
}

void vmpi_spark_lock_acquire(vmpi_park_ticket_lock *l) { spark_acquire(l, NULL, NULL); }

void vmpi_spark_lock_acquire_poll(vmpi_park_ticket_lock *l, vmpi_lock_poll_fn poll, void *arg)
{
    spark_acquire(l, poll, arg);
}

/* Free iff owner == next; taking ticket `next` by CAS then makes us owner:
 * owner cannot move past next, and only the holder moves owner. */
int vmpi_spark_trylock(vmpi_park_ticket_lock *l)
{
    uint32_t o = atomic_load_explicit(&l->owner, acq);
    uint32_t n = o;
    return atomic_compare_exchange_strong_explicit(&l->next, &n, o + 1, acq, rlx);
}

void vmpi_spark_unlock(vmpi_park_ticket_lock *l)
{
    uint32_t o = atomic_load_explicit(&l->owner, rlx) + 1;
    atomic_store_explicit(&l->owner, o, sc);
    if (l->park != VMPI_PARK_YIELD) /* as ptl_park decides */
        ptl_wake(l, o);
}

/* ---- opportunistic ticket ------------------------------------------------------
 *
 * The lock itself is the state word (held, hand-off claimed); the tickets
 * order the threads that could not take it at once. Only the queue's head
 * (ticket == owner) competes for the state word; when it wins it advances
 * owner, and its unlock wakes the new head and the N - 1 behind it. */

enum { OT_HELD = 1, OT_HANDOFF = 2 };

void vmpi_oticket_init(vmpi_park_ticket_lock *l, const vmpi_lock_params *p)
{
    ptl_init(l, p);
    atomic_store_explicit(&l->state, 0, sc);
}

static int ot_steals(const vmpi_park_ticket_lock *l)
{
    return l->steal_ns != VMPI_LOCK_NO_STEAL;
}

/* Spin budget at distance d from the lock (the queue's head is at 1). */
static uint32_t ot_budget(const vmpi_park_ticket_lock *l, uint32_t d)
{
    if (d >= l->cutoff || d - 1 >= 32)
        return l->far_spin;
    uint32_t b = l->spin_max >> (d - 1);
    return b ? b : 1;
}

/* Wait in the queue until ticket t is its head. */
static void ot_queue_wait(vmpi_park_ticket_lock *l, uint32_t t, vmpi_lock_poll_fn poll,
                          void *arg)
{
    uint32_t best = UINT32_MAX; /* smallest distance seen, to reset the back-off */
    for (unsigned round = 0;; round++) {
        /* Spin phase: the budget follows the current distance; the
         * phase as a whole is capped at time_cap_ns, counted from the
         * first clock read (after 64 polls: short waits read no clock). */
        uint64_t t0 = 0;
        uint32_t spun = 0;
        for (;;) {
            uint32_t o = atomic_load_explicit(&l->owner, acq);
            if (o == t)
                return;
            uint32_t d = t - o + 1;
            if (d < best) {
                best = d;
                round = 0;
            }
            if (spun >= ot_budget(l, d))
                break;
            cpu_relax();
            /* Every 64 polls: enforce the time cap, and give the core
             * away once, so that a runnable holder (or the head) on this
             * core is not kept off it. */
            if ((++spun & 63) == 0) {
                uint64_t now = now_ns();
                if (!t0)
                    t0 = now;
                else if (now - t0 >= l->time_cap_ns)
                    break;
                sched_yield();
            }
        }
        ptl_park(l, t, round, poll, arg, &l->owner, UINT32_MAX, t, 0);
    }
}

/* The head's claim of the hand-off, due steal_ns after *since (set by the
 * first call). Returns the time left until it is due; 0 once claimed (or
 * when the lock never steals, *claimed set from the start). */
static uint64_t ot_claim(vmpi_park_ticket_lock *l, uint64_t now, uint64_t *since, int *claimed)
{
    if (*claimed)
        return 0;
    if (!*since)
        *since = now;
    if (now - *since < l->steal_ns)
        return l->steal_ns - (now - *since);
    atomic_fetch_or_explicit(&l->state, OT_HANDOFF, rlx);
    *claimed = 1;
    return 0;
}

/* As the queue's head, take the state word; claim the hand-off once
 * others have been allowed to steal for steal_ns. Times count from the
 * first clock read, after 64 polls, so that a short wait reads none. */
static void ot_head_wait(vmpi_park_ticket_lock *l, uint32_t t, vmpi_lock_poll_fn poll,
                         void *arg)
{
    uint64_t since = 0;
    int claimed = !ot_steals(l);
    for (unsigned round = 0;; round++) {
        uint64_t t0 = 0;
        for (uint32_t spun = 0;;) {
            uint32_t s = atomic_load_explicit(&l->state, rlx);
            if (!(s & OT_HELD)) {
                if (atomic_compare_exchange_weak_explicit(&l->state, &s, OT_HELD, acq, rlx))
                    return;
                continue;
            }
            if (spun >= l->spin_max)
                break;
            cpu_relax();
            if ((++spun & 63) == 0) {
                uint64_t now = now_ns();
                ot_claim(l, now, &since, &claimed);
                if (!t0)
                    t0 = now;
                if (now - t0 >= l->time_cap_ns)
                    break;
            }
        }
        /* A head that has not claimed yet parks no longer than its claim
         * is due (nobody wakes it for that). */
        uint64_t left = ot_claim(l, now_ns(), &since, &claimed);
        ptl_park(l, t, round, poll, arg, &l->state, OT_HELD, 0, left);
    }
}

static void oticket_acquire(vmpi_park_ticket_lock *l, vmpi_lock_poll_fn poll, void *arg)
{
    if (ot_steals(l)) {
        for (uint32_t i = 0;; i++) {
            uint32_t s = atomic_load_explicit(&l->state, rlx);
            if (s == 0 &&
                atomic_compare_exchange_weak_explicit(&l->state, &s, OT_HELD, acq, rlx))
                return;
            if ((s & OT_HANDOFF) || i >= l->steal_spin)
                break;
            cpu_relax();
        }
    }
    uint32_t t = atomic_fetch_add_explicit(&l->next, 1, rlx);
    ot_queue_wait(l, t, poll, arg);
    ot_head_wait(l, t, poll, arg);
    /* Leave the queue: the next ticket becomes the head (seq_cst: it may be
     * parking on owner, see the protocol above). */
    atomic_store_explicit(&l->owner, t + 1, sc);
    atomic_store_explicit(&l->wake_pending, 1, rlx);
}

void vmpi_oticket_lock_acquire(vmpi_park_ticket_lock *l) { oticket_acquire(l, NULL, NULL); }

void vmpi_oticket_lock_acquire_poll(vmpi_park_ticket_lock *l, vmpi_lock_poll_fn poll, void *arg)
{
    oticket_acquire(l, poll, arg);
}

int vmpi_oticket_trylock(vmpi_park_ticket_lock *l)
{
    if (!ot_steals(l) &&
        atomic_load_explicit(&l->next, acq) != atomic_load_explicit(&l->owner, acq))
        return 0;
    uint32_t s = 0;
    return atomic_compare_exchange_strong_explicit(&l->state, &s, OT_HELD, acq, rlx);
}

void vmpi_oticket_unlock(vmpi_park_ticket_lock *l)
{
    /* wake_pending belongs to the holder: read and clear it before release. */
    uint32_t pending = atomic_load_explicit(&l->wake_pending, rlx);
    if (pending)
        atomic_store_explicit(&l->wake_pending, 0, rlx);
    atomic_fetch_and_explicit(&l->state, ~(uint32_t)OT_HELD, sc);
    if (l->park == VMPI_PARK_YIELD) /* as ptl_park decides */
        return;
    /* The head may be parked on the state word: always check its slot.
     * After a hand-off through the queue also wake the tickets behind it,
     * up to N in all (a slot nobody parked on costs one read of a line
     * that is rarely written: cheaper than reading next to count the
     * waiters). The count is clamped locally: the words may come from
     * another VM. */
    uint32_t o = atomic_load_explicit(&l->owner, sc);
    uint32_t k = 1;
    if (pending) {
        uint32_t n = l->wake_n;
        k = n < 1 ? 1 : n > VMPI_TICKET_SLOTS ? VMPI_TICKET_SLOTS : n;
    }
    for (uint32_t i = 0; i < k; i++)
        ptl_wake(l, o + i);
}

/* ---- MCS -------------------------------------------------------------------- */

void vmpi_mcs_init(vmpi_mcs_lock *l, const vmpi_lock_params *p)
{
    vmpi_lock_params r = resolve(p);
    memset(l, 0, sizeof *l);
    l->park = r.park;
    l->spin_max = r.spin_max;
    atomic_store_explicit(&l->tail, 0, sc);
}

/* Wait for `*w` to become 0 (spin, then park). Protocol as for tickets:
 * waiter parked=1 (sc), check, wait; releaser stores 0 (sc), reads parked. */
static void mcs_wait(const vmpi_mcs_lock *l, vmpi_mcs_node *me)
{
    for (unsigned round = 0;; round++) {
        for (uint32_t i = 0; i < l->spin_max; i++) {
            if (atomic_load_explicit(&me->locked, acq) == 0)
                return;
            cpu_relax();
        }
        if (l->park == VMPI_PARK_YIELD) {
            if (atomic_load_explicit(&me->locked, acq) == 0)
                return;
            yield_backoff(round);
            continue;
        }
        atomic_store_explicit(&me->parked, 1, sc);
        if (atomic_load_explicit(&me->locked, sc) != 0)
            futex_wait(&me->locked, 1, 0);
        atomic_store_explicit(&me->parked, 0, rlx);
    }
}

void vmpi_mcs_lock_acquire(vmpi_mcs_lock *l, unsigned slot)
{
    vmpi_mcs_node *me = &l->node[slot];
    atomic_store_explicit(&me->next, 0, rlx);
    atomic_store_explicit(&me->locked, 1, rlx);
    uint32_t prev = atomic_exchange_explicit(&l->tail, slot + 1, memory_order_acq_rel);
    if (prev == 0)
        return;
    atomic_store_explicit(&l->node[prev - 1].next, slot + 1, rel);
    mcs_wait(l, me);
}

int vmpi_mcs_trylock(vmpi_mcs_lock *l, unsigned slot)
{
    vmpi_mcs_node *me = &l->node[slot];
    atomic_store_explicit(&me->next, 0, rlx);
    atomic_store_explicit(&me->locked, 1, rlx);
    uint32_t exp = 0;
    return atomic_compare_exchange_strong_explicit(&l->tail, &exp, slot + 1,
                                                   memory_order_acq_rel, rlx);
}

void vmpi_mcs_unlock(vmpi_mcs_lock *l, unsigned slot)
{
    vmpi_mcs_node *me = &l->node[slot];
    uint32_t succ = atomic_load_explicit(&me->next, acq);
    if (succ == 0) {
        uint32_t exp = slot + 1;
        if (atomic_compare_exchange_strong_explicit(&l->tail, &exp, 0, rel, rlx))
            return;
        /* A successor swapped itself in but has not linked yet; it may be
         * preempted, so do not spin forever on a core it needs. */
        for (unsigned i = 0; (succ = atomic_load_explicit(&me->next, acq)) == 0; i++) {
            if (i < 1024)
                cpu_relax();
            else
                sched_yield();
        }
    }
    vmpi_mcs_node *s = &l->node[succ - 1];
    atomic_store_explicit(&s->locked, 0, sc);
    if (l->park == VMPI_PARK_FUTEX && atomic_load_explicit(&s->parked, sc))
        futex_wake(&s->locked, 1);
}

/* ---- pthread mutex ------------------------------------------------------------ */

int vmpi_mutex_init(vmpi_mutex_lock *l, const vmpi_lock_params *p)
{
    (void)p;
    memset(l, 0, sizeof *l);
    pthread_mutexattr_t a;
    int rc = pthread_mutexattr_init(&a);
    if (!rc)
        rc = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    if (!rc)
        rc = pthread_mutex_init(&l->u.m, &a);
    pthread_mutexattr_destroy(&a);
    return rc;
}

void vmpi_mutex_lock_acquire(vmpi_mutex_lock *l) { pthread_mutex_lock(&l->u.m); }
int vmpi_mutex_trylock(vmpi_mutex_lock *l) { return pthread_mutex_trylock(&l->u.m) == 0; }
void vmpi_mutex_unlock(vmpi_mutex_lock *l) { pthread_mutex_unlock(&l->u.m); }

/* ---- generic interface ---------------------------------------------------------- */

static const char *const kind_names[VMPI_LOCK_NKINDS] = {
    "tas", "ticket", "pticket", "spark", "oticket", "mcs", "mutex",
};

const char *vmpi_lock_kind_name(vmpi_lock_kind k)
{
    return (unsigned)k < VMPI_LOCK_NKINDS ? kind_names[k] : "?";
}

int vmpi_lock_kind_parse(const char *name)
{
    for (int k = 0; k < VMPI_LOCK_NKINDS; k++)
        if (strcmp(name, kind_names[k]) == 0)
            return k;
    return -1;
}

size_t vmpi_lock_bytes(vmpi_lock_kind k)
{
    size_t body = 0;
    switch (k) {
    case VMPI_LOCK_TAS: body = sizeof(vmpi_tas_lock); break;
    case VMPI_LOCK_TICKET:
    case VMPI_LOCK_PTICKET: body = sizeof(vmpi_ticket_lock); break;
    case VMPI_LOCK_SPARK:
    case VMPI_LOCK_OTICKET: body = sizeof(vmpi_park_ticket_lock); break;
    case VMPI_LOCK_MCS: body = sizeof(vmpi_mcs_lock); break;
    case VMPI_LOCK_MUTEX: body = sizeof(vmpi_mutex_lock); break;
    default: return 0;
    }
    return sizeof(vmpi_lock) + body;
}

#define BODY(l) ((void *)((char *)(l) + sizeof(vmpi_lock)))

int vmpi_lock_init(vmpi_lock *l, vmpi_lock_kind k, const vmpi_lock_params *p)
{
    void *b = BODY(l);
    switch (k) {
    case VMPI_LOCK_TAS: vmpi_tas_init(b, p); break;
    case VMPI_LOCK_TICKET: vmpi_ticket_init(b, p); break;
    case VMPI_LOCK_PTICKET: vmpi_pticket_init(b, p); break;
    case VMPI_LOCK_SPARK: vmpi_spark_init(b, p); break;
    case VMPI_LOCK_OTICKET: vmpi_oticket_init(b, p); break;
    case VMPI_LOCK_MCS: vmpi_mcs_init(b, p); break;
    case VMPI_LOCK_MUTEX:
        if (vmpi_mutex_init(b, p))
            return -1;
        break;
    default: return -1;
    }
    memset(l, 0, sizeof *l);
    l->kind = k;
    return 0;
}

void vmpi_lock_acquire(vmpi_lock *l, unsigned slot)
{
    void *b = BODY(l);
    switch (l->kind) {
    case VMPI_LOCK_TAS: vmpi_tas_lock_acquire(b); break;
    case VMPI_LOCK_TICKET: vmpi_ticket_lock_acquire(b); break;
    case VMPI_LOCK_PTICKET: vmpi_pticket_lock_acquire(b); break;
    case VMPI_LOCK_SPARK: vmpi_spark_lock_acquire(b); break;
    case VMPI_LOCK_OTICKET: vmpi_oticket_lock_acquire(b); break;
    case VMPI_LOCK_MCS: vmpi_mcs_lock_acquire(b, slot); break;
    case VMPI_LOCK_MUTEX: vmpi_mutex_lock_acquire(b); break;
    }
}

int vmpi_lock_try(vmpi_lock *l, unsigned slot)
{
    void *b = BODY(l);
    switch (l->kind) {
    case VMPI_LOCK_TAS: return vmpi_tas_trylock(b);
    case VMPI_LOCK_TICKET: return vmpi_ticket_trylock(b);
    case VMPI_LOCK_PTICKET: return vmpi_pticket_trylock(b);
    case VMPI_LOCK_SPARK: return vmpi_spark_trylock(b);
    case VMPI_LOCK_OTICKET: return vmpi_oticket_trylock(b);
    case VMPI_LOCK_MCS: return vmpi_mcs_trylock(b, slot);
    case VMPI_LOCK_MUTEX: return vmpi_mutex_trylock(b);
    }
    return 0;
}

void vmpi_lock_release(vmpi_lock *l, unsigned slot)
{
    void *b = BODY(l);
    switch (l->kind) {
    case VMPI_LOCK_TAS: vmpi_tas_unlock(b); break;
    case VMPI_LOCK_TICKET: vmpi_ticket_unlock(b); break;
    case VMPI_LOCK_PTICKET: vmpi_pticket_unlock(b); break;
    case VMPI_LOCK_SPARK: vmpi_spark_unlock(b); break;
    case VMPI_LOCK_OTICKET: vmpi_oticket_unlock(b); break;
    case VMPI_LOCK_MCS: vmpi_mcs_unlock(b, slot); break;
    case VMPI_LOCK_MUTEX: vmpi_mutex_unlock(b); break;
    }
}
