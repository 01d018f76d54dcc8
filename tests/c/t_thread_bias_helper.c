/* np: 2 */
/* The MPI_THREAD_MULTIPLE lock's bias never moves to a thread while the
 * asynchronous progress helper runs, not even when the call in which the
 * move comes due is the call that starts the helper (core/thread.c decides
 * the move as the call ends). Rank 0's worker thread, alone in MPI, makes
 * exactly the calls that bring the move due on its 2048th: 1024 calls, a
 * pause longer than the 20 ms a move needs, 1023 more, and then an
 * MPI_Bsend of 1 MiB, which starts the helper to move it. The bias must not
 * have moved by the end of that call (vmpi_thread_bias_moves, read at once;
 * before the fix it moved, and the owner then ran without the lock beside
 * the helper; a move later, once the helper has stopped, is allowed), and
 * non-blocking Allreduces with a user operation, which the helper may
 * apply, give the right sums. Run under ThreadSanitizer by make test-tsan
 * (t_thread_*). */
#define _GNU_SOURCE
#include "t_mpit_util.h"
#include "t_threads.h"

#include <linux/membarrier.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { BIG = 1 << 20, ROUNDS = 2000 };

static char *big;
static MPI_Op op;
static MPI_T_pvar_session s;
static MPI_T_pvar_handle h;
static unsigned long long before, moves; /* moves: by the end of the MPI_Bsend */

static void sum_longs(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((long *)inout)[i] += ((const long *)in)[i];
}

static void allreduces(int rank)
{
    for (int i = 0; i < ROUNDS; i++) {
        long v[2] = {i + rank, 1}, s[2] = {-1, -1};
        MPI_Request q;
        OK(MPI_Iallreduce(v, s, 2, MPI_LONG, op, MPI_COMM_WORLD, &q));
        OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        CHECK(s[0] == 2L * i + 1 && s[1] == 2, "round %d: sums %ld %ld", i, s[0], s[1]);
    }
}

static void *worker(void *arg)
{
    (void)arg;
    int r;
    /* The first call takes the lock from the initial thread: its run
     * starts there; the lock looks at the run every 1024 calls. */
    for (int call = 0; call < 2048; call++) {
        OK(MPI_Comm_rank(MPI_COMM_WORLD, &r));
        if (call == 1024) {
            struct timespec ts = {0, 30 * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    OK(MPI_Bsend(big, BIG, MPI_CHAR, 1, 5, MPI_COMM_WORLD));
    moves = t_read(s, h) - before;
    allreduces(0);
    return NULL;
}

int main(int argc, char **argv)
{
    t_threads_init(&argc, &argv);
    int rank, prov;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    big = calloc(1, BIG);
    int bytes = BIG + MPI_BSEND_OVERHEAD;
    void *buf = malloc((size_t)bytes);
    CHECK(big && buf, "out of memory");
    OK(MPI_Buffer_attach(buf, bytes));
    OK(MPI_Op_create(sum_longs, 1, &op));
    OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &prov));
    OK(MPI_T_pvar_session_create(&s));
    h = t_counter(s, "thread", "bias_moves");
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        before = t_read(s, h);
        pthread_t th;
        CHECK(pthread_create(&th, NULL, worker, NULL) == 0, "pthread_create");
        pthread_join(th, NULL);
        long q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
        const char *off = getenv("VMPI_THREAD_BIAS");
        if (q >= 0 && (q & MEMBARRIER_CMD_PRIVATE_EXPEDITED) && !(off && !strcmp(off, "0")))
            CHECK(moves == 0, "the bias moved %llu time(s) in the call that started the progress "
                  "helper", moves);
        printf("t_thread_bias_helper: %llu bias move(s), %d rounds\n", moves, ROUNDS);
    } else {
        OK(MPI_Recv(big, BIG, MPI_CHAR, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        allreduces(1);
    }
    OK(MPI_Buffer_detach(&buf, &bytes));
    free(buf);
    free(big);
    OK(MPI_Op_free(&op));
    OK(MPI_T_pvar_handle_free(s, &h));
    OK(MPI_T_pvar_session_free(&s));
    OK(MPI_T_finalize());
    OK(MPI_Finalize());
    return 0;
}
