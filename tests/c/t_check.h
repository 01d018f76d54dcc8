/* Checks for the MPI test programs: a failed check names the rank, the
 * place and the condition, then aborts the whole job. */
#ifndef VMPI_TESTS_T_CHECK_H
#define VMPI_TESTS_T_CHECK_H

#include <mpi.h>
#include <stdio.h>

static inline int t_check_rank(void)
{
    int r = -1, init = 0;
    MPI_Initialized(&init);
    if (init)
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", t_check_rank(), __FILE__, \
                    __LINE__, #cond);                                                     \
            fprintf(stderr, __VA_ARGS__);                                                 \
            fprintf(stderr, "\n");                                                        \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                 \
        }                                                                                 \
    } while (0)

#define OK(call) CHECK((call) == MPI_SUCCESS, "%s failed", #call)

#endif
