/* smp channel: ranks in the same VM.
 *
 * One segment per VM, created by the VM's lowest rank and unlinked as soon
 * as every local rank has mapped it. It holds one collective slot per local
 * rank (shm/cslot.h) and one pair block (the protocol of channel/pair/) per
 * ordered pair of local ranks. A rendezvous moves data
 * with one process_vm_readv (CMA) by the receiver, shared with the sender's
 * process_vm_writev for large messages; if the kernel refuses (ptrace rules)
 * or VMPI_SMP_CMA=0, the sender streams it through the bulk slots instead. */
#include "../pair/pair.h"
#include "../../pmi/pmi.h"
#include "../../shm/cslot.h"
#include "../../shm/seg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
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

static int smp_poll(void)
{
    return vmpi_pair_poll(&inst);
}

static bool smp_busy(void)
{
    return vmpi_pair_busy(&inst);
}

static void smp_finalize(void)
{
    vmpi_pair_finalize(&inst);
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
    uint32_t ncells = (uint32_t)vmpi_knob_num("VMPI_SMP_RING_CELLS");
    if (ncells & (ncells - 1))
        vmpi_fatal("VMPI_SMP_RING_CELLS=%u is not a power of two", ncells);
    uint32_t ns = (uint32_t)vmpi_knob_num("VMPI_SMP_BULK_SLOTS");
    uint64_t sb = vmpi_knob_num("VMPI_SMP_BULK_SLOT_BYTES") & ~63ull;
    bool cma = vmpi_knob_num("VMPI_SMP_CMA") != 0;
    inst.split_min = vmpi_knob_num("VMPI_SMP_SPLIT_MIN");
    size_t eager_max = vmpi_knob_num("VMPI_SMP_EAGER_MAX");

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

const struct vmpi_chan vmpi_smp_chan = {
    .name = "smp",
    .reach = VMPI_REACH_VM,
    .init = smp_init,
    .add_peer = smp_add_peer,
    VMPI_PAIR_CHAN_OPS,
    .poll = smp_poll,
    .busy = smp_busy,
    .finalize = smp_finalize,
    .cslot = smp_cslot,
    .stats = &inst.stats,
};
