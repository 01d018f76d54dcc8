/*
 * io.c - MPI-IO collective write and read bandwidth (issue 29).
 *
 * Two access patterns, each rank holding SIZE bytes of doubles:
 *   block    a checkpoint: a global 2D array (row-major) split in blocks
 *            over a process grid (MPI_Dims_create); each rank's view is its
 *            block (MPI_Type_create_subarray), so it writes lr rows of
 *            lc * 8 contiguous bytes each, interleaved with its row
 *            neighbours' rows.
 *   strided  small blocks interleaved between ranks: the view is
 *            MPI_Type_vector(SIZE / BLOCK, BLOCK / 8, P * BLOCK / 8,
 *            MPI_DOUBLE) at displacement rank * BLOCK, so block j of rank
 *            r lands at file byte (j * P + r) * BLOCK.
 * The memory side is one contiguous array of doubles (MPI_DOUBLE, count
 * SIZE / 8); no hints are given (each library's defaults, what a user
 * gets) unless --hint asks.
 *
 * What is timed is what a checkpoint costs its writer until the data is on
 * the storage: after a barrier, each rank times
 *     write: MPI_File_open(CREATE|WRONLY) .. set_view .. write_all
 *            .. MPI_File_sync .. MPI_File_close   (--no-sync: without sync)
 *     read:  MPI_File_open(RDONLY) .. set_view .. read_all .. close
 * and the bandwidth is all ranks' bytes (P * SIZE) over the slowest rank's
 * time, in MB/s (1e6 bytes/s). The file is deleted before each write (a new
 * file, as a checkpoint makes). Before each read, rank 0 drops the file's
 * pages from the page cache (posix_fadvise DONTNEED, after fdatasync), so
 * a read on a disk comes from the disk as after a restart (--warm-read:
 * not); on tmpfs the pages are the file and stay.
 *
 * Checks (untimed, every iteration): element k of the file (in file order)
 * holds k + (iteration + 1) * 2^40. After each write rank 0 preads up to
 * 1024 elements spread over the file with POSIX calls and compares them;
 * after each read every rank compares all its elements (the buffer is
 * filled with a NaN pattern before). Any mismatch stops the run with
 * "io: VERIFY FAILED" and exit status 1.
 *
 * Output: one row per pattern and size, the median over the iterations;
 * --json: one JSON object per pattern and size instead.
 *
 * Build:  mpicc -O2 -std=c11 -D_GNU_SOURCE io.c -o io
 * Run:    mpiexec -n 4 ./io [-p block|strided|all] [-m [MIN:]MAX | --sizes LIST]
 *                  [-d DIR] [-i ITER] [-x WARMUP] [-b BLOCK] [--json]
 */
#include "bench_mpi.h"

#include <fcntl.h>

static const char usage[] =
    "Usage: io [options]   (under mpiexec; any number of ranks)\n"
    "  Collective MPI-IO bandwidth: write_all then read_all of SIZE bytes of\n"
    "  doubles per rank, the file in DIR.\n"
    "  -p PATTERN     block (2D block-distributed array, subarray view: a\n"
    "                 checkpoint), strided (vector view, BLOCK-byte blocks\n"
    "                 interleaved between ranks), all (default)\n"
    "  -m [MIN:]MAX   per-rank sizes from MIN to MAX bytes, doubling; K, M, G\n"
    "                 suffixes (binary) allowed (default 1M:256M)\n"
    "  --sizes LIST   per-rank sizes, comma-separated (e.g. 1M,16M,256M)\n"
    "  -d DIR         directory of the file (default /tmp)\n"
    "  -i ITER        measured iterations per pattern and size (default 5 for\n"
    "                 sizes up to 16M, 1 above; the row shows their median)\n"
    "  -x WARMUP      untimed iterations before them (default 1 for sizes up\n"
    "                 to 16M, 0 above)\n"
    "  -b BLOCK       strided: block size in bytes, a multiple of 8 (default 1K)\n"
    "  --hint K=V     an MPI_Info hint for MPI_File_open (repeatable)\n"
    "  --no-sync      no MPI_File_sync before the close of a write\n"
    "  --warm-read    keep the file's pages cached before a read\n"
    "  --json         one JSON object per pattern and size: bench, pattern,\n"
    "                 size, ranks, iterations, warmup, block, sync, cold_read,\n"
    "                 write_mbps, read_mbps (medians), min/max/mean/p50/p99_\n"
    "                 and samples_ of write_mbps and read_mbps\n"
    "  -h, --help     this text;  --version  the program's and MPI's version\n"
    "  Timed: open .. set_view .. write_all .. sync .. close (read: open ..\n"
    "  read_all .. close) on every rank after a barrier; MB/s = P * SIZE /\n"
    "  slowest rank's time / 1e6. Every read is verified (exit 1 if wrong).\n";

#define MAX_SIZES 64
#define MAX_HINTS 16
#define SEED 1099511627776.0 /* 2^40: k + (it + 1) * SEED is exact for k < 2^40 */

enum pattern { PAT_BLOCK, PAT_STRIDED };
static const char *const pat_name[] = {"block", "strided"};

struct opts {
    int pats;                 /* bit mask of patterns */
    long sizes[MAX_SIZES];
    int nsizes;
    const char *dir;
    long iters, warmup, block;
    const char *hints[MAX_HINTS];
    int nhints;
    int sync, cold, json;
};

static int rank, nranks;

static void die(const char *fmt, const char *what, int code)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (code != MPI_SUCCESS)
        MPI_Error_string(code, msg, &len);
    fprintf(stderr, "io: rank %d: ", rank);
    fprintf(stderr, fmt, what);
    fprintf(stderr, "%s%s\n", len ? ": " : "", msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

#define CHK(call, what)                                                                        \
    do {                                                                                       \
        int rc_ = (call);                                                                      \
        if (rc_ != MPI_SUCCESS)                                                                \
            die("%s failed", what, rc_);                                                       \
    } while (0)

/* "64", "1K", "16M", "1G": bytes, > 0. */
static int parse_size(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10), mul = 1;
    if (errno || end == s || v <= 0)
        return -1;
    switch (*end) {
    case 'K': case 'k': mul = 1L << 10; end++; break;
    case 'M': case 'm': mul = 1L << 20; end++; break;
    case 'G': case 'g': mul = 1L << 30; end++; break;
    default: break;
    }
    if (*end || v > LONG_MAX / mul)
        return -1;
    *out = v * mul;
    return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o, char *err, size_t errlen)
{
    long min = 1L << 20, max = 256L << 20;
    int range = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int need = strcmp(a, "-p") == 0 || strcmp(a, "-m") == 0 || strcmp(a, "--sizes") == 0 ||
                   strcmp(a, "-d") == 0 || strcmp(a, "-i") == 0 || strcmp(a, "-x") == 0 ||
                   strcmp(a, "-b") == 0 || strcmp(a, "--hint") == 0;
        if (need) {
            if (i + 1 >= argc) {
                snprintf(err, errlen, "%s needs an argument", a);
                return -1;
            }
            v = argv[++i];
        }
        if (strcmp(a, "-p") == 0) {
            o->pats = !strcmp(v, "block") ? 1 << PAT_BLOCK : !strcmp(v, "strided") ? 1 << PAT_STRIDED
                      : !strcmp(v, "all") ? 3 : 0;
            if (!o->pats) {
                snprintf(err, errlen, "-p: unknown pattern '%s' (block, strided, all)", v);
                return -1;
            }
        } else if (strcmp(a, "-m") == 0) {
            char buf[64];
            const char *colon = strchr(v, ':');
            range = 1;
            if (colon && (size_t)(colon - v) < sizeof buf) {
                memcpy(buf, v, (size_t)(colon - v));
                buf[colon - v] = '\0';
            }
            if ((colon && (colon - v >= (long)sizeof buf || parse_size(buf, &min))) ||
                parse_size(colon ? colon + 1 : v, &max) || min > max) {
                snprintf(err, errlen, "invalid -m argument (want [MIN:]MAX, MIN <= MAX)");
                return -1;
            }
        } else if (strcmp(a, "--sizes") == 0) {
            char buf[512], *save = NULL;
            range = 0;
            o->nsizes = 0;
            snprintf(buf, sizeof buf, "%s", v);
            for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
                if (o->nsizes == MAX_SIZES || parse_size(t, &o->sizes[o->nsizes++])) {
                    snprintf(err, errlen, "invalid --sizes list '%s'", v);
                    return -1;
                }
        } else if (strcmp(a, "-d") == 0) {
            o->dir = v;
        } else if (strcmp(a, "-i") == 0 || strcmp(a, "-x") == 0) {
            long *p = a[1] == 'i' ? &o->iters : &o->warmup;
            if (bench_parse_long(v, p) || (a[1] == 'i' && *p < 1)) {
                snprintf(err, errlen, "invalid %s argument", a);
                return -1;
            }
        } else if (strcmp(a, "-b") == 0) {
            if (parse_size(v, &o->block) || o->block % 8) {
                snprintf(err, errlen, "invalid -b argument (want a multiple of 8 bytes)");
                return -1;
            }
        } else if (strcmp(a, "--hint") == 0) {
            if (o->nhints == MAX_HINTS || !strchr(v, '=')) {
                snprintf(err, errlen, "invalid --hint '%s' (want KEY=VALUE, at most %d)", v,
                         MAX_HINTS);
                return -1;
            }
            o->hints[o->nhints++] = v;
        } else if (strcmp(a, "--no-sync") == 0) {
            o->sync = 0;
        } else if (strcmp(a, "--warm-read") == 0) {
            o->cold = 0;
        } else if (strcmp(a, "--json") == 0) {
            o->json = 1;
        } else {
            snprintf(err, errlen, "unknown option '%s' (try -h)", a);
            return -1;
        }
    }
    if (range) {
        o->nsizes = 0;
        for (long s = min; s <= max && o->nsizes < MAX_SIZES; s *= 2)
            o->sizes[o->nsizes++] = s;
    }
    for (int k = 0; k < o->nsizes; k++)
        if (o->sizes[k] % 8 || ((o->pats >> PAT_STRIDED & 1) && o->sizes[k] % o->block)) {
            snprintf(err, errlen, "size %ld is not a multiple of 8 bytes and of the block (%ld)",
                     o->sizes[k], o->block);
            return -1;
        }
    return 0;
}

/* One pattern at one size: this rank's view and where its elements are. */
struct layout {
    MPI_Datatype ftype;
    MPI_Offset disp;
    long n;             /* doubles of this rank */
    /* block: local block lr x lc at (r0, c0) of a gr x gc array;
     * strided: B doubles per block, P ranks */
    long lr, lc, r0, c0, gc, b;
    enum pattern pat;
};

/* File element (in doubles) of this rank's element i. */
static long elem_of(const struct layout *l, long i)
{
    if (l->pat == PAT_BLOCK)
        return (l->r0 + i / l->lc) * l->gc + l->c0 + i % l->lc;
    return (i / l->b * nranks + rank) * l->b + i % l->b;
}

static void layout_make(struct layout *l, enum pattern pat, long size, long block)
{
    memset(l, 0, sizeof *l);
    l->pat = pat;
    l->n = size / 8;
    if (pat == PAT_BLOCK) {
        int dims[2] = {0, 0};
        MPI_Dims_create(nranks, 2, dims);
        /* A near-square local block: lc the least power of two >= sqrt(n)
         * that divides n (n itself at worst). */
        long lc = 1;
        while (lc * lc < l->n)
            lc *= 2;
        while (l->n % lc)
            lc /= 2;
        l->lc = lc, l->lr = l->n / lc;
        l->r0 = rank / dims[1] * l->lr, l->c0 = rank % dims[1] * l->lc;
        l->gc = dims[1] * l->lc;
        if (dims[0] * l->lr > INT_MAX || l->gc > INT_MAX)
            die("%s: array too large for int subarray sizes", "layout", MPI_SUCCESS);
        int gs[2] = {(int)(dims[0] * l->lr), (int)l->gc}, ss[2] = {(int)l->lr, (int)l->lc},
            st[2] = {(int)l->r0, (int)l->c0};
        CHK(MPI_Type_create_subarray(2, gs, ss, st, MPI_ORDER_C, MPI_DOUBLE, &l->ftype),
            "MPI_Type_create_subarray");
    } else {
        l->b = block / 8;
        if (l->n / l->b > INT_MAX || l->b * nranks > INT_MAX)
            die("%s: too many blocks for an int count", "layout", MPI_SUCCESS);
        CHK(MPI_Type_vector((int)(l->n / l->b), (int)l->b, (int)(l->b * nranks), MPI_DOUBLE,
                            &l->ftype),
            "MPI_Type_vector");
        l->disp = (MPI_Offset)rank * block;
    }
    CHK(MPI_Type_commit(&l->ftype), "MPI_Type_commit");
}

static double value(long k, long it)
{
    return (double)k + (double)(it + 1) * SEED;
}

/* Rank 0, POSIX: up to 1024 elements spread over the file (and its last),
 * compared with what iteration `it` wrote; then, for a cold read, the
 * file's pages out of the page cache. Returns the mismatches. */
static long check_file(const char *path, long total, long it, int cold)
{
    long bad = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "io: cannot open %s to check it: %s\n", path, strerror(errno));
        return 1;
    }
    long step = total > 1024 ? total / 1024 : 1;
    for (long j = 0; j <= 1024; j++) {
        long k = j < 1024 ? j * step : total - 1;
        double d = 0;
        if (k >= total)
            break;
        if (pread(fd, &d, sizeof d, (off_t)k * 8) != (ssize_t)sizeof d || d != value(k, it)) {
            if (bad++ == 0)
                fprintf(stderr, "io: file element %ld is %.17g, want %.17g\n", k, d,
                        value(k, it));
        }
    }
    if (cold && (fdatasync(fd) != 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0))
        fprintf(stderr, "io: warning: cannot drop %s from the page cache\n", path);
    close(fd);
    return bad;
}

/* One timed open..close; returns the slowest rank's seconds on every rank. */
static double timed_access(const struct opts *o, const struct layout *l, MPI_Info info,
                           const char *path, double *buf, int write)
{
    MPI_File fh;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    CHK(MPI_File_open(MPI_COMM_WORLD, path, write ? MPI_MODE_CREATE | MPI_MODE_WRONLY
                                                  : MPI_MODE_RDONLY, info, &fh),
        "MPI_File_open");
    CHK(MPI_File_set_view(fh, l->disp, MPI_DOUBLE, l->ftype, "native", info),
        "MPI_File_set_view");
    if (write) {
        CHK(MPI_File_write_all(fh, buf, (int)l->n, MPI_DOUBLE, MPI_STATUS_IGNORE),
            "MPI_File_write_all");
        if (o->sync)
            CHK(MPI_File_sync(fh), "MPI_File_sync");
    } else {
        MPI_Status st;
        int got = 0;
        CHK(MPI_File_read_all(fh, buf, (int)l->n, MPI_DOUBLE, &st), "MPI_File_read_all");
        MPI_Get_count(&st, MPI_DOUBLE, &got);
        if (got != l->n)
            die("%s: short read", "MPI_File_read_all", MPI_SUCCESS);
    }
    CHK(MPI_File_close(&fh), "MPI_File_close");
    double dt = MPI_Wtime() - t0, slowest = 0;
    MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

static void print_json(const struct opts *o, enum pattern pat, long size, long iters,
                       long warm, const double *w, const double *r)
{
    struct bench_stats sw, sr;
    if (bench_stats_compute(w, (size_t)iters, &sw) || bench_stats_compute(r, (size_t)iters, &sr))
        die("%s: out of memory", "statistics", MPI_SUCCESS);
    printf("{\"bench\":\"io\",\"pattern\":\"%s\",\"size\":%ld,\"ranks\":%d,\"iterations\":%ld,"
           "\"warmup\":%ld,\"block\":%ld,\"sync\":%d,\"cold_read\":%d,\"write_mbps\":%.1f,"
           "\"read_mbps\":%.1f,",
           pat_name[pat], size, nranks, iters, warm, o->block, o->sync, o->cold, sw.p50,
           sr.p50);
    bench_json_dist(stdout, w, (size_t)iters, "write_mbps", 1);
    putchar(',');
    bench_json_dist(stdout, r, (size_t)iters, "read_mbps", 1);
    puts("}");
}

/* All iterations of one pattern at one size; prints its row. */
static void run_one(const struct opts *o, enum pattern pat, long size, MPI_Info info,
                    const char *path, double *buf, double *w, double *r)
{
    struct layout l;
    layout_make(&l, pat, size, o->block);
    int small = size <= 16L << 20;
    long total = l.n * nranks, warm = o->warmup >= 0 ? o->warmup : small;
    long iters = o->iters > 0 ? o->iters : small ? 5 : 1;
    for (long it = -warm; it < iters; it++) {
        long seed = it + warm, bad = 0, badall = 0;
        for (long i = 0; i < l.n; i++)
            buf[i] = value(elem_of(&l, i), seed);
        if (rank == 0)
            MPI_File_delete(path, MPI_INFO_NULL); /* absent is fine */
        double tw = timed_access(o, &l, info, path, buf, 1);
        if (rank == 0)
            bad = check_file(path, total, seed, o->cold);
        memset(buf, 0xff, (size_t)l.n * 8); /* NaNs: compare unequal to anything */
        double tr = timed_access(o, &l, info, path, buf, 0);
        for (long i = 0; i < l.n; i++)
            if (buf[i] != value(elem_of(&l, i), seed) && bad++ == 0)
                fprintf(stderr, "io: rank %d: element %ld (file element %ld) read %.17g, "
                        "want %.17g\n", rank, i, elem_of(&l, i), buf[i],
                        value(elem_of(&l, i), seed));
        MPI_Allreduce(&bad, &badall, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (badall) {
            if (rank == 0) {
                fprintf(stderr, "io: VERIFY FAILED: %s, %ld bytes per rank: %ld wrong "
                        "elements\n", pat_name[pat], size, badall);
                MPI_File_delete(path, MPI_INFO_NULL);
            }
            MPI_Finalize();
            exit(1);
        }
        if (it >= 0) {
            w[it] = (double)size * nranks / tw / 1e6;
            r[it] = (double)size * nranks / tr / 1e6;
        }
    }
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    MPI_Type_free(&l.ftype);
    if (rank != 0)
        return;
    if (o->json) {
        print_json(o, pat, size, iters, warm, w, r);
    } else {
        struct bench_stats sw, sr;
        bench_stats_compute(w, (size_t)iters, &sw);
        bench_stats_compute(r, (size_t)iters, &sr);
        printf("%-10s %12ld %14.1f %14.1f\n", pat_name[pat], size, sw.p50, sr.p50);
    }
    fflush(stdout);
}

int main(int argc, char **argv)
{
    struct opts o = {.pats = 3, .dir = "/tmp", .iters = -1, .warmup = -1, .block = 1024,
                     .sync = 1, .cold = 1};
    char err[200], path[4096];
    bench_mpi_version(argc, argv);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int help = 0;
    for (int i = 1; i < argc; i++)
        help |= !strcmp(argv[i], "-h") || !strcmp(argv[i], "--help");
    if (help || parse_opts(argc, argv, &o, err, sizeof err)) {
        if (rank == 0)
            help ? (void)fputs(usage, stdout) : (void)fprintf(stderr, "io: %s\n", err);
        MPI_Finalize();
        return help ? 0 : 2;
    }
    /* One file name for all ranks: rank 0's pid. */
    long pid = (long)getpid();
    MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof path, "%s/vmpi-io-bench.%ld", o.dir, pid);

    MPI_Info info = MPI_INFO_NULL;
    if (o.nhints) {
        MPI_Info_create(&info);
        for (int k = 0; k < o.nhints; k++) {
            char kv[256];
            snprintf(kv, sizeof kv, "%s", o.hints[k]);
            char *eq = strchr(kv, '=');
            *eq = '\0';
            MPI_Info_set(info, kv, eq + 1);
        }
    }
    long most = 0;
    for (int k = 0; k < o.nsizes; k++)
        most = o.sizes[k] > most ? o.sizes[k] : most;
    double *buf = bench_alloc_touched((size_t)most, 0);
    size_t most_iters = o.iters > 5 ? (size_t)o.iters : 5;
    double *w = malloc(sizeof *w * most_iters), *r = malloc(sizeof *r * most_iters);
    if (!buf || !w || !r)
        die("%s: out of memory", "buffers", MPI_SUCCESS);
    if (rank == 0 && !o.json) {
        printf("# io: %d ranks, file %s, %s timed, %s read\n", nranks, path,
               o.sync ? "open..write_all..sync..close" : "open..write_all..close (no sync)",
               o.cold ? "cold" : "warm");
        printf("# strided: %ld-byte blocks; MB/s = all ranks' bytes / slowest rank's time, "
               "median of the iterations\n",
               o.block);
        printf("%-10s %12s %14s %14s\n", "# Pattern", "Size/rank", "Write MB/s", "Read MB/s");
    }
    for (int p = PAT_BLOCK; p <= PAT_STRIDED; p++)
        if (o.pats >> p & 1)
            for (int k = 0; k < o.nsizes; k++)
                run_one(&o, (enum pattern)p, o.sizes[k], info, path, buf, w, r);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    free(buf);
    free(w);
    free(r);
    MPI_Finalize();
    return 0;
}
