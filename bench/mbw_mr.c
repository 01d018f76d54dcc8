/*
 * mbw_mr.c - multi-pair bandwidth and message rate.
 *
 * Semantics of OSU's osu_mbw_mr: with N ranks (N even), rank i < N/2 sends
 * to rank i + N/2. Per iteration every sender posts a window of W
 * MPI_Isend of SIZE bytes and waits for them, then receives a 4-byte ack;
 * every receiver posts W matching MPI_Irecv, waits, and sends the ack.
 * Each sender times its own iterations; the pairs' rates are summed:
 *     MB/s       = sum over pairs of SIZE * W * ITER / time / 1e6
 *     Messages/s = sum over pairs of W * ITER / time
 * All pairs start each size together (barrier).
 *
 * With --json, rank 0 prints one JSON object per size: the aggregate
 * figures and the distribution of pair 0's per-window bandwidth (the
 * sample a jitter estimate needs).
 *
 * Build:  mpicc -O2 -std=c11 mbw_mr.c -o mbw_mr
 * Run:    mpiexec -n 2|4|... ./mbw_mr [-m [MIN:]MAX] [-i ITER] [-x WARMUP] [-W WINDOW] [--json]
 */
#include "bench_mpi.h"

static const char usage[] =
    "Usage: mbw_mr [options]\n"
    "  Multi-pair bandwidth and message rate: rank i < N/2 streams to rank\n"
    "  i + N/2 (window of Isend/Irecv, 4-byte ack per window); N even.\n"
    "  -m [MIN:]MAX   message sizes from MIN to MAX bytes, doubling\n"
    "                 (default 1:4194304)\n"
    "  -i ITER        measured windows per size (default 100, 20 for sizes > 8192)\n"
    "  -x WARMUP      untimed windows per size (default 10, 2 for sizes > 8192)\n"
    "  -W WINDOW      messages in flight per window (default 64)\n"
    "  --alloc-mem    message buffers from MPI_Alloc_mem\n"
    "  --json         one JSON object per size instead of the table:\n"
    "                 bench, size, pairs, iterations, warmup, window, mbps,\n"
    "                 msg_rate (aggregates), min_mbps, max_mbps, mean_mbps,\n"
    "                 p50_mbps, p99_mbps, samples_mbps (pair 0, per window,\n"
    "                 at most 1000 evenly spread)\n"
    "  -h, --help     this text\n";

#define TAG_DATA 100
#define TAG_ACK 101
#define ACK_BYTES 4

int main(int argc, char **argv)
{
    struct bench_opts o = { .min_size = 1, .max_size = BENCH_MAX_MESSAGE,
                            .iters = -1, .warmup = -1, .window = 64 };
    const struct bench_counts dflt = { 100, 20, 10, 2 };
    double *ts = NULL, *bw = NULL;
    int rank, pairs, sender, peer, window;

    int rc = bench_mpi_start_pairs(&argc, &argv, usage, &o, 1, &rank, &pairs);
    if (rc >= 0)
        return rc;
    sender = rank < pairs;
    peer = sender ? rank + pairs : rank - pairs;
    window = (int)o.window;

    char *buf = bench_mpi_alloc(&o, (size_t)o.max_size, sender ? 'a' : 'b');
    char ack[ACK_BYTES] = {0};
    MPI_Request *req = malloc((size_t)window * sizeof *req);
    MPI_Status *stat = malloc((size_t)window * sizeof *stat);
    if (req == NULL || stat == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);

    if (rank == 0 && !o.json) {
        printf("# vmpi multiple bandwidth / message rate test (%d pairs, window %d)\n",
               pairs, window);
        printf("%-10s%18s%18s\n", "# Size", "MB/s", "Messages/s");
        fflush(stdout);
    }

    for (long size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        long iters, warmup;
        int record = rank == 0 && o.json;
        double t_start = 0.0, t_end, mine[2] = {0.0, 0.0}, sum[2];

        bench_counts_for(&o, &dflt, size, &iters, &warmup);
        if (record)
            bench_mpi_samples(&ts, &bw, iters, "mbw_mr");

        MPI_Barrier(MPI_COMM_WORLD);
        for (long i = 0; i < warmup + iters; i++) {
            if (i == warmup)
                t_start = MPI_Wtime();
            if (record && i >= warmup)
                ts[i - warmup] = i == warmup ? t_start : MPI_Wtime();
            for (int j = 0; j < window; j++) {
                if (sender)
                    MPI_Isend(buf, (int)size, MPI_CHAR, peer, TAG_DATA, MPI_COMM_WORLD,
                              &req[j]);
                else
                    MPI_Irecv(buf, (int)size, MPI_CHAR, peer, TAG_DATA, MPI_COMM_WORLD,
                              &req[j]);
            }
            MPI_Waitall(window, req, stat);
            if (sender)
                MPI_Recv(ack, ACK_BYTES, MPI_CHAR, peer, TAG_ACK, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            else
                MPI_Send(ack, ACK_BYTES, MPI_CHAR, peer, TAG_ACK, MPI_COMM_WORLD);
        }
        t_end = MPI_Wtime();
        if (sender) {
            double msgs = (double)window * (double)iters;
            mine[0] = (double)size * msgs / (t_end - t_start) / 1e6;
            mine[1] = msgs / (t_end - t_start);
        }
        MPI_Reduce(mine, sum, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);

        if (rank == 0 && !o.json) {
            printf("%-10ld%18.2f%18.2f\n", size, sum[0], sum[1]);
        } else if (record) {
            ts[iters] = t_end;
            for (long k = 0; k < iters; k++)
                bw[k] = (double)size * window / (ts[k + 1] - ts[k]) / 1e6;
            printf("{\"bench\":\"mbw_mr\",\"size\":%ld,\"pairs\":%d,\"iterations\":%ld,"
                   "\"warmup\":%ld,\"window\":%d,\"mbps\":%.2f,\"msg_rate\":%.2f,",
                   size, pairs, iters, warmup, window, sum[0], sum[1]);
            if (bench_json_dist(stdout, bw, (size_t)iters, "mbps", 2) != 0) {
                fprintf(stderr, "mbw_mr: out of memory\n");
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            fputs("}\n", stdout);
        }
        if (rank == 0)
            fflush(stdout);
    }

    free(ts);
    free(bw);
    free(req);
    free(stat);
    bench_mpi_free(&o, buf);
    MPI_Finalize();
    return 0;
}
