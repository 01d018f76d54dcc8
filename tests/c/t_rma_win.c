/* np: 1 2 4 */
/* vms: v2 v4 h2v2 v2net */
/* net: h2 */
/* Windows as objects, and what several origins do to one target at once:
 *  - attributes, group and name of every flavor;
 *  - MPI_Win_allocate_shared on the communicator of ranks that share
 *    memory (all VMs of a host when the host region is on): every rank
 *    stores into its neighbours' segments through MPI_Win_shared_query
 *    pointers, and a flag handshake in the window with MPI_Win_sync;
 *  - on a communicator whose ranks do not all share memory it fails with
 *    MPI_ERR_RMA_SHARED, and with MPI_ERR_NO_MEM when the segments add up
 *    to more than the machine can address;
 *  - MPI_Alloc_mem memory as window memory and as message buffers;
 *  - many origins at once on one target: accumulates (the sum is exact),
 *    fetch-and-add tickets (every value handed out exactly once),
 *    compare-and-swap (one winner per round) and read-modify-write under an
 *    exclusive lock (no update lost), on every window flavor. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#include "t_check.h"

enum { ROUNDS = 200 };

static void check_attrs(MPI_Win win, MPI_Comm comm, void *base, MPI_Aint bytes, int du,
                        int flavor, const char *what)
{
    void *b;
    MPI_Aint *sz;
    int *d, *fl, *model, flag;
    OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag));
    CHECK(flag && b == base, "%s: MPI_WIN_BASE %p, want %p", what, b, base);
    OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag));
    CHECK(flag && *sz == bytes, "%s: MPI_WIN_SIZE %ld, want %ld", what, (long)*sz, (long)bytes);
    OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &d, &flag));
    CHECK(flag && *d == du, "%s: MPI_WIN_DISP_UNIT %d, want %d", what, *d, du);
    OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fl, &flag));
    CHECK(flag && *fl == flavor, "%s: flavor %d, want %d", what, *fl, flavor);
    OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
    CHECK(flag && *model == MPI_WIN_UNIFIED, "%s: model %d, want MPI_WIN_UNIFIED", what, *model);

    MPI_Group wg, cg;
    int cmp;
    OK(MPI_Win_get_group(win, &wg));
    OK(MPI_Comm_group(comm, &cg));
    OK(MPI_Group_compare(wg, cg, &cmp));
    CHECK(cmp == MPI_IDENT, "%s: window group differs from the communicator's", what);
    OK(MPI_Group_free(&wg));
    OK(MPI_Group_free(&cg));

    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    OK(MPI_Win_get_name(win, name, &len));
    CHECK(len == 0 && name[0] == '\0', "%s: a new window is named '%s'", what, name);
    OK(MPI_Win_set_name(win, what));
    OK(MPI_Win_get_name(win, name, &len));
    CHECK(len == (int)strlen(what) && !strcmp(name, what), "%s: name read back as '%s'", what,
          name);
}

/* Many origins, one target (rank 0), on window memory of `n` longs. */
static void contention(MPI_Win win, long *mem, const char *what)
{
    /* slots: 0 sum, 1 ticket counter, 2 CAS round word, 3 locked counter */
    if (rank == 0) {
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        for (int i = 0; i < 4; i++)
            mem[i] = 0;
        OK(MPI_Win_unlock(0, win));
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));

    long *tickets = malloc(ROUNDS * sizeof *tickets);
    CHECK(tickets != NULL, "out of memory");
    int wins = 0;
    OK(MPI_Win_lock_all(0, win));
    for (int r = 0; r < ROUNDS; r++) {
        long v = rank + 1, one = 1;
        OK(MPI_Accumulate(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win));
        OK(MPI_Fetch_and_op(&one, &tickets[r], MPI_LONG, 0, 1, MPI_SUM, win));
        OK(MPI_Win_flush(0, win));
    }
    OK(MPI_Win_unlock_all(win));

    /* compare-and-swap rounds: the round word goes r -> r + 1 exactly once
     * per round, by whichever rank gets there first */
    for (int r = 0; r < ROUNDS / 4; r++) {
        long cmp = r, next = r + 1, old = -1;
        for (;;) {
            OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
            OK(MPI_Compare_and_swap(&next, &cmp, &old, MPI_LONG, 0, 2, win));
            OK(MPI_Win_unlock(0, win));
            CHECK(old >= 0 && old <= ROUNDS / 4, "%s: CAS fetched %ld", what, old);
            if (old >= r)
                break;
        }
        wins += old == r;
    }

    /* read-modify-write under the exclusive lock: get, add, put */
    for (int r = 0; r < ROUNDS / 4; r++) {
        long x = -1;
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        OK(MPI_Get(&x, 1, MPI_LONG, 0, 3, 1, MPI_LONG, win));
        OK(MPI_Win_flush(0, win));
        x++;
        OK(MPI_Put(&x, 1, MPI_LONG, 0, 3, 1, MPI_LONG, win));
        OK(MPI_Win_unlock(0, win));
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));

    long *all = rank == 0 ? malloc((size_t)size * ROUNDS * sizeof *all) : NULL;
    int total_wins = 0;
    OK(MPI_Gather(tickets, ROUNDS, MPI_LONG, all, ROUNDS, MPI_LONG, 0, MPI_COMM_WORLD));
    OK(MPI_Reduce(&wins, &total_wins, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        long want = (long)ROUNDS * size * (size + 1) / 2, n = (long)size * ROUNDS;
        CHECK(mem[0] == want, "%s: accumulated sum %ld, want %ld", what, mem[0], want);
        CHECK(mem[1] == n, "%s: ticket counter %ld, want %ld", what, mem[1], n);
        CHECK(mem[2] == ROUNDS / 4, "%s: CAS word %ld, want %d", what, mem[2], ROUNDS / 4);
        CHECK(mem[3] == (long)size * (ROUNDS / 4), "%s: exclusive-lock counter %ld, want %ld "
              "(updates lost)", what, mem[3], (long)size * (ROUNDS / 4));
        OK(MPI_Win_unlock(0, win));
        char *seen = calloc((size_t)n, 1);
        CHECK(seen != NULL, "out of memory");
        for (long i = 0; i < n; i++) {
            CHECK(all[i] >= 0 && all[i] < n && !seen[all[i]],
                  "%s: ticket %ld handed out twice or out of range", what, all[i]);
            seen[all[i]] = 1;
        }
        CHECK(total_wins == ROUNDS / 4, "%s: %d CAS winners over %d rounds", what, total_wins,
              ROUNDS / 4);
        free(seen);
        free(all);
    }
    free(tickets);
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void shared_windows(void)
{
    MPI_Comm shm;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm));
    int sr, ss;
    OK(MPI_Comm_rank(shm, &sr));
    OK(MPI_Comm_size(shm, &ss));
    /* rank r's segment: r + 4 ints (rank 1's empty, to test size 0) */
    int mine = sr == 1 ? 0 : sr + 4;
    int *base = NULL;
    MPI_Win win;
    OK(MPI_Win_allocate_shared((MPI_Aint)mine * sizeof(int), sizeof(int), MPI_INFO_NULL, shm,
                               &base, &win));
    MPI_Aint qs;
    int qd;
    int **seg = malloc((size_t)ss * sizeof *seg);
    CHECK(seg != NULL, "out of memory");
    for (int r = 0; r < ss; r++) {
        OK(MPI_Win_shared_query(win, r, &qs, &qd, &seg[r]));
        int want = r == 1 ? 0 : r + 4;
        CHECK(qs == (MPI_Aint)want * (MPI_Aint)sizeof(int) && qd == (int)sizeof(int),
              "shared_query(%d): size %ld disp %d, want %ld %d", r, (long)qs, qd,
              (long)(want * sizeof(int)), (int)sizeof(int));
        CHECK(want || seg[r] == NULL, "shared_query(%d): an empty segment at %p, not NULL", r,
              (void *)seg[r]);
        CHECK(want == 0 || seg[r] != NULL, "shared_query(%d): NULL base", r);
    }
    CHECK(seg[sr] == base || mine == 0, "shared_query of myself is not my base");

    /* every rank fills the segment of its right neighbour by plain stores */
    OK(MPI_Win_lock_all(0, win));
    int right = (sr + 1) % ss;
    int rn = right == 1 ? 0 : right + 4;
    for (int i = 0; i < rn; i++)
        seg[right][i] = 1000 * sr + i;
    OK(MPI_Win_sync(win));
    OK(MPI_Barrier(shm));
    OK(MPI_Win_sync(win));
    int left = (sr + ss - 1) % ss;
    for (int i = 0; i < mine; i++)
        CHECK(base[i] == 1000 * left + i, "shared segment element %d is %d, want %d (from "
              "rank %d of the shared communicator)", i, base[i], 1000 * left + i, left);

    /* flag handshake: rank 0 publishes data, then a flag; the others spin
     * on the flag with Win_sync, then read the data */
    if (ss > 1) {
        volatile int *flag0 = seg[0];
        OK(MPI_Barrier(shm));
        if (sr == 0) {
            for (int i = 1; i < mine; i++)
                base[i] = 7 * i;
            OK(MPI_Win_sync(win));
            flag0[0] = 42;
            OK(MPI_Win_sync(win));
        } else {
            while (flag0[0] != 42)
                OK(MPI_Win_sync(win));
            for (int i = 1; i < 4; i++)
                CHECK(seg[0][i] == 7 * i, "published element %d is %d", i, seg[0][i]);
        }
    }
    OK(MPI_Win_unlock_all(win));
    check_attrs(win, shm, base, (MPI_Aint)mine * sizeof(int), sizeof(int),
                MPI_WIN_FLAVOR_SHARED, "allocate_shared");
    OK(MPI_Win_free(&win));
    free(seg);

    /* segments whose sum this machine cannot address: an error, not a
     * block whose size wrapped round (one rank alone would ask the
     * allocator, which AddressSanitizer does not let fail) */
    if (ss > 1) {
        OK(MPI_Comm_set_errhandler(shm, MPI_ERRORS_RETURN));
        int *huge = NULL;
        t_expect_err(MPI_Win_allocate_shared(PTRDIFF_MAX, 1, MPI_INFO_NULL, shm, &huge, &win),
                     MPI_ERR_NO_MEM, "MPI_Win_allocate_shared", "segments of PTRDIFF_MAX bytes");
        OK(MPI_Comm_set_errhandler(shm, MPI_ERRORS_ARE_FATAL));
    }

    /* across ranks that cannot all share memory, the call must fail */
    int world_shared = ss == size;
    if (!world_shared) {
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        int rc = MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
        int cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_RMA_SHARED, "Win_allocate_shared across unshared ranks: class %d",
              cls);
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    }
    OK(MPI_Comm_free(&shm));
}

/* Alloc_mem memory is window memory and a message buffer alike. */
static void alloc_mem(void)
{
    long *m;
    OK(MPI_Alloc_mem(64 * sizeof(long), MPI_INFO_NULL, &m));
    for (int i = 0; i < 64; i++)
        m[i] = -1;
    MPI_Win win;
    OK(MPI_Win_create(m, 64 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    check_attrs(win, MPI_COMM_WORLD, m, 64 * sizeof(long), sizeof(long), MPI_WIN_FLAVOR_CREATE,
                "create(Alloc_mem)");
    contention(win, m, "create(Alloc_mem)");
    /* a message from window memory into another Alloc_mem buffer */
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    for (int i = 8; i < 64; i++)
        m[i] = 100L * rank + i;
    long *r;
    OK(MPI_Alloc_mem(56 * sizeof(long), MPI_INFO_NULL, &r));
    OK(MPI_Sendrecv(m + 8, 56, MPI_LONG, to, 5, r, 56, MPI_LONG, from, 5, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    for (int i = 0; i < 56; i++)
        CHECK(r[i] == 100L * from + i + 8, "Alloc_mem message element %d is %ld", i, r[i]);
    OK(MPI_Free_mem(r));
    OK(MPI_Win_free(&win));
    OK(MPI_Free_mem(m));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Win win;
    long *m;
    OK(MPI_Win_allocate(32 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &m,
                        &win));
    check_attrs(win, MPI_COMM_WORLD, m, 32 * sizeof(long), sizeof(long),
                MPI_WIN_FLAVOR_ALLOCATE, "allocate");
    contention(win, m, "allocate");
    OK(MPI_Win_free(&win));

    long *heap = malloc(32 * sizeof(long));
    CHECK(heap != NULL, "out of memory");
    OK(MPI_Win_create(heap, 32 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                      &win));
    check_attrs(win, MPI_COMM_WORLD, heap, 32 * sizeof(long), sizeof(long), MPI_WIN_FLAVOR_CREATE,
                "create(malloc)");
    contention(win, heap, "create(malloc)");
    OK(MPI_Win_free(&win));

    OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    check_attrs(win, MPI_COMM_WORLD, NULL, 0, 1, MPI_WIN_FLAVOR_DYNAMIC, "create_dynamic");
    free(heap);

    alloc_mem();
    OK(MPI_Win_free(&win));
    shared_windows();

    MPI_Finalize();
    if (rank == 0)
        printf("t_rma_win: ok (np %d)\n", size);
    return 0;
}
