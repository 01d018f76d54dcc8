/* np: 2 */
/* vms: v2 */
/* A receive freed before its message arrives still takes it, even when the
 * receiver goes straight to MPI_Finalize: rank 1 posts MPI_Irecv for a
 * rendezvous-sized message, frees the request and finalizes; rank 0 sends
 * late, in a blocking MPI_Send that needs rank 1 to pull the data. The job
 * must end (no hang in Finalize) and rank 1's buffer must hold the message
 * once MPI_Finalize has returned (MPICH's pt2pt/rqfree pattern). */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int rank, size;

#include "t_check.h"

enum { N = 1 << 20 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *buf = malloc(sizeof(int) * N);
    CHECK(buf != NULL, "out of memory");
    for (int i = 0; i < N; i++)
        buf[i] = rank == 0 ? i ^ 0x5a5a : -1;
    if (rank == 1) {
        MPI_Request r;
        OK(MPI_Irecv(buf, N, MPI_INT, 0, 3, MPI_COMM_WORLD, &r));
        OK(MPI_Request_free(&r));
    } else {
        struct timespec late = {0, 200000000};
        nanosleep(&late, NULL);
        OK(MPI_Send(buf, N, MPI_INT, 1, 3, MPI_COMM_WORLD));
    }
    MPI_Finalize();
    if (rank == 1) {
        for (int i = 0; i < N; i++)
            if (buf[i] != (i ^ 0x5a5a)) {
                fprintf(stderr, "rank 1: element %d is %d after MPI_Finalize\n", i, buf[i]);
                return 1;
            }
        printf("t_finalize_freed: ok\n");
    }
    free(buf);
    return 0;
}
