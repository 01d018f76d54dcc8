/* Collective entry points that move data: argument checks, then
 * vmpi_coll_* (coll/select.c). */
#include "coll_args.h"

int PMPI_Barrier(MPI_Comm comm)
{
    VMPI_ENTER("MPI_Barrier");
    COMM_ARG(c, comm, "MPI_Barrier");
    int rc = vmpi_coll_barrier(c);
    return rc == MPI_SUCCESS ? rc : vmpi_err_handle(c, rc);
}
VMPI_WEAK(Barrier)

int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    static const char fn[] = "MPI_Bcast";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    COUNT_ARG(count, c, fn);
    TYPE_ARG(dt, datatype, c, fn);
    ROOT_ARG(root, c, fn);
    BUF_ARG(buffer, count, datatype, c, fn, "buffer");
    int rc = vmpi_coll_bcast(buffer, count, dt, root, c);
    return rc == MPI_SUCCESS ? rc : vmpi_err_handle(c, rc);
}
VMPI_WEAK(Bcast)
