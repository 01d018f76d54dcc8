/* np: 1 4 5 */
/* vms: v2 */
/* MPI_Comm_create_group: only the group's members call it. The even and
 * the odd ranks build their communicators at the same time with the same
 * tag (disjoint groups); a group listed in reverse order gives ranks in
 * that order; the new communicators carry traffic and collectives; a
 * process outside the group gets MPI_COMM_NULL; bad tags, groups that are
 * not subgroups and intercommunicators are refused with the right class
 * and a message naming the function. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int rank, size;

#include "t_check.h"

static void check_err(int rc, int want)
{
    int cls = -1, len;
    char msg[MPI_MAX_ERROR_STRING] = "";
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, msg, &len);
    CHECK(cls == want, "class %d, want %d (%s)", cls, want, msg);
    CHECK(strstr(msg, "MPI_Comm_create_group") != NULL, "message '%s' names no function", msg);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Group world;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));

    /* my parity, listed from the highest rank down */
    int members[64], n = 0;
    for (int r = size - 1; r >= 0; r--)
        if (r % 2 == rank % 2)
            members[n++] = r;
    MPI_Group g;
    OK(MPI_Group_incl(world, n, members, &g));
    for (int round = 0; round < 3; round++) {
        MPI_Comm c;
        OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 5, &c));
        int cr, cs, want = 0;
        OK(MPI_Comm_rank(c, &cr));
        OK(MPI_Comm_size(c, &cs));
        while (members[want] != rank)
            want++;
        CHECK(cs == n && cr == want, "rank %d of %d, want %d of %d", cr, cs, want, n);
        int sum = 0, expect = 0;
        for (int i = 0; i < n; i++)
            expect += members[i];
        OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
        CHECK(sum == expect, "allreduce gave %d, want %d", sum, expect);
        int right = -1;
        OK(MPI_Sendrecv(&rank, 1, MPI_INT, (cr + 1) % cs, 1, &right, 1, MPI_INT,
                        (cr + cs - 1) % cs, 1, c, MPI_STATUS_IGNORE));
        CHECK(right == members[(cr + cs - 1) % cs], "ring neighbour %d", right);
        OK(MPI_Comm_free(&c));
    }

    /* rank 0 alone builds a communicator; the others are not asked */
    MPI_Group g0;
    int zero = 0;
    OK(MPI_Group_incl(world, 1, &zero, &g0));
    if (rank == 0) {
        MPI_Comm c0;
        OK(MPI_Comm_create_group(MPI_COMM_WORLD, g0, 0, &c0));
        int s0 = 0;
        OK(MPI_Comm_size(c0, &s0));
        CHECK(s0 == 1, "size %d", s0);
        OK(MPI_Comm_free(&c0));
    } else {
        MPI_Comm none;
        OK(MPI_Comm_create_group(MPI_COMM_WORLD, g0, 0, &none));
        CHECK(none == MPI_COMM_NULL, "a process outside the group got a communicator");
    }

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm bad;
    check_err(MPI_Comm_create_group(MPI_COMM_WORLD, g, -2, &bad), MPI_ERR_TAG);
    check_err(MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_NULL, 0, &bad), MPI_ERR_GROUP);
    check_err(MPI_Comm_create_group(MPI_COMM_WORLD, g, 0, NULL), MPI_ERR_ARG);
    if (size > 1) {
        MPI_Comm self_dup;
        OK(MPI_Comm_dup(MPI_COMM_SELF, &self_dup));
        MPI_Comm_set_errhandler(self_dup, MPI_ERRORS_RETURN);
        check_err(MPI_Comm_create_group(self_dup, world, 0, &bad), MPI_ERR_GROUP);
        OK(MPI_Comm_free(&self_dup));
        MPI_Comm half, ic;
        OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
        OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 9, &ic));
        MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
        check_err(MPI_Comm_create_group(ic, g, 0, &bad), MPI_ERR_COMM);
        OK(MPI_Comm_free(&ic));
        OK(MPI_Comm_free(&half));
    }
    MPI_Group_free(&g0);
    MPI_Group_free(&g);
    MPI_Group_free(&world);
    MPI_Finalize();
    if (rank == 0)
        printf("t_comm_create_group: ok\n");
    return 0;
}
