/*
 * vmpi-stencil - 2D Jacobi heat diffusion with halo exchange.
 *
 * The textbook five-point Jacobi relaxation of the steady-state heat
 * equation on an N x N interior grid (-n N) with fixed (Dirichlet) boundary
 * values: a hot west edge at 1.0, the other three edges at 0, and a smooth
 * non-zero initial interior (a bump, largest mid-grid) so that every sweep
 * changes the values. -i is the number of sweeps per repetition; a sweep is
 *
 *     new[i][j] = 0.25 * (old[i-1][j] + old[i+1][j] + old[i][j-1] + old[i][j+1])
 *
 * over every interior point, then new and old swap. The timed repetitions
 * continue from where the previous one left the grid.
 *
 * Decomposition: a 2D Cartesian communicator (MPI_Dims_create, any rank
 * count, e.g. 3 ranks as 3x1; MPI_Cart_create, non-periodic, reordering
 * allowed, so everything after it uses the Cartesian communicator's ranks).
 * Each rank owns a block of rows x columns (uneven when the process grid
 * does not divide N) plus a one-point halo. Each sweep exchanges the four
 * faces with MPI_Irecv/MPI_Isend and one MPI_Waitall, neighbours from
 * MPI_Cart_shift (MPI_PROC_NULL on the grid's edges); the rows are
 * contiguous, the east and west faces are columns, sent and received as
 * one MPI_Type_vector committed once. The last sweep of a repetition also
 * computes the largest change |new - old|, and one MPI_Allreduce (MAX)
 * ends the repetition: the convergence check real solvers make.
 *
 * Verification, after the timed repetitions: from the initial grid again,
 * V = min(-i, 20) distributed sweeps; rank 0 gathers the blocks
 * (MPI_Gatherv), runs the same V sweeps serially on the whole grid with the
 * same function, and requires every point to be bit for bit the same
 * double (the same expression in the same order gives the same result), so
 * one lost, stale or misplaced halo value fails the run, naming the first
 * point that differs. The initial values use only IEEE basic operations on
 * exact integers, never libm, so they are the same doubles on every machine
 * of a heterogeneous job too. Work per repetition: N^2 * -i point updates.
 */
#include "app_common.h"

#include <math.h>

static const struct app_info APP = {
    "stencil",
    "  -n N     interior grid points per side (default 512)\n"
    "  -i ITERS Jacobi sweeps per repetition (default 50)\n",
    512, 50, 5};

/* Rank 0 gathers all N^2 points: the count must fit MPI's int. */
#define MAX_N 46340L
#define MAX_CHECK_SWEEPS 20

/* The block a rank owns along one dimension: [lo, lo + len) of 0..n-1. */
static void split(long n, int parts, int idx, long *lo, long *len)
{
    long base = n / parts, rem = n % parts;

    *lo = idx * base + (idx < rem ? idx : rem);
    *len = base + (idx < rem);
}

/*
 * Initial value at global (gi, gj), each 0..N+1 (0 and N+1 the boundary):
 * 1.0 on the west edge, 0.0 on the others, inside 0.5 p(gi) p(gj) with
 * p(k) = 4 k (N+1-k) / (N+1)^2, which is 1 mid-grid and small near the edges.
 * Exact integers in, correctly rounded +, *, / only: the same doubles on
 * every rank, in the serial check and on any machine.
 */
static double initial(long n, long gi, long gj)
{
    double m2 = (double)(n + 1) * (double)(n + 1);

    if (gj == 0)
        return 1.0;
    if (gi == 0 || gi == n + 1 || gj == n + 1)
        return 0.0;
    return 0.5 * (4.0 * (double)(gi * (n + 1 - gi)) / m2) *
           (4.0 * (double)(gj * (n + 1 - gj)) / m2);
}

/* The five-point update of point j of a row, from the rows above and below. */
static inline double point(const double *up, const double *mid, const double *dn, long j)
{
    return 0.25 * (up[j] + dn[j] + mid[j - 1] + mid[j + 1]);
}

/*
 * One sweep over the rows x cols points of a block stored with a one-point
 * halo, rows of ld doubles: v = the update of u. With `resid`, returns the
 * largest |v - u|, else 0. Both the distributed run and the serial check
 * use this function, so every point is computed alike.
 */
static double sweep(const double *restrict u, double *restrict v, long rows, long cols,
                    long ld, int resid)
{
    double diff = 0.0;

    for (long i = 1; i <= rows; i++) {
        const double *up = u + (i - 1) * ld, *mid = u + i * ld, *dn = u + (i + 1) * ld;
        double *out = v + i * ld;

        if (!resid) {
            for (long j = 1; j <= cols; j++)
                out[j] = point(up, mid, dn, j);
            continue;
        }
        for (long j = 1; j <= cols; j++) {
            double x = point(up, mid, dn, j), d = fabs(x - mid[j]);

            out[j] = x;
            if (d > diff || isnan(d)) /* a NaN sticks */
                diff = d;
        }
    }
    return diff;
}

struct grid {
    long n;               /* global interior points per side */
    int nranks, rank;     /* in cart */
    int dims[2], coords[2];
    long rows, cols;      /* owned interior block */
    long r0, c0;          /* its first global row / column, 1-based (0 is the boundary) */
    long ld;              /* row length with the halo: cols + 2 */
    double *u, *v;        /* current and next, (rows + 2) x ld */
    MPI_Comm cart;
    int north, south, west, east;
    MPI_Datatype column;  /* rows doubles, ld apart */
};

/* Both arrays to the initial values, halo included (the boundary's never changes). */
static void grid_reset(struct grid *g)
{
    for (long i = 0; i < g->rows + 2; i++)
        for (long j = 0; j < g->ld; j++)
            g->u[i * g->ld + j] = g->v[i * g->ld + j] =
                initial(g->n, g->r0 - 1 + i, g->c0 - 1 + j);
}

/* The four faces: halo rows from north and south, halo columns from west and east. */
static void exchange(struct grid *g)
{
    MPI_Request rq[8];
    MPI_Status st[8]; /* not MPI_STATUSES_IGNORE: GCC 12 misreads MPICH's prototype */
    long ld = g->ld, rows = g->rows;
    int cols = (int)g->cols;
    double *u = g->u;

    /* Tag = direction of travel: 0 southward, 1 northward, 2 eastward, 3 westward. */
    MPI_Irecv(&u[1], cols, MPI_DOUBLE, g->north, 0, g->cart, &rq[0]);
    MPI_Irecv(&u[(rows + 1) * ld + 1], cols, MPI_DOUBLE, g->south, 1, g->cart, &rq[1]);
    MPI_Irecv(&u[ld], 1, g->column, g->west, 2, g->cart, &rq[2]);
    MPI_Irecv(&u[ld + ld - 1], 1, g->column, g->east, 3, g->cart, &rq[3]);
    MPI_Isend(&u[rows * ld + 1], cols, MPI_DOUBLE, g->south, 0, g->cart, &rq[4]);
    MPI_Isend(&u[ld + 1], cols, MPI_DOUBLE, g->north, 1, g->cart, &rq[5]);
    MPI_Isend(&u[ld + ld - 2], 1, g->column, g->east, 2, g->cart, &rq[6]);
    MPI_Isend(&u[ld + 1], 1, g->column, g->west, 3, g->cart, &rq[7]);
    MPI_Waitall(8, rq, st);
}

/* `sweeps` (>= 1) distributed sweeps; returns the global largest change of the last. */
static double run(struct grid *g, long sweeps)
{
    double diff = 0.0, all = 0.0;

    for (long s = 0; s < sweeps; s++) {
        double *t;

        exchange(g);
        diff = sweep(g->u, g->v, g->rows, g->cols, g->ld, s == sweeps - 1);
        t = g->u;
        g->u = g->v;
        g->v = t;
    }
    MPI_Allreduce(&diff, &all, 1, MPI_DOUBLE, MPI_MAX, g->cart);
    return all;
}

/*
 * The grid after `sweeps` distributed sweeps from the initial values,
 * gathered to rank 0 and compared point by point with the same sweeps done
 * serially there. A mismatch aborts the job from rank 0; the other ranks
 * wait for its verdict, so no rank reports a result before it.
 */
static void verify(struct grid *g, long sweeps)
{
    long n = g->n, mine_n = g->rows * g->cols;
    double *mine = app_alloc(&APP, (size_t)mine_n, sizeof *mine);
    double *got = NULL, *a = NULL, *b = NULL;
    int *counts = NULL, *displs = NULL, ok = 0;

    for (long i = 0; i < g->rows; i++)
        memcpy(&mine[i * g->cols], &g->u[(i + 1) * g->ld + 1], (size_t)g->cols * sizeof *mine);
    if (g->rank == 0) {
        long at = 0;

        counts = app_alloc(&APP, (size_t)g->nranks, sizeof *counts);
        displs = app_alloc(&APP, (size_t)g->nranks, sizeof *displs);
        for (int r = 0; r < g->nranks; r++) {
            int c[2];
            long lo, rows, cols;

            MPI_Cart_coords(g->cart, r, 2, c);
            split(n, g->dims[0], c[0], &lo, &rows);
            split(n, g->dims[1], c[1], &lo, &cols);
            counts[r] = (int)(rows * cols);
            displs[r] = (int)at;
            at += rows * cols;
        }
        if (at != n * n)
            app_fail(&APP, "the %dx%d blocks hold %ld of %ld points", g->dims[0], g->dims[1],
                     at, n * n);
        got = app_alloc(&APP, (size_t)(n * n), sizeof *got);
    }
    MPI_Gatherv(mine, (int)mine_n, MPI_DOUBLE, got, counts, displs, MPI_DOUBLE, 0, g->cart);

    if (g->rank == 0) {
        long ld = n + 2, bad = 0, fi = 0, fj = 0;
        double fgot = 0.0, fwant = 0.0;

        a = app_alloc(&APP, (size_t)(ld * ld), sizeof *a);
        b = app_alloc(&APP, (size_t)(ld * ld), sizeof *b);
        for (long i = 0; i < ld; i++)
            for (long j = 0; j < ld; j++)
                a[i * ld + j] = b[i * ld + j] = initial(n, i, j);
        for (long s = 0; s < sweeps; s++) {
            double *t = a;

            sweep(a, b, n, n, ld, 0);
            a = b;
            b = t;
        }
        /* Walk each rank's block; keep the first mismatch in row-major order. */
        for (int r = 0; r < g->nranks; r++) {
            int c[2];
            long r0, c0, rows, cols;
            const double *blk = got + displs[r];

            MPI_Cart_coords(g->cart, r, 2, c);
            split(n, g->dims[0], c[0], &r0, &rows);
            split(n, g->dims[1], c[1], &c0, &cols);
            for (long i = 0; i < rows; i++)
                for (long j = 0; j < cols; j++) {
                    long gi = r0 + i + 1, gj = c0 + j + 1;
                    double x = blk[i * cols + j], want = a[gi * ld + gj];

                    if (x == want) /* NaN never equals */
                        continue;
                    if (bad++ == 0 || gi < fi || (gi == fi && gj < fj)) {
                        fi = gi;
                        fj = gj;
                        fgot = x;
                        fwant = want;
                    }
                }
        }
        if (bad)
            app_fail(&APP, "%ld of %ld points differ from the serial sweeps after %ld sweeps on "
                     "%dx%d ranks; the first, (%ld,%ld) (1-based, row, column), is %.17g, "
                     "serially %.17g", bad, n * n, sweeps, g->dims[0], g->dims[1], fi, fj,
                     fgot, fwant);
        ok = 1;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, g->cart);
    if (!ok)
        app_fail(&APP, "rank 0 did not confirm the verification");
    free(a);
    free(b);
    free(got);
    free(counts);
    free(displs);
    free(mine);
}

int main(int argc, char **argv)
{
    struct app_opts o;
    struct grid g;
    int rc, periods[2] = {0, 0};
    char what[128];

    rc = app_start(&APP, &argc, &argv, &o);
    if (rc >= 0)
        return rc;
    memset(&g, 0, sizeof g);
    MPI_Comm_size(MPI_COMM_WORLD, &g.nranks);
    MPI_Dims_create(g.nranks, 2, g.dims);
    /* Every rank needs a non-empty block (dims[0] >= dims[1]). */
    if (o.size < g.dims[0] || o.size > MAX_N)
        return app_reject(&APP, "-n %ld: need %d..%ld points per side for a %dx%d process grid",
                          o.size, g.dims[0], MAX_N, g.dims[0], g.dims[1]);
    g.n = o.size;
    MPI_Cart_create(MPI_COMM_WORLD, 2, g.dims, periods, 1, &g.cart);
    MPI_Comm_rank(g.cart, &g.rank);
    MPI_Cart_coords(g.cart, g.rank, 2, g.coords);
    MPI_Cart_shift(g.cart, 0, 1, &g.north, &g.south);
    MPI_Cart_shift(g.cart, 1, 1, &g.west, &g.east);
    split(g.n, g.dims[0], g.coords[0], &g.r0, &g.rows);
    split(g.n, g.dims[1], g.coords[1], &g.c0, &g.cols);
    g.r0++;
    g.c0++;
    g.ld = g.cols + 2;
    g.u = app_alloc(&APP, (size_t)((g.rows + 2) * g.ld), sizeof *g.u);
    g.v = app_alloc(&APP, (size_t)((g.rows + 2) * g.ld), sizeof *g.v);
    MPI_Type_vector((int)g.rows, 1, (int)g.ld, MPI_DOUBLE, &g.column);
    MPI_Type_commit(&g.column);
    grid_reset(&g);

    /* r = -1 is the untimed warm-up. */
    double *times = app_alloc(&APP, (size_t)o.reps, sizeof *times);
    for (long r = -1; r < o.reps; r++) {
        MPI_Barrier(g.cart);
        double t0 = MPI_Wtime();
        double diff = run(&g, o.iters);
        double t = app_elapsed_max(t0);

        /* Jacobi keeps every value within the boundary's [0, 1]. */
        if (!(diff >= 0.0 && diff <= 1.0))
            app_fail(&APP, "largest change %g in repetition %ld: the iteration diverged", diff,
                     r);
        if (r >= 0)
            times[r] = t;
    }
    grid_reset(&g);
    long vs = o.iters < MAX_CHECK_SWEEPS ? o.iters : MAX_CHECK_SWEEPS;
    run(&g, vs);
    verify(&g, vs);

    snprintf(what, sizeof what, "2D Jacobi, %ldx%ld grid on %dx%d ranks", g.n, g.n, g.dims[0],
             g.dims[1]);
    app_report(&APP, &o, what, times, (double)g.n * (double)g.n * (double)o.iters / 1e6,
               "Mcells/s");
    free(times);
    free(g.u);
    free(g.v);
    MPI_Type_free(&g.column);
    MPI_Comm_free(&g.cart);
    MPI_Finalize();
    return 0;
}
