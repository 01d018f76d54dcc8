/* Buffered mode (MPI-3.1 3.6): the attached buffer and the buffered sends
 * (core/bsend.c does the work). MPI_Bsend_init is in api/persist.c. */
#include "p2p_args.h"

int PMPI_Buffer_attach(void *buffer, int size)
{
    VMPI_ENTER("MPI_Buffer_attach");
    VMPI_CHECK(size >= 0, NULL, MPI_ERR_ARG, "MPI_Buffer_attach: size %d is negative", size);
    VMPI_CHECK(buffer || size == 0, NULL, MPI_ERR_BUFFER,
               "MPI_Buffer_attach: buffer is NULL with size %d", size);
    if (vmpi_bsend_attach(buffer, (size_t)size) != MPI_SUCCESS) {
        void *old;
        size_t old_size;
        vmpi_bsend_attached(&old, &old_size);
        return vmpi_err(NULL, MPI_ERR_BUFFER,
                        "MPI_Buffer_attach: a buffer (%p, %zu bytes) is attached already; "
                        "detach it first (MPI_Buffer_detach)",
                        old, old_size);
    }
    return MPI_SUCCESS;
}
VMPI_WEAK(Buffer_attach);

int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    VMPI_ENTER("MPI_Buffer_detach");
    VMPI_CHECK(buffer_addr && size, NULL, MPI_ERR_ARG,
               "MPI_Buffer_detach: buffer_addr or size is NULL");
    void *buf;
    size_t n;
    vmpi_bsend_detach(&buf, &n);
    *(void **)buffer_addr = buf;
    *size = (int)n;
    return MPI_SUCCESS;
}
VMPI_WEAK(Buffer_detach);

static int buffered_send(const char *fn, const void *buf, int count, MPI_Datatype datatype,
                         int dest, int tag, MPI_Comm comm)
{
    struct vmpi_comm *c;
    struct vmpi_dtype *dt;
    int rc = p2p_check_buf(fn, comm, &c, buf, count, datatype, &dt);
    if (rc == MPI_SUCCESS)
        rc = p2p_check_dest(fn, c, dest, tag);
    return rc == MPI_SUCCESS ? vmpi_bsend(fn, buf, count, dt, dest, tag, c) : rc;
}

int PMPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm)
{
    VMPI_ENTER("MPI_Bsend");
    return buffered_send("MPI_Bsend", buf, count, datatype, dest, tag, comm);
}
VMPI_WEAK(Bsend);

int PMPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm, MPI_Request *request)
{
    VMPI_ENTER("MPI_Ibsend");
    VMPI_CHECK(request, NULL, MPI_ERR_ARG, "MPI_Ibsend: request is NULL");
    int rc = buffered_send("MPI_Ibsend", buf, count, datatype, dest, tag, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    *request = vmpi_req_handle(vmpi_bsend_req());
    return MPI_SUCCESS;
}
VMPI_WEAK(Ibsend);
