/* np: 2 */
/* net: ofi h2 */
/* vms: v2 h2v2 v2net v2iv */
/* Buffered mode (MPI-3.1 3.6):
 *  - MPI_Bsend returns before the receive is posted and the message is a
 *    copy (the source is overwritten at once), eager and rendezvous sizes,
 *    a derived (strided) datatype, to self;
 *  - MPI_Ibsend and persistent MPI_Bsend_init/MPI_Start complete at once;
 *  - MPI_Buffer_detach waits until the messages are delivered and returns
 *    the buffer and its size;
 *  - buffered messages move while the sender makes no MPI call;
 *  - more messages than the buffer holds: MPI_ERR_BUFFER naming the call,
 *    the size asked and the space free; space comes back as sends complete
 *    (1000 sends to self through a buffer that holds one);
 *  - bad input: second attach, negative size, no buffer;
 *  - a buffered message still in flight at MPI_Finalize is delivered. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rank;

#include "t_check.h"

static MPI_Comm tw;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts))
        ;
}

static void fill(int *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        b[i] = i * 31 + seed;
}

static void expect(const int *b, int n, int seed, const char *what)
{
    for (int i = 0; i < n; i++)
        CHECK(b[i] == i * 31 + seed, "%s: element %d is %d, want %d", what, i, b[i],
              i * 31 + seed);
}

/* Rank 0 buffers a small and a large message and overwrites its source at
 * once; rank 1 receives them 200 ms later. Detach waits for delivery. */
static void basic(void)
{
    const int big = 1 << 18; /* 1 MiB of ints: rendezvous on every channel */
    int *b = malloc(sizeof(int) * big);
    CHECK(b, "malloc");
    OK(MPI_Barrier(tw));
    if (rank == 0) {
        int size = (int)(sizeof(int) * (big + 10)) + 2 * MPI_BSEND_OVERHEAD;
        char *buf = malloc((size_t)size);
        CHECK(buf, "malloc");
        OK(MPI_Buffer_attach(buf, size));
        double t0 = MPI_Wtime();
        fill(b, 10, 1);
        OK(MPI_Bsend(b, 10, MPI_INT, 1, 1, tw));
        fill(b, big, 2);
        OK(MPI_Bsend(b, big, MPI_INT, 1, 2, tw));
        CHECK(MPI_Wtime() - t0 < 0.15, "Bsend waited %.3f s for the receiver", MPI_Wtime() - t0);
        memset(b, 0, sizeof(int) * big);
        void *got;
        int got_size;
        OK(MPI_Buffer_detach(&got, &got_size));
        CHECK(got == buf && got_size == size, "detach gave %p/%d, want %p/%d", got, got_size,
              (void *)buf, size);
        /* The rendezvous message can leave only once the receive is posted. */
        CHECK(MPI_Wtime() - t0 >= 0.15, "detach returned after %.3f s, before delivery",
              MPI_Wtime() - t0);
        free(buf);
    } else {
        sleep_ms(200);
        MPI_Status st;
        int n;
        OK(MPI_Recv(b, big, MPI_INT, 0, 1, tw, &st));
        OK(MPI_Get_count(&st, MPI_INT, &n));
        CHECK(n == 10 && st.MPI_SOURCE == 0 && st.MPI_TAG == 1, "small: count %d src %d tag %d",
              n, st.MPI_SOURCE, st.MPI_TAG);
        expect(b, 10, 1, "small Bsend");
        OK(MPI_Recv(b, big, MPI_INT, 0, 2, tw, &st));
        OK(MPI_Get_count(&st, MPI_INT, &n));
        CHECK(n == big, "large: count %d", n);
        expect(b, big, 2, "large Bsend");
    }
    free(b);
}

/* Ibsend, Bsend_init started twice, and a strided datatype. */
static void nonblocking(void)
{
    int v[40], r[40];
    MPI_Datatype vec;
    OK(MPI_Type_vector(10, 1, 4, MPI_INT, &vec)); /* every 4th int */
    OK(MPI_Type_commit(&vec));
    OK(MPI_Barrier(tw));
    if (rank == 0) {
        int size = 4 * (40 * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
        char *buf = malloc((size_t)size);
        OK(MPI_Buffer_attach(buf, size));
        MPI_Request q, p;
        MPI_Status st;
        int flag = 0;
        fill(v, 40, 3);
        OK(MPI_Ibsend(v, 1, vec, 1, 3, tw, &q));
        OK(MPI_Test(&q, &flag, &st));
        CHECK(flag && q == MPI_REQUEST_NULL, "Ibsend not complete at once");
        OK(MPI_Bsend_init(v, 8, MPI_INT, 1, 4, tw, &p));
        for (int k = 0; k < 2; k++) {
            fill(v, 8, 10 + k);
            OK(MPI_Start(&p));
            OK(MPI_Test(&p, &flag, &st));
            CHECK(flag && p != MPI_REQUEST_NULL, "started Bsend_init not complete at once");
            fill(v, 8, 99);
        }
        OK(MPI_Request_free(&p));
        void *got;
        int got_size;
        OK(MPI_Buffer_detach(&got, &got_size));
        free(got);
    } else {
        sleep_ms(50);
        memset(r, 0, sizeof r);
        OK(MPI_Recv(r, 10, MPI_INT, 0, 3, tw, MPI_STATUS_IGNORE));
        for (int i = 0; i < 10; i++)
            CHECK(r[i] == i * 4 * 31 + 3, "strided Ibsend element %d is %d", i, r[i]);
        for (int k = 0; k < 2; k++) {
            OK(MPI_Recv(r, 8, MPI_INT, 0, 4, tw, MPI_STATUS_IGNORE));
            expect(r, 8, 10 + k, "Bsend_init");
        }
    }
    OK(MPI_Type_free(&vec));
}

/* A large buffered message reaches the receiver while the sender computes
 * (no MPI call) for a second. */
static void progress_without_calls(void)
{
    const int n = 1 << 20;
    char *b = malloc((size_t)n);
    OK(MPI_Barrier(tw));
    if (rank == 0) {
        int size = n + MPI_BSEND_OVERHEAD;
        char *buf = malloc((size_t)size);
        OK(MPI_Buffer_attach(buf, size));
        memset(b, 0x5a, (size_t)n);
        OK(MPI_Bsend(b, n, MPI_CHAR, 1, 5, tw));
        sleep_ms(1000);
        void *got;
        int got_size;
        OK(MPI_Buffer_detach(&got, &got_size));
        free(got);
    } else {
        double t0 = MPI_Wtime();
        OK(MPI_Recv(b, n, MPI_CHAR, 0, 5, tw, MPI_STATUS_IGNORE));
        double dt = MPI_Wtime() - t0;
        for (int i = 0; i < n; i++)
            CHECK(b[i] == 0x5a, "byte %d of the 1 MiB Bsend", i);
        CHECK(dt < 0.8, "a buffered message waited %.3f s for the sender's next MPI call", dt);
    }
    free(b);
}

/* More than fits: the error names the call and the sizes; completed sends
 * give their space back. */
static void oversubscribed(void)
{
    const int n = 256 << 10; /* rendezvous: held until received */
    char *b = malloc((size_t)n);
    OK(MPI_Barrier(tw));
    if (rank == 0) {
        int size = 4 * (n + MPI_BSEND_OVERHEAD);
        char *buf = malloc((size_t)size);
        OK(MPI_Buffer_attach(buf, size));
        for (int k = 0; k < 4; k++) {
            memset(b, k + 1, (size_t)n);
            OK(MPI_Bsend(b, n, MPI_CHAR, 1, 6, tw));
        }
        int rc = MPI_Bsend(b, n, MPI_CHAR, 1, 6, tw);
        t_expect_err(rc, MPI_ERR_BUFFER, "MPI_Bsend", "fifth Bsend into a 4-message buffer");
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        OK(MPI_Error_string(rc, msg, &len));
        char want[64];
        snprintf(want, sizeof want, "%d-byte message", n);
        CHECK(strstr(msg, want) && strstr(msg, "free"), "message '%s' lacks the sizes", msg);
        rc = MPI_Ibsend(b, n, MPI_CHAR, 1, 6, tw, &(MPI_Request){0});
        t_expect_err(rc, MPI_ERR_BUFFER, "MPI_Ibsend", "Ibsend into a full buffer");
        int go;
        OK(MPI_Recv(&go, 1, MPI_INT, 1, 7, tw, MPI_STATUS_IGNORE));
        memset(b, 5, (size_t)n);
        /* The four are delivered: room again once their completions are in
         * (the network may report one after the "go" message). */
        double t0 = MPI_Wtime();
        while ((rc = MPI_Bsend(b, n, MPI_CHAR, 1, 6, tw)) != MPI_SUCCESS) {
            t_expect_err(rc, MPI_ERR_BUFFER, "MPI_Bsend", "Bsend after delivery");
            CHECK(MPI_Wtime() - t0 < 10, "buffer space never came back");
            int flag;
            OK(MPI_Iprobe(1, 99, tw, &flag, MPI_STATUS_IGNORE));
        }
        void *got;
        int got_size;
        OK(MPI_Buffer_detach(&got, &got_size));
        /* Through a buffer that holds one 100-byte message, 1000 to self. */
        char small[128];
        OK(MPI_Buffer_attach(got, 100 + MPI_BSEND_OVERHEAD));
        for (int k = 0; k < 1000; k++) {
            memset(small, k & 0xff, 100);
            OK(MPI_Bsend(small, 100, MPI_CHAR, 0, 8, tw));
        }
        for (int k = 0; k < 1000; k++) {
            OK(MPI_Recv(small, 100, MPI_CHAR, 0, 8, tw, MPI_STATUS_IGNORE));
            CHECK(small[0] == (char)(k & 0xff) && small[99] == (char)(k & 0xff),
                  "Bsend to self %d: byte %d", k, small[0]);
        }
        OK(MPI_Buffer_detach(&got, &got_size));
        CHECK(got_size == 100 + MPI_BSEND_OVERHEAD, "detach size %d", got_size);
        free(got);
    } else {
        sleep_ms(100);
        for (int k = 0; k < 4; k++) {
            OK(MPI_Recv(b, n, MPI_CHAR, 0, 6, tw, MPI_STATUS_IGNORE));
            CHECK(b[0] == k + 1 && b[n - 1] == k + 1, "oversubscribed message %d", k);
        }
        int go = 1;
        OK(MPI_Send(&go, 1, MPI_INT, 0, 7, tw));
        OK(MPI_Recv(b, n, MPI_CHAR, 0, 6, tw, MPI_STATUS_IGNORE));
        CHECK(b[0] == 5 && b[n - 1] == 5, "message after the space came back");
    }
    free(b);
}

static void bad_input(void)
{
    char buf[256] = {0};
    int rc = MPI_Bsend(buf, 1, MPI_CHAR, 0, 0, tw);
    t_expect_err(rc, MPI_ERR_BUFFER, "MPI_Bsend", "Bsend with no buffer attached");
    OK(MPI_Bsend(buf, 1, MPI_CHAR, MPI_PROC_NULL, 0, tw)); /* needs no buffer */
    rc = MPI_Buffer_attach(buf, -1);
    t_expect_err(rc, MPI_ERR_ARG, "MPI_Buffer_attach", "negative size");
    OK(MPI_Buffer_attach(buf, sizeof buf));
    rc = MPI_Buffer_attach(buf, sizeof buf);
    t_expect_err(rc, MPI_ERR_BUFFER, "MPI_Buffer_attach", "second attach");
    rc = MPI_Bsend(buf, 1, MPI_CHAR, 5, 0, tw);
    t_expect_err(rc, MPI_ERR_RANK, "MPI_Bsend", "bad destination");
    rc = MPI_Bsend(buf, -1, MPI_CHAR, 0, 0, tw);
    t_expect_err(rc, MPI_ERR_COUNT, "MPI_Bsend", "negative count");
    rc = MPI_Bsend_init(buf, 1, MPI_DATATYPE_NULL, 0, 0, tw, &(MPI_Request){0});
    t_expect_err(rc, MPI_ERR_TYPE, "MPI_Bsend_init", "null datatype");
    rc = MPI_Ibsend(buf, 1, MPI_CHAR, 0, 0, tw, NULL);
    t_expect_err(rc, MPI_ERR_ARG, "MPI_Ibsend", "NULL request");
    rc = MPI_Buffer_detach(NULL, &(int){0});
    t_expect_err(rc, MPI_ERR_ARG, "MPI_Buffer_detach", "NULL address");
    void *got;
    int got_size;
    OK(MPI_Buffer_detach(&got, &got_size));
    CHECK(got == buf && got_size == (int)sizeof buf, "detach %p/%d", got, got_size);
    OK(MPI_Buffer_detach(&got, &got_size));
    CHECK(got == NULL && got_size == 0, "detach with nothing attached: %p/%d", got, got_size);
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

    basic();
    nonblocking();
    progress_without_calls();
    oversubscribed();
    bad_input();

    /* Left in the buffer at MPI_Finalize: it must still arrive. */
    static char last[1 << 20];
    static char fbuf[(1 << 20) + MPI_BSEND_OVERHEAD];
    OK(MPI_Barrier(tw));
    if (rank == 0) {
        memset(last, 0x3c, sizeof last);
        OK(MPI_Buffer_attach(fbuf, sizeof fbuf));
        OK(MPI_Bsend(last, sizeof last, MPI_CHAR, 1, 9, tw));
    } else {
        sleep_ms(200);
        OK(MPI_Recv(last, sizeof last, MPI_CHAR, 0, 9, tw, MPI_STATUS_IGNORE));
        CHECK(last[0] == 0x3c && last[sizeof last - 1] == 0x3c, "message buffered at Finalize");
    }
    if (rank == 0)
        printf("t_p2p_bsend: OK\n");
    MPI_Comm_free(&tw);
    MPI_Finalize();
    return 0;
}
