/*
 * bench_mpi.h - start-up shared by the MPI benchmarks.
 *
 * Uses only standard MPI-3.1 calls so that the programs build with any
 * MPI's compiler wrapper (vmpi, MPICH, Open MPI).
 */
#ifndef VMPI_BENCH_MPI_H
#define VMPI_BENCH_MPI_H

#include "bench_common.h"

#include <mpi.h>

/* Per-size iteration counts: -i/-x override; otherwise small/large defaults. */
struct bench_counts {
    long iters_small, iters_large;
    long warmup_small, warmup_large;
};

static inline void bench_counts_for(const struct bench_opts *o,
                                    const struct bench_counts *d, long size,
                                    long *iters, long *warmup)
{
    int large = size > BENCH_LARGE_MESSAGE;

    *iters = o->iters >= 0 ? o->iters : (large ? d->iters_large : d->iters_small);
    *warmup = o->warmup >= 0 ? o->warmup : (large ? d->warmup_large : d->warmup_small);
}

/* bench_version with the MPI library's own first line (MPI_Get_library_version
 * may be called before MPI_Init). */
static inline void bench_mpi_version(int argc, char **argv)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--version") == 0 && MPI_Get_library_version(lib, &len) == 0)
            lib[strcspn(lib, "\n")] = '\0';
    bench_version(argc, argv, lib);
}

/*
 * MPI_Init, option parsing and help. Returns -1 if the benchmark should
 * run; otherwise the process exit code (MPI_Finalize has then already been
 * called). *nranks receives the size of MPI_COMM_WORLD.
 */
static inline int bench_mpi_init(int *argc, char ***argv, const char *usage,
                                 struct bench_opts *o, int accept_window, int *rank,
                                 int *nranks)
{
    char err[160];

    bench_mpi_version(*argc, *argv);
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, nranks);

    /* Every rank parses the same argv, so every rank reaches the same verdict. */
    if (bench_parse_opts(*argc, *argv, o, accept_window, err, sizeof err) != 0) {
        if (*rank == 0)
            fprintf(stderr, "%s: %s\n", (*argv)[0], err);
        MPI_Finalize();
        return 2;
    }
    if (o->help) {
        if (*rank == 0)
            fputs(usage, stdout);
        MPI_Finalize();
        return 0;
    }
    return -1;
}

/* bench_mpi_init, and the two-process check of the two-rank benchmarks. */
static inline int bench_mpi_start(int *argc, char ***argv, const char *usage,
                                  struct bench_opts *o, int accept_window,
                                  int *rank)
{
    int size, rc = bench_mpi_init(argc, argv, usage, o, accept_window, rank, &size);

    if (rc >= 0)
        return rc;
    if (size != 2) {
        if (*rank == 0)
            fprintf(stderr, "%s: this test requires exactly two processes\n",
                    (*argv)[0]);
        MPI_Finalize();
        return 1;
    }
    return -1;
}

/* bench_mpi_init, and the check of the multi-pair benchmarks: an even
 * number of ranks, rank i < N/2 paired with rank i + N/2; *pairs gets N/2. */
static inline int bench_mpi_start_pairs(int *argc, char ***argv, const char *usage,
                                        struct bench_opts *o, int accept_window, int *rank,
                                        int *pairs)
{
    int size, rc = bench_mpi_init(argc, argv, usage, o, accept_window, rank, &size);

    if (rc >= 0)
        return rc;
    if (size < 2 || size % 2) {
        if (*rank == 0)
            fprintf(stderr, "%s: this test needs an even number of processes (%d given)\n",
                    (*argv)[0], size);
        MPI_Finalize();
        return 1;
    }
    *pairs = size / 2;
    return -1;
}

/* The sample arrays of one size's JSON record: n + 1 timestamps and n
 * values, replacing the previous size's; aborts the job when out of memory. */
static inline void bench_mpi_samples(double **ts, double **val, long n, const char *who)
{
    free(*ts);
    free(*val);
    *ts = malloc((size_t)(n + 1) * sizeof **ts);
    *val = malloc((size_t)n * sizeof **val);
    if (*ts == NULL || *val == NULL) {
        fprintf(stderr, "%s: cannot allocate samples\n", who);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* One size's array of n samples (at least one), replacing the previous
 * size's; aborts the job when out of memory. */
static inline void bench_mpi_values(double **val, long n, const char *who)
{
    free(*val);
    *val = malloc((size_t)(n > 0 ? n : 1) * sizeof **val);
    if (*val == NULL) {
        fprintf(stderr, "%s: cannot allocate samples\n", who);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* A message buffer (from MPI_Alloc_mem with --alloc-mem: an MPI may place
 * it where a peer can copy from it directly); aborts the whole job on an
 * allocation failure. */
static inline void *bench_mpi_alloc(const struct bench_opts *o, size_t len, int fill)
{
    void *p = NULL;
    if (!o->alloc_mem)
        p = bench_alloc_touched(len, fill);
    else if (MPI_Alloc_mem((MPI_Aint)(len ? len : 1), MPI_INFO_NULL, &p) == MPI_SUCCESS)
        memset(p, fill, len);
    else
        p = NULL;

    if (p == NULL) {
        fprintf(stderr, "bench: cannot allocate %zu bytes\n", len);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

/* Releases a buffer from bench_mpi_alloc. */
static inline void bench_mpi_free(const struct bench_opts *o, void *p)
{
    if (o->alloc_mem)
        MPI_Free_mem(p);
    else
        free(p);
}

#endif /* VMPI_BENCH_MPI_H */
