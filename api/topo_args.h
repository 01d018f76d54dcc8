/* Argument checks shared by the topology entry points (api/topo.c,
 * api/topo_graph.c). */
#ifndef VMPI_API_TOPO_ARGS_H
#define VMPI_API_TOPO_ARGS_H

#include "api.h"

#define CART_ARG(c, h, fn)                                                              \
    COMM_ARG(c, h, fn);                                                                 \
    VMPI_CHECK(c->topo == MPI_CART, c, MPI_ERR_TOPOLOGY,                                \
               "%s: the communicator has no Cartesian topology", fn)

/* Topologies live on intracommunicators only (MPI-3.1 7.2). */
#define INTRA_ARG(c, fn)                                                               \
    VMPI_CHECK(!(c)->local, c, MPI_ERR_COMM,                                           \
               "%s: comm is an intercommunicator (topologies need an intracommunicator)", fn)

/* Hands a new communicator (NULL: MPI_COMM_NULL) to the caller, or reports
 * why the constructor failed. */
static inline int topo_made(struct vmpi_comm *c, int rc, struct vmpi_comm *nc, MPI_Comm *out)
{
    if (rc != MPI_SUCCESS)
        return vmpi_err_handle(c, rc);
    *out = nc ? nc->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

#endif
