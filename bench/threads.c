/*
 * threads.c - what MPI_THREAD_MULTIPLE costs and gives, on 2 ranks.
 *
 *   threads lat  [-l single|multiple] [-i ITER]
 *       one thread per rank: 8-byte ping-pong, one-way latency (us), under
 *       the thread level asked for (the cost of MULTIPLE on one thread).
 *   threads rate [-l single|multiple] [-i ITER] [-W WINDOW]
 *       one thread per rank: 8-byte message rate (messages/s), rank 0
 *       streams windows of W MPI_Isend, rank 1 posts W MPI_Irecv and acks
 *       each window (osu_mbw_mr's pattern).
 *   threads mtrate [-t T1,T2,...] [-i ITER] [-W WINDOW]
 *       MULTIPLE: T thread pairs, thread k of rank 0 streams to thread k
 *       of rank 1 as in `rate`, each pair with its own tag; all the pairs'
 *       messages over the wall time from the first pair's start to the
 *       last one's end, one row per T (osu_mbw_mr with threads instead of
 *       processes).
 *   threads mtlat [-t T1,...] [-i ITER]
 *       MULTIPLE: T threads per rank ping-pong 8 bytes at once on one
 *       communicator, thread k with tag k; the wall time over each
 *       thread's round trips, as one-way latency (us): what each thread
 *       sees while the others run, one row per T.
 *   threads parked [-t T1,...] [-i ITER] [-W WINDOW]
 *       MULTIPLE: as mtrate, but the T threads of rank 0 send with
 *       blocking MPI_Send (W, then the ack), while one more thread of
 *       each rank waits in MPI_Recv for a message that comes only at the
 *       end: a hybrid code's thread parked in a blocking receive beside
 *       threads that communicate. Messages per second, one row per T.
 *
 * Output: an OSU-style table ("# Threads value"; lat and rate print one
 * row with 1 thread) for bench/compare.py. Uses only MPI-3.1, so it builds
 * with any MPI's wrapper (vmpi, MPICH, Open MPI).
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_mpi.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 64
#define ACK_TAG 1000
#define PARK_TAG 2000

static int rank;
static long iters = -1, window = 64;
static MPI_Comm comm;
static pthread_barrier_t start;

static void die(const char *msg)
{
    if (rank == 0)
        fprintf(stderr, "threads: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* n 8-byte round trips with tag `tag`; *t0, *t1: when the timed part
 * began and ended (after n / 10 untimed ones). */
static void pingpong(int tag, long n, double *t0, double *t1)
{
    char buf[8] = {0};
    int peer = 1 - rank;
    for (long i = -n / 10; i < n; i++) {
        if (i == 0)
            *t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(buf, 8, MPI_BYTE, peer, tag, comm);
            MPI_Recv(buf, 8, MPI_BYTE, peer, tag, comm, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, 8, MPI_BYTE, peer, tag, comm, MPI_STATUS_IGNORE);
            MPI_Send(buf, 8, MPI_BYTE, peer, tag, comm);
        }
    }
    *t1 = MPI_Wtime();
}

/* n windows of 8-byte messages with tag `tag`; times as pingpong's. */
static void stream(int tag, long n, double *t0, double *t1)
{
    char buf[8] = {0}, ack[4] = {0};
    MPI_Request req[1024];
    /* Real statuses: MPICH's header makes GCC check MPI_STATUSES_IGNORE's size. */
    MPI_Status st[1024];
    int peer = 1 - rank;
    for (long i = -n / 10; i < n; i++) {
        if (i == 0)
            *t0 = MPI_Wtime();
        for (long w = 0; w < window; w++)
            if (rank == 0)
                MPI_Isend(buf, 8, MPI_BYTE, peer, tag, comm, &req[w]);
            else
                MPI_Irecv(buf, 8, MPI_BYTE, peer, tag, comm, &req[w]);
        MPI_Waitall((int)window, req, st);
        if (rank == 0)
            MPI_Recv(ack, 4, MPI_BYTE, peer, ACK_TAG + tag, comm, MPI_STATUS_IGNORE);
        else
            MPI_Send(ack, 4, MPI_BYTE, peer, ACK_TAG + tag, comm);
    }
    *t1 = MPI_Wtime();
}

/* As stream, with blocking sends on rank 0 (receives on rank 1). */
static void stream_blocking(int tag, long n, double *t0, double *t1)
{
    char buf[8] = {0}, ack[4] = {0};
    int peer = 1 - rank;
    for (long i = -n / 10; i < n; i++) {
        if (i == 0)
            *t0 = MPI_Wtime();
        for (long w = 0; w < window; w++)
            if (rank == 0)
                MPI_Send(buf, 8, MPI_BYTE, peer, tag, comm);
            else
                MPI_Recv(buf, 8, MPI_BYTE, peer, tag, comm, MPI_STATUS_IGNORE);
        if (rank == 0)
            MPI_Recv(ack, 4, MPI_BYTE, peer, ACK_TAG + tag, comm, MPI_STATUS_IGNORE);
        else
            MPI_Send(ack, 4, MPI_BYTE, peer, ACK_TAG + tag, comm);
    }
    *t1 = MPI_Wtime();
}

enum { PINGPONG, STREAM, STREAM_BLOCKING };

struct job {
    int tag;
    int kind;
    double t0, t1;
};

static void *worker(void *arg)
{
    struct job *j = arg;
    pthread_barrier_wait(&start);
    void (*run[])(int, long, double *, double *) = {pingpong, stream, stream_blocking};
    run[j->kind](j->tag, iters, &j->t0, &j->t1);
    return NULL;
}

static void *parked(void *arg)
{
    (void)arg;
    char b[8];
    MPI_Recv(b, 8, MPI_BYTE, 1 - rank, PARK_TAG, comm, MPI_STATUS_IGNORE);
    return NULL;
}

/* T threads at once, timed from the first one's start to the last one's
 * end, so threads that take turns count as such: the one-way latency per
 * message of each thread (wall time over its round trips) or the messages
 * of all threads per second. */
static double threaded(int t, int kind, int park)
{
    pthread_t th[MAX_THREADS], pk;
    struct job jobs[MAX_THREADS];
    pthread_barrier_init(&start, NULL, (unsigned)t);
    MPI_Barrier(comm);
    if (park && pthread_create(&pk, NULL, parked, NULL))
        die("cannot start a thread");
    for (int k = 0; k < t; k++) {
        jobs[k] = (struct job){.tag = k, .kind = kind};
        if (pthread_create(&th[k], NULL, worker, &jobs[k]))
            die("cannot start a thread");
    }
    double first = 0, last = 0;
    for (int k = 0; k < t; k++) {
        pthread_join(th[k], NULL);
        if (k == 0 || jobs[k].t0 < first)
            first = jobs[k].t0;
        if (jobs[k].t1 > last)
            last = jobs[k].t1;
    }
    pthread_barrier_destroy(&start);
    if (park) {
        char b[8] = {0};
        MPI_Send(b, 8, MPI_BYTE, 1 - rank, PARK_TAG, comm);
        pthread_join(pk, NULL);
    }
    double wall = last - first;
    return kind == PINGPONG ? wall * 1e6 / (2.0 * (double)iters)
                            : (double)t * (double)window * (double)iters / wall;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 && argv[1][0] != '-' ? argv[1] : "";
    const char *level = "single", *tlist = "1,2,4";
    bench_mpi_version(argc, argv);
    for (int i = *mode ? 2 : 1; i < argc; i++) {
        if (!strcmp(argv[i], "-l") && i + 1 < argc)
            level = argv[++i];
        else if (!strcmp(argv[i], "-t") && i + 1 < argc)
            tlist = argv[++i];
        else if (!strcmp(argv[i], "-i") && i + 1 < argc)
            iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "-W") && i + 1 < argc)
            window = atol(argv[++i]);
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: threads lat|rate [-l single|multiple] [-i ITER] [-W WINDOW]\n"
                   "       threads mtrate|mtlat|parked [-t T1,T2,...] [-i ITER] [-W WINDOW]\n");
            return 0;
        } else {
            fprintf(stderr, "threads: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    int park = !strcmp(mode, "parked");
    int mt = !strcmp(mode, "mtrate") || !strcmp(mode, "mtlat") || park;
    int want = mt || !strcmp(level, "multiple") ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE;
    int provided, size;
    MPI_Init_thread(&argc, &argv, want, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2)
        die("needs exactly 2 ranks");
    if (provided < want)
        die("the MPI library did not grant the thread level asked for");
    if (strcmp(mode, "lat") && strcmp(mode, "rate") && !mt)
        die("mode is lat, rate, mtrate, mtlat or parked");
    if (window < 1 || window > 1024)
        die("-W is 1..1024");
    int lat = !strcmp(mode, "lat") || !strcmp(mode, "mtlat");
    if (iters < 0)
        iters = lat ? 20000 : 2000;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    if (rank == 0)
        printf("# threads %s (%s): %s\n# Threads %s\n", mode,
               want == MPI_THREAD_MULTIPLE ? "MPI_THREAD_MULTIPLE" : "MPI_THREAD_SINGLE",
               lat ? "one-way latency of 8 bytes (us)" : "8-byte messages per second",
               lat ? "Latency(us)" : "Messages/s");
    if (!mt) {
        MPI_Barrier(comm);
        double t0, t1;
        (lat ? pingpong : stream)(0, iters, &t0, &t1);
        double v = lat ? (t1 - t0) * 1e6 / (2.0 * (double)iters)
                       : (double)window * (double)iters / (t1 - t0);
        if (rank == 0)
            printf("1 %.3f\n", v);
    } else {
        char *list = strdup(tlist);
        for (char *s = strtok(list, ","); s; s = strtok(NULL, ",")) {
            int t = atoi(s);
            if (t < 1 || t > MAX_THREADS)
                die("-t: thread counts are 1..64");
            double v = threaded(t, lat ? PINGPONG : park ? STREAM_BLOCKING : STREAM, park);
            if (rank == 0)
                printf("%d %.3f\n", t, v);
            fflush(stdout);
        }
        free(list);
    }
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
