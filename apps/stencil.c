/*
 * vmpi-stencil - 2D Jacobi heat diffusion with halo exchange.
 *
 * The textbook five-point Jacobi relaxation of the steady-state heat
 * equation on an N x N interior grid (-n N) with fixed (Dirichlet) boundary
 * values: a hot west edge at 1.0, the other edges at 0, and a smooth non-zero
 * initial interior so that every sweep changes every point. -i is the number
 * of sweeps per repetition.
 *
 * Decomposition: a 2D Cartesian communicator (MPI_Dims_create,
 * MPI_Cart_create, non-periodic); each rank owns a block of rows x columns
 * (uneven when N does not divide) plus a one-point halo. Each sweep
 * exchanges the four faces with MPI_Isend/MPI_Irecv and MPI_Waitall,
 * neighbours from MPI_Cart_shift (MPI_PROC_NULL on the edges); the east and
 * west faces are columns, sent with an MPI_Type_vector. A repetition ends
 * with an MPI_Allreduce of the largest change (a convergence check, as
 * real solvers do).
 *
 * Verification: from the initial grid again, min(-i, 20) distributed
 * sweeps; rank 0 gathers the grid and compares it bit for bit with the same
 * sweeps done serially (the same formula in the same order gives the same
 * doubles), so one lost, stale or misplaced halo value fails the run.
 */
#include "app_common.h"

#include <math.h>

static const struct app_info APP = {
    "stencil",
    "  -n N     interior grid points per side (default 512)\n"
    "  -i ITERS Jacobi sweeps per repetition (default 50)\n",
    512, 50, 5};

/* The block a rank owns along one dimension: [lo, lo + len) of 0..n-1. */
static void split(long n, int parts, int idx, long *lo, long *len)
{
    long base = n / parts, rem = n % parts;

    *lo = idx * base + (idx < rem ? idx : rem);
    *len = base + (idx < rem);
}

/* Global value at (gi, gj) of the (N+2) x (N+2) grid with its boundary. */
static double initial(long n, long gi, long gj)
{
    if (gj == 0)
        return 1.0;
    if (gi == 0 || gj == n + 1 || gi == n + 1)
        return 0.0;
    return 0.5 * sin(3.14159265358979 * (double)gi / (double)(n + 1)) *
           sin(3.14159265358979 * (double)gj / (double)(n + 1));
}

struct grid {
    long rows, cols;   /* owned interior block */
    long r0, c0;       /* its first global interior row / column (1-based) */
    long ld;           /* row length with the halo: cols + 2 */
    double *u, *v;     /* current and next, (rows + 2) x ld */
    MPI_Comm cart;
    int north, south, west, east;
    MPI_Datatype column;
};

static void grid_reset(struct grid *g, long n)
{
    for (long i = 0; i < g->rows + 2; i++)
        for (long j = 0; j < g->ld; j++) {
            double x = initial(n, g->r0 - 1 + i, g->c0 - 1 + j);

            g->u[i * g->ld + j] = x;
            g->v[i * g->ld + j] = x;
        }
}

/* One face exchange: halo rows from north/south, halo columns east/west. */
static void exchange(struct grid *g)
{
    MPI_Request rq[8];
    MPI_Status st[8]; /* not MPI_STATUSES_IGNORE: GCC 12 misreads MPICH's prototype */
    long ld = g->ld, rows = g->rows, cols = g->cols;
    double *u = g->u;

    MPI_Irecv(&u[1], (int)cols, MPI_DOUBLE, g->north, 0, g->cart, &rq[0]);
    MPI_Irecv(&u[(rows + 1) * ld + 1], (int)cols, MPI_DOUBLE, g->south, 1, g->cart, &rq[1]);
    MPI_Irecv(&u[ld], 1, g->column, g->west, 2, g->cart, &rq[2]);
    MPI_Irecv(&u[ld + cols + 1], 1, g->column, g->east, 3, g->cart, &rq[3]);
    MPI_Isend(&u[ld + 1], (int)cols, MPI_DOUBLE, g->north, 1, g->cart, &rq[4]);
    MPI_Isend(&u[rows * ld + 1], (int)cols, MPI_DOUBLE, g->south, 0, g->cart, &rq[5]);
    MPI_Isend(&u[ld + 1], 1, g->column, g->west, 3, g->cart, &rq[6]);
    MPI_Isend(&u[ld + cols], 1, g->column, g->east, 2, g->cart, &rq[7]);
    MPI_Waitall(8, rq, st);
}

/* One sweep over a block with a halo; returns the largest change. */
static double sweep(const double *u, double *v, long rows, long cols, long ld)
{
    double diff = 0.0;

    for (long i = 1; i <= rows; i++)
        for (long j = 1; j <= cols; j++) {
            double x = 0.25 * (u[(i - 1) * ld + j] + u[(i + 1) * ld + j] +
                               u[i * ld + j - 1] + u[i * ld + j + 1]);
            double d = fabs(x - u[i * ld + j]);

            v[i * ld + j] = x;
            if (d > diff)
                diff = d;
        }
    return diff;
}

/* `sweeps` distributed sweeps; returns the global largest change of the last. */
static double run(struct grid *g, long sweeps)
{
    double diff = 0.0, all = 0.0;

    for (long s = 0; s < sweeps; s++) {
        double *t;

        exchange(g);
        diff = sweep(g->u, g->v, g->rows, g->cols, g->ld);
        t = g->u;
        g->u = g->v;
        g->v = t;
    }
    MPI_Allreduce(&diff, &all, 1, MPI_DOUBLE, MPI_MAX, g->cart);
    return all;
}

/* Gather the distributed interior to rank 0 and compare it with a serial run. */
static void verify(struct grid *g, long n, long sweeps, const int dims[2])
{
    int rank, nranks;
    long meta[4] = {g->r0, g->c0, g->rows, g->cols};
    double *mine = app_alloc(&APP, (size_t)(g->rows * g->cols), sizeof *mine);

    MPI_Comm_rank(g->cart, &rank);
    MPI_Comm_size(g->cart, &nranks);
    for (long i = 0; i < g->rows; i++)
        memcpy(&mine[i * g->cols], &g->u[(i + 1) * g->ld + 1], (size_t)g->cols * sizeof *mine);
    if (rank != 0) {
        MPI_Send(meta, 4, MPI_LONG, 0, 10, g->cart);
        MPI_Send(mine, (int)(g->rows * g->cols), MPI_DOUBLE, 0, 11, g->cart);
        free(mine);
        return;
    }
    long ld = n + 2;
    double *a = app_alloc(&APP, (size_t)(ld * ld), sizeof *a);
    double *b = app_alloc(&APP, (size_t)(ld * ld), sizeof *b);
    double *got = app_alloc(&APP, (size_t)(n * n), sizeof *got);
    long covered = 0;

    for (int r = 0; r < nranks; r++) {
        long m[4];
        double *blk = mine;

        if (r != 0) {
            MPI_Recv(m, 4, MPI_LONG, r, 10, g->cart, MPI_STATUS_IGNORE);
            if (m[0] < 1 || m[1] < 1 || m[2] < 0 || m[3] < 0 || m[0] + m[2] - 1 > n ||
                m[1] + m[3] - 1 > n)
                app_fail(&APP, "rank %d reports block (%ld,%ld)+(%ld,%ld) outside the grid",
                         r, m[0], m[1], m[2], m[3]);
            blk = app_alloc(&APP, (size_t)(m[2] * m[3]), sizeof *blk);
            MPI_Recv(blk, (int)(m[2] * m[3]), MPI_DOUBLE, r, 11, g->cart, MPI_STATUS_IGNORE);
        } else {
            memcpy(m, meta, sizeof m);
        }
        for (long i = 0; i < m[2]; i++)
            memcpy(&got[(m[0] - 1 + i) * n + m[1] - 1], &blk[i * m[3]],
                   (size_t)m[3] * sizeof *got);
        covered += m[2] * m[3];
        if (blk != mine)
            free(blk);
    }
    if (covered != n * n)
        app_fail(&APP, "the %dx%d blocks cover %ld of %ld points", dims[0], dims[1], covered,
                 n * n);
    for (long i = 0; i < ld; i++)
        for (long j = 0; j < ld; j++)
            a[i * ld + j] = b[i * ld + j] = initial(n, i, j);
    for (long s = 0; s < sweeps; s++) {
        double *t = a;

        sweep(a, b, n, n, ld);
        a = b;
        b = t;
    }
    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++)
            if (got[i * n + j] != a[(i + 1) * ld + j + 1])
                app_fail(&APP, "point (%ld,%ld) after %ld sweeps on %dx%d ranks is %.17g, "
                         "the serial sweeps give %.17g", i + 1, j + 1, sweeps, dims[0], dims[1],
                         got[i * n + j], a[(i + 1) * ld + j + 1]);
    free(a);
    free(b);
    free(got);
    free(mine);
}

int main(int argc, char **argv)
{
    struct app_opts o;
    struct grid g;
    int nranks, rank, rc, dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2];

    rc = app_start(&APP, &argc, &argv, &o);
    if (rc >= 0)
        return rc;
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Dims_create(nranks, 2, dims);
    /* Every rank needs a non-empty block; the row count of a sweep must fit an int. */
    if (o.size < dims[0] || o.size < dims[1] || o.size > 46000)
        return app_reject(&APP, "-n %ld: need %d..46000 points per side for a %dx%d process "
                          "grid", o.size, dims[0] > dims[1] ? dims[0] : dims[1], dims[0],
                          dims[1]);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &g.cart);
    MPI_Comm_rank(g.cart, &rank);
    MPI_Cart_coords(g.cart, rank, 2, coords);
    MPI_Cart_shift(g.cart, 0, 1, &g.north, &g.south);
    MPI_Cart_shift(g.cart, 1, 1, &g.west, &g.east);
    split(o.size, dims[0], coords[0], &g.r0, &g.rows);
    split(o.size, dims[1], coords[1], &g.c0, &g.cols);
    g.r0++;
    g.c0++;
    g.ld = g.cols + 2;
    g.u = app_alloc(&APP, (size_t)((g.rows + 2) * g.ld), sizeof(double));
    g.v = app_alloc(&APP, (size_t)((g.rows + 2) * g.ld), sizeof(double));
    MPI_Type_vector((int)g.rows, 1, (int)g.ld, MPI_DOUBLE, &g.column);
    MPI_Type_commit(&g.column);

    double *times = app_alloc(&APP, (size_t)o.reps, sizeof *times);
    grid_reset(&g, o.size);
    run(&g, o.iters);
    for (long r = 0; r < o.reps; r++) {
        MPI_Barrier(g.cart);
        double t0 = MPI_Wtime();
        double diff = run(&g, o.iters);

        times[r] = app_elapsed_max(t0);
        if (!(diff >= 0.0 && diff < 1.0))
            app_fail(&APP, "largest change %g in repetition %ld: the iteration diverged", diff,
                     r);
    }
    long vs = o.iters < 20 ? o.iters : 20;
    grid_reset(&g, o.size);
    run(&g, vs);
    verify(&g, o.size, vs, dims);

    char what[128];
    snprintf(what, sizeof what, "2D Jacobi, %ldx%ld grid on %dx%d ranks", o.size, o.size,
             dims[0], dims[1]);
    app_report(&APP, &o, what, times, (double)o.size * (double)o.size * (double)o.iters / 1e6,
               "Mcells/s");
    free(times);
    free(g.u);
    free(g.v);
    MPI_Type_free(&g.column);
    MPI_Comm_free(&g.cart);
    MPI_Finalize();
    return 0;
}
