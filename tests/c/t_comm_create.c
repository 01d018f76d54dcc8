/* np: 2 4 5 */
/* net: h4 */
/* MPI_Comm_create from group subsets (in order, reversed, empty), its use,
 * the group outliving the communicator, and bad groups. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size;

#include "t_check.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Group world, g;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));

    /* even ranks, listed from the highest down */
    int ranks[64], n = 0;
    for (int i = size - 1; i >= 0; i--)
        if (i % 2 == 0)
            ranks[n++] = i;
    OK(MPI_Group_incl(world, n, ranks, &g));
    MPI_Comm c;
    OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    OK(MPI_Group_free(&g)); /* the communicator keeps its own reference */
    if (rank % 2) {
        CHECK(c == MPI_COMM_NULL, "odd rank got a communicator");
    } else {
        int r, s;
        OK(MPI_Comm_rank(c, &r));
        OK(MPI_Comm_size(c, &s));
        CHECK(s == n && ranks[r] == rank, "rank %d of %d", r, s);
        /* bcast from the new rank 0 (the highest even world rank) */
        int v = rank;
        OK(MPI_Bcast(&v, 1, MPI_INT, 0, c));
        CHECK(v == ranks[0], "bcast gave %d, want %d", v, ranks[0]);
        MPI_Group cg;
        OK(MPI_Comm_group(c, &cg));
        int gs, gr;
        OK(MPI_Group_size(cg, &gs));
        OK(MPI_Group_rank(cg, &gr));
        CHECK(gs == n && gr == r, "group of created comm: size %d rank %d", gs, gr);
        OK(MPI_Group_free(&cg));
        /* a create over the created communicator: its first member alone */
        MPI_Group mine, first;
        OK(MPI_Comm_group(c, &mine));
        int zero = 0;
        OK(MPI_Group_incl(mine, 1, &zero, &first));
        MPI_Comm c1;
        OK(MPI_Comm_create(c, first, &c1));
        CHECK((r == 0) == (c1 != MPI_COMM_NULL), "sub-create: rank %d got 0x%x", r,
              (unsigned)c1);
        if (c1 != MPI_COMM_NULL) {
            int s1;
            OK(MPI_Comm_size(c1, &s1));
            CHECK(s1 == 1, "sub-create size %d", s1);
            OK(MPI_Comm_free(&c1));
        }
        OK(MPI_Group_free(&first));
        OK(MPI_Group_free(&mine));
        OK(MPI_Comm_free(&c));
    }

    /* the whole world group: congruent with world */
    OK(MPI_Comm_create(MPI_COMM_WORLD, world, &c));
    int res;
    OK(MPI_Comm_compare(c, MPI_COMM_WORLD, &res));
    CHECK(res == MPI_CONGRUENT, "create(world group) vs world %d", res);
    OK(MPI_Comm_free(&c));

    /* the empty group: nobody gets a communicator */
    OK(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &c));
    CHECK(c == MPI_COMM_NULL, "empty group gave a communicator");

    /* concurrent communicators created by different subsets keep their
     * traffic apart: world and created comm use the same tag and peers */
    if (size >= 2) {
        int pair[2] = {0, 1};
        OK(MPI_Group_incl(world, 2, pair, &g));
        OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
        OK(MPI_Group_free(&g));
        if (rank < 2) {
            int a = 10 + rank, b = 20 + rank, ra = -1, rb = -1;
            MPI_Request q[2];
            OK(MPI_Irecv(&ra, 1, MPI_INT, 1 - rank, 3, MPI_COMM_WORLD, &q[0]));
            OK(MPI_Irecv(&rb, 1, MPI_INT, 1 - rank, 3, c, &q[1]));
            OK(MPI_Send(&b, 1, MPI_INT, 1 - rank, 3, c));
            OK(MPI_Send(&a, 1, MPI_INT, 1 - rank, 3, MPI_COMM_WORLD));
            MPI_Status st[2]; /* not MPI_STATUSES_IGNORE: gcc -Wstringop-overflow */
            OK(MPI_Waitall(2, q, st));
            CHECK(ra == 11 - rank && rb == 21 - rank, "world got %d, created got %d", ra, rb);
            OK(MPI_Comm_free(&c));
        } else {
            CHECK(c == MPI_COMM_NULL, "non-member got a communicator");
        }
    }

    /* bad arguments */
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int rc, cls;
    rc = MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &c);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_GROUP, "GROUP_NULL gave class %d", cls);
    rc = MPI_Comm_create(MPI_COMM_NULL, world, &c);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "COMM_NULL gave class %d", cls);
    /* a group that is not a subgroup of MPI_COMM_SELF's (when there are 2+) */
    if (size > 1) {
        MPI_Comm self;
        OK(MPI_Comm_dup(MPI_COMM_SELF, &self));
        OK(MPI_Comm_set_errhandler(self, MPI_ERRORS_RETURN));
        rc = MPI_Comm_create(self, world, &c);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_GROUP, "non-subgroup gave class %d", cls);
        OK(MPI_Comm_free(&self));
    }
    OK(MPI_Group_free(&world));

    MPI_Finalize();
    if (rank == 0)
        printf("t_comm_create: ok (np %d)\n", size);
    return 0;
}
