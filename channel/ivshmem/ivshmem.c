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
 * Processes of other jobs (dynamic processes) in another VM of the host
 * talk through a pool of pair slots at the end of the PAIRS section of a
 * job's area (channel/pair/pool.h): a process finds the area of the other
 * job in the region's job table (same trust domain, same pair geometry,
 * the other process in the pool's member list), and both ends use the
 * pool of the one with the lower name. They stream rendezvous data through
 * the bulk slots (a heap offset names memory of one area, not the other's).
 * Slots are never given back (so a full pool sends both ends to the
 * network alike). A process whose slot lies in another job's area is one
 * more user of that area until it finalizes, so the area outlives its job
 * while messages in it may be unread; if it is taken back all the same
 * (its heartbeat stopped and a job needed the room), the peer is moved to
 * private memory before it is polled again.
 *
 * With VMPI_INTEGRITY=crc32c the region carries messages only: every ring
 * record and bulk chunk is checksummed (channel/pair/sum.c), and nothing
 * the program computes on lives in the region (no heap slices, so
 * MPI_Alloc_mem and windows take private memory and reach other VMs by
 * messages; no collective slots, so node collectives use messages too).
 * The pool's pairs are keyed by the trust domain's secret, which the
 * process manager puts into the key-value space of each job of the domain
 * (vmpirun does, for the domain it chose), and named by job and rank; a
 * job without it (another process manager, or a domain the user named)
 * gives other jobs no address here, so they meet over the network. Both
 * ends of a pool pair check integrity: their job table entries carry the
 * same trust word. */
#include "ivshmem.h"
#include "../pair/pool.h"
#include "../../pmi/pmi.h"
#include "../../shm/cslot.h"
#include "../../shm/region.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* The pool of a job's area, after its n * n pairs in the PAIRS section
 * when the section is longer than those (so its length says how many
 * slots the pool has):
 *   struct iv_pool                     one page: magic, job, nslots and nlocal,
 *                                      written before the area is published;
 *                                      the claims (pool.h)
 *   _Atomic uint32_t member[nlocal]    area index -> job rank + 1, written by
 *                                      each rank as it joins (0: none)
 *   slots, at POOL_SLOTS_AT(nlocal)    slot i's two blocks at + stride * 2i
 * Another VM may write all of it: a process reads the header and members
 * of another job's pool only to compare them, and indexes nothing by them. */
#define POOL_MAGIC 0x6c6f6f702d766976ull /* "vi-pool" */
#define POOL_NSLOTS 8 /* at most */
struct iv_pool {
    uint64_t magic;
    uint32_t job, nslots;
    uint32_t nlocal, rsvd;
    _Atomic uint64_t claim[POOL_NSLOTS];
    char pad[4096 - 24 - 8 * POOL_NSLOTS];
};
static_assert(sizeof(struct iv_pool) == 4096, "pool header is one page");
#define POOL_SLOTS_AT(n) (sizeof(struct iv_pool) + ((4 * (uint64_t)(n) + 4095) & ~4095ull))

/* A job's pool: where it is in the region, its slots, how many. */
struct pool_ref {
    uint64_t off; /* in its area */
    struct iv_pool *h;
    char *slots;
    uint32_t n;
};

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
    uint64_t pool_off; /* this area's pool, 0 without one */
    uint32_t pool_slots;
    uint32_t trust;    /* this job's trust word (shm/region.h) */
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
static uint32_t job_name; /* this job's name for other jobs */
static size_t eager_knob; /* VMPI_IVSHMEM_EAGER_MAX */

/* Peers of other jobs whose slot lies in their job's pool: the job table
 * entry of that area as found (its first of count), and, once it changed
 * (the area was taken back), the private blocks the peer was moved to. */
static struct far {
    struct vmpi_pair_peer *p;
    struct vmpi_region_chunk *entry;
    uint64_t state, key0;
    uint32_t count;
    char *moved;
    unsigned polls; /* since it was moved */
} *fars;
enum { FAR_AWAIT_POLLS = 64 };
static int nfars;

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
static void far_gate(struct vmpi_pair_peer *p);
static struct vmpi_pair_inst inst = {.ops = &iv_ops, .where = where, .gate = far_gate};

/* Whether f's area is still what it was when f was found. */
static bool far_same(const struct far *f)
{
    return atomic_load_explicit(&f->entry->state, memory_order_acquire) == f->state &&
           f->entry->key[0] == f->key0;
}

/* At finalize: one user less of the area of f's slot, unless it was
 * taken back meanwhile (shm/region.h). */
static void far_release(const struct far *f)
{
    if (!f->moved && far_same(f))
        vmpi_region_release(f->entry, f->state, f->count);
}

/* Moves peers whose slot lay in an area that was freed to private blocks,
 * where they find nothing to read and write nothing shared, before their
 * slot is read again: the chunks may be another job's by now. (From the
 * poll, and from the gate of a send, which core makes only to the peer
 * whose record it handles: never a peer in the middle of its drain.) A
 * peer that something waits for when it is moved ends the job; so does
 * one that a receive or probe names later, looked for from the poll only
 * (`polled`), so that a send's gate reports the send. */
static void far_check(bool polled)
{
    for (int i = 0; i < nfars; i++) {
        struct far *f = &fars[i];
        struct vmpi_pair_peer *p = f->p;
        /* A receive from a peer that is gone would wait until the job's
         * timeout: looked for now and then (a scan of the posted ones). */
        if (f->moved) {
            if (polled && ++f->polls % FAR_AWAIT_POLLS == 0 && inst.up->awaits(p->world))
                vmpi_fatal("%s: a receive or probe waits for %s, whose job's area of the region "
                           "was taken back (that job has ended, or someone rewrote the region's "
                           "table)",
                           where, p->name);
            continue;
        }
        if (far_same(f))
            continue;
        /* A transfer under way would go on in private memory, where
         * nobody takes it (or completes a send nobody will read). */
        if (p->out_stream || p->in_stream || p->in_wait || p->bl_head || p->nsplit ||
            inst.up->awaits(p->world))
            vmpi_fatal("%s: %s's job's area of the region was taken back (that job has ended, "
                       "or someone rewrote the region's table) with a transfer between them, "
                       "or a receive from it, under way",
                       where, p->name);
        void *m = mmap(NULL, 2 * dir.pair_stride, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            vmpi_fatal("%s: out of memory", where);
        f->moved = m;
        vmpi_pair_pool_attach(&inst, p, p->world, m, dir.pair_stride, 0, true, p->eager_max);
    }
}

/* The pair layer's gate, before each record to a peer of another job (a
 * message, a control packet, also one that waited for ring room) and
 * before a rendezvous receive from it starts: the area the record goes
 * to, that job's, must still be the one the peer was found in. A peer that
 * was moved is gone, its job ended (or someone rewrote the region's
 * table): what is sent to it could reach nobody, so the send is an error
 * instead of a message lost without a word. (A reclaim needs the area's
 * heartbeat to have stopped for a whole lease, so the area cannot change
 * between this check and the write that follows unless this process stops
 * for that long in between.) */
static void far_gate(struct vmpi_pair_peer *p)
{
    far_check(false);
    for (int i = 0; i < nfars; i++)
        if (fars[i].p == p && fars[i].moved)
            vmpi_fatal("%s: cannot reach %s: its job's area of the region was taken back (that "
                       "job has ended, or someone rewrote the region's table)",
                       where, p->name);
}

static int iv_poll(void)
{
    if (VMPI_UNLIKELY(nfars))
        far_check(true);
    return vmpi_pair_poll(&inst);
}

static bool iv_busy(void)
{
    return vmpi_pair_busy(&inst);
}

static void iv_finalize(void)
{
    vmpi_pair_finalize(&inst);
    for (int i = 0; i < nfars; i++) {
        far_release(&fars[i]);
        if (fars[i].moved)
            munmap(fars[i].moved, 2 * dir.pair_stride);
    }
    free(fars);
    fars = NULL;
    nfars = 0;
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

void vmpi_ivshmem_plan(struct vmpi_area_hdr *d, int nlocal, bool heap_on)
{
    uint32_t ncells, nslots;
    uint64_t sb;
    vmpi_pair_geom("IVSHMEM", (uint64_t)nlocal, 65536, &ncells, &nslots, &sb);
    uint64_t stride = vmpi_pair_stride((uint32_t)ncells, (uint32_t)nslots, sb);
    uint64_t n = (uint64_t)nlocal;
    bool integrity = vmpi_ivshmem_integrity();
    /* The pool takes up to a 16th of the region. */
    uint64_t slots = vmpi_region.size / 16 / (2 * stride);
    slots = slots > POOL_NSLOTS ? POOL_NSLOTS : slots;
    uint64_t pool = slots ? POOL_SLOTS_AT(n) + slots * 2 * stride : 0;
    struct vmpi_area_sec *cs = vmpi_area_add(d, VMPI_AREA_CSLOT, n * VMPI_CSLOT_BYTES);
    struct vmpi_area_sec *pr = vmpi_area_add(d, VMPI_AREA_PAIRS, n * n * stride + pool);
    uint64_t heap = integrity || !heap_on
                        ? 0
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

/* Whether a PAIRS section of n ranks (n <= 65536) describes pairs this
 * process can index, and its pool: pool->n 0 when it has none, else the
 * pool's offset in the area (pool->off). */
static bool pairs_ok(const struct vmpi_area_sec *pr, uint64_t n, struct pool_ref *pool)
{
    uint64_t pairs = 0, stride = pr->param[3], at = POOL_SLOTS_AT(n);
    bool ok = pr->param[0] >= 64 && pr->param[0] <= (1u << 20) &&
              !(pr->param[0] & (pr->param[0] - 1)) && pr->param[1] >= 2 &&
              pr->param[1] <= 1024 && pr->param[2] >= 4096 && pr->param[2] <= (1u << 26) &&
              pr->param[2] % 64 == 0 &&
              stride >= vmpi_pair_stride((uint32_t)pr->param[0], (uint32_t)pr->param[1],
                                         pr->param[2]) &&
              stride % 4096 == 0 && stride <= (1ull << 40) &&
              !__builtin_mul_overflow(n * n, stride, &pairs) && pr->len >= pairs;
    uint64_t rest = ok ? pr->len - pairs : 0;
    *pool = (struct pool_ref){0};
    if (rest >= at + 2 * stride) {
        uint64_t k = (rest - at) / (2 * stride);
        pool->off = pr->off + pairs;
        pool->n = (uint32_t)(k > POOL_NSLOTS ? POOL_NSLOTS : k);
    }
    return ok;
}

void vmpi_ivshmem_area_init(char *area, const struct vmpi_area_hdr *d, bool fresh, uint32_t job)
{
    const struct vmpi_area_sec *cs = vmpi_area_section(d, VMPI_AREA_CSLOT),
                               *pr = vmpi_area_section(d, VMPI_AREA_PAIRS);
    if (!fresh) {
        memset(area + cs->off, 0, cs->len);
        for (uint64_t i = 0; i < (uint64_t)d->nlocal * d->nlocal; i++)
            vmpi_pair_clear(area + pr->off + i * pr->param[3], (uint32_t)pr->param[0],
                            (uint32_t)pr->param[1], pr->param[2]);
    }
    struct pool_ref ref;
    if (!pairs_ok(pr, d->nlocal, &ref) || !ref.n)
        return;
    struct iv_pool *pool = (struct iv_pool *)(area + ref.off);
    if (!fresh)
        memset(pool, 0, POOL_SLOTS_AT(d->nlocal));
    pool->magic = POOL_MAGIC;
    pool->job = job;
    pool->nslots = ref.n;
    pool->nlocal = d->nlocal;
}

void vmpi_ivshmem_area_dir(const struct vmpi_area_hdr *d, uint64_t secret, uint32_t trust,
                           int me, int rank)
{
    snprintf(where, sizeof where, "ivshmem region %s", vmpi_region.path);
    const struct vmpi_area_sec *cs = vmpi_area_section(d, VMPI_AREA_CSLOT),
                               *pr = vmpi_area_section(d, VMPI_AREA_PAIRS),
                               *hp = vmpi_area_section(d, VMPI_AREA_HEAP);
    uint64_t n = d->nlocal, heaps;
    struct pool_ref pool = {0};
    bool ok = cs && pr && hp && n <= 65536 && me >= 0 && (uint64_t)me < n &&
              cs->param[0] == VMPI_CSLOT_BYTES && cs->len >= n * VMPI_CSLOT_BYTES &&
              pairs_ok(pr, n, &pool) && hp->param[0] % 4096 == 0 &&
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
    dir.trust = trust;
    dir.pool_off = pool.n ? pool.off : 0;
    dir.pool_slots = pool.n;
    if (pool.n) {
        _Atomic uint32_t *member =
            (_Atomic uint32_t *)(vmpi_region.area + dir.pool_off + sizeof(struct iv_pool));
        atomic_store_explicit(&member[me], (uint32_t)rank + 1, memory_order_release);
    }
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

/* The pairs' sizes, from the area directory. */
static void inst_geom(void)
{
    inst.ncells = dir.ncells;
    inst.nslots = dir.nslots;
    inst.slot_bytes = dir.slot_bytes;
    inst.split_min = vmpi_knob_num("VMPI_IVSHMEM_SPLIT_MIN");
}

/* Sets up pairs with the peers, given every rank of this job in the area
 * (the group, in world-rank order). Not collective: the detector joined
 * the area. */
static void iv_init(const struct vmpi_chan_up *up, const struct vmpi_chan_setup *s)
{
    const int *worlds = s->peers, *group = s->group;
    int n = s->npeers, ngroup = s->ngroup, me = s->me;
    inst.up = up;
    job_name = s->job;
    eager_knob = vmpi_knob_num("VMPI_IVSHMEM_EAGER_MAX");
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
    inst_geom();
    if (vmpi_ivshmem_integrity() && n)
        vmpi_pair_sum_on(&inst, dir.secret);
    size_t eager_max = eager_knob;
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

/* ---- processes of other jobs in other VMs of the host ----------------------
 * The address says only which region this process joined (the low bits of
 * its id, to skip the search when they differ); the rest is found in the
 * region, where both ends look alike: each finds the other's job area
 * (iv_find), so both see the same two areas and decide alike. */

/* The pool of the area at `area` (bytes long), into pool, when it is job
 * `job`'s, has this process's pair geometry and lists rank `rank`. */
static bool area_pool(char *area, uint64_t bytes, uint32_t job, int rank, struct pool_ref *pool)
{
    struct vmpi_area_hdr d;
    char why[200];
    memcpy(&d, area, sizeof d);
    if (d.nranks > (1u << 24) ||
        vmpi_area_check(area, bytes, (int)d.nranks, &d, why, sizeof why) || d.nlocal > 65536)
        return false;
    const struct vmpi_area_sec *pr = vmpi_area_section(&d, VMPI_AREA_PAIRS);
    if (!pr || !pairs_ok(pr, d.nlocal, pool) || !pool->n || pr->param[0] != dir.ncells ||
        pr->param[1] != dir.nslots || pr->param[2] != dir.slot_bytes ||
        pr->param[3] != dir.pair_stride)
        return false;
    char *at = area + pool->off;
    pool->h = (struct iv_pool *)at;
    pool->slots = at + POOL_SLOTS_AT(d.nlocal);
    if (pool->h->magic != POOL_MAGIC || pool->h->job != job || pool->h->nslots != pool->n ||
        pool->h->nlocal != d.nlocal)
        return false;
    _Atomic uint32_t *member = (_Atomic uint32_t *)(pool->h + 1);
    for (uint32_t k = 0; k < d.nlocal; k++)
        if (atomic_load_explicit(&member[k], memory_order_acquire) == (uint32_t)rank + 1)
            return true;
    return false;
}

/* The pool of the live area of job `job`, of this job's trust domain and
 * integrity mode (its trust word), in which rank `rank` of that job is
 * listed, into pool; its job table entry into f. */
static bool iv_find(uint32_t job, int rank, struct far *f, struct pool_ref *pool)
{
    uint32_t first, n;
    unsigned sh;
    struct vmpi_region_chunk *tab = vmpi_region_table(&first, &n, &sh);
    for (uint32_t i = first; tab && i < n; i++) {
        uint64_t s = atomic_load_explicit(&tab[i].state, memory_order_acquire);
        uint32_t count = *(volatile uint32_t *)&tab[i].count,
                 trust = *(volatile uint32_t *)&tab[i].trust; /* each read once */
        /* an area that is whole and not this job's: its pool's blocks are
         * cleared and written below */
        if (i == vmpi_region.head || VMPI_CHUNK_KIND(s) != VMPI_CHUNK_HEAD || count == 0 ||
            count > n - i || trust != dir.trust || !vmpi_region_area_whole(i, count) ||
            (i < vmpi_region.head + vmpi_region.count && vmpi_region.head < i + count))
            continue;
        if (area_pool(vmpi_region.base + ((size_t)i << sh), (uint64_t)count << sh, job, rank,
                      pool)) {
            *f = (struct far){.entry = &tab[i], .state = s, .key0 = tab[i].key[0],
                              .count = count};
            return true;
        }
    }
    return false;
}

/* The trust domain's secret into key, when the process manager gave one
 * (key "vmpi-domainsecret": 16 hex digits); asked once. */
static bool domain_secret(uint64_t *key)
{
    static int known = -1;
    static uint64_t secret;
    if (known < 0) {
        char v[VMPI_PMI_VALLEN], *end;
        known = !vmpi_pmi_get("vmpi-domainsecret", v, sizeof v) && strlen(v) == 16;
        if (known) {
            secret = strtoull(v, &end, 16);
            known = !*end;
        }
    }
    *key = secret;
    return known;
}

/* Whether this process meets other jobs through its area's pool: it has
 * one, and with integrity checks, the domain's secret to key them. */
static bool far_ready(void)
{
    uint64_t key;
    if (!dir.joined || !dir.pool_off ||
        (vmpi_ivshmem_integrity() && !domain_secret(&key)))
        return false;
    if (!inst.ncells)
        inst_geom(); /* the area was joined after init (a rank alone on its host) */
    if (vmpi_ivshmem_integrity() && !inst.stage)
        vmpi_pair_sum_on(&inst, dir.secret); /* no peer of this job here */
    return true;
}

static size_t iv_address(void *buf, size_t cap)
{
    uint16_t tag = (uint16_t)vmpi_region.uuid;
    if (cap < sizeof tag || !far_ready())
        return 0;
    memcpy(buf, &tag, sizeof tag);
    return sizeof tag;
}

static void *iv_connect(int world, uint32_t job, int rank, const void *addr, size_t alen,
                        size_t *eager_max)
{
    uint16_t tag;
    uint64_t secret;
    if (alen != sizeof tag || rank < 0 || rank >= 1 << 24 || !far_ready())
        return NULL;
    memcpy(&tag, addr, sizeof tag);
    struct far f;
    struct pool_ref pool;
    if (tag != (uint16_t)vmpi_region.uuid || !iv_find(job, rank, &f, &pool))
        return NULL;
    /* The other process is in this region: use the pool of the lower name. */
    uint64_t me = vmpi_pair_pool_name(job_name, vmpi_job.rank),
             them = vmpi_pair_pool_name(job, rank);
    bool owner = me < them;
    uint64_t key[2] = {owner ? me : them, owner ? them : me};
    if (owner) {
        pool.h = (struct iv_pool *)(vmpi_region.area + dir.pool_off);
        pool.slots = (char *)pool.h + POOL_SLOTS_AT(dir.nlocal);
        pool.n = dir.pool_slots;
    }
    int i = vmpi_pair_pool_claim(&inst, pool.h->claim, pool.n, pool.slots, dir.pair_stride,
                                 vmpi_fnv(VMPI_FNV_BASIS, key, sizeof key) | 1);
    if (i < 0)
        return NULL;
    struct far *fs = owner ? fars : realloc(fars, sizeof *fs * (size_t)(nfars + 1));
    struct vmpi_pair_peer *p = vmpi_pair_new_peer(&inst);
    if (!p || (!owner && !fs))
        vmpi_fatal("ivshmem: out of memory");
    fars = fs;
    vmpi_pair_pool_attach(&inst, p, world, pool.slots, dir.pair_stride, i, owner, eager_knob);
    vmpi_pair_peer_of_job(p, job, rank);
    if (inst.stage && domain_secret(&secret))
        vmpi_pair_sum_names(p, secret, me, them);
    if (!owner) {
        f.p = p;
        fars[nfars++] = f;
        vmpi_pair_set_gated(p);
        /* Its area stays until this process is done with it, also when
         * that job ends first with messages it sent still unread. */
        vmpi_region_hold(f.entry);
    }
    *eager_max = p->eager_max;
    return p;
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
    .address = iv_address,
    .connect = iv_connect,
    VMPI_PAIR_CHAN_OPS,
    .poll = iv_poll,
    .busy = iv_busy,
    .finalize = iv_finalize,
    .describe = iv_describe,
    .cslot = iv_cslot,
    .mem = &iv_mem,
    .stats = &inst.stats,
};
