/* Locality: who runs where, and the per-peer channel table. */
#ifndef VMPI_LOCALITY_H
#define VMPI_LOCALITY_H

/* Collective over the job: exchanges business cards through PMI, finds the
 * ranks of this VM and sets up a channel to every other rank. */
int vmpi_locality_init(void);
void vmpi_locality_finalize(void);
/* The same value for ranks that can share memory (the lowest world rank of
 * their VM). */
int vmpi_locality_shared_id(int world_rank);

#endif
