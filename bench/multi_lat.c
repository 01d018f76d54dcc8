/*
 * multi_lat.c - ping-pong latency of many pairs at once.
 *
 * Semantics of OSU's osu_multi_lat: with N ranks (N even), rank i < N/2
 * and rank i + N/2 ping-pong SIZE bytes (MPI_Send, MPI_Recv) at the same
 * time as every other pair. Each pair's one-way latency is its round-trip
 * time over 2, averaged over the measured iterations; the reported figure
 * is the mean over the pairs. All pairs start each size together.
 *
 * With --json, rank 0 prints one JSON object per size: the mean over the
 * pairs, the slowest pair, and the distribution of pair 0's per-iteration
 * one-way latencies.
 *
 * Build:  mpicc -O2 -std=c11 multi_lat.c -o multi_lat
 * Run:    mpiexec -n 2|4|... ./multi_lat [-m [MIN:]MAX] [-i ITER] [-x WARMUP] [--json]
 */
#include "bench_mpi.h"

static const char usage[] =
    "Usage: multi_lat [options]\n"
    "  Ping-pong latency of N/2 pairs at once (rank i with rank i + N/2;\n"
    "  one-way = round trip / 2, mean over the pairs); N even.\n"
    "  -m [MIN:]MAX   message sizes from MIN to MAX bytes, doubling\n"
    "                 (default 0:4194304)\n"
    "  -i ITER        measured iterations per size\n"
    "                 (default 10000, 1000 for sizes > 8192)\n"
    "  -x WARMUP      untimed warm-up iterations per size\n"
    "                 (default 1000, 100 for sizes > 8192)\n"
    "  --alloc-mem    message buffers from MPI_Alloc_mem\n"
    "  --json         one JSON object per size instead of the table:\n"
    "                 bench, size, pairs, iterations, warmup, latency_us (mean\n"
    "                 over pairs), max_pair_us, min_us, max_us, mean_us, p50_us,\n"
    "                 p99_us, samples_us (pair 0, per iteration, at most 1000)\n"
    "  -h, --help     this text\n";

#define TAG_PINGPONG 1

int main(int argc, char **argv)
{
    struct bench_opts o = { .min_size = 0, .max_size = BENCH_MAX_MESSAGE,
                            .iters = -1, .warmup = -1, .window = 1 };
    const struct bench_counts dflt = { 10000, 1000, 1000, 100 };
    double *lat = NULL;
    int rank, pairs, first, peer;

    int rc = bench_mpi_start_pairs(&argc, &argv, usage, &o, 0, &rank, &pairs);
    if (rc >= 0)
        return rc;
    first = rank < pairs;
    peer = first ? rank + pairs : rank - pairs;

    char *sbuf = bench_mpi_alloc(&o, (size_t)o.max_size, 'a');
    char *rbuf = bench_mpi_alloc(&o, (size_t)o.max_size, 'b');

    if (rank == 0 && !o.json) {
        printf("# vmpi multi-pair latency test (%d pairs)\n", pairs);
        printf("%-10s%18s\n", "# Size", "Latency (us)");
        fflush(stdout);
    }

    for (long size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        long iters, warmup;
        int record = rank == 0 && o.json;
        double t_start = 0.0, t_prev = 0.0, us = 0.0, sum, worst;

        bench_counts_for(&o, &dflt, size, &iters, &warmup);
        if (record)
            bench_mpi_values(&lat, iters, "multi_lat");

        MPI_Barrier(MPI_COMM_WORLD);
        for (long i = 0; i < warmup + iters; i++) {
            if (i == warmup)
                t_start = t_prev = MPI_Wtime();
            if (first) {
                MPI_Send(sbuf, (int)size, MPI_CHAR, peer, TAG_PINGPONG, MPI_COMM_WORLD);
                MPI_Recv(rbuf, (int)size, MPI_CHAR, peer, TAG_PINGPONG, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(rbuf, (int)size, MPI_CHAR, peer, TAG_PINGPONG, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                MPI_Send(sbuf, (int)size, MPI_CHAR, peer, TAG_PINGPONG, MPI_COMM_WORLD);
            }
            if (record && i >= warmup) {
                double now = MPI_Wtime();
                lat[i - warmup] = (now - t_prev) * 1e6 / 2.0;
                t_prev = now;
            }
        }
        if (first && iters > 0)
            us = (MPI_Wtime() - t_start) * 1e6 / (2.0 * (double)iters);
        MPI_Reduce(&us, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        MPI_Reduce(&us, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

        if (rank == 0 && !o.json) {
            printf("%-10ld%18.2f\n", size, sum / pairs);
        } else if (record) {
            printf("{\"bench\":\"multi_lat\",\"size\":%ld,\"pairs\":%d,\"iterations\":%ld,"
                   "\"warmup\":%ld,\"latency_us\":%.3f,\"max_pair_us\":%.3f,",
                   size, pairs, iters, warmup, sum / pairs, worst);
            if (bench_json_dist(stdout, lat, (size_t)iters, "us", 3) != 0) {
                fprintf(stderr, "multi_lat: out of memory\n");
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            fputs("}\n", stdout);
        }
        if (rank == 0)
            fflush(stdout);
    }

    free(lat);
    bench_mpi_free(&o, sbuf);
    bench_mpi_free(&o, rbuf);
    MPI_Finalize();
    return 0;
}
