/* np: 2 */
/* env: VMPI_UNEXPECTED_MAX=65536 */
/* env: VMPI_UNEXPECTED_MAX=65536 VMPI_SMP_CMA=0 */
/* net: ofi h2 */
/* vms: v2 v4 h2v2 v2net v2iv */
/* The unexpected-data cap must not hold back what a rank's own operations
 * wait for: rank 1 posts 64 eager sends (500 KiB, far over the cap) and then
 * receives a 1 MiB rendezvous message whose completion packets sit in the
 * ring behind those unwanted eager messages. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "t_check.h"

/* The communicator of this rank's pair (t_pair_comm). */
static MPI_Comm tw;

#define N 64
#define SMALL 8000
#define BIG (1 << 20)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tw = t_pair_comm();
    int rank;
    MPI_Comm_rank(tw, &rank);
    unsigned char *big = malloc(BIG);
    static unsigned char small[N][SMALL];
    CHECK(big != NULL, "out of memory");
    if (rank == 1) {
        MPI_Request rq[N];
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < SMALL; j++)
                small[i][j] = (unsigned char)(i ^ j);
            OK(MPI_Isend(small[i], SMALL, MPI_BYTE, 0, 1, tw, &rq[i]));
        }
        int x = 0;
        OK(MPI_Recv(big, BIG, MPI_BYTE, 0, 2, tw, MPI_STATUS_IGNORE));
        OK(MPI_Recv(&x, 1, MPI_INT, 0, 3, tw, MPI_STATUS_IGNORE));
        CHECK(x == 7, "small message carried %d", x);
        for (int j = 0; j < BIG; j++)
            CHECK(big[j] == (unsigned char)(j * 13), "big message byte %d differs", j);
        OK(MPI_Waitall(N, rq, MPI_STATUSES_IGNORE));
    } else {
        for (int j = 0; j < BIG; j++)
            big[j] = (unsigned char)(j * 13);
        int x = 7;
        OK(MPI_Send(big, BIG, MPI_BYTE, 1, 2, tw));
        OK(MPI_Send(&x, 1, MPI_INT, 1, 3, tw));
        for (int i = 0; i < N; i++) {
            OK(MPI_Recv(small[i], SMALL, MPI_BYTE, 1, 1, tw, MPI_STATUS_IGNORE));
            for (int j = 0; j < SMALL; j++)
                CHECK(small[i][j] == (unsigned char)(i ^ j), "message %d byte %d differs", i, j);
        }
    }
    free(big);
    MPI_Finalize();
    return 0;
}
