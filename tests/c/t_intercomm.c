/* np: 3 4 5 */
/* vms: v2 */
/* Intercommunicators: the even and the odd world ranks form two groups
 * (sizes differ with an odd np) joined by MPI_Intercomm_create. Checked:
 * sizes, ranks and the remote group; point-to-point between the groups
 * (ranks name remote processes, ANY_SOURCE reports remote ranks); every
 * blocking collective in both directions with values that depend on the
 * sender; MPI_Comm_dup, MPI_Comm_split, MPI_Comm_split_type and
 * MPI_Comm_create of an intercommunicator; MPI_Intercomm_merge in both orders; bad input: the error class and a message naming the
 * function. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#include "t_check.h"

static int lsize, rsize, lrank, even;

/* World rank of rank r of the even (e = 1) or odd group. */
static int world_of(int e, int r)
{
    return 2 * r + (e ? 0 : 1);
}

static void check_err(int rc, int want, const char *fname)
{
    int cls = -1, len;
    char msg[MPI_MAX_ERROR_STRING] = "";
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, msg, &len);
    CHECK(cls == want, "%s: class %d, want %d (%s)", fname, cls, want, msg);
    CHECK(strstr(msg, fname) != NULL, "message '%s' does not name %s", msg, fname);
}

static void p2p(MPI_Comm ic)
{
    for (int r = 0; r < rsize; r++)
        OK(MPI_Send(&rank, 1, MPI_INT, r, 5, ic));
    int seen = 0;
    for (int i = 0; i < rsize; i++) {
        int v = -1;
        MPI_Status st;
        OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 5, ic, &st));
        CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rsize, "source %d", st.MPI_SOURCE);
        CHECK(v == world_of(!even, st.MPI_SOURCE), "from remote %d got %d", st.MPI_SOURCE, v);
        seen |= 1 << st.MPI_SOURCE;
    }
    CHECK(seen == (1 << rsize) - 1, "sources seen %#x", seen);
}

/* Whether world rank w is in g (w's rank in g, or -1). */
static int in_group(MPI_Group g, int w)
{
    MPI_Group world;
    int r;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    OK(MPI_Group_translate_ranks(world, 1, &w, g, &r));
    OK(MPI_Group_free(&world));
    return r == MPI_UNDEFINED ? -1 : r;
}

/* MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) of an intercommunicator: the
 * local ranks that share memory with this one (as the split of
 * MPI_COMM_WORLD says) and the remote ranks that do, in rank order; or
 * MPI_COMM_NULL when either side has none. MPI_UNDEFINED, on both sides or
 * on one: MPI_COMM_NULL. */
static void split_type(MPI_Comm ic)
{
    MPI_Comm node, sc;
    MPI_Group ng;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    OK(MPI_Comm_group(node, &ng));
    int nl = 0, nr = 0;
    for (int r = 0; r < lsize; r++)
        nl += in_group(ng, world_of(even, r)) >= 0;
    for (int r = 0; r < rsize; r++)
        nr += in_group(ng, world_of(!even, r)) >= 0;
    OK(MPI_Comm_split_type(ic, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &sc));
    CHECK((sc == MPI_COMM_NULL) == (nr == 0), "%d local and %d remote ranks share memory, "
          "the split gave %s", nl, nr, sc == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
    if (sc != MPI_COMM_NULL) {
        int inter, n;
        OK(MPI_Comm_test_inter(sc, &inter));
        CHECK(inter, "the split of an intercommunicator is an intracommunicator");
        MPI_Group lg, rg;
        OK(MPI_Comm_group(sc, &lg));
        OK(MPI_Comm_remote_group(sc, &rg));
        OK(MPI_Comm_size(sc, &n));
        CHECK(n == nl, "local size %d, want %d", n, nl);
        OK(MPI_Comm_remote_size(sc, &n));
        CHECK(n == nr, "remote size %d, want %d", n, nr);
        for (int r = 0, k = 0; r < rsize; r++)
            if (in_group(ng, world_of(!even, r)) >= 0) {
                CHECK(in_group(rg, world_of(!even, r)) == k, "remote rank %d of the group is "
                      "rank %d of the split, want %d", r, in_group(rg, world_of(!even, r)), k);
                k++;
            }
        CHECK(in_group(lg, rank) >= 0, "this rank is not in its split's local group");
        int v = rank, got = -1;
        int root = in_group(lg, rank) == 0 ? MPI_ROOT : MPI_PROC_NULL;
        /* the even side's first rank sends to the odd side's ranks */
        if (even)
            OK(MPI_Bcast(&v, 1, MPI_INT, root, sc));
        else {
            OK(MPI_Bcast(&got, 1, MPI_INT, 0, sc));
            int want = -1;
            for (int r = 0; r < rsize && want < 0; r++)
                if (in_group(ng, world_of(1, r)) >= 0)
                    want = world_of(1, r);
            CHECK(got == want, "broadcast over the split gave %d, want %d", got, want);
        }
        OK(MPI_Group_free(&lg));
        OK(MPI_Group_free(&rg));
        OK(MPI_Comm_free(&sc));
    }
    OK(MPI_Comm_split_type(ic, MPI_UNDEFINED, 0, MPI_INFO_NULL, &sc));
    CHECK(sc == MPI_COMM_NULL, "split_type MPI_UNDEFINED gave a communicator");
    /* one side takes part in no split: the other has no remote ranks */
    OK(MPI_Comm_split_type(ic, even ? MPI_COMM_TYPE_SHARED : MPI_UNDEFINED, 0, MPI_INFO_NULL,
                           &sc));
    CHECK(sc == MPI_COMM_NULL, "a split the odd side stays out of gave a communicator");
    OK(MPI_Group_free(&ng));
    OK(MPI_Comm_free(&node));
}

/* Every blocking collective; `give` is the group whose rank 0 is the root. */
static void collectives(MPI_Comm ic, int give)
{
    int root = even == give ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    int groot = world_of(give, 0);
    int v = even == give ? 1000 + rank : -1;
    OK(MPI_Bcast(&v, 1, MPI_INT, root, ic));
    if (even != give)
        CHECK(v == 1000 + groot, "bcast gave %d", v);

    /* gather: the receiving group sends its world ranks to the root */
    int *all = malloc(sizeof(int) * 16), *cnt = malloc(sizeof(int) * 16),
        *dis = malloc(sizeof(int) * 16);
    for (int i = 0; i < 16; i++)
        all[i] = -1;
    OK(MPI_Gather(&rank, 1, MPI_INT, all, 1, MPI_INT, root, ic));
    if (root == MPI_ROOT)
        for (int i = 0; i < rsize; i++)
            CHECK(all[i] == world_of(!even, i), "gather [%d] = %d", i, all[i]);
    /* gatherv: remote rank i sends i + 1 ints, placed in reverse order */
    int mine[8], off = 0;
    for (int i = 0; i < 8; i++)
        mine[i] = rank * 10 + i;
    for (int i = rsize - 1; i >= 0; i--) {
        cnt[i] = i + 1;
        dis[i] = off;
        off += i + 1;
    }
    int vbuf[64];
    /* counts and displs matter at the root only: the others pass NULL */
    if (root == MPI_ROOT)
        OK(MPI_Gatherv(mine, lrank + 1, MPI_INT, vbuf, cnt, dis, MPI_INT, root, ic));
    else
        OK(MPI_Gatherv(mine, lrank + 1, MPI_INT, NULL, NULL, NULL, MPI_DATATYPE_NULL, root, ic));
    if (root == MPI_ROOT)
        for (int i = 0; i < rsize; i++)
            for (int k = 0; k <= i; k++)
                CHECK(vbuf[dis[i] + k] == world_of(!even, i) * 10 + k, "gatherv [%d][%d] = %d", i,
                      k, vbuf[dis[i] + k]);
    /* scatter and scatterv from the root */
    int send[16], got = -1;
    for (int i = 0; i < 16; i++)
        send[i] = 500 + i;
    OK(MPI_Scatter(send, 1, MPI_INT, &got, 1, MPI_INT, root, ic));
    if (even != give)
        CHECK(got == 500 + lrank, "scatter gave %d", got);
    int two[2] = {-1, -1};
    for (int i = 0; i < rsize; i++) {
        cnt[i] = 2;
        dis[i] = 2 * (rsize - 1 - i);
    }
    OK(MPI_Scatterv(root == MPI_ROOT ? send : NULL, root == MPI_ROOT ? cnt : NULL,
                    root == MPI_ROOT ? dis : NULL, MPI_INT, two, 2, MPI_INT, root, ic));
    if (even != give)
        CHECK(two[0] == 500 + 2 * (lsize - 1 - lrank) && two[1] == two[0] + 1,
              "scatterv gave %d %d", two[0], two[1]);
    /* reduce: the root gets the sum of the remote world ranks */
    int sum = -1, want = 0;
    for (int i = 0; i < rsize; i++)
        want += world_of(!even, i);
    OK(MPI_Reduce(&rank, &sum, 1, MPI_INT, MPI_SUM, root, ic));
    if (root == MPI_ROOT)
        CHECK(sum == want, "reduce gave %d, want %d", sum, want);
    free(all);
    free(cnt);
    free(dis);
}

static void all_to_all(MPI_Comm ic)
{
    int want = 0;
    for (int i = 0; i < rsize; i++)
        want += world_of(!even, i);
    int sum = -1;
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, ic));
    CHECK(sum == want, "allreduce gave %d, want %d", sum, want);
    int ag[16];
    OK(MPI_Allgather(&rank, 1, MPI_INT, ag, 1, MPI_INT, ic));
    for (int i = 0; i < rsize; i++)
        CHECK(ag[i] == world_of(!even, i), "allgather [%d] = %d", i, ag[i]);
    int cnt[16], dis[16], agv[64], two[2] = {rank, -rank};
    for (int i = 0; i < rsize; i++) {
        cnt[i] = 2;
        dis[i] = 3 * i;
    }
    OK(MPI_Allgatherv(two, 2, MPI_INT, agv, cnt, dis, MPI_INT, ic));
    for (int i = 0; i < rsize; i++)
        CHECK(agv[3 * i] == world_of(!even, i) && agv[3 * i + 1] == -world_of(!even, i),
              "allgatherv [%d] = %d %d", i, agv[3 * i], agv[3 * i + 1]);
    /* alltoall: to remote rank i goes 100 * rank + i */
    int sb[16], rb[16];
    for (int i = 0; i < rsize; i++)
        sb[i] = 100 * rank + i;
    OK(MPI_Alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, ic));
    for (int i = 0; i < rsize; i++)
        CHECK(rb[i] == 100 * world_of(!even, i) + lrank, "alltoall [%d] = %d", i, rb[i]);
    int sd[16], rd[16], one[16];
    for (int i = 0; i < rsize; i++) {
        one[i] = 1;
        sd[i] = i;
        rd[i] = rsize - 1 - i;
    }
    OK(MPI_Alltoallv(sb, one, sd, MPI_INT, rb, one, rd, MPI_INT, ic));
    for (int i = 0; i < rsize; i++)
        CHECK(rb[rsize - 1 - i] == 100 * world_of(!even, i) + lrank, "alltoallv [%d] = %d", i,
              rb[rsize - 1 - i]);
    MPI_Datatype ts[16];
    for (int i = 0; i < rsize; i++) {
        ts[i] = MPI_INT;
        sd[i] = (int)sizeof(int) * i;
        rd[i] = (int)sizeof(int) * i;
    }
    OK(MPI_Alltoallw(sb, one, sd, ts, rb, one, rd, ts, ic));
    for (int i = 0; i < rsize; i++)
        CHECK(rb[i] == 100 * world_of(!even, i) + lrank, "alltoallw [%d] = %d", i, rb[i]);
    /* reduce_scatter_block: the remote group's vectors v[j] = world + j
     * summed, block lrank of it here */
    int vec[16], blk = -1;
    for (int j = 0; j < 16; j++)
        vec[j] = rank + j;
    if (lsize == rsize) {
        OK(MPI_Reduce_scatter_block(vec, &blk, 1, MPI_INT, MPI_SUM, ic));
        CHECK(blk == want + rsize * lrank, "reduce_scatter_block gave %d", blk);
    }
    /* reduce_scatter: both groups' counts add up to 6 */
    int rc6[16] = {0}, res[6];
    for (int i = 0; i < lsize; i++)
        rc6[i] = i == 0 ? 6 - (lsize - 1) : 1;
    OK(MPI_Reduce_scatter(vec, res, rc6, MPI_INT, MPI_SUM, ic));
    int first = 0;
    for (int i = 0; i < lrank; i++)
        first += rc6[i];
    for (int k = 0; k < rc6[lrank]; k++)
        CHECK(res[k] == want + rsize * (first + k), "reduce_scatter [%d] = %d", k, res[k]);
    OK(MPI_Barrier(ic));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    even = rank % 2 == 0;
    MPI_Comm local, ic;
    OK(MPI_Comm_split(MPI_COMM_WORLD, !even, rank, &local));
    OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, even ? 1 : 0, 77, &ic));
    int flag = 0;
    OK(MPI_Comm_test_inter(ic, &flag));
    CHECK(flag == 1, "test_inter says %d", flag);
    OK(MPI_Comm_test_inter(local, &flag));
    CHECK(flag == 0, "test_inter on the local comm says %d", flag);
    OK(MPI_Comm_size(ic, &lsize));
    OK(MPI_Comm_rank(ic, &lrank));
    OK(MPI_Comm_remote_size(ic, &rsize));
    CHECK(lsize == (even ? (size + 1) / 2 : size / 2) && rsize == size - lsize &&
              lrank == rank / 2,
          "local size %d rank %d remote size %d", lsize, lrank, rsize);
    MPI_Group rg, wg;
    OK(MPI_Comm_remote_group(ic, &rg));
    OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int rr[16], wr[16];
    for (int i = 0; i < rsize; i++)
        rr[i] = i;
    OK(MPI_Group_translate_ranks(rg, rsize, rr, wg, wr));
    for (int i = 0; i < rsize; i++)
        CHECK(wr[i] == world_of(!even, i), "remote rank %d is world %d", i, wr[i]);
    MPI_Group_free(&rg);
    MPI_Group_free(&wg);

    p2p(ic);
    collectives(ic, 1);
    collectives(ic, 0);
    all_to_all(ic);

    MPI_Comm icd;
    OK(MPI_Comm_dup(ic, &icd));
    OK(MPI_Comm_test_inter(icd, &flag));
    CHECK(flag == 1, "the dup is not an intercommunicator");
    p2p(icd);
    all_to_all(icd);

    /* split as a dup, then by local rank parity: the odd local ranks of
     * both sides form an intercommunicator, local rank 0 of a side with
     * one process gets MPI_COMM_NULL when the other side has no match */
    MPI_Comm sp;
    OK(MPI_Comm_split(ic, 0, lrank, &sp));
    OK(MPI_Comm_test_inter(sp, &flag));
    CHECK(flag == 1, "the split is not an intercommunicator");
    p2p(sp);
    OK(MPI_Comm_free(&sp));
    OK(MPI_Comm_split(ic, lrank % 2, -lrank, &sp));
    int rodd = rsize / 2, reven = (rsize + 1) / 2;
    int rmatch = lrank % 2 ? rodd : reven;
    if (!rmatch) {
        CHECK(sp == MPI_COMM_NULL, "split with no remote match gave a communicator");
    } else {
        int ss, sr, srs;
        OK(MPI_Comm_size(sp, &ss));
        OK(MPI_Comm_rank(sp, &sr));
        OK(MPI_Comm_remote_size(sp, &srs));
        int lmatch = lrank % 2 ? lsize / 2 : (lsize + 1) / 2;
        CHECK(ss == lmatch && srs == rmatch && sr == lmatch - 1 - lrank / 2,
              "split: size %d rank %d remote %d", ss, sr, srs);
        int s = -1, want = 0;
        for (int j = lrank % 2; j < rsize; j += 2)
            want += world_of(!even, j);
        OK(MPI_Allreduce(&rank, &s, 1, MPI_INT, MPI_SUM, sp));
        CHECK(s == want, "allreduce on the split gave %d, want %d", s, want);
        OK(MPI_Comm_free(&sp));
    }
    /* create over local rank 0 of each side */
    MPI_Group lg, g0;
    OK(MPI_Comm_group(ic, &lg));
    int zero = 0;
    OK(MPI_Group_incl(lg, 1, &zero, &g0));
    OK(MPI_Comm_create(ic, g0, &sp));
    CHECK((sp != MPI_COMM_NULL) == (lrank == 0), "create gave %s on local rank %d",
          sp == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator", lrank);
    if (sp != MPI_COMM_NULL) {
        int peer = -1;
        OK(MPI_Sendrecv(&rank, 1, MPI_INT, 0, 3, &peer, 1, MPI_INT, 0, 3, sp, MPI_STATUS_IGNORE));
        CHECK(peer == world_of(!even, 0), "create: the other leader is %d", peer);
        OK(MPI_Comm_free(&sp));
    }
    MPI_Group_free(&g0);
    MPI_Group_free(&lg);

    /* merge: the group passing high = 0 comes first */
    for (int odd_first = 0; odd_first < 2; odd_first++) {
        MPI_Comm m;
        OK(MPI_Intercomm_merge(icd, odd_first ? even : !even, &m));
        int mr, ms;
        OK(MPI_Comm_rank(m, &mr));
        OK(MPI_Comm_size(m, &ms));
        int evens = (size + 1) / 2, odds = size / 2;
        int want = odd_first ? (even ? odds + lrank : lrank) : (even ? lrank : evens + lrank);
        CHECK(ms == size && mr == want, "merge (odd first %d): rank %d of %d, want %d",
              odd_first, mr, ms, want);
        int s = 0;
        OK(MPI_Allreduce(&rank, &s, 1, MPI_INT, MPI_SUM, m));
        CHECK(s == size * (size - 1) / 2, "allreduce on the merged comm gave %d", s);
        OK(MPI_Comm_free(&m));
    }

    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm bad;
    int v = 0;
    check_err(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &bad), MPI_ERR_COMM, "MPI_Intercomm_merge");
    check_err(MPI_Comm_remote_size(MPI_COMM_WORLD, &v), MPI_ERR_COMM, "MPI_Comm_remote_size");
    check_err(MPI_Intercomm_create(ic, 0, MPI_COMM_WORLD, 0, 1, &bad), MPI_ERR_COMM,
              "MPI_Intercomm_create");
    check_err(MPI_Bcast(&v, 1, MPI_INT, rsize + 3, ic), MPI_ERR_ROOT, "MPI_Bcast");
    check_err(MPI_Scan(&v, &v, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_COMM, "MPI_Scan");
    check_err(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_BUFFER,
              "MPI_Allreduce");
    check_err(MPI_Comm_remote_group(ic, NULL), MPI_ERR_ARG, "MPI_Comm_remote_group");
    MPI_Win w;
    check_err(MPI_Win_create(&v, sizeof v, 1, MPI_INFO_NULL, ic, &w), MPI_ERR_COMM,
              "MPI_Win_create");

    split_type(ic);

    OK(MPI_Comm_free(&icd));
    OK(MPI_Comm_free(&ic));
    OK(MPI_Comm_free(&local));
    MPI_Finalize();
    if (rank == 0)
        printf("t_intercomm: ok\n");
    return 0;
}
