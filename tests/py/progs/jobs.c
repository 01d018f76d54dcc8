/* MPI helper program for tests/py/test_mpi_jobs.py: one behaviour per mode.
 *
 *   jobs MODE
 *
 * Every rank prints "rank R pid P job J" first (J is VMPI_JOB_ID, "-" when
 * not set), then:
 *   pingpong        1000 round trips 0 <-> 1 with checked payloads, then
 *                   rank 0 prints "pingpong ok N SUM"
 *   segv            ping-pong; rank 1 dies of SIGSEGV after 200 round trips
 *                   (it prints "crash T", T = CLOCK_MONOTONIC seconds, first)
 *   loop            prints "ready", then ping-pongs forever
 *   exit3           rank 1 exits with code 3 without MPI_Finalize; rank 0
 *                   waits in MPI_Recv for a message that never comes
 *   abort7          rank 1 calls MPI_Abort(MPI_COMM_WORLD, 7); rank 0 waits
 *   badrank         rank 0 calls MPI_Send to rank 99 (default error handler:
 *                   MPI_ERRORS_ARE_FATAL); rank 1 waits in MPI_Recv
 *   before_init     calls MPI_Send before MPI_Init
 *   after_finalize  calls MPI_Send after MPI_Finalize
 *   bad_level       calls MPI_Init_thread with required level 7
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank, size;

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void hello(void)
{
    const char *job = getenv("VMPI_JOB_ID");
    printf("rank %d pid %ld job %s\n", rank, (long)getpid(), job && *job ? job : "-");
    fflush(stdout);
}

static void fail(const char *what)
{
    fprintf(stderr, "jobs: rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* One round trip of a 64-int message; returns the value that came back. */
static long round_trip(long i)
{
    int buf[64];
    MPI_Status st;
    if (rank == 0) {
        for (int k = 0; k < 64; k++)
            buf[k] = (int)(i * 64 + k);
        MPI_Send(buf, 64, MPI_INT, 1, 1, MPI_COMM_WORLD);
        MPI_Recv(buf, 64, MPI_INT, 1, 2, MPI_COMM_WORLD, &st);
        for (int k = 0; k < 64; k++)
            if (buf[k] != (int)(i * 64 + k) + 1)
                fail("ping-pong payload corrupted");
        return buf[63];
    }
    if (rank == 1) {
        MPI_Recv(buf, 64, MPI_INT, 0, 1, MPI_COMM_WORLD, &st);
        for (int k = 0; k < 64; k++)
            buf[k]++;
        MPI_Send(buf, 64, MPI_INT, 0, 2, MPI_COMM_WORLD);
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int x = 42;
    if (!strcmp(mode, "before_init")) {
        MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        printf("MPI_Send before MPI_Init returned\n");
        return 0;
    }
    if (!strcmp(mode, "bad_level")) {
        int provided;
        MPI_Init_thread(&argc, &argv, 7, &provided);
        printf("MPI_Init_thread with level 7 returned\n");
        return 0;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    hello();
    if (!strcmp(mode, "after_finalize")) {
        MPI_Finalize();
        MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        printf("MPI_Send after MPI_Finalize returned\n");
        return 0;
    }
    if (size < 2)
        fail("needs at least 2 ranks");
    if (!strcmp(mode, "pingpong")) {
        long sum = 0;
        for (long i = 0; i < 1000; i++)
            sum += round_trip(i);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            printf("pingpong ok %d %ld\n", 1000, sum);
    } else if (!strcmp(mode, "segv")) {
        for (long i = 0;; i++) {
            if (rank == 1 && i == 200) {
                printf("crash %.6f\n", mono());
                fflush(stdout);
                volatile int *p = NULL;
                *p = 1; /* a real segmentation fault */
                raise(SIGSEGV);
            }
            round_trip(i);
        }
    } else if (!strcmp(mode, "loop")) {
        MPI_Barrier(MPI_COMM_WORLD);
        printf("ready %d\n", rank);
        fflush(stdout);
        for (long i = 0;; i++)
            round_trip(i);
    } else if (!strcmp(mode, "bigloop")) {
        /* 4 MiB messages back and forth (rendezvous), forever. */
        size_t n = 4u << 20;
        char *big = malloc(n);
        if (!big)
            fail("out of memory");
        memset(big, rank, n);
        MPI_Barrier(MPI_COMM_WORLD);
        printf("ready %d\n", rank);
        fflush(stdout);
        for (;;) {
            if (rank == 0) {
                MPI_Send(big, (int)n, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
                MPI_Recv(big, (int)n, MPI_BYTE, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(big, (int)n, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(big, (int)n, MPI_BYTE, 0, 6, MPI_COMM_WORLD);
            }
        }
    } else if (!strcmp(mode, "exit3")) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1)
            exit(3);
        MPI_Recv(&x, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (!strcmp(mode, "abort7")) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1)
            MPI_Abort(MPI_COMM_WORLD, 7);
        MPI_Recv(&x, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (!strcmp(mode, "badrank")) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            MPI_Send(&x, 1, MPI_INT, 99, 0, MPI_COMM_WORLD);
            printf("MPI_Send to rank 99 returned\n");
            fflush(stdout);
        }
        MPI_Recv(&x, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        fail("unknown mode");
    }
    MPI_Finalize();
    return 0;
}
