/* Matched probe and receive (MPI-3.1 3.8.2, 3.8.3): MPI_Mprobe and
 * MPI_Improbe take a message out of the matching queue and name it by an
 * MPI_Message handle; MPI_Mrecv and MPI_Imrecv receive exactly that
 * message (core/message.c). */
#include "p2p_args.h"

/* The status of a probe or receive of MPI_PROC_NULL. */
static void proc_null_status(MPI_Status *st)
{
    p2p_empty_status(st);
    if (st != MPI_STATUS_IGNORE)
        st->MPI_SOURCE = MPI_PROC_NULL;
}

static int matched_probe(const char *fn, int source, int tag, MPI_Comm comm, int *flag,
                         MPI_Message *message, MPI_Status *status)
{
    struct vmpi_comm *c = vmpi_comm_get(comm);
    VMPI_CHECK(c, NULL, MPI_ERR_COMM, "%s: invalid communicator %#x", fn, (unsigned)comm);
    int rc = p2p_check_src(fn, c, source, tag);
    if (rc != MPI_SUCCESS)
        return rc;
    VMPI_CHECK(message, c, MPI_ERR_ARG, "%s: message is NULL", fn);
    if (source == MPI_PROC_NULL) {
        proc_null_status(status);
        *message = MPI_MESSAGE_NO_PROC;
        if (flag)
            *flag = 1;
        return MPI_SUCCESS;
    }
    struct vmpi_unexp *u;
    unsigned how = VMPI_PROBE_POLL | VMPI_PROBE_TAKE;
    while (!(u = vmpi_p2p_probe(source, tag, c, status, how)) && !flag)
        ;
    if (flag)
        *flag = u != NULL;
    if (!u) {
        *message = MPI_MESSAGE_NULL;
        return MPI_SUCCESS;
    }
    if (status != MPI_STATUS_IGNORE)
        status->count_hi_and_cancelled &= ~1;
    *message = vmpi_req_handle(vmpi_msg_new(u, c));
    return MPI_SUCCESS;
}

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    VMPI_ENTER("MPI_Mprobe");
    return matched_probe("MPI_Mprobe", source, tag, comm, NULL, message, status);
}
VMPI_WEAK(Mprobe);

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                 MPI_Status *status)
{
    VMPI_ENTER("MPI_Improbe");
    VMPI_CHECK(flag, NULL, MPI_ERR_ARG, "MPI_Improbe: flag is NULL");
    return matched_probe("MPI_Improbe", source, tag, comm, flag, message, status);
}
VMPI_WEAK(Improbe);

/* Starts the receive of *message into (buf, count, datatype) and sets
 * *message to MPI_MESSAGE_NULL. MPI_MESSAGE_NO_PROC gives a receive from
 * MPI_PROC_NULL, complete at once. */
static int message_recv(const char *fn, void *buf, int count, MPI_Datatype datatype,
                        MPI_Message *message, struct vmpi_req **out)
{
    VMPI_CHECK(message, NULL, MPI_ERR_ARG, "%s: message is NULL", fn);
    struct vmpi_req *m = NULL;
    if (*message != MPI_MESSAGE_NO_PROC) {
        m = vmpi_req_from_handle(*message);
        VMPI_CHECK(m && m->kind == VMPI_REQ_MSG, NULL, MPI_ERR_REQUEST,
                   "%s: message %#x is not one that MPI_Mprobe or MPI_Improbe returned%s", fn,
                   (unsigned)*message,
                   *message == MPI_MESSAGE_NULL ? " (it is MPI_MESSAGE_NULL)" : "");
    }
    struct vmpi_comm *c;
    struct vmpi_dtype *dt;
    int rc = p2p_check_buf(fn, m ? m->comm->handle : MPI_COMM_SELF, &c, buf, count, datatype,
                           &dt);
    if (rc != MPI_SUCCESS)
        return rc;
    if (m)
        *out = vmpi_msg_recv(m, buf, count, dt);
    else
        vmpi_p2p_irecv(buf, count, dt, MPI_PROC_NULL, MPI_ANY_TAG, c, 0, out);
    *message = MPI_MESSAGE_NULL;
    return MPI_SUCCESS;
}

int PMPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
               MPI_Status *status)
{
    VMPI_ENTER("MPI_Mrecv");
    struct vmpi_req *r;
    int rc = message_recv("MPI_Mrecv", buf, count, datatype, message, &r);
    if (rc != MPI_SUCCESS)
        return rc;
    while (!r->done)
        vmpi_progress();
    vmpi_req_status(status, r);
    rc = p2p_recv_error("MPI_Mrecv", r);
    vmpi_req_free(r);
    return rc;
}
VMPI_WEAK(Mrecv);

int PMPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                MPI_Request *request)
{
    VMPI_ENTER("MPI_Imrecv");
    VMPI_CHECK(request, NULL, MPI_ERR_ARG, "MPI_Imrecv: request is NULL");
    struct vmpi_req *r;
    int rc = message_recv("MPI_Imrecv", buf, count, datatype, message, &r);
    if (rc == MPI_SUCCESS)
        *request = vmpi_req_handle(r);
    return rc;
}
VMPI_WEAK(Imrecv);
