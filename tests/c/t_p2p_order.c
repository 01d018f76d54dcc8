/* np: 2 4 */
/* env: VMPI_SMP_CMA=1 */
/* env: VMPI_SMP_CMA=0 */
/* env: VMPI_SMP_EAGER_MAX=0 */
/* net: ofi h2 h4 */
/* vms: v2 v4 h2v2 v2net v2iv */
/* MPI's non-overtaking rule and tag matching, across the eager/rendezvous
 * threshold: messages of one (source, tag) arrive in send order whatever
 * their sizes, receives posted with other tags in another order match the
 * right messages, MPI_ANY_TAG takes the first message sent, and
 * Probe/Iprobe report the source, tag and size of the next matching
 * message without consuming it. Ranks work in pairs (r, r^1); each pair
 * runs every phase in both directions, both with the receives posted
 * before the data arrives and with the data already waiting. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rank, size;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts))
        ;
}

#include "t_check.h"

static unsigned char pat(int seed, size_t i)
{
    uint32_t x = (uint32_t)seed * 2654435761u + (uint32_t)i * 40503u + (uint32_t)(i >> 9);
    return (unsigned char)(x ^ (x >> 13) ^ (x >> 24));
}

static void fill(unsigned char *b, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pat(seed, i);
}

static void expect_data(const unsigned char *b, size_t n, int seed, const char *what)
{
    for (size_t i = 0; i < n; i++)
        CHECK(b[i] == pat(seed, i), "%s: byte %zu of %zu is %#x, want %#x", what, i, n, b[i],
              pat(seed, i));
}

/* Message sizes straddling the eager threshold E and reaching far into the
 * rendezvous range, in an irregular order. */
#define NSIZES 40
static size_t sizes[NSIZES];

static void make_sizes(void)
{
    const char *e = getenv("VMPI_SMP_EAGER_MAX");
    size_t E = e && *e ? (size_t)strtoul(e, NULL, 0) : 16384;
    if (E == 0)
        E = 1;
    size_t base[] = {0,       1,         7,         64,    E > 1 ? E - 1 : 0,
                     E,       E + 1,     E + 4096,  2 * E, 100000,
                     1 << 20, 3,         E > 64 ? E - 64 : 5,
                     65536,   1000,      (1 << 20) + 17, 8,   E + 64,
                     32768,   70000};
    int nb = (int)(sizeof base / sizeof base[0]);
    for (int i = 0; i < NSIZES; i++)
        sizes[i] = base[(i * 7) % nb] + (size_t)(i / nb);
}

static size_t max_size(void)
{
    size_t m = 0;
    for (int i = 0; i < NSIZES; i++)
        if (sizes[i] > m)
            m = sizes[i];
    return m;
}

/* Phase 1: NSIZES messages with one tag; the receiver either pre-posts all
 * receives (posted == 1) or lets the data arrive first and uses blocking
 * receives. */
static void phase_order(int sender, int peer, int posted, int seedbase)
{
    const int tag = 7;
    size_t maxn = max_size();
    if (sender) {
        unsigned char **bufs = malloc(NSIZES * sizeof *bufs);
        MPI_Request reqs[NSIZES];
        CHECK(bufs, "malloc");
        /* The receiver tells us when its receives are posted. */
        if (posted)
            OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < NSIZES; i++) {
            bufs[i] = malloc(sizes[i] ? sizes[i] : 1);
            CHECK(bufs[i], "malloc %zu", sizes[i]);
            fill(bufs[i], sizes[i], seedbase + i);
            /* Mix blocking and nonblocking sends. */
            if (i % 3 == 0 && posted) {
                OK(MPI_Send(bufs[i], (int)sizes[i], MPI_BYTE, peer, tag, MPI_COMM_WORLD));
                reqs[i] = MPI_REQUEST_NULL;
            } else {
                OK(MPI_Isend(bufs[i], (int)sizes[i], MPI_BYTE, peer, tag, MPI_COMM_WORLD,
                             &reqs[i]));
            }
        }
        MPI_Status sst[NSIZES];
        OK(MPI_Waitall(NSIZES, reqs, sst));
        for (int i = 0; i < NSIZES; i++)
            free(bufs[i]);
        free(bufs);
    } else {
        if (posted) {
            unsigned char *rb[NSIZES];
            MPI_Request reqs[NSIZES];
            MPI_Status st[NSIZES];
            for (int i = 0; i < NSIZES; i++) {
                /* Room for more than the message: the count must say how
                 * much really came. */
                rb[i] = malloc(sizes[i] + 16);
                CHECK(rb[i], "malloc");
                memset(rb[i], 0xa5, sizes[i] + 16);
                OK(MPI_Irecv(rb[i], (int)sizes[i] + 16, MPI_BYTE, peer, tag, MPI_COMM_WORLD,
                             &reqs[i]));
            }
            OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 99, MPI_COMM_WORLD));
            OK(MPI_Waitall(NSIZES, reqs, st));
            for (int i = 0; i < NSIZES; i++) {
                int n;
                char what[64];
                OK(MPI_Get_count(&st[i], MPI_BYTE, &n));
                CHECK((size_t)n == sizes[i], "posted receive %d got %d bytes, want %zu", i, n,
                      sizes[i]);
                CHECK(st[i].MPI_SOURCE == peer && st[i].MPI_TAG == tag,
                      "posted receive %d: source %d tag %d", i, st[i].MPI_SOURCE,
                      st[i].MPI_TAG);
                snprintf(what, sizeof what, "posted receive %d (%zu bytes)", i, sizes[i]);
                expect_data(rb[i], sizes[i], seedbase + i, what);
                CHECK(rb[i][sizes[i]] == 0xa5, "posted receive %d wrote past the message", i);
                free(rb[i]);
            }
        } else {
            unsigned char *rb = malloc(maxn + 16);
            CHECK(rb, "malloc");
            sleep_ms(100); /* let the sends arrive unexpected */
            for (int i = 0; i < NSIZES; i++) {
                MPI_Status st;
                int n;
                char what[64];
                memset(rb, 0xa5, maxn + 16);
                OK(MPI_Recv(rb, (int)maxn + 16, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st));
                OK(MPI_Get_count(&st, MPI_BYTE, &n));
                CHECK((size_t)n == sizes[i], "receive %d got %d bytes, want %zu (out of order?)",
                      i, n, sizes[i]);
                CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == tag, "receive %d: source %d tag %d",
                      i, st.MPI_SOURCE, st.MPI_TAG);
                snprintf(what, sizeof what, "unexpected receive %d (%zu bytes)", i, sizes[i]);
                expect_data(rb, sizes[i], seedbase + i, what);
                CHECK(rb[sizes[i]] == 0xa5, "receive %d wrote past the message", i);
            }
            free(rb);
        }
    }
}

/* Phase 2: messages with distinct tags; receives posted in another order. */
#define NTAGS 6
static const int tag_of[NTAGS] = {10, 11, 12, 13, 14, 15};
static size_t tag_size(int k)
{
    static const size_t s[NTAGS] = {100, 300000, 16, 20000, 0, 1 << 20};
    return s[k];
}

static void phase_tags(int sender, int peer, int posted, int seedbase)
{
    if (sender) {
        unsigned char *b[NTAGS];
        MPI_Request reqs[NTAGS];
        if (posted)
            OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 98, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int k = 0; k < NTAGS; k++) {
            b[k] = malloc(tag_size(k) + 1);
            CHECK(b[k], "malloc");
            fill(b[k], tag_size(k), seedbase + k);
            OK(MPI_Isend(b[k], (int)tag_size(k), MPI_BYTE, peer, tag_of[k], MPI_COMM_WORLD,
                         &reqs[k]));
        }
        MPI_Status sst[NTAGS];
        OK(MPI_Waitall(NTAGS, reqs, sst));
        for (int k = 0; k < NTAGS; k++)
            free(b[k]);
    } else {
        static const int order[NTAGS] = {5, 2, 0, 4, 3, 1}; /* receive order, by k */
        unsigned char *b[NTAGS];
        MPI_Request reqs[NTAGS];
        MPI_Status st[NTAGS];
        for (int j = 0; j < NTAGS; j++) {
            int k = order[j];
            b[j] = malloc(tag_size(k) + 64);
            CHECK(b[j], "malloc");
            memset(b[j], 0x5a, tag_size(k) + 64);
        }
        if (!posted)
            sleep_ms(100);
        for (int j = 0; j < NTAGS; j++) {
            int k = order[j];
            if (posted || j % 2 == 0)
                OK(MPI_Irecv(b[j], (int)tag_size(k) + 64, MPI_BYTE, peer, tag_of[k],
                             MPI_COMM_WORLD, &reqs[j]));
            else {
                OK(MPI_Recv(b[j], (int)tag_size(k) + 64, MPI_BYTE, peer, tag_of[k],
                            MPI_COMM_WORLD, &st[j]));
                reqs[j] = MPI_REQUEST_NULL;
            }
        }
        if (posted)
            OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 98, MPI_COMM_WORLD));
        MPI_Status wst[NTAGS];
        OK(MPI_Waitall(NTAGS, reqs, wst));
        for (int j = 0; j < NTAGS; j++) {
            int k = order[j], n;
            MPI_Status *s = (posted || j % 2 == 0) ? &wst[j] : &st[j];
            char what[64];
            OK(MPI_Get_count(s, MPI_BYTE, &n));
            CHECK(s->MPI_TAG == tag_of[k] && s->MPI_SOURCE == peer,
                  "receive for tag %d: status tag %d source %d", tag_of[k], s->MPI_TAG,
                  s->MPI_SOURCE);
            CHECK((size_t)n == tag_size(k), "tag %d: %d bytes, want %zu", tag_of[k], n,
                  tag_size(k));
            snprintf(what, sizeof what, "tag %d (%s)", tag_of[k], posted ? "posted" : "waiting");
            expect_data(b[j], tag_size(k), seedbase + k, what);
            CHECK(b[j][tag_size(k)] == 0x5a, "tag %d: wrote past the message", tag_of[k]);
            free(b[j]);
        }
    }
}

/* Phase 3: MPI_ANY_TAG takes the messages in send order, whatever tags and
 * sizes they have. */
static void phase_anytag(int sender, int peer, int seedbase)
{
    static const int tags[] = {5, 3, 7, 3, 0, 9, 1};
    static const size_t sz[] = {200000, 10, 40000, 0, 5000, 1 << 20, 17};
    const int n = (int)(sizeof tags / sizeof tags[0]);
    if (sender) {
        MPI_Request reqs[16];
        unsigned char *b[16];
        for (int i = 0; i < n; i++) {
            b[i] = malloc(sz[i] + 1);
            CHECK(b[i], "malloc");
            fill(b[i], sz[i], seedbase + i);
            OK(MPI_Isend(b[i], (int)sz[i], MPI_BYTE, peer, 1000 + tags[i], MPI_COMM_WORLD,
                         &reqs[i]));
        }
        MPI_Status sst[16];
        OK(MPI_Waitall(n, reqs, sst));
        for (int i = 0; i < n; i++)
            free(b[i]);
    } else {
        unsigned char *rb = malloc((1 << 20) + 64);
        CHECK(rb, "malloc");
        for (int i = 0; i < n; i++) {
            MPI_Status st;
            int cnt;
            char what[64];
            if (i == 2)
                sleep_ms(50); /* some arrive unexpected, some posted */
            OK(MPI_Recv(rb, (1 << 20) + 64, MPI_BYTE, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
            /* All the tags here are >= 1000 so MPI_ANY_TAG cannot pick up
             * another phase's traffic. */
            CHECK(st.MPI_TAG == 1000 + tags[i], "ANY_TAG receive %d got tag %d, want %d", i,
                  st.MPI_TAG, 1000 + tags[i]);
            CHECK(st.MPI_SOURCE == peer, "ANY_TAG receive %d: source %d", i, st.MPI_SOURCE);
            CHECK((size_t)cnt == sz[i], "ANY_TAG receive %d: %d bytes, want %zu", i, cnt, sz[i]);
            snprintf(what, sizeof what, "ANY_TAG receive %d", i);
            expect_data(rb, sz[i], seedbase + i, what);
        }
        free(rb);
    }
}

/* Phase 4: Probe and Iprobe. */
static void phase_probe(int sender, int peer, int seedbase)
{
    const int nints = 1235;       /* 4940 bytes: not a whole number of doubles */
    const int big = 300001;       /* ints: rendezvous */
    if (sender) {
        int *a = malloc(sizeof(int) * (size_t)big);
        double d[3] = {1.5, -2.25, 1e300};
        CHECK(a, "malloc");
        for (int i = 0; i < big; i++)
            a[i] = seedbase * 7 + i;
        /* Wait until the receiver checked that nothing is there yet. */
        OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 97, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Send(a, nints, MPI_INT, peer, 42, MPI_COMM_WORLD));
        OK(MPI_Send(d, 3, MPI_DOUBLE, peer, 43, MPI_COMM_WORLD));
        OK(MPI_Send(a, big, MPI_INT, peer, 44, MPI_COMM_WORLD));
        OK(MPI_Send(a, 0, MPI_INT, peer, 45, MPI_COMM_WORLD));
        free(a);
    } else {
        int flag = -1;
        MPI_Status st;
        int cnt;
        /* Nothing has been sent yet (the sender waits for our go). */
        OK(MPI_Iprobe(peer, 42, MPI_COMM_WORLD, &flag, &st));
        CHECK(flag == 0, "Iprobe found a message that was not sent yet");
        OK(MPI_Iprobe(MPI_ANY_SOURCE, 4242, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        CHECK(flag == 0, "Iprobe(ANY_SOURCE) found a message that was never sent");
        OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 97, MPI_COMM_WORLD));

        /* Blocking probe with ANY_TAG sees the first message: tag 42. */
        memset(&st, 0xff, sizeof st);
        OK(MPI_Probe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 42, "Probe: source %d tag %d, want %d/42",
              st.MPI_SOURCE, st.MPI_TAG, peer);
        OK(MPI_Get_count(&st, MPI_INT, &cnt));
        CHECK(cnt == nints, "Probe: count %d ints, want %d", cnt, nints);
        OK(MPI_Get_count(&st, MPI_DOUBLE, &cnt));
        CHECK(cnt == MPI_UNDEFINED, "Probe: %d doubles in 4940 bytes, want MPI_UNDEFINED", cnt);
        OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
        CHECK(cnt == nints * 4, "Probe: %d bytes", cnt);
        /* Probing again sees the same message (not consumed). */
        OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK(st.MPI_TAG == 42 && st.MPI_SOURCE == peer, "second Probe: tag %d source %d",
              st.MPI_TAG, st.MPI_SOURCE);

        /* Iprobe for tag 43 (behind 42): loop until it arrives. */
        flag = 0;
        double t0 = MPI_Wtime();
        while (!flag) {
            OK(MPI_Iprobe(peer, 43, MPI_COMM_WORLD, &flag, &st));
            CHECK(MPI_Wtime() - t0 < 30, "Iprobe for tag 43 never succeeded");
        }
        CHECK(st.MPI_TAG == 43 && st.MPI_SOURCE == peer, "Iprobe 43: tag %d source %d",
              st.MPI_TAG, st.MPI_SOURCE);
        OK(MPI_Get_count(&st, MPI_DOUBLE, &cnt));
        CHECK(cnt == 3, "Iprobe 43: %d doubles, want 3", cnt);

        /* Receive 43 first (by tag), then 42 by the probed size. */
        double d[3] = {0, 0, 0};
        OK(MPI_Recv(d, 3, MPI_DOUBLE, peer, 43, MPI_COMM_WORLD, &st));
        CHECK(d[0] == 1.5 && d[1] == -2.25 && d[2] == 1e300, "tag 43 contents %g %g %g", d[0],
              d[1], d[2]);
        int *a = malloc(sizeof(int) * (size_t)big);
        CHECK(a, "malloc");
        OK(MPI_Probe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK(st.MPI_TAG == 42, "Probe after receiving 43 gives tag %d, want 42", st.MPI_TAG);
        OK(MPI_Get_count(&st, MPI_INT, &cnt));
        OK(MPI_Recv(a, cnt, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st));
        for (int i = 0; i < nints; i++)
            CHECK(a[i] == seedbase * 7 + i, "tag 42 int %d is %d", i, a[i]);

        /* The rendezvous-sized message: its full size is known to Probe. */
        OK(MPI_Probe(MPI_ANY_SOURCE, 44, MPI_COMM_WORLD, &st));
        CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 44, "Probe 44: source %d tag %d",
              st.MPI_SOURCE, st.MPI_TAG);
        OK(MPI_Get_count(&st, MPI_INT, &cnt));
        CHECK(cnt == big, "Probe 44: count %d, want %d", cnt, big);
        memset(a, 0, sizeof(int) * (size_t)big);
        OK(MPI_Recv(a, cnt, MPI_INT, peer, 44, MPI_COMM_WORLD, &st));
        for (int i = 0; i < big; i++)
            CHECK(a[i] == seedbase * 7 + i, "tag 44 int %d is %d", i, a[i]);
        OK(MPI_Get_count(&st, MPI_INT, &cnt));
        CHECK(cnt == big, "Recv 44: count %d", cnt);

        /* An empty message probes with count 0. */
        OK(MPI_Probe(peer, 45, MPI_COMM_WORLD, &st));
        OK(MPI_Get_count(&st, MPI_INT, &cnt));
        CHECK(cnt == 0 && st.MPI_TAG == 45, "Probe 45: count %d tag %d", cnt, st.MPI_TAG);
        OK(MPI_Recv(NULL, 0, MPI_INT, peer, 45, MPI_COMM_WORLD, &st));
        OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
        CHECK(flag == 0, "Iprobe finds a message (tag %d) after all were received", st.MPI_TAG);
        free(a);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size % 2 == 0, "needs an even number of ranks, got %d", size);
    make_sizes();
    int peer = rank ^ 1;
    for (int dir = 0; dir < 2; dir++) {
        int sender = (rank & 1) == dir;
        for (int posted = 0; posted < 2; posted++) {
            phase_order(sender, peer, posted, 1000 * dir + 100 * posted + rank / 2);
            phase_tags(sender, peer, posted, 5000 + 1000 * dir + 100 * posted + rank / 2);
        }
        phase_anytag(sender, peer, 9000 + dir * 50 + rank / 2);
        phase_probe(sender, peer, 77 + dir + rank / 2);
        OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("t_p2p_order: OK (%d ranks)\n", size);
    MPI_Finalize();
    return 0;
}
