/* np: 1 2 4 */
/* vms: v2 h2v2 */
/* Non-contiguous file views, each checked against a reference computed
 * here:
 *  - vector: rank r owns every size-th block of B ints (interleaved),
 *    written with write_all through the view, read back whole through
 *    the default view by every rank, and read through the view from an
 *    explicit offset and through the pointer after a seek (same data);
 *    get_byte_offset, get_position after the writes, SEEK_END in the
 *    view; a resized filetype tiles the file;
 *  - subarray: column blocks of a 2D C-order array (rows x cols*size),
 *    written from a non-contiguous memory type (every other int of a
 *    buffer) with write_at_all, the whole array read back and checked,
 *    then the block read back through the view into a strided buffer;
 *  - get_view returns the displacement, a new filetype with the same
 *    layout (freed by the caller), "native"; get_type_extent;
 *  - "external32" through a vector view: big-endian bytes in the file,
 *    the same ints read back, MPI_LONG's file extent 4. */
#include "t_io_util.h"

enum { B = 3, NB = 50, ROWS = 20, COLS = 7 };
static int rank, size;

static void check_count(const MPI_Status *st, int want, const char *what)
{
    int n = -1;
    OK(MPI_Get_count(st, MPI_INT, &n));
    CHECK(n == want, "%s: count %d, want %d", what, n, want);
}

static void vector_view(MPI_File fh)
{
    MPI_Datatype vec, ft;
    MPI_Status st;
    int mine[NB * B], in[NB * B];
    OK(MPI_Type_vector(NB, B, B * size, MPI_INT, &vec));
    /* One tile covers NB * B * size ints, so a second tile follows it. */
    OK(MPI_Type_create_resized(vec, 0, (MPI_Aint)sizeof(int) * NB * B * size, &ft));
    OK(MPI_Type_commit(&ft));
    OK(MPI_File_set_view(fh, (MPI_Offset)rank * B * sizeof(int), MPI_INT, ft, "native",
                         MPI_INFO_NULL));
    for (int i = 0; i < NB * B; i++)
        mine[i] = rank * 10000 + i;
    /* Two tiles: the second half of the data goes to the second tile. */
    OK(MPI_File_write_all(fh, mine, NB * B, MPI_INT, &st));
    OK(MPI_File_write_all(fh, mine, NB * B, MPI_INT, &st));
    MPI_Offset pos, byte;
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == 2 * NB * B, "position %ld", (long)pos);
    OK(MPI_File_get_byte_offset(fh, B + 1, &byte));
    CHECK(byte == (MPI_Offset)sizeof(int) * (rank * B + B * size + 1), "byte offset %ld",
          (long)byte);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_File_seek(fh, 0, MPI_SEEK_END));
    OK(MPI_File_get_position(fh, &pos));
    /* Ranks before the last: their last block ends before the file does. */
    CHECK(pos == 2 * NB * B, "SEEK_END: %ld", (long)pos);
    /* Explicit offset and pointer read the same ints. */
    OK(MPI_File_read_at_all(fh, NB * B + 5, in, NB * B - 5, MPI_INT, &st));
    check_count(&st, NB * B - 5, "read_at_all through the vector view");
    for (int i = 0; i < NB * B - 5; i++)
        CHECK(in[i] == mine[i + 5], "vector read_at int %d = %d", i, in[i]);
    OK(MPI_File_seek(fh, 5, MPI_SEEK_SET));
    OK(MPI_File_read(fh, in, NB * B, MPI_INT, &st));
    check_count(&st, NB * B, "read through the vector view");
    for (int i = 0; i < NB * B; i++)
        CHECK(in[i] == mine[(i + 5) % (NB * B)], "vector read int %d = %d", i, in[i]);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    int n = 2 * NB * B * size, *all = t_io_read_whole(fh, n);
    for (int i = 0; i < n; i++) {
        int owner = i / B % size, k = i / (B * size) * B + i % B;
        CHECK(all[i] == owner * 10000 + k % (NB * B), "file int %d = %d", i, all[i]);
    }
    free(all);
    /* get_view: a new type with the same layout. */
    MPI_Offset disp;
    MPI_Datatype et, got;
    char rep[MPI_MAX_DATAREP_STRING];
    OK(MPI_File_set_view(fh, 4 * rank, MPI_INT, ft, "native", MPI_INFO_NULL));
    OK(MPI_File_get_view(fh, &disp, &et, &got, rep));
    CHECK(disp == 4 * rank && et == MPI_INT && !strcmp(rep, "native"), "get_view");
    CHECK(got != ft, "get_view gave the user's own handle back");
    MPI_Aint lb, ext;
    OK(MPI_Type_get_extent(got, &lb, &ext));
    CHECK(lb == 0 && ext == (MPI_Aint)sizeof(int) * NB * B * size, "filetype extent %ld",
          (long)ext);
    OK(MPI_File_get_type_extent(fh, got, &ext));
    CHECK(ext == (MPI_Aint)sizeof(int) * NB * B * size, "get_type_extent %ld", (long)ext);
    OK(MPI_Type_free(&got));
    OK(MPI_Type_free(&ft));
    OK(MPI_Type_free(&vec));
}

static void subarray_view(MPI_File fh)
{
    int gs[2] = {ROWS, COLS * size}, ss[2] = {ROWS, COLS}, st0[2] = {0, rank * COLS};
    MPI_Datatype sub, every2;
    MPI_Status st;
    OK(MPI_Type_create_subarray(2, gs, ss, st0, MPI_ORDER_C, MPI_INT, &sub));
    OK(MPI_Type_commit(&sub));
    OK(MPI_Type_vector(ROWS * COLS, 1, 2, MPI_INT, &every2)); /* memory: every other int */
    OK(MPI_Type_commit(&every2));
    int *mem = calloc(2 * ROWS * COLS, sizeof(int));
    for (int i = 0; i < ROWS * COLS; i++)
        mem[2 * i] = rank * 1000 + i;
    OK(MPI_File_set_view(fh, 64, MPI_INT, sub, "native", MPI_INFO_NULL));
    OK(MPI_File_write_at_all(fh, 0, mem, 1, every2, &st));
    check_count(&st, ROWS * COLS, "write_at_all from a strided buffer");
    OK(MPI_Barrier(MPI_COMM_WORLD));
    int n = 16 + ROWS * COLS * size, *all = t_io_read_whole(fh, n);
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS * size; c++) {
            int v = all[16 + r * COLS * size + c], owner = c / COLS;
            CHECK(v == owner * 1000 + r * COLS + c % COLS, "array [%d][%d] = %d", r, c, v);
        }
    free(all);
    /* Back through the view into the strided buffer, odd ints untouched. */
    for (int i = 0; i < 2 * ROWS * COLS; i++)
        mem[i] = -1;
    OK(MPI_File_set_view(fh, 64, MPI_INT, sub, "native", MPI_INFO_NULL));
    OK(MPI_File_read_all(fh, mem, 1, every2, &st));
    for (int i = 0; i < ROWS * COLS; i++)
        CHECK(mem[2 * i] == rank * 1000 + i && mem[2 * i + 1] == -1, "read back int %d", i);
    free(mem);
    OK(MPI_Type_free(&sub));
    OK(MPI_Type_free(&every2));
}

/* external32: big-endian in the file through a vector view (every other
 * int of each rank's pair of slots), native again when read back. */
static void external32_view(MPI_File fh)
{
    MPI_Datatype vec, ft;
    MPI_Status st;
    int mine[4], back[4], n = -1;
    unsigned char raw[4];
    MPI_Aint ext;
    OK(MPI_Type_vector(4, 1, 2 * size, MPI_INT, &vec));
    OK(MPI_Type_create_resized(vec, 0, (MPI_Aint)sizeof(int) * 8 * size, &ft));
    OK(MPI_Type_commit(&ft));
    for (int i = 0; i < 4; i++)
        mine[i] = 0x01020300 + rank * 16 + i;
    OK(MPI_File_set_view(fh, (MPI_Offset)sizeof(int) * 2 * rank, MPI_INT, ft, "external32",
                         MPI_INFO_NULL));
    OK(MPI_File_get_type_extent(fh, MPI_LONG, &ext));
    CHECK(ext == 4, "external32 extent of MPI_LONG: %ld", (long)ext);
    OK(MPI_File_write_at_all(fh, 0, mine, 4, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == 4, "external32 write: count %d", n);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_File_read_at_all(fh, 0, back, 4, MPI_INT, &st));
    CHECK(!memcmp(back, mine, sizeof mine), "external32 read back differs");
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    OK(MPI_File_read_at(fh, (MPI_Offset)sizeof(int) * (2 * rank + 2 * size * 3), raw, 4,
                        MPI_BYTE, &st));
    CHECK(raw[0] == 1 && raw[1] == 2 && raw[2] == 3 && raw[3] == rank * 16 + 3,
          "not big-endian in the file: %02x %02x %02x %02x", raw[0], raw[1], raw[2], raw[3]);
    OK(MPI_Type_free(&ft));
    OK(MPI_Type_free(&vec));
}

int main(int argc, char **argv)
{
    char path[128];
    MPI_File fh;
    t_io_init(&argc, &argv, &rank, &size);
    OK(MPI_File_open(MPI_COMM_WORLD, t_io_path(path, "view"),
                     MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                     &fh));
    vector_view(fh);
    OK(MPI_File_set_size(fh, 0));
    subarray_view(fh);
    OK(MPI_File_set_size(fh, 0));
    external32_view(fh);
    OK(MPI_File_close(&fh));
    return t_io_finish("t_io_view");
}
