/* Building communicators: the collective constructors (dup, split,
 * split_type, create) and the context ids they agree on; the communicator
 * object is core's (core/comm.c).
 *
 * Context ids. A communicator's point-to-point traffic carries ctx, its
 * collective traffic ctx + 1, so ids are even: world 0, self 2, user ones
 * from 4 up. Each process keeps a bitmap of the ids it does not use
 * (32 * VMPI_CTX_WORDS slots, slot i <-> ctx 2i). A constructor ANDs the bitmaps of
 * all parent members (one allreduce on the parent's collective context) and
 * takes the lowest id free everywhere; only the members of the new
 * communicator mark it used, and it is returned when the communicator is
 * destroyed. The last VMPI_CTX_NB_WORDS words of ids are MPI_Comm_idup's
 * and never offered here (comm/idup.c says why). Matching is by (ctx,
 * source, tag) on the receiving process, and a process never holds two
 * communicators with the same id, so disjoint communicators (the colors of
 * one split) may share an id. MPI_COMM_SELF's
 * id 2 is the same on every process for the same reason: only its own
 * process can talk on it.
 *
 * Instances. Context ids are reused, so a communicator also gets an
 * instance number no communicator of any of its members had before: the
 * largest instance any parent member has seen, plus one (a second
 * allreduce in the constructor). Shared-memory collectives tag their data
 * with it (coll/node.c), where a late reader of a freed communicator must
 * not take a new one's data for its own. */
#include "comm.h"
#include "../coll/coll.h"
#include "../locality/locality.h"

#include <stdlib.h>
#include <string.h>

/* Collective over `parent`: the lowest id that is free on every member, and
 * a new instance number (vmpi_comm_ctx_pick); fn names the caller. Runs
 * again while a member's thread lacked the turn (vmpi_comm_ctx_offer). */
static int ctx_agree(struct vmpi_comm *parent, uint32_t *ctx, uint32_t *inst, const char *fn)
{
    uint32_t alone[VMPI_CTX_WORDS];
    if (parent->size == 1 && vmpi_comm_ctx_free_alone(alone))
        return vmpi_comm_ctx_pick(parent, alone, vmpi_comm_inst_seen(), ctx, inst, fn);
    struct vmpi_ctx_turn turn;
    vmpi_comm_ctx_turn_begin(&turn, (uint64_t)parent->ctx << 32);
    struct vmpi_dtype *u32 = vmpi_dtype_get(MPI_UINT32_T);
    int rc;
    for (;;) {
        uint32_t mask[VMPI_CTX_WORDS], seen[2]; /* largest instance, someone lacked the turn */
        seen[1] = vmpi_comm_ctx_offer(&turn, mask);
        seen[0] = vmpi_comm_inst_seen();
        rc = vmpi_coll_allreduce(MPI_IN_PLACE, mask, VMPI_CTX_WORDS, u32, MPI_BAND, parent);
        if (rc == MPI_SUCCESS)
            rc = vmpi_coll_allreduce(MPI_IN_PLACE, seen, 2, u32, MPI_MAX, parent);
        if (rc != MPI_SUCCESS || !seen[1] || vmpi_comm_ctx_any(mask)) {
            if (rc == MPI_SUCCESS)
                rc = vmpi_comm_ctx_pick(parent, mask, seen[0], ctx, inst, fn);
            break;
        }
        vmpi_comm_ctx_turn_pass(&turn);
    }
    vmpi_comm_ctx_turn_end(&turn);
    return rc;
}

static int no_mem(struct vmpi_comm *parent, const char *what)
{
    return vmpi_err(parent, MPI_ERR_NO_MEM, "%s: out of memory", what);
}

int vmpi_comm_dup(struct vmpi_comm *c, struct vmpi_comm **out)
{
    if (c->local)
        return vmpi_comm_inter_dup(c, out);
    uint32_t ctx, inst;
    int rc = ctx_agree(c, &ctx, &inst, "MPI_Comm_dup");
    if (rc != MPI_SUCCESS)
        return rc;
    vmpi_group_retain(c->group);
    struct vmpi_comm *n = vmpi_comm_new(c->group, ctx, inst, c->errh);
    if (!n)
        return no_mem(c, "MPI_Comm_dup");
    if (vmpi_topo_copy(c, n) != MPI_SUCCESS) {
        vmpi_comm_free(n);
        return no_mem(c, "MPI_Comm_dup");
    }
    *out = n;
    return MPI_SUCCESS;
}

struct split_ent {
    int key, rank;
};

static int split_cmp(const void *a, const void *b)
{
    const struct split_ent *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The split proper: `defined` 0 means this rank takes part in no new
 * communicator (MPI_UNDEFINED); any int is a valid color otherwise. */
static int split(struct vmpi_comm *c, int defined, int color, int key, const char *fn,
                 struct vmpi_comm **out)
{
    int p = c->size;
    int mine[3] = {defined, color, key};
    int *all = malloc(sizeof(int) * 3 * (size_t)p);
    struct split_ent *ent = malloc(sizeof *ent * (size_t)p);
    if (!all || !ent) {
        free(all);
        free(ent);
        return no_mem(c, fn);
    }
    *out = NULL;
    uint32_t ctx, inst;
    int rc = vmpi_coll_allgather(mine, all, 3, vmpi_dtype_get(MPI_INT), c);
    if (rc == MPI_SUCCESS)
        rc = ctx_agree(c, &ctx, &inst, fn);
    if (rc != MPI_SUCCESS || !defined)
        goto out;
    int n = 0;
    for (int i = 0; i < p; i++)
        if (all[3 * i] && all[3 * i + 1] == color)
            ent[n++] = (struct split_ent){all[3 * i + 2], i};
    qsort(ent, (size_t)n, sizeof *ent, split_cmp);
    int *world = malloc(sizeof(int) * (size_t)n);
    if (!world) {
        rc = no_mem(c, fn);
        goto out;
    }
    for (int i = 0; i < n; i++)
        world[i] = c->group->world[ent[i].rank];
    struct vmpi_group *g = vmpi_group_new(n, world);
    struct vmpi_comm *nc = g ? vmpi_comm_new(g, ctx, inst, c->errh) : NULL;
    if (!nc) {
        rc = no_mem(c, fn);
        goto out;
    }
    *out = nc;
out:
    free(all);
    free(ent);
    return rc;
}

/* color MPI_UNDEFINED: *out is NULL (MPI_COMM_NULL). */
int vmpi_comm_split(struct vmpi_comm *c, int color, int key, struct vmpi_comm **out)
{
    if (c->local)
        return vmpi_comm_inter_split(c, color, key, "MPI_Comm_split", out);
    return split(c, color != MPI_UNDEFINED, color, key, "MPI_Comm_split", out);
}

/* MPI_COMM_TYPE_SHARED groups the ranks that can map the same memory, as the
 * locality detector reports them; MPI_UNDEFINED gives no communicator. On
 * an intercommunicator, as MPI_Comm_split there: the local ranks of one
 * shared-memory domain with the remote ranks of the same domain, and
 * MPI_COMM_NULL where one side has none (everywhere when ranks of another
 * job take part: no domain is known to match then). */
int vmpi_comm_split_type(struct vmpi_comm *c, int type, int key, struct vmpi_comm **out)
{
    static const char fn[] = "MPI_Comm_split_type";
    /* other jobs' ranks number their sharing their own way */
    bool mixed = vmpi_proc_any_other(c->group->world, c->size) ||
                 (c->local && vmpi_proc_any_other(c->peers->world, c->peers->size));
    int color = mixed ? c->rank : vmpi_locality_shared_id(c->group->world[c->rank]);
    if (c->local)
        return vmpi_comm_inter_split(c, type == MPI_UNDEFINED || mixed ? MPI_UNDEFINED : color,
                                     key, fn, out);
    return split(c, type != MPI_UNDEFINED, color, key, fn, out);
}

/* Collective over c; g must be a subset of c's group (checked by the caller).
 * Members of g get a communicator over g, the others NULL. */
int vmpi_comm_create(struct vmpi_comm *c, struct vmpi_group *g, struct vmpi_comm **out)
{
    if (c->local)
        return vmpi_comm_inter_split(c, g->rank == MPI_UNDEFINED ? MPI_UNDEFINED : 0, g->rank,
                                     "MPI_Comm_create", out);
    uint32_t ctx, inst;
    *out = NULL;
    int rc = ctx_agree(c, &ctx, &inst, "MPI_Comm_create");
    if (rc != MPI_SUCCESS || g->rank == MPI_UNDEFINED)
        return rc;
    vmpi_group_retain(g);
    struct vmpi_comm *n = vmpi_comm_new(g, ctx, inst, c->errh);
    if (!n)
        return no_mem(c, "MPI_Comm_create");
    *out = n;
    return MPI_SUCCESS;
}
