/*
 * vmpi-fft - distributed 2D complex FFT of an N x N array, transpose method.
 *
 * Follows the transpose algorithm for the multidimensional FFT as described
 * in Grama, Gupta, Karypis and Kumar, "Introduction to Parallel Computing"
 * (2nd ed., section 13.3), with the 1D transforms done by the iterative
 * radix-2 Cooley-Tukey FFT of Cormen et al., "Introduction to Algorithms"
 * (chapter 30: bit-reversal permutation, then log2 N butterfly stages), here
 * with the twiddle factors of every stage precomputed.
 *
 * -n N  points per side, a power of two with N >= the number of ranks.
 * -i I  forward + inverse 2D FFT pairs per repetition (each pair is two 2D
 *       FFTs and four transposes; the inverse scales by 1/N^2, so the data
 *       comes back to the input every pair).
 *
 * Each rank owns a block of whole rows (uneven when the rank count does not
 * divide N). A 2D FFT is: 1D FFTs of the local rows, a global transpose,
 * 1D FFTs of the local rows again (the original columns), and a transpose
 * back, so the result X[k1][k2] has the input's layout. A transpose is one
 * MPI_Alltoallv that moves the whole array: each rank packs, contiguously for
 * every destination, its rows restricted to that destination's columns, and
 * transposes each received block into place. The kernel is bound by the
 * bisection bandwidth of that all-to-all. Work per repetition:
 * 2 I * 5 N^2 log2(N^2) flops (the usual 5 n log2 n per 1D transform).
 *
 * The input is a hash of the global (row, column) only, so results do not
 * depend on the rank count. Verification, after the timed repetitions, from
 * a fresh input: (1) forward then inverse must reproduce the input within
 * 1e-10 of its largest magnitude, checked by every rank (max error reduced
 * with MPI_Allreduce); (2) the forward result is compared on rank 0 with a
 * direct 2D DFT of the input rank 0 regenerates itself: at every point
 * (gathered with MPI_Gatherv, O(N^4)) for N <= 64, at 16 fixed points
 * spread over the array (fetched with an MPI_Reduce) for larger N; both
 * within 1e-9 of the largest reference magnitude. Test (1) is also applied
 * to the data the timed pairs leave behind, so that an error only the timed
 * loop hits is caught too.
 */
#include "app_common.h"

#include <complex.h>
#include <math.h>

typedef double complex cplx;

static const struct app_info APP = {
    "fft",
    "  -n N     points per side, a power of two >= the rank count (default 256)\n"
    "  -i ITERS forward + inverse 2D FFT pairs per repetition (default 2)\n",
    256, 2, 5};

static const double PI = 3.14159265358979323846;

enum { FULL_CHECK_MAX = 64, NPOINTS = 16, TILE = 32 };

struct plan {
    long n, lgn;
    int nranks, rank;
    long *lo, *len;      /* every rank's first row and row count */
    long *rev;           /* bit reversal of 0..n-1 */
    cplx *twf, *twi;     /* forward / inverse twiddles, stage h at [h - 1, 2h - 1) */
    cplx *a, *b;         /* my rows; pack / unpack scratch of the same size */
    int *cnt, *dsp;      /* Alltoallv counts and displacements (same both ways) */
};

/* Explicit real arithmetic: avoids the NaN-recovery path of C's complex '*'. */
static inline cplx cmul(cplx x, cplx y)
{
    double xr = creal(x), xi = cimag(x), yr = creal(y), yi = cimag(y);

    return CMPLX(xr * yr - xi * yi, xr * yi + xi * yr);
}

/* Rows [*lo, *lo + *len) of n for rank idx of parts. */
static void split(long n, int parts, int idx, long *lo, long *len)
{
    long base = n / parts, rem = n % parts;

    *lo = idx * base + (idx < rem ? idx : rem);
    *len = base + (idx < rem);
}

/* Input at global (i, j): a 64-bit mix of the index to two values in [-1, 1). */
static cplx input(long n, long i, long j)
{
    uint64_t z = (uint64_t)(i * n + j) * UINT64_C(0x9E3779B97F4A7C15) + UINT64_C(0x2545F491);

    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    z ^= z >> 31;
    return CMPLX((double)(z >> 40) / 8388608.0 - 1.0,
                 (double)(z & 0xFFFFFF) / 8388608.0 - 1.0);
}

/*
 * In-place 1D FFT of x[0..n) with twiddles tw (unscaled). After the
 * bit-reversal permutation, the stage with half-length h combines pairs of
 * length-h transforms: x[s+k], x[s+k+h] <- u + w^k v, u - w^k v.
 */
static void fft1(const struct plan *p, cplx *x, const cplx *tw)
{
    long n = p->n;

    for (long i = 0; i < n; i++) {
        long r = p->rev[i];

        if (i < r) {
            cplx t = x[i];

            x[i] = x[r];
            x[r] = t;
        }
    }
    for (long h = 1; h < n; h <<= 1) {
        const cplx *w = tw + h - 1;

        for (long s = 0; s < n; s += 2 * h)
            for (long k = 0; k < h; k++) {
                cplx u = x[s + k], v = cmul(w[k], x[s + k + h]);

                x[s + k] = u + v;
                x[s + k + h] = u - v;
            }
    }
}

/* p->a (my rows of M) becomes my rows of M^T. */
static void transpose(struct plan *p)
{
    long n = p->n, me = p->len[p->rank];

    /* Block for rank q: my rows x q's columns, row-major, at dsp[q]. */
    for (int q = 0; q < p->nranks; q++)
        for (long i = 0; i < me; i++)
            memcpy(&p->b[p->dsp[q] + i * p->len[q]], &p->a[i * n + p->lo[q]],
                   (size_t)p->len[q] * sizeof(cplx));
    /* Rank q's block for me is len[q] x me: the same counts both ways. */
    MPI_Alltoallv(p->b, p->cnt, p->dsp, MPI_C_DOUBLE_COMPLEX, p->a, p->cnt, p->dsp,
                  MPI_C_DOUBLE_COMPLEX, MPI_COMM_WORLD);
    /* Element (i, j) of q's block is M[lo[q] + i][lo[me] + j] = M^T row j. */
    for (int q = 0; q < p->nranks; q++) {
        const cplx *src = &p->a[p->dsp[q]];
        cplx *dst = &p->b[p->lo[q]];
        long lq = p->len[q];

        /* tiles keep both the strided reads and writes in cache */
        for (long i0 = 0; i0 < lq; i0 += TILE)
            for (long j0 = 0; j0 < me; j0 += TILE) {
                long i1 = i0 + TILE < lq ? i0 + TILE : lq;
                long j1 = j0 + TILE < me ? j0 + TILE : me;

                for (long j = j0; j < j1; j++)
                    for (long i = i0; i < i1; i++)
                        dst[j * n + i] = src[i * me + j];
            }
    }
    cplx *t = p->a;
    p->a = p->b;
    p->b = t;
}

/* 2D FFT of the distributed array in p->a; the inverse includes 1/N^2. */
static void fft2(struct plan *p, int inverse)
{
    long me = p->len[p->rank], n = p->n;
    const cplx *tw = inverse ? p->twi : p->twf;

    for (int pass = 0; pass < 2; pass++) {
        for (long i = 0; i < me; i++)
            fft1(p, &p->a[i * n], tw);
        transpose(p);
    }
    if (inverse) {
        double s = 1.0 / ((double)n * (double)n);

        for (long i = 0; i < me * n; i++)
            p->a[i] *= s;
    }
}

static void fill(struct plan *p)
{
    long r0 = p->lo[p->rank];

    for (long i = 0; i < p->len[p->rank]; i++)
        for (long j = 0; j < p->n; j++)
            p->a[i * p->n + j] = input(p->n, r0 + i, j);
}

/* The t-th checked point for N > FULL_CHECK_MAX: (0, 0), (N-1, N-1), 14 spread out. */
static void point(long n, int t, long *k1, long *k2)
{
    long step = n / NPOINTS;

    *k1 = t == NPOINTS - 1 ? n - 1 : (t * step + t) % n;
    *k2 = t == 0 ? 0 : t == NPOINTS - 1 ? n - 1 : ((5 * t + 3) % NPOINTS * step + 2 * t + 1) % n;
}

/*
 * Direct DFT X[k1][k2] = sum_ij x[i][j] w^(k1 i + k2 j), w = e^{-2 pi i / N},
 * at npts points, from the input regenerated row by row on this rank.
 */
static void direct_dft(long n, const cplx *w, int npts, const long *k1, const long *k2,
                       cplx *out)
{
    cplx *row = app_alloc(&APP, (size_t)n, sizeof *row);

    for (int t = 0; t < npts; t++)
        out[t] = 0;
    for (long i = 0; i < n; i++) {
        for (long j = 0; j < n; j++)
            row[j] = input(n, i, j);
        for (int t = 0; t < npts; t++) {
            double sr = 0.0, si = 0.0;

            for (long j = 0; j < n; j++) {
                cplx f = w[(k1[t] * i + k2[t] * j) & (n - 1)];

                sr += creal(row[j]) * creal(f) - cimag(row[j]) * cimag(f);
                si += creal(row[j]) * cimag(f) + cimag(row[j]) * creal(f);
            }
            out[t] += CMPLX(sr, si);
        }
    }
    free(row);
}

/* Rank 0: each value got[t] must match ref[t] within 1e-9 of the largest |ref|. */
static void compare(long n, int npts, const long *k1, const long *k2, const cplx *got,
                    const cplx *ref)
{
    double scale = 0.0;

    for (int t = 0; t < npts; t++)
        if (cabs(ref[t]) > scale)
            scale = cabs(ref[t]);
    for (int t = 0; t < npts; t++) {
        double d = cabs(got[t] - ref[t]);

        if (!(d <= 1e-9 * scale))
            app_fail(&APP, "N=%ld: X[%ld][%ld] = %.12g%+.12gi, direct DFT %.12g%+.12gi "
                     "(off by %g, largest %g)", n, k1[t], k2[t], creal(got[t]),
                     cimag(got[t]), creal(ref[t]), cimag(ref[t]), d, scale);
    }
}

/* Check (2): the forward result in p->a against the direct DFT on rank 0. */
static void check_forward(struct plan *p)
{
    long n = p->n, me = p->len[p->rank], r0 = p->lo[p->rank];
    int full = n <= FULL_CHECK_MAX;
    int npts = full ? (int)(n * n) : NPOINTS;
    long *k1 = app_alloc(&APP, (size_t)npts, sizeof *k1);
    long *k2 = app_alloc(&APP, (size_t)npts, sizeof *k2);
    cplx *got = NULL;

    for (int t = 0; t < npts; t++) {
        if (full) {
            k1[t] = t / n;
            k2[t] = t % n;
        } else {
            point(n, t, &k1[t], &k2[t]);
        }
    }
    if (full) {
        int *counts = app_alloc(&APP, (size_t)p->nranks, sizeof *counts);
        int *displs = app_alloc(&APP, (size_t)p->nranks, sizeof *displs);

        for (int q = 0; q < p->nranks; q++) {
            counts[q] = (int)(p->len[q] * n);
            displs[q] = (int)(p->lo[q] * n);
        }
        if (p->rank == 0)
            got = app_alloc(&APP, (size_t)npts, sizeof *got);
        MPI_Gatherv(p->a, (int)(me * n), MPI_C_DOUBLE_COMPLEX, got, counts, displs,
                    MPI_C_DOUBLE_COMPLEX, 0, MPI_COMM_WORLD);
        free(counts);
        free(displs);
    } else {
        /* Owners contribute their points, others zeros: the sum is exact. */
        double mine[2 * NPOINTS] = {0}, all[2 * NPOINTS];

        for (int t = 0; t < npts; t++)
            if (k1[t] >= r0 && k1[t] < r0 + me) {
                mine[2 * t] = creal(p->a[(k1[t] - r0) * n + k2[t]]);
                mine[2 * t + 1] = cimag(p->a[(k1[t] - r0) * n + k2[t]]);
            }
        MPI_Reduce(mine, all, 2 * NPOINTS, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (p->rank == 0) {
            got = app_alloc(&APP, (size_t)npts, sizeof *got);
            for (int t = 0; t < npts; t++)
                got[t] = CMPLX(all[2 * t], all[2 * t + 1]);
        }
    }
    if (p->rank == 0) {
        cplx *w = app_alloc(&APP, (size_t)n, sizeof *w);
        cplx *ref = app_alloc(&APP, (size_t)npts, sizeof *ref);

        for (long k = 0; k < n; k++)
            w[k] = CMPLX(cos(2.0 * PI * (double)k / (double)n),
                         -sin(2.0 * PI * (double)k / (double)n));
        direct_dft(n, w, npts, k1, k2, ref);
        compare(n, npts, k1, k2, got, ref);
        free(w);
        free(ref);
    }
    free(got);
    free(k1);
    free(k2);
}

/* Check (1): p->a is the input again, within 1e-10 of its largest magnitude. */
static void check_input(struct plan *p, const char *after)
{
    long n = p->n, me = p->len[p->rank], r0 = p->lo[p->rank];
    double loc[2] = {0.0, 0.0}, glob[2]; /* max error, max input magnitude */

    for (long i = 0; i < me; i++)
        for (long j = 0; j < n; j++) {
            cplx x = input(n, r0 + i, j);
            double d = cabs(p->a[i * n + j] - x);

            /* written so that a NaN becomes the error */
            if (!(d <= loc[0]))
                loc[0] = d;
            if (cabs(x) > loc[1])
                loc[1] = cabs(x);
        }
    MPI_Allreduce(loc, glob, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (!(glob[0] <= 1e-10 * glob[1]))
        app_fail(&APP, "N=%ld: %s, the array is off the input by %g (largest input %g)", n,
                 after, glob[0], glob[1]);
}

/*
 * The timed pairs must also have brought the data back to the input (a cheap
 * check that catches an error only the timed loop hits); then both checks
 * from a fresh input: (2) on the forward result, and (1).
 */
static void verify(struct plan *p)
{
    check_input(p, "after the timed forward + inverse pairs");
    fill(p);
    fft2(p, 0);
    check_forward(p);
    fft2(p, 1);
    check_input(p, "after forward + inverse");
}

static void plan_init(struct plan *p, long n)
{
    long me;

    p->n = n;
    for (p->lgn = 0; (1L << p->lgn) < n; p->lgn++)
        ;
    p->lo = app_alloc(&APP, (size_t)p->nranks, sizeof *p->lo);
    p->len = app_alloc(&APP, (size_t)p->nranks, sizeof *p->len);
    for (int q = 0; q < p->nranks; q++)
        split(n, p->nranks, q, &p->lo[q], &p->len[q]);
    me = p->len[p->rank];
    p->rev = app_alloc(&APP, (size_t)n, sizeof *p->rev);
    for (long i = 0; i < n; i++) {
        long r = 0;

        for (long bit = 0; bit < p->lgn; bit++)
            r |= ((i >> bit) & 1) << (p->lgn - 1 - bit);
        p->rev[i] = r;
    }
    /* Stage h uses e^{-+ i pi k / h}, k < h: contiguous in the inner loop. */
    p->twf = app_alloc(&APP, (size_t)n, sizeof *p->twf);
    p->twi = app_alloc(&APP, (size_t)n, sizeof *p->twi);
    for (long h = 1; h < n; h <<= 1)
        for (long k = 0; k < h; k++) {
            double c = cos(PI * (double)k / (double)h), s = sin(PI * (double)k / (double)h);

            p->twf[h - 1 + k] = CMPLX(c, -s);
            p->twi[h - 1 + k] = CMPLX(c, s);
        }
    p->a = app_alloc(&APP, (size_t)(me * n), sizeof *p->a);
    p->b = app_alloc(&APP, (size_t)(me * n), sizeof *p->b);
    p->cnt = app_alloc(&APP, (size_t)p->nranks, sizeof *p->cnt);
    p->dsp = app_alloc(&APP, (size_t)p->nranks, sizeof *p->dsp);
    for (int q = 0, d = 0; q < p->nranks; q++) {
        p->cnt[q] = (int)(me * p->len[q]);
        p->dsp[q] = d;
        d += p->cnt[q];
    }
}

static void plan_free(struct plan *p)
{
    free(p->lo);
    free(p->len);
    free(p->rev);
    free(p->twf);
    free(p->twi);
    free(p->a);
    free(p->b);
    free(p->cnt);
    free(p->dsp);
}

int main(int argc, char **argv)
{
    struct app_opts o;
    struct plan p;
    char what[96];
    double *times;
    int rc;

    rc = app_start(&APP, &argc, &argv, &o);
    if (rc >= 0)
        return rc;
    MPI_Comm_size(MPI_COMM_WORLD, &p.nranks);
    MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
    /* The cap keeps every count and displacement (at most N^2) well inside an int. */
    if (o.size < 2 || o.size > 8192 || (o.size & (o.size - 1)) != 0)
        return app_reject(&APP, "-n %ld: need a power of two from 2 to 8192", o.size);
    if (o.size < p.nranks)
        return app_reject(&APP, "-n %ld: need at least one row per rank (N >= %d ranks)",
                          o.size, p.nranks);
    plan_init(&p, o.size);
    fill(&p);

    times = app_alloc(&APP, (size_t)o.reps, sizeof *times);
    /* r = -1 is the untimed warm-up */
    for (long r = -1; r < o.reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();

        for (long i = 0; i < o.iters; i++) {
            fft2(&p, 0);
            fft2(&p, 1);
        }
        double t = app_elapsed_max(t0);

        if (r >= 0)
            times[r] = t;
    }
    verify(&p);

    snprintf(what, sizeof what, "2D complex FFT (transpose method), %ldx%ld points", p.n, p.n);
    /* 5 N^2 log2(N^2) flops per 2D FFT, two per iteration */
    double flops = 5.0 * (double)p.n * (double)p.n * 2.0 * (double)p.lgn;
    app_report(&APP, &o, what, times, (double)o.iters * 2.0 * flops / 1e9, "Gflop/s");
    free(times);
    plan_free(&p);
    MPI_Finalize();
    return 0;
}
