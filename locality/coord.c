/* Communication coordinator: the per-peer channel table.
 *
 * From the placement, every other world rank gets one channel: smp when it
 * shares this rank's VM, else ofi (the network). VMPI_CHANNELS lists the
 * channels allowed (default "smp,ofi"); leaving smp out sends even ranks
 * of one VM over the network, the locality-unaware baseline. The table is
 * vmpi_g.peers: sending to a rank is one indexed load and an indirect call.
 * With VMPI_VERBOSE=1 rank 0 prints the placement and the channel of every
 * pair at start-up. */
#include "locality.h"
#include "../channel/chan.h"
#include "../channel/ofi/ofi.h"
#include "../channel/smp/smp.h"
#include "../core/vmpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CH_SMP = 1, CH_OFI = 2 };

static struct vmpi_placement place;

static unsigned parse_channels(void)
{
    const char *env = getenv("VMPI_CHANNELS");
    if (!env || !*env)
        return CH_SMP | CH_OFI;
    unsigned set = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", env);
    for (char *save = NULL, *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        if (!strcmp(t, "smp"))
            set |= CH_SMP;
        else if (!strcmp(t, "ofi"))
            set |= CH_OFI;
        else
            vmpi_fatal("VMPI_CHANNELS=%s: unknown channel \"%s\" (available: smp, ofi)", env, t);
    }
    if (!set)
        vmpi_fatal("VMPI_CHANNELS=%s names no channel (available: smp, ofi)", env);
    return set;
}

/* The channel between world ranks a and b (a != b) under the policy. */
static int channel_of(unsigned allowed, int a, int b)
{
    if ((allowed & CH_SMP) && place.vm_of[a] == place.vm_of[b])
        return CH_SMP;
    return allowed & CH_OFI ? CH_OFI : 0;
}

static void print_table(unsigned allowed)
{
    int n = vmpi_g.size;
    const char *prov = vmpi_ofi_provider();
    fprintf(stderr, "vmpi: %d ranks; channels %s%s%s", n, allowed & CH_SMP ? "smp" : "",
            allowed == (CH_SMP | CH_OFI) ? "," : "", allowed & CH_OFI ? "ofi" : "");
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
        fprintf(stderr, " %4d", b);
    fprintf(stderr, "\n");
    for (int a = 0; a < n; a++) {
        fprintf(stderr, "vmpi: %4d", a);
        for (int b = 0; b < n; b++) {
            int c = a == b ? 0 : channel_of(allowed, a, b);
            fprintf(stderr, " %4s", a == b ? "self" : c == CH_SMP ? "smp" : "ofi");
        }
        fprintf(stderr, "\n");
    }
    fflush(stderr);
}

int vmpi_locality_init(void)
{
    int n = vmpi_g.size, me = vmpi_g.rank;
    unsigned allowed = parse_channels();
    vmpi_locality_detect(&place);

    int *local = malloc((size_t)n * sizeof *local);
    int *lpids = malloc((size_t)n * sizeof *lpids);
    int *net = malloc((size_t)n * sizeof *net);
    if (!local || !lpids || !net)
        vmpi_fatal("out of memory");
    int nlocal = 0, mine = 0, nnet = 0;
    /* Every rank derives the same answer, so all run the same set-ups. */
    int other = -1; /* a rank outside rank 0's VM, if any */
    for (int r = 1; r < n && other < 0; r++)
        if (place.vm_of[r] != place.vm_of[0])
            other = r;
    bool net_needed = n > 1 && (!(allowed & CH_SMP) || other >= 0);
    if (net_needed && !(allowed & CH_OFI))
        vmpi_fatal("rank %d runs outside the VM of rank 0 and VMPI_CHANNELS=%s gives no "
                   "channel between them (add ofi)",
                   other, getenv("VMPI_CHANNELS"));
    for (int r = 0; r < n; r++) {
        if (r == me || channel_of(allowed, me, r) == CH_SMP) {
            if (r == me)
                mine = nlocal;
            lpids[nlocal] = place.pid[r];
            local[nlocal++] = r;
        } else {
            net[nnet++] = r;
        }
    }
    /* Both set-ups are collective (PMI barriers), so every rank runs them. */
    vmpi_smp_init(local, lpids, nlocal, mine);
    vmpi_ofi_init(net, nnet, net_needed);
    /* A network poll is a system call with TCP providers, hundreds of ns,
     * while a shared-memory poll is a few loads: with peers on both, the
     * network is polled on every 16th progress call, which costs network
     * messages a few smp polls (well under their latency) and keeps
     * shared-memory latency at its own level. */
    vmpi_g.net_poll_mask = nlocal > 1 ? 15 : 0;
    const char *verbose = getenv("VMPI_VERBOSE");
    if (me == 0 && verbose && atoi(verbose) > 0)
        print_table(allowed);
    free(local);
    free(lpids);
    free(net);
    return 0;
}

void vmpi_locality_finalize(void)
{
    vmpi_smp_chan.finalize();
    vmpi_ofi_chan.finalize();
    vmpi_locality_placement_free(&place);
}

int vmpi_locality_shared_id(int world_rank)
{
    return place.vm_of[world_rank];
}
