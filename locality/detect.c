/* Locality detector: which ranks share a VM, which share a host.
 *
 * Each rank publishes a business card "pid|vm-identity|host-identity|
 * hostname|region|boot-id" in the PMI key-value space. The VM identity is the
 * kernel's boot id plus the inodes of the IPC, mount and network
 * namespaces: ranks that share all of them can share /dev/shm and see each
 * other's pids (VMPI_VM_ID overrides it). The host identity is the id of
 * the host region the rank mapped (every VM of a host maps the same one);
 * without a region it is the boot id plus the network namespace, so the
 * emulated hosts of vmpirun --hosts count as different hosts (VMPI_HOST_ID
 * overrides both). Rank 0's card comes with the job's random 128-bit key.
 *
 * With a region, the ranks of a host then meet in the job's area (claimed
 * under the key by the host's lowest rank): each claims its VM's slot in the
 * VM table (CAS on a hash of the VM identity) and writes slot + 1 at its
 * byte of the VM list. After one more PMI barrier each rank scans the list
 * once: 0 = another host (or no region), its own slot = same VM, another
 * slot = same host, other VM. The list is in memory every VM of the host can
 * write, so its answer must agree with the cards, or the job stops with an
 * error naming the region. A rank alone on its host makes its job's area
 * there only when it first gives its address to another job, which may
 * meet it there (vmpi_locality_join_alone). */
#include "locality.h"
#include "../channel/ivshmem/ivshmem.h"
#include "../pmi/pmi.h"
#include "../shm/area.h"
#include "../shm/region.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* PMI values cannot hold spaces or '=', and '|' separates card fields. */
static void card_safe(char *s)
{
    for (; *s; s++)
        if (*s == ' ' || *s == '|' || *s == '=')
            *s = '_';
}

/* boot: at least 64 bytes. */
static void identities(char *vm, char *host, char *boot, size_t cap, uint64_t region)
{
    strcpy(boot, "noboot");
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(boot, 64, f))
            strcpy(boot, "noboot");
        fclose(f);
        boot[strcspn(boot, "\n")] = '\0';
    }
    unsigned long net = (unsigned long)vmpi_self_ns("net");
    const char *env = vmpi_knob_str("VMPI_VM_ID");
    if (env && *env)
        snprintf(vm, cap, "%s", env);
    else
        snprintf(vm, cap, "%s:%lu:%lu:%lu", boot, (unsigned long)vmpi_self_ns("ipc"),
                 (unsigned long)vmpi_self_ns("mnt"), net);
    env = vmpi_knob_str("VMPI_HOST_ID");
    if (env && *env)
        snprintf(host, cap, "%s", env);
    else if (region)
        snprintf(host, cap, "region-%016llx", (unsigned long long)region);
    else
        snprintf(host, cap, "%s:%lu", boot, net);
    card_safe(vm);
    card_safe(host);
    card_safe(boot);
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

static uint64_t fnv1a(const char *s)
{
    uint64_t h = vmpi_fnv(VMPI_FNV_BASIS, s, strlen(s));
    return h ? h : 1;
}

/* Rank 0 draws the job key, which names the job's area in the region, and
 * with integrity checks on, the secret that keys them, which nobody writes
 * into the region; the others read both after the barrier. */
static void put_key(void)
{
    uint64_t k[3];
    char v[40];
    if (getrandom(k, sizeof k, 0) != (ssize_t)sizeof k)
        vmpi_fatal("getrandom failed drawing the job key");
    snprintf(v, sizeof v, "%016llx%016llx", (unsigned long long)k[0], (unsigned long long)k[1]);
    if (vmpi_pmi_put("vmpi-jobkey", v))
        vmpi_fatal("cannot publish the job key through PMI");
    snprintf(v, sizeof v, "%016llx", (unsigned long long)k[2]);
    if (vmpi_ivshmem_integrity() && vmpi_pmi_put("vmpi-jobsecret", v))
        vmpi_fatal("cannot publish the job's integrity secret through PMI");
}

static uint64_t get_secret(void)
{
    char v[VMPI_PMI_VALLEN];
    if (vmpi_pmi_get("vmpi-jobsecret", v, sizeof v) || strlen(v) != 16)
        vmpi_fatal("no integrity secret from rank 0 in the PMI key-value space");
    return strtoull(v, NULL, 16);
}

static void get_key(uint64_t k[2])
{
    char v[VMPI_PMI_VALLEN], half[17];
    if (vmpi_pmi_get("vmpi-jobkey", v, sizeof v) || strlen(v) != 32)
        vmpi_fatal("no job key from rank 0 in the PMI key-value space");
    for (int i = 0; i < 2; i++) {
        memcpy(half, v + 16 * i, 16);
        half[16] = '\0';
        k[i] = strtoull(half, NULL, 16);
    }
}

/* The detector's two sections of the job area, from its checked directory. */
struct vm_sections {
    uint64_t vmtab_off, vmlist_off;
    uint32_t nvm;
};

/* Plans the detector's sections, then the ivshmem channel's (with heap
 * slices when heap). */
static void area_plan(struct vmpi_area_hdr *d, int nranks, int nlocal, bool heap)
{
    vmpi_area_init(d, nranks, nlocal);
    uint32_t nvm = nlocal < 254 ? (uint32_t)nlocal : 254;
    struct vmpi_area_sec *t = vmpi_area_add(d, VMPI_AREA_VMTAB, 8ull * nvm);
    if (!t || !vmpi_area_add(d, VMPI_AREA_VMLIST, (uint64_t)nranks))
        vmpi_fatal("ivshmem region %s: cannot lay out this job's area", vmpi_region.path);
    t->param[0] = nvm;
    vmpi_ivshmem_plan(d, nlocal, heap);
}

/* A new area (it may hold an earlier job's bytes, unless fresh): the
 * directory, empty VM table and list, the channel's sections. */
static void area_init(char *area, bool fresh, void *arg)
{
    const struct vmpi_area_hdr *d = arg;
    memcpy(area, d, sizeof *d);
    const struct vmpi_area_sec *t = vmpi_area_section(d, VMPI_AREA_VMTAB),
                               *l = vmpi_area_section(d, VMPI_AREA_VMLIST);
    memset(area + t->off, 0, t->len);
    memset(area + l->off, 0, l->len);
    vmpi_ivshmem_area_init(area, d, fresh, vmpi_locality_job());
}

static void area_lost(const char *msg)
{
    vmpi_fatal("%s", msg);
}

/* Checks the joined area's directory and the detector's sections. */
static void area_check(struct vmpi_area_hdr *d, int nranks, struct vm_sections *vs)
{
    char why[200];
    if (vmpi_area_check(vmpi_region.area, vmpi_region.area_bytes, nranks, d, why, sizeof why))
        vmpi_fatal("ivshmem region %s: the directory of this job's area is corrupt or from "
                   "another vmpi: %s",
                   vmpi_region.path, why);
    const struct vmpi_area_sec *t = vmpi_area_section(d, VMPI_AREA_VMTAB),
                               *l = vmpi_area_section(d, VMPI_AREA_VMLIST);
    if (!t || !l || t->param[0] < 1 || t->param[0] > 254 || t->len != 8 * t->param[0] ||
        l->len < (uint64_t)nranks)
        vmpi_fatal("ivshmem region %s: the VM table or list of this job's area is corrupt",
                   vmpi_region.path);
    *vs = (struct vm_sections){t->off, l->off, (uint32_t)t->param[0]};
}

/* Claims this VM's slot in the VM table; returns it. */
static uint32_t vm_slot(char *area, const struct vm_sections *d, const char *vm)
{
    _Atomic uint64_t *tab = (_Atomic uint64_t *)(area + d->vmtab_off);
    uint64_t id = fnv1a(vm);
    for (uint32_t i = 0; i < d->nvm; i++) {
        uint64_t v = atomic_load(&tab[i]);
        if (v == 0 && atomic_compare_exchange_strong(&tab[i], &v, id))
            return i;
        if (v == id)
            return i;
    }
    vmpi_fatal("ivshmem region %s: the VM table of this job (%u slots) is full", vmpi_region.path,
               d->nvm);
}

/* Joins the job's area as rank `me` of the nlocal ranks of this host that
 * use it (the claimant makes it): 0, or an error code. */
static int area_join(int nlocal, int me, bool claimant, bool heap, struct vm_sections *vs)
{
    uint64_t key[2];
    get_key(key);
    struct vmpi_area_hdr d;
    area_plan(&d, vmpi_job.size, nlocal, heap);
    const char *domain = vmpi_knob_str("VMPI_DOMAIN");
    uint64_t dom = domain && *domain ? vmpi_fnv(VMPI_FNV_BASIS, domain, strlen(domain)) : key[0];
    uint32_t trust = VMPI_TRUST_DOMAIN((uint32_t)(dom ^ dom >> 32)) |
                     (vmpi_ivshmem_integrity() ? VMPI_TRUST_INTEGRITY : 0);
    int rc = vmpi_region_join(key, trust, d.area_bytes, claimant, area_init, &d, area_lost);
    if (rc)
        return rc;
    area_check(&d, vmpi_job.size, vs);
    vmpi_ivshmem_area_dir(&d, vmpi_ivshmem_integrity() ? get_secret() : 0, trust, me,
                          vmpi_job.rank);
    return 0;
}

/* Joins the area and writes this rank's VM-list byte (before the barrier). */
static void region_enter(struct vmpi_placement *pl, const uint64_t *uuid, const char *vm,
                         struct vm_sections *vs, uint32_t *slot)
{
    int n = vmpi_job.size, me = vmpi_job.rank, nlocal = 0, claimant = -1, index = 0;
    for (int r = 0; r < n; r++)
        if (uuid[r] == uuid[me]) {
            if (nlocal++ == 0)
                claimant = r;
            index += r < me;
        }
    int rc = area_join(nlocal, index, me == claimant, true, vs);
    if (rc)
        vmpi_fatal("%s", vmpi_err_text(rc));
    *slot = vm_slot(vmpi_region.area, vs, vm);
    volatile uint8_t *list = (volatile uint8_t *)(vmpi_region.area + vs->vmlist_off);
    list[me] = (uint8_t)(*slot + 1);
    pl->ngroup = nlocal;
}

void vmpi_locality_join_alone(void)
{
    static bool tried;
    if (vmpi_region.area || !vmpi_region.base || tried)
        return;
    tried = true;
    struct vm_sections vs;
    int rc = area_join(1, 0, true, false, &vs);
    const char *verbose = vmpi_knob_str("VMPI_VERBOSE");
    if (rc && verbose && atoi(verbose) > 0)
        fprintf(stderr, "vmpi: rank %d reaches other jobs without the host region: %s\n",
                vmpi_job.rank, vmpi_err_text(rc));
}

/* Reads the VM list once and checks it against the cards. */
static void region_scan(struct vmpi_placement *pl, const uint64_t *uuid, char **vms,
                        const struct vm_sections *d, uint32_t slot)
{
    int n = vmpi_job.size, me = vmpi_job.rank, k = 0;
    const volatile uint8_t *list = (const volatile uint8_t *)(vmpi_region.area + d->vmlist_off);
    pl->group = malloc((size_t)pl->ngroup * sizeof *pl->group);
    if (!pl->group)
        vmpi_fatal("out of memory");
    for (int r = 0; r < n; r++) {
        unsigned b = list[r];
        bool here = b != 0, same_vm = b == slot + 1;
        if (b > d->nvm || here != (uuid[r] == uuid[me]) ||
            same_vm != (here && !strcmp(vms[r], vms[me])) || (here && k == pl->ngroup))
            vmpi_fatal("ivshmem region %s: the VM list says rank %d is %s, its business card "
                       "disagrees (the region was overwritten)",
                       vmpi_region.path, r,
                       b > d->nvm ? "nowhere" : !here ? "on another host"
                                              : same_vm ? "in this VM" : "in another VM here");
        if (here) {
            if (r == me)
                pl->me_in_group = k;
            pl->group[k++] = r;
        }
    }
}

void vmpi_locality_detect(struct vmpi_placement *pl, bool use_region)
{
    int n = vmpi_job.size;
    char key[VMPI_PMI_KEYLEN], card[VMPI_PMI_VALLEN], vm[256], host[256], name[128], boot[64];
    bool found = false;
    if (use_region) {
        int rc = vmpi_region_open(&found);
        if (rc)
            vmpi_fatal("%s", vmpi_err_text(rc));
    }
    uint64_t region = found ? vmpi_region.uuid : 0;
    identities(vm, host, boot, sizeof vm, region);
    if (gethostname(name, sizeof name))
        strcpy(name, "unknown");
    name[sizeof name - 1] = '\0';
    card_safe(name);
    snprintf(key, sizeof key, "vmpi-card-%d", vmpi_job.rank);
    snprintf(card, sizeof card, "%ld|%s|%s|%s|%llx|%s", (long)getpid(), vm, host, name,
             (unsigned long long)region, boot);
    if (use_region && vmpi_job.rank == 0)
        put_key();
    if (vmpi_pmi_put(key, card) || vmpi_pmi_fence())
        vmpi_fatal("cannot publish this rank's business card through PMI");

    *pl = (struct vmpi_placement){.me_in_group = -1};
    pl->vm_of = malloc((size_t)n * sizeof *pl->vm_of);
    pl->host_of = malloc((size_t)n * sizeof *pl->host_of);
    pl->kernel_of = malloc((size_t)n * sizeof *pl->kernel_of);
    pl->pid = malloc((size_t)n * sizeof *pl->pid);
    pl->hostname = calloc((size_t)n, sizeof *pl->hostname);
    pl->region = calloc((size_t)n, sizeof *pl->region);
    char **vms = calloc((size_t)n, sizeof *vms), **hosts = calloc((size_t)n, sizeof *hosts),
         **boots = calloc((size_t)n, sizeof *boots);
    uint64_t *uuid = calloc((size_t)n, sizeof *uuid);
    if (!pl->vm_of || !pl->host_of || !pl->kernel_of || !pl->pid || !pl->hostname ||
        !pl->region || !vms || !hosts || !boots || !uuid)
        vmpi_fatal("out of memory reading business cards");
    for (int r = 0; r < n; r++) {
        snprintf(key, sizeof key, "vmpi-card-%d", r);
        if (vmpi_pmi_get(key, card, sizeof card))
            vmpi_fatal("no business card from rank %d in the PMI key-value space", r);
        char *rest = card, *pid = field(&rest), *v = field(&rest), *h = field(&rest),
             *hn = field(&rest), *rg = field(&rest), *bt = field(&rest);
        if (!bt)
            vmpi_fatal("malformed business card of rank %d", r);
        pl->pid[r] = atoi(pid);
        uuid[r] = strtoull(rg, NULL, 16);
        pl->region[r] = uuid[r];
        vms[r] = strdup(v);
        hosts[r] = strdup(h);
        boots[r] = strdup(bt);
        pl->hostname[r] = strdup(hn);
        if (!vms[r] || !hosts[r] || !boots[r] || !pl->hostname[r])
            vmpi_fatal("out of memory reading business cards");
        pl->vm_of[r] = r;
        pl->host_of[r] = r;
        pl->kernel_of[r] = r;
        /* The first equal card is the lowest rank of that VM, host or kernel. */
        for (int q = 0; q < r && (pl->vm_of[r] == r || pl->host_of[r] == r ||
                                  pl->kernel_of[r] == r); q++) {
            if (pl->vm_of[r] == r && !strcmp(vms[q], vms[r]))
                pl->vm_of[r] = q;
            if (pl->host_of[r] == r && !strcmp(hosts[q], hosts[r]))
                pl->host_of[r] = q;
            if (pl->kernel_of[r] == r && !strcmp(boots[q], boots[r]))
                pl->kernel_of[r] = q;
        }
    }
    if (use_region) {
        struct vm_sections d;
        uint32_t slot = 0;
        /* A rank alone on its region has nobody to meet there. */
        int here = 0;
        for (int r = 0; region && r < n; r++)
            here += uuid[r] == region;
        bool enter = here > 1;
        if (enter)
            region_enter(pl, uuid, vms[vmpi_job.rank], &d, &slot);
        if (vmpi_pmi_fence())
            vmpi_fatal("PMI barrier failed in the locality detector");
        if (enter)
            region_scan(pl, uuid, vms, &d, slot);
    }
    for (int r = 0; r < n; r++) {
        free(vms[r]);
        free(hosts[r]);
        free(boots[r]);
    }
    free(vms);
    free(hosts);
    free(boots);
    free(uuid);
}

void vmpi_locality_placement_free(struct vmpi_placement *pl)
{
    for (int r = 0; pl->hostname && r < vmpi_job.size; r++)
        free(pl->hostname[r]);
    free(pl->hostname);
    free(pl->vm_of);
    free(pl->host_of);
    free(pl->kernel_of);
    free(pl->pid);
    free(pl->region);
    free(pl->group);
    *pl = (struct vmpi_placement){0};
}
