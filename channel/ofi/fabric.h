/* The ofi channel's view of libfabric itself (fabric.c): the library,
 * loaded with dlopen (ofi.c says why), and the choice of a provider. */
#ifndef VMPI_CHANNEL_OFI_FABRIC_H
#define VMPI_CHANNEL_OFI_FABRIC_H

#include <rdma/fabric.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OFI_VERSION FI_VERSION(1, 10)

/* The few functions libfabric exports (the rest are inline calls through
 * the objects it returns). */
struct vmpi_ofi_lib {
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *,
                   struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    const char *(*strerror)(int);
};
extern struct vmpi_ofi_lib vmpi_ofi_lf;

/* Loads libfabric.so.1 (fatal when absent). */
void vmpi_ofi_load(void);
/* The provider for an RDM endpoint with tagged messages (and RMA when
 * want_rma), or NULL when there is none. */
struct fi_info *vmpi_ofi_query(bool want_rma);
/* Names of the providers this libfabric was built with, for errors. */
void vmpi_ofi_providers(char *out, size_t cap);
/* The error when vmpi_ofi_query found none, naming the providers. */
_Noreturn void vmpi_ofi_no_provider(void);

#endif
