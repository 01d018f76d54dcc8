/* np: 2 */
/* env: VMPI_SMP_SPLIT_MIN=8192 */
/* env: VMPI_SMP_CMA=0 */
/* net: ofi h2 */
/* vms: v2 v4 h2v2 v2net v2iv */
/* Sends freed with MPI_Request_free still complete when the sender goes
 * straight to MPI_Finalize: rank 1 posts 1100 rendezvous sends, frees them
 * and finalizes; rank 0 receives them all, then finalizes. */
#include <mpi.h>
#include <stdio.h>

#include "t_check.h"

/* The communicator of this rank's pair (t_pair_comm). */
static MPI_Comm tw;

#define M 1100
#define SZ 16384

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tw = t_pair_comm();
    int rank;
    MPI_Comm_rank(tw, &rank);
    static unsigned char buf[SZ];
    if (rank == 1) {
        for (int j = 0; j < SZ; j++)
            buf[j] = (unsigned char)(j * 7);
        for (int i = 0; i < M; i++) {
            MPI_Request r;
            OK(MPI_Isend(buf, SZ, MPI_BYTE, 0, 0, tw, &r));
            OK(MPI_Request_free(&r));
        }
    } else {
        for (int i = 0; i < M; i++) {
            OK(MPI_Recv(buf, SZ, MPI_BYTE, 1, 0, tw, MPI_STATUS_IGNORE));
            for (int j = 0; j < SZ; j++)
                CHECK(buf[j] == (unsigned char)(j * 7), "message %d byte %d differs", i, j);
        }
    }
    MPI_Finalize();
    return 0;
}
