/* np: 3 4 5 */
/* vms: v2 */
/* Non-blocking collectives on an intercommunicator (even and odd world
 * ranks, sizes differ with an odd np): all of them started at once in each
 * direction, then one MPI_Waitall, with values that depend on the sender;
 * a non-commutative user op (2x2 integer matrices) checks that the
 * reductions keep the remote group's rank order; a large bcast (rendezvous);
 * the communicator freed before the wait; bad input: the error class and a
 * message naming the function. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#include "t_check.h"

static int lsize, rsize, lrank, even;

static int world_of(int e, int r)
{
    return 2 * r + (e ? 0 : 1);
}

/* inout = in x inout, 2x2 row-major matrices: associative, not commutative */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const int *a = in;
    int *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        int r[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                    a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
        memcpy(b, r, sizeof r);
    }
}

static void mat_of(int w, int *m)
{
    m[0] = w + 1;
    m[1] = 1;
    m[2] = 1;
    m[3] = 0;
}

/* The product of the matrices of group e's ranks, in rank order. */
static void product(int e, int n, int *p)
{
    mat_of(world_of(e, 0), p);
    for (int i = 1; i < n; i++) {
        int m[4];
        mat_of(world_of(e, i), m);
        int one = 1;
        matmul(p, m, &one, NULL);
        memcpy(p, m, sizeof m);
    }
}

enum { NREQ = 16 };

static void all_at_once(MPI_Comm ic, int give, MPI_Op mop, MPI_Datatype mat)
{
    MPI_Request req[NREQ];
    int n = 0;
    int root = even == give ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    int groot = world_of(give, 0), is_root = root == MPI_ROOT, takes = even != give;
    OK(MPI_Ibarrier(ic, &req[n++]));
    int bv = even == give ? 1000 + rank : -1;
    OK(MPI_Ibcast(&bv, 1, MPI_INT, root, ic, &req[n++]));
    int gat[16], gatv[64], cnt[16], dis[16], mine[8], off = 0;
    for (int i = 0; i < 16; i++)
        gat[i] = -1;
    for (int i = 0; i < 8; i++)
        mine[i] = rank * 10 + i;
    for (int i = rsize - 1; i >= 0; i--) {
        cnt[i] = i + 1;
        dis[i] = off;
        off += i + 1;
    }
    OK(MPI_Igather(&rank, 1, MPI_INT, gat, 1, MPI_INT, root, ic, &req[n++]));
    OK(MPI_Igatherv(mine, lrank + 1, MPI_INT, gatv, cnt, dis, MPI_INT, root, ic, &req[n++]));
    int send[16], got = -1, two[2] = {-1, -1}, scnt[16], sdis[16];
    for (int i = 0; i < 16; i++)
        send[i] = 500 + i;
    for (int i = 0; i < rsize; i++) {
        scnt[i] = 2;
        sdis[i] = 2 * (rsize - 1 - i);
    }
    OK(MPI_Iscatter(send, 1, MPI_INT, &got, 1, MPI_INT, root, ic, &req[n++]));
    OK(MPI_Iscatterv(send, scnt, sdis, MPI_INT, two, 2, MPI_INT, root, ic, &req[n++]));
    int m[4], prod[4] = {0};
    mat_of(rank, m);
    OK(MPI_Ireduce(m, prod, 1, mat, mop, root, ic, &req[n++]));
    int sum = -1, aprod[4] = {0};
    OK(MPI_Iallreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, ic, &req[n++]));
    OK(MPI_Iallreduce(m, aprod, 1, mat, mop, ic, &req[n++]));
    int ag[16], agv[64], pair[2] = {rank, -rank}, acnt[16], adis[16];
    for (int i = 0; i < rsize; i++) {
        acnt[i] = 2;
        adis[i] = 3 * i;
    }
    OK(MPI_Iallgather(&rank, 1, MPI_INT, ag, 1, MPI_INT, ic, &req[n++]));
    OK(MPI_Iallgatherv(pair, 2, MPI_INT, agv, acnt, adis, MPI_INT, ic, &req[n++]));
    int sb[16], rb[16], rbv[16], rbw[16], one[16], sd[16], rd[16], sdw[16];
    MPI_Datatype ts[16];
    for (int i = 0; i < rsize; i++) {
        sb[i] = 100 * rank + i;
        one[i] = 1;
        sd[i] = i;
        rd[i] = rsize - 1 - i;
        sdw[i] = (int)sizeof(int) * i;
        ts[i] = MPI_INT;
    }
    OK(MPI_Ialltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, ic, &req[n++]));
    OK(MPI_Ialltoallv(sb, one, sd, MPI_INT, rbv, one, rd, MPI_INT, ic, &req[n++]));
    OK(MPI_Ialltoallw(sb, one, sdw, ts, rbw, one, sdw, ts, ic, &req[n++]));
    int vec[16], blk = -1, rc6[16] = {0}, res[6];
    for (int j = 0; j < 16; j++)
        vec[j] = rank + j;
    for (int i = 0; i < lsize; i++)
        rc6[i] = i == 0 ? 6 - (lsize - 1) : 1;
    if (lsize == rsize)
        OK(MPI_Ireduce_scatter_block(vec, &blk, 1, MPI_INT, MPI_SUM, ic, &req[n++]));
    OK(MPI_Ireduce_scatter(vec, res, rc6, MPI_INT, MPI_SUM, ic, &req[n++]));
    OK(MPI_Waitall(n, req, MPI_STATUSES_IGNORE));

    int want = 0, p[4];
    for (int i = 0; i < rsize; i++)
        want += world_of(!even, i);
    if (takes)
        CHECK(bv == 1000 + groot, "ibcast gave %d", bv);
    else
        CHECK(bv == (even == give ? 1000 + rank : -1), "ibcast changed the giver's buffer");
    if (is_root) {
        for (int i = 0; i < rsize; i++) {
            CHECK(gat[i] == world_of(!even, i), "igather [%d] = %d", i, gat[i]);
            for (int k = 0; k <= i; k++)
                CHECK(gatv[dis[i] + k] == world_of(!even, i) * 10 + k, "igatherv [%d][%d] = %d",
                      i, k, gatv[dis[i] + k]);
        }
        product(!even, rsize, p);
        CHECK(memcmp(prod, p, sizeof p) == 0, "ireduce (non-commutative) gave %d %d %d %d",
              prod[0], prod[1], prod[2], prod[3]);
    }
    if (takes) {
        CHECK(got == 500 + lrank, "iscatter gave %d", got);
        CHECK(two[0] == 500 + 2 * (lsize - 1 - lrank) && two[1] == two[0] + 1,
              "iscatterv gave %d %d", two[0], two[1]);
    }
    CHECK(sum == want, "iallreduce gave %d, want %d", sum, want);
    product(!even, rsize, p);
    CHECK(memcmp(aprod, p, sizeof p) == 0, "iallreduce (non-commutative) gave %d %d %d %d",
          aprod[0], aprod[1], aprod[2], aprod[3]);
    for (int i = 0; i < rsize; i++) {
        int w = world_of(!even, i);
        CHECK(ag[i] == w, "iallgather [%d] = %d", i, ag[i]);
        CHECK(agv[3 * i] == w && agv[3 * i + 1] == -w, "iallgatherv [%d] = %d %d", i,
              agv[3 * i], agv[3 * i + 1]);
        CHECK(rb[i] == 100 * w + lrank, "ialltoall [%d] = %d", i, rb[i]);
        CHECK(rbv[rsize - 1 - i] == 100 * w + lrank, "ialltoallv [%d] = %d", i,
              rbv[rsize - 1 - i]);
        CHECK(rbw[i] == 100 * w + lrank, "ialltoallw [%d] = %d", i, rbw[i]);
    }
    if (lsize == rsize)
        CHECK(blk == want + rsize * lrank, "ireduce_scatter_block gave %d", blk);
    int first = 0;
    for (int i = 0; i < lrank; i++)
        first += rc6[i];
    for (int k = 0; k < rc6[lrank]; k++)
        CHECK(res[k] == want + rsize * (first + k), "ireduce_scatter [%d] = %d", k, res[k]);
}

/* A bcast of 1 MiB (the rendezvous protocol) from the odd group's rank 0,
 * on a duplicate freed before the wait. */
static void big_bcast(MPI_Comm ic)
{
    enum { N = 1 << 18 };
    int *buf = malloc(sizeof(int) * N);
    for (int i = 0; i < N; i++)
        buf[i] = even ? -1 : i ^ 0x5a5a;
    MPI_Comm d;
    OK(MPI_Comm_dup(ic, &d));
    int root = even ? 0 : lrank == 0 ? MPI_ROOT : MPI_PROC_NULL;
    MPI_Request r;
    OK(MPI_Ibcast(buf, N, MPI_INT, root, d, &r));
    OK(MPI_Comm_free(&d));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(r == MPI_REQUEST_NULL, "the request is not MPI_REQUEST_NULL after the wait");
    if (even)
        for (int i = 0; i < N; i += 997)
            CHECK(buf[i] == (i ^ 0x5a5a), "big ibcast [%d] = %d", i, buf[i]);
    free(buf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    even = rank % 2 == 0;
    MPI_Comm local, ic;
    OK(MPI_Comm_split(MPI_COMM_WORLD, !even, rank, &local));
    OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, even ? 1 : 0, 78, &ic));
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_rank(ic, &lrank);
    MPI_Comm_remote_size(ic, &rsize);
    MPI_Op mop;
    MPI_Datatype mat;
    OK(MPI_Op_create(matmul, 0, &mop));
    OK(MPI_Type_contiguous(4, MPI_INT, &mat));
    OK(MPI_Type_commit(&mat));
    for (int rep = 0; rep < 3; rep++) {
        all_at_once(ic, 1, mop, mat);
        all_at_once(ic, 0, mop, mat);
    }
    big_bcast(ic);

    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
#define EXPECT(call, cls, fname) t_expect_err((call), (cls), (fname), #call)
    int v = 0;
    MPI_Request r;
    EXPECT(MPI_Iscan(&v, &v, 1, MPI_INT, MPI_SUM, ic, &r), MPI_ERR_COMM, "MPI_Iscan");
    EXPECT(MPI_Iexscan(&v, &v, 1, MPI_INT, MPI_SUM, ic, &r), MPI_ERR_COMM, "MPI_Iexscan");
    EXPECT(MPI_Ibcast(&v, 1, MPI_INT, rsize + 3, ic, &r), MPI_ERR_ROOT, "MPI_Ibcast");
    EXPECT(MPI_Ibarrier(ic, NULL), MPI_ERR_ARG, "MPI_Ibarrier");
    EXPECT(MPI_Iallreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, ic, &r), MPI_ERR_BUFFER,
              "MPI_Iallreduce");
    EXPECT(MPI_Ireduce(&v, &v, -1, MPI_INT, MPI_SUM, 0, ic, &r), MPI_ERR_COUNT,
              "MPI_Ireduce");
    EXPECT(MPI_Ialltoall(MPI_IN_PLACE, 1, MPI_INT, &v, 1, MPI_INT, ic, &r), MPI_ERR_BUFFER,
              "MPI_Ialltoall");
    OK(MPI_Op_free(&mop));
    OK(MPI_Type_free(&mat));
    OK(MPI_Comm_free(&ic));
    OK(MPI_Comm_free(&local));
    MPI_Finalize();
    if (rank == 0)
        printf("t_intercomm_nbc: ok\n");
    return 0;
}
