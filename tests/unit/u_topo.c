/* Unit test of MPI_Dims_create's factorization (core/topo.c,
 * vmpi_topo_dims_create), no MPI_Init needed. */
#include <stdio.h>
#include <string.h>

#include "comm/comm.h"

static int failures;

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

    if (failures) {
        fprintf(stderr, "u_topo: %d failure(s)\n", failures);
        return 1;
    }
    printf("u_topo: ok\n");
    return 0;
}
