/* What the MPI-IO entry points share (api/file.c, api/file_rw.c): the file
 * handle argument and where its errors go. An error on a valid file goes
 * to the file's handler; with no file (a bad handle, MPI_File_open,
 * MPI_File_delete) to MPI_FILE_NULL's (MPI-3.1 13.7). */
#ifndef VMPI_API_FILE_ARGS_H
#define VMPI_API_FILE_ARGS_H

#include "api.h"
#include "../io/io.h"

/* struct vmpi_file *f for the handle fh, else MPI_ERR_FILE. */
#define FILE_ARG(f, fh, fn)                                                               \
    struct vmpi_file *f = vmpi_io_get(fh);                                                \
    VMPI_CHECK(f, vmpi_io_errcomm(NULL), MPI_ERR_FILE,                                    \
               "%s: fh is not an open file (%#lx)", fn, (unsigned long)(uintptr_t)(fh))

/* The same, where MPI_FILE_NULL is allowed too (f NULL): error handlers. */
#define FILE_OR_NULL_ARG(f, fh, fn)                                                       \
    struct vmpi_file *f = vmpi_io_get(fh);                                                \
    VMPI_CHECK(f || (fh) == MPI_FILE_NULL, vmpi_io_errcomm(NULL), MPI_ERR_FILE,           \
               "%s: the file is neither open nor MPI_FILE_NULL (%#lx)", fn,              \
               (unsigned long)(uintptr_t)(fh))

/* Calls not allowed on a file opened with MPI_MODE_SEQUENTIAL (13.2.1). */
#define FILE_NOT_SEQ(f, fn)                                                                \
    VMPI_CHECK(!((f)->amode & MPI_MODE_SEQUENTIAL), (f)->comm, MPI_ERR_UNSUPPORTED_OPERATION, \
               "%s: the file was opened with MPI_MODE_SEQUENTIAL, which allows only shared " \
               "file pointers", fn)

/* Where an access goes: an explicit offset, the individual file pointer,
 * the shared one, the shared one in rank order (collective). */
enum { FILE_AT, FILE_INDIV, FILE_SHARED, FILE_ORDERED };
/* Every blocking read and write (api/file_rw.c): checks, then the access
 * at its offset; *status gets the bytes moved. */
int file_rw(const char *fn, MPI_File fh, bool write, int how, MPI_Offset offset, void *buf,
            int count, MPI_Datatype datatype, MPI_Status *status);
/* *pos = where a seek (offset, whence) from cur goes, in etypes. */
int file_seek_to(struct vmpi_file *f, MPI_Offset offset, int whence, MPI_Offset cur,
                 MPI_Offset *pos, const char *fn);

#endif
