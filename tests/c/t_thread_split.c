/* np: 2 4 */
/* env: T_THREADS=4 */
/* env: T_THREADS=8 VMPI_SMP_RING_CELLS=64 VMPI_IVSHMEM_RING_CELLS=64 */
/* env: T_THREADS=4 VMPI_THREAD_SPLIT=0 */
/* vms: v2 h2v2 */
/* Split sends under MPI_THREAD_MULTIPLE (core/thread.c): T sender threads
 * per rank stream messages to the next rank, each thread with its own tag,
 * while T receiver threads take them from the previous rank. Most are
 * eager MPI_Send calls, which hold only their peer's send lock; between
 * them come rendezvous MPI_Isends followed at once by an eager MPI_Send
 * (which must not pass the queued or announced large message) and
 * MPI_Ssends, which go under the library's lock. With a ring of 64 cells
 * the rings fill and sends fall back to the lock while others split.
 * Every receive checks the length and content it expects at its place in
 * its thread's sequence, so a message that overtook another, was lost or
 * was torn fails. vmpi_thread_split_sends must have counted sends when
 * the next rank shares this rank's VM, and none with VMPI_THREAD_SPLIT=0.
 * Run under ThreadSanitizer by make test-tsan (t_thread_*). */
#include "t_mpit_util.h"
#include "t_threads.h"

#include <stdio.h>
#include <string.h>

#define MSGS 1500
#define BIG 65536

static int rank, size, nthreads, to, from;

enum { EAGER, RNDV, SYNC, ISEND };

static int kind(int j)
{
    switch (j % 10) {
    case 7:
        return RNDV;
    case 3:
        return SYNC;
    case 5:
        return ISEND;
    default:
        return EAGER;
    }
}

static size_t len_of(int j)
{
    return kind(j) == RNDV ? BIG : 16 + (size_t)(j * 37 % 1000);
}

/* Message j of thread t from rank r: its bytes identify all three. */
static void fill(unsigned char *b, size_t n, int r, int t, int j)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(r * 71 + t * 29 + j * 13 + (int)i);
}

static void *sender(void *arg)
{
    int t = (int)(intptr_t)arg;
    unsigned char *big = malloc(BIG), *small = malloc(2048);
    CHECK(big && small, "malloc");
    for (int j = 0; j < MSGS; j++) {
        size_t n = len_of(j);
        if (kind(j) == RNDV || kind(j) == ISEND) {
            /* The next message goes with MPI_Send from a buffer of its own
             * before this one's request is waited for. */
            unsigned char *first = kind(j) == RNDV ? big : small + 1024;
            MPI_Request r;
            MPI_Status st;
            fill(first, n, rank, t, j);
            OK(MPI_Isend(first, (int)n, MPI_BYTE, to, t, MPI_COMM_WORLD, &r));
            j++;
            fill(small, len_of(j), rank, t, j);
            OK(MPI_Send(small, (int)len_of(j), MPI_BYTE, to, t, MPI_COMM_WORLD));
            OK(MPI_Wait(&r, &st));
            CHECK(r == MPI_REQUEST_NULL, "thread %d: MPI_Wait left the request", t);
            continue;
        }
        fill(small, n, rank, t, j);
        if (kind(j) == SYNC)
            OK(MPI_Ssend(small, (int)n, MPI_BYTE, to, t, MPI_COMM_WORLD));
        else
            OK(MPI_Send(small, (int)n, MPI_BYTE, to, t, MPI_COMM_WORLD));
    }
    free(big);
    free(small);
    return NULL;
}

static void *receiver(void *arg)
{
    int t = (int)(intptr_t)arg;
    unsigned char *buf = malloc(BIG), *want = malloc(BIG);
    CHECK(buf && want, "malloc");
    for (int j = 0; j < MSGS; j++) {
        MPI_Status st;
        int n;
        OK(MPI_Recv(buf, BIG, MPI_BYTE, from, t, MPI_COMM_WORLD, &st));
        OK(MPI_Get_count(&st, MPI_BYTE, &n));
        CHECK((size_t)n == len_of(j), "thread %d, message %d from rank %d: %d bytes, expected %zu",
              t, j, from, n, len_of(j));
        fill(want, (size_t)n, from, t, j);
        CHECK(memcmp(buf, want, (size_t)n) == 0, "thread %d, message %d from rank %d: wrong bytes",
              t, j, from);
    }
    free(buf);
    free(want);
    return NULL;
}

static void *both(void *arg)
{
    int k = (int)(intptr_t)arg;
    return k < nthreads ? sender((void *)(intptr_t)k) : receiver((void *)(intptr_t)(k - nthreads));
}

int main(int argc, char **argv)
{
    nthreads = t_threads_init(&argc, &argv);
    CHECK(2 * nthreads <= 64, "T_THREADS %d: at most 32 here", nthreads);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    to = (rank + 1) % size;
    from = (rank + size - 1) % size;

    MPI_T_pvar_session s;
    int prov;
    OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &prov));
    OK(MPI_T_pvar_session_create(&s));
    MPI_T_pvar_handle h = t_started(s, "vmpi_thread_split_sends");

    t_run_threads(both, 2 * nthreads);
    unsigned long long split = t_read(s, h);

    /* Is the next rank in this rank's VM (a shared-memory channel)? */
    MPI_Comm vm;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &vm));
    MPI_Group wg, vg;
    int in_vm;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_group(vm, &vg);
    MPI_Group_translate_ranks(wg, 1, &to, vg, &in_vm);
    const char *e = getenv("VMPI_THREAD_SPLIT");
    if (e && !strcmp(e, "0"))
        CHECK(split == 0, "%llu split sends with VMPI_THREAD_SPLIT=0", split);
    else if (in_vm != MPI_UNDEFINED)
        CHECK(split > 0, "no split sends to rank %d in this VM", to);
    printf("t_thread_split: rank %d: %llu of %d sends to rank %d split\n", rank, split,
           nthreads * MSGS, to);
    MPI_Group_free(&wg);
    MPI_Group_free(&vg);
    MPI_Comm_free(&vm);

    OK(MPI_T_pvar_stop(s, h));
    OK(MPI_T_pvar_handle_free(s, &h));
    OK(MPI_T_pvar_session_free(&s));
    OK(MPI_T_finalize());
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("t_thread_split: OK\n");
    MPI_Finalize();
    return 0;
}
