/* np: 1 2 4 */
/* vms: v2 h2v2 */
/* MPI-IO basics on the default view (bytes) and a contiguous int view,
 * every rank against a reference it computes:
 *  - open/close with CREATE|RDWR, write_at / read_at of every rank's
 *    block, read back whole by every rank after sync-barrier-sync;
 *  - individual file pointers: seek, write, get_position, read, reads at
 *    the end of the file (short count), write_all / read_all,
 *    write_at_all / read_at_all, explicit offsets equal to seek + read;
 *  - get_size, set_size (shrink, grow with zeros), preallocate,
 *    get_amode, get_group, get_info after set_info, atomicity, sync,
 *    get_byte_offset, seek to MPI_SEEK_END, c2f/f2c;
 *  - MPI_MODE_APPEND (pointer starts at the end), MPI_MODE_DELETE_ON_CLOSE,
 *    MPI_File_delete; a name with ROMIO's "ufs:" prefix. */
#include "t_io_util.h"

enum { N = 1000 };
static int rank, size;

static int value(int r, int i) { return r * 100000 + i; }

static void check_count(const MPI_Status *st, MPI_Datatype t, int want, const char *what)
{
    int n = -1;
    OK(MPI_Get_count(st, t, &n));
    CHECK(n == want, "%s: count %d, want %d", what, n, want);
}

/* Blocks of every rank through explicit offsets, read back whole. */
static void explicit_offsets(MPI_File fh)
{
    int buf[N], *all = malloc(sizeof(int) * N * size);
    MPI_Status st;
    for (int i = 0; i < N; i++)
        buf[i] = value(rank, i);
    OK(MPI_File_write_at(fh, (MPI_Offset)rank * N * sizeof(int), buf, N, MPI_INT, &st));
    check_count(&st, MPI_INT, N, "write_at");
    OK(MPI_File_sync(fh));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_File_sync(fh));
    OK(MPI_File_read_at(fh, 0, all, N * size, MPI_INT, &st));
    check_count(&st, MPI_INT, N * size, "read_at");
    for (int r = 0; r < size; r++)
        for (int i = 0; i < N; i++)
            CHECK(all[r * N + i] == value(r, i), "rank %d's int %d = %d", r, i, all[r * N + i]);
    MPI_Offset sz = -1;
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == (MPI_Offset)sizeof(int) * N * size, "size %ld", (long)sz);
    /* Past the end: a short read; at the end: nothing. */
    OK(MPI_File_read_at(fh, sz - 2 * sizeof(int), buf, 10, MPI_INT, &st));
    check_count(&st, MPI_INT, 2, "read_at near the end");
    OK(MPI_File_read_at(fh, sz, buf, 10, MPI_INT, &st));
    check_count(&st, MPI_INT, 0, "read_at the end");
    free(all);
}

/* An int view; each rank's pointer moves through its own block. */
static void file_pointers(MPI_File fh)
{
    int buf[N], in[N];
    MPI_Status st;
    MPI_Offset pos;
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    OK(MPI_File_seek(fh, (MPI_Offset)rank * N, MPI_SEEK_SET));
    for (int i = 0; i < N; i++)
        buf[i] = -value(rank, i);
    OK(MPI_File_write(fh, buf, N / 2, MPI_INT, &st));
    OK(MPI_File_write_all(fh, buf + N / 2, N / 2, MPI_INT, &st));
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset)(rank + 1) * N, "position %ld after writing", (long)pos);
    OK(MPI_File_get_byte_offset(fh, pos, &pos));
    CHECK(pos == (MPI_Offset)(rank + 1) * N * 4, "byte offset %ld", (long)pos);
    OK(MPI_File_seek(fh, -N, MPI_SEEK_CUR));
    OK(MPI_File_read(fh, in, N / 4, MPI_INT, &st));
    OK(MPI_File_read_all(fh, in + N / 4, N - N / 4, MPI_INT, &st));
    check_count(&st, MPI_INT, N - N / 4, "read_all");
    CHECK(!memcmp(in, buf, sizeof buf), "read back through the pointer differs");
    /* An explicit offset reads what seek + read reads, pointer untouched. */
    OK(MPI_File_read_at_all(fh, (MPI_Offset)rank * N + 7, in, 1, MPI_INT, &st));
    CHECK(in[0] == buf[7], "read_at_all: %d", in[0]);
    OK(MPI_File_write_at_all(fh, (MPI_Offset)rank * N + 7, &buf[8], 1, MPI_INT, &st));
    OK(MPI_File_read_at(fh, (MPI_Offset)rank * N + 7, in, 1, MPI_INT, &st));
    CHECK(in[0] == buf[8], "write_at_all: %d", in[0]);
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset)(rank + 1) * N, "explicit offsets moved the pointer to %ld",
          (long)pos);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_File_seek(fh, -3, MPI_SEEK_END));
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset)size * N - 3, "SEEK_END -3: %ld", (long)pos);
    OK(MPI_File_read(fh, in, 10, MPI_INT, &st));
    check_count(&st, MPI_INT, 3, "read at the end through the pointer");
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset)size * N, "pointer after a short read: %ld", (long)pos);
}

static void sizes_and_queries(MPI_File fh)
{
    MPI_Offset sz;
    int amode, flag, res;
    unsigned char b[8];
    MPI_Status st;
    OK(MPI_File_set_size(fh, 10));
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == 10, "size after set_size(10): %ld", (long)sz);
    OK(MPI_File_set_size(fh, 40));
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    OK(MPI_File_read_at(fh, 30, b, 8, MPI_BYTE, &st));
    check_count(&st, MPI_BYTE, 8, "read of the grown part");
    for (int i = 0; i < 8; i++)
        CHECK(b[i] == 0, "grown part byte %d = %d", i, b[i]);
    OK(MPI_File_preallocate(fh, 20)); /* never shrinks */
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == 40, "size after preallocate(20): %ld", (long)sz);
    OK(MPI_File_preallocate(fh, 100));
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == 100, "size after preallocate(100): %ld", (long)sz);
    OK(MPI_File_get_amode(fh, &amode));
    CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_RDWR), "amode %#x", amode);
    MPI_Group g, wg;
    OK(MPI_File_get_group(fh, &g));
    OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    OK(MPI_Group_compare(g, wg, &res));
    CHECK(res == MPI_IDENT, "file group vs world: %d", res);
    OK(MPI_Group_free(&g));
    OK(MPI_Group_free(&wg));
    MPI_Info info, used;
    char v[MPI_MAX_INFO_VAL];
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "access_style", "read_mostly"));
    OK(MPI_File_set_info(fh, info));
    OK(MPI_Info_free(&info));
    OK(MPI_File_get_info(fh, &used));
    OK(MPI_Info_get(used, "access_style", MPI_MAX_INFO_VAL - 1, v, &flag));
    CHECK(flag && !strcmp(v, "read_mostly"), "hint access_style: flag %d", flag);
    OK(MPI_Info_free(&used));
    OK(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 0, "atomic by default");
    OK(MPI_File_set_atomicity(fh, 1));
    OK(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 1, "atomicity not set");
    int x = rank;
    OK(MPI_File_write_at(fh, rank * 4, &x, 1, MPI_INT, &st)); /* under the lock */
    OK(MPI_File_set_atomicity(fh, 0));
    CHECK(MPI_File_f2c(MPI_File_c2f(fh)) == fh, "c2f/f2c round trip");
    CHECK(MPI_File_c2f(MPI_FILE_NULL) == 0, "MPI_FILE_NULL is 0 in Fortran");
}

/* APPEND starts the pointers at the end; DELETE_ON_CLOSE removes the file. */
static void modes(const char *path)
{
    MPI_File fh;
    MPI_Offset pos;
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_APPEND |
                     MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == 100, "APPEND: position %ld, want 100", (long)pos);
    OK(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL, "close did not null the handle");
    OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(access(path, F_OK) != 0, "DELETE_ON_CLOSE left %s", path);
    /* MPI_File_delete of a closed file; ROMIO's "ufs:" prefix names it too. */
    char ufs[160];
    snprintf(ufs, sizeof ufs, "ufs:%s", path);
    OK(MPI_File_open(MPI_COMM_WORLD, ufs, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                     &fh));
    CHECK(access(path, F_OK) == 0, "open of ufs:%s did not create %s", path, path);
    OK(MPI_File_close(&fh));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        OK(MPI_File_delete(ufs, MPI_INFO_NULL));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(access(path, F_OK) != 0, "MPI_File_delete left %s", path);
}

int main(int argc, char **argv)
{
    char path[128];
    MPI_File fh;
    t_io_init(&argc, &argv, &rank, &size);
    t_io_path(path, "basic");
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    explicit_offsets(fh);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    file_pointers(fh);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    sizes_and_queries(fh);
    OK(MPI_File_close(&fh));
    modes(path);
    return t_io_finish("t_io_basic");
}
