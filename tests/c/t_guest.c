/* np: 2 4 */
/* net: h2 */
/* vms: v2 h2v2 */
/* The job of the real-VM tests (tests/py/test_guests.py), which also runs
 * everywhere else: a ping-pong between rank pairs (r, r^1) at sizes across
 * the eager/rendezvous threshold, every byte of every message checked on
 * both sides; an Allreduce of rank-dependent values, checked exactly; and a
 * Bcast of a large pattern. Rank 0 prints one line naming each rank's host
 * name, so the test sees where the ranks ran. */
#define _DEFAULT_SOURCE
#include "t_check.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

static unsigned char pattern(int from, int iter, size_t i)
{
    return (unsigned char)(from * 131 + iter * 31 + (int)(i * 7 + (i >> 9)));
}

static void pingpong(int rank, int peer, size_t n, int iters, unsigned char *buf)
{
    for (int it = 0; it < iters; it++) {
        int sender;
        if ((rank & 1) == (it & 1)) {
            for (size_t i = 0; i < n; i++)
                buf[i] = pattern(rank, it, i);
            OK(MPI_Send(buf, (int)n, MPI_BYTE, peer, it, MPI_COMM_WORLD));
            OK(MPI_Recv(buf, (int)n, MPI_BYTE, peer, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            sender = rank;
        } else {
            MPI_Status st;
            memset(buf, 0, n);
            OK(MPI_Recv(buf, (int)n, MPI_BYTE, peer, it, MPI_COMM_WORLD, &st));
            int count = -1;
            OK(MPI_Get_count(&st, MPI_BYTE, &count));
            CHECK((size_t)count == n, "received %d bytes, want %zu", count, n);
            sender = peer;
            OK(MPI_Send(buf, (int)n, MPI_BYTE, peer, it, MPI_COMM_WORLD));
        }
        /* the initiator checks the echo, the echoer checked what it got */
        for (size_t i = 0; i < n; i++)
            CHECK(buf[i] == pattern(sender, it, i), "size %zu iteration %d: byte %zu is %u",
                  n, it, i, buf[i]);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size % 2 == 0, "needs an even number of ranks, got %d", size);

    size_t max = (size_t)1 << 20;
    unsigned char *buf = malloc(max);
    CHECK(buf != NULL, "out of memory");
    for (size_t n = 1; n <= max; n *= 8)
        pingpong(rank, rank ^ 1, n, n >= 65536 ? 4 : 20, buf);

    enum { N = 1000 };
    long in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = (long)(rank + 1) * (i + 1);
    OK(MPI_Allreduce(in, out, N, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    long ranks_sum = (long)size * (size + 1) / 2;
    for (int i = 0; i < N; i++)
        CHECK(out[i] == ranks_sum * (i + 1), "allreduce element %d is %ld, want %ld", i,
              out[i], ranks_sum * (i + 1));
    double dmax = 0;
    double mine = rank * 0.5;
    OK(MPI_Allreduce(&mine, &dmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    CHECK(dmax == (size - 1) * 0.5, "allreduce max is %g", dmax);

    size_t bn = (size_t)1 << 18;
    for (size_t i = 0; i < bn; i++)
        buf[i] = rank == size - 1 ? pattern(size - 1, 99, i) : 0;
    OK(MPI_Bcast(buf, (int)bn, MPI_BYTE, size - 1, MPI_COMM_WORLD));
    for (size_t i = 0; i < bn; i++)
        CHECK(buf[i] == pattern(size - 1, 99, i), "bcast byte %zu is %u", i, buf[i]);

    char host[64] = "";
    gethostname(host, sizeof host - 1);
    char *all = malloc((size_t)size * sizeof host);
    CHECK(all != NULL, "out of memory");
    OK(MPI_Gather(host, sizeof host, MPI_CHAR, all, sizeof host, MPI_CHAR, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        printf("t_guest: ok, %d ranks on", size);
        for (int r = 0; r < size; r++)
            printf(" %s", all + (size_t)r * sizeof host);
        printf("\n");
    }
    free(all);
    free(buf);
    OK(MPI_Finalize());
    return 0;
}
