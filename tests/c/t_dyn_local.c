/* np: 1 2 */
/* vms: v2 */
/* Spawned processes talk to their parents by locality: a child in its
 * parent's VM through shared memory (smp), in another VM of its host
 * through the host region (ivshmem), others through the network.
 * Each parent receives from every child, one at a time, 3 eager messages
 * and one of 256 KiB (rendezvous; t_dyn_chan.h), counting with the MPI_T
 * channel counters which channel brought them; the children learn where each
 * parent runs and check the reply both ways. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_dyn_chan.h"

enum { NCHILD = 2 };

int main(int argc, char **argv)
{
    int provided;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    MPI_Comm parent;
    OK(MPI_Comm_get_parent(&parent));
    char me[MPI_MAX_PROCESSOR_NAME] = "", *names;
    int len, rank, size;
    OK(MPI_Get_processor_name(me, &len));
    if (parent == MPI_COMM_NULL) {
        MPI_Comm inter;
        char *args[] = {"child", NULL};
        OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
        OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
        OK(MPI_Comm_spawn(argv[0], args, NCHILD, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                          MPI_ERRCODES_IGNORE));
        /* Where each child runs: the children send their names. */
        names = calloc(NCHILD, MPI_MAX_PROCESSOR_NAME);
        for (int c = 0; c < NCHILD; c++)
            OK(MPI_Recv(names + c * MPI_MAX_PROCESSOR_NAME, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, c,
                        1, inter, MPI_STATUS_IGNORE));
        int local = 0;
        for (int c = 0; c < NCHILD; c++) {
            unsigned long long got[T_DYN_NCHAN];
            int go = 1, k = t_dyn_channel(me, names + c * MPI_MAX_PROCESSOR_NAME);
            OK(MPI_Send(&go, 1, MPI_INT, c, 2, inter));
            t_dyn_counted(inter, c, c, got);
            local += k == 0;
            t_dyn_check(got, k, me, names + c * MPI_MAX_PROCESSOR_NAME);
        }
        /* The children were placed in this job's VMs: some share one. */
        int all = 0;
        /* No parent's bytes may reach one that still counts (a barrier carries none). */
        OK(MPI_Barrier(MPI_COMM_WORLD));
        OK(MPI_Allreduce(&local, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK(all > 0, "no child shares a VM with a parent");
        OK(MPI_Comm_disconnect(&inter));
        free(names);
        if (rank == 0)
            printf("t_dyn_local: %d parent(s), %d child(ren) beside a parent OK\n", size, all);
    } else {
        OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
        OK(MPI_Comm_remote_size(parent, &size));
        for (int p = 0; p < size; p++)
            OK(MPI_Send(me, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, p, 1, parent));
        /* The parents count one child at a time: wait for the go. */
        for (int p = 0; p < size; p++) {
            int go;
            OK(MPI_Recv(&go, 1, MPI_INT, p, 2, parent, MPI_STATUS_IGNORE));
            t_dyn_exchange(parent, p, rank, 1);
        }
        OK(MPI_Comm_disconnect(&parent));
    }
    OK(MPI_T_finalize());
    OK(MPI_Finalize());
    return 0;
}
