/* Collective entry points that move data: argument checks, then
 * vmpi_coll_* (coll/select.c). */
#include <stdio.h>
#include <stdlib.h>

#include "coll_args.h"

int PMPI_Barrier(MPI_Comm comm)
{
    VMPI_ENTER("MPI_Barrier");
    COMM_ARG(c, comm, "MPI_Barrier");
    int rc = vmpi_coll_barrier(c);
    return rc == MPI_SUCCESS ? rc : vmpi_err_handle(c, rc);
}
VMPI_WEAK(Barrier);

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
VMPI_WEAK(Bcast);

/* ---- argument checks shared by the entry points below -------------------- */

/* counts and displs arrays of n entries (v forms), with one datatype;
 * *any: some count is positive. */
static int counts_arg(struct vmpi_comm *c, const char *fn, const char *side, const void *buf,
                      const int *counts, const char *cname, const int *displs,
                      const char *dname, MPI_Datatype h, int n, struct vmpi_dtype **dt,
                      int *any)
{
    char name[16];
    snprintf(name, sizeof name, "%stype", side);
    int rc = coll_type_arg(c, fn, name, -1, h, dt);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!counts)
        return vmpi_err(c, MPI_ERR_ARG, "%s: %s is NULL", fn, cname);
    if (!displs)
        return vmpi_err(c, MPI_ERR_ARG, "%s: %s is NULL", fn, dname);
    *any = 0;
    for (int i = 0; i < n; i++) {
        if (counts[i] < 0)
            return vmpi_err(c, MPI_ERR_COUNT, "%s: %s[%d] = %d is negative", fn, cname, i,
                            counts[i]);
        if (counts[i] > 0)
            *any = 1;
    }
    if (*any && coll_null_buf(buf, h))
        return vmpi_err(c, MPI_ERR_BUFFER, "%s: %sbuf is NULL with nonzero %s", fn, side,
                        cname);
    return MPI_SUCCESS;
}

/* Returns a failed check's error code (its handler already applied). */
#define TRY(call)               \
    do {                        \
        int rc_ = (call);       \
        if (rc_ != MPI_SUCCESS) \
            return rc_;         \
    } while (0)

/* Returns the collective's result through the communicator's handler. */
#define DONE(c, call)                                              \
    do {                                                           \
        int rc_ = (call);                                          \
        return rc_ == MPI_SUCCESS ? rc_ : vmpi_err_handle(c, rc_); \
    } while (0)

/* ---- gather and scatter ------------------------------------------------- */

int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    static const char fn[] = "MPI_Gather";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    ROOT_ARG(root, c, fn);
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    if (c->rank == root) {
        TRY(coll_not_in_place(c, fn, recvbuf, "recvbuf", ""));
        TRY(coll_data_arg(c, fn, "recv", recvbuf, recvcount, recvtype, &rdt));
        if (sendbuf != MPI_IN_PLACE) {
            TRY(coll_data_arg(c, fn, "send", sendbuf, sendcount, sendtype, &sdt));
            TRY(coll_alias_arg(c, fn, sendbuf, recvbuf, sendcount > 0 && recvcount > 0));
        }
    } else {
        TRY(coll_not_in_place(c, fn, sendbuf, "sendbuf", " on a rank that is not the root"));
        TRY(coll_data_arg(c, fn, "send", sendbuf, sendcount, sendtype, &sdt));
    }
    DONE(c, vmpi_coll_gather(sendbuf, sendcount, sdt, recvbuf, recvcount, rdt, root, c));
}
VMPI_WEAK(Gather);

int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm)
{
    static const char fn[] = "MPI_Gatherv";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    ROOT_ARG(root, c, fn);
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    if (c->rank == root) {
        int any;
        TRY(coll_not_in_place(c, fn, recvbuf, "recvbuf", ""));
        TRY(counts_arg(c, fn, "recv", recvbuf, recvcounts, "recvcounts", displs, "displs",
                       recvtype, c->size, &rdt, &any));
        if (sendbuf != MPI_IN_PLACE) {
            TRY(coll_data_arg(c, fn, "send", sendbuf, sendcount, sendtype, &sdt));
            TRY(coll_alias_arg(c, fn, sendbuf, recvbuf, sendcount > 0 && any));
        }
    } else {
        TRY(coll_not_in_place(c, fn, sendbuf, "sendbuf", " on a rank that is not the root"));
        TRY(coll_data_arg(c, fn, "send", sendbuf, sendcount, sendtype, &sdt));
    }
    DONE(c, vmpi_coll_gatherv(sendbuf, sendcount, sdt, recvbuf, recvcounts, displs, rdt, root,
                              c));
}
VMPI_WEAK(Gatherv);

int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    static const char fn[] = "MPI_Scatter";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    ROOT_ARG(root, c, fn);
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    if (c->rank == root) {
        TRY(coll_not_in_place(c, fn, sendbuf, "sendbuf", ""));
        TRY(coll_data_arg(c, fn, "send", sendbuf, sendcount, sendtype, &sdt));
        if (recvbuf != MPI_IN_PLACE) {
            TRY(coll_data_arg(c, fn, "recv", recvbuf, recvcount, recvtype, &rdt));
            TRY(coll_alias_arg(c, fn, sendbuf, recvbuf, sendcount > 0 && recvcount > 0));
        }
    } else {
        TRY(coll_not_in_place(c, fn, recvbuf, "recvbuf", " on a rank that is not the root"));
        TRY(coll_data_arg(c, fn, "recv", recvbuf, recvcount, recvtype, &rdt));
    }
    DONE(c, vmpi_coll_scatter(sendbuf, sendcount, sdt, recvbuf, recvcount, rdt, root, c));
}
VMPI_WEAK(Scatter);

int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm)
{
    static const char fn[] = "MPI_Scatterv";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    ROOT_ARG(root, c, fn);
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    if (c->rank == root) {
        int any;
        TRY(coll_not_in_place(c, fn, sendbuf, "sendbuf", ""));
        TRY(counts_arg(c, fn, "send", sendbuf, sendcounts, "sendcounts", displs, "displs",
                       sendtype, c->size, &sdt, &any));
        if (recvbuf != MPI_IN_PLACE) {
            TRY(coll_data_arg(c, fn, "recv", recvbuf, recvcount, recvtype, &rdt));
            TRY(coll_alias_arg(c, fn, sendbuf, recvbuf, any && recvcount > 0));
        }
    } else {
        TRY(coll_not_in_place(c, fn, recvbuf, "recvbuf", " on a rank that is not the root"));
        TRY(coll_data_arg(c, fn, "recv", recvbuf, recvcount, recvtype, &rdt));
    }
    DONE(c, vmpi_coll_scatterv(sendbuf, sendcounts, displs, sdt, recvbuf, recvcount, rdt, root,
                               c));
}
VMPI_WEAK(Scatterv);

/* ---- allgather ---------------------------------------------------------- */

int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char fn[] = "MPI_Allgather";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    TRY(coll_not_in_place(c, fn, recvbuf, "recvbuf", ""));
    TRY(coll_data_arg(c, fn, "recv", recvbuf, recvcount, recvtype, &rdt));
    if (sendbuf != MPI_IN_PLACE) {
        TRY(coll_data_arg(c, fn, "send", sendbuf, sendcount, sendtype, &sdt));
        TRY(coll_alias_arg(c, fn, sendbuf, recvbuf, sendcount > 0 && recvcount > 0));
    }
    DONE(c, vmpi_coll_allgather2(sendbuf, sendcount, sdt, recvbuf, recvcount, rdt, c));
}
VMPI_WEAK(Allgather);

int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm)
{
    static const char fn[] = "MPI_Allgatherv";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    int any;
    TRY(coll_not_in_place(c, fn, recvbuf, "recvbuf", ""));
    TRY(counts_arg(c, fn, "recv", recvbuf, recvcounts, "recvcounts", displs, "displs", recvtype,
                   c->size, &rdt, &any));
    if (sendbuf != MPI_IN_PLACE) {
        TRY(coll_data_arg(c, fn, "send", sendbuf, sendcount, sendtype, &sdt));
        TRY(coll_alias_arg(c, fn, sendbuf, recvbuf, sendcount > 0 && any));
    }
    DONE(c, vmpi_coll_allgatherv(sendbuf, sendcount, sdt, recvbuf, recvcounts, displs, rdt, c));
}
VMPI_WEAK(Allgatherv);

/* ---- alltoall ----------------------------------------------------------- */

int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char fn[] = "MPI_Alltoall";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    TRY(coll_not_in_place(c, fn, recvbuf, "recvbuf", ""));
    TRY(coll_data_arg(c, fn, "recv", recvbuf, recvcount, recvtype, &rdt));
    if (sendbuf != MPI_IN_PLACE) {
        TRY(coll_data_arg(c, fn, "send", sendbuf, sendcount, sendtype, &sdt));
        TRY(coll_alias_arg(c, fn, sendbuf, recvbuf, sendcount > 0 && recvcount > 0));
    }
    DONE(c, vmpi_coll_alltoall(sendbuf, sendcount, sdt, recvbuf, recvcount, rdt, c));
}
VMPI_WEAK(Alltoall);

int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char fn[] = "MPI_Alltoallv";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    int rany, sany;
    TRY(coll_not_in_place(c, fn, recvbuf, "recvbuf", ""));
    TRY(counts_arg(c, fn, "recv", recvbuf, recvcounts, "recvcounts", rdispls, "rdispls",
                   recvtype, c->size, &rdt, &rany));
    if (sendbuf != MPI_IN_PLACE) {
        TRY(counts_arg(c, fn, "send", sendbuf, sendcounts, "sendcounts", sdispls, "sdispls",
                       sendtype, c->size, &sdt, &sany));
        TRY(coll_alias_arg(c, fn, sendbuf, recvbuf, sany && rany));
    }
    DONE(c, vmpi_coll_alltoallv(sendbuf, sendcounts, sdispls, sdt, recvbuf, recvcounts,
                                rdispls, rdt, c));
}
VMPI_WEAK(Alltoallv);

/* One side of an alltoallw: every array present, counts >= 0, the type of
 * each nonzero block valid and committed, into dts (a zero block's type is
 * not used and may be anything). */
static int w_side(struct vmpi_comm *c, const char *fn, const char *side, const void *buf,
                  const int *counts, const int *displs, const MPI_Datatype *types,
                  struct vmpi_dtype **dts, int *any)
{
    char cname[16], dname[16], tname[16];
    snprintf(cname, sizeof cname, "%scounts", side);
    snprintf(dname, sizeof dname, "%sdispls", side[0] == 's' ? "s" : "r");
    snprintf(tname, sizeof tname, "%stypes", side);
    if (!counts)
        return vmpi_err(c, MPI_ERR_ARG, "%s: %s is NULL", fn, cname);
    if (!displs)
        return vmpi_err(c, MPI_ERR_ARG, "%s: %s is NULL", fn, dname);
    if (!types)
        return vmpi_err(c, MPI_ERR_ARG, "%s: %s is NULL", fn, tname);
    *any = 0;
    for (int i = 0; i < c->size; i++) {
        if (counts[i] < 0)
            return vmpi_err(c, MPI_ERR_COUNT, "%s: %s[%d] = %d is negative", fn, cname, i,
                            counts[i]);
        if (counts[i] == 0) {
            dts[i] = NULL;
            continue;
        }
        *any = 1;
        int rc = coll_type_arg(c, fn, tname, i, types[i], &dts[i]);
        if (rc != MPI_SUCCESS)
            return rc;
        if (coll_null_buf(buf, types[i]))
            return vmpi_err(c, MPI_ERR_BUFFER, "%s: %sbuf is NULL with %s[%d] = %d", fn, side,
                            cname, i, counts[i]);
    }
    return MPI_SUCCESS;
}

int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    static const char fn[] = "MPI_Alltoallw";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    TRY(coll_not_in_place(c, fn, recvbuf, "recvbuf", ""));
    struct vmpi_dtype **dts = malloc(sizeof *dts * 2 * (size_t)c->size);
    VMPI_CHECK(dts, c, MPI_ERR_NO_MEM, "%s: out of memory for the datatype lists", fn);
    struct vmpi_dtype **sdts = dts, **rdts = dts + c->size;
    int rany, sany;
    int rc = w_side(c, fn, "recv", recvbuf, recvcounts, rdispls, recvtypes, rdts, &rany);
    if (rc == MPI_SUCCESS && sendbuf != MPI_IN_PLACE) {
        rc = w_side(c, fn, "send", sendbuf, sendcounts, sdispls, sendtypes, sdts, &sany);
        if (rc == MPI_SUCCESS)
            rc = coll_alias_arg(c, fn, sendbuf, recvbuf, sany && rany);
    }
    if (rc == MPI_SUCCESS) {
        rc = vmpi_coll_alltoallw(sendbuf, sendcounts, sdispls, sdts, recvbuf, recvcounts,
                                 rdispls, rdts, c);
        if (rc != MPI_SUCCESS)
            rc = vmpi_err_handle(c, rc);
    }
    free(dts);
    return rc;
}
VMPI_WEAK(Alltoallw);
