/* np: 2 */
/* env: VMPI_UNEXPECTED_MAX=1048576 */
/* net: ofi h2 */
/* The unexpected-data cap must not block a message that a posted receive
 * waits for: rank 1 posts 4000 1 KiB sends with tag 1 and then one with
 * tag 2; rank 0 receives tag 2 first. The tag-2 message sits in the ring
 * behind 4 MiB of unexpected tag-1 data, four times the cap. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 4000
#define LEN 1024

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    static char buf[N][LEN];
    if (rank == 1) {
        static MPI_Request req[N + 1];
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < LEN; j++)
                buf[i][j] = (char)(i + j);
            MPI_Isend(buf[i], LEN, MPI_CHAR, 0, 1, MPI_COMM_WORLD, &req[i]);
        }
        int last = 42;
        MPI_Isend(&last, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, &req[N]);
        MPI_Waitall(N + 1, req, MPI_STATUSES_IGNORE);
    } else {
        int last = 0;
        MPI_Recv(&last, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (last != 42) {
            fprintf(stderr, "t_p2p_capwait: tag-2 message carried %d\n", last);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (int i = 0; i < N; i++) {
            MPI_Recv(buf[i], LEN, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int j = 0; j < LEN; j++)
                if (buf[i][j] != (char)(i + j)) {
                    fprintf(stderr, "t_p2p_capwait: message %d byte %d wrong\n", i, j);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
        }
    }
    MPI_Finalize();
    return 0;
}
