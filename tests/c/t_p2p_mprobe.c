/* np: 2 */
/* net: ofi h2 */
/* vms: v2 h2v2 v2net v2iv */
/* Matched probe and receive (MPI-3.1 3.8.2-3):
 *  - MPI_Mprobe takes the message out of the matching queue: a later probe
 *    or receive with the same envelope gets the next message, and MPI_Mrecv
 *    still gets the probed one (eager and rendezvous sizes, ANY_SOURCE and
 *    ANY_TAG, a derived datatype on the receive side);
 *  - MPI_Improbe polls until the message is there; MPI_Imrecv + MPI_Wait;
 *  - messages to self; MPI_PROC_NULL gives MPI_MESSAGE_NO_PROC, and a
 *    receive of it returns at once with the MPI_PROC_NULL status;
 *  - a message larger than the buffer: MPI_ERR_TRUNCATE from MPI_Mrecv;
 *  - bad input: MPI_MESSAGE_NULL, NULL message, bad rank and tag;
 *  - MPI_Message_c2f/f2c. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;

#include "t_check.h"

static MPI_Comm tw;

static void fill(int *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        b[i] = i * 7 + seed;
}

static void expect(const int *b, int n, int seed, const char *what)
{
    for (int i = 0; i < n; i++)
        CHECK(b[i] == i * 7 + seed, "%s: element %d is %d, want %d", what, i, b[i], i * 7 + seed);
}

static void expect_status(const MPI_Status *st, int src, int tag, int count, const char *what)
{
    int n = -1;
    OK(MPI_Get_count(st, MPI_INT, &n));
    CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag && n == count,
          "%s: status source %d tag %d count %d, want %d %d %d", what, st->MPI_SOURCE,
          st->MPI_TAG, n, src, tag, count);
}

/* Two messages with one envelope, of n ints each: the probed first one is
 * out of the queue, so a plain receive gets the second. */
static void takes_from_queue(int n)
{
    int *a = malloc(sizeof(int) * (size_t)n), *b = malloc(sizeof(int) * (size_t)n);
    CHECK(a && b, "malloc");
    if (rank == 0) {
        fill(a, n, 1);
        fill(b, n, 2);
        MPI_Request q[2];
        OK(MPI_Isend(a, n, MPI_INT, 1, 5, tw, &q[0]));
        OK(MPI_Isend(b, n, MPI_INT, 1, 5, tw, &q[1]));
        OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    } else {
        MPI_Message m;
        MPI_Status st;
        OK(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, tw, &m, &st));
        CHECK(m != MPI_MESSAGE_NULL && m != MPI_MESSAGE_NO_PROC, "Mprobe gave message %#x",
              (unsigned)m);
        expect_status(&st, 0, 5, n, "Mprobe");
        memset(b, 0, sizeof(int) * (size_t)n);
        OK(MPI_Recv(b, n, MPI_INT, 0, 5, tw, &st));
        expect_status(&st, 0, 5, n, "Recv after Mprobe");
        expect(b, n, 2, "Recv after Mprobe (must be the second message)");
        memset(a, 0, sizeof(int) * (size_t)n);
        OK(MPI_Mrecv(a, n, MPI_INT, &m, &st));
        CHECK(m == MPI_MESSAGE_NULL, "Mrecv left message %#x", (unsigned)m);
        expect_status(&st, 0, 5, n, "Mrecv");
        expect(a, n, 1, "Mrecv (the probed message)");
        int flag = 1;
        OK(MPI_Iprobe(MPI_ANY_SOURCE, 5, tw, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "a third message appeared");
    }
    free(a);
    free(b);
    OK(MPI_Barrier(tw));
}

/* Improbe until the message is there, Imrecv into a strided layout. */
static void nonblocking(int n)
{
    int *a = malloc(sizeof(int) * 2 * (size_t)n);
    CHECK(a, "malloc");
    if (rank == 0) {
        fill(a, n, 3);
        OK(MPI_Send(a, n, MPI_INT, 1, 6, tw));
    } else {
        MPI_Message m;
        MPI_Status st;
        int flag = 0;
        double t0 = MPI_Wtime();
        while (!flag) {
            OK(MPI_Improbe(0, 6, tw, &flag, &m, &st));
            CHECK(MPI_Wtime() - t0 < 30, "Improbe never found the message");
        }
        expect_status(&st, 0, 6, n, "Improbe");
        flag = 1;
        MPI_Message m2 = 123;
        OK(MPI_Improbe(0, 6, tw, &flag, &m2, MPI_STATUS_IGNORE));
        CHECK(!flag, "the probed message was found again");
        MPI_Datatype every2;
        OK(MPI_Type_vector(n, 1, 2, MPI_INT, &every2));
        OK(MPI_Type_commit(&every2));
        memset(a, 0xff, sizeof(int) * 2 * (size_t)n);
        MPI_Request q;
        OK(MPI_Imrecv(a, 1, every2, &m, &q));
        CHECK(m == MPI_MESSAGE_NULL, "Imrecv left message %#x", (unsigned)m);
        OK(MPI_Wait(&q, &st));
        expect_status(&st, 0, 6, n, "Imrecv");
        for (int i = 0; i < n; i++)
            CHECK(a[2 * i] == i * 7 + 3 && a[2 * i + 1] == -1, "Imrecv strided element %d", i);
        OK(MPI_Type_free(&every2));
    }
    free(a);
    OK(MPI_Barrier(tw));
}

static void self_and_proc_null(void)
{
    int x[3] = {1, 2, 3}, y[3] = {0};
    MPI_Request q;
    MPI_Message m;
    MPI_Status st;
    OK(MPI_Isend(x, 3, MPI_INT, rank, 7, tw, &q));
    OK(MPI_Mprobe(rank, 7, tw, &m, &st));
    expect_status(&st, rank, 7, 3, "Mprobe of a message to self");
    OK(MPI_Mrecv(y, 3, MPI_INT, &m, MPI_STATUS_IGNORE));
    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    CHECK(y[0] == 1 && y[2] == 3, "message to self: %d %d", y[0], y[2]);

    OK(MPI_Mprobe(MPI_PROC_NULL, 7, tw, &m, &st));
    CHECK(m == MPI_MESSAGE_NO_PROC, "Mprobe(MPI_PROC_NULL) gave %#x", (unsigned)m);
    expect_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, 0, "Mprobe(MPI_PROC_NULL)");
    int flag = 0;
    OK(MPI_Improbe(MPI_PROC_NULL, 7, tw, &flag, &m, &st));
    CHECK(flag && m == MPI_MESSAGE_NO_PROC, "Improbe(MPI_PROC_NULL): flag %d message %#x",
          flag, (unsigned)m);
    y[0] = 42;
    OK(MPI_Mrecv(y, 3, MPI_INT, &m, &st));
    CHECK(m == MPI_MESSAGE_NULL && y[0] == 42, "Mrecv(MPI_MESSAGE_NO_PROC)");
    expect_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, 0, "Mrecv(MPI_MESSAGE_NO_PROC)");
    m = MPI_MESSAGE_NO_PROC;
    OK(MPI_Imrecv(y, 3, MPI_INT, &m, &q));
    OK(MPI_Wait(&q, &st));
    expect_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, 0, "Imrecv(MPI_MESSAGE_NO_PROC)");

    CHECK(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NO_PROC)) == MPI_MESSAGE_NO_PROC &&
              MPI_Message_c2f(MPI_MESSAGE_NULL) == (MPI_Fint)MPI_MESSAGE_NULL,
          "Message_c2f/f2c are not the identity");
}

static void errors(void)
{
    int x[8] = {0};
    MPI_Message m;
    if (rank == 0) {
        OK(MPI_Send(x, 8, MPI_INT, 1, 8, tw));
    } else {
        OK(MPI_Mprobe(0, 8, tw, &m, MPI_STATUS_IGNORE));
        MPI_Status st;
        /* A message handle is no request: MPI_Wait refuses it (no hang). */
        MPI_Request as_req = (MPI_Request)m;
        t_expect_err(MPI_Wait(&as_req, &st), MPI_ERR_REQUEST, "MPI_Wait", "Wait(message)");
        int rc = MPI_Mrecv(x, 4, MPI_INT, &m, &st);
        t_expect_err(rc, MPI_ERR_TRUNCATE, "MPI_Mrecv", "8 ints into 4");
        CHECK(m == MPI_MESSAGE_NULL, "a truncated Mrecv left message %#x", (unsigned)m);
    }
    m = MPI_MESSAGE_NULL;
    int rc = MPI_Mrecv(x, 1, MPI_INT, &m, MPI_STATUS_IGNORE);
    t_expect_err(rc, MPI_ERR_REQUEST, "MPI_Mrecv", "MPI_MESSAGE_NULL");
    rc = MPI_Imrecv(x, 1, MPI_INT, &m, &(MPI_Request){0});
    t_expect_err(rc, MPI_ERR_REQUEST, "MPI_Imrecv", "MPI_MESSAGE_NULL");
    rc = MPI_Mrecv(x, 1, MPI_INT, NULL, MPI_STATUS_IGNORE);
    t_expect_err(rc, MPI_ERR_ARG, "MPI_Mrecv", "NULL message");
    rc = MPI_Mprobe(2, 0, tw, &m, MPI_STATUS_IGNORE);
    t_expect_err(rc, MPI_ERR_RANK, "MPI_Mprobe", "rank 2 of 2");
    rc = MPI_Improbe(0, -5, tw, &(int){0}, &m, MPI_STATUS_IGNORE);
    t_expect_err(rc, MPI_ERR_TAG, "MPI_Improbe", "tag -5");
    rc = MPI_Improbe(0, 0, tw, NULL, &m, MPI_STATUS_IGNORE);
    t_expect_err(rc, MPI_ERR_ARG, "MPI_Improbe", "NULL flag");
    rc = MPI_Mprobe(0, 0, MPI_COMM_NULL, &m, MPI_STATUS_IGNORE);
    t_expect_err(rc, MPI_ERR_COMM, "MPI_Mprobe", "MPI_COMM_NULL");
    rc = MPI_Mprobe(0, 0, tw, NULL, MPI_STATUS_IGNORE);
    t_expect_err(rc, MPI_ERR_ARG, "MPI_Mprobe", "NULL message");
    OK(MPI_Barrier(tw));
}

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    tw = t_pair_comm();
    MPI_Comm_rank(tw, &rank);
    MPI_Comm_size(tw, &size);
    CHECK(size == 2, "needs 2 ranks");
    OK(MPI_Comm_set_errhandler(tw, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    takes_from_queue(10);
    takes_from_queue(1 << 18); /* 1 MiB: rendezvous */
    nonblocking(10);
    nonblocking(1 << 18);
    self_and_proc_null();
    errors();

    if (rank == 0)
        printf("t_p2p_mprobe: OK\n");
    MPI_Comm_free(&tw);
    MPI_Finalize();
    return 0;
}
