/* Argument checks shared by the collective entry points (coll_args.h). */
#include <stdio.h>

#include "coll_args.h"

/* A datatype argument; idx >= 0 names an element of a types array. */
int coll_type_arg(struct vmpi_comm *c, const char *fn, const char *name, int idx,
                  MPI_Datatype h, struct vmpi_dtype **dt)
{
    *dt = vmpi_dtype_get(h);
    if (!*dt) {
        if (idx >= 0)
            return vmpi_err(c, MPI_ERR_TYPE, "%s: %s[%d] is not a valid datatype (0x%x)", fn,
                            name, idx, (unsigned)h);
        return vmpi_err(c, MPI_ERR_TYPE, "%s: %s is not a valid datatype (0x%x)", fn, name,
                        (unsigned)h);
    }
    if (!vmpi_dtype_committed(*dt)) {
        if (idx >= 0)
            return vmpi_err(c, MPI_ERR_TYPE,
                            "%s: %s[%d] is not committed (call MPI_Type_commit)", fn, name, idx);
        return vmpi_err(c, MPI_ERR_TYPE, "%s: %s is not committed (call MPI_Type_commit)", fn,
                        name);
    }
    return MPI_SUCCESS;
}

/* A NULL buffer is an error only with a predefined datatype: with a derived
 * one it may be MPI_BOTTOM plus absolute displacements. */
int coll_null_buf(const void *buf, MPI_Datatype h)
{
    return buf == NULL && VMPI_HKIND(h) != VMPI_HK_INDIRECT;
}

/* (sendbuf, sendcount, sendtype) or the recv triple, on a rank where it is
 * significant; side is "send" or "recv". */
int coll_data_arg(struct vmpi_comm *c, const char *fn, const char *side, const void *buf,
                  int count, MPI_Datatype h, struct vmpi_dtype **dt)
{
    if (count < 0)
        return vmpi_err(c, MPI_ERR_COUNT, "%s: %scount = %d is negative", fn, side, count);
    char name[16];
    snprintf(name, sizeof name, "%stype", side);
    int rc = coll_type_arg(c, fn, name, -1, h, dt);
    if (rc != MPI_SUCCESS)
        return rc;
    if (count > 0 && coll_null_buf(buf, h))
        return vmpi_err(c, MPI_ERR_BUFFER, "%s: %sbuf is NULL with %scount = %d", fn, side,
                        side, count);
    return MPI_SUCCESS;
}

int coll_alias_arg(struct vmpi_comm *c, const char *fn, const void *sendbuf,
                   const void *recvbuf, int moves)
{
    /* both MPI_BOTTOM (absolute addresses in the types) is no aliasing */
    if (moves && sendbuf == recvbuf && sendbuf != NULL)
        return vmpi_err(c, MPI_ERR_BUFFER,
                        "%s: sendbuf and recvbuf are the same buffer (use MPI_IN_PLACE)", fn);
    return MPI_SUCCESS;
}

int coll_not_in_place(struct vmpi_comm *c, const char *fn, const void *buf, const char *name,
                      const char *where)
{
    if (buf == MPI_IN_PLACE)
        return vmpi_err(c, MPI_ERR_BUFFER, "%s: %s is MPI_IN_PLACE%s", fn, name, where);
    return MPI_SUCCESS;
}
