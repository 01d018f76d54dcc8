/* Non-blocking gather, scatter, allgatherv, alltoallv/w, reduce_scatter and
 * the scans: the argument checks of the blocking forms (api/coll_args.c)
 * plus the request, then vmpi_coll_i* (coll/sched_move.c,
 * coll/sched_reduce.c). */
#include <stdlib.h>

#include "inter_coll.h"

/* ---- gather and scatter ------------------------------------------------- */

int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    static const char fn[] = "MPI_Igather";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    REQUEST_ARG(request, c, fn);
    INTER_BRANCH(c, inter_gather(fn, false, sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                                 NULL, recvtype, root, c, request));
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    TRY(coll_gather_args(c, fn, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, NULL,
                         NULL, false, root, &sdt, &rdt));
    struct vmpi_req *r = NULL;
    int rc = vmpi_coll_igather(sendbuf, sendcount, sdt, recvbuf, recvcount, rdt, root, c, &r);
    return coll_started(rc, r, request);
}
VMPI_WEAK(Igather);

int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                  MPI_Comm comm, MPI_Request *request)
{
    static const char fn[] = "MPI_Igatherv";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    REQUEST_ARG(request, c, fn);
    INTER_BRANCH(c, inter_gather(fn, true, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                                 displs, recvtype, root, c, request));
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    TRY(coll_gather_args(c, fn, sendbuf, sendcount, sendtype, recvbuf, 0, recvtype, recvcounts,
                         displs, true, root, &sdt, &rdt));
    struct vmpi_req *r = NULL;
    int rc = vmpi_coll_igatherv(sendbuf, sendcount, sdt, recvbuf, recvcounts, displs, rdt, root,
                                c, &r);
    return coll_started(rc, r, request);
}
VMPI_WEAK(Igatherv);

int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    static const char fn[] = "MPI_Iscatter";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    REQUEST_ARG(request, c, fn);
    INTER_BRANCH(c, inter_scatter(fn, false, sendbuf, sendcount, NULL, NULL, sendtype, recvbuf,
                                  recvcount, recvtype, root, c, request));
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    TRY(coll_scatter_args(c, fn, sendbuf, sendcount, NULL, NULL, false, sendtype, recvbuf,
                          recvcount, recvtype, root, &sdt, &rdt));
    struct vmpi_req *r = NULL;
    int rc = vmpi_coll_iscatter(sendbuf, sendcount, sdt, recvbuf, recvcount, rdt, root, c, &r);
    return coll_started(rc, r, request);
}
VMPI_WEAK(Iscatter);

int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm, MPI_Request *request)
{
    static const char fn[] = "MPI_Iscatterv";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    REQUEST_ARG(request, c, fn);
    INTER_BRANCH(c, inter_scatter(fn, true, sendbuf, 0, sendcounts, displs, sendtype, recvbuf,
                                  recvcount, recvtype, root, c, request));
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    TRY(coll_scatter_args(c, fn, sendbuf, 0, sendcounts, displs, true, sendtype, recvbuf,
                          recvcount, recvtype, root, &sdt, &rdt));
    struct vmpi_req *r = NULL;
    int rc = vmpi_coll_iscatterv(sendbuf, sendcounts, displs, sdt, recvbuf, recvcount, rdt, root,
                                 c, &r);
    return coll_started(rc, r, request);
}
VMPI_WEAK(Iscatterv);

/* ---- allgatherv, alltoallv, alltoallw ---------------------------------------- */

int PMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm, MPI_Request *request)
{
    static const char fn[] = "MPI_Iallgatherv";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    REQUEST_ARG(request, c, fn);
    INTER_BRANCH(c, inter_allgather(fn, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                                    displs, recvtype, c, request));
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    TRY(coll_allgatherv_args(c, fn, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                             recvtype, &sdt, &rdt));
    struct vmpi_req *r = NULL;
    int rc = vmpi_coll_iallgatherv(sendbuf, sendcount, sdt, recvbuf, recvcounts, displs, rdt, c,
                                   &r);
    return coll_started(rc, r, request);
}
VMPI_WEAK(Iallgatherv);

int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request *request)
{
    static const char fn[] = "MPI_Ialltoallv";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    REQUEST_ARG(request, c, fn);
    INTER_BRANCH(c, inter_alltoall(fn, sendbuf, 0, sendcounts, sdispls, sendtype, NULL, recvbuf, 0,
                                   recvcounts, rdispls, recvtype, NULL, c, request));
    struct vmpi_dtype *sdt = NULL, *rdt = NULL;
    TRY(coll_alltoallv_args(c, fn, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                            rdispls, recvtype, &sdt, &rdt));
    struct vmpi_req *r = NULL;
    int rc = vmpi_coll_ialltoallv(sendbuf, sendcounts, sdispls, sdt, recvbuf, recvcounts,
                                  rdispls, rdt, c, &r);
    return coll_started(rc, r, request);
}
VMPI_WEAK(Ialltoallv);

int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Request *request)
{
    static const char fn[] = "MPI_Ialltoallw";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    REQUEST_ARG(request, c, fn);
    INTER_BRANCH(c, inter_alltoall(fn, sendbuf, 0, sendcounts, sdispls, MPI_DATATYPE_NULL,
                                   sendtypes, recvbuf, 0, recvcounts, rdispls, MPI_DATATYPE_NULL,
                                   recvtypes, c, request));
    int rc;
    struct vmpi_dtype **dts = coll_alltoallw_args(c, fn, sendbuf, sendcounts, sdispls, sendtypes,
                                                  recvbuf, recvcounts, rdispls, recvtypes, &rc);
    if (!dts)
        return rc;
    struct vmpi_req *r = NULL;
    /* the schedule holds what it needs of dts: it goes now */
    rc = vmpi_coll_ialltoallw(sendbuf, sendcounts, sdispls, dts, recvbuf, recvcounts, rdispls,
                              dts + c->size, c, &r);
    free(dts);
    return coll_started(rc, r, request);
}
VMPI_WEAK(Ialltoallw);

/* ---- reduce_scatter and the scans --------------------------------------------- */

int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    static const char fn[] = "MPI_Ireduce_scatter";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    REQUEST_ARG(request, c, fn);
    INTER_BRANCH(c, inter_reduce_scatter(fn, sendbuf, recvbuf, recvcounts, 0, datatype, op, c,
                                         request));
    struct vmpi_dtype *dt;
    TRY(coll_redscat_args(c, fn, sendbuf, recvbuf, recvcounts, 0, true, datatype, op, &dt));
    struct vmpi_req *r = NULL;
    int rc = vmpi_coll_ireduce_scatter(sendbuf, recvbuf, recvcounts, dt, op, c, &r);
    return coll_started(rc, r, request);
}
VMPI_WEAK(Ireduce_scatter);

int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                               MPI_Request *request)
{
    static const char fn[] = "MPI_Ireduce_scatter_block";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    REQUEST_ARG(request, c, fn);
    INTER_BRANCH(c, inter_reduce_scatter(fn, sendbuf, recvbuf, NULL, recvcount, datatype, op, c,
                                         request));
    struct vmpi_dtype *dt;
    TRY(coll_redscat_args(c, fn, sendbuf, recvbuf, NULL, recvcount, false, datatype, op, &dt));
    struct vmpi_req *r = NULL;
    int rc = vmpi_coll_ireduce_scatter_block(sendbuf, recvbuf, recvcount, dt, op, c, &r);
    return coll_started(rc, r, request);
}
VMPI_WEAK(Ireduce_scatter_block);

int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm, MPI_Request *request)
{
    static const char fn[] = "MPI_Iscan";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    INTER_BRANCH(c, inter_none(c, fn));
    struct vmpi_dtype *dt;
    TRY(coll_allreduce_args(c, fn, sendbuf, recvbuf, count, datatype, op, &dt));
    REQUEST_ARG(request, c, fn);
    struct vmpi_req *r = NULL;
    int rc = vmpi_coll_iscan(sendbuf, recvbuf, count, dt, op, c, &r);
    return coll_started(rc, r, request);
}
VMPI_WEAK(Iscan);

/* recvbuf at rank 0 is left as it was (MPI leaves it undefined). */
int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                 MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    static const char fn[] = "MPI_Iexscan";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    INTER_BRANCH(c, inter_none(c, fn));
    struct vmpi_dtype *dt;
    TRY(coll_allreduce_args(c, fn, sendbuf, recvbuf, count, datatype, op, &dt));
    REQUEST_ARG(request, c, fn);
    struct vmpi_req *r = NULL;
    int rc = vmpi_coll_iexscan(sendbuf, recvbuf, count, dt, op, c, &r);
    return coll_started(rc, r, request);
}
VMPI_WEAK(Iexscan);
