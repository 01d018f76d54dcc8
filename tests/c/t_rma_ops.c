/* np: 2 3 4 */
/* vms: v2 v2iv v2net h2v2 */
/* net: ofi h2 */
/* One-sided communication matrix: every RMA operation under every
 * synchronization mode on every window flavor, for int and double elements.
 *
 * Each case, on a window of N elements per rank:
 *  - every rank applies the operation to its right neighbour (rank + 1 mod p)
 *    through four origin x target layouts on disjoint target ranges:
 *    basic x basic, contiguous x vector (stride 2), vector x indexed, and
 *    basic x resized (extent 3 elements);
 *  - the accumulating operations also hit the same R0_N elements of rank 0
 *    from every rank at once, with contribution (j + 1) << rank, so that the
 *    sum and, for Get_accumulate, the order of application can be recovered;
 *  - Fetch_and_op: every rank adds 1 K times to one counter at rank 0 (the
 *    fetched values must be exactly init .. init + p*K - 1) and swaps one
 *    element of its neighbour (MPI_REPLACE);
 *  - Compare_and_swap: every rank tries 0 -> rank + 1 on one element of
 *    rank 0 (exactly one wins) and, at its neighbour, fails once with a
 *    wrong compare value, then succeeds.
 * After the epoch and a barrier each rank compares all N elements of its
 * window memory (read under a shared lock on itself) with a reference
 * model; fetched values are checked at the origin as soon as the
 * synchronization call that makes them valid has returned (after each
 * flush in the flush modes).
 * Left out because MPI-3.1 makes them erroneous: request-based operations
 * outside passive-target epochs (11.3.5) and Compare_and_swap on double. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#include "t_check.h"

enum {
    N = 64,      /* window elements per rank */
    R0_AT = 52,  /* rank 0's shared accumulate range [R0_AT, R0_AT + R0_N) */
    R0_N = 12,
    FOP_AT = 52, /* the Fetch_and_op counter at rank 0 */
    CAS_AT = 53, /* the Compare_and_swap element at rank 0 (initially 0) */
    K = 5,       /* Fetch_and_op increments per rank */
    NLAY = 4,
    SENT = -7777 /* result-buffer elements no operation may write */
};

enum op {
    PUT, GET, ACC_SUM, ACC_REPLACE, GACC_SUM, GACC_NOOP, FOP, CAS, RPUT, RGET, RACC, RGACC, NOPS
};
static const char *const op_name[NOPS] = {
    "Put", "Get", "Accumulate(SUM)", "Accumulate(REPLACE)", "Get_accumulate(SUM)",
    "Get_accumulate(NO_OP)", "Fetch_and_op", "Compare_and_swap", "Rput", "Rget",
    "Raccumulate(SUM)", "Rget_accumulate(SUM)"};

enum sync {
    FENCE, PSCW, LOCK_SHARED, LOCK_EXCL_FLUSH, LOCKALL_FLUSHALL, LOCKALL_FLUSHLOCAL, NSYNC
};
static const char *const sync_name[NSYNC] = {
    "fence", "post/start/complete/wait", "lock shared", "lock exclusive+flush",
    "lock_all+flush_all", "lock_all+flush_local"};

enum flavor { F_MALLOC, F_MALLOC_DU1, F_ALLOCMEM, F_ALLOCATE, F_DYNAMIC, F_SHARED, NFLAV };
static const char *const flav_name[NFLAV] = {
    "create(malloc)", "create(malloc, disp_unit 1)", "create(Alloc_mem)", "allocate",
    "create_dynamic+attach", "allocate_shared"};

/* ---- element type: values are small integers, exact in int and double ---- */

static MPI_Datatype T;
static size_t es;

static double getv(const void *b, int i)
{
    return T == MPI_INT ? ((const int *)b)[i] : ((const double *)b)[i];
}

static void setv(void *b, int i, double v)
{
    if (T == MPI_INT)
        ((int *)b)[i] = (int)v;
    else
        ((double *)b)[i] = v;
}

static void *elem(void *b, int i) { return (char *)b + (size_t)i * es; }

static double init_v(int r, int i) { return i == CAS_AT ? 0 : 1000.0 * (r + 1) + i; }
static double orig_v(int r, int i) { return -(100.0 * (r + 1) + i); }
static double contrib(int r, int j) { return (double)((j + 1) << r); }

/* ---- layouts: the reference model uses the index tables, the MPI
 * datatypes are built independently from the same shapes ---------------- */

static const struct {
    int n, oidx[8], tidx[8];
} LD[NLAY] = {
    {8, {0, 1, 2, 3, 4, 5, 6, 7}, {0, 1, 2, 3, 4, 5, 6, 7}},
    {8, {8, 9, 10, 11, 12, 13, 14, 15}, {8, 10, 12, 14, 16, 18, 20, 22}},
    {8, {24, 25, 27, 28, 30, 31, 33, 34}, {24, 28, 29, 30, 33, 34, 37, 38}},
    {4, {40, 41, 42, 43}, {40, 43, 46, 49}},
};

static struct layout {
    MPI_Datatype ot, tt; /* origin and target datatypes */
    int oc, tc;          /* counts */
    int odisp, tdisp;    /* element offset of the first element */
} lay[NLAY];

static void layouts_make(void)
{
    static const int bl[4] = {1, 3, 2, 2}, dp[4] = {0, 4, 9, 13};
    lay[0] = (struct layout){T, T, 8, 8, 0, 0};
    lay[1] = (struct layout){MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, 1, 1, 8, 8};
    OK(MPI_Type_contiguous(8, T, &lay[1].ot));
    OK(MPI_Type_vector(8, 1, 2, T, &lay[1].tt));
    lay[2] = (struct layout){MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, 1, 1, 24, 24};
    OK(MPI_Type_vector(4, 2, 3, T, &lay[2].ot));
    OK(MPI_Type_indexed(4, bl, dp, T, &lay[2].tt));
    lay[3] = (struct layout){T, MPI_DATATYPE_NULL, 4, 4, 40, 40};
    OK(MPI_Type_create_resized(T, 0, (MPI_Aint)(3 * es), &lay[3].tt));
    for (int l = 1; l < NLAY; l++) {
        if (lay[l].ot != T)
            OK(MPI_Type_commit(&lay[l].ot));
        OK(MPI_Type_commit(&lay[l].tt));
    }
}

static void layouts_free(void)
{
    for (int l = 1; l < NLAY; l++) {
        if (lay[l].ot != T)
            OK(MPI_Type_free(&lay[l].ot));
        OK(MPI_Type_free(&lay[l].tt));
    }
}

/* ---- the window --------------------------------------------------------- */

static struct {
    MPI_Win win;
    MPI_Comm comm;   /* MPI_COMM_WORLD, or the shared-memory communicator */
    int me, p, flavor;
    void *mem;       /* this rank's N elements */
    MPI_Aint *base;  /* target_disp of element 0 at each rank */
    MPI_Aint scale;  /* target_disp units per element */
} w;

static void win_open(int flavor, MPI_Comm shm)
{
    w.flavor = flavor;
    w.comm = flavor == F_SHARED ? shm : MPI_COMM_WORLD;
    OK(MPI_Comm_rank(w.comm, &w.me));
    OK(MPI_Comm_size(w.comm, &w.p));
    w.base = calloc((size_t)w.p, sizeof *w.base);
    CHECK(w.base != NULL, "out of memory");
    MPI_Aint bytes = (MPI_Aint)(N * es);
    int du = flavor == F_MALLOC_DU1 || flavor == F_DYNAMIC ? 1 : (int)es;
    w.scale = (MPI_Aint)es / du;
    int want = MPI_WIN_FLAVOR_CREATE;
    switch (flavor) {
    case F_MALLOC:
    case F_MALLOC_DU1:
        w.mem = malloc((size_t)bytes);
        CHECK(w.mem != NULL, "out of memory");
        OK(MPI_Win_create(w.mem, bytes, du, MPI_INFO_NULL, w.comm, &w.win));
        break;
    case F_ALLOCMEM:
        OK(MPI_Alloc_mem(bytes, MPI_INFO_NULL, &w.mem));
        OK(MPI_Win_create(w.mem, bytes, du, MPI_INFO_NULL, w.comm, &w.win));
        break;
    case F_ALLOCATE:
        want = MPI_WIN_FLAVOR_ALLOCATE;
        OK(MPI_Win_allocate(bytes, du, MPI_INFO_NULL, w.comm, &w.mem, &w.win));
        break;
    case F_DYNAMIC: {
        /* the targets address attached memory by absolute address */
        want = MPI_WIN_FLAVOR_DYNAMIC;
        OK(MPI_Win_create_dynamic(MPI_INFO_NULL, w.comm, &w.win));
        w.mem = malloc((size_t)bytes);
        CHECK(w.mem != NULL, "out of memory");
        OK(MPI_Win_attach(w.win, w.mem, bytes));
        MPI_Aint a;
        OK(MPI_Get_address(w.mem, &a));
        OK(MPI_Allgather(&a, 1, MPI_AINT, w.base, 1, MPI_AINT, w.comm));
        break;
    }
    case F_SHARED:
        want = MPI_WIN_FLAVOR_SHARED;
        OK(MPI_Win_allocate_shared(bytes, du, MPI_INFO_NULL, w.comm, &w.mem, &w.win));
        break;
    }
    int *fl = NULL, found = 0;
    OK(MPI_Win_get_attr(w.win, MPI_WIN_CREATE_FLAVOR, &fl, &found));
    CHECK(found && *fl == want, "%s: flavor %d, want %d", flav_name[flavor], found ? *fl : -1,
          want);
}

static void win_close(void)
{
    if (w.flavor == F_DYNAMIC)
        OK(MPI_Win_detach(w.win, w.mem));
    OK(MPI_Win_free(&w.win));
    CHECK(w.win == MPI_WIN_NULL, "MPI_Win_free left the handle set");
    if (w.flavor == F_MALLOC || w.flavor == F_MALLOC_DU1 || w.flavor == F_DYNAMIC)
        free(w.mem);
    else if (w.flavor == F_ALLOCMEM)
        OK(MPI_Free_mem(w.mem));
    free(w.base);
}

static MPI_Aint disp(int t, int i) { return w.base[t] + i * w.scale; }

/* ---- one case ----------------------------------------------------------- */

static enum op op;
static enum sync sy;
static char cname[160];

/* Origin-side buffers (malloc'd, so int or double may live in them). */
static void *obuf, *rbuf; /* N elements: source data, fetched data */
static void *c0, *r0;     /* R0_N elements: contribution to / fetched from rank 0 */
static void *fb;          /* Fetch_and_op: FB_* below, then K fetched counters */
static void *gbuf;        /* gathers at rank 0 */
enum { FB_ONE, FB_NBO, FB_NBR, FB_CNT };
static int cas_me, cas_zero, cas_r0, cas_nbo, cas_bad, cas_good, cas_nb[2];

static int right(int r) { return (r + 1) % w.p; }
static int left(int r) { return (r + w.p - 1) % w.p; }
static int uses0(void) { return op != PUT && op != GET && op != RPUT && op != RGET; }
static int fetches(void)
{
    return op == GET || op == GACC_SUM || op == GACC_NOOP || op == RGET || op == RGACC;
}

/* The targets of origin o, the right neighbour first. */
static int targets(int o, int *tg)
{
    int n = 0;
    tg[n++] = right(o);
    if (uses0() && right(o) != 0)
        tg[n++] = 0;
    return n;
}

static void issue_layout(const struct layout *L, int t, MPI_Request *rq, int *nrq)
{
    void *o = elem(obuf, L->odisp), *r = elem(rbuf, L->odisp);
    MPI_Aint d = disp(t, L->tdisp);
    MPI_Op aop = op == ACC_REPLACE ? MPI_REPLACE : op == GACC_NOOP ? MPI_NO_OP : MPI_SUM;
    switch (op) {
    case PUT: OK(MPI_Put(o, L->oc, L->ot, t, d, L->tc, L->tt, w.win)); break;
    case GET: OK(MPI_Get(r, L->oc, L->ot, t, d, L->tc, L->tt, w.win)); break;
    case ACC_SUM:
    case ACC_REPLACE: OK(MPI_Accumulate(o, L->oc, L->ot, t, d, L->tc, L->tt, aop, w.win)); break;
    case GACC_SUM:
    case GACC_NOOP:
        OK(MPI_Get_accumulate(o, L->oc, L->ot, r, L->oc, L->ot, t, d, L->tc, L->tt, aop, w.win));
        break;
    case RPUT: OK(MPI_Rput(o, L->oc, L->ot, t, d, L->tc, L->tt, w.win, &rq[(*nrq)++])); break;
    case RGET: OK(MPI_Rget(r, L->oc, L->ot, t, d, L->tc, L->tt, w.win, &rq[(*nrq)++])); break;
    case RACC:
        OK(MPI_Raccumulate(o, L->oc, L->ot, t, d, L->tc, L->tt, aop, w.win, &rq[(*nrq)++]));
        break;
    case RGACC:
        OK(MPI_Rget_accumulate(o, L->oc, L->ot, r, L->oc, L->ot, t, d, L->tc, L->tt, aop, w.win,
                               &rq[(*nrq)++]));
        break;
    default: CHECK(0, "%s: no layout form", cname);
    }
}

/* All of this case's operations of this rank on target t. */
static void issue(int t, MPI_Request *rq, int *nrq)
{
    if (t == right(w.me)) {
        if (op == FOP)
            OK(MPI_Fetch_and_op(elem(fb, FB_NBO), elem(fb, FB_NBR), T, t, disp(t, 0), MPI_REPLACE,
                                w.win));
        else if (op == CAS) {
            /* same origin, same element: accumulate ordering keeps them in order */
            OK(MPI_Compare_and_swap(&cas_nbo, &cas_bad, &cas_nb[0], MPI_INT, t, disp(t, 1), w.win));
            OK(MPI_Compare_and_swap(&cas_nbo, &cas_good, &cas_nb[1], MPI_INT, t, disp(t, 1),
                                    w.win));
        } else
            for (int l = 0; l < NLAY; l++)
                issue_layout(&lay[l], t, rq, nrq);
    }
    if (t != 0 || !uses0())
        return;
    MPI_Aint d = disp(0, R0_AT);
    switch (op) {
    case ACC_SUM: OK(MPI_Accumulate(c0, R0_N, T, 0, d, R0_N, T, MPI_SUM, w.win)); break;
    case ACC_REPLACE: OK(MPI_Accumulate(c0, R0_N, T, 0, d, R0_N, T, MPI_REPLACE, w.win)); break;
    case RACC:
        OK(MPI_Raccumulate(c0, R0_N, T, 0, d, R0_N, T, MPI_SUM, w.win, &rq[(*nrq)++]));
        break;
    case GACC_SUM:
    case GACC_NOOP:
        OK(MPI_Get_accumulate(c0, R0_N, T, r0, R0_N, T, 0, d, R0_N, T,
                              op == GACC_SUM ? MPI_SUM : MPI_NO_OP, w.win));
        break;
    case RGACC:
        OK(MPI_Rget_accumulate(c0, R0_N, T, r0, R0_N, T, 0, d, R0_N, T, MPI_SUM, w.win,
                               &rq[(*nrq)++]));
        break;
    case FOP:
        for (int k = 0; k < K; k++)
            OK(MPI_Fetch_and_op(elem(fb, FB_ONE), elem(fb, FB_CNT + k), T, 0, disp(0, FOP_AT),
                                MPI_SUM, w.win));
        break;
    case CAS:
        OK(MPI_Compare_and_swap(&cas_me, &cas_zero, &cas_r0, MPI_INT, 0, disp(0, CAS_AT), w.win));
        break;
    default: break;
    }
}

/* Fetched values from target t, once valid at this origin. */
static void check_local(int t)
{
    if (t == right(w.me)) {
        if (op == FOP) {
            CHECK(getv(fb, FB_NBR) == init_v(t, 0), "%s: neighbour fetch %g, want %g", cname,
                  getv(fb, FB_NBR), init_v(t, 0));
        } else if (op == CAS) {
            CHECK(cas_nb[0] == cas_good && cas_nb[1] == cas_good,
                  "%s: neighbour CAS fetched %d, %d, want %d twice", cname, cas_nb[0], cas_nb[1],
                  cas_good);
        } else {
            /* fetched values land at the layouts' origin positions only */
            double want[N];
            for (int i = 0; i < N; i++)
                want[i] = SENT;
            for (int l = 0; l < NLAY && fetches(); l++)
                for (int k = 0; k < LD[l].n; k++)
                    want[LD[l].oidx[k]] = init_v(t, LD[l].tidx[k]);
            for (int i = 0; i < N; i++)
                CHECK(getv(rbuf, i) == want[i], "%s: result element %d is %g, want %g", cname, i,
                      getv(rbuf, i), want[i]);
        }
    }
    if (t == 0 && op == GACC_NOOP)
        for (int j = 0; j < R0_N; j++)
            CHECK(getv(r0, j) == init_v(0, R0_AT + j), "%s: NO_OP fetched %g at %d, want %g",
                  cname, getv(r0, j), j, init_v(0, R0_AT + j));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Get_accumulate(SUM) on rank 0's range: origin o fetched at element j
 * init + (j + 1) * m_o, m_o the mask of the origins applied before it.
 * Atomicity per element means the masks are the prefixes of one order. */
static void check_chain(void)
{
    for (int j = 0; j < R0_N; j++) {
        int m[64], have = 0, used = 0;
        for (int o = 0; o < w.p; o++) {
            double d = getv(gbuf, o * R0_N + j) - init_v(0, R0_AT + j);
            int mi = (int)(d / (j + 1));
            CHECK(d >= 0 && mi * (j + 1) == d && !(mi & (1 << o)),
                  "%s: origin %d fetched %g at element %d", cname, o, d, j);
            m[o] = mi;
        }
        for (int step = 0; step < w.p; step++) {
            int o = 0;
            while (o < w.p && ((used >> o & 1) || m[o] != have))
                o++;
            CHECK(o < w.p, "%s: element %d: fetched values are no serial order", cname, j);
            used |= 1 << o;
            have |= 1 << o;
        }
    }
}

/* After the epoch and a barrier: collective checks and the window memory. */
static void check_global(void)
{
    double want[N];
    for (int i = 0; i < N; i++)
        want[i] = init_v(w.me, i);
    int l = left(w.me);
    for (int y = 0; y < NLAY; y++)
        for (int k = 0; k < LD[y].n; k++) {
            double *e = &want[LD[y].tidx[k]], v = orig_v(l, LD[y].oidx[k]);
            if (op == PUT || op == ACC_REPLACE || op == RPUT)
                *e = v;
            else if (op == ACC_SUM || op == GACC_SUM || op == RACC || op == RGACC)
                *e += v;
        }
    if (op == FOP)
        want[0] = orig_v(l, 0);
    if (op == CAS)
        want[1] = orig_v(l, 1);
    if (op == ACC_SUM || op == GACC_SUM || op == RACC || op == RGACC)
        for (int j = 0; j < R0_N && w.me == 0; j++)
            for (int o = 0; o < w.p; o++)
                want[R0_AT + j] += contrib(o, j);
    if (op == GACC_SUM || op == RGACC) {
        OK(MPI_Gather(r0, R0_N, T, gbuf, R0_N, T, 0, w.comm));
        if (w.me == 0)
            check_chain();
    }
    if (op == FOP) {
        OK(MPI_Gather(elem(fb, FB_CNT), K, T, gbuf, K, T, 0, w.comm));
        if (w.me == 0) {
            double *f = malloc((size_t)(w.p * K) * sizeof *f);
            CHECK(f != NULL, "out of memory");
            for (int i = 0; i < w.p * K; i++)
                f[i] = getv(gbuf, i);
            qsort(f, (size_t)(w.p * K), sizeof *f, cmp_double);
            for (int i = 0; i < w.p * K; i++)
                CHECK(f[i] == init_v(0, FOP_AT) + i, "%s: sorted fetched counters [%d] = %g",
                      cname, i, f[i]);
            free(f);
            want[FOP_AT] += w.p * K;
        }
    }
    if (op == CAS) {
        int *all = gbuf, winner = -1;
        OK(MPI_Gather(&cas_r0, 1, MPI_INT, all, 1, MPI_INT, 0, w.comm));
        for (int o = 0; o < w.p && w.me == 0; o++)
            if (all[o] == 0) {
                CHECK(winner < 0, "%s: ranks %d and %d both won the swap", cname, winner, o);
                winner = o;
            }
        for (int o = 0; o < w.p && w.me == 0; o++)
            CHECK(o == winner || all[o] == winner + 1, "%s: rank %d fetched %d, winner %d", cname,
                  o, all[o], winner);
        if (w.me == 0) {
            CHECK(winner >= 0, "%s: nobody won the swap", cname);
            want[CAS_AT] = winner + 1;
        }
    }
    OK(MPI_Win_lock(MPI_LOCK_SHARED, w.me, 0, w.win));
    for (int i = 0; i < N; i++) {
        double got = getv(w.mem, i);
        if (op == ACC_REPLACE && w.me == 0 && i >= R0_AT && i < R0_AT + R0_N) {
            /* replaced element-atomically: some origin's value */
            int o = 0;
            while (o < w.p && got != contrib(o, i - R0_AT))
                o++;
            CHECK(o < w.p, "%s: element %d is %g, no origin's value", cname, i, got);
        } else
            CHECK(got == want[i], "%s: window element %d is %g, want %g", cname, i, got, want[i]);
    }
    OK(MPI_Win_unlock(w.me, w.win));
}

static void run_case(void)
{
    snprintf(cname, sizeof cname, "%s / %s / %s / %s", op_name[op], sync_name[sy],
             flav_name[w.flavor], T == MPI_INT ? "int" : "double");
    for (int i = 0; i < N; i++) {
        setv(obuf, i, orig_v(w.me, i));
        setv(rbuf, i, SENT);
    }
    for (int j = 0; j < R0_N; j++) {
        setv(c0, j, contrib(w.me, j));
        setv(r0, j, SENT);
    }
    setv(fb, FB_ONE, 1);
    setv(fb, FB_NBO, orig_v(w.me, 0));
    setv(fb, FB_NBR, SENT);
    for (int k = 0; k < K; k++)
        setv(fb, FB_CNT + k, SENT);
    cas_me = w.me + 1;
    cas_zero = 0;
    cas_r0 = cas_nb[0] = cas_nb[1] = SENT;
    cas_nbo = (int)orig_v(w.me, 1);
    cas_good = (int)init_v(right(w.me), 1);
    cas_bad = cas_good + 1;

    /* Stored under an exclusive lock on itself so that the stores are
     * visible to the others' RMA after the barrier (unified model). */
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, w.me, 0, w.win));
    for (int i = 0; i < N; i++)
        setv(w.mem, i, init_v(w.me, i));
    OK(MPI_Win_unlock(w.me, w.win));
    OK(MPI_Barrier(w.comm));

    int tg[2], nt = targets(w.me, tg), nrq = 0;
    MPI_Request rq[2 * (NLAY + 1)];
    MPI_Status st[2 * (NLAY + 1)]; /* not MPI_STATUSES_IGNORE: gcc's array-bound warning */
    switch (sy) {
    case FENCE:
        OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, w.win));
        for (int i = 0; i < nt; i++)
            issue(tg[i], rq, &nrq);
        OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win));
        for (int i = 0; i < nt; i++)
            check_local(tg[i]);
        break;
    case PSCW: {
        /* expose to every origin that targets this rank */
        MPI_Group g, eg, ag;
        int *org = malloc((size_t)w.p * sizeof *org), no = 0;
        CHECK(org != NULL, "out of memory");
        for (int o = 0; o < w.p; o++) {
            int ot[2], n = targets(o, ot);
            if (ot[0] == w.me || (n > 1 && ot[1] == w.me))
                org[no++] = o;
        }
        OK(MPI_Comm_group(w.comm, &g));
        OK(MPI_Group_incl(g, no, org, &eg));
        OK(MPI_Group_incl(g, nt, tg, &ag));
        OK(MPI_Win_post(eg, 0, w.win));
        OK(MPI_Win_start(ag, 0, w.win));
        for (int i = 0; i < nt; i++)
            issue(tg[i], rq, &nrq);
        OK(MPI_Win_complete(w.win));
        for (int i = 0; i < nt; i++)
            check_local(tg[i]);
        /* odd ranks poll the exposure epoch's end with MPI_Win_test */
        if (w.me % 2) {
            int done = 0;
            while (!done)
                OK(MPI_Win_test(w.win, &done));
        } else
            OK(MPI_Win_wait(w.win));
        OK(MPI_Group_free(&ag));
        OK(MPI_Group_free(&eg));
        OK(MPI_Group_free(&g));
        free(org);
        break;
    }
    case LOCK_SHARED:
    case LOCK_EXCL_FLUSH:
        /* one target at a time; results valid after the flush or unlock */
        for (int i = 0; i < nt; i++) {
            int ex = sy == LOCK_EXCL_FLUSH;
            OK(MPI_Win_lock(ex ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, tg[i], 0, w.win));
            nrq = 0;
            issue(tg[i], rq, &nrq);
            OK(MPI_Waitall(nrq, rq, st));
            if (ex) {
                OK(MPI_Win_flush(tg[i], w.win));
                check_local(tg[i]);
            }
            OK(MPI_Win_unlock(tg[i], w.win));
            if (!ex)
                check_local(tg[i]);
        }
        break;
    case LOCKALL_FLUSHALL:
    case LOCKALL_FLUSHLOCAL:
        OK(MPI_Win_lock_all(0, w.win));
        for (int i = 0; i < nt; i++)
            issue(tg[i], rq, &nrq);
        OK(MPI_Waitall(nrq, rq, st));
        if (sy == LOCKALL_FLUSHALL)
            OK(MPI_Win_flush_all(w.win));
        else
            for (int i = 0; i < nt; i++)
                OK(MPI_Win_flush_local(tg[i], w.win));
        for (int i = 0; i < nt; i++)
            check_local(tg[i]);
        OK(MPI_Win_unlock_all(w.win));
        break;
    case NSYNC: break;
    }
    OK(MPI_Barrier(w.comm));
    check_global();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= 20, "contributions (j + 1) << rank need at most 20 ranks");
    MPI_Comm shm;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm));
    obuf = malloc(N * sizeof(double));
    rbuf = malloc(N * sizeof(double));
    c0 = malloc(R0_N * sizeof(double));
    r0 = malloc(R0_N * sizeof(double));
    fb = malloc((FB_CNT + K) * sizeof(double));
    gbuf = malloc((size_t)size * (R0_N + K) * sizeof(double));
    CHECK(obuf && rbuf && c0 && r0 && fb && gbuf, "out of memory");

    int ncases = 0;
    const MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    for (int ti = 0; ti < 2; ti++) {
        T = types[ti];
        es = T == MPI_INT ? sizeof(int) : sizeof(double);
        layouts_make();
        for (int f = 0; f < NFLAV; f++) {
            win_open(f, shm);
            for (op = 0; op < NOPS; op++)
                for (sy = 0; sy < NSYNC; sy++) {
                    int request_op = op == RPUT || op == RGET || op == RACC || op == RGACC;
                    if ((request_op && (sy == FENCE || sy == PSCW)) || (op == CAS && T != MPI_INT))
                        continue;
                    run_case();
                    ncases++;
                }
            win_close();
        }
        layouts_free();
    }

    free(obuf);
    free(rbuf);
    free(c0);
    free(r0);
    free(fb);
    free(gbuf);
    OK(MPI_Comm_free(&shm));
    MPI_Finalize();
    if (rank == 0)
        printf("t_rma_ops: %d cases ok (np %d)\n", ncases, size);
    return 0;
}
