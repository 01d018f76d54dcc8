/* np: 4 2 3 5 */
/* vms: v2 */
/* Neighbourhood collectives, all five, blocking and non-blocking, on
 * Cartesian topologies (a periodic ring, a line, a 2-D grid periodic in one
 * dimension only), a graph with self-loops and a repeated edge, and
 * distributed graphs (a weighted ring from Dist_graph_create with repeated
 * edges and self-loops, and a star where most ranks have no sources or no
 * destinations). Every block received is checked against what its sender
 * put in the block for this edge; blocks of MPI_PROC_NULL neighbours stay
 * untouched. Two non-blocking ones run at once on one communicator. Then
 * bad input: no topology, negative counts, MPI_IN_PLACE, bad types, a NULL
 * request. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_check.h"

static int rank, size;

enum { K_CART, K_GRAPH, K_DIST };
enum { MAXN = 64, BLK = 4 }; /* neighbours at most; ints per block at most */
#define EMPTY (-1)

/* A topology as the test sees it: every rank's in- and out-lists. */
struct topo {
    MPI_Comm comm;
    int kind;
    int nin[MAXN], nout[MAXN];
    int in[MAXN][MAXN], out[MAXN][MAXN];
};

/* Ints sender s puts in element j of its block for out-edge k. */
static int val(int s, int k, int j)
{
    return s * 10000 + k * 100 + j;
}

/* Elements of sender s's block for out-edge k in the v and w forms. */
static int vcount(int s, int k)
{
    return 1 + (s + k) % 3;
}

/* The out-edge of in[i]'s sender that in-edge i of rank r is. */
static int edge_at_sender(const struct topo *t, int r, int i)
{
    if (t->kind == K_CART)
        return i ^ 1; /* the sender's shift the other way */
    int s = t->in[r][i], m = 0;
    for (int j = 0; j < i; j++)
        m += t->in[r][j] == s;
    for (int k = 0; k < t->nout[s]; k++)
        if (t->out[s][k] == r && m-- == 0)
            return k;
    CHECK(0, "rank %d: in-edge %d from %d has no out-edge at the sender", r, i, s);
    return -1;
}

/* What the library says the neighbours are must be what the test built. */
static void check_lists(const struct topo *t)
{
    int in[MAXN], out[MAXN], nin = 0, nout = 0;
    if (t->kind == K_CART) {
        int nd;
        OK(MPI_Cartdim_get(t->comm, &nd));
        for (int d = 0; d < nd; d++) {
            OK(MPI_Cart_shift(t->comm, d, 1, &in[2 * d], &in[2 * d + 1]));
            out[2 * d] = in[2 * d];
            out[2 * d + 1] = in[2 * d + 1];
        }
        nin = nout = 2 * nd;
    } else if (t->kind == K_GRAPH) {
        OK(MPI_Graph_neighbors_count(t->comm, rank, &nin));
        OK(MPI_Graph_neighbors(t->comm, rank, MAXN, in));
        memcpy(out, in, sizeof in);
        nout = nin;
    } else {
        int w;
        OK(MPI_Dist_graph_neighbors_count(t->comm, &nin, &nout, &w));
        OK(MPI_Dist_graph_neighbors(t->comm, MAXN, in, MPI_UNWEIGHTED, MAXN, out,
                                    MPI_UNWEIGHTED));
    }
    CHECK(nin == t->nin[rank] && nout == t->nout[rank], "degrees %d %d", nin, nout);
    CHECK(!memcmp(in, t->in[rank], sizeof(int) * (size_t)nin), "in-list differs");
    CHECK(!memcmp(out, t->out[rank], sizeof(int) * (size_t)nout), "out-list differs");
}

/* recv (nin blocks of stride ints at displs[i], or i * stride) against the
 * senders' blocks; per-edge counts when v. */
static void check_recv(const struct topo *t, const int *recv, const int *displs, int stride,
                       int v, int ag, const char *what)
{
    int nin = t->nin[rank];
    for (int i = 0; i < nin; i++) {
        int s = t->in[rank][i], k = ag ? 0 : edge_at_sender(t, rank, i);
        const int *b = recv + (displs ? displs[i] : i * stride);
        int n = v && s != MPI_PROC_NULL ? vcount(s, k) : BLK;
        for (int j = 0; j < n; j++) {
            int want = s == MPI_PROC_NULL ? EMPTY : val(s, k, j);
            CHECK(b[j] == want, "%s (topology %d): block %d (from %d) element %d = %d, want %d",
                  what, t->kind, i, s, j, b[j], want);
        }
    }
}

static int *fresh(int n)
{
    int *p = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    for (int i = 0; i < n; i++)
        p[i] = EMPTY;
    return p;
}

static void run_all(const struct topo *t, int nonblocking)
{
    MPI_Comm c = t->comm;
    int nin = t->nin[rank], nout = t->nout[rank];
    int stride = BLK + 2; /* gaps between receive blocks */
    int *sendb = malloc(sizeof(int) * (size_t)(nout + 1) * BLK);
    for (int k = 0; k < nout; k++)
        for (int j = 0; j < BLK; j++)
            sendb[k * BLK + j] = val(rank, k, j);
    MPI_Request rq[2];
    /* allgather: every neighbour gets block 0; also alltoall at once */
    int *r1 = fresh(nin * BLK), *r2 = fresh(nin * BLK);
    if (nonblocking) {
        OK(MPI_Ineighbor_allgather(sendb, BLK, MPI_INT, r1, BLK, MPI_INT, c, &rq[0]));
        OK(MPI_Ineighbor_alltoall(sendb, BLK, MPI_INT, r2, BLK, MPI_INT, c, &rq[1]));
        OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    } else {
        OK(MPI_Neighbor_allgather(sendb, BLK, MPI_INT, r1, BLK, MPI_INT, c));
        OK(MPI_Neighbor_alltoall(sendb, BLK, MPI_INT, r2, BLK, MPI_INT, c));
    }
    check_recv(t, r1, NULL, BLK, 0, 1, "allgather");
    check_recv(t, r2, NULL, BLK, 0, 0, "alltoall");
    free(r1);
    free(r2);
    /* allgatherv: blocks in reverse order with gaps */
    size_t inlen = sizeof(int) * (size_t)(nin + 1), outlen = sizeof(int) * (size_t)(nout + 1);
    int *rc = malloc(inlen), *rd = malloc(inlen);
    for (int i = 0; i < nin; i++) {
        rc[i] = BLK;
        rd[i] = (nin - 1 - i) * stride;
    }
    r1 = fresh(nin * stride);
    if (nonblocking) {
        OK(MPI_Ineighbor_allgatherv(sendb, BLK, MPI_INT, r1, rc, rd, MPI_INT, c, &rq[0]));
        OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    } else {
        OK(MPI_Neighbor_allgatherv(sendb, BLK, MPI_INT, r1, rc, rd, MPI_INT, c));
    }
    check_recv(t, r1, rd, stride, 0, 1, "allgatherv");
    free(r1);
    /* alltoallv: per-edge counts, send blocks at k * BLK, receive reversed */
    int *sc = malloc(outlen), *sd = malloc(outlen);
    for (int k = 0; k < nout; k++) {
        sc[k] = vcount(rank, k);
        sd[k] = k * BLK;
    }
    for (int i = 0; i < nin; i++) {
        int s = t->in[rank][i];
        rc[i] = s == MPI_PROC_NULL ? BLK : vcount(s, edge_at_sender(t, rank, i));
    }
    r1 = fresh(nin * stride);
    if (nonblocking) {
        OK(MPI_Ineighbor_alltoallv(sendb, sc, sd, MPI_INT, r1, rc, rd, MPI_INT, c, &rq[0]));
        OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    } else {
        OK(MPI_Neighbor_alltoallv(sendb, sc, sd, MPI_INT, r1, rc, rd, MPI_INT, c));
    }
    check_recv(t, r1, rd, stride, 1, 0, "alltoallv");
    free(r1);
    /* alltoallw: ints out, one contiguous type per block in, byte displs */
    MPI_Aint *swd = malloc(sizeof(MPI_Aint) * (size_t)(nout + 1));
    MPI_Aint *rwd = malloc(sizeof(MPI_Aint) * (size_t)(nin + 1));
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * (size_t)(nout + 1));
    MPI_Datatype *rt = malloc(sizeof(MPI_Datatype) * (size_t)(nin + 1));
    int *ones = malloc(sizeof(int) * (size_t)(nin + 1));
    for (int k = 0; k < nout; k++) {
        swd[k] = (MPI_Aint)(k * BLK * sizeof(int));
        st[k] = MPI_INT;
    }
    for (int i = 0; i < nin; i++) {
        rwd[i] = (MPI_Aint)((size_t)rd[i] * sizeof(int));
        OK(MPI_Type_contiguous(rc[i], MPI_INT, &rt[i]));
        OK(MPI_Type_commit(&rt[i]));
        ones[i] = 1;
    }
    r1 = fresh(nin * stride);
    if (nonblocking) {
        OK(MPI_Ineighbor_alltoallw(sendb, sc, swd, st, r1, ones, rwd, rt, c, &rq[0]));
        for (int i = 0; i < nin; i++) /* the request holds what it needs */
            OK(MPI_Type_free(&rt[i]));
        OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    } else {
        OK(MPI_Neighbor_alltoallw(sendb, sc, swd, st, r1, ones, rwd, rt, c));
        /* the same from MPI_BOTTOM, the displacements being addresses */
        int *r2 = fresh(nin * stride);
        MPI_Aint *sa = malloc(sizeof(MPI_Aint) * (size_t)(nout + 1));
        MPI_Aint *ra = malloc(sizeof(MPI_Aint) * (size_t)(nin + 1));
        for (int k = 0; k < nout; k++)
            OK(MPI_Get_address((char *)sendb + swd[k], &sa[k]));
        for (int i = 0; i < nin; i++)
            OK(MPI_Get_address((char *)r2 + rwd[i], &ra[i]));
        OK(MPI_Neighbor_alltoallw(MPI_BOTTOM, sc, sa, st, MPI_BOTTOM, ones, ra, rt, c));
        check_recv(t, r2, rd, stride, 1, 0, "alltoallw from MPI_BOTTOM");
        free(r2);
        free(sa);
        free(ra);
        for (int i = 0; i < nin; i++)
            OK(MPI_Type_free(&rt[i]));
    }
    check_recv(t, r1, rd, stride, 1, 0, "alltoallw");
    free(r1);
    free(swd);
    free(rwd);
    free(st);
    free(rt);
    free(ones);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(sendb);
}

static void run(struct topo *t)
{
    check_lists(t);
    run_all(t, 0);
    run_all(t, 1);
    OK(MPI_Comm_free(&t->comm));
}

/* Cartesian: neighbour lists from the grid, worked out here. */
static void cart(int ndims, const int *dims, const int *periods)
{
    static struct topo t;
    memset(&t, 0, sizeof t);
    t.kind = K_CART;
    OK(MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &t.comm));
    for (int r = 0; r < size; r++) {
        int co[4], rem = r;
        for (int d = ndims - 1; d >= 0; d--) {
            co[d] = rem % dims[d];
            rem /= dims[d];
        }
        for (int d = 0; d < ndims; d++) {
            int stride = 1;
            for (int e = d + 1; e < ndims; e++)
                stride *= dims[e];
            for (int s = 0; s < 2; s++) {
                int x = co[d] + (s ? 1 : -1), nb;
                if (x < 0 || x >= dims[d])
                    nb = periods[d] ? r + (((x + dims[d]) % dims[d]) - co[d]) * stride
                                    : MPI_PROC_NULL;
                else
                    nb = r + (x - co[d]) * stride;
                t.in[r][2 * d + s] = t.out[r][2 * d + s] = nb;
            }
        }
        t.nin[r] = t.nout[r] = 2 * ndims;
    }
    run(&t);
}

/* Graph: node r's list is r+1, r (self-loop), r-1, then r+1 and r-1 again
 * (symmetric, as neighbourhood collectives on a graph need: r lists r+1
 * as often as r+1 lists r). */
static void graph(void)
{
    static struct topo t;
    memset(&t, 0, sizeof t);
    t.kind = K_GRAPH;
    int *index = malloc(sizeof(int) * (size_t)size);
    int *edges = malloc(sizeof(int) * 5 * (size_t)size);
    for (int r = 0, e = 0; r < size; r++) {
        int u = (r + 1) % size, d = (r - 1 + size) % size, l[5] = {u, r, d, u, d};
        for (int k = 0; k < 5; k++)
            t.in[r][k] = t.out[r][k] = edges[e++] = l[k];
        t.nin[r] = t.nout[r] = 5;
        index[r] = e;
    }
    OK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &t.comm));
    free(index);
    free(edges);
    run(&t);
}

/* Dist_graph_create: rank q names q -> q+1 twice, q -> q, q+2 -> q; every
 * rank's lists are those edges by increasing q. */
static void dist_general(void)
{
    static struct topo t;
    memset(&t, 0, sizeof t);
    t.kind = K_DIST;
    int src[2], deg[2], dst[4], w[4] = {5, 6, 7, 8};
    for (int q = 0; q < size; q++) {
        int s[2] = {q, (q + 2) % size}, d[2] = {3, 1};
        int ds[4] = {(q + 1) % size, q, (q + 1) % size, q};
        for (int i = 0, e = 0; i < 2; i++)
            for (int k = 0; k < d[i]; k++, e++) {
                t.out[s[i]][t.nout[s[i]]++] = ds[e];
                t.in[ds[e]][t.nin[ds[e]]++] = s[i];
            }
        if (q == rank) {
            memcpy(src, s, sizeof s);
            memcpy(deg, d, sizeof d);
            memcpy(dst, ds, sizeof ds);
        }
    }
    OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 2, src, deg, dst, w, MPI_INFO_NULL, 0, &t.comm));
    run(&t);
}

/* Star: rank 0 sends to every other rank, which sends nothing back. */
static void dist_star(void)
{
    static struct topo t;
    memset(&t, 0, sizeof t);
    t.kind = K_DIST;
    for (int r = 1; r < size; r++) {
        t.out[0][t.nout[0]++] = r;
        t.in[r][t.nin[r]++] = 0;
    }
    OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, t.nin[rank], t.in[rank], MPI_UNWEIGHTED,
                                      t.nout[rank], t.out[rank], MPI_UNWEIGHTED, MPI_INFO_NULL,
                                      0, &t.comm));
    run(&t);
}

static void errors(void)
{
    int b[BLK * MAXN] = {0}, cnt[MAXN] = {0}, dsp[MAXN] = {0};
    MPI_Aint adsp[MAXN] = {0};
    MPI_Datatype ty[MAXN];
    MPI_Request rq;
    for (int i = 0; i < MAXN; i++)
        ty[i] = MPI_INT;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    t_expect_err(MPI_Neighbor_allgather(b, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD),
                 MPI_ERR_TOPOLOGY, "MPI_Neighbor_allgather", "no topology");
    t_expect_err(MPI_Ineighbor_alltoallw(b, cnt, adsp, ty, b, cnt, adsp, ty, MPI_COMM_WORLD, &rq),
                 MPI_ERR_TOPOLOGY, "MPI_Ineighbor_alltoallw", "no topology");
    t_expect_err(MPI_Neighbor_alltoall(b, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_NULL),
                 MPI_ERR_COMM, "MPI_Neighbor_alltoall", "null comm");
    MPI_Comm ring;
    int periods = 1;
    OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &size, &periods, 0, &ring));
    MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN);
    t_expect_err(MPI_Neighbor_allgather(b, -1, MPI_INT, b + 8, 1, MPI_INT, ring), MPI_ERR_COUNT,
                 "MPI_Neighbor_allgather", "negative sendcount");
    t_expect_err(MPI_Ineighbor_allgather(b, 1, MPI_INT, b + 8, 1, MPI_INT, ring, NULL),
                 MPI_ERR_ARG, "MPI_Ineighbor_allgather", "null request");
    t_expect_err(MPI_Neighbor_alltoall(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, ring),
                 MPI_ERR_BUFFER, "MPI_Neighbor_alltoall", "in place");
    t_expect_err(MPI_Ineighbor_alltoall(b, 1, MPI_DATATYPE_NULL, b + 8, 1, MPI_INT, ring, &rq),
                 MPI_ERR_TYPE, "MPI_Ineighbor_alltoall", "null sendtype");
    t_expect_err(MPI_Neighbor_allgatherv(b, 1, MPI_INT, NULL, (int[]){1, 1}, dsp, MPI_INT, ring),
                 MPI_ERR_BUFFER, "MPI_Neighbor_allgatherv", "null recvbuf");
    t_expect_err(MPI_Neighbor_allgatherv(b, 1, MPI_INT, b + 8, NULL, dsp, MPI_INT, ring),
                 MPI_ERR_ARG, "MPI_Neighbor_allgatherv", "null recvcounts");
    t_expect_err(MPI_Ineighbor_alltoallv(b, (int[]){1, -1}, dsp, MPI_INT, b + 8, cnt, dsp,
                                         MPI_INT, ring, &rq),
                 MPI_ERR_COUNT, "MPI_Ineighbor_alltoallv", "negative sendcounts[1]");
    ty[1] = MPI_DATATYPE_NULL;
    t_expect_err(MPI_Neighbor_alltoallw(b, cnt, adsp, ty, b + 8, cnt, adsp, ty, ring),
                 MPI_ERR_TYPE, "MPI_Neighbor_alltoallw", "null sendtypes[1]");
    /* a receive block smaller than what arrives */
    t_expect_err(MPI_Neighbor_allgather(b, 2, MPI_INT, b + 8, 1, MPI_INT, ring), MPI_ERR_TRUNCATE,
                 "MPI_Neighbor_allgather", "short receive blocks");
    OK(MPI_Comm_free(&ring));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= MAXN / 4, "at most %d ranks", MAXN / 4);
    cart(1, &size, (int[]){1});
    cart(1, &size, (int[]){0});
    int d2[2] = {size % 2 ? size : 2, size % 2 ? 1 : size / 2};
    cart(2, d2, (int[]){1, 0});
    cart(2, (int[]){1, size}, (int[]){1, 1}); /* a periodic dimension of size 1 */
    graph();
    dist_general();
    dist_star();
    errors();
    MPI_Finalize();
    if (rank == 0)
        printf("t_neighbor: ok\n");
    return 0;
}
