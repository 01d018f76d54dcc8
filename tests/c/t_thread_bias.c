/* np: 2 */
/* vms: v2 */
/* The MPI_THREAD_MULTIPLE lock moves its bias to a thread that uses MPI
 * alone (core/thread.c; counted by vmpi_thread_bias_moves), and a thread
 * that then calls MPI revokes it, also while the owner waits inside a
 * blocking call without the lock:
 * 1. rank 0's worker thread calls MPI_Iprobe for 150 ms while the main
 *    thread waits in pthread_join: the bias moves to it (the counter grows;
 *    not checked where membarrier(2) is missing or VMPI_THREAD_BIAS=0);
 * 2. the worker then waits in MPI_Recv for a message rank 1 sends 100 ms
 *    later, and meanwhile the main thread sends rank 1 a message and takes
 *    its reply: the main thread revokes the bias while the owner waits;
 * 3. both threads then ping-pong at once with rank 1's two threads,
 *    contents checked.
 * Run under ThreadSanitizer by make test-tsan (t_thread_*). */
#define _GNU_SOURCE
#include "t_mpit_util.h"
#include "t_threads.h"

#include <linux/membarrier.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static MPI_Comm comm;
static int rank;
static atomic_int phase;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void *alone(void *arg)
{
    (void)arg;
    long calls = 0;
    for (double t0 = now(); now() - t0 < 0.15; calls++) {
        int flag;
        OK(MPI_Iprobe(1, 99, comm, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "no message has tag 99");
    }
    CHECK(calls > 1000, "only %ld calls in 150 ms", calls);
    return NULL;
}

/* Rank 0's worker: alone in MPI for 150 ms, then waiting in MPI_Recv
 * (tag 1) while the main thread exchanges tag 2 with rank 1. */
static void *worker(void *arg)
{
    alone(arg);
    int v = 0;
    atomic_store(&phase, 1);
    OK(MPI_Recv(&v, 1, MPI_INT, 1, 1, comm, MPI_STATUS_IGNORE));
    CHECK(v == 11, "tag 1: got %d", v);
    return NULL;
}

static void *pingpong(void *arg)
{
    int t = (int)(intptr_t)arg, peer = 1 - rank;
    for (int i = 0; i < 2000; i++) {
        long v = (long)t * 100000 + i, w = -1;
        if (rank == 0) {
            OK(MPI_Send(&v, 1, MPI_LONG, peer, 10 + t, comm));
            OK(MPI_Recv(&w, 1, MPI_LONG, peer, 10 + t, comm, MPI_STATUS_IGNORE));
            CHECK(w == v + 1, "thread %d round %d: got %ld, want %ld", t, i, w, v + 1);
        } else {
            OK(MPI_Recv(&w, 1, MPI_LONG, peer, 10 + t, comm, MPI_STATUS_IGNORE));
            CHECK(w == v, "thread %d round %d: got %ld, want %ld", t, i, w, v);
            w++;
            OK(MPI_Send(&w, 1, MPI_LONG, peer, 10 + t, comm));
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    t_threads_init(&argc, &argv);
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    MPI_T_pvar_session s;
    int prov;
    OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &prov));
    OK(MPI_T_pvar_session_create(&s));
    MPI_T_pvar_handle h = t_started(s, "vmpi_thread_bias_moves");

    /* 1 and 2 */
    OK(MPI_Barrier(comm));
    if (rank == 0) {
        unsigned long long before = t_read(s, h);
        pthread_t th;
        CHECK(pthread_create(&th, NULL, worker, NULL) == 0, "pthread_create");
        while (!atomic_load(&phase))
            sleep_ms(1);
        sleep_ms(20);
        int v = 21, w = 0;
        OK(MPI_Sendrecv(&v, 1, MPI_INT, 1, 2, &w, 1, MPI_INT, 1, 2, comm, MPI_STATUS_IGNORE));
        CHECK(w == 22, "tag 2: got %d", w);
        pthread_join(th, NULL);
        unsigned long long moves = t_read(s, h) - before;
        long q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
        const char *off = getenv("VMPI_THREAD_BIAS");
        if (q < 0 || !(q & MEMBARRIER_CMD_PRIVATE_EXPEDITED) || (off && !strcmp(off, "0")))
            printf("t_thread_bias: no bias here (membarrier or VMPI_THREAD_BIAS=0): the move is "
                   "not checked\n");
        else
            CHECK(moves >= 1, "a thread alone in MPI for 150 ms did not get the bias");
        printf("t_thread_bias: the bias moved %llu time(s) to a thread alone\n", moves);
    } else {
        int v = 0, w;
        OK(MPI_Recv(&v, 1, MPI_INT, 0, 2, comm, MPI_STATUS_IGNORE));
        CHECK(v == 21, "tag 2: got %d", v);
        w = v + 1;
        OK(MPI_Send(&w, 1, MPI_INT, 0, 2, comm));
        sleep_ms(100);
        w = 11;
        OK(MPI_Send(&w, 1, MPI_INT, 0, 1, comm));
    }

    /* 3 */
    OK(MPI_Barrier(comm));
    t_run_threads(pingpong, 2);

    OK(MPI_T_pvar_handle_free(s, &h));
    OK(MPI_T_pvar_session_free(&s));
    OK(MPI_T_finalize());
    OK(MPI_Comm_free(&comm));
    OK(MPI_Finalize());
    if (rank == 0)
        printf("t_thread_bias: OK\n");
    return 0;
}
