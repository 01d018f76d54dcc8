/* ofi channel: ranks on other hosts, over libfabric (see ofi.c). */
#ifndef VMPI_CHANNEL_OFI_H
#define VMPI_CHANNEL_OFI_H

#include <stdbool.h>

/* Collective over all ranks of the job when `needed` (one PMI barrier for
 * the address exchange); every rank passes the same `needed`. worlds lists
 * the world ranks this rank reaches over the network (n may be 0). */
void vmpi_ofi_init(const int *worlds, int n, bool needed);
/* The provider in use ("tcp;ofi_rxm", ...), or NULL when not opened. */
const char *vmpi_ofi_provider(void);
/* How a rendezvous moves data: "RMA read" or "pipelined sends". */
const char *vmpi_ofi_rndv_mode(void);

#endif
