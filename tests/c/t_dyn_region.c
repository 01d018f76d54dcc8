/* np: 1 */
/* vms: v2 h2v2 */
/* Spawned processes in another VM of their parent's host talk to it
 * through the host region (ivshmem), by locality like the rest: in the
 * parent's VM through smp, on another host through the network. Under
 * emulated VMs the children (argv[1] of them, default 2) go to h0-vm1,
 * else beside their parent; argv[2] spawns (default 1) follow each other,
 * each after the last one's children disconnected. Each parent receives from every child, one at
 * a time, 3 eager messages and one of 256 KiB (rendezvous through the bulk
 * slots), with data that depend on child and message, counting with the
 * MPI_T channel counters which channel brought them; then sends each child
 * a reply of both sizes, which the child checks; argv[3] (default 1) such
 * exchanges each way in all, the first counted. Run by
 * tests/py/test_spawn_region.py with a lone parent and a lone child too,
 * and with a writer changing the bytes of the pool pairs. */
#include "t_dyn_chan.h"

/* One spawn of nchild children; the pairs of parent and child over each
 * channel into by. */
static void spawn_round(const char *prog, int nchild, int reps, const char *me,
                        int by[T_DYN_NCHAN])
{
    int rank;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_Info info = MPI_INFO_NULL;
    if (strstr(me, "-vm")) {
        OK(MPI_Info_create(&info));
        OK(MPI_Info_set(info, "host", "h0-vm1"));
    }
    MPI_Comm inter;
    char nreps[16];
    snprintf(nreps, sizeof nreps, "%d", reps);
    char *args[] = {"child", nreps, NULL};
    OK(MPI_Comm_spawn(prog, args, nchild, info, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE));
    if (info != MPI_INFO_NULL)
        OK(MPI_Info_free(&info));
    char *names = calloc((size_t)nchild, MPI_MAX_PROCESSOR_NAME);
    CHECK(names != NULL, "no memory");
    for (int c = 0; c < nchild; c++)
        OK(MPI_Recv(names + c * MPI_MAX_PROCESSOR_NAME, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, c, 1,
                    inter, MPI_STATUS_IGNORE));
    for (int c = 0; c < nchild; c++) {
        const char *cn = names + c * MPI_MAX_PROCESSOR_NAME;
        unsigned long long got[T_DYN_NCHAN];
        int go = 1, k = t_dyn_channel(me, cn);
        OK(MPI_Send(&go, 1, MPI_INT, c, 2, inter));
        t_dyn_counted(inter, c, c, got);
        by[k]++;
        t_dyn_check(got, k, me, cn);
        t_dyn_exchange(inter, c, 100 + rank, 1);
        for (int i = 1; i < reps; i++) {
            t_dyn_exchange(inter, c, c, 0);
            t_dyn_exchange(inter, c, 100 + rank, 1);
        }
    }
    OK(MPI_Comm_disconnect(&inter));
    free(names);
}

static void parent_side(int argc, char **argv, const char *me)
{
    int rank, size, nchild = argc > 1 ? atoi(argv[1]) : 2, rounds = argc > 2 ? atoi(argv[2]) : 1,
                    reps = argc > 3 ? atoi(argv[3]) : 1;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(nchild > 0 && nchild < 16 && rounds > 0 && reps > 0,
          "bad child count %d, rounds %d or exchanges %d", nchild, rounds, reps);
    int by[T_DYN_NCHAN] = {0}, all[T_DYN_NCHAN];
    for (int r = 0; r < rounds; r++) {
        spawn_round(argv[0], nchild, reps, me, by);
        /* No parent's bytes may reach one that still counts (a barrier carries none). */
        OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    OK(MPI_Allreduce(by, all, T_DYN_NCHAN, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    /* Under emulated VMs some parent is in h0 but not in h0-vm1. */
    CHECK(!t_dyn_region_on(me) || all[1] > 0, "no child reached a parent through the region");
    if (rank == 0)
        printf("t_dyn_region: %d parent(s) x %d child(ren) x %d: %d pairs over smp, %d over "
               "ivshmem, %d over ofi OK\n", size, nchild, rounds, all[0], all[1], all[2]);
}

static void child_side(MPI_Comm parent, const char *me, int len, int reps)
{
    int rank, size;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_remote_size(parent, &size));
    for (int p = 0; p < size; p++)
        OK(MPI_Send(me, len + 1, MPI_CHAR, p, 1, parent));
    /* The parents count one child at a time: wait for the go. */
    for (int p = 0; p < size; p++) {
        int go;
        OK(MPI_Recv(&go, 1, MPI_INT, p, 2, parent, MPI_STATUS_IGNORE));
        for (int i = 0; i < reps; i++) {
            t_dyn_exchange(parent, p, rank, 1);
            t_dyn_exchange(parent, p, 100 + p, 0);
        }
    }
    OK(MPI_Comm_disconnect(&parent));
}

int main(int argc, char **argv)
{
    int provided, len;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    MPI_Comm parent;
    OK(MPI_Comm_get_parent(&parent));
    char me[MPI_MAX_PROCESSOR_NAME] = "";
    OK(MPI_Get_processor_name(me, &len));
    if (parent == MPI_COMM_NULL)
        parent_side(argc, argv, me);
    else
        child_side(parent, me, len, argc > 2 ? atoi(argv[2]) : 1);
    OK(MPI_T_finalize());
    OK(MPI_Finalize());
    return 0;
}
