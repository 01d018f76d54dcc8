/* np: 2 4 */
/* vms: v2 */
/* MPI_Type_create_darray and _subarray moving data between ranks: every
 * rank sends its darray part of a global array (block, cyclic(k), none,
 * both orders) as plain ints to rank 0, which receives each part with
 * that rank's darray type into one array: the parts must tile it exactly.
 * A subarray of a 3-d array goes from one rank of a pair into another
 * position of the other's. Then bad input to both constructors. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_check.h"

static int rank, size;

#define G0 6
#define G1 10

static void darray_case(const int *dist, const int *darg, int order, const char *what)
{
    int g[2] = { G0, G1 }, ps[2] = { 0, 0 }, global[G0 * G1], *got = NULL;
    OK(MPI_Dims_create(size, 2, ps));
    int use_ps[2] = { dist[0] == MPI_DISTRIBUTE_NONE ? 1 : ps[0],
                      dist[1] == MPI_DISTRIBUTE_NONE ? 1 : ps[1] };
    if (use_ps[0] * use_ps[1] != size) /* a NONE dimension takes the whole grid elsewhere */
        use_ps[dist[0] == MPI_DISTRIBUTE_NONE ? 1 : 0] = size;
    for (int i = 0; i < G0 * G1; i++)
        global[i] = 1000 + i;
    MPI_Datatype mine;
    OK(MPI_Type_create_darray(size, rank, 2, g, dist, darg, use_ps, order, MPI_INT, &mine));
    OK(MPI_Type_commit(&mine));
    MPI_Aint lb, ext;
    int n;
    OK(MPI_Type_get_extent(mine, &lb, &ext));
    OK(MPI_Type_size(mine, &n));
    CHECK(lb == 0 && ext == (MPI_Aint)sizeof global, "%s: lb %ld extent %ld", what, (long)lb,
          (long)ext);
    n /= (int)sizeof(int);
    int *part = malloc(sizeof(int) * (size_t)(n + 1));
    int pos = 0;
    OK(MPI_Pack(global, 1, mine, part, (int)sizeof(int) * (n + 1), &pos, MPI_COMM_WORLD));
    MPI_Request req;
    OK(MPI_Isend(part, n, MPI_INT, 0, 7, MPI_COMM_WORLD, &req));
    if (rank == 0) {
        got = calloc(G0 * G1, sizeof *got);
        int total = 0;
        for (int r = 0; r < size; r++) {
            MPI_Datatype theirs;
            MPI_Status st;
            OK(MPI_Type_create_darray(size, r, 2, g, dist, darg, use_ps, order, MPI_INT,
                                      &theirs));
            OK(MPI_Type_commit(&theirs));
            OK(MPI_Recv(got, 1, theirs, r, 7, MPI_COMM_WORLD, &st));
            int k;
            OK(MPI_Get_count(&st, MPI_INT, &k));
            total += k;
            OK(MPI_Type_free(&theirs));
        }
        CHECK(total == G0 * G1, "%s: the parts hold %d elements, not %d", what, total, G0 * G1);
        for (int i = 0; i < G0 * G1; i++)
            CHECK(got[i] == 1000 + i, "%s: cell %d is %d", what, i, got[i]);
        free(got);
    }
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    free(part);
    OK(MPI_Type_free(&mine));
}

static void test_darray(void)
{
    const int B = MPI_DISTRIBUTE_BLOCK, C = MPI_DISTRIBUTE_CYCLIC, N = MPI_DISTRIBUTE_NONE,
              D = MPI_DISTRIBUTE_DFLT_DARG;
    darray_case((int[]){ B, C }, (int[]){ D, 2 }, MPI_ORDER_C, "block x cyclic(2), C");
    darray_case((int[]){ C, B }, (int[]){ D, D }, MPI_ORDER_FORTRAN, "cyclic x block, Fortran");
    darray_case((int[]){ N, C }, (int[]){ D, 3 }, MPI_ORDER_C, "none x cyclic(3), C");
    darray_case((int[]){ B, N }, (int[]){ 4, D }, MPI_ORDER_FORTRAN, "block(4) x none, Fortran");
}

/* A 2 x 3 x 4 block of doubles from (1, 2, 3) of a 4 x 6 x 8 array into
 * (2, 0, 1) of the other rank's. */
static void test_subarray(MPI_Comm pair)
{
    int me, sz[3] = { 4, 6, 8 }, sub[3] = { 2, 3, 4 }, from[3] = { 1, 2, 3 }, to[3] = { 2, 0, 1 };
    MPI_Comm_rank(pair, &me);
    static double a[4][6][8];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 6; j++)
            for (int k = 0; k < 8; k++)
                a[i][j][k] = me == 0 ? i * 100 + j * 10 + k : -1;
    MPI_Datatype t;
    OK(MPI_Type_create_subarray(3, sz, sub, me == 0 ? from : to, MPI_ORDER_C, MPI_DOUBLE, &t));
    OK(MPI_Type_commit(&t));
    if (me == 0) {
        OK(MPI_Send(a, 1, t, 1, 3, pair));
    } else {
        OK(MPI_Recv(a, 1, t, 0, 3, pair, MPI_STATUS_IGNORE));
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 6; j++)
                for (int k = 0; k < 8; k++) {
                    int in = i >= 2 && i < 4 && j < 3 && k >= 1 && k < 5;
                    double want = in ? (i - 1) * 100 + (j + 2) * 10 + (k + 2) : -1;
                    CHECK(a[i][j][k] == want, "subarray: a[%d][%d][%d] = %g, want %g", i, j, k,
                          a[i][j][k], want);
                }
    }
    OK(MPI_Type_free(&t));
}

static void test_errors(void)
{
    MPI_Datatype t;
    int sz[2] = { 4, 5 }, sub[2] = { 2, 3 }, st[2] = { 1, 2 }, bad[2] = { 3, 2 };
    const char *fs = "MPI_Type_create_subarray", *fd = "MPI_Type_create_darray";
    t_expect_err(MPI_Type_create_subarray(0, sz, sub, st, MPI_ORDER_C, MPI_INT, &t),
                 MPI_ERR_ARG, fs, "ndims 0");
    t_expect_err(MPI_Type_create_subarray(2, sz, sub, bad, MPI_ORDER_C, MPI_INT, &t),
                 MPI_ERR_ARG, fs, "start + subsize beyond size");
    t_expect_err(MPI_Type_create_subarray(2, sz, sub, st, 99, MPI_INT, &t), MPI_ERR_ARG, fs,
                 "bad order");
    t_expect_err(MPI_Type_create_subarray(2, NULL, sub, st, MPI_ORDER_C, MPI_INT, &t),
                 MPI_ERR_ARG, fs, "NULL sizes");
    t_expect_err(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_DATATYPE_NULL, &t),
                 MPI_ERR_TYPE, fs, "null oldtype");
    int g[2] = { 6, 6 }, d[2] = { MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC },
        a[2] = { MPI_DISTRIBUTE_DFLT_DARG, 1 }, p[2] = { 2, 2 };
    t_expect_err(MPI_Type_create_darray(4, 4, 2, g, d, a, p, MPI_ORDER_C, MPI_INT, &t),
                 MPI_ERR_ARG, fd, "rank beyond size");
    t_expect_err(MPI_Type_create_darray(3, 0, 2, g, d, a, p, MPI_ORDER_C, MPI_INT, &t),
                 MPI_ERR_ARG, fd, "grid of 4 for 3 processes");
    int small[2] = { 2, 1 };
    t_expect_err(MPI_Type_create_darray(4, 0, 2, g, d, small, p, MPI_ORDER_C, MPI_INT, &t),
                 MPI_ERR_ARG, fd, "blocks too small");
    int none[2] = { MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_CYCLIC };
    t_expect_err(MPI_Type_create_darray(4, 0, 2, g, none, a, p, MPI_ORDER_C, MPI_INT, &t),
                 MPI_ERR_ARG, fd, "NONE over 2 processes");
    int weird[2] = { 77, MPI_DISTRIBUTE_CYCLIC };
    t_expect_err(MPI_Type_create_darray(4, 0, 2, g, weird, a, p, MPI_ORDER_C, MPI_INT, &t),
                 MPI_ERR_ARG, fd, "bad distribution");
    int zero[2] = { 0, 1 };
    t_expect_err(MPI_Type_create_darray(4, 0, 2, g, d, zero, p, MPI_ORDER_C, MPI_INT, &t),
                 MPI_ERR_ARG, fd, "darg 0");
    t_expect_err(MPI_Type_create_darray(4, 0, 2, g, d, a, p, MPI_ORDER_C, MPI_INT, NULL),
                 MPI_ERR_ARG, fd, "NULL newtype");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    test_darray();
    MPI_Comm pair = t_pair_comm();
    test_subarray(pair);
    OK(MPI_Comm_free(&pair));
    test_errors();
    MPI_Finalize();
    if (rank == 0)
        printf("t_dt_array: OK\n");
    return 0;
}
