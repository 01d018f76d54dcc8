/* np: 1 2 */
/* What MPI-IO does when the file system fails under it (docs/IO.md):
 *  - a full disk: a small tmpfs mounted by the test (it runs as root in
 *    CI; skipped with a message when the mount fails or a rank does not
 *    see it). A collective write larger than the disk fails with
 *    MPI_ERR_NO_SPACE, naming MPI_File_write_at_all, on every rank (the
 *    outcome of a collective access is agreed on); an independent write
 *    past the disk fails on its rank alone; preallocate beyond the disk
 *    fails alike on every rank; after set_size(0) the file works again;
 *  - a file deleted while open (POSIX): MPI_File_delete succeeds, the name
 *    is gone (open without MPI_MODE_CREATE: MPI_ERR_NO_SUCH_FILE), and the
 *    open handle still writes, reads, syncs and reports its size until it
 *    is closed. */
#define _GNU_SOURCE /* mount */
#include "t_io_util.h"

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>

enum { DISK = 64 << 10, PIECE = 96 << 10 }; /* tmpfs size; bytes each rank writes */
static int rank, size;

/* Rank 0 mounts a tmpfs of DISK bytes at dir; 1 if every rank sees it. */
static int mount_small_disk(const char *dir)
{
    int ok = 1, all;
    if (rank == 0) {
        CHECK(mkdir(dir, 0755) == 0, "mkdir %s", dir);
        ok = mount("tmpfs", dir, "tmpfs", 0, "size=64k") == 0;
    }
    OK(MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD));
    struct statfs sf;
    if (ok)
        ok = statfs(dir, &sf) == 0 && sf.f_type == 0x01021994 /* TMPFS_MAGIC */ &&
             (long long)sf.f_blocks * sf.f_bsize <= DISK;
    OK(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD));
    return all;
}

static void full_disk(void)
{
    char dir[128], path[160];
    t_io_path(dir, "disk");
    if (!mount_small_disk(dir)) {
        if (rank == 0)
            printf("t_io_robust: full disk skipped: cannot mount a tmpfs at %s on every rank "
                   "(needs root)\n", dir);
        if (rank == 0)
            umount2(dir, MNT_DETACH), rmdir(dir);
        return;
    }
    snprintf(path, sizeof path, "%s/full", dir);
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    char *mine = malloc(PIECE), *back = malloc(PIECE);
    memset(mine, 'a' + rank, PIECE);
    MPI_Status st;
    T_IO_EXPECT(MPI_File_write_at_all(fh, (MPI_Offset)rank * PIECE, mine, PIECE, MPI_BYTE, &st),
                MPI_ERR_NO_SPACE, "MPI_File_write_at_all");
    OK(MPI_File_set_size(fh, 0));
    if (rank == 0)
        T_IO_EXPECT(MPI_File_write_at(fh, 0, mine, PIECE, MPI_BYTE, &st), MPI_ERR_NO_SPACE,
                    "MPI_File_write_at");
    OK(MPI_Barrier(MPI_COMM_WORLD));
    T_IO_EXPECT(MPI_File_preallocate(fh, 4 * DISK), MPI_ERR_NO_SPACE, "MPI_File_preallocate");
    OK(MPI_File_set_size(fh, 0));
    OK(MPI_File_write_at_all(fh, (MPI_Offset)rank * 1024, mine, 1024, MPI_BYTE, &st));
    OK(MPI_File_read_at_all(fh, (MPI_Offset)rank * 1024, back, 1024, MPI_BYTE, &st));
    CHECK(!memcmp(back, mine, 1024), "write after freeing the disk");
    OK(MPI_File_close(&fh));
    free(mine);
    free(back);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        OK(MPI_File_delete(path, MPI_INFO_NULL));
        CHECK(umount2(dir, 0) == 0, "umount %s", dir);
        CHECK(rmdir(dir) == 0, "rmdir %s", dir);
    }
}

static void deleted_while_open(void)
{
    char path[128];
    MPI_File fh, fh2;
    MPI_Status st;
    int v[64], in[64];
    t_io_path(path, "deleted");
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        OK(MPI_File_delete(path, MPI_INFO_NULL));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    T_IO_EXPECT(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh2),
                MPI_ERR_NO_SUCH_FILE, "MPI_File_open");
    for (int i = 0; i < 64; i++)
        v[i] = rank * 1000 + i;
    OK(MPI_File_write_at_all(fh, (MPI_Offset)rank * sizeof v, v, 64, MPI_INT, &st));
    OK(MPI_File_sync(fh));
    /* Every rank reads its neighbour's data through the unlinked file. */
    int peer = (rank + 1) % size;
    OK(MPI_File_read_at_all(fh, (MPI_Offset)peer * sizeof v, in, 64, MPI_INT, &st));
    for (int i = 0; i < 64; i++)
        CHECK(in[i] == peer * 1000 + i, "deleted file: int %d is %d", i, in[i]);
    MPI_Offset sz;
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == (MPI_Offset)(size * sizeof v), "deleted file: size %ld", (long)sz);
    OK(MPI_File_close(&fh));
    CHECK(access(path, F_OK) != 0, "%s came back", path);
}

int main(int argc, char **argv)
{
    t_io_init(&argc, &argv, &rank, &size);
    full_disk();
    deleted_while_open();
    return t_io_finish("t_io_robust");
}
