/*
 * neighbor.c - latency of the neighbourhood collectives on a periodic
 * Cartesian grid (a halo exchange's communication pattern).
 *
 * The ranks of MPI_COMM_WORLD form a periodic grid of D dimensions
 * (MPI_Dims_create; default 2), so each rank has 2 * D neighbours. Timing
 * follows OSU's collective tests (coll.c): every rank times each call,
 * MPI_Barrier between iterations, the table shows the average over the
 * ranks of each rank's mean (-f: also their minimum and maximum). The
 * non-blocking forms are timed from the call to the end of MPI_Wait. SIZE
 * is the bytes of one neighbour's block (MPI_CHAR).
 *
 * Build:  mpicc -O2 -std=c11 neighbor.c -o neighbor
 * Run:    mpiexec -n 8 ./neighbor NAME [-d D] [-m [MIN:]MAX] [-i ITER]
 *                  [-x WARMUP] [-f] [--json]
 */
#include "bench_mpi.h"

static const char usage[] =
    "Usage: neighbor NAME [options]\n"
    "  Latency of one neighbourhood collective on a periodic Cartesian grid\n"
    "  of all ranks (each rank has 2 * D neighbours), timed as OSU times\n"
    "  collectives: each call on every rank, MPI_Barrier between iterations.\n"
    "  NAME: allgather, alltoall, iallgather, ialltoall (the MPI_Neighbor_ and\n"
    "        MPI_Ineighbor_ forms; the non-blocking ones include MPI_Wait)\n"
    "  -d D           grid dimensions (default 2, 1..8)\n"
    "  -m [MIN:]MAX   bytes per neighbour, doubling (default 1:1048576)\n"
    "  -i ITER        measured iterations per size (default 1000; sizes\n"
    "                 > 8192: 100)\n"
    "  -x WARMUP      untimed iterations per size (default 200; > 8192: 10)\n"
    "  -f, --full     also the minimum and maximum over the ranks, and the\n"
    "                 iteration count\n"
    "  --alloc-mem    message buffers from MPI_Alloc_mem\n"
    "  --json         one JSON object per size: bench, size, ranks, dims,\n"
    "                 neighbours, iterations, warmup, min_us ... p99_us (of\n"
    "                 the per-iteration latency averaged over the ranks),\n"
    "                 rank_min_us, rank_max_us, samples_us\n"
    "  -h, --help     this text\n";

static const char *const names[] = {"allgather", "alltoall", "iallgather", "ialltoall"};
enum { NB_ALLGATHER, NB_ALLTOALL, NB_IALLGATHER, NB_IALLTOALL, NB_N };

static const struct bench_counts counts = {1000, 100, 200, 10};

static void once(int kind, MPI_Comm cart, char *sbuf, char *rbuf, int size)
{
    MPI_Request rq;
    switch (kind) {
    case NB_ALLGATHER:
        MPI_Neighbor_allgather(sbuf, size, MPI_CHAR, rbuf, size, MPI_CHAR, cart);
        break;
    case NB_ALLTOALL:
        MPI_Neighbor_alltoall(sbuf, size, MPI_CHAR, rbuf, size, MPI_CHAR, cart);
        break;
    case NB_IALLGATHER:
        MPI_Ineighbor_allgather(sbuf, size, MPI_CHAR, rbuf, size, MPI_CHAR, cart, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        break;
    default:
        MPI_Ineighbor_alltoall(sbuf, size, MPI_CHAR, rbuf, size, MPI_CHAR, cart, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        break;
    }
}

/* NAME, -d D and -f out of argv (the rest for bench_parse_opts in rest);
 * the collective, -1 with a message in err, -2 for help. */
static int parse(int argc, char **argv, char **rest, int *nrest, int *dims, int *full,
                 char *err, size_t errlen)
{
    int kind = -1;
    *nrest = 0;
    rest[(*nrest)++] = argv[0];
    for (int i = 1; i < argc; i++) {
        long d;
        if (strcmp(argv[i], "-f") == 0 || strcmp(argv[i], "--full") == 0) {
            *full = 1;
        } else if (strcmp(argv[i], "-d") == 0) {
            if (i + 1 >= argc || bench_parse_long(argv[++i], &d) || d < 1 || d > 8) {
                snprintf(err, errlen, "invalid -d argument (want 1..8)");
                return -1;
            }
            *dims = (int)d;
        } else if (argv[i][0] != '-' && kind < 0) {
            for (int k = 0; k < NB_N; k++)
                if (strcmp(argv[i], names[k]) == 0)
                    kind = k;
            if (kind < 0) {
                snprintf(err, errlen, "unknown collective '%s' (try -h)", argv[i]);
                return -1;
            }
        } else {
            rest[(*nrest)++] = argv[i];
        }
    }
    rest[*nrest] = NULL;
    for (int i = 1; i < *nrest; i++)
        if (strcmp(rest[i], "-h") == 0 || strcmp(rest[i], "--help") == 0)
            return -2;
    if (kind < 0)
        snprintf(err, errlen, "missing collective NAME (try -h)");
    return kind;
}

static void report(int kind, long size, int nranks, int ndims, long iters, long warmup,
                   double sum, double lo, double hi, double *tsum, int json, int full)
{
    if (!json) {
        printf("%-10ld%18.2f", size, sum / nranks);
        if (full)
            printf("%18.2f%18.2f%12ld", lo, hi, iters);
        putchar('\n');
        return;
    }
    struct bench_stats st;
    for (long k = 0; k < iters; k++)
        tsum[k] /= nranks;
    if (bench_stats_compute(tsum, (size_t)iters, &st) != 0) {
        fprintf(stderr, "neighbor: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    printf("{\"bench\":\"neighbor_%s\",\"size\":%ld,\"ranks\":%d,\"dims\":%d,"
           "\"neighbours\":%d,\"iterations\":%ld,\"warmup\":%ld,",
           names[kind], size, nranks, ndims, 2 * ndims, iters, warmup);
    bench_json_stats(stdout, &st, "us", 3);
    printf(",\"rank_min_us\":%.3f,\"rank_max_us\":%.3f,", lo, hi);
    bench_json_samples(stdout, tsum, (size_t)iters, BENCH_SAMPLE_CAP, "us", 3);
    fputs("}\n", stdout);
}

int main(int argc, char **argv)
{
    struct bench_opts o = {.min_size = 1, .max_size = 1L << 20, .iters = -1, .warmup = -1,
                           .window = 1};
    int rank, nranks, ndims = 2, full = 0, nrest, kind;
    char err[160], **rest;

    bench_mpi_version(argc, argv);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    rest = malloc((size_t)(argc + 1) * sizeof *rest);
    if (rest == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    kind = parse(argc, argv, rest, &nrest, &ndims, &full, err, sizeof err);
    if (kind >= 0 && bench_parse_opts(nrest, rest, &o, 0, err, sizeof err) != 0)
        kind = -1;
    if (kind >= 0 && o.max_size > INT_MAX / (2 * ndims)) {
        snprintf(err, sizeof err, "largest size times %d neighbours exceeds INT_MAX bytes",
                 2 * ndims);
        kind = -1;
    }
    free(rest);
    if (kind < 0) {
        if (rank == 0 && kind == -2)
            fputs(usage, stdout);
        else if (rank == 0)
            fprintf(stderr, "%s: %s\n", argv[0], err);
        MPI_Finalize();
        return kind == -2 ? 0 : 2;
    }

    int dims[8] = {0}, periods[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    MPI_Comm cart;
    MPI_Dims_create(nranks, ndims, dims);
    MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &cart);
    size_t len = (size_t)o.max_size * 2 * (size_t)ndims;
    char *sbuf = bench_mpi_alloc(&o, len, 'a'), *rbuf = bench_mpi_alloc(&o, len, 'b');
    long max_iters, unused;
    bench_counts_for(&o, &counts, 0, &max_iters, &unused);
    double *t = malloc((size_t)max_iters * sizeof *t);
    double *tsum = malloc((size_t)max_iters * sizeof *tsum);
    if (t == NULL || tsum == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (rank == 0 && !o.json) {
        printf("# vmpi neighbourhood collective latency test: %s, %d ranks, periodic grid",
               names[kind], nranks);
        for (int d = 0; d < ndims; d++)
            printf("%s%d", d ? "x" : " ", dims[d]);
        printf(" (%d neighbours)\n%-10s%18s", 2 * ndims, "# Size", "Avg Latency(us)");
        if (full)
            printf("%18s%18s%12s", "Min Latency(us)", "Max Latency(us)", "Iterations");
        putchar('\n');
        fflush(stdout);
    }
    for (long size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        long iters, warmup;
        double timer = 0.0, avg, sum, lo, hi;
        bench_counts_for(&o, &counts, size, &iters, &warmup);
        MPI_Barrier(cart);
        for (long i = 0; i < warmup + iters; i++) {
            double t0 = MPI_Wtime(), dt;
            once(kind, cart, sbuf, rbuf, (int)size);
            dt = MPI_Wtime() - t0;
            if (i >= warmup) {
                timer += dt;
                t[i - warmup] = dt * 1e6;
            }
            MPI_Barrier(cart);
        }
        avg = timer * 1e6 / (double)iters;
        MPI_Reduce(&avg, &lo, 1, MPI_DOUBLE, MPI_MIN, 0, cart);
        MPI_Reduce(&avg, &hi, 1, MPI_DOUBLE, MPI_MAX, 0, cart);
        MPI_Reduce(&avg, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, cart);
        if (o.json)
            MPI_Reduce(t, tsum, (int)iters, MPI_DOUBLE, MPI_SUM, 0, cart);
        if (rank == 0)
            report(kind, size, nranks, ndims, iters, warmup, sum, lo, hi, tsum, o.json, full);
        fflush(stdout);
    }
    free(t);
    free(tsum);
    bench_mpi_free(&o, sbuf);
    bench_mpi_free(&o, rbuf);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
