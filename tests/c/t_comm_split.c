/* np: 1 3 4 */
/* MPI_Comm_split with colors and keys (same, increasing, reversed, tied),
 * MPI_UNDEFINED, nested splits, split_type, and traffic on the results. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size;

#include "t_check.h"

/* World rank of each member of c, in c's rank order (gathered by allreduce). */
static void members(MPI_Comm c, int *out, int n)
{
    int *in = calloc((size_t)n, sizeof(int));
    int r;
    OK(MPI_Comm_rank(c, &r));
    in[r] = rank + 1;
    OK(MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, c));
    for (int i = 0; i < n; i++)
        out[i]--;
    free(in);
}

/* The members of `c` must be exactly want[0..n) in that order, and the group
 * translation must agree. */
static void expect_members(MPI_Comm c, const int *want, int n, const char *what)
{
    int s, r;
    OK(MPI_Comm_size(c, &s));
    OK(MPI_Comm_rank(c, &r));
    CHECK(s == n, "%s: size %d, want %d", what, s, n);
    CHECK(want[r] == rank, "%s: my rank %d holds world rank %d", what, r, want[r]);
    int got[64];
    members(c, got, n);
    for (int i = 0; i < n; i++)
        CHECK(got[i] == want[i], "%s: member %d is world %d, want %d", what, i, got[i], want[i]);
    MPI_Group gc, gw;
    OK(MPI_Comm_group(c, &gc));
    OK(MPI_Comm_group(MPI_COMM_WORLD, &gw));
    int idx[64], tr[64];
    for (int i = 0; i < n; i++)
        idx[i] = i;
    OK(MPI_Group_translate_ranks(gc, n, idx, gw, tr));
    for (int i = 0; i < n; i++)
        CHECK(tr[i] == want[i], "%s: translate %d -> %d, want %d", what, i, tr[i], want[i]);
    OK(MPI_Group_free(&gc));
    OK(MPI_Group_free(&gw));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int want[64], n;
    MPI_Comm c;

    /* one color, key 0: same order as world */
    OK(MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &c));
    for (int i = 0; i < size; i++)
        want[i] = i;
    expect_members(c, want, size, "one color");
    int res;
    OK(MPI_Comm_compare(c, MPI_COMM_WORLD, &res));
    CHECK(res == MPI_CONGRUENT, "split(0,0) vs world: %d", res);
    OK(MPI_Comm_free(&c));

    /* reversed keys */
    OK(MPI_Comm_split(MPI_COMM_WORLD, 5, size - rank, &c));
    for (int i = 0; i < size; i++)
        want[i] = size - 1 - i;
    expect_members(c, want, size, "reversed");
    OK(MPI_Comm_compare(c, MPI_COMM_WORLD, &res));
    CHECK(res == (size == 1 ? MPI_CONGRUENT : MPI_SIMILAR), "reversed vs world: %d", res);
    OK(MPI_Comm_free(&c));

    /* even / odd, keys reversed within each color */
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &c));
    n = 0;
    for (int i = size - 1; i >= 0; i--)
        if (i % 2 == rank % 2)
            want[n++] = i;
    expect_members(c, want, n, "parity");
    /* a second split of the split: halves of it, tied keys keep the order */
    {
        int cr, cs;
        MPI_Comm_rank(c, &cr);
        MPI_Comm_size(c, &cs);
        MPI_Comm cc;
        OK(MPI_Comm_split(c, cr < cs / 2, 7, &cc));
        int w2[64], m = 0;
        for (int i = 0; i < cs; i++)
            if ((i < cs / 2) == (cr < cs / 2))
                w2[m++] = want[i];
        expect_members(cc, w2, m, "nested");
        OK(MPI_Comm_free(&cc));
    }
    /* the parity communicators and world work at the same time */
    int v = rank, sum = -1;
    OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, c));
    int wantsum = 0;
    for (int i = 0; i < n; i++)
        wantsum += want[i];
    CHECK(sum == wantsum, "parity sum %d, want %d", sum, wantsum);
    OK(MPI_Comm_free(&c));

    /* MPI_UNDEFINED: rank 0 (and every third rank) stays out */
    int color = rank % 3 == 0 ? MPI_UNDEFINED : rank % 3;
    OK(MPI_Comm_split(MPI_COMM_WORLD, color, rank, &c));
    if (color == MPI_UNDEFINED) {
        CHECK(c == MPI_COMM_NULL, "undefined color gave a communicator");
    } else {
        n = 0;
        for (int i = 0; i < size; i++)
            if (i % 3 == rank % 3)
                want[n++] = i;
        expect_members(c, want, n, "mod 3");
        OK(MPI_Comm_free(&c));
    }

    /* everyone undefined */
    OK(MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, 0, &c));
    CHECK(c == MPI_COMM_NULL, "all undefined gave a communicator");

    /* singleton colors */
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &c));
    want[0] = rank;
    expect_members(c, want, 1, "singleton");
    OK(MPI_Comm_compare(c, MPI_COMM_SELF, &res));
    CHECK(res == MPI_CONGRUENT, "singleton vs self %d", res);
    OK(MPI_Comm_free(&c));

    /* split_type SHARED: every rank lands in a communicator that contains it;
     * all of them agree on who is in it */
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &c));
    CHECK(c != MPI_COMM_NULL, "split_type SHARED gave COMM_NULL");
    {
        int s, r;
        MPI_Comm_size(c, &s);
        MPI_Comm_rank(c, &r);
        CHECK(s >= 1 && s <= size && r >= 0 && r < s, "shared size %d rank %d", s, r);
        int got[64];
        members(c, got, s);
        for (int i = 1; i < s; i++)
            CHECK(got[i] > got[i - 1], "shared comm not in world order");
        /* sizes add up over the distinct communicators: each rank counts 1/s */
        double share = 1.0 / s, tot = 0;
        OK(MPI_Allreduce(&share, &tot, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        int leaders = r == 0, nleaders = 0;
        OK(MPI_Allreduce(&leaders, &nleaders, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK((int)(tot + 0.5) == nleaders, "shared comms: %g vs %d leaders", tot, nleaders);
        OK(MPI_Comm_free(&c));
    }
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "split_type UNDEFINED gave a communicator");

    /* bad arguments */
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int rc = MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &c), cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "negative color gave class %d", cls);
    rc = MPI_Comm_split(MPI_COMM_NULL, 0, 0, &c);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "split of COMM_NULL gave class %d", cls);
    rc = MPI_Comm_split_type(MPI_COMM_WORLD, 77, 0, MPI_INFO_NULL, &c);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "split_type 77 gave class %d", cls);

    MPI_Finalize();
    if (rank == 0)
        printf("t_comm_split: ok (np %d)\n", size);
    return 0;
}
