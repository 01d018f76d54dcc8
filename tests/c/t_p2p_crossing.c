/* np: 2 */
/* env: VMPI_SMP_CMA=1 */
/* env: VMPI_SMP_CMA=0 */
/* net: ofi h2 */
/* vms: v2 v4 h2v2 v2net v2iv */
/* Crossing large messages: both ranks block in MPI_Send of 1 MiB and 8 MiB
 * to each other before either receives (vmpi pulls unexpected rendezvous
 * data, so this must not deadlock), several in a row; crossing
 * Isend/Irecv in both posting orders; Sendrecv with different sizes each
 * way; Sendrecv_replace with a non-contiguous (vector) type, small and
 * large. Every byte is checked. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#include "t_check.h"

/* The communicator of this rank's pair (t_pair_comm). */
static MPI_Comm tw;

static uint32_t val(int seed, size_t i)
{
    uint32_t x = (uint32_t)seed * 0x9e3779b9u ^ (uint32_t)i * 0x85ebca6bu;
    return x ^ (x >> 15);
}

static void fill(uint32_t *b, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = val(seed, i);
}

static void expect(const uint32_t *b, size_t n, int seed, const char *what)
{
    for (size_t i = 0; i < n; i++)
        CHECK(b[i] == val(seed, i), "%s: word %zu of %zu is %#x, want %#x", what, i, n,
              (unsigned)b[i], (unsigned)val(seed, i));
}

/* Both ranks: MPI_Send(n words) to the peer, then MPI_Recv. */
static void blocking_cross(size_t n, int reps, int seed)
{
    int peer = 1 - rank;
    uint32_t *s = malloc(n * 4 * (size_t)reps), *r = malloc(n * 4);
    CHECK(s && r, "malloc");
    for (int k = 0; k < reps; k++)
        fill(s + (size_t)k * n, n, seed + 10 * rank + k);
    for (int k = 0; k < reps; k++)
        OK(MPI_Send(s + (size_t)k * n, (int)n, MPI_UINT32_T, peer, 5 + k, tw));
    for (int k = 0; k < reps; k++) {
        MPI_Status st;
        int cnt;
        char what[80];
        memset(r, 0, n * 4);
        OK(MPI_Recv(r, (int)n, MPI_UINT32_T, peer, 5 + k, tw, &st));
        OK(MPI_Get_count(&st, MPI_UINT32_T, &cnt));
        CHECK((size_t)cnt == n && st.MPI_SOURCE == peer && st.MPI_TAG == 5 + k,
              "count %d source %d tag %d", cnt, st.MPI_SOURCE, st.MPI_TAG);
        snprintf(what, sizeof what, "blocking cross of %zu bytes, #%d", n * 4, k);
        expect(r, n, seed + 10 * peer + k, what);
    }
    free(s);
    free(r);
}

/* Isend/Irecv crossing; recv_first chooses the posting order. */
static void nonblocking_cross(size_t n, int recv_first, int seed)
{
    int peer = 1 - rank;
    uint32_t *s = malloc(n * 4), *r = malloc(n * 4);
    CHECK(s && r, "malloc");
    fill(s, n, seed + rank);
    memset(r, 0, n * 4);
    MPI_Request q[2];
    MPI_Status st[2];
    if (recv_first) {
        OK(MPI_Irecv(r, (int)n, MPI_UINT32_T, peer, 9, tw, &q[0]));
        OK(MPI_Isend(s, (int)n, MPI_UINT32_T, peer, 9, tw, &q[1]));
    } else {
        OK(MPI_Isend(s, (int)n, MPI_UINT32_T, peer, 9, tw, &q[1]));
        OK(MPI_Irecv(r, (int)n, MPI_UINT32_T, peer, 9, tw, &q[0]));
    }
    OK(MPI_Waitall(2, q, st));
    int cnt;
    OK(MPI_Get_count(&st[0], MPI_UINT32_T, &cnt));
    CHECK((size_t)cnt == n, "Irecv count %d, want %zu", cnt, n);
    char what[80];
    snprintf(what, sizeof what, "Isend/Irecv cross of %zu bytes (%s first)", n * 4,
             recv_first ? "recv" : "send");
    expect(r, n, seed + peer, what);
    free(s);
    free(r);
}

/* Sendrecv: rank r sends n_r words; the receive buffer is bigger. */
static void sendrecv_cross(size_t n0, size_t n1, int seed)
{
    int peer = 1 - rank;
    size_t mine = rank ? n1 : n0, theirs = rank ? n0 : n1;
    size_t cap = (n0 > n1 ? n0 : n1) + 100;
    uint32_t *s = malloc(mine * 4 + 4), *r = malloc(cap * 4);
    CHECK(s && r, "malloc");
    fill(s, mine, seed + rank);
    for (size_t i = 0; i < cap; i++)
        r[i] = 0xdeadbeef;
    MPI_Status st;
    OK(MPI_Sendrecv(s, (int)mine, MPI_UINT32_T, peer, 20 + rank, r, (int)cap, MPI_UINT32_T,
                    peer, 20 + peer, tw, &st));
    int cnt;
    OK(MPI_Get_count(&st, MPI_UINT32_T, &cnt));
    CHECK((size_t)cnt == theirs && st.MPI_SOURCE == peer && st.MPI_TAG == 20 + peer,
          "Sendrecv: count %d (want %zu) source %d tag %d", cnt, theirs, st.MPI_SOURCE,
          st.MPI_TAG);
    expect(r, theirs, seed + peer, "Sendrecv");
    for (size_t i = theirs; i < cap; i++)
        CHECK(r[i] == 0xdeadbeef, "Sendrecv wrote word %zu past the message", i);
    free(s);
    free(r);
}

/* Sendrecv_replace with vector(count, 2, 5) of uint32: the selected words
 * are exchanged, the gaps keep their own values. */
static void sendrecv_replace_vector(int count, int seed)
{
    int peer = 1 - rank;
    const int bl = 2, stride = 5;
    MPI_Datatype vec;
    OK(MPI_Type_vector(count, bl, stride, MPI_UINT32_T, &vec));
    OK(MPI_Type_commit(&vec));
    size_t words = (size_t)(count - 1) * stride + bl;
    uint32_t *b = malloc(words * 4);
    CHECK(b, "malloc");
    for (size_t i = 0; i < words; i++)
        b[i] = ((i % stride) < (size_t)bl) ? val(seed + rank, i) : 0xf0000000u + (uint32_t)rank;
    MPI_Status st;
    OK(MPI_Sendrecv_replace(b, 1, vec, peer, 30, peer, 30, tw, &st));
    int cnt;
    OK(MPI_Get_count(&st, vec, &cnt));
    CHECK(cnt == 1, "Sendrecv_replace: count %d of the vector type", cnt);
    OK(MPI_Get_count(&st, MPI_UINT32_T, &cnt));
    CHECK(cnt == count * bl, "Sendrecv_replace: %d words, want %d", cnt, count * bl);
    for (size_t i = 0; i < words; i++) {
        uint32_t want = ((i % stride) < (size_t)bl) ? val(seed + peer, i)
                                                    : 0xf0000000u + (uint32_t)rank;
        CHECK(b[i] == want, "Sendrecv_replace(vector of %d): word %zu is %#x, want %#x", count,
              i, (unsigned)b[i], (unsigned)want);
    }
    free(b);
    OK(MPI_Type_free(&vec));
    CHECK(vec == MPI_DATATYPE_NULL, "Type_free did not reset the handle");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tw = t_pair_comm();
    MPI_Comm_rank(tw, &rank);
    MPI_Comm_size(tw, &size);
    CHECK(size == 2, "needs 2 ranks");

    blocking_cross((1 << 20) / 4, 1, 100);      /* 1 MiB */
    blocking_cross((8 << 20) / 4, 1, 200);      /* 8 MiB */
    blocking_cross((1 << 20) / 4 + 3, 4, 300);  /* 4 x ~1 MiB in a row */
    blocking_cross(10, 3, 400);                 /* small (eager) too */
    OK(MPI_Barrier(tw));

    for (int rf = 0; rf < 2; rf++) {
        nonblocking_cross((8 << 20) / 4, rf, 500 + rf);
        nonblocking_cross(3000, rf, 510 + rf);
        /* one rank posts receive first, the other send first */
        nonblocking_cross((1 << 20) / 4, rank ^ rf, 520 + rf);
    }
    OK(MPI_Barrier(tw));

    sendrecv_cross(10, 1 << 20, 600);
    sendrecv_cross((2 << 20) + 5, 7, 610);
    sendrecv_cross(0, 5000, 620);
    sendrecv_cross(300000, 300001, 630);

    sendrecv_replace_vector(7, 700);                 /* 56 bytes */
    sendrecv_replace_vector(300000, 710);            /* 2.4 MB of data */

    OK(MPI_Barrier(tw));
    if (rank == 0)
        printf("t_p2p_crossing: OK\n");
    MPI_Finalize();
    return 0;
}
