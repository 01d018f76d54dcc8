/* Shared-memory segments: named files in /dev/shm, mapped MAP_SHARED. */
#ifndef VMPI_SHM_SEG_H
#define VMPI_SHM_SEG_H

#include <stddef.h>

/* Names are vmpi-<job id>-<suffix> so the launcher can remove what a
 * crashed job leaves behind. */
int vmpi_shm_name(char *out, size_t cap, const char *job_id, const char *suffix);
void *vmpi_shm_create(const char *name, size_t size);  /* NULL + errno on failure */
void *vmpi_shm_attach(const char *name, size_t size);
void vmpi_shm_unlink(const char *name);
void vmpi_shm_detach(void *base, size_t size);

#endif
