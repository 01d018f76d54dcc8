/* Matched probe (MPI-3.1 3.8.2): MPI_Mprobe takes the message out of the
 * unexpected queue (vmpi_p2p_probe with VMPI_PROBE_TAKE), so no other
 * receive or probe can match it, and hands it to a message request, which
 * an MPI_Message handle names (MPICH encodes messages as requests too).
 * MPI_Mrecv gives the message to a receive exactly as a receive posted
 * after its arrival would take it: an eager message is copied out at once,
 * a rendezvous one starts its transfer on whatever channel it came by. */
#include "vmpi.h"
#include "dtype_impl.h"

struct vmpi_req *vmpi_msg_new(struct vmpi_unexp *u, struct vmpi_comm *c)
{
    struct vmpi_req *m = vmpi_req_alloc(VMPI_REQ_MSG);
    /* Held in tmp, so a message never received is freed with the request
     * pool at MPI_Finalize. */
    m->tmp = u;
    m->comm = c;
    vmpi_comm_retain(c);
    return m;
}

struct vmpi_req *vmpi_msg_recv(struct vmpi_req *msg, void *buf, MPI_Count count,
                               struct vmpi_dtype *dt)
{
    struct vmpi_req *r = vmpi_req_alloc(VMPI_REQ_RECV);
    vmpi_p2p_recv_fill(r, buf, count, dt, MPI_ANY_SOURCE, MPI_ANY_TAG, msg->comm, 0);
    vmpi_dtype_ref(dt);
    vmpi_comm_retain(msg->comm);
    struct vmpi_unexp *u = msg->tmp;
    msg->tmp = NULL;
    vmpi_req_free(msg);
    vmpi_p2p_recv_taken(r, u);
    return r;
}
