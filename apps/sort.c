/*
 * vmpi-sort - parallel integer sort in the style of the NAS IS kernel.
 *
 * Follows the NAS Parallel Benchmarks report's description of IS: n keys
 * (-n, total over all ranks) in [0, Bmax), Bmax = 2^16 for every n, each
 * key Bmax times the average of four uniform numbers from the NAS linear
 * congruential generator x_{k+1} = 5^13 x_k mod 2^46 (seed 314159265), so
 * the keys are roughly Gaussian. Rank r holds a contiguous slice of the
 * global key sequence (uneven when the rank count does not divide n) and
 * jumps the generator ahead to it, so the keys do not depend on the rank
 * count. -i is the number of ranking iterations per repetition (NAS does
 * 10). As in NAS, iteration `it` first changes two keys (global index it
 * to it, index it + n/2 to Bmax - it) so that no iteration can reuse the
 * previous one's answer; `it` keeps counting across the repetitions.
 *
 * One ranking iteration (bucket ranking): count keys per bucket (1024
 * buckets of 64 key values), MPI_Allreduce of the counts, give each rank a
 * contiguous range of buckets holding about n/P keys (the same computation
 * everywhere), MPI_Alltoall of the send counts, MPI_Alltoallv of the keys,
 * then a counting sort of the received keys over the rank's key range; a
 * key value's global rank is the keys before the rank's range (from the
 * bucket totals) plus its local prefix count.
 *
 * Verification after the timed repetitions, on the last iteration's output:
 * each rank's keys are in order, the ranks' ranges are in order (ranks that
 * received no key skipped), there are n keys, the global histogram of the
 * sorted keys equals that of the keys generated (the same multiset: nothing
 * lost, duplicated or altered), and every key value's computed global rank
 * equals its position from the histogram of the keys generated.
 */
#include "app_common.h"

#define KEY_BITS 16
#define MAX_KEY (1L << KEY_BITS)
#define BUCKET_SHIFT 6
#define NBUCKETS (MAX_KEY >> BUCKET_SHIFT)
#define MAX_N 1000000000L /* MPI_Alltoallv's counts are ints */
#define LCG_A UINT64_C(1220703125) /* 5^13 */
#define LCG_SEED UINT64_C(314159265)
#define MASK46 ((UINT64_C(1) << 46) - 1)

static const struct app_info APP = {
    "sort",
    "  -n N     keys in all, at most 1000000000 (default 524288)\n"
    "  -i ITERS ranking iterations per repetition (default 10)\n",
    1L << 19, 10, 5};

/* a x mod 2^46: unsigned products wrap mod 2^64, a multiple of 2^46. */
static uint64_t mul46(uint64_t a, uint64_t x)
{
    return (a * x) & MASK46;
}

/* The generator's state k steps after x: a^k x, by repeated squaring. */
static uint64_t jump46(uint64_t x, uint64_t k)
{
    uint64_t a = LCG_A;

    for (; k; k >>= 1) {
        if (k & 1)
            x = mul46(a, x);
        a = mul46(a, a);
    }
    return x;
}

/* Keys [first, first + count) of the global sequence; key i uses steps 4i+1..4i+4. */
static void generate(int *keys, long first, long count)
{
    uint64_t x = jump46(LCG_SEED, 4 * (uint64_t)first);

    for (long i = 0; i < count; i++) {
        uint64_t sum = 0;

        for (int k = 0; k < 4; k++) {
            x = mul46(LCG_A, x);
            sum += x;
        }
        /* Bmax * sum / (4 * 2^46), exactly: the four x's are 46-bit integers. */
        keys[i] = (int)(sum >> (48 - KEY_BITS));
    }
    /* A jump that disagreed with stepping would make the keys depend on the rank count. */
    if (x != jump46(LCG_SEED, 4 * (uint64_t)(first + count)))
        app_fail(&APP, "generator jump-ahead disagrees with stepping");
}

struct sorter {
    int nranks, rank;
    long n, first, count;   /* my slice of the global keys */
    int *keys;              /* my keys (input) */
    int *pack;              /* them grouped by destination rank */
    int *recv;              /* keys received for my range */
    int *sorted;            /* them in order */
    long nrecv, cap;        /* keys received, room in recv and sorted */
    long *bcount, *btotal;  /* per bucket: mine, all ranks' */
    int *owner;             /* rank of each bucket */
    int *scount, *rcount, *sdispl, *rdispl, *fill;
    long kmin, kmax;        /* my key range [kmin, kmax) */
    long before;            /* keys of all ranks below kmin */
    long *start;            /* per key value in my range: its global rank */
};

/* Room for the keys received; it only grows, so steady iterations do not allocate. */
static void reserve(struct sorter *s, long need)
{
    if (need <= s->cap)
        return;
    free(s->recv);
    free(s->sorted);
    s->cap = need + need / 8;
    s->recv = app_alloc(&APP, (size_t)s->cap, sizeof *s->recv);
    s->sorted = app_alloc(&APP, (size_t)s->cap, sizeof *s->sorted);
}

static void rank_keys(struct sorter *s)
{
    int P = s->nranks;

    memset(s->bcount, 0, NBUCKETS * sizeof *s->bcount);
    for (long i = 0; i < s->count; i++)
        s->bcount[s->keys[i] >> BUCKET_SHIFT]++;
    MPI_Allreduce(s->bcount, s->btotal, NBUCKETS, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);

    /* Bucket b goes to the rank whose share of n holds the bucket's first key. */
    long prefix = 0;
    s->kmin = MAX_KEY;
    s->kmax = 0;
    s->before = 0;
    for (long b = 0; b < NBUCKETS; b++) {
        int o = (int)(prefix * P / s->n);

        s->owner[b] = o < P ? o : P - 1;
        if (s->owner[b] == s->rank) {
            if (s->kmin == MAX_KEY) {
                s->kmin = b << BUCKET_SHIFT;
                s->before = prefix;
            }
            s->kmax = (b + 1) << BUCKET_SHIFT;
        }
        prefix += s->btotal[b];
    }
    if (s->kmin == MAX_KEY)
        s->kmin = s->kmax = 0;

    memset(s->scount, 0, (size_t)P * sizeof *s->scount);
    for (long b = 0; b < NBUCKETS; b++)
        s->scount[s->owner[b]] += (int)s->bcount[b];
    MPI_Alltoall(s->scount, 1, MPI_INT, s->rcount, 1, MPI_INT, MPI_COMM_WORLD);
    s->nrecv = 0;
    for (int r = 0; r < P; r++) {
        s->sdispl[r] = r ? s->sdispl[r - 1] + s->scount[r - 1] : 0;
        s->rdispl[r] = (int)s->nrecv;
        s->nrecv += s->rcount[r];
    }
    memcpy(s->fill, s->sdispl, (size_t)P * sizeof *s->fill);
    for (long i = 0; i < s->count; i++)
        s->pack[s->fill[s->owner[s->keys[i] >> BUCKET_SHIFT]]++] = s->keys[i];
    reserve(s, s->nrecv);
    MPI_Alltoallv(s->pack, s->scount, s->sdispl, MPI_INT, s->recv, s->rcount, s->rdispl,
                  MPI_INT, MPI_COMM_WORLD);

    /* Counting sort over [kmin, kmax): start[] becomes each value's global rank. */
    long range = s->kmax - s->kmin;
    memset(s->start, 0, (size_t)range * sizeof *s->start);
    for (long i = 0; i < s->nrecv; i++) {
        long k = s->recv[i] - s->kmin;

        if (k < 0 || k >= range)
            app_fail(&APP, "received key %d outside this rank's range [%ld, %ld)",
                     s->recv[i], s->kmin, s->kmax);
        s->start[k]++;
    }
    long at = 0;
    for (long k = 0; k < range; k++) {
        long c = s->start[k];

        for (long j = 0; j < c; j++)
            s->sorted[at + j] = (int)(s->kmin + k);
        s->start[k] = s->before + at;
        at += c;
    }
}

/* NAS's per-iteration change of two keys, on whichever rank holds them. */
static void modify(struct sorter *s, long it)
{
    long g[2] = {it % s->n, (it + s->n / 2) % s->n};
    int v[2] = {(int)(it % MAX_KEY), (int)((MAX_KEY - it % MAX_KEY) % MAX_KEY)};

    for (int k = 0; k < 2; k++)
        if (g[k] >= s->first && g[k] < s->first + s->count)
            s->keys[g[k] - s->first] = v[k];
}

static void verify(struct sorter *s)
{
    long *hin = app_alloc(&APP, MAX_KEY, sizeof *hin);
    long *hout = app_alloc(&APP, MAX_KEY, sizeof *hout);
    long *gin = app_alloc(&APP, MAX_KEY, sizeof *gin);
    long *gout = app_alloc(&APP, MAX_KEY, sizeof *gout);
    long edge[3], *edges = app_alloc(&APP, 3 * (size_t)s->nranks, sizeof *edges);
    long total = 0, last = -1, pos = 0;
    long bad = 0, all_bad = 0, first_bad = 0, bad_pos = 0;

    for (long i = 1; i < s->nrecv; i++)
        if (s->sorted[i - 1] > s->sorted[i])
            app_fail(&APP, "keys %ld and %ld out of order (%d > %d)", i - 1, i,
                     s->sorted[i - 1], s->sorted[i]);
    /* Count, first and last key of every rank; a rank without keys has no edges. */
    edge[0] = s->nrecv;
    edge[1] = s->nrecv ? s->sorted[0] : 0;
    edge[2] = s->nrecv ? s->sorted[s->nrecv - 1] : 0;
    MPI_Allgather(edge, 3, MPI_LONG, edges, 3, MPI_LONG, MPI_COMM_WORLD);
    for (int r = 0; r < s->nranks; r++) {
        if (edges[3 * r] == 0)
            continue;
        if (edges[3 * r + 1] < last)
            app_fail(&APP, "rank %d starts at key %ld below the previous rank's last %ld", r,
                     edges[3 * r + 1], last);
        last = edges[3 * r + 2];
        total += edges[3 * r];
    }
    if (total != s->n)
        app_fail(&APP, "%ld keys after sorting, %ld generated", total, s->n);

    memset(hin, 0, MAX_KEY * sizeof *hin);
    memset(hout, 0, MAX_KEY * sizeof *hout);
    for (long i = 0; i < s->count; i++)
        hin[s->keys[i]]++;
    for (long i = 0; i < s->nrecv; i++)
        hout[s->sorted[i]]++;
    MPI_Allreduce(hin, gin, MAX_KEY, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(hout, gout, MAX_KEY, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    for (long k = 0; k < MAX_KEY; k++) {
        if (gin[k] != gout[k])
            app_fail(&APP, "key %ld: %ld generated, %ld after sorting", k, gin[k], gout[k]);
        if (k >= s->kmin && k < s->kmax && s->start[k - s->kmin] != pos && bad++ == 0) {
            first_bad = k;
            bad_pos = pos;
        }
        pos += gin[k];
    }
    /* The rank check is local: agree on it before rank 0 reports success. */
    MPI_Allreduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (bad)
        app_fail(&APP, "key %ld ranked %ld, its position is %ld (%ld values misranked here)",
                 first_bad, s->start[first_bad - s->kmin], bad_pos, bad);
    if (all_bad)
        app_fail(&APP, "%ld key values misranked on other ranks", all_bad);
    free(hin);
    free(hout);
    free(gin);
    free(gout);
    free(edges);
}

int main(int argc, char **argv)
{
    struct app_opts o;
    struct sorter s;
    int rc;

    rc = app_start(&APP, &argc, &argv, &o);
    if (rc >= 0)
        return rc;
    memset(&s, 0, sizeof s);
    MPI_Comm_size(MPI_COMM_WORLD, &s.nranks);
    MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
    if (o.size > MAX_N)
        return app_reject(&APP, "-n %ld: at most %ld keys", o.size, MAX_N);
    s.n = o.size;
    s.first = s.n * s.rank / s.nranks;
    s.count = s.n * (s.rank + 1) / s.nranks - s.first;
    s.keys = app_alloc(&APP, (size_t)s.count, sizeof *s.keys);
    s.pack = app_alloc(&APP, (size_t)s.count, sizeof *s.pack);
    s.bcount = app_alloc(&APP, NBUCKETS, sizeof *s.bcount);
    s.btotal = app_alloc(&APP, NBUCKETS, sizeof *s.btotal);
    s.owner = app_alloc(&APP, NBUCKETS, sizeof *s.owner);
    s.start = app_alloc(&APP, MAX_KEY, sizeof *s.start);
    s.scount = app_alloc(&APP, (size_t)s.nranks, sizeof(int));
    s.rcount = app_alloc(&APP, (size_t)s.nranks, sizeof(int));
    s.sdispl = app_alloc(&APP, (size_t)s.nranks, sizeof(int));
    s.rdispl = app_alloc(&APP, (size_t)s.nranks, sizeof(int));
    s.fill = app_alloc(&APP, (size_t)s.nranks, sizeof(int));
    generate(s.keys, s.first, s.count);

    /* Repetition -1 is the warm-up; it also sizes the receive buffers. */
    double *times = app_alloc(&APP, (size_t)o.reps, sizeof *times);
    long it = 0;
    for (long r = -1; r < o.reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();

        for (long i = 0; i < o.iters; i++) {
            modify(&s, ++it);
            rank_keys(&s);
        }
        double t = app_elapsed_max(t0);
        if (r >= 0)
            times[r] = t;
    }
    verify(&s);

    char what[96];
    snprintf(what, sizeof what, "NAS IS-style bucket sort of %ld keys in [0, %ld)", s.n,
             MAX_KEY);
    app_report(&APP, &o, what, times, (double)s.n * (double)o.iters / 1e6, "Mkeys/s");
    free(times);
    free(s.keys);
    free(s.pack);
    free(s.recv);
    free(s.sorted);
    free(s.bcount);
    free(s.btotal);
    free(s.owner);
    free(s.start);
    free(s.scount);
    free(s.rcount);
    free(s.sdispl);
    free(s.rdispl);
    free(s.fill);
    MPI_Finalize();
    return 0;
}
