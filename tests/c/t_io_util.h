/* What the MPI-IO tests share: a temporary directory under /tmp made by
 * rank 0 and named to all (every rank, VMs of one machine included, sees
 * the same /tmp), and the expected-error check. */
#ifndef VMPI_TESTS_T_IO_UTIL_H
#define VMPI_TESTS_T_IO_UTIL_H

#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include "t_check.h"

#include <stdlib.h>
#include <unistd.h>

static char t_io_dir[64];

/* Makes the directory (rank 0) and tells every rank of MPI_COMM_WORLD. */
static inline void t_io_mkdir(void)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        strcpy(t_io_dir, "/tmp/vmpi-io.XXXXXX");
        CHECK(mkdtemp(t_io_dir) != NULL, "mkdtemp failed");
    }
    OK(MPI_Bcast(t_io_dir, sizeof t_io_dir, MPI_CHAR, 0, MPI_COMM_WORLD));
}

/* dir/name in out (of size 128). */
static inline const char *t_io_path(char *out, const char *name)
{
    snprintf(out, 128, "%s/%s", t_io_dir, name);
    return out;
}

/* After every rank is done with its files: rank 0 removes the directory,
 * which must be empty (each test deletes its files). */
static inline void t_io_rmdir(void)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        CHECK(rmdir(t_io_dir) == 0, "cannot remove %s (files left in it?)", t_io_dir);
}

/* MPI_Init, this rank and the size of MPI_COMM_WORLD, the directory. */
static inline void t_io_init(int *argc, char ***argv, int *rank, int *size)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    t_io_mkdir();
}

/* The directory goes, rank 0 says the test passed, MPI_Finalize. */
static inline int t_io_finish(const char *test)
{
    int rank, size;
    t_io_rmdir();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0)
        printf("%s: OK on %d ranks\n", test, size);
    MPI_Finalize();
    return 0;
}

/* The whole file as n ints (checked), read by this rank through a byte
 * view (which replaces the file's view); the caller frees it. */
static inline int *t_io_read_whole(MPI_File fh, int n)
{
    int *all = malloc(sizeof(int) * n), got = -1;
    MPI_Status st;
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    OK(MPI_File_read_at(fh, 0, all, n, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &got));
    CHECK(got == n, "whole file: %d ints, want %d", got, n);
    return all;
}

/* rc is an error of class want whose message names fname. */
#define T_IO_EXPECT(call, want, fname)                                               \
    do {                                                                             \
        int rc_ = (call);                                                            \
        CHECK(rc_ != MPI_SUCCESS, "%s: succeeded, want class %d", #call, (int)(want)); \
        t_expect_err(rc_, (want), (fname), #call);                                   \
    } while (0)

#endif
