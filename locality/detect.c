/* Locality detector: which ranks share a VM, which share a host.
 *
 * Each rank publishes a business card "pid|vm-identity|host-identity|
 * hostname" in the PMI key-value space. The VM identity is the kernel's
 * boot id plus the inodes of the IPC, mount and network namespaces: ranks
 * that share all of them can share /dev/shm and see each other's pids
 * (VMPI_VM_ID overrides it). The host identity is the boot id plus the
 * network namespace, so the emulated hosts of vmpirun --hosts (one network
 * namespace each) count as different hosts (VMPI_HOST_ID overrides it).
 * Ranks with equal identities share a VM, or a host. */
#include "locality.h"
#include "../core/vmpi.h"
#include "../pmi/pmi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static unsigned long ns_inode(const char *ns)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/self/ns/%s", ns);
    return stat(path, &st) ? 0 : (unsigned long)st.st_ino;
}

/* PMI values cannot hold spaces or '=', and '|' separates card fields. */
static void card_safe(char *s)
{
    for (; *s; s++)
        if (*s == ' ' || *s == '|' || *s == '=')
            *s = '_';
}

static void identities(char *vm, char *host, size_t cap)
{
    char boot[64] = "noboot";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(boot, sizeof boot, f))
            strcpy(boot, "noboot");
        fclose(f);
        boot[strcspn(boot, "\n")] = '\0';
    }
    unsigned long net = ns_inode("net");
    const char *env = getenv("VMPI_VM_ID");
    if (env && *env)
        snprintf(vm, cap, "%s", env);
    else
        snprintf(vm, cap, "%s:%lu:%lu:%lu", boot, ns_inode("ipc"), ns_inode("mnt"), net);
    env = getenv("VMPI_HOST_ID");
    if (env && *env)
        snprintf(host, cap, "%s", env);
    else
        snprintf(host, cap, "%s:%lu", boot, net);
    card_safe(vm);
    card_safe(host);
}

/* Splits the next '|'-separated field off *s. */
static char *field(char **s)
{
    char *f = *s;
    if (!f)
        return NULL;
    char *bar = strchr(f, '|');
    if (bar) {
        *bar = '\0';
        *s = bar + 1;
    } else {
        *s = NULL;
    }
    return f;
}

void vmpi_locality_detect(struct vmpi_placement *pl)
{
    int n = vmpi_g.size;
    char key[VMPI_PMI_KEYLEN], card[VMPI_PMI_VALLEN], vm[256], host[256], name[128];
    identities(vm, host, sizeof vm);
    if (gethostname(name, sizeof name))
        strcpy(name, "unknown");
    name[sizeof name - 1] = '\0';
    card_safe(name);
    snprintf(key, sizeof key, "vmpi-card-%d", vmpi_g.rank);
    snprintf(card, sizeof card, "%ld|%s|%s|%s", (long)getpid(), vm, host, name);
    if (vmpi_pmi_put(key, card) || vmpi_pmi_fence())
        vmpi_fatal("cannot publish this rank's business card through PMI");

    pl->vm_of = malloc((size_t)n * sizeof *pl->vm_of);
    pl->host_of = malloc((size_t)n * sizeof *pl->host_of);
    pl->pid = malloc((size_t)n * sizeof *pl->pid);
    pl->hostname = calloc((size_t)n, sizeof *pl->hostname);
    char **vms = calloc((size_t)n, sizeof *vms), **hosts = calloc((size_t)n, sizeof *hosts);
    if (!pl->vm_of || !pl->host_of || !pl->pid || !pl->hostname || !vms || !hosts)
        vmpi_fatal("out of memory reading business cards");
    for (int r = 0; r < n; r++) {
        snprintf(key, sizeof key, "vmpi-card-%d", r);
        if (vmpi_pmi_get(key, card, sizeof card))
            vmpi_fatal("no business card from rank %d in the PMI key-value space", r);
        char *rest = card, *pid = field(&rest), *v = field(&rest), *h = field(&rest),
             *hn = field(&rest);
        if (!hn)
            vmpi_fatal("malformed business card of rank %d", r);
        pl->pid[r] = atoi(pid);
        vms[r] = strdup(v);
        hosts[r] = strdup(h);
        pl->hostname[r] = strdup(hn);
        if (!vms[r] || !hosts[r] || !pl->hostname[r])
            vmpi_fatal("out of memory reading business cards");
        pl->vm_of[r] = r;
        pl->host_of[r] = r;
        /* The first equal card is the lowest rank of that VM or host. */
        for (int q = 0; q < r && (pl->vm_of[r] == r || pl->host_of[r] == r); q++) {
            if (pl->vm_of[r] == r && !strcmp(vms[q], vms[r]))
                pl->vm_of[r] = q;
            if (pl->host_of[r] == r && !strcmp(hosts[q], hosts[r]))
                pl->host_of[r] = q;
        }
    }
    for (int r = 0; r < n; r++) {
        free(vms[r]);
        free(hosts[r]);
    }
    free(vms);
    free(hosts);
}

void vmpi_locality_placement_free(struct vmpi_placement *pl)
{
    for (int r = 0; pl->hostname && r < vmpi_g.size; r++)
        free(pl->hostname[r]);
    free(pl->hostname);
    free(pl->vm_of);
    free(pl->host_of);
    free(pl->pid);
    *pl = (struct vmpi_placement){0};
}
