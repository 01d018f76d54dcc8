/* vmpi_coll_*: the collectives the API and the communicator code call. Each
 * picks an algorithm for the communicator and the message (coll/coll.h). */
#include "coll.h"

int vmpi_coll_barrier(struct vmpi_comm *c)
{
    struct coll_view v = coll_view_all(c);
    return vmpi_flat_barrier(&v);
}

int vmpi_coll_bcast(void *buf, MPI_Count count, struct vmpi_dtype *dt, int root,
                    struct vmpi_comm *c)
{
    struct coll_view v = coll_view_all(c);
    return vmpi_flat_bcast(&v, buf, count, dt, root);
}

int vmpi_coll_reduce(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                     MPI_Op op, int root, struct vmpi_comm *c)
{
    struct coll_view v = coll_view_all(c);
    return vmpi_flat_reduce(&v, sbuf, rbuf, count, dt, op, root);
}

int vmpi_coll_allreduce(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                        MPI_Op op, struct vmpi_comm *c)
{
    struct coll_view v = coll_view_all(c);
    return vmpi_flat_allreduce(&v, sbuf, rbuf, count, dt, op);
}

int vmpi_coll_allgather(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                        struct vmpi_comm *c)
{
    struct coll_view v = coll_view_all(c);
    return vmpi_flat_allgather(&v, sbuf, rbuf, count, dt);
}
