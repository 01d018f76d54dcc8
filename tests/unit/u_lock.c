/* The process-shared locks (include/vmpi/lock.h), every kind in both parking
 * modes (the opportunistic one also strictly FIFO): mutual exclusion under
 * contention with 16 threads (2 cores) and with forked processes on a
 * MAP_SHARED lock, trylock semantics, that each of 32 threads gets the
 * lock within a bounded time, and that nobody passes a waiter that has
 * claimed the hand-off. */
#include "vmpi/lock.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;
static const char *ctx = "";
#define EXPECT(cond, ...)                                                      \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "u_lock: %s:%d: [%s] ", __FILE__, __LINE__, ctx);  \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            failures++;                                                        \
        }                                                                      \
    } while (0)

enum { NTHREADS = 16, NPROCS = 4, NSTARVE = 32 };

/* Shared state: the lock and the counter live in one MAP_SHARED mapping so
 * the process test sees the same memory. */
struct shared {
    volatile long counter;   /* incremented non-atomically in the section */
    _Atomic int inside;      /* occupancy: must be 0 on entry */
    _Atomic int overlaps;    /* entries that found someone inside */
    char pad[64];
};

static struct shared *sh;
static vmpi_lock *lk;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The critical section: read, a little work, write back. Without mutual
 * exclusion updates are lost and `inside` sees overlaps. */
static void critical(void)
{
    if (atomic_fetch_add_explicit(&sh->inside, 1, memory_order_relaxed) != 0)
        atomic_fetch_add_explicit(&sh->overlaps, 1, memory_order_relaxed);
    long v = sh->counter;
    for (volatile int i = 0; i < 20; i++)
        ;
    sh->counter = v + 1;
    atomic_fetch_sub_explicit(&sh->inside, 1, memory_order_relaxed);
}

struct warg {
    unsigned slot;
    long iters;
};

static void *hammer(void *p)
{
    struct warg *a = p;
    for (long i = 0; i < a->iters; i++) {
        vmpi_lock_acquire(lk, a->slot);
        critical();
        vmpi_lock_release(lk, a->slot);
    }
    return NULL;
}

/* Pure spin locks hand over slowly when 16 threads share 2 cores (the next
 * holder is often not running): fewer iterations keep the test short. */
static long iters_for(vmpi_lock_kind k)
{
    switch (k) {
    case VMPI_LOCK_TICKET:
    case VMPI_LOCK_PTICKET: return 60;
    case VMPI_LOCK_TAS: return 1000;
    default: return 3000;
    }
}

static void reset_shared(void)
{
    sh->counter = 0;
    atomic_store(&sh->inside, 0);
    atomic_store(&sh->overlaps, 0);
}

static void test_threads(vmpi_lock_kind k)
{
    reset_shared();
    long it = iters_for(k);
    pthread_t th[NTHREADS];
    struct warg a[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        a[i] = (struct warg){(unsigned)i, it};
        EXPECT(pthread_create(&th[i], NULL, hammer, &a[i]) == 0, "pthread_create");
    }
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    EXPECT(sh->counter == NTHREADS * it, "threads: counter %ld, want %ld",
           sh->counter, NTHREADS * it);
    EXPECT(atomic_load(&sh->overlaps) == 0, "threads: %d overlapping entries",
           atomic_load(&sh->overlaps));
}

static void test_procs(vmpi_lock_kind k)
{
    reset_shared();
    long it = iters_for(k);
    pid_t pid[NPROCS];
    for (int i = 0; i < NPROCS; i++) {
        pid[i] = fork();
        if (pid[i] == 0) {
            /* Two threads per process: slots 2i and 2i+1. */
            struct warg a[2] = {{(unsigned)(2 * i), it}, {(unsigned)(2 * i + 1), it}};
            pthread_t t;
            if (pthread_create(&t, NULL, hammer, &a[1]) != 0)
                _exit(2);
            hammer(&a[0]);
            pthread_join(t, NULL);
            _exit(0);
        }
        EXPECT(pid[i] > 0, "fork failed");
    }
    for (int i = 0; i < NPROCS; i++) {
        int st = 0;
        if (pid[i] <= 0)
            continue;
        EXPECT(waitpid(pid[i], &st, 0) == pid[i], "waitpid");
        EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child %d status %#x", i, st);
    }
    EXPECT(sh->counter == 2 * NPROCS * it, "procs: counter %ld, want %ld",
           sh->counter, 2 * NPROCS * it);
    EXPECT(atomic_load(&sh->overlaps) == 0, "procs: %d overlapping entries",
           atomic_load(&sh->overlaps));
}

struct harg {
    vmpi_lock *l;
    int held_result, free_result;
};

/* Another thread tries while the main thread holds the lock, then again
 * after the main thread released it. */
static _Atomic int phase;
static void *tryer(void *p)
{
    struct harg *h = p;
    while (atomic_load(&phase) != 1)
        ;
    h->held_result = vmpi_lock_try(h->l, 1);
    if (h->held_result)
        vmpi_lock_release(h->l, 1);
    atomic_store(&phase, 2);
    while (atomic_load(&phase) != 3)
        ;
    h->free_result = vmpi_lock_try(h->l, 1);
    if (h->free_result)
        vmpi_lock_release(h->l, 1);
    atomic_store(&phase, 4);
    return NULL;
}

static void test_trylock(vmpi_lock_kind k)
{
    EXPECT(vmpi_lock_try(lk, 0) == 1, "trylock on a free lock failed");
    EXPECT(vmpi_lock_try(lk, 1) == 0, "trylock succeeded while held (same thread)");
    vmpi_lock_release(lk, 0);
    EXPECT(vmpi_lock_try(lk, 2) == 1, "trylock after release failed");
    vmpi_lock_release(lk, 2);

    struct harg h = {lk, -1, -1};
    pthread_t t;
    atomic_store(&phase, 0);
    EXPECT(pthread_create(&t, NULL, tryer, &h) == 0, "pthread_create");
    vmpi_lock_acquire(lk, 0);
    atomic_store(&phase, 1);
    while (atomic_load(&phase) != 2)
        ;
    vmpi_lock_release(lk, 0);
    atomic_store(&phase, 3);
    while (atomic_load(&phase) != 4)
        ;
    pthread_join(t, NULL);
    EXPECT(h.held_result == 0, "trylock from another thread succeeded while held");
    EXPECT(h.free_result == 1, "trylock from another thread failed on a free lock");
    /* The lock must still work normally afterwards. */
    vmpi_lock_acquire(lk, 3);
    EXPECT(vmpi_lock_try(lk, 4) == 0, "trylock succeeded while held after acquire");
    vmpi_lock_release(lk, 3);
    (void)k;
}

/* No starvation: 32 threads loop on the lock, with a little local work
 * between acquisitions (as real code has; without it an unfair lock is
 * simply re-taken by the thread that just released it, still running and
 * holding the line); each must have acquired the lock at least once before
 * the deadline. The FIFO kinds guarantee it; for tas and mutex (no order)
 * this checks that back-off leaves the others a window. */
static _Atomic int stop;
static _Atomic long got[NSTARVE];
static void *looper(void *p)
{
    unsigned slot = (unsigned)(uintptr_t)p;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        vmpi_lock_acquire(lk, slot);
        critical();
        vmpi_lock_release(lk, slot);
        atomic_fetch_add_explicit(&got[slot], 1, memory_order_relaxed);
        for (volatile int i = 0; i < 500; i++)
            ;
    }
    return NULL;
}

static void test_starvation(vmpi_lock_kind k)
{
    /* The pure spin kinds hand over only when the next waiter happens to
     * be on a core (with 32 spinners that can take a scheduler round of
     * ~100 ms per hand-off), so they get a longer bound; the loop ends as
     * soon as every thread has had the lock. */
    int pure = k == VMPI_LOCK_TAS || k == VMPI_LOCK_TICKET || k == VMPI_LOCK_PTICKET;
    const double limit = pure ? 12.0 : 5.0;
    reset_shared();
    atomic_store(&stop, 0);
    for (int i = 0; i < NSTARVE; i++)
        atomic_store(&got[i], 0);
    pthread_t th[NSTARVE];
    for (int i = 0; i < NSTARVE; i++)
        EXPECT(pthread_create(&th[i], NULL, looper, (void *)(uintptr_t)i) == 0,
               "pthread_create");
    double t0 = now_s();
    int missing = NSTARVE;
    while (now_s() - t0 < limit) {
        missing = 0;
        for (int i = 0; i < NSTARVE; i++)
            missing += atomic_load(&got[i]) == 0;
        if (!missing)
            break;
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < NSTARVE; i++)
        pthread_join(th[i], NULL);
    long total = 0;
    for (int i = 0; i < NSTARVE; i++)
        total += atomic_load(&got[i]);
    EXPECT(missing == 0, "%d of %d threads never acquired within %.1f s", missing,
           NSTARVE, limit);
    EXPECT(sh->counter == total, "starvation run: counter %ld, acquisitions %ld",
           sh->counter, total);
}

static void test_layout(void)
{
    EXPECT(vmpi_lock_bytes(VMPI_LOCK_TAS) == 128, "tas bytes");
    EXPECT(vmpi_lock_bytes(VMPI_LOCK_MCS) == 64 + sizeof(vmpi_mcs_lock), "mcs bytes");
    EXPECT(vmpi_lock_bytes(VMPI_LOCK_NKINDS) == 0, "bad kind bytes");
    EXPECT(vmpi_lock_kind_parse("oticket") == VMPI_LOCK_OTICKET, "parse");
    EXPECT(vmpi_lock_kind_parse("nope") == -1, "parse unknown");
    vmpi_lock_params p;
    memset(&p, 0, sizeof p);
    vmpi_park_ticket_lock *o = aligned_alloc(64, sizeof *o);
    vmpi_oticket_init(o, &p); /* zeros mean defaults */
    EXPECT(o->wake_n == 4 && o->cutoff == 4 && o->spin_max == 4096 &&
               o->time_cap_ns == 20000 && o->far_spin == 64 && o->steal_ns == 1000000 &&
               o->steal_spin == 256,
           "defaults not applied");
    p.wake_n = 2;
    p.park = VMPI_PARK_YIELD;
    vmpi_oticket_init(o, &p);
    EXPECT(o->wake_n == 2 && o->park == VMPI_PARK_YIELD, "params not applied");
    free(o);
}

/* More waiters than the parking ticket locks have slots, so tickets t and
 * t + VMPI_TICKET_SLOTS sleep on one word: rounds in which all NMANY
 * threads queue at once (a barrier, then one acquisition each). A lost
 * wake-up hangs the round; ctest's timeout catches it. */
enum { NMANY = VMPI_TICKET_SLOTS + 16, MANY_ROUNDS = 30 };
static pthread_barrier_t many_bar;

static void *many_worker(void *p)
{
    unsigned slot = (unsigned)(uintptr_t)p;
    for (int r = 0; r < MANY_ROUNDS; r++) {
        pthread_barrier_wait(&many_bar);
        vmpi_lock_acquire(lk, slot);
        critical();
        vmpi_lock_release(lk, slot);
    }
    return NULL;
}

static void test_many(void)
{
    reset_shared();
    pthread_barrier_init(&many_bar, NULL, NMANY);
    pthread_t th[NMANY];
    for (int i = 0; i < NMANY; i++)
        EXPECT(pthread_create(&th[i], NULL, many_worker, (void *)(uintptr_t)i) == 0,
               "pthread_create");
    for (int i = 0; i < NMANY; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&many_bar);
    EXPECT(sh->counter == (long)NMANY * MANY_ROUNDS, "%d waiters: counter %ld, want %ld",
           NMANY, sh->counter, (long)NMANY * MANY_ROUNDS);
}

/* The opportunistic lock's guarantees against stealing, checked through
 * its documented layout. A waiter W queues behind the holder (main). With
 * stealing, W claims the hand-off after steal_ns; from then on nobody else
 * may take the free lock, so main's trylock right after its unlock fails
 * (W holds it, or it is reserved for W). Strictly FIFO, the same holds as
 * soon as W has a ticket. */
struct ot_waiter {
    vmpi_park_ticket_lock *l;
    _Atomic int got;
};

static void *ot_wait(void *p)
{
    struct ot_waiter *w = p;
    vmpi_oticket_lock_acquire(w->l);
    atomic_store(&w->got, 1);
    vmpi_oticket_unlock(w->l);
    return NULL;
}

static void test_oticket_handoff(vmpi_park_mode park, int fifo)
{
    vmpi_lock_params p;
    vmpi_lock_params_default(&p);
    p.park = park;
    p.steal_ns = fifo ? VMPI_LOCK_NO_STEAL : 1000000;
    vmpi_park_ticket_lock *l = aligned_alloc(64, sizeof *l);
    vmpi_oticket_init(l, &p);
    vmpi_oticket_lock_acquire(l);
    struct ot_waiter w = {.l = l};
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, ot_wait, &w) == 0, "pthread_create");
    double t0 = now_s();
    while (now_s() - t0 < 5.0) {
        if (atomic_load(&l->next) != atomic_load(&l->owner) &&
            (fifo || (atomic_load(&l->state) & 2) != 0))
            break;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    if (fifo)
        EXPECT(atomic_load(&l->next) != atomic_load(&l->owner), "waiter never queued");
    else
        EXPECT(atomic_load(&l->state) == 3, "waiter did not claim the hand-off "
               "within 5 s (state %u)", atomic_load(&l->state));
    vmpi_oticket_unlock(l);
    /* Taking it is only wrong before the waiter had it (it cannot get it
     * while we hold it). */
    if (vmpi_oticket_trylock(l)) {
        EXPECT(atomic_load(&w.got), "trylock passed a waiter that %s",
               fifo ? "was queued (strict FIFO)" : "had claimed the hand-off");
        vmpi_oticket_unlock(l);
    }
    pthread_join(t, NULL);
    EXPECT(atomic_load(&w.got), "waiter did not get the lock");
    EXPECT(vmpi_oticket_trylock(l), "lock not free after the waiter left");
    vmpi_oticket_unlock(l);
    free(l);
}

int main(void)
{
    size_t max = 0;
    for (int k = 0; k < VMPI_LOCK_NKINDS; k++)
        if (vmpi_lock_bytes(k) > max)
            max = vmpi_lock_bytes(k);
    void *m = mmap(NULL, sizeof(struct shared) + max + 64, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    lk = m;                                   /* page aligned */
    sh = (struct shared *)((char *)m + ((max + 63) & ~(size_t)63));
    test_layout();

    for (int md = 0; md < 4; md++) {
        ctx = md & 1 ? "oticket hand-off, yield" : "oticket hand-off, futex";
        test_oticket_handoff(md & 1 ? VMPI_PARK_YIELD : VMPI_PARK_FUTEX, md >= 2);
    }

    /* Modes: both parkings, and the opportunistic lock also strictly FIFO. */
    static const char *const modes[] = {"futex", "yield", "futex,fifo", "yield,fifo"};
    char buf[64];
    for (int k = 0; k < VMPI_LOCK_NKINDS; k++) {
        for (int md = 0; md < 4; md++) {
            if (md >= 2 && k != VMPI_LOCK_OTICKET)
                continue;
            snprintf(buf, sizeof buf, "%s/%s", vmpi_lock_kind_name(k), modes[md]);
            ctx = buf;
            vmpi_lock_params p;
            vmpi_lock_params_default(&p);
            p.park = md & 1 ? VMPI_PARK_YIELD : VMPI_PARK_FUTEX;
            if (md >= 2)
                p.steal_ns = VMPI_LOCK_NO_STEAL;
            double t0 = now_s();
            EXPECT(vmpi_lock_init(lk, k, &p) == 0, "init");
            test_trylock(k);
            test_threads(k);
            test_procs(k);
            test_starvation(k);
            if (k == VMPI_LOCK_SPARK || k == VMPI_LOCK_OTICKET)
                test_many();
            printf("u_lock: %-14s %.2f s\n", buf, now_s() - t0);
            fflush(stdout);
        }
    }
    ctx = "";
    if (failures) {
        fprintf(stderr, "u_lock: %d failure(s)\n", failures);
        return 1;
    }
    printf("u_lock: ok\n");
    return 0;
}
