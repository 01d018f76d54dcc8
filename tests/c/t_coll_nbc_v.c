/* np: 4 1 2 3 8 9 */
/* vms: v2 */
/* (4 first: the VM variant runs with 4 ranks, two per VM) */
/* The non-blocking collectives with per-rank blocks, reduce_scatter and the
 * scans: Igather(v), Iscatter(v), Iallgatherv, Ialltoallv/w,
 * Ireduce_scatter(_block), Iscan, Iexscan, each against its blocking twin
 * on the same input (and the scans also against a local reference), on
 * MPI_COMM_WORLD and on a communicator in reversed rank order; counts 0, 1,
 * 7 and 20000 ints (rendezvous), a non-contiguous receive type (ints 8 bytes
 * apart, with the gaps checked untouched), MPI_IN_PLACE, a non-commutative
 * user op. Then all of them outstanding at once on two communicators,
 * completed in reverse order, and the argument errors. With 8 ranks or
 * more, Igather and Iscatter of small blocks take the binomial tree. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_check.h"

static MPI_Datatype sint;  /* an int every 8 bytes: non-contiguous */
static MPI_Datatype mat;   /* a 2x2 matrix of ints (mat_mul, non-commutative) */
static MPI_Op mat_mul;

static const int counts[] = {0, 1, 7, 20000};
#define NCOUNTS 4
#define GAP (-7777) /* what the gaps of sint buffers hold */

static int val(int r, int i, int salt)
{
    uint32_t x = (uint32_t)r * 2654435761u ^ (uint32_t)i * 40503u ^ (uint32_t)salt * 97u;
    x ^= x >> 15;
    return (int)(x % 1000) - 500;
}

/* inout = in x inout (2x2 int matrices, wrapping): associative only. */
static void mat_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const unsigned *a = in;
    unsigned *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        unsigned c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                         a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
        memcpy(b, c, sizeof c);
    }
}

static void wait1(MPI_Request *r)
{
    OK(MPI_Wait(r, MPI_STATUS_IGNORE));
    CHECK(*r == MPI_REQUEST_NULL, "request not reset");
}

/* n ints of type t (stride 1 or 2 ints) */
static int stride(MPI_Datatype t)
{
    return t == sint ? 2 : 1;
}

static int *ibuf(size_t n, MPI_Datatype t)
{
    size_t len = n * (size_t)stride(t) + 1;
    int *b = malloc(len * sizeof *b);
    CHECK(b, "out of memory");
    for (size_t i = 0; i < len; i++)
        b[i] = GAP;
    return b;
}

static void fill(int *b, size_t n, MPI_Datatype t, int r, int salt)
{
    for (size_t i = 0; i < n; i++)
        b[i * (size_t)stride(t)] = val(r, (int)i, salt);
}

static void same(const int *a, const int *b, size_t n, MPI_Datatype t, const char *what,
                 int cnt)
{
    size_t len = n * (size_t)stride(t) + 1;
    for (size_t i = 0; i < len; i++)
        CHECK(a[i] == b[i], "%s (count %d): int %zu is %d, blocking gives %d", what, cnt, i, a[i],
              b[i]);
}

/* ---- gather and scatter ------------------------------------------------ */

static void t_gather(MPI_Comm comm, int n, MPI_Datatype rt, int root, int in_place)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *s = ibuf((size_t)n, MPI_INT), *a = ibuf((size_t)n * size, rt),
        *b = ibuf((size_t)n * size, rt);
    fill(s, (size_t)n, MPI_INT, rank, 1);
    const void *sb = s;
    if (in_place && rank == root) {
        for (int i = 0; i < n; i++)
            a[((size_t)rank * n + i) * stride(rt)] = b[((size_t)rank * n + i) * stride(rt)] = s[i];
        sb = MPI_IN_PLACE;
    }
    MPI_Request r;
    OK(MPI_Igather(sb, n, MPI_INT, a, n, rt, root, comm, &r));
    wait1(&r);
    OK(MPI_Gather(sb, n, MPI_INT, b, n, rt, root, comm));
    if (rank == root) {
        same(a, b, (size_t)n * size, rt, "MPI_Igather", n);
        for (int i = 0; i < size && n; i++) /* and the data is there */
            CHECK(a[(size_t)i * n * stride(rt)] == val(i, 0, 1), "Igather block %d", i);
    }

    /* scatter the gathered blocks back */
    int *x = ibuf((size_t)n, MPI_INT), *y = ibuf((size_t)n, MPI_INT);
    void *rb = x, *rb2 = y;
    if (in_place && rank == root)
        rb = rb2 = MPI_IN_PLACE;
    OK(MPI_Iscatter(b, n, rt, rb, n, MPI_INT, root, comm, &r));
    wait1(&r);
    OK(MPI_Scatter(b, n, rt, rb2, n, MPI_INT, root, comm));
    if (rb != MPI_IN_PLACE) {
        same(x, y, (size_t)n, MPI_INT, "MPI_Iscatter", n);
        same(x, s, (size_t)n, MPI_INT, "MPI_Iscatter round trip", n);
    }
    free(s), free(a), free(b), free(x), free(y);
}

/* Block sizes that differ per rank, some 0; displacements in reverse rank
 * order with a gap of one element. */
static void vlayout(int size, int n, int *cnt, int *displs)
{
    int at = 0;
    for (int i = size - 1; i >= 0; i--) {
        cnt[i] = n == 0 || i % 3 == 1 ? 0 : n + i;
        displs[i] = at;
        at += cnt[i] + 1;
    }
}

/* The ints a vlayout spans. */
static int vtotal(const int *cnt, const int *displs)
{
    return displs[0] + cnt[0] + 1;
}

static void t_gatherv(MPI_Comm comm, int n, MPI_Datatype rt, int root, int in_place)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int cnt[64], displs[64];
    vlayout(size, n, cnt, displs);
    int tot = vtotal(cnt, displs);
    int me = cnt[rank];
    int *s = ibuf((size_t)me, MPI_INT), *a = ibuf((size_t)tot, rt), *b = ibuf((size_t)tot, rt);
    fill(s, (size_t)me, MPI_INT, rank, 2);
    const void *sb = s;
    if (in_place && rank == root) {
        for (int i = 0; i < me; i++)
            a[(size_t)(displs[rank] + i) * stride(rt)] =
                b[(size_t)(displs[rank] + i) * stride(rt)] = s[i];
        sb = MPI_IN_PLACE;
    }
    MPI_Request r;
    OK(MPI_Igatherv(sb, me, MPI_INT, a, cnt, displs, rt, root, comm, &r));
    wait1(&r);
    OK(MPI_Gatherv(sb, me, MPI_INT, b, cnt, displs, rt, root, comm));
    if (rank == root)
        same(a, b, (size_t)tot, rt, "MPI_Igatherv", n);

    int *x = ibuf((size_t)me, MPI_INT), *y = ibuf((size_t)me, MPI_INT);
    void *rb = x, *rb2 = y;
    if (in_place && rank == root)
        rb = rb2 = MPI_IN_PLACE;
    OK(MPI_Iscatterv(b, cnt, displs, rt, rb, me, MPI_INT, root, comm, &r));
    wait1(&r);
    OK(MPI_Scatterv(b, cnt, displs, rt, rb2, me, MPI_INT, root, comm));
    if (rb != MPI_IN_PLACE) {
        same(x, y, (size_t)me, MPI_INT, "MPI_Iscatterv", n);
        same(x, s, (size_t)me, MPI_INT, "MPI_Iscatterv round trip", n);
    }
    free(s), free(a), free(b), free(x), free(y);
}

/* ---- allgatherv, alltoallv, alltoallw ----------------------------------- */

static void t_allgatherv(MPI_Comm comm, int n, MPI_Datatype rt, int in_place)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int cnt[64], displs[64];
    vlayout(size, n, cnt, displs);
    int tot = vtotal(cnt, displs), me = cnt[rank];
    int *s = ibuf((size_t)me, MPI_INT), *a = ibuf((size_t)tot, rt), *b = ibuf((size_t)tot, rt);
    fill(s, (size_t)me, MPI_INT, rank, 3);
    const void *sb = s;
    if (in_place) {
        for (int i = 0; i < me; i++)
            a[(size_t)(displs[rank] + i) * stride(rt)] =
                b[(size_t)(displs[rank] + i) * stride(rt)] = s[i];
        sb = MPI_IN_PLACE;
    }
    MPI_Request r;
    OK(MPI_Iallgatherv(sb, me, MPI_INT, a, cnt, displs, rt, comm, &r));
    wait1(&r);
    OK(MPI_Allgatherv(sb, me, MPI_INT, b, cnt, displs, rt, comm));
    same(a, b, (size_t)tot, rt, "MPI_Iallgatherv", n);
    for (int i = 0; i < size; i++)
        if (cnt[i])
            CHECK(a[(size_t)(displs[i] + cnt[i] - 1) * stride(rt)] == val(i, cnt[i] - 1, 3),
                  "Iallgatherv block %d", i);
    free(s), free(a), free(b);
}

/* Rank a sends c(a, b) ints to rank b. */
static int c2(int a, int b, int n)
{
    return n == 0 || (a + b) % 3 == 0 ? 0 : n + a + 2 * b;
}

static void t_alltoallv(MPI_Comm comm, int n, MPI_Datatype rt, int in_place)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int sc[64], sd[64], rc[64], rd[64], st = 0, rtot = 0;
    for (int i = size - 1; i >= 0; i--) {
        sc[i] = c2(rank, i, n);
        /* in place, a pair exchanges the same count both ways */
        rc[i] = in_place ? c2(i, rank, n) + c2(rank, i, n) : c2(i, rank, n);
        sd[i] = st;
        rd[i] = rtot;
        st += sc[i] + 1;
        rtot += rc[i] + 2;
    }
    int *s = ibuf((size_t)st, MPI_INT), *a = ibuf((size_t)rtot + 1, rt),
        *b = ibuf((size_t)rtot + 1, rt);
    fill(s, (size_t)st, MPI_INT, rank, 4);
    const void *sb = s;
    if (in_place) {
        fill(a, (size_t)rtot, rt, rank, 4);
        fill(b, (size_t)rtot, rt, rank, 4);
        sb = MPI_IN_PLACE;
    }
    MPI_Request r;
    OK(MPI_Ialltoallv(sb, sc, sd, MPI_INT, a, rc, rd, rt, comm, &r));
    wait1(&r);
    OK(MPI_Alltoallv(sb, sc, sd, MPI_INT, b, rc, rd, rt, comm));
    same(a, b, (size_t)rtot, rt, "MPI_Ialltoallv", n);

    /* the same as alltoallw: byte displacements, a type per peer */
    MPI_Datatype sts[64], rts[64];
    int sdb[64], rdb[64];
    for (int i = 0; i < size; i++) {
        sts[i] = MPI_INT;
        rts[i] = rt;
        sdb[i] = sd[i] * (int)sizeof(int);
        rdb[i] = rd[i] * stride(rt) * (int)sizeof(int);
    }
    int *w = ibuf((size_t)rtot + 1, rt);
    if (in_place)
        fill(w, (size_t)rtot, rt, rank, 4);
    OK(MPI_Ialltoallw(sb, sc, sdb, sts, w, rc, rdb, rts, comm, &r));
    wait1(&r);
    same(w, b, (size_t)rtot, rt, "MPI_Ialltoallw", n);
    free(s), free(a), free(b), free(w);
}

/* ---- reduce_scatter and scans -------------------------------------------- */

static void t_redscat(MPI_Comm comm, int n, MPI_Datatype t, int in_place)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int cnt[64], tot = 0;
    for (int i = 0; i < size; i++)
        tot += cnt[i] = n == 0 || i % 3 == 1 ? 0 : n + i;
    size_t len = (size_t)tot + (size_t)n * size; /* also the block form's */
    int *s = ibuf(len, t), *a = ibuf(len, t), *b = ibuf(len, t);
    fill(s, (size_t)tot, t, rank, 5);
    const void *sb = s;
    if (in_place) {
        fill(a, (size_t)tot, t, rank, 5);
        fill(b, (size_t)tot, t, rank, 5);
        sb = MPI_IN_PLACE;
    }
    MPI_Request r;
    OK(MPI_Ireduce_scatter(sb, a, cnt, t, MPI_SUM, comm, &r));
    wait1(&r);
    OK(MPI_Reduce_scatter(sb, b, cnt, t, MPI_SUM, comm));
    same(a, b, (size_t)cnt[rank], t, "MPI_Ireduce_scatter", n);
    int start = 0;
    for (int i = 0; i < rank; i++)
        start += cnt[i];
    for (int i = 0; i < cnt[rank]; i++) {
        int want = 0;
        for (int k = 0; k < size; k++)
            want += val(k, start + i, 5);
        CHECK(a[(size_t)i * stride(t)] == want, "Ireduce_scatter element %d", i);
    }

    /* block form */
    if (in_place) {
        fill(a, (size_t)n * size, t, rank, 6);
        fill(b, (size_t)n * size, t, rank, 6);
    } else {
        fill(s, (size_t)n * size, t, rank, 6);
    }
    OK(MPI_Ireduce_scatter_block(sb, a, n, t, MPI_SUM, comm, &r));
    wait1(&r);
    OK(MPI_Reduce_scatter_block(sb, b, n, t, MPI_SUM, comm));
    same(a, b, (size_t)n, t, "MPI_Ireduce_scatter_block", n);
    free(s), free(a), free(b);
}

/* The non-commutative op: reduce_scatter and scans combine in rank order. */
static void t_noncommut(MPI_Comm comm, int n)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int tot = n * size;
    int *s = ibuf((size_t)4 * tot, MPI_INT), *a = ibuf((size_t)4 * tot, MPI_INT),
        *b = ibuf((size_t)4 * tot, MPI_INT);
    fill(s, (size_t)4 * tot, MPI_INT, rank, 7);
    MPI_Request r;
    OK(MPI_Ireduce_scatter_block(s, a, n, mat, mat_mul, comm, &r));
    wait1(&r);
    OK(MPI_Reduce_scatter_block(s, b, n, mat, mat_mul, comm));
    same(a, b, (size_t)4 * n, MPI_INT, "MPI_Ireduce_scatter_block (non-commutative)", n);
    int cnt[64];
    for (int i = 0; i < size; i++)
        cnt[i] = n;
    OK(MPI_Ireduce_scatter(s, a, cnt, mat, mat_mul, comm, &r));
    wait1(&r);
    same(a, b, (size_t)4 * n, MPI_INT, "MPI_Ireduce_scatter (non-commutative)", n);
    OK(MPI_Iscan(s, a, n, mat, mat_mul, comm, &r));
    wait1(&r);
    /* reference: s_0 x s_1 x ... x s_rank, element by element */
    for (int e = 0; e < n; e++) {
        unsigned acc[4], m[4];
        for (int k = 0; k <= rank; k++) {
            for (int j = 0; j < 4; j++)
                m[j] = (unsigned)val(k, 4 * e + j, 7);
            if (k == 0) {
                memcpy(acc, m, sizeof acc);
            } else {
                int one = 1;
                mat_fn(acc, m, &one, NULL);
                memcpy(acc, m, sizeof acc);
            }
        }
        CHECK(memcmp(acc, a + 4 * e, sizeof acc) == 0, "Iscan (non-commutative) element %d", e);
    }
    OK(MPI_Scan(s, b, n, mat, mat_mul, comm));
    same(a, b, (size_t)4 * n, MPI_INT, "MPI_Iscan (non-commutative)", n);
    memcpy(a, b, sizeof(int) * (size_t)(4 * tot + 1));
    OK(MPI_Iexscan(s, a, n, mat, mat_mul, comm, &r));
    wait1(&r);
    OK(MPI_Exscan(s, b, n, mat, mat_mul, comm));
    if (rank > 0)
        same(a, b, (size_t)4 * n, MPI_INT, "MPI_Iexscan (non-commutative)", n);
    free(s), free(a), free(b);
}

static void t_scan(MPI_Comm comm, int n, MPI_Datatype t, int in_place)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *s = ibuf((size_t)n, t), *a = ibuf((size_t)n, t), *b = ibuf((size_t)n, t);
    fill(s, (size_t)n, t, rank, 8);
    const void *sb = in_place ? MPI_IN_PLACE : s;
    for (int ex = 0; ex < 2; ex++) {
        if (in_place) {
            fill(a, (size_t)n, t, rank, 8);
            fill(b, (size_t)n, t, rank, 8);
        }
        MPI_Request r;
        if (ex) {
            OK(MPI_Iexscan(sb, a, n, t, MPI_SUM, comm, &r));
            wait1(&r);
            OK(MPI_Exscan(sb, b, n, t, MPI_SUM, comm));
        } else {
            OK(MPI_Iscan(sb, a, n, t, MPI_SUM, comm, &r));
            wait1(&r);
            OK(MPI_Scan(sb, b, n, t, MPI_SUM, comm));
        }
        if (rank > 0 || !ex)
            same(a, b, (size_t)n, t, ex ? "MPI_Iexscan" : "MPI_Iscan", n);
        for (int i = 0; i < n && (rank > 0 || !ex); i++) {
            int want = 0;
            for (int k = 0; k < rank + !ex; k++)
                want += val(k, i, 8);
            CHECK(a[(size_t)i * stride(t)] == want, "%s element %d: %d, want %d",
                  ex ? "Iexscan" : "Iscan", i, a[(size_t)i * stride(t)], want);
        }
    }
    free(s), free(a), free(b);
}

static void run_all(MPI_Comm comm)
{
    int size;
    MPI_Comm_size(comm, &size);
    MPI_Datatype types[2] = {MPI_INT, sint};
    for (int ci = 0; ci < NCOUNTS; ci++) {
        int n = counts[ci];
        for (int ti = 0; ti < 2; ti++)
            for (int ip = 0; ip < 2; ip++) {
                MPI_Datatype t = types[ti];
                /* every root for small counts, two for the large one */
                for (int root = 0; root < size; root++) {
                    if (n > 100 && root != 0 && root != size - 1)
                        continue;
                    t_gather(comm, n, t, root, ip);
                    t_gatherv(comm, n, t, root, ip);
                }
                t_allgatherv(comm, n, t, ip);
                t_alltoallv(comm, n, t, ip);
                t_redscat(comm, n, t, ip);
                t_scan(comm, n, t, ip);
            }
        t_noncommut(comm, n > 100 ? 500 : n);
    }
}

/* ---- several outstanding at once ----------------------------------------- */

enum { NOPS = 8 };

/* Starts the ops on comm with inputs from salt; results in out[k]. */
static void start_ops(MPI_Comm comm, int n, int salt, int **in, int **out, MPI_Request *r)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    static int cnt[64], displs[64];
    for (int i = 0; i < size; i++) {
        cnt[i] = n;
        displs[i] = (size - 1 - i) * n;
    }
    for (int k = 0; k < NOPS; k++) {
        in[k] = ibuf((size_t)n * size, MPI_INT);
        out[k] = ibuf((size_t)n * size, MPI_INT);
        fill(in[k], (size_t)n * size, MPI_INT, rank, salt + k);
    }
    int root = size - 1;
    OK(MPI_Igather(in[0], n, MPI_INT, out[0], n, MPI_INT, root, comm, &r[0]));
    OK(MPI_Iscatterv(in[1], cnt, displs, MPI_INT, out[1], n, MPI_INT, 0, comm, &r[1]));
    OK(MPI_Iallgatherv(in[2], n, MPI_INT, out[2], cnt, displs, MPI_INT, comm, &r[2]));
    OK(MPI_Ialltoallv(in[3], cnt, displs, MPI_INT, out[3], cnt, displs, MPI_INT, comm, &r[3]));
    OK(MPI_Ireduce_scatter_block(in[4], out[4], n, MPI_INT, MPI_SUM, comm, &r[4]));
    OK(MPI_Iscan(in[5], out[5], n, MPI_INT, MPI_SUM, comm, &r[5]));
    OK(MPI_Iexscan(in[6], out[6], n, MPI_INT, MPI_SUM, comm, &r[6]));
    OK(MPI_Igatherv(in[7], n, MPI_INT, out[7], cnt, displs, MPI_INT, 0, comm, &r[7]));
}

static void gaps(int *b, size_t n)
{
    for (size_t i = 0; i <= n; i++)
        b[i] = GAP;
}

static void check_ops(MPI_Comm comm, int n, int **in, int **out)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int cnt[64], displs[64];
    for (int i = 0; i < size; i++) {
        cnt[i] = n;
        displs[i] = (size - 1 - i) * n;
    }
    size_t all = (size_t)n * size;
    int *b = ibuf(all, MPI_INT);
    OK(MPI_Gather(in[0], n, MPI_INT, b, n, MPI_INT, size - 1, comm));
    if (rank == size - 1)
        same(out[0], b, all, MPI_INT, "overlapped MPI_Igather", n);
    gaps(b, all);
    OK(MPI_Scatterv(in[1], cnt, displs, MPI_INT, b, n, MPI_INT, 0, comm));
    same(out[1], b, (size_t)n, MPI_INT, "overlapped MPI_Iscatterv", n);
    gaps(b, all);
    OK(MPI_Allgatherv(in[2], n, MPI_INT, b, cnt, displs, MPI_INT, comm));
    same(out[2], b, all, MPI_INT, "overlapped MPI_Iallgatherv", n);
    gaps(b, all);
    OK(MPI_Alltoallv(in[3], cnt, displs, MPI_INT, b, cnt, displs, MPI_INT, comm));
    same(out[3], b, all, MPI_INT, "overlapped MPI_Ialltoallv", n);
    gaps(b, all);
    OK(MPI_Reduce_scatter_block(in[4], b, n, MPI_INT, MPI_SUM, comm));
    same(out[4], b, (size_t)n, MPI_INT, "overlapped MPI_Ireduce_scatter_block", n);
    gaps(b, all);
    OK(MPI_Scan(in[5], b, n, MPI_INT, MPI_SUM, comm));
    same(out[5], b, (size_t)n, MPI_INT, "overlapped MPI_Iscan", n);
    memcpy(b, out[6], sizeof(int) * (all + 1));
    OK(MPI_Exscan(in[6], b, n, MPI_INT, MPI_SUM, comm));
    same(out[6], b, (size_t)n, MPI_INT, "overlapped MPI_Iexscan", n);
    gaps(b, all);
    OK(MPI_Gatherv(in[7], n, MPI_INT, b, cnt, displs, MPI_INT, 0, comm));
    if (rank == 0)
        same(out[7], b, all, MPI_INT, "overlapped MPI_Igatherv", n);
    free(b);
    for (int k = 0; k < NOPS; k++)
        free(in[k]), free(out[k]);
}

/* All outstanding on two communicators, completed in reverse order (the
 * second communicator's first, each one's last op first). */
static void t_overlap(MPI_Comm c1, MPI_Comm c2, int n)
{
    int *in1[NOPS], *out1[NOPS], *in2[NOPS], *out2[NOPS];
    MPI_Request r1[NOPS], r2[NOPS];
    start_ops(c1, n, 10, in1, out1, r1);
    start_ops(c2, n, 30, in2, out2, r2);
    for (int k = NOPS - 1; k >= 0; k--)
        wait1(&r2[k]);
    for (int k = NOPS - 1; k >= 0; k--)
        wait1(&r1[k]);
    check_ops(c1, n, in1, out1);
    check_ops(c2, n, in2, out2);
}

/* ---- argument errors ----------------------------------------------------- */

static void t_errors(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int buf[256] = {0}, cnt[64], displs[64], neg[64];
    MPI_Datatype ts[64];
    for (int i = 0; i < size; i++) {
        cnt[i] = 1;
        displs[i] = i;
        neg[i] = i == size - 1 ? -1 : 1;
        ts[i] = MPI_INT;
    }
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Comm w = MPI_COMM_WORLD;
    t_expect_err(MPI_Igather(buf, 1, MPI_INT, buf + 64, 1, MPI_INT, size, w, &r), MPI_ERR_ROOT,
                 "MPI_Igather", "Igather root = size");
    t_expect_err(MPI_Igather(buf, 1, MPI_INT, buf + 64, 1, MPI_INT, 0, MPI_COMM_NULL, &r),
                 MPI_ERR_COMM, "MPI_Igather", "Igather MPI_COMM_NULL");
    t_expect_err(MPI_Igather(buf, -1, MPI_INT, buf + 64, 1, MPI_INT, 0, w, &r), MPI_ERR_COUNT,
                 "MPI_Igather", "Igather sendcount -1");
    t_expect_err(MPI_Igather(buf, 1, MPI_INT, buf + 64, 1, MPI_INT, 0, w, NULL), MPI_ERR_ARG,
                 "MPI_Igather", "Igather request NULL");
    if (rank == 0)
        t_expect_err(MPI_Igatherv(buf, 1, MPI_INT, buf + 64, NULL, displs, MPI_INT, 0, w, &r),
                     MPI_ERR_ARG, "MPI_Igatherv", "Igatherv recvcounts NULL at the root");
    else
        t_expect_err(MPI_Igatherv(MPI_IN_PLACE, 1, MPI_INT, NULL, NULL, NULL, MPI_INT, 0, w, &r),
                     MPI_ERR_BUFFER, "MPI_Igatherv", "Igatherv MPI_IN_PLACE off the root");
    t_expect_err(MPI_Iscatter(buf, 1, MPI_DATATYPE_NULL, buf + 64, 1, MPI_DATATYPE_NULL, 0, w,
                              &r),
                 MPI_ERR_TYPE, "MPI_Iscatter", "Iscatter MPI_DATATYPE_NULL");
    if (rank == 0)
        t_expect_err(MPI_Iscatterv(buf, neg, displs, MPI_INT, buf + 64, 1, MPI_INT, 0, w, &r),
                     MPI_ERR_COUNT, "MPI_Iscatterv", "Iscatterv negative sendcounts");
    else
        t_expect_err(MPI_Iscatterv(buf, cnt, displs, MPI_INT, buf + 64, 1, MPI_INT, -1, w, &r),
                     MPI_ERR_ROOT, "MPI_Iscatterv", "Iscatterv root -1");
    t_expect_err(MPI_Iallgatherv(buf, 1, MPI_INT, MPI_IN_PLACE, cnt, displs, MPI_INT, w, &r),
                 MPI_ERR_BUFFER, "MPI_Iallgatherv", "Iallgatherv recvbuf MPI_IN_PLACE");
    t_expect_err(MPI_Iallgatherv(buf, 1, MPI_INT, buf + 64, cnt, NULL, MPI_INT, w, &r),
                 MPI_ERR_ARG, "MPI_Iallgatherv", "Iallgatherv displs NULL");
    t_expect_err(MPI_Iallgatherv(buf + 64 + displs[rank], 1, MPI_INT, buf + 64, cnt, displs,
                                 MPI_INT, w, &r),
                 MPI_ERR_BUFFER, "MPI_Iallgatherv", "Iallgatherv sendbuf at its own block");
    t_expect_err(MPI_Ialltoallv(buf, neg, displs, MPI_INT, buf + 64, cnt, displs, MPI_INT, w, &r),
                 MPI_ERR_COUNT, "MPI_Ialltoallv", "Ialltoallv negative sendcounts");
    t_expect_err(MPI_Ialltoallv(buf, cnt, displs, MPI_INT, buf, cnt, displs, MPI_INT, w, &r),
                 MPI_ERR_BUFFER, "MPI_Ialltoallv", "Ialltoallv sendbuf == recvbuf");
    t_expect_err(MPI_Ialltoallw(buf, cnt, displs, NULL, buf + 64, cnt, displs, ts, w, &r),
                 MPI_ERR_ARG, "MPI_Ialltoallw", "Ialltoallw sendtypes NULL");
    ts[size - 1] = MPI_DATATYPE_NULL;
    t_expect_err(MPI_Ialltoallw(buf, cnt, displs, ts, buf + 64, cnt, displs, ts, w, &r),
                 MPI_ERR_TYPE, "MPI_Ialltoallw", "Ialltoallw a recvtype MPI_DATATYPE_NULL");
    t_expect_err(MPI_Ireduce_scatter(buf, buf + 64, cnt, MPI_INT, MPI_REPLACE, w, &r),
                 MPI_ERR_OP, "MPI_Ireduce_scatter", "Ireduce_scatter MPI_REPLACE");
    t_expect_err(MPI_Ireduce_scatter(buf, buf + 64, NULL, MPI_INT, MPI_SUM, w, &r), MPI_ERR_ARG,
                 "MPI_Ireduce_scatter", "Ireduce_scatter recvcounts NULL");
    t_expect_err(MPI_Ireduce_scatter_block(buf, buf + 64, -2, MPI_INT, MPI_SUM, w, &r),
                 MPI_ERR_COUNT, "MPI_Ireduce_scatter_block", "Ireduce_scatter_block count -2");
    t_expect_err(MPI_Ireduce_scatter_block(buf, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, w, &r),
                 MPI_ERR_BUFFER, "MPI_Ireduce_scatter_block", "recvbuf MPI_IN_PLACE");
    t_expect_err(MPI_Iscan(buf, buf + 64, 1, MPI_DATATYPE_NULL, MPI_SUM, w, &r), MPI_ERR_TYPE,
                 "MPI_Iscan", "Iscan MPI_DATATYPE_NULL");
    t_expect_err(MPI_Iscan(buf, buf, 1, MPI_INT, MPI_SUM, w, &r), MPI_ERR_BUFFER, "MPI_Iscan",
                 "Iscan sendbuf == recvbuf");
    t_expect_err(MPI_Iexscan(buf, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, w, &r), MPI_ERR_BUFFER,
                 "MPI_Iexscan", "Iexscan recvbuf MPI_IN_PLACE");
    t_expect_err(MPI_Iexscan(buf, buf + 64, 1, MPI_FLOAT, MPI_BAND, w, &r), MPI_ERR_OP,
                 "MPI_Iexscan", "Iexscan MPI_BAND on floats");
    CHECK(r == MPI_REQUEST_NULL, "a failed call set the request");
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= 64, "at most 64 ranks");
    OK(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &sint));
    OK(MPI_Type_commit(&sint));
    OK(MPI_Type_contiguous(4, MPI_INT, &mat));
    OK(MPI_Type_commit(&mat));
    OK(MPI_Op_create(mat_fn, 0, &mat_mul));
    MPI_Comm rev;
    OK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev));

    run_all(MPI_COMM_WORLD);
    run_all(rev);
    t_overlap(MPI_COMM_WORLD, rev, 5);
    t_overlap(rev, MPI_COMM_WORLD, 20000);
    t_errors();

    OK(MPI_Comm_free(&rev));
    OK(MPI_Op_free(&mat_mul));
    OK(MPI_Type_free(&mat));
    OK(MPI_Type_free(&sint));
    if (rank == 0)
        printf("t_coll_nbc_v: OK\n");
    MPI_Finalize();
    return 0;
}
