/* np: 2 3 4 */
/* env: T_THREADS=8 */
/* vms: v2 */
/* MPI_THREAD_MULTIPLE intercommunicators: each of T threads per rank
 * splits its own communicator into halves and, all at once, builds an
 * intercommunicator between them, duplicates it, splits it by parity and
 * merges it, checking every result with traffic across the sides. With 3
 * ranks and 8 threads this livelocked while an intercommunicator's local
 * communicator needed an agreement of its own. */
#include "t_threads.h"

#include <stdio.h>

static int rank, size, nthreads;
static MPI_Comm comms[64];

/* Each process sends its rank in c's parent numbering to rank 0 of the
 * other side, which checks it got every member of the other side. */
static void across(MPI_Comm inter, int me, int t)
{
    int lsize, rsize, lrank;
    OK(MPI_Comm_size(inter, &lsize));
    OK(MPI_Comm_remote_size(inter, &rsize));
    OK(MPI_Comm_rank(inter, &lrank));
    int v = me * 100 + t, got = 0;
    MPI_Request rq;
    OK(MPI_Isend(&v, 1, MPI_INT, 0, t, inter, &rq));
    if (lrank == 0) {
        int sum = 0;
        for (int i = 0; i < rsize; i++) {
            OK(MPI_Recv(&got, 1, MPI_INT, i, t, inter, MPI_STATUS_IGNORE));
            CHECK(got % 100 == t, "thread %d got %d from remote %d", t, got, i);
            sum += got / 100;
        }
        v = sum;
    }
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    /* Intercommunicator allreduce: each side gets the other side's sum. */
    int one = me, other = -1;
    OK(MPI_Allreduce(&one, &other, 1, MPI_INT, MPI_SUM, inter));
    if (lrank == 0)
        CHECK(other == v, "thread %d allreduce %d, received %d", t, other, v);
}

static void *inter_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    MPI_Comm c = comms[t];
    for (int it = 0; it < 4; it++) {
        MPI_Comm half, inter, dup, par, merged;
        int low = rank < size / 2, rleader = low ? size / 2 : 0;
        OK(MPI_Comm_split(c, low, rank, &half));
        OK(MPI_Intercomm_create(half, 0, c, rleader, 100 + t, &inter));
        OK(MPI_Comm_dup(inter, &dup));
        across(dup, rank, t);
        /* Parity split: a side may have no member of a parity. */
        OK(MPI_Comm_split(dup, rank % 2, rank, &par));
        if (par != MPI_COMM_NULL) {
            across(par, rank, t);
            OK(MPI_Comm_free(&par));
        }
        OK(MPI_Intercomm_merge(dup, !low, &merged));
        int mrank, msize, sum = 0;
        OK(MPI_Comm_rank(merged, &mrank));
        OK(MPI_Comm_size(merged, &msize));
        CHECK(msize == size && mrank == rank, "thread %d merged rank %d of %d", t, mrank, msize);
        OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged));
        CHECK(sum == size * (size - 1) / 2, "thread %d merged sum %d", t, sum);
        OK(MPI_Comm_free(&merged));
        OK(MPI_Comm_free(&dup));
        OK(MPI_Comm_free(&inter));
        OK(MPI_Comm_free(&half));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    nthreads = t_threads_init(&argc, &argv);
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    for (int t = 0; t < nthreads; t++)
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    t_run_threads(inter_thread, nthreads);
    for (int t = 0; t < nthreads; t++)
        OK(MPI_Comm_free(&comms[t]));
    OK(MPI_Finalize());
    if (rank == 0)
        printf("t_thread_comm: %d ranks x %d threads OK\n", size, nthreads);
    return 0;
}
