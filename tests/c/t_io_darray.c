/* np: 4 1 8 */
/* vms: v2 h2v2 */
/* darray and indexed filetypes as views, against references computed here
 * (8 ranks in one VM, 4 across two VMs):
 *  - darray: an R x C int array, rows in blocks and columns cyclic in
 *    pairs over a 2D process grid; each rank writes the global index of
 *    each element it owns through the view (write_all), the whole file
 *    must then hold every index once, and each rank reads its elements
 *    back through the view in the order the reference owner formula gives;
 *  - indexed: rounds of blocks of 1-3 ints per rank, lengths varying with
 *    the rank and the round, resized to a round span so two tiles follow
 *    each other; written through the individual pointer in two calls, the
 *    file checked whole, read back from an explicit offset;
 *  - a filetype like HDF5's chunk types (a struct with a resized member:
 *    its lb lies above its first data, so its data spans more than its
 *    extent): its first tile reads and writes, an access past it fails with
 *    MPI_ERR_IO naming the function. */
#include "t_io_util.h"

enum { R = 13, C = 10, CYC = 2, NK = 7 };
static int rank, size;

static void darray_view(MPI_File fh)
{
    int gsizes[2] = {R, C}, distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, CYC}, psizes[2] = {0, 0};
    OK(MPI_Dims_create(size, 2, psizes));
    MPI_Datatype ft;
    OK(MPI_Type_create_darray(size, rank, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C,
                              MPI_INT, &ft));
    OK(MPI_Type_commit(&ft));
    /* The reference: (i, j) belongs to grid row i / ceil(R / pr), grid
     * column (j / CYC) % pc; a rank's elements in row-major order. */
    int rb = (R + psizes[0] - 1) / psizes[0], n = 0, *mine = malloc(sizeof(int) * R * C);
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++)
            if ((i / rb) * psizes[1] + (j / CYC) % psizes[1] == rank)
                mine[n++] = i * C + j;
    int tsize;
    OK(MPI_Type_size(ft, &tsize));
    CHECK(tsize == n * (int)sizeof(int), "darray holds %d bytes, reference %d ints", tsize, n);
    MPI_Status st;
    OK(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL));
    OK(MPI_File_write_all(fh, mine, n, MPI_INT, &st));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    int *all = t_io_read_whole(fh, R * C);
    for (int g = 0; g < R * C; g++)
        CHECK(all[g] == g, "darray: file int %d is %d", g, all[g]);
    int *back = calloc((size_t)n + 1, sizeof(int));
    OK(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL));
    OK(MPI_File_read_at_all(fh, 0, back, n, MPI_INT, &st));
    for (int k = 0; k < n; k++)
        CHECK(back[k] == mine[k], "darray: element %d read %d, want %d", k, back[k], mine[k]);
    free(all);
    free(back);
    free(mine);
    OK(MPI_Type_free(&ft));
}

/* Ints rank r owns in round k. */
static int blen(int r, int k)
{
    return 1 + (r + k) % 3;
}

static void indexed_view(MPI_File fh)
{
    int lens[NK], disps[NK], start = 0, n = 0;
    for (int k = 0; k < NK; k++) {
        lens[k] = blen(rank, k);
        disps[k] = start;
        for (int q = 0; q < size; q++)
            disps[k] += q < rank ? blen(q, k) : 0, start += blen(q, k);
        n += lens[k];
    }
    MPI_Datatype idx, ft;
    OK(MPI_Type_indexed(NK, lens, disps, MPI_INT, &idx));
    OK(MPI_Type_create_resized(idx, 0, (MPI_Aint)sizeof(int) * start, &ft));
    OK(MPI_Type_commit(&ft));
    int *mine = malloc(sizeof(int) * 2 * n), *back = malloc(sizeof(int) * 2 * n);
    for (int k = 0; k < 2 * n; k++)
        mine[k] = rank * 100000 + k;
    MPI_Status st;
    OK(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL));
    OK(MPI_File_write_all(fh, mine, n, MPI_INT, &st));
    OK(MPI_File_write_all(fh, mine + n, n, MPI_INT, &st)); /* the second tile */
    OK(MPI_Barrier(MPI_COMM_WORLD));
    /* The reference file: tile t, round k, rank q's blen(q, k) ints. */
    int *all = t_io_read_whole(fh, 2 * start), at = 0, next[64] = {0};
    CHECK(size <= 64, "too many ranks");
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < NK; k++)
            for (int q = 0; q < size; q++)
                for (int b = 0; b < blen(q, k); b++, at++)
                    CHECK(all[at] == q * 100000 + next[q]++, "indexed: file int %d is %d", at,
                          all[at]);
    OK(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL));
    OK(MPI_File_read_at_all(fh, 1, back, 2 * n - 1, MPI_INT, &st));
    for (int k = 0; k < 2 * n - 1; k++)
        CHECK(back[k] == mine[k + 1], "indexed: int %d read %d", k, back[k]);
    free(all);
    free(back);
    free(mine);
    OK(MPI_Type_free(&idx));
    OK(MPI_Type_free(&ft));
}

/* Rank 0 alone, on its own file. */
static void spanning_filetype(void)
{
    char path[128];
    MPI_File fh;
    MPI_Status st;
    MPI_Datatype four, rs, ft;
    OK(MPI_Type_contiguous(4, MPI_INT, &four));
    OK(MPI_Type_create_resized(four, 0, 4 * sizeof(int), &rs));
    int lens[2] = {1, 1};
    MPI_Aint disps[2] = {0, 8 * sizeof(int)};
    MPI_Datatype types[2] = {four, rs};
    OK(MPI_Type_create_struct(2, lens, disps, types, &ft));
    OK(MPI_Type_commit(&ft));
    MPI_Aint lb, ext;
    OK(MPI_Type_get_extent(ft, &lb, &ext));
    CHECK(lb == 8 * sizeof(int) && ext == 4 * sizeof(int), "struct lb %ld extent %ld",
          (long)lb, (long)ext);
    OK(MPI_File_open(MPI_COMM_SELF, t_io_path(path, "span"),
                     MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                     &fh));
    OK(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL));
    int v[12], in[12] = {0};
    for (int i = 0; i < 12; i++)
        v[i] = 7 * i + 1;
    OK(MPI_File_write_at(fh, 0, v, 8, MPI_INT, &st));
    OK(MPI_File_read_at(fh, 0, in, 8, MPI_INT, &st));
    for (int i = 0; i < 8; i++)
        CHECK(in[i] == v[i], "spanning filetype: int %d read %d", i, in[i]);
    T_IO_EXPECT(MPI_File_write_at(fh, 0, v, 12, MPI_INT, &st), MPI_ERR_IO, "MPI_File_write_at");
    T_IO_EXPECT(MPI_File_read_at(fh, 6, in, 4, MPI_INT, &st), MPI_ERR_IO, "MPI_File_read_at");
    int *all = t_io_read_whole(fh, 12);
    for (int i = 0; i < 12; i++) /* ints 4..7 of the file are the hole */
        CHECK(all[i] == (i < 4 ? v[i] : i < 8 ? 0 : v[i - 4]), "spanning file int %d is %d", i,
              all[i]);
    free(all);
    OK(MPI_File_close(&fh));
    OK(MPI_Type_free(&four));
    OK(MPI_Type_free(&rs));
    OK(MPI_Type_free(&ft));
}

int main(int argc, char **argv)
{
    char path[128];
    MPI_File fh;
    t_io_init(&argc, &argv, &rank, &size);
    OK(MPI_File_open(MPI_COMM_WORLD, t_io_path(path, "views"),
                     MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                     &fh));
    darray_view(fh);
    OK(MPI_File_set_size(fh, 0));
    indexed_view(fh);
    OK(MPI_File_close(&fh));
    if (rank == 0)
        spanning_filetype();
    return t_io_finish("t_io_darray");
}
