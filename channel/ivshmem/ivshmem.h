/* ivshmem channel: ranks in other VMs of the same host (see ivshmem.c). */
#ifndef VMPI_CHANNEL_IVSHMEM_H
#define VMPI_CHANNEL_IVSHMEM_H

#include "../../shm/region.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The sizes of a job area for a job of nranks ranks, nlocal of them on
 * this host (VMPI_IVSHMEM_* knobs), filled into a directory. */
void vmpi_ivshmem_plan(struct vmpi_area_hdr *dir, int nranks, int nlocal);
/* Writes the directory dir at the start of a fresh area and clears the
 * control words the protocols rely on being zero (arg: the directory). */
void vmpi_ivshmem_area_init(char *area, void *dir);
/* A checked private copy of the joined area's directory; fatal (naming
 * the region) if it cannot describe an area of this job. */
void vmpi_ivshmem_area_dir(struct vmpi_area_hdr *dir, int nranks);

/* Sets up pairs with the ranks `worlds` (n of them, this rank excluded),
 * given every rank of this job in the area (`group`, ngroup of them, in
 * world-rank order, this rank at index me). Not collective. */
void vmpi_ivshmem_init(const int *worlds, int n, const int *group, int ngroup, int me);
/* The collective slot of world rank `world` in the job's area, or NULL
 * when it is not one of the area's ranks (or there is no area). */
struct vmpi_cslot *vmpi_ivshmem_cslot(int world);
/* Whether any peer uses the channel (then progress polls it). */
bool vmpi_ivshmem_active(void);

/* MPI_Alloc_mem from this rank's heap slice in the region: NULL when there
 * is no region or no room. */
void *vmpi_ivshmem_alloc(size_t n);
/* Frees a block from vmpi_ivshmem_alloc; false if p is not one. */
bool vmpi_ivshmem_free(void *p);
/* The area offset of [p, p + n) when it lies in this rank's heap slice. */
bool vmpi_ivshmem_heap_off(const void *p, size_t n, uint64_t *off);
/* Where [off, off + n) (area offsets, from another rank) lies in this
 * process's mapping, when it is inside the heap slice of world rank
 * `world` of this host's area; NULL otherwise. */
void *vmpi_ivshmem_heap_ptr(int world, uint64_t off, uint64_t n);

#endif
