/* np: 2 4 */
/* env: T_THREADS=8 */
/* env: T_THREADS=16 */
/* vms: v2 h2v2 v2iv */
/* MPI_THREAD_MULTIPLE point-to-point: T threads per rank at once.
 * - ping-pong per thread with its own tag, 8 B to 256 KiB (eager and
 *   rendezvous), content checked;
 * - ANY_SOURCE receives from every thread, told apart by tag;
 * - Mprobe/Mrecv by all threads on one tag: each message taken once;
 * - requests completed on another thread: Irecv here, Wait there, and one
 *   thread's Test loop against another's Send;
 * - a receive cancelled by another thread;
 * - a generalized request completed by another thread while MPI_Wait
 *   waits for it.
 * T_THREADS=16 on 2 ranks is 32 threads on this machine's 2 cores. */
#define _POSIX_C_SOURCE 200809L
#include "t_threads.h"

#include <stdio.h>
#include <time.h>

static int rank, size, nthreads;
static MPI_Comm comm;

static void fill(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(seed * 131u + i * 7u);
}

static void verify(const unsigned char *b, size_t n, unsigned seed, const char *what)
{
    for (size_t i = 0; i < n; i++)
        CHECK(b[i] == (unsigned char)(seed * 131u + i * 7u), "%s: byte %zu of %zu wrong", what,
              i, n);
}

/* Pairs (r, r ^ 1): thread t ping-pongs with thread t of the partner. */
static void *pingpong(void *arg)
{
    int t = (int)(intptr_t)arg, peer = rank ^ 1;
    static const size_t sizes[] = {8, 1000, 9000, 65536, 262144};
    unsigned char *buf = malloc(262144);
    CHECK(buf, "no memory");
    for (int it = 0; it < 6; it++)
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
            size_t n = sizes[k];
            unsigned seed = (unsigned)(t * 1000 + it * 10 + (int)k);
            if (rank % 2 == 0) {
                fill(buf, n, seed);
                OK(MPI_Send(buf, (int)n, MPI_BYTE, peer, t, comm));
                MPI_Status st;
                OK(MPI_Recv(buf, (int)n, MPI_BYTE, peer, t, comm, &st));
                CHECK(st.MPI_TAG == t && st.MPI_SOURCE == peer, "status tag %d src %d", st.MPI_TAG,
                      st.MPI_SOURCE);
                verify(buf, n, seed + 1, "pong");
            } else {
                OK(MPI_Recv(buf, (int)n, MPI_BYTE, peer, t, comm, MPI_STATUS_IGNORE));
                verify(buf, n, seed, "ping");
                fill(buf, n, seed + 1);
                OK(MPI_Send(buf, (int)n, MPI_BYTE, peer, t, comm));
            }
        }
    free(buf);
    return NULL;
}

/* Every rank sends nthreads messages to rank 0, one per tag; rank 0's
 * thread t takes tag t from any source, once per sender. */
static void *anysource(void *arg)
{
    int t = (int)(intptr_t)arg;
    if (rank != 0) {
        int v[2] = {rank, t};
        OK(MPI_Send(v, 2, MPI_INT, 0, 100 + t, comm));
        return NULL;
    }
    int seen = 0;
    for (int i = 1; i < size; i++) {
        int v[2];
        MPI_Status st;
        OK(MPI_Recv(v, 2, MPI_INT, MPI_ANY_SOURCE, 100 + t, comm, &st));
        CHECK(v[1] == t && v[0] == st.MPI_SOURCE, "thread %d got tag %d's message of rank %d", t,
              v[1], v[0]);
        CHECK(!(seen & (1 << v[0])), "rank %d's message to thread %d came twice", v[0], t);
        seen |= 1 << v[0];
    }
    return NULL;
}

/* Matched probes: rank 1 sends M messages with tag 7; rank 0's threads
 * all Mprobe/Mrecv tag 7 until the count is reached. */
enum { M_MSGS = 64 };
static int mtaken[M_MSGS];
static int mcount;
static pthread_mutex_t mlock = PTHREAD_MUTEX_INITIALIZER;

static void *mprobe(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&mlock);
        int left = mcount < M_MSGS;
        if (left)
            mcount++;
        pthread_mutex_unlock(&mlock);
        if (!left)
            return NULL;
        MPI_Message m;
        MPI_Status st;
        OK(MPI_Mprobe(1, 7, comm, &m, &st));
        int cnt;
        OK(MPI_Get_count(&st, MPI_INT, &cnt));
        CHECK(cnt >= 1 && cnt <= 100, "count %d", cnt);
        int v[100];
        OK(MPI_Mrecv(v, cnt, MPI_INT, &m, &st));
        CHECK(m == MPI_MESSAGE_NULL, "message not consumed");
        CHECK(v[0] >= 0 && v[0] < M_MSGS && cnt == 1 + v[0] % 100, "message %d has %d ints", v[0],
              cnt);
        for (int i = 1; i < cnt; i++)
            CHECK(v[i] == v[0] + i, "message %d int %d", v[0], i);
        pthread_mutex_lock(&mlock);
        mtaken[v[0]]++;
        pthread_mutex_unlock(&mlock);
    }
}

/* Completion on another thread: rank 0 posts Irecvs here and a thread
 * waits for them; rank 1's second thread sends while its first loops on
 * MPI_Test of a receive rank 0 answers. */
static MPI_Request shared_req[8];

static void *waiter(void *arg)
{
    (void)arg;
    MPI_Status st[8];
    OK(MPI_Waitall(8, shared_req, st));
    for (int i = 0; i < 8; i++)
        CHECK(st[i].MPI_TAG == 200 + i, "waitall status %d tag %d", i, st[i].MPI_TAG);
    return NULL;
}

static void *tester(void *arg)
{
    MPI_Request *r = arg;
    int done = 0;
    while (!done)
        OK(MPI_Test(r, &done, MPI_STATUS_IGNORE));
    return NULL;
}

static void *canceller(void *arg)
{
    OK(MPI_Cancel(arg));
    return NULL;
}

static int greq_query(void *state, MPI_Status *st)
{
    (void)state;
    MPI_Status_set_elements(st, MPI_INT, 3);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int greq_free(void *state)
{
    *(int *)state = 1;
    return MPI_SUCCESS;
}

static int greq_cancel(void *state, int complete)
{
    (void)state;
    (void)complete;
    return MPI_SUCCESS;
}

static void *completer(void *arg)
{
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    OK(MPI_Grequest_complete(*(MPI_Request *)arg));
    return NULL;
}

static void *self_sender(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 30 * 1000 * 1000};
    nanosleep(&ts, NULL);
    int v = 4242;
    OK(MPI_Send(&v, 1, MPI_INT, rank, 77, comm));
    return NULL;
}

int main(int argc, char **argv)
{
    nthreads = t_threads_init(&argc, &argv);
    int q, main_flag;
    OK(MPI_Query_thread(&q));
    CHECK(q == MPI_THREAD_MULTIPLE, "query %d", q);
    OK(MPI_Is_thread_main(&main_flag));
    CHECK(main_flag, "main thread is not main");
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));

    pthread_t th;
    int got = 0;
    CHECK(pthread_create(&th, NULL, self_sender, NULL) == 0, "pthread_create");
    OK(MPI_Recv(&got, 1, MPI_INT, rank, 77, comm, MPI_STATUS_IGNORE));
    pthread_join(th, NULL);
    CHECK(got == 4242, "message to self from another thread: %d", got);

    t_run_threads(pingpong, nthreads);
    OK(MPI_Barrier(comm));
    t_run_threads(anysource, nthreads);
    OK(MPI_Barrier(comm));

    if (rank == 1) {
        int v[100];
        for (int k = 0; k < M_MSGS; k++) {
            int cnt = 1 + k % 100;
            for (int i = 0; i < cnt; i++)
                v[i] = k + i;
            OK(MPI_Send(v, cnt, MPI_INT, 0, 7, comm));
        }
    } else if (rank == 0) {
        t_run_threads(mprobe, nthreads);
        for (int k = 0; k < M_MSGS; k++)
            CHECK(mtaken[k] == 1, "message %d taken %d times", k, mtaken[k]);
    }
    OK(MPI_Barrier(comm));

    int val[8];
    if (rank == 0) {
        for (int i = 0; i < 8; i++)
            OK(MPI_Irecv(&val[i], 1, MPI_INT, 1, 200 + i, comm, &shared_req[i]));
        pthread_t th;
        CHECK(pthread_create(&th, NULL, waiter, NULL) == 0, "pthread_create");
        pthread_join(th, NULL);
        for (int i = 0; i < 8; i++)
            CHECK(val[i] == 1000 + i, "val[%d] = %d", i, val[i]);
        int x;
        OK(MPI_Recv(&x, 1, MPI_INT, 1, 300, comm, MPI_STATUS_IGNORE));
        OK(MPI_Send(&x, 1, MPI_INT, 1, 301, comm));
    } else if (rank == 1) {
        int x = 42, y = 0;
        MPI_Request r;
        OK(MPI_Irecv(&y, 1, MPI_INT, 0, 301, comm, &r));
        pthread_t th;
        CHECK(pthread_create(&th, NULL, tester, &r) == 0, "pthread_create");
        for (int i = 0; i < 8; i++) {
            int v = 1000 + i;
            OK(MPI_Send(&v, 1, MPI_INT, 0, 200 + i, comm));
        }
        OK(MPI_Send(&x, 1, MPI_INT, 0, 300, comm));
        pthread_join(th, NULL);
        CHECK(r == MPI_REQUEST_NULL && y == 42, "tested receive: y %d", y);
    }

    /* A receive nobody sends to, cancelled by another thread. */
    MPI_Request never;
    int sink;
    OK(MPI_Irecv(&sink, 1, MPI_INT, MPI_ANY_SOURCE, 999, comm, &never));
    CHECK(pthread_create(&th, NULL, canceller, &never) == 0, "pthread_create");
    pthread_join(th, NULL);
    MPI_Status st;
    OK(MPI_Wait(&never, &st));
    int cancelled;
    OK(MPI_Test_cancelled(&st, &cancelled));
    CHECK(cancelled, "receive not cancelled");

    int freed = 0;
    MPI_Request g, gcopy;
    OK(MPI_Grequest_start(greq_query, greq_free, greq_cancel, &freed, &g));
    gcopy = g;
    CHECK(pthread_create(&th, NULL, completer, &gcopy) == 0, "pthread_create");
    OK(MPI_Wait(&g, &st));
    pthread_join(th, NULL);
    int cnt;
    OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == 3 && freed && g == MPI_REQUEST_NULL, "grequest: count %d freed %d", cnt, freed);

    OK(MPI_Comm_free(&comm));
    OK(MPI_Finalize());
    if (rank == 0)
        printf("t_thread_p2p: %d ranks x %d threads OK\n", size, nthreads);
    return 0;
}
