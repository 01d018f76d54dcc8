/* np: 1 2 */
/* vms: v2 */
/* Spawned processes talk to their parents by locality: a child in its
 * parent's VM through shared memory (smp), others through the network.
 * Each parent receives from every child, one at a time, 3 eager messages
 * and one of 256 KiB (rendezvous), counting with the MPI_T channel
 * counters which channel brought them; the children learn where each
 * parent runs and check the reply both ways. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_check.h"

enum { NCHILD = 2, SMALL = 1000, BIG = 256 * 1024, TAG = 5 };

static const char *chan[2] = {"smp", "ofi"};

/* Bytes received through smp and ofi while fn(arg) runs. */
static void counted(void (*fn)(MPI_Comm, int), MPI_Comm c, int peer,
                    unsigned long long got[2])
{
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h[2];
    OK(MPI_T_pvar_session_create(&s));
    for (int k = 0; k < 2; k++) {
        char name[64];
        int idx, count;
        snprintf(name, sizeof name, "vmpi_%s_bytes_recvd", chan[k]);
        OK(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx));
        OK(MPI_T_pvar_handle_alloc(s, idx, NULL, &h[k], &count));
    }
    OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    fn(c, peer);
    OK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
    for (int k = 0; k < 2; k++)
        OK(MPI_T_pvar_read(s, h[k], &got[k]));
    OK(MPI_T_pvar_session_free(&s));
}

static void recv_from(MPI_Comm inter, int child)
{
    char *buf = malloc(BIG);
    CHECK(buf != NULL, "no memory");
    for (int m = 0; m < 4; m++) {
        int n = m < 3 ? SMALL : BIG;
        MPI_Status st;
        OK(MPI_Recv(buf, n, MPI_CHAR, child, TAG, inter, &st));
        int len;
        OK(MPI_Get_count(&st, MPI_CHAR, &len));
        CHECK(len == n, "message %d from child %d: %d bytes", m, child, len);
        for (int i = 0; i < n; i++)
            CHECK(buf[i] == (char)(child * 31 + m + i), "child %d message %d byte %d", child, m,
                  i);
    }
    free(buf);
}

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
            unsigned long long got[2];
            int go = 1;
            OK(MPI_Send(&go, 1, MPI_INT, c, 2, inter));
            counted(recv_from, inter, c, got);
            unsigned long long want = 3 * SMALL + BIG;
            int same = !strcmp(names + c * MPI_MAX_PROCESSOR_NAME, me);
            local += same;
            CHECK(same ? got[0] == want && got[1] == 0 : got[0] == 0 && got[1] >= want,
                  "parent %d (%s), child %d (%s): smp %llu, ofi %llu bytes", rank, me, c,
                  names + c * MPI_MAX_PROCESSOR_NAME, got[0], got[1]);
        }
        /* The children were placed in this job's VMs: some share one. */
        int all = 0;
        OK(MPI_Allreduce(&local, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK(all > 0, "no child shares a VM with a parent");
        OK(MPI_Comm_disconnect(&inter));
        free(names);
        if (rank == 0)
            printf("t_dyn_local: %d parent(s), %d child(ren) beside a parent OK\n", size, all);
    } else {
        OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
        OK(MPI_Comm_remote_size(parent, &size));
        char *buf = malloc(BIG);
        CHECK(buf != NULL, "no memory");
        for (int p = 0; p < size; p++)
            OK(MPI_Send(me, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, p, 1, parent));
        /* The parents count one child at a time: wait for the go. */
        for (int p = 0; p < size; p++) {
            int go;
            OK(MPI_Recv(&go, 1, MPI_INT, p, 2, parent, MPI_STATUS_IGNORE));
            for (int m = 0; m < 4; m++) {
                int n = m < 3 ? SMALL : BIG;
                for (int i = 0; i < n; i++)
                    buf[i] = (char)(rank * 31 + m + i);
                OK(MPI_Send(buf, n, MPI_CHAR, p, TAG, parent));
            }
        }
        free(buf);
        OK(MPI_Comm_disconnect(&parent));
    }
    OK(MPI_T_finalize());
    OK(MPI_Finalize());
    return 0;
}
