/* np: 2 */
/* vms: v2 */
/* When a waiting thread gives its processor away under MPI_THREAD_MULTIPLE
 * (core/thread.c, vmpi_cs_sched_yield; counted by vmpi_thread_yields):
 * - a worker thread that waits alone, after the main thread has called
 *   MPI, stops yielding after a few yields: its rate of messages must not
 *   pay a system call every few polls for a thread that is not there;
 * - while another thread of the rank keeps taking the lock, the waiter
 *   keeps yielding for it.
 * Rank 1 sends each message WAIT_MS after the barrier, so rank 0's waiter
 * polls for that long. Needs the computed yield setting: skipped with a
 * message when VMPI_YIELD_POLLS is set or ranks outnumber processors. */
#define _POSIX_C_SOURCE 200809L
#include "t_mpit_util.h"
#include "t_threads.h"

#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS 300

static MPI_Comm comm;
static atomic_int waiting;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void *waiter(void *arg)
{
    (void)arg;
    int v = 0;
    atomic_store(&waiting, 1);
    OK(MPI_Recv(&v, 1, MPI_INT, 1, 7, comm, MPI_STATUS_IGNORE));
    CHECK(v == 42, "received %d", v);
    atomic_store(&waiting, 0);
    return NULL;
}

/* Takes the library's lock every millisecond while the waiter waits. */
static void *prober(void *arg)
{
    (void)arg;
    while (!atomic_load(&waiting))
        sleep_ms(1);
    while (atomic_load(&waiting)) {
        int flag;
        OK(MPI_Iprobe(1, 99, comm, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "no message has tag 99");
        sleep_ms(1);
    }
    return NULL;
}

static void *both(void *arg)
{
    return (intptr_t)arg == 0 ? waiter(NULL) : prober(NULL);
}

/* Rank 0's yields during one round: `threads` 1 (the waiter alone) or 2
 * (waiter and prober). */
static unsigned long long round_of(int rank, int threads, MPI_T_pvar_session s,
                                   MPI_T_pvar_handle h)
{
    OK(MPI_Barrier(comm));
    unsigned long long before = rank == 0 ? t_read(s, h) : 0;
    if (rank == 0) {
        t_run_threads(both, threads);
    } else {
        int v = 42;
        sleep_ms(WAIT_MS);
        OK(MPI_Send(&v, 1, MPI_INT, 0, 7, comm));
    }
    return rank == 0 ? t_read(s, h) - before : 0;
}

int main(int argc, char **argv)
{
    t_threads_init(&argc, &argv);
    int rank, skip;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    skip = getenv("VMPI_YIELD_POLLS") != NULL || ncpu < 2;
    if (skip) {
        if (rank == 0)
            printf("t_thread_yield: skipped: needs the computed VMPI_YIELD_POLLS and 2 "
                   "processors (have %ld)\n",
                   ncpu);
        OK(MPI_Comm_free(&comm));
        OK(MPI_Finalize());
        return 0;
    }
    MPI_T_pvar_session s;
    int prov;
    OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &prov));
    OK(MPI_T_pvar_session_create(&s));
    MPI_T_pvar_handle h = t_started(s, "vmpi_thread_yields");

    /* The first round makes the worker the second thread in MPI. */
    round_of(rank, 1, s, h);
    unsigned long long alone = round_of(rank, 1, s, h);
    unsigned long long shared = round_of(rank, 2, s, h);
    if (rank == 0) {
        printf("t_thread_yield: %d ms alone: %llu yields; with a thread that takes the lock "
               "every ms: %llu\n",
               WAIT_MS, alone, shared);
        /* Alone: 16 yields, then none (a few more if the runtime's own
         * threads count as hand-overs). Shared: about one round of yields
         * per millisecond of the other thread. */
        CHECK(alone <= 40, "a thread waiting alone yielded %llu times in %d ms", alone, WAIT_MS);
        CHECK(shared >= 100, "a waiter yielded only %llu times while another thread took the "
                             "lock every ms for %d ms",
              shared, WAIT_MS);
    }
    OK(MPI_T_pvar_handle_free(s, &h));
    OK(MPI_T_pvar_session_free(&s));
    OK(MPI_T_finalize());
    OK(MPI_Comm_free(&comm));
    OK(MPI_Finalize());
    return 0;
}
