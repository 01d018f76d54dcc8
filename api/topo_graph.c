/* Graph and distributed-graph topology entry points: argument checks, then
 * comm/topo_graph.c. Error classes as in MPICH: MPI_ERR_TOPOLOGY for a
 * graph call on a communicator without that topology, MPI_ERR_ARG for a
 * bad count, degree, index, edge or weight, MPI_ERR_RANK for a rank (a
 * distributed graph's source or destination, a Graph_neighbors rank)
 * outside the communicator. Arrays the caller sized (max* arguments) get
 * their first max* entries. */
#include "topo_args.h"

/* MPICH's ABI: MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are constant pointers,
 * exported as variables, to these (MPICH-built programs and libmpichfort
 * refer to all four symbols). Only the addresses matter. */
VMPI_API_ATTR int MPIR_C_MPI_UNWEIGHTED;
VMPI_API_ATTR int MPIR_C_MPI_WEIGHTS_EMPTY;
VMPI_API_ATTR int *const MPI_UNWEIGHTED = &MPIR_C_MPI_UNWEIGHTED;
VMPI_API_ATTR int *const MPI_WEIGHTS_EMPTY = &MPIR_C_MPI_WEIGHTS_EMPTY;

#define GRAPH_ARG(c, h, fn, kind, what)                                    \
    COMM_ARG(c, h, fn);                                                    \
    VMPI_CHECK(c->topo == (kind), c, MPI_ERR_TOPOLOGY,                     \
               "%s: the communicator has no %s topology", fn, what)

/* index and edges describe a graph of nnodes <= c->size nodes. */
static int graph_arg(struct vmpi_comm *c, const char *fn, int nnodes, const int *index,
                     const int *edges)
{
    VMPI_CHECK(nnodes >= 0 && nnodes <= c->size, c, MPI_ERR_ARG,
               "%s: nnodes = %d is not in [0, %d] (the communicator's size)", fn, nnodes,
               c->size);
    if (nnodes == 0)
        return MPI_SUCCESS;
    PTR_ARG(index, c, fn, "index");
    for (int i = 0; i < nnodes; i++)
        VMPI_CHECK(index[i] >= (i ? index[i - 1] : 0), c, MPI_ERR_ARG,
                   "%s: index[%d] = %d is less than the entry before it (%d)", fn, i, index[i],
                   i ? index[i - 1] : 0);
    if (index[nnodes - 1] > 0)
        PTR_ARG(edges, c, fn, "edges");
    for (int e = 0; e < index[nnodes - 1]; e++)
        VMPI_CHECK(edges[e] >= 0 && edges[e] < nnodes, c, MPI_ERR_ARG,
                   "%s: edges[%d] = %d is not a node of the graph [0, %d)", fn, e, edges[e],
                   nnodes);
    return MPI_SUCCESS;
}

int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                      int reorder, MPI_Comm *comm_graph)
{
    static const char fn[] = "MPI_Graph_create";
    (void)reorder; /* ranks keep their order */
    VMPI_ENTER(fn);
    COMM_ARG(c, comm_old, fn);
    INTRA_ARG(c, fn);
    PTR_ARG(comm_graph, c, fn, "comm_graph");
    int rc = graph_arg(c, fn, nnodes, index, edges);
    if (rc != MPI_SUCCESS)
        return rc;
    struct vmpi_comm *nc = NULL;
    rc = vmpi_topo_graph_create(c, nnodes, index, edges, &nc);
    return topo_made(c, rc, nc, comm_graph);
}
VMPI_WEAK(Graph_create);

/* Ranks stay where they are: the first nnodes ranks keep theirs. */
int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                   int *newrank)
{
    static const char fn[] = "MPI_Graph_map";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    INTRA_ARG(c, fn);
    PTR_ARG(newrank, c, fn, "newrank");
    int rc = graph_arg(c, fn, nnodes, index, edges);
    if (rc != MPI_SUCCESS)
        return rc;
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
VMPI_WEAK(Graph_map);

int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    static const char fn[] = "MPI_Graphdims_get";
    VMPI_ENTER(fn);
    GRAPH_ARG(c, comm, fn, MPI_GRAPH, "graph");
    PTR_ARG(nnodes, c, fn, "nnodes");
    PTR_ARG(nedges, c, fn, "nedges");
    const struct vmpi_topo_graph *g = vmpi_topo_graph(c);
    *nnodes = g->nnodes;
    *nedges = g->nedges;
    return MPI_SUCCESS;
}
VMPI_WEAK(Graphdims_get);

static void copy_max(int *dst, const int *src, int n, int max)
{
    for (int i = 0; i < n && i < max; i++)
        dst[i] = src[i];
}

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    static const char fn[] = "MPI_Graph_get";
    VMPI_ENTER(fn);
    GRAPH_ARG(c, comm, fn, MPI_GRAPH, "graph");
    VMPI_CHECK(maxindex >= 0 && maxedges >= 0, c, MPI_ERR_ARG,
               "%s: maxindex = %d or maxedges = %d is negative", fn, maxindex, maxedges);
    const struct vmpi_topo_graph *g = vmpi_topo_graph(c);
    if (maxindex > 0 && g->nnodes > 0)
        PTR_ARG(index, c, fn, "index");
    if (maxedges > 0 && g->nedges > 0)
        PTR_ARG(edges, c, fn, "edges");
    copy_max(index, g->index, g->nnodes, maxindex);
    copy_max(edges, g->edges, g->nedges, maxedges);
    return MPI_SUCCESS;
}
VMPI_WEAK(Graph_get);

/* Node rank's adjacency list in g: *n entries from *first. */
static int node_arg(struct vmpi_comm *c, const char *fn, int rank, const int **first, int *n)
{
    const struct vmpi_topo_graph *g = vmpi_topo_graph(c);
    VMPI_CHECK(rank >= 0 && rank < g->nnodes, c, MPI_ERR_RANK,
               "%s: rank = %d is not a node of the graph [0, %d)", fn, rank, g->nnodes);
    int begin = rank ? g->index[rank - 1] : 0;
    *first = g->edges + begin;
    *n = g->index[rank] - begin;
    return MPI_SUCCESS;
}

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    static const char fn[] = "MPI_Graph_neighbors_count";
    VMPI_ENTER(fn);
    GRAPH_ARG(c, comm, fn, MPI_GRAPH, "graph");
    PTR_ARG(nneighbors, c, fn, "nneighbors");
    const int *first;
    return node_arg(c, fn, rank, &first, nneighbors);
}
VMPI_WEAK(Graph_neighbors_count);

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    static const char fn[] = "MPI_Graph_neighbors";
    VMPI_ENTER(fn);
    GRAPH_ARG(c, comm, fn, MPI_GRAPH, "graph");
    VMPI_CHECK(maxneighbors >= 0, c, MPI_ERR_ARG, "%s: maxneighbors = %d is negative", fn,
               maxneighbors);
    const int *first;
    int n;
    int rc = node_arg(c, fn, rank, &first, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    if (maxneighbors > 0 && n > 0)
        PTR_ARG(neighbors, c, fn, "neighbors");
    copy_max(neighbors, first, n, maxneighbors);
    return MPI_SUCCESS;
}
VMPI_WEAK(Graph_neighbors);

/* ---- distributed graphs ------------------------------------------------- */

/* n ranks of c in ranks[] (name says which argument) and their weights:
 * MPI_UNWEIGHTED (*w becomes NULL, *weighted false), MPI_WEIGHTS_EMPTY
 * (only with n == 0), or n non-negative values (NULL too when n == 0, as
 * MPICH allows: weighted all the same). */
static int edges_arg(struct vmpi_comm *c, const char *fn, const char *name, int n,
                     const int *ranks, const char *wname, const int **w, bool *weighted)
{
    *weighted = *w != MPI_UNWEIGHTED;
    VMPI_CHECK(n >= 0, c, MPI_ERR_ARG, "%s: the number of %s (%d) is negative", fn, name, n);
    if (n > 0)
        PTR_ARG(ranks, c, fn, name);
    for (int i = 0; i < n; i++)
        VMPI_CHECK(ranks[i] >= 0 && ranks[i] < c->size, c, MPI_ERR_RANK,
                   "%s: %s[%d] = %d is not a rank of the communicator (size %d)", fn, name, i,
                   ranks[i], c->size);
    if (*w == MPI_UNWEIGHTED) {
        *w = NULL;
        return MPI_SUCCESS;
    }
    VMPI_CHECK(n == 0 || *w != MPI_WEIGHTS_EMPTY, c, MPI_ERR_ARG,
               "%s: %s is MPI_WEIGHTS_EMPTY for %d edges", fn, wname, n);
    if (n > 0)
        PTR_ARG(*w, c, fn, wname);
    for (int i = 0; i < n; i++)
        VMPI_CHECK((*w)[i] >= 0, c, MPI_ERR_ARG, "%s: %s[%d] = %d is negative", fn, wname, i,
                   (*w)[i]);
    return MPI_SUCCESS;
}

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[], const int destweights[],
                                    MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    static const char fn[] = "MPI_Dist_graph_create_adjacent";
    (void)reorder; /* ranks keep their order */
    VMPI_ENTER(fn);
    COMM_ARG(c, comm_old, fn);
    INTRA_ARG(c, fn);
    VMPI_CHECK_INFO(info, c, fn);
    PTR_ARG(comm_dist_graph, c, fn, "comm_dist_graph");
    const int *inw = sourceweights, *outw = destweights;
    bool inwt, outwt;
    int rc = edges_arg(c, fn, "sources", indegree, sources, "sourceweights", &inw, &inwt);
    if (rc == MPI_SUCCESS)
        rc = edges_arg(c, fn, "destinations", outdegree, destinations, "destweights", &outw,
                       &outwt);
    if (rc != MPI_SUCCESS)
        return rc;
    struct vmpi_comm *nc = NULL;
    rc = vmpi_topo_dist_adjacent(c, indegree, sources, inw, outdegree, destinations, outw,
                                 inwt || outwt, &nc);
    return topo_made(c, rc, nc, comm_dist_graph);
}
VMPI_WEAK(Dist_graph_create_adjacent);

int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info info,
                           int reorder, MPI_Comm *comm_dist_graph)
{
    static const char fn[] = "MPI_Dist_graph_create";
    (void)reorder; /* ranks keep their order */
    VMPI_ENTER(fn);
    COMM_ARG(c, comm_old, fn);
    INTRA_ARG(c, fn);
    VMPI_CHECK_INFO(info, c, fn);
    PTR_ARG(comm_dist_graph, c, fn, "comm_dist_graph");
    const int *w = weights, *no_w = MPI_UNWEIGHTED;
    bool weighted;
    int rc = edges_arg(c, fn, "sources", n, sources, "weights", &no_w, &weighted);
    if (rc != MPI_SUCCESS)
        return rc;
    if (n > 0)
        PTR_ARG(degrees, c, fn, "degrees");
    long nedges = 0;
    for (int i = 0; i < n; i++) {
        VMPI_CHECK(degrees[i] >= 0, c, MPI_ERR_ARG, "%s: degrees[%d] = %d is negative", fn, i,
                   degrees[i]);
        nedges += degrees[i];
        VMPI_CHECK(nedges <= INT32_MAX / 4, c, MPI_ERR_ARG,
                   "%s: the degrees add up to more than %d edges", fn, INT32_MAX / 4);
    }
    rc = edges_arg(c, fn, "destinations", (int)nedges, destinations, "weights", &w, &weighted);
    if (rc != MPI_SUCCESS)
        return rc;
    struct vmpi_comm *nc = NULL;
    rc = vmpi_topo_dist_create(c, n, sources, degrees, destinations, w, weighted, &nc);
    return topo_made(c, rc, nc, comm_dist_graph);
}
VMPI_WEAK(Dist_graph_create);

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    static const char fn[] = "MPI_Dist_graph_neighbors_count";
    VMPI_ENTER(fn);
    GRAPH_ARG(c, comm, fn, MPI_DIST_GRAPH, "distributed graph");
    PTR_ARG(indegree, c, fn, "indegree");
    PTR_ARG(outdegree, c, fn, "outdegree");
    PTR_ARG(weighted, c, fn, "weighted");
    const struct vmpi_topo_graph *g = vmpi_topo_graph(c);
    *indegree = g->indeg;
    *outdegree = g->outdeg;
    *weighted = g->weighted;
    return MPI_SUCCESS;
}
VMPI_WEAK(Dist_graph_neighbors_count);

/* The first max of n ranks (and weights, when kept and wanted). */
static int nbrs_out(struct vmpi_comm *c, const char *fn, const char *maxname, int max,
                    const char *name, int *ranks, int *w, const int *src, const int *srcw, int n,
                    bool weighted)
{
    VMPI_CHECK(max >= 0, c, MPI_ERR_ARG, "%s: %s = %d is negative", fn, maxname, max);
    if (max > 0 && n > 0)
        PTR_ARG(ranks, c, fn, name);
    copy_max(ranks, src, n, max);
    if (weighted && w != MPI_UNWEIGHTED && w != MPI_WEIGHTS_EMPTY && w)
        copy_max(w, srcw, n, max);
    return MPI_SUCCESS;
}

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
                              int sourceweights[], int maxoutdegree, int destinations[],
                              int destweights[])
{
    static const char fn[] = "MPI_Dist_graph_neighbors";
    VMPI_ENTER(fn);
    GRAPH_ARG(c, comm, fn, MPI_DIST_GRAPH, "distributed graph");
    const struct vmpi_topo_graph *g = vmpi_topo_graph(c);
    int rc = nbrs_out(c, fn, "maxindegree", maxindegree, "sources", sources, sourceweights,
                      g->in, g->inw, g->indeg, g->weighted);
    if (rc == MPI_SUCCESS)
        rc = nbrs_out(c, fn, "maxoutdegree", maxoutdegree, "destinations", destinations,
                      destweights, g->out, g->outw, g->outdeg, g->weighted);
    return rc;
}
VMPI_WEAK(Dist_graph_neighbors);
