/* Communicators: MPI_COMM_WORLD / MPI_COMM_SELF, handle table, context ids,
 * and the collective constructors (dup, split, create).
 *
 * Context ids. A communicator's point-to-point traffic carries ctx, its
 * collective traffic ctx + 1, so ids are even: world 0, self 2, user ones
 * from 4 up. Each process keeps a bitmap of the ids it does not use
 * (CTX_SLOTS slots, slot i <-> ctx 2i). A constructor ANDs the bitmaps of
 * all parent members (one allreduce on the parent's collective context) and
 * takes the lowest id free everywhere; only the members of the new
 * communicator mark it used, and it is returned when the communicator is
 * destroyed. Matching is by (ctx, source, tag) on the receiving process, and
 * a process never holds two communicators with the same id, so disjoint
 * communicators (the colors of one split) may share an id. MPI_COMM_SELF's
 * id 2 is the same on every process for the same reason: only its own
 * process can talk on it.
 *
 * Instances. Context ids are reused, so a communicator also gets an
 * instance number no communicator of any of its members had before: the
 * largest instance any parent member has seen, plus one (a second
 * allreduce in the constructor). Shared-memory collectives tag their data
 * with it (coll/node.c), where a late reader of a freed communicator must
 * not take a new one's data for its own.
 *
 * Lifetime. A communicator holds a reference on its group. MPI_Comm_free
 * removes the handle at once; the object goes when its last reference is
 * dropped (vmpi_comm_release), so requests still in flight may keep one. */
#include <stdlib.h>
#include <string.h>

#include "vmpi.h"
#include "../locality/locality.h"

#define CTX_SLOTS 2048 /* ids 0, 2, ..., 4094 */
#define CTX_WORDS (CTX_SLOTS / 32)
static uint32_t ctx_free[CTX_WORDS]; /* bit set: id free on this process */
static uint32_t inst_seen;           /* largest instance number seen */

static struct vmpi_htab comm_tab;
static struct vmpi_comm comm_world, comm_self;
static int comm_ready;

static void ctx_mark(uint32_t ctx, int used)
{
    uint32_t slot = ctx / 2;
    if (slot >= CTX_SLOTS)
        return;
    if (used)
        ctx_free[slot / 32] &= ~(1u << (slot % 32));
    else
        ctx_free[slot / 32] |= 1u << (slot % 32);
}

/* Collective over `parent`: the lowest id that is free on every member, and
 * a new instance number. */
static int ctx_agree(struct vmpi_comm *parent, uint32_t *ctx, uint32_t *inst)
{
    uint32_t mask[CTX_WORDS];
    memcpy(mask, ctx_free, sizeof mask);
    int rc = vmpi_coll_allreduce(MPI_IN_PLACE, mask, CTX_WORDS, vmpi_dtype_get(MPI_UINT32_T),
                                 MPI_BAND, parent);
    *inst = inst_seen + 1;
    if (rc == MPI_SUCCESS)
        rc = vmpi_coll_allreduce(MPI_IN_PLACE, inst, 1, vmpi_dtype_get(MPI_UINT32_T), MPI_MAX,
                                 parent);
    if (rc != MPI_SUCCESS)
        return rc;
    inst_seen = *inst;
    for (int w = 0; w < CTX_WORDS; w++) {
        if (mask[w]) {
            *ctx = 2u * (uint32_t)(w * 32 + __builtin_ctz(mask[w]));
            return MPI_SUCCESS;
        }
    }
    return vmpi_err(parent, MPI_ERR_OTHER,
                    "no context id is free on all members of the communicator (at most %d "
                    "communicators may exist at once); free some with MPI_Comm_free",
                    CTX_SLOTS);
}

struct vmpi_comm *vmpi_comm_get(MPI_Comm h)
{
    if (!comm_ready)
        return NULL;
    if (h == MPI_COMM_WORLD)
        return &comm_world;
    if (h == MPI_COMM_SELF)
        return &comm_self;
    if (VMPI_HKIND(h) != VMPI_HK_INDIRECT || VMPI_HTYPE(h) != VMPI_OBJ_COMM)
        return NULL;
    if (VMPI_HINDEX(h) == 0) /* never handed out (and slot 0 is not set) */
        return NULL;
    return vmpi_htab_get(&comm_tab, VMPI_HINDEX(h));
}

static void comm_fill(struct vmpi_comm *c, int handle, struct vmpi_group *g, uint32_t ctx,
                      uint32_t inst, MPI_Errhandler errh)
{
    c->handle = handle;
    c->refcount = 1;
    c->ctx = ctx;
    c->inst = inst;
    c->group = g;
    c->rank = g->rank;
    c->size = g->size;
    c->errh = errh;
    c->topo = MPI_UNDEFINED;
    c->ndims = 0;
    c->dims = c->periods = NULL;
    c->name[0] = '\0';
    c->coll = NULL;
    c->nbc_seq = 0;
}

/* A user communicator over g (takes the caller's reference on g) with id ctx,
 * which it marks used. NULL if out of memory (g is released). */
static struct vmpi_comm *comm_new(struct vmpi_group *g, uint32_t ctx, uint32_t inst,
                                   MPI_Errhandler errh)
{
    struct vmpi_comm *c = malloc(sizeof *c);
    uint32_t idx;
    if (!c || vmpi_htab_add(&comm_tab, c, &idx) != 0) {
        free(c);
        vmpi_group_release(g);
        return NULL;
    }
    comm_fill(c, VMPI_HMAKE(VMPI_HK_INDIRECT, VMPI_OBJ_COMM, idx), g, ctx, inst, errh);
    ctx_mark(ctx, 1);
    return c;
}

static void comm_destroy(struct vmpi_comm *c)
{
    ctx_mark(c->ctx, 0);
    vmpi_coll_comm_free(c);
    vmpi_group_release(c->group);
    free(c->dims);
    free(c->periods);
    free(c);
}

void vmpi_comm_retain(struct vmpi_comm *c)
{
    c->refcount++;
}

void vmpi_comm_release(struct vmpi_comm *c)
{
    if (c == &comm_world || c == &comm_self)
        return;
    if (--c->refcount == 0)
        comm_destroy(c);
}

/* MPI_Comm_free: the handle becomes invalid now. */
int vmpi_comm_free(struct vmpi_comm *c)
{
    if (c == &comm_world || c == &comm_self)
        return MPI_ERR_COMM;
    vmpi_htab_del(&comm_tab, VMPI_HINDEX(c->handle));
    vmpi_comm_release(c);
    return MPI_SUCCESS;
}

static int no_mem(struct vmpi_comm *parent, const char *what)
{
    return vmpi_err(parent, MPI_ERR_NO_MEM, "%s: out of memory", what);
}

int vmpi_comm_dup(struct vmpi_comm *c, struct vmpi_comm **out)
{
    uint32_t ctx, inst;
    int rc = ctx_agree(c, &ctx, &inst);
    if (rc != MPI_SUCCESS)
        return rc;
    vmpi_group_retain(c->group);
    struct vmpi_comm *n = comm_new(c->group, ctx, inst, c->errh);
    if (!n)
        return no_mem(c, "MPI_Comm_dup");
    if (c->topo == MPI_CART &&
        vmpi_topo_set_cart(n, c->ndims, c->dims, c->periods) != MPI_SUCCESS) {
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
        rc = ctx_agree(c, &ctx, &inst);
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
    struct vmpi_comm *nc = g ? comm_new(g, ctx, inst, c->errh) : NULL;
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
    return split(c, color != MPI_UNDEFINED, color, key, "MPI_Comm_split", out);
}

/* MPI_COMM_TYPE_SHARED groups the ranks that can map the same memory, as the
 * locality detector reports them; MPI_UNDEFINED gives no communicator. */
int vmpi_comm_split_type(struct vmpi_comm *c, int type, int key, struct vmpi_comm **out)
{
    int color = 0;
    if (type == MPI_COMM_TYPE_SHARED)
        color = vmpi_locality_shared_id(vmpi_comm_world_rank(c, c->rank));
    return split(c, type != MPI_UNDEFINED, color, key, "MPI_Comm_split_type", out);
}

/* Collective over c; g must be a subset of c's group (checked by the caller).
 * Members of g get a communicator over g, the others NULL. */
int vmpi_comm_create(struct vmpi_comm *c, struct vmpi_group *g, struct vmpi_comm **out)
{
    uint32_t ctx, inst;
    *out = NULL;
    int rc = ctx_agree(c, &ctx, &inst);
    if (rc != MPI_SUCCESS || g->rank == MPI_UNDEFINED)
        return rc;
    vmpi_group_retain(g);
    struct vmpi_comm *n = comm_new(g, ctx, inst, c->errh);
    if (!n)
        return no_mem(c, "MPI_Comm_create");
    *out = n;
    return MPI_SUCCESS;
}

int vmpi_comm_compare(const struct vmpi_comm *a, const struct vmpi_comm *b)
{
    if (a == b)
        return MPI_IDENT;
    int r = vmpi_grp_compare(a->group->world, a->group->size, b->group->world, b->group->size);
    return r == MPI_IDENT ? MPI_CONGRUENT : r;
}

int vmpi_comm_init(void)
{
    int n = vmpi_job.size;
    int *ww = malloc(sizeof(int) * (size_t)n);
    int *sw = malloc(sizeof(int));
    if (!ww || !sw) {
        free(ww);
        free(sw);
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < n; i++)
        ww[i] = i;
    sw[0] = vmpi_job.rank;
    struct vmpi_group *gw = vmpi_group_new(n, ww);
    struct vmpi_group *gs = vmpi_group_new(1, sw);
    if (!gw || !gs) {
        vmpi_group_release(gw);
        vmpi_group_release(gs);
        return MPI_ERR_NO_MEM;
    }
    for (int w = 0; w < CTX_WORDS; w++)
        ctx_free[w] = ~0u;
    inst_seen = 1;
    comm_fill(&comm_world, MPI_COMM_WORLD, gw, 0, 1, MPI_ERRORS_ARE_FATAL);
    comm_fill(&comm_self, MPI_COMM_SELF, gs, 2, 1, MPI_ERRORS_ARE_FATAL);
    strcpy(comm_world.name, "MPI_COMM_WORLD");
    strcpy(comm_self.name, "MPI_COMM_SELF");
    ctx_mark(0, 1);
    ctx_mark(2, 1);
    comm_ready = 1;
    vmpi_g.world = &comm_world;
    return MPI_SUCCESS;
}

void vmpi_comm_finalize(void)
{
    vmpi_g.world = NULL;
    if (!comm_ready)
        return;
    for (uint32_t i = 1; i < comm_tab.used; i++) { /* index 0 is never used */
        struct vmpi_comm *c = vmpi_htab_get(&comm_tab, i);
        if (c)
            comm_destroy(c);
    }
    vmpi_htab_destroy(&comm_tab);
    vmpi_coll_comm_free(&comm_world);
    vmpi_coll_comm_free(&comm_self);
    free(comm_world.dims);
    free(comm_world.periods);
    free(comm_self.dims);
    free(comm_self.periods);
    comm_world.dims = comm_world.periods = comm_self.dims = comm_self.periods = NULL;
    comm_ready = 0;
    vmpi_group_finalize();
}
