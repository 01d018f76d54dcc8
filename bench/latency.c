/*
 * latency.c - point-to-point ping-pong latency between ranks 0 and 1.
 *
 * Semantics of OSU's osu_latency: rank 0 sends SIZE bytes (MPI_Send) and
 * waits for SIZE bytes back (MPI_Recv); rank 1 mirrors it.  The reported
 * one-way latency is the round-trip time divided by two, averaged over the
 * measured iterations (after WARMUP untimed ones).
 *
 * With --json, rank 0 also timestamps every iteration and prints one JSON
 * object per size with the distribution of per-iteration one-way latencies.
 *
 * Build:  mpicc -O2 -std=c11 latency.c -o latency
 * Run:    mpiexec -n 2 ./latency [-m [MIN:]MAX] [-i ITER] [-x WARMUP] [--json]
 */
#include "bench_mpi.h"

static const char usage[] =
    "Usage: latency [options]\n"
    "  Ping-pong latency between ranks 0 and 1 (one-way = round trip / 2).\n"
    "  -m [MIN:]MAX   message sizes from MIN to MAX bytes, doubling\n"
    "                 (default 0:4194304)\n"
    "  -i ITER        measured iterations per size\n"
    "                 (default 10000, 1000 for sizes > 8192)\n"
    "  -x WARMUP      untimed warm-up iterations per size\n"
    "                 (default 1000, 100 for sizes > 8192)\n"
    "  --alloc-mem    message buffers from MPI_Alloc_mem\n"
    "  --json         one JSON object per size instead of the table:\n"
    "                 bench, size, iterations, warmup, min_us, max_us, mean_us,\n"
    "                 p50_us, p99_us, samples_us (per-iteration one-way latency\n"
    "                 seen by rank 0, at most 1000 evenly spread)\n"
    "  -h, --help     this text\n";

#define TAG_PINGPONG 1

int main(int argc, char **argv)
{
    struct bench_opts o = { .min_size = 0, .max_size = BENCH_MAX_MESSAGE,
                            .iters = -1, .warmup = -1, .window = 1 };
    const struct bench_counts dflt = { 10000, 1000, 1000, 100 };
    char *sbuf, *rbuf;
    double *ts = NULL, *lat = NULL;
    int rank, rc;

    rc = bench_mpi_start(&argc, &argv, usage, &o, 0, &rank);
    if (rc >= 0)
        return rc;

    sbuf = bench_mpi_alloc(&o, (size_t)o.max_size, 'a');
    rbuf = bench_mpi_alloc(&o, (size_t)o.max_size, 'b');

    if (rank == 0 && !o.json) {
        printf("# vmpi latency test\n");
        printf("%-10s%18s\n", "# Size", "Latency (us)");
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
            bench_mpi_samples(&ts, &lat, iters, "latency");

        MPI_Barrier(MPI_COMM_WORLD);

        if (rank == 0) {
            for (long i = 0; i < total; i++) {
                /* Table mode reads the clock only around the whole loop, as
                 * OSU does; JSON mode also stamps every iteration. */
                if (i == warmup) {
                    t_start = MPI_Wtime();
                    if (record)
                        ts[0] = t_start;
                } else if (record && i > warmup) {
                    ts[i - warmup] = MPI_Wtime();
                }
                MPI_Send(sbuf, (int)size, MPI_CHAR, 1, TAG_PINGPONG, MPI_COMM_WORLD);
                MPI_Recv(rbuf, (int)size, MPI_CHAR, 1, TAG_PINGPONG, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            }
            t_end = MPI_Wtime();

            if (!o.json) {
                double us = (t_end - t_start) * 1e6 / (2.0 * (double)iters);
                printf("%-10ld%18.2f\n", size, us);
            } else {
                ts[iters] = t_end;
                for (long k = 0; k < iters; k++)
                    lat[k] = (ts[k + 1] - ts[k]) * 1e6 / 2.0;
                printf("{\"bench\":\"latency\",\"size\":%ld,\"iterations\":%ld,"
                       "\"warmup\":%ld,", size, iters, warmup);
                if (bench_json_dist(stdout, lat, (size_t)iters, "us", 3) != 0) {
                    fprintf(stderr, "latency: out of memory\n");
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
                fputs("}\n", stdout);
            }
            fflush(stdout);
        } else {
            for (long i = 0; i < total; i++) {
                MPI_Recv(rbuf, (int)size, MPI_CHAR, 0, TAG_PINGPONG, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                MPI_Send(sbuf, (int)size, MPI_CHAR, 0, TAG_PINGPONG, MPI_COMM_WORLD);
            }
        }
    }

    free(ts);
    free(lat);
    bench_mpi_free(&o, sbuf);
    bench_mpi_free(&o, rbuf);
    MPI_Finalize();
    return 0;
}
