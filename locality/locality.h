/* Locality: who runs where (detect.c), and the per-peer channel table
 * (coord.c). */
#ifndef VMPI_LOCALITY_H
#define VMPI_LOCALITY_H

/* Where every rank of the job runs, from the business cards. */
struct vmpi_placement {
    int *vm_of;     /* world rank -> lowest world rank of its VM */
    int *host_of;   /* world rank -> lowest world rank of its host */
    int *pid;       /* world rank -> process id (in its own PID namespace) */
    char **hostname;
};

/* Collective over the job: publishes this rank's card through PMI (one
 * barrier) and reads everyone's. */
void vmpi_locality_detect(struct vmpi_placement *pl);
void vmpi_locality_placement_free(struct vmpi_placement *pl);

/* Collective over the job: detects the placement, gives every other rank a
 * channel (VMPI_CHANNELS restricts the choice) and sets the channels up. */
int vmpi_locality_init(void);
void vmpi_locality_finalize(void);
/* The same value for ranks that can share memory (the lowest world rank of
 * their VM). */
int vmpi_locality_shared_id(int world_rank);

#endif
