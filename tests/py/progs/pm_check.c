/* MPI helper program for the process-manager tests (test_slurm.py,
 * test_pmix.py): the same binary under vmpirun, Hydra, srun and Open MPI's
 * mpirun.
 *
 *   pm_check check        every rank prints "rank R of N local L" (L: ranks
 *                         in its MPI_COMM_TYPE_SHARED communicator), passes a
 *                         4096-int message around a ring and checks it, then
 *                         allreduces; rank 0 prints "ok N SUM MAX"
 *   pm_check abort CODE   the last rank calls MPI_Abort(MPI_COMM_WORLD, CODE),
 *                         the others wait in MPI_Recv
 *   pm_check exit CODE    the last rank exits with CODE without MPI_Finalize,
 *                         the others wait in MPI_Recv
 *   pm_check spawn N      MPI_Comm_spawn of N copies of itself; every parent
 *                         and child sends its rank to every process of the
 *                         other side and checks what comes back, then the
 *                         merged communicator allreduces; parent rank 0
 *                         prints "spawned N SUM", each child "child R of N"
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING 4096

static int rank, size;

static void fail(const char *what)
{
    fprintf(stderr, "pm_check: rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static void check(void)
{
    MPI_Comm local;
    int nlocal;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    MPI_Comm_size(local, &nlocal);
    MPI_Comm_free(&local);
    printf("rank %d of %d local %d\n", rank, size, nlocal);
    fflush(stdout);

    static int out[RING], in[RING];
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < RING; i++)
        out[i] = rank * RING + i;
    MPI_Sendrecv(out, RING, MPI_INT, right, 1, in, RING, MPI_INT, left, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (int i = 0; i < RING; i++)
        if (in[i] != left * RING + i)
            fail("ring message corrupted");

    long mine = rank + 1, sum = 0;
    int max = -1;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&rank, &max, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (sum != (long)size * (size + 1) / 2 || max != size - 1)
        fail("allreduce gave a wrong result");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("ok %d %ld %d\n", size, sum, max);
}

/* Both sides of the spawn: ranks both ways, then a merge and its sum. */
static void talk(MPI_Comm inter, int parents)
{
    int rsize, v = -1;
    MPI_Comm_remote_size(inter, &rsize);
    for (int r = 0; r < rsize; r++) {
        int mine = 100 * rank + parents;
        MPI_Sendrecv(&mine, 1, MPI_INT, r, 3, &v, 1, MPI_INT, r, 3, inter, MPI_STATUS_IGNORE);
        if (v != 100 * r + !parents)
            fail("a wrong value from the other side of the spawn");
    }
    MPI_Comm merged;
    int n, one = 1, sum = 0;
    MPI_Intercomm_merge(inter, !parents, &merged);
    MPI_Comm_size(merged, &n);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged);
    if (sum != n || n != size + rsize)
        fail("the merged communicator's sum is wrong");
    MPI_Comm_free(&merged);
    if (parents && rank == 0)
        printf("spawned %d %d\n", rsize, sum);
    MPI_Comm_disconnect(&inter);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "check";
    int code = argc > 2 ? atoi(argv[2]) : 0, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        printf("child %d of %d\n", rank, size);
        talk(parent, 0);
    } else if (!strcmp(mode, "spawn")) {
        char *args[] = {"child", NULL};
        MPI_Comm kids;
        int errs[64];
        if (code < 1 || code > 64)
            fail("spawn wants 1..64 children");
        MPI_Comm_spawn(argv[0], args, code, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &kids, errs);
        for (int i = 0; i < code; i++)
            if (errs[i] != MPI_SUCCESS)
                fail("a child did not start");
        talk(kids, 1);
    } else if (!strcmp(mode, "check")) {
        check();
    } else if (!strcmp(mode, "abort") || !strcmp(mode, "exit")) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == size - 1 && mode[0] == 'a')
            MPI_Abort(MPI_COMM_WORLD, code);
        if (rank == size - 1)
            exit(code);
        MPI_Recv(&x, 1, MPI_INT, size - 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        fail("unknown mode");
    }
    MPI_Finalize();
    return 0;
}
