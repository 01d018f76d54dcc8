/* Locality: who runs where (detect.c), and the per-peer channel table
 * (coord.c). */
#ifndef VMPI_LOCALITY_H
#define VMPI_LOCALITY_H

#include <stdbool.h>
#include <stdint.h>

/* Where every rank of the job runs, from the business cards, and this
 * rank's own view from the VM list in the host region. */
struct vmpi_placement {
    int *vm_of;     /* world rank -> lowest world rank of its VM */
    int *host_of;   /* world rank -> lowest world rank of its host */
    int *kernel_of; /* world rank -> lowest world rank running on its kernel (boot id): the
                     * ranks that compete for its processors, emulated hosts included */
    int *pid;       /* world rank -> process id (in its own PID namespace) */
    char **hostname;
    uint64_t *region; /* world rank -> id of the host region it mapped, 0 if none */
    int *group;     /* this rank's host in the region: world ranks, ascending */
    int ngroup, me_in_group; /* 0 and -1 without a region */
};

/* Collective over the job: publishes this rank's card through PMI, and,
 * when use_region, opens the host region, joins the job's area and runs the
 * VM-list detection (two PMI barriers). */
void vmpi_locality_detect(struct vmpi_placement *pl, bool use_region);
void vmpi_locality_placement_free(struct vmpi_placement *pl);

/* Collective over the job: detects the placement, gives every other rank a
 * channel (VMPI_CHANNELS restricts the choice) and sets the channels up. */
int vmpi_locality_init(void);
void vmpi_locality_finalize(void);
/* The same value for ranks that can share memory (the lowest world rank of
 * their host region when the ivshmem channel is on, else of their VM). */
int vmpi_locality_shared_id(int world_rank);
/* Whether that sharing is through the host region (else the VM's memory). */
bool vmpi_locality_shared_region(int world_rank);
struct vmpi_cslot;
/* The collective slots (shm/cslot.h) of the n ranks `worlds` (one node),
 * into slots: in the job's area of the host region when all of them share
 * one region, else in the VM's smp segment when all share this VM. False
 * when neither holds (or the channel that would map them is off). The
 * answer depends only on the job-wide placement, so every rank of the node
 * gets the same one. */
bool vmpi_locality_cslots(const int *worlds, int n, struct vmpi_cslot **slots);

#endif
