/*
 * app_common.h - what the four application kernels (stencil, fft, sort, bfs)
 * share: options, timing across ranks, the OSU-like report and the JSON
 * record `vmpi study` reads, and failing loudly.
 *
 * Header-only so that each kernel is one translation unit that builds with
 * any MPI's compiler wrapper:  mpicc -O2 -std=c11 stencil.c -o vmpi-stencil -lm
 *
 * Every kernel runs: set-up (untimed), one untimed warm-up repetition, -r
 * timed repetitions of -i iterations each, then its verification. A
 * repetition's time is the slowest rank's (MPI_MAX), as a user would see it.
 */
#ifndef VMPI_APP_COMMON_H
#define VMPI_APP_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

struct app_opts {
    long size;  /* -n: problem size (each kernel says what it means) */
    long iters; /* -i: iterations per timed repetition */
    long reps;  /* -r: timed repetitions */
    int json;   /* --json: one JSON record instead of the table */
};

/* A kernel's name (for messages) and its -h text. */
struct app_info {
    const char *name;       /* "stencil" */
    const char *usage;      /* lines after "usage: vmpi-NAME [options]" */
    long def_size, def_iters, def_reps;
};

static inline void app_fail(const struct app_info *app, const char *fmt, ...)
{
    va_list ap;
    int rank = -1;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "vmpi-%s: rank %d: ", app->name, rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

/* Checked allocation: a kernel that cannot get its memory says so and aborts. */
static inline void *app_alloc(const struct app_info *app, size_t n, size_t elem)
{
    void *p;

    if (n != 0 && elem > SIZE_MAX / n)
        app_fail(app, "allocation of %zu x %zu bytes overflows", n, elem);
    p = malloc(n * elem != 0 ? n * elem : 1);
    if (p == NULL)
        app_fail(app, "out of memory (%zu bytes)", n * elem);
    return p;
}

static inline int app_parse_pos(const char *s, long *out)
{
    char *end = NULL;
    long v;

    if (s == NULL || *s == '\0')
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v <= 0)
        return -1;
    *out = v;
    return 0;
}

#ifndef VMPI_VERSION
#define VMPI_VERSION "unknown" /* built by apps/Makefile without VMPI_VERSION= */
#endif

/*
 * Parse -n, -i, -r, --json, -h, --version. Returns 0 to run, 1 after -h or
 * --version (exit 0),
 * 2 on a bad option (exit 2); rank 0 prints the usage or the error.
 */
static inline int app_parse(const struct app_info *app, int argc, char **argv,
                            struct app_opts *o)
{
    int rank = 0;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    o->size = app->def_size;
    o->iters = app->def_iters;
    o->reps = app->def_reps;
    o->json = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        long *dst = NULL;

        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            if (rank == 0)
                printf("usage: vmpi-%s [-n SIZE] [-i ITERS] [-r REPS] [--json]\n%s"
                       "  -r REPS  timed repetitions (default %ld)\n"
                       "  --json   one JSON record instead of the table\n",
                       app->name, app->usage, app->def_reps);
            return 1;
        }
        if (strcmp(a, "--version") == 0) {
            char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
            int len;
            MPI_Get_library_version(lib, &len);
            lib[strcspn(lib, "\n")] = '\0';
            if (rank == 0)
                printf("vmpi-%s (vmpi applications) %s\n%s\n", app->name, VMPI_VERSION, lib);
            return 1;
        }
        if (strcmp(a, "--json") == 0) {
            o->json = 1;
            continue;
        }
        if (strcmp(a, "-n") == 0)
            dst = &o->size;
        else if (strcmp(a, "-i") == 0)
            dst = &o->iters;
        else if (strcmp(a, "-r") == 0)
            dst = &o->reps;
        if (dst == NULL || i + 1 >= argc || app_parse_pos(argv[i + 1], dst) != 0) {
            if (rank == 0)
                fprintf(stderr, "vmpi-%s: bad option '%s'%s (try -h)\n", app->name, a,
                        dst != NULL ? " (needs a positive integer)" : "");
            return 2;
        }
        i++;
    }
    return 0;
}

/*
 * MPI_Init and the options: -1 to go on; else the process's exit status
 * (0 after -h, 2 on a bad option), MPI already finalized.
 */
static inline int app_start(const struct app_info *app, int *argc, char ***argv,
                            struct app_opts *o)
{
    int rc;

    MPI_Init(argc, argv);
    rc = app_parse(app, *argc, *argv, o);
    if (rc == 0)
        return -1;
    MPI_Finalize();
    return rc == 1 ? 0 : 2;
}

/*
 * A problem the kernel cannot run (every rank calls it alike): rank 0 says
 * why, MPI is finalized, and the exit status is 2.
 */
static inline int app_reject(const struct app_info *app, const char *fmt, ...)
{
    int rank = 0;
    va_list ap;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        fprintf(stderr, "vmpi-%s: ", app->name);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
    }
    MPI_Finalize();
    return 2;
}

static inline int app_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Slowest rank's time since t0 (seconds), the same value on every rank. */
static inline double app_elapsed_max(double t0)
{
    double dt = MPI_Wtime() - t0, mx = 0.0;

    MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return mx;
}

/*
 * Rank 0 prints the result: `times` holds the reps repetition times (s),
 * `work` the amount of work in one repetition in `unit`s (the rate is
 * work / median time), `what` one line describing the problem. Only
 * called after verification passed, so it always reports verified.
 */
static inline void app_report(const struct app_info *app, const struct app_opts *o,
                              const char *what, const double *times, double work,
                              const char *unit)
{
    int rank = 0, nranks = 0;
    long n = o->reps;
    double *s, mean = 0.0, p50, p99, rate;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (rank != 0)
        return;
    s = app_alloc(app, (size_t)n, sizeof *s);
    for (long k = 0; k < n; k++) {
        s[k] = times[k] * 1e6;
        mean += s[k];
    }
    mean /= (double)n;
    qsort(s, (size_t)n, sizeof *s, app_cmp_double);
    p50 = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    p99 = s[(size_t)((99 * n + 99) / 100) - 1];
    rate = p50 > 0.0 ? work / (p50 * 1e-6) : 0.0;
    if (o->json) {
        printf("{\"bench\": \"%s\", \"size\": %ld, \"ranks\": %d, \"iters\": %ld, "
               "\"reps\": %ld, \"mean_us\": %.3f, \"p50_us\": %.3f, \"min_us\": %.3f, "
               "\"max_us\": %.3f, \"p99_us\": %.3f, \"rate\": %.6g, \"rate_unit\": \"%s\", "
               "\"verified\": true, \"samples_us\": [",
               app->name, o->size, nranks, o->iters, n, mean, p50, s[0], s[n - 1], p99,
               rate, unit);
        for (long k = 0; k < n; k++)
            printf("%s%.3f", k ? ", " : "", times[k] * 1e6);
        printf("]}\n");
    } else {
        printf("# vmpi %s: %s\n# %d ranks, %ld iterations x %ld repetitions\n", app->name,
               what, nranks, o->iters, n);
        printf("# %-10s%18s%18s%18s%20s%10s\n", "Size", "Time (us)", "Min (us)", "Max (us)",
               unit, "Verified");
        printf("%-12ld%18.2f%18.2f%18.2f%20.2f%10s\n", o->size, p50, s[0], s[n - 1], rate,
               "yes");
    }
    fflush(stdout);
    free(s);
}

#endif
