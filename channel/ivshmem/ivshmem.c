/* ivshmem channel: ranks in other VMs of the same host.
 *
 * The pairs (channel/pair/: rings, split-copy claims, bulk slots) live in
 * this job's area of the host region (shm/region.h), laid out by the area
 * directory. The two sides run on different kernels, so nothing here uses
 * pids, CMA or futexes: a rendezvous streams through the pair's bulk slots,
 * unless the send buffer came from MPI_Alloc_mem. Each rank owns a heap
 * slice of the area for MPI_Alloc_mem; a message whose send buffer lies in
 * it is named by its area offset in the RTS and the receiver copies it once,
 * straight out of the sender's buffer (and when the receive buffer is in
 * the receiver's slice too, the sender copies the second half into it).
 * The allocator's bookkeeping stays in private memory, so no other VM can
 * corrupt it; every offset another rank names is checked against that
 * rank's slice before a byte is copied.
 *
 * With VMPI_INTEGRITY=crc32c the region carries messages only: every ring
 * record and bulk chunk is checksummed (channel/pair/sum.c), and nothing
 * the program computes on lives in the region (no heap slices, so
 * MPI_Alloc_mem and windows take private memory and reach other VMs by
 * messages; no collective slots, so node collectives use messages too). */
#include "ivshmem.h"
#include "../pair/pair.h"
#include "../../shm/cslot.h"
#include "../../shm/region.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* This job's sections of the area, from its checked directory. */
static struct {
    bool joined;
    uint32_t nlocal;      /* the host's ranks the sections are sized for */
    uint64_t cslot_off;
    uint64_t chan_off, pair_stride;
    uint32_t ncells, nslots;
    uint64_t slot_bytes;
    uint64_t heap_off, heap_bytes;
    uint64_t secret; /* keys the checksums when VMPI_INTEGRITY is on */
} dir;
static char where[300];

/* A block of this rank's heap slice (offsets within the slice). */
struct blk {
    uint64_t off, len;
    bool used;
};
static struct blk *blks;
static size_t nblks;
static char *heap;        /* this rank's slice, or NULL */
static int *area_group;   /* area index -> world rank (the area's ranks) */
static int area_ngroup;
static uint64_t heap_lo;  /* its area offset */

static uint64_t iv_addr_of(const void *buf, size_t n)
{
    const char *b = buf;
    if (!heap || b < heap || b > heap + dir.heap_bytes || n > (size_t)(heap + dir.heap_bytes - b))
        return VMPI_PAIR_NOADDR;
    return heap_lo + (uint64_t)(b - heap);
}

static bool iv_copy(struct vmpi_pair_peer *p, char *local, uint64_t remote, size_t n, bool write)
{
    if (remote < p->lo || remote > p->hi || n > p->hi - remote)
        vmpi_fatal("%s: rank %d named %zu bytes at offset %llu, outside its heap slice", where,
                   p->world, n, (unsigned long long)remote);
    char *r = vmpi_region.area + remote;
    if (write)
        memcpy(r, local, n);
    else
        memcpy(local, r, n);
    return true;
}

static const struct vmpi_pair_ops iv_ops = {iv_addr_of, iv_copy};
static struct vmpi_pair_inst inst = {.ops = &iv_ops, .where = where};

static int iv_poll(void)
{
    return vmpi_pair_poll(&inst);
}

static bool iv_busy(void)
{
    return vmpi_pair_busy(&inst);
}

static void iv_finalize(void)
{
    vmpi_pair_finalize(&inst);
    free(blks);
    blks = NULL;
    nblks = 0;
    heap = NULL;
    dir.joined = false;
    free(area_group);
    area_group = NULL;
    area_ngroup = 0;
    vmpi_region_close();
}

static struct vmpi_cslot *iv_cslot(int world)
{
    if (vmpi_ivshmem_integrity())
        return NULL;
    for (int i = 0; i < area_ngroup; i++)
        if (area_group[i] == world)
            return (struct vmpi_cslot *)(vmpi_region.area + dir.cslot_off +
                                         (uint64_t)i * VMPI_CSLOT_BYTES);
    return NULL;
}

/* Memory of this rank's heap slice is exposed by its area offset. */
static bool iv_expose(void *p, size_t n, struct vmpi_mem_reg *reg)
{
    uint64_t a = iv_addr_of(p, n);
    if (a == VMPI_PAIR_NOADDR)
        return false;
    *reg = (struct vmpi_mem_reg){.key = {.addr = a}};
    return true;
}

/* Where [off, off + n) (area offsets, from another rank) lies in this
 * process's mapping, when it is inside the heap slice of world rank
 * `world` of this host's area; NULL otherwise. */
static void *iv_map(int world, const struct vmpi_mem_key *key, uint64_t n)
{
    uint64_t off = key->addr;
    uint64_t lo;
    if (world == vmpi_job.rank && heap) {
        lo = heap_lo;
    } else {
        int i = 0;
        while (i < area_ngroup && area_group[i] != world)
            i++;
        if (i == area_ngroup)
            return NULL;
        lo = dir.heap_off + (uint64_t)i * dir.heap_bytes;
    }
    if (!dir.heap_bytes || off < lo || off > lo + dir.heap_bytes || n > lo + dir.heap_bytes - off)
        return NULL;
    return vmpi_region.area + off;
}

/* Half the region, less this job's tables and channels (everything planned
 * before the heap), shared by its ranks on this host (so a second job of
 * the same shape still fits), between 16 MiB and 1 GiB per rank: window
 * memory across VMs comes from here. Every rank maps the same region, so
 * all compute the same value. */
static uint64_t default_heap(uint64_t before, uint32_t nlocal)
{
    uint64_t n = nlocal ? nlocal : 1;
    uint64_t half = vmpi_region.size / 2;
    uint64_t h = half > before ? (half - before) / n : 0;
    h = h < (16u << 20) ? 16u << 20 : h > (1u << 30) ? 1u << 30 : h;
    return h & ~4095ull;
}

bool vmpi_ivshmem_integrity(void)
{
    static int on = -1;
    if (on < 0) {
        const char *v = vmpi_knob_str("VMPI_INTEGRITY");
        if (!v || !*v || !strcmp(v, "off"))
            on = 0;
        else if (!strcmp(v, "crc32c"))
            on = 1;
        else
            vmpi_fatal("VMPI_INTEGRITY=%s: expected off or crc32c", v);
    }
    return on;
}

void vmpi_ivshmem_plan(struct vmpi_area_hdr *d, int nlocal)
{
    uint32_t ncells, nslots;
    uint64_t sb;
    vmpi_pair_geom("IVSHMEM", (uint64_t)nlocal, 65536, &ncells, &nslots, &sb);
    uint64_t stride = vmpi_pair_stride((uint32_t)ncells, (uint32_t)nslots, sb);
    uint64_t n = (uint64_t)nlocal;
    struct vmpi_area_sec *cs = vmpi_area_add(d, VMPI_AREA_CSLOT, n * VMPI_CSLOT_BYTES);
    struct vmpi_area_sec *pr = vmpi_area_add(d, VMPI_AREA_PAIRS, n * n * stride);
    bool integrity = vmpi_ivshmem_integrity();
    uint64_t heap = integrity ? 0
                              : (vmpi_env_bytes("VMPI_IVSHMEM_HEAP",
                                                default_heap(d->area_bytes, d->nlocal), 0,
                                                1ull << 36) + 4095) & ~4095ull;
    struct vmpi_area_sec *hp = vmpi_area_add(d, VMPI_AREA_HEAP, n * heap);
    if (!cs || !pr || !hp)
        vmpi_fatal("ivshmem region %s: cannot lay out this job's area", vmpi_region.path);
    cs->param[0] = VMPI_CSLOT_BYTES;
    pr->param[0] = ncells;
    pr->param[1] = nslots;
    pr->param[2] = sb;
    pr->param[3] = stride;
    hp->param[0] = heap;
    hp->param[1] = integrity;
}

void vmpi_ivshmem_area_init(char *area, const struct vmpi_area_hdr *d)
{
    const struct vmpi_area_sec *cs = vmpi_area_section(d, VMPI_AREA_CSLOT),
                               *pr = vmpi_area_section(d, VMPI_AREA_PAIRS);
    memset(area + cs->off, 0, cs->len);
    for (uint64_t i = 0; i < (uint64_t)d->nlocal * d->nlocal; i++)
        vmpi_pair_clear(area + pr->off + i * pr->param[3], (uint32_t)pr->param[0],
                        (uint32_t)pr->param[1], pr->param[2]);
}

void vmpi_ivshmem_area_dir(const struct vmpi_area_hdr *d, uint64_t secret)
{
    snprintf(where, sizeof where, "ivshmem region %s", vmpi_region.path);
    const struct vmpi_area_sec *cs = vmpi_area_section(d, VMPI_AREA_CSLOT),
                               *pr = vmpi_area_section(d, VMPI_AREA_PAIRS),
                               *hp = vmpi_area_section(d, VMPI_AREA_HEAP);
    uint64_t n = d->nlocal, pairs, heaps;
    bool ok = cs && pr && hp && n <= 65536 && cs->param[0] == VMPI_CSLOT_BYTES &&
              cs->len >= n * VMPI_CSLOT_BYTES && pr->param[0] >= 64 &&
              pr->param[0] <= (1u << 20) && !(pr->param[0] & (pr->param[0] - 1)) &&
              pr->param[1] >= 2 && pr->param[1] <= 1024 && pr->param[2] >= 4096 &&
              pr->param[2] <= (1u << 26) && pr->param[2] % 64 == 0 &&
              pr->param[3] >= vmpi_pair_stride((uint32_t)pr->param[0], (uint32_t)pr->param[1],
                                               pr->param[2]) &&
              pr->param[3] % 4096 == 0 && !__builtin_mul_overflow(n * n, pr->param[3], &pairs) &&
              pr->len >= pairs && hp->param[0] % 4096 == 0 &&
              !__builtin_mul_overflow(n, hp->param[0], &heaps) && hp->len >= heaps;
    if (!ok)
        vmpi_fatal("%s: the directory of this job's area is corrupt or from another vmpi",
                   where);
    if (hp->param[1] != (uint64_t)vmpi_ivshmem_integrity() || (hp->param[1] && hp->param[0]))
        vmpi_fatal("%s: VMPI_INTEGRITY is %s here but was %s where this job's area was made: "
                   "give every rank the same value",
                   where, vmpi_ivshmem_integrity() ? "crc32c" : "off",
                   hp->param[1] ? "crc32c" : "off");
    dir.joined = true;
    dir.nlocal = d->nlocal;
    dir.cslot_off = cs->off;
    dir.chan_off = pr->off;
    dir.ncells = (uint32_t)pr->param[0];
    dir.nslots = (uint32_t)pr->param[1];
    dir.slot_bytes = pr->param[2];
    dir.pair_stride = pr->param[3];
    dir.heap_off = hp->off;
    dir.heap_bytes = hp->param[0];
    dir.secret = secret;
}

static void *iv_add_peer(int world, size_t *eager_max)
{
    return vmpi_pair_add_peer(&inst, world, eager_max);
}

static const char *iv_describe(void)
{
    if (!vmpi_region.base)
        return NULL;
    snprintf(where, sizeof where, "ivshmem region %s", vmpi_region.path);
    return where;
}

/* Sets up pairs with the peers, given every rank of this job in the area
 * (the group, in world-rank order). Not collective: the detector joined
 * the area. */
static void iv_init(const struct vmpi_chan_up *up, const struct vmpi_chan_setup *s)
{
    const int *worlds = s->peers, *group = s->group;
    int n = s->npeers, ngroup = s->ngroup, me = s->me;
    inst.up = up;
    if (!dir.joined) {
        if (n)
            vmpi_fatal("ivshmem: rank %d shares the region with this rank but the job's area "
                       "was not joined",
                       worlds[0]);
        return;
    }
    if (ngroup > (int)dir.nlocal)
        vmpi_fatal("%s: %d ranks of this job share the area, sized for %u", where, ngroup,
                   dir.nlocal);
    if (ngroup > 1 && me >= 0) {
        area_group = malloc((size_t)ngroup * sizeof *area_group);
        if (!area_group)
            vmpi_fatal("ivshmem: out of memory");
        memcpy(area_group, group, (size_t)ngroup * sizeof *area_group);
        area_ngroup = ngroup;
    }
    inst.ncells = dir.ncells;
    inst.nslots = dir.nslots;
    inst.slot_bytes = dir.slot_bytes;
    inst.split_min = vmpi_knob_num("VMPI_IVSHMEM_SPLIT_MIN");
    if (vmpi_ivshmem_integrity() && n)
        vmpi_pair_sum_on(&inst, dir.secret);
    size_t eager_max = vmpi_knob_num("VMPI_IVSHMEM_EAGER_MAX");
    if (dir.heap_bytes) {
        heap_lo = dir.heap_off + (uint64_t)me * dir.heap_bytes;
        heap = vmpi_region.area + heap_lo;
        blks = malloc(sizeof *blks);
        if (!blks)
            vmpi_fatal("ivshmem: out of memory");
        blks[0] = (struct blk){0, dir.heap_bytes, false};
        nblks = 1;
    }
    inst.peers = calloc(n ? (size_t)n : 1, sizeof *inst.peers);
    if (!inst.peers)
        vmpi_fatal("ivshmem: out of memory");
    inst.npeers = 0;
    char *chan = vmpi_region.area + dir.chan_off;
    for (int i = 0; i < n; i++) {
        int j = 0;
        while (j < ngroup && group[j] != worlds[i])
            j++;
        if (j == ngroup)
            vmpi_fatal("ivshmem: rank %d is not in this host's area", worlds[i]);
        struct vmpi_pair_peer *p = &inst.peers[inst.npeers++];
        p->lo = dir.heap_off + (uint64_t)j * dir.heap_bytes;
        p->hi = p->lo + dir.heap_bytes;
        p->single = p->single_seen = true;
        vmpi_pair_attach(&inst, p, worlds[i],
                         chan + dir.pair_stride * ((uint64_t)me * dir.nlocal + (uint64_t)j),
                         chan + dir.pair_stride * ((uint64_t)j * dir.nlocal + (uint64_t)me),
                         eager_max);
    }
}

/* MPI_Alloc_mem from this rank's heap slice in the region: NULL when there
 * is no region or no room. */
static void *iv_alloc(size_t n)
{
    if (!heap)
        return NULL;
    uint64_t need = ((uint64_t)(n ? n : 1) + VMPI_CACHELINE - 1) & ~(uint64_t)(VMPI_CACHELINE - 1);
    for (size_t i = 0; i < nblks; i++) {
        if (blks[i].used || blks[i].len < need)
            continue;
        if (blks[i].len > need) {
            struct blk *b = realloc(blks, (nblks + 1) * sizeof *b);
            if (!b)
                return NULL;
            blks = b;
            memmove(&blks[i + 2], &blks[i + 1], (nblks - i - 1) * sizeof *b);
            blks[i + 1] = (struct blk){blks[i].off + need, blks[i].len - need, false};
            blks[i].len = need;
            nblks++;
        }
        blks[i].used = true;
        return heap + blks[i].off;
    }
    return NULL;
}

static bool iv_free(void *ptr)
{
    char *c = ptr;
    if (!heap || c < heap || c >= heap + dir.heap_bytes)
        return false;
    uint64_t off = (uint64_t)(c - heap);
    size_t i = 0;
    while (i < nblks && (blks[i].off != off || !blks[i].used))
        i++;
    if (i == nblks)
        return false;
    blks[i].used = false;
    /* Merge with free neighbours so the slice does not fragment. */
    if (i + 1 < nblks && !blks[i + 1].used) {
        blks[i].len += blks[i + 1].len;
        memmove(&blks[i + 1], &blks[i + 2], (nblks - i - 2) * sizeof *blks);
        nblks--;
    }
    if (i > 0 && !blks[i - 1].used) {
        blks[i - 1].len += blks[i].len;
        memmove(&blks[i], &blks[i + 1], (nblks - i - 1) * sizeof *blks);
        nblks--;
    }
    return true;
}

static const struct vmpi_chan_mem iv_mem = {
    .alloc = iv_alloc,
    .free = iv_free,
    .expose = iv_expose,
    .map = iv_map,
};

const struct vmpi_chan vmpi_ivshmem_chan = {
    .name = "ivshmem",
    .reach = VMPI_REACH_REGION,
    .init = iv_init,
    .add_peer = iv_add_peer,
    VMPI_PAIR_CHAN_OPS,
    .poll = iv_poll,
    .busy = iv_busy,
    .finalize = iv_finalize,
    .describe = iv_describe,
    .cslot = iv_cslot,
    .mem = &iv_mem,
    .stats = &inst.stats,
};
