/* Collectives on intercommunicators (coll/inter.h).
 *
 * Each side works on its private intracommunicator (c->local) with the
 * intracommunicator algorithms, which know the side's locality, and the two
 * sides meet through their leaders (local rank 0) or the root, on the
 * intercommunicator's collective context:
 *   barrier        local barrier, leaders swap an empty message, local barrier
 *   bcast          root -> remote leader, then a local bcast
 *   gather         local gather at the leader, leader -> root
 *   scatter        root -> remote leader, then a local scatter
 *   allgather      local gathers, leaders swap, local bcasts
 *   reduce         local reduce at the leader, leader -> root
 *   allreduce      local reduces, leaders swap, local bcasts
 *   reduce_scatter local reduces, leaders swap, local scatterv
 *   gatherv, scatterv, alltoall(v,w), allgatherv: directly between the
 *                  processes concerned.
 * Only the intercollectives use this context, so one tag per kind keeps
 * them apart: all processes call them in the same order. */
#include <stdlib.h>

#include "../core/dtype_impl.h" /* vmpi_dtype_addr */
#include "coll_impl.h"
#include "inter.h"

enum {
    TAG_BARRIER = 1, TAG_BCAST, TAG_GATHER, TAG_SCATTER, TAG_ALLGATHER, TAG_REDUCE,
    TAG_ALLREDUCE, TAG_EXCHANGE
};

static int no_mem(struct vmpi_comm *c)
{
    return vmpi_err(c, MPI_ERR_NO_MEM, "intercommunicator collective: out of memory");
}

static int send_to(const void *buf, MPI_Count count, struct vmpi_dtype *dt, int to, int tag,
                   struct vmpi_comm *c)
{
    return vmpi_p2p_send(buf, count, dt, to, tag, c, 1);
}

static int recv_from(void *buf, MPI_Count count, struct vmpi_dtype *dt, int from, int tag,
                     struct vmpi_comm *c)
{
    return vmpi_p2p_recv(buf, count, dt, from, tag, c, 1, MPI_STATUS_IGNORE);
}

/* The leaders swap (sbuf, scount, sdt) for (rbuf, rcount, rdt). */
static int leaders_swap(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                        MPI_Count rcount, struct vmpi_dtype *rdt, int tag, struct vmpi_comm *c)
{
    if (c->rank != 0)
        return MPI_SUCCESS;
    return vmpi_p2p_sendrecv(sbuf, scount, sdt, 0, tag, rbuf, rcount, rdt, 0, tag, c, 1,
                             MPI_STATUS_IGNORE);
}

int vmpi_inter_barrier(struct vmpi_comm *c)
{
    static char none;
    struct vmpi_dtype *bt = vmpi_dtype_get(MPI_BYTE);
    int rc = vmpi_coll_barrier(c->local);
    if (rc == MPI_SUCCESS)
        rc = leaders_swap(&none, 0, bt, &none, 0, bt, TAG_BARRIER, c);
    return rc == MPI_SUCCESS ? vmpi_coll_barrier(c->local) : rc;
}

int vmpi_inter_bcast(void *buf, MPI_Count count, struct vmpi_dtype *dt, int root,
                     struct vmpi_comm *c)
{
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root == MPI_ROOT)
        return send_to(buf, count, dt, 0, TAG_BCAST, c);
    int rc = c->rank == 0 ? recv_from(buf, count, dt, root, TAG_BCAST, c) : MPI_SUCCESS;
    return rc == MPI_SUCCESS ? vmpi_coll_bcast(buf, count, dt, 0, c->local) : rc;
}

int vmpi_inter_gather(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                      MPI_Count rcount, struct vmpi_dtype *rdt, int root, struct vmpi_comm *c)
{
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root == MPI_ROOT)
        return recv_from(rbuf, rcount * c->peers->size, rdt, 0, TAG_GATHER, c);
    void *raw = NULL, *tmp = NULL;
    MPI_Count n = scount * c->size;
    if (c->rank == 0 && !(tmp = coll_tmp_alloc(n, sdt, &raw)))
        return no_mem(c);
    int rc = vmpi_coll_gather(sbuf, scount, sdt, tmp, scount, sdt, 0, c->local);
    if (rc == MPI_SUCCESS && c->rank == 0)
        rc = send_to(tmp, n, sdt, root, TAG_GATHER, c);
    free(raw);
    return rc;
}

int vmpi_inter_scatter(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                       MPI_Count rcount, struct vmpi_dtype *rdt, int root, struct vmpi_comm *c)
{
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root == MPI_ROOT)
        return send_to(sbuf, scount * c->peers->size, sdt, 0, TAG_SCATTER, c);
    void *raw = NULL, *tmp = NULL;
    MPI_Count n = rcount * c->size;
    if (c->rank == 0 && !(tmp = coll_tmp_alloc(n, rdt, &raw)))
        return no_mem(c);
    int rc = c->rank == 0 ? recv_from(tmp, n, rdt, root, TAG_SCATTER, c) : MPI_SUCCESS;
    if (rc == MPI_SUCCESS)
        rc = vmpi_coll_scatter(tmp, rcount, rdt, rbuf, rcount, rdt, 0, c->local);
    free(raw);
    return rc;
}

int vmpi_inter_allgather(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt,
                         void *rbuf, MPI_Count rcount, struct vmpi_dtype *rdt,
                         struct vmpi_comm *c)
{
    void *raw = NULL, *tmp = NULL;
    MPI_Count n = scount * c->size, rn = rcount * c->peers->size;
    if (c->rank == 0 && !(tmp = coll_tmp_alloc(n, sdt, &raw)))
        return no_mem(c);
    int rc = vmpi_coll_gather(sbuf, scount, sdt, tmp, scount, sdt, 0, c->local);
    if (rc == MPI_SUCCESS)
        rc = leaders_swap(tmp, n, sdt, rbuf, rn, rdt, TAG_ALLGATHER, c);
    free(raw);
    return rc == MPI_SUCCESS ? vmpi_coll_bcast(rbuf, rn, rdt, 0, c->local) : rc;
}

/* Waits for the n requests; the first error wins. */
static int wait_all(struct vmpi_req **req, int n, int rc)
{
    for (int i = 0; i < n; i++) {
        int r = vmpi_p2p_wait(req[i], MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = r;
    }
    free(req);
    return rc;
}

/* Posts every receive, then every send, then waits for all; a NULL count
 * array means that side has nothing. */
int vmpi_inter_exchange(const void *sbuf, const int *scounts, const MPI_Aint *sdispls,
                        struct vmpi_dtype *const *sdts, void *rbuf, const int *rcounts,
                        const MPI_Aint *rdispls, struct vmpi_dtype *const *rdts,
                        struct vmpi_comm *c)
{
    int p = c->peers->size, n = 0, rc = MPI_SUCCESS;
    struct vmpi_req **req = malloc(sizeof *req * 2 * (size_t)p);
    if (!req)
        return no_mem(c);
    for (int i = 0; i < p && rc == MPI_SUCCESS && rcounts; i++)
        if ((rc = vmpi_p2p_irecv(vmpi_dtype_addr(rbuf, rdispls[i]), rcounts[i], rdts[i], i,
                                 TAG_EXCHANGE, c, 1, &req[n])) == MPI_SUCCESS)
            n++;
    for (int i = 0; i < p && rc == MPI_SUCCESS && scounts; i++)
        if ((rc = vmpi_p2p_isend(vmpi_dtype_addr(sbuf, sdispls[i]), scounts[i], sdts[i], i,
                                 TAG_EXCHANGE, c, 1, VMPI_MODE_STD, &req[n])) == MPI_SUCCESS)
            n++;
    return wait_all(req, n, rc);
}

/* The root's side of gatherv (recv) and scatterv: one message per remote
 * process, at displs[i] elements of dt. */
static int root_each(int recv, void *buf, const int *counts, const int *displs,
                     struct vmpi_dtype *dt, int tag, struct vmpi_comm *c)
{
    int p = c->peers->size, n = 0, rc = MPI_SUCCESS;
    struct vmpi_req **req = malloc(sizeof *req * (size_t)p);
    if (!req)
        return no_mem(c);
    MPI_Aint ext = vmpi_dtype_extent(dt);
    for (int i = 0; i < p && rc == MPI_SUCCESS; i++) {
        void *at = vmpi_dtype_addr(buf, displs[i] * ext);
        rc = recv ? vmpi_p2p_irecv(at, counts[i], dt, i, tag, c, 1, &req[n])
                  : vmpi_p2p_isend(at, counts[i], dt, i, tag, c, 1, VMPI_MODE_STD, &req[n]);
        if (rc == MPI_SUCCESS)
            n++;
    }
    return wait_all(req, n, rc);
}

int vmpi_inter_gatherv(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                       const int *rcounts, const int *displs, struct vmpi_dtype *rdt, int root,
                       struct vmpi_comm *c)
{
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root != MPI_ROOT)
        return send_to(sbuf, scount, sdt, root, TAG_GATHER, c);
    return root_each(1, rbuf, rcounts, displs, rdt, TAG_GATHER, c);
}

int vmpi_inter_scatterv(const void *sbuf, const int *scounts, const int *displs,
                        struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                        struct vmpi_dtype *rdt, int root, struct vmpi_comm *c)
{
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root != MPI_ROOT)
        return recv_from(rbuf, rcount, rdt, root, TAG_SCATTER, c);
    return root_each(0, (void *)sbuf, scounts, displs, sdt, TAG_SCATTER, c);
}

/* This side's reduction of sbuf at its leader (in *tmp, which the caller
 * frees through *raw). */
static int local_reduce(const void *sbuf, MPI_Count count, struct vmpi_dtype *dt, MPI_Op op,
                        struct vmpi_comm *c, void **tmp, void **raw)
{
    *raw = *tmp = NULL;
    if (c->rank == 0 && !(*tmp = coll_tmp_alloc(count, dt, raw)))
        return no_mem(c);
    return vmpi_coll_reduce(sbuf, *tmp, count, dt, op, 0, c->local);
}

int vmpi_inter_reduce(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                      MPI_Op op, int root, struct vmpi_comm *c)
{
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root == MPI_ROOT)
        return recv_from(rbuf, count, dt, 0, TAG_REDUCE, c);
    void *raw, *tmp;
    int rc = local_reduce(sbuf, count, dt, op, c, &tmp, &raw);
    if (rc == MPI_SUCCESS && c->rank == 0)
        rc = send_to(tmp, count, dt, root, TAG_REDUCE, c);
    free(raw);
    return rc;
}

int vmpi_inter_allreduce(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                         MPI_Op op, struct vmpi_comm *c)
{
    void *raw, *tmp;
    int rc = local_reduce(sbuf, count, dt, op, c, &tmp, &raw);
    if (rc == MPI_SUCCESS)
        rc = leaders_swap(tmp, count, dt, rbuf, count, dt, TAG_ALLREDUCE, c);
    free(raw);
    return rc == MPI_SUCCESS ? vmpi_coll_bcast(rbuf, count, dt, 0, c->local) : rc;
}

int vmpi_inter_reduce_scatter(const void *sbuf, void *rbuf, const int *counts,
                              struct vmpi_dtype *dt, MPI_Op op, struct vmpi_comm *c)
{
    MPI_Count total = 0;
    int *displs = malloc(sizeof(int) * (size_t)c->size);
    if (!displs)
        return no_mem(c);
    for (int i = 0; i < c->size; i++) {
        displs[i] = (int)total;
        total += counts[i];
    }
    void *raw, *mine, *rraw = NULL, *theirs = NULL;
    int rc = local_reduce(sbuf, total, dt, op, c, &mine, &raw);
    if (rc == MPI_SUCCESS && c->rank == 0 && !(theirs = coll_tmp_alloc(total, dt, &rraw)))
        rc = no_mem(c);
    if (rc == MPI_SUCCESS)
        rc = leaders_swap(mine, total, dt, theirs, total, dt, TAG_ALLREDUCE, c);
    if (rc == MPI_SUCCESS)
        rc = vmpi_coll_scatterv(theirs, counts, displs, dt, rbuf, counts[c->rank], dt, 0,
                                c->local);
    free(raw);
    free(rraw);
    free(displs);
    return rc;
}
