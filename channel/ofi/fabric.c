/* Loading libfabric and choosing its provider for the ofi channel.
 *
 * Provider: whatever libfabric returns first for an RDM endpoint with
 * tagged messages, so FI_PROVIDER (tcp, verbs, efa, psm3, ...) decides;
 * nothing in the channel depends on a particular provider.
 *
 * libfabric is loaded with dlopen only when a job needs the network:
 * linking it would load every provider's libraries into every MPI program,
 * and some install signal handlers when loaded (libpsm2 catches SIGSEGV),
 * which would hide how a rank died. The channel restores the handlers of
 * fatal signals after libfabric has been loaded and opened. */
#include "fabric.h"
#include "../../base/base.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vmpi_ofi_lib vmpi_ofi_lf;

/* libfabric's first choice, with two corrections when FI_PROVIDER leaves
 * the choice to us: shm is skipped (it is no network, and would bypass the
 * network between emulated hosts), and tcp through the ofi_rxm layer gives
 * way to "net", the native RDM implementation of the same TCP transport in
 * libfabric 1.17 (renamed tcp later), on the same interface: one system
 * call less per message each way. */
static struct fi_info *pick(struct fi_info *list)
{
    const char *want = vmpi_knob_str("FI_PROVIDER");
    if (want && *want)
        return list;
    struct fi_info *first = list;
    while (first && !strcmp(first->fabric_attr->prov_name, "shm") && first->next)
        first = first->next;
    if (strcmp(first->fabric_attr->prov_name, "tcp;ofi_rxm"))
        return first;
    for (struct fi_info *i = first; i; i = i->next)
        if (!strcmp(i->fabric_attr->prov_name, "net") && i->domain_attr->name &&
            first->domain_attr->name && !strcmp(i->domain_attr->name, first->domain_attr->name))
            return i;
    return first;
}

struct fi_info *vmpi_ofi_query(bool want_rma)
{
    struct fi_info *hints = vmpi_ofi_lf.dupinfo(NULL), *out = NULL;
    if (!hints)
        vmpi_fatal("ofi: out of memory");
    hints->caps = FI_TAGGED | (want_rma ? FI_RMA | FI_READ | FI_REMOTE_READ | FI_WRITE |
                                                  FI_REMOTE_WRITE
                                            : 0);
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->ep_attr->type = FI_EP_RDM;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->domain_attr->mr_mode =
        FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    const char *dom = vmpi_knob_str("VMPI_OFI_DOMAIN");
    if (dom && *dom && !(hints->domain_attr->name = strdup(dom)))
        vmpi_fatal("ofi: out of memory");
    int rc = vmpi_ofi_lf.getinfo(OFI_VERSION, NULL, NULL, 0, hints, &out);
    vmpi_ofi_lf.freeinfo(hints);
    if (rc || !out)
        return NULL;
    struct fi_info *one = vmpi_ofi_lf.dupinfo(pick(out));
    vmpi_ofi_lf.freeinfo(out);
    if (!one)
        vmpi_fatal("ofi: out of memory");
    return one;
}

void vmpi_ofi_providers(char *out, size_t cap)
{
    struct fi_info *all = NULL;
    out[0] = '\0';
    if (vmpi_ofi_lf.getinfo(OFI_VERSION, NULL, NULL, FI_PROV_ATTR_ONLY, NULL, &all) || !all) {
        snprintf(out, cap, "none");
        return;
    }
    size_t n = 0;
    for (struct fi_info *i = all; i && n < cap; i = i->next) {
        const char *name = i->fabric_attr->prov_name;
        if (!name || !strncmp(name, "ofi_hook", 8))
            continue;
        n += (size_t)snprintf(out + n, cap - n, "%s%s", n ? ", " : "", name);
    }
    vmpi_ofi_lf.freeinfo(all);
}

void vmpi_ofi_load(void)
{
    void *lf_handle = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lf_handle)
        vmpi_fatal("MPI_Init: the network channel needs libfabric (Debian: libfabric1): %s",
                   dlerror());
    *(void **)&vmpi_ofi_lf.getinfo = dlsym(lf_handle, "fi_getinfo");
    *(void **)&vmpi_ofi_lf.freeinfo = dlsym(lf_handle, "fi_freeinfo");
    *(void **)&vmpi_ofi_lf.dupinfo = dlsym(lf_handle, "fi_dupinfo");
    *(void **)&vmpi_ofi_lf.fabric = dlsym(lf_handle, "fi_fabric");
    *(void **)&vmpi_ofi_lf.strerror = dlsym(lf_handle, "fi_strerror");
    if (!vmpi_ofi_lf.getinfo || !vmpi_ofi_lf.freeinfo || !vmpi_ofi_lf.dupinfo || !vmpi_ofi_lf.fabric || !vmpi_ofi_lf.strerror)
        vmpi_fatal("MPI_Init: libfabric.so.1 lacks the functions of libfabric 1.10");
}

void vmpi_ofi_no_provider(void)
{
    char provs[512];
    vmpi_ofi_providers(provs, sizeof provs);
    const char *want = vmpi_knob_str("FI_PROVIDER");
    const char *dom = vmpi_knob_str("VMPI_OFI_DOMAIN");
    if (want && *want)
        vmpi_fatal("MPI_Init: libfabric provider \"%s\" (FI_PROVIDER) offers no "
                   "reliable-datagram endpoint with tagged messages%s%s; providers in "
                   "this libfabric: %s",
                   want, dom ? " on domain " : "", dom ? dom : "", provs);
    vmpi_fatal("MPI_Init: no libfabric provider offers a reliable-datagram endpoint "
               "with tagged messages%s%s (providers in this libfabric: %s); set "
               "FI_PROVIDER",
               dom ? " on domain " : "", dom ? dom : "", provs);
}
