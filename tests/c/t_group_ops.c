/* np: 4 6 */
/* Group constructors (range_excl too), set operations, translate and compare against
 * hand-computed answers, and the argument errors of each call. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size;

#include "t_check.h"

static MPI_Group world;

/* g must hold exactly the world ranks want[0..n) in that order */
static void expect(MPI_Group g, const int *want, int n, const char *what)
{
    int s, r;
    OK(MPI_Group_size(g, &s));
    CHECK(s == n, "%s: size %d, want %d", what, s, n);
    int idx[64], tr[64];
    for (int i = 0; i < n; i++)
        idx[i] = i;
    OK(MPI_Group_translate_ranks(g, n, idx, world, tr));
    for (int i = 0; i < n; i++)
        CHECK(tr[i] == want[i], "%s: member %d is world %d, want %d", what, i, tr[i], want[i]);
    int mine = MPI_UNDEFINED;
    for (int i = 0; i < n; i++)
        if (want[i] == rank)
            mine = i;
    OK(MPI_Group_rank(g, &r));
    CHECK(r == mine, "%s: my rank %d, want %d", what, r, mine);
}

static void expect_err(int rc, int want, const char *what)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == want, "%s: error class %d, want %d", what, cls, want);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int N = size; /* 4 or 6 */
    int want[64];
    MPI_Group a, b, u, x, d, e;

    /* a = incl {3, 1, 0} ; b = excl {0} = {1, 2, ..., N-1} */
    OK(MPI_Group_incl(world, 3, (int[]){3, 1, 0}, &a));
    expect(a, (int[]){3, 1, 0}, 3, "incl");
    OK(MPI_Group_excl(world, 1, (int[]){0}, &b));
    for (int i = 1; i < N; i++)
        want[i - 1] = i;
    expect(b, want, N - 1, "excl");

    /* union a ∪ b = 3 1 0 then 2 4 5 ... */
    OK(MPI_Group_union(a, b, &u));
    int n = 0;
    want[n++] = 3, want[n++] = 1, want[n++] = 0, want[n++] = 2;
    for (int i = 4; i < N; i++)
        want[n++] = i;
    expect(u, want, n, "union");
    /* a ∩ b = 3 1 (a's order); b ∩ a = 1 3 */
    OK(MPI_Group_intersection(a, b, &x));
    expect(x, (int[]){3, 1}, 2, "intersection");
    OK(MPI_Group_free(&x));
    OK(MPI_Group_intersection(b, a, &x));
    expect(x, (int[]){1, 3}, 2, "intersection ba");
    /* a - b = 0 ; b - a = 2 4 5 ... */
    OK(MPI_Group_difference(a, b, &d));
    expect(d, (int[]){0}, 1, "difference");
    OK(MPI_Group_free(&d));
    OK(MPI_Group_difference(b, a, &d));
    n = 0;
    want[n++] = 2;
    for (int i = 4; i < N; i++)
        want[n++] = i;
    expect(d, want, n, "difference ba");
    OK(MPI_Group_free(&d));
    /* empty results are MPI_GROUP_EMPTY */
    OK(MPI_Group_difference(a, a, &e));
    CHECK(e == MPI_GROUP_EMPTY, "a - a is not MPI_GROUP_EMPTY");
    int s;
    OK(MPI_Group_size(e, &s));
    CHECK(s == 0, "empty size %d", s);
    OK(MPI_Group_free(&e));
    CHECK(e == MPI_GROUP_NULL, "freeing GROUP_EMPTY did not null it");
    OK(MPI_Group_union(MPI_GROUP_EMPTY, a, &e));
    expect(e, (int[]){3, 1, 0}, 3, "empty union a");
    OK(MPI_Group_free(&e));
    OK(MPI_Group_incl(world, 0, NULL, &e));
    CHECK(e == MPI_GROUP_EMPTY, "incl of none");
    int allr[64];
    for (int i = 0; i < N; i++)
        allr[i] = N - 1 - i;
    OK(MPI_Group_excl(world, N, allr, &e));
    CHECK(e == MPI_GROUP_EMPTY, "excl of all");

    /* range_incl: (N-1 .. 0 step -2), then (0 .. 0 step 1) */
    int ranges[2][3] = {{N - 1, 0, -2}, {0, 0, 1}};
    OK(MPI_Group_range_incl(world, 2, ranges, &x));
    n = 0;
    for (int i = N - 1; i >= 0; i -= 2)
        want[n++] = i;
    want[n++] = 0;
    expect(x, want, n, "range_incl");
    OK(MPI_Group_free(&x));

    /* range_excl of the same ranges: the other members, in group order */
    OK(MPI_Group_range_excl(world, 2, ranges, &x));
    n = 0;
    for (int i = 0; i < N; i++)
        if (i != 0 && (N - 1 - i) % 2)
            want[n++] = i;
    expect(x, want, n, "range_excl");
    OK(MPI_Group_free(&x));
    int every[1][3] = {{0, N - 1, 1}};
    OK(MPI_Group_range_excl(world, 1, every, &e));
    CHECK(e == MPI_GROUP_EMPTY, "range_excl of all");
    OK(MPI_Group_range_excl(world, 0, NULL, &x));
    OK(MPI_Group_compare(x, world, &n));
    CHECK(n == MPI_IDENT, "range_excl of none: compare gave %d", n);
    OK(MPI_Group_free(&x));

    /* translate a -> world and world -> a, with PROC_NULL */
    int tr[8];
    OK(MPI_Group_translate_ranks(world, 5, (int[]){0, 1, 2, 3, MPI_PROC_NULL}, a, tr));
    CHECK(tr[0] == 2 && tr[1] == 1 && tr[2] == MPI_UNDEFINED && tr[3] == 0 &&
              tr[4] == MPI_PROC_NULL,
          "translate world->a: %d %d %d %d %d", tr[0], tr[1], tr[2], tr[3], tr[4]);
    OK(MPI_Group_translate_ranks(a, 0, NULL, b, NULL));

    /* compare */
    int res;
    OK(MPI_Group_compare(a, a, &res));
    CHECK(res == MPI_IDENT, "a vs a %d", res);
    OK(MPI_Group_incl(world, 3, (int[]){0, 1, 3}, &x));
    OK(MPI_Group_compare(a, x, &res));
    CHECK(res == MPI_SIMILAR, "a vs permuted %d", res);
    OK(MPI_Group_free(&x));
    OK(MPI_Group_incl(world, 3, (int[]){3, 1, 0}, &x));
    OK(MPI_Group_compare(a, x, &res));
    CHECK(res == MPI_IDENT, "a vs same list %d", res);
    OK(MPI_Group_free(&x));
    OK(MPI_Group_compare(a, b, &res));
    CHECK(res == MPI_UNEQUAL, "a vs b %d", res);
    OK(MPI_Group_compare(u, world, &res));
    CHECK(res == MPI_SIMILAR, "union vs world %d", res);
    OK(MPI_Group_compare(MPI_GROUP_EMPTY, MPI_GROUP_EMPTY, &res));
    CHECK(res == MPI_IDENT, "empty vs empty %d", res);

    /* errors (reported on MPI_COMM_WORLD's handler) */
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    x = MPI_GROUP_NULL;
    expect_err(MPI_Group_size(MPI_GROUP_NULL, &s), MPI_ERR_GROUP, "size of GROUP_NULL");
    expect_err(MPI_Group_rank((MPI_Group)0x12345678, &s), MPI_ERR_GROUP, "rank of junk");
    expect_err(MPI_Group_incl(world, 2, (int[]){0, N}, &x), MPI_ERR_RANK, "incl rank N");
    expect_err(MPI_Group_incl(world, 2, (int[]){1, 1}, &x), MPI_ERR_RANK, "incl dup");
    expect_err(MPI_Group_incl(world, 1, (int[]){-1}, &x), MPI_ERR_RANK, "incl -1");
    expect_err(MPI_Group_incl(world, -1, (int[]){0}, &x), MPI_ERR_ARG, "incl n -1");
    expect_err(MPI_Group_excl(world, 2, (int[]){2, 2}, &x), MPI_ERR_RANK, "excl dup");
    expect_err(MPI_Group_excl(world, 1, (int[]){N + 3}, &x), MPI_ERR_RANK, "excl N+3");
    int r0[1][3] = {{0, N - 1, 0}};
    expect_err(MPI_Group_range_incl(world, 1, r0, &x), MPI_ERR_ARG, "stride 0");
    int r1[1][3] = {{0, N, 1}};
    expect_err(MPI_Group_range_incl(world, 1, r1, &x), MPI_ERR_RANK, "range last N");
    int r2[1][3] = {{N - 1, 0, 1}};
    expect_err(MPI_Group_range_incl(world, 1, r2, &x), MPI_ERR_ARG, "range wrong way");
    int r3[2][3] = {{0, 2, 1}, {2, 3, 1}};
    expect_err(MPI_Group_range_incl(world, 2, r3, &x), MPI_ERR_RANK, "overlapping ranges");
    expect_err(MPI_Group_range_excl(world, 1, r0, &x), MPI_ERR_ARG, "excl stride 0");
    expect_err(MPI_Group_range_excl(world, 1, r1, &x), MPI_ERR_RANK, "excl range last N");
    expect_err(MPI_Group_range_excl(world, 2, r3, &x), MPI_ERR_RANK, "excl overlapping");
    expect_err(MPI_Group_range_excl(MPI_GROUP_NULL, 1, r0, &x), MPI_ERR_GROUP, "excl NULL");
    expect_err(MPI_Group_range_excl(world, 1, r0, NULL), MPI_ERR_ARG, "excl NULL out");
    CHECK(x == MPI_GROUP_NULL, "a failed constructor wrote newgroup");
    expect_err(MPI_Group_translate_ranks(a, 1, (int[]){3}, world, tr), MPI_ERR_RANK,
               "translate rank 3 of a");
    expect_err(MPI_Group_union(a, MPI_GROUP_NULL, &x), MPI_ERR_GROUP, "union with NULL");
    expect_err(MPI_Group_compare(a, b, NULL), MPI_ERR_ARG, "compare NULL result");
    expect_err(MPI_Group_free(NULL), MPI_ERR_ARG, "free(NULL)");
    x = MPI_GROUP_NULL;
    expect_err(MPI_Group_free(&x), MPI_ERR_GROUP, "free GROUP_NULL");
    {
        MPI_Group t, keep;
        OK(MPI_Group_incl(world, 1, (int[]){0}, &t));
        keep = t;
        OK(MPI_Group_free(&t));
        expect_err(MPI_Group_size(keep, &s), MPI_ERR_GROUP, "size of freed group");
    }

    OK(MPI_Group_free(&a));
    OK(MPI_Group_free(&b));
    OK(MPI_Group_free(&u));
    OK(MPI_Group_free(&world));
    MPI_Finalize();
    if (rank == 0)
        printf("t_group_ops: ok (np %d)\n", size);
    return 0;
}
