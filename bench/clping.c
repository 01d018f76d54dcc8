/*
 * clping.c - the physical limits of one host, measured without MPI.
 *
 * Default mode: cache-line ping-pong.  Two processes (fork) pinned to two
 * different cores share a MAP_SHARED|MAP_ANONYMOUS page holding two cache
 * lines, one per direction (the cost of moving one MPI ring cell):
 *     ping line: written by the parent, spun on by the child
 *     pong line: written by the child,  spun on by the parent
 * Each side stores an 8-byte sequence number with a release store and waits
 * with acquire loads.  One-way latency = round trip / 2.  The result is the
 * median over REPS repetitions of ITER round trips each.
 *
 * --memcpy mode: single-core memcpy bandwidth (MB/s = 1e6 bytes/s copied)
 * between two page-aligned, pre-touched buffers of SIZE bytes (default
 * 4 MiB), median over REPS repetitions of ITER copies each.  This is the
 * bandwidth limit a one-copy transfer of a large message can reach.
 *
 * Build:  cc -O2 -std=c11 -D_GNU_SOURCE clping.c -o clping
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include "bench_common.h"

#include <assert.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

static const char usage[] =
    "Usage: clping [options]\n"
    "  Cache-line ping-pong between two processes pinned to two cores, one\n"
    "  64-byte line per direction; prints one-way latency (round trip / 2).\n"
    "  -c CORE0,CORE1  cores for the two processes (default 0,1)\n"
    "  -i ITER         round trips per repetition (default 200000)\n"
    "  -r REPS         repetitions; the median is reported (default 11)\n"
    "  -x WARMUP       untimed round trips before the first repetition\n"
    "                  (default 10000)\n"
    "  --memcpy        instead: single-core memcpy bandwidth on CORE0\n"
    "  -s SIZE         memcpy buffer size in bytes (default 4194304)\n"
    "                  (with --memcpy, -i defaults to 100 copies per repetition)\n"
    "  --json          one JSON object instead of the table\n"
    "  -h, --help      this text\n";

#define CACHE_LINE 64

/*
 * Layout of the shared page.  Invariants: `ping` and `pong` each start a
 * cache line and are 128 bytes apart, so they are never in the same line nor
 * in the same adjacent-line-prefetch pair; `ready` lives on a third line and
 * is only used at start-up (child -> parent: 1 = pinned, -1 = failed).
 */
struct clping_shared {
    _Alignas(CACHE_LINE) _Atomic uint64_t ping;
    char pad0[2 * CACHE_LINE - sizeof(uint64_t)];
    _Alignas(CACHE_LINE) _Atomic uint64_t pong;
    char pad1[2 * CACHE_LINE - sizeof(uint64_t)];
    _Alignas(CACHE_LINE) _Atomic int ready;
};
static_assert(offsetof(struct clping_shared, ping) == 0, "ping line at 0");
static_assert(offsetof(struct clping_shared, pong) == 2 * CACHE_LINE,
              "pong line two lines after ping");
static_assert(offsetof(struct clping_shared, ready) == 4 * CACHE_LINE,
              "ready flag on its own line");
static_assert(sizeof(struct clping_shared) <= 4096, "fits in one page");

struct clping_opts {
    int core0, core1;
    long iters, reps, warmup, size;
    int memcpy_mode, json, help;
};

static double now_sec(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int pin_to(int core)
{
    cpu_set_t set;

    CPU_ZERO(&set);
    CPU_SET(core, &set);
    return sched_setaffinity(0, sizeof set, &set);
}

static int parse_cores(const char *s, int *c0, int *c1)
{
    const char *comma = strchr(s, ',');
    char buf[32];
    long a, b;

    if (comma == NULL || (size_t)(comma - s) >= sizeof buf)
        return -1;
    memcpy(buf, s, (size_t)(comma - s));
    buf[comma - s] = '\0';
    if (bench_parse_long(buf, &a) || bench_parse_long(comma + 1, &b) ||
        a >= CPU_SETSIZE || b >= CPU_SETSIZE)
        return -1;
    *c0 = (int)a;
    *c1 = (int)b;
    return 0;
}

static int parse_args(int argc, char **argv, struct clping_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v;
        long *target = NULL;

        if (strcmp(a, "--json") == 0) {
            o->json = 1;
            continue;
        }
        if (strcmp(a, "--memcpy") == 0) {
            o->memcpy_mode = 1;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            o->help = 1;
            continue;
        }
        if (a[0] != '-' || a[1] == '\0' || strchr("cirxs", a[1]) == NULL) {
            fprintf(stderr, "clping: unknown option '%s' (try -h)\n", a);
            return -1;
        }
        v = bench_optarg(argc, argv, &i);
        if (v == NULL) {
            fprintf(stderr, "clping: option %s needs an argument\n", a);
            return -1;
        }
        switch (a[1]) {
        case 'c':
            if (parse_cores(v, &o->core0, &o->core1) != 0) {
                fprintf(stderr, "clping: invalid -c (want CORE0,CORE1)\n");
                return -1;
            }
            continue;
        case 'i': target = &o->iters; break;
        case 'r': target = &o->reps; break;
        case 'x': target = &o->warmup; break;
        case 's': target = &o->size; break;
        default: break;
        }
        if (bench_parse_long(v, target) != 0 ||
            (target != &o->warmup && *target < 1)) {
            fprintf(stderr, "clping: invalid argument for %s\n", a);
            return -1;
        }
    }
    if (!o->memcpy_mode && o->core0 == o->core1) {
        fprintf(stderr, "clping: the two cores must differ\n");
        return -1;
    }
    return 0;
}

static double median_of(const double *x, size_t n)
{
    struct bench_stats st;

    bench_stats_compute(x, n, &st);
    return st.p50;
}

/* Child side: answer every ping with a pong carrying the same number. */
static void clping_child(struct clping_shared *sh, int core, uint64_t rounds)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (pin_to(core) != 0) {
        atomic_store_explicit(&sh->ready, -1, memory_order_release);
        _exit(1);
    }
    atomic_store_explicit(&sh->ready, 1, memory_order_release);
    for (uint64_t seq = 1; seq <= rounds; seq++) {
        while (atomic_load_explicit(&sh->ping, memory_order_acquire) != seq)
            ;
        atomic_store_explicit(&sh->pong, seq, memory_order_release);
    }
    _exit(0);
}

/* One round trip: publish `seq` on the ping line, wait for it on the pong line. */
static inline void round_trip(struct clping_shared *sh, uint64_t seq)
{
    atomic_store_explicit(&sh->ping, seq, memory_order_release);
    while (atomic_load_explicit(&sh->pong, memory_order_acquire) != seq)
        ;
}

static int run_clping(const struct clping_opts *o)
{
    struct clping_shared *sh;
    uint64_t rounds, seq = 0;
    double *oneway;
    int ready, status;
    pid_t pid;

    sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        perror("clping: mmap");
        return 1;
    }
    memset(sh, 0, 4096);
    oneway = malloc((size_t)o->reps * sizeof *oneway);
    if (oneway == NULL)
        return 1;
    if (pin_to(o->core0) != 0) {
        fprintf(stderr, "clping: cannot pin to core %d\n", o->core0);
        return 1;
    }
    rounds = (uint64_t)o->warmup + (uint64_t)o->reps * (uint64_t)o->iters;

    fflush(stdout);
    pid = fork();
    if (pid < 0) {
        perror("clping: fork");
        return 1;
    }
    if (pid == 0)
        clping_child(sh, o->core1, rounds);

    while ((ready = atomic_load_explicit(&sh->ready, memory_order_acquire)) == 0)
        ;
    if (ready < 0) {
        fprintf(stderr, "clping: cannot pin to core %d\n", o->core1);
        waitpid(pid, &status, 0);
        return 1;
    }

    for (long k = 0; k < o->warmup; k++)
        round_trip(sh, ++seq);
    for (long r = 0; r < o->reps; r++) {
        double t0 = now_sec(), t1;

        for (long k = 0; k < o->iters; k++)
            round_trip(sh, ++seq);
        t1 = now_sec();
        oneway[r] = (t1 - t0) * 1e6 / (2.0 * (double)o->iters);
    }
    waitpid(pid, &status, 0);

    if (!o->json) {
        printf("# vmpi clping test (cores %d,%d; median of %ld x %ld round trips)\n",
               o->core0, o->core1, o->reps, o->iters);
        printf("%-10s%18s\n", "# Size", "Latency (us)");
        printf("%-10d%18.3f\n", 8, median_of(oneway, (size_t)o->reps));
    } else {
        struct bench_stats st;

        bench_stats_compute(oneway, (size_t)o->reps, &st);
        printf("{\"bench\":\"clping\",\"size\":8,\"iterations\":%ld,\"reps\":%ld,"
               "\"warmup\":%ld,\"cores\":[%d,%d],",
               o->iters, o->reps, o->warmup, o->core0, o->core1);
        bench_json_stats(stdout, &st, "us", 4);
        fputc(',', stdout);
        bench_json_samples(stdout, oneway, (size_t)o->reps, BENCH_SAMPLE_CAP, "us", 4);
        fputs("}\n", stdout);
    }
    free(oneway);
    munmap(sh, 4096);
    return 0;
}

/* Called through a volatile pointer so the copies cannot be optimised away. */
static void *(*volatile memcpy_fn)(void *, const void *, size_t) = memcpy;

static int run_memcpy(const struct clping_opts *o)
{
    size_t size = (size_t)o->size;
    char *src, *dst;
    double *mbps;
    volatile char sink;

    if (pin_to(o->core0) != 0) {
        fprintf(stderr, "clping: cannot pin to core %d\n", o->core0);
        return 1;
    }
    src = bench_alloc_touched(size, 'a');
    dst = bench_alloc_touched(size, 'b');
    mbps = malloc((size_t)o->reps * sizeof *mbps);
    if (src == NULL || dst == NULL || mbps == NULL) {
        fprintf(stderr, "clping: out of memory\n");
        return 1;
    }
    for (long k = 0; k < o->warmup; k++)
        memcpy_fn(dst, src, size);
    for (long r = 0; r < o->reps; r++) {
        double t0 = now_sec(), t1;

        for (long k = 0; k < o->iters; k++)
            memcpy_fn(dst, src, size);
        t1 = now_sec();
        sink = dst[(size_t)r % size];
        mbps[r] = (double)size * (double)o->iters / (t1 - t0) / 1e6;
    }
    (void)sink;

    if (!o->json) {
        printf("# vmpi memcpy bandwidth test (core %d; median of %ld x %ld copies)\n",
               o->core0, o->reps, o->iters);
        printf("%-10s%18s\n", "# Size", "Bandwidth (MB/s)");
        printf("%-10zu%18.2f\n", size, median_of(mbps, (size_t)o->reps));
    } else {
        struct bench_stats st;

        bench_stats_compute(mbps, (size_t)o->reps, &st);
        printf("{\"bench\":\"memcpy\",\"size\":%zu,\"iterations\":%ld,\"reps\":%ld,"
               "\"warmup\":%ld,\"core\":%d,\"mbps\":%.2f,",
               size, o->iters, o->reps, o->warmup, o->core0, st.p50);
        bench_json_stats(stdout, &st, "mbps", 2);
        fputc(',', stdout);
        bench_json_samples(stdout, mbps, (size_t)o->reps, BENCH_SAMPLE_CAP, "mbps", 2);
        fputs("}\n", stdout);
    }
    free(mbps);
    free(src);
    free(dst);
    return 0;
}

int main(int argc, char **argv)
{
    struct clping_opts o = { .core0 = 0, .core1 = 1, .iters = -1, .reps = 11,
                             .warmup = -1, .size = BENCH_MAX_MESSAGE };

    bench_version(argc, argv, NULL);
    if (parse_args(argc, argv, &o) != 0)
        return 2;
    if (o.help) {
        fputs(usage, stdout);
        return 0;
    }
    if (o.memcpy_mode) {
        if (o.iters < 0)
            o.iters = 100;
        if (o.warmup < 0)
            o.warmup = 10;
        return run_memcpy(&o);
    }
    if (o.iters < 0)
        o.iters = 200000;
    if (o.warmup < 0)
        o.warmup = 10000;
    return run_clping(&o);
}
