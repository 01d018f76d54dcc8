/*
 * ring.c - a message passed around a ring of all ranks.
 *
 * Rank 0 sends SIZE bytes to rank 1, each rank passes what it receives on
 * to the next, and rank N-1 back to rank 0: one lap is N messages, each
 * sent only after the previous one arrived. The figure is the time of one
 * hop (a lap over N), averaged over the measured laps.
 *
 * Its use is the hand-off when ranks outnumber processors: all ranks on
 * one core (`taskset -c 0`), waiting ranks yielding, each hop is one
 * context switch to the next rank of the ring, and the hop's time is what
 * a turn of a waiting rank costs with N ranks sharing that core (their
 * caches and the progress engine's scan of N-1 peers included). vmpi's
 * model of oversubscribed collectives (python/vmpi/study/model.py) takes
 * it from here.
 *
 * With --json, rank 0 prints one JSON object per size: mean_us and p50_us
 * (per hop, over the laps) and the distribution of the per-lap hop times.
 *
 * Build:  mpicc -O2 -std=c11 ring.c -o ring
 * Run:    mpiexec -n 2|3|... ./ring [-m [MIN:]MAX] [-i LAPS] [-x WARMUP] [--json]
 */
#include "bench_mpi.h"

static const char usage[] =
    "Usage: ring [options]\n"
    "  A message passed around a ring of all N ranks (N >= 2); the time of\n"
    "  one hop (a lap over N).\n"
    "  -m [MIN:]MAX   message sizes from MIN to MAX bytes, doubling\n"
    "                 (default 8:8)\n"
    "  -i LAPS        measured laps per size (default 1000, 100 for sizes > 8192)\n"
    "  -x WARMUP      untimed laps per size (default 100, 10 for sizes > 8192)\n"
    "  --alloc-mem    message buffers from MPI_Alloc_mem\n"
    "  --json         one JSON object per size instead of the table: bench,\n"
    "                 size, ranks, laps, warmup, min_us, max_us, mean_us,\n"
    "                 p50_us, p99_us, samples_us (per hop, one a lap, at most 1000)\n"
    "  -h, --help     this text\n";

#define TAG_RING 1

int main(int argc, char **argv)
{
    struct bench_opts o = { .min_size = 8, .max_size = 8, .iters = -1, .warmup = -1,
                            .window = 1 };
    const struct bench_counts dflt = { 1000, 100, 100, 10 };
    double *lap = NULL;
    int rank, n;

    int rc = bench_mpi_init(&argc, &argv, usage, &o, 0, &rank, &n);
    if (rc >= 0)
        return rc;
    if (n < 2) {
        if (rank == 0)
            fprintf(stderr, "%s: a ring needs at least two processes\n", argv[0]);
        MPI_Finalize();
        return 1;
    }
    int next = (rank + 1) % n, prev = (rank + n - 1) % n;
    char *buf = bench_mpi_alloc(&o, (size_t)o.max_size, 'a');

    if (rank == 0 && !o.json) {
        printf("# vmpi ring test (%d ranks)\n", n);
        printf("%-10s%18s\n", "# Size", "Hop (us)");
        fflush(stdout);
    }

    for (long size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        long laps, warmup;
        double t_start = 0.0, t_prev = 0.0;

        bench_counts_for(&o, &dflt, size, &laps, &warmup);
        if (rank == 0)
            bench_mpi_values(&lap, laps, "ring");

        MPI_Barrier(MPI_COMM_WORLD);
        for (long i = 0; i < warmup + laps; i++) {
            if (i == warmup)
                t_start = t_prev = MPI_Wtime();
            if (rank == 0) {
                MPI_Send(buf, (int)size, MPI_CHAR, next, TAG_RING, MPI_COMM_WORLD);
                MPI_Recv(buf, (int)size, MPI_CHAR, prev, TAG_RING, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                if (i >= warmup) {
                    double now = MPI_Wtime();
                    lap[i - warmup] = (now - t_prev) * 1e6 / n;
                    t_prev = now;
                }
            } else {
                MPI_Recv(buf, (int)size, MPI_CHAR, prev, TAG_RING, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                MPI_Send(buf, (int)size, MPI_CHAR, next, TAG_RING, MPI_COMM_WORLD);
            }
        }
        if (rank == 0) {
            double us = laps > 0 ? (MPI_Wtime() - t_start) * 1e6 / ((double)laps * n) : 0.0;
            if (!o.json) {
                printf("%-10ld%18.3f\n", size, us);
            } else {
                printf("{\"bench\":\"ring\",\"size\":%ld,\"ranks\":%d,\"laps\":%ld,"
                       "\"warmup\":%ld,",
                       size, n, laps, warmup);
                if (bench_json_dist(stdout, lap, (size_t)laps, "us", 3) != 0) {
                    fprintf(stderr, "ring: out of memory\n");
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
                fputs("}\n", stdout);
            }
            fflush(stdout);
        }
    }

    free(lap);
    bench_mpi_free(&o, buf);
    MPI_Finalize();
    return 0;
}
