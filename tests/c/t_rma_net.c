/* np: 2 3 */
/* vms: v2net h2v2 */
/* net: h2 */
/* Put and Get where the target is another host (or VM without the region):
 * libfabric writes and reads when the provider offers RMA. Covers what
 * that path must get right and the operation matrix does not stress:
 *  - transfers of several network pieces (larger than the 256 KiB piece
 *    size) in both directions, checked byte for byte;
 *  - a non-contiguous origin (packed for the write) and a non-contiguous
 *    target (served by messages) in one epoch;
 *  - Rput/Rget requests: the Rget data is there once MPI_Wait returns;
 *  - visibility: after MPI_Win_unlock the data is at the target before any
 *    other origin can lock it (ranks pass a token of increasing values by
 *    exclusive lock + put to the next rank, which polls under its own
 *    lock until the value arrives);
 *  - Win_create on user memory, and fence and post/start/complete/wait. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG (700 * 1024) /* bytes: three network pieces */

static int rank, size;

#include "t_check.h"

static unsigned char pat(int who, size_t i, int round)
{
    return (unsigned char)(who * 31 + (int)(i * 7 % 251) + round);
}

static void big_transfers(MPI_Win win, unsigned char *mem)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    unsigned char *src = malloc(BIG), *back = malloc(BIG);
    CHECK(src && back, "out of memory");
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < BIG; i++)
            src[i] = pat(rank, i, round);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
        MPI_Put(src, BIG, MPI_BYTE, right, 0, BIG, MPI_BYTE, win);
        MPI_Win_flush(right, win);
        memset(back, 0, BIG);
        MPI_Get(back, BIG, MPI_BYTE, right, 0, BIG, MPI_BYTE, win);
        MPI_Win_unlock(right, win);
        CHECK(!memcmp(src, back, BIG), "round %d: read back from rank %d differs", round,
              right);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
        for (size_t i = 0; i < BIG; i++)
            CHECK(mem[i] == pat(left, i, round), "round %d: byte %zu from rank %d is %u", round,
                  i, left, mem[i]);
        MPI_Win_unlock(rank, win);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(src);
    free(back);
}

/* Every other int of the origin into a contiguous target range, and a
 * contiguous origin into every third int of the target. */
static void strided(MPI_Win win, int *mem)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    enum { N = 1000 };
    int *src = malloc(2 * N * sizeof *src);
    CHECK(src, "out of memory");
    for (int i = 0; i < 2 * N; i++)
        src[i] = i % 2 ? -1 : rank * 100000 + i / 2;
    MPI_Datatype every2, every3;
    MPI_Type_vector(N, 1, 2, MPI_INT, &every2);
    MPI_Type_vector(N, 1, 3, MPI_INT, &every3);
    MPI_Type_commit(&every2);
    MPI_Type_commit(&every3);
    MPI_Request rq[3];
    int got[N];
    MPI_Win_lock_all(0, win);
    MPI_Rput(src, 1, every2, right, 0, N, MPI_INT, win, &rq[0]);
    MPI_Rput(src, N, MPI_INT, right, N * sizeof(int), 1, every3, win, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    MPI_Win_flush_all(win);
    MPI_Rget(got, N, MPI_INT, right, 0, N, MPI_INT, win, &rq[2]);
    MPI_Wait(&rq[2], MPI_STATUS_IGNORE);
    for (int i = 0; i < N; i++)
        CHECK(got[i] == rank * 100000 + i, "Rget element %d is %d", i, got[i]);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    for (int i = 0; i < N; i++) {
        CHECK(mem[i] == left * 100000 + i, "element %d is %d", i, mem[i]);
        CHECK(mem[N + 3 * i] == (i % 2 ? -1 : left * 100000 + i / 2),
              "strided target element %d is %d", i, mem[N + 3 * i]);
    }
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_free(&every2);
    MPI_Type_free(&every3);
    free(src);
}

/* A token 1..K travels around the ring; each hop is an exclusive lock,
 * a put and an unlock, and the receiver sees it by polling its own
 * memory under a shared lock: unlock must leave the data in place. */
static void token_ring(MPI_Win win, int *mem)
{
    enum { K = 60 };
    int right = (rank + 1) % size;
    if (rank == 0) {
        int one = 1;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
        MPI_Put(&one, 1, MPI_INT, right, 0, 1, MPI_INT, win);
        MPI_Win_unlock(right, win);
    }
    for (int want = rank == 0 ? size : rank; want <= K; want += size) {
        int v;
        do {
            MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
            v = mem[0];
            MPI_Win_unlock(rank, win);
        } while (v < want);
        CHECK(v == want, "token %d where %d was due", v, want);
        int next = v + 1;
        if (next <= K) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
            MPI_Put(&next, 1, MPI_INT, right, 0, 1, MPI_INT, win);
            MPI_Win_unlock(right, win);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void active_target(MPI_Win win, double *mem)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    enum { N = 5000 };
    double src[N], got[N];
    for (int i = 0; i < N; i++)
        src[i] = rank + i / 1000.0;
    MPI_Win_fence(0, win);
    MPI_Put(src, N, MPI_DOUBLE, right, 0, N, MPI_DOUBLE, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        CHECK(mem[i] == left + i / 1000.0, "fence: element %d is %g", i, mem[i]);
    MPI_Get(got, N, MPI_DOUBLE, right, 0, N, MPI_DOUBLE, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        CHECK(got[i] == rank + i / 1000.0, "fence get: element %d is %g", i, got[i]);

    MPI_Group world, to, from;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &right, &to);
    MPI_Group_incl(world, 1, &left, &from);
    for (int i = 0; i < N; i++)
        src[i] = -rank - i;
    MPI_Win_post(from, 0, win);
    MPI_Win_start(to, 0, win);
    MPI_Put(src, N, MPI_DOUBLE, right, N, N, MPI_DOUBLE, win);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    for (int i = 0; i < N; i++)
        CHECK(mem[N + i] == -left - i, "pscw: element %d is %g", i, mem[N + i]);
    MPI_Group_free(&world);
    MPI_Group_free(&to);
    MPI_Group_free(&from);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    unsigned char *mem;
    MPI_Win win;
    MPI_Win_allocate(BIG, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    big_transfers(win, mem);
    memset(mem, 0, BIG);
    MPI_Barrier(MPI_COMM_WORLD);
    strided(win, (int *)(void *)mem);
    memset(mem, 0, BIG);
    MPI_Barrier(MPI_COMM_WORLD);
    token_ring(win, (int *)(void *)mem);
    MPI_Win_free(&win);

    double *user = calloc(10000, sizeof *user);
    CHECK(user, "out of memory");
    MPI_Win_create(user, 10000 * sizeof *user, sizeof *user, MPI_INFO_NULL, MPI_COMM_WORLD,
                   &win);
    active_target(win, user);
    MPI_Win_free(&win);
    free(user);

    if (rank == 0)
        printf("rma over the network: ok\n");
    MPI_Finalize();
    return 0;
}
