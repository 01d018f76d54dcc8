/* Locality detector and coordinator.
 *
 * Each rank publishes a business card "pid|vm-identity|hostname" in the PMI
 * key-value space. The VM identity is the kernel's boot id plus the inodes
 * of the IPC and mount namespaces (ranks that share both can share
 * /dev/shm), or VMPI_VM_ID when set. Ranks with equal identities share a VM
 * and talk over the smp channel. */
#include "locality.h"
#include "../channel/chan.h"
#include "../channel/smp/smp.h"
#include "../core/vmpi.h"
#include "../pmi/pmi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int *vm_of; /* world rank -> lowest world rank of its VM */

static void vm_identity(char *out, size_t cap)
{
    const char *env = getenv("VMPI_VM_ID");
    if (env && *env) {
        snprintf(out, cap, "%s", env);
    } else {
        char boot[64] = "noboot";
        FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
        if (f) {
            if (!fgets(boot, sizeof boot, f))
                strcpy(boot, "noboot");
            fclose(f);
            boot[strcspn(boot, "\n")] = '\0';
        }
        struct stat ipc = {0}, mnt = {0};
        stat("/proc/self/ns/ipc", &ipc);
        stat("/proc/self/ns/mnt", &mnt);
        snprintf(out, cap, "%s:%lu:%lu", boot, (unsigned long)ipc.st_ino,
                 (unsigned long)mnt.st_ino);
    }
    /* PMI values cannot hold spaces, and '|' separates card fields. */
    for (char *p = out; *p; p++)
        if (*p == ' ' || *p == '|' || *p == '=')
            *p = '_';
}

int vmpi_locality_shared_id(int world_rank)
{
    return vm_of[world_rank];
}

int vmpi_locality_init(void)
{
    int n = vmpi_g.size, me = vmpi_g.rank;
    char key[VMPI_PMI_KEYLEN], card[VMPI_PMI_VALLEN], id[256], host[128];
    vm_identity(id, sizeof id);
    if (gethostname(host, sizeof host))
        strcpy(host, "unknown");
    host[sizeof host - 1] = '\0';
    for (char *p = host; *p; p++)
        if (*p == ' ' || *p == '|')
            *p = '_';
    snprintf(key, sizeof key, "vmpi-card-%d", me);
    snprintf(card, sizeof card, "%ld|%s|%s", (long)getpid(), id, host);
    if (vmpi_pmi_put(key, card) || vmpi_pmi_fence())
        vmpi_fatal("cannot publish this rank's business card through PMI");

    vm_of = malloc((size_t)n * sizeof *vm_of);
    char **ids = calloc((size_t)n, sizeof *ids);
    int *pids = malloc((size_t)n * sizeof *pids);
    if (!vm_of || !ids || !pids)
        vmpi_fatal("out of memory reading business cards");
    for (int r = 0; r < n; r++) {
        snprintf(key, sizeof key, "vmpi-card-%d", r);
        if (vmpi_pmi_get(key, card, sizeof card))
            vmpi_fatal("no business card from rank %d in the PMI key-value space", r);
        char *bar = strchr(card, '|');
        if (!bar)
            vmpi_fatal("malformed business card of rank %d: %s", r, card);
        *bar = '\0';
        pids[r] = atoi(card);
        char *vid = bar + 1;
        char *end = strchr(vid, '|');
        if (end)
            *end = '\0';
        ids[r] = strdup(vid);
        if (!ids[r])
            vmpi_fatal("out of memory reading business cards");
        vm_of[r] = r;
        for (int q = 0; q < r; q++)
            if (!strcmp(ids[q], ids[r])) {
                vm_of[r] = vm_of[q];
                break;
            }
    }

    int *local = malloc((size_t)n * sizeof *local);
    int *lpids = malloc((size_t)n * sizeof *lpids);
    if (!local || !lpids)
        vmpi_fatal("out of memory");
    int nlocal = 0, mine = 0;
    for (int r = 0; r < n; r++)
        if (vm_of[r] == vm_of[me]) {
            if (r == me)
                mine = nlocal;
            lpids[nlocal] = pids[r];
            local[nlocal++] = r;
        }
    const char *chans = getenv("VMPI_CHANNELS");
    if (chans && *chans && !strstr(chans, "smp"))
        vmpi_fatal("VMPI_CHANNELS=%s leaves no channel between ranks of one VM "
                   "(available: smp)", chans);
    vmpi_smp_init(local, lpids, nlocal, mine);
    for (int r = 0; r < n; r++)
        if (r != me && !vmpi_g.peers[r].chan)
            vmpi_fatal("rank %d runs outside this VM and no network channel is built in",
                       r);
    for (int r = 0; r < n; r++)
        free(ids[r]);
    free(ids);
    free(pids);
    free(local);
    free(lpids);
    return 0;
}

void vmpi_locality_finalize(void)
{
    vmpi_smp_chan.finalize();
    free(vm_of);
    vm_of = NULL;
}
