/* np: 2 */
/* env: VMPI_SMP_CMA=1 */
/* env: VMPI_SMP_CMA=0 */
/* env: VMPI_SMP_EAGER_MAX=0 */
/* net: ofi h2 */
/* vms: v2 v4 h2v2 v2net v2iv */
/* Truncated receives (message longer than the receive buffer) with
 * MPI_ERRORS_RETURN: the call returns an MPI_ERR_TRUNCATE code naming the
 * function, the status has the source and tag, MPI_Get_count gives the
 * bytes delivered (the buffer's size), the buffer holds the message's
 * first bytes and nothing beyond it is written; the multiple-completion
 * calls return MPI_ERR_IN_STATUS with MPI_ERR_TRUNCATE in that request's
 * status only. Eager and rendezvous sizes, receive posted before or after
 * the message arrived, contiguous and non-contiguous receive types; the
 * next message on the same pair still arrives intact. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#include "t_check.h"

/* The communicator of this rank's pair (t_pair_comm). */
static MPI_Comm tw;

#define GUARD 64

static unsigned char pat(int seed, size_t i)
{
    return (unsigned char)((i * 2654435761u) >> 13) ^ (unsigned char)seed;
}

static void expect_class(int rc, int want, const char *fname, const char *what)
{
    int cls = -1;
    CHECK(rc != MPI_SUCCESS, "%s: returned MPI_SUCCESS", what);
    OK(MPI_Error_class(rc, &cls));
    CHECK(cls == want, "%s: error class %d, want %d", what, cls, want);
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    OK(MPI_Error_string(rc, msg, &len));
    CHECK(strstr(msg, fname), "%s: message '%s' does not name %s", what, msg, fname);
}

/* rank 0 sends `len` bytes (tag), rank 1 receives into a `cap`-byte buffer
 * (followed by a guard zone): posted before (posted=1) or after the data
 * arrived; blocking Recv or Irecv+Wait. Then a small follow-up message. */
static void one(size_t len, size_t cap, int posted, int nonblocking, int seed)
{
    const int tag = 10 + seed;
    char what[128];
    snprintf(what, sizeof what, "%zu bytes into %zu (%s, %s)", len, cap,
             posted ? "posted" : "unexpected", nonblocking ? "Irecv+Wait" : "Recv");
    if (rank == 0) {
        unsigned char *s = malloc(len + 1);
        CHECK(s, "malloc");
        for (size_t i = 0; i < len; i++)
            s[i] = pat(seed, i);
        if (posted)
            OK(MPI_Barrier(tw));
        if (seed % 3 == 2)
            OK(MPI_Ssend(s, (int)len, MPI_BYTE, 1, tag, tw));
        else
            OK(MPI_Send(s, (int)len, MPI_BYTE, 1, tag, tw));
        int follow = 5000 + seed;
        OK(MPI_Send(&follow, 1, MPI_INT, 1, tag + 1, tw));
        if (!posted)
            OK(MPI_Barrier(tw));
        free(s);
        return;
    }
    unsigned char *r = malloc(cap + GUARD);
    CHECK(r, "malloc");
    memset(r, 0xcc, cap + GUARD);
    MPI_Status st;
    int rc;
    const char *fname;
    st.MPI_ERROR = -12345;
    if (!posted) {
        /* Make sure the whole message is here (or announced) first. */
        OK(MPI_Probe(0, tag, tw, &st));
        int n;
        OK(MPI_Get_count(&st, MPI_BYTE, &n));
        CHECK((size_t)n == len, "%s: Probe says %d bytes", what, n);
    }
    if (nonblocking) {
        MPI_Request q;
        OK(MPI_Irecv(r, (int)cap, MPI_BYTE, 0, tag, tw, &q));
        if (posted)
            OK(MPI_Barrier(tw));
        rc = MPI_Wait(&q, &st);
        fname = "MPI_Wait";
        CHECK(q == MPI_REQUEST_NULL, "%s: Wait with an error did not free the request", what);
    } else {
        /* Posted: the blocking receive is entered right after the barrier,
         * usually before the message arrives (either order is legal). */
        if (posted)
            OK(MPI_Barrier(tw));
        rc = MPI_Recv(r, (int)cap, MPI_BYTE, posted ? MPI_ANY_SOURCE : 0, tag, tw,
                      &st);
        fname = "MPI_Recv";
    }
    if (len > cap) {
        expect_class(rc, MPI_ERR_TRUNCATE, fname, what);
    } else {
        CHECK(rc == MPI_SUCCESS, "%s: rc %d", what, rc);
    }
    int n = -1;
    OK(MPI_Get_count(&st, MPI_BYTE, &n));
    size_t got = len < cap ? len : cap;
    CHECK((size_t)n == got, "%s: Get_count %d, want %zu (the bytes delivered)", what, n, got);
    CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == tag, "%s: status source %d tag %d", what,
          st.MPI_SOURCE, st.MPI_TAG);
    for (size_t i = 0; i < got; i++)
        CHECK(r[i] == pat(seed, i), "%s: byte %zu is %#x, want %#x", what, i, r[i], pat(seed, i));
    for (size_t i = got; i < cap + GUARD; i++)
        CHECK(r[i] == 0xcc, "%s: byte %zu past the %zu delivered was written", what, i, got);
    int follow = -1;
    OK(MPI_Recv(&follow, 1, MPI_INT, 0, tag + 1, tw, &st));
    CHECK(follow == 5000 + seed, "%s: the next message is %d", what, follow);
    if (!posted)
        OK(MPI_Barrier(tw));
    free(r);
}

/* Non-contiguous receive type truncated: vector(k, 1, 2) of int. */
static void vector_trunc(int nsend, int k, int seed)
{
    const int tag = 200 + seed;
    if (rank == 0) {
        int *s = malloc(sizeof(int) * (size_t)nsend);
        CHECK(s, "malloc");
        for (int i = 0; i < nsend; i++)
            s[i] = seed * 1000000 + i;
        OK(MPI_Send(s, nsend, MPI_INT, 1, tag, tw));
        free(s);
        return;
    }
    MPI_Datatype v;
    OK(MPI_Type_vector(k, 1, 2, MPI_INT, &v));
    OK(MPI_Type_commit(&v));
    size_t words = 2 * (size_t)k + 16;
    int *r = malloc(sizeof(int) * words);
    CHECK(r, "malloc");
    for (size_t i = 0; i < words; i++)
        r[i] = -1;
    MPI_Status st;
    int rc = MPI_Recv(r, 1, v, 0, tag, tw, &st);
    char what[80];
    snprintf(what, sizeof what, "%d ints into vector(%d,1,2)", nsend, k);
    expect_class(rc, MPI_ERR_TRUNCATE, "MPI_Recv", what);
    int n;
    OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == k, "%s: Get_count(MPI_INT) %d, want %d", what, n, k);
    for (size_t i = 0; i < words; i++) {
        int want = (i % 2 == 0 && i / 2 < (size_t)k) ? seed * 1000000 + (int)(i / 2) : -1;
        CHECK(r[i] == want, "%s: word %zu is %d, want %d", what, i, r[i], want);
    }
    free(r);
    OK(MPI_Type_free(&v));
}

/* Waitall / Waitsome / Testall / Waitany with one truncated request. */
static void multi(int big, int seed)
{
    const size_t len = big ? 300000 : 100, cap = big ? 1000 : 10;
    const int tag = 300 + seed;
    if (rank == 0) {
        unsigned char *s = malloc(len);
        CHECK(s, "malloc");
        for (size_t i = 0; i < len; i++)
            s[i] = pat(seed, i);
        int ok[5] = {1, 2, 3, 4, 5};
        for (int round = 0; round < 4; round++) {
            OK(MPI_Barrier(tw));
            OK(MPI_Send(ok, 5, MPI_INT, 1, tag, tw));
            OK(MPI_Send(s, (int)len, MPI_BYTE, 1, tag + 1, tw));
        }
        free(s);
        return;
    }
    unsigned char *r = malloc(cap + GUARD);
    CHECK(r, "malloc");
    static const char *names[4] = {"MPI_Waitall", "MPI_Waitsome", "MPI_Testall", "MPI_Waitany"};
    for (int round = 0; round < 4; round++) {
        int ok[5] = {0};
        MPI_Request q[3];
        MPI_Status st[3];
        memset(r, 0xcc, cap + GUARD);
        q[0] = MPI_REQUEST_NULL;
        OK(MPI_Irecv(ok, 5, MPI_INT, 0, tag, tw, &q[1]));
        OK(MPI_Irecv(r, (int)cap, MPI_BYTE, 0, tag + 1, tw, &q[2]));
        OK(MPI_Barrier(tw));
        for (int i = 0; i < 3; i++)
            st[i].MPI_ERROR = -777;
        char what[96];
        snprintf(what, sizeof what, "%s with a truncated %zu-byte message", names[round], len);
        int rc, trunc_idx = 2;
        if (round == 0) {
            rc = MPI_Waitall(3, q, st);
        } else if (round == 1) {
            int done = 0, out, ind[3], seen_err = 0;
            MPI_Status sst[3];
            rc = MPI_SUCCESS;
            while (done < 2) {
                int rc1 = MPI_Waitsome(3, q, &out, ind, sst);
                CHECK(out >= 1, "%s: outcount %d", what, out);
                for (int k = 0; k < out; k++) {
                    st[ind[k]] = sst[k];
                    if (ind[k] == 2)
                        seen_err = 1;
                }
                if (rc1 != MPI_SUCCESS) {
                    CHECK(seen_err, "%s: error returned without the truncated request", what);
                    rc = rc1;
                }
                done += out;
            }
        } else if (round == 2) {
            int flag = 0;
            rc = MPI_SUCCESS;
            while (!flag)
                rc = MPI_Testall(3, q, &flag, st);
        } else {
            /* Waitany: the single status is returned with the error itself. */
            int idx, got_ok = 0, got_trunc = 0;
            for (int k = 0; k < 2; k++) {
                MPI_Status s1;
                int rc1 = MPI_Waitany(3, q, &idx, &s1);
                if (idx == 2) {
                    expect_class(rc1, MPI_ERR_TRUNCATE, "MPI_Waitany", what);
                    int n;
                    OK(MPI_Get_count(&s1, MPI_BYTE, &n));
                    CHECK((size_t)n == cap, "%s: Get_count %d", what, n);
                    got_trunc = 1;
                } else {
                    CHECK(rc1 == MPI_SUCCESS && idx == 1, "%s: index %d rc %d", what, idx, rc1);
                    got_ok = 1;
                }
            }
            CHECK(got_ok && got_trunc, "%s: missing completion", what);
            CHECK(ok[4] == 5, "%s: untruncated message %d", what, ok[4]);
            continue;
        }
        expect_class(rc, MPI_ERR_IN_STATUS, names[round], what);
        int cls;
        OK(MPI_Error_class(st[trunc_idx].MPI_ERROR, &cls));
        CHECK(cls == MPI_ERR_TRUNCATE, "%s: status MPI_ERROR class %d, want MPI_ERR_TRUNCATE",
              what, cls);
        CHECK(st[1].MPI_ERROR == MPI_SUCCESS, "%s: the good request's status has error %d",
              what, st[1].MPI_ERROR);
        if (round != 1)
            CHECK(st[0].MPI_ERROR == MPI_SUCCESS || st[0].MPI_ERROR == -777,
                  "%s: the null request's status has error %d", what, st[0].MPI_ERROR);
        int n;
        OK(MPI_Get_count(&st[2], MPI_BYTE, &n));
        CHECK((size_t)n == cap, "%s: Get_count %d, want %zu", what, n, cap);
        OK(MPI_Get_count(&st[1], MPI_INT, &n));
        CHECK(n == 5 && ok[0] == 1 && ok[4] == 5, "%s: good request count %d data %d", what, n,
              ok[4]);
        for (size_t i = 0; i < cap; i++)
            CHECK(r[i] == pat(seed, i), "%s: byte %zu", what, i);
        for (size_t i = cap; i < cap + GUARD; i++)
            CHECK(r[i] == 0xcc, "%s: byte %zu past the buffer written", what, i);
        CHECK(q[1] == MPI_REQUEST_NULL && q[2] == MPI_REQUEST_NULL, "%s: requests not freed",
              what);
    }
    free(r);
}

/* Sendrecv whose receive part is truncated. */
static void sendrecv_trunc(void)
{
    int peer = 1 - rank;
    int s[20], r[5 + 4];
    for (int i = 0; i < 20; i++)
        s[i] = rank * 100 + i;
    for (int i = 0; i < 9; i++)
        r[i] = -1;
    MPI_Status st;
    int rc = MPI_Sendrecv(s, 20, MPI_INT, peer, 400, r, 5, MPI_INT, peer, 400, tw,
                          &st);
    expect_class(rc, MPI_ERR_TRUNCATE, "MPI_Sendrecv", "Sendrecv 20 ints into 5");
    int n;
    OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == 5 && r[0] == peer * 100 && r[4] == peer * 100 + 4 && r[5] == -1,
          "Sendrecv truncated: count %d data %d %d %d", n, r[0], r[4], r[5]);
    /* count 0 receive of a non-empty message */
    rc = MPI_Sendrecv(s, 3, MPI_INT, peer, 401, r, 0, MPI_INT, peer, 401, tw, &st);
    expect_class(rc, MPI_ERR_TRUNCATE, "MPI_Sendrecv", "3 ints into count 0");
    OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == 0 && r[0] == peer * 100, "count-0 receive: count %d", n);
}

/* The communicator of the failing request decides: with MPI_ERRORS_RETURN
 * on a duplicate and MPI_ERRORS_ARE_FATAL still on tw, a
 * truncation reported by Waitall / Waitsome / Testall returns
 * MPI_ERR_IN_STATUS instead of aborting. */
static void handler_of_request_comm(void)
{
    MPI_Comm c;
    OK(MPI_Comm_dup(tw, &c));
    OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    int big[100] = {0}, small[10];
    for (int round = 0; round < 3; round++) {
        if (rank == 0) {
            OK(MPI_Send(big, 100, MPI_INT, 1, 500 + round, c));
            continue;
        }
        MPI_Request q;
        MPI_Status st;
        int rc, flag = 0, out, idx;
        OK(MPI_Irecv(small, 10, MPI_INT, 0, 500 + round, c, &q));
        if (round == 0) {
            rc = MPI_Waitall(1, &q, &st);
        } else if (round == 1) {
            rc = MPI_Waitsome(1, &q, &out, &idx, &st);
        } else {
            do
                rc = MPI_Testall(1, &q, &flag, &st);
            while (rc == MPI_SUCCESS && !flag);
        }
        static const char *fn[3] = {"MPI_Waitall", "MPI_Waitsome", "MPI_Testall"};
        expect_class(rc, MPI_ERR_IN_STATUS, fn[round], "truncation on an ERRORS_RETURN comm");
        int cls;
        OK(MPI_Error_class(st.MPI_ERROR, &cls));
        CHECK(cls == MPI_ERR_TRUNCATE, "%s: status error class %d", fn[round], cls);
    }
    OK(MPI_Comm_free(&c));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tw = t_pair_comm();
    MPI_Comm_rank(tw, &rank);
    MPI_Comm_size(tw, &size);
    CHECK(size == 2, "needs 2 ranks");
    handler_of_request_comm(); /* before WORLD gets MPI_ERRORS_RETURN */
    OK(MPI_Comm_set_errhandler(tw, MPI_ERRORS_RETURN));

    int seed = 0;
    for (int posted = 0; posted < 2; posted++)
        for (int nb = 0; nb < 2; nb++) {
            one(100, 10, posted, nb, seed++);            /* the classic */
            one(100, 100, posted, nb, seed++);           /* exact fit: no error */
            one(1 << 20, 65536, posted, nb, seed++);     /* rendezvous */
            one(3 << 20, 100, posted, nb, seed++);       /* rendezvous, tiny buffer */
            one(40000, 0, posted, nb, seed++);           /* count 0 */
            one(16385, 16384, posted, nb, seed++);       /* one byte over */
        }
    vector_trunc(100, 10, seed++);
    vector_trunc(400000, 70000, seed++);
    multi(0, seed++);
    multi(1, seed++);
    sendrecv_trunc();

    OK(MPI_Barrier(tw));
    if (rank == 0)
        printf("t_err_truncate: OK\n");
    MPI_Finalize();
    return 0;
}
