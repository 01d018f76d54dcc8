/*
 * vmpi-sort - parallel integer sort in the style of the NAS IS kernel.
 *
 * Follows the NAS Parallel Benchmarks report's description of IS: n keys
 * (-n, total over all ranks) in [0, 2^16), each the scaled average of four
 * uniform numbers from the NAS linear congruential generator
 * x_{k+1} = 5^13 x_k mod 2^46 (seed 314159265), so the keys are roughly
 * Gaussian; then -i ranking iterations. Rank r holds a contiguous slice of
 * the global key sequence (the generator jumps ahead to the slice), so the
 * keys do not depend on the rank count. As in NAS, iteration `it` first
 * changes two keys (global index it to it, index it + n/2 to 2^16 - it) so
 * that no iteration can reuse the previous one's answer.
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
 * each rank's keys are in order, the ranks' ranges are in order, there are
 * n keys, the global histogram of the sorted keys equals that of the keys
 * generated (the same multiset: nothing lost, duplicated or altered), and
 * every key value's computed global rank equals its position from the
 * global histogram.
 */
#include "app_common.h"

#define KEY_BITS 16
#define MAX_KEY (1L << KEY_BITS)
#define BUCKET_SHIFT 6
#define NBUCKETS (MAX_KEY >> BUCKET_SHIFT)
#define MASK46 ((UINT64_C(1) << 46) - 1)

static const struct app_info APP = {
    "sort",
    "  -n N     keys in all (default 1048576)\n"
    "  -i ITERS ranking iterations per repetition (default 5)\n",
    1L << 20, 5, 5};

/* a * x mod 2^46 without overflow: split x at bit 23 (a < 2^31). */
static uint64_t mul46(uint64_t a, uint64_t x)
{
    uint64_t hi = (a * (x >> 23)) & ((UINT64_C(1) << 23) - 1);

    return ((hi << 23) + a * (x & ((UINT64_C(1) << 23) - 1))) & MASK46;
}

/* The generator's state after k steps from x: a^k x by squaring. */
static uint64_t jump46(uint64_t x, uint64_t k)
{
    uint64_t a = 1220703125; /* 5^13 */

    for (; k; k >>= 1) {
        if (k & 1)
            x = mul46(a, x);
        a = mul46(a, a);
    }
    return x;
}

/* Keys [first, first + count) of the global sequence. */
static void generate(int *keys, long first, long count)
{
    uint64_t x = jump46(314159265, 4 * (uint64_t)first);
    const double scale = (double)MAX_KEY / 4.0 / (double)(UINT64_C(1) << 46);

    for (long i = 0; i < count; i++) {
        uint64_t sum = 0;

        for (int k = 0; k < 4; k++) {
            x = mul46(1220703125, x);
            sum += x;
        }
        keys[i] = (int)((double)sum * scale);
    }
}

struct sorter {
    int nranks, rank;
    long n, first, count;   /* my slice of the global keys */
    int *keys;              /* my keys (input) */
    int *recv;              /* keys received for my range */
    int *sorted;            /* them in order */
    long nrecv;
    long *bcount, *btotal;  /* per bucket: mine, all ranks' */
    int *owner;             /* rank of each bucket */
    int *scount, *rcount, *sdispl, *rdispl, *fill;
    int *pack;
    long kmin, kmax;        /* my key range [kmin, kmax) */
    long before;            /* keys of all ranks below kmin */
    long *start;            /* per key value in my range: its global rank */
};

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
    free(s->recv);
    free(s->sorted);
    s->recv = app_alloc(&APP, (size_t)s->nrecv, sizeof *s->recv);
    s->sorted = app_alloc(&APP, (size_t)s->nrecv, sizeof *s->sorted);
    MPI_Alltoallv(s->pack, s->scount, s->sdispl, MPI_INT, s->recv, s->rcount, s->rdispl,
                  MPI_INT, MPI_COMM_WORLD);

    /* Counting sort over [kmin, kmax): start[] becomes each value's global rank. */
    long range = s->kmax - s->kmin;
    memset(s->start, 0, MAX_KEY * sizeof *s->start);
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
    long total = 0;

    for (long i = 1; i < s->nrecv; i++)
        if (s->sorted[i - 1] > s->sorted[i])
            app_fail(&APP, "keys %ld and %ld out of order (%d > %d)", i - 1, i,
                     s->sorted[i - 1], s->sorted[i]);
    edge[0] = s->nrecv;
    edge[1] = s->nrecv ? s->sorted[0] : 0;
    edge[2] = s->nrecv ? s->sorted[s->nrecv - 1] : 0;
    MPI_Allgather(edge, 3, MPI_LONG, edges, 3, MPI_LONG, MPI_COMM_WORLD);
    long last = -1;
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
    long pos = 0;
    for (long k = 0; k < MAX_KEY; k++) {
        if (gin[k] != gout[k])
            app_fail(&APP, "key %ld: %ld generated, %ld after sorting", k, gin[k], gout[k]);
        if (k >= s->kmin && k < s->kmax && s->start[k - s->kmin] != pos)
            app_fail(&APP, "key %ld ranked %ld, its position is %ld", k,
                     s->start[k - s->kmin], pos);
        pos += gin[k];
    }
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
    /* Counts and displacements of MPI_Alltoallv are ints. */
    if (o.size > 1000000000L)
        return app_reject(&APP, "-n %ld: at most 1000000000 keys", o.size);
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
