/* Communication coordinator: the per-peer channel table.
 *
 * From the placement, every other world rank gets one channel: smp when it
 * shares this rank's VM, ivshmem when it shares this rank's host region
 * (another VM of the host), else ofi (the network). VMPI_CHANNELS lists the
 * channels allowed (default "smp,ivshmem,ofi"); "smp,ofi" sends ranks in
 * different VMs of a host over the virtual network, the locality-unaware
 * baseline, and leaving smp out too sends even ranks of one VM over it. The
 * table is vmpi_g.peers: sending to a rank is one indexed load and an
 * indirect call. With VMPI_VERBOSE=1 rank 0 prints the placement and the
 * channel of every pair at start-up. */
#include "locality.h"
#include "../channel/chan.h"
#include "../channel/ivshmem/ivshmem.h"
#include "../channel/ofi/ofi.h"
#include "../channel/smp/smp.h"
#include "../core/vmpi.h"
#include "../shm/region.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

enum { CH_SMP = 1, CH_IVSHMEM = 2, CH_OFI = 4 };
static const char *const ch_names[] = {"smp", "ivshmem", "ofi"};

static struct vmpi_placement place;
static unsigned allowed;

static unsigned parse_channels(void)
{
    const char *env = getenv("VMPI_CHANNELS");
    if (!env || !*env)
        return CH_SMP | CH_IVSHMEM | CH_OFI;
    unsigned set = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", env);
    for (char *save = NULL, *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        unsigned c = 0;
        for (unsigned k = 0; k < 3; k++)
            if (!strcmp(t, ch_names[k]))
                c = 1u << k;
        if (!c)
            vmpi_fatal("VMPI_CHANNELS=%s: unknown channel \"%s\" (available: smp, ivshmem, ofi)",
                       env, t);
        set |= c;
    }
    if (!set)
        vmpi_fatal("VMPI_CHANNELS=%s names no channel (available: smp, ivshmem, ofi)", env);
    return set;
}

/* The channel between world ranks a and b (a != b) under the policy, or 0. */
static int channel_of(int a, int b)
{
    if ((allowed & CH_SMP) && place.vm_of[a] == place.vm_of[b])
        return CH_SMP;
    if ((allowed & CH_IVSHMEM) && place.region[a] && place.region[a] == place.region[b])
        return CH_IVSHMEM;
    return allowed & CH_OFI ? CH_OFI : 0;
}

static const char *ch_name(int c)
{
    return c == CH_SMP ? "smp" : c == CH_IVSHMEM ? "ivshmem" : "ofi";
}

static void print_table(void)
{
    int n = vmpi_job.size;
    const char *prov = vmpi_ofi_provider();
    fprintf(stderr, "vmpi: %d ranks; channels", n);
    for (unsigned k = 0, sep = ' '; k < 3; k++)
        if (allowed & (1u << k)) {
            fprintf(stderr, "%c%s", sep, ch_names[k]);
            sep = ',';
        }
    if (vmpi_region.base)
        fprintf(stderr, " (ivshmem region %s)", vmpi_region.path);
    if (prov)
        fprintf(stderr, " (ofi provider %s, rendezvous by %s)", prov, vmpi_ofi_rndv_mode());
    fprintf(stderr, "\n");
    for (int r = 0; r < n; r++)
        fprintf(stderr, "vmpi: rank %d: host %d (%s) vm %d pid %d\n", r, place.host_of[r],
                place.hostname[r], place.vm_of[r], place.pid[r]);
    if (n > 64) {
        fprintf(stderr, "vmpi: (channel table omitted for more than 64 ranks)\n");
        return;
    }
    fprintf(stderr, "vmpi: channel from row to column:\nvmpi:     ");
    for (int b = 0; b < n; b++)
        fprintf(stderr, " %7d", b);
    fprintf(stderr, "\n");
    for (int a = 0; a < n; a++) {
        fprintf(stderr, "vmpi: %4d", a);
        for (int b = 0; b < n; b++)
            fprintf(stderr, " %7s", a == b ? "self" : ch_name(channel_of(a, b)));
        fprintf(stderr, "\n");
    }
    fflush(stderr);
}

int vmpi_locality_init(void)
{
    int n = vmpi_job.size, me = vmpi_job.rank;
    allowed = parse_channels();
    vmpi_locality_detect(&place, (allowed & CH_IVSHMEM) != 0);

    int *local = malloc((size_t)n * sizeof *local);
    int *lpids = malloc((size_t)n * sizeof *lpids);
    int *iv = malloc((size_t)n * sizeof *iv);
    int *net = malloc((size_t)n * sizeof *net);
    if (!local || !lpids || !iv || !net)
        vmpi_fatal("out of memory");
    int nlocal = 0, mine = 0, niv = 0, nnet = 0;
    /* Every rank derives the same answer, so all run the same set-ups.
     * Sharing memory (same VM, or same region) is an equivalence, so the
     * network is needed exactly when some rank cannot share with rank 0. */
    int other = -1;
    for (int r = 1; r < n && other < 0; r++)
        if (channel_of(0, r) != CH_SMP && channel_of(0, r) != CH_IVSHMEM)
            other = r;
    bool net_needed = other >= 0;
    if (net_needed && !(allowed & CH_OFI))
        vmpi_fatal("rank %d cannot share memory with rank 0 and VMPI_CHANNELS=%s gives no "
                   "channel between them (add ofi)",
                   other, getenv("VMPI_CHANNELS"));
    for (int r = 0; r < n; r++) {
        int c = r == me ? CH_SMP : channel_of(me, r);
        if (c == CH_SMP) {
            if (r == me)
                mine = nlocal;
            lpids[nlocal] = place.pid[r];
            local[nlocal++] = r;
        } else if (c == CH_IVSHMEM) {
            iv[niv++] = r;
        } else {
            net[nnet++] = r;
        }
    }
    if (niv && place.me_in_group < 0)
        vmpi_fatal("ivshmem: rank %d shares the region with this rank but the job's area was "
                   "not joined",
                   iv[0]);
    /* The set-ups of smp and ofi are collective (PMI barriers), so every
     * rank runs them; ivshmem's area was set up by the detector. */
    vmpi_smp_init(local, lpids, nlocal, mine);
    vmpi_ivshmem_init(iv, niv, place.group, place.ngroup, place.me_in_group);
    vmpi_g.ivshmem = vmpi_ivshmem_active();
    vmpi_ofi_init(net, nnet, net_needed);
    /* A network poll is a system call with TCP providers, hundreds of ns,
     * while a shared-memory poll is a few loads: with peers on both, the
     * network is polled on every 16th progress call, which costs network
     * messages a few shared-memory polls (well under their latency) and
     * keeps shared-memory latency at its own level. */
    vmpi_g.net_poll_mask = nlocal > 1 || niv ? 15 : 0;
    /* More ranks on this machine than processors: a rank that spins while
     * the one it waits for has no processor holds things up for a whole
     * time slice, so idle polling yields now and then. Emulated VMs and
     * hosts share the machine's processors, hence all ranks on this kernel
     * are counted. */
    int onhost = 0;
    for (int r = 0; r < n; r++)
        onhost += place.kernel_of[r] == place.kernel_of[me];
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    vmpi_g.yield_polls = (unsigned)vmpi_env_u64("VMPI_YIELD_POLLS",
                                                 ncpu > 0 && onhost > ncpu ? 1 : 0, 0, 4096);
    const char *verbose = getenv("VMPI_VERBOSE");
    if (me == 0 && verbose && atoi(verbose) > 0)
        print_table();
    free(local);
    free(lpids);
    free(iv);
    free(net);
    return 0;
}

void vmpi_locality_finalize(void)
{
    vmpi_smp_chan.finalize();
    vmpi_ivshmem_chan.finalize();
    vmpi_ofi_chan.finalize();
    vmpi_locality_placement_free(&place);
}

int vmpi_locality_shared_id(int world_rank)
{
    if ((allowed & CH_IVSHMEM) && place.region[world_rank]) {
        /* Every rank of the host can map the region. */
        for (int r = 0; r < world_rank; r++)
            if (place.region[r] == place.region[world_rank])
                return r;
        return world_rank;
    }
    return place.vm_of[world_rank];
}

bool vmpi_locality_shared_region(int world_rank)
{
    return (allowed & CH_IVSHMEM) && place.region[world_rank];
}

bool vmpi_locality_cslots(const int *worlds, int n, struct vmpi_cslot **slots)
{
    bool region = (allowed & CH_IVSHMEM) != 0, vm = (allowed & CH_SMP) != 0;
    for (int i = 0; i < n; i++) {
        region = region && place.region[worlds[i]] && place.region[worlds[i]] == place.region[worlds[0]];
        vm = vm && place.vm_of[worlds[i]] == place.vm_of[worlds[0]];
    }
    if (!region && !vm)
        return false;
    for (int i = 0; i < n; i++)
        if (!(slots[i] = region ? vmpi_ivshmem_cslot(worlds[i]) : vmpi_smp_cslot(worlds[i])))
            return false;
    return true;
}
