/* np: 1 2 4 */
/* vms: v2 h2v2 */
/* Nonblocking and split collective MPI-IO, against a reference computed
 * here: each rank's block of N ints through iwrite_at, iwrite (pointer),
 * iwrite_all, iwrite_at_all and iwrite_shared, completed with MPI_Wait,
 * MPI_Waitall, MPI_Test and MPI_Request_get_status (counts checked), read
 * back with the iread forms; the split forms (read_at_all_begin/end,
 * write_all_begin/end, ...) with their statuses; bad input: a NULL
 * request, an iread of a write-only file, an _end without its _begin, a
 * second _begin while one is active. */
#include "t_io_util.h"

enum { N = 100, PARTS = 5 };
static int rank, size;

static void expect_count(const MPI_Status *st, int want, const char *what)
{
    int n = -1;
    OK(MPI_Get_count(st, MPI_INT, &n));
    CHECK(n == want, "%s: count %d, want %d", what, n, want);
}

/* Part p of this rank's block: N / PARTS ints at etype offset off(p). */
static MPI_Offset off(int p) { return (MPI_Offset)rank * N + p * (N / PARTS); }

static void nonblocking(MPI_File fh, int *mine)
{
    MPI_Request req[PARTS];
    MPI_Status st[PARTS];
    const int n = N / PARTS;
    OK(MPI_File_iwrite_at(fh, off(0), mine, n, MPI_INT, &req[0]));
    OK(MPI_File_seek(fh, off(1), MPI_SEEK_SET));
    OK(MPI_File_iwrite(fh, mine + n, n, MPI_INT, &req[1]));
    OK(MPI_File_iwrite_all(fh, mine + 2 * n, n, MPI_INT, &req[2]));
    OK(MPI_File_iwrite_at_all(fh, off(3), mine + 3 * n, n, MPI_INT, &req[3]));
    OK(MPI_Waitall(4, req, st));
    for (int p = 0; p < 4; p++)
        expect_count(&st[p], n, "iwrite forms");
    /* Part 4 through the shared pointer, placed by rank order. */
    OK(MPI_File_seek_shared(fh, (MPI_Offset)size * N, MPI_SEEK_SET));
    OK(MPI_File_iwrite_shared(fh, mine + 4 * n, n, MPI_INT, &req[4]));
    int flag = 0;
    OK(MPI_Test(&req[4], &flag, &st[4]));
    CHECK(flag && req[4] == MPI_REQUEST_NULL, "MPI_Test: not complete");
    expect_count(&st[4], n, "iwrite_shared");
    OK(MPI_Barrier(MPI_COMM_WORLD));

    int back[N];
    OK(MPI_File_iread_at(fh, off(0), back, n, MPI_INT, &req[0]));
    OK(MPI_File_seek(fh, off(1), MPI_SEEK_SET));
    OK(MPI_File_iread(fh, back + n, n, MPI_INT, &req[1]));
    OK(MPI_File_iread_all(fh, back + 2 * n, n, MPI_INT, &req[2]));
    OK(MPI_File_iread_at_all(fh, off(3), back + 3 * n, n, MPI_INT, &req[3]));
    OK(MPI_Request_get_status(req[3], &flag, &st[3]));
    CHECK(flag, "MPI_Request_get_status: not complete");
    expect_count(&st[3], n, "get_status of iread_at_all");
    OK(MPI_Waitall(4, req, st));
    CHECK(!memcmp(back, mine, sizeof(int) * 4 * n), "iread forms: data differs");
    /* Whatever the order of the shared writes, part 4 of every rank is in
     * the tail; this rank's reads one part through iread_shared. */
    OK(MPI_File_seek_shared(fh, (MPI_Offset)size * N, MPI_SEEK_SET));
    OK(MPI_File_iread_shared(fh, back, n, MPI_INT, &req[0]));
    OK(MPI_Wait(&req[0], &st[0]));
    expect_count(&st[0], n, "iread_shared");
    CHECK(back[0] % N == 4 * n && back[0] / N < size, "iread_shared: not a part 4 (%d)",
          back[0]);
}

static void split(MPI_File fh, const int *mine)
{
    MPI_Status st;
    int back[N];
    OK(MPI_File_seek(fh, off(0), MPI_SEEK_SET));
    OK(MPI_File_write_all_begin(fh, mine, N, MPI_INT));
    OK(MPI_File_write_all_end(fh, mine, &st));
    expect_count(&st, N, "write_all_end");
    OK(MPI_File_write_at_all_begin(fh, off(0), mine, N, MPI_INT));
    T_IO_EXPECT(MPI_File_read_all_begin(fh, back, N, MPI_INT), MPI_ERR_IO,
                "MPI_File_read_all_begin");
    T_IO_EXPECT(MPI_File_read_at_all_end(fh, back, &st), MPI_ERR_IO, "MPI_File_read_at_all_end");
    OK(MPI_File_write_at_all_end(fh, mine, &st));
    expect_count(&st, N, "write_at_all_end");
    OK(MPI_File_read_at_all_begin(fh, off(0), back, N, MPI_INT));
    OK(MPI_File_read_at_all_end(fh, back, &st));
    expect_count(&st, N, "read_at_all_end");
    CHECK(!memcmp(back, mine, sizeof back), "split read: data differs");
    OK(MPI_File_seek(fh, off(0), MPI_SEEK_SET));
    OK(MPI_File_read_all_begin(fh, back, N, MPI_INT));
    OK(MPI_File_read_all_end(fh, back, MPI_STATUS_IGNORE));
    CHECK(!memcmp(back, mine, sizeof back), "split read_all: data differs");
    T_IO_EXPECT(MPI_File_write_all_end(fh, mine, &st), MPI_ERR_IO, "MPI_File_write_all_end");
}

int main(int argc, char **argv)
{
    char path[128];
    MPI_File fh;
    MPI_Request req;
    int mine[N];
    t_io_init(&argc, &argv, &rank, &size);
    t_io_path(path, "nb");
    for (int i = 0; i < N; i++)
        mine[i] = rank * N + i;
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR |
                     MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    nonblocking(fh, mine);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    split(fh, mine);
    T_IO_EXPECT(MPI_File_iread(fh, mine, 1, MPI_INT, NULL), MPI_ERR_ARG, "MPI_File_iread");
    OK(MPI_File_close(&fh));
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY |
                     MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    T_IO_EXPECT(MPI_File_iread_at(fh, 0, mine, 1, MPI_INT, &req), MPI_ERR_ACCESS,
                "MPI_File_iread_at");
    OK(MPI_File_close(&fh));
    return t_io_finish("t_io_nb");
}
