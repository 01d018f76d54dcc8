/* np: 2 */
/* vms: v2 v2net */
/* net: h2 */
/* MPI_T performance variables after a known traffic pattern: rank 0 sends
 * rank 1 N eager messages of M bytes, which wait in rank 1's unexpected
 * queue until a barrier has passed, then K messages of L bytes (beyond
 * every channel's eager limit, so by rendezvous). The channel that joins
 * the two ranks (smp in one VM, ivshmem between VMs of a host, ofi between
 * VMs without the region or between hosts) must have counted at least
 * that on both sides, and the other channels no message at all. Which
 * channel it is the test works out from where the ranks are: the same
 * processor name on the same (emulated) host is the same VM; else a
 * shared-memory communicator spanning both is the host region. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "t_mpit_util.h"

enum { N = 100, M = 1000, K = 3, L = 256 << 10 };

static const char *const chans[] = {"smp", "ivshmem", "ofi"};
enum { NCHAN = 3 };

static int expected_channel(void)
{
    char me[MPI_MAX_PROCESSOR_NAME + 16], other[MPI_MAX_PROCESSOR_NAME + 16];
    int len, rank, shared;
    MPI_Comm node;
    OK(MPI_Get_processor_name(me, &len));
    /* Emulated hosts share a host name: vmpirun numbers them. */
    const char *host = getenv("VMPI_HOST_INDEX");
    snprintf(me + len, 16, "/%s", host ? host : "");
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Sendrecv(me, sizeof me, MPI_CHAR, 1 - rank, 0, other, sizeof other, MPI_CHAR, 1 - rank, 0, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    OK(MPI_Comm_size(node, &shared));
    OK(MPI_Comm_free(&node));
    if (!strcmp(me, other))
        return 0;
    return shared == 2 ? 1 : 2;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size == 2, "needs 2 ranks");
    int want = expected_channel();

    MPI_T_pvar_session s;
    OK(MPI_T_pvar_session_create(&s));
    MPI_T_pvar_handle sent[NCHAN], bytes_sent[NCHAN], rndv[NCHAN], recvd[NCHAN],
        bytes_recvd[NCHAN], qlen, qhwm;
    for (int c = 0; c < NCHAN; c++) {
        sent[c] = t_counter(s, chans[c], "msgs_sent");
        bytes_sent[c] = t_counter(s, chans[c], "bytes_sent");
        rndv[c] = t_counter(s, chans[c], "rndv_sent");
        recvd[c] = t_counter(s, chans[c], "msgs_recvd");
        bytes_recvd[c] = t_counter(s, chans[c], "bytes_recvd");
    }
    int count;
    OK(MPI_T_pvar_handle_alloc(s, t_pvar("vmpi_unexpected_len", MPI_T_PVAR_CLASS_LEVEL), NULL,
                               &qlen, &count));
    OK(MPI_T_pvar_handle_alloc(
        s, t_pvar("vmpi_unexpected_hwm", MPI_T_PVAR_CLASS_HIGHWATERMARK), NULL, &qhwm, &count));

    char *buf = malloc(L);
    CHECK(buf, "out of memory");
    memset(buf, rank + 1, L);
    /* Both counting before the first message can arrive. */
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        for (int i = 0; i < N; i++)
            OK(MPI_Send(buf, M, MPI_CHAR, 1, 1, MPI_COMM_WORLD));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        for (int i = 0; i < K; i++)
            OK(MPI_Send(buf, L, MPI_CHAR, 1, 2, MPI_COMM_WORLD));
    } else {
        OK(MPI_Barrier(MPI_COMM_WORLD));
        /* All N arrived before the barrier's message, on the same channel. */
        CHECK(t_read(s, qlen) >= N, "unexpected queue holds %llu, want >= %d", t_read(s, qlen),
              N);
        CHECK(t_read(s, qhwm) >= N, "unexpected high watermark %llu", t_read(s, qhwm));
        for (int i = 0; i < N; i++)
            OK(MPI_Recv(buf, M, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(t_read(s, qlen) < N, "unexpected queue still holds %llu", t_read(s, qlen));
        for (int i = 0; i < K; i++) {
            OK(MPI_Recv(buf, L, MPI_CHAR, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(buf[0] == 1 && buf[L - 1] == 1, "rendezvous data wrong");
        }
    }
    OK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));

    const unsigned long long msgs = N + K, bytes = (unsigned long long)N * M + (unsigned long long)K * L;
    for (int c = 0; c < NCHAN; c++) {
        unsigned long long v[5] = {t_read(s, sent[c]), t_read(s, bytes_sent[c]),
                                   t_read(s, rndv[c]), t_read(s, recvd[c]),
                                   t_read(s, bytes_recvd[c])};
        printf("rank %d %-8s sent %llu msgs %llu bytes (%llu rndv), received %llu msgs %llu "
               "bytes\n", rank, chans[c], v[0], v[1], v[2], v[3], v[4]);
        if (c != want) {
            CHECK(v[0] == 0 && v[3] == 0, "channel %s carried %llu/%llu messages; expected %s",
                  chans[c], v[0], v[3], chans[want]);
        } else if (rank == 0) {
            CHECK(v[0] >= msgs && v[1] >= bytes && v[2] >= K,
                  "%s: sent %llu msgs %llu bytes %llu rndv, want >= %llu %llu %d", chans[c], v[0],
                  v[1], v[2], msgs, bytes, K);
        } else {
            CHECK(v[3] >= msgs && v[4] >= bytes, "%s: received %llu msgs %llu bytes, want >= "
                  "%llu %llu", chans[c], v[3], v[4], msgs, bytes);
        }
    }
    /* Stopped handles no longer count. */
    unsigned long long before = t_read(s, sent[want]);
    OK(MPI_Sendrecv_replace(buf, 8, MPI_CHAR, 1 - rank, 3, 1 - rank, 3, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
    CHECK(t_read(s, sent[want]) == before, "a stopped counter moved");
    OK(MPI_T_pvar_session_free(&s));
    OK(MPI_T_finalize());
    free(buf);
    OK(MPI_Finalize());
    if (rank == 0)
        printf("No Errors\n");
    return 0;
}
