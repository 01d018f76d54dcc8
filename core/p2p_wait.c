/* Blocking point-to-point for the layers above (collectives, communicator
 * construction): post, then progress until the request is done. */
#include "vmpi.h"

int vmpi_p2p_wait(struct vmpi_req *r, MPI_Status *st)
{
    while (!r->done)
        vmpi_progress();
    vmpi_req_status(st, r);
    int err = r->st_error;
    vmpi_req_free(r);
    return err;
}

int vmpi_p2p_send(const void *buf, MPI_Count count, struct vmpi_dtype *dt, int dest,
                  int tag, struct vmpi_comm *c, int coll)
{
    struct vmpi_req *r;
    vmpi_p2p_isend(buf, count, dt, dest, tag, c, coll, VMPI_MODE_STD, &r);
    return vmpi_p2p_wait(r, MPI_STATUS_IGNORE);
}

int vmpi_p2p_recv(void *buf, MPI_Count count, struct vmpi_dtype *dt, int src, int tag,
                  struct vmpi_comm *c, int coll, MPI_Status *st)
{
    struct vmpi_req *r;
    vmpi_p2p_irecv(buf, count, dt, src, tag, c, coll, &r);
    return vmpi_p2p_wait(r, st);
}

int vmpi_p2p_sendrecv(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, int dest,
                      int stag, void *rbuf, MPI_Count rcount, struct vmpi_dtype *rdt,
                      int src, int rtag, struct vmpi_comm *c, int coll, MPI_Status *st)
{
    struct vmpi_req *rr, *sr;
    vmpi_p2p_irecv(rbuf, rcount, rdt, src, rtag, c, coll, &rr);
    vmpi_p2p_isend(sbuf, scount, sdt, dest, stag, c, coll, VMPI_MODE_STD, &sr);
    int e1 = vmpi_p2p_wait(sr, MPI_STATUS_IGNORE);
    int e2 = vmpi_p2p_wait(rr, st);
    return e2 != MPI_SUCCESS ? e2 : e1;
}
