/* np: 2 */
/* env: VMPI_UNEXPECTED_MAX=1048576 */
/* env: VMPI_UNEXPECTED_MAX=1048576 VMPI_SMP_RING_CELLS=64 */
/* net: ofi h2 */
/* vms: v2 v4 h2v2 v2net v2iv */
/* Flow control of unexpected eager messages. Rank 0 sends 20000 messages
 * of 1 KiB (20 MiB in all) with MPI_Send to rank 1, which first sleeps and
 * then keeps its progress engine busy for a while without receiving them
 * (Iprobe of its own rank, so nothing from rank 0 is wanted; a probe or
 * receive that could match rank 0 lifts the cap), so they arrive unexpected. With
 * VMPI_UNEXPECTED_MAX=1 MiB rank 1 must stop draining its ring once 1 MiB
 * is held, so rank 0 stalls (backpressure) instead of rank 1's memory
 * growing by 20 MiB: rank 1's max RSS may grow by less than 16 MiB while
 * it holds them (afterwards allocator caching, such as AddressSanitizer's
 * quarantine of freed blocks, says nothing about flow control), and
 * rank 0's sends cannot all complete before rank 1 starts receiving. Then
 * all messages arrive, in order, with the right contents. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static int rank, size;

#include "t_check.h"

/* The communicator of this rank's pair (t_pair_comm). */
static MPI_Comm tw;

#define NMSG 20000
#define LEN 1024

static long maxrss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts))
        ;
}

static unsigned char pat(int seq, int i)
{
    return (unsigned char)(seq * 13 + i * 7 + (seq >> 8));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tw = t_pair_comm();
    MPI_Comm_rank(tw, &rank);
    MPI_Comm_size(tw, &size);
    CHECK(size == 2, "needs 2 ranks");
    const char *um = getenv("VMPI_UNEXPECTED_MAX");
    CHECK(um && strtol(um, NULL, 0) == 1048576, "run with VMPI_UNEXPECTED_MAX=1048576");

    unsigned char buf[LEN];
    OK(MPI_Barrier(tw));
    if (rank == 0) {
        double t0 = MPI_Wtime();
        for (int s = 0; s < NMSG; s++) {
            memcpy(buf, &s, sizeof s);
            for (int i = (int)sizeof s; i < LEN; i++)
                buf[i] = pat(s, i);
            OK(MPI_Send(buf, LEN, MPI_BYTE, 1, 1, tw));
        }
        double tend = MPI_Wtime(), trecv;
        long grown;
        OK(MPI_Recv(&trecv, 1, MPI_DOUBLE, 1, 2, tw, MPI_STATUS_IGNORE));
        OK(MPI_Recv(&grown, 1, MPI_LONG, 1, 3, tw, MPI_STATUS_IGNORE));
        /* MPI_Wtime is CLOCK_MONOTONIC: comparable across the two ranks. */
        CHECK(tend >= trecv,
              "all %d sends (20 MiB) completed %.3f s before rank 1 started receiving: "
              "nothing held them back",
              NMSG, trecv - tend);
        printf("t_p2p_flow: OK: sends took %.2f s; rank 1 max RSS grew %ld KiB\n", tend - t0,
               grown);
    } else {
        /* Baseline after touching everything we will use. */
        memset(buf, 0, sizeof buf);
        long base = maxrss_kib();
        sleep_ms(1000);
        /* Drive progress without taking the messages: they queue as
         * unexpected until the cap stops the draining. */
        double t1 = MPI_Wtime();
        int flag = 0;
        while (MPI_Wtime() - t1 < 1.0) {
            OK(MPI_Iprobe(1, 99, tw, &flag, MPI_STATUS_IGNORE));
            CHECK(!flag, "message with tag 99 was never sent");
        }
        OK(MPI_Iprobe(0, 1, tw, &flag, MPI_STATUS_IGNORE));
        CHECK(flag, "no message arrived from rank 0 in 2 s");
        long held = maxrss_kib() - base;
        double trecv = MPI_Wtime();
        for (int s = 0; s < NMSG; s++) {
            MPI_Status st;
            int cnt, seq;
            memset(buf, 0, sizeof buf);
            OK(MPI_Recv(buf, LEN, MPI_BYTE, 0, 1, tw, &st));
            OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
            CHECK(cnt == LEN, "message %d: %d bytes", s, cnt);
            memcpy(&seq, buf, sizeof seq);
            CHECK(seq == s, "message %d has sequence number %d (out of order)", s, seq);
            for (int i = (int)sizeof s; i < LEN; i++)
                CHECK(buf[i] == pat(s, i), "message %d byte %d is %#x, want %#x", s, i, buf[i],
                      pat(s, i));
        }
        long grown = maxrss_kib() - base;
        CHECK(held < 16 * 1024,
              "max RSS grew by %ld KiB while 20 MiB of messages were sent unexpected with "
              "VMPI_UNEXPECTED_MAX=1 MiB: no backpressure",
              held);
        OK(MPI_Send(&trecv, 1, MPI_DOUBLE, 0, 2, tw));
        OK(MPI_Send(&grown, 1, MPI_LONG, 0, 3, tw));
    }
    MPI_Finalize();
    return 0;
}
