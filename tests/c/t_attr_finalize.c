/* np: 2 */
/* MPI_Finalize deletes MPI_COMM_SELF's attributes first, newest first
 * (MPI-3.1 8.7.1), while MPI still works, and then MPI_COMM_WORLD's; the
 * keyvals were freed before (they live while attributes use them). The
 * callbacks record the order; main checks it after MPI_Finalize and fails
 * with exit status 1. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "t_check.h"

#define N 6
static int order[N + 1], ncalls, bad;

static int self_delete(MPI_Comm c, int keyval, void *val, void *extra)
{
    int fin = 1, rank = -1, sum = 0, one = 1;
    MPI_Finalized(&fin);
    if (fin || c != MPI_COMM_SELF || extra != &order[0])
        bad++;
    /* MPI still works: communication on MPI_COMM_SELF. */
    if (MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF) != MPI_SUCCESS ||
        sum != 1 || MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS)
        bad++;
    (void)keyval;
    if (ncalls <= N)
        order[ncalls] = (int)(intptr_t)val;
    ncalls++;
    return MPI_SUCCESS;
}

static int world_delete(MPI_Comm c, int keyval, void *val, void *extra)
{
    (void)keyval, (void)extra;
    if (c != MPI_COMM_WORLD || ncalls != N)
        bad++;
    if (ncalls <= N)
        order[ncalls] = (int)(intptr_t)val;
    ncalls++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, k[N], kw;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* WORLD's attribute is set first: SELF's still go before it. */
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, world_delete, &kw, NULL));
    OK(MPI_Comm_set_attr(MPI_COMM_WORLD, kw, (void *)(intptr_t)100));
    OK(MPI_Comm_free_keyval(&kw));
    for (int i = 0; i < N; i++) {
        OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &k[i], &order[0]));
        OK(MPI_Comm_set_attr(MPI_COMM_SELF, k[i], (void *)(intptr_t)i));
    }
    /* A replaced value keeps its place. */
    OK(MPI_Comm_set_attr(MPI_COMM_SELF, k[2], (void *)(intptr_t)2));
    CHECK(ncalls == 1 && order[0] == 2, "replacement ran %d delete callbacks", ncalls);
    ncalls = 0;
    for (int i = 0; i < N; i++)
        OK(MPI_Comm_free_keyval(&k[i]));
    MPI_Finalize();
    if (ncalls != N + 1 || bad) {
        fprintf(stderr, "rank %d: %d delete callbacks at MPI_Finalize (want %d), %d bad\n", rank,
                ncalls, N + 1, bad);
        return 1;
    }
    for (int i = 0; i < N; i++)
        if (order[i] != N - 1 - i) {
            fprintf(stderr, "rank %d: callback %d deleted attribute %d, want %d (LIFO)\n", rank,
                    i, order[i], N - 1 - i);
            return 1;
        }
    if (order[N] != 100) {
        fprintf(stderr, "rank %d: MPI_COMM_WORLD's attribute was not deleted last\n", rank);
        return 1;
    }
    if (rank == 0)
        printf("t_attr_finalize: OK\n");
    return 0;
}
