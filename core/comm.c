/* Communicators: the object, MPI_COMM_WORLD / MPI_COMM_SELF, the handle
 * table, the bitmap of context ids this process uses, and the layers'
 * slots. Building communicators (dup, split, create: they agree on context
 * ids with collectives) is comm/'s, where the scheme of ids and instances
 * is described.
 *
 * Lifetime. A communicator holds a reference on its group. MPI_Comm_free
 * removes the handle at once; the object goes when its last reference is
 * dropped (vmpi_comm_release), so requests still in flight may keep one. */
#include <stdlib.h>
#include <string.h>

#include "vmpi.h"

#define CTX_SLOTS (VMPI_CTX_WORDS * 32) /* ids 0, 2, ..., 4094 */
static uint32_t ctx_free[VMPI_CTX_WORDS]; /* bit set: id free on this process */
static uint32_t inst_seen;                /* largest instance number seen */
static void (*slot_destroy[VMPI_COMM_SLOTS])(void *data);
static int nslots;

static struct vmpi_htab comm_tab;
static struct vmpi_comm comm_world, comm_self;
static int comm_ready;

static void ctx_mark(uint32_t ctx, int used)
{
    uint32_t slot = (ctx & ~VMPI_CTX_TWIN) / 2;
    if (slot >= CTX_SLOTS)
        return;
    if (used)
        ctx_free[slot / 32] &= ~(1u << (slot % 32));
    else
        ctx_free[slot / 32] |= 1u << (slot % 32);
}

void vmpi_comm_ctx_free(uint32_t mask[VMPI_CTX_WORDS])
{
    enum { NB = VMPI_CTX_WORDS - VMPI_CTX_NB_WORDS };
    memcpy(mask, ctx_free, sizeof(uint32_t) * NB);
    memset(mask + NB, 0, sizeof(uint32_t) * VMPI_CTX_NB_WORDS);
}

void vmpi_comm_ctx_free_nb(uint32_t mask[VMPI_CTX_NB_WORDS])
{
    memcpy(mask, ctx_free + VMPI_CTX_WORDS - VMPI_CTX_NB_WORDS,
           sizeof(uint32_t) * VMPI_CTX_NB_WORDS);
}

void vmpi_comm_ctx_hold(uint32_t ctx, bool on)
{
    ctx_mark(ctx, on);
}

static struct vmpi_ctx_turn *turns, *turn_holder;
static uint32_t offered[VMPI_CTX_WORDS]; /* what the turn's holder offered */

bool vmpi_comm_ctx_free_alone(uint32_t mask[VMPI_CTX_WORDS])
{
    vmpi_comm_ctx_free(mask);
    bool any = false;
    for (int w = 0; w < VMPI_CTX_WORDS; w++) {
        if (turn_holder)
            mask[w] &= ~offered[w];
        any |= mask[w] != 0;
    }
    return any;
}

/* The holder keeps the highest 32 free ids out of its offer (when more
 * than 64 are free) for agreements among this process alone. */
static void keep_spare(uint32_t mask[VMPI_CTX_WORDS])
{
    int nfree = 0;
    for (int w = 0; w < VMPI_CTX_WORDS; w++)
        nfree += __builtin_popcount(mask[w]);
    int left = nfree > 64 ? 32 : 0;
    for (int w = VMPI_CTX_WORDS - 1; w >= 0 && left; w--)
        for (; mask[w] && left; left--)
            mask[w] &= ~(1u << (31 - __builtin_clz(mask[w])));
}

void vmpi_comm_ctx_turn_begin(struct vmpi_ctx_turn *t, uint64_t key)
{
    t->key = key;
    t->next = turns;
    turns = t;
}

uint32_t vmpi_comm_ctx_offer(struct vmpi_ctx_turn *t, uint32_t mask[VMPI_CTX_WORDS])
{
    if (!turn_holder) {
        struct vmpi_ctx_turn *low = turns;
        for (struct vmpi_ctx_turn *u = turns; u; u = u->next)
            if (u->key < low->key)
                low = u;
        if (low == t)
            turn_holder = t;
    }
    if (!vmpi_cs_multiple) {
        vmpi_comm_ctx_free(mask);
        return 0;
    }
    if (turn_holder == t) {
        vmpi_comm_ctx_free(mask);
        keep_spare(mask);
        memcpy(offered, mask, sizeof offered);
        return 0;
    }
    memset(mask, 0, sizeof(uint32_t) * VMPI_CTX_WORDS);
    return 1;
}

static void turn_drop(struct vmpi_ctx_turn *t)
{
    if (turn_holder == t)
        turn_holder = NULL;
}

void vmpi_comm_ctx_turn_pass(struct vmpi_ctx_turn *t)
{
    turn_drop(t);
    /* The round may have sent nothing (a one-member group): the holder of
     * the turn needs the lock to finish. */
    vmpi_progress();
}

void vmpi_comm_ctx_turn_end(struct vmpi_ctx_turn *t)
{
    turn_drop(t);
    struct vmpi_ctx_turn **pp = &turns;
    while (*pp != t)
        pp = &(*pp)->next;
    *pp = t->next;
}

uint32_t vmpi_comm_inst_seen(void)
{
    return inst_seen;
}

void vmpi_comm_inst_saw(uint32_t inst)
{
    if (inst > inst_seen)
        inst_seen = inst;
}

int vmpi_comm_slot_new(void (*destroy)(void *data))
{
    if (nslots == VMPI_COMM_SLOTS)
        vmpi_fatal("more than %d communicator slots", VMPI_COMM_SLOTS);
    slot_destroy[nslots] = destroy;
    return nslots++;
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
    c->peers = g;
    c->local = NULL;
    c->rank = g->rank;
    c->size = g->size;
    c->errh = errh;
    vmpi_errh_retain(errh);
    c->errh_obj = handle;
    c->attrs = NULL;
    c->topo = MPI_UNDEFINED;
    c->ndims = 0;
    c->dims = c->periods = NULL;
    c->name[0] = '\0';
    memset(c->slot, 0, sizeof c->slot);
}

/* What a communicator holds besides its group: the layers' data, its
 * attributes (MPI_Comm_free ran their callbacks; at MPI_Finalize they are
 * only freed), its error handler. */
static void slots_free(struct vmpi_comm *c)
{
    vmpi_attr_drop(&c->attrs);
    vmpi_errh_release(c->errh);
    c->errh = MPI_ERRORS_ARE_FATAL;
    for (int k = 0; k < nslots; k++)
        if (c->slot[k]) {
            slot_destroy[k](c->slot[k]);
            c->slot[k] = NULL;
        }
}

struct vmpi_comm *vmpi_comm_new(struct vmpi_group *g, uint32_t ctx, uint32_t inst,
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

void vmpi_comm_make_inter(struct vmpi_comm *c, struct vmpi_group *remote,
                          struct vmpi_comm *local)
{
    c->peers = remote;
    c->local = local;
    vmpi_htab_del(&comm_tab, VMPI_HINDEX(local->handle));
    local->handle = MPI_COMM_NULL;
}

static void comm_destroy(struct vmpi_comm *c)
{
    if (!c->local || !(c->local->ctx & VMPI_CTX_TWIN)) /* else the twin frees it */
        ctx_mark(c->ctx, 0);
    slots_free(c);
    if (c->local) {
        vmpi_group_release(c->peers);
        vmpi_comm_release(c->local);
    }
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

int vmpi_comm_compare(const struct vmpi_comm *a, const struct vmpi_comm *b)
{
    if (a == b)
        return MPI_IDENT;
    int r = vmpi_group_compare(a->group->world, a->group->size, b->group->world, b->group->size);
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
    for (int w = 0; w < VMPI_CTX_WORDS; w++)
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
    slots_free(&comm_world);
    slots_free(&comm_self);
    free(comm_world.dims);
    free(comm_world.periods);
    free(comm_self.dims);
    free(comm_self.periods);
    comm_world.dims = comm_world.periods = comm_self.dims = comm_self.periods = NULL;
    comm_ready = 0;
    vmpi_group_finalize();
    vmpi_attr_finalize();
    vmpi_errh_finalize();
}
