/* np: 1 2 */
/* Bad input to MPI-IO: the error class and a message naming the function,
 * with files' default handler (MPI_ERRORS_RETURN):
 *  - open: a missing file (NO_SUCH_FILE), bad amodes (AMODE), EXCL on an
 *    existing file (FILE_EXISTS), a file without permission (ACCESS, when
 *    not running as root), a bad communicator and info;
 *  - access: write to a file opened RDONLY (READ_ONLY), read of one
 *    opened WRONLY (ACCESS), negative offsets and seeks (ARG), a filetype
 *    that is not a multiple of the etype (ARG), etypes and filetypes with
 *    decreasing displacements (IO, as MPICH), unsupported data
 *    representations and external32 views of MPI_LONG, 8 bytes in memory
 *    and 4 in external32 (UNSUPPORTED_DATAREP), MPI_DISPLACEMENT_CURRENT
 *    outside sequential mode, explicit offsets in sequential mode
 *    (UNSUPPORTED_OPERATION), a bad handle (FILE), negative set_size;
 *  - MPI_File_delete of a missing file (NO_SUCH_FILE);
 *  - error handlers: the default is MPI_ERRORS_RETURN; a user handler on
 *    a file gets that file and the code; one on MPI_FILE_NULL gets the
 *    errors of a failed open and becomes the handler of new files;
 *    MPI_File_call_errhandler calls it. */
#include "t_io_util.h"

#include <sys/stat.h>

static int rank, calls;
static MPI_File seen_file;
static int seen_class;

static void handler(MPI_File *fh, int *code, ...)
{
    calls++;
    seen_file = *fh;
    MPI_Error_class(*code, &seen_class);
}

static void open_errors(const char *path, const char *missing)
{
    MPI_File fh;
    MPI_Comm w = MPI_COMM_WORLD;
    T_IO_EXPECT(MPI_File_open(w, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                MPI_ERR_NO_SUCH_FILE, "MPI_File_open");
    T_IO_EXPECT(MPI_File_open(w, path, MPI_MODE_RDONLY | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
                MPI_ERR_AMODE, "MPI_File_open");
    T_IO_EXPECT(MPI_File_open(w, path, MPI_MODE_CREATE, MPI_INFO_NULL, &fh), MPI_ERR_AMODE,
                "MPI_File_open");
    T_IO_EXPECT(MPI_File_open(w, path, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh),
                MPI_ERR_AMODE, "MPI_File_open");
    T_IO_EXPECT(MPI_File_open(w, path, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL, &fh),
                MPI_ERR_AMODE, "MPI_File_open");
    T_IO_EXPECT(MPI_File_open(w, path, MPI_MODE_RDWR | 0x10000, MPI_INFO_NULL, &fh),
                MPI_ERR_AMODE, "MPI_File_open");
    T_IO_EXPECT(MPI_File_open(w, path, MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_EXCL,
                              MPI_INFO_NULL, &fh),
                MPI_ERR_FILE_EXISTS, "MPI_File_open");
    T_IO_EXPECT(MPI_File_open(MPI_COMM_NULL, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                MPI_ERR_COMM, "MPI_File_open");
    T_IO_EXPECT(MPI_File_open(w, path, MPI_MODE_RDONLY, (MPI_Info)0x12345, &fh), MPI_ERR_INFO,
                "MPI_File_open");
    T_IO_EXPECT(MPI_File_delete(missing, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE,
                "MPI_File_delete");
    if (geteuid() != 0) { /* root may open anything */
        if (rank == 0)
            CHECK(chmod(path, 0444) == 0, "chmod");
        OK(MPI_Barrier(w));
        T_IO_EXPECT(MPI_File_open(w, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh), MPI_ERR_ACCESS,
                    "MPI_File_open");
        OK(MPI_Barrier(w));
        if (rank == 0)
            CHECK(chmod(path, 0644) == 0, "chmod");
    }
    OK(MPI_Barrier(w));
}

static void access_errors(const char *path)
{
    MPI_File fh;
    MPI_Status st;
    MPI_Datatype three;
    int buf[4] = {0};
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    T_IO_EXPECT(MPI_File_write_at(fh, 0, buf, 1, MPI_INT, &st), MPI_ERR_READ_ONLY,
                "MPI_File_write_at");
    T_IO_EXPECT(MPI_File_write(fh, buf, 1, MPI_INT, &st), MPI_ERR_READ_ONLY, "MPI_File_write");
    T_IO_EXPECT(MPI_File_set_size(fh, 0), MPI_ERR_READ_ONLY, "MPI_File_set_size");
    T_IO_EXPECT(MPI_File_read_at(fh, -1, buf, 1, MPI_INT, &st), MPI_ERR_ARG,
                "MPI_File_read_at");
    T_IO_EXPECT(MPI_File_read_at(fh, 0, buf, -1, MPI_INT, &st), MPI_ERR_COUNT,
                "MPI_File_read_at");
    T_IO_EXPECT(MPI_File_seek(fh, -1, MPI_SEEK_SET), MPI_ERR_ARG, "MPI_File_seek");
    T_IO_EXPECT(MPI_File_seek(fh, 0, 12345), MPI_ERR_ARG, "MPI_File_seek");
    T_IO_EXPECT(MPI_File_get_byte_offset(fh, -2, &(MPI_Offset){0}), MPI_ERR_ARG,
                "MPI_File_get_byte_offset");
    OK(MPI_Type_contiguous(3, MPI_BYTE, &three));
    OK(MPI_Type_commit(&three));
    T_IO_EXPECT(MPI_File_set_view(fh, 0, MPI_INT, three, "native", MPI_INFO_NULL), MPI_ERR_ARG,
                "MPI_File_set_view");
    int bl[2] = {1, 1}, disp[2] = {3, 0}; /* decreasing displacements */
    MPI_Datatype back;
    OK(MPI_Type_indexed(2, bl, disp, MPI_INT, &back));
    OK(MPI_Type_commit(&back));
    T_IO_EXPECT(MPI_File_set_view(fh, 0, MPI_INT, back, "native", MPI_INFO_NULL), MPI_ERR_IO,
                "MPI_File_set_view");
    T_IO_EXPECT(MPI_File_set_view(fh, 0, back, back, "native", MPI_INFO_NULL), MPI_ERR_IO,
                "MPI_File_set_view");
    OK(MPI_Type_free(&back));
    T_IO_EXPECT(MPI_File_set_view(fh, -8, MPI_INT, MPI_INT, "native", MPI_INFO_NULL),
                MPI_ERR_ARG, "MPI_File_set_view");
    T_IO_EXPECT(MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL),
                MPI_ERR_UNSUPPORTED_DATAREP, "MPI_File_set_view");
    T_IO_EXPECT(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "nonsense", MPI_INFO_NULL),
                MPI_ERR_UNSUPPORTED_DATAREP, "MPI_File_set_view");
    T_IO_EXPECT(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT, "native",
                                  MPI_INFO_NULL),
                MPI_ERR_ARG, "MPI_File_set_view");
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    T_IO_EXPECT(MPI_File_read(fh, buf, 1, three, &st), MPI_ERR_TYPE, "MPI_File_read");
    OK(MPI_Type_free(&three));
    OK(MPI_File_close(&fh));
    T_IO_EXPECT(MPI_File_read(fh, buf, 1, MPI_INT, &st), MPI_ERR_FILE, "MPI_File_read");
    T_IO_EXPECT(MPI_File_close(&fh), MPI_ERR_FILE, "MPI_File_close");

    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    T_IO_EXPECT(MPI_File_read_at(fh, 0, buf, 1, MPI_INT, &st), MPI_ERR_ACCESS,
                "MPI_File_read_at");
    T_IO_EXPECT(MPI_File_set_size(fh, -5), MPI_ERR_ARG, "MPI_File_set_size");
    OK(MPI_File_close(&fh));
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL,
                     &fh));
    T_IO_EXPECT(MPI_File_write_at(fh, 0, buf, 1, MPI_INT, &st), MPI_ERR_UNSUPPORTED_OPERATION,
                "MPI_File_write_at");
    T_IO_EXPECT(MPI_File_get_position(fh, &(MPI_Offset){0}), MPI_ERR_UNSUPPORTED_OPERATION,
                "MPI_File_get_position");
    OK(MPI_File_close(&fh));
}

static void handlers(const char *path, const char *missing)
{
    MPI_File fh;
    MPI_Errhandler eh, got;
    MPI_Status st;
    int x = 0;
    OK(MPI_File_get_errhandler(MPI_FILE_NULL, &got));
    CHECK(got == MPI_ERRORS_RETURN, "default file handler %#x", (unsigned)got);
    OK(MPI_Errhandler_free(&got));
    OK(MPI_File_create_errhandler(handler, &eh));
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_errhandler(fh, eh));
    int rc = MPI_File_write(fh, &x, 1, MPI_INT, &st);
    CHECK(rc != MPI_SUCCESS && calls == 1 && seen_file == fh && seen_class == MPI_ERR_READ_ONLY,
          "file handler: rc %d, %d calls, class %d", rc, calls, seen_class);
    OK(MPI_File_call_errhandler(fh, MPI_ERR_IO));
    CHECK(calls == 2 && seen_class == MPI_ERR_IO, "call_errhandler: %d calls", calls);
    OK(MPI_File_close(&fh));
    /* On MPI_FILE_NULL: failed opens, and the files opened afterwards. */
    OK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(rc != MPI_SUCCESS && calls == 3 && seen_file == MPI_FILE_NULL &&
              seen_class == MPI_ERR_NO_SUCH_FILE,
          "MPI_FILE_NULL handler: %d calls, class %d", calls, seen_class);
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    OK(MPI_File_get_errhandler(fh, &got));
    CHECK(got == eh, "a new file's handler is not MPI_FILE_NULL's");
    OK(MPI_Errhandler_free(&got));
    OK(MPI_File_close(&fh));
    OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    T_IO_EXPECT(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_COMM_WORLD), MPI_ERR_ARG,
                "MPI_File_set_errhandler");
    OK(MPI_Errhandler_free(&eh));
}

int main(int argc, char **argv)
{
    char path[128], missing[128];
    MPI_File fh;
    int size;
    t_io_init(&argc, &argv, &rank, &size);
    t_io_path(path, "errors");
    t_io_path(missing, "no-such-file");
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                     &fh));
    OK(MPI_File_close(&fh));
    open_errors(path, missing);
    access_errors(path);
    handlers(path, missing);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        OK(MPI_File_delete(path, MPI_INFO_NULL));
    return t_io_finish("t_io_errors");
}
