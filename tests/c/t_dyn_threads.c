/* np: 2 */
/* MPI_THREAD_MULTIPLE spawns: two threads per rank each spawn a child on
 * their own duplicate of the world, 32 times over, exchange a message with
 * it and disconnect (MPICH's threads/spawn/th_taskmanager in small). Two
 * spawns at once named their context-id agreements alike (rank 0 leads
 * both sides of every spawn), so the turns could split between them and
 * the job hung after a few spawns (2 runs in 3 at 32 rounds). */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "t_check.h"

enum { THREADS = 2, ROUNDS = 32 };
static MPI_Comm comms[THREADS];
static char *self;

static void *spawner(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int k = 0; k < ROUNDS; k++) {
        MPI_Comm child;
        char *args[] = {"child", NULL};
        OK(MPI_Comm_spawn(self, args, 1, MPI_INFO_NULL, 0, comms[t], &child,
                          MPI_ERRCODES_IGNORE));
        int rsize, rank, v = -1;
        OK(MPI_Comm_remote_size(child, &rsize));
        OK(MPI_Comm_rank(comms[t], &rank));
        CHECK(rsize == 1, "thread %d round %d: %d children", t, k, rsize);
        if (rank == 0) {
            int x = t * 100 + k;
            OK(MPI_Send(&x, 1, MPI_INT, 0, 1, child));
            OK(MPI_Recv(&v, 1, MPI_INT, 0, 2, child, MPI_STATUS_IGNORE));
            CHECK(v == x + 1, "thread %d round %d: child answered %d", t, k, v);
        }
        OK(MPI_Comm_disconnect(&child));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Comm parent;
    OK(MPI_Comm_get_parent(&parent));
    if (parent != MPI_COMM_NULL) {
        int x;
        OK(MPI_Recv(&x, 1, MPI_INT, 0, 1, parent, MPI_STATUS_IGNORE));
        x++;
        OK(MPI_Send(&x, 1, MPI_INT, 0, 2, parent));
        OK(MPI_Comm_disconnect(&parent));
        OK(MPI_Finalize());
        return 0;
    }
    self = argv[0];
    for (int t = 0; t < THREADS; t++)
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        CHECK(pthread_create(&th[t], NULL, spawner, (void *)(intptr_t)t) == 0, "pthread_create");
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < THREADS; t++)
        OK(MPI_Comm_free(&comms[t]));
    int rank;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Finalize());
    if (rank == 0)
        printf("t_dyn_threads: %d spawns from %d threads on 2 ranks OK\n", THREADS * ROUNDS,
               THREADS);
    return 0;
}
