/* np: 4 */
/* env: VMPI_IVSHMEM_HEAP=1M */
/* vms: v2 v4 */
/* MPI_Win_allocate of more memory than a rank's slice of the host region
 * holds: that rank's window memory is private and the others reach it by
 * messages, while the ranks whose memory fits keep theirs in the region.
 * Odd ranks ask for 3 MiB (more than the 1 MiB slice), even ranks for
 * 64 KiB. Every rank puts a pattern into every window in a fence epoch,
 * adds to every target's counter under MPI_Win_lock_all, takes tickets
 * with MPI_Fetch_and_op under exclusive locks, and reads it all back. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int rank, size;

#include "t_check.h"

enum { ROUNDS = 50, SLICE = 1024 }; /* bytes each origin writes into each window */

static MPI_Aint bytes_of(int r)
{
    return r % 2 ? (MPI_Aint)3 << 20 : (MPI_Aint)64 << 10;
}

static unsigned char pattern(int origin, int target, MPI_Aint i)
{
    return (unsigned char)(origin * 31 + target * 7 + i * 13 + 1);
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size * SLICE + 2 * (MPI_Aint)sizeof(int64_t) <= bytes_of(0), "too many ranks: %d",
          size);

    unsigned char *base = NULL;
    MPI_Win win;
    MPI_Aint mine = bytes_of(rank);
    OK(MPI_Win_allocate(mine, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    CHECK(base != NULL, "no window memory");
    /* the counters after the slices, the far end of the big windows
     * touched too */
    MPI_Aint sum_at = size * SLICE, ticket_at = sum_at + (MPI_Aint)sizeof(int64_t);
    memset(base, 0, (size_t)(ticket_at + sizeof(int64_t)));
    base[mine - 1] = 0x5a;

    unsigned char out[SLICE];
    OK(MPI_Win_fence(0, win));
    for (int t = 0; t < size; t++) {
        for (MPI_Aint i = 0; i < SLICE; i++)
            out[i] = pattern(rank, t, i);
        OK(MPI_Put(out, SLICE, MPI_BYTE, t, (MPI_Aint)rank * SLICE, SLICE, MPI_BYTE, win));
    }
    OK(MPI_Win_fence(0, win));
    for (int o = 0; o < size; o++)
        for (MPI_Aint i = 0; i < SLICE; i++)
            CHECK(base[o * SLICE + i] == pattern(o, rank, i),
                  "byte %ld from rank %d: %u, want %u", (long)i, o, base[o * SLICE + i],
                  pattern(o, rank, i));
    OK(MPI_Win_fence(0, win));

    OK(MPI_Win_lock_all(0, win));
    for (int k = 0; k < ROUNDS; k++)
        for (int t = 0; t < size; t++) {
            int64_t one = rank + 1;
            OK(MPI_Accumulate(&one, 1, MPI_INT64_T, t, sum_at, 1, MPI_INT64_T, MPI_SUM, win));
        }
    OK(MPI_Win_unlock_all(win));

    int64_t got[ROUNDS];
    for (int k = 0; k < ROUNDS; k++) {
        int t = (rank + k) % size;
        int64_t one = 1;
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        OK(MPI_Fetch_and_op(&one, &got[k], MPI_INT64_T, t, ticket_at, MPI_SUM, win));
        OK(MPI_Win_unlock(t, win));
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));

    /* every target's sum, its tickets and its last byte, read by every rank */
    int64_t want_sum = (int64_t)ROUNDS * size * (size + 1) / 2;
    for (int t = 0; t < size; t++) {
        int64_t sum = -1, tickets = -1;
        unsigned char last = 0, slice[SLICE];
        OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        OK(MPI_Get(&sum, 1, MPI_INT64_T, t, sum_at, 1, MPI_INT64_T, win));
        OK(MPI_Get(&tickets, 1, MPI_INT64_T, t, ticket_at, 1, MPI_INT64_T, win));
        OK(MPI_Get(&last, 1, MPI_BYTE, t, bytes_of(t) - 1, 1, MPI_BYTE, win));
        OK(MPI_Get(slice, SLICE, MPI_BYTE, t, (MPI_Aint)rank * SLICE, SLICE, MPI_BYTE, win));
        OK(MPI_Win_unlock(t, win));
        CHECK(sum == want_sum, "rank %d's sum %lld, want %lld", t, (long long)sum,
              (long long)want_sum);
        CHECK(tickets == ROUNDS, "rank %d handed out %lld tickets, want %d", t,
              (long long)tickets, ROUNDS);
        CHECK(last == 0x5a, "rank %d's last byte %u", t, last);
        for (MPI_Aint i = 0; i < SLICE; i++)
            CHECK(slice[i] == pattern(rank, t, i), "read back byte %ld of rank %d", (long)i, t);
    }
    /* each ticket of a target was handed out once: gather them per target */
    int64_t all[ROUNDS * 64];
    CHECK(size <= 64, "too many ranks");
    OK(MPI_Allgather(got, ROUNDS, MPI_INT64_T, all, ROUNDS, MPI_INT64_T, MPI_COMM_WORLD));
    for (int t = 0; t < size; t++) {
        unsigned char seen[ROUNDS] = {0};
        for (int o = 0; o < size; o++)
            for (int k = 0; k < ROUNDS; k++)
                if ((o + k) % size == t) {
                    int64_t v = all[o * ROUNDS + k];
                    CHECK(v >= 0 && v < ROUNDS && !seen[v], "rank %d's ticket %lld twice or "
                          "out of range", t, (long long)v);
                    seen[v] = 1;
                }
    }
    OK(MPI_Win_free(&win));
    if (rank == 0)
        printf("big windows: %d ranks, odd ranks' memory private\n", size);
    OK(MPI_Finalize());
    return 0;
}
