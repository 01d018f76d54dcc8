/* np: 2 */
/* vms: v2 v2net */
/* net: h2 */
/* Bad input to the one-sided calls, with MPI_ERRORS_RETURN on the window:
 * each returns the right error class with a message naming the call, and
 * no failed operation writes outside its window. The window memory sits
 * between guard bytes that must stay intact, and the window stays usable
 * after every error. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#include "t_check.h"

enum { N = 8, GUARD = 64, G = 0x5a };

static unsigned char *block; /* GUARD | N ints of window | GUARD */
static int *mem;

static void guards_intact(const char *what)
{
    for (int i = 0; i < GUARD; i++)
        CHECK(block[i] == G && block[GUARD + N * sizeof(int) + (size_t)i] == G,
              "%s: a guard byte next to the window changed", what);
}

/* The window still works: a put to the neighbour and a get back. */
static void still_usable(MPI_Win win, const char *what)
{
    int t = (rank + 1) % size, v = 1000 + rank, got = -1;
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
    OK(MPI_Put(&v, 1, MPI_INT, t, 0, 1, MPI_INT, win));
    OK(MPI_Win_flush(t, win));
    OK(MPI_Get(&got, 1, MPI_INT, t, 0, 1, MPI_INT, win));
    OK(MPI_Win_unlock(t, win));
    CHECK(got == v, "%s: window unusable afterwards (got %d, want %d)", what, got, v);
}

/* Operations whose arguments are wrong in themselves, inside a lock epoch. */
static void bad_operations(MPI_Win win)
{
    int t = (rank + 1) % size, buf[2 * N] = {0}, res[2 * N], one = 1;
    MPI_Datatype uncommitted, mixed, vec;
    OK(MPI_Type_contiguous(2, MPI_INT, &uncommitted));
    {
        int bl[2] = {1, 1};
        MPI_Aint d[2] = {0, 8};
        MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
        OK(MPI_Type_create_struct(2, bl, d, ty, &mixed));
        OK(MPI_Type_commit(&mixed));
    }
    OK(MPI_Type_vector(3, 1, 4, MPI_INT, &vec)); /* spans 9 ints */
    OK(MPI_Type_commit(&vec));
    MPI_Request rq;

    OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
    t_expect_err(MPI_Put(buf, 1, MPI_INT, t, N, 1, MPI_INT, win), MPI_ERR_RMA_RANGE, "MPI_Put",
               "put one past the end");
    t_expect_err(MPI_Put(buf, N + 1, MPI_INT, t, 0, N + 1, MPI_INT, win), MPI_ERR_RMA_RANGE,
               "MPI_Put", "put count too large");
    t_expect_err(MPI_Put(buf, 1, MPI_INT, t, -1, 1, MPI_INT, win), MPI_ERR_RMA_RANGE, "MPI_Put",
               "put negative displacement");
    t_expect_err(MPI_Put(buf, 3, MPI_INT, t, 0, 1, vec, win), MPI_ERR_RMA_RANGE, "MPI_Put",
               "vector target reaching past the end");
    t_expect_err(MPI_Get(res, 2, MPI_INT, t, N - 1, 2, MPI_INT, win), MPI_ERR_RMA_RANGE,
               "MPI_Get", "get straddling the end");
    t_expect_err(MPI_Accumulate(buf, 1, MPI_INT, t, 1 << 20, 1, MPI_INT, MPI_SUM, win),
               MPI_ERR_RMA_RANGE, "MPI_Accumulate", "accumulate far out");
    t_expect_err(MPI_Fetch_and_op(&one, res, MPI_INT, t, N, MPI_SUM, win), MPI_ERR_RMA_RANGE,
               "MPI_Fetch_and_op", "fetch_and_op past the end");
    t_expect_err(MPI_Compare_and_swap(&one, buf, res, MPI_INT, t, N, win), MPI_ERR_RMA_RANGE,
               "MPI_Compare_and_swap", "compare_and_swap past the end");
    t_expect_err(MPI_Rput(buf, 1, MPI_INT, t, N, 1, MPI_INT, win, &rq), MPI_ERR_RMA_RANGE,
               "MPI_Rput", "rput past the end");

    t_expect_err(MPI_Put(buf, -1, MPI_INT, t, 0, 1, MPI_INT, win), MPI_ERR_COUNT, "MPI_Put",
               "negative origin count");
    t_expect_err(MPI_Get(res, 1, MPI_INT, t, 0, -2, MPI_INT, win), MPI_ERR_COUNT, "MPI_Get",
               "negative target count");
    t_expect_err(MPI_Put(buf, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK, "MPI_Put",
               "target rank = size");
    t_expect_err(MPI_Get(res, 1, MPI_INT, -5, 0, 1, MPI_INT, win), MPI_ERR_RANK, "MPI_Get",
               "target rank -5");
    t_expect_err(MPI_Put(buf, 1, MPI_DATATYPE_NULL, t, 0, 1, MPI_INT, win), MPI_ERR_TYPE,
               "MPI_Put", "origin DATATYPE_NULL");
    t_expect_err(MPI_Put(buf, 1, uncommitted, t, 0, 1, uncommitted, win), MPI_ERR_TYPE,
               "MPI_Put", "uncommitted type");
    t_expect_err(MPI_Put(buf, 2, MPI_INT, t, 0, 1, MPI_INT, win), MPI_ERR_TYPE, "MPI_Put",
               "origin and target sizes differ");
    t_expect_err(MPI_Accumulate(buf, 1, MPI_INT, t, 0, 1, MPI_INT, MPI_OP_NULL, win), MPI_ERR_OP,
               "MPI_Accumulate", "MPI_OP_NULL");
    t_expect_err(MPI_Accumulate(buf, 1, mixed, t, 0, 1, mixed, MPI_SUM, win), MPI_ERR_TYPE,
               "MPI_Accumulate", "accumulate of a type mixing int and double");
    t_expect_err(MPI_Accumulate(buf, 2, MPI_FLOAT, t, 0, 2, MPI_FLOAT, MPI_BAND, win), MPI_ERR_OP,
               "MPI_Accumulate", "BAND on float");
    /* a zero count moves nothing, so any op goes (mpi4py probes this way) */
    CHECK(MPI_Get_accumulate(buf, 0, MPI_BYTE, res, 0, MPI_BYTE, t, 0, 0, MPI_BYTE, MPI_SUM,
                             win) == MPI_SUCCESS, "zero-count Get_accumulate SUM on BYTE");
    t_expect_err(MPI_Get_accumulate(buf, 1, MPI_BYTE, res, 1, MPI_BYTE, t, 0, 1, MPI_BYTE,
                                    MPI_SUM, win), MPI_ERR_OP, "MPI_Get_accumulate",
                 "SUM on BYTE");
    t_expect_err(MPI_Compare_and_swap(&one, buf, res, MPI_DOUBLE, t, 0, win), MPI_ERR_TYPE,
               "MPI_Compare_and_swap", "compare_and_swap on double");
    t_expect_err(MPI_Put(buf, 1, MPI_INT, t, 0, 1, MPI_INT, MPI_WIN_NULL), MPI_ERR_WIN, "MPI_Put",
               "MPI_WIN_NULL");
    t_expect_err(MPI_Get(res, 1, MPI_INT, t, 0, 1, MPI_INT, (MPI_Win)0x12345678), MPI_ERR_WIN,
               "MPI_Get", "junk window handle");
    OK(MPI_Win_unlock(t, win));

    OK(MPI_Type_free(&uncommitted));
    OK(MPI_Type_free(&mixed));
    OK(MPI_Type_free(&vec));
}

/* Synchronization calls out of order. */
static void bad_sync(MPI_Win win)
{
    int t = (rank + 1) % size, buf[N] = {0}, flag;
    MPI_Request rq;
    t_expect_err(MPI_Put(buf, 1, MPI_INT, t, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC, "MPI_Put",
               "put outside any epoch");
    t_expect_err(MPI_Get(buf, 1, MPI_INT, t, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC, "MPI_Get",
               "get outside any epoch");
    t_expect_err(MPI_Win_unlock(t, win), MPI_ERR_RMA_SYNC, "MPI_Win_unlock",
               "unlock of an unlocked window");
    t_expect_err(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC, "MPI_Win_unlock_all",
               "unlock_all without lock_all");
    t_expect_err(MPI_Win_flush(t, win), MPI_ERR_RMA_SYNC, "MPI_Win_flush", "flush without lock");
    t_expect_err(MPI_Win_flush_all(win), MPI_ERR_RMA_SYNC, "MPI_Win_flush_all",
               "flush_all without lock");
    t_expect_err(MPI_Win_complete(win), MPI_ERR_RMA_SYNC, "MPI_Win_complete",
               "complete without start");
    t_expect_err(MPI_Win_wait(win), MPI_ERR_RMA_SYNC, "MPI_Win_wait", "wait without post");
    t_expect_err(MPI_Win_test(win, &flag), MPI_ERR_RMA_SYNC, "MPI_Win_test", "test without post");
    t_expect_err(MPI_Win_lock(99, t, 0, win), MPI_ERR_LOCKTYPE, "MPI_Win_lock", "lock type 99");
    t_expect_err(MPI_Win_lock(MPI_LOCK_SHARED, t, 0x4000000, win), MPI_ERR_ASSERT,
               "MPI_Win_lock", "unknown assert bit");
    t_expect_err(MPI_Win_lock(MPI_LOCK_SHARED, size, 0, win), MPI_ERR_RANK, "MPI_Win_lock",
               "lock rank = size");

    OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
    t_expect_err(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win), MPI_ERR_RMA_SYNC, "MPI_Win_lock",
               "locking the same target twice");
    t_expect_err(MPI_Win_lock_all(0, win), MPI_ERR_RMA_SYNC, "MPI_Win_lock_all",
               "lock_all while holding a lock");
    t_expect_err(MPI_Win_fence(0, win), MPI_ERR_RMA_SYNC, "MPI_Win_fence",
               "fence inside a lock epoch");
    OK(MPI_Win_unlock(t, win));

    OK(MPI_Win_lock_all(0, win));
    t_expect_err(MPI_Win_unlock(t, win), MPI_ERR_RMA_SYNC, "MPI_Win_unlock",
               "unlock of one target under lock_all");
    OK(MPI_Win_unlock_all(win));

    /* Request-based operations only in passive-target epochs. */
    OK(MPI_Win_fence(0, win));
    t_expect_err(MPI_Rput(buf, 1, MPI_INT, t, 0, 1, MPI_INT, win, &rq), MPI_ERR_RMA_SYNC,
               "MPI_Rput", "rput in a fence epoch");
    OK(MPI_Put(buf, 1, MPI_INT, t, 0, 1, MPI_INT, win));
    t_expect_err(MPI_Win_fence(MPI_MODE_NOPRECEDE, win), MPI_ERR_RMA_SYNC, "MPI_Win_fence",
               "NOPRECEDE after operations");
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    t_expect_err(MPI_Put(buf, 1, MPI_INT, t, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC, "MPI_Put",
               "put after a NOSUCCEED fence");
    t_expect_err(MPI_Win_fence(0x7, win), MPI_ERR_ASSERT, "MPI_Win_fence", "fence assert 7");

    /* PSCW: start twice, post twice */
    MPI_Group wg, pg;
    OK(MPI_Win_get_group(win, &wg));
    int peers[2] = {(rank + 1) % size, (rank + size - 1) % size};
    OK(MPI_Group_incl(wg, size > 2 ? 2 : 1, peers, &pg));
    OK(MPI_Win_post(pg, 0, win));
    t_expect_err(MPI_Win_post(pg, 0, win), MPI_ERR_RMA_SYNC, "MPI_Win_post", "post twice");
    OK(MPI_Win_start(pg, 0, win));
    t_expect_err(MPI_Win_start(pg, 0, win), MPI_ERR_RMA_SYNC, "MPI_Win_start", "start twice");
    OK(MPI_Win_complete(win));
    OK(MPI_Win_wait(win));
    OK(MPI_Group_free(&pg));
    OK(MPI_Group_free(&wg));
}

/* A dynamic window: the origin cannot check addresses the target has not
 * attached, so the target refuses them and the refusal surfaces at the
 * origin's next completion call. */
static void bad_dynamic(void)
{
    MPI_Win dw;
    OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dw));
    OK(MPI_Win_set_errhandler(dw, MPI_ERRORS_RETURN));
    MPI_Aint a;
    OK(MPI_Win_attach(dw, mem, N * sizeof(int)));
    OK(MPI_Get_address(mem, &a));
    MPI_Aint at[64];
    OK(MPI_Allgather(&a, 1, MPI_AINT, at, 1, MPI_AINT, MPI_COMM_WORLD));
    int t = (rank + 1) % size, v[2] = {-1, -2};
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, dw));
    /* straddles the end of the attached memory into the guard */
    int rc = MPI_Put(v, 2, MPI_INT, t, at[t] + (N - 1) * (MPI_Aint)sizeof(int), 2, MPI_INT, dw);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_flush(t, dw);
    t_expect_err(rc, MPI_ERR_RMA_RANGE, "MPI_Win_", "put past the attached memory");
    OK(MPI_Win_unlock(t, dw));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    guards_intact("dynamic put past the attached memory");
    OK(MPI_Win_detach(dw, mem));
    t_expect_err(MPI_Win_detach(dw, mem), MPI_ERR_RMA_ATTACH, "MPI_Win_detach",
               "detaching twice");
    OK(MPI_Win_free(&dw));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    block = malloc(2 * GUARD + N * sizeof(int));
    CHECK(block != NULL, "out of memory");
    memset(block, G, 2 * GUARD + N * sizeof(int));
    mem = (int *)(block + GUARD);
    memset(mem, 0, N * sizeof(int));

    MPI_Win win, dummy;
    t_expect_err(MPI_Win_create(mem, -1, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &dummy), MPI_ERR_SIZE,
               "MPI_Win_create", "negative size");
    t_expect_err(MPI_Win_create(mem, 16, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &dummy), MPI_ERR_DISP,
               "MPI_Win_create", "disp_unit 0");
    t_expect_err(MPI_Win_create(mem, 16, 4, MPI_INFO_NULL, MPI_COMM_NULL, &dummy), MPI_ERR_COMM,
               "MPI_Win_create", "MPI_COMM_NULL");
    t_expect_err(MPI_Win_allocate(16, 4, MPI_INFO_NULL, MPI_COMM_WORLD, NULL, &dummy),
               MPI_ERR_ARG, "MPI_Win_allocate", "NULL baseptr");

    OK(MPI_Win_create(mem, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_Aint qs;
    int qd;
    void *qb;
    t_expect_err(MPI_Win_shared_query(win, 0, &qs, &qd, &qb), MPI_ERR_RMA_FLAVOR,
               "MPI_Win_shared_query", "shared_query on a Win_create window");
    t_expect_err(MPI_Win_attach(win, mem, 4), MPI_ERR_RMA_FLAVOR, "MPI_Win_attach",
               "attach to a non-dynamic window");

    bad_operations(win);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    guards_intact("bad operations");
    still_usable(win, "bad operations");
    OK(MPI_Barrier(MPI_COMM_WORLD));

    bad_sync(win);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    still_usable(win, "bad synchronization");
    OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free did not set the handle to MPI_WIN_NULL");
    t_expect_err(MPI_Win_free(&win), MPI_ERR_WIN, "MPI_Win_free", "freeing MPI_WIN_NULL");

    bad_dynamic();
    guards_intact("the end");

    free(block);
    MPI_Finalize();
    if (rank == 0)
        printf("t_rma_errors: ok (np %d)\n", size);
    return 0;
}
