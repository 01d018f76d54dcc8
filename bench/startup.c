/* Start-up: from entering main before MPI_Init to leaving the first
 * MPI_Barrier, the last rank's end minus the first rank's start (wall
 * clock: the ranks share one machine), printed as "ranks milliseconds".
 * The launcher's own time before main is not in it. */
#include "bench_mpi.h"

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
    bench_mpi_version(argc, argv);
    if (argc > 1) {
        int help = !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help");
        fprintf(help ? stdout : stderr, "usage: startup (no options; under a launcher)\n"
                "prints the job's ranks and the time from the first rank entering main to\n"
                "the last leaving the first MPI_Barrier, in milliseconds\n");
        return help ? 0 : 2;
    }
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
