/* ivshmem channel: ranks in other VMs of the same host (see ivshmem.c).
 * Besides the channel contract, the job area's layout, which the locality
 * detector uses to join the area before the channels start. */
#ifndef VMPI_CHANNEL_IVSHMEM_H
#define VMPI_CHANNEL_IVSHMEM_H

#include "../../shm/area.h"

#include <stdbool.h>

/* Adds the channel's sections (collective slots, pairs, heap slices) for
 * nlocal ranks on this host to a planned area (VMPI_IVSHMEM_* knobs). */
void vmpi_ivshmem_plan(struct vmpi_area_hdr *d, int nlocal);
/* Clears the channel's sections of a fresh area (the control words the
 * protocols rely on being zero). */
void vmpi_ivshmem_area_init(char *area, const struct vmpi_area_hdr *d);
/* Checks the channel's sections of the joined area's checked directory and
 * keeps them, with the job's secret for integrity checks; fatal (naming the
 * region) if they cannot be used. */
void vmpi_ivshmem_area_dir(const struct vmpi_area_hdr *d, uint64_t secret);
/* VMPI_INTEGRITY: whether the region carries checksummed messages only
 * (ivshmem.c), in which case it shares no memory the program uses. */
bool vmpi_ivshmem_integrity(void);

#endif
