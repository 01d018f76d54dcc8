/* smp channel: ranks in the same VM (see smp.c). */
#ifndef VMPI_CHANNEL_SMP_H
#define VMPI_CHANNEL_SMP_H

/* Collective over all ranks of the job (it runs two PMI barriers). worlds
 * and pids list the ranks of this VM in world-rank order; me indexes them. */
int vmpi_smp_init(const int *worlds, const int *pids, int nlocal, int me);
/* The collective slot of world rank `world` in this VM's segment, or NULL
 * when it is not in this VM or the VM has no segment (one rank). */
struct vmpi_cslot *vmpi_smp_cslot(int world);

#endif
