/* np: 2 4 */
/* env: VMPI_SMP_CMA=1 */
/* env: VMPI_SMP_CMA=0 */
/* net: ofi h2 h4 */
/* vms: v2 v4 h2v2 v2net v2iv */
/* MPI_ANY_SOURCE under races: every other rank floods rank 0 at once with
 * messages of mixed sizes (eager and rendezvous) and send modes; rank 0
 * takes them with ANY_SOURCE receives -- Irecvs posted before the senders
 * start, Irecvs posted while data is already waiting, blocking receives,
 * and some receives naming the source -- and checks that each message
 * arrives exactly once, whole, and in per-source send order. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rank, size;

#include "t_check.h"

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts))
        ;
}

#define NMSG 400        /* per sender */
#define TAG 3
#define MAXLEN 70000

/* Size of message seq from src: mostly small, sometimes around or above
 * the eager threshold. */
static size_t msg_len(int src, int seq)
{
    if (seq % 37 == 5)
        return MAXLEN - (size_t)src;
    if (seq % 23 == 11)
        return 16384 + (size_t)(seq % 3) - 1;
    return 8 + (size_t)((seq * 13 + src * 5) % 200);
}

/* Message layout: int src, int seq, then pattern bytes. */
static unsigned char pat(int src, int seq, size_t i)
{
    return (unsigned char)(src * 31 + seq * 7 + i * 3 + (i >> 8));
}

static void make_msg(unsigned char *b, int src, int seq)
{
    size_t n = msg_len(src, seq);
    memcpy(b, &src, sizeof src);
    memcpy(b + 4, &seq, sizeof seq);
    for (size_t i = 8; i < n; i++)
        b[i] = pat(src, seq, i);
}

static int *next_seq; /* per source: the seq expected next */
static long received;

/* Checks one received message against what its sender must have sent. */
static void take(const unsigned char *b, const MPI_Status *st, const char *how)
{
    int src, seq, n;
    CHECK(st->MPI_TAG == TAG, "%s: tag %d", how, st->MPI_TAG);
    OK(MPI_Get_count(st, MPI_BYTE, &n));
    CHECK(n >= 8, "%s: message of %d bytes from %d", how, n, st->MPI_SOURCE);
    memcpy(&src, b, sizeof src);
    memcpy(&seq, b + 4, sizeof seq);
    CHECK(src == st->MPI_SOURCE, "%s: status source %d, message says %d", how,
          st->MPI_SOURCE, src);
    CHECK(src > 0 && src < size, "%s: bad source %d", how, src);
    CHECK(seq == next_seq[src],
          "%s: from rank %d got seq %d, want %d (%s)", how, src, seq, next_seq[src],
          seq < next_seq[src] ? "duplicate or reordered" : "a message was lost or overtaken");
    CHECK((size_t)n == msg_len(src, seq), "%s: seq %d from %d has %d bytes, want %zu", how,
          seq, src, n, msg_len(src, seq));
    for (size_t i = 8; i < (size_t)n; i++)
        CHECK(b[i] == pat(src, seq, i), "%s: seq %d from %d: byte %zu wrong", how, seq, src, i);
    next_seq[src]++;
    received++;
}

static void sender(void)
{
    unsigned char *b = malloc((size_t)NMSG * MAXLEN);
    MPI_Request *reqs = malloc(NMSG * sizeof *reqs);
    MPI_Status *sts = malloc(NMSG * sizeof *sts);
    CHECK(b && reqs && sts, "malloc");
    for (int s = 0; s < NMSG; s++)
        make_msg(b + (size_t)s * MAXLEN, rank, s);
    OK(MPI_Barrier(MPI_COMM_WORLD)); /* rank 0 has posted its first receives */
    for (int s = 0; s < NMSG; s++) {
        unsigned char *m = b + (size_t)s * MAXLEN;
        int n = (int)msg_len(rank, s);
        reqs[s] = MPI_REQUEST_NULL;
        switch ((s + rank) % 5) {
        case 0:
            OK(MPI_Send(m, n, MPI_BYTE, 0, TAG, MPI_COMM_WORLD));
            break;
        case 1:
            OK(MPI_Ssend(m, n, MPI_BYTE, 0, TAG, MPI_COMM_WORLD));
            break;
        case 2:
            OK(MPI_Issend(m, n, MPI_BYTE, 0, TAG, MPI_COMM_WORLD, &reqs[s]));
            break;
        default:
            OK(MPI_Isend(m, n, MPI_BYTE, 0, TAG, MPI_COMM_WORLD, &reqs[s]));
            break;
        }
    }
    OK(MPI_Waitall(NMSG, reqs, sts));
    free(b);
    free(reqs);
    free(sts);
}

static void receiver(void)
{
    long total = (long)(size - 1) * NMSG;
    enum { W = 16 };
    unsigned char *rb = malloc((size_t)W * MAXLEN);
    MPI_Request reqs[W];
    MPI_Status st[W];
    CHECK(rb, "malloc");
    next_seq = calloc((size_t)size, sizeof *next_seq);
    CHECK(next_seq, "calloc");

    /* Receives posted before any sender started. */
    for (int i = 0; i < W; i++)
        OK(MPI_Irecv(rb + (size_t)i * MAXLEN, MAXLEN, MPI_BYTE, MPI_ANY_SOURCE, TAG,
                     MPI_COMM_WORLD, &reqs[i]));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Waitall(W, reqs, st));
    for (int i = 0; i < W; i++)
        take(rb + (size_t)i * MAXLEN, &st[i], "pre-posted Irecv");

    int round = 0;
    while (received < total) {
        long left = total - received;
        switch (round++ % 4) {
        case 0: { /* let messages pile up, then a window of Irecvs */
            sleep_ms(5);
            int w = left < W ? (int)left : W;
            for (int i = 0; i < w; i++)
                OK(MPI_Irecv(rb + (size_t)i * MAXLEN, MAXLEN, MPI_BYTE, MPI_ANY_SOURCE, TAG,
                             MPI_COMM_WORLD, &reqs[i]));
            /* Completion in any order; matching followed posting order. */
            int done = 0, idx[W];
            MPI_Status sst[W];
            while (done < w) {
                int out;
                OK(MPI_Waitsome(w, reqs, &out, idx, sst));
                CHECK(out != MPI_UNDEFINED && out > 0, "Waitsome gave %d", out);
                for (int k = 0; k < out; k++) {
                    CHECK(idx[k] >= 0 && idx[k] < w && reqs[idx[k]] == MPI_REQUEST_NULL,
                          "Waitsome index %d", idx[k]);
                    st[idx[k]] = sst[k];
                }
                done += out;
            }
            for (int i = 0; i < w; i++)
                take(rb + (size_t)i * MAXLEN, &st[i], "window Irecv");
            break;
        }
        case 1: { /* blocking ANY_SOURCE receives */
            int w = left < 10 ? (int)left : 10;
            for (int i = 0; i < w; i++) {
                MPI_Status s1;
                OK(MPI_Recv(rb, MAXLEN, MPI_BYTE, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &s1));
                take(rb, &s1, "blocking Recv(ANY_SOURCE)");
            }
            break;
        }
        case 2: { /* a receive naming a source that still has messages left,
                     between two ANY_SOURCE ones */
            int src = 1 + round % (size - 1);
            if (next_seq[src] >= NMSG)
                break;
            MPI_Request q[3];
            int nq = 0;
            long need = 1 + (left > 1) + (left > 2);
            OK(MPI_Irecv(rb + (size_t)nq * MAXLEN, MAXLEN, MPI_BYTE, MPI_ANY_SOURCE, TAG,
                         MPI_COMM_WORLD, &q[nq]));
            nq++;
            /* The first ANY_SOURCE may take src's next message; the named
             * one is only posted if src has one more left after that. */
            if (need >= 2 && next_seq[src] + 2 <= NMSG) {
                OK(MPI_Irecv(rb + (size_t)nq * MAXLEN, MAXLEN, MPI_BYTE, src, TAG,
                             MPI_COMM_WORLD, &q[nq]));
                nq++;
            }
            if (need >= nq + 1) {
                OK(MPI_Irecv(rb + (size_t)nq * MAXLEN, MAXLEN, MPI_BYTE, MPI_ANY_SOURCE, TAG,
                             MPI_COMM_WORLD, &q[nq]));
                nq++;
            }
            MPI_Status s3[3];
            OK(MPI_Waitall(nq, q, s3));
            for (int i = 0; i < nq; i++)
                take(rb + (size_t)i * MAXLEN, &s3[i], "mixed named/ANY_SOURCE");
            break;
        }
        default: { /* probe then receive exactly what the probe saw */
            MPI_Status ps, s1;
            OK(MPI_Probe(MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &ps));
            int n;
            OK(MPI_Get_count(&ps, MPI_BYTE, &n));
            OK(MPI_Recv(rb, n, MPI_BYTE, ps.MPI_SOURCE, TAG, MPI_COMM_WORLD, &s1));
            CHECK(s1.MPI_SOURCE == ps.MPI_SOURCE, "probe/recv source mismatch");
            take(rb, &s1, "Probe(ANY_SOURCE)+Recv");
            break;
        }
        }
    }
    for (int s = 1; s < size; s++)
        CHECK(next_seq[s] == NMSG, "rank %d: %d of %d messages arrived", s, next_seq[s], NMSG);
    int flag;
    MPI_Status ps;
    OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &ps));
    CHECK(!flag, "an extra message (source %d tag %d) is waiting", ps.MPI_SOURCE, ps.MPI_TAG);
    free(rb);
    free(next_seq);
}

/* The first posted receive wins: ANY_SOURCE posted before a named one takes
 * the first message. */
static void first_posted_wins(void)
{
    const int T = 77;
    if (rank == 0) {
        int a = -1, b = -1;
        MPI_Request q[2];
        MPI_Status s[2];
        OK(MPI_Irecv(&a, 1, MPI_INT, MPI_ANY_SOURCE, T, MPI_COMM_WORLD, &q[0]));
        OK(MPI_Irecv(&b, 1, MPI_INT, 1, T, MPI_COMM_WORLD, &q[1]));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        OK(MPI_Waitall(2, q, s));
        CHECK(a == 1001 && b == 1002, "ANY_SOURCE posted first got %d, named got %d", a, b);
        CHECK(s[0].MPI_SOURCE == 1 && s[1].MPI_SOURCE == 1, "sources %d %d", s[0].MPI_SOURCE,
              s[1].MPI_SOURCE);
        /* And the other way round: named first. */
        OK(MPI_Irecv(&b, 1, MPI_INT, 1, T, MPI_COMM_WORLD, &q[1]));
        OK(MPI_Irecv(&a, 1, MPI_INT, MPI_ANY_SOURCE, T, MPI_COMM_WORLD, &q[0]));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        OK(MPI_Waitall(2, q, s));
        CHECK(b == 1003 && a == 1004, "named posted first got %d, ANY_SOURCE got %d", b, a);
    } else {
        OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 1) {
            int v = 1001;
            OK(MPI_Send(&v, 1, MPI_INT, 0, T, MPI_COMM_WORLD));
            v = 1002;
            OK(MPI_Send(&v, 1, MPI_INT, 0, T, MPI_COMM_WORLD));
        }
        OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 1) {
            int v = 1003;
            OK(MPI_Send(&v, 1, MPI_INT, 0, T, MPI_COMM_WORLD));
            v = 1004;
            OK(MPI_Send(&v, 1, MPI_INT, 0, T, MPI_COMM_WORLD));
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double t0 = MPI_Wtime();
    if (rank == 0)
        receiver();
    else
        sender();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    first_posted_wins();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("t_p2p_anysource: OK (%d ranks, %d messages each, %.2f s)\n", size, NMSG,
               MPI_Wtime() - t0);
    MPI_Finalize();
    return 0;
}
