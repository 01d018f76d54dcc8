/* ofi channel: ranks on other hosts, over libfabric (see ofi.c). */
#ifndef VMPI_CHANNEL_OFI_H
#define VMPI_CHANNEL_OFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Collective over all ranks of the job when `needed` (one PMI barrier for
 * the address exchange); every rank passes the same `needed`. worlds lists
 * the world ranks this rank reaches over the network (n may be 0). */
void vmpi_ofi_init(const int *worlds, int n, bool needed);
/* The provider in use ("tcp;ofi_rxm", ...), or NULL when not opened. */
const char *vmpi_ofi_provider(void);
/* How a rendezvous moves data: "RMA read" or "pipelined sends". */
const char *vmpi_ofi_rndv_mode(void);

/* One-sided access to another host's memory, for windows (rma/). */
struct vmpi_req;
/* Rank `world` is a network peer and the provider offers RMA. */
bool vmpi_ofi_rma_to(int world);
/* This rank has the network open with a provider that offers RMA. */
bool vmpi_ofi_rma_on(void);
/* [base, base + len) exposed to remote reads and writes: what a peer needs
 * to reach it is (addr + offset, key). */
struct vmpi_ofi_mem {
    void *mr;
    uint64_t addr, key;
};
/* false: this provider cannot expose it (or len is 0); nothing to undo. */
bool vmpi_ofi_expose(void *base, size_t len, struct vmpi_ofi_mem *m);
void vmpi_ofi_unexpose(struct vmpi_ofi_mem *m);
/* Start moving len bytes between buf and world's exposed memory at raddr;
 * req is completed when a write is visible at the target, or when a read's
 * data is in buf. buf stays untouched (write) or unread (read) until then. */
void vmpi_ofi_write(int world, const void *buf, size_t len, uint64_t raddr, uint64_t key,
                    struct vmpi_req *req);
void vmpi_ofi_read(int world, void *buf, size_t len, uint64_t raddr, uint64_t key,
                   struct vmpi_req *req);

#endif
