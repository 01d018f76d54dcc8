/* np: 1 2 4 */
/* vms: v2 h2v2 */
/* The shared file pointer, against a reference computed here:
 *  - write_shared under concurrency: every rank writes ROUNDS chunks of
 *    N ints; each chunk lands whole and once (the pointer is moved under
 *    a lock), the pointer ends after all of them, read_shared after
 *    seek_shared(0) gives whole chunks back;
 *  - write_ordered / read_ordered (and their split forms): rank r's
 *    r + 1 ints go after those of ranks below it, every rank reads its
 *    own back; get_position_shared after each;
 *  - set_view resets the pointer; seek_shared SEEK_CUR and SEEK_END;
 *  - MPI_MODE_APPEND starts the pointer at the end; MPI_MODE_SEQUENTIAL
 *    allows the shared forms and MPI_DISPLACEMENT_CURRENT names where the
 *    pointer is. */
#include "t_io_util.h"

enum { N = 64, ROWS = 5 };
static int rank, size;

static MPI_Offset shared_pos(MPI_File fh)
{
    MPI_Offset p = -1;
    OK(MPI_File_get_position_shared(fh, &p));
    return p;
}

static void concurrent(MPI_File fh)
{
    int chunk[N], *all = malloc(sizeof(int) * N * ROWS * size), seen[64] = {0};
    MPI_Status st;
    for (int k = 0; k < ROWS; k++) {
        for (int i = 0; i < N; i++)
            chunk[i] = (rank * ROWS + k) * N + i;
        OK(MPI_File_write_shared(fh, chunk, N, MPI_INT, &st));
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(shared_pos(fh) == (MPI_Offset)N * ROWS * size, "pointer at %ld", (long)shared_pos(fh));
    OK(MPI_File_read_at(fh, 0, all, N * ROWS * size, MPI_INT, &st));
    for (int c = 0; c < ROWS * size; c++) {
        int id = all[c * N] / N;
        CHECK(id >= 0 && id < ROWS * size && !seen[id], "chunk %d: id %d twice or bad", c, id);
        seen[id] = 1;
        for (int i = 0; i < N; i++)
            CHECK(all[c * N + i] == id * N + i, "chunk %d torn at int %d", c, i);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    OK(MPI_File_read_shared(fh, chunk, N, MPI_INT, &st));
    CHECK(chunk[0] % N == 0 && chunk[N - 1] == chunk[0] + N - 1, "read_shared: not a chunk");
    free(all);
}

static void ordered(MPI_File fh)
{
    int mine[8], back[8];
    MPI_Status st;
    MPI_Offset before = (MPI_Offset)rank * (rank + 1) / 2, total = (MPI_Offset)size * (size + 1) / 2;
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL)); /* pointer: 0 */
    CHECK(shared_pos(fh) == 0, "set_view left the pointer at %ld", (long)shared_pos(fh));
    for (int i = 0; i <= rank; i++)
        mine[i] = 1000 * rank + i;
    OK(MPI_File_write_ordered(fh, mine, rank + 1, MPI_INT, &st));
    CHECK(shared_pos(fh) == total, "after write_ordered: %ld", (long)shared_pos(fh));
    OK(MPI_File_read_at(fh, before, back, rank + 1, MPI_INT, &st));
    CHECK(!memcmp(back, mine, sizeof(int) * (rank + 1)), "rank order: data not at %ld",
          (long)before);
    /* Split forms, after a seek back to where this round started. */
    OK(MPI_File_seek_shared(fh, -total, MPI_SEEK_CUR));
    OK(MPI_File_read_ordered_begin(fh, back, rank + 1, MPI_INT));
    OK(MPI_File_read_ordered_end(fh, back, &st));
    int n = -1;
    OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == rank + 1 && !memcmp(back, mine, sizeof(int) * (rank + 1)), "read_ordered: %d", n);
    OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
    CHECK(shared_pos(fh) == total, "SEEK_END: %ld", (long)shared_pos(fh));
    OK(MPI_File_write_ordered_begin(fh, mine, rank + 1, MPI_INT));
    OK(MPI_File_write_ordered_end(fh, mine, &st));
    CHECK(shared_pos(fh) == 2 * total, "after write_ordered_begin/end: %ld",
          (long)shared_pos(fh));
    OK(MPI_File_read_at(fh, total + before, back, rank + 1, MPI_INT, &st));
    CHECK(!memcmp(back, mine, sizeof(int) * (rank + 1)), "split write_ordered: wrong place");
}

/* APPEND: the pointer starts at the end; SEQUENTIAL: shared forms only,
 * and MPI_DISPLACEMENT_CURRENT. */
static void modes(const char *path)
{
    MPI_File fh;
    MPI_Status st;
    MPI_Offset size0, disp;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    int x = rank;
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_APPEND |
                     MPI_MODE_SEQUENTIAL, MPI_INFO_NULL, &fh));
    OK(MPI_File_get_size(fh, &size0));
    CHECK(shared_pos(fh) == size0, "APPEND: shared pointer %ld, size %ld",
          (long)shared_pos(fh), (long)size0);
    OK(MPI_File_write_ordered(fh, &x, 1, MPI_INT, &st));
    OK(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT, "native",
                         MPI_INFO_NULL));
    OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    CHECK(disp == size0 + 4 * size, "DISPLACEMENT_CURRENT: %ld, want %ld", (long)disp,
          (long)(size0 + 4 * size));
    T_IO_EXPECT(MPI_File_read_ordered_end(fh, &x, &st), MPI_ERR_IO, "MPI_File_read_ordered_end");
    OK(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    char path[128];
    MPI_File fh;
    t_io_init(&argc, &argv, &rank, &size);
    CHECK(size * ROWS <= 64, "too many ranks");
    t_io_path(path, "shared");
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    concurrent(fh);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_File_set_size(fh, 0));
    ordered(fh);
    OK(MPI_File_close(&fh));
    modes(path);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        OK(MPI_File_delete(path, MPI_INFO_NULL));
    return t_io_finish("t_io_shared"); /* fails if close left the pointer's file */
}
