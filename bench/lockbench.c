/* lockbench: T threads (or processes) share one lock from vmpi/lock.h.
 * Each loop: acquire (timed), touch C cache lines of shared data, release,
 * then D units of local work. Reports throughput, fairness (Jain's index over
 * per-worker counts, share of the top half), acquire latency percentiles and
 * context switches. --sweep runs T = 1, 2, 4, ... for every lock into one
 * JSON file.
 *
 *   lockbench [--lock NAME|all] [--threads T] [--procs] [--cs C] [--delay D]
 *             [--duration S] [--park futex|yield|both] [--spin-max N] [--cutoff N]
 *             [--far-spin N] [--wake-n N] [--time-cap-ns N]
 *             [--steal-ns N|off] [--steal-spin N] [--json]
 *             [--sweep FILE] [--max-threads T]
 *
 * One unit of --delay is one iteration of a volatile increment loop (about a
 * nanosecond). Latency is wall time spent in the acquire call (CLOCK_MONOTONIC,
 * so it includes time preempted while waiting). */
#include "vmpi/lock.h"

#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { MAXW = VMPI_MCS_MAX_SLOTS, MAXCS = 1024, SUB = 16, NBUCK = 64 * SUB };

struct wstat {
    uint64_t count;
    uint64_t vcsw, ivcsw;
    uint64_t hist[NBUCK];
} __attribute__((aligned(64)));

struct shm {
    _Atomic int go;
    _Atomic int stop;
    _Atomic int ready;
    char pad0[64 - 12];
    uint64_t data[MAXCS * 8]; /* C cache lines touched in the section */
    struct wstat w[MAXW];
    /* the lock follows, 64-byte aligned */
};

struct cfg {
    int kind;
    int threads;
    int procs;
    int cs;
    long delay;
    double duration;
    vmpi_lock_params p;
    int json;
};

static struct shm *S;
static vmpi_lock *L;
static const struct cfg *C;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Log-linear histogram: SUB sub-buckets per power of two. */
static unsigned bucket_of(uint64_t v)
{
    if (v < SUB)
        return (unsigned)v;
    unsigned e = 63 - (unsigned)__builtin_clzll(v);     /* >= 4 */
    unsigned sub = (unsigned)(v >> (e - 4)) & (SUB - 1);
    unsigned b = (e - 3) * SUB + sub;
    return b < NBUCK ? b : NBUCK - 1;
}

static double bucket_value(unsigned b)
{
    if (b < SUB)
        return b;
    unsigned e = b / SUB + 3, sub = b % SUB;
    /* midpoint of [ (16+sub) << (e-4), (17+sub) << (e-4) ) */
    return ((double)(SUB + sub) + 0.5) * (double)(1ull << (e - 4));
}

static void worker(unsigned id)
{
    struct wstat *st = &S->w[id];
    struct rusage r0, r1;
    atomic_fetch_add(&S->ready, 1);
    while (!atomic_load_explicit(&S->go, memory_order_acquire))
        sched_yield();
    getrusage(RUSAGE_THREAD, &r0);
    uint64_t n = 0;
    while (!atomic_load_explicit(&S->stop, memory_order_relaxed)) {
        uint64_t t0 = now_ns();
        vmpi_lock_acquire(L, id);
        uint64_t t1 = now_ns();
        for (int c = 0; c < C->cs; c++)
            S->data[c * 8]++;
        vmpi_lock_release(L, id);
        st->hist[bucket_of(t1 - t0)]++;
        n++;
        for (volatile long i = 0; i < C->delay; i++)
            ;
    }
    getrusage(RUSAGE_THREAD, &r1);
    st->count = n;
    st->vcsw = (uint64_t)(r1.ru_nvcsw - r0.ru_nvcsw);
    st->ivcsw = (uint64_t)(r1.ru_nivcsw - r0.ru_nivcsw);
}

static void *thread_main(void *p)
{
    worker((unsigned)(uintptr_t)p);
    return NULL;
}

struct result {
    int kind, threads;
    double tput, jain, tophalf, p50, p99, p999;
    uint64_t total, vcsw, ivcsw;
    double secs;
};

static int cmp_desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

static double pct(const uint64_t *h, uint64_t total, double q)
{
    if (!total)
        return 0;
    uint64_t want = (uint64_t)ceil(q * (double)total), acc = 0;
    if (want == 0)
        want = 1;
    for (unsigned b = 0; b < NBUCK; b++) {
        acc += h[b];
        if (acc >= want)
            return bucket_value(b);
    }
    return bucket_value(NBUCK - 1);
}

static int run(const struct cfg *cfg, struct result *res)
{
    C = cfg;
    int T = cfg->threads;
    memset(S, 0, sizeof *S);
    if (vmpi_lock_init(L, (vmpi_lock_kind)cfg->kind, &cfg->p)) {
        fprintf(stderr, "lockbench: lock init failed\n");
        return -1;
    }
    pthread_t th[MAXW];
    pid_t pid[MAXW];
    for (int i = 0; i < T; i++) {
        if (cfg->procs) {
            pid[i] = fork();
            if (pid[i] < 0) {
                perror("fork");
                return -1;
            }
            if (pid[i] == 0) {
                worker((unsigned)i);
                _exit(0);
            }
        } else if (pthread_create(&th[i], NULL, thread_main, (void *)(uintptr_t)i)) {
            perror("pthread_create");
            return -1;
        }
    }
    while (atomic_load(&S->ready) < T)
        sched_yield();
    uint64_t t0 = now_ns();
    atomic_store_explicit(&S->go, 1, memory_order_release);
    struct timespec ts = {(time_t)cfg->duration,
                          (long)((cfg->duration - (double)(time_t)cfg->duration) * 1e9)};
    nanosleep(&ts, NULL);
    atomic_store(&S->stop, 1);
    for (int i = 0; i < T; i++) {
        if (cfg->procs)
            waitpid(pid[i], NULL, 0);
        else
            pthread_join(th[i], NULL);
    }
    double secs = (double)(now_ns() - t0) * 1e-9;

    static uint64_t hist[NBUCK];
    memset(hist, 0, sizeof hist);
    uint64_t counts[MAXW], total = 0, vcsw = 0, ivcsw = 0;
    double sq = 0;
    for (int i = 0; i < T; i++) {
        counts[i] = S->w[i].count;
        total += counts[i];
        sq += (double)counts[i] * (double)counts[i];
        vcsw += S->w[i].vcsw;
        ivcsw += S->w[i].ivcsw;
        for (unsigned b = 0; b < NBUCK; b++)
            hist[b] += S->w[i].hist[b];
    }
    qsort(counts, (size_t)T, sizeof counts[0], cmp_desc);
    uint64_t top = 0;
    for (int i = 0; i < (T + 1) / 2; i++)
        top += counts[i];
    uint64_t htotal = 0;
    for (unsigned b = 0; b < NBUCK; b++)
        htotal += hist[b];
    *res = (struct result){
        .kind = cfg->kind,
        .threads = T,
        .tput = (double)total / secs,
        .jain = sq > 0 ? (double)total * (double)total / ((double)T * sq) : 0,
        .tophalf = total ? (double)top / (double)total : 0,
        .p50 = pct(hist, htotal, 0.50),
        .p99 = pct(hist, htotal, 0.99),
        .p999 = pct(hist, htotal, 0.999),
        .total = total,
        .vcsw = vcsw,
        .ivcsw = ivcsw,
        .secs = secs,
    };
    return 0;
}

static const char *park_name(const struct cfg *c)
{
    return c->p.park == VMPI_PARK_YIELD ? "yield" : "futex";
}

static void print_header(void)
{
    printf("%-8s %-5s %5s %13s %6s %6s %10s %10s %10s %9s %9s\n", "lock", "park", "T",
           "acq/s", "jain", "top%", "p50(ns)", "p99(ns)", "p99.9(ns)", "vcsw", "ivcsw");
}

static void print_row(const struct cfg *c, const struct result *r)
{
    printf("%-8s %-5s %5d %13.0f %6.3f %6.1f %10.0f %10.0f %10.0f %9llu %9llu\n",
           vmpi_lock_kind_name(r->kind), park_name(c), r->threads, r->tput, r->jain,
           100 * r->tophalf, r->p50, r->p99, r->p999, (unsigned long long)r->vcsw,
           (unsigned long long)r->ivcsw);
    fflush(stdout);
}

static void json_row(FILE *f, const struct cfg *c, const struct result *r)
{
    char steal[16] = "null"; /* null: stealing off (strict FIFO) */
    if (c->p.steal_ns != VMPI_LOCK_NO_STEAL)
        snprintf(steal, sizeof steal, "%u", c->p.steal_ns);
    fprintf(f,
            "{\"lock\":\"%s\",\"park\":\"%s\",\"threads\":%d,\"procs\":%s,"
            "\"cs_lines\":%d,\"delay\":%ld,\"duration_s\":%.3f,"
            "\"spin_max\":%u,\"cutoff\":%u,\"far_spin\":%u,\"wake_n\":%u,"
            "\"time_cap_ns\":%u,\"steal_ns\":%s,\"steal_spin\":%u,"
            "\"acquisitions\":%llu,\"throughput\":%.1f,"
            "\"jain\":%.4f,\"top_half_fraction\":%.4f,\"lat_p50_ns\":%.0f,"
            "\"lat_p99_ns\":%.0f,\"lat_p999_ns\":%.0f,\"vcsw\":%llu,\"ivcsw\":%llu}",
            vmpi_lock_kind_name(r->kind), park_name(c), r->threads,
            c->procs ? "true" : "false", c->cs, c->delay, r->secs, c->p.spin_max,
            c->p.cutoff, c->p.far_spin, c->p.wake_n, c->p.time_cap_ns, steal,
            c->p.steal_spin, (unsigned long long)r->total, r->tput, r->jain, r->tophalf, r->p50, r->p99,
            r->p999, (unsigned long long)r->vcsw, (unsigned long long)r->ivcsw);
}

/* To stdout with status 0 when asked for (--help), else to stderr with 2. */
static void usage(int status)
{
    fprintf(status ? stderr : stdout,
            "usage: lockbench [--lock NAME|all] [--threads T] [--procs] [--cs C]\n"
            "       [--delay D] [--duration S] [--park futex|yield|both] [--spin-max N]\n"
            "       [--cutoff N] [--far-spin N] [--wake-n N] [--time-cap-ns N]\n"
            "       [--steal-ns N|off] [--steal-spin N]\n"
            "       [--json] [--sweep FILE] [--max-threads T]\n"
            "locks: tas ticket pticket spark oticket mcs mutex\n");
    exit(status);
}

int main(int argc, char **argv)
{
    struct cfg cfg = {.kind = -1, .threads = 4, .cs = 1, .delay = 100, .duration = 1.0};
    vmpi_lock_params_default(&cfg.p);
    const char *sweep = NULL;
    int all = 1, maxt = 64, both = 0;
    static const struct option opts[] = {
        {"lock", 1, 0, 'l'},     {"threads", 1, 0, 't'},  {"procs", 0, 0, 'P'},
        {"cs", 1, 0, 'c'},       {"delay", 1, 0, 'd'},    {"duration", 1, 0, 'D'},
        {"park", 1, 0, 'k'},     {"spin-max", 1, 0, 's'}, {"cutoff", 1, 0, 'u'},
        {"far-spin", 1, 0, 'f'}, {"wake-n", 1, 0, 'n'},   {"time-cap-ns", 1, 0, 'T'},
        {"steal-ns", 1, 0, 'x'}, {"steal-spin", 1, 0, 'X'},
        {"json", 0, 0, 'j'},     {"sweep", 1, 0, 'S'},    {"max-threads", 1, 0, 'M'},
        {"help", 0, 0, 'h'},     {"version", 0, 0, 'V'},  {0, 0, 0, 0}};
    int o;
    while ((o = getopt_long(argc, argv, "l:t:Pc:d:D:k:s:u:f:n:T:x:X:jS:M:h", opts, NULL)) != -1) {
        switch (o) {
        case 'l':
            if (strcmp(optarg, "all") == 0) {
                all = 1;
            } else {
                cfg.kind = vmpi_lock_kind_parse(optarg);
                if (cfg.kind < 0)
                    usage(2);
                all = 0;
            }
            break;
        case 't': cfg.threads = atoi(optarg); break;
        case 'P': cfg.procs = 1; break;
        case 'c': cfg.cs = atoi(optarg); break;
        case 'd': cfg.delay = atol(optarg); break;
        case 'D': cfg.duration = atof(optarg); break;
        case 'k':
            if (strcmp(optarg, "futex") == 0)
                cfg.p.park = VMPI_PARK_FUTEX;
            else if (strcmp(optarg, "yield") == 0)
                cfg.p.park = VMPI_PARK_YIELD;
            else if (strcmp(optarg, "both") == 0)
                both = 1;
            else
                usage(2);
            break;
        case 's': cfg.p.spin_max = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 'u': cfg.p.cutoff = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 'f': cfg.p.far_spin = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 'n': cfg.p.wake_n = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 'T': cfg.p.time_cap_ns = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 'x':
            cfg.p.steal_ns = strcmp(optarg, "off") == 0 ? VMPI_LOCK_NO_STEAL
                                                        : (uint32_t)strtoul(optarg, NULL, 0);
            break;
        case 'X': cfg.p.steal_spin = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 'j': cfg.json = 1; break;
        case 'S': sweep = optarg; break;
        case 'M': maxt = atoi(optarg); break;
        case 'h': usage(0); break;
        case 'V': printf("lockbench (vmpi) %s\n", VMPI_VERSION); return 0;
        default: usage(2);
        }
    }
    if (optind != argc || cfg.threads < 1 || cfg.threads > MAXW || maxt < 1 ||
        maxt > MAXW || cfg.cs < 0 || cfg.cs > MAXCS || cfg.delay < 0 ||
        !(cfg.duration > 0))
        usage(2);

    size_t lbytes = 0;
    for (int k = 0; k < VMPI_LOCK_NKINDS; k++)
        if (vmpi_lock_bytes((vmpi_lock_kind)k) > lbytes)
            lbytes = vmpi_lock_bytes((vmpi_lock_kind)k);
    size_t sbytes = (sizeof(struct shm) + 63) & ~(size_t)63;
    void *m = mmap(NULL, sbytes + lbytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                   -1, 0);
    if (m == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    S = m;
    L = (vmpi_lock *)((char *)m + sbytes);

    int k0 = all ? 0 : cfg.kind, k1 = all ? VMPI_LOCK_NKINDS : cfg.kind + 1;
    FILE *jf = NULL;
    if (sweep) {
        jf = fopen(sweep, "w");
        if (!jf) {
            perror(sweep);
            return 1;
        }
        fprintf(jf, "{\"bench\":\"lockbench\",\"cpus\":%ld,\"results\":[\n",
                sysconf(_SC_NPROCESSORS_ONLN));
    }
    if (!cfg.json || sweep)
        print_header();
    int first = 1;
    if (cfg.json && !sweep)
        printf("[");
    for (int pm = 0; pm < (both ? 2 : 1); pm++)
    for (int k = k0; k < k1; k++) {
        if (both)
            cfg.p.park = pm ? VMPI_PARK_YIELD : VMPI_PARK_FUTEX;
        for (int t = sweep ? 1 : cfg.threads; t <= (sweep ? maxt : cfg.threads); t *= 2) {
            struct cfg c = cfg;
            c.kind = k;
            c.threads = t;
            struct result r;
            if (run(&c, &r))
                return 1;
            if (sweep) {
                print_row(&c, &r);
                fprintf(jf, "%s", first ? "" : ",\n");
                json_row(jf, &c, &r);
                fflush(jf);
            } else if (cfg.json) {
                printf("%s", first ? "" : ",\n");
                json_row(stdout, &c, &r);
            } else {
                print_row(&c, &r);
            }
            first = 0;
            if (!sweep)
                break;
        }
    }
    if (cfg.json && !sweep)
        printf("]\n");
    if (jf) {
        fprintf(jf, "\n]}\n");
        fclose(jf);
    }
    return 0;
}
