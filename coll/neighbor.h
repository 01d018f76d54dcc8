/* Neighbourhood collectives (coll/neighbor.c, prefix vmpi_nbr_): what
 * api/neighbor.c calls with the neighbours comm/ computed
 * (struct vmpi_topo_nbrs). */
#ifndef VMPI_COLL_NEIGHBOR_H
#define VMPI_COLL_NEIGHBOR_H

#include "../core/vmpi.h"

/* One side's buffers: block i goes to destination i (send side) or comes
 * from source i (receive side). Block i is at
 *   buf                              when same (allgather's send side),
 *   buf + bdispls[i] bytes           when bdispls (alltoallw),
 *   buf + displs[i] extents of dt    when displs (the v forms),
 *   buf + i * count extents of dt    otherwise;
 * it holds counts[i] (or count when counts is NULL) elements of dts[i] (or
 * dt when dts is NULL). */
struct vmpi_nbr_buf {
    void *buf;
    bool same;
    MPI_Count count;
    const int *counts;
    const int *displs;
    const MPI_Aint *bdispls;
    struct vmpi_dtype *dt;
    struct vmpi_dtype *const *dts;
};

/* The exchange with the neighbours: in[i] (nin of them) sends block i of
 * recv, out[i] gets block i of send; MPI_PROC_NULL neighbours are skipped,
 * their blocks untouched. cart: in[i] and out[i] are the -1 and +1 shifts
 * of dimension i / 2, and the block received from in[i] is the one that
 * rank sent the opposite way (so a periodic dimension of size 1 or 2,
 * where both shifts name the same rank, gets each block right).
 * req NULL: blocking; else *req is a request of kind VMPI_REQ_COLL that
 * completes when every message has. Errors: MPI_ERR_NO_MEM, or the first
 * send's or receive's error. */
int vmpi_nbr_exchange(struct vmpi_comm *c, int nin, const int *in, int nout, const int *out,
                      bool cart, const struct vmpi_nbr_buf *send,
                      const struct vmpi_nbr_buf *recv, const char *fn, struct vmpi_req **req);

#endif
