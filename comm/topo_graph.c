/* Graph (MPI_GRAPH) and distributed-graph (MPI_DIST_GRAPH) topologies.
 *
 * The topology lives in a communicator slot of comm/'s own, one allocation
 * (struct vmpi_topo_graph followed by its arrays), freed with the
 * communicator. A graph communicator keeps the whole graph, as every member
 * passed it; a distributed one keeps only this rank's sources and
 * destinations, in the order the neighbourhood collectives use.
 *
 * MPI_Dist_graph_create: each rank names some edges (source -> dest,
 * weight) of any ranks. One alltoall of counts and one alltoallv of
 * records (kind, peer, weight) bring every edge to its two ends: the
 * source learns a destination, the destination a source. Each rank gets
 * its records in the order (sender rank, position in the sender's list),
 * the same at both ends of every edge, so with repeated edges the k-th
 * edge from i to j at i is the k-th from i at j, which is what message
 * order in the neighbourhood collectives needs.
 *
 * Reorder is accepted and ignored (the standard allows it): rank i of the
 * new communicator is rank i of the old one. */
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "../coll/coll.h"

static int slot = -1; /* the communicator slot holding struct vmpi_topo_graph */

static void graph_free(void *data)
{
    free(data);
}

const struct vmpi_topo_graph *vmpi_topo_graph(const struct vmpi_comm *c)
{
    if ((c->topo != MPI_GRAPH && c->topo != MPI_DIST_GRAPH) || slot < 0)
        return NULL;
    return c->slot[slot];
}

/* One block: the struct, then index, edges, in, out, inw, outw. */
static struct vmpi_topo_graph *graph_new(int nnodes, int nedges, int indeg, int outdeg)
{
    size_t n = (size_t)nnodes + (size_t)nedges + 2 * (size_t)indeg + 2 * (size_t)outdeg;
    struct vmpi_topo_graph *g = calloc(1, sizeof *g + sizeof(int) * n);
    if (!g)
        return NULL;
    int *p = (int *)(g + 1);
    *g = (struct vmpi_topo_graph){.nnodes = nnodes, .nedges = nedges, .indeg = indeg,
                                  .outdeg = outdeg};
    g->index = p;
    g->edges = g->index + nnodes;
    g->in = g->edges + nedges;
    g->out = g->in + indeg;
    g->inw = g->out + outdeg;
    g->outw = g->inw + indeg;
    return g;
}

/* Gives c the topology g (of kind topo), replacing any it had. */
static void graph_attach(struct vmpi_comm *c, int topo, struct vmpi_topo_graph *g)
{
    if (slot < 0)
        slot = vmpi_comm_slot_new(graph_free);
    free(c->slot[slot]);
    c->slot[slot] = g;
    free(c->dims);
    free(c->periods);
    c->dims = c->periods = NULL;
    c->ndims = 0;
    c->topo = topo;
}

/* An empty list may come as NULL, which memcpy must not see. */
static void copy_ints(int *dst, const int *src, int n)
{
    if (n > 0)
        memcpy(dst, src, sizeof(int) * (size_t)n);
}

int vmpi_topo_graph_create(struct vmpi_comm *c, int nnodes, const int *index, const int *edges,
                           struct vmpi_comm **out)
{
    *out = NULL;
    if (nnodes == 0)
        return MPI_SUCCESS; /* MPI_COMM_NULL everywhere (MPI-3.1 7.5.3) */
    int nedges = index[nnodes - 1];
    int rc = vmpi_topo_comm_first(c, nnodes, "MPI_Graph_create", out);
    if (rc != MPI_SUCCESS || !*out)
        return rc;
    struct vmpi_topo_graph *g = graph_new(nnodes, nedges, 0, 0);
    if (!g) {
        vmpi_comm_free(*out);
        *out = NULL;
        return vmpi_err(c, MPI_ERR_NO_MEM, "MPI_Graph_create: out of memory");
    }
    copy_ints(g->index, index, nnodes);
    copy_ints(g->edges, edges, nedges);
    graph_attach(*out, MPI_GRAPH, g);
    return MPI_SUCCESS;
}

static void weights_or_one(int *dst, const int *w, int n)
{
    for (int i = 0; i < n; i++)
        dst[i] = w ? w[i] : 1;
}

int vmpi_topo_dist_adjacent(struct vmpi_comm *c, int indeg, const int *in, const int *inw,
                            int outdeg, const int *out, const int *outw, bool weighted,
                            struct vmpi_comm **out_c)
{
    struct vmpi_topo_graph *g = graph_new(0, 0, indeg, outdeg);
    if (!g)
        return vmpi_err(c, MPI_ERR_NO_MEM, "MPI_Dist_graph_create_adjacent: out of memory");
    copy_ints(g->in, in, indeg);
    copy_ints(g->out, out, outdeg);
    weights_or_one(g->inw, inw, indeg);
    weights_or_one(g->outw, outw, outdeg);
    g->weighted = weighted;
    int rc = vmpi_topo_comm_first(c, c->size, "MPI_Dist_graph_create_adjacent", out_c);
    if (rc != MPI_SUCCESS) {
        free(g);
        return rc;
    }
    graph_attach(*out_c, MPI_DIST_GRAPH, g);
    return MPI_SUCCESS;
}

/* ---- MPI_Dist_graph_create's exchange ------------------------------------ */

enum { REC_IN = 0, REC_OUT = 1, REC_INTS = 3 }; /* a record: kind, peer, weight */

struct dist_ex {
    int *scount, *sdispl, *rcount, *rdispl; /* in ints, per rank */
    int *sbuf, *rbuf;
};

static void dist_ex_free(struct dist_ex *x)
{
    free(x->scount);
    free(x->sdispl);
    free(x->rcount);
    free(x->rdispl);
    free(x->sbuf);
    free(x->rbuf);
}

/* Calls fn(x, to, kind, peer, weight) for each end of each edge, in the
 * order of the caller's lists. */
static void dist_edges(const int *sources, const int *degrees, const int *dests, const int *weights,
                       int n, struct dist_ex *x,
                       void (*fn)(struct dist_ex *x, int to, int kind, int peer, int w))
{
    for (int i = 0, e = 0; i < n; i++)
        for (int k = 0; k < degrees[i]; k++, e++) {
            int w = weights ? weights[e] : 1;
            fn(x, sources[i], REC_OUT, dests[e], w);
            fn(x, dests[e], REC_IN, sources[i], w);
        }
}

static void count_rec(struct dist_ex *x, int to, int kind, int peer, int w)
{
    (void)kind, (void)peer, (void)w;
    x->scount[to] += REC_INTS;
}

static void put_rec(struct dist_ex *x, int to, int kind, int peer, int w)
{
    int *r = x->sbuf + x->sdispl[to];
    x->sdispl[to] += REC_INTS;
    r[0] = kind;
    r[1] = peer;
    r[2] = w;
}

/* Prefix sums of counts into displs; the total. */
static long prefix(const int *counts, int *displs, int p)
{
    long t = 0;
    for (int i = 0; i < p; i++) {
        displs[i] = (int)t;
        t += counts[i];
    }
    return t;
}

static int dist_exchange(struct vmpi_comm *c, const int *sources, const int *degrees,
                         const int *dests, const int *weights, int n, struct dist_ex *x,
                         long *nrecv)
{
    int p = c->size;
    struct vmpi_dtype *it = vmpi_dtype_get(MPI_INT);
    x->scount = calloc((size_t)p, sizeof(int));
    x->sdispl = malloc(sizeof(int) * (size_t)p);
    x->rcount = malloc(sizeof(int) * (size_t)p);
    x->rdispl = malloc(sizeof(int) * (size_t)p);
    if (!x->scount || !x->sdispl || !x->rcount || !x->rdispl)
        return MPI_ERR_NO_MEM;
    dist_edges(sources, degrees, dests, weights, n, x, count_rec);
    long ns = prefix(x->scount, x->sdispl, p);
    int rc = vmpi_coll_alltoall(x->scount, 1, it, x->rcount, 1, it, c);
    if (rc != MPI_SUCCESS)
        return rc;
    *nrecv = prefix(x->rcount, x->rdispl, p);
    x->sbuf = malloc(sizeof(int) * (size_t)(ns ? ns : 1));
    x->rbuf = malloc(sizeof(int) * (size_t)(*nrecv ? *nrecv : 1));
    if (!x->sbuf || !x->rbuf)
        return MPI_ERR_NO_MEM;
    dist_edges(sources, degrees, dests, weights, n, x, put_rec); /* sdispl moves to the ends */
    prefix(x->scount, x->sdispl, p);
    return vmpi_coll_alltoallv(x->sbuf, x->scount, x->sdispl, it, x->rbuf, x->rcount,
                               x->rdispl, it, c);
}

int vmpi_topo_dist_create(struct vmpi_comm *c, int n, const int *sources, const int *degrees,
                          const int *dests, const int *weights, bool weighted,
                          struct vmpi_comm **out)
{
    static const char fn[] = "MPI_Dist_graph_create";
    struct dist_ex x = {0};
    long nrecv = 0;
    struct vmpi_topo_graph *g = NULL;
    *out = NULL;
    int rc = dist_exchange(c, sources, degrees, dests, weights, n, &x, &nrecv);
    if (rc != MPI_SUCCESS)
        goto out;
    int indeg = 0, outdeg = 0;
    for (long i = 0; i < nrecv; i += REC_INTS) {
        if (x.rbuf[i] == REC_OUT)
            outdeg++;
        else
            indeg++;
    }
    rc = MPI_ERR_NO_MEM;
    if (!(g = graph_new(0, 0, indeg, outdeg)))
        goto out;
    indeg = outdeg = 0;
    for (long i = 0; i < nrecv; i += REC_INTS) {
        const int *r = x.rbuf + i;
        if (r[0] == REC_OUT) {
            g->out[outdeg] = r[1];
            g->outw[outdeg++] = r[2];
        } else {
            g->in[indeg] = r[1];
            g->inw[indeg++] = r[2];
        }
    }
    g->weighted = weighted;
    rc = vmpi_topo_comm_first(c, c->size, fn, out);
    if (rc == MPI_SUCCESS) {
        graph_attach(*out, MPI_DIST_GRAPH, g);
        g = NULL;
    }
out:
    free(g);
    dist_ex_free(&x);
    if (rc == MPI_ERR_NO_MEM)
        return vmpi_err(c, rc, "%s: out of memory", fn);
    return rc;
}

/* ---- copies and neighbours ------------------------------------------------ */

int vmpi_topo_copy(const struct vmpi_comm *from, struct vmpi_comm *to)
{
    if (from->topo == MPI_CART)
        return vmpi_topo_set_cart(to, from->ndims, from->dims, from->periods);
    const struct vmpi_topo_graph *g = vmpi_topo_graph(from);
    if (!g)
        return MPI_SUCCESS;
    struct vmpi_topo_graph *n = graph_new(g->nnodes, g->nedges, g->indeg, g->outdeg);
    if (!n)
        return MPI_ERR_NO_MEM;
    /* the arrays follow the struct in one block, in the same layout */
    memcpy(n + 1, g + 1, sizeof(int) * ((size_t)g->nnodes + (size_t)g->nedges +
                                        2 * (size_t)g->indeg + 2 * (size_t)g->outdeg));
    n->weighted = g->weighted;
    graph_attach(to, from->topo, n);
    return MPI_SUCCESS;
}

/* A graph rank's neighbours, both ways, are its adjacency list as given. */
int vmpi_topo_graph_nbrs(const struct vmpi_comm *c, struct vmpi_topo_nbrs *nb)
{
    const struct vmpi_topo_graph *g = vmpi_topo_graph(c);
    *nb = (struct vmpi_topo_nbrs){0};
    if (!g)
        return MPI_ERR_TOPOLOGY;
    if (c->topo == MPI_GRAPH) {
        int begin = c->rank ? g->index[c->rank - 1] : 0;
        nb->nin = nb->nout = g->index[c->rank] - begin;
        nb->in = nb->out = g->edges + begin;
    } else {
        nb->nin = g->indeg;
        nb->nout = g->outdeg;
        nb->in = g->in;
        nb->out = g->out;
    }
    return MPI_SUCCESS;
}
