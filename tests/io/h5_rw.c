/* Parallel HDF5 on vmpi: built with Debian's h5pcc.mpich (HDF5 for MPICH),
 * run unmodified on vmpi's libmpich.so.12 by tests/io/hdf5.sh.
 *
 * The ranks form a 2D process grid and each owns one block of a 2D array.
 * Two datasets, one contiguous and one chunked (chunks that straddle the
 * blocks, so a chunk is written by several ranks), are written with
 * collective transfers (H5Pset_dxpl_mpio collective), the file is closed
 * and opened again, and every rank reads, collectively, a block it did not
 * write and then the whole of each dataset; every value is checked against
 * the formula that made it, and HDF5 must report that it did the I/O
 * collectively. Prints "No Errors" on rank 0 when all passed. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { NR = 90, NC = 64 }; /* array size; chunks are CR x CC */
enum { CR = 14, CC = 20 };

static int errs;

#define EXPECT(cond, ...)                                               \
    do {                                                                \
        if (!(cond)) {                                                  \
            errs++;                                                     \
            fprintf(stderr, "h5_rw: rank %d: ", rank);                 \
            fprintf(stderr, __VA_ARGS__);                               \
            fputc('\n', stderr);                                        \
        }                                                               \
    } while (0)

static int rank, size, pr, pc; /* this rank; the grid is pr x pc */

static double value(const char *ds, hsize_t i, hsize_t j)
{
    return (ds[1] == 'h' ? 1e6 : 0) + (double)i * 1000 + (double)j + 0.25;
}

/* Rows or columns [*start, *start + *count) of block b of n split among p. */
static void split(int n, int p, int b, hsize_t *start, hsize_t *count)
{
    int q = n / p, r = n % p;
    *start = (hsize_t)(b * q + (b < r ? b : r));
    *count = (hsize_t)(q + (b < r));
}

static void block_of(int who, hsize_t start[2], hsize_t count[2])
{
    split(NR, pr, who / pc, &start[0], &count[0]);
    split(NC, pc, who % pc, &start[1], &count[1]);
}

static hid_t collective_xfer(void)
{
    hid_t x = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(x, H5FD_MPIO_COLLECTIVE);
    return x;
}

/* HDF5's account of how the last transfer through x went. */
static void expect_collective(hid_t x, const char *ds, const char *what)
{
    H5D_mpio_actual_io_mode_t mode;
    EXPECT(H5Pget_mpio_actual_io_mode(x, &mode) >= 0, "%s %s: no I/O mode", what, ds);
    EXPECT(mode != H5D_MPIO_NO_COLLECTIVE, "%s %s: HDF5 did not do collective I/O", what, ds);
}

static void write_block(hid_t file, const char *ds, hid_t dcpl)
{
    hsize_t dims[2] = {NR, NC}, start[2], count[2];
    block_of(rank, start, count);
    hid_t fs = H5Screate_simple(2, dims, NULL);
    hid_t d = H5Dcreate(file, ds, H5T_NATIVE_DOUBLE, fs, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    EXPECT(d >= 0, "cannot create %s", ds);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t ms = H5Screate_simple(2, count, NULL), x = collective_xfer();
    double *b = malloc(sizeof *b * count[0] * count[1]);
    for (hsize_t i = 0; i < count[0]; i++)
        for (hsize_t j = 0; j < count[1]; j++)
            b[i * count[1] + j] = value(ds, start[0] + i, start[1] + j);
    EXPECT(H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, x, b) >= 0, "writing %s failed", ds);
    expect_collective(x, ds, "write");
    free(b);
    H5Pclose(x);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
}

/* Reads rows/columns start+count of ds collectively and checks them. */
static void read_check(hid_t file, const char *ds, const hsize_t start[2],
                       const hsize_t count[2], const char *what)
{
    hid_t d = H5Dopen(file, ds, H5P_DEFAULT);
    EXPECT(d >= 0, "cannot open %s", ds);
    hid_t fs = H5Dget_space(d);
    hsize_t dims[2] = {0, 0};
    H5Sget_simple_extent_dims(fs, dims, NULL);
    EXPECT(dims[0] == NR && dims[1] == NC, "%s is %llux%llu", ds, (unsigned long long)dims[0],
           (unsigned long long)dims[1]);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t ms = H5Screate_simple(2, count, NULL), x = collective_xfer();
    double *b = malloc(sizeof *b * count[0] * count[1]);
    for (hsize_t k = 0; k < count[0] * count[1]; k++)
        b[k] = -1;
    EXPECT(H5Dread(d, H5T_NATIVE_DOUBLE, ms, fs, x, b) >= 0, "reading %s failed", ds);
    expect_collective(x, ds, "read");
    int bad = 0;
    for (hsize_t i = 0; i < count[0]; i++)
        for (hsize_t j = 0; j < count[1]; j++) {
            double want = value(ds, start[0] + i, start[1] + j), got = b[i * count[1] + j];
            if (got != want && bad++ < 3)
                EXPECT(0, "%s %s [%llu][%llu] = %g, want %g", what, ds,
                       (unsigned long long)(start[0] + i), (unsigned long long)(start[1] + j),
                       got, want);
        }
    errs += bad > 3 ? bad - 3 : 0;
    free(b);
    H5Pclose(x);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
}

static hid_t mpio_fapl(void)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    return fapl;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int dims[2] = {0, 0};
    MPI_Dims_create(size, 2, dims);
    pr = dims[0];
    pc = dims[1];
    const char *path = argc > 1 ? argv[1] : "h5_rw.h5";

    hid_t fapl = mpio_fapl();
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    EXPECT(file >= 0, "cannot create %s", path);
    write_block(file, "contig", H5P_DEFAULT);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hsize_t chunk[2] = {CR, CC};
    H5Pset_chunk(dcpl, 2, chunk);
    write_block(file, "chunked", dcpl);
    H5Pclose(dcpl);
    EXPECT(H5Fclose(file) >= 0, "closing %s after writing failed", path);

    file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    EXPECT(file >= 0, "cannot open %s again", path);
    const char *names[2] = {"contig", "chunked"};
    for (int k = 0; k < 2; k++) {
        hid_t d = H5Dopen(file, names[k], H5P_DEFAULT), p = H5Dget_create_plist(d);
        H5D_layout_t want = k ? H5D_CHUNKED : H5D_CONTIGUOUS;
        EXPECT(H5Pget_layout(p) == want, "%s has layout %d", names[k], (int)H5Pget_layout(p));
        H5Pclose(p);
        H5Dclose(d);
        /* The block of the rank across the grid (another VM's, on two VMs). */
        hsize_t start[2], count[2], all0[2] = {0, 0}, all[2] = {NR, NC};
        block_of(size - 1 - rank, start, count);
        read_check(file, names[k], start, count, "block");
        read_check(file, names[k], all0, all, "whole");
    }
    EXPECT(H5Fclose(file) >= 0, "closing %s after reading failed", path);
    H5Pclose(fapl);

    int total = 0;
    MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && total == 0)
        printf("h5_rw: %d ranks (%dx%d blocks), contiguous and chunked %dx%d datasets: "
               "No Errors\n", size, pr, pc, NR, NC);
    MPI_Finalize();
    return total != 0;
}
