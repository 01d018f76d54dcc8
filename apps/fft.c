/*
 * vmpi-fft - distributed 2D complex FFT by the transpose method.
 *
 * The N x N complex array (-n N, a power of two) is split into blocks of
 * whole rows (uneven when the rank count does not divide N). A 2D FFT is:
 * 1D FFTs of the local rows (iterative radix-2 Cooley-Tukey with
 * precomputed twiddles), a global transpose with MPI_Alltoallv (each rank
 * packs the block of columns every other rank will own, and unpacks what it
 * receives transposed), 1D FFTs of the rows again (the original columns),
 * and a transpose back so the result has the input's layout. -i is the
 * number of forward + inverse pairs per repetition (two 2D FFTs, four
 * transposes); the inverse scales by 1/N^2, so the data returns to the
 * input each time. The all-to-all moves the whole array every transpose:
 * the kernel is bound by bisection bandwidth.
 *
 * The input depends only on the global (row, column), not on the ranks.
 * Verification after the timed repetitions, from a fresh input: (1) forward
 * then inverse reproduces the input within 1e-10 of its largest value;
 * (2) rank 0 gathers the forward result and compares it with a direct 2D
 * DFT: at every point for N <= 32, at 16 points spread over the array
 * otherwise, within 1e-9 of the largest magnitude.
 */
#include "app_common.h"

#include <complex.h>
#include <math.h>

typedef double complex cplx;

static const struct app_info APP = {
    "fft",
    "  -n N     points per side, a power of two (default 256)\n"
    "  -i ITERS forward + inverse 2D FFT pairs per repetition (default 2)\n",
    256, 2, 5};

static const double TWO_PI = 6.283185307179586;

/* Rows [*lo, *lo + *len) of n for rank idx of parts. */
static void split(long n, int parts, int idx, long *lo, long *len)
{
    long base = n / parts, rem = n % parts;

    *lo = idx * base + (idx < rem ? idx : rem);
    *len = base + (idx < rem);
}

/* Input value at (i, j): a hash of the index mapped to [-1, 1) + i[-1, 1). */
static cplx input(long n, long i, long j)
{
    uint64_t z = (uint64_t)(i * n + j) * UINT64_C(0x9E3779B97F4A7C15) + 12345;

    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    z ^= z >> 31;
    return ((double)(z >> 40) / (double)(1 << 23) - 1.0) +
           ((double)(z & 0xFFFFFF) / (double)(1 << 23) - 1.0) * I;
}

struct plan {
    long n, lgn;
    int nranks, rank;
    long *lo, *len;         /* every rank's rows */
    cplx *tw;               /* e^{-2 pi i k / n}, k < n / 2 */
    long *rev;              /* bit reversal of 0..n-1 */
    cplx *a, *b;            /* my rows; transpose scratch */
    int *cnt, *dsp;         /* Alltoallv counts = displacements layout */
};

/* In-place 1D FFT of x[0..n); sign -1 forward, +1 inverse (unscaled). */
static void fft1(const struct plan *p, cplx *x, int sign)
{
    long n = p->n;

    for (long i = 0; i < n; i++)
        if (i < p->rev[i]) {
            cplx t = x[i];

            x[i] = x[p->rev[i]];
            x[p->rev[i]] = t;
        }
    for (long half = 1; half < n; half <<= 1) {
        long step = n / (2 * half);

        for (long s = 0; s < n; s += 2 * half)
            for (long k = 0; k < half; k++) {
                cplx w = p->tw[k * step];
                cplx t;

                if (sign > 0)
                    w = conj(w);
                t = w * x[s + k + half];
                x[s + k + half] = x[s + k] - t;
                x[s + k] += t;
            }
    }
}

/* a (my rows of M) becomes my rows of M^T, through b. */
static void transpose(struct plan *p)
{
    long me = p->len[p->rank], n = p->n;
    long at = 0;

    for (int q = 0; q < p->nranks; q++) {
        for (long i = 0; i < me; i++)
            for (long j = 0; j < p->len[q]; j++)
                p->b[at++] = p->a[i * n + p->lo[q] + j];
    }
    for (int q = 0, d = 0; q < p->nranks; q++) {
        p->cnt[q] = (int)(me * p->len[q]);
        p->dsp[q] = d;
        d += p->cnt[q];
    }
    /* Rank q sends me its rows x my columns: the same counts both ways. */
    MPI_Alltoallv(p->b, p->cnt, p->dsp, MPI_C_DOUBLE_COMPLEX, p->a, p->cnt, p->dsp,
                  MPI_C_DOUBLE_COMPLEX, MPI_COMM_WORLD);
    at = 0;
    for (int q = 0; q < p->nranks; q++)
        for (long i = 0; i < p->len[q]; i++)
            for (long j = 0; j < me; j++)
                p->b[j * n + p->lo[q] + i] = p->a[at++];
    cplx *t = p->a;
    p->a = p->b;
    p->b = t;
}

static void fft2(struct plan *p, int sign)
{
    long me = p->len[p->rank];

    for (int pass = 0; pass < 2; pass++) {
        for (long i = 0; i < me; i++)
            fft1(p, &p->a[i * p->n], sign);
        transpose(p);
    }
    if (sign > 0) {
        double s = 1.0 / ((double)p->n * (double)p->n);

        for (long i = 0; i < me * p->n; i++)
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

/* Direct 2D DFT of the input at (k1, k2). */
static cplx dft_at(long n, long k1, long k2)
{
    cplx sum = 0;

    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++) {
            double ang = -TWO_PI * (double)((k1 * i + k2 * j) % n) / (double)n;

            sum += input(n, i, j) * (cos(ang) + sin(ang) * I);
        }
    return sum;
}

static void verify(struct plan *p)
{
    long me = p->len[p->rank], n = p->n;
    double err = 0.0, big = 0.0, gerr, gbig;

    fill(p);
    fft2(p, -1);
    /* Rank 0 checks the forward result against the definition. */
    int *counts = app_alloc(&APP, (size_t)p->nranks, sizeof *counts);
    int *displs = app_alloc(&APP, (size_t)p->nranks, sizeof *displs);
    cplx *all = p->rank == 0 ? app_alloc(&APP, (size_t)(n * n), sizeof *all) : NULL;

    for (int q = 0; q < p->nranks; q++) {
        counts[q] = (int)(p->len[q] * n);
        displs[q] = (int)(p->lo[q] * n);
    }
    MPI_Gatherv(p->a, (int)(me * n), MPI_C_DOUBLE_COMPLEX, all, counts, displs,
                MPI_C_DOUBLE_COMPLEX, 0, MPI_COMM_WORLD);
    if (p->rank == 0) {
        long npts = n <= 32 ? n * n : 16;
        double worst = 0.0, scale = 1.0;

        for (long k = 0; k < n * n; k++)
            if (cabs(all[k]) > scale)
                scale = cabs(all[k]);
        for (long t = 0; t < npts; t++) {
            /* beyond 32, points spread over rows and columns, corners included */
            long k1 = n <= 32 ? t / n : (t * 7 * n / 16 + t / 4) % n;
            long k2 = n <= 32 ? t % n : (t * 5 * n / 16 + 3 * t) % n;
            double d = cabs(all[k1 * n + k2] - dft_at(n, k1, k2));

            if (d > worst)
                worst = d;
            if (d > 1e-9 * scale)
                app_fail(&APP, "X[%ld][%ld] = %.12g%+.12gi differs from the direct DFT by %g",
                         k1, k2, creal(all[k1 * n + k2]), cimag(all[k1 * n + k2]), d);
        }
        free(all);
    }
    free(counts);
    free(displs);
    fft2(p, +1);
    for (long i = 0; i < me; i++)
        for (long j = 0; j < n; j++) {
            cplx x = input(n, p->lo[p->rank] + i, j);
            double d = cabs(p->a[i * n + j] - x);

            if (d > err)
                err = d;
            if (cabs(x) > big)
                big = cabs(x);
        }
    MPI_Allreduce(&err, &gerr, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&big, &gbig, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (!(gerr <= 1e-10 * gbig))
        app_fail(&APP, "forward + inverse is off the input by %g (largest input %g)", gerr,
                 gbig);
}

int main(int argc, char **argv)
{
    struct app_opts o;
    struct plan p;
    int rc;

    rc = app_start(&APP, &argc, &argv, &o);
    if (rc >= 0)
        return rc;
    MPI_Comm_size(MPI_COMM_WORLD, &p.nranks);
    MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
    /* A power of two; the largest keeps N^2 counts in an int and memory sane. */
    if (o.size < 2 || o.size > 8192 || (o.size & (o.size - 1)) != 0)
        return app_reject(&APP, "-n %ld: need a power of two from 2 to 8192", o.size);
    p.n = o.size;
    for (p.lgn = 0; (1L << p.lgn) < p.n; p.lgn++)
        ;
    p.lo = app_alloc(&APP, (size_t)p.nranks, sizeof *p.lo);
    p.len = app_alloc(&APP, (size_t)p.nranks, sizeof *p.len);
    for (int q = 0; q < p.nranks; q++)
        split(p.n, p.nranks, q, &p.lo[q], &p.len[q]);
    p.tw = app_alloc(&APP, (size_t)(p.n / 2), sizeof *p.tw);
    for (long k = 0; k < p.n / 2; k++) {
        double ang = TWO_PI * (double)k / (double)p.n;

        p.tw[k] = cos(ang) - sin(ang) * I;
    }
    p.rev = app_alloc(&APP, (size_t)p.n, sizeof *p.rev);
    for (long i = 0; i < p.n; i++) {
        long r = 0;

        for (long b = 0; b < p.lgn; b++)
            r |= ((i >> b) & 1) << (p.lgn - 1 - b);
        p.rev[i] = r;
    }
    size_t mine = (size_t)(p.len[p.rank] * p.n);
    p.a = app_alloc(&APP, mine, sizeof *p.a);
    p.b = app_alloc(&APP, mine, sizeof *p.b);
    p.cnt = app_alloc(&APP, (size_t)p.nranks, sizeof *p.cnt);
    p.dsp = app_alloc(&APP, (size_t)p.nranks, sizeof *p.dsp);
    fill(&p);

    double *times = app_alloc(&APP, (size_t)o.reps, sizeof *times);
    for (long r = -1; r < o.reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();

        for (long i = 0; i < o.iters; i++) {
            fft2(&p, -1);
            fft2(&p, +1);
        }
        double t = app_elapsed_max(t0);
        if (r >= 0)
            times[r] = t;
    }
    verify(&p);

    char what[96];
    snprintf(what, sizeof what, "2D complex FFT (transpose method), %ldx%ld points", p.n,
             p.n);
    double flops = 5.0 * (double)p.n * (double)p.n * 2.0 * (double)p.lgn;
    app_report(&APP, &o, what, times, (double)o.iters * 2.0 * flops / 1e9, "Gflop/s");
    free(times);
    free(p.lo);
    free(p.len);
    free(p.tw);
    free(p.rev);
    free(p.a);
    free(p.b);
    free(p.cnt);
    free(p.dsp);
    MPI_Finalize();
    return 0;
}
