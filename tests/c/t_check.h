/* Checks for the MPI test programs: a failed check names the rank, the
 * place and the condition, then aborts the whole job. */
#ifndef VMPI_TESTS_T_CHECK_H
#define VMPI_TESTS_T_CHECK_H

#include <mpi.h>
#include <stdio.h>
#include <string.h>

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

/* rc is of error class `want` and its message names the function fname. */
static inline void t_expect_err(int rc, int want, const char *fname, const char *what)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == want, "%s: error class %d, want %d", what, cls, want);
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    OK(MPI_Error_string(rc, msg, &len));
    CHECK(strstr(msg, fname) != NULL, "%s: message '%s' does not name %s", what, msg, fname);
}

/* Two-rank tests run on the pairs (2k, 2k + 1) of the job, each pair on its
 * own communicator, so they also run with 4 ranks across VMs and hosts. */
static inline MPI_Comm t_pair_comm(void)
{
    int rank, size;
    MPI_Comm c;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size % 2 == 0, "needs an even number of ranks");
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &c));
    return c;
}

#endif
