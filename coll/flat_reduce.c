/* Flat reductions, on a view (coll/coll.h):
 *   reduce     binomial tree towards root (predefined ops are commutative)
 *   allreduce  recursive doubling; with p not a power of two the first
 *              2*(p - p') ranks pair up first (p' = largest power of two <= p) */
#include <stdlib.h>
#include <string.h>

#include "coll.h"

/* sbuf may be MPI_IN_PLACE at the root (the input is then in rbuf). rbuf is
 * only used at the root. */
int vmpi_flat_reduce(const struct coll_view *v, const void *sbuf, void *rbuf, MPI_Count count,
                     struct vmpi_dtype *dt, MPI_Op op, int root)
{
    int p = v->size, rank = v->rank;
    if (count == 0)
        return MPI_SUCCESS;
    if (p == 1) {
        if (sbuf != MPI_IN_PLACE)
            return coll_local_copy(rbuf, sbuf, count, dt);
        return MPI_SUCCESS;
    }
    int vr = (rank - root + p) % p;
    int rc = MPI_SUCCESS;
    void *acc_raw = NULL, *tmp_raw = NULL, *tmp = NULL;
    /* acc: the partial result of this subtree. At the root it is rbuf; at an
     * inner node a scratch buffer; a leaf sends its input directly. */
    const void *acc_in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    void *acc = NULL;
    int has_child = (vr & 1) == 0 && vr + 1 < p;
    if (has_child) {
        if (rank == root) {
            acc = rbuf;
        } else {
            acc = coll_tmp_alloc(count, dt, &acc_raw);
            if (!acc) {
                rc = vmpi_err(v->comm, MPI_ERR_NO_MEM, "MPI_Reduce: out of memory");
                goto out;
            }
        }
        if ((rc = coll_local_copy(acc, acc_in, count, dt)) != MPI_SUCCESS)
            goto out;
        tmp = coll_tmp_alloc(count, dt, &tmp_raw);
        if (!tmp) {
            rc = vmpi_err(v->comm, MPI_ERR_NO_MEM, "MPI_Reduce: out of memory");
            goto out;
        }
    } else if (rank == root) { /* root without children: only if p == 1 */
        rc = coll_local_copy(rbuf, acc_in, count, dt);
        goto out;
    }
    for (int mask = 1; mask < p; mask <<= 1) {
        if (vr & mask) {
            int dst = (vr - mask + root) % p;
            rc = coll_send(v, acc ? acc : acc_in, count, dt, dst, COLL_TAG_REDUCE);
            break;
        }
        if (vr + mask < p) {
            int src = (vr + mask + root) % p;
            rc = coll_recv(v, tmp, count, dt, src, COLL_TAG_REDUCE);
            if (rc != MPI_SUCCESS)
                break;
            vmpi_op_apply(op, tmp, acc, count, dt);
        }
    }
out:
    free(acc_raw);
    free(tmp_raw);
    return rc;
}

/* sbuf may be MPI_IN_PLACE (the input is then in rbuf). */
int vmpi_flat_allreduce(const struct coll_view *v, const void *sbuf, void *rbuf,
                        MPI_Count count, struct vmpi_dtype *dt, MPI_Op op)
{
    int p = v->size, rank = v->rank;
    int rc;
    if (count == 0)
        return MPI_SUCCESS;
    if (sbuf != MPI_IN_PLACE && (rc = coll_local_copy(rbuf, sbuf, count, dt)) != MPI_SUCCESS)
        return rc;
    if (p == 1)
        return MPI_SUCCESS;
    void *raw;
    void *tmp = coll_tmp_alloc(count, dt, &raw);
    if (!tmp)
        return vmpi_err(v->comm, MPI_ERR_NO_MEM, "MPI_Allreduce: out of memory");
    int pof2 = 1;
    while (pof2 * 2 <= p)
        pof2 *= 2;
    int rem = p - pof2;
    int newrank;
    rc = MPI_SUCCESS;
    /* Fold the first 2*rem ranks in pairs: even ones hand their data to the
     * odd neighbour and wait for the result. */
    if (rank < 2 * rem) {
        if (rank % 2 == 0) {
            rc = coll_send(v, rbuf, count, dt, rank + 1, COLL_TAG_ALLREDUCE);
            newrank = -1;
        } else {
            rc = coll_recv(v, tmp, count, dt, rank - 1, COLL_TAG_ALLREDUCE);
            if (rc == MPI_SUCCESS)
                vmpi_op_apply(op, tmp, rbuf, count, dt);
            newrank = rank / 2;
        }
    } else {
        newrank = rank - rem;
    }
    if (rc != MPI_SUCCESS)
        goto out;
    if (newrank >= 0) {
        int step = 1;
        for (int mask = 1; mask < pof2; mask <<= 1, step++) {
            int newdst = newrank ^ mask;
            int dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
            rc = coll_sendrecv(v, rbuf, count, dt, dst, tmp, count, dt,
                                   dst, COLL_TAG_ALLREDUCE + step);
            if (rc != MPI_SUCCESS)
                goto out;
            /* Predefined ops are commutative, and a op b == b op a holds bit
             * for bit (IEEE + and * included), so both partners end equal. */
            vmpi_op_apply(op, tmp, rbuf, count, dt);
        }
    }
    if (rank < 2 * rem) {
        if (rank % 2)
            rc = coll_send(v, rbuf, count, dt, rank - 1, COLL_TAG_ALLREDUCE);
        else
            rc = coll_recv(v, rbuf, count, dt, rank + 1, COLL_TAG_ALLREDUCE);
    }
out:
    free(raw);
    return rc;
}

