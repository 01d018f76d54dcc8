/* MPI-IO on a directory that is each VM's own disk (vmpirun --vm-disk DIR),
 * for tests/py/test_vms.py:
 *
 *   io_vmdisk DIR
 *
 * - a file created on MPI_COMM_WORLD: ranks of other VMs than rank 0's
 *   cannot see it, so the open fails on every rank with
 *   MPI_ERR_NO_SUCH_FILE;
 * - a file of that name made by every VM on its own disk, then opened on
 *   MPI_COMM_WORLD: MPI_ERR_NOT_SAME (each VM has another file);
 * - on a communicator per VM (ranks with the same processor name): a
 *   collective write of interleaved blocks, read back and checked, and the
 *   file's size counts that VM's ranks only.
 * Prints "io_vmdisk ok VMS" on rank 0; exit 1 with a message otherwise. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 256 }; /* ints per block */

static int rank;

static void fail(const char *what, int rc)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0, cls = -1;
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, msg, &len);
    printf("rank %d: %s: class %d: %s\n", rank, what, cls, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void expect(const char *what, int rc, int want)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    if (cls != want) {
        printf("rank %d: %s: wanted class %d\n", rank, what, want);
        fail(what, rc);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 2) {
        printf("usage: io_vmdisk DIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char path[4096], name[MPI_MAX_PROCESSOR_NAME] = "";
    int len;
    snprintf(path, sizeof path, "%s/io_vmdisk.dat", argv[1]);
    MPI_Get_processor_name(name, &len);

    /* One communicator per VM: color = the lowest rank of the same name. */
    char *names = malloc((size_t)size * MPI_MAX_PROCESSOR_NAME);
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME,
                  MPI_CHAR, MPI_COMM_WORLD);
    int color = 0, vms = 0;
    while (strcmp(names + (size_t)color * MPI_MAX_PROCESSOR_NAME, name))
        color++;
    for (int r = 0; r < size; r++) {
        int first = 0;
        while (strcmp(names + (size_t)first * MPI_MAX_PROCESSOR_NAME,
                      names + (size_t)r * MPI_MAX_PROCESSOR_NAME))
            first++;
        vms += first == r;
    }
    MPI_Comm vm;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &vm);
    int vrank, vsize;
    MPI_Comm_rank(vm, &vrank);
    MPI_Comm_size(vm, &vsize);

    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                           MPI_INFO_NULL, &fh);
    expect("open on MPI_COMM_WORLD with CREATE", rc, MPI_ERR_NO_SUCH_FILE);

    rc = MPI_File_open(vm, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS)
        fail("open on the VM's communicator", rc);
    MPI_File_set_size(fh, 0);
    MPI_File_close(&fh);
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    expect("open of each VM's own file on MPI_COMM_WORLD", rc, MPI_ERR_NOT_SAME);

    /* Interleaved blocks on the VM's communicator, through two-phase. */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_Info_set(info, "romio_cb_read", "enable");
    rc = MPI_File_open(vm, path, MPI_MODE_RDWR, info, &fh);
    if (rc != MPI_SUCCESS)
        fail("open on the VM's communicator", rc);
    MPI_Datatype ft;
    MPI_Type_vector(4, B, B * vsize, MPI_INT, &ft);
    MPI_Type_commit(&ft);
    MPI_File_set_view(fh, (MPI_Offset)vrank * B * sizeof(int), MPI_INT, ft, "native", info);
    int *out = malloc(sizeof(int) * 4 * B), *in = malloc(sizeof(int) * 4 * B);
    for (int i = 0; i < 4 * B; i++)
        out[i] = color * 1000000 + vrank * 10000 + i;
    if ((rc = MPI_File_write_all(fh, out, 4 * B, MPI_INT, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
        fail("write_all", rc);
    if ((rc = MPI_File_read_at_all(fh, 0, in, 4 * B, MPI_INT, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
        fail("read_at_all", rc);
    for (int i = 0; i < 4 * B; i++)
        if (in[i] != out[i]) {
            printf("rank %d: int %d read %d, wrote %d\n", rank, i, in[i], out[i]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    MPI_Offset bytes;
    MPI_File_get_size(fh, &bytes);
    if (bytes != (MPI_Offset)sizeof(int) * 4 * B * vsize) {
        printf("rank %d: the file has %lld bytes, its VM's %d ranks wrote %zu\n", rank,
               (long long)bytes, vsize, sizeof(int) * 4 * B * vsize);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_File_close(&fh);
    MPI_Info_free(&info);
    MPI_Type_free(&ft);
    MPI_Comm_free(&vm);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("io_vmdisk ok %d\n", vms);
    free(names);
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
