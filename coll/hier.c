/* Hierarchical collectives: a communicator's ranks are grouped by node,
 * the set of ranks that can share memory (one VM, or every VM of a host when
 * the ivshmem channel is on: vmpi_locality_shared_id). Each node's lowest
 * rank is its leader. A hierarchical collective runs a node-local part among
 * the ranks of each node and the flat network algorithm among the leaders
 * only, so each message crosses the network once per node instead of once
 * per rank.
 *
 *   barrier    node barrier, leaders' barrier, node barrier
 *   bcast      node of the root (from the root), leaders (from the root's
 *              leader), the other nodes (from their leader)
 *   reduce     node reduce to the leader, leaders' reduce to the root's
 *              leader, which hands the result to the root if that is
 *              another rank; commutative ops only (coll/select.c)
 *   allreduce  node reduce to the leader, leaders' allreduce, node bcast
 *   allgather  node gather to the leader (packed, by node), leaders'
 *              allgatherv of the node blocks, node bcast of the whole,
 *              every rank unpacks in comm-rank order; only with
 *              VMPI_COLL_ALLGATHER=hier (coll/select.c)
 *
 * Reduction order, for reproducible floating-point results: within a node
 * x0 op (x1 op ...) over node ranks through the slots (coll/node.c), else
 * the flat reduce's binomial order over node ranks; across nodes the flat
 * algorithm's order over leaders. All depend only on the layout and the
 * count, never on timing.
 *
 * The node parts run through the node's collective slots (coll/node.c)
 * when every rank of the node has one, else by point-to-point (the flat
 * algorithms on the node's view). On a communicator that is one node the
 * hierarchy is just the node part.
 *
 * The layout needs no communication: every rank knows every rank's node
 * from the locality map, so it is computed on first use. */
#include <limits.h>
#include <stdlib.h>

#include "../core/dtype_impl.h" /* vmpi_dtype_addr */
#include "../locality/locality.h"
#include "../shm/cslot.h"
#include "coll_impl.h"

struct coll_layout {
    int nnodes, my_node;
    int *leaders;  /* node index -> comm rank of its leader (increasing) */
    int *node_of;  /* comm rank -> node index */
    int *local;    /* comm ranks of this rank's node (increasing) */
    int nlocal, me_local;
    struct coll_node node;
    uint32_t nbc_seq; /* non-blocking collectives started on the communicator */
};

/* The communicator slot coll keeps its layout in (vmpi_hier_init). */
static int slot = -1;

static void layout_free(void *data)
{
    struct coll_layout *l = data;
    free(l->leaders);
    free(l->node_of);
    free(l->local);
    free(l->node.slot);
    free(l);
}

void vmpi_hier_init(void)
{
    if (slot < 0)
        slot = vmpi_comm_slot_new(layout_free);
}

static struct coll_layout *layout_build(struct vmpi_comm *c)
{
    int p = c->size;
    struct coll_layout *l = calloc(1, sizeof *l);
    int *sid = malloc((size_t)p * sizeof *sid);
    if (!l || !sid)
        goto nomem;
    l->leaders = malloc((size_t)p * sizeof *l->leaders);
    l->node_of = malloc((size_t)p * sizeof *l->node_of);
    l->local = malloc((size_t)p * sizeof *l->local);
    if (!l->leaders || !l->node_of || !l->local)
        goto nomem;
    /* A node's leader is the first comm rank with its shared id, so leaders
     * come out in increasing order. Quadratic in the worst case, once per
     * communicator. */
    /* Jobs number world ranks each their own way, so a communicator across
     * jobs could be cut into different nodes by different members: there
     * every rank is a node of its own. */
    bool mixed = vmpi_proc_any_other(c->peers->world, p);
    for (int r = 0; r < p; r++) {
        sid[r] = mixed ? r : vmpi_locality_shared_id(vmpi_comm_world_rank(c, r));
        int n = 0;
        while (n < l->nnodes && sid[l->leaders[n]] != sid[r])
            n++;
        if (n == l->nnodes)
            l->leaders[l->nnodes++] = r;
        l->node_of[r] = n;
    }
    l->my_node = l->node_of[c->rank];
    for (int r = 0; r < p; r++)
        if (l->node_of[r] == l->my_node) {
            if (r == c->rank)
                l->me_local = l->nlocal;
            l->local[l->nlocal++] = r;
        }
    l->node = (struct coll_node){.n = l->nlocal, .me = l->me_local, .inst = c->inst};
    /* A rank's collective slot serves one collective at a time; under
     * MPI_THREAD_MULTIPLE collectives on different communicators may run
     * at once, so they go by messages, which their contexts keep apart. */
    if (l->nlocal > 1 && !vmpi_cs_multiple) {
        l->node.slot = malloc((size_t)l->nlocal * sizeof *l->node.slot);
        if (!l->node.slot)
            goto nomem;
        /* sid is free: reuse it for the node's world ranks. */
        for (int i = 0; i < l->nlocal; i++)
            sid[i] = vmpi_comm_world_rank(c, l->local[i]);
        if (!vmpi_locality_cslots(sid, l->nlocal, l->node.slot)) {
            free(l->node.slot);
            l->node.slot = NULL;
        }
    }
    free(sid);
    return l;
nomem:
    free(sid);
    if (l) {
        free(l->leaders);
        free(l->node_of);
        free(l->local);
        free(l);
    }
    vmpi_fatal("out of memory computing a communicator's node layout");
}

static struct coll_layout *layout(struct vmpi_comm *c)
{
    if (!c->slot[slot])
        c->slot[slot] = layout_build(c);
    return c->slot[slot];
}

uint32_t vmpi_hier_nbc_seq(struct vmpi_comm *c)
{
    return layout(c)->nbc_seq++;
}

bool vmpi_hier_useful(struct vmpi_comm *c, const struct vmpi_dtype *dt)
{
    const struct coll_layout *l = layout(c);
    if (l->nnodes == c->size)
        return false;
    return l->nnodes > 1 || (l->node.slot && (!dt || vmpi_node_reduce_ok(dt)));
}

static struct coll_view node_view(struct vmpi_comm *c, const struct coll_layout *l)
{
    return (struct coll_view){.comm = c, .size = l->nlocal, .rank = l->me_local, .map = l->local};
}

/* The leaders' view; rank -1 on ranks that are not leaders. */
static struct coll_view leader_view(struct vmpi_comm *c, const struct coll_layout *l)
{
    int me = l->leaders[l->my_node] == c->rank ? l->my_node : -1;
    return (struct coll_view){.comm = c, .size = l->nnodes, .rank = me, .map = l->leaders};
}

/* The node rank of comm rank r, which must be on this rank's node. */
static int node_rank(const struct coll_layout *l, int r)
{
    int i = 0;
    while (l->local[i] != r)
        i++;
    return i;
}

struct coll_node *vmpi_hier_one_node(struct vmpi_comm *c)
{
    struct coll_layout *l = layout(c);
    return l->nnodes == 1 && vmpi_node_move_ok(&l->node) ? &l->node : NULL;
}

/* The node parts: through the slots when the node has them. */
static int part_bcast(struct coll_layout *l, const struct coll_view *nv, void *buf,
                      MPI_Count count, struct vmpi_dtype *dt, int root)
{
    if (l->node.slot)
        return vmpi_node_bcast(&l->node, buf, count, dt, root);
    return vmpi_flat_bcast(nv, buf, count, dt, root);
}

static int part_reduce(struct coll_layout *l, const struct coll_view *nv, const void *sbuf,
                       void *rbuf, MPI_Count count, struct vmpi_dtype *dt, MPI_Op op, int root)
{
    if (l->node.slot && vmpi_node_reduce_ok(dt))
        return vmpi_node_reduce(&l->node, sbuf, rbuf, count, dt, op, root);
    return vmpi_flat_reduce(nv, sbuf, rbuf, count, dt, op, root);
}

static int leaders_barrier(void *lv)
{
    return vmpi_flat_barrier(lv);
}

int vmpi_hier_barrier(struct vmpi_comm *c)
{
    struct coll_layout *l = layout(c);
    struct coll_view nv = node_view(c, l), lv = leader_view(c, l);
    if (l->node.slot)
        return vmpi_node_barrier(&l->node, l->nnodes > 1 ? leaders_barrier : NULL, &lv);
    int rc = vmpi_flat_barrier(&nv);
    if (rc == MPI_SUCCESS && lv.rank >= 0)
        rc = vmpi_flat_barrier(&lv);
    if (rc == MPI_SUCCESS)
        rc = vmpi_flat_barrier(&nv);
    return rc;
}

int vmpi_hier_bcast(void *buf, MPI_Count count, struct vmpi_dtype *dt, int root,
                    struct vmpi_comm *c)
{
    struct coll_layout *l = layout(c);
    struct coll_view nv = node_view(c, l), lv = leader_view(c, l);
    int root_node = l->node_of[root];
    int rc = MPI_SUCCESS;
    if (l->my_node == root_node)
        rc = part_bcast(l, &nv, buf, count, dt, node_rank(l, root));
    if (rc == MPI_SUCCESS && lv.rank >= 0 && l->nnodes > 1)
        rc = vmpi_flat_bcast(&lv, buf, count, dt, root_node);
    if (rc == MPI_SUCCESS && l->my_node != root_node)
        rc = part_bcast(l, &nv, buf, count, dt, 0);
    return rc;
}

/* Leaders accumulate in scratch laid out like (count, dt), or in rbuf on
 * a leader that is the root. */
int vmpi_hier_reduce(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                     MPI_Op op, int root, struct vmpi_comm *c)
{
    struct coll_layout *l = layout(c);
    struct coll_view nv = node_view(c, l), lv = leader_view(c, l);
    int root_node = l->node_of[root], root_leader = l->leaders[root_node];
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    void *raw = NULL, *acc = NULL;
    int rc = MPI_SUCCESS;
    if (l->nnodes == 1)
        return part_reduce(l, &nv, sbuf, rbuf, count, dt, op, node_rank(l, root));
    if (lv.rank >= 0) {
        /* The root's leader accumulates into rbuf when it is the root. */
        if (c->rank == root) {
            acc = rbuf;
        } else if (!(acc = coll_tmp_alloc(count, dt, &raw))) {
            return vmpi_err(c, MPI_ERR_NO_MEM, "MPI_Reduce: out of memory");
        }
    }
    rc = part_reduce(l, &nv, lv.rank >= 0 && in == acc ? MPI_IN_PLACE : in, acc, count, dt, op,
                     0);
    if (rc == MPI_SUCCESS && lv.rank >= 0)
        rc = vmpi_flat_reduce(&lv, lv.rank == root_node ? MPI_IN_PLACE : acc, acc, count, dt, op,
                              root_node);
    if (rc == MPI_SUCCESS && root != root_leader) {
        if (c->rank == root_leader)
            rc = coll_send(&nv, acc, count, dt, node_rank(l, root), COLL_TAG_HIER);
        else if (c->rank == root)
            rc = coll_recv(&nv, rbuf, count, dt, 0, COLL_TAG_HIER);
    }
    free(raw);
    return rc;
}

int vmpi_hier_allreduce(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                        MPI_Op op, struct vmpi_comm *c)
{
    struct coll_layout *l = layout(c);
    struct coll_view nv = node_view(c, l), lv = leader_view(c, l);
    int rc;
    if (l->nnodes == 1 && l->node.slot && vmpi_node_reduce_ok(dt))
        return vmpi_node_allreduce(&l->node, sbuf, rbuf, count, dt, op);
    if (lv.rank >= 0) {
        rc = part_reduce(l, &nv, sbuf, rbuf, count, dt, op, 0);
        if (rc == MPI_SUCCESS && l->nnodes > 1)
            rc = vmpi_flat_allreduce(&lv, MPI_IN_PLACE, rbuf, count, dt, op);
    } else {
        rc = part_reduce(l, &nv, sbuf == MPI_IN_PLACE ? rbuf : sbuf, NULL, count, dt, op, 0);
    }
    if (rc == MPI_SUCCESS)
        rc = part_bcast(l, &nv, rbuf, count, dt, 0);
    return rc;
}

bool vmpi_hier_allgather_fits(struct vmpi_comm *c, MPI_Count rcount, const struct vmpi_dtype *rdt)
{
    return rcount * vmpi_dtype_size(rdt) <= INT_MAX / c->size;
}

/* Packed blocks of b bytes, grouped by node in node order (node k's ranks in
 * comm order from off[k]): the leaders' exchange format of allgather. */
static int gather_part(struct coll_layout *l, const struct coll_view *nv, const void *sbuf,
                       MPI_Count scount, struct vmpi_dtype *sdt, char *dst, MPI_Count b)
{
    struct vmpi_dtype *byte = coll_byte_type();
    if (l->node.slot)
        return vmpi_node_gather(&l->node, sbuf, scount, sdt, dst, b, byte, 0);
    return vmpi_flat_gather(nv, sbuf, scount, sdt, dst, b, byte, 0);
}

int vmpi_hier_allgather(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                        MPI_Count rcount, struct vmpi_dtype *rdt, struct vmpi_comm *c)
{
    struct coll_layout *l = layout(c);
    struct coll_view nv = node_view(c, l), lv = leader_view(c, l);
    int p = c->size, k = l->nnodes;
    MPI_Count b = rcount * vmpi_dtype_size(rdt);
    MPI_Aint ext = (MPI_Aint)rcount * vmpi_dtype_extent(rdt);
    struct vmpi_dtype *byte = coll_byte_type();
    char *tmp = malloc((size_t)(b * p) + 1);
    int *cnt = malloc(sizeof(int) * 2 * (size_t)k);
    int *next = malloc(sizeof(int) * (size_t)k);
    if (!tmp || !cnt || !next) {
        free(tmp);
        free(cnt);
        free(next);
        return vmpi_err(c, MPI_ERR_NO_MEM, "MPI_Allgather: out of memory");
    }
    int *displ = cnt + k;
    for (int n = 0; n < k; n++)
        cnt[n] = 0;
    for (int r = 0; r < p; r++)
        cnt[l->node_of[r]] += (int)b;
    for (int n = 0, off = 0; n < k; off += cnt[n], n++)
        displ[n] = next[n] = off;
    const void *in = sbuf == MPI_IN_PLACE ? vmpi_dtype_addr(rbuf, c->rank * ext) : sbuf;
    int rc = gather_part(l, &nv, in, sbuf == MPI_IN_PLACE ? rcount : scount,
                         sbuf == MPI_IN_PLACE ? rdt : sdt, tmp + displ[l->my_node], b);
    if (rc == MPI_SUCCESS && lv.rank >= 0)
        rc = vmpi_flat_allgatherv(&lv, MPI_IN_PLACE, 0, NULL, tmp, cnt, displ, byte);
    if (rc == MPI_SUCCESS)
        rc = part_bcast(l, &nv, tmp, b * p, byte, 0);
    for (int r = 0; rc == MPI_SUCCESS && r < p; r++) {
        int n = l->node_of[r];
        vmpi_dtype_unpack(vmpi_dtype_addr(rbuf, r * ext), rcount, rdt, 0, tmp + next[n],
                          (size_t)b);
        next[n] += (int)b;
    }
    free(tmp);
    free(cnt);
    free(next);
    return rc;
}
