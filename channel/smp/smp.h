/* smp channel: ranks in the same VM (see smp.c). */
#ifndef VMPI_CHANNEL_SMP_H
#define VMPI_CHANNEL_SMP_H

/* Collective over all ranks of the job (it runs two PMI barriers). worlds
 * and pids list the ranks of this VM in world-rank order; me indexes them. */
int vmpi_smp_init(const int *worlds, const int *pids, int nlocal, int me);

#endif
