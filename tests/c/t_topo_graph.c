/* np: 4 2 3 */
/* vms: v2 */
/* Graph topologies: Graph_create on a ring with self-loops and a repeated
 * edge, read back with Graphdims_get, Graph_get, Graph_neighbors(_count)
 * and Topo_test; a graph on fewer nodes than ranks (MPI_COMM_NULL beyond
 * it), the empty graph, Graph_map and Cart_map; Cart_sub on a 2-D grid;
 * Topo_test of every kind; and bad input for each function (error class
 * and a message naming it), intercommunicators included. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_check.h"

static int rank, size;

/* Node i: i+1, i-1 (mod size), i itself, and i+1 again. */
static void ring_graph(int *index, int *edges)
{
    for (int i = 0, e = 0; i < size; i++) {
        edges[e++] = (i + 1) % size;
        edges[e++] = (i - 1 + size) % size;
        edges[e++] = i;
        edges[e++] = (i + 1) % size;
        index[i] = e;
    }
}

static void graph_basic(void)
{
    int *index = malloc(sizeof(int) * (size_t)size);
    int *edges = malloc(sizeof(int) * 4 * (size_t)size);
    ring_graph(index, edges);
    MPI_Comm g;
    OK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 1, &g));
    CHECK(g != MPI_COMM_NULL, "every rank is a node");
    int t, n, m, r;
    OK(MPI_Topo_test(g, &t));
    CHECK(t == MPI_GRAPH, "topo %d", t);
    OK(MPI_Comm_rank(g, &r));
    CHECK(r == rank, "reorder keeps ranks: %d", r);
    OK(MPI_Graphdims_get(g, &n, &m));
    CHECK(n == size && m == 4 * size, "dims %d %d", n, m);
    int *gi = malloc(sizeof(int) * (size_t)size), *ge = malloc(sizeof(int) * 4 * (size_t)size);
    OK(MPI_Graph_get(g, size, 4 * size, gi, ge));
    CHECK(!memcmp(gi, index, sizeof(int) * (size_t)size), "index differs");
    CHECK(!memcmp(ge, edges, sizeof(int) * 4 * (size_t)size), "edges differ");
    /* a smaller array gets the first entries only */
    int two[3] = {-7, -7, -7};
    OK(MPI_Graph_get(g, 0, 2, NULL, two));
    CHECK(two[0] == edges[0] && two[1] == edges[1] && two[2] == -7, "partial get");
    for (int v = 0; v < size; v++) {
        int cnt, nb[5] = {-1, -1, -1, -1, -1};
        OK(MPI_Graph_neighbors_count(g, v, &cnt));
        CHECK(cnt == 4, "node %d has %d neighbours", v, cnt);
        OK(MPI_Graph_neighbors(g, v, 5, nb));
        CHECK(!memcmp(nb, edges + 4 * v, sizeof(int) * 4) && nb[4] == -1,
              "node %d: neighbours %d %d %d %d", v, nb[0], nb[1], nb[2], nb[3]);
    }
    /* a duplicate has the same graph */
    MPI_Comm d;
    OK(MPI_Comm_dup(g, &d));
    OK(MPI_Topo_test(d, &t));
    CHECK(t == MPI_GRAPH, "the dup's topology is %d", t);
    memset(gi, 0, sizeof(int) * (size_t)size);
    memset(ge, 0, sizeof(int) * 4 * (size_t)size);
    OK(MPI_Graph_get(d, size, 4 * size, gi, ge));
    CHECK(!memcmp(gi, index, sizeof(int) * (size_t)size) &&
              !memcmp(ge, edges, sizeof(int) * 4 * (size_t)size),
          "the dup's graph differs");
    OK(MPI_Comm_free(&d));
    OK(MPI_Comm_free(&g));
    free(gi);
    free(ge);
    free(index);
    free(edges);
}

/* A graph over the first nodes only; the empty graph. */
static void graph_small(void)
{
    int index[1] = {1}, edges[1] = {0}; /* one node with a self-loop */
    MPI_Comm g;
    OK(MPI_Graph_create(MPI_COMM_WORLD, 1, index, edges, 0, &g));
    CHECK((rank == 0) == (g != MPI_COMM_NULL), "rank %d: comm %s", rank,
          g == MPI_COMM_NULL ? "null" : "set");
    if (g != MPI_COMM_NULL) {
        int s, n;
        OK(MPI_Comm_size(g, &s));
        OK(MPI_Graph_neighbors_count(g, 0, &n));
        CHECK(s == 1 && n == 1, "size %d, neighbours %d", s, n);
        OK(MPI_Comm_free(&g));
    }
    OK(MPI_Graph_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &g));
    CHECK(g == MPI_COMM_NULL, "the empty graph gives MPI_COMM_NULL");
    int nr;
    OK(MPI_Graph_map(MPI_COMM_WORLD, 1, index, edges, &nr));
    CHECK(nr == (rank == 0 ? 0 : MPI_UNDEFINED), "Graph_map: %d", nr);
    int dims[2] = {1, size > 1 ? size - 1 : 1}, periods[2] = {0, 1};
    OK(MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &nr));
    CHECK(nr == (rank < dims[1] ? rank : MPI_UNDEFINED), "Cart_map: %d", nr);
    OK(MPI_Cart_map(MPI_COMM_WORLD, 0, NULL, NULL, &nr));
    CHECK(nr == (rank == 0 ? 0 : MPI_UNDEFINED), "Cart_map of a point: %d", nr);
}

/* Cart_sub of a 2 x (size/2) grid (size/2 x 1 when size is odd). */
static void cart_sub(void)
{
    int dims[2] = {size % 2 ? size : 2, size % 2 ? 1 : size / 2}, periods[2] = {1, 0};
    MPI_Comm cart, row, col, none;
    OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
    int coords[2];
    OK(MPI_Cart_coords(cart, rank, 2, coords));
    OK(MPI_Cart_sub(cart, (int[]){0, 1}, &row));
    OK(MPI_Cart_sub(cart, (int[]){1, 0}, &col));
    OK(MPI_Cart_sub(cart, (int[]){0, 0}, &none));
    int rs, rr, cs, cr, nd, d[2], p[2], c[2];
    OK(MPI_Comm_size(row, &rs));
    OK(MPI_Comm_rank(row, &rr));
    CHECK(rs == dims[1] && rr == coords[1], "row: size %d rank %d", rs, rr);
    OK(MPI_Cart_get(row, 1, d, p, c));
    CHECK(d[0] == dims[1] && p[0] == 0 && c[0] == coords[1], "row grid %d %d %d", d[0], p[0], c[0]);
    OK(MPI_Comm_size(col, &cs));
    OK(MPI_Comm_rank(col, &cr));
    CHECK(cs == dims[0] && cr == coords[0], "col: size %d rank %d", cs, cr);
    OK(MPI_Cart_get(col, 1, d, p, c));
    CHECK(d[0] == dims[0] && p[0] == 1, "col grid %d %d", d[0], p[0]);
    /* the column's members are the ranks of this column, in order */
    int mine = rank, *all = malloc(sizeof(int) * (size_t)cs);
    OK(MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, col));
    for (int i = 0; i < cs; i++)
        CHECK(all[i] == i * dims[1] + coords[1], "col member %d is %d", i, all[i]);
    free(all);
    OK(MPI_Cartdim_get(none, &nd));
    OK(MPI_Comm_size(none, &cs));
    CHECK(nd == 0 && cs == 1, "no dimensions kept: ndims %d size %d", nd, cs);
    OK(MPI_Comm_free(&row));
    OK(MPI_Comm_free(&col));
    OK(MPI_Comm_free(&none));
    OK(MPI_Comm_free(&cart));
}

static void errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int index[2] = {1, 2}, edges[2] = {1, 0}, bad_index[2] = {2, 1}, bad_edges[2] = {1, 5};
    int nr, n, m, t;
    MPI_Comm g = MPI_COMM_NULL;
    t_expect_err(MPI_Graph_create(MPI_COMM_WORLD, -1, index, edges, 0, &g), MPI_ERR_ARG,
                 "MPI_Graph_create", "negative nnodes");
    t_expect_err(MPI_Graph_create(MPI_COMM_WORLD, size + 1, index, edges, 0, &g), MPI_ERR_ARG,
                 "MPI_Graph_create", "nnodes > size");
    if (size >= 2) {
        t_expect_err(MPI_Graph_create(MPI_COMM_WORLD, 2, bad_index, edges, 0, &g), MPI_ERR_ARG,
                     "MPI_Graph_create", "decreasing index");
        t_expect_err(MPI_Graph_create(MPI_COMM_WORLD, 2, index, bad_edges, 0, &g), MPI_ERR_ARG,
                     "MPI_Graph_create", "edge out of range");
        t_expect_err(MPI_Graph_map(MPI_COMM_WORLD, 2, index, bad_edges, &nr), MPI_ERR_ARG,
                     "MPI_Graph_map", "edge out of range");
    }
    t_expect_err(MPI_Graph_create(MPI_COMM_NULL, 1, index, edges, 0, &g), MPI_ERR_COMM,
                 "MPI_Graph_create", "null comm");
    t_expect_err(MPI_Graph_create(MPI_COMM_WORLD, 1, NULL, edges, 0, &g), MPI_ERR_ARG,
                 "MPI_Graph_create", "null index");
    t_expect_err(MPI_Graph_map(MPI_COMM_WORLD, 1, index, edges, NULL), MPI_ERR_ARG,
                 "MPI_Graph_map", "null newrank");
    /* graph queries on a communicator without a graph */
    t_expect_err(MPI_Graphdims_get(MPI_COMM_WORLD, &n, &m), MPI_ERR_TOPOLOGY,
                 "MPI_Graphdims_get", "no graph");
    t_expect_err(MPI_Graph_get(MPI_COMM_WORLD, 1, 1, index, edges), MPI_ERR_TOPOLOGY,
                 "MPI_Graph_get", "no graph");
    t_expect_err(MPI_Graph_neighbors_count(MPI_COMM_WORLD, 0, &n), MPI_ERR_TOPOLOGY,
                 "MPI_Graph_neighbors_count", "no graph");
    t_expect_err(MPI_Graph_neighbors(MPI_COMM_WORLD, 0, 1, edges), MPI_ERR_TOPOLOGY,
                 "MPI_Graph_neighbors", "no graph");
    int self_index[1] = {1}, self_edges[1] = {0};
    OK(MPI_Graph_create(MPI_COMM_WORLD, 1, self_index, self_edges, 0, &g));
    if (g != MPI_COMM_NULL) {
        MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
        t_expect_err(MPI_Graph_neighbors_count(g, 1, &n), MPI_ERR_RANK,
                     "MPI_Graph_neighbors_count", "rank outside the graph");
        t_expect_err(MPI_Graph_neighbors(g, -1, 1, edges), MPI_ERR_RANK, "MPI_Graph_neighbors",
                     "negative rank");
        t_expect_err(MPI_Graph_neighbors(g, 0, 1, NULL), MPI_ERR_ARG, "MPI_Graph_neighbors",
                     "null neighbors");
        t_expect_err(MPI_Graph_get(g, -1, 1, index, edges), MPI_ERR_ARG, "MPI_Graph_get",
                     "negative maxindex");
        t_expect_err(MPI_Graphdims_get(g, NULL, &m), MPI_ERR_ARG, "MPI_Graphdims_get",
                     "null nnodes");
        t_expect_err(MPI_Cart_sub(g, (int[]){1}, &g), MPI_ERR_TOPOLOGY, "MPI_Cart_sub",
                     "graph is not Cartesian");
        OK(MPI_Comm_free(&g));
    }
    t_expect_err(MPI_Cart_sub(MPI_COMM_WORLD, (int[]){1}, &g), MPI_ERR_TOPOLOGY, "MPI_Cart_sub",
                 "no topology");
    MPI_Comm ring;
    OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &size, (int[]){1}, 0, &ring));
    MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN);
    t_expect_err(MPI_Cart_sub(ring, NULL, &g), MPI_ERR_ARG, "MPI_Cart_sub", "null remain_dims");
    t_expect_err(MPI_Cart_sub(ring, (int[]){1}, NULL), MPI_ERR_ARG, "MPI_Cart_sub",
                 "null newcomm");
    OK(MPI_Topo_test(ring, &t));
    CHECK(t == MPI_CART, "ring topo %d", t);
    OK(MPI_Comm_free(&ring));
    t_expect_err(MPI_Cart_map(MPI_COMM_WORLD, 1, (int[]){size + 1}, (int[]){0}, &nr),
                 MPI_ERR_DIMS, "MPI_Cart_map", "grid larger than comm");
    t_expect_err(MPI_Cart_map(MPI_COMM_WORLD, 1, (int[]){0}, (int[]){0}, &nr), MPI_ERR_DIMS,
                 "MPI_Cart_map", "zero dimension");
    t_expect_err(MPI_Cart_map(MPI_COMM_WORLD, -1, NULL, NULL, &nr), MPI_ERR_DIMS,
                 "MPI_Cart_map", "negative ndims");
    t_expect_err(MPI_Cart_map(MPI_COMM_NULL, 0, NULL, NULL, &nr), MPI_ERR_COMM, "MPI_Cart_map",
                 "null comm");
    OK(MPI_Topo_test(MPI_COMM_WORLD, &t));
    CHECK(t == MPI_UNDEFINED, "world topo %d", t);
    if (size >= 2) { /* even ranks against odd ones */
        MPI_Comm half, inter;
        OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
        OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &inter));
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        t_expect_err(MPI_Cart_create(inter, 1, (int[]){1}, (int[]){0}, 0, &g), MPI_ERR_COMM,
                     "MPI_Cart_create", "intercommunicator");
        t_expect_err(MPI_Graph_create(inter, 1, self_index, self_edges, 0, &g), MPI_ERR_COMM,
                     "MPI_Graph_create", "intercommunicator");
        t_expect_err(MPI_Dist_graph_create_adjacent(inter, 0, NULL, MPI_UNWEIGHTED, 0, NULL,
                                                    MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g),
                     MPI_ERR_COMM, "MPI_Dist_graph_create_adjacent", "intercommunicator");
        t_expect_err(MPI_Graph_map(inter, 1, self_index, self_edges, &nr), MPI_ERR_COMM,
                     "MPI_Graph_map", "intercommunicator");
        OK(MPI_Topo_test(inter, &t));
        CHECK(t == MPI_UNDEFINED, "intercommunicator topo %d", t);
        OK(MPI_Comm_free(&inter));
        OK(MPI_Comm_free(&half));
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    graph_basic();
    graph_small();
    cart_sub();
    errors();
    MPI_Finalize();
    if (rank == 0)
        printf("t_topo_graph: ok\n");
    return 0;
}
