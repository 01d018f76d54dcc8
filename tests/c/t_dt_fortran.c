/* np: 2 4 */
/* vms: v2 */
/* The Fortran and C++ named types from C (gfortran layouts): reductions as
 * MPI-3.1 5.9.2's table allows them (SUM/PROD/MAX on INTEGER*, REAL*,
 * COMPLEX*, the IEEE quad REAL16; LAND/LOR/LXOR on LOGICAL giving .TRUE. =
 * 1; MINLOC/MAXLOC on 2INTEGER, 2REAL, 2DOUBLE_PRECISION), ops the table
 * does not allow refused with MPI_ERR_OP, point-to-point of CHARACTER,
 * CXX_BOOL and CXX_DOUBLE_COMPLEX between ranks, and accumulates on
 * INTEGER and 2DOUBLE_PRECISION into a window. */
#include <complex.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "t_check.h"

static int rank, size;

__extension__ typedef __float128 quad;

static void test_sums(void)
{
    int n = size * (size - 1) / 2; /* sum of the ranks */
    int i = rank, io;
    OK(MPI_Allreduce(&i, &io, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD));
    CHECK(io == n, "SUM INTEGER %d", io);
    long long l = (long long)rank << 33, lo;
    OK(MPI_Allreduce(&l, &lo, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD));
    CHECK(lo == (long long)n << 33, "SUM INTEGER8");
    signed char c = (signed char)(rank + 1), co;
    OK(MPI_Allreduce(&c, &co, 1, MPI_INTEGER1, MPI_MAX, MPI_COMM_WORLD));
    CHECK(co == size, "MAX INTEGER1 %d", co);
    float f[2] = { rank + 0.5f, -rank }, fo[2];
    OK(MPI_Allreduce(f, fo, 2, MPI_REAL, MPI_SUM, MPI_COMM_WORLD));
    CHECK(fo[0] == n + 0.5f * size && fo[1] == -n, "SUM REAL %g %g", fo[0], fo[1]);
    double d = rank + 1, dp;
    OK(MPI_Allreduce(&d, &dp, 1, MPI_DOUBLE_PRECISION, MPI_PROD, MPI_COMM_WORLD));
    double fact = 1;
    for (int k = 2; k <= size; k++)
        fact *= k;
    CHECK(dp == fact, "PROD DOUBLE_PRECISION %g", dp);
    float complex z = rank + I, zo;
    OK(MPI_Allreduce(&z, &zo, 1, MPI_COMPLEX, MPI_SUM, MPI_COMM_WORLD));
    CHECK(crealf(zo) == n && cimagf(zo) == size, "SUM COMPLEX");
    double complex w = I, wo;
    OK(MPI_Allreduce(&w, &wo, 1, MPI_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD));
    double complex want = 1;
    for (int k = 0; k < size; k++)
        want *= I;
    CHECK(wo == want, "PROD DOUBLE_COMPLEX");
    quad q = (quad)rank / 3, qo;
    OK(MPI_Allreduce(&q, &qo, 1, MPI_REAL16, MPI_SUM, MPI_COMM_WORLD));
    quad err = qo - (quad)n / 3;
    CHECK(err < 1e-30 && err > -1e-30, "SUM REAL16 is not done in quad precision");
    OK(MPI_Allreduce(&q, &qo, 1, MPI_REAL16, MPI_MAX, MPI_COMM_WORLD));
    CHECK(qo == (quad)(size - 1) / 3, "MAX REAL16");
}

static void test_logical(void)
{
    int t = rank % 2 ? 1 : 0, land, lor, lxor;
    OK(MPI_Allreduce(&t, &land, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD));
    OK(MPI_Allreduce(&t, &lor, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD));
    OK(MPI_Allreduce(&t, &lxor, 1, MPI_LOGICAL, MPI_LXOR, MPI_COMM_WORLD));
    CHECK(land == 0 && lor == 1 && lxor == (size / 2) % 2, "LOGICAL: %d %d %d", land, lor, lxor);
    int all = 5, allo; /* any nonzero is .TRUE.; the result is 1 */
    OK(MPI_Allreduce(&all, &allo, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD));
    CHECK(allo == 1, "LAND of .TRUE. is %d", allo);
    _Bool b = rank == 0, bo;
    OK(MPI_Allreduce(&b, &bo, 1, MPI_CXX_BOOL, MPI_LOR, MPI_COMM_WORLD));
    CHECK(bo == 1, "LOR CXX_BOOL");
}

static void test_loc(void)
{
    float r[2] = { (float)(rank % 2), (float)rank }, ro[2];
    OK(MPI_Allreduce(r, ro, 1, MPI_2REAL, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(ro[0] == 0 && ro[1] == 0, "MINLOC 2REAL (%g, %g)", ro[0], ro[1]);
    double d[2] = { -rank, rank * 10.0 }, dout[2];
    OK(MPI_Allreduce(d, dout, 1, MPI_2DOUBLE_PRECISION, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(dout[0] == -(size - 1) && dout[1] == (size - 1) * 10.0, "MINLOC 2DOUBLE_PRECISION");
    int iv[2] = { 7, rank }, io[2];
    OK(MPI_Allreduce(iv, io, 1, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD));
    CHECK(io[0] == 7 && io[1] == 0, "MAXLOC 2INTEGER ties take the smaller index");
}

static void test_refused(void)
{
    float f = 1, fo;
    int i = 1, io;
    char ch = 'a', cho;
    t_expect_err(MPI_Allreduce(&f, &fo, 1, MPI_REAL, MPI_LAND, MPI_COMM_WORLD), MPI_ERR_OP,
                 "MPI_Allreduce", "LAND on REAL");
    t_expect_err(MPI_Allreduce(&i, &io, 1, MPI_INTEGER, MPI_LOR, MPI_COMM_WORLD), MPI_ERR_OP,
                 "MPI_Allreduce", "LOR on INTEGER");
    t_expect_err(MPI_Allreduce(&i, &io, 1, MPI_LOGICAL, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP,
                 "MPI_Allreduce", "SUM on LOGICAL");
    t_expect_err(MPI_Allreduce(&ch, &cho, 1, MPI_CHARACTER, MPI_MAX, MPI_COMM_WORLD), MPI_ERR_OP,
                 "MPI_Allreduce", "MAX on CHARACTER");
    OK(MPI_Allreduce(&i, &io, 1, MPI_INTEGER, MPI_BXOR, MPI_COMM_WORLD));
    CHECK(io == size % 2, "BXOR INTEGER");
}

static void test_p2p(MPI_Comm pair)
{
    int me;
    MPI_Comm_rank(pair, &me);
    char s[5] = "abcd";
    _Bool b[3] = { 1, 0, 1 };
    double complex z[2] = { 1 + 2 * I, -3 };
    if (me == 0) {
        OK(MPI_Send(s, 4, MPI_CHARACTER, 1, 0, pair));
        OK(MPI_Send(b, 3, MPI_CXX_BOOL, 1, 1, pair));
        OK(MPI_Send(z, 2, MPI_CXX_DOUBLE_COMPLEX, 1, 2, pair));
    } else {
        memset(s, 0, sizeof s);
        memset(b, 0, sizeof b);
        memset(z, 0, sizeof z);
        MPI_Status st;
        int n;
        OK(MPI_Recv(s, 4, MPI_CHARACTER, 0, 0, pair, MPI_STATUS_IGNORE));
        OK(MPI_Recv(b, 3, MPI_CXX_BOOL, 0, 1, pair, MPI_STATUS_IGNORE));
        OK(MPI_Recv(z, 2, MPI_CXX_DOUBLE_COMPLEX, 0, 2, pair, &st));
        OK(MPI_Get_count(&st, MPI_CXX_DOUBLE_COMPLEX, &n));
        CHECK(strcmp(s, "abcd") == 0 && b[0] && !b[1] && b[2] && n == 2 && z[0] == 1 + 2 * I &&
                  z[1] == -3,
              "p2p of Fortran/C++ types");
    }
}

static void test_accumulate(void)
{
    struct { int sum; double loc[2]; } *w;
    MPI_Win win;
    OK(MPI_Win_allocate(sizeof *w, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w, &win));
    w->sum = 0;
    w->loc[0] = -1e300;
    w->loc[1] = -1;
    OK(MPI_Barrier(MPI_COMM_WORLD));
    int one = rank + 1;
    double mine[2] = { rank % 3, rank };
    OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    OK(MPI_Accumulate(&one, 1, MPI_INTEGER, 0, 0, 1, MPI_INTEGER, MPI_SUM, win));
    OK(MPI_Accumulate(mine, 1, MPI_2DOUBLE_PRECISION, 0, 8, 1, MPI_2DOUBLE_PRECISION,
                      MPI_MAXLOC, win));
    OK(MPI_Win_unlock(0, win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        int maxv = size > 2 ? 2 : size - 1;
        CHECK(w->sum == size * (size + 1) / 2, "accumulated INTEGER sum %d", w->sum);
        CHECK(w->loc[0] == maxv && w->loc[1] == maxv, "accumulated MAXLOC (%g, %g)", w->loc[0],
              w->loc[1]);
    }
    OK(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    test_sums();
    test_logical();
    test_loc();
    test_refused();
    MPI_Comm pair = t_pair_comm();
    test_p2p(pair);
    OK(MPI_Comm_free(&pair));
    test_accumulate();
    MPI_Finalize();
    if (rank == 0)
        printf("t_dt_fortran: OK\n");
    return 0;
}
