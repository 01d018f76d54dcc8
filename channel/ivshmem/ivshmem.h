/* ivshmem channel: ranks in other VMs of the same host (see ivshmem.c).
 * Besides the channel contract, the job area's layout, which the locality
 * detector uses to join the area before the channels start. */
#ifndef VMPI_CHANNEL_IVSHMEM_H
#define VMPI_CHANNEL_IVSHMEM_H

#include "../../shm/area.h"

#include <stdbool.h>
#include <stdint.h>

/* Adds the channel's sections (collective slots, pairs and the pool for
 * other jobs, heap slices unless !heap) for nlocal ranks on this host to a
 * planned area (VMPI_IVSHMEM_* knobs). */
void vmpi_ivshmem_plan(struct vmpi_area_hdr *d, int nlocal, bool heap);
/* Sets the channel's sections of a new area up for job `job` (its name for
 * other jobs): clears the control words the protocols rely on being zero
 * (unless fresh: still zero) and writes the pool's header. */
void vmpi_ivshmem_area_init(char *area, const struct vmpi_area_hdr *d, bool fresh, uint32_t job);
/* Checks the channel's sections of the joined area's checked directory and
 * keeps them, with the job's secret for integrity checks and its trust
 * word (shm/region.h), and lists this process, rank `rank` of the job, at
 * index me of the area in its pool; fatal (naming the region) if they
 * cannot be used. */
void vmpi_ivshmem_area_dir(const struct vmpi_area_hdr *d, uint64_t secret, uint32_t trust,
                           int me, int rank);
/* VMPI_INTEGRITY: whether the region carries checksummed messages only
 * (ivshmem.c), in which case it shares no memory the program uses. */
bool vmpi_ivshmem_integrity(void);

#endif
