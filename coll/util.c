/* Helpers shared by the collective algorithms: scratch buffers, local
 * copies between layouts, and point-to-point on a view (coll/coll.h). */
#include <stdlib.h>
#include <string.h>

#include "../core/dtype_impl.h" /* true_ub */
#include "coll_impl.h"

void *coll_tmp_alloc(MPI_Count count, const struct vmpi_dtype *dt, void **raw)
{
    MPI_Aint ext = vmpi_dtype_extent(dt);
    MPI_Aint tlb = vmpi_dtype_true_lb(dt);
    MPI_Aint text = dt->true_ub - dt->true_lb;
    MPI_Aint step = (MPI_Aint)(count - 1) * ext;
    MPI_Aint lo = tlb + (step < 0 ? step : 0);
    MPI_Aint hi = tlb + text + (step > 0 ? step : 0);
    size_t len = hi > lo ? (size_t)(hi - lo) : 1;
    *raw = malloc(len);
    if (!*raw)
        return NULL;
    return vmpi_dtype_addr(*raw, -lo);
}

/* Through a bounce buffer when non-contiguous. */
int coll_local_copy(void *dst, const void *src, MPI_Count count,
                      const struct vmpi_dtype *dt)
{
    size_t total = (size_t)(count * vmpi_dtype_size(dt));
    if (total == 0 || dst == src)
        return MPI_SUCCESS;
    if (vmpi_dtype_is_contig(dt)) {
        MPI_Aint lb = vmpi_dtype_true_lb(dt);
        memcpy(vmpi_dtype_addr(dst, lb), vmpi_dtype_addr(src, lb), total);
        return MPI_SUCCESS;
    }
    size_t chunk = total < (1u << 16) ? total : (1u << 16);
    char stackbuf[512];
    char *tmp = chunk <= sizeof stackbuf ? stackbuf : malloc(chunk);
    if (!tmp)
        return vmpi_err(NULL, MPI_ERR_NO_MEM, "collective: out of memory for a copy");
    for (size_t off = 0; off < total;) {
        size_t n = vmpi_dtype_pack(tmp, src, count, dt, off, chunk);
        if (n == 0)
            break;
        vmpi_dtype_unpack(dst, count, dt, off, tmp, n);
        off += n;
    }
    if (tmp != stackbuf)
        free(tmp);
    return MPI_SUCCESS;
}

int coll_local_copy2(void *dst, MPI_Count dcount, const struct vmpi_dtype *ddt,
                     const void *src, MPI_Count scount, const struct vmpi_dtype *sdt)
{
    size_t total = (size_t)(scount * vmpi_dtype_size(sdt));
    if (total == 0)
        return MPI_SUCCESS;
    if (ddt == sdt && dcount == scount)
        return coll_local_copy(dst, src, scount, sdt);
    size_t chunk = total < (1u << 16) ? total : (1u << 16);
    char *tmp = malloc(chunk);
    if (!tmp)
        return vmpi_err(NULL, MPI_ERR_NO_MEM, "collective: out of memory for a copy");
    for (size_t off = 0; off < total;) {
        size_t n = vmpi_dtype_pack(tmp, src, scount, sdt, off, chunk);
        if (n == 0)
            break;
        vmpi_dtype_unpack(dst, dcount, ddt, off, tmp, n);
        off += n;
    }
    free(tmp);
    return MPI_SUCCESS;
}

struct vmpi_dtype *coll_byte_type(void)
{
    return vmpi_dtype_get(MPI_BYTE);
}

int coll_send(const struct coll_view *v, const void *buf, MPI_Count count,
              struct vmpi_dtype *dt, int to, int tag)
{
    return vmpi_p2p_send(buf, count, dt, coll_peer(v, to), tag, v->comm, 1);
}

int coll_recv(const struct coll_view *v, void *buf, MPI_Count count, struct vmpi_dtype *dt,
              int from, int tag)
{
    return vmpi_p2p_recv(buf, count, dt, coll_peer(v, from), tag, v->comm, 1,
                         MPI_STATUS_IGNORE);
}

int coll_sendrecv(const struct coll_view *v, const void *sbuf, MPI_Count scount,
                  struct vmpi_dtype *sdt, int to, void *rbuf, MPI_Count rcount,
                  struct vmpi_dtype *rdt, int from, int tag)
{
    return vmpi_p2p_sendrecv(sbuf, scount, sdt, coll_peer(v, to), tag, rbuf, rcount, rdt,
                             coll_peer(v, from), tag, v->comm, 1, MPI_STATUS_IGNORE);
}
