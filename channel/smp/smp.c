/* smp channel: ranks in the same VM.
 *
 * One segment per VM, created by the VM's lowest rank and unlinked as soon
 * as every local rank has mapped it. It holds one collective slot per local
 * rank (shm/cslot.h) and one pair block (the protocol of channel/pair/) per
 * ordered pair of local ranks. A rendezvous moves data
 * with one process_vm_readv (CMA) by the receiver, shared with the sender's
 * process_vm_writev for large messages; if the kernel refuses (ptrace rules)
 * or VMPI_SMP_CMA=0, the sender streams it through the bulk slots instead. */
#include "../pair/pool.h"
#include "../../pmi/pmi.h"
#include "../../shm/cslot.h"
#include "../../shm/seg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* Segment layout:
 *   struct smp_seg_hdr                  (one page)
 *   struct vmpi_cslot[nlocal]           collective slot of local rank i
 *   pairs, from SMP_PAIRS(nlocal):      pair (from, to) at
 *                                       hdr.pair_stride * (from * nlocal + to)
 * Sizes are chosen by the creator and read back by the others. */
#define SMP_MAGIC 0x766d70692d736d70ull /* "vmpi-smp" */
#define SMP_VERSION 4
struct smp_seg_hdr {
    uint64_t magic;
    uint32_t version, nlocal;
    uint32_t ncells, nslots;
    uint64_t slot_bytes;
    uint64_t pair_stride;
    uint64_t cslot_bytes; /* VMPI_CSLOT_BYTES of the creator */
    char pad[4096 - 48];
};
#define SMP_PAIRS(nlocal) (sizeof(struct smp_seg_hdr) + (uint64_t)(nlocal)*VMPI_CSLOT_BYTES)
static_assert(sizeof(struct smp_seg_hdr) == 4096, "segment header is one page");

static uint64_t smp_addr_of(const void *buf, size_t n)
{
    (void)n;
    return (uint64_t)(uintptr_t)buf;
}

/* Moves n bytes between local and remote memory of p's process (read or
 * write); false if the kernel refuses single copies, fatal on other errors. */
static bool smp_copy(struct vmpi_pair_peer *p, char *local, uint64_t remote, size_t n, bool write)
{
    size_t done = 0;
    while (done < n) {
        struct iovec l = {local + done, n - done};
        struct iovec rem = {(void *)(uintptr_t)(remote + done), n - done};
        ssize_t got = write ? process_vm_writev(p->pid, &l, 1, &rem, 1, 0)
                            : process_vm_readv(p->pid, &l, 1, &rem, 1, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            if (done == 0 && (errno == EPERM || errno == ENOSYS || errno == EACCES))
                return false;
            vmpi_fatal("smp: process_vm_%s with rank %d failed: %s", write ? "writev" : "readv",
                       p->world, strerror(got < 0 ? errno : EIO));
        }
        done += (size_t)got;
    }
    return true;
}

static const struct vmpi_pair_ops smp_ops = {smp_addr_of, smp_copy};
static struct vmpi_pair_inst inst = {.ops = &smp_ops, .where = "smp"};
static char *seg;
static size_t seg_size;
static int *seg_worlds; /* local index -> world rank */
static int seg_nlocal;

#define POOL_MAGIC 0x766d70692d706f6full /* "vmpi-poo" */
#define POOL_SLOTS 64

/* Pool layout: this header (one page), then slot i's two pair blocks at
 * POOL_HDR + stride * 2i (owner to other) and + stride (other to owner).
 * claim[i]: channel/pair/pool.h, keyed by the other's name. */
struct pool_hdr {
    uint64_t magic, nonce;
    uint32_t geom, nslots;
    uint64_t stride;
    _Atomic uint64_t claim[POOL_SLOTS];
    char pad[4096 - 32 - 8 * POOL_SLOTS];
};
static_assert(sizeof(struct pool_hdr) == 4096, "pool header is one page");
#define POOL_HDR sizeof(struct pool_hdr)

/* What the address holds: its VM, pair geometry and pool. */
struct dyn_addr {
    uint64_t vm, nonce;
    int32_t pid, fd;
    uint32_t geom;
} __attribute__((packed));
static_assert(sizeof(struct dyn_addr) == 28, "smp address is 28 bytes");

static struct {
    struct dyn_addr me;
    struct pool_hdr *pool;  /* this process's, or NULL before its address */
    size_t pool_bytes;
    struct dyn_map {        /* pools of others mapped here */
        int32_t pid;
        uint64_t nonce;
        struct pool_hdr *h;
    } *maps;
    int nmaps;
    size_t eager_max;
    bool cma;
    uint32_t job; /* this job's name for other jobs */
} dyn;

static int smp_poll(void)
{
    return vmpi_pair_poll(&inst);
}

static bool smp_busy(void)
{
    return vmpi_pair_busy(&inst);
}

static void dyn_finalize(void);

static void smp_finalize(void)
{
    vmpi_pair_finalize(&inst);
    dyn_finalize();
    vmpi_shm_detach(seg, seg_size);
    seg = NULL;
    free(seg_worlds);
    seg_worlds = NULL;
    seg_nlocal = 0;
}

static struct vmpi_cslot *smp_cslot(int world)
{
    if (!seg)
        return NULL;
    for (int i = 0; i < seg_nlocal; i++)
        if (seg_worlds[i] == world)
            return (struct vmpi_cslot *)(seg + sizeof(struct smp_seg_hdr) +
                                         (uint64_t)i * VMPI_CSLOT_BYTES);
    return NULL;
}

static void *smp_add_peer(int world, size_t *eager_max)
{
    return vmpi_pair_add_peer(&inst, world, eager_max);
}

/* Collective over all ranks of the job (two PMI barriers); the group is
 * this VM's ranks. */
static void smp_init(const struct vmpi_chan_up *up, const struct vmpi_chan_setup *s)
{
    const int *worlds = s->group;
    int nlocal = s->ngroup, me = s->me;
    inst.up = up;
    uint32_t ncells, ns;
    uint64_t sb;
    vmpi_pair_geom("SMP", (uint64_t)nlocal, 32768, &ncells, &ns, &sb);
    bool cma = vmpi_knob_num("VMPI_SMP_CMA") != 0;
    inst.split_min = vmpi_knob_num("VMPI_SMP_SPLIT_MIN");
    size_t eager_max = vmpi_knob_num("VMPI_SMP_EAGER_MAX");
    dyn.eager_max = eager_max;
    dyn.cma = cma;
    dyn.job = s->job;

    char name[128];
    if (vmpi_shm_name(name, sizeof name, vmpi_job.id, "smp") ||
        (size_t)snprintf(name + strlen(name), sizeof name - strlen(name), "%d", worlds[0]) >=
            sizeof name - strlen(name))
        vmpi_fatal("smp: job id too long for a segment name");
    uint64_t stride = vmpi_pair_stride(ncells, ns, sb);
    size_t size = SMP_PAIRS(nlocal) + stride * (uint64_t)nlocal * (uint64_t)nlocal;

    if (nlocal > 1 && me == 0) {
        seg = vmpi_shm_create(name, size);
        if (!seg)
            vmpi_fatal("smp: cannot create shared segment %s (%zu bytes): %s", name, size,
                       strerror(errno));
        struct smp_seg_hdr *hd = (struct smp_seg_hdr *)seg;
        hd->magic = SMP_MAGIC;
        hd->version = SMP_VERSION;
        hd->nlocal = (uint32_t)nlocal;
        hd->ncells = ncells;
        hd->nslots = ns;
        hd->slot_bytes = sb;
        hd->pair_stride = stride;
        hd->cslot_bytes = VMPI_CSLOT_BYTES;
    }
    if (vmpi_pmi_fence())
        vmpi_fatal("smp: PMI barrier failed");
    if (nlocal > 1 && me != 0) {
        seg = vmpi_shm_attach(name, sizeof(struct smp_seg_hdr));
        if (!seg)
            vmpi_fatal("smp: cannot map shared segment %s: %s", name, strerror(errno));
        struct smp_seg_hdr hd = *(struct smp_seg_hdr *)seg;
        vmpi_shm_detach(seg, sizeof hd);
        if (hd.magic != SMP_MAGIC || hd.version != SMP_VERSION || hd.nlocal != (uint32_t)nlocal ||
            hd.cslot_bytes != VMPI_CSLOT_BYTES)
            vmpi_fatal("smp: segment %s has an unexpected header", name);
        ncells = hd.ncells;
        ns = hd.nslots;
        sb = hd.slot_bytes;
        stride = hd.pair_stride;
        /* The creator's sizes must describe a layout we can index safely. */
        if (ncells < 64 || (ncells & (ncells - 1)) || ncells > (1u << 20) || ns < 2 ||
            ns > 1024 || sb < 4096 || sb % 64 || sb > (1u << 26) ||
            stride < vmpi_pair_stride(ncells, ns, sb) ||
            stride > (1ull << 40) / ((uint64_t)nlocal * (uint64_t)nlocal))
            vmpi_fatal("smp: segment %s describes an impossible layout", name);
        size = SMP_PAIRS(nlocal) + stride * (uint64_t)nlocal * (uint64_t)nlocal;
        seg = vmpi_shm_attach(name, size);
        if (!seg)
            vmpi_fatal("smp: cannot map shared segment %s: %s", name, strerror(errno));
    }
    if (vmpi_pmi_fence())
        vmpi_fatal("smp: PMI barrier failed");
    if (nlocal > 1 && me == 0)
        vmpi_shm_unlink(name);

    seg_size = size;
    if (nlocal > 1) {
        seg_worlds = malloc((size_t)nlocal * sizeof *seg_worlds);
        if (!seg_worlds)
            vmpi_fatal("smp: out of memory");
        memcpy(seg_worlds, worlds, (size_t)nlocal * sizeof *seg_worlds);
        seg_nlocal = nlocal;
    }
    inst.ncells = ncells;
    inst.nslots = ns;
    inst.slot_bytes = sb;
    inst.peers = calloc(nlocal > 1 ? (size_t)nlocal - 1 : 1, sizeof *inst.peers);
    if (!inst.peers)
        vmpi_fatal("smp: out of memory");
    inst.npeers = 0;
    for (int i = 0; i < nlocal; i++) {
        if (i == me)
            continue;
        struct vmpi_pair_peer *p = &inst.peers[inst.npeers++];
        char *out = seg + SMP_PAIRS(nlocal) + stride * ((uint64_t)me * nlocal + i);
        char *in = seg + SMP_PAIRS(nlocal) + stride * ((uint64_t)i * nlocal + me);
        p->pid = s->pid[worlds[i]];
        p->single = cma;
        vmpi_pair_attach(&inst, p, worlds[i], out, in, eager_max);
    }
}

/* ---- processes of other jobs in this VM (dynamic processes) ----------------
 * A process's address for other jobs carries its pool: a memfd of
 * POOL_SLOTS pair slots, made with the address and kept open until
 * MPI_Finalize, which others of its VM (same kernel, namespaces and user)
 * map through /proc/<pid>/fd/<fd> (nothing named, so nothing is left
 * behind). Two processes of different jobs in one VM talk through a slot
 * of the pool of the one with the lower name, claimed as channel/pair/pool.h
 * says. Both decide from the two addresses alone (same VM, same pair
 * geometry) and from the pool: a full pool sends both to the next channel. */

/* Processes with the same value share /dev/shm, System V IPC, pids and a
 * user: the kernel's boot id and the namespaces' inodes. */
static uint64_t vm_id(void)
{
    uint64_t ids[5] = {vmpi_self_boot(), vmpi_self_ns("mnt"), vmpi_self_ns("ipc"),
                       vmpi_self_ns("pid"), (uint64_t)getuid()};
    uint64_t h = vmpi_fnv(VMPI_FNV_BASIS, ids, sizeof ids);
    return h ? h : 1;
}

static size_t smp_address(void *buf, size_t cap)
{
    if (cap < sizeof dyn.me)
        return 0;
    if (!dyn.pool) {
        uint64_t stride = vmpi_pair_stride(inst.ncells, inst.nslots, inst.slot_bytes);
        uint32_t g[4] = {inst.ncells, inst.nslots, (uint32_t)inst.slot_bytes,
                         (uint32_t)(inst.slot_bytes >> 32)};
        size_t bytes = POOL_HDR + 2 * POOL_SLOTS * stride;
        int fd = memfd_create("vmpi-smp-pool", MFD_CLOEXEC);
        void *m = fd < 0 || ftruncate(fd, (off_t)bytes)
                      ? MAP_FAILED
                      : mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) {
            if (fd >= 0)
                close(fd);
            return 0;
        }
        dyn.pool = m;
        dyn.pool_bytes = bytes;
        dyn.me = (struct dyn_addr){.vm = vm_id(), .pid = (int32_t)getpid(), .fd = fd,
                                   .geom = (uint32_t)vmpi_fnv(VMPI_FNV_BASIS, g, sizeof g)};
        if (getrandom(&dyn.me.nonce, sizeof dyn.me.nonce, 0) != (ssize_t)sizeof dyn.me.nonce)
            dyn.me.nonce = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
        dyn.pool->magic = POOL_MAGIC;
        dyn.pool->nonce = dyn.me.nonce;
        dyn.pool->geom = dyn.me.geom;
        dyn.pool->nslots = POOL_SLOTS;
        dyn.pool->stride = stride;
    }
    memcpy(buf, &dyn.me, sizeof dyn.me);
    return sizeof dyn.me;
}

/* The pool of the process at a (checked against what a says), mapped. */
static struct pool_hdr *pool_of(const struct dyn_addr *a)
{
    for (int i = 0; i < dyn.nmaps; i++)
        if (dyn.maps[i].pid == a->pid && dyn.maps[i].nonce == a->nonce)
            return dyn.maps[i].h;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)a->pid, (int)a->fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat st;
    void *m = MAP_FAILED;
    if (fd >= 0 && fstat(fd, &st) == 0 && (size_t)st.st_size == dyn.pool_bytes)
        m = mmap(NULL, dyn.pool_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int err = errno;
    if (fd >= 0)
        close(fd);
    struct pool_hdr *h = m == MAP_FAILED ? NULL : m;
    if (!h || h->magic != POOL_MAGIC || h->nonce != a->nonce || h->geom != dyn.me.geom ||
        h->nslots != POOL_SLOTS || h->stride != dyn.pool->stride)
        vmpi_fatal("smp: cannot use the pair pool of process %d of this VM (%s): %s", (int)a->pid,
                   path, !h ? strerror(err) : "it is not the one its address names");
    struct dyn_map *mp = realloc(dyn.maps, sizeof *mp * (size_t)(dyn.nmaps + 1));
    if (!mp)
        vmpi_fatal("smp: out of memory");
    dyn.maps = mp;
    dyn.maps[dyn.nmaps++] = (struct dyn_map){a->pid, a->nonce, h};
    return h;
}

static void *smp_connect(int world, uint32_t job, int rank, const void *addr, size_t alen,
                         size_t *eager_max)
{
    struct dyn_addr a;
    if (!dyn.pool || alen != sizeof a || rank < 0 || rank >= 1 << 24)
        return NULL;
    memcpy(&a, addr, sizeof a);
    if (a.vm != dyn.me.vm || a.geom != dyn.me.geom || a.pid <= 0 || a.fd < 0)
        return NULL;
    uint64_t me = vmpi_pair_pool_name(dyn.job, vmpi_job.rank),
             them = vmpi_pair_pool_name(job, rank);
    bool owner = me < them;
    struct pool_hdr *h = owner ? dyn.pool : pool_of(&a);
    char *slots = (char *)h + POOL_HDR;
    int i = vmpi_pair_pool_claim(&inst, h->claim, POOL_SLOTS, slots, h->stride,
                                 owner ? them : me);
    if (i < 0)
        return NULL;
    struct vmpi_pair_peer *p = vmpi_pair_new_peer(&inst);
    if (!p)
        vmpi_fatal("smp: out of memory");
    p->pid = a.pid;
    p->single = dyn.cma;
    vmpi_pair_pool_attach(&inst, p, world, slots, h->stride, i, owner, dyn.eager_max);
    *eager_max = p->eager_max;
    return p;
}

static void dyn_finalize(void)
{
    for (int i = 0; i < dyn.nmaps; i++)
        munmap(dyn.maps[i].h, dyn.pool_bytes);
    free(dyn.maps);
    if (dyn.pool) {
        munmap(dyn.pool, dyn.pool_bytes);
        close(dyn.me.fd);
    }
    memset(&dyn, 0, sizeof dyn);
}

const struct vmpi_chan vmpi_smp_chan = {
    .name = "smp",
    .reach = VMPI_REACH_VM,
    .init = smp_init,
    .add_peer = smp_add_peer,
    .address = smp_address,
    .connect = smp_connect,
    VMPI_PAIR_CHAN_OPS,
    .poll = smp_poll,
    .busy = smp_busy,
    .finalize = smp_finalize,
    .cslot = smp_cslot,
    .stats = &inst.stats,
};
