/* np: 2 */
/* env: VMPI_SMP_CMA=1 */
/* env: VMPI_SMP_CMA=0 */
/* net: ofi h2 */
/* vms: v2 v4 h2v2 v2net v2iv */
/* Send modes and completion calls:
 *  - MPI_Ssend / MPI_Issend do not complete before the matching receive is
 *    posted (small and rendezvous sizes; the receiver sleeps 300 ms);
 *  - MPI_Rsend with the receive posted;
 *  - MPI_Cancel of an unmatched Irecv (cancelled) and of a matched one (not);
 *  - Waitany/Waitsome/Testany/Testsome/Testall/Waitall with
 *    MPI_REQUEST_NULL entries, all-null arrays (MPI_UNDEFINED) and count 0;
 *  - MPI_PROC_NULL as source and destination;
 *  - sends to self: Isend+Recv small and 4 MiB, Issend+Recv+Wait. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rank, size;

#include "t_check.h"

/* The communicator of this rank's pair (t_pair_comm). */
static MPI_Comm tw;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts))
        ;
}

static void expect_empty(const MPI_Status *st, const char *what)
{
    int cnt = -1, canc = -1;
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG,
          "%s: empty status has source %d tag %d", what, st->MPI_SOURCE, st->MPI_TAG);
    OK(MPI_Get_count(st, MPI_BYTE, &cnt));
    OK(MPI_Test_cancelled(st, &canc));
    CHECK(cnt == 0 && canc == 0, "%s: empty status: count %d cancelled %d", what, cnt, canc);
}

/* Synchronous send of n bytes from 0 to 1. Rank 1 sleeps 300 ms before
 * posting the receive and reports (MPI_Wtime is CLOCK_MONOTONIC, the same
 * clock in both processes) when it posted it; the send must not have
 * completed before that. */
static void ssend_waits(size_t n, int nonblocking)
{
    const int tag = nonblocking ? 11 : 10;
    unsigned char *b = malloc(n ? n : 1);
    CHECK(b, "malloc");
    /* Filled before the barrier: under a sanitizer a 2 MiB loop after it
     * eats into the receiver's 300 ms sleep. */
    if (rank == 0)
        for (size_t i = 0; i < n; i++)
            b[i] = (unsigned char)(i * 7 + n);
    OK(MPI_Barrier(tw));
    if (rank == 0) {
        double t0 = MPI_Wtime(), tdone;
        if (!nonblocking) {
            OK(MPI_Ssend(b, (int)n, MPI_BYTE, 1, tag, tw));
            tdone = MPI_Wtime();
        } else {
            MPI_Request q;
            MPI_Status st;
            int flag = 0;
            long falses = 0;
            OK(MPI_Issend(b, (int)n, MPI_BYTE, 1, tag, tw, &q));
            while (!flag) {
                OK(MPI_Test(&q, &flag, &st));
                if (!flag)
                    falses++;
                CHECK(MPI_Wtime() - t0 < 30, "Issend never completed");
            }
            tdone = MPI_Wtime();
            CHECK(falses > 0, "Issend: the first Test already returned true");
            CHECK(q == MPI_REQUEST_NULL, "completed Issend left handle %#x", (unsigned)q);
        }
        double tpost;
        OK(MPI_Recv(&tpost, 1, MPI_DOUBLE, 1, tag + 100, tw, MPI_STATUS_IGNORE));
        CHECK(tdone >= tpost, "%s of %zu bytes completed %.6f s before the receive was posted",
              nonblocking ? "Issend" : "Ssend", n, tpost - tdone);
        CHECK(tdone - t0 >= 0.25, "%s of %zu bytes took only %.3f s (receiver slept 0.3 s)",
              nonblocking ? "Issend" : "Ssend", n, tdone - t0);
    } else {
        sleep_ms(300);
        double tpost = MPI_Wtime();
        MPI_Status st;
        int cnt;
        OK(MPI_Recv(b, (int)n, MPI_BYTE, 0, tag, tw, &st));
        OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
        CHECK((size_t)cnt == n, "Ssend payload %d bytes, want %zu", cnt, n);
        for (size_t i = 0; i < n; i++)
            CHECK(b[i] == (unsigned char)(i * 7 + n), "Ssend payload byte %zu", i);
        OK(MPI_Send(&tpost, 1, MPI_DOUBLE, 0, tag + 100, tw));
    }
    free(b);
}

static void rsend(void)
{
    int x[4] = {0, 0, 0, 0};
    if (rank == 1) {
        MPI_Request q;
        OK(MPI_Irecv(x, 4, MPI_INT, 0, 20, tw, &q));
        OK(MPI_Barrier(tw));
        OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        CHECK(x[0] == 1 && x[3] == 4, "Rsend data %d..%d", x[0], x[3]);
    } else {
        int y[4] = {1, 2, 3, 4};
        OK(MPI_Barrier(tw));
        OK(MPI_Rsend(y, 4, MPI_INT, 1, 20, tw));
    }
}

static void cancel_tests(void)
{
    OK(MPI_Barrier(tw));
    if (rank == 0) {
        /* Unmatched receive: cancelled. */
        int a = -1, b = -1;
        MPI_Request q;
        MPI_Status st;
        int flag = -1;
        OK(MPI_Irecv(&a, 1, MPI_INT, 1, 30, tw, &q));
        OK(MPI_Cancel(&q));
        OK(MPI_Wait(&q, &st));
        CHECK(q == MPI_REQUEST_NULL, "cancelled request not freed by Wait");
        OK(MPI_Test_cancelled(&st, &flag));
        CHECK(flag == 1, "Test_cancelled after cancelling an unmatched Irecv gave %d", flag);
        /* The message sent afterwards goes to the next receive. */
        OK(MPI_Barrier(tw));
        OK(MPI_Recv(&b, 1, MPI_INT, 1, 30, tw, &st));
        CHECK(a == -1 && b == 300, "after cancel: cancelled buffer %d, next receive %d", a, b);

        /* Cancel + Test (not Wait) also completes it. */
        OK(MPI_Irecv(&a, 1, MPI_INT, MPI_ANY_SOURCE, 31, tw, &q));
        OK(MPI_Cancel(&q));
        flag = 0;
        while (!flag)
            OK(MPI_Test(&q, &flag, &st));
        OK(MPI_Test_cancelled(&st, &flag));
        CHECK(flag == 1, "Test_cancelled (via Test) gave %d", flag);

        /* Matched receive: not cancelled. Rank 1 sends before the barrier,
         * so by the time rank 0 leaves it the message has been matched
         * (same ordered channel). */
        a = -1;
        OK(MPI_Irecv(&a, 1, MPI_INT, 1, 32, tw, &q));
        OK(MPI_Barrier(tw));
        OK(MPI_Barrier(tw));
        OK(MPI_Cancel(&q));
        OK(MPI_Wait(&q, &st));
        OK(MPI_Test_cancelled(&st, &flag));
        CHECK(flag == 0, "a matched receive was cancelled");
        CHECK(a == 320 && st.MPI_SOURCE == 1 && st.MPI_TAG == 32, "matched receive: %d from %d/%d",
              a, st.MPI_SOURCE, st.MPI_TAG);

        /* Cancel of a send: vmpi may refuse; either way the outcome must be
         * consistent with what the receiver sees. */
        int s = 330;
        OK(MPI_Isend(&s, 1, MPI_INT, 1, 33, tw, &q));
        OK(MPI_Cancel(&q));
        OK(MPI_Wait(&q, &st));
        OK(MPI_Test_cancelled(&st, &flag));
        OK(MPI_Send(&flag, 1, MPI_INT, 1, 34, tw));
    } else {
        OK(MPI_Barrier(tw));
        int b = 300;
        OK(MPI_Send(&b, 1, MPI_INT, 0, 30, tw));
        b = 320;
        OK(MPI_Barrier(tw));
        OK(MPI_Send(&b, 1, MPI_INT, 0, 32, tw));
        OK(MPI_Barrier(tw));
        int cancelled, got = -1, flag = 0;
        MPI_Status st;
        OK(MPI_Recv(&cancelled, 1, MPI_INT, 0, 34, tw, &st));
        OK(MPI_Iprobe(0, 33, tw, &flag, &st));
        if (flag)
            OK(MPI_Recv(&got, 1, MPI_INT, 0, 33, tw, &st));
        CHECK(cancelled ? !flag : (flag && got == 330),
              "send cancel: Test_cancelled %d but message %s", cancelled,
              flag ? "arrived" : "did not arrive");
    }
}

/* Waitany / Waitsome / Testany / Testsome / Testall / Waitall semantics. */
static void multi_tests(void)
{
    OK(MPI_Barrier(tw));
    MPI_Request nul[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status st, sts[4];
    int idx = -5, flag = -5, out = -5, ind[4];

    /* All-null arrays. */
    memset(&st, 0x7f, sizeof st);
    OK(MPI_Waitany(3, nul, &idx, &st));
    CHECK(idx == MPI_UNDEFINED, "Waitany over nulls: index %d", idx);
    expect_empty(&st, "Waitany over nulls");
    idx = -5;
    OK(MPI_Testany(3, nul, &idx, &flag, &st));
    CHECK(flag == 1 && idx == MPI_UNDEFINED, "Testany over nulls: flag %d index %d", flag, idx);
    OK(MPI_Waitsome(3, nul, &out, ind, sts));
    CHECK(out == MPI_UNDEFINED, "Waitsome over nulls: outcount %d", out);
    out = -5;
    OK(MPI_Testsome(3, nul, &out, ind, sts));
    CHECK(out == MPI_UNDEFINED, "Testsome over nulls: outcount %d", out);
    flag = -5;
    OK(MPI_Testall(3, nul, &flag, sts));
    CHECK(flag == 1, "Testall over nulls: flag %d", flag);
    for (int i = 0; i < 3; i++)
        expect_empty(&sts[i], "Testall over nulls");
    OK(MPI_Waitall(3, nul, sts));
    /* count 0 */
    OK(MPI_Waitall(0, nul, sts));
    idx = -5;
    OK(MPI_Waitany(0, nul, &idx, &st));
    CHECK(idx == MPI_UNDEFINED, "Waitany(count 0): index %d", idx);
    flag = 0;
    OK(MPI_Testall(0, nul, &flag, sts));
    CHECK(flag == 1, "Testall(count 0): flag %d", flag);

    if (rank == 0) {
        int a = -1, b = -1, c = -1;
        MPI_Request q[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL,
                            MPI_REQUEST_NULL};
        OK(MPI_Irecv(&a, 1, MPI_INT, 1, 41, tw, &q[1]));
        OK(MPI_Irecv(&b, 1, MPI_INT, 1, 42, tw, &q[3]));
        /* Nothing sent yet: Testany/Testsome/Testall say so. */
        idx = -5;
        flag = -5;
        OK(MPI_Testany(4, q, &idx, &flag, &st));
        CHECK(flag == 0, "Testany with nothing arrived: flag %d", flag);
        CHECK(idx == MPI_UNDEFINED, "Testany with nothing done: index %d, want MPI_UNDEFINED "
                                    "(MPI-3.1 3.7.5)", idx);
        out = -5;
        OK(MPI_Testsome(4, q, &out, ind, sts));
        CHECK(out == 0, "Testsome with nothing arrived: outcount %d", out);
        flag = -5;
        OK(MPI_Testall(4, q, &flag, sts));
        CHECK(flag == 0, "Testall with nothing arrived: flag %d", flag);
        CHECK(q[1] != MPI_REQUEST_NULL && q[3] != MPI_REQUEST_NULL,
              "Testall with flag 0 freed requests");
        /* Rank 1 sends tag 42 only: Waitany picks index 3. */
        OK(MPI_Send(NULL, 0, MPI_INT, 1, 40, tw));
        OK(MPI_Waitany(4, q, &idx, &st));
        CHECK(idx == 3 && b == 42 && st.MPI_TAG == 42 && q[3] == MPI_REQUEST_NULL,
              "Waitany: index %d b %d tag %d", idx, b, st.MPI_TAG);
        CHECK(q[1] != MPI_REQUEST_NULL, "Waitany freed the pending request");
        /* Then tag 41 and 43: Waitsome returns what is done. */
        OK(MPI_Irecv(&c, 1, MPI_INT, 1, 43, tw, &q[0]));
        OK(MPI_Send(NULL, 0, MPI_INT, 1, 40, tw));
        int got = 0, seen[4] = {0, 0, 0, 0};
        while (got < 2) {
            OK(MPI_Waitsome(4, q, &out, ind, sts));
            CHECK(out >= 1 && out <= 2, "Waitsome outcount %d", out);
            for (int k = 0; k < out; k++) {
                CHECK(ind[k] == 0 || ind[k] == 1, "Waitsome index %d", ind[k]);
                CHECK(!seen[ind[k]], "Waitsome returned index %d twice", ind[k]);
                seen[ind[k]] = 1;
                CHECK(sts[k].MPI_TAG == (ind[k] == 0 ? 43 : 41), "Waitsome status %d tag %d",
                      k, sts[k].MPI_TAG);
                CHECK(q[ind[k]] == MPI_REQUEST_NULL, "Waitsome left request %d", ind[k]);
            }
            got += out;
        }
        CHECK(a == 41 && c == 43, "Waitsome data a %d c %d", a, c);
        OK(MPI_Waitsome(4, q, &out, ind, sts));
        CHECK(out == MPI_UNDEFINED, "Waitsome once all are null: %d", out);
        /* Testall completes everything at once and leaves nulls' statuses empty. */
        OK(MPI_Irecv(&a, 1, MPI_INT, 1, 44, tw, &q[2]));
        OK(MPI_Send(NULL, 0, MPI_INT, 1, 40, tw));
        flag = 0;
        while (!flag)
            OK(MPI_Testall(4, q, &flag, sts));
        CHECK(a == 44 && sts[2].MPI_TAG == 44 && q[2] == MPI_REQUEST_NULL, "Testall: a %d tag %d",
              a, sts[2].MPI_TAG);
        expect_empty(&sts[0], "Testall null entry");
        /* Testany that finds one done. */
        OK(MPI_Irecv(&a, 1, MPI_INT, 1, 45, tw, &q[1]));
        OK(MPI_Send(NULL, 0, MPI_INT, 1, 40, tw));
        flag = 0;
        while (!flag)
            OK(MPI_Testany(4, q, &idx, &flag, &st));
        CHECK(idx == 1 && a == 45 && st.MPI_TAG == 45 && q[1] == MPI_REQUEST_NULL,
              "Testany: index %d a %d", idx, a);
        /* Testsome that finds one done. */
        OK(MPI_Irecv(&a, 1, MPI_INT, 1, 46, tw, &q[3]));
        OK(MPI_Send(NULL, 0, MPI_INT, 1, 40, tw));
        out = 0;
        while (out == 0)
            OK(MPI_Testsome(4, q, &out, ind, sts));
        CHECK(out == 1 && ind[0] == 3 && a == 46 && sts[0].MPI_TAG == 46,
              "Testsome: outcount %d index %d a %d", out, ind[0], a);
    } else {
        int v;
        OK(MPI_Recv(NULL, 0, MPI_INT, 0, 40, tw, MPI_STATUS_IGNORE));
        v = 42;
        OK(MPI_Send(&v, 1, MPI_INT, 0, 42, tw));
        OK(MPI_Recv(NULL, 0, MPI_INT, 0, 40, tw, MPI_STATUS_IGNORE));
        v = 41;
        OK(MPI_Send(&v, 1, MPI_INT, 0, 41, tw));
        v = 43;
        OK(MPI_Send(&v, 1, MPI_INT, 0, 43, tw));
        for (int t = 44; t <= 46; t++) {
            OK(MPI_Recv(NULL, 0, MPI_INT, 0, 40, tw, MPI_STATUS_IGNORE));
            OK(MPI_Send(&t, 1, MPI_INT, 0, t, tw));
        }
    }
}

static void proc_null(void)
{
    int x = 5, y = 7;
    MPI_Status st;
    MPI_Request q;
    int cnt = -1;
    OK(MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 1, tw));
    OK(MPI_Ssend(&x, 1, MPI_INT, MPI_PROC_NULL, 1, tw));
    memset(&st, 0x7f, sizeof st);
    OK(MPI_Recv(&y, 1, MPI_INT, MPI_PROC_NULL, 1, tw, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && cnt == 0 && y == 7,
          "Recv(PROC_NULL): source %d tag %d count %d y %d (raw %#x %#x)", st.MPI_SOURCE, st.MPI_TAG, cnt, y, (unsigned)st.count_lo, (unsigned)st.count_hi_and_cancelled);
    OK(MPI_Irecv(&y, 1, MPI_INT, MPI_PROC_NULL, 1, tw, &q));
    memset(&st, 0x7f, sizeof st);
    OK(MPI_Wait(&q, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && cnt == 0,
          "Irecv(PROC_NULL): source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, cnt);
    OK(MPI_Isend(&x, 1, MPI_INT, MPI_PROC_NULL, 1, tw, &q));
    OK(MPI_Wait(&q, &st));
    memset(&st, 0x7f, sizeof st);
    OK(MPI_Sendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 1, &y, 1, MPI_INT, MPI_PROC_NULL, 1,
                    tw, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && cnt == 0 && y == 7,
          "Sendrecv(PROC_NULL): source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, cnt);
    int flag = 0;
    OK(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, tw, &flag, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(flag == 1 && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && cnt == 0,
          "Iprobe(PROC_NULL): flag %d source %d tag %d count %d", flag, st.MPI_SOURCE,
          st.MPI_TAG, cnt);
}

static void self_sends(void)
{
    MPI_Request q;
    MPI_Status st;
    int cnt;
    /* small */
    int a[3] = {rank, 2, 3}, b[3] = {0, 0, 0};
    OK(MPI_Isend(a, 3, MPI_INT, rank, 50, tw, &q));
    OK(MPI_Recv(b, 3, MPI_INT, rank, 50, tw, &st));
    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(b[0] == rank && b[2] == 3 && cnt == 3 && st.MPI_SOURCE == rank && st.MPI_TAG == 50,
          "self send: %d %d count %d source %d", b[0], b[2], cnt, st.MPI_SOURCE);
    /* 4 MiB */
    size_t n = (4u << 20) / 4;
    uint32_t *s = malloc(n * 4), *r = malloc(n * 4);
    CHECK(s && r, "malloc");
    for (size_t i = 0; i < n; i++)
        s[i] = (uint32_t)(i * 2654435761u) ^ (uint32_t)rank;
    memset(r, 0, n * 4);
    OK(MPI_Isend(s, (int)n, MPI_UINT32_T, rank, 51, tw, &q));
    OK(MPI_Recv(r, (int)n, MPI_UINT32_T, MPI_ANY_SOURCE, 51, tw, &st));
    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    OK(MPI_Get_count(&st, MPI_UINT32_T, &cnt));
    CHECK((size_t)cnt == n && st.MPI_SOURCE == rank, "4 MiB self send: count %d source %d", cnt,
          st.MPI_SOURCE);
    CHECK(memcmp(s, r, n * 4) == 0, "4 MiB self send: data differs");
    /* Receive posted first, then the send. */
    memset(r, 0, n * 4);
    MPI_Request rq;
    OK(MPI_Irecv(r, (int)n, MPI_UINT32_T, rank, 52, tw, &rq));
    OK(MPI_Send(s, (int)n, MPI_UINT32_T, rank, 52, tw));
    OK(MPI_Wait(&rq, &st));
    CHECK(memcmp(s, r, n * 4) == 0, "self send to a posted receive: data differs");
    /* Synchronous: Issend does not complete before the Recv. */
    int flag = 1;
    b[0] = -1;
    OK(MPI_Issend(a, 3, MPI_INT, rank, 53, tw, &q));
    OK(MPI_Test(&q, &flag, &st));
    CHECK(flag == 0, "Issend to self completed before the receive was posted");
    OK(MPI_Recv(b, 3, MPI_INT, rank, 53, tw, &st));
    OK(MPI_Wait(&q, &st));
    CHECK(b[0] == rank, "Issend to self: %d", b[0]);
    /* Large synchronous to self. */
    memset(r, 0, n * 4);
    OK(MPI_Issend(s, (int)n, MPI_UINT32_T, rank, 54, tw, &q));
    OK(MPI_Test(&q, &flag, &st));
    CHECK(flag == 0, "4 MiB Issend to self completed before the receive was posted");
    OK(MPI_Recv(r, (int)n, MPI_UINT32_T, rank, 54, tw, &st));
    OK(MPI_Wait(&q, &st));
    CHECK(memcmp(s, r, n * 4) == 0, "4 MiB Issend to self: data differs");
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tw = t_pair_comm();
    MPI_Comm_rank(tw, &rank);
    MPI_Comm_size(tw, &size);
    CHECK(size == 2, "needs 2 ranks");

    ssend_waits(100, 0);
    ssend_waits(2 << 20, 0);
    ssend_waits(100, 1);
    ssend_waits(2 << 20, 1);
    ssend_waits(0, 0);
    rsend();
    cancel_tests();
    multi_tests();
    proc_null();
    self_sends();

    OK(MPI_Barrier(tw));
    if (rank == 0)
        printf("t_p2p_modes: OK\n");
    MPI_Finalize();
    return 0;
}
