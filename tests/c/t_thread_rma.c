/* np: 2 4 */
/* vms: v2 v2net */
/* MPI_THREAD_MULTIPLE one-sided communication: T threads per rank.
 * - passive target on one shared window, in one lock_all epoch of the main
 *   thread: every thread puts into its own slots of each target,
 *   accumulates into a common counter and flushes; the targets check every
 *   slot and the count;
 * - active target on one window per thread: fence epochs of all threads
 *   run at once, each on its own window. */
#include "t_threads.h"

#include <stdio.h>

enum { ROUNDS = 20 };
static int rank, size, nthreads;
static MPI_Win shared_win;
static int *shared_mem; /* [0]: counter; then size * nthreads * ROUNDS slots */
static MPI_Win own_win[64];
static int *own_mem[64];

static void *passive(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int k = 0; k < ROUNDS; k++)
        for (int d = 0; d < size; d++) {
            int target = (rank + d) % size, one = 1;
            int v = rank * 1000000 + t * 1000 + k;
            MPI_Aint at = 1 + ((MPI_Aint)rank * nthreads + t) * ROUNDS + k;
            OK(MPI_Put(&v, 1, MPI_INT, target, at, 1, MPI_INT, shared_win));
            OK(MPI_Accumulate(&one, 1, MPI_INT, target, 0, 1, MPI_INT, MPI_SUM, shared_win));
            OK(MPI_Win_flush(target, shared_win));
        }
    return NULL;
}

static void *active(void *arg)
{
    int t = (int)(intptr_t)arg;
    MPI_Win w = own_win[t];
    for (int k = 0; k < ROUNDS; k++) {
        int right = (rank + 1) % size, v = rank * 100 + t + k;
        OK(MPI_Win_fence(0, w));
        OK(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, w));
        OK(MPI_Win_fence(0, w));
        int left = (rank + size - 1) % size;
        CHECK(own_mem[t][0] == left * 100 + t + k, "thread %d round %d got %d", t, k,
              own_mem[t][0]);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    nthreads = t_threads_init(&argc, &argv);
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    MPI_Aint n = 1 + (MPI_Aint)size * nthreads * ROUNDS;
    OK(MPI_Win_allocate(n * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                        &shared_mem, &shared_win));
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, shared_win));
    for (MPI_Aint i = 0; i < n; i++)
        shared_mem[i] = -1;
    shared_mem[0] = 0;
    OK(MPI_Win_unlock(rank, shared_win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Win_lock_all(0, shared_win));
    t_run_threads(passive, nthreads);
    OK(MPI_Win_unlock_all(shared_win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, shared_win));
    CHECK(shared_mem[0] == size * nthreads * ROUNDS, "counter %d, want %d", shared_mem[0],
          size * nthreads * ROUNDS);
    for (int r = 0; r < size; r++)
        for (int t = 0; t < nthreads; t++)
            for (int k = 0; k < ROUNDS; k++) {
                int got = shared_mem[1 + ((MPI_Aint)r * nthreads + t) * ROUNDS + k];
                CHECK(got == r * 1000000 + t * 1000 + k, "slot of rank %d thread %d round %d: %d",
                      r, t, k, got);
            }
    OK(MPI_Win_unlock(rank, shared_win));
    OK(MPI_Win_free(&shared_win));

    for (int t = 0; t < nthreads; t++)
        OK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &own_mem[t],
                            &own_win[t]));
    t_run_threads(active, nthreads);
    for (int t = 0; t < nthreads; t++)
        OK(MPI_Win_free(&own_win[t]));
    OK(MPI_Finalize());
    if (rank == 0)
        printf("t_thread_rma: %d ranks x %d threads OK\n", size, nthreads);
    return 0;
}
