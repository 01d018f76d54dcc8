/* Windows: creation, memory, free.
 *
 * The ranks of a window that can map the same memory form a node (the same
 * grouping as MPI_COMM_TYPE_SHARED: all VMs of a host through the region
 * when the ivshmem channel is on, else one VM). The node's lowest rank
 * allocates one node block and the others map it:
 *
 *   0                       nnode control blocks (struct vmpi_win_ctl), one per
 *                           node member in window-rank order
 *   nnode * sizeof ctl      MPI_Win_allocate(_shared): the members' window
 *                           memory, in window-rank order; contiguous for
 *                           _shared (MPI's default), each start rounded up
 *                           to a cache line for _allocate
 *
 * except that MPI_Win_allocate on a region node takes each member's memory
 * from its own heap slice (its area offset travels in the second
 * allgather, like Win_create memory in the region): one slice need not
 * hold the whole node's windows. A member whose slice cannot hold its
 * memory takes private memory instead, which the others then reach by
 * messages, as Win_create memory outside the region: a window larger than
 * the region still works, at the speed of messages.
 *
 * The block lives in the leader's heap slice of the host region (region
 * nodes), in a per-window file in the VM's /dev/shm that is unlinked as
 * soon as every member has mapped it (VM nodes), or in private memory
 * (a node of one). Offsets of the block travel in an allgather over the
 * window's communicator and are checked against the leader's slice.
 *
 * A window whose ranks span several nodes, where every rank has the
 * network's RMA, registers each rank's memory with the network and a third
 * allgather hands out (address, key): other hosts then put and get by
 * libfabric writes and reads (VMPI_RMA_NET=0 keeps them on messages). */
#include "rma.h"
#include "../comm/comm.h"
#include "../locality/locality.h"
#include "../shm/seg.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NODE_PRIVATE = 1, NODE_REGION = 2, NODE_FILE = 3 };

static struct vmpi_htab win_tab;

struct vmpi_win *vmpi_win_get(MPI_Win h)
{
    if (VMPI_HKIND(h) != VMPI_HK_INDIRECT || VMPI_HTYPE(h) != VMPI_OBJ_WIN || !VMPI_HINDEX(h))
        return NULL;
    return vmpi_htab_get(&win_tab, VMPI_HINDEX(h));
}

/* What each rank publishes when a window is made. */
struct win_card {
    int64_t size, disp_unit;
    uint64_t area_off;  /* region memory of Win_create (round 1) or split Win_allocate
                         * (round 2): its area offset, or ~0 */
    uint64_t node_off;  /* the node's leader: its block's area offset (region nodes) */
    int64_t node_kind;  /* the node's leader: NODE_*, or 0 when it could not allocate */
    int64_t net;        /* round 1: this rank can use the network's RMA */
};

/* Round 3: how the network reaches a rank's memory. */
struct net_card {
    uint64_t addr, key;
    int64_t ok;
};

#define CTL_BYTES sizeof(struct vmpi_win_ctl)

/* Memory of the host region (the locality layer's memory placement) is
 * named by one number, its area offset, in the cards. */
static bool region_off(const void *p, size_t n, uint64_t *off)
{
    struct vmpi_mem_key k;
    if (!vmpi_locality_mem_key(p, n, &k))
        return false;
    *off = k.addr;
    return true;
}

static void *region_ptr(int world, uint64_t off, uint64_t n)
{
    struct vmpi_mem_key k = {.addr = off};
    return vmpi_locality_mem_map(world, &k, n);
}

static size_t seg_round(int flavor, size_t n)
{
    return flavor == MPI_WIN_FLAVOR_SHARED ? n : (n + 63) & ~(size_t)63;
}

static void ctl_init(struct vmpi_win *w, struct vmpi_win_ctl *ctl)
{
    memset(ctl, 0, sizeof *ctl);
    vmpi_lock_params p;
    vmpi_lock_params_default(&p);
    p.park = VMPI_PARK_YIELD;
    if (w->lock_kind == VMPI_RMA_LOCK_SPARK)
        vmpi_spark_init(&ctl->tl, &p);
    else
        vmpi_oticket_init(&ctl->tl, &p);
}

static int lock_kind(void)
{
    const char *v = vmpi_knob_str("VMPI_RMA_LOCK");
    if (!v || !*v || !strcmp(v, "oticket"))
        return VMPI_RMA_LOCK_OTICKET;
    if (!strcmp(v, "spark"))
        return VMPI_RMA_LOCK_SPARK;
    vmpi_fatal("VMPI_RMA_LOCK=%s: expected oticket or spark", v);
}

static char *node_file_name(char *name, size_t cap, const struct vmpi_win *w, int leader_world)
{
    char sfx[32];
    snprintf(sfx, sizeof sfx, "w%u-%d", w->comm->inst, leader_world);
    vmpi_shm_name(name, cap, vmpi_job.id, sfx);
    return name;
}

/* The leader's node block: kind and area offset reach the others in the
 * second allgather. */
static void *node_alloc(struct vmpi_win *w, size_t bytes, int leader_world, bool region)
{
    if (region) {
        w->node_kind = NODE_REGION;
        return vmpi_locality_mem_alloc(bytes);
    }
    char name[128];
    w->node_kind = NODE_FILE;
    return vmpi_shm_create(node_file_name(name, sizeof name, w, leader_world), bytes);
}

static void win_release(struct vmpi_win *w)
{
    if (w->own_private)
        free(w->own_mem);
    else if (w->own_mem)
        vmpi_locality_mem_free(w->own_mem);
    if (w->net_mem.handle)
        vmpi_locality_rdma_unexpose(&w->net_mem);
    if (w->node_mem) {
        if (w->node_kind == NODE_REGION) {
            if (w->node_leader)
                vmpi_locality_mem_free(w->node_mem);
        } else if (w->node_kind == NODE_FILE) {
            vmpi_shm_detach(w->node_mem, w->node_bytes);
        } else {
            free(w->node_mem);
        }
    }
    free(w->t);
    free(w->rank_of_world);
    free(w->att);
    free(w->err_for);
    if (w->group)
        vmpi_group_release(w->group);
    if (w->comm)
        vmpi_comm_free(w->comm);
    free(w);
}

/* Round 3: every rank exposes its memory to the network; targets on other
 * hosts that did are reached by libfabric writes and reads from then on. */
static void net_expose(struct vmpi_win *w, const char *fn)
{
    struct net_card me = {0, 0, 0}, *nc = calloc((size_t)w->size, sizeof *nc);
    if (!nc)
        vmpi_fatal("%s: out of memory", fn);
    char *mine = w->t[w->rank].base;
    if (mine && vmpi_locality_rdma_expose(mine, (size_t)w->my_size, &w->net_mem))
        me = (struct net_card){w->net_mem.key.addr, w->net_mem.key.key, 1};
    vmpi_coll_allgather(&me, nc, sizeof me, vmpi_dtype_get(MPI_BYTE), w->comm);
    for (int r = 0; r < w->size; r++) {
        struct win_target *t = &w->t[r];
        if (!t->base && nc[r].ok && vmpi_locality_rdma_to(t->world)) {
            t->net = 1;
            t->net_key = (struct vmpi_mem_key){nc[r].addr, nc[r].key};
        }
    }
    free(nc);
}

int vmpi_win_create(void *base, MPI_Aint size, int disp_unit, struct vmpi_comm *c, int flavor,
                    void *baseptr, struct vmpi_win **out)
{
    static const char *const fns[] = {"", "MPI_Win_create", "MPI_Win_allocate",
                                      "MPI_Win_create_dynamic", "MPI_Win_allocate_shared"};
    const char *fn = fns[flavor];
    struct vmpi_win *w = calloc(1, sizeof *w);
    if (!w)
        return vmpi_err(c, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    int rc = vmpi_comm_dup(c, &w->comm);
    if (rc != MPI_SUCCESS) {
        free(w);
        return rc;
    }
    vmpi_errh_set(w->comm, MPI_ERRORS_ARE_FATAL); /* a window's own handler (MPI-3.1 8.3.2) */
    w->flavor = flavor;
    w->rank = c->rank;
    w->size = c->size;
    w->group = c->group;
    vmpi_group_retain(w->group);
    w->disp_unit = disp_unit;
    w->my_size = (uint64_t)size;
    w->lock_kind = lock_kind();
    w->attr_model = MPI_WIN_UNIFIED;
    w->t = calloc((size_t)w->size, sizeof *w->t);
    int nworld = vmpi_proc_count();
    w->rank_of_world = malloc((size_t)nworld * sizeof *w->rank_of_world);
    w->err_for = calloc((size_t)w->size, sizeof *w->err_for);
    struct win_card *cards = calloc((size_t)w->size, sizeof *cards);
    if (!w->t || !w->rank_of_world || !w->err_for || !cards) {
        free(cards);
        win_release(w);
        return vmpi_err(c, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    for (int i = 0; i < nworld; i++)
        w->rank_of_world[i] = -1;
    for (int r = 0; r < w->size; r++)
        w->rank_of_world[vmpi_comm_world_rank(c, r)] = r;

    /* Round 1: sizes, units, and where Win_create memory lies. */
    struct win_card me = {size, disp_unit, ~(uint64_t)0, 0, 0,
                          flavor != MPI_WIN_FLAVOR_DYNAMIC && vmpi_locality_rdma_on() &&
                              vmpi_knob_num("VMPI_RMA_NET")};
    if (flavor == MPI_WIN_FLAVOR_CREATE && size > 0 &&
        !region_off(base, (size_t)size, &me.area_off))
        me.area_off = ~(uint64_t)0;
    struct vmpi_dtype *bytes_t = vmpi_dtype_get(MPI_BYTE);
    vmpi_coll_allgather(&me, cards, sizeof me, bytes_t, w->comm);
    /* The cards may have come through shared memory another VM writes:
     * sizes and units decide pointers below, so they are checked, kept
     * (the second round's copies are not used for them) and this rank's
     * own are its own. */
    for (int r = 0; r < w->size; r++) {
        if (cards[r].size < 0 || cards[r].disp_unit <= 0 || cards[r].disp_unit > INT_MAX ||
            (r == w->rank && (cards[r].size != me.size || cards[r].disp_unit != me.disp_unit)))
            vmpi_fatal("%s: rank %d's window size or unit (%lld, %lld) arrived corrupt", fn, r,
                       (long long)cards[r].size, (long long)cards[r].disp_unit);
        w->t[r].size = (uint64_t)cards[r].size;
        w->t[r].disp_unit = (int)cards[r].disp_unit;
    }

    /* The node: window ranks that can map this rank's memory. */
    int my_world = vmpi_comm_world_rank(c, w->rank);
    int sid = vmpi_locality_shared_id(my_world);
    int nnode = 0, leader = -1;
    size_t seg_at = 0;
    for (int r = 0; r < w->size; r++) {
        if (vmpi_locality_shared_id(vmpi_comm_world_rank(c, r)) != sid)
            continue;
        if (leader < 0)
            leader = r;
        nnode++;
    }
    size_t block = (size_t)nnode * CTL_BYTES;
    seg_at = block;
    bool owns_mem = flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED;
    int leader_world = vmpi_comm_world_rank(c, leader);
    bool region = nnode > 1 && vmpi_locality_shared_region(my_world);
    bool split = region && flavor == MPI_WIN_FLAVOR_ALLOCATE;
    bool too_big = false;
    if (owns_mem && !split)
        for (int r = 0; r < w->size; r++)
            if (vmpi_locality_shared_id(vmpi_comm_world_rank(c, r)) == sid)
                too_big |= __builtin_add_overflow(block, seg_round(flavor, w->t[r].size), &block);
    if (flavor == MPI_WIN_FLAVOR_SHARED && nnode != w->size) {
        free(cards);
        win_release(w);
        return vmpi_err(c, MPI_ERR_RMA_SHARED,
                        "%s: only %d of the communicator's %d ranks share memory with rank %d",
                        fn, nnode, c->size, c->rank);
    }

    /* Round 2: the leader's block (and, split, every member's memory). */
    me.node_kind = 0;
    bool mine_ok = true;
    if (split && size > 0) {
        size_t bytes = seg_round(flavor, (size_t)size);
        w->own_mem = vmpi_locality_mem_alloc(bytes);
        if (w->own_mem && !region_off(w->own_mem, (size_t)size, &me.area_off)) {
            vmpi_locality_mem_free(w->own_mem);
            w->own_mem = NULL;
        }
        if (!w->own_mem) {
            w->own_private = posix_memalign(&w->own_mem, VMPI_CACHELINE, bytes) == 0;
            mine_ok = w->own_private;
            if (!mine_ok)
                w->own_mem = NULL;
        }
    }
    w->node_bytes = block;
    w->node_leader = w->rank == leader;
    /* A node whose sum wraps allocates nothing: every rank learns it from
     * the check below, as when an allocation fails. */
    if (w->node_leader && !too_big) {
        if (nnode == 1) {
            w->node_kind = NODE_PRIVATE;
            if (posix_memalign(&w->node_mem, VMPI_CACHELINE, block))
                w->node_mem = NULL;
        } else {
            w->node_mem = node_alloc(w, block, leader_world, region);
        }
        if (w->node_mem) {
            memset(w->node_mem, 0, (size_t)nnode * CTL_BYTES);
            for (int i = 0; i < nnode; i++)
                ctl_init(w, (struct vmpi_win_ctl *)((char *)w->node_mem + (size_t)i * CTL_BYTES));
            me.node_kind = w->node_kind;
            if (w->node_kind == NODE_REGION &&
                !region_off(w->node_mem, block, &me.node_off))
                vmpi_fatal("%s: region memory outside this rank's heap slice", fn);
        }
    }
    vmpi_coll_allgather(&me, cards, sizeof me, bytes_t, w->comm);
    int kind = (int)cards[leader].node_kind;
    if (!w->node_leader && kind) {
        w->node_kind = kind;
        if (kind == NODE_REGION) {
            w->node_mem = region_ptr(leader_world, cards[leader].node_off, block);
            if (!w->node_mem)
                vmpi_fatal("%s: rank %d's window block (%zu bytes at area offset %llu) is not "
                           "inside its heap slice of the host region", fn, leader,
                           block, (unsigned long long)cards[leader].node_off);
        } else if (kind == NODE_FILE) {
            char name[128];
            w->node_mem = vmpi_shm_attach(node_file_name(name, sizeof name, w, leader_world),
                                          block);
        }
    }
    /* Every rank must know whether all could map the block before any
     * uses it; the leader unlinks the file once all have it. */
    int ok = kind != 0 && w->node_mem != NULL && mine_ok, all_ok;
    vmpi_coll_allreduce(&ok, &all_ok, 1, vmpi_dtype_get(MPI_INT), MPI_LAND, w->comm);
    if (w->node_leader && kind == NODE_FILE) {
        char name[128];
        vmpi_shm_unlink(node_file_name(name, sizeof name, w, leader_world));
    }
    if (!all_ok) {
        free(cards);
        win_release(w);
        if (too_big)
            return vmpi_err(c, MPI_ERR_NO_MEM, "%s: the node's window memory is more than "
                            "this machine can address", fn);
        return vmpi_err(c, MPI_ERR_NO_MEM,
                        "%s: a rank of the window could not get its shared memory (%zu-byte "
                        "node block%s; the host region's heap slice is VMPI_IVSHMEM_HEAP "
                        "bytes per rank)", fn, block,
                        split && !mine_ok ? ", and this rank's own window memory" : "");
    }

    /* How this rank reaches each target. */
    char *node = w->node_mem;
    int idx = 0;
    for (int r = 0; r < w->size; r++) {
        struct win_target *t = &w->t[r];
        t->world = vmpi_comm_world_rank(c, r);
        if (vmpi_locality_shared_id(t->world) != sid)
            continue;
        t->ctl = (struct vmpi_win_ctl *)(node + (size_t)idx * CTL_BYTES);
        if (owns_mem && !split) {
            t->base = node + seg_at;
            seg_at += seg_round(flavor, t->size);
        } else if (split) {
            if (r == w->rank)
                t->base = w->own_mem;
            else if (t->size > 0 && cards[r].area_off != ~(uint64_t)0 &&
                     !(t->base = region_ptr(t->world, cards[r].area_off, t->size)))
                vmpi_fatal("%s: rank %d's window memory (%llu bytes at area offset %llu) is "
                           "not inside its heap slice of the host region", fn, r,
                           (unsigned long long)t->size,
                           (unsigned long long)cards[r].area_off);
        } else if (flavor == MPI_WIN_FLAVOR_CREATE) {
            if (r == w->rank)
                t->base = base;
            else if (region && cards[r].area_off != ~(uint64_t)0)
                t->base = region_ptr(t->world, cards[r].area_off, t->size);
        }
        idx++;
    }
    bool net = nnode < w->size;
    for (int r = 0; r < w->size && net; r++)
        net = cards[r].net != 0;
    free(cards);
    if (net)
        net_expose(w, fn);
    w->base = flavor == MPI_WIN_FLAVOR_DYNAMIC ? NULL : w->t[w->rank].base;
    if (owns_mem)
        memcpy(baseptr, &w->base, sizeof w->base);
    /* Served by messages when some rank cannot map this rank's memory. */
    bool mapped_by_node = (owns_mem && !w->own_private) ||
                          (flavor == MPI_WIN_FLAVOR_CREATE &&
                           (nnode == 1 || (region && me.area_off != ~(uint64_t)0)));
    if (nnode < w->size || !mapped_by_node)
        vmpi_rma_am_enable(w);
    uint32_t idx_h;
    if (vmpi_htab_add(&win_tab, w, &idx_h) != 0) {
        vmpi_rma_am_disable(w);
        win_release(w);
        return vmpi_err(c, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    w->handle = VMPI_HMAKE(VMPI_HK_INDIRECT, VMPI_OBJ_WIN, idx_h);
    w->comm->errh_obj = w->handle; /* what a user error handler gets */
    *out = w;
    return MPI_SUCCESS;
}

int vmpi_win_free(struct vmpi_win *w)
{
    /* After the barrier no rank touches this window's memory or sends it
     * requests: every epoch has ended (the barrier also serves requests
     * still arriving for this rank while it waits). */
    int rc = vmpi_coll_barrier(w->comm);
    vmpi_rma_wait_pending(w, -1);
    vmpi_rma_am_disable(w);
    while (w->waiters) {
        struct win_waiter *q = w->waiters;
        w->waiters = q->next;
        free(q);
    }
    vmpi_htab_del(&win_tab, VMPI_HINDEX(w->handle));
    win_release(w);
    return rc;
}

int vmpi_win_attach(struct vmpi_win *w, void *base, MPI_Aint size)
{
    for (int i = 0; i < w->natt; i++) {
        char *b = w->att[i].base;
        if ((char *)base < b + w->att[i].size && b < (char *)base + size)
            return vmpi_err(w->comm, MPI_ERR_RMA_ATTACH,
                            "MPI_Win_attach: [%p, +%ld) overlaps memory attached at %p", base,
                            (long)size, (void *)b);
    }
    struct win_attach *a = realloc(w->att, ((size_t)w->natt + 1) * sizeof *a);
    if (!a)
        return vmpi_err(w->comm, MPI_ERR_NO_MEM, "MPI_Win_attach: out of memory");
    w->att = a;
    w->att[w->natt++] = (struct win_attach){base, (size_t)size};
    return MPI_SUCCESS;
}

int vmpi_win_detach(struct vmpi_win *w, const void *base)
{
    for (int i = 0; i < w->natt; i++) {
        if (w->att[i].base != base)
            continue;
        w->att[i] = w->att[--w->natt];
        return MPI_SUCCESS;
    }
    return vmpi_err(w->comm, MPI_ERR_RMA_ATTACH,
                    "MPI_Win_detach: no memory is attached at %p", base);
}
