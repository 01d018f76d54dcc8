/*
 * rma_lock.c - contended exclusive MPI_Win_lock on one window.
 *
 * Every rank (rank 0 too) repeatedly takes MPI_LOCK_EXCLUSIVE on rank 0's
 * window, a single MPI_LONG_LONG counter from MPI_Win_allocate, and in that
 * epoch increments the counter: MPI_Get, MPI_Win_flush (so that the value
 * has arrived before it is used), +1, MPI_Put, MPI_Win_unlock (which
 * completes the put).  If two ranks ever held the lock together, one of
 * their increments would be lost, so at the end the counter must equal the
 * total number of acquisitions; otherwise the program says so on stderr and
 * exits with status 1.
 *
 * The timed part runs for -T seconds (every rank stops at its first unlock
 * after its own clock passes the deadline, the clocks started together by a
 * barrier) or, with -i, for ITER acquisitions per rank; -x WARMUP untimed
 * acquisitions per rank come first (they count for the check, not in the
 * figures).  Reported:
 *   throughput        timed acquisitions of all ranks / the longest rank's
 *                     timed span
 *   per rank          acquisitions (min, max, and Jain's fairness index
 *                     (sum x)^2 / (N sum x^2): 1 when all are equal, 1/N
 *                     when one rank got them all)
 *   acquire latency   mean time from calling MPI_Win_lock until the flush
 *                     after the Get returns, i.e. until the lock is held and
 *                     the counter read.  MPI_Win_lock alone is not timed: an
 *                     MPI may defer the lock request to the epoch's first
 *                     operation or flush (MPICH does).
 * VMPI_RMA_LOCK (vmpi's choice of lock algorithm) is only echoed.
 *
 * Build:  mpicc -O2 -std=c11 rma_lock.c -o rma_lock
 * Run:    mpiexec -n 8 ./rma_lock [-T SECONDS | -i ITER] [-x WARMUP] [--json]
 */
#include "bench_mpi.h"

#include <mpi.h>

static const char usage[] =
    "Usage: rma_lock [options]\n"
    "  All ranks increment a counter on rank 0's window under\n"
    "  MPI_LOCK_EXCLUSIVE (Get, flush, Put, unlock); checks that no increment\n"
    "  was lost, reports throughput, fairness and acquire latency.\n"
    "  -T SECONDS     timed part per rank (default 2)\n"
    "  -i ITER        instead of -T: timed acquisitions per rank\n"
    "  -x WARMUP      untimed acquisitions per rank first (default 10)\n"
    "  --json         one JSON object instead of the table: bench, ranks,\n"
    "                 vmpi_rma_lock, duration_s (null with -i), iterations\n"
    "                 (null with -T), warmup, elapsed_s, acquisitions,\n"
    "                 counter, counter_ok, throughput (acquisitions/s),\n"
    "                 min_acq, max_acq, jain, mean_acquire_us, per_rank\n"
    "                 (acquisitions), per_rank_acquire_us (mean)\n"
    "  -h, --help     this text\n";

#define HOST 0   /* the rank whose window holds the counter */

struct lock_opts {
    double seconds;   /* -T */
    long iters;       /* -i, -1 = run for -T seconds */
    long warmup;      /* -x */
    int json;
    int help;
};

/* 0 on success; otherwise a message in err. */
static int lock_parse(int argc, char **argv, struct lock_opts *o, char *err,
                      size_t errlen)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        char *end;

        if (strcmp(a, "--json") == 0) {
            o->json = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            o->help = 1;
        } else if (strncmp(a, "-T", 2) == 0) {
            v = bench_optarg(argc, argv, &i);
            errno = 0;
            o->seconds = v ? strtod(v, &end) : -1.0;
            if (v == NULL || *v == '\0' || *end != '\0' || errno != 0 ||
                !(o->seconds >= 0.0 && o->seconds <= 1e6)) {
                snprintf(err, errlen, "invalid -T argument (want SECONDS >= 0)");
                return -1;
            }
        } else if (strncmp(a, "-i", 2) == 0) {
            v = bench_optarg(argc, argv, &i);
            if (v == NULL || bench_parse_long(v, &o->iters) || o->iters < 1) {
                snprintf(err, errlen, "invalid -i argument (want ITER >= 1)");
                return -1;
            }
        } else if (strncmp(a, "-x", 2) == 0) {
            v = bench_optarg(argc, argv, &i);
            if (v == NULL || bench_parse_long(v, &o->warmup)) {
                snprintf(err, errlen, "invalid -x argument (want WARMUP >= 0)");
                return -1;
            }
        } else {
            snprintf(err, errlen, "unknown option '%s' (try -h)", a);
            return -1;
        }
    }
    return 0;
}

/* One acquisition: returns the seconds until the lock was held and the
 * counter read. */
static double increment(MPI_Win win)
{
    long long v;   /* Get's destination, then Put's source until unlock */
    double t0 = MPI_Wtime(), t1;

    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, HOST, 0, win);
    MPI_Get(&v, 1, MPI_LONG_LONG, HOST, 0, 1, MPI_LONG_LONG, win);
    MPI_Win_flush(HOST, win);
    t1 = MPI_Wtime();
    v++;
    MPI_Put(&v, 1, MPI_LONG_LONG, HOST, 0, 1, MPI_LONG_LONG, win);
    MPI_Win_unlock(HOST, win);
    return t1 - t0;
}

/* The counter, read in a lock epoch of its own (either memory model). */
static long long read_counter(MPI_Win win)
{
    long long v;

    MPI_Win_lock(MPI_LOCK_SHARED, HOST, 0, win);
    MPI_Get(&v, 1, MPI_LONG_LONG, HOST, 0, 1, MPI_LONG_LONG, win);
    MPI_Win_unlock(HOST, win);
    return v;
}

/* A JSON string, or null; escapes what JSON requires. */
static void json_string(FILE *f, const char *s)
{
    if (s == NULL) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;

        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

int main(int argc, char **argv)
{
    struct lock_opts o = { .seconds = 2.0, .iters = -1, .warmup = 10 };
    const char *algo = getenv("VMPI_RMA_LOCK");
    char err[160];
    int rank, nranks, ok;
    long long *counter = NULL, zero = 0, *all = NULL, total = 0, done, got;
    double t_start, deadline, elapsed, lat_sum = 0.0, span, *lat_all = NULL;
    MPI_Win win;

    bench_mpi_version(argc, argv);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    /* Every rank parses the same argv, so every rank reaches the same verdict. */
    if (lock_parse(argc, argv, &o, err, sizeof err) != 0 || o.help) {
        if (rank == 0 && o.help)
            fputs(usage, stdout);
        else if (rank == 0)
            fprintf(stderr, "%s: %s\n", argv[0], err);
        MPI_Finalize();
        return o.help ? 0 : 2;
    }

    MPI_Win_allocate(rank == HOST ? (MPI_Aint)sizeof *counter : 0,
                     (int)sizeof *counter, MPI_INFO_NULL, MPI_COMM_WORLD, &counter,
                     &win);
    if (rank == HOST) {
        /* Through RMA, like every later access (either memory model). */
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, HOST, 0, win);
        MPI_Put(&zero, 1, MPI_LONG_LONG, HOST, 0, 1, MPI_LONG_LONG, win);
        MPI_Win_unlock(HOST, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);   /* the zero is in place before any lock */

    for (long k = 0; k < o.warmup; k++)
        increment(win);

    MPI_Barrier(MPI_COMM_WORLD);
    t_start = MPI_Wtime();
    deadline = t_start + o.seconds;
    for (done = 0; o.iters >= 0 ? done < o.iters : MPI_Wtime() < deadline; done++)
        lat_sum += increment(win);
    elapsed = MPI_Wtime() - t_start;

    /* Rank 0 gets every rank's acquisitions and total acquire time; as it
     * has them, every rank is past its last unlock. */
    if (rank == 0) {
        all = malloc((size_t)nranks * sizeof *all);
        lat_all = malloc((size_t)nranks * sizeof *lat_all);
        if (all == NULL || lat_all == NULL)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Gather(&done, 1, MPI_LONG_LONG, all, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    MPI_Gather(&lat_sum, 1, MPI_DOUBLE, lat_all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Reduce(&elapsed, &span, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    ok = 1;
    if (rank == 0) {
        long long lo = all[0], hi = all[0], expect;
        double sq = 0.0, lat_total = 0.0, jain, tput, mean_us;

        got = read_counter(win);
        for (int r = 0; r < nranks; r++) {
            total += all[r];
            lo = all[r] < lo ? all[r] : lo;
            hi = all[r] > hi ? all[r] : hi;
            sq += (double)all[r] * (double)all[r];
            lat_total += lat_all[r];
        }
        expect = total + (long long)nranks * o.warmup;
        ok = got == expect;
        jain = sq > 0.0 ? (double)total * (double)total / ((double)nranks * sq) : 0.0;
        tput = span > 0.0 ? (double)total / span : 0.0;
        mean_us = total > 0 ? lat_total * 1e6 / (double)total : 0.0;

        if (!o.json) {
            printf("# vmpi RMA exclusive-lock contention test\n");
            printf("# %d ranks, MPI_Win_allocate counter on rank %d, "
                   "MPI_LOCK_EXCLUSIVE: Get, flush, +1, Put, unlock\n", nranks, HOST);
            if (algo != NULL)
                printf("# VMPI_RMA_LOCK=%s\n", algo);
            if (o.iters >= 0)
                printf("# %ld acquisitions per rank after %ld warm-up\n", o.iters,
                       o.warmup);
            else
                printf("# %.2f s per rank after %ld warm-up acquisitions\n",
                       o.seconds, o.warmup);
            printf("%-8s%16s%20s\n", "# Rank", "Acquisitions", "Acquire (us)");
            for (int r = 0; r < nranks; r++)
                printf("%-8d%16lld%20.2f\n", r, all[r],
                       all[r] > 0 ? lat_all[r] * 1e6 / (double)all[r] : 0.0);
            printf("# total acquisitions   %lld in %.3f s\n", total, span);
            printf("# throughput           %.1f acquisitions/s\n", tput);
            printf("# per rank min / max   %lld / %lld\n", lo, hi);
            printf("# Jain's index         %.4f\n", jain);
            printf("# mean acquire latency %.2f us\n", mean_us);
            printf("# counter              %lld (%s)\n", got,
                   ok ? "ok" : "WRONG");
        } else {
            printf("{\"bench\":\"rma_lock\",\"ranks\":%d,\"vmpi_rma_lock\":", nranks);
            json_string(stdout, algo);
            if (o.iters >= 0)
                printf(",\"duration_s\":null,\"iterations\":%ld", o.iters);
            else
                printf(",\"duration_s\":%.3f,\"iterations\":null", o.seconds);
            printf(",\"warmup\":%ld,\"elapsed_s\":%.6f,\"acquisitions\":%lld,"
                   "\"counter\":%lld,\"counter_ok\":%s,\"throughput\":%.1f,"
                   "\"min_acq\":%lld,\"max_acq\":%lld,\"jain\":%.4f,"
                   "\"mean_acquire_us\":%.3f,\"per_rank\":[",
                   o.warmup, span, total, got, ok ? "true" : "false", tput, lo, hi,
                   jain, mean_us);
            for (int r = 0; r < nranks; r++)
                printf("%s%lld", r ? "," : "", all[r]);
            fputs("],\"per_rank_acquire_us\":[", stdout);
            for (int r = 0; r < nranks; r++)
                printf("%s%.3f", r ? "," : "",
                       all[r] > 0 ? lat_all[r] * 1e6 / (double)all[r] : 0.0);
            fputs("]}\n", stdout);
        }
        fflush(stdout);
        if (!ok)
            fprintf(stderr, "%s: counter is %lld, expected %lld (%lld timed + "
                            "%ld warm-up per rank): mutual exclusion failed\n",
                    argv[0], got, expect, total, o.warmup);
    }

    free(all);
    free(lat_all);
    MPI_Win_free(&win);
    MPI_Finalize();
    return ok ? 0 : 1;
}
