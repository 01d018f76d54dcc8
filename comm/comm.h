/* Building communicators (comm.c, prefix vmpi_comm_) and their topologies
 * (topo.c, prefix vmpi_topo_): the layer above the collectives, which it
 * uses to agree on context ids and layouts. Each constructor is collective
 * over its parent where MPI says so. */
#ifndef VMPI_COMM_COMM_H
#define VMPI_COMM_COMM_H

#include "../core/vmpi.h"

int vmpi_comm_dup(struct vmpi_comm *c, struct vmpi_comm **out);
/* color MPI_UNDEFINED: *out is NULL (MPI_COMM_NULL). */
int vmpi_comm_split(struct vmpi_comm *c, int color, int key, struct vmpi_comm **out);
int vmpi_comm_split_type(struct vmpi_comm *c, int type, int key, struct vmpi_comm **out);
int vmpi_comm_create(struct vmpi_comm *c, struct vmpi_group *g, struct vmpi_comm **out);

/* Cartesian topologies (topo.c). */
int vmpi_topo_set_cart(struct vmpi_comm *c, int ndims, const int *dims, const int *periods);
int vmpi_topo_cart_create(struct vmpi_comm *c, int ndims, const int *dims, const int *periods,
                          struct vmpi_comm **out);
void vmpi_topo_cart_coords(const struct vmpi_comm *c, int rank, int *coords);
int vmpi_topo_cart_rank(const struct vmpi_comm *c, const int *coords, int *rank);
void vmpi_topo_cart_shift(const struct vmpi_comm *c, int dir, int disp, int *src, int *dst);
int vmpi_topo_dims_create(int nnodes, int ndims, int *dims);

#endif
