/* np: 4 5 */
/* Cartesian topologies on a 2x2 grid (periodic and not), a 1-D ring, dup,
 * Dims_create (against a brute force of its rule), Topo_test, and the error
 * classes. With 5 ranks the last one is outside the 2x2 grid and gets
 * MPI_COMM_NULL. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#include "t_check.h"

static void expect_err(int rc, int want, const char *what)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == want, "%s: error class %d, want %d", what, cls, want);
}

/* Dims_create's rule, by brute force: of the non-increasing factorizations
 * of n into k factors, the smallest max - min; ties go to the larger last
 * factor, then the one before it, ... (what MPICH answers). */
static int ref_cur[8], ref_best[8], ref_found;
static void ref_walk(int pos, int k, int n, int maxd)
{
    if (pos == k - 1) {
        if (n > maxd)
            return;
        ref_cur[pos] = n;
        int take = !ref_found;
        if (!take) {
            int sc = ref_cur[0] - ref_cur[k - 1], sb = ref_best[0] - ref_best[k - 1];
            take = sc < sb;
            for (int i = k - 1; sc == sb && i >= 0; i--)
                if (ref_cur[i] != ref_best[i]) {
                    take = ref_cur[i] > ref_best[i];
                    break;
                }
        }
        if (take) {
            memcpy(ref_best, ref_cur, sizeof(int) * (size_t)k);
            ref_found = 1;
        }
        return;
    }
    for (int d = 1; d <= maxd && d <= n; d++)
        if (n % d == 0) {
            ref_cur[pos] = d;
            ref_walk(pos + 1, k, n / d, d);
        }
}

static void dims_cases(void)
{
    /* ties on max - min that MPICH's test topo/dims5 checks */
    static const int cases[][8] = {
        {5040, 3, 21, 16, 15},         {6240, 3, 26, 16, 15},
        {10800, 3, 27, 20, 20},        {13104, 4, 14, 13, 9, 8},
        {75600, 4, 21, 16, 15, 15},    {25920, 5, 10, 9, 8, 6, 6},
        {155520, 6, 10, 9, 8, 6, 6, 6}, {16, 3, 4, 2, 2},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int n = cases[i][0], k = cases[i][1], d[6] = {0};
        OK(MPI_Dims_create(n, k, d));
        for (int j = 0; j < k; j++)
            CHECK(d[j] == cases[i][2 + j], "dims_create(%d, %d)[%d] = %d, want %d", n, k, j,
                  d[j], cases[i][2 + j]);
    }
    /* every n up to 1500 in 2..4 free dimensions against the brute force */
    for (int k = 2; k <= 4; k++)
        for (int n = 1; n <= 1500; n++) {
            int d[4] = {0};
            OK(MPI_Dims_create(n, k, d));
            ref_found = 0;
            ref_walk(0, k, n, n);
            for (int j = 0; j < k; j++)
                CHECK(d[j] == ref_best[j], "dims_create(%d, %d)[%d] = %d, want %d", n, k, j,
                      d[j], ref_best[j]);
        }
    /* fixed entries stay; the free ones follow the rule among themselves */
    int f[4] = {0, 7, 0, 0};
    OK(MPI_Dims_create(7 * 5040, 4, f));
    CHECK(f[0] == 21 && f[1] == 7 && f[2] == 16 && f[3] == 15,
          "dims_create(35280, [0 7 0 0]) = %d %d %d %d", f[0], f[1], f[2], f[3]);
}

/* 2x2 grid, row-major: rank = 2*row + col */
static void grid(int periodic)
{
    int dims[2] = {2, 2}, periods[2] = {periodic, periodic};
    MPI_Comm c;
    OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &c));
    if (rank >= 4) {
        CHECK(c == MPI_COMM_NULL, "rank outside the grid got a communicator");
        return;
    }
    int r, s, t, nd;
    OK(MPI_Comm_rank(c, &r));
    OK(MPI_Comm_size(c, &s));
    CHECK(r == rank && s == 4, "cart rank %d size %d", r, s);
    OK(MPI_Topo_test(c, &t));
    CHECK(t == MPI_CART, "topo_test %d", t);
    OK(MPI_Cartdim_get(c, &nd));
    CHECK(nd == 2, "cartdim %d", nd);
    int gd[2], gp[2], gc[2];
    OK(MPI_Cart_get(c, 2, gd, gp, gc));
    CHECK(gd[0] == 2 && gd[1] == 2 && gp[0] == periodic && gp[1] == periodic &&
              gc[0] == rank / 2 && gc[1] == rank % 2,
          "cart_get dims %d %d periods %d %d coords %d %d", gd[0], gd[1], gp[0], gp[1], gc[0],
          gc[1]);
    for (int q = 0; q < 4; q++) {
        int co[2], back;
        OK(MPI_Cart_coords(c, q, 2, co));
        CHECK(co[0] == q / 2 && co[1] == q % 2, "coords of %d: %d %d", q, co[0], co[1]);
        OK(MPI_Cart_rank(c, co, &back));
        CHECK(back == q, "rank of (%d,%d) = %d", co[0], co[1], back);
    }
    /* shifts: in a 2-wide periodic dimension both neighbours are the other one */
    int row = rank / 2, col = rank % 2, src, dst;
    OK(MPI_Cart_shift(c, 0, 1, &src, &dst));
    if (periodic) {
        int other = 2 * (1 - row) + col;
        CHECK(src == other && dst == other, "periodic shift dim0: %d %d", src, dst);
    } else {
        CHECK(src == (row == 0 ? MPI_PROC_NULL : rank - 2) &&
                  dst == (row == 1 ? MPI_PROC_NULL : rank + 2),
              "shift dim0: %d %d", src, dst);
    }
    OK(MPI_Cart_shift(c, 1, -1, &src, &dst));
    if (periodic) {
        int other = 2 * row + 1 - col;
        CHECK(src == other && dst == other, "periodic shift dim1 -1: %d %d", src, dst);
    } else {
        CHECK(src == (col == 1 ? MPI_PROC_NULL : rank + 1) &&
                  dst == (col == 0 ? MPI_PROC_NULL : rank - 1),
              "shift dim1 -1: %d %d", src, dst);
    }
    OK(MPI_Cart_shift(c, 1, 0, &src, &dst));
    CHECK(src == rank && dst == rank, "zero shift: %d %d", src, dst);
    OK(MPI_Cart_shift(c, 0, 2, &src, &dst));
    if (periodic)
        CHECK(src == rank && dst == rank, "periodic shift by 2: %d %d", src, dst);
    else
        CHECK(src == MPI_PROC_NULL && dst == MPI_PROC_NULL, "shift by 2: %d %d", src, dst);
    /* wrapped coordinates */
    int co[2] = {-1, 3}, q;
    if (periodic) {
        OK(MPI_Cart_rank(c, co, &q));
        CHECK(q == 2 * 1 + 1, "rank of (-1, 3) = %d", q);
    } else {
        OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
        expect_err(MPI_Cart_rank(c, co, &q), MPI_ERR_ARG, "non-periodic (-1, 3)");
    }
    /* exchange with the shift neighbours over the grid */
    OK(MPI_Cart_shift(c, 1, 1, &src, &dst));
    int out = rank, in = -7;
    OK(MPI_Sendrecv(&out, 1, MPI_INT, dst, 0, &in, 1, MPI_INT, src, 0, c, MPI_STATUS_IGNORE));
    CHECK(in == (src == MPI_PROC_NULL ? -7 : src), "received %d from %d", in, src);
    /* dup keeps the topology */
    MPI_Comm d;
    OK(MPI_Comm_dup(c, &d));
    OK(MPI_Topo_test(d, &t));
    CHECK(t == MPI_CART, "dup topo %d", t);
    OK(MPI_Cart_get(d, 2, gd, gp, gc));
    CHECK(gp[0] == periodic && gc[0] == row && gc[1] == col, "dup cart_get");
    OK(MPI_Comm_free(&d));
    /* split of a cart communicator has no topology */
    OK(MPI_Comm_split(c, 0, 0, &d));
    OK(MPI_Topo_test(d, &t));
    CHECK(t == MPI_UNDEFINED, "split of cart has topo %d", t);
    OK(MPI_Comm_free(&d));
    OK(MPI_Comm_free(&c));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    grid(1);
    grid(0);

    /* 1-D ring over everyone */
    {
        int dims[1] = {size}, per[1] = {1}, src, dst;
        MPI_Comm ring;
        OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &ring));
        OK(MPI_Cart_shift(ring, 0, 1, &src, &dst));
        CHECK(src == (rank + size - 1) % size && dst == (rank + 1) % size, "ring %d %d", src,
              dst);
        OK(MPI_Cart_shift(ring, 0, -3 * size - 1, &src, &dst));
        CHECK(src == (rank + 1) % size && dst == (rank + size - 1) % size, "ring -3p-1 %d %d",
              src, dst);
        OK(MPI_Comm_free(&ring));
    }
    /* 3-D, row-major order */
    if (size >= 4) {
        int dims[3] = {1, 2, 2}, per[3] = {0, 0, 1}, co[3];
        MPI_Comm c3;
        OK(MPI_Cart_create(MPI_COMM_WORLD, 3, dims, per, 0, &c3));
        if (rank < 4) {
            OK(MPI_Cart_coords(c3, 3, 3, co));
            CHECK(co[0] == 0 && co[1] == 1 && co[2] == 1, "3-D coords of 3: %d %d %d", co[0],
                  co[1], co[2]);
            OK(MPI_Comm_free(&c3));
        }
    }

    /* Dims_create */
    int d2[2] = {0, 0};
    OK(MPI_Dims_create(size, 2, d2));
    CHECK(d2[0] * d2[1] == size && d2[0] >= d2[1], "dims_create(%d, 2) = %d x %d", size, d2[0],
          d2[1]);
    if (size == 4)
        CHECK(d2[0] == 2 && d2[1] == 2, "dims_create(4, 2) = %d x %d", d2[0], d2[1]);
    int d3[3] = {0, 0, 0};
    OK(MPI_Dims_create(12, 3, d3));
    CHECK(d3[0] == 3 && d3[1] == 2 && d3[2] == 2, "dims_create(12, 3) = %d %d %d", d3[0],
          d3[1], d3[2]);
    dims_cases();
    int d4[3] = {0, 3, 0};
    OK(MPI_Dims_create(6, 3, d4));
    CHECK(d4[0] == 2 && d4[1] == 3 && d4[2] == 1, "dims_create(6, [0 3 0]) = %d %d %d", d4[0],
          d4[1], d4[2]);

    /* errors */
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int x[3] = {0, 3, 0}, nd, t, src, dst, co[2];
    MPI_Comm c;
    expect_err(MPI_Dims_create(7, 3, x), MPI_ERR_DIMS, "dims_create(7, [0 3 0])");
    int neg[2] = {-1, 0};
    expect_err(MPI_Dims_create(4, 2, neg), MPI_ERR_DIMS, "negative dims entry");
    expect_err(MPI_Dims_create(4, -1, neg), MPI_ERR_DIMS, "negative ndims");
    expect_err(MPI_Dims_create(0, 2, d2), MPI_ERR_ARG, "nnodes 0");
    expect_err(MPI_Cartdim_get(MPI_COMM_WORLD, &nd), MPI_ERR_TOPOLOGY, "cartdim of world");
    expect_err(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &src, &dst), MPI_ERR_TOPOLOGY,
               "shift on world");
    expect_err(MPI_Cart_coords(MPI_COMM_WORLD, 0, 2, co), MPI_ERR_TOPOLOGY, "coords on world");
    expect_err(MPI_Topo_test(MPI_COMM_NULL, &t), MPI_ERR_COMM, "topo_test of COMM_NULL");
    OK(MPI_Topo_test(MPI_COMM_WORLD, &t));
    CHECK(t == MPI_UNDEFINED, "world topo %d", t);
    int big[2] = {size, 2}, per2[2] = {0, 0};
    expect_err(MPI_Cart_create(MPI_COMM_WORLD, 2, big, per2, 0, &c), MPI_ERR_DIMS,
               "grid larger than comm");
    int zero[2] = {0, 2};
    expect_err(MPI_Cart_create(MPI_COMM_WORLD, 2, zero, per2, 0, &c), MPI_ERR_DIMS,
               "zero dim");
    expect_err(MPI_Cart_create(MPI_COMM_WORLD, -1, zero, per2, 0, &c), MPI_ERR_DIMS,
               "ndims -1");
    {
        int dims[2] = {2, 2};
        OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per2, 0, &c));
        if (c != MPI_COMM_NULL) {
            expect_err(MPI_Cart_shift(c, 2, 1, &src, &dst), MPI_ERR_ARG, "direction 2");
            expect_err(MPI_Cart_coords(c, 4, 2, co), MPI_ERR_RANK, "coords of rank 4");
            expect_err(MPI_Cart_coords(c, 0, 1, co), MPI_ERR_ARG, "maxdims 1");
            OK(MPI_Comm_free(&c));
        }
    }

    MPI_Finalize();
    if (rank == 0)
        printf("t_topo_cart: ok (np %d)\n", size);
    return 0;
}
