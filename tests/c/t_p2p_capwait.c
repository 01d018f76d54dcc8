/* np: 2 */
/* env: VMPI_UNEXPECTED_MAX=1048576 */
/* net: ofi h2 */
/* vms: v2 v4 h2v2 v2net v2iv */
/* The unexpected-data cap must not block a message that a posted receive
 * waits for: rank 1 posts 4000 1 KiB sends with tag 1 and then one with
 * tag 2; rank 0 receives tag 2 first. The tag-2 message sits in the ring
 * behind 4 MiB of unexpected tag-1 data, four times the cap. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "t_check.h"

/* The communicator of this rank's pair (t_pair_comm). */
static MPI_Comm tw;

#define N 4000
#define LEN 1024

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tw = t_pair_comm();
    int rank;
    MPI_Comm_rank(tw, &rank);
    static char buf[N][LEN];
    if (rank == 1) {
        static MPI_Request req[N + 1];
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < LEN; j++)
                buf[i][j] = (char)(i + j);
            MPI_Isend(buf[i], LEN, MPI_CHAR, 0, 1, tw, &req[i]);
        }
        int last = 42;
        MPI_Isend(&last, 1, MPI_INT, 0, 2, tw, &req[N]);
        MPI_Waitall(N + 1, req, MPI_STATUSES_IGNORE);
    } else {
        int last = 0;
        MPI_Recv(&last, 1, MPI_INT, 1, 2, tw, MPI_STATUS_IGNORE);
        if (last != 42) {
            fprintf(stderr, "t_p2p_capwait: tag-2 message carried %d\n", last);
            MPI_Abort(tw, 1);
        }
        for (int i = 0; i < N; i++) {
            MPI_Recv(buf[i], LEN, MPI_CHAR, 1, 1, tw, MPI_STATUS_IGNORE);
            for (int j = 0; j < LEN; j++)
                if (buf[i][j] != (char)(i + j)) {
                    fprintf(stderr, "t_p2p_capwait: message %d byte %d wrong\n", i, j);
                    MPI_Abort(tw, 1);
                }
        }
    }
    MPI_Finalize();
    return 0;
}
