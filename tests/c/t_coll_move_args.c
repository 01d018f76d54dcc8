/* np: 1 3 */
/* Argument checks of Gather(v), Scatter(v), Allgather(v) and Alltoall(v/w)
 * with MPI_ERRORS_RETURN: every call below fails on every rank (so no rank
 * is left waiting), with the right class and a message naming the call;
 * afterwards the communicator still works, also with NULL buffers and
 * unused datatypes where counts are 0. */
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
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    int *a = calloc((size_t)size * 4, sizeof(int)), *b = calloc((size_t)size * 4, sizeof(int));
    int *cnt = malloc(sizeof(int) * (size_t)size), *dis = malloc(sizeof(int) * (size_t)size);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)size);
    for (int i = 0; i < size; i++) {
        cnt[i] = 1;
        dis[i] = i;
        types[i] = MPI_INT;
    }
    MPI_Datatype uncommitted;
    OK(MPI_Type_contiguous(2, MPI_INT, &uncommitted));
    int root = size - 1, is_root = rank == root;

    /* communicator, root, count, datatype */
    t_expect_err(MPI_Gather(a, 1, MPI_INT, b, 1, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM,
               "MPI_Gather", "gather COMM_NULL");
    t_expect_err(MPI_Alltoallw(a, cnt, dis, types, b, cnt, dis, types, MPI_COMM_NULL),
               MPI_ERR_COMM, "MPI_Alltoallw", "alltoallw COMM_NULL");
    t_expect_err(MPI_Scatter(a, 1, MPI_INT, b, 1, MPI_INT, size, c), MPI_ERR_ROOT, "MPI_Scatter",
               "scatter root = size");
    t_expect_err(MPI_Gatherv(a, 1, MPI_INT, b, cnt, dis, MPI_INT, -1, c), MPI_ERR_ROOT,
               "MPI_Gatherv", "gatherv root -1");
    t_expect_err(MPI_Gather(a, -1, MPI_INT, b, 1, MPI_INT, root, c), MPI_ERR_COUNT, "MPI_Gather",
               "gather sendcount -1");
    t_expect_err(MPI_Allgather(a, 1, MPI_INT, b, -2, MPI_INT, c), MPI_ERR_COUNT, "MPI_Allgather",
               "allgather recvcount -2");
    t_expect_err(MPI_Alltoall(a, 1, uncommitted, b, 2, MPI_INT, c), MPI_ERR_TYPE, "MPI_Alltoall",
               "alltoall uncommitted sendtype");
    t_expect_err(MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_DATATYPE_NULL, c), MPI_ERR_TYPE,
               "MPI_Alltoall", "alltoall DATATYPE_NULL recvtype");
    /* only the root's recvtype is significant: break it there and the
     * sendtype elsewhere */
    t_expect_err(MPI_Gather(a, 1, is_root ? MPI_INT : MPI_DATATYPE_NULL, b, 1,
                          is_root ? MPI_DATATYPE_NULL : MPI_INT, root, c),
               MPI_ERR_TYPE, "MPI_Gather", "gather recvtype at root");

    /* MPI_IN_PLACE where it is not allowed */
    t_expect_err(MPI_Gather(MPI_IN_PLACE, 1, MPI_INT, is_root ? MPI_IN_PLACE : b, 1, MPI_INT,
                          root, c),
               MPI_ERR_BUFFER, "MPI_Gather", "gather IN_PLACE misuse");
    t_expect_err(MPI_Scatter(is_root ? MPI_IN_PLACE : a, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT,
                           root, c),
               MPI_ERR_BUFFER, "MPI_Scatter", "scatter IN_PLACE misuse");
    t_expect_err(MPI_Allgather(a, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, c), MPI_ERR_BUFFER,
               "MPI_Allgather", "allgather recvbuf IN_PLACE");
    t_expect_err(MPI_Alltoallv(MPI_IN_PLACE, cnt, dis, MPI_INT, MPI_IN_PLACE, cnt, dis, MPI_INT,
                             c),
               MPI_ERR_BUFFER, "MPI_Alltoallv", "alltoallv recvbuf IN_PLACE");

    /* NULL buffers and arrays */
    t_expect_err(MPI_Allgather(NULL, 1, MPI_INT, b, 1, MPI_INT, c), MPI_ERR_BUFFER,
               "MPI_Allgather", "allgather NULL sendbuf");
    t_expect_err(MPI_Alltoall(a, 1, MPI_INT, NULL, 1, MPI_INT, c), MPI_ERR_BUFFER, "MPI_Alltoall",
               "alltoall NULL recvbuf");
    /* the root lacks recvcounts, the others pass MPI_IN_PLACE */
    t_expect_err(MPI_Gatherv(is_root ? a : MPI_IN_PLACE, 1, MPI_INT, b, NULL, dis, MPI_INT, root,
                           c),
               is_root ? MPI_ERR_ARG : MPI_ERR_BUFFER, "MPI_Gatherv", "gatherv NULL recvcounts");
    t_expect_err(MPI_Scatterv(a, cnt, is_root ? NULL : dis, MPI_INT,
                            is_root ? b : MPI_IN_PLACE, 1, MPI_INT, root, c),
               is_root ? MPI_ERR_ARG : MPI_ERR_BUFFER, "MPI_Scatterv", "scatterv NULL displs");
    t_expect_err(MPI_Allgatherv(a, 1, MPI_INT, b, cnt, NULL, MPI_INT, c), MPI_ERR_ARG,
               "MPI_Allgatherv", "allgatherv NULL displs");
    t_expect_err(MPI_Alltoallv(a, NULL, dis, MPI_INT, b, cnt, dis, MPI_INT, c), MPI_ERR_ARG,
               "MPI_Alltoallv", "alltoallv NULL sendcounts");
    t_expect_err(MPI_Alltoallw(a, cnt, dis, NULL, b, cnt, dis, types, c), MPI_ERR_ARG,
               "MPI_Alltoallw", "alltoallw NULL sendtypes");

    /* bad entries of the count and type arrays */
    cnt[size - 1] = -1;
    t_expect_err(MPI_Allgatherv(a, 1, MPI_INT, b, cnt, dis, MPI_INT, c), MPI_ERR_COUNT,
               "MPI_Allgatherv", "allgatherv negative recvcounts entry");
    t_expect_err(MPI_Alltoallv(a, cnt, dis, MPI_INT, b, cnt, dis, MPI_INT, c), MPI_ERR_COUNT,
               "MPI_Alltoallv", "alltoallv negative count");
    cnt[size - 1] = 1;
    types[size - 1] = uncommitted;
    t_expect_err(MPI_Alltoallw(a, cnt, dis, types, b, cnt, dis, types, c), MPI_ERR_TYPE,
               "MPI_Alltoallw", "alltoallw uncommitted type entry");
    types[size - 1] = MPI_INT;

    /* the same buffer for send and receive without MPI_IN_PLACE */
    t_expect_err(MPI_Alltoall(a, 1, MPI_INT, a, 1, MPI_INT, c), MPI_ERR_BUFFER, "MPI_Alltoall",
               "alltoall aliased");

    /* still usable; zero counts with NULL buffers and unused types */
    for (int i = 0; i < size; i++)
        a[i] = rank * 100 + i;
    OK(MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_INT, c));
    for (int i = 0; i < size; i++)
        CHECK(b[i] == i * 100 + rank, "alltoall after errors: [%d] = %d", i, b[i]);
    OK(MPI_Gather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, root, c));
    OK(MPI_Allgather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, c));
    for (int i = 0; i < size; i++) {
        cnt[i] = 0;
        types[i] = MPI_DATATYPE_NULL;
    }
    OK(MPI_Alltoallw(NULL, cnt, dis, types, NULL, cnt, dis, types, c));
    OK(MPI_Alltoallv(NULL, cnt, dis, MPI_INT, NULL, cnt, dis, MPI_INT, c));

    OK(MPI_Type_free(&uncommitted));
    free(a);
    free(b);
    free(cnt);
    free(dis);
    free(types);
    OK(MPI_Comm_free(&c));
    MPI_Finalize();
    if (rank == 0)
        printf("ok\n");
    return 0;
}
