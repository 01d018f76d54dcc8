/* Building communicators (comm.c, prefix vmpi_comm_) and their topologies
 * (topo.c, prefix vmpi_topo_): the layer above the collectives, which it
 * uses to agree on context ids and layouts. Each constructor is collective
 * over its parent where MPI says so. */
#ifndef VMPI_COMM_COMM_H
#define VMPI_COMM_COMM_H

#include "../core/vmpi.h"

int vmpi_comm_dup(struct vmpi_comm *c, struct vmpi_comm **out);
/* color MPI_UNDEFINED: *out is NULL (MPI_COMM_NULL). */
int vmpi_comm_split(struct vmpi_comm *c, int color, int key, struct vmpi_comm **out);
int vmpi_comm_split_type(struct vmpi_comm *c, int type, int key, struct vmpi_comm **out);
int vmpi_comm_create(struct vmpi_comm *c, struct vmpi_group *g, struct vmpi_comm **out);

/* The new communicator's context id: the lowest in `mask` (the ids free on
 * all its members); its instance: one more than `seen`, the largest any
 * member has seen (group.c). MPI_ERR_OTHER naming fn when none is free. */
int vmpi_comm_ctx_pick(struct vmpi_comm *c, const uint32_t *mask, uint32_t seen,
                       uint32_t *ctx, uint32_t *inst, const char *fn);
/* Whether mask has any id (group.c). */
bool vmpi_comm_ctx_any(const uint32_t *mask);
/* MPI_Comm_create_group: collective over g's members only (group.c). */
int vmpi_comm_create_group(struct vmpi_comm *c, struct vmpi_group *g, int tag,
                           struct vmpi_comm **out);

/* MPI_Comm_idup (idup.c): starts the duplicate's schedule, whose request
 * (*out, kind VMPI_REQ_COLL) completes when *newcomm is written; the new
 * communicator takes `attrs` (copied by the caller at the call), which the
 * idup frees if it fails. */
struct vmpi_attr;
int vmpi_comm_idup(struct vmpi_comm *c, struct vmpi_attr *attrs, MPI_Comm *newcomm,
                   struct vmpi_req **out);

/* Intercommunicators (inter.c): collective over both groups. `peer` and
 * `remote_leader` matter on the local leader only. */
int vmpi_comm_intercomm_create(struct vmpi_comm *local, int leader, struct vmpi_comm *peer,
                               int remote_leader, int tag, struct vmpi_comm **out);
int vmpi_comm_intercomm_merge(struct vmpi_comm *c, int high, struct vmpi_comm **out);
/* The intercommunicator between local and a group of another job (or of
 * this one) whose root talks to this side's root over `bridge` (rank
 * `other` there, tags `tag`; significant at the root only): collective
 * over local (comm/dynamic.c builds the bridge). */
int vmpi_comm_intercomm_dyn(struct vmpi_comm *local, int root, struct vmpi_comm *bridge,
                            int other, int tag, const char *fn, struct vmpi_comm **out);
int vmpi_comm_inter_dup(struct vmpi_comm *c, struct vmpi_comm **out);
/* Split (and create and split_type, as a split) of an intercommunicator;
 * fn names the MPI call in errors. */
int vmpi_comm_inter_split(struct vmpi_comm *c, int color, int key, const char *fn,
                          struct vmpi_comm **out);

/* Dynamic processes (dynamic.c, prefix vmpi_dyn_). Ports: name has room
 * for MPI_MAX_PORT_NAME characters. accept/connect: collective over c,
 * name significant at root. spawn: sp significant at root (its preput
 * pairs are set here); fn names the call in errors. init: in MPI_Init, a
 * spawned job connects to its parent. disconnect: MPI_Comm_disconnect but
 * the freeing. finalize: the barriers with connected processes. */
int vmpi_dyn_open_port(char *name);
int vmpi_dyn_close_port(const char *name);
int vmpi_dyn_accept(const char *name, int root, struct vmpi_comm *c, struct vmpi_comm **out);
int vmpi_dyn_connect(const char *name, int root, struct vmpi_comm *c, struct vmpi_comm **out);
struct vmpi_pmi_spawn;
int vmpi_dyn_spawn(struct vmpi_pmi_spawn *sp, int root, struct vmpi_comm *c,
                   struct vmpi_comm **out, int *total, const char *fn);
int vmpi_dyn_init(void);
struct vmpi_comm *vmpi_dyn_parent(void);
int vmpi_dyn_disconnect(struct vmpi_comm *c);
void vmpi_dyn_finalize(void);

/* Cartesian topologies (topo.c). */
int vmpi_topo_set_cart(struct vmpi_comm *c, int ndims, const int *dims, const int *periods);
int vmpi_topo_cart_create(struct vmpi_comm *c, int ndims, const int *dims, const int *periods,
                          struct vmpi_comm **out);
void vmpi_topo_cart_coords(const struct vmpi_comm *c, int rank, int *coords);
int vmpi_topo_cart_rank(const struct vmpi_comm *c, const int *coords, int *rank);
void vmpi_topo_cart_shift(const struct vmpi_comm *c, int dir, int disp, int *src, int *dst);
int vmpi_topo_dims_create(int nnodes, int ndims, int *dims);
/* The first n ranks of c, ranks in order (MPI_COMM_NULL on the others);
 * collective over c; fn names the call in errors. */
int vmpi_topo_comm_first(struct vmpi_comm *c, int n, const char *fn, struct vmpi_comm **out);
/* Cart_sub: the grid of the dimensions remain[i] != 0 that holds this rank
 * (collective over c). */
int vmpi_topo_cart_sub(struct vmpi_comm *c, const int *remain, struct vmpi_comm **out);

/* Graph and distributed-graph topologies (topo_graph.c), kept in a
 * communicator slot; c->topo is MPI_GRAPH or MPI_DIST_GRAPH. */
struct vmpi_topo_graph {
    int nnodes, nedges;
    int *index, *edges;    /* MPI_GRAPH: the whole graph, as given */
    int indeg, outdeg;     /* MPI_DIST_GRAPH: this rank's edges */
    int *in, *out;         /* ranks of the sources and destinations */
    int *inw, *outw;       /* their weights (1 when unweighted) */
    bool weighted;         /* weights were given (not MPI_UNWEIGHTED) */
};
/* NULL unless c has a graph or distributed-graph topology. */
const struct vmpi_topo_graph *vmpi_topo_graph(const struct vmpi_comm *c);
/* The first nnodes ranks of c with the graph (index, edges checked by the
 * caller); *out NULL on the others. Collective over c. */
int vmpi_topo_graph_create(struct vmpi_comm *c, int nnodes, const int *index, const int *edges,
                           struct vmpi_comm **out);
/* A communicator over c's group with this rank's edges; weighted: the
 * caller did not pass MPI_UNWEIGHTED (weights NULL count as 1). Collective
 * over c. */
int vmpi_topo_dist_adjacent(struct vmpi_comm *c, int indeg, const int *in, const int *inw,
                            int outdeg, const int *out, const int *outw, bool weighted,
                            struct vmpi_comm **out_c);
/* MPI_Dist_graph_create: n sources with degrees[i] destinations each (and
 * weights, or NULL: all 1); every rank learns its edges from the others'
 * lists. */
int vmpi_topo_dist_create(struct vmpi_comm *c, int n, const int *sources, const int *degrees,
                          const int *dests, const int *weights, bool weighted,
                          struct vmpi_comm **out);
/* Copies from's topology (any kind) onto to, for MPI_Comm_dup. */
int vmpi_topo_copy(const struct vmpi_comm *from, struct vmpi_comm *to);

/* The neighbours a neighbourhood collective talks to, in the standard's
 * order: sources (in) and destinations (out). A Cartesian rank has 2 * ndims
 * of each, the -1 then the +1 shift of every dimension, MPI_PROC_NULL past
 * a non-periodic edge; cart marks that case (see coll/neighbor.h for the
 * tags it implies). */
struct vmpi_topo_nbrs {
    int nin, nout;
    const int *in, *out;
    bool cart;
    int *own; /* storage this struct holds (vmpi_topo_nbrs_free) */
};
/* MPI_ERR_TOPOLOGY when c has no topology, MPI_ERR_NO_MEM. */
int vmpi_topo_nbrs(const struct vmpi_comm *c, struct vmpi_topo_nbrs *nb);
int vmpi_topo_graph_nbrs(const struct vmpi_comm *c, struct vmpi_topo_nbrs *nb); /* the graph kinds */
void vmpi_topo_nbrs_free(struct vmpi_topo_nbrs *nb);

#endif
