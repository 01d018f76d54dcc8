/* np: 1 3 */
/* Argument checks of the collectives, with MPI_ERRORS_RETURN on the
 * communicator: the returned code maps to the right class and names the
 * call, and the communicator stays usable afterwards. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#include "t_check.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm c;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    /* errors on MPI_COMM_NULL go to MPI_COMM_WORLD's handler */
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    int a[4] = {1, 2, 3, 4}, b[4];
    MPI_Datatype uncommitted;
    OK(MPI_Type_contiguous(2, MPI_INT, &uncommitted));

    t_expect_err(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM, "MPI_Barrier", "barrier COMM_NULL");
    t_expect_err(MPI_Bcast(a, 1, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM, "MPI_Bcast",
               "bcast COMM_NULL");
    t_expect_err(MPI_Bcast(a, -1, MPI_INT, 0, c), MPI_ERR_COUNT, "MPI_Bcast", "bcast count -1");
    t_expect_err(MPI_Bcast(a, 1, MPI_DATATYPE_NULL, 0, c), MPI_ERR_TYPE, "MPI_Bcast",
               "bcast DATATYPE_NULL");
    t_expect_err(MPI_Bcast(a, 1, uncommitted, 0, c), MPI_ERR_TYPE, "MPI_Bcast",
               "bcast uncommitted");
    t_expect_err(MPI_Bcast(a, 1, MPI_INT, size, c), MPI_ERR_ROOT, "MPI_Bcast", "bcast root size");
    t_expect_err(MPI_Bcast(a, 1, MPI_INT, -1, c), MPI_ERR_ROOT, "MPI_Bcast", "bcast root -1");
    t_expect_err(MPI_Bcast(NULL, 1, MPI_INT, 0, c), MPI_ERR_BUFFER, "MPI_Bcast", "bcast NULL");
    OK(MPI_Bcast(NULL, 0, MPI_INT, 0, c)); /* NULL is fine with count 0 */

    t_expect_err(MPI_Reduce(a, b, 1, MPI_INT, MPI_OP_NULL, 0, c), MPI_ERR_OP, "MPI_Reduce",
               "reduce OP_NULL");
    t_expect_err(MPI_Reduce(a, b, 1, MPI_INT, (MPI_Op)0x58000077, 0, c), MPI_ERR_OP,
               "MPI_Reduce", "reduce junk op");
    t_expect_err(MPI_Reduce(a, b, 1, MPI_INT, MPI_REPLACE, 0, c), MPI_ERR_OP, "MPI_Reduce",
               "reduce REPLACE");
    t_expect_err(MPI_Reduce(a, b, 1, MPI_DOUBLE, MPI_BAND, 0, c), MPI_ERR_OP, "MPI_Reduce",
               "BAND on double");
    t_expect_err(MPI_Reduce(a, b, 1, MPI_INT, MPI_MINLOC, 0, c), MPI_ERR_OP, "MPI_Reduce",
               "MINLOC on int");
    t_expect_err(MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, size + 2, c), MPI_ERR_ROOT, "MPI_Reduce",
               "reduce root");
    t_expect_err(MPI_Reduce(a, b, -3, MPI_INT, MPI_SUM, 0, c), MPI_ERR_COUNT, "MPI_Reduce",
               "reduce count");
    t_expect_err(MPI_Reduce(a, b, 1, uncommitted, MPI_SUM, 0, c), MPI_ERR_TYPE, "MPI_Reduce",
               "reduce uncommitted");
    t_expect_err(MPI_Reduce(NULL, b, 1, MPI_INT, MPI_SUM, 0, c), MPI_ERR_BUFFER, "MPI_Reduce",
               "reduce NULL sendbuf");
    if (rank == 0) {
        t_expect_err(MPI_Reduce(a, NULL, 1, MPI_INT, MPI_SUM, 0, c), MPI_ERR_BUFFER,
                   "MPI_Reduce", "reduce NULL recvbuf at root");
        t_expect_err(MPI_Reduce(a, a, 1, MPI_INT, MPI_SUM, 0, c), MPI_ERR_BUFFER, "MPI_Reduce",
                   "reduce aliased buffers");
    } else {
        t_expect_err(MPI_Reduce(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, 0, c), MPI_ERR_BUFFER,
                   "MPI_Reduce", "IN_PLACE at non-root");
    }

    t_expect_err(MPI_Allreduce(a, b, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL), MPI_ERR_COMM,
               "MPI_Allreduce", "allreduce COMM_NULL");
    t_expect_err(MPI_Allreduce(a, b, 1, MPI_INT, MPI_OP_NULL, c), MPI_ERR_OP, "MPI_Allreduce",
               "allreduce OP_NULL");
    t_expect_err(MPI_Allreduce(a, b, -1, MPI_INT, MPI_SUM, c), MPI_ERR_COUNT, "MPI_Allreduce",
               "allreduce count");
    t_expect_err(MPI_Allreduce(a, b, 1, MPI_DATATYPE_NULL, MPI_SUM, c), MPI_ERR_TYPE,
               "MPI_Allreduce", "allreduce type");
    t_expect_err(MPI_Allreduce(a, NULL, 1, MPI_INT, MPI_SUM, c), MPI_ERR_BUFFER, "MPI_Allreduce",
               "allreduce NULL recvbuf");
    t_expect_err(MPI_Allreduce(a, a, 1, MPI_INT, MPI_SUM, c), MPI_ERR_BUFFER, "MPI_Allreduce",
               "allreduce aliased");
    t_expect_err(MPI_Allreduce(a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, c), MPI_ERR_BUFFER,
               "MPI_Allreduce", "allreduce recvbuf IN_PLACE");
    {
        MPI_Comm freed;
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &freed));
        MPI_Comm keep = freed;
        OK(MPI_Comm_free(&freed));
        t_expect_err(MPI_Barrier(keep), MPI_ERR_COMM, "MPI_Barrier", "barrier on freed comm");
    }

    /* the communicator still works */
    int one = 1, n = 0;
    OK(MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, c));
    CHECK(n == size, "allreduce after errors gave %d", n);
    OK(MPI_Type_free(&uncommitted));
    OK(MPI_Comm_free(&c));
    MPI_Finalize();
    if (rank == 0)
        printf("t_coll_errors: ok (np %d)\n", size);
    return 0;
}
