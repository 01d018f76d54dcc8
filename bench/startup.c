/* Start-up: from entering main before MPI_Init to leaving the first
 * MPI_Barrier, the last rank's end minus the first rank's start (wall
 * clock: the ranks share one machine), printed as "ranks milliseconds".
 * The launcher's own time before main is not in it. */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    double t0 = now(), first = 0, last = 0;
    MPI_Init(&argc, &argv);
    MPI_Barrier(MPI_COMM_WORLD);
    double t1 = now();
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Reduce(&t0, &first, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t1, &last, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("# ranks  MPI_Init to the first barrier (ms)\n%d %.1f\n", size,
               (last - first) * 1e3);
    MPI_Finalize();
    return 0;
}
