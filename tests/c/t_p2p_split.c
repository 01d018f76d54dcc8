/* np: 2 */
/* env: VMPI_SMP_SPLIT_MIN=8192 */
/* net: ofi h2 */
/* vms: v2 v4 h2v2 v2net v2iv */
/* Large single-copy transfers shared by sender and receiver (split copy):
 * every byte lands for many sizes and offsets, and a receiver whose sender
 * is busy outside MPI completes on its own instead of waiting for it. */
#define _DEFAULT_SOURCE /* usleep */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "t_check.h"
#include <unistd.h>

/* The communicator of this rank's pair (t_pair_comm). */
static MPI_Comm tw;

#define FAIL(...)                                                              \
    do {                                                                       \
        fprintf(stderr, "t_p2p_split: " __VA_ARGS__);                          \
        fputc('\n', stderr);                                                   \
        MPI_Abort(tw, 1);                                          \
    } while (0)

static unsigned char val(size_t i, int round)
{
    return (unsigned char)(i * 31 + (size_t)round * 7 + (i >> 12));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tw = t_pair_comm();
    int rank;
    MPI_Comm_rank(tw, &rank);
    size_t max = 8u << 20;
    /* From MPI_Alloc_mem: across VMs only memory in the host region can be
     * copied once, by the receiver alone. */
    unsigned char *buf;
    if (MPI_Alloc_mem((MPI_Aint)(max + 64), MPI_INFO_NULL, &buf) != MPI_SUCCESS)
        FAIL("out of memory");
    /* Sizes around the page-rounded half, odd lengths, unaligned buffers. */
    size_t sizes[] = {8192, 8193, 12288, 65535, 131072, 1000001, 4194304, 8388608};
    for (int round = 0; round < (int)(sizeof sizes / sizeof *sizes); round++) {
        size_t n = sizes[round], off = (size_t)round % 7;
        if (rank == 0) {
            for (size_t i = 0; i < n; i++)
                buf[off + i] = val(i, round);
            MPI_Send(buf + off, (int)n, MPI_BYTE, 1, round, tw);
        } else {
            memset(buf, 0, max + 64);
            MPI_Status st;
            MPI_Recv(buf + off, (int)n, MPI_BYTE, 0, round, tw, &st);
            int count;
            MPI_Get_count(&st, MPI_BYTE, &count);
            if ((size_t)count != n)
                FAIL("size %zu: received %d bytes", n, count);
            for (size_t i = 0; i < n; i++)
                if (buf[off + i] != val(i, round))
                    FAIL("size %zu: byte %zu is %u, expected %u", n, i, buf[off + i],
                         val(i, round));
            if (buf[off + n] != 0 || (off && buf[off - 1] != 0))
                FAIL("size %zu: bytes written outside the receive buffer", n);
        }
    }

    /* The sender posts a large send and then computes for 400 ms without
     * calling MPI: when both share memory (a VM, or the host region), the
     * receiver must finish the copy alone. (Over the network the sender's provider serves the read, and
     * a software provider such as tcp only does so inside MPI calls.) */
    MPI_Comm shm;
    int nshm;
    MPI_Comm_split_type(tw, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm);
    MPI_Comm_size(shm, &nshm);
    MPI_Comm_free(&shm);
    const char *chans = getenv("VMPI_CHANNELS");
    int smp = nshm == 2 && (!chans || strstr(chans, "smp") || strstr(chans, "ivshmem"));
    size_t n = 4u << 20;
    MPI_Barrier(tw);
    if (rank == 0) {
        MPI_Request req;
        for (size_t i = 0; i < n; i++)
            buf[i] = val(i, 99);
        MPI_Isend(buf, (int)n, MPI_BYTE, 1, 99, tw, &req);
        usleep(400000);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        usleep(50000); /* let the request arrive before the receive */
        double t0 = MPI_Wtime();
        MPI_Recv(buf, (int)n, MPI_BYTE, 0, 99, tw, MPI_STATUS_IGNORE);
        double t = MPI_Wtime() - t0;
        for (size_t i = 0; i < n; i++)
            if (buf[i] != val(i, 99))
                FAIL("busy sender: byte %zu differs", i);
        if (smp && t > 0.25)
            FAIL("receive waited %.3f s for a sender busy outside MPI", t);
    }
    MPI_Free_mem(buf);
    MPI_Finalize();
    return 0;
}
