/* np: 2 3 4 */
/* vms: v2 */
/* Ports within one job: the low half of the world opens a port at its root
 * and sends the name to the high half, which connects while the low half
 * accepts. Checked: the intercommunicator's sizes and remote group,
 * messages both ways with values that depend on the sender, a merge and an
 * Allreduce over it, a second connection on the same port, Comm_disconnect
 * (MPI_COMM_NULL after), Close_port; bad input: a name that is no port,
 * closing a port twice, a NULL port name, a bad root, MPI_COMM_WORLD to
 * Comm_disconnect. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_check.h"

static int rank, size;

static void round_trip(MPI_Comm inter, int low, int lsize, int rsize)
{
    int flag, n;
    OK(MPI_Comm_test_inter(inter, &flag));
    CHECK(flag, "not an intercommunicator");
    OK(MPI_Comm_remote_size(inter, &n));
    CHECK(n == rsize, "remote size %d, want %d", n, rsize);
    OK(MPI_Comm_size(inter, &n));
    CHECK(n == lsize, "local size %d, want %d", n, lsize);
    int lrank;
    OK(MPI_Comm_rank(inter, &lrank));
    /* Every local rank sends to remote rank lrank % rsize and receives from
     * every remote rank that names it. */
    int out = 1000 * (low ? 1 : 2) + lrank;
    MPI_Request rq;
    OK(MPI_Isend(&out, 1, MPI_INT, lrank % rsize, 7, inter, &rq));
    for (int r = 0; r < rsize; r++) {
        if (r % lsize != lrank)
            continue;
        int in = -1;
        MPI_Status st;
        OK(MPI_Recv(&in, 1, MPI_INT, r, 7, inter, &st));
        CHECK(in == 1000 * (low ? 2 : 1) + r, "got %d from remote %d", in, r);
        CHECK(st.MPI_SOURCE == r, "source %d, want %d", st.MPI_SOURCE, r);
    }
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    MPI_Comm merged;
    OK(MPI_Intercomm_merge(inter, !low, &merged));
    int sum = 0, one = rank + 1;
    OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged));
    CHECK(sum == size * (size + 1) / 2, "merged sum %d", sum);
    int mrank;
    OK(MPI_Comm_rank(merged, &mrank));
    CHECK(mrank == rank, "merged rank %d, world rank %d (low half first)", mrank, rank);
    OK(MPI_Comm_free(&merged));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int nlow = (size + 1) / 2, low = rank < nlow;
    MPI_Comm half;
    OK(MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half));
    MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
    char port[MPI_MAX_PORT_NAME] = "";
    if (rank == 0) {
        OK(MPI_Open_port(MPI_INFO_NULL, port));
        CHECK(strlen(port) > 0 && strlen(port) < MPI_MAX_PORT_NAME, "port name '%s'", port);
        OK(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, nlow, 0, MPI_COMM_WORLD));
    } else if (rank == nlow) {
        OK(MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    for (int round = 0; round < 2; round++) {
        MPI_Comm inter;
        if (low)
            OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter));
        else
            OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &inter));
        round_trip(inter, low, low ? nlow : size - nlow, low ? size - nlow : nlow);
        OK(MPI_Comm_disconnect(&inter));
        CHECK(inter == MPI_COMM_NULL, "disconnect left the handle");
    }

    /* Bad input, on one rank at a time (root 0 of a one-rank communicator). */
    if (rank == 0) {
        MPI_Comm inter;
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        t_expect_err(MPI_Comm_connect("no-such-port", MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter),
                     MPI_ERR_PORT, "MPI_Comm_connect", "connect to a name that is no port");
        t_expect_err(MPI_Comm_accept("vmpi-port:00000001:0:99:0", MPI_INFO_NULL, 0,
                                     MPI_COMM_SELF, &inter),
                     MPI_ERR_PORT, "MPI_Comm_accept", "accept on a port not opened here");
        t_expect_err(MPI_Comm_connect(NULL, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter),
                     MPI_ERR_PORT, "MPI_Comm_connect", "NULL port name");
        t_expect_err(MPI_Comm_accept(port, MPI_INFO_NULL, 5, MPI_COMM_SELF, &inter),
                     MPI_ERR_ROOT, "MPI_Comm_accept", "root 5 of MPI_COMM_SELF");
        OK(MPI_Close_port(port));
        t_expect_err(MPI_Close_port(port), MPI_ERR_PORT, "MPI_Close_port", "closing twice");
        MPI_Comm w = MPI_COMM_WORLD;
        t_expect_err(MPI_Comm_disconnect(&w), MPI_ERR_COMM, "MPI_Comm_disconnect",
                     "disconnecting MPI_COMM_WORLD");
        MPI_Comm parent;
        OK(MPI_Comm_get_parent(&parent));
        CHECK(parent == MPI_COMM_NULL, "a job started by the launcher has a parent");
    }
    OK(MPI_Comm_free(&half));
    MPI_Finalize();
    if (rank == 0)
        printf("OK\n");
    return 0;
}
