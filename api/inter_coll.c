/* Collectives on intercommunicators: argument checks (api/inter_coll.h),
 * then coll/inter.c, or coll/inter_sched.c for the non-blocking forms. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "../coll/inter.h"
#include "inter_coll.h"

static const char where[] = " (not allowed on an intercommunicator)";

static int done(struct vmpi_comm *c, int rc)
{
    return rc == MPI_SUCCESS ? rc : vmpi_err_handle(c, rc);
}

/* The blocking call, or (request not NULL) the non-blocking one, which
 * takes the request pointer r. */
#define RUN(c, request, blocking, nonblocking)               \
    do {                                                     \
        if (!(request))                                      \
            return done((c), (blocking));                    \
        struct vmpi_req *r = NULL;                           \
        int rc_ = (nonblocking);                             \
        return coll_started(rc_, r, (request));         \
    } while (0)

static int root_arg(struct vmpi_comm *c, const char *fn, int root)
{
    if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->peers->size))
        return MPI_SUCCESS;
    return vmpi_err(c, MPI_ERR_ROOT,
                    "%s: root = %d is not MPI_ROOT, MPI_PROC_NULL or a rank of the remote group "
                    "(size %d)", fn, root, c->peers->size);
}

/* One side's (buf, count, type), never MPI_IN_PLACE. */
static int side_arg(struct vmpi_comm *c, const char *fn, const char *side, const void *buf,
                    int count, MPI_Datatype h, struct vmpi_dtype **dt)
{
    if (buf == MPI_IN_PLACE)
        return vmpi_err(c, MPI_ERR_BUFFER, "%s: %sbuf is MPI_IN_PLACE%s", fn, side, where);
    return coll_data_arg(c, fn, side, buf, count, h, dt);
}

/* counts (and displs, when given) of one side: an entry per remote process. */
static int counts_arg(struct vmpi_comm *c, const char *fn, const char *name, const int *counts,
                      const char *dname, const int *displs)
{
    if (!counts)
        return vmpi_err(c, MPI_ERR_ARG, "%s: %s is NULL", fn, name);
    if (dname && !displs)
        return vmpi_err(c, MPI_ERR_ARG, "%s: %s is NULL", fn, dname);
    for (int i = 0; i < c->peers->size; i++)
        if (counts[i] < 0)
            return vmpi_err(c, MPI_ERR_COUNT, "%s: %s[%d] = %d is negative", fn, name, i,
                            counts[i]);
    return MPI_SUCCESS;
}

int inter_none(struct vmpi_comm *c, const char *fn)
{
    return vmpi_err(c, MPI_ERR_COMM, "%s: comm is an intercommunicator, on which MPI does not "
                    "define this operation", fn);
}

int inter_barrier(struct vmpi_comm *c, MPI_Request *request)
{
    RUN(c, request, vmpi_inter_barrier(c), vmpi_inter_ibarrier(c, &r));
}

int inter_bcast(const char *fn, void *buf, int count, MPI_Datatype datatype, int root,
                struct vmpi_comm *c, MPI_Request *request)
{
    struct vmpi_dtype *dt = NULL;
    TRY(root_arg(c, fn, root));
    if (root != MPI_PROC_NULL)
        TRY(side_arg(c, fn, "", buf, count, datatype, &dt));
    RUN(c, request, vmpi_inter_bcast(buf, count, dt, root, c),
        vmpi_inter_ibcast(buf, count, dt, root, c, &r));
}

int inter_gather(const char *fn, bool vform, const void *sendbuf, int sendcount,
                 MPI_Datatype sendtype,
                 void *recvbuf, int recvcount, const int *recvcounts, const int *displs,
                 MPI_Datatype recvtype, int root, struct vmpi_comm *c, MPI_Request *request)
{
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    TRY(root_arg(c, fn, root));
    if (root == MPI_ROOT && vform) {
        TRY(counts_arg(c, fn, "recvcounts", recvcounts, "displs", displs));
        TRY(side_arg(c, fn, "recv", recvbuf, 0, recvtype, &rdt));
    } else if (root == MPI_ROOT) {
        TRY(side_arg(c, fn, "recv", recvbuf, recvcount, recvtype, &rdt));
    } else if (root != MPI_PROC_NULL) {
        TRY(side_arg(c, fn, "send", sendbuf, sendcount, sendtype, &sdt));
    }
    if (vform)
        RUN(c, request,
            vmpi_inter_gatherv(sendbuf, sendcount, sdt, recvbuf, recvcounts, displs, rdt, root, c),
            vmpi_inter_igather(sendbuf, sendcount, sdt, recvbuf, 0, recvcounts, displs, rdt, root,
                               c, &r));
    RUN(c, request, vmpi_inter_gather(sendbuf, sendcount, sdt, recvbuf, recvcount, rdt, root, c),
        vmpi_inter_igather(sendbuf, sendcount, sdt, recvbuf, recvcount, NULL, NULL, rdt, root, c,
                           &r));
}

int inter_scatter(const char *fn, bool vform, const void *sendbuf, int sendcount,
                  const int *sendcounts,
                  const int *displs, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, int root, struct vmpi_comm *c, MPI_Request *request)
{
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    TRY(root_arg(c, fn, root));
    if (root == MPI_ROOT && vform) {
        TRY(counts_arg(c, fn, "sendcounts", sendcounts, "displs", displs));
        TRY(side_arg(c, fn, "send", sendbuf, 0, sendtype, &sdt));
    } else if (root == MPI_ROOT) {
        TRY(side_arg(c, fn, "send", sendbuf, sendcount, sendtype, &sdt));
    } else if (root != MPI_PROC_NULL) {
        TRY(side_arg(c, fn, "recv", recvbuf, recvcount, recvtype, &rdt));
    }
    if (vform)
        RUN(c, request,
            vmpi_inter_scatterv(sendbuf, sendcounts, displs, sdt, recvbuf, recvcount, rdt, root,
                                c),
            vmpi_inter_iscatter(sendbuf, 0, sendcounts, displs, sdt, recvbuf, recvcount, rdt,
                                root, c, &r));
    RUN(c, request,
        vmpi_inter_scatter(sendbuf, sendcount, sdt, recvbuf, recvcount, rdt, root, c),
        vmpi_inter_iscatter(sendbuf, sendcount, NULL, NULL, sdt, recvbuf, recvcount, rdt, root,
                            c, &r));
}

/* Per-peer arrays for vmpi_inter_exchange: counts, byte displacements and
 * types of each remote process, for one side. */
struct peers_side {
    int *counts;
    MPI_Aint *displs;
    struct vmpi_dtype **dts;
};

static int side_alloc(struct vmpi_comm *c, struct peers_side *s)
{
    size_t p = (size_t)c->peers->size;
    s->counts = malloc(sizeof(int) * p);
    s->displs = malloc(sizeof(MPI_Aint) * p);
    s->dts = malloc(sizeof *s->dts * p);
    if (s->counts && s->displs && s->dts)
        return MPI_SUCCESS;
    return vmpi_err(c, MPI_ERR_NO_MEM, "intercommunicator collective: out of memory");
}

static void side_free(struct peers_side *s)
{
    free(s->counts);
    free(s->displs);
    free(s->dts);
}

/* Fills one side: counts[i] (or count), displacement displs[i] (or i *
 * count, or 0 when `same`) in elements of dt, or in bytes with types[i]. */
static int side_fill(struct vmpi_comm *c, const char *fn, const char *side, struct peers_side *s,
                     int count, const int *counts, const int *displs, bool same,
                     struct vmpi_dtype *dt, const MPI_Datatype *types)
{
    for (int i = 0; i < c->peers->size; i++) {
        s->counts[i] = counts ? counts[i] : count;
        if (types) {
            char name[16];
            snprintf(name, sizeof name, "%stypes", side);
            TRY(coll_type_arg(c, fn, name, i, types[i], &s->dts[i]));
            s->displs[i] = displs[i];
            continue;
        }
        s->dts[i] = dt;
        MPI_Aint at = displs ? displs[i] : same ? 0 : (MPI_Aint)i * count;
        s->displs[i] = at * vmpi_dtype_extent(dt);
    }
    return MPI_SUCCESS;
}

/* Fills both sides (the arguments as side_fill's) and runs the exchange,
 * blocking or not. */
static int exchange(struct vmpi_comm *c, const char *fn, const void *sendbuf, int sendcount,
                    const int *sendcounts, const int *sdispls, bool same, struct vmpi_dtype *sdt,
                    const MPI_Datatype *sendtypes, void *recvbuf, int recvcount,
                    const int *recvcounts, const int *rdispls, struct vmpi_dtype *rdt,
                    const MPI_Datatype *recvtypes, MPI_Request *request)
{
    struct peers_side s = {0}, r = {0};
    int rc = side_alloc(c, &s);
    if (rc == MPI_SUCCESS)
        rc = side_alloc(c, &r);
    if (rc == MPI_SUCCESS)
        rc = side_fill(c, fn, "send", &s, sendcount, sendcounts, sdispls, same, sdt, sendtypes);
    if (rc == MPI_SUCCESS)
        rc = side_fill(c, fn, "recv", &r, recvcount, recvcounts, rdispls, false, rdt, recvtypes);
    struct vmpi_req *q = NULL;
    if (rc == MPI_SUCCESS && !request)
        rc = done(c, vmpi_inter_exchange(sendbuf, s.counts, s.displs, s.dts, recvbuf, r.counts,
                                         r.displs, r.dts, c));
    else if (rc == MPI_SUCCESS) {
        rc = vmpi_inter_iexchange(fn, sendbuf, s.counts, s.displs, s.dts, recvbuf, r.counts,
                                  r.displs, r.dts, c, &q);
        rc = coll_started(rc, q, request);
    }
    side_free(&s);
    side_free(&r);
    return rc;
}

int inter_allgather(const char *fn, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                    void *recvbuf, int recvcount, const int *recvcounts, const int *displs,
                    MPI_Datatype recvtype, struct vmpi_comm *c, MPI_Request *request)
{
    struct vmpi_dtype *sdt, *rdt;
    TRY(side_arg(c, fn, "send", sendbuf, sendcount, sendtype, &sdt));
    if (!recvcounts) {
        TRY(side_arg(c, fn, "recv", recvbuf, recvcount, recvtype, &rdt));
        if (!request)
            return done(c, vmpi_inter_allgather(sendbuf, sendcount, sdt, recvbuf, recvcount, rdt,
                                                c));
    } else {
        TRY(counts_arg(c, fn, "recvcounts", recvcounts, "displs", displs));
        TRY(side_arg(c, fn, "recv", recvbuf, 0, recvtype, &rdt));
    }
    return exchange(c, fn, sendbuf, sendcount, NULL, NULL, true, sdt, NULL, recvbuf, recvcount,
                    recvcounts, displs, rdt, NULL, request);
}

int inter_alltoall(const char *fn, const void *sendbuf, int sendcount, const int *sendcounts,
                   const int *sdispls, MPI_Datatype sendtype, const MPI_Datatype *sendtypes,
                   void *recvbuf, int recvcount, const int *recvcounts, const int *rdispls,
                   MPI_Datatype recvtype, const MPI_Datatype *recvtypes, struct vmpi_comm *c,
                   MPI_Request *request)
{
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    if (sendcounts) {
        TRY(counts_arg(c, fn, "sendcounts", sendcounts, "sdispls", sdispls));
        TRY(counts_arg(c, fn, "recvcounts", recvcounts, "rdispls", rdispls));
        if (sendbuf == MPI_IN_PLACE || recvbuf == MPI_IN_PLACE)
            return vmpi_err(c, MPI_ERR_BUFFER, "%s: MPI_IN_PLACE%s", fn, where);
        if (sendtypes && !recvtypes)
            return vmpi_err(c, MPI_ERR_ARG, "%s: recvtypes is NULL", fn);
        if (!sendtypes) {
            TRY(side_arg(c, fn, "send", sendbuf, 0, sendtype, &sdt));
            TRY(side_arg(c, fn, "recv", recvbuf, 0, recvtype, &rdt));
        }
    } else {
        TRY(side_arg(c, fn, "send", sendbuf, sendcount, sendtype, &sdt));
        TRY(side_arg(c, fn, "recv", recvbuf, recvcount, recvtype, &rdt));
    }
    return exchange(c, fn, sendbuf, sendcount, sendcounts, sdispls, false, sdt, sendtypes,
                    recvbuf, recvcount, recvcounts, rdispls, rdt, recvtypes, request);
}

/* count, datatype and op of a reduction. */
static int reduce_arg(struct vmpi_comm *c, const char *fn, int count, MPI_Datatype datatype,
                      MPI_Op op, struct vmpi_dtype **dt)
{
    VMPI_CHECK(count >= 0, c, MPI_ERR_COUNT, "%s: count = %d is negative", fn, count);
    TRY(coll_type_arg(c, fn, "datatype", -1, datatype, dt));
    return op_arg(c, op, *dt, datatype, fn);
}

int inter_reduce(const char *fn, const void *sendbuf, void *recvbuf, int count,
                 MPI_Datatype datatype, MPI_Op op, int root, struct vmpi_comm *c,
                 MPI_Request *request)
{
    struct vmpi_dtype *dt = NULL;
    TRY(root_arg(c, fn, root));
    if (root != MPI_PROC_NULL)
        TRY(reduce_arg(c, fn, count, datatype, op, &dt));
    if (root == MPI_ROOT)
        TRY(side_arg(c, fn, "recv", recvbuf, count, datatype, &dt));
    else if (root != MPI_PROC_NULL)
        TRY(side_arg(c, fn, "send", sendbuf, count, datatype, &dt));
    RUN(c, request, vmpi_inter_reduce(sendbuf, recvbuf, count, dt, op, root, c),
        vmpi_inter_ireduce(sendbuf, recvbuf, count, dt, op, root, c, &r));
}

int inter_allreduce(const char *fn, const void *sendbuf, void *recvbuf, int count,
                    MPI_Datatype datatype, MPI_Op op, struct vmpi_comm *c, MPI_Request *request)
{
    struct vmpi_dtype *dt;
    TRY(reduce_arg(c, fn, count, datatype, op, &dt));
    TRY(side_arg(c, fn, "send", sendbuf, count, datatype, &dt));
    TRY(side_arg(c, fn, "recv", recvbuf, count, datatype, &dt));
    RUN(c, request, vmpi_inter_allreduce(sendbuf, recvbuf, count, dt, op, c),
        vmpi_inter_iallreduce(sendbuf, recvbuf, count, dt, op, c, &r));
}

int inter_reduce_scatter(const char *fn, const void *sendbuf, void *recvbuf,
                         const int *recvcounts, int recvcount, MPI_Datatype datatype,
                         MPI_Op op, struct vmpi_comm *c, MPI_Request *request)
{
    struct vmpi_dtype *dt;
    int n = c->size;
    int *counts = malloc(sizeof(int) * (size_t)n);
    if (!counts)
        return vmpi_err(c, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    int rc = MPI_SUCCESS;
    MPI_Count total = 0;
    if (recvcounts == NULL)
        rc = reduce_arg(c, fn, recvcount, datatype, op, &dt);
    else
        rc = reduce_arg(c, fn, 0, datatype, op, &dt);
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        counts[i] = recvcounts ? recvcounts[i] : recvcount;
        if (counts[i] < 0)
            rc = vmpi_err(c, MPI_ERR_COUNT, "%s: recvcounts[%d] = %d is negative", fn, i,
                          counts[i]);
        total += counts[i];
    }
    if (rc == MPI_SUCCESS && total > INT_MAX)
        rc = vmpi_err(c, MPI_ERR_COUNT, "%s: the counts add up to more than INT_MAX", fn);
    if (rc == MPI_SUCCESS)
        rc = side_arg(c, fn, "send", sendbuf, (int)total, datatype, &dt);
    if (rc == MPI_SUCCESS)
        rc = side_arg(c, fn, "recv", recvbuf, counts[c->rank], datatype, &dt);
    struct vmpi_req *q = NULL;
    if (rc == MPI_SUCCESS && !request)
        rc = done(c, vmpi_inter_reduce_scatter(sendbuf, recvbuf, counts, dt, op, c));
    else if (rc == MPI_SUCCESS) {
        rc = vmpi_inter_ireduce_scatter(fn, sendbuf, recvbuf, counts, dt, op, c, &q);
        rc = coll_started(rc, q, request);
    }
    free(counts);
    return rc;
}
