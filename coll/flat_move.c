/* Flat algorithms that move data, on a view (coll/coll.h):
 *   barrier    dissemination (ceil(log2 p) rounds of zero-byte sendrecv)
 *   bcast      binomial tree rooted at root
 *   allgather  ring */
#include <stdlib.h>
#include <string.h>

#include "coll.h"

int vmpi_flat_barrier(const struct coll_view *v)
{
    int p = v->size, r = v->rank;
    if (p == 1)
        return MPI_SUCCESS;
    struct vmpi_dtype *bt = coll_byte_type();
    char dummy = 0, sink;
    int round = 0;
    for (int d = 1; d < p; d <<= 1, round++) {
        int rc = coll_sendrecv(v, &dummy, 0, bt, (r + d) % p, &sink, 0,
                                   bt, (r - d + p) % p, COLL_TAG_BARRIER + round);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

int vmpi_flat_bcast(const struct coll_view *v, void *buf, MPI_Count count,
                    struct vmpi_dtype *dt, int root)
{
    int p = v->size;
    if (p == 1 || count == 0)
        return MPI_SUCCESS;
    int vr = (v->rank - root + p) % p;
    int mask = 1;
    while (mask < p) {
        if (vr & mask) {
            int src = (vr - mask + root) % p;
            int rc = coll_recv(v, buf, count, dt, src, COLL_TAG_BCAST);
            if (rc != MPI_SUCCESS)
                return rc;
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (vr + mask < p) {
            int dst = (vr + mask + root) % p;
            int rc = coll_send(v, buf, count, dt, dst, COLL_TAG_BCAST);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    }
    return MPI_SUCCESS;
}

/* rbuf receives p blocks of (count, dt), block i from rank i, one extent
 * apart. sbuf may be MPI_IN_PLACE (this rank's block is already in rbuf). */
int vmpi_flat_allgather(const struct coll_view *v, const void *sbuf, void *rbuf,
                        MPI_Count count, struct vmpi_dtype *dt)
{
    int p = v->size, r = v->rank;
    MPI_Aint blk = (MPI_Aint)count * vmpi_dtype_extent(dt);
    char *rb = rbuf;
    int rc;
    if (sbuf != MPI_IN_PLACE &&
        (rc = coll_local_copy(rb + (MPI_Aint)r * blk, sbuf, count, dt)) != MPI_SUCCESS)
        return rc;
    if (count == 0)
        return MPI_SUCCESS;
    int right = (r + 1) % p, left = (r - 1 + p) % p;
    /* step s: pass on the block that came from rank r - s */
    for (int s = 0; s < p - 1; s++) {
        int sendblk = (r - s + p) % p, recvblk = (r - s - 1 + p) % p;
        rc = coll_sendrecv(v, rb + (MPI_Aint)sendblk * blk, count, dt, right,
                           rb + (MPI_Aint)recvblk * blk, count, dt, left, COLL_TAG_ALLGATHER);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}
