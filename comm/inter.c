/* Intercommunicators (MPI-3.1 6.6): creating one from two intracommunicators
 * and a peer, duplicating one, and merging one into an intracommunicator.
 *
 * An intercommunicator is a communicator whose `group` is the local group
 * (rank and size are the local ones, as MPI_Comm_rank and MPI_Comm_size
 * report) and whose `peers` is the remote group: point-to-point ranks name
 * remote processes, and core translates them through `peers`. `local` is a
 * private intracommunicator over the local group that the intercommunicator
 * collectives (coll/inter.c) use inside one side.
 *
 * Context ids. The id must be free on every process of both groups: each
 * side ANDs its members' free bitmaps on its local intracommunicator, the
 * two leaders swap their results, and each leader broadcasts the AND of
 * both to its side, with the other side's size, members and high flag.
 * Instance numbers travel the same way (comm/comm.c explains both). The
 * private local communicator takes the twin of the id and the next
 * instance (twin_new). */
#include "comm.h"
#include "../coll/coll.h"

#include <assert.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* What a side tells the other, then broadcasts on its own side. */
struct side {
    uint32_t mask[VMPI_CTX_WORDS];
    uint32_t inst;
    uint32_t lacked; /* a member's thread lacked the turn (vmpi_comm_ctx_offer) */
    int size;
    int high;
    uint64_t leader; /* the side's leader (vmpi_proc_name): breaks ties in merge */
    int cards;       /* the members travel as cards (cards_swap) */
};
/* inst and lacked are max-ed over a side in one allreduce of two */
static_assert(offsetof(struct side, lacked) == offsetof(struct side, inst) + sizeof(uint32_t),
              "struct side: lacked follows inst");

static int no_mem(struct vmpi_comm *c, const char *fn)
{
    return vmpi_err(c, MPI_ERR_NO_MEM, "%s: out of memory", fn);
}

/* This side's part, collective over `local`: the AND of the members' free
 * ids and the largest instance any member has seen. */
static int side_local(struct vmpi_comm *local, int high, int leader, struct side *s,
                      struct vmpi_ctx_turn *turn)
{
    s->lacked = vmpi_comm_ctx_offer(turn, s->mask);
    s->inst = vmpi_comm_inst_seen();
    s->size = local->size;
    s->high = high;
    s->leader = vmpi_proc_name(vmpi_comm_world_rank(local, leader));
    int rc = vmpi_coll_allreduce(MPI_IN_PLACE, s->mask, VMPI_CTX_WORDS,
                                 vmpi_dtype_get(MPI_UINT32_T), MPI_BAND, local);
    if (rc == MPI_SUCCESS)
        rc = vmpi_coll_allreduce(MPI_IN_PLACE, &s->inst, 2, vmpi_dtype_get(MPI_UINT32_T),
                                 MPI_MAX, local);
    return rc;
}

/* mine becomes what both sides agree on. */
static void sides_join(struct side *mine, const struct side *remote)
{
    for (int i = 0; i < VMPI_CTX_WORDS; i++)
        mine->mask[i] &= remote->mask[i];
    if (remote->inst > mine->inst)
        mine->inst = remote->inst;
    mine->lacked |= remote->lacked;
}

/* The other side's rsize members into w, as cards that every member turns
 * into world ranks: between jobs (MPI_Comm_connect/accept, or
 * MPI_Intercomm_create over a peer communicator that spans jobs), whose
 * world ranks mean nothing to each other. Then neither side goes on before
 * all members of both can reach the other side's, so no packet reaches a
 * process that does not know its sender yet. */
static int cards_swap(struct vmpi_comm *local, int leader, struct vmpi_comm *via, int other,
                      int tag, int rsize, int *w, const char *fn)
{
    struct vmpi_dtype *bt = vmpi_dtype_get(MPI_BYTE), *it = vmpi_dtype_get(MPI_INT);
    struct vmpi_card me, *mycards = malloc(sizeof me * (size_t)local->size);
    struct vmpi_card *cards = malloc(sizeof me * (size_t)rsize);
    int rc = mycards && cards ? MPI_SUCCESS : no_mem(local, fn), bad = 0;
    vmpi_proc_card(&me);
    if (rc == MPI_SUCCESS)
        rc = vmpi_coll_allgather(&me, mycards, sizeof me, bt, local);
    if (rc == MPI_SUCCESS && local->rank == leader)
        rc = vmpi_p2p_sendrecv(mycards, (int)sizeof me * local->size, bt, other, tag, cards,
                               (int)sizeof me * rsize, bt, other, tag, via, 0,
                               MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS)
        rc = vmpi_coll_bcast(cards, (int)sizeof me * rsize, bt, leader, local);
    for (int i = 0; rc == MPI_SUCCESS && i < rsize; i++)
        bad |= (w[i] = vmpi_proc_add(&cards[i])) < 0;
    /* Ready: a barrier over both sides, which also agrees on failure. */
    if (rc == MPI_SUCCESS)
        rc = vmpi_coll_allreduce(MPI_IN_PLACE, &bad, 1, it, MPI_BOR, local);
    if (rc == MPI_SUCCESS && local->rank == leader) {
        int theirs = 0;
        rc = vmpi_p2p_sendrecv(&bad, 1, it, other, tag, &theirs, 1, it, other, tag, via, 0,
                               MPI_STATUS_IGNORE);
        bad |= theirs;
    }
    if (rc == MPI_SUCCESS)
        rc = vmpi_coll_bcast(&bad, 1, it, leader, local);
    if (rc == MPI_SUCCESS && bad)
        rc = vmpi_err(local, MPI_ERR_PORT, "%s: a process of the other side cannot be reached "
                      "(no network channel between the two jobs: VMPI_CHANNELS must allow ofi)",
                      fn);
    free(mycards);
    free(cards);
    return rc;
}

/* The leaders swap their sides over `via` (rank `other` there; `coll` > 0
 * selects its collective context) and each broadcasts the other's side
 * and members on `local`. On return `remote` is the other side and `mine`
 * holds the AND of both masks and the larger instance; *world is the other
 * side's members (world ranks), malloc'ed. */
static int sides_swap(struct vmpi_comm *local, int leader, struct vmpi_comm *via, int other,
                      int tag, int coll, struct side *mine, struct side *remote, int **world,
                      const char *fn)
{
    struct vmpi_dtype *bt = vmpi_dtype_get(MPI_BYTE), *it = vmpi_dtype_get(MPI_INT);
    int rc = MPI_SUCCESS;
    *world = NULL;
    if (local->rank == leader) {
        /* Cards when the sides' processes are not all of one job: the leaders
         * of another or a side of several. Both leaders OR their wishes. */
        mine->cards = coll < 0 || (!coll && (vmpi_proc_other(vmpi_comm_world_rank(via, other)) ||
                                             vmpi_proc_any_other(local->group->world,
                                                                 local->size)));
        rc = vmpi_p2p_sendrecv(mine, sizeof *mine, bt, other, tag, remote, sizeof *remote, bt,
                               other, tag, via, coll > 0, MPI_STATUS_IGNORE);
        remote->cards |= mine->cards;
    }
    if (rc == MPI_SUCCESS)
        rc = vmpi_coll_bcast(remote, sizeof *remote, bt, leader, local);
    if (rc != MPI_SUCCESS)
        return rc;
    /* An intercommunicator's sides know each other already (in their own
     * numbering of world ranks, which differs between jobs). */
    int known = coll > 0 ? via->peers->size : remote->cards ? 1 << 24 : vmpi_job.size;
    if (remote->size < 1 || remote->size > known || (coll > 0 && remote->size != known))
        return vmpi_err(local, MPI_ERR_INTERN, "%s: the other side reports %d processes", fn,
                        remote->size);
    int *w = malloc(sizeof(int) * (size_t)remote->size);
    if (!w)
        return no_mem(local, fn);
    if (coll > 0) {
        memcpy(w, via->peers->world, sizeof(int) * (size_t)known);
    } else if (remote->cards) {
        rc = cards_swap(local, leader, via, other, tag, remote->size, w, fn);
    } else {
        if (local->rank == leader)
            rc = vmpi_p2p_sendrecv(local->group->world, local->size, it, other, tag, w,
                                   remote->size, it, other, tag, via, 0, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = vmpi_coll_bcast(w, remote->size, it, leader, local);
    }
    if (rc != MPI_SUCCESS) {
        free(w);
        return rc;
    }
    sides_join(mine, remote);
    *world = w;
    return MPI_SUCCESS;
}

/* The key of an agreement between two jobs: both leaders' whole names
 * (job and rank) and the tag, the same on both sides whichever is which,
 * and different for two spawns at once. Ranks alone gave every spawn the
 * same key (rank 0 on both sides); with equal keys each process breaks the
 * tie by its own list order, so two threads' spawns could each hold the
 * turn on one side and lack it on the other, round after round. */
static uint64_t pair_key(uint64_t a, uint64_t b, int tag)
{
    uint64_t k = (a < b ? a : b) * 0x9e3779b97f4a7c15ull ^ (a < b ? b : a);
    k = (k ^ (uint32_t)tag ^ (k >> 31)) * 0xbf58476d1ce4e5b9ull;
    k ^= k >> 29;
    return k == UINT64_MAX ? k - 1 : k;
}

/* Both sides' agreement on a context id (side_local, then sides_swap,
 * arguments as there; high < 0: no merge order; coll < 0: the sides are
 * in different jobs, coll == 0: MPI_Intercomm_create), run again while a
 * member's thread lacked the turn; then the id is picked (errors through
 * errc) and held (vmpi_comm_ctx_hold), since the callers build other
 * communicators before the new one takes it. */
static int agree_sides(struct vmpi_comm *errc, struct vmpi_comm *local, int high, int leader,
                       struct vmpi_comm *via, int other, int tag, int coll, struct side *mine,
                       struct side *remote, int **world, uint32_t *ctx, uint32_t *inst,
                       const char *fn)
{
    /* The turns' order must be the same on both sides. An intercommunicator
     * being duplicated, merged or split (coll) names the agreement on both;
     * MPI_Intercomm_create's peer is significant at the leaders only, so
     * its agreement is named by the tag and the two leaders, known after
     * the first round. */
    struct vmpi_ctx_turn turn;
    vmpi_comm_ctx_turn_begin(&turn, coll > 0 ? (uint64_t)via->ctx << 32 | (uint32_t)tag
                                             : UINT64_MAX);
    int rc;
    for (;;) {
        rc = side_local(local, high, leader, mine, &turn);
        if (rc == MPI_SUCCESS && high >= 0)
            rc = vmpi_coll_bcast(&mine->high, 1, vmpi_dtype_get(MPI_INT), leader, local);
        if (rc == MPI_SUCCESS)
            rc = sides_swap(local, leader, via, other, tag, coll, mine, remote, world, fn);
        if (rc != MPI_SUCCESS || !mine->lacked || vmpi_comm_ctx_any(mine->mask))
            break;
        if (coll <= 0)
            turn.key = pair_key(mine->leader, remote->leader, tag);
        free(*world);
        vmpi_comm_ctx_turn_pass(&turn);
    }
    if (rc == MPI_SUCCESS) {
        rc = vmpi_comm_ctx_pick(errc, mine->mask, mine->inst, ctx, inst, fn);
        if (rc != MPI_SUCCESS) {
            free(*world);
        } else {
            vmpi_comm_ctx_hold(*ctx, true);
            vmpi_comm_inst_saw(*inst + 1); /* the twin's (twin_new) */
        }
    }
    vmpi_comm_ctx_turn_end(&turn);
    return rc;
}

/* An intercommunicator's private local communicator over g (reference
 * taken): the twin of the intercommunicator's id ctx (VMPI_CTX_TWIN) and
 * the instance after its inst, both reserved by agree_sides, so it needs
 * no agreement of its own. One would have to wait for the turn while a
 * member's holder of the turn waits for this process in the next
 * intercommunicator agreement: threads that built intercommunicators at
 * once livelocked so (t_thread_comm). MPICH derives its local
 * communicators' ids from the intercommunicator's likewise. */
static struct vmpi_comm *twin_new(struct vmpi_group *g, uint32_t ctx, uint32_t inst,
                                  MPI_Errhandler errh)
{
    return vmpi_comm_new(g, ctx | VMPI_CTX_TWIN, inst + 1, errh);
}

/* The intercommunicator over `lgroup` (reference taken) and the remote
 * members `world` (taken), with the twin of `local` as its own. */
static int inter_build(struct vmpi_comm *local, struct vmpi_group *lgroup, int *world,
                       int rsize, uint32_t ctx, uint32_t inst, MPI_Errhandler errh,
                       const char *fn, struct vmpi_comm **out)
{
    vmpi_group_retain(local->group);
    struct vmpi_comm *priv = twin_new(local->group, ctx, inst, local->errh);
    if (!priv) {
        free(world);
        vmpi_comm_ctx_hold(ctx, false);
        return no_mem(local, fn);
    }
    struct vmpi_group *rgroup = vmpi_group_new(rsize, world);
    vmpi_group_retain(lgroup);
    struct vmpi_comm *n = rgroup ? vmpi_comm_new(lgroup, ctx, inst, errh) : NULL;
    if (!n) {
        if (rgroup)
            vmpi_group_release(rgroup);
        else
            vmpi_group_release(lgroup);
        vmpi_comm_free(priv);
        vmpi_comm_ctx_hold(ctx, false);
        return no_mem(local, fn);
    }
    vmpi_comm_make_inter(n, rgroup, priv);
    *out = n;
    return MPI_SUCCESS;
}

int vmpi_comm_intercomm_dyn(struct vmpi_comm *local, int root, struct vmpi_comm *bridge,
                            int other, int tag, const char *fn, struct vmpi_comm **out)
{
    struct side mine, remote;
    int *world;
    uint32_t ctx, inst;
    int rc = agree_sides(local, local, -1, root, bridge, other, tag, -1, &mine, &remote, &world,
                         &ctx, &inst, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    return inter_build(local, local->group, world, remote.size, ctx, inst, local->errh, fn, out);
}

int vmpi_comm_intercomm_create(struct vmpi_comm *local, int leader, struct vmpi_comm *peer,
                               int remote_leader, int tag, struct vmpi_comm **out)
{
    const char *fn = "MPI_Intercomm_create";
    struct side mine, remote;
    int *world;
    uint32_t ctx, inst;
    int rc = agree_sides(local, local, -1, leader, peer, remote_leader, tag, 0, &mine, &remote,
                         &world, &ctx, &inst, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    return inter_build(local, local->group, world, remote.size, ctx, inst, local->errh, fn, out);
}

/* The leaders of the two sides talk on the intercommunicator's collective
 * context with a tag above every user and collective tag. */
enum { INTER_TAG = VMPI_TAG_UB + 1 };

int vmpi_comm_inter_dup(struct vmpi_comm *c, struct vmpi_comm **out)
{
    const char *fn = "MPI_Comm_dup";
    struct side mine, remote;
    int *world;
    uint32_t ctx, inst;
    int rc = agree_sides(c, c->local, -1, 0, c, 0, INTER_TAG, 1, &mine, &remote, &world, &ctx,
                         &inst, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    return inter_build(c->local, c->group, world, remote.size, ctx, inst, c->errh, fn, out);
}

/* The side whose processes passed high = false comes first; when both
 * passed the same, the side whose leader comes first (vmpi_proc_name). */
int vmpi_comm_intercomm_merge(struct vmpi_comm *c, int high, struct vmpi_comm **out)
{
    const char *fn = "MPI_Intercomm_merge";
    struct side mine, remote;
    int *world;
    uint32_t ctx, inst;
    int rc = agree_sides(c, c->local, high != 0, 0, c, 0, INTER_TAG, 1, &mine, &remote, &world,
                         &ctx, &inst, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    int n = c->size + remote.size;
    int *all = malloc(sizeof(int) * (size_t)n);
    if (!all) {
        free(world);
        vmpi_comm_ctx_hold(ctx, false);
        return no_mem(c, fn);
    }
    bool first = mine.high != remote.high ? !mine.high : mine.leader < remote.leader;
    int *lo = first ? c->group->world : world, *hi = first ? world : c->group->world;
    int nlo = first ? c->size : remote.size;
    memcpy(all, lo, sizeof(int) * (size_t)nlo);
    memcpy(all + nlo, hi, sizeof(int) * (size_t)(n - nlo));
    free(world);
    struct vmpi_group *g = vmpi_group_new(n, all);
    struct vmpi_comm *nc = g ? vmpi_comm_new(g, ctx, inst, c->errh) : NULL;
    if (!nc) {
        vmpi_comm_ctx_hold(ctx, false);
        return no_mem(c, fn);
    }
    *out = nc;
    return MPI_SUCCESS;
}

struct split_key {
    int key, rank, world;
};

static int split_key_cmp(const void *a, const void *b)
{
    const struct split_key *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* MPI_Comm_split, MPI_Comm_create (a split with color 0 for the group's
 * members, keyed by their rank in it) and MPI_Comm_split_type (colored by
 * shared-memory domain) on an intercommunicator:
 * the local processes of one color, and the remote processes of the same
 * color in (key, rank) order; MPI_COMM_NULL where either side has none.
 * Every color gets the same context id, free on all processes of both
 * sides: no process is in two of the new communicators. */
int vmpi_comm_inter_split(struct vmpi_comm *c, int color, int key, const char *fn,
                          struct vmpi_comm **out)
{
    struct side mine, remote;
    int *world, rc;
    uint32_t ctx, inst;
    *out = NULL;
    rc = agree_sides(c, c->local, -1, 0, c, 0, INTER_TAG, 1, &mine, &remote, &world, &ctx,
                     &inst, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    free(world);
    int lsize = c->size, rsize = c->peers->size, ck[2] = {color, key};
    int *lck = malloc(sizeof(int) * 2 * (size_t)lsize);
    int *rck = malloc(sizeof(int) * 2 * (size_t)rsize);
    struct split_key *sel = malloc(sizeof *sel * (size_t)rsize);
    struct vmpi_dtype *it = vmpi_dtype_get(MPI_INT);
    rc = lck && rck && sel ? vmpi_coll_allgather(ck, lck, 2, it, c->local) : no_mem(c, fn);
    if (rc == MPI_SUCCESS && c->rank == 0)
        rc = vmpi_p2p_sendrecv(lck, 2 * lsize, it, 0, INTER_TAG, rck, 2 * rsize, it, 0,
                               INTER_TAG, c, 1, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS)
        rc = vmpi_coll_bcast(rck, 2 * rsize, it, 0, c->local);
    int n = 0, nl = 0;
    for (int j = 0; rc == MPI_SUCCESS && color != MPI_UNDEFINED && j < rsize; j++)
        if (rck[2 * j] == color)
            sel[n++] = (struct split_key){rck[2 * j + 1], j, c->peers->world[j]};
    int *rworld = n ? malloc(sizeof(int) * (size_t)n) : NULL;
    int *lworld = n ? malloc(sizeof(int) * (size_t)lsize) : NULL;
    struct split_key *lsel = n ? malloc(sizeof *lsel * (size_t)lsize) : NULL;
    if (n && (!rworld || !lworld || !lsel))
        rc = no_mem(c, fn);
    struct vmpi_comm *newlocal = NULL;
    if (rc == MPI_SUCCESS && n) {
        for (int j = 0; j < lsize; j++)
            if (lck[2 * j] == color)
                lsel[nl++] = (struct split_key){lck[2 * j + 1], j, c->group->world[j]};
        qsort(sel, (size_t)n, sizeof *sel, split_key_cmp);
        qsort(lsel, (size_t)nl, sizeof *lsel, split_key_cmp);
        for (int i = 0; i < n; i++)
            rworld[i] = sel[i].world;
        for (int i = 0; i < nl; i++)
            lworld[i] = lsel[i].world;
        struct vmpi_group *lgroup = vmpi_group_new(nl, lworld);
        lworld = NULL;
        newlocal = lgroup ? twin_new(lgroup, ctx, inst, c->local->errh) : NULL;
        if (!newlocal)
            rc = no_mem(c, fn);
    }
    if (rc == MPI_SUCCESS && newlocal) {
        struct vmpi_group *rgroup = vmpi_group_new(n, rworld);
        rworld = NULL;
        vmpi_group_retain(newlocal->group);
        struct vmpi_comm *nc = rgroup ? vmpi_comm_new(newlocal->group, ctx, inst, c->errh) : NULL;
        if (nc) {
            vmpi_comm_make_inter(nc, rgroup, newlocal);
            newlocal = NULL;
            *out = nc;
        } else {
            if (rgroup)
                vmpi_group_release(rgroup);
            else
                vmpi_group_release(newlocal->group);
            rc = no_mem(c, fn);
        }
    }
    if (newlocal)
        vmpi_comm_free(newlocal);
    if (!*out)
        vmpi_comm_ctx_hold(ctx, false);
    free(rworld);
    free(lworld);
    free(lsel);
    free(lck);
    free(rck);
    free(sel);
    return rc;
}
