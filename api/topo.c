/* Process topology entry points (Cartesian ones and Topo_test; graphs are
 * in api/topo_graph.c): argument checks, then comm/topo.c. Error classes:
 * MPI_ERR_COMM for a bad communicator, MPI_ERR_TOPOLOGY for a Cartesian
 * call on a communicator without a Cartesian topology, MPI_ERR_DIMS for bad
 * dimension counts or sizes, and, as in MPICH, MPI_ERR_ARG for a bad
 * direction, maxdims or non-periodic coordinate out of range, MPI_ERR_RANK
 * for a rank outside the grid. */
#include "topo_args.h"

int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    static const char fn[] = "MPI_Dims_create";
    VMPI_ENTER(fn);
    VMPI_CHECK(nnodes > 0, NULL, MPI_ERR_ARG, "%s: nnodes = %d is not positive", fn, nnodes);
    VMPI_CHECK(ndims >= 0, NULL, MPI_ERR_DIMS, "%s: ndims = %d is negative", fn, ndims);
    VMPI_CHECK(ndims == 0 || dims, NULL, MPI_ERR_ARG, "%s: dims is NULL", fn);
    long prod = 1;
    for (int i = 0; i < ndims; i++) {
        VMPI_CHECK(dims[i] >= 0, NULL, MPI_ERR_DIMS, "%s: dims[%d] = %d is negative", fn, i,
                   dims[i]);
        if (dims[i] > 0 && prod <= nnodes)
            prod *= dims[i];
    }
    int rc = vmpi_topo_dims_create(nnodes, ndims, dims);
    if (rc == MPI_ERR_DIMS)
        return vmpi_err(NULL, rc, "%s: nnodes = %d is not a multiple of the product of the "
                        "non-zero dims (%ld)", fn, nnodes, prod);
    if (rc != MPI_SUCCESS)
        return vmpi_err(NULL, rc, "%s: out of memory", fn);
    return MPI_SUCCESS;
}
VMPI_WEAK(Dims_create);

/* The grid of Cart_create and Cart_map: ndims >= 0 positive dims whose
 * product n fits in c. */
static int grid_arg(struct vmpi_comm *c, const char *fn, int ndims, const int *dims,
                    const int *periods, long *n)
{
    VMPI_CHECK(ndims >= 0, c, MPI_ERR_DIMS, "%s: ndims = %d is negative", fn, ndims);
    VMPI_CHECK(ndims == 0 || (dims && periods), c, MPI_ERR_ARG, "%s: %s is NULL", fn,
               dims ? "periods" : "dims");
    *n = 1;
    for (int i = 0; i < ndims; i++) {
        VMPI_CHECK(dims[i] > 0, c, MPI_ERR_DIMS, "%s: dims[%d] = %d is not positive", fn, i,
                   dims[i]);
        *n *= dims[i];
        VMPI_CHECK(*n <= c->size, c, MPI_ERR_DIMS,
                   "%s: the grid (%ld processes so far) is larger than the communicator "
                   "(%d)", fn, *n, c->size);
    }
    return MPI_SUCCESS;
}

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                     int reorder, MPI_Comm *comm_cart)
{
    static const char fn[] = "MPI_Cart_create";
    (void)reorder; /* ranks keep their order: grid rank i is comm_old rank i */
    VMPI_ENTER(fn);
    COMM_ARG(c, comm_old, fn);
    INTRA_ARG(c, fn);
    PTR_ARG(comm_cart, c, fn, "comm_cart");
    long n;
    int rc = grid_arg(c, fn, ndims, dims, periods, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    struct vmpi_comm *nc = NULL;
    rc = vmpi_topo_cart_create(c, ndims, dims, periods, &nc);
    return topo_made(c, rc, nc, comm_cart);
}
VMPI_WEAK(Cart_create);

int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    static const char fn[] = "MPI_Cartdim_get";
    VMPI_ENTER(fn);
    CART_ARG(c, comm, fn);
    PTR_ARG(ndims, c, fn, "ndims");
    *ndims = c->ndims;
    return MPI_SUCCESS;
}
VMPI_WEAK(Cartdim_get);

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    static const char fn[] = "MPI_Cart_get";
    VMPI_ENTER(fn);
    CART_ARG(c, comm, fn);
    VMPI_CHECK(maxdims >= c->ndims, c, MPI_ERR_ARG,
               "%s: maxdims = %d is less than the number of dimensions (%d)", fn, maxdims,
               c->ndims);
    if (c->ndims > 0) {
        PTR_ARG(dims, c, fn, "dims");
        PTR_ARG(periods, c, fn, "periods");
        PTR_ARG(coords, c, fn, "coords");
        for (int i = 0; i < c->ndims; i++) {
            dims[i] = c->dims[i];
            periods[i] = c->periods[i];
        }
        vmpi_topo_cart_coords(c, c->rank, coords);
    }
    return MPI_SUCCESS;
}
VMPI_WEAK(Cart_get);

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    static const char fn[] = "MPI_Cart_rank";
    VMPI_ENTER(fn);
    CART_ARG(c, comm, fn);
    PTR_ARG(rank, c, fn, "rank");
    if (c->ndims > 0)
        PTR_ARG(coords, c, fn, "coords");
    for (int i = 0; i < c->ndims; i++)
        VMPI_CHECK(c->periods[i] || (coords[i] >= 0 && coords[i] < c->dims[i]), c,
                   MPI_ERR_ARG,
                   "%s: coords[%d] = %d is outside the non-periodic dimension [0, %d)", fn, i,
                   coords[i], c->dims[i]);
    vmpi_topo_cart_rank(c, coords, rank);
    return MPI_SUCCESS;
}
VMPI_WEAK(Cart_rank);

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    static const char fn[] = "MPI_Cart_coords";
    VMPI_ENTER(fn);
    CART_ARG(c, comm, fn);
    VMPI_CHECK(rank >= 0 && rank < c->size, c, MPI_ERR_RANK,
               "%s: rank = %d is not a rank of the communicator (size %d)", fn, rank, c->size);
    VMPI_CHECK(maxdims >= c->ndims, c, MPI_ERR_ARG,
               "%s: maxdims = %d is less than the number of dimensions (%d)", fn, maxdims,
               c->ndims);
    if (c->ndims > 0)
        PTR_ARG(coords, c, fn, "coords");
    vmpi_topo_cart_coords(c, rank, coords);
    return MPI_SUCCESS;
}
VMPI_WEAK(Cart_coords);

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    static const char fn[] = "MPI_Cart_shift";
    VMPI_ENTER(fn);
    CART_ARG(c, comm, fn);
    PTR_ARG(rank_source, c, fn, "rank_source");
    PTR_ARG(rank_dest, c, fn, "rank_dest");
    VMPI_CHECK(direction >= 0 && direction < c->ndims, c, MPI_ERR_ARG,
               "%s: direction = %d is not a dimension (ndims %d)", fn, direction, c->ndims);
    vmpi_topo_cart_shift(c, direction, disp, rank_source, rank_dest);
    return MPI_SUCCESS;
}
VMPI_WEAK(Cart_shift);

int PMPI_Topo_test(MPI_Comm comm, int *status)
{
    static const char fn[] = "MPI_Topo_test";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    PTR_ARG(status, c, fn, "status");
    *status = c->topo; /* MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH or MPI_UNDEFINED */
    return MPI_SUCCESS;
}
VMPI_WEAK(Topo_test);

int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Cart_sub";
    VMPI_ENTER(fn);
    CART_ARG(c, comm, fn);
    PTR_ARG(newcomm, c, fn, "newcomm");
    if (c->ndims > 0)
        PTR_ARG(remain_dims, c, fn, "remain_dims");
    struct vmpi_comm *nc = NULL;
    int rc = vmpi_topo_cart_sub(c, remain_dims, &nc);
    return topo_made(c, rc, nc, newcomm);
}
VMPI_WEAK(Cart_sub);

/* Ranks stay where they are (MPI-3.1 7.5.7 allows any mapping): the first
 * prod(dims) ranks get their own rank, the others MPI_UNDEFINED. */
int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    static const char fn[] = "MPI_Cart_map";
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    INTRA_ARG(c, fn);
    PTR_ARG(newrank, c, fn, "newrank");
    long n;
    int rc = grid_arg(c, fn, ndims, dims, periods, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    *newrank = c->rank < n ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
VMPI_WEAK(Cart_map);
