/* np: 1 2 4 5 */
/* vms: v2 */
/* MPI_Comm_idup: several idups pending on one communicator, completed by
 * MPI_Waitall in reverse order, with a blocking MPI_Comm_dup and
 * MPI_Comm_split by the same processes while they are pending (where an id
 * agreed from stale bitmaps would collide); two communicators idup'ed in
 * opposite orders on even and odd ranks; a rank that starts late while the
 * others wait on a receive on the parent; an intercommunicator's idup;
 * attributes, topology and error handler copied; idups until their ids
 * run out (an error naming MPI_Comm_idup, then the ids come back); bad
 * input. Every new
 * communicator is checked: a message sent on it arrives only on it, and a
 * collective on it gives the right result. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int rank, size;

#include "t_check.h"

/* The communicators in cs[0..n) are pairwise distinct contexts: each rank
 * sends i * 1000 + rank to its right neighbour on every cs[i] with the same
 * tag, and receives from the left on each, in reverse order. */
static void distinct(MPI_Comm *cs, int n)
{
    MPI_Request sr[16], rr[16];
    int sv[16], rv[16];
    for (int i = 0; i < n; i++) {
        int r, s;
        OK(MPI_Comm_rank(cs[i], &r));
        OK(MPI_Comm_size(cs[i], &s));
        sv[i] = i * 1000 + r;
        OK(MPI_Isend(&sv[i], 1, MPI_INT, (r + 1) % s, 7, cs[i], &sr[i]));
    }
    for (int i = n - 1; i >= 0; i--) {
        int r, s;
        OK(MPI_Comm_rank(cs[i], &r));
        OK(MPI_Comm_size(cs[i], &s));
        OK(MPI_Irecv(&rv[i], 1, MPI_INT, (r + s - 1) % s, 7, cs[i], &rr[i]));
    }
    OK(MPI_Waitall(n, rr, MPI_STATUSES_IGNORE));
    OK(MPI_Waitall(n, sr, MPI_STATUSES_IGNORE));
    for (int i = 0; i < n; i++) {
        int r, s, sum = -1;
        OK(MPI_Comm_rank(cs[i], &r));
        OK(MPI_Comm_size(cs[i], &s));
        CHECK(rv[i] == i * 1000 + (r + s - 1) % s, "communicator %d delivered %d", i, rv[i]);
        OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, cs[i]));
        CHECK(sum == s * (s - 1) / 2, "communicator %d: allreduce %d", i, sum);
    }
}

static void same_group(MPI_Comm a, MPI_Comm b)
{
    int res = -1;
    OK(MPI_Comm_compare(a, b, &res));
    CHECK(res == MPI_CONGRUENT, "compare gave %d", res);
}

static int copies;
static int copy_fn(MPI_Comm old, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)old, (void)kv, (void)extra;
    copies++;
    *(void **)out = (char *)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

static void bad_input(void)
{
    MPI_Comm n;
    MPI_Request r;
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    t_expect_err(MPI_Comm_idup(MPI_COMM_NULL, &n, &r), MPI_ERR_COMM, "MPI_Comm_idup",
                 "MPI_COMM_NULL");
    t_expect_err(MPI_Comm_idup(MPI_COMM_WORLD, NULL, &r), MPI_ERR_ARG, "MPI_Comm_idup",
                 "newcomm NULL");
    t_expect_err(MPI_Comm_idup(MPI_COMM_WORLD, &n, NULL), MPI_ERR_ARG, "MPI_Comm_idup",
                 "request NULL");
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    bad_input();

    /* four idups pending on WORLD around a blocking dup and split of
     * another communicator; the wait in reverse order */
    MPI_Comm other, cs[8];
    MPI_Request req[4], rev[4];
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &other));
    OK(MPI_Comm_idup(MPI_COMM_WORLD, &cs[0], &req[0]));
    OK(MPI_Comm_idup(MPI_COMM_WORLD, &cs[1], &req[1]));
    OK(MPI_Comm_dup(other, &cs[4]));
    OK(MPI_Comm_idup(MPI_COMM_WORLD, &cs[2], &req[2]));
    OK(MPI_Comm_split(other, 0, size - rank, &cs[5]));
    OK(MPI_Comm_idup(MPI_COMM_WORLD, &cs[3], &req[3]));
    for (int i = 0; i < 4; i++)
        rev[i] = req[3 - i];
    OK(MPI_Waitall(4, rev, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 4; i++) {
        CHECK(rev[i] == MPI_REQUEST_NULL, "request %d not freed", i);
        same_group(cs[i], MPI_COMM_WORLD);
    }
    cs[6] = other;
    cs[7] = MPI_COMM_WORLD;
    distinct(cs, 8);
    for (int i = 0; i < 6; i++)
        OK(MPI_Comm_free(&cs[i]));

    /* two parents idup'ed in opposite orders on even and odd ranks */
    MPI_Comm a, b, na, nb;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &b));
    for (int round = 0; round < 3; round++) {
        if (rank % 2) {
            OK(MPI_Comm_idup(b, &nb, &req[1]));
            OK(MPI_Comm_idup(a, &na, &req[0]));
        } else {
            OK(MPI_Comm_idup(a, &na, &req[0]));
            OK(MPI_Comm_idup(b, &nb, &req[1]));
        }
        OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
        MPI_Comm four[4] = {a, b, na, nb};
        distinct(four, 4);
        OK(MPI_Comm_free(&na));
        OK(MPI_Comm_free(&nb));
    }

    /* rank 0 starts 100 ms late; the others wait on a receive on the
     * parent that rank 0 sends after its call */
    int v = -1;
    MPI_Comm late;
    if (rank == 0) {
        nanosleep(&(struct timespec){.tv_nsec = 100000000}, NULL);
        OK(MPI_Comm_idup(a, &late, &req[0]));
        for (int r = 1; r < size; r++)
            OK(MPI_Send(&r, 1, MPI_INT, r, 3, a));
        OK(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
    } else {
        OK(MPI_Comm_idup(a, &late, &req[0]));
        OK(MPI_Irecv(&v, 1, MPI_INT, 0, 3, a, &req[1]));
        OK(MPI_Wait(&req[1], MPI_STATUS_IGNORE));
        CHECK(v == rank, "got %d", v);
        OK(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
    }
    MPI_Comm two[2] = {a, late};
    distinct(two, 2);
    OK(MPI_Comm_free(&late));

    /* attributes, topology and error handler */
    int kv, dims[1] = {size}, periods[1] = {1}, flag = 0;
    OK(MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &kv, NULL));
    MPI_Comm cart, cdup;
    OK(MPI_Cart_create(a, 1, dims, periods, 0, &cart));
    OK(MPI_Comm_set_attr(cart, kv, (void *)(size_t)100));
    OK(MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN));
    OK(MPI_Comm_idup(cart, &cdup, &req[0]));
    CHECK(copies == 1, "copy callback ran %d times at the call", copies);
    OK(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
    void *val = NULL;
    OK(MPI_Comm_get_attr(cdup, kv, &val, &flag));
    CHECK(flag && val == (void *)(size_t)101, "attribute %p (flag %d)", val, flag);
    int topo = -1, gd[1], gp[1], gc[1];
    OK(MPI_Topo_test(cdup, &topo));
    CHECK(topo == MPI_CART, "topology %d", topo);
    OK(MPI_Cart_get(cdup, 1, gd, gp, gc));
    CHECK(gd[0] == size && gp[0] == 1 && gc[0] == rank, "cart %d %d %d", gd[0], gp[0], gc[0]);
    MPI_Errhandler eh;
    OK(MPI_Comm_get_errhandler(cdup, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "error handler not copied");
    OK(MPI_Errhandler_free(&eh));
    OK(MPI_Comm_free(&cdup));
    OK(MPI_Comm_free(&cart));
    OK(MPI_Comm_free_keyval(&kv));

    /* an intercommunicator: low half and high half */
    if (size >= 2) {
        int low = rank < size / 2, lsize = low ? size / 2 : size - size / 2;
        MPI_Comm half, inter, idups[2], bdup;
        OK(MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half));
        OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? size / 2 : 0, 9, &inter));
        OK(MPI_Comm_idup(inter, &idups[0], &req[0]));
        OK(MPI_Comm_dup(b, &bdup));
        OK(MPI_Comm_idup(inter, &idups[1], &req[1]));
        OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 2; i++) {
            int f = 0, rs = 0, ls = 0, sum = -1, mine = rank, r;
            OK(MPI_Comm_test_inter(idups[i], &f));
            OK(MPI_Comm_remote_size(idups[i], &rs));
            OK(MPI_Comm_size(idups[i], &ls));
            OK(MPI_Comm_rank(idups[i], &r));
            CHECK(f && ls == lsize && rs == size - lsize, "inter %d size %d remote %d", f, ls,
                  rs);
            /* the remote side's sum of world ranks */
            OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, idups[i]));
            int want = 0;
            for (int q = 0; q < size; q++)
                want += (q < size / 2) != low ? q : 0;
            CHECK(sum == want, "intercommunicator allreduce %d, want %d", sum, want);
            /* local rank 0 of each side swaps a message on each duplicate */
            if (r == 0) {
                int got = -1, send = i * 100 + low;
                OK(MPI_Sendrecv(&send, 1, MPI_INT, 0, 4, &got, 1, MPI_INT, 0, 4, idups[i],
                                MPI_STATUS_IGNORE));
                CHECK(got == i * 100 + !low, "inter message %d", got);
            }
        }
        MPI_Comm four[4] = {idups[0], idups[1], bdup, half};
        distinct(four + 2, 2);
        OK(MPI_Comm_free(&idups[0]));
        OK(MPI_Comm_free(&idups[1]));
        OK(MPI_Comm_free(&bdup));
        OK(MPI_Comm_free(&inter));
        OK(MPI_Comm_free(&half));
    }

    /* MPI_COMM_SELF */
    MPI_Comm self;
    OK(MPI_Comm_idup(MPI_COMM_SELF, &self, &req[0]));
    OK(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
    int ss = 0;
    OK(MPI_Comm_size(self, &ss));
    CHECK(ss == 1, "self size %d", ss);
    OK(MPI_Comm_free(&self));

    /* idups (of a one-process communicator: quick) until their ids run
     * out: the request fails with MPI_ERR_OTHER naming MPI_Comm_idup, an
     * idup of `a` then fails on every rank, and the ids come back */
    static MPI_Comm many[600];
    int n = 0, rc = MPI_SUCCESS;
    MPI_Comm one;
    OK(MPI_Comm_dup(MPI_COMM_SELF, &one));
    OK(MPI_Comm_set_errhandler(one, MPI_ERRORS_RETURN));
    while (n < 600) {
        OK(MPI_Comm_idup(one, &many[n], &req[0]));
        if ((rc = MPI_Wait(&req[0], MPI_STATUS_IGNORE)) != MPI_SUCCESS)
            break;
        n++;
    }
    CHECK(n == 512, "%d idups before the ids ran out", n);
    t_expect_err(rc, MPI_ERR_OTHER, "MPI_Comm_idup", "ids exhausted");
    OK(MPI_Comm_set_errhandler(a, MPI_ERRORS_RETURN));
    OK(MPI_Comm_idup(a, &many[n], &req[0]));
    t_expect_err(MPI_Wait(&req[0], MPI_STATUS_IGNORE), MPI_ERR_OTHER, "MPI_Comm_idup",
                 "ids exhausted on the parent");
    OK(MPI_Comm_free(&one));
    for (int i = 0; i < n; i++)
        OK(MPI_Comm_free(&many[i]));
    OK(MPI_Comm_idup(a, &many[0], &req[0]));
    OK(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
    OK(MPI_Comm_free(&many[0]));

    OK(MPI_Comm_free(&a));
    OK(MPI_Comm_free(&b));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("t_comm_idup: ok\n");
    MPI_Finalize();
    return 0;
}
