/*
 * vmpi -- MPI-IO (MPI-3.1 chapter 13), included by mpi.h as MPICH's mpi.h
 * includes its mpio.h.
 *
 * The numbers and types are MPICH's (ROMIO's), so a binary built against
 * MPICH's headers runs on vmpi. MPI_File is a pointer type there; vmpi's
 * values are opaque (never dereferenced by the application) and name an
 * entry of the library's file table. As in mpi.h, a function is declared
 * here only when vmpi implements it for every case the standard documents.
 */
#ifndef VMPI_MPIO_H_INCLUDED
#define VMPI_MPIO_H_INCLUDED

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Guards MPICH's headers test before defining these types themselves. */
#ifndef MPI_FILE_DEFINED
#define MPI_FILE_DEFINED
typedef struct ADIOI_FileD *MPI_File;
#endif
#define MPI_FILE_NULL ((MPI_File)0)

typedef void (MPI_File_errhandler_function)(MPI_File *, int *, ...);
typedef MPI_File_errhandler_function MPI_File_errhandler_fn;

/* Data representation callbacks (MPI_Register_datarep). */
typedef int (MPI_Datarep_conversion_function)(void *, MPI_Datatype, int, void *, MPI_Offset,
                                              void *);
typedef int (MPI_Datarep_extent_function)(MPI_Datatype datatype, MPI_Aint *, void *);
#define MPI_CONVERSION_FN_NULL ((MPI_Datarep_conversion_function *)0)

/* Access modes (bit flags of File_open's amode). */
#define MPI_MODE_CREATE              1
#define MPI_MODE_RDONLY              2
#define MPI_MODE_WRONLY              4
#define MPI_MODE_RDWR                8
#define MPI_MODE_DELETE_ON_CLOSE    16
#define MPI_MODE_UNIQUE_OPEN        32
#define MPI_MODE_EXCL               64
#define MPI_MODE_APPEND            128
#define MPI_MODE_SEQUENTIAL        256

#define MPI_DISPLACEMENT_CURRENT   -54278278

#define MPI_SEEK_SET            600
#define MPI_SEEK_CUR            602
#define MPI_SEEK_END            604

#define MPI_MAX_DATAREP_STRING  128

/* --- File manipulation (13.2) -------------------------------------------- */
VMPI_API(int, MPI_File_open, (MPI_Comm comm, const char *filename, int amode, MPI_Info info,
                              MPI_File *fh))
VMPI_API(int, MPI_File_close, (MPI_File *fh))
VMPI_API(int, MPI_File_delete, (const char *filename, MPI_Info info))
VMPI_API(int, MPI_File_set_size, (MPI_File fh, MPI_Offset size))
VMPI_API(int, MPI_File_preallocate, (MPI_File fh, MPI_Offset size))
VMPI_API(int, MPI_File_get_size, (MPI_File fh, MPI_Offset *size))
VMPI_API(int, MPI_File_get_group, (MPI_File fh, MPI_Group *group))
VMPI_API(int, MPI_File_get_amode, (MPI_File fh, int *amode))
VMPI_API(int, MPI_File_set_info, (MPI_File fh, MPI_Info info))
VMPI_API(int, MPI_File_get_info, (MPI_File fh, MPI_Info *info_used))

/* --- File views (13.3) ----------------------------------------------------- */
VMPI_API(int, MPI_File_set_view, (MPI_File fh, MPI_Offset disp, MPI_Datatype etype,
                                  MPI_Datatype filetype, const char *datarep, MPI_Info info))
VMPI_API(int, MPI_File_get_view, (MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype,
                                  MPI_Datatype *filetype, char *datarep))

/* --- Data access with explicit offsets (13.4.2) -------------------------- */
VMPI_API(int, MPI_File_read_at, (MPI_File fh, MPI_Offset offset, void *buf, int count,
                                 MPI_Datatype datatype, MPI_Status *status))
VMPI_API(int, MPI_File_read_at_all, (MPI_File fh, MPI_Offset offset, void *buf, int count,
                                     MPI_Datatype datatype, MPI_Status *status))
VMPI_API(int, MPI_File_write_at, (MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                  MPI_Datatype datatype, MPI_Status *status))
VMPI_API(int, MPI_File_write_at_all, (MPI_File fh, MPI_Offset offset, const void *buf,
                                      int count, MPI_Datatype datatype, MPI_Status *status))

/* --- Data access with individual file pointers (13.4.3) ------------------ */
VMPI_API(int, MPI_File_read, (MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                              MPI_Status *status))
VMPI_API(int, MPI_File_read_all, (MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                                  MPI_Status *status))
VMPI_API(int, MPI_File_write, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                               MPI_Status *status))
VMPI_API(int, MPI_File_write_all, (MPI_File fh, const void *buf, int count,
                                   MPI_Datatype datatype, MPI_Status *status))
VMPI_API(int, MPI_File_seek, (MPI_File fh, MPI_Offset offset, int whence))
VMPI_API(int, MPI_File_get_position, (MPI_File fh, MPI_Offset *offset))
VMPI_API(int, MPI_File_get_byte_offset, (MPI_File fh, MPI_Offset offset, MPI_Offset *disp))

/* --- Data access with shared file pointers (13.4.4) --------------------- */
VMPI_API(int, MPI_File_read_shared, (MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                                     MPI_Status *status))
VMPI_API(int, MPI_File_write_shared, (MPI_File fh, const void *buf, int count,
                                      MPI_Datatype datatype, MPI_Status *status))
VMPI_API(int, MPI_File_read_ordered, (MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                                      MPI_Status *status))
VMPI_API(int, MPI_File_write_ordered, (MPI_File fh, const void *buf, int count,
                                       MPI_Datatype datatype, MPI_Status *status))
VMPI_API(int, MPI_File_seek_shared, (MPI_File fh, MPI_Offset offset, int whence))
VMPI_API(int, MPI_File_get_position_shared, (MPI_File fh, MPI_Offset *offset))

/* --- Nonblocking data access (13.4.2-13.4.4): requests are MPI requests -- */
#define MPIO_Request MPI_Request
#define MPIO_USES_MPI_REQUEST
#define MPIO_Wait MPI_Wait
#define MPIO_Test MPI_Test
#define PMPIO_Wait PMPI_Wait
#define PMPIO_Test PMPI_Test
VMPI_API(int, MPI_File_iread_at, (MPI_File fh, MPI_Offset offset, void *buf, int count,
                                  MPI_Datatype datatype, MPI_Request *request))
VMPI_API(int, MPI_File_iwrite_at, (MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                   MPI_Datatype datatype, MPI_Request *request))
VMPI_API(int, MPI_File_iread_at_all, (MPI_File fh, MPI_Offset offset, void *buf, int count,
                                      MPI_Datatype datatype, MPI_Request *request))
VMPI_API(int, MPI_File_iwrite_at_all, (MPI_File fh, MPI_Offset offset, const void *buf,
                                       int count, MPI_Datatype datatype, MPI_Request *request))
VMPI_API(int, MPI_File_iread, (MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                               MPI_Request *request))
VMPI_API(int, MPI_File_iwrite, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                                MPI_Request *request))
VMPI_API(int, MPI_File_iread_all, (MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                                   MPI_Request *request))
VMPI_API(int, MPI_File_iwrite_all, (MPI_File fh, const void *buf, int count,
                                    MPI_Datatype datatype, MPI_Request *request))
VMPI_API(int, MPI_File_iread_shared, (MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                                      MPI_Request *request))
VMPI_API(int, MPI_File_iwrite_shared, (MPI_File fh, const void *buf, int count,
                                       MPI_Datatype datatype, MPI_Request *request))

/* --- Split collective data access (13.4.5) ------------------------------- */
VMPI_API(int, MPI_File_read_at_all_begin, (MPI_File fh, MPI_Offset offset, void *buf,
                                           int count, MPI_Datatype datatype))
VMPI_API(int, MPI_File_read_at_all_end, (MPI_File fh, void *buf, MPI_Status *status))
VMPI_API(int, MPI_File_write_at_all_begin, (MPI_File fh, MPI_Offset offset, const void *buf,
                                            int count, MPI_Datatype datatype))
VMPI_API(int, MPI_File_write_at_all_end, (MPI_File fh, const void *buf, MPI_Status *status))
VMPI_API(int, MPI_File_read_all_begin, (MPI_File fh, void *buf, int count,
                                        MPI_Datatype datatype))
VMPI_API(int, MPI_File_read_all_end, (MPI_File fh, void *buf, MPI_Status *status))
VMPI_API(int, MPI_File_write_all_begin, (MPI_File fh, const void *buf, int count,
                                         MPI_Datatype datatype))
VMPI_API(int, MPI_File_write_all_end, (MPI_File fh, const void *buf, MPI_Status *status))
VMPI_API(int, MPI_File_read_ordered_begin, (MPI_File fh, void *buf, int count,
                                            MPI_Datatype datatype))
VMPI_API(int, MPI_File_read_ordered_end, (MPI_File fh, void *buf, MPI_Status *status))
VMPI_API(int, MPI_File_write_ordered_begin, (MPI_File fh, const void *buf, int count,
                                             MPI_Datatype datatype))
VMPI_API(int, MPI_File_write_ordered_end, (MPI_File fh, const void *buf, MPI_Status *status))

/* --- File interoperability and consistency (13.5, 13.6) ------------------ */
VMPI_API(int, MPI_File_get_type_extent, (MPI_File fh, MPI_Datatype datatype,
                                         MPI_Aint *extent))
VMPI_API(int, MPI_Register_datarep, (const char *datarep,
                                     MPI_Datarep_conversion_function *read_conversion_fn,
                                     MPI_Datarep_conversion_function *write_conversion_fn,
                                     MPI_Datarep_extent_function *dtype_file_extent_fn,
                                     void *extra_state))
VMPI_API(int, MPI_File_set_atomicity, (MPI_File fh, int flag))
VMPI_API(int, MPI_File_get_atomicity, (MPI_File fh, int *flag))
VMPI_API(int, MPI_File_sync, (MPI_File fh))

/* --- Error handlers on files (8.3.3; default MPI_ERRORS_RETURN) ---------- */
VMPI_API(int, MPI_File_create_errhandler, (MPI_File_errhandler_function *file_errhandler_fn,
                                           MPI_Errhandler *errhandler))
VMPI_API(int, MPI_File_set_errhandler, (MPI_File file, MPI_Errhandler errhandler))
VMPI_API(int, MPI_File_get_errhandler, (MPI_File file, MPI_Errhandler *errhandler))
VMPI_API(int, MPI_File_call_errhandler, (MPI_File fh, int errorcode))

/* --- Handle conversion (17.2.4) -------------------------------------------- */
VMPI_API(MPI_File, MPI_File_f2c, (MPI_Fint file))
VMPI_API(MPI_Fint, MPI_File_c2f, (MPI_File file))

#ifdef __cplusplus
}
#endif

#endif /* VMPI_MPIO_H_INCLUDED */
