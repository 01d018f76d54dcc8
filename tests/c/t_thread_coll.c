/* np: 2 3 4 */
/* env: T_THREADS=8 */
/* vms: v2 h2v2 v2iv */
/* MPI_THREAD_MULTIPLE collectives and communicator creation: each of T
 * threads per rank works on its own communicator at the same time.
 * - blocking and non-blocking collectives, results checked;
 * - Comm_dup, Comm_split and Comm_create_group of each thread's
 *   communicator at once (the context ids must come out distinct);
 * - Comm_create_group from every thread on one parent with different tags,
 *   which MPI allows to run concurrently. */
#include "t_threads.h"

#include <stdio.h>

static int rank, size, nthreads;
static MPI_Comm comms[64];

static void collectives(MPI_Comm c, int t, int it)
{
    int n, me;
    OK(MPI_Comm_size(c, &n));
    OK(MPI_Comm_rank(c, &me));
    int v = me * 10 + t, sum = 0;
    OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == 10 * n * (n - 1) / 2 + n * t, "thread %d allreduce %d", t, sum);
    int root = (t + it) % n, b = me == root ? 777 + t : -1;
    OK(MPI_Bcast(&b, 1, MPI_INT, root, c));
    CHECK(b == 777 + t, "thread %d bcast %d", t, b);
    int all[64];
    OK(MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, c));
    for (int i = 0; i < n; i++)
        CHECK(all[i] == i * 10 + t, "thread %d allgather[%d] %d", t, i, all[i]);
    int out[64], in[64];
    for (int i = 0; i < n; i++)
        out[i] = me * 100 + i + t;
    OK(MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, c));
    for (int i = 0; i < n; i++)
        CHECK(in[i] == i * 100 + me + t, "thread %d alltoall[%d] %d", t, i, in[i]);
    /* 64 KiB: the large-message algorithms. */
    enum { BIG = 16384 };
    int *x = malloc(sizeof(int) * BIG), *y = malloc(sizeof(int) * BIG);
    CHECK(x && y, "no memory");
    for (int i = 0; i < BIG; i++)
        x[i] = i + me + t;
    OK(MPI_Reduce(x, y, BIG, MPI_INT, MPI_SUM, root, c));
    if (me == root)
        for (int i = 0; i < BIG; i++)
            CHECK(y[i] == n * (i + t) + n * (n - 1) / 2, "thread %d reduce[%d] %d", t, i, y[i]);
    MPI_Request r;
    OK(MPI_Iallreduce(x, y, BIG, MPI_INT, MPI_MAX, c, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < BIG; i++)
        CHECK(y[i] == i + n - 1 + t, "thread %d iallreduce[%d] %d", t, i, y[i]);
    OK(MPI_Ibarrier(c, &r));
    int done = 0;
    while (!done)
        OK(MPI_Test(&r, &done, MPI_STATUS_IGNORE));
    OK(MPI_Barrier(c));
    free(x);
    free(y);
}

static void *coll_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int it = 0; it < 5; it++)
        collectives(comms[t], t, it);
    return NULL;
}

/* New communicators from each thread's own communicator, concurrently. */
static void *create_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    MPI_Comm c = comms[t];
    for (int it = 0; it < 4; it++) {
        MPI_Comm d, s, g;
        OK(MPI_Comm_dup(c, &d));
        OK(MPI_Comm_split(d, rank % 2, -rank, &s));
        int ssize;
        OK(MPI_Comm_size(s, &ssize));
        CHECK(ssize == (size + 1 - rank % 2) / 2, "split size %d", ssize);
        MPI_Group wg, eg;
        OK(MPI_Comm_group(d, &wg));
        int evens[64], ne = 0;
        for (int i = 0; i < size; i += 2)
            evens[ne++] = i;
        OK(MPI_Group_incl(wg, ne, evens, &eg));
        if (rank % 2 == 0) {
            OK(MPI_Comm_create_group(d, eg, t, &g));
            collectives(g, t, it);
            OK(MPI_Comm_free(&g));
        }
        collectives(d, t, it);
        collectives(s, t, it);
        OK(MPI_Group_free(&eg));
        OK(MPI_Group_free(&wg));
        OK(MPI_Comm_free(&s));
        OK(MPI_Comm_free(&d));
    }
    return NULL;
}

/* Every thread creates a group communicator of MPI_COMM_WORLD with its own
 * tag at the same time. */
static void *same_parent_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    MPI_Group wg;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MPI_Comm g;
    OK(MPI_Comm_create_group(MPI_COMM_WORLD, wg, 1000 + t, &g));
    int n;
    OK(MPI_Comm_size(g, &n));
    CHECK(n == size, "create_group size %d", n);
    int v = 1, sum = 0;
    /* Each thread's communicator is its own: collectives on them may run
     * in any order across threads. */
    OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, g));
    CHECK(sum == size, "sum %d", sum);
    OK(MPI_Comm_free(&g));
    OK(MPI_Group_free(&wg));
    return NULL;
}

int main(int argc, char **argv)
{
    nthreads = t_threads_init(&argc, &argv);
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    for (int t = 0; t < nthreads; t++)
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    t_run_threads(coll_thread, nthreads);
    t_run_threads(create_thread, nthreads);
    t_run_threads(same_parent_thread, nthreads);
    for (int t = 0; t < nthreads; t++)
        OK(MPI_Comm_free(&comms[t]));
    OK(MPI_Finalize());
    if (rank == 0)
        printf("t_thread_coll: %d ranks x %d threads OK\n", size, nthreads);
    return 0;
}
