/*
 * coll.c - latency of the collectives on MPI_COMM_WORLD.
 *
 * Semantics of OSU's osu_<name> collective tests: every rank times each call
 * on its own (MPI_Wtime before and after), with an MPI_Barrier between
 * iterations (none for barrier itself) so that no call overlaps the next.
 * A rank's latency is its average over the measured iterations; the table
 * shows the average over the ranks, and with -f also the minimum and maximum
 * over the ranks.  Data moves as MPI_CHAR; reduce and allreduce sum
 * MPI_FLOATs (SIZE bytes = SIZE/4 floats, sizes below 4 bytes skipped);
 * rooted collectives use root 0.  A name with an i in front (iallreduce)
 * times the non-blocking form from the call to the end of MPI_Wait, with
 * nothing in between: OSU's "pure communication" time of osu_i<name>.
 *
 * With --json every rank also keeps its per-iteration times; rank 0 prints
 * one JSON object per size with the distribution of the per-iteration
 * latency averaged over the ranks.
 *
 * Build:  mpicc -O2 -std=c11 coll.c -o coll
 * Run:    mpiexec -n 4 ./coll NAME [-m [MIN:]MAX | --sizes LIST] [-i ITER]
 *                  [-x WARMUP] [-f] [--json]
 *         (or through a link named osu_NAME, without NAME)
 */
#include <ctype.h>

#include "bench_mpi.h"

static const char usage[] =
    "Usage: coll NAME [options]   (or a link osu_NAME [options])\n"
    "  Latency of one collective on MPI_COMM_WORLD, as OSU measures\n"
    "  it: each call timed on every rank, MPI_Barrier between iterations.\n"
    "  NAME: barrier, bcast, reduce, allreduce, gather, scatter, allgather,\n"
    "        alltoall, gatherv, scatterv, allgatherv, alltoallv (the v forms\n"
    "        with SIZE from every rank, as OSU's; reduce/allreduce: MPI_SUM\n"
    "        of MPI_FLOAT, SIZE/4 elements; others MPI_CHAR; root 0), or one\n"
    "        of them with an i in\n"
    "        front: the non-blocking form, timed from the call to the end of\n"
    "        its MPI_Wait\n"
    "  -m [MIN:]MAX   message sizes from MIN to MAX bytes, doubling\n"
    "                 (default 1:1048576; per rank for gather, scatter,\n"
    "                 allgather, alltoall; ignored by barrier)\n"
    "  --sizes LIST   only these sizes, e.g. 8,512,65536 (instead of -m)\n"
    "  -i ITER        measured iterations per size (default 1000); sizes\n"
    "                 > 8192 run ITER/10, rounded up\n"
    "  -x WARMUP      untimed iterations per size (default 200); sizes\n"
    "                 > 8192 run WARMUP/20, rounded up\n"
    "  -f, --full     also print the minimum and maximum over the ranks of\n"
    "                 the per-rank average, and the iteration count\n"
    "  --alloc-mem    message buffers from MPI_Alloc_mem\n"
    "  --json         one JSON object per size instead of the table: bench,\n"
    "                 size (0 for barrier), ranks, iterations, warmup,\n"
    "                 min_us, max_us, mean_us, p50_us, p99_us (over the\n"
    "                 iterations of the latency averaged over the ranks;\n"
    "                 mean_us is the table's average), rank_min_us,\n"
    "                 rank_max_us (the -f columns), samples_us (at most\n"
    "                 1000, evenly spread)\n"
    "  -h, --help     this text\n";

/* From COLL_GATHER on, a buffer holds one message per rank. */
enum coll_kind {
    COLL_BARRIER, COLL_BCAST, COLL_REDUCE, COLL_ALLREDUCE,
    COLL_GATHER, COLL_SCATTER, COLL_ALLGATHER, COLL_ALLTOALL,
    COLL_GATHERV, COLL_SCATTERV, COLL_ALLGATHERV, COLL_ALLTOALLV
};

static const struct coll_desc {
    const char *name;
    const char *mpi_name;
} colls[] = {
    [COLL_BARRIER] = { "barrier", "MPI_Barrier" },
    [COLL_BCAST] = { "bcast", "MPI_Bcast" },
    [COLL_REDUCE] = { "reduce", "MPI_Reduce" },
    [COLL_ALLREDUCE] = { "allreduce", "MPI_Allreduce" },
    [COLL_GATHER] = { "gather", "MPI_Gather" },
    [COLL_SCATTER] = { "scatter", "MPI_Scatter" },
    [COLL_ALLGATHER] = { "allgather", "MPI_Allgather" },
    [COLL_ALLTOALL] = { "alltoall", "MPI_Alltoall" },
    [COLL_GATHERV] = { "gatherv", "MPI_Gatherv" },
    [COLL_SCATTERV] = { "scatterv", "MPI_Scatterv" },
    [COLL_ALLGATHERV] = { "allgatherv", "MPI_Allgatherv" },
    [COLL_ALLTOALLV] = { "alltoallv", "MPI_Alltoallv" },
};
#define NCOLLS ((int)(sizeof colls / sizeof colls[0]))

#define ROOT 0
/* OSU's defaults for collectives: 1000/200 iterations, 100/10 above 8 KiB. */
#define DEFAULT_ITERS 1000
#define DEFAULT_WARMUP 200
#define LARGE_ITERS_DIV 10
#define LARGE_WARMUP_DIV 20
/* Enough for any doubling sequence of int sizes, and for --sizes. */
#define MAX_SIZES 64

/* What coll adds to the common options. */
struct coll_args {
    int full;                 /* -f */
    int nsizes;               /* --sizes given: its entries */
    long sizes[MAX_SIZES];
};

struct coll_ctx {
    enum coll_kind kind;
    int nb; /* the non-blocking form */
    MPI_Comm comm;
    int rank, nranks;
    void *sbuf, *rbuf;
    int *counts, *displs; /* the v forms: SIZE per rank, blocks in rank order */
};

/* The v forms' counts and displacements for SIZE bytes per rank. */
static void coll_v_layout(const struct coll_ctx *c, int size)
{
    for (int j = 0; j < c->nranks; j++) {
        c->counts[j] = size;
        c->displs[j] = j * size;
    }
}

/* The collective NAME or iNAME (*nb set: no base name starts with i). */
static int coll_lookup(const char *name, int *nb)
{
    *nb = name[0] == 'i';
    for (int k = 0; k < NCOLLS; k++)
        if (strcmp(name + *nb, colls[k].name) == 0)
            return k;
    return -1;
}

/* The non-blocking form of coll_once, waited for at once. */
static void coll_once_nb(const struct coll_ctx *c, int size)
{
    MPI_Request r;
    int n = size / (int)sizeof(float);

    switch (c->kind) {
    case COLL_BARRIER:
        MPI_Ibarrier(c->comm, &r);
        break;
    case COLL_BCAST:
        MPI_Ibcast(c->sbuf, size, MPI_CHAR, ROOT, c->comm, &r);
        break;
    case COLL_REDUCE:
        MPI_Ireduce(c->sbuf, c->rbuf, n, MPI_FLOAT, MPI_SUM, ROOT, c->comm, &r);
        break;
    case COLL_ALLREDUCE:
        MPI_Iallreduce(c->sbuf, c->rbuf, n, MPI_FLOAT, MPI_SUM, c->comm, &r);
        break;
    case COLL_GATHER:
        MPI_Igather(c->sbuf, size, MPI_CHAR, c->rbuf, size, MPI_CHAR, ROOT, c->comm, &r);
        break;
    case COLL_SCATTER:
        MPI_Iscatter(c->sbuf, size, MPI_CHAR, c->rbuf, size, MPI_CHAR, ROOT, c->comm, &r);
        break;
    case COLL_ALLGATHER:
        MPI_Iallgather(c->sbuf, size, MPI_CHAR, c->rbuf, size, MPI_CHAR, c->comm, &r);
        break;
    case COLL_ALLTOALL:
        MPI_Ialltoall(c->sbuf, size, MPI_CHAR, c->rbuf, size, MPI_CHAR, c->comm, &r);
        break;
    case COLL_GATHERV:
        MPI_Igatherv(c->sbuf, size, MPI_CHAR, c->rbuf, c->counts, c->displs, MPI_CHAR, ROOT,
                     c->comm, &r);
        break;
    case COLL_SCATTERV:
        MPI_Iscatterv(c->sbuf, c->counts, c->displs, MPI_CHAR, c->rbuf, size, MPI_CHAR, ROOT,
                      c->comm, &r);
        break;
    case COLL_ALLGATHERV:
        MPI_Iallgatherv(c->sbuf, size, MPI_CHAR, c->rbuf, c->counts, c->displs, MPI_CHAR,
                        c->comm, &r);
        break;
    case COLL_ALLTOALLV:
        MPI_Ialltoallv(c->sbuf, c->counts, c->displs, MPI_CHAR, c->rbuf, c->counts, c->displs,
                       MPI_CHAR, c->comm, &r);
        break;
    default:
        return;
    }
    MPI_Wait(&r, MPI_STATUS_IGNORE);
}

/* One call of the collective on SIZE bytes (per rank where it applies). */
static void coll_once(const struct coll_ctx *c, int size)
{
    if (c->nb) {
        coll_once_nb(c, size);
        return;
    }
    switch (c->kind) {
    case COLL_BARRIER:
        MPI_Barrier(c->comm);
        break;
    case COLL_BCAST:
        MPI_Bcast(c->sbuf, size, MPI_CHAR, ROOT, c->comm);
        break;
    case COLL_REDUCE:
        MPI_Reduce(c->sbuf, c->rbuf, size / (int)sizeof(float), MPI_FLOAT, MPI_SUM,
                   ROOT, c->comm);
        break;
    case COLL_ALLREDUCE:
        MPI_Allreduce(c->sbuf, c->rbuf, size / (int)sizeof(float), MPI_FLOAT,
                      MPI_SUM, c->comm);
        break;
    case COLL_GATHER:
        MPI_Gather(c->sbuf, size, MPI_CHAR, c->rbuf, size, MPI_CHAR, ROOT, c->comm);
        break;
    case COLL_SCATTER:
        MPI_Scatter(c->sbuf, size, MPI_CHAR, c->rbuf, size, MPI_CHAR, ROOT, c->comm);
        break;
    case COLL_ALLGATHER:
        MPI_Allgather(c->sbuf, size, MPI_CHAR, c->rbuf, size, MPI_CHAR, c->comm);
        break;
    case COLL_ALLTOALL:
        MPI_Alltoall(c->sbuf, size, MPI_CHAR, c->rbuf, size, MPI_CHAR, c->comm);
        break;
    case COLL_GATHERV:
        MPI_Gatherv(c->sbuf, size, MPI_CHAR, c->rbuf, c->counts, c->displs, MPI_CHAR, ROOT,
                    c->comm);
        break;
    case COLL_SCATTERV:
        MPI_Scatterv(c->sbuf, c->counts, c->displs, MPI_CHAR, c->rbuf, size, MPI_CHAR, ROOT,
                     c->comm);
        break;
    case COLL_ALLGATHERV:
        MPI_Allgatherv(c->sbuf, size, MPI_CHAR, c->rbuf, c->counts, c->displs, MPI_CHAR,
                       c->comm);
        break;
    case COLL_ALLTOALLV:
        MPI_Alltoallv(c->sbuf, c->counts, c->displs, MPI_CHAR, c->rbuf, c->counts, c->displs,
                      MPI_CHAR, c->comm);
        break;
    }
}

/* Bytes of send and receive buffer this rank needs for messages of MAX bytes. */
static void coll_buffer_lens(const struct coll_ctx *c, size_t max, size_t *slen,
                             size_t *rlen)
{
    size_t all = max * (size_t)c->nranks;
    int root = c->rank == ROOT;

    *slen = *rlen = 0;
    switch (c->kind) {
    case COLL_BARRIER:
        break;
    case COLL_BCAST:
        *slen = max;
        break;
    case COLL_REDUCE:
    case COLL_ALLREDUCE:
        *slen = *rlen = max;
        break;
    case COLL_GATHER:
    case COLL_GATHERV:
        *slen = max;
        *rlen = root ? all : 0;
        break;
    case COLL_SCATTER:
    case COLL_SCATTERV:
        *slen = root ? all : 0;
        *rlen = max;
        break;
    case COLL_ALLGATHER:
    case COLL_ALLGATHERV:
        *slen = max;
        *rlen = all;
        break;
    case COLL_ALLTOALL:
    case COLL_ALLTOALLV:
        *slen = *rlen = all;
        break;
    }
}

/* Iteration counts for SIZE: OSU's defaults, and for -i/-x OSU's ratio
 * between small and large messages. */
static void coll_counts(const struct bench_opts *o, long size, long *iters,
                        long *warmup)
{
    long i = o->iters >= 0 ? o->iters : DEFAULT_ITERS;
    long w = o->warmup >= 0 ? o->warmup : DEFAULT_WARMUP;

    if (size > BENCH_LARGE_MESSAGE) {
        i = (i + LARGE_ITERS_DIV - 1) / LARGE_ITERS_DIV;
        w = (w + LARGE_WARMUP_DIV - 1) / LARGE_WARMUP_DIV;
    }
    *iters = i;
    *warmup = w;
}

/* "--sizes 8,512,65536" into a->sizes; 0 on success. */
static int coll_parse_sizes(const char *list, struct coll_args *a)
{
    char buf[32];

    a->nsizes = 0;
    while (*list != '\0') {
        size_t len = strcspn(list, ",");

        if (len == 0 || len >= sizeof buf || a->nsizes == MAX_SIZES)
            return -1;
        memcpy(buf, list, len);
        buf[len] = '\0';
        if (bench_parse_long(buf, &a->sizes[a->nsizes]) != 0 ||
            a->sizes[a->nsizes] > INT_MAX / 2)
            return -1;
        a->nsizes++;
        list += len;
        if (*list == ',' && *++list == '\0')
            return -1;
    }
    return a->nsizes > 0 ? 0 : -1;
}

/*
 * NAME from argv[1] or from a program name osu_NAME, coll's own options
 * into `a`, and the remaining options for bench_parse_opts in `rest`.
 * Returns the collective, -1 with a message in err, or -2 if only help was
 * asked for.
 */
static int coll_parse(int argc, char **argv, char **rest, int *nrest,
                      struct coll_args *a, int *nb, char *err, size_t errlen)
{
    const char *prog = strrchr(argv[0], '/');
    int kind = -1, first = 1;

    prog = prog ? prog + 1 : argv[0];
    if (strncmp(prog, "osu_", 4) == 0)
        kind = coll_lookup(prog + 4, nb);
    if (kind < 0 && argc > 1 && argv[1][0] != '-') {
        kind = coll_lookup(argv[1], nb);
        if (kind < 0) {
            snprintf(err, errlen, "unknown collective '%s' (try -h)", argv[1]);
            return -1;
        }
        first = 2;
    }

    *nrest = 0;
    rest[(*nrest)++] = argv[0];
    for (int i = first; i < argc; i++) {
        if (strcmp(argv[i], "-f") == 0 || strcmp(argv[i], "--full") == 0) {
            a->full = 1;
        } else if (strcmp(argv[i], "--sizes") == 0) {
            if (i + 1 >= argc || coll_parse_sizes(argv[++i], a) != 0) {
                snprintf(err, errlen, "invalid --sizes argument (want SIZE[,SIZE]...)");
                return -1;
            }
        } else {
            rest[(*nrest)++] = argv[i];
        }
    }
    rest[*nrest] = NULL;

    if (kind < 0) {
        for (int i = 1; i < *nrest; i++)
            if (strcmp(rest[i], "-h") == 0 || strcmp(rest[i], "--help") == 0)
                return -2;
        snprintf(err, errlen, "missing collective NAME (try -h)");
        return -1;
    }
    return kind;
}

static void coll_header(const struct coll_ctx *c, int full)
{
    int sized = c->kind != COLL_BARRIER;

    const char *mpi = colls[c->kind].mpi_name;

    if (c->nb) /* MPI_Bcast -> MPI_Ibcast */
        printf("# vmpi collective latency test: MPI_I%c%s, %d ranks (call to the end of "
               "MPI_Wait)\n", tolower((unsigned char)mpi[4]), mpi + 5, c->nranks);
    else
        printf("# vmpi collective latency test: %s, %d ranks\n", mpi, c->nranks);
    if (c->kind == COLL_REDUCE || c->kind == COLL_ALLREDUCE)
        printf("# MPI_FLOAT, MPI_SUM, size in bytes (count = size / 4)\n");
    if (sized)
        printf("%-10s%18s", "# Size", "Avg Latency(us)");
    else
        printf("%-18s", "# Avg Latency(us)");
    if (full)
        printf("%18s%18s%12s", "Min Latency(us)", "Max Latency(us)", "Iterations");
    putchar('\n');
    fflush(stdout);
}

int main(int argc, char **argv)
{
    struct bench_opts o = { .min_size = 1, .max_size = 1L << 20,
                            .iters = -1, .warmup = -1, .window = 1 };
    struct coll_ctx c = { .comm = MPI_COMM_WORLD };
    struct coll_args a = { 0 };
    char err[160];
    char **rest;
    int nrest, kind;
    long max_iters, unused;
    double *t = NULL, *tsum = NULL;
    size_t slen, rlen;

    bench_mpi_version(argc, argv);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(c.comm, &c.rank);
    MPI_Comm_size(c.comm, &c.nranks);

    /* Every rank parses the same argv, so every rank reaches the same verdict. */
    rest = malloc((size_t)(argc + 1) * sizeof *rest);
    if (rest == NULL)
        MPI_Abort(c.comm, 1);
    kind = coll_parse(argc, argv, rest, &nrest, &a, &c.nb, err, sizeof err);
    if (kind >= 0 && bench_parse_opts(nrest, rest, &o, 0, err, sizeof err) != 0)
        kind = -1;
    if (kind == COLL_BARRIER) {
        a.nsizes = 1;   /* one row, no message */
        a.sizes[0] = 0;
    } else if (kind > 0 && a.nsizes == 0) {
        for (long size = o.min_size; size <= o.max_size; size = bench_next_size(size))
            a.sizes[a.nsizes++] = size;
    }
    o.max_size = 0;
    for (int k = 0; k < a.nsizes; k++)
        if (a.sizes[k] > o.max_size)
            o.max_size = a.sizes[k];
    if (kind >= 0 && o.help)
        kind = -2;
    if (kind >= 0 && (kind == COLL_REDUCE || kind == COLL_ALLREDUCE) &&
        o.max_size < (long)sizeof(float)) {
        snprintf(err, sizeof err, "%s needs a size >= 4 (one MPI_FLOAT)",
                 colls[kind].name);
        kind = -1;
    }
    if (kind >= COLL_GATHER && o.max_size > INT_MAX / c.nranks) {
        snprintf(err, sizeof err, "largest size times %d ranks exceeds INT_MAX bytes",
                 c.nranks);
        kind = -1;
    }
    if (kind < 0) {
        if (c.rank == 0 && kind == -2)
            fputs(usage, stdout);
        else if (c.rank == 0)
            fprintf(stderr, "%s: %s\n", argv[0], err);
        free(rest);
        MPI_Finalize();
        return kind == -2 ? 0 : 2;
    }
    free(rest);
    c.kind = (enum coll_kind)kind;

    coll_buffer_lens(&c, (size_t)o.max_size, &slen, &rlen);
    c.sbuf = bench_mpi_alloc(&o, slen, 'a');
    c.rbuf = bench_mpi_alloc(&o, rlen, 'b');
    c.counts = malloc((size_t)c.nranks * sizeof *c.counts);
    c.displs = malloc((size_t)c.nranks * sizeof *c.displs);
    if (c.counts == NULL || c.displs == NULL)
        MPI_Abort(c.comm, 1);
    if (c.kind == COLL_REDUCE || c.kind == COLL_ALLREDUCE) {
        /* Ordinary floats: byte fill could make NaNs or denormals. */
        for (size_t k = 0; k < slen / sizeof(float); k++)
            ((float *)c.sbuf)[k] = 1.0f;
    }

    if (o.json) {
        coll_counts(&o, 0, &max_iters, &unused);
        t = malloc((size_t)max_iters * sizeof *t);
        tsum = malloc((size_t)max_iters * sizeof *tsum);
        if (t == NULL || tsum == NULL) {
            fprintf(stderr, "coll: cannot allocate samples\n");
            MPI_Abort(c.comm, 1);
        }
    } else if (c.rank == 0) {
        coll_header(&c, a.full);
    }

    for (int k = 0; k < a.nsizes; k++) {
        long size = a.sizes[k], iters, warmup;
        double timer = 0.0, avg, sum, lo, hi;

        if ((c.kind == COLL_REDUCE || c.kind == COLL_ALLREDUCE) &&
            size < (long)sizeof(float))
            continue;
        coll_counts(&o, size, &iters, &warmup);
        coll_v_layout(&c, (int)size);

        MPI_Barrier(c.comm);
        for (long i = 0; i < warmup + iters; i++) {
            double t0 = MPI_Wtime(), dt;

            coll_once(&c, (int)size);
            dt = MPI_Wtime() - t0;
            if (i >= warmup) {
                timer += dt;
                if (t != NULL)
                    t[i - warmup] = dt * 1e6;
            }
            if (c.kind != COLL_BARRIER)
                MPI_Barrier(c.comm);
        }

        avg = timer * 1e6 / (double)iters;
        MPI_Reduce(&avg, &lo, 1, MPI_DOUBLE, MPI_MIN, ROOT, c.comm);
        MPI_Reduce(&avg, &hi, 1, MPI_DOUBLE, MPI_MAX, ROOT, c.comm);
        MPI_Reduce(&avg, &sum, 1, MPI_DOUBLE, MPI_SUM, ROOT, c.comm);
        if (o.json)
            MPI_Reduce(t, tsum, (int)iters, MPI_DOUBLE, MPI_SUM, ROOT, c.comm);
        if (c.rank != ROOT)
            continue;

        if (!o.json) {
            if (c.kind != COLL_BARRIER)
                printf("%-10ld", size);
            printf("%18.2f", sum / c.nranks);
            if (a.full)
                printf("%18.2f%18.2f%12ld", lo, hi, iters);
            putchar('\n');
        } else {
            struct bench_stats st;

            for (long k = 0; k < iters; k++)
                tsum[k] /= c.nranks;
            if (bench_stats_compute(tsum, (size_t)iters, &st) != 0) {
                fprintf(stderr, "coll: out of memory\n");
                MPI_Abort(c.comm, 1);
            }
            printf("{\"bench\":\"%s%s\",\"size\":%ld,\"ranks\":%d,\"iterations\":%ld,"
                   "\"warmup\":%ld,", c.nb ? "i" : "", colls[c.kind].name, size, c.nranks,
                   iters, warmup);
            bench_json_stats(stdout, &st, "us", 3);
            printf(",\"rank_min_us\":%.3f,\"rank_max_us\":%.3f,", lo, hi);
            bench_json_samples(stdout, tsum, (size_t)iters, BENCH_SAMPLE_CAP, "us", 3);
            fputs("}\n", stdout);
        }
        fflush(stdout);
    }

    free(t);
    free(tsum);
    bench_mpi_free(&o, c.sbuf);
    bench_mpi_free(&o, c.rbuf);
    free(c.counts);
    free(c.displs);
    MPI_Finalize();
    return 0;
}
