/* Whose process an MPI rank is, for tests/py/test_vms.py (vmpirun --user):
 *
 *   as_user [--spawn K] [PATH...]
 *
 * Every rank checks that MPI works across its VMs (an Allreduce and a
 * 1 MiB ring exchange, verified), tries to open each PATH read-write, and
 * prints one line:
 *
 *   rank R uid U euid E gid G groups N region OWNER open ERRNO...
 *
 * OWNER is the uid owning VMPI_IVSHMEM_PATH (-1 without one), ERRNO per
 * PATH the errno of its open (0: it opened). With --spawn K the job then
 * spawns K processes of this program (MPI_Comm_spawn), which do the same
 * among themselves and print "child rank ..." lines. Exit 1 with a message
 * when the MPI checks fail. */
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { N = 1 << 18 }; /* ints in the ring message: 1 MiB */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    int spawn = 0;
    if (argc > 2 && strcmp(argv[1], "--spawn") == 0) {
        spawn = atoi(argv[2]);
        argv[2] = argv[0]; /* the paths follow the program, as without --spawn */
        argv += 2;
        argc -= 2;
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int *out = malloc(N * sizeof *out), *in = malloc(N * sizeof *in);
    for (int i = 0; i < N; i++)
        out[i] = rank * N + i;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Sendrecv(out, N, MPI_INT, next, 0, in, N, MPI_INT, prev, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    int bad = sum != size * (size - 1) / 2;
    for (int i = 0; i < N && !bad; i++)
        bad = in[i] != prev * N + i;
    if (bad) {
        printf("rank %d: wrong data (sum %d)\n", rank, sum);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    long owner = -1;
    struct stat st;
    const char *region = getenv("VMPI_IVSHMEM_PATH");
    if (region && stat(region, &st) == 0)
        owner = (long)st.st_uid;
    char line[4096];
    int len = snprintf(line, sizeof line, "%srank %d uid %ld euid %ld gid %ld groups %d region %ld open",
                       parent == MPI_COMM_NULL ? "" : "child ", rank, (long)getuid(), (long)geteuid(), (long)getgid(), getgroups(0, NULL),
                       owner);
    for (int a = 1; a < argc && len < (int)sizeof line - 16; a++) {
        int fd = open(argv[a], O_RDWR);
        len += snprintf(line + len, sizeof line - (size_t)len, " %d", fd < 0 ? errno : 0);
        if (fd >= 0)
            close(fd);
    }
    printf("%s\n", line);
    fflush(stdout);
    if (spawn > 0) {
        MPI_Comm children;
        MPI_Comm_spawn(argv[0], argv + 1, spawn, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &children,
                       MPI_ERRCODES_IGNORE);
        MPI_Comm_disconnect(&children);
    }
    if (parent != MPI_COMM_NULL)
        MPI_Comm_disconnect(&parent);
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
