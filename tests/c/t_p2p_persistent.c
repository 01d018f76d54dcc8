/* np: 2 */
/* env: VMPI_SMP_CMA=1 */
/* env: VMPI_SMP_CMA=0 */
/* net: ofi h2 */
/* vms: v2 v4 h2v2 v2net v2iv */
/* Persistent requests: Send_init / Ssend_init / Rsend_init / Recv_init,
 * restarted 100 times with Start and Startall while the buffers change, and
 * completed alternately with Wait, Test loops, Waitall and Testall; a
 * rendezvous-sized persistent pair; the handles stay valid across
 * completions; Wait/Test/Testany on inactive requests give an empty status;
 * Request_free of inactive (never started and already completed)
 * persistent requests, and of an active one whose operation must still
 * complete. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#include "t_check.h"

/* The communicator of this rank's pair (t_pair_comm). */
static MPI_Comm tw;

#define ITERS 100
#define NSMALL 37
#define NBIG 100003 /* ints: ~400 KB, rendezvous */

static int v(int it, int k, int i)
{
    return it * 1000003 + k * 7919 + i;
}

static void expect_empty(const MPI_Status *st, const char *what)
{
    int cnt = -1, canc = -1;
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG,
          "%s: empty status has source %d tag %d", what, st->MPI_SOURCE, st->MPI_TAG);
    OK(MPI_Get_count(st, MPI_INT, &cnt));
    OK(MPI_Test_cancelled(st, &canc));
    CHECK(cnt == 0 && canc == 0, "%s: empty status has count %d cancelled %d", what, cnt, canc);
}

/* Completes *q with Wait or with a Test loop, by iteration. */
static void complete(MPI_Request *q, int it, MPI_Status *st)
{
    MPI_Request h = *q;
    if (it % 2 == 0) {
        OK(MPI_Wait(q, st));
    } else {
        int flag = 0;
        double t0 = MPI_Wtime();
        while (!flag) {
            OK(MPI_Test(q, &flag, st));
            CHECK(MPI_Wtime() - t0 < 30, "persistent request never completed");
        }
    }
    CHECK(*q == h, "completing a persistent request changed its handle (%#x -> %#x)",
          (unsigned)h, (unsigned)*q);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tw = t_pair_comm();
    MPI_Comm_rank(tw, &rank);
    MPI_Comm_size(tw, &size);
    CHECK(size == 2, "needs 2 ranks");
    int peer = 1 - rank;

    int small[3][NSMALL];
    int *big = malloc(sizeof(int) * NBIG);
    int ack = 0, ackv = 0;
    CHECK(big, "malloc");
    MPI_Request q[3], qbig, qack, qready;
    MPI_Status st, sts[3];

    if (rank == 0) {
        OK(MPI_Send_init(small[0], NSMALL, MPI_INT, 1, 1, tw, &q[0]));
        OK(MPI_Ssend_init(small[1], NSMALL, MPI_INT, 1, 2, tw, &q[1]));
        OK(MPI_Rsend_init(small[2], NSMALL, MPI_INT, 1, 3, tw, &q[2]));
        OK(MPI_Send_init(big, NBIG, MPI_INT, 1, 4, tw, &qbig));
        OK(MPI_Recv_init(&ackv, 1, MPI_INT, 1, 5, tw, &qack));
        OK(MPI_Recv_init(NULL, 0, MPI_INT, 1, 6, tw, &qready));
    } else {
        for (int k = 0; k < 3; k++)
            OK(MPI_Recv_init(small[k], NSMALL, MPI_INT, 0, 1 + k, tw, &q[k]));
        OK(MPI_Recv_init(big, NBIG, MPI_INT, 0, 4, tw, &qbig));
        OK(MPI_Send_init(&ack, 1, MPI_INT, 0, 5, tw, &qack));
        OK(MPI_Send_init(NULL, 0, MPI_INT, 0, 6, tw, &qready));
    }

    /* Inactive requests: Wait/Test return at once with an empty status. */
    memset(&st, 0x7f, sizeof st);
    OK(MPI_Wait(&q[0], &st));
    expect_empty(&st, "Wait on a never-started persistent request");
    int flag = 0;
    memset(&st, 0x7f, sizeof st);
    OK(MPI_Test(&q[1], &flag, &st));
    CHECK(flag == 1, "Test on an inactive request gave flag 0");
    expect_empty(&st, "Test on a never-started persistent request");
    int idx = -5;
    flag = 0;
    OK(MPI_Testany(3, q, &idx, &flag, &st));
    CHECK(flag == 1 && idx == MPI_UNDEFINED, "Testany over inactive requests: flag %d index %d",
          flag, idx);

    for (int it = 0; it < ITERS; it++) {
        if (rank == 0) {
            for (int k = 0; k < 3; k++)
                for (int i = 0; i < NSMALL; i++)
                    small[k][i] = v(it, k, i);
            for (int i = 0; i < NBIG; i += 97)
                big[i] = v(it, 9, i);
            big[NBIG - 1] = v(it, 9, NBIG - 1);
            /* Rsend needs the receive posted: wait for rank 1's go. */
            OK(MPI_Start(&qready));
            complete(&qready, it, &st);
            CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == 6, "ready: source %d tag %d",
                  st.MPI_SOURCE, st.MPI_TAG);
            if (it % 3 == 0) {
                OK(MPI_Startall(3, q));
            } else {
                OK(MPI_Start(&q[2])); /* the ready send first */
                OK(MPI_Start(&q[0]));
                OK(MPI_Start(&q[1]));
            }
            OK(MPI_Start(&qbig));
            OK(MPI_Start(&qack));
            if (it % 4 == 1) {
                flag = 0;
                while (!flag)
                    OK(MPI_Testall(3, q, &flag, sts));
            } else {
                for (int k = 0; k < 3; k++)
                    complete(&q[k], it + k, &sts[k]);
            }
            complete(&qbig, it, &st);
            complete(&qack, it + 1, &st);
            CHECK(ackv == it * 2 + 1, "iteration %d: ack %d, want %d", it, ackv, it * 2 + 1);
            CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == 5, "ack status %d/%d", st.MPI_SOURCE,
                  st.MPI_TAG);
        } else {
            for (int k = 0; k < 3; k++)
                memset(small[k], 0, sizeof small[k]);
            big[0] = big[NBIG - 1] = -1;
            if (it % 2)
                OK(MPI_Startall(3, q));
            else
                for (int k = 2; k >= 0; k--)
                    OK(MPI_Start(&q[k]));
            OK(MPI_Start(&qbig));
            OK(MPI_Start(&qready)); /* receives are posted: go */
            if (it % 4 == 3) {
                OK(MPI_Waitall(3, q, sts));
            } else {
                for (int k = 0; k < 3; k++)
                    complete(&q[k], it + k + 1, &sts[k]);
            }
            complete(&qbig, it + 1, &st);
            int cnt;
            OK(MPI_Get_count(&st, MPI_INT, &cnt));
            CHECK(cnt == NBIG && st.MPI_TAG == 4 && st.MPI_SOURCE == 0,
                  "big: count %d tag %d source %d", cnt, st.MPI_TAG, st.MPI_SOURCE);
            for (int k = 0; k < 3; k++) {
                OK(MPI_Get_count(&sts[k], MPI_INT, &cnt));
                CHECK(cnt == NSMALL && sts[k].MPI_TAG == 1 + k && sts[k].MPI_SOURCE == 0,
                      "small %d: count %d tag %d source %d", k, cnt, sts[k].MPI_TAG,
                      sts[k].MPI_SOURCE);
                for (int i = 0; i < NSMALL; i++)
                    CHECK(small[k][i] == v(it, k, i),
                          "iteration %d, request %d: int %d is %d, want %d (stale buffer?)", it,
                          k, i, small[k][i], v(it, k, i));
            }
            for (int i = 0; i < NBIG; i += 97)
                CHECK(big[i] == v(it, 9, i), "iteration %d: big[%d] = %d, want %d", it, i,
                      big[i], v(it, 9, i));
            CHECK(big[NBIG - 1] == v(it, 9, NBIG - 1), "iteration %d: last big int %d", it,
                  big[NBIG - 1]);
            ack = it * 2 + 1;
            OK(MPI_Start(&qack));
            complete(&qack, it, &st);
            complete(&qready, it, &st);
        }
    }

    /* Completed persistent requests are inactive again. */
    memset(&st, 0x7f, sizeof st);
    OK(MPI_Wait(&qbig, &st));
    expect_empty(&st, "Wait on a completed persistent request");
    flag = 0;
    OK(MPI_Test(&q[2], &flag, &st));
    CHECK(flag == 1, "Test on a completed persistent request gave flag 0");
    expect_empty(&st, "Test on a completed persistent request");

    /* Free the inactive ones. */
    for (int k = 0; k < 3; k++) {
        OK(MPI_Request_free(&q[k]));
        CHECK(q[k] == MPI_REQUEST_NULL, "Request_free left handle %#x", (unsigned)q[k]);
    }
    OK(MPI_Request_free(&qbig));
    OK(MPI_Request_free(&qready));
    CHECK(qbig == MPI_REQUEST_NULL && qready == MPI_REQUEST_NULL, "Request_free left handles");

    /* A persistent request never started, freed. */
    MPI_Request never;
    OK(MPI_Send_init(small[0], 1, MPI_INT, peer, 50, tw, &never));
    OK(MPI_Request_free(&never));
    CHECK(never == MPI_REQUEST_NULL, "Request_free of a never-started request");

    /* An active persistent send freed: its message still arrives. */
    OK(MPI_Barrier(tw));
    if (rank == 0) {
        for (int i = 0; i < NBIG; i++)
            big[i] = v(777, 1, i);
        MPI_Request fs;
        OK(MPI_Send_init(big, NBIG, MPI_INT, 1, 60, tw, &fs));
        OK(MPI_Start(&fs));
        OK(MPI_Request_free(&fs));
        CHECK(fs == MPI_REQUEST_NULL, "Request_free of an active request left %#x",
              (unsigned)fs);
        /* Rank 1's ack says the data arrived: only then may big change. */
        OK(MPI_Wait(&qack, &st));
        OK(MPI_Start(&qack));
        OK(MPI_Wait(&qack, &st));
        CHECK(ackv == 4242, "final ack %d", ackv);
    } else {
        memset(big, 0, sizeof(int) * NBIG);
        OK(MPI_Recv(big, NBIG, MPI_INT, 0, 60, tw, &st));
        for (int i = 0; i < NBIG; i++)
            CHECK(big[i] == v(777, 1, i), "freed active send: int %d is %d", i, big[i]);
        ack = 4242;
        OK(MPI_Start(&qack));
        OK(MPI_Wait(&qack, &st));
    }
    OK(MPI_Request_free(&qack));

    /* A persistent receive freed while active and then matched: the message
     * is consumed by it, not by a later receive. */
    OK(MPI_Barrier(tw));
    if (rank == 1) {
        static int sink[4];
        MPI_Request fr;
        OK(MPI_Recv_init(sink, 4, MPI_INT, 0, 70, tw, &fr));
        OK(MPI_Start(&fr));
        OK(MPI_Request_free(&fr));
        OK(MPI_Barrier(tw));
        int x = 0;
        OK(MPI_Recv(&x, 1, MPI_INT, 0, 70, tw, &st));
        CHECK(x == 2, "second message on tag 70 is %d, want 2 (the freed receive did not "
                      "take the first)", x);
    } else {
        OK(MPI_Barrier(tw));
        int x = 1;
        OK(MPI_Send(&x, 1, MPI_INT, 1, 70, tw));
        x = 2;
        OK(MPI_Send(&x, 1, MPI_INT, 1, 70, tw));
    }

    /* Cancel of a started persistent receive: the operation is cancelled,
     * the request stays allocated (inactive) and can be started again. */
    OK(MPI_Barrier(tw));
    if (rank == 1) {
        int z = -1, canc = -1;
        MPI_Request cr;
        OK(MPI_Recv_init(&z, 1, MPI_INT, 0, 80, tw, &cr));
        OK(MPI_Start(&cr));
        OK(MPI_Cancel(&cr));
        OK(MPI_Wait(&cr, &st));
        OK(MPI_Test_cancelled(&st, &canc));
        CHECK(canc == 1 && cr != MPI_REQUEST_NULL && z == -1,
              "cancelled persistent receive: cancelled %d handle %#x z %d", canc, (unsigned)cr,
              z);
        OK(MPI_Start(&cr));
        OK(MPI_Send(NULL, 0, MPI_INT, 0, 81, tw)); /* go */
        OK(MPI_Wait(&cr, &st));
        OK(MPI_Test_cancelled(&st, &canc));
        CHECK(canc == 0 && z == 8080 && st.MPI_TAG == 80,
              "restarted persistent receive: cancelled %d z %d tag %d", canc, z, st.MPI_TAG);
        OK(MPI_Request_free(&cr));
    } else {
        int z = 8080;
        OK(MPI_Recv(NULL, 0, MPI_INT, 1, 81, tw, &st));
        OK(MPI_Send(&z, 1, MPI_INT, 1, 80, tw));
    }

    free(big);
    OK(MPI_Barrier(tw));
    if (rank == 0)
        printf("t_p2p_persistent: OK (%d iterations)\n", ITERS);
    MPI_Finalize();
    return 0;
}
