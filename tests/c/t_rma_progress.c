/* np: 2 3 */
/* vms: v2net */
/* net: ofi h2 */
/* Passive-target progress without MPI calls at the target: rank 0 (the
 * target) spins on its own window memory, making no MPI call, until every
 * other rank's epoch (lock, put, get, accumulate, unlock) has left its mark
 * there. Window memory from malloc (and a dynamic window) is not mapped by
 * the origins, so the operations travel as active messages: only the
 * progress helper (core/async.c) can apply them while the target spins. */
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size;

#include "t_check.h"

enum { N = 16, MARK = 7 };

/* Spins without MPI until element `at` of every origin slot equals want. */
static void spin_until(volatile int *mem, int want, const char *what)
{
    double t0 = MPI_Wtime();
    for (;;) {
        int seen = 0;
        for (int o = 1; o < size; o++)
            seen += mem[o * N] == want;
        if (seen == size - 1) {
            atomic_thread_fence(memory_order_acquire);
            return;
        }
        CHECK(MPI_Wtime() - t0 < 20.0, "%s: only %d of %d origins arrived within 20 s while "
              "the target made no MPI calls", what, seen, size - 1);
    }
}

/* Element i of the target's memory: base + i * unit in the window's
 * displacement units (int units for Win_create, bytes for dynamic). */
static MPI_Aint base, unit;
static MPI_Aint at_(int i) { return base + i * unit; }

static void origin_epoch(MPI_Win win, const char *what)
{
    int v = MARK * rank, got[2] = {-1, -1}, one = 1, old = -1;
    OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    OK(MPI_Put(&v, 1, MPI_INT, 0, at_(rank * N + 1), 1, MPI_INT, win));
    OK(MPI_Win_flush(0, win));
    OK(MPI_Get(got, 2, MPI_INT, 0, at_(rank * N + 1), 2, MPI_INT, win));
    OK(MPI_Win_flush(0, win));
    CHECK(got[0] == v && got[1] == 100 + rank, "%s: got %d %d back, want %d %d", what, got[0],
          got[1], v, 100 + rank);
    OK(MPI_Fetch_and_op(&one, &old, MPI_INT, 0, at_(3), MPI_SUM, win));
    OK(MPI_Win_flush(0, win));
    CHECK(old >= 0 && old < size - 1, "%s: fetched counter %d", what, old);
    /* last: the mark the target waits for */
    int mark = 1;
    OK(MPI_Accumulate(&mark, 1, MPI_INT, 0, at_(rank * N), 1, MPI_INT, MPI_SUM, win));
    OK(MPI_Win_unlock(0, win));
}

static void run(MPI_Win win, int *mem, const char *what)
{
    if (rank == 0) {
        for (int i = 0; i < size * N; i++)
            mem[i] = 0;
        for (int o = 1; o < size; o++)
            mem[o * N + 2] = 100 + o;
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        spin_until(mem, 1, what);
        /* the origins' unlocks returned before the marks' epoch closed */
        for (int o = 1; o < size; o++)
            CHECK(mem[o * N + 1] == MARK * o, "%s: origin %d's put is %d", what, o,
                  mem[o * N + 1]);
        CHECK(mem[3] == size - 1, "%s: counter %d, want %d", what, mem[3], size - 1);
    } else {
        origin_epoch(win, what);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t bytes = (size_t)size * N * sizeof(int);
    int *mem = malloc(bytes);
    CHECK(mem != NULL, "out of memory");

    MPI_Win win;
    OK(MPI_Win_create(mem, rank == 0 ? (MPI_Aint)bytes : 0, sizeof(int), MPI_INFO_NULL,
                      MPI_COMM_WORLD, &win));
    base = 0;
    unit = 1;
    run(win, mem, "Win_create(malloc)");
    OK(MPI_Win_free(&win));

    OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Aint at = 0;
    if (rank == 0) {
        OK(MPI_Win_attach(win, mem, (MPI_Aint)bytes));
        OK(MPI_Get_address(mem, &at));
    }
    OK(MPI_Bcast(&at, 1, MPI_AINT, 0, MPI_COMM_WORLD));
    base = at;
    unit = sizeof(int);
    run(win, mem, "Win_create_dynamic");
    if (rank == 0)
        OK(MPI_Win_detach(win, mem));
    OK(MPI_Win_free(&win));

    free(mem);
    MPI_Finalize();
    if (rank == 0)
        printf("t_rma_progress: ok (np %d)\n", size);
    return 0;
}
