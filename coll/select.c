/* vmpi_coll_*: the collectives the API and the communicator code call. Each
 * picks an algorithm for the communicator and the message (coll/coll.h).
 *
 * VMPI_COLL_<NAME> (NAME: BARRIER, BCAST, REDUCE, ALLREDUCE, GATHER, SCATTER,
 * ALLGATHER, ALLTOALL, REDUCE_SCATTER, SCAN) overrides the choice: a comma
 * list of at most one path (auto, flat, hier) and at most one network
 * algorithm from the table below, e.g. VMPI_COLL_ALLREDUCE=flat,ring. The
 * v/w variants follow their base collective; Exscan follows SCAN. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_impl.h"

struct coll_choice coll_choice[COLL_N];

static const struct {
    const char *env;
    const char *algs[4]; /* algs[i] is algorithm i + 1 */
} coll_names[COLL_N] = {
    [COLL_BARRIER] = {"VMPI_COLL_BARRIER", {"dissemination"}},
    [COLL_BCAST] = {"VMPI_COLL_BCAST", {"binomial", "scatter_allgather"}},
    [COLL_REDUCE] = {"VMPI_COLL_REDUCE", {"binomial", "rabenseifner"}},
    [COLL_ALLREDUCE] = {"VMPI_COLL_ALLREDUCE", {"recursive_doubling", "rabenseifner", "ring"}},
    [COLL_GATHER] = {"VMPI_COLL_GATHER", {"binomial", "linear"}},
    [COLL_SCATTER] = {"VMPI_COLL_SCATTER", {"binomial", "linear"}},
    [COLL_ALLGATHER] = {"VMPI_COLL_ALLGATHER", {"ring", "recursive_doubling", "bruck"}},
    [COLL_ALLTOALL] = {"VMPI_COLL_ALLTOALL", {"bruck", "pairwise", "linear"}},
    [COLL_REDUCE_SCATTER] = {"VMPI_COLL_REDUCE_SCATTER", {"recursive_halving", "pairwise"}},
    [COLL_SCAN] = {"VMPI_COLL_SCAN", {"recursive_doubling"}},
};

static void parse_choice(int id)
{
    const char *val = vmpi_knob_str(coll_names[id].env);
    coll_choice[id] = (struct coll_choice){COLL_PATH_AUTO, 0};
    if (!val || !*val)
        return;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", val);
    char *save = NULL;
    for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (!strcmp(w, "auto")) {
            coll_choice[id].path = COLL_PATH_AUTO;
            continue;
        }
        if (!strcmp(w, "flat")) {
            coll_choice[id].path = COLL_PATH_FLAT;
            continue;
        }
        if (!strcmp(w, "hier")) {
            coll_choice[id].path = COLL_PATH_HIER;
            continue;
        }
        int found = 0;
        for (int a = 0; a < 4 && coll_names[id].algs[a]; a++)
            if (!strcmp(w, coll_names[id].algs[a])) {
                coll_choice[id].alg = a + 1;
                found = 1;
            }
        if (!found) {
            char list[160] = "";
            for (int a = 0; a < 4 && coll_names[id].algs[a]; a++) {
                strncat(list, ", ", sizeof list - strlen(list) - 1);
                strncat(list, coll_names[id].algs[a], sizeof list - strlen(list) - 1);
            }
            vmpi_fatal("%s=%s: unknown word '%s' (expected auto, flat, hier%s)",
                       coll_names[id].env, val, w, list);
        }
    }
}

void vmpi_coll_init(void)
{
    for (int id = 0; id < COLL_N; id++)
        parse_choice(id);
    vmpi_hier_init();
}

/* Hierarchical unless told otherwise, when vmpi_hier_useful says it wins
 * (dt: the reduction's type, NULL for the others); forced hier also runs
 * where it does not, e.g. one node by point-to-point, which keeps every
 * node part testable. */
static bool use_hier(int id, struct vmpi_comm *c, const struct vmpi_dtype *dt)
{
    if (coll_choice[id].path == COLL_PATH_FLAT || c->size == 1)
        return false;
    return coll_choice[id].path == COLL_PATH_HIER || vmpi_hier_useful(c, dt);
}

/* The communicator's one node, for the data-movement collectives that have
 * a shared-memory version but no hierarchical one across nodes. */
static struct coll_node *one_node(int id, struct vmpi_comm *c)
{
    if (coll_choice[id].path == COLL_PATH_FLAT || c->size == 1)
        return NULL;
    return vmpi_hier_one_node(c);
}

/* ---- data movement (coll/flat_move.c) ------------------------------------ */

int vmpi_coll_barrier(struct vmpi_comm *c)
{
    if (use_hier(COLL_BARRIER, c, NULL))
        return vmpi_hier_barrier(c);
    struct coll_view v = coll_view_all(c);
    return vmpi_flat_barrier(&v);
}

int vmpi_coll_bcast(void *buf, MPI_Count count, struct vmpi_dtype *dt, int root,
                    struct vmpi_comm *c)
{
    if (use_hier(COLL_BCAST, c, NULL))
        return vmpi_hier_bcast(buf, count, dt, root, c);
    struct coll_view v = coll_view_all(c);
    return vmpi_flat_bcast(&v, buf, count, dt, root);
}

int vmpi_coll_allgather(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                        struct vmpi_comm *c)
{
    return vmpi_coll_allgather2(sbuf, count, dt, rbuf, count, dt, c);
}

int vmpi_coll_allgather2(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt,
                         void *rbuf, MPI_Count rcount, struct vmpi_dtype *rdt,
                         struct vmpi_comm *c)
{
    struct coll_node *nd = one_node(COLL_ALLGATHER, c);
    if (nd)
        return vmpi_node_allgather(nd, sbuf, scount, sdt, rbuf, rcount, rdt);
    /* Across nodes only when asked for: with 2 nodes of 2 ranks over TCP it
     * took 1.5-2x the flat ring's time (docs/PERFORMANCE.md). */
    if (coll_choice[COLL_ALLGATHER].path == COLL_PATH_HIER && c->size > 1 &&
        vmpi_hier_allgather_fits(c, rcount, rdt))
        return vmpi_hier_allgather(sbuf, scount, sdt, rbuf, rcount, rdt, c);
    struct coll_view v = coll_view_all(c);
    return vmpi_flat_allgather(&v, sbuf, scount, sdt, rbuf, rcount, rdt);
}

int vmpi_coll_allgatherv(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt,
                         void *rbuf, const int *rcounts, const int *displs,
                         struct vmpi_dtype *rdt, struct vmpi_comm *c)
{
    struct coll_node *nd = one_node(COLL_ALLGATHER, c);
    if (nd)
        return vmpi_node_allgatherv(nd, sbuf, scount, sdt, rbuf, rcounts, displs, rdt);
    struct coll_view v = coll_view_all(c);
    return vmpi_flat_allgatherv(&v, sbuf, scount, sdt, rbuf, rcounts, displs, rdt);
}

int vmpi_coll_gather(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                     MPI_Count rcount, struct vmpi_dtype *rdt, int root, struct vmpi_comm *c)
{
    struct coll_node *nd = one_node(COLL_GATHER, c);
    if (nd)
        return vmpi_node_gather(nd, sbuf, scount, sdt, rbuf, rcount, rdt, root);
    struct coll_view v = coll_view_all(c);
    return vmpi_flat_gather(&v, sbuf, scount, sdt, rbuf, rcount, rdt, root);
}

int vmpi_coll_gatherv(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                      const int *rcounts, const int *displs, struct vmpi_dtype *rdt, int root,
                      struct vmpi_comm *c)
{
    struct coll_node *nd = one_node(COLL_GATHER, c);
    if (nd)
        return vmpi_node_gatherv(nd, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root);
    struct coll_view v = coll_view_all(c);
    return vmpi_flat_gatherv(&v, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root);
}

int vmpi_coll_scatter(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                      MPI_Count rcount, struct vmpi_dtype *rdt, int root, struct vmpi_comm *c)
{
    struct coll_node *nd = one_node(COLL_SCATTER, c);
    if (nd)
        return vmpi_node_scatter(nd, sbuf, scount, sdt, rbuf, rcount, rdt, root);
    struct coll_view v = coll_view_all(c);
    return vmpi_flat_scatter(&v, sbuf, scount, sdt, rbuf, rcount, rdt, root);
}

int vmpi_coll_scatterv(const void *sbuf, const int *scounts, const int *displs,
                       struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                       struct vmpi_dtype *rdt, int root, struct vmpi_comm *c)
{
    struct coll_node *nd = one_node(COLL_SCATTER, c);
    if (nd)
        return vmpi_node_scatterv(nd, sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root);
    struct coll_view v = coll_view_all(c);
    return vmpi_flat_scatterv(&v, sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root);
}

int vmpi_coll_alltoall(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                       MPI_Count rcount, struct vmpi_dtype *rdt, struct vmpi_comm *c)
{
    struct coll_node *nd = one_node(COLL_ALLTOALL, c);
    if (nd)
        return vmpi_node_alltoall(nd, sbuf, scount, sdt, rbuf, rcount, rdt);
    struct coll_view v = coll_view_all(c);
    return vmpi_flat_alltoall(&v, sbuf, scount, sdt, rbuf, rcount, rdt);
}

int vmpi_coll_alltoallv(const void *sbuf, const int *scounts, const int *sdispls,
                        struct vmpi_dtype *sdt, void *rbuf, const int *rcounts,
                        const int *rdispls, struct vmpi_dtype *rdt, struct vmpi_comm *c)
{
    struct coll_node *nd = one_node(COLL_ALLTOALL, c);
    if (nd)
        return vmpi_node_alltoallv(nd, sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt);
    struct coll_view v = coll_view_all(c);
    return vmpi_flat_alltoallv(&v, sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt);
}

int vmpi_coll_alltoallw(const void *sbuf, const int *scounts, const int *sdispls,
                        struct vmpi_dtype *const *sdts, void *rbuf, const int *rcounts,
                        const int *rdispls, struct vmpi_dtype *const *rdts, struct vmpi_comm *c)
{
    struct coll_view v = coll_view_all(c);
    return vmpi_flat_alltoallw(&v, sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts);
}

/* ---- reductions (coll/flat_reduce.c) ------------------------------------- */

int vmpi_coll_reduce(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                     MPI_Op op, int root, struct vmpi_comm *c)
{
    /* The node grouping reorders ranks: rank order holds only flat. */
    if (vmpi_op_commutative(op) && use_hier(COLL_REDUCE, c, dt))
        return vmpi_hier_reduce(sbuf, rbuf, count, dt, op, root, c);
    struct coll_view v = coll_view_all(c);
    return vmpi_flat_reduce(&v, sbuf, rbuf, count, dt, op, root);
}

int vmpi_coll_allreduce(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                        MPI_Op op, struct vmpi_comm *c)
{
    if (vmpi_op_commutative(op) && use_hier(COLL_ALLREDUCE, c, dt))
        return vmpi_hier_allreduce(sbuf, rbuf, count, dt, op, c);
    struct coll_view v = coll_view_all(c);
    return vmpi_flat_allreduce(&v, sbuf, rbuf, count, dt, op);
}

int vmpi_coll_reduce_scatter(const void *sbuf, void *rbuf, const MPI_Count *counts,
                             struct vmpi_dtype *dt, MPI_Op op, struct vmpi_comm *c)
{
    struct coll_view v = coll_view_all(c);
    return vmpi_flat_reduce_scatter(&v, sbuf, rbuf, counts, dt, op);
}

int vmpi_coll_reduce_scatter_block(const void *sbuf, void *rbuf, MPI_Count count,
                                   struct vmpi_dtype *dt, MPI_Op op, struct vmpi_comm *c)
{
    struct coll_view v = coll_view_all(c);
    return vmpi_flat_reduce_scatter_block(&v, sbuf, rbuf, count, dt, op);
}

int vmpi_coll_scan(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                   MPI_Op op, struct vmpi_comm *c)
{
    struct coll_view v = coll_view_all(c);
    return vmpi_flat_scan(&v, sbuf, rbuf, count, dt, op);
}

int vmpi_coll_exscan(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                     MPI_Op op, struct vmpi_comm *c)
{
    struct coll_view v = coll_view_all(c);
    return vmpi_flat_exscan(&v, sbuf, rbuf, count, dt, op);
}
