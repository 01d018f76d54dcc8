/* Helper MPI program for the ivshmem region tests (test_ivshmem.py).
 *
 *   ivjob check ITERS   ranks (2k, 2k + 1) exchange ITERS rounds of messages
 *                       of 8 B to 4 MiB both ways, every other round from
 *                       MPI_Alloc_mem buffers, and verify every byte; each
 *                       round also checks an Allreduce and a Bcast of
 *                       64 KiB on MPI_COMM_WORLD; prints "ivjob: rank R OK"
 *                       or ends the job with "data corrupted" and exit
 *                       code 3
 *   ivjob hang          prints "ready" and waits inside MPI_Init'ed job
 *   ivjob shared        prints "shared R SIZE": the size of this rank's
 *                       MPI_COMM_TYPE_SHARED communicator */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned char val(size_t i, int round, int from)
{
    return (unsigned char)(i * 131 + (size_t)round * 17 + (size_t)from * 5 + (i >> 10));
}

static void corrupted(int rank, const char *what, int round, size_t n, size_t i)
{
    fprintf(stderr, "ivjob: rank %d: data corrupted (%s, round %d, %zu bytes, byte %zu)\n", rank,
            what, round, n, i);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* An Allreduce and a Bcast of 64 KiB whose results every rank knows. */
static void check_coll(int rank, int size, int it, int *buf, int *out)
{
    enum { N = 16384 };
    for (int i = 0; i < N; i++)
        buf[i] = i * 7 + it + rank;
    MPI_Allreduce(buf, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < N; i++)
        if (out[i] != size * (i * 7 + it) + size * (size - 1) / 2)
            corrupted(rank, "allreduce", it, sizeof(int) * N, sizeof(int) * (size_t)i);
    for (int i = 0; i < N; i++)
        buf[i] = rank == 0 ? i ^ it : 0;
    MPI_Bcast(buf, N, MPI_INT, 0, MPI_COMM_WORLD);
    for (int i = 0; i < N; i++)
        if (buf[i] != (i ^ it))
            corrupted(rank, "bcast", it, sizeof(int) * N, sizeof(int) * (size_t)i);
}

static void check(int rank, int size, int iters)
{
    static int cbuf[2][16384];
    static const size_t sizes[] = {8, 1000, 8192, 65536, 1 << 20, 4 << 20};
    const size_t max = 4 << 20;
    int peer = rank ^ 1;
    unsigned char *heap[2], *plain[2];
    for (int k = 0; k < 2; k++) {
        if (MPI_Alloc_mem((MPI_Aint)max, MPI_INFO_NULL, &heap[k]) != MPI_SUCCESS ||
            !(plain[k] = malloc(max))) {
            fprintf(stderr, "ivjob: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    for (int it = 0; it < iters; it++) {
        size_t n = sizes[it % 6];
        unsigned char **b = it % 2 ? heap : plain;
        for (int dir = 0; dir < 2; dir++) {
            int sender = (rank & ~1) + dir;
            if (rank == sender) {
                for (size_t i = 0; i < n; i++)
                    b[0][i] = val(i, it, rank);
                MPI_Send(b[0], (int)n, MPI_BYTE, peer, it, MPI_COMM_WORLD);
            } else {
                memset(b[1], 0, n);
                MPI_Recv(b[1], (int)n, MPI_BYTE, peer, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (size_t i = 0; i < n; i++)
                    if (b[1][i] != val(i, it, peer))
                        corrupted(rank, "message", it, n, i);
            }
        }
        check_coll(rank, size, it, cbuf[0], cbuf[1]);
    }
    for (int k = 0; k < 2; k++) {
        MPI_Free_mem(heap[k]);
        free(plain[k]);
    }
    printf("ivjob: rank %d OK\n", rank);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "check") && argc > 2 && size % 2 == 0) {
        check(rank, size, atoi(argv[2]));
    } else if (!strcmp(mode, "hang")) {
        printf("ready\n");
        fflush(stdout);
        for (;;)
            pause();
    } else if (!strcmp(mode, "shared")) {
        MPI_Comm shm;
        int n;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm);
        MPI_Comm_size(shm, &n);
        printf("shared %d %d\n", rank, n);
        MPI_Comm_free(&shm);
    } else {
        fprintf(stderr, "usage: ivjob check ITERS (even ranks) | hang | shared\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Finalize();
    return 0;
}
