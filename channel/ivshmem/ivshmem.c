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
 * rank's slice before a byte is copied. */
#include "ivshmem.h"
#include "../pair/pair.h"
#include "../../shm/cslot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct vmpi_area_hdr dir;
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
static struct vmpi_pair_inst inst = {.chan = &vmpi_ivshmem_chan, .ops = &iv_ops, .where = where};

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
    free(area_group);
    area_group = NULL;
    area_ngroup = 0;
    vmpi_region_close();
}

struct vmpi_cslot *vmpi_ivshmem_cslot(int world)
{
    for (int i = 0; i < area_ngroup; i++)
        if (area_group[i] == world)
            return (struct vmpi_cslot *)(vmpi_region.area + dir.cslot_off +
                                         (uint64_t)i * VMPI_CSLOT_BYTES);
    return NULL;
}

bool vmpi_ivshmem_heap_off(const void *p, size_t n, uint64_t *off)
{
    uint64_t a = iv_addr_of(p, n);
    if (a == VMPI_PAIR_NOADDR)
        return false;
    *off = a;
    return true;
}

void *vmpi_ivshmem_heap_ptr(int world, uint64_t off, uint64_t n)
{
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

const struct vmpi_chan vmpi_ivshmem_chan = {
    .name = "ivshmem",
    .send = vmpi_pair_send,
    .reserve = vmpi_pair_reserve,
    .commit = vmpi_pair_commit,
    .send_ctl = vmpi_pair_send_ctl,
    .rndv_send = vmpi_pair_rndv_send,
    .rndv_recv = vmpi_pair_rndv_recv,
    .poll = iv_poll,
    .busy = iv_busy,
    .finalize = iv_finalize,
};

static uint64_t page_up(uint64_t v)
{
    return (v + 4095) & ~4095ull;
}

/* Half the region, less this job's tables and channels (everything before
 * d->heap_off), shared by its ranks on this host (so a second job of the
 * same shape still fits), between 16 MiB and 1 GiB per rank: window memory
 * across VMs comes from here. Every rank maps the same region, so all
 * compute the same value. */
static uint64_t default_heap(const struct vmpi_area_hdr *d)
{
    uint64_t n = d->nlocal ? d->nlocal : 1;
    uint64_t half = vmpi_region.size / 2;
    uint64_t h = half > d->heap_off ? (half - d->heap_off) / n : 0;
    h = h < (16u << 20) ? 16u << 20 : h > (1u << 30) ? 1u << 30 : h;
    return h & ~4095ull;
}

void vmpi_ivshmem_plan(struct vmpi_area_hdr *d, int nranks, int nlocal)
{
    memset(d, 0, sizeof *d);
    d->magic = VMPI_AREA_MAGIC;
    d->version = VMPI_AREA_VERSION;
    d->nranks = (uint32_t)nranks;
    d->nlocal = (uint32_t)nlocal;
    d->nvm = nlocal < 254 ? (uint32_t)nlocal : 254;
    d->ncells = (uint32_t)vmpi_env_u64("VMPI_IVSHMEM_RING_CELLS", 2048, 64, 1u << 20);
    if (d->ncells & (d->ncells - 1))
        vmpi_fatal("VMPI_IVSHMEM_RING_CELLS=%u is not a power of two", d->ncells);
    d->nslots = (uint32_t)vmpi_env_u64("VMPI_IVSHMEM_BULK_SLOTS", 8, 2, 1024);
    d->slot_bytes = vmpi_env_u64("VMPI_IVSHMEM_BULK_SLOT_BYTES", 65536, 4096, 1u << 26) & ~63ull;
    d->pair_stride = vmpi_pair_stride(d->ncells, d->nslots, d->slot_bytes);
    d->vmtab_off = sizeof *d;
    d->vmlist_off = d->vmtab_off + 8ull * d->nvm;
    d->cslot_off = page_up(d->vmlist_off + (uint64_t)nranks);
    d->cslot_bytes = VMPI_CSLOT_BYTES;
    d->chan_off = d->cslot_off + (uint64_t)nlocal * VMPI_CSLOT_BYTES;
    d->heap_off = d->chan_off + (uint64_t)nlocal * (uint64_t)nlocal * d->pair_stride;
    d->heap_bytes = page_up(vmpi_env_u64("VMPI_IVSHMEM_HEAP", default_heap(d), 0, 1ull << 36));
    d->area_bytes = d->heap_off + (uint64_t)nlocal * d->heap_bytes;
}

void vmpi_ivshmem_area_init(char *area, void *arg)
{
    const struct vmpi_area_hdr *d = arg;
    memset(area, 0, d->chan_off);
    memcpy(area, d, sizeof *d);
    for (uint64_t i = 0; i < (uint64_t)d->nlocal * d->nlocal; i++)
        vmpi_pair_clear(area + d->chan_off + i * d->pair_stride, d->ncells, d->nslots,
                        d->slot_bytes);
}

void vmpi_ivshmem_area_dir(struct vmpi_area_hdr *d, int nranks)
{
    snprintf(where, sizeof where, "ivshmem region %s", vmpi_region.path);
    memcpy(d, vmpi_region.area, sizeof *d);
    uint64_t pairs, heaps, end;
    bool ok = d->magic == VMPI_AREA_MAGIC && d->version == VMPI_AREA_VERSION &&
              d->nranks == (uint32_t)nranks && d->nlocal >= 1 && d->nlocal <= d->nranks &&
              d->nlocal <= 65536 && d->nvm >= 1 && d->nvm <= 254 && d->ncells >= 64 &&
              d->ncells <= (1u << 20) && !(d->ncells & (d->ncells - 1)) && d->nslots >= 2 &&
              d->nslots <= 1024 && d->slot_bytes >= 4096 && d->slot_bytes <= (1u << 26) &&
              d->slot_bytes % 64 == 0 && d->heap_bytes % 4096 == 0 &&
              d->pair_stride >= vmpi_pair_stride(d->ncells, d->nslots, d->slot_bytes) &&
              d->pair_stride % 4096 == 0 && d->vmtab_off == sizeof *d &&
              d->vmlist_off == d->vmtab_off + 8ull * d->nvm &&
              d->cslot_bytes == VMPI_CSLOT_BYTES &&
              d->cslot_off >= d->vmlist_off + d->nranks && d->cslot_off % 4096 == 0 &&
              d->chan_off >= d->cslot_off &&
              d->chan_off - d->cslot_off >= (uint64_t)d->nlocal * VMPI_CSLOT_BYTES &&
              d->chan_off % 4096 == 0 &&
              !__builtin_mul_overflow((uint64_t)d->nlocal * d->nlocal, d->pair_stride, &pairs) &&
              d->heap_off >= d->chan_off && d->heap_off - d->chan_off >= pairs &&
              d->heap_off % 4096 == 0 &&
              !__builtin_mul_overflow((uint64_t)d->nlocal, d->heap_bytes, &heaps) &&
              !__builtin_add_overflow(d->heap_off, heaps, &end) && end <= d->area_bytes &&
              d->area_bytes <= vmpi_region.area_bytes;
    if (!ok)
        vmpi_fatal("%s: the directory of this job's area is corrupt or from another vmpi",
                   where);
    dir = *d;
}

void vmpi_ivshmem_init(const int *worlds, int n, const int *group, int ngroup, int me)
{
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
    inst.split_min = vmpi_env_u64("VMPI_IVSHMEM_SPLIT_MIN", 131072, 8192, UINT64_MAX);
    size_t eager_max = vmpi_env_u64("VMPI_IVSHMEM_EAGER_MAX", 8192, 0, 1u << 26);
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

bool vmpi_ivshmem_active(void)
{
    return inst.npeers > 0;
}

void *vmpi_ivshmem_alloc(size_t n)
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

bool vmpi_ivshmem_free(void *ptr)
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
