/* Unit test of MPI_Dims_create's factorization (comm/topo.c,
 * vmpi_topo_dims_create) and of the neighbour lists of Cartesian and graph
 * topologies (vmpi_topo_nbrs) on communicator objects built here; no
 * MPI_Init needed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "u_check.h"

static void dims_case(int nnodes, int ndims, const int *in, int want_rc, const int *want)
{
    int d[16];
    memcpy(d, in, sizeof(int) * (size_t)ndims);
    int rc = vmpi_topo_dims_create(nnodes, ndims, d);
    int ok = rc == want_rc && (rc != MPI_SUCCESS || !memcmp(d, want, sizeof(int) * (size_t)ndims));
    if (!ok) {
        fprintf(stderr, "u_topo: dims_create(%d, %d, [", nnodes, ndims);
        for (int i = 0; i < ndims; i++)
            fprintf(stderr, " %d", in[i]);
        fprintf(stderr, " ]) gave rc %d [", rc);
        for (int i = 0; i < ndims; i++)
            fprintf(stderr, " %d", d[i]);
        fprintf(stderr, " ], want rc %d [", want_rc);
        for (int i = 0; want && i < ndims; i++)
            fprintf(stderr, " %d", want[i]);
        fprintf(stderr, " ]\n");
        failures++;
    }
}

#define Z(...) ((const int[]){__VA_ARGS__})

/* Rank `rank` of a grid: its neighbours (in = out) are want. */
static void cart_case(int ndims, const int *dims, const int *periods, int rank, const int *want)
{
    struct vmpi_comm c = {.topo = MPI_UNDEFINED, .rank = rank, .size = 1};
    for (int i = 0; i < ndims; i++)
        c.size *= dims[i];
    if (vmpi_topo_set_cart(&c, ndims, dims, periods) != MPI_SUCCESS) {
        CHECK(0, "out of memory");
        return;
    }
    struct vmpi_topo_nbrs nb;
    char what[64];
    snprintf(what, sizeof what, "cart %d-d rank %d", ndims, rank);
    int rc = vmpi_topo_nbrs(&c, &nb);
    CHECK(rc == MPI_SUCCESS && nb.cart && nb.in == nb.out, "%s: no Cartesian neighbour list",
          what);
    size_t n = 2 * (size_t)ndims;
    CHECK(rc != MPI_SUCCESS ||
              (nb.nout == (int)n && (n == 0 || !memcmp(nb.out, want, sizeof(int) * n))),
          "%s: %d neighbours, first %d, want first %d", what, nb.nout, nb.nout ? nb.out[0] : -1,
          ndims ? want[0] : -1);
    vmpi_topo_nbrs_free(&nb);
    free(c.dims);
    free(c.periods);
}

static void cart_cases(void)
{
    const int P = MPI_PROC_NULL;
    /* a ring of 4: down, then up */
    cart_case(1, Z(4), Z(1), 0, Z(3, 1));
    cart_case(1, Z(4), Z(1), 3, Z(2, 0));
    /* a line of 4: nothing past the ends */
    cart_case(1, Z(4), Z(0), 0, Z(P, 1));
    cart_case(1, Z(4), Z(0), 3, Z(2, P));
    /* periodic sizes 2 and 1: both shifts name the same rank */
    cart_case(1, Z(2), Z(1), 1, Z(0, 0));
    cart_case(1, Z(1), Z(1), 0, Z(0, 0));
    cart_case(1, Z(1), Z(0), 0, Z(P, P));
    /* 2x3, row-major: rank 4 is (1, 1); dimension 0 periodic, 1 not */
    cart_case(2, Z(2, 3), Z(1, 0), 4, Z(1, 1, 3, 5));
    cart_case(2, Z(2, 3), Z(1, 0), 2, Z(5, 5, 1, P));
    /* 2x2x2 all periodic, rank 5 = (1, 0, 1) */
    cart_case(3, Z(2, 2, 2), Z(1, 1, 1), 5, Z(1, 1, 7, 7, 4, 4));
    /* no dimensions: no neighbours */
    cart_case(0, NULL, NULL, 0, NULL);
    /* no topology at all */
    struct vmpi_comm none = {.topo = MPI_UNDEFINED, .size = 1};
    struct vmpi_topo_nbrs nb;
    CHECK(vmpi_topo_nbrs(&none, &nb) == MPI_ERR_TOPOLOGY,
          "a communicator without a topology has neighbours");
}

int main(void)
{
    /* examples of MPI-3.1 section 7.5.2 */
    dims_case(6, 2, Z(0, 0), MPI_SUCCESS, Z(3, 2));
    dims_case(7, 2, Z(0, 0), MPI_SUCCESS, Z(7, 1));
    dims_case(6, 3, Z(0, 3, 0), MPI_SUCCESS, Z(2, 3, 1));
    dims_case(7, 3, Z(0, 3, 0), MPI_ERR_DIMS, NULL);
    /* balance */
    dims_case(1, 1, Z(0), MPI_SUCCESS, Z(1));
    dims_case(1, 3, Z(0, 0, 0), MPI_SUCCESS, Z(1, 1, 1));
    dims_case(4, 2, Z(0, 0), MPI_SUCCESS, Z(2, 2));
    dims_case(12, 2, Z(0, 0), MPI_SUCCESS, Z(4, 3));
    dims_case(16, 3, Z(0, 0, 0), MPI_SUCCESS, Z(4, 2, 2));
    dims_case(64, 3, Z(0, 0, 0), MPI_SUCCESS, Z(4, 4, 4));
    dims_case(24, 3, Z(0, 0, 0), MPI_SUCCESS, Z(4, 3, 2));
    dims_case(36, 2, Z(0, 0), MPI_SUCCESS, Z(6, 6));
    dims_case(210, 2, Z(0, 0), MPI_SUCCESS, Z(15, 14));
    dims_case(30, 2, Z(0, 0), MPI_SUCCESS, Z(6, 5));
    dims_case(90, 3, Z(0, 0, 0), MPI_SUCCESS, Z(6, 5, 3));
    dims_case(1024, 4, Z(0, 0, 0, 0), MPI_SUCCESS, Z(8, 8, 4, 4));
    dims_case(8, 5, Z(0, 0, 0, 0, 0), MPI_SUCCESS, Z(2, 2, 2, 1, 1));
    dims_case(1000000, 2, Z(0, 0), MPI_SUCCESS, Z(1000, 1000));
    dims_case(2147483647, 2, Z(0, 0), MPI_SUCCESS, Z(2147483647, 1)); /* prime */
    dims_case(1073741824, 3, Z(0, 0, 0), MPI_SUCCESS, Z(1024, 1024, 1024));
    dims_case(720720, 6, Z(0, 0, 0, 0, 0, 0), MPI_SUCCESS, Z(13, 11, 10, 9, 8, 7));
    /* fixed entries */
    dims_case(12, 3, Z(0, 2, 0), MPI_SUCCESS, Z(3, 2, 2));
    dims_case(8, 2, Z(2, 4), MPI_SUCCESS, Z(2, 4));
    dims_case(8, 2, Z(2, 2), MPI_ERR_DIMS, NULL);
    dims_case(8, 2, Z(3, 0), MPI_ERR_DIMS, NULL);
    dims_case(8, 2, Z(-1, 0), MPI_ERR_DIMS, NULL);
    dims_case(8, 0, Z(0), MPI_SUCCESS, Z(0)); /* nothing to fill, as in MPICH */
    dims_case(1, 0, Z(0), MPI_SUCCESS, Z(0));
    cart_cases();

    if (failures) {
        fprintf(stderr, "u_topo: %d failure(s)\n", failures);
        return 1;
    }
    printf("u_topo: ok\n");
    return 0;
}
