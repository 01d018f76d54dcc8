/* np: 4 2 3 */
/* vms: v2 */
/* Distributed graphs: Dist_graph_create_adjacent (weighted, MPI_UNWEIGHTED,
 * a star where most ranks have one side empty) and Dist_graph_create, where
 * every rank names edges of other ranks, self-loops and repeated edges
 * included, with weights, with MPI_WEIGHTS_EMPTY on a rank that names none,
 * with rank 0 naming all edges and the others passing NULL, and
 * unweighted: each rank's sources and destinations (and weights) come
 * back from Dist_graph_neighbors in the order of the edge lists taken by
 * increasing contributing rank. Then bad input for each function. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_check.h"

static int rank, size;

/* The neighbours of comm against the expected lists (weights NULL: the
 * communicator is unweighted). */
static void expect_nbrs(MPI_Comm comm, int nin, const int *in, const int *inw, int nout,
                        const int *out, const int *outw)
{
    int t, indeg, outdeg, weighted;
    OK(MPI_Topo_test(comm, &t));
    CHECK(t == MPI_DIST_GRAPH, "topo %d", t);
    OK(MPI_Dist_graph_neighbors_count(comm, &indeg, &outdeg, &weighted));
    CHECK(indeg == nin && outdeg == nout, "degrees %d %d, want %d %d", indeg, outdeg, nin, nout);
    CHECK(weighted == (inw != NULL || outw != NULL), "weighted %d", weighted);
    int n = nin + nout + 1;
    int *s = malloc(sizeof(int) * (size_t)n), *sw = malloc(sizeof(int) * (size_t)n);
    int *d = malloc(sizeof(int) * (size_t)n), *dw = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        s[i] = sw[i] = d[i] = dw[i] = -9;
    OK(MPI_Dist_graph_neighbors(comm, nin, s, sw, nout, d, dw));
    for (int i = 0; i < nin; i++)
        CHECK(s[i] == in[i] && (!inw || sw[i] == inw[i]), "source %d: %d (w %d), want %d (w %d)",
              i, s[i], sw[i], in[i], inw ? inw[i] : -1);
    for (int i = 0; i < nout; i++)
        CHECK(d[i] == out[i] && (!outw || dw[i] == outw[i]),
              "destination %d: %d (w %d), want %d (w %d)", i, d[i], dw[i], out[i],
              outw ? outw[i] : -1);
    CHECK(s[nin] == -9 && d[nout] == -9, "wrote past the degree");
    /* MPI_UNWEIGHTED as the weight arrays: ranks only */
    OK(MPI_Dist_graph_neighbors(comm, nin, s, MPI_UNWEIGHTED, nout, d, MPI_UNWEIGHTED));
    free(s);
    free(sw);
    free(d);
    free(dw);
}

static void adjacent(void)
{
    int l = (rank - 1 + size) % size, r = (rank + 1) % size;
    int in[2] = {l, r}, inw[2] = {l * 10 + rank, r * 10 + rank};
    int out[2] = {r, l}, outw[2] = {rank * 10 + r, rank * 10 + l};
    MPI_Comm g;
    OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, in, inw, 2, out, outw, MPI_INFO_NULL,
                                      1, &g));
    int gr, gs;
    OK(MPI_Comm_rank(g, &gr));
    OK(MPI_Comm_size(g, &gs));
    CHECK(gr == rank && gs == size, "rank %d size %d", gr, gs);
    expect_nbrs(g, 2, in, inw, 2, out, outw);
    MPI_Comm d; /* a duplicate has the same neighbours and weights */
    OK(MPI_Comm_dup(g, &d));
    expect_nbrs(d, 2, in, inw, 2, out, outw);
    OK(MPI_Comm_free(&d));
    OK(MPI_Comm_free(&g));
    OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, in, MPI_UNWEIGHTED, 2, out,
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    expect_nbrs(g, 2, in, NULL, 2, out, NULL);
    OK(MPI_Comm_free(&g));
    /* a star: rank 0 sends to all others, they only receive */
    int all[64], zero = 0, nall = 0;
    for (int i = 1; i < size && i < 64; i++)
        all[nall++] = i;
    if (rank == 0)
        OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_UNWEIGHTED, nall, all,
                                          MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    else
        OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &zero, MPI_UNWEIGHTED, 0, NULL,
                                          MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    if (rank == 0)
        expect_nbrs(g, 0, NULL, NULL, nall, all, NULL);
    else
        expect_nbrs(g, 1, &zero, NULL, 0, NULL, NULL);
    OK(MPI_Comm_free(&g));
}

/* Rank q names: source q+1 -> q, q+2; source q -> q (self-loop); and
 * source q+1 -> q again (a repeated edge). Weights tell the edges apart. */
static int edges_of(int q, int *src, int *deg, int *dst, int *w)
{
    src[0] = (q + 1) % size;
    deg[0] = 3;
    dst[0] = q;
    dst[1] = (q + 2) % size;
    dst[2] = q;
    src[1] = q;
    deg[1] = 1;
    dst[3] = q;
    w[0] = 1000 * q + 1;
    w[1] = 1000 * q + 2;
    w[2] = 1000 * q + 3;
    w[3] = 1000 * q + 4;
    return 2;
}

static void general(int weighted)
{
    int src[2], deg[2], dst[4], w[4];
    int n = edges_of(rank, src, deg, dst, w);
    /* what rank gets: the edges of q = 0, 1, ... in q's order */
    int cap = 4 * size, nin = 0, nout = 0;
    int *in = malloc(sizeof(int) * (size_t)cap), *inw = malloc(sizeof(int) * (size_t)cap);
    int *out = malloc(sizeof(int) * (size_t)cap), *outw = malloc(sizeof(int) * (size_t)cap);
    for (int q = 0; q < size; q++) {
        if (q == 0 && weighted == 2)
            continue; /* rank 0 names no edges */
        int qs[2], qd[2], qt[4], qw[4];
        int qn = edges_of(q, qs, qd, qt, qw);
        for (int i = 0, e = 0; i < qn; i++)
            for (int k = 0; k < qd[i]; k++, e++) {
                if (qs[i] == rank) {
                    out[nout] = qt[e];
                    outw[nout++] = qw[e];
                }
                if (qt[e] == rank) {
                    in[nin] = qs[i];
                    inw[nin++] = qw[e];
                }
            }
    }
    MPI_Comm g;
    if (weighted == 2 && rank == 0) {
        OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 0, NULL, NULL, NULL, MPI_WEIGHTS_EMPTY,
                                 MPI_INFO_NULL, 0, &g));
    } else if (weighted == 3) {
        /* rank 0 names every rank's edges; the others pass NULL arrays
         * (and NULL weights, which is not MPI_UNWEIGHTED: still weighted) */
        size_t n2 = sizeof(int) * 2 * (size_t)size, n4 = 2 * n2;
        int *as = malloc(n2), *ad = malloc(n2), *at = malloc(n4), *aw = malloc(n4);
        for (int q = 0; q < size; q++)
            edges_of(q, as + 2 * q, ad + 2 * q, at + 4 * q, aw + 4 * q);
        if (rank == 0)
            OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 2 * size, as, ad, at, aw, MPI_INFO_NULL, 0,
                                     &g));
        else
            OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 0, NULL, NULL, NULL, NULL, MPI_INFO_NULL, 0,
                                     &g));
        free(as);
        free(ad);
        free(at);
        free(aw);
    } else
        OK(MPI_Dist_graph_create(MPI_COMM_WORLD, n, src, deg, dst,
                                 weighted ? w : MPI_UNWEIGHTED, MPI_INFO_NULL, 1, &g));
    expect_nbrs(g, nin, in, weighted ? inw : NULL, nout, out, weighted ? outw : NULL);
    OK(MPI_Comm_free(&g));
    free(in);
    free(inw);
    free(out);
    free(outw);
}

static void errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm g;
    int one = 0, bad = size, neg = -1, w = 1, negw = -1, in, out, wt;
    const char *adj = "MPI_Dist_graph_create_adjacent", *gen = "MPI_Dist_graph_create";
    t_expect_err(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, -1, &one, MPI_UNWEIGHTED, 0,
                                                NULL, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g),
                 MPI_ERR_ARG, adj, "negative indegree");
    t_expect_err(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &bad, MPI_UNWEIGHTED, 0,
                                                NULL, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g),
                 MPI_ERR_RANK, adj, "source out of range");
    t_expect_err(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_UNWEIGHTED, 1,
                                                &neg, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g),
                 MPI_ERR_RANK, adj, "negative destination");
    t_expect_err(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &one, &negw, 0, NULL,
                                                MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &g),
                 MPI_ERR_ARG, adj, "negative weight");
    t_expect_err(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &one, MPI_WEIGHTS_EMPTY, 0,
                                                NULL, MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &g),
                 MPI_ERR_ARG, adj, "MPI_WEIGHTS_EMPTY with an edge");
    t_expect_err(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &one, NULL, 0, NULL,
                                                MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g),
                 MPI_ERR_ARG, adj, "null weights");
    t_expect_err(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_UNWEIGHTED, 0,
                                                NULL, MPI_UNWEIGHTED, (MPI_Info)0x1234, 0, &g),
                 MPI_ERR_INFO, adj, "bad info");
    t_expect_err(MPI_Dist_graph_create_adjacent(MPI_COMM_NULL, 0, NULL, MPI_UNWEIGHTED, 0,
                                                NULL, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g),
                 MPI_ERR_COMM, adj, "null comm");
    t_expect_err(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_UNWEIGHTED, 0,
                                                NULL, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, NULL),
                 MPI_ERR_ARG, adj, "null comm_dist_graph");
    t_expect_err(MPI_Dist_graph_create(MPI_COMM_WORLD, -1, NULL, NULL, NULL, MPI_UNWEIGHTED,
                                       MPI_INFO_NULL, 0, &g),
                 MPI_ERR_ARG, gen, "negative n");
    t_expect_err(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &bad, &w, &one, MPI_UNWEIGHTED,
                                       MPI_INFO_NULL, 0, &g),
                 MPI_ERR_RANK, gen, "source out of range");
    t_expect_err(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &one, &neg, &one, MPI_UNWEIGHTED,
                                       MPI_INFO_NULL, 0, &g),
                 MPI_ERR_ARG, gen, "negative degree");
    t_expect_err(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &one, &w, &bad, MPI_UNWEIGHTED,
                                       MPI_INFO_NULL, 0, &g),
                 MPI_ERR_RANK, gen, "destination out of range");
    t_expect_err(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &one, &w, &one, &negw, MPI_INFO_NULL,
                                       0, &g),
                 MPI_ERR_ARG, gen, "negative weight");
    t_expect_err(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &one, NULL, &one, MPI_UNWEIGHTED,
                                       MPI_INFO_NULL, 0, &g),
                 MPI_ERR_ARG, gen, "null degrees");
    t_expect_err(MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &in, &out, &wt),
                 MPI_ERR_TOPOLOGY, "MPI_Dist_graph_neighbors_count", "no topology");
    t_expect_err(MPI_Dist_graph_neighbors(MPI_COMM_WORLD, 0, NULL, NULL, 0, NULL, NULL),
                 MPI_ERR_TOPOLOGY, "MPI_Dist_graph_neighbors", "no topology");
    OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &one, MPI_UNWEIGHTED, 1, &one,
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
    t_expect_err(MPI_Dist_graph_neighbors_count(g, NULL, &out, &wt), MPI_ERR_ARG,
                 "MPI_Dist_graph_neighbors_count", "null indegree");
    t_expect_err(MPI_Dist_graph_neighbors(g, -1, &in, NULL, 1, &out, NULL), MPI_ERR_ARG,
                 "MPI_Dist_graph_neighbors", "negative maxindegree");
    t_expect_err(MPI_Dist_graph_neighbors(g, 1, NULL, NULL, 1, &out, NULL), MPI_ERR_ARG,
                 "MPI_Dist_graph_neighbors", "null sources");
    t_expect_err(MPI_Graphdims_get(g, &in, &out), MPI_ERR_TOPOLOGY, "MPI_Graphdims_get",
                 "a distributed graph is not a graph");
    OK(MPI_Comm_free(&g));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    adjacent();
    general(1);
    general(0);
    general(2);
    general(3);
    errors();
    MPI_Finalize();
    if (rank == 0)
        printf("t_topo_dist: ok\n");
    return 0;
}
