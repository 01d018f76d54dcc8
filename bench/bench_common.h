/*
 * bench_common.h - helpers shared by the vmpi benchmark programs.
 *
 * Header-only (static functions) so that every benchmark is a single
 * translation unit that builds with any MPI's compiler wrapper:
 *     mpicc -O2 -std=c11 latency.c -o latency
 * Nothing here calls MPI; the MPI programs pass their rank in where output
 * must come from one rank only.
 *
 * Contents: option parsing in the style of the OSU micro-benchmarks
 * (-m [MIN:]MAX, -i, -x, -W, --json, -h), page-aligned touched buffers,
 * summary statistics (min/max/mean/p50/p99) and JSON sample printing
 * (bench_json_dist writes both).
 */
#ifndef VMPI_BENCH_COMMON_H
#define VMPI_BENCH_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef VMPI_VERSION
#define VMPI_VERSION "unknown" /* built by bench/Makefile without VMPI_VERSION= */
#endif

/* --version anywhere among the arguments: the program, the suite's version
 * and, when given, the library's line; exits 0 before MPI_Init, so it needs
 * no launcher. */
static inline void bench_version(int argc, char **argv, const char *lib)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--version") == 0) {
            const char *name = strrchr(argv[0], '/');
            printf("%s (vmpi benchmarks) %s\n", name ? name + 1 : argv[0], VMPI_VERSION);
            if (lib)
                printf("%s\n", lib);
            exit(0);
        }
}

/* OSU's boundary between "small" and "large" messages (LARGE_MESSAGE_SIZE). */
#define BENCH_LARGE_MESSAGE 8192
/* Largest message the suite sends by default: 4 MiB. */
#define BENCH_MAX_MESSAGE (1 << 22)
/* At most this many samples are written per JSON record. */
#define BENCH_SAMPLE_CAP 1000

struct bench_opts {
    long min_size;      /* first message size (bytes) */
    long max_size;      /* last message size (bytes) */
    long iters;         /* -i: measured iterations, -1 = per-size default */
    long warmup;        /* -x: untimed iterations, -1 = per-size default */
    long window;        /* -W: window size (bw, bibw) */
    int json;           /* --json: JSON lines instead of the OSU table */
    int alloc_mem;      /* --alloc-mem: message buffers from MPI_Alloc_mem */
    int help;           /* -h / --help given */
};

/* Parse a non-negative decimal integer that fits in a long; 0 on success. */
static inline int bench_parse_long(const char *s, long *out)
{
    char *end = NULL;
    long v;

    if (s == NULL || *s == '\0')
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < 0)
        return -1;
    *out = v;
    return 0;
}

/* "-m MAX" or "-m MIN:MAX" (MIN may be empty: ":MAX"). 0 on success. */
static inline int bench_parse_range(const char *s, long *min, long *max)
{
    const char *colon = strchr(s, ':');
    char buf[64];

    if (colon == NULL)
        return bench_parse_long(s, max);
    if ((size_t)(colon - s) >= sizeof buf)
        return -1;
    memcpy(buf, s, (size_t)(colon - s));
    buf[colon - s] = '\0';
    if (buf[0] != '\0' && bench_parse_long(buf, min) != 0)
        return -1;
    return bench_parse_long(colon + 1, max);
}

/*
 * Fetch an option's argument: "-i 100" or "-i100".  Returns NULL if missing.
 */
static inline const char *bench_optarg(int argc, char **argv, int *i)
{
    const char *a = argv[*i];

    if (a[2] != '\0')
        return a + 2;
    if (*i + 1 >= argc)
        return NULL;
    (*i)++;
    return argv[*i];
}

/*
 * Parse the common options.  `accept_window` enables -W.  On error, writes
 * a message into errbuf and returns -1.
 */
static inline int bench_parse_opts(int argc, char **argv, struct bench_opts *o,
                            int accept_window, char *errbuf, size_t errlen)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v;

        if (strcmp(a, "--json") == 0) {
            o->json = 1;
        } else if (strcmp(a, "--alloc-mem") == 0) {
            o->alloc_mem = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            o->help = 1;
        } else if (strncmp(a, "-m", 2) == 0) {
            v = bench_optarg(argc, argv, &i);
            if (v == NULL || bench_parse_range(v, &o->min_size, &o->max_size)) {
                snprintf(errbuf, errlen, "invalid -m argument (want [MIN:]MAX)");
                return -1;
            }
        } else if (strncmp(a, "-i", 2) == 0) {
            v = bench_optarg(argc, argv, &i);
            if (v == NULL || bench_parse_long(v, &o->iters) || o->iters < 1) {
                snprintf(errbuf, errlen, "invalid -i argument (want ITER >= 1)");
                return -1;
            }
        } else if (strncmp(a, "-x", 2) == 0) {
            v = bench_optarg(argc, argv, &i);
            if (v == NULL || bench_parse_long(v, &o->warmup)) {
                snprintf(errbuf, errlen, "invalid -x argument (want WARMUP >= 0)");
                return -1;
            }
        } else if (accept_window && strncmp(a, "-W", 2) == 0) {
            v = bench_optarg(argc, argv, &i);
            if (v == NULL || bench_parse_long(v, &o->window) || o->window < 1 ||
                o->window > 1 << 20) {
                snprintf(errbuf, errlen, "invalid -W argument (want 1..1048576)");
                return -1;
            }
        } else {
            snprintf(errbuf, errlen, "unknown option '%s' (try -h)", a);
            return -1;
        }
    }
    if (o->max_size > INT_MAX / 2) {
        snprintf(errbuf, errlen, "maximum message size too large");
        return -1;
    }
    if (o->min_size > o->max_size) {
        snprintf(errbuf, errlen, "-m: MIN is larger than MAX");
        return -1;
    }
    return 0;
}

/* OSU's size sequence: MIN, then doubling (0 is followed by 1). */
static inline long bench_next_size(long size)
{
    return size ? size * 2 : 1;
}

/* Page-aligned buffer of `len` bytes (at least one page), filled with `fill`. */
static inline void *bench_alloc_touched(size_t len, int fill)
{
    long page = sysconf(_SC_PAGESIZE);
    void *p = NULL;

    if (page <= 0)
        page = 4096;
    if (len < (size_t)page)
        len = (size_t)page;
    if (posix_memalign(&p, (size_t)page, len) != 0)
        return NULL;
    memset(p, fill, len);   /* fault every page in before timing */
    return p;
}

struct bench_stats {
    double min, max, mean, p50, p99;
};

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Percentile with linear interpolation between closest ranks (sorted input). */
static inline double bench_percentile(const double *sorted, size_t n, double p)
{
    double pos, frac;
    size_t lo;

    if (n == 0)
        return 0.0;
    pos = p / 100.0 * (double)(n - 1);
    lo = (size_t)pos;
    if (lo + 1 >= n)
        return sorted[n - 1];
    frac = pos - (double)lo;
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

/* Summary of x[0..n); x is left untouched.  Returns -1 on allocation failure. */
static inline int bench_stats_compute(const double *x, size_t n, struct bench_stats *s)
{
    double *tmp, sum = 0.0;

    memset(s, 0, sizeof *s);
    if (n == 0)
        return 0;
    tmp = malloc(n * sizeof *tmp);
    if (tmp == NULL)
        return -1;
    memcpy(tmp, x, n * sizeof *tmp);
    qsort(tmp, n, sizeof *tmp, bench_cmp_double);
    for (size_t i = 0; i < n; i++)
        sum += tmp[i];
    s->min = tmp[0];
    s->max = tmp[n - 1];
    s->mean = sum / (double)n;
    s->p50 = bench_percentile(tmp, n, 50.0);
    s->p99 = bench_percentile(tmp, n, 99.0);
    free(tmp);
    return 0;
}

/* Write the summary fields `"min_<unit>":..,...,"p99_<unit>":..`. */
static inline void bench_json_stats(FILE *f, const struct bench_stats *s,
                             const char *unit, int prec)
{
    fprintf(f, "\"min_%s\":%.*f,\"max_%s\":%.*f,\"mean_%s\":%.*f,"
               "\"p50_%s\":%.*f,\"p99_%s\":%.*f",
            unit, prec, s->min, unit, prec, s->max, unit, prec, s->mean,
            unit, prec, s->p50, unit, prec, s->p99);
}

/*
 * Write `"samples_<unit>":[...]` in time order.  More than `cap` samples are
 * thinned to `cap` evenly spread ones (first and last always included).
 */
static inline void bench_json_samples(FILE *f, const double *x, size_t n, size_t cap,
                               const char *unit, int prec)
{
    size_t k, m = n <= cap ? n : cap;

    fprintf(f, "\"samples_%s\":[", unit);
    for (k = 0; k < m; k++) {
        size_t idx = (m == n || m < 2) ? k
                     : (size_t)(((uint64_t)k * (uint64_t)(n - 1)) / (uint64_t)(m - 1));
        fprintf(f, "%s%.*f", k ? "," : "", prec, x[idx]);
    }
    fputc(']', f);
}

/*
 * Write the summary fields and then the samples of x[0..n), comma-separated
 * (bench_json_stats, bench_json_samples).  Returns -1, having written
 * nothing, when the summary cannot be computed (out of memory).
 */
static inline int bench_json_dist(FILE *f, const double *x, size_t n, const char *unit,
                                  int prec)
{
    struct bench_stats st;

    if (bench_stats_compute(x, n, &st) != 0)
        return -1;
    bench_json_stats(f, &st, unit, prec);
    fputc(',', f);
    bench_json_samples(f, x, n, BENCH_SAMPLE_CAP, unit, prec);
    return 0;
}

#endif /* VMPI_BENCH_COMMON_H */
