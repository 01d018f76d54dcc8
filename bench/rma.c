/*
 * rma.c - one-sided (RMA) latency and bandwidth between ranks 0 and 1.
 *
 * Semantics of OSU's one-sided tests (osu_put_latency, osu_get_latency,
 * osu_put_bw, osu_get_bw, osu_acc_latency, osu_get_acc_latency,
 * osu_fop_latency, osu_cas_latency): rank 0, the origin, issues operations
 * on the window memory of rank 1, the target.  As in OSU a new window is
 * made for every size (only the target exposes memory: SIZE bytes, SIZE * W
 * for the bw tests), locks are MPI_LOCK_SHARED, disp_unit is 1, and the
 * origin alone times its loop (after WARMUP untimed iterations):
 *     latency (us) = loop time / ITER
 *     MB/s         = SIZE * W * ITER / loop time / 1e6
 * An iteration is one operation (-t), or for the bw tests W back to back,
 * the j-th at offset j * SIZE of origin buffer and window, with its
 * synchronization (-s).  put/get move MPI_CHAR; acc/get_acc add SIZE / 4
 * MPI_INTs (OSU uses MPI_CHAR; integers are the usual accumulate payload),
 * skipping sizes below 4; fop/cas work on one MPI_LONG_LONG (size 8).
 *
 * Window memory (-w): create = MPI_Alloc_mem + MPI_Win_create, allocate =
 * MPI_Win_allocate, dynamic = page-aligned malloc + MPI_Win_attach, the
 * target sending its MPI_Get_address to the origin as the displacement.
 * Synchronization (-s), per iteration:
 *   lock         origin: lock / ops / unlock
 *   flush        origin: ops / MPI_Win_flush, all in one lock epoch
 *   flush_local  origin: ops / MPI_Win_flush_local, all in one lock epoch
 *   lock_all     origin: ops / MPI_Win_flush, all in one lock_all epoch
 *                (OSU opens and closes lock_all every iteration; -s lock
 *                measures that cost already)
 *   fence        both: fence / ops (origin) / fence
 *   pscw         origin: start / ops / complete; target: post / wait
 * OSU's fence and pscw latency tests are ping-pongs (both ranks put in turn,
 * halved); here, as in OSU's bw tests, only the origin accesses the window,
 * so every sync mode times the same one-way iteration.
 *
 * After every size the origin checks what it fetched: get data must be the
 * target's fill, fop, cas and get_acc results the number of earlier
 * operations (the window starts at 0 and each operation adds 1; cas
 * compares with the iteration number and stores the next).  Else it aborts.
 *
 * With --json, rank 0 also timestamps every iteration and prints one JSON
 * object per size as latency.c (bw.c for the bw tests) does, plus "test",
 * "win" and "sync".
 *
 * Build:  mpicc -O2 -std=c11 rma.c -o rma
 * Run:    mpiexec -n 2 ./rma -t TEST [-w FLAVOR] [-s SYNC] [-m [MIN:]MAX]
 *                  [-i ITER] [-x WARMUP] [-W WINDOW] [--json]
 */
#include "bench_mpi.h"

static const char usage[] =
    "Usage: rma -t TEST [options]\n"
    "  One-sided latency / bandwidth: rank 0 accesses rank 1's window.\n"
    "  -t TEST        put_lat, get_lat, put_bw, get_bw (MPI_CHAR), acc_lat,\n"
    "                 get_acc_lat (MPI_SUM of MPI_INT, count = SIZE / 4),\n"
    "                 fop_lat, cas_lat (one MPI_LONG_LONG, size 8)\n"
    "  -w FLAVOR      create, allocate (default), dynamic\n"
    "  -s SYNC        lock, flush (default), flush_local, lock_all, fence, pscw\n"
    "  -m [MIN:]MAX   sizes from MIN to MAX bytes, doubling (default 1:4194304;\n"
    "                 ignored by fop_lat and cas_lat)\n"
    "  -i ITER        measured iterations per size (latency: default 10000,\n"
    "                 1000 for sizes > 8192; bw: 100, 20 for sizes > 8192)\n"
    "  -x WARMUP      untimed iterations per size (latency: default 100, 10\n"
    "                 for sizes > 8192; bw: 10, 2 for sizes > 8192)\n"
    "  -W WINDOW      bw tests: operations per synchronization (default 64);\n"
    "                 origin buffer and window are SIZE * WINDOW bytes\n"
    "  --alloc-mem    origin buffers from MPI_Alloc_mem\n"
    "  --json         one JSON object per size instead of the table: bench,\n"
    "                 test, win, sync, size, iterations, warmup, [window,\n"
    "                 mbps,] min/max/mean/p50/p99_us (_mbps), samples_us\n"
    "                 (_mbps: per iteration, at most 1000 evenly spread)\n"
    "  -h, --help     this text\n";

#define ORIGIN 0
#define TARGET 1
#define TAG_ADDR 1

enum rma_op { OP_PUT, OP_GET, OP_ACC, OP_GET_ACC, OP_FOP, OP_CAS };
enum flavor { WIN_CREATE, WIN_ALLOCATE, WIN_DYNAMIC };
enum sync { SYNC_LOCK, SYNC_FLUSH, SYNC_FLUSH_LOCAL, SYNC_LOCK_ALL, SYNC_FENCE,
            SYNC_PSCW };

/* An argument of -t, -w or -s (op and bw: tests only). */
struct choice {
    const char *name;
    const char *mpi_name;   /* header line */
    enum rma_op op;
    int bw;
};

static const struct choice tests[] = {
    { "put_lat", "MPI_Put Latency", OP_PUT, 0 },
    { "get_lat", "MPI_Get Latency", OP_GET, 0 },
    { "put_bw", "MPI_Put Bandwidth", OP_PUT, 1 },
    { "get_bw", "MPI_Get Bandwidth", OP_GET, 1 },
    { "acc_lat", "MPI_Accumulate Latency", OP_ACC, 0 },
    { "get_acc_lat", "MPI_Get_accumulate Latency", OP_GET_ACC, 0 },
    { "fop_lat", "MPI_Fetch_and_op Latency", OP_FOP, 0 },
    { "cas_lat", "MPI_Compare_and_swap Latency", OP_CAS, 0 },
};

static const struct choice flavors[] = {
    [WIN_CREATE] = { "create", "MPI_Win_create", 0, 0 },
    [WIN_ALLOCATE] = { "allocate", "MPI_Win_allocate", 0, 0 },
    [WIN_DYNAMIC] = { "dynamic", "MPI_Win_create_dynamic", 0, 0 },
};

static const struct choice syncs[] = {
    [SYNC_LOCK] = { "lock", "MPI_Win_lock/unlock", 0, 0 },
    [SYNC_FLUSH] = { "flush", "MPI_Win_flush", 0, 0 },
    [SYNC_FLUSH_LOCAL] = { "flush_local", "MPI_Win_flush_local", 0, 0 },
    [SYNC_LOCK_ALL] = { "lock_all", "MPI_Win_lock_all + MPI_Win_flush", 0, 0 },
    [SYNC_FENCE] = { "fence", "MPI_Win_fence", 0, 0 },
    [SYNC_PSCW] = { "pscw", "MPI_Win_post/start/complete/wait", 0, 0 },
};
#define NELEMS(a) ((int)(sizeof(a) / sizeof((a)[0])))

struct rma_args {
    int test, flavor, sync;
};

struct rma_ctx {
    const struct choice *t;
    enum flavor flavor;
    enum sync sync;
    int rank;
    MPI_Group peer;        /* the other rank, for pscw */
    MPI_Win win;
    void *tmem;            /* target: window memory */
    MPI_Aint disp0;        /* origin: displacement of the target's memory */
    long size;             /* bytes per operation */
    int count;             /* elements per operation */
    int nops;              /* operations per iteration (W for bw tests) */
    char *obuf;            /* origin: source of put/acc, destination of get */
    char *res;             /* origin: result of get_acc, fop, cas */
    long long *cmp;        /* origin: compare value of cas */
};

static int lookup(const char *s, const struct choice *d, int n)
{
    for (int k = 0; k < n; k++)
        if (strcmp(s, d[k].name) == 0)
            return k;
    return -1;
}

/* Bytes per element of the operation's datatype. */
static long elem_size(enum rma_op op)
{
    return op == OP_ACC || op == OP_GET_ACC ? (long)sizeof(int)
           : op >= OP_FOP                   ? (long)sizeof(long long)
                                            : 1;
}

/*
 * Takes -t, -w and -s out of argv into `a`; the rest (for bench_parse_opts)
 * goes to `rest`.  Returns the number of entries in rest.  A problem is
 * left in err and reported once MPI is up (on rank 0 only).
 */
static int rma_parse(int argc, char **argv, char **rest, struct rma_args *a,
                     char *err, size_t errlen)
{
    int n = 0;

    rest[n++] = argv[0];
    for (int i = 1; i < argc; i++) {
        char opt = argv[i][0] == '-' ? argv[i][1] : '\0';
        const char *v;
        int *slot;

        if (opt != 't' && opt != 'w' && opt != 's') {
            rest[n++] = argv[i];
            continue;
        }
        v = bench_optarg(argc, argv, &i);
        slot = opt == 't' ? &a->test : opt == 'w' ? &a->flavor : &a->sync;
        *slot = v == NULL ? -1
                : opt == 't' ? lookup(v, tests, NELEMS(tests))
                : opt == 'w' ? lookup(v, flavors, NELEMS(flavors))
                             : lookup(v, syncs, NELEMS(syncs));
        if (*slot < 0 && err[0] == '\0')
            snprintf(err, errlen, "invalid -%c argument '%s' (try -h)", opt,
                     v ? v : "");
    }
    rest[n] = NULL;
    if (a->test < 0 && err[0] == '\0')
        snprintf(err, errlen, "missing -t TEST (try -h)");
    return n;
}

/* The j-th operation of iteration i (i also gives cas its values). */
static void rma_op(struct rma_ctx *c, int j, long i)
{
    MPI_Aint disp = c->disp0 + (MPI_Aint)j * c->size;
    char *o = c->obuf + (size_t)j * (size_t)c->size;

    switch (c->t->op) {
    case OP_PUT:
        MPI_Put(o, c->count, MPI_CHAR, TARGET, disp, c->count, MPI_CHAR, c->win);
        break;
    case OP_GET:
        MPI_Get(o, c->count, MPI_CHAR, TARGET, disp, c->count, MPI_CHAR, c->win);
        break;
    case OP_ACC:
        MPI_Accumulate(o, c->count, MPI_INT, TARGET, disp, c->count, MPI_INT,
                       MPI_SUM, c->win);
        break;
    case OP_GET_ACC:
        MPI_Get_accumulate(o, c->count, MPI_INT, c->res, c->count, MPI_INT, TARGET,
                           disp, c->count, MPI_INT, MPI_SUM, c->win);
        break;
    case OP_FOP:
        MPI_Fetch_and_op(o, c->res, MPI_LONG_LONG, TARGET, disp, MPI_SUM, c->win);
        break;
    case OP_CAS:
        /* The previous iteration left i in the window: the swap succeeds. */
        *c->cmp = i;
        *(long long *)o = i + 1;
        MPI_Compare_and_swap(o, c->cmp, c->res, MPI_LONG_LONG, TARGET, disp,
                             c->win);
        break;
    }
}

/* One timed iteration on the origin: the operations and their sync. */
static void origin_iter(struct rma_ctx *c, long i)
{
    if (c->sync == SYNC_LOCK)
        MPI_Win_lock(MPI_LOCK_SHARED, TARGET, 0, c->win);
    else if (c->sync == SYNC_FENCE)
        MPI_Win_fence(0, c->win);
    else if (c->sync == SYNC_PSCW)
        MPI_Win_start(c->peer, 0, c->win);

    for (int j = 0; j < c->nops; j++)
        rma_op(c, j, i);

    switch (c->sync) {
    case SYNC_LOCK:
        MPI_Win_unlock(TARGET, c->win);
        break;
    case SYNC_FLUSH:
    case SYNC_LOCK_ALL:
        MPI_Win_flush(TARGET, c->win);
        break;
    case SYNC_FLUSH_LOCAL:
        MPI_Win_flush_local(TARGET, c->win);
        break;
    case SYNC_FENCE:
        MPI_Win_fence(0, c->win);
        break;
    case SYNC_PSCW:
        MPI_Win_complete(c->win);
        break;
    }
}

/* The target's part of an iteration (active-target modes only). */
static void target_iter(struct rma_ctx *c)
{
    if (c->sync == SYNC_FENCE) {
        MPI_Win_fence(0, c->win);
        MPI_Win_fence(0, c->win);
    } else {
        MPI_Win_post(c->peer, 0, c->win);
        MPI_Win_wait(c->win);
    }
}

/* Collective: a window of `bytes` on the target (none on the origin),
 * filled with 'b' for put/get and zeros for the accumulating tests. */
static void win_open(struct rma_ctx *c, size_t bytes)
{
    size_t len = bytes ? bytes : 1;   /* no zero-length buffers or attach */
    int target = c->rank == TARGET;
    MPI_Aint wlen = target ? (MPI_Aint)len : 0;
    int fill = c->t->op >= OP_ACC ? 0 : 'b';
    MPI_Aint addr;

    c->tmem = NULL;
    c->disp0 = 0;
    switch (c->flavor) {
    case WIN_CREATE:
        if (target) {
            if (MPI_Alloc_mem(wlen, MPI_INFO_NULL, &c->tmem) != MPI_SUCCESS)
                MPI_Abort(MPI_COMM_WORLD, 1);
            memset(c->tmem, fill, len);
        }
        MPI_Win_create(c->tmem, wlen, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &c->win);
        break;
    case WIN_ALLOCATE:
        MPI_Win_allocate(wlen, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &c->tmem, &c->win);
        if (target)
            memset(c->tmem, fill, len);
        break;
    case WIN_DYNAMIC:
        MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &c->win);
        if (target) {
            c->tmem = bench_alloc_touched(len, fill);
            if (c->tmem == NULL)
                MPI_Abort(MPI_COMM_WORLD, 1);
            MPI_Win_attach(c->win, c->tmem, wlen);
            MPI_Get_address(c->tmem, &addr);
            MPI_Send(&addr, 1, MPI_AINT, ORIGIN, TAG_ADDR, MPI_COMM_WORLD);
        } else {
            MPI_Recv(&c->disp0, 1, MPI_AINT, TARGET, TAG_ADDR, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        }
        break;
    }
}

/* Collective; the origin's operations have completed (barrier before). */
static void win_close(struct rma_ctx *c)
{
    int target = c->rank == TARGET;

    if (target && c->flavor == WIN_DYNAMIC)
        MPI_Win_detach(c->win, c->tmem);
    MPI_Win_free(&c->win);
    if (target && c->flavor == WIN_CREATE)
        MPI_Free_mem(c->tmem);
    else if (target && c->flavor == WIN_DYNAMIC)
        free(c->tmem);
}

/* Origin, after `total` iterations of one size: were the fetches right? */
static void rma_check(const struct rma_ctx *c, size_t bytes, long total)
{
    long long want = total - 1, first, last;

    switch (c->t->op) {
    case OP_GET:
        if (bytes == 0 || (c->obuf[0] == 'b' && c->obuf[bytes - 1] == 'b'))
            return;
        fprintf(stderr, "rma: size %ld: MPI_Get brought other bytes than the "
                        "target's\n", c->size);
        MPI_Abort(MPI_COMM_WORLD, 1);
        return;
    case OP_GET_ACC:
        first = ((const int *)c->res)[0];
        last = ((const int *)c->res)[c->count - 1];
        break;
    case OP_FOP:
    case OP_CAS:
        first = last = *(const long long *)c->res;
        break;
    default:
        return;
    }
    if (first != want || last != want) {
        fprintf(stderr, "rma: size %ld: %s fetched %lld (last element %lld), "
                        "expected %lld\n", c->size, c->t->name, first, last, want);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void print_header(const struct rma_ctx *c, const struct bench_opts *o)
{
    printf("# vmpi %s Test\n", c->t->mpi_name);
    printf("# Window creation: %s\n", flavors[c->flavor].mpi_name);
    printf("# Synchronization: %s\n", syncs[c->sync].mpi_name);
    if (c->t->op == OP_ACC || c->t->op == OP_GET_ACC)
        printf("# MPI_INT, MPI_SUM, size in bytes (count = size / 4)\n");
    else if (c->t->op >= OP_FOP)
        printf("# MPI_LONG_LONG%s\n", c->t->op == OP_FOP ? ", MPI_SUM" : "");
    if (c->t->bw)
        printf("# %ld operations per synchronization\n", o->window);
    printf("%-10s%18s\n", "# Size", c->t->bw ? "Bandwidth (MB/s)" : "Latency (us)");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    struct bench_opts o = { .min_size = 1, .max_size = BENCH_MAX_MESSAGE,
                            .iters = -1, .warmup = -1, .window = 64 };
    const struct bench_counts lat_dflt = { 10000, 1000, 100, 10 };
    const struct bench_counts bw_dflt = { 100, 20, 10, 2 };
    struct rma_args a = { -1, WIN_ALLOCATE, SYNC_FLUSH };
    struct rma_ctx c = { 0 };
    char err[160] = "";
    char **rest, **rest_alloc;
    double *ts = NULL, *val = NULL;
    const char *unit;
    int nrest, rc, prec;
    long esize;
    size_t maxbytes;

    rest = rest_alloc = malloc((size_t)(argc + 1) * sizeof *rest);
    if (rest == NULL)
        return 1;
    nrest = rma_parse(argc, argv, rest, &a, err, sizeof err);
    rc = bench_mpi_start(&nrest, &rest, usage, &o, a.test >= 0 && tests[a.test].bw,
                         &c.rank);
    if (rc < 0 && err[0] != '\0') {
        if (c.rank == 0)
            fprintf(stderr, "%s: %s\n", argv[0], err);
        MPI_Finalize();
        rc = 2;
    }
    free(rest_alloc);
    if (rc >= 0)
        return rc;

    c.t = &tests[a.test];
    c.flavor = (enum flavor)a.flavor;
    c.sync = (enum sync)a.sync;
    c.nops = c.t->bw ? (int)o.window : 1;
    esize = elem_size(c.t->op);
    unit = c.t->bw ? "mbps" : "us";
    prec = c.t->bw ? 2 : 3;
    if (c.t->op >= OP_FOP)
        o.min_size = o.max_size = esize;
    if (o.max_size < esize && esize > 1) {
        if (c.rank == 0)
            fprintf(stderr, "%s: %s needs a size >= %ld\n", argv[0], c.t->name, esize);
        MPI_Finalize();
        return 2;
    }
    if (c.sync == SYNC_PSCW) {
        MPI_Group world;
        int other = 1 - c.rank;

        MPI_Comm_group(MPI_COMM_WORLD, &world);
        MPI_Group_incl(world, 1, &other, &c.peer);
        MPI_Group_free(&world);
    }

    maxbytes = (size_t)o.max_size * (size_t)c.nops;
    if (c.rank == ORIGIN) {
        c.obuf = bench_mpi_alloc(&o, maxbytes, 'a');
        c.res = bench_mpi_alloc(&o, c.t->op >= OP_GET_ACC ? (size_t)o.max_size : 0, 0);
        c.cmp = bench_mpi_alloc(&o, sizeof *c.cmp, 0);
        /* Every accumulating operation adds 1 per element. */
        if (c.t->op == OP_ACC || c.t->op == OP_GET_ACC)
            for (size_t k = 0; k < maxbytes / sizeof(int); k++)
                ((int *)c.obuf)[k] = 1;
        else if (c.t->op == OP_FOP)
            *(long long *)c.obuf = 1;
        if (!o.json)
            print_header(&c, &o);
    }

    for (long size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        long iters, warmup, total;
        int record;
        size_t bytes = (size_t)size * (size_t)c.nops;
        double t_start = 0.0, t_end, agg;

        if (size < esize && esize > 1)   /* acc, get_acc: no whole MPI_INT */
            continue;
        c.size = size;
        c.count = (int)(size / esize);
        bench_counts_for(&o, c.t->bw ? &bw_dflt : &lat_dflt, size, &iters, &warmup);
        total = warmup + iters;
        record = c.rank == ORIGIN && o.json;
        if (record)
            bench_mpi_samples(&ts, &val, iters, "rma");

        win_open(&c, bytes);
        if (c.rank == ORIGIN && c.t->op == OP_GET)
            memset(c.obuf, 'a', bytes);   /* so that rma_check sees the get */
        MPI_Barrier(MPI_COMM_WORLD);

        if (c.rank == ORIGIN) {
            /* flush, flush_local and lock_all keep one epoch for all
             * iterations, opened and closed outside the timed loop. */
            if (c.sync == SYNC_FLUSH || c.sync == SYNC_FLUSH_LOCAL)
                MPI_Win_lock(MPI_LOCK_SHARED, TARGET, 0, c.win);
            else if (c.sync == SYNC_LOCK_ALL)
                MPI_Win_lock_all(0, c.win);

            for (long i = 0; i < total; i++) {
                /* Table mode reads the clock only around the whole loop, as
                 * OSU does; JSON mode also stamps every iteration. */
                if (i == warmup) {
                    t_start = MPI_Wtime();
                    if (record)
                        ts[0] = t_start;
                } else if (record && i > warmup) {
                    ts[i - warmup] = MPI_Wtime();
                }
                origin_iter(&c, i);
            }
            t_end = MPI_Wtime();

            if (c.sync == SYNC_FLUSH || c.sync == SYNC_FLUSH_LOCAL)
                MPI_Win_unlock(TARGET, c.win);
            else if (c.sync == SYNC_LOCK_ALL)
                MPI_Win_unlock_all(c.win);
            rma_check(&c, bytes, total);

            /* Table value, and the JSON record's aggregate "mbps". */
            agg = c.t->bw ? (double)bytes * (double)iters / (t_end - t_start) / 1e6
                          : (t_end - t_start) * 1e6 / (double)iters;
            if (!o.json) {
                printf("%-10ld%18.2f\n", size, agg);
            } else {
                ts[iters] = t_end;
                for (long k = 0; k < iters; k++) {
                    double dt = ts[k + 1] - ts[k];

                    val[k] = c.t->bw ? (double)bytes / dt / 1e6 : dt * 1e6;
                }
                printf("{\"bench\":\"rma\",\"test\":\"%s\",\"win\":\"%s\","
                       "\"sync\":\"%s\",\"size\":%ld,\"iterations\":%ld,"
                       "\"warmup\":%ld,", c.t->name, flavors[c.flavor].name,
                       syncs[c.sync].name, size, iters, warmup);
                if (c.t->bw)
                    printf("\"window\":%d,\"mbps\":%.2f,", c.nops, agg);
                if (bench_json_dist(stdout, val, (size_t)iters, unit, prec) != 0) {
                    fprintf(stderr, "rma: out of memory\n");
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
                fputs("}\n", stdout);
            }
            fflush(stdout);
        } else if (c.sync == SYNC_FENCE || c.sync == SYNC_PSCW) {
            for (long i = 0; i < total; i++)
                target_iter(&c);
        }

        MPI_Barrier(MPI_COMM_WORLD);
        win_close(&c);
    }

    free(ts);
    free(val);
    if (c.sync == SYNC_PSCW)
        MPI_Group_free(&c.peer);
    if (c.rank == ORIGIN) {
        bench_mpi_free(&o, c.obuf);
        bench_mpi_free(&o, c.res);
        bench_mpi_free(&o, c.cmp);
    }
    MPI_Finalize();
    return 0;
}
