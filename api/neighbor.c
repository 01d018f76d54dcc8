/* Neighbourhood collectives, blocking and non-blocking (MPI-3.1 7.6, 7.7):
 * argument checks, the neighbours from comm/ (vmpi_topo_nbrs), then the
 * exchange of coll/neighbor.c. Each pair of entry points (MPI_Neighbor_x,
 * MPI_Ineighbor_x) shares one body; the non-blocking one passes its
 * request. A communicator without a topology is MPI_ERR_TOPOLOGY;
 * MPI_IN_PLACE is not allowed (MPI_ERR_BUFFER). Per-neighbour arrays
 * (counts, displacements, types) are read for the neighbours that exist
 * only, so a rank without neighbours may pass anything there. */
#include <stdio.h>
#include <stdlib.h>

#include "coll_args.h"
#include "../coll/neighbor.h"

/* One call: the communicator, its neighbours, both sides' buffers. */
struct nbr_call {
    struct vmpi_comm *c;
    struct vmpi_topo_nbrs nb;
    struct vmpi_nbr_buf send, recv;
    struct vmpi_dtype **dts; /* alltoallw's types: nout send, then nin receive */
};

static void call_free(struct nbr_call *k)
{
    vmpi_topo_nbrs_free(&k->nb);
    free(k->dts);
}

/* The communicator has a topology (k->c is set before anything else is
 * checked, so errors go to its handler), and the request pointer is there
 * for a non-blocking call. */
static int call_begin(const char *fn, MPI_Comm comm, bool nonblocking, MPI_Request *request,
                      struct nbr_call *k)
{
    *k = (struct nbr_call){0};
    COMM_ARG(c, comm, fn);
    k->c = c;
    VMPI_CHECK(!nonblocking || request, c, MPI_ERR_ARG, "%s: request is NULL", fn);
    int rc = vmpi_topo_nbrs(c, &k->nb);
    if (rc == MPI_ERR_TOPOLOGY)
        return vmpi_err(c, rc, "%s: the communicator has no topology (create it with "
                        "MPI_Cart_create, MPI_Graph_create or MPI_Dist_graph_create)", fn);
    if (rc != MPI_SUCCESS)
        return vmpi_err(c, rc, "%s: out of memory", fn);
    return MPI_SUCCESS;
}

/* One side of the call (side "send" or "recv", n blocks): a count for all
 * blocks, or counts[] with displs[] (elements) or with bdispls[] (bytes)
 * and types[]. Fills b. */
struct side_args {
    const char *side;
    int n;
    bool same; /* every block is buf (allgather's send side) */
    bool vec;  /* per-block counts (the v and w forms) */
    const void *buf;
    int count;
    const int *counts, *displs;
    const MPI_Aint *bdispls;
    MPI_Datatype type;
    const MPI_Datatype *types;
    struct vmpi_dtype **dts; /* storage for types' objects (n of them) */
};

/* Block i's count and type handle. */
static int side_count(const struct side_args *a, int i)
{
    return a->vec ? a->counts[i] : a->count;
}

static int side_arg(struct nbr_call *k, const char *fn, const struct side_args *a,
                    struct vmpi_nbr_buf *b)
{
    struct vmpi_comm *c = k->c;
    const char *s = a->side;
    int rc = coll_not_in_place(c, fn, a->buf, *s == 's' ? "sendbuf" : "recvbuf",
                               " (neighbourhood collectives have no in-place form)");
    if (rc != MPI_SUCCESS)
        return rc;
    *b = (struct vmpi_nbr_buf){.buf = (void *)a->buf, .same = a->same, .count = a->count,
                               .counts = a->counts, .displs = a->displs,
                               .bdispls = a->bdispls, .dts = a->dts};
    char name[16];
    snprintf(name, sizeof name, "%stype%s", s, a->types ? "s" : "");
    if (!a->vec) {
        VMPI_CHECK(a->count >= 0, c, MPI_ERR_COUNT, "%s: %scount = %d is negative", fn, s,
                   a->count);
    } else if (a->n > 0) {
        VMPI_CHECK(a->counts, c, MPI_ERR_ARG, "%s: %scounts is NULL", fn, s);
        VMPI_CHECK(a->displs || a->bdispls, c, MPI_ERR_ARG,
                   "%s: the %s displacements are NULL", fn, s);
        VMPI_CHECK(!a->bdispls || a->types, c, MPI_ERR_ARG, "%s: %s is NULL", fn, name);
    }
    if (!a->types && (rc = coll_type_arg(c, fn, name, -1, a->type, &b->dt)) != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < a->n; i++) {
        int n = side_count(a, i);
        VMPI_CHECK(n >= 0, c, MPI_ERR_COUNT, "%s: %scounts[%d] = %d is negative", fn, s, i, n);
        MPI_Datatype h = a->types ? a->types[i] : a->type;
        if (a->types && (rc = coll_type_arg(c, fn, name, i, h, &a->dts[i])) != MPI_SUCCESS)
            return rc;
        /* in the w form MPI_BOTTOM plus a byte displacement is an address */
        VMPI_CHECK(n == 0 || !coll_null_buf(a->buf, h) || (a->bdispls && a->bdispls[i]),
                   c, MPI_ERR_BUFFER,
                   "%s: %sbuf is NULL with data to %s (block %d)", fn, s,
                   *s == 's' ? "send" : "receive", i);
    }
    return MPI_SUCCESS;
}

/* Checks both sides, then runs the exchange; a non-blocking call (request
 * not NULL) hands its request over. Frees what the call holds. */
static int call_run(const char *fn, struct nbr_call *k, const struct side_args *sa,
                    const struct side_args *ra, MPI_Request *request)
{
    int rc = side_arg(k, fn, sa, &k->send);
    if (rc == MPI_SUCCESS)
        rc = side_arg(k, fn, ra, &k->recv);
    if (rc != MPI_SUCCESS) {
        call_free(k);
        return rc;
    }
    struct vmpi_req *r = NULL;
    rc = vmpi_nbr_exchange(k->c, k->nb.nin, k->nb.in, k->nb.nout, k->nb.out, k->nb.cart,
                           &k->send, &k->recv, fn, request ? &r : NULL);
    call_free(k);
    if (rc != MPI_SUCCESS)
        return vmpi_err_handle(k->c, rc);
    if (request)
        *request = vmpi_req_handle(r);
    return MPI_SUCCESS;
}

/* The bodies: nb says the call is non-blocking (its request must not be
 * NULL); request is NULL for a blocking one. */
static int allgather(const char *fn, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                     void *recvbuf, int recvcount, const int *recvcounts, const int *displs,
                     MPI_Datatype recvtype, bool vec, MPI_Comm comm, bool nb,
                     MPI_Request *request)
{
    struct nbr_call k;
    int rc = call_begin(fn, comm, nb, request, &k);
    if (rc != MPI_SUCCESS)
        return rc;
    struct side_args sa = {.side = "send", .n = k.nb.nout, .same = true, .buf = sendbuf,
                           .count = sendcount, .type = sendtype};
    struct side_args ra = {.side = "recv", .n = k.nb.nin, .buf = recvbuf, .count = recvcount,
                           .vec = vec,
                           .counts = recvcounts, .displs = displs, .type = recvtype};
    return call_run(fn, &k, &sa, &ra, request);
}

static int alltoall(const char *fn, const void *sendbuf, int sendcount, const int *sendcounts,
                    const int *sdispls, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                    const int *recvcounts, const int *rdispls, MPI_Datatype recvtype, bool vec,
                    MPI_Comm comm, bool nb, MPI_Request *request)
{
    struct nbr_call k;
    int rc = call_begin(fn, comm, nb, request, &k);
    if (rc != MPI_SUCCESS)
        return rc;
    struct side_args sa = {.side = "send", .n = k.nb.nout, .vec = vec, .buf = sendbuf,
                           .count = sendcount, .counts = sendcounts, .displs = sdispls,
                           .type = sendtype};
    struct side_args ra = {.side = "recv", .n = k.nb.nin, .vec = vec, .buf = recvbuf,
                           .count = recvcount, .counts = recvcounts, .displs = rdispls,
                           .type = recvtype};
    return call_run(fn, &k, &sa, &ra, request);
}

static int alltoallw(const char *fn, const void *sendbuf, const int *sendcounts,
                     const MPI_Aint *sdispls, const MPI_Datatype *sendtypes, void *recvbuf,
                     const int *recvcounts, const MPI_Aint *rdispls,
                     const MPI_Datatype *recvtypes, MPI_Comm comm, bool nb,
                     MPI_Request *request)
{
    struct nbr_call k;
    int rc = call_begin(fn, comm, nb, request, &k);
    if (rc != MPI_SUCCESS)
        return rc;
    size_t n = (size_t)k.nb.nout + (size_t)k.nb.nin;
    k.dts = malloc(sizeof *k.dts * (n ? n : 1));
    if (!k.dts) {
        call_free(&k);
        return vmpi_err(k.c, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    struct side_args sa = {.side = "send", .n = k.nb.nout, .vec = true, .buf = sendbuf,
                           .counts = sendcounts, .bdispls = sdispls, .types = sendtypes,
                           .dts = k.dts};
    struct side_args ra = {.side = "recv", .n = k.nb.nin, .vec = true, .buf = recvbuf,
                           .counts = recvcounts, .bdispls = rdispls, .types = recvtypes,
                           .dts = k.dts + k.nb.nout};
    return call_run(fn, &k, &sa, &ra, request);
}


/* ---- the entry points ------------------------------------------------------ */

int PMPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char fn[] = "MPI_Neighbor_allgather";
    VMPI_ENTER(fn);
    return allgather(fn, sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL, NULL, recvtype,
                     false, comm, false, NULL);
}
VMPI_WEAK(Neighbor_allgather);

int PMPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request)
{
    static const char fn[] = "MPI_Ineighbor_allgather";
    VMPI_ENTER(fn);
    return allgather(fn, sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL, NULL, recvtype,
                     false, comm, true, request);
}
VMPI_WEAK(Ineighbor_allgather);

int PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char fn[] = "MPI_Neighbor_allgatherv";
    VMPI_ENTER(fn);
    return allgather(fn, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                     true, comm, false, NULL);
}
VMPI_WEAK(Neighbor_allgatherv);

int PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    static const char fn[] = "MPI_Ineighbor_allgatherv";
    VMPI_ENTER(fn);
    return allgather(fn, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                     true, comm, true, request);
}
VMPI_WEAK(Ineighbor_allgatherv);

int PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char fn[] = "MPI_Neighbor_alltoall";
    VMPI_ENTER(fn);
    return alltoall(fn, sendbuf, sendcount, NULL, NULL, sendtype, recvbuf, recvcount, NULL, NULL,
                    recvtype, false, comm, false, NULL);
}
VMPI_WEAK(Neighbor_alltoall);

int PMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request)
{
    static const char fn[] = "MPI_Ineighbor_alltoall";
    VMPI_ENTER(fn);
    return alltoall(fn, sendbuf, sendcount, NULL, NULL, sendtype, recvbuf, recvcount, NULL, NULL,
                    recvtype, false, comm, true, request);
}
VMPI_WEAK(Ineighbor_alltoall);

int PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char fn[] = "MPI_Neighbor_alltoallv";
    VMPI_ENTER(fn);
    return alltoall(fn, sendbuf, 0, sendcounts, sdispls, sendtype, recvbuf, 0, recvcounts,
                    rdispls, recvtype, true, comm, false, NULL);
}
VMPI_WEAK(Neighbor_alltoallv);

int PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request)
{
    static const char fn[] = "MPI_Ineighbor_alltoallv";
    VMPI_ENTER(fn);
    return alltoall(fn, sendbuf, 0, sendcounts, sdispls, sendtype, recvbuf, 0, recvcounts,
                    rdispls, recvtype, true, comm, true, request);
}
VMPI_WEAK(Ineighbor_alltoallv);

int PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                            const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                            void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    static const char fn[] = "MPI_Neighbor_alltoallw";
    VMPI_ENTER(fn);
    return alltoallw(fn, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                     recvtypes, comm, false, NULL);
}
VMPI_WEAK(Neighbor_alltoallw);

int PMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                             const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                             void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                             const MPI_Datatype recvtypes[], MPI_Comm comm,
                             MPI_Request *request)
{
    static const char fn[] = "MPI_Ineighbor_alltoallw";
    VMPI_ENTER(fn);
    return alltoallw(fn, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                     recvtypes, comm, true, request);
}
VMPI_WEAK(Ineighbor_alltoallw);
