/*
 * bibw.c - bidirectional streaming bandwidth between ranks 0 and 1.
 *
 * Semantics of OSU's osu_bibw: per iteration both ranks post a window of W
 * MPI_Irecv and then W MPI_Isend of SIZE bytes to each other and wait for
 * all 2W requests.  The reported figure is the total of both directions:
 *     MB/s = 2 * SIZE * W * ITER / time / 1e6
 * As in OSU, the messages of a window share one send and one receive buffer.
 *
 * With --json, rank 0 also times every window and prints one JSON object per
 * size with the distribution of per-iteration bandwidths.
 *
 * Build:  mpicc -O2 -std=c11 bibw.c -o bibw
 * Run:    mpiexec -n 2 ./bibw [-m [MIN:]MAX] [-i ITER] [-x WARMUP] [-W WINDOW] [--json]
 */
#include "bench_mpi.h"

static const char usage[] =
    "Usage: bibw [options]\n"
    "  Bidirectional bandwidth between ranks 0 and 1 (both post a window of\n"
    "  Irecv + Isend); reports the sum of both directions.\n"
    "  -m [MIN:]MAX   message sizes from MIN to MAX bytes, doubling\n"
    "                 (default 1:4194304)\n"
    "  -i ITER        measured windows per size (default 100, 20 for sizes > 8192)\n"
    "  -x WARMUP      untimed windows per size (default 10, 2 for sizes > 8192)\n"
    "  -W WINDOW      messages in flight per direction (default 64)\n"
    "  --alloc-mem    message buffers from MPI_Alloc_mem\n"
    "  --json         one JSON object per size instead of the table:\n"
    "                 bench, size, iterations, warmup, window, mbps (aggregate),\n"
    "                 min_mbps, max_mbps, mean_mbps, p50_mbps, p99_mbps,\n"
    "                 samples_mbps (per window, at most 1000 evenly spread)\n"
    "  -h, --help     this text\n";

#define TAG_0_TO_1 100
#define TAG_1_TO_0 10

int main(int argc, char **argv)
{
    struct bench_opts o = { .min_size = 1, .max_size = BENCH_MAX_MESSAGE,
                            .iters = -1, .warmup = -1, .window = 64 };
    const struct bench_counts dflt = { 100, 20, 10, 2 };
    char *sbuf, *rbuf;
    double *ts = NULL, *bw = NULL;
    MPI_Request *req;
    MPI_Status *stat;
    int rank, rc, window, peer, send_tag, recv_tag;

    rc = bench_mpi_start(&argc, &argv, usage, &o, 1, &rank);
    if (rc >= 0)
        return rc;
    window = (int)o.window;
    peer = 1 - rank;
    send_tag = rank == 0 ? TAG_0_TO_1 : TAG_1_TO_0;
    recv_tag = rank == 0 ? TAG_1_TO_0 : TAG_0_TO_1;

    sbuf = bench_mpi_alloc(&o, (size_t)o.max_size, 'a');
    rbuf = bench_mpi_alloc(&o, (size_t)o.max_size, 'b');
    /* Real status arrays, as OSU passes (MPI_STATUSES_IGNORE trips GCC's
     * -Wstringop-overflow with some mpi.h headers). */
    req = malloc(2 * (size_t)window * sizeof *req);
    stat = malloc(2 * (size_t)window * sizeof *stat);
    if (req == NULL || stat == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);

    if (rank == 0 && !o.json) {
        printf("# vmpi bidirectional bandwidth test\n");
        printf("%-10s%18s\n", "# Size", "Bandwidth (MB/s)");
        fflush(stdout);
    }

    for (long size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        long iters, warmup, total;
        int record;
        double t_start = 0.0, t_end;

        bench_counts_for(&o, &dflt, size, &iters, &warmup);
        total = warmup + iters;
        record = rank == 0 && o.json;
        if (record)
            bench_mpi_samples(&ts, &bw, iters, "bibw");

        MPI_Barrier(MPI_COMM_WORLD);

        for (long i = 0; i < total; i++) {
            if (rank == 0) {
                if (i == warmup) {
                    t_start = MPI_Wtime();
                    if (record)
                        ts[0] = t_start;
                } else if (record && i > warmup) {
                    ts[i - warmup] = MPI_Wtime();
                }
            }
            for (int j = 0; j < window; j++)
                MPI_Irecv(rbuf, (int)size, MPI_CHAR, peer, recv_tag, MPI_COMM_WORLD,
                          &req[j]);
            for (int j = 0; j < window; j++)
                MPI_Isend(sbuf, (int)size, MPI_CHAR, peer, send_tag, MPI_COMM_WORLD,
                          &req[window + j]);
            MPI_Waitall(2 * window, req, stat);
        }
        t_end = MPI_Wtime();

        if (rank == 0) {
            double mbps = 2.0 * (double)size * window * (double)iters /
                          (t_end - t_start) / 1e6;

            if (!o.json) {
                printf("%-10ld%18.2f\n", size, mbps);
            } else {
                ts[iters] = t_end;
                for (long k = 0; k < iters; k++)
                    bw[k] = 2.0 * (double)size * window / (ts[k + 1] - ts[k]) / 1e6;
                printf("{\"bench\":\"bibw\",\"size\":%ld,\"iterations\":%ld,"
                       "\"warmup\":%ld,\"window\":%d,\"mbps\":%.2f,",
                       size, iters, warmup, window, mbps);
                if (bench_json_dist(stdout, bw, (size_t)iters, "mbps", 2) != 0) {
                    fprintf(stderr, "bibw: out of memory\n");
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
                fputs("}\n", stdout);
            }
            fflush(stdout);
        }
    }

    free(ts);
    free(bw);
    free(req);
    free(stat);
    bench_mpi_free(&o, sbuf);
    bench_mpi_free(&o, rbuf);
    MPI_Finalize();
    return 0;
}
