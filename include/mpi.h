/*
 * vmpi -- public C interface.
 *
 * A subset of MPI-3.1.  Every name below is spelled as in the MPI standard and
 * every number (handle encodings, error classes, keyvals, the MPI_Status
 * layout, the width of the integer typedefs) is the one used by MPICH 4.x on
 * x86_64 Linux, so that an executable compiled against MPICH's mpi.h can be
 * run against libvmpi (installed as libmpich.so.12) without recompiling.
 *
 * Rules for editing this file:
 *   - Numbers are ABI.  Never change one without re-running
 *     tests/abi/check_abi.sh, which compares them against MPICH's header.
 *   - Only functions that vmpi really implements are declared here.  A missing
 *     prototype is the honest answer for an unimplemented call; do not add
 *     stubs.
 *   - Every MPI_Xxx function has a PMPI_Xxx twin (profiling interface); both
 *     are declared by VMPI_API() below.
 */
#ifndef VMPI_MPI_H_INCLUDED
#define VMPI_MPI_H_INCLUDED

/* Guard used by MPICH's header; defining it keeps a stray second mpi.h on the
 * include path from being processed on top of this one. */
#ifndef MPI_INCLUDED
#define MPI_INCLUDED
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Version                                                                  */
/* ------------------------------------------------------------------------ */

#define MPI_VERSION     3
#define MPI_SUBVERSION  1

#define VMPI_VERSION_STRING "0.1.0"

/* ------------------------------------------------------------------------ */
/* Scalar and handle types                                                  */
/* ------------------------------------------------------------------------ */

/* All handles are plain ints whose bit pattern encodes the object kind and,
 * for builtins, the object itself (MPICH encoding).  Layout of a handle:
 *   bits 30-31  kind      (0 invalid, 1 builtin, 2 direct, 3 indirect)
 *   bits 26-29  object    (comm=1, group=2, datatype=3, errhandler=5,
 *                          op=6, info=7, window=8, keyval=9, request=11)
 *   bits  0-25  index; for builtin basic datatypes bits 8-15 hold the size
 *               in bytes of one element.
 * (The padded value/index pair datatypes are the exception: kind 2.)      */
typedef int MPI_Comm;
typedef int MPI_Group;
typedef int MPI_Datatype;
typedef int MPI_Op;
typedef int MPI_Errhandler;
typedef int MPI_Request;
typedef int MPI_Info;
typedef int MPI_Win;

/* Integer widths.  MPICH on LP64 uses 'long' for all three of these; keeping
 * the very same C type (not merely the same size) means printf formats and
 * pointer assignments in MPICH-targeted code keep working unchanged. */
typedef long MPI_Aint;
typedef long MPI_Offset;
typedef long MPI_Count;
typedef int  MPI_Fint;

/* Receive status.  Only MPI_SOURCE, MPI_TAG and MPI_ERROR are public; the
 * first two words belong to the library (read them through MPI_Get_count,
 * MPI_Get_elements(_x) and MPI_Test_cancelled).  Encoding, as in MPICH:
 *   received byte count = (unsigned)count_lo
 *                       + ((unsigned)count_hi_and_cancelled >> 1) << 32
 *   cancelled flag      = count_hi_and_cancelled & 1                      */
typedef struct MPI_Status {
    int count_lo;
    int count_hi_and_cancelled;
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
} MPI_Status;

/* ------------------------------------------------------------------------ */
/* Null handles                                                             */
/* ------------------------------------------------------------------------ */

#define MPI_COMM_NULL        ((MPI_Comm)0x04000000)
#define MPI_GROUP_NULL       ((MPI_Group)0x08000000)
#define MPI_DATATYPE_NULL    ((MPI_Datatype)0x0c000000)
#define MPI_ERRHANDLER_NULL  ((MPI_Errhandler)0x14000000)
#define MPI_OP_NULL          ((MPI_Op)0x18000000)
#define MPI_INFO_NULL        ((MPI_Info)0x1c000000)
#define MPI_REQUEST_NULL     ((MPI_Request)0x2c000000)
#define MPI_WIN_NULL         ((MPI_Win)0x20000000)

/* The predefined info object describing how the program was started
 * (MPI-3.1 8.1.2): builtin kind, object type info, index 1. */
#define MPI_INFO_ENV         ((MPI_Info)0x5c000001)

/* ------------------------------------------------------------------------ */
/* Predefined communicators, groups, error handlers                         */
/* ------------------------------------------------------------------------ */

#define MPI_COMM_WORLD       ((MPI_Comm)0x44000000)
#define MPI_COMM_SELF        ((MPI_Comm)0x44000001)

#define MPI_GROUP_EMPTY      ((MPI_Group)0x48000000)

#define MPI_ERRORS_ARE_FATAL ((MPI_Errhandler)0x54000000)
#define MPI_ERRORS_RETURN    ((MPI_Errhandler)0x54000001)
/* MPI-4.0's, in MPICH's header: vmpi aborts the whole job with it. */
#define MPI_ERRORS_ABORT     ((MPI_Errhandler)0x54000003)

/* ------------------------------------------------------------------------ */
/* Predefined datatypes                                                     */
/* ------------------------------------------------------------------------ */

/* Basic C types.  0x4c00SSII: SS = element size in bytes, II = type index. */
#define MPI_CHAR               ((MPI_Datatype)0x4c000101)
#define MPI_UNSIGNED_CHAR      ((MPI_Datatype)0x4c000102)
#define MPI_SHORT              ((MPI_Datatype)0x4c000203)
#define MPI_UNSIGNED_SHORT     ((MPI_Datatype)0x4c000204)
#define MPI_INT                ((MPI_Datatype)0x4c000405)
#define MPI_UNSIGNED           ((MPI_Datatype)0x4c000406)
#define MPI_LONG               ((MPI_Datatype)0x4c000807)
#define MPI_UNSIGNED_LONG      ((MPI_Datatype)0x4c000808)
#define MPI_LONG_LONG_INT      ((MPI_Datatype)0x4c000809)
#define MPI_LONG_LONG          MPI_LONG_LONG_INT
#define MPI_FLOAT              ((MPI_Datatype)0x4c00040a)
#define MPI_DOUBLE             ((MPI_Datatype)0x4c00080b)
#define MPI_LONG_DOUBLE        ((MPI_Datatype)0x4c00100c)
#define MPI_BYTE               ((MPI_Datatype)0x4c00010d)
#define MPI_WCHAR              ((MPI_Datatype)0x4c00040e)
#define MPI_PACKED             ((MPI_Datatype)0x4c00010f)
#define MPI_SIGNED_CHAR        ((MPI_Datatype)0x4c000118)
#define MPI_UNSIGNED_LONG_LONG ((MPI_Datatype)0x4c000819)

/* Deprecated bound markers (still part of MPI-3.1). */
#define MPI_LB                 ((MPI_Datatype)0x4c000010)
#define MPI_UB                 ((MPI_Datatype)0x4c000011)

/* Value/index pairs for MPI_MINLOC and MPI_MAXLOC.  MPI_2INT has no padding
 * so it is encoded as a basic type of size 8; the others are padded structs
 * { T value; int index; } and use the 0x8c "pair" encoding. */
#define MPI_FLOAT_INT          ((MPI_Datatype)0x8c000000)
#define MPI_DOUBLE_INT         ((MPI_Datatype)0x8c000001)
#define MPI_LONG_INT           ((MPI_Datatype)0x8c000002)
#define MPI_SHORT_INT          ((MPI_Datatype)0x8c000003)
#define MPI_LONG_DOUBLE_INT    ((MPI_Datatype)0x8c000004)
#define MPI_2INT               ((MPI_Datatype)0x4c000816)

/* Fixed-width integers (C99 <stdint.h>). */
#define MPI_INT8_T             ((MPI_Datatype)0x4c000137)
#define MPI_INT16_T            ((MPI_Datatype)0x4c000238)
#define MPI_INT32_T            ((MPI_Datatype)0x4c000439)
#define MPI_INT64_T            ((MPI_Datatype)0x4c00083a)
#define MPI_UINT8_T            ((MPI_Datatype)0x4c00013b)
#define MPI_UINT16_T           ((MPI_Datatype)0x4c00023c)
#define MPI_UINT32_T           ((MPI_Datatype)0x4c00043d)
#define MPI_UINT64_T           ((MPI_Datatype)0x4c00083e)

/* C99 _Bool and _Complex. */
#define MPI_C_BOOL                ((MPI_Datatype)0x4c00013f)
#define MPI_C_FLOAT_COMPLEX       ((MPI_Datatype)0x4c000840)
#define MPI_C_COMPLEX             MPI_C_FLOAT_COMPLEX
#define MPI_C_DOUBLE_COMPLEX      ((MPI_Datatype)0x4c001041)
#define MPI_C_LONG_DOUBLE_COMPLEX ((MPI_Datatype)0x4c002042)

/* MPI's own integer typedefs. */
#define MPI_AINT               ((MPI_Datatype)0x4c000843)
#define MPI_OFFSET             ((MPI_Datatype)0x4c000844)
#define MPI_COUNT              ((MPI_Datatype)0x4c000845)

/* Fortran types usable from C, with gfortran's layouts: INTEGER, REAL and
 * LOGICAL are 4 bytes (.TRUE. is 1), DOUBLE PRECISION 8, REAL16 the IEEE
 * quad of REAL(16). MPICH has no INTEGER16: it is MPI_DATATYPE_NULL. */
#define MPI_CHARACTER          ((MPI_Datatype)0x4c00011a)
#define MPI_INTEGER            ((MPI_Datatype)0x4c00041b)
#define MPI_REAL               ((MPI_Datatype)0x4c00041c)
#define MPI_LOGICAL            ((MPI_Datatype)0x4c00041d)
#define MPI_COMPLEX            ((MPI_Datatype)0x4c00081e)
#define MPI_DOUBLE_PRECISION   ((MPI_Datatype)0x4c00081f)
#define MPI_2INTEGER           ((MPI_Datatype)0x4c000820)
#define MPI_2REAL              ((MPI_Datatype)0x4c000821)
#define MPI_DOUBLE_COMPLEX     ((MPI_Datatype)0x4c001022)
#define MPI_2DOUBLE_PRECISION  ((MPI_Datatype)0x4c001023)
#define MPI_REAL4              ((MPI_Datatype)0x4c000427)
#define MPI_COMPLEX8           ((MPI_Datatype)0x4c000828)
#define MPI_REAL8              ((MPI_Datatype)0x4c000829)
#define MPI_COMPLEX16          ((MPI_Datatype)0x4c00102a)
#define MPI_REAL16             ((MPI_Datatype)0x4c00102b)
#define MPI_COMPLEX32          ((MPI_Datatype)0x4c00202c)
#define MPI_INTEGER1           ((MPI_Datatype)0x4c00012d)
#define MPI_INTEGER2           ((MPI_Datatype)0x4c00022f)
#define MPI_INTEGER4           ((MPI_Datatype)0x4c000430)
#define MPI_INTEGER8           ((MPI_Datatype)0x4c000831)
#define MPI_INTEGER16          ((MPI_Datatype)MPI_DATATYPE_NULL)

/* C++ types usable from C (bool and std::complex<T> laid out as C's). */
#define MPI_CXX_BOOL                ((MPI_Datatype)0x4c000133)
#define MPI_CXX_FLOAT_COMPLEX       ((MPI_Datatype)0x4c000834)
#define MPI_CXX_DOUBLE_COMPLEX      ((MPI_Datatype)0x4c001035)
#define MPI_CXX_LONG_DOUBLE_COMPLEX ((MPI_Datatype)0x4c002036)

/* Type classes of MPI_Type_match_size. */
#define MPI_TYPECLASS_REAL     1
#define MPI_TYPECLASS_INTEGER  2
#define MPI_TYPECLASS_COMPLEX  3

/* ------------------------------------------------------------------------ */
/* Predefined reduction operations                                          */
/* ------------------------------------------------------------------------ */

#define MPI_MAX      ((MPI_Op)0x58000001)
#define MPI_MIN      ((MPI_Op)0x58000002)
#define MPI_SUM      ((MPI_Op)0x58000003)
#define MPI_PROD     ((MPI_Op)0x58000004)
#define MPI_LAND     ((MPI_Op)0x58000005)
#define MPI_BAND     ((MPI_Op)0x58000006)
#define MPI_LOR      ((MPI_Op)0x58000007)
#define MPI_BOR      ((MPI_Op)0x58000008)
#define MPI_LXOR     ((MPI_Op)0x58000009)
#define MPI_BXOR     ((MPI_Op)0x5800000a)
#define MPI_MINLOC   ((MPI_Op)0x5800000b)
#define MPI_MAXLOC   ((MPI_Op)0x5800000c)
#define MPI_REPLACE  ((MPI_Op)0x5800000d)
#define MPI_NO_OP    ((MPI_Op)0x5800000e)

/* ------------------------------------------------------------------------ */
/* Special ranks, tags, buffers and status pointers                         */
/* ------------------------------------------------------------------------ */

#define MPI_PROC_NULL        (-1)
#define MPI_ANY_SOURCE       (-2)
#define MPI_ROOT             (-3)
#define MPI_ANY_TAG          (-1)
#define MPI_UNDEFINED        (-32766)

#define MPI_BOTTOM           ((void *)0)
#define MPI_IN_PLACE         ((void *)-1)

#define MPI_STATUS_IGNORE    ((MPI_Status *)1)
#define MPI_STATUSES_IGNORE  ((MPI_Status *)1)
#define MPI_ERRCODES_IGNORE  ((int *)0)
#define MPI_ARGV_NULL        ((char **)0)
#define MPI_ARGVS_NULL       ((char ***)0)
#define MPI_MAX_PORT_NAME    256

/* ------------------------------------------------------------------------ */
/* Attribute keys                                                           */
/* ------------------------------------------------------------------------ */

#define MPI_KEYVAL_INVALID   0x24000000

/* Predefined communicator attributes (query with MPI_Comm_get_attr on
 * MPI_COMM_WORLD).  The C keyvals are odd; value+1 is the Fortran one. */
#define MPI_TAG_UB           0x64400001
#define MPI_HOST             0x64400003
#define MPI_IO               0x64400005
#define MPI_WTIME_IS_GLOBAL  0x64400007
#define MPI_UNIVERSE_SIZE    0x64400009
#define MPI_LASTUSEDCODE     0x6440000b
#define MPI_APPNUM           0x6440000d

/* Caching callbacks (MPI-3.1 6.7) and user error handlers (8.3). */
typedef int (MPI_Comm_copy_attr_function)(MPI_Comm, int, void *, void *, void *, int *);
typedef int (MPI_Comm_delete_attr_function)(MPI_Comm, int, void *, void *);
typedef int (MPI_Type_copy_attr_function)(MPI_Datatype, int, void *, void *, void *, int *);
typedef int (MPI_Type_delete_attr_function)(MPI_Datatype, int, void *, void *);
typedef int (MPI_Win_copy_attr_function)(MPI_Win, int, void *, void *, void *, int *);
typedef int (MPI_Win_delete_attr_function)(MPI_Win, int, void *, void *);
typedef int (MPI_Copy_function)(MPI_Comm, int, void *, void *, void *, int *);
typedef int (MPI_Delete_function)(MPI_Comm, int, void *, void *);
typedef void (MPI_Comm_errhandler_function)(MPI_Comm *, int *, ...);
typedef void (MPI_Win_errhandler_function)(MPI_Win *, int *, ...);
typedef void (MPI_Handler_function)(MPI_Comm *, int *, ...);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;
typedef MPI_Win_errhandler_function MPI_Win_errhandler_fn;

/* The predefined callbacks, as MPICH spells them: the null ones are null
 * pointers, every DUP_FN is the exported MPIR_Dup_fn (MPICH-built
 * binaries reference that symbol). */
#define MPI_NULL_COPY_FN        ((MPI_Copy_function *)0)
#define MPI_NULL_DELETE_FN      ((MPI_Delete_function *)0)
#define MPI_DUP_FN              MPIR_Dup_fn
#define MPI_COMM_NULL_COPY_FN   ((MPI_Comm_copy_attr_function *)0)
#define MPI_COMM_NULL_DELETE_FN ((MPI_Comm_delete_attr_function *)0)
#define MPI_COMM_DUP_FN         ((MPI_Comm_copy_attr_function *)MPI_DUP_FN)
#define MPI_WIN_NULL_COPY_FN    ((MPI_Win_copy_attr_function *)0)
#define MPI_WIN_NULL_DELETE_FN  ((MPI_Win_delete_attr_function *)0)
#define MPI_WIN_DUP_FN          ((MPI_Win_copy_attr_function *)MPI_DUP_FN)
#define MPI_TYPE_NULL_COPY_FN   ((MPI_Type_copy_attr_function *)0)
#define MPI_TYPE_NULL_DELETE_FN ((MPI_Type_delete_attr_function *)0)
#define MPI_TYPE_DUP_FN         ((MPI_Type_copy_attr_function *)MPI_DUP_FN)

/* ------------------------------------------------------------------------ */
/* String buffer sizes (including the terminating NUL)                      */
/* ------------------------------------------------------------------------ */

#define MPI_MAX_PROCESSOR_NAME          128
#define MPI_MAX_ERROR_STRING            512
#define MPI_MAX_OBJECT_NAME             128
#define MPI_MAX_LIBRARY_VERSION_STRING  8192

/* Info keys: at most MPI_MAX_INFO_KEY - 1 characters, so that a buffer of
 * MPI_MAX_INFO_KEY bytes holds any key with its NUL (as with MPICH); values:
 * at most MPI_MAX_INFO_VAL characters (MPI_Info_get takes the buffer's
 * length). */
#define MPI_MAX_INFO_KEY                255
#define MPI_MAX_INFO_VAL               1024

/* ------------------------------------------------------------------------ */
/* Enumerated results and arguments                                         */
/* ------------------------------------------------------------------------ */

/* Thread support levels (ordered: a higher value gives more). */
#define MPI_THREAD_SINGLE      0
#define MPI_THREAD_FUNNELED    1
#define MPI_THREAD_SERIALIZED  2
#define MPI_THREAD_MULTIPLE    3

/* Results of MPI_Comm_compare / MPI_Group_compare. */
#define MPI_IDENT      0
#define MPI_CONGRUENT  1
#define MPI_SIMILAR    2
#define MPI_UNEQUAL    3

/* Results of MPI_Topo_test (MPI_UNDEFINED when there is no topology). */
#define MPI_GRAPH       1
#define MPI_CART        2
#define MPI_DIST_GRAPH  3

/* split_type argument of MPI_Comm_split_type. */
#define MPI_COMM_TYPE_SHARED  1

/* One-sided communication: lock types, assertions, window attributes
 * (MPI_Win_get_attr keyvals), their flavor and model values. */
#define MPI_LOCK_EXCLUSIVE    234
#define MPI_LOCK_SHARED       235
#define MPI_MODE_NOCHECK      1024
#define MPI_MODE_NOSTORE      2048
#define MPI_MODE_NOPUT        4096
#define MPI_MODE_NOPRECEDE    8192
#define MPI_MODE_NOSUCCEED    16384
#define MPI_WIN_BASE          0x66000001
#define MPI_WIN_SIZE          0x66000003
#define MPI_WIN_DISP_UNIT     0x66000005
#define MPI_WIN_CREATE_FLAVOR 0x66000007
#define MPI_WIN_MODEL         0x66000009
#define MPI_WIN_FLAVOR_CREATE   1
#define MPI_WIN_FLAVOR_ALLOCATE 2
#define MPI_WIN_FLAVOR_DYNAMIC  3
#define MPI_WIN_FLAVOR_SHARED   4
#define MPI_WIN_SEPARATE      1
#define MPI_WIN_UNIFIED       2

/* Datatype combiners (MPI_Type_get_envelope), array orders and
 * distributions (MPI_Type_create_subarray/_darray). */
enum MPIR_Combiner_enum {
    MPI_COMBINER_NAMED            = 1,
    MPI_COMBINER_DUP              = 2,
    MPI_COMBINER_CONTIGUOUS       = 3,
    MPI_COMBINER_VECTOR           = 4,
    MPI_COMBINER_HVECTOR_INTEGER  = 5,
    MPI_COMBINER_HVECTOR          = 6,
    MPI_COMBINER_INDEXED          = 7,
    MPI_COMBINER_HINDEXED_INTEGER = 8,
    MPI_COMBINER_HINDEXED         = 9,
    MPI_COMBINER_INDEXED_BLOCK    = 10,
    MPI_COMBINER_STRUCT_INTEGER   = 11,
    MPI_COMBINER_STRUCT           = 12,
    MPI_COMBINER_SUBARRAY         = 13,
    MPI_COMBINER_DARRAY           = 14,
    MPI_COMBINER_F90_REAL         = 15,
    MPI_COMBINER_F90_COMPLEX      = 16,
    MPI_COMBINER_F90_INTEGER      = 17,
    MPI_COMBINER_RESIZED          = 18,
    MPI_COMBINER_HINDEXED_BLOCK   = 19
};
#define MPI_ORDER_C               56
#define MPI_ORDER_FORTRAN         57
#define MPI_DISTRIBUTE_BLOCK      121
#define MPI_DISTRIBUTE_CYCLIC     122
#define MPI_DISTRIBUTE_NONE       123
#define MPI_DISTRIBUTE_DFLT_DARG  (-49767)

/* ------------------------------------------------------------------------ */
/* Error classes                                                            */
/* ------------------------------------------------------------------------ */

#define MPI_SUCCESS                    0

/* argument errors */
#define MPI_ERR_BUFFER                 1
#define MPI_ERR_COUNT                  2
#define MPI_ERR_TYPE                   3
#define MPI_ERR_TAG                    4
#define MPI_ERR_COMM                   5
#define MPI_ERR_RANK                   6
#define MPI_ERR_ROOT                   7
#define MPI_ERR_GROUP                  8
#define MPI_ERR_OP                     9
#define MPI_ERR_TOPOLOGY              10
#define MPI_ERR_DIMS                  11
#define MPI_ERR_ARG                   12

/* generic and communication errors */
#define MPI_ERR_UNKNOWN               13
#define MPI_ERR_TRUNCATE              14
#define MPI_ERR_OTHER                 15
#define MPI_ERR_INTERN                16
#define MPI_ERR_IN_STATUS             17
#define MPI_ERR_PENDING               18
#define MPI_ERR_REQUEST               19

/* I/O */
#define MPI_ERR_ACCESS                20
#define MPI_ERR_AMODE                 21
#define MPI_ERR_BAD_FILE              22
#define MPI_ERR_CONVERSION            23
#define MPI_ERR_DUP_DATAREP           24
#define MPI_ERR_FILE_EXISTS           25
#define MPI_ERR_FILE_IN_USE           26
#define MPI_ERR_FILE                  27

/* info objects */
#define MPI_ERR_INFO                  28
#define MPI_ERR_INFO_KEY              29
#define MPI_ERR_INFO_VALUE            30
#define MPI_ERR_INFO_NOKEY            31

/* I/O, continued */
#define MPI_ERR_IO                    32

/* naming, memory, dynamic processes */
#define MPI_ERR_NAME                  33
#define MPI_ERR_NO_MEM                34
#define MPI_ERR_NOT_SAME              35
#define MPI_ERR_NO_SPACE              36
#define MPI_ERR_NO_SUCH_FILE          37
#define MPI_ERR_PORT                  38
#define MPI_ERR_QUOTA                 39
#define MPI_ERR_READ_ONLY             40
#define MPI_ERR_SERVICE               41
#define MPI_ERR_SPAWN                 42
#define MPI_ERR_UNSUPPORTED_DATAREP   43
#define MPI_ERR_UNSUPPORTED_OPERATION 44

/* one-sided communication and attributes (54 is unassigned) */
#define MPI_ERR_WIN                   45
#define MPI_ERR_BASE                  46
#define MPI_ERR_LOCKTYPE              47
#define MPI_ERR_KEYVAL                48
#define MPI_ERR_RMA_CONFLICT          49
#define MPI_ERR_RMA_SYNC              50
#define MPI_ERR_SIZE                  51
#define MPI_ERR_DISP                  52
#define MPI_ERR_ASSERT                53
#define MPI_ERR_RMA_RANGE             55
#define MPI_ERR_RMA_ATTACH            56
#define MPI_ERR_RMA_SHARED            57
#define MPI_ERR_RMA_FLAVOR            58

/* tool information interface (MPI_T) return codes */
#define MPI_T_ERR_MEMORY              59
#define MPI_T_ERR_NOT_INITIALIZED     60
#define MPI_T_ERR_CANNOT_INIT         61
#define MPI_T_ERR_INVALID_INDEX       62
#define MPI_T_ERR_INVALID_ITEM        63
#define MPI_T_ERR_INVALID_HANDLE      64
#define MPI_T_ERR_OUT_OF_HANDLES      65
#define MPI_T_ERR_OUT_OF_SESSIONS     66
#define MPI_T_ERR_INVALID_SESSION     67
#define MPI_T_ERR_CVAR_SET_NOT_NOW    68
#define MPI_T_ERR_CVAR_SET_NEVER      69
#define MPI_T_ERR_PVAR_NO_STARTSTOP   70
#define MPI_T_ERR_PVAR_NO_WRITE       71
#define MPI_T_ERR_PVAR_NO_ATOMIC      72
#define MPI_T_ERR_INVALID_NAME        73
#define MPI_T_ERR_INVALID             74

/* Classes 75..78 are MPI-4.0 additions in MPICH and are not exposed here.
 * Error codes returned by vmpi are either a class above or a larger value
 * that MPI_Error_class maps onto one; MPI_ERR_LASTCODE bounds them all. */
#define MPI_ERR_LASTCODE              0x3fffffff

/* ------------------------------------------------------------------------ */
/* Functions                                                                */
/* ------------------------------------------------------------------------ */

/* Symbols are always exported, even when the library itself is built with
 * -fvisibility=hidden. */
#if defined(__GNUC__) && !defined(VMPI_API_ATTR)
#define VMPI_API_ATTR __attribute__((visibility("default")))
#elif !defined(VMPI_API_ATTR)
#define VMPI_API_ATTR
#endif

/* VMPI_API(ret, MPI_Name, (params)) declares MPI_Name and PMPI_Name with the
 * same signature.  Keeping the full MPI_ name as the argument keeps the
 * declarations greppable. */
#define VMPI_API(ret, name, params) \
    VMPI_API_ATTR ret name params;  \
    VMPI_API_ATTR ret P##name params;

/* --- Environment, errors, memory --------------------------------------- */

VMPI_API(int,    MPI_Init, (int *argc, char ***argv))
VMPI_API(int,    MPI_Init_thread, (int *argc, char ***argv, int required,
                                   int *provided))
VMPI_API(int,    MPI_Initialized, (int *flag))
VMPI_API(int,    MPI_Finalize, (void))
VMPI_API(int,    MPI_Finalized, (int *flag))
VMPI_API(int,    MPI_Abort, (MPI_Comm comm, int errorcode))
VMPI_API(double, MPI_Wtime, (void))
VMPI_API(double, MPI_Wtick, (void))
VMPI_API(int,    MPI_Get_processor_name, (char *name, int *resultlen))
VMPI_API(int,    MPI_Get_version, (int *version, int *subversion))
VMPI_API(int,    MPI_Get_library_version, (char *version, int *resultlen))
VMPI_API(int,    MPI_Query_thread, (int *provided))
VMPI_API(int,    MPI_Is_thread_main, (int *flag))

VMPI_API(int,    MPI_Error_string, (int errorcode, char *string,
                                    int *resultlen))
VMPI_API(int,    MPI_Error_class, (int errorcode, int *errorclass))
VMPI_API(int,    MPI_Comm_set_errhandler, (MPI_Comm comm,
                                           MPI_Errhandler errhandler))
VMPI_API(int,    MPI_Comm_get_errhandler, (MPI_Comm comm,
                                           MPI_Errhandler *errhandler))
VMPI_API(int,    MPI_Errhandler_free, (MPI_Errhandler *errhandler))

/* Profiling control (MPI-3.1 14.2.4); vmpi has no profiling levels. */
VMPI_API(int,    MPI_Pcontrol, (const int level, ...))

/* baseptr is really a void ** passed as void * (MPI-3.1 8.2). */
VMPI_API(int,    MPI_Alloc_mem, (MPI_Aint size, MPI_Info info, void *baseptr))
VMPI_API(int,    MPI_Free_mem, (void *base))

/* --- Info objects (MPI-3.1 9) -------------------------------------------- */

VMPI_API(int, MPI_Info_create, (MPI_Info *info))
VMPI_API(int, MPI_Info_dup, (MPI_Info info, MPI_Info *newinfo))
VMPI_API(int, MPI_Info_free, (MPI_Info *info))
VMPI_API(int, MPI_Info_set, (MPI_Info info, const char *key, const char *value))
VMPI_API(int, MPI_Info_get, (MPI_Info info, const char *key, int valuelen,
                             char *value, int *flag))
VMPI_API(int, MPI_Info_get_nkeys, (MPI_Info info, int *nkeys))
VMPI_API(int, MPI_Info_get_nthkey, (MPI_Info info, int n, char *key))
VMPI_API(int, MPI_Info_get_valuelen, (MPI_Info info, const char *key,
                                      int *valuelen, int *flag))
VMPI_API(int, MPI_Info_delete, (MPI_Info info, const char *key))

/* --- Point-to-point: blocking ------------------------------------------ */

VMPI_API(int, MPI_Send, (const void *buf, int count, MPI_Datatype datatype,
                         int dest, int tag, MPI_Comm comm))
VMPI_API(int, MPI_Ssend, (const void *buf, int count, MPI_Datatype datatype,
                          int dest, int tag, MPI_Comm comm))
VMPI_API(int, MPI_Rsend, (const void *buf, int count, MPI_Datatype datatype,
                          int dest, int tag, MPI_Comm comm))
VMPI_API(int, MPI_Recv, (void *buf, int count, MPI_Datatype datatype,
                         int source, int tag, MPI_Comm comm,
                         MPI_Status *status))
VMPI_API(int, MPI_Sendrecv, (const void *sendbuf, int sendcount,
                             MPI_Datatype sendtype, int dest, int sendtag,
                             void *recvbuf, int recvcount,
                             MPI_Datatype recvtype, int source, int recvtag,
                             MPI_Comm comm, MPI_Status *status))
VMPI_API(int, MPI_Sendrecv_replace, (void *buf, int count,
                                     MPI_Datatype datatype, int dest,
                                     int sendtag, int source, int recvtag,
                                     MPI_Comm comm, MPI_Status *status))
VMPI_API(int, MPI_Probe, (int source, int tag, MPI_Comm comm,
                          MPI_Status *status))
VMPI_API(int, MPI_Iprobe, (int source, int tag, MPI_Comm comm, int *flag,
                           MPI_Status *status))

/* --- Point-to-point: nonblocking and persistent ------------------------ */

VMPI_API(int, MPI_Isend, (const void *buf, int count, MPI_Datatype datatype,
                          int dest, int tag, MPI_Comm comm,
                          MPI_Request *request))
VMPI_API(int, MPI_Issend, (const void *buf, int count, MPI_Datatype datatype,
                           int dest, int tag, MPI_Comm comm,
                           MPI_Request *request))
VMPI_API(int, MPI_Irsend, (const void *buf, int count, MPI_Datatype datatype,
                           int dest, int tag, MPI_Comm comm,
                           MPI_Request *request))
VMPI_API(int, MPI_Irecv, (void *buf, int count, MPI_Datatype datatype,
                          int source, int tag, MPI_Comm comm,
                          MPI_Request *request))

VMPI_API(int, MPI_Send_init, (const void *buf, int count,
                              MPI_Datatype datatype, int dest, int tag,
                              MPI_Comm comm, MPI_Request *request))
VMPI_API(int, MPI_Ssend_init, (const void *buf, int count,
                               MPI_Datatype datatype, int dest, int tag,
                               MPI_Comm comm, MPI_Request *request))
VMPI_API(int, MPI_Rsend_init, (const void *buf, int count,
                               MPI_Datatype datatype, int dest, int tag,
                               MPI_Comm comm, MPI_Request *request))
VMPI_API(int, MPI_Recv_init, (void *buf, int count, MPI_Datatype datatype,
                              int source, int tag, MPI_Comm comm,
                              MPI_Request *request))
VMPI_API(int, MPI_Start, (MPI_Request *request))
VMPI_API(int, MPI_Startall, (int count, MPI_Request array_of_requests[]))

/* --- Completion -------------------------------------------------------- */

VMPI_API(int, MPI_Wait, (MPI_Request *request, MPI_Status *status))
VMPI_API(int, MPI_Waitall, (int count, MPI_Request array_of_requests[],
                            MPI_Status *array_of_statuses))
VMPI_API(int, MPI_Waitany, (int count, MPI_Request array_of_requests[],
                            int *indx, MPI_Status *status))
VMPI_API(int, MPI_Waitsome, (int incount, MPI_Request array_of_requests[],
                             int *outcount, int array_of_indices[],
                             MPI_Status *array_of_statuses))
VMPI_API(int, MPI_Test, (MPI_Request *request, int *flag,
                         MPI_Status *status))
VMPI_API(int, MPI_Testall, (int count, MPI_Request array_of_requests[],
                            int *flag, MPI_Status *array_of_statuses))
VMPI_API(int, MPI_Testany, (int count, MPI_Request array_of_requests[],
                            int *indx, int *flag, MPI_Status *status))
VMPI_API(int, MPI_Testsome, (int incount, MPI_Request array_of_requests[],
                             int *outcount, int array_of_indices[],
                             MPI_Status *array_of_statuses))
VMPI_API(int, MPI_Cancel, (MPI_Request *request))
VMPI_API(int, MPI_Request_free, (MPI_Request *request))

/* --- Status queries ---------------------------------------------------- */

VMPI_API(int, MPI_Get_count, (const MPI_Status *status,
                              MPI_Datatype datatype, int *count))
VMPI_API(int, MPI_Get_elements, (const MPI_Status *status,
                                 MPI_Datatype datatype, int *count))
VMPI_API(int, MPI_Get_elements_x, (const MPI_Status *status,
                                   MPI_Datatype datatype, MPI_Count *count))
VMPI_API(int, MPI_Test_cancelled, (const MPI_Status *status, int *flag))

/* --- Buffered sends, matched probe, generalized requests, status setters - */

/* Bytes of attached buffer a buffered message needs beyond its packed size
 * (MPI_Pack_size): an upper bound, as in MPICH. */
#define MPI_BSEND_OVERHEAD 96

VMPI_API(int, MPI_Buffer_attach, (void *buffer, int size))
/* buffer_addr is really a void ** (receives the buffer's address). */
VMPI_API(int, MPI_Buffer_detach, (void *buffer_addr, int *size))
VMPI_API(int, MPI_Bsend, (const void *buf, int count, MPI_Datatype datatype,
                          int dest, int tag, MPI_Comm comm))
VMPI_API(int, MPI_Ibsend, (const void *buf, int count, MPI_Datatype datatype,
                           int dest, int tag, MPI_Comm comm,
                           MPI_Request *request))
VMPI_API(int, MPI_Bsend_init, (const void *buf, int count,
                               MPI_Datatype datatype, int dest, int tag,
                               MPI_Comm comm, MPI_Request *request))

/* A message taken by a matched probe (MPICH encodes it as a request). */
typedef int MPI_Message;
#define MPI_MESSAGE_NULL     ((MPI_Message)0x2c000000)
#define MPI_MESSAGE_NO_PROC  ((MPI_Message)0x6c000000)

VMPI_API(int, MPI_Mprobe, (int source, int tag, MPI_Comm comm,
                           MPI_Message *message, MPI_Status *status))
VMPI_API(int, MPI_Improbe, (int source, int tag, MPI_Comm comm, int *flag,
                            MPI_Message *message, MPI_Status *status))
VMPI_API(int, MPI_Mrecv, (void *buf, int count, MPI_Datatype datatype,
                          MPI_Message *message, MPI_Status *status))
VMPI_API(int, MPI_Imrecv, (void *buf, int count, MPI_Datatype datatype,
                           MPI_Message *message, MPI_Request *request))
VMPI_API(MPI_Fint,    MPI_Message_c2f, (MPI_Message message))
VMPI_API(MPI_Message, MPI_Message_f2c, (MPI_Fint message))

/* Generalized requests (MPI-3.1 12.2). */
typedef int (MPI_Grequest_query_function)(void *extra_state, MPI_Status *status);
typedef int (MPI_Grequest_free_function)(void *extra_state);
typedef int (MPI_Grequest_cancel_function)(void *extra_state, int complete);
VMPI_API(int, MPI_Grequest_start, (MPI_Grequest_query_function *query_fn,
                                   MPI_Grequest_free_function *free_fn,
                                   MPI_Grequest_cancel_function *cancel_fn,
                                   void *extra_state, MPI_Request *request))
VMPI_API(int, MPI_Grequest_complete, (MPI_Request request))

VMPI_API(int, MPI_Request_get_status, (MPI_Request request, int *flag,
                                       MPI_Status *status))
VMPI_API(int, MPI_Status_set_cancelled, (MPI_Status *status, int flag))
VMPI_API(int, MPI_Status_set_elements, (MPI_Status *status,
                                        MPI_Datatype datatype, int count))
VMPI_API(int, MPI_Status_set_elements_x, (MPI_Status *status,
                                          MPI_Datatype datatype,
                                          MPI_Count count))

/* --- Derived datatypes ------------------------------------------------- */

VMPI_API(int, MPI_Type_contiguous, (int count, MPI_Datatype oldtype,
                                    MPI_Datatype *newtype))
VMPI_API(int, MPI_Type_vector, (int count, int blocklength, int stride,
                                MPI_Datatype oldtype, MPI_Datatype *newtype))
VMPI_API(int, MPI_Type_create_hvector, (int count, int blocklength,
                                        MPI_Aint stride, MPI_Datatype oldtype,
                                        MPI_Datatype *newtype))
VMPI_API(int, MPI_Type_indexed, (int count, const int array_of_blocklengths[],
                                 const int array_of_displacements[],
                                 MPI_Datatype oldtype, MPI_Datatype *newtype))
VMPI_API(int, MPI_Type_create_indexed_block, (int count, int blocklength,
                                   const int array_of_displacements[],
                                   MPI_Datatype oldtype,
                                   MPI_Datatype *newtype))
VMPI_API(int, MPI_Type_create_hindexed, (int count,
                                   const int array_of_blocklengths[],
                                   const MPI_Aint array_of_displacements[],
                                   MPI_Datatype oldtype,
                                   MPI_Datatype *newtype))
VMPI_API(int, MPI_Type_create_struct, (int count,
                                   const int array_of_blocklengths[],
                                   const MPI_Aint array_of_displacements[],
                                   const MPI_Datatype array_of_types[],
                                   MPI_Datatype *newtype))
VMPI_API(int, MPI_Type_create_resized, (MPI_Datatype oldtype, MPI_Aint lb,
                                        MPI_Aint extent,
                                        MPI_Datatype *newtype))
VMPI_API(int, MPI_Type_dup, (MPI_Datatype oldtype, MPI_Datatype *newtype))
VMPI_API(int, MPI_Type_commit, (MPI_Datatype *datatype))
VMPI_API(int, MPI_Type_free, (MPI_Datatype *datatype))

VMPI_API(int, MPI_Type_size, (MPI_Datatype datatype, int *size))
VMPI_API(int, MPI_Type_size_x, (MPI_Datatype datatype, MPI_Count *size))
VMPI_API(int, MPI_Type_get_extent, (MPI_Datatype datatype, MPI_Aint *lb,
                                    MPI_Aint *extent))
VMPI_API(int, MPI_Type_get_extent_x, (MPI_Datatype datatype, MPI_Count *lb,
                                      MPI_Count *extent))
VMPI_API(int, MPI_Type_get_true_extent, (MPI_Datatype datatype,
                                         MPI_Aint *true_lb,
                                         MPI_Aint *true_extent))
VMPI_API(int, MPI_Type_get_true_extent_x, (MPI_Datatype datatype,
                                           MPI_Count *true_lb,
                                           MPI_Count *true_extent))
VMPI_API(int, MPI_Type_get_name, (MPI_Datatype datatype, char *type_name,
                                  int *resultlen))
VMPI_API(int, MPI_Type_set_name, (MPI_Datatype datatype,
                                  const char *type_name))
VMPI_API(int, MPI_Get_address, (const void *location, MPI_Aint *address))
/* Address arithmetic (MPI-3.1 4.1.5). */
VMPI_API(MPI_Aint, MPI_Aint_add, (MPI_Aint base, MPI_Aint disp))
VMPI_API(MPI_Aint, MPI_Aint_diff, (MPI_Aint addr1, MPI_Aint addr2))

VMPI_API(int, MPI_Pack, (const void *inbuf, int incount,
                         MPI_Datatype datatype, void *outbuf, int outsize,
                         int *position, MPI_Comm comm))
VMPI_API(int, MPI_Unpack, (const void *inbuf, int insize, int *position,
                           void *outbuf, int outcount, MPI_Datatype datatype,
                           MPI_Comm comm))
VMPI_API(int, MPI_Pack_size, (int incount, MPI_Datatype datatype,
                              MPI_Comm comm, int *size))

/* Array and block constructors, envelopes, external32, Fortran kinds. */
VMPI_API(int, MPI_Type_create_hindexed_block, (int count, int blocklength,
                                   const MPI_Aint array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype))
VMPI_API(int, MPI_Type_create_subarray, (int ndims, const int array_of_sizes[],
                                   const int array_of_subsizes[],
                                   const int array_of_starts[], int order,
                                   MPI_Datatype oldtype, MPI_Datatype *newtype))
VMPI_API(int, MPI_Type_create_darray, (int size, int rank, int ndims,
                                   const int array_of_gsizes[],
                                   const int array_of_distribs[],
                                   const int array_of_dargs[],
                                   const int array_of_psizes[], int order,
                                   MPI_Datatype oldtype, MPI_Datatype *newtype))
VMPI_API(int, MPI_Type_get_envelope, (MPI_Datatype datatype, int *num_integers,
                                   int *num_addresses, int *num_datatypes,
                                   int *combiner))
VMPI_API(int, MPI_Type_get_contents, (MPI_Datatype datatype, int max_integers,
                                   int max_addresses, int max_datatypes,
                                   int array_of_integers[],
                                   MPI_Aint array_of_addresses[],
                                   MPI_Datatype array_of_datatypes[]))
VMPI_API(int, MPI_Pack_external, (const char *datarep, const void *inbuf,
                                  int incount, MPI_Datatype datatype,
                                  void *outbuf, MPI_Aint outsize,
                                  MPI_Aint *position))
VMPI_API(int, MPI_Unpack_external, (const char datarep[], const void *inbuf,
                                    MPI_Aint insize, MPI_Aint *position,
                                    void *outbuf, int outcount,
                                    MPI_Datatype datatype))
VMPI_API(int, MPI_Pack_external_size, (const char *datarep, int incount,
                                       MPI_Datatype datatype, MPI_Aint *size))
VMPI_API(int, MPI_Type_match_size, (int typeclass, int size,
                                    MPI_Datatype *datatype))
VMPI_API(int, MPI_Type_create_f90_real, (int p, int r, MPI_Datatype *newtype))
VMPI_API(int, MPI_Type_create_f90_complex, (int p, int r,
                                            MPI_Datatype *newtype))
VMPI_API(int, MPI_Type_create_f90_integer, (int r, MPI_Datatype *newtype))
/* MPI-1's datatype functions, removed in MPI-3.0; MPICH still exports them. */
VMPI_API(int, MPI_Type_hvector, (int count, int blocklength, MPI_Aint stride,
                                 MPI_Datatype oldtype, MPI_Datatype *newtype))
VMPI_API(int, MPI_Type_hindexed, (int count, int array_of_blocklengths[],
                                  MPI_Aint array_of_displacements[],
                                  MPI_Datatype oldtype, MPI_Datatype *newtype))
VMPI_API(int, MPI_Type_struct, (int count, int array_of_blocklengths[],
                                MPI_Aint array_of_displacements[],
                                MPI_Datatype array_of_types[],
                                MPI_Datatype *newtype))
VMPI_API(int, MPI_Type_extent, (MPI_Datatype datatype, MPI_Aint *extent))
VMPI_API(int, MPI_Type_lb, (MPI_Datatype datatype, MPI_Aint *displacement))
VMPI_API(int, MPI_Type_ub, (MPI_Datatype datatype, MPI_Aint *displacement))
VMPI_API(int, MPI_Address, (void *location, MPI_Aint *address))

/* --- Communicators ----------------------------------------------------- */

VMPI_API(int, MPI_Comm_size, (MPI_Comm comm, int *size))
VMPI_API(int, MPI_Comm_rank, (MPI_Comm comm, int *rank))
VMPI_API(int, MPI_Comm_compare, (MPI_Comm comm1, MPI_Comm comm2,
                                 int *result))
VMPI_API(int, MPI_Comm_test_inter, (MPI_Comm comm, int *flag))
/* Intercommunicators (MPI-3.1 6.6). */
VMPI_API(int, MPI_Intercomm_create, (MPI_Comm local_comm, int local_leader,
                                     MPI_Comm peer_comm, int remote_leader, int tag,
                                     MPI_Comm *newintercomm))
VMPI_API(int, MPI_Intercomm_merge, (MPI_Comm intercomm, int high, MPI_Comm *newintracomm))
/* Process creation and management (MPI-3.1 chapter 10). */
VMPI_API(int, MPI_Comm_spawn, (const char *command, char *argv[], int maxprocs, MPI_Info info,
                               int root, MPI_Comm comm, MPI_Comm *intercomm,
                               int array_of_errcodes[]))
VMPI_API(int, MPI_Comm_spawn_multiple, (int count, char *array_of_commands[],
                                        char **array_of_argv[], const int array_of_maxprocs[],
                                        const MPI_Info array_of_info[], int root, MPI_Comm comm,
                                        MPI_Comm *intercomm, int array_of_errcodes[]))
VMPI_API(int, MPI_Comm_get_parent, (MPI_Comm *parent))
VMPI_API(int, MPI_Open_port, (MPI_Info info, char *port_name))
VMPI_API(int, MPI_Close_port, (const char *port_name))
VMPI_API(int, MPI_Comm_accept, (const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                                MPI_Comm *newcomm))
VMPI_API(int, MPI_Comm_connect, (const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                                 MPI_Comm *newcomm))
VMPI_API(int, MPI_Comm_disconnect, (MPI_Comm *comm))
VMPI_API(int, MPI_Comm_join, (int fd, MPI_Comm *intercomm))
VMPI_API(int, MPI_Publish_name, (const char *service_name, MPI_Info info,
                                 const char *port_name))
VMPI_API(int, MPI_Unpublish_name, (const char *service_name, MPI_Info info,
                                   const char *port_name))
VMPI_API(int, MPI_Lookup_name, (const char *service_name, MPI_Info info, char *port_name))
VMPI_API(int, MPI_Comm_remote_size, (MPI_Comm comm, int *size))
VMPI_API(int, MPI_Comm_remote_group, (MPI_Comm comm, MPI_Group *group))
VMPI_API(int, MPI_Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag,
                                      MPI_Comm *newcomm))
VMPI_API(int, MPI_Comm_group, (MPI_Comm comm, MPI_Group *group))
VMPI_API(int, MPI_Comm_dup, (MPI_Comm comm, MPI_Comm *newcomm))
VMPI_API(int, MPI_Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm))
VMPI_API(int, MPI_Comm_idup, (MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request))
VMPI_API(int, MPI_Comm_set_info, (MPI_Comm comm, MPI_Info info))
VMPI_API(int, MPI_Comm_get_info, (MPI_Comm comm, MPI_Info *info_used))
VMPI_API(int, MPI_Comm_split, (MPI_Comm comm, int color, int key,
                               MPI_Comm *newcomm))
VMPI_API(int, MPI_Comm_split_type, (MPI_Comm comm, int split_type, int key,
                                    MPI_Info info, MPI_Comm *newcomm))
VMPI_API(int, MPI_Comm_create, (MPI_Comm comm, MPI_Group group,
                                MPI_Comm *newcomm))
VMPI_API(int, MPI_Comm_free, (MPI_Comm *comm))
/* attribute_val is really a void ** (receives a pointer to the value). */
VMPI_API(int, MPI_Comm_get_attr, (MPI_Comm comm, int comm_keyval,
                                  void *attribute_val, int *flag))
VMPI_API(int, MPI_Comm_set_name, (MPI_Comm comm, const char *comm_name))
VMPI_API(int, MPI_Comm_get_name, (MPI_Comm comm, char *comm_name,
                                  int *resultlen))

/* --- Groups ------------------------------------------------------------ */

VMPI_API(int, MPI_Group_size, (MPI_Group group, int *size))
VMPI_API(int, MPI_Group_rank, (MPI_Group group, int *rank))
VMPI_API(int, MPI_Group_compare, (MPI_Group group1, MPI_Group group2,
                                  int *result))
VMPI_API(int, MPI_Group_translate_ranks, (MPI_Group group1, int n,
                                          const int ranks1[],
                                          MPI_Group group2, int ranks2[]))
VMPI_API(int, MPI_Group_incl, (MPI_Group group, int n, const int ranks[],
                               MPI_Group *newgroup))
VMPI_API(int, MPI_Group_excl, (MPI_Group group, int n, const int ranks[],
                               MPI_Group *newgroup))
VMPI_API(int, MPI_Group_range_incl, (MPI_Group group, int n, int ranges[][3],
                                     MPI_Group *newgroup))
VMPI_API(int, MPI_Group_range_excl, (MPI_Group group, int n, int ranges[][3],
                                      MPI_Group *newgroup))
VMPI_API(int, MPI_Group_union, (MPI_Group group1, MPI_Group group2,
                                MPI_Group *newgroup))
VMPI_API(int, MPI_Group_intersection, (MPI_Group group1, MPI_Group group2,
                                       MPI_Group *newgroup))
VMPI_API(int, MPI_Group_difference, (MPI_Group group1, MPI_Group group2,
                                     MPI_Group *newgroup))
VMPI_API(int, MPI_Group_free, (MPI_Group *group))

/* --- Process topologies ------------------------------------------------ */

VMPI_API(int, MPI_Dims_create, (int nnodes, int ndims, int dims[]))
VMPI_API(int, MPI_Cart_create, (MPI_Comm comm_old, int ndims,
                                const int dims[], const int periods[],
                                int reorder, MPI_Comm *comm_cart))
VMPI_API(int, MPI_Cartdim_get, (MPI_Comm comm, int *ndims))
VMPI_API(int, MPI_Cart_get, (MPI_Comm comm, int maxdims, int dims[],
                             int periods[], int coords[]))
VMPI_API(int, MPI_Cart_rank, (MPI_Comm comm, const int coords[], int *rank))
VMPI_API(int, MPI_Cart_coords, (MPI_Comm comm, int rank, int maxdims,
                                int coords[]))
VMPI_API(int, MPI_Cart_shift, (MPI_Comm comm, int direction, int disp,
                               int *rank_source, int *rank_dest))
VMPI_API(int, MPI_Topo_test, (MPI_Comm comm, int *status))
VMPI_API(int, MPI_Cart_sub, (MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm))
VMPI_API(int, MPI_Cart_map, (MPI_Comm comm, int ndims, const int dims[],
                             const int periods[], int *newrank))
VMPI_API(int, MPI_Graph_create, (MPI_Comm comm_old, int nnodes, const int index[],
                                 const int edges[], int reorder, MPI_Comm *comm_graph))
VMPI_API(int, MPI_Graphdims_get, (MPI_Comm comm, int *nnodes, int *nedges))
VMPI_API(int, MPI_Graph_get, (MPI_Comm comm, int maxindex, int maxedges, int index[],
                              int edges[]))
VMPI_API(int, MPI_Graph_neighbors_count, (MPI_Comm comm, int rank, int *nneighbors))
VMPI_API(int, MPI_Graph_neighbors, (MPI_Comm comm, int rank, int maxneighbors,
                                    int neighbors[]))
VMPI_API(int, MPI_Graph_map, (MPI_Comm comm, int nnodes, const int index[],
                              const int edges[], int *newrank))

/* Distributed graphs. As in MPICH, the two weight sentinels are constant
 * pointers exported as variables (MPI-3.1 7.5.4). */
extern VMPI_API_ATTR int *const MPI_UNWEIGHTED;
extern VMPI_API_ATTR int *const MPI_WEIGHTS_EMPTY;
VMPI_API(int, MPI_Dist_graph_create_adjacent, (MPI_Comm comm_old, int indegree,
                                               const int sources[], const int sourceweights[],
                                               int outdegree, const int destinations[],
                                               const int destweights[], MPI_Info info,
                                               int reorder, MPI_Comm *comm_dist_graph))
VMPI_API(int, MPI_Dist_graph_create, (MPI_Comm comm_old, int n, const int sources[],
                                      const int degrees[], const int destinations[],
                                      const int weights[], MPI_Info info, int reorder,
                                      MPI_Comm *comm_dist_graph))
VMPI_API(int, MPI_Dist_graph_neighbors_count, (MPI_Comm comm, int *indegree,
                                               int *outdegree, int *weighted))
VMPI_API(int, MPI_Dist_graph_neighbors, (MPI_Comm comm, int maxindegree, int sources[],
                                         int sourceweights[], int maxoutdegree,
                                         int destinations[], int destweights[]))

/* --- Neighbourhood collectives (MPI-3.1 7.6, 7.7) ----------------------- */

VMPI_API(int, MPI_Neighbor_allgather, (const void *sendbuf, int sendcount,
                                       MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                       MPI_Datatype recvtype, MPI_Comm comm))
VMPI_API(int, MPI_Neighbor_allgatherv, (const void *sendbuf, int sendcount,
                                        MPI_Datatype sendtype, void *recvbuf,
                                        const int recvcounts[], const int displs[],
                                        MPI_Datatype recvtype, MPI_Comm comm))
VMPI_API(int, MPI_Neighbor_alltoall, (const void *sendbuf, int sendcount,
                                      MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                      MPI_Datatype recvtype, MPI_Comm comm))
VMPI_API(int, MPI_Neighbor_alltoallv, (const void *sendbuf, const int sendcounts[],
                                       const int sdispls[], MPI_Datatype sendtype,
                                       void *recvbuf, const int recvcounts[],
                                       const int rdispls[], MPI_Datatype recvtype,
                                       MPI_Comm comm))
VMPI_API(int, MPI_Neighbor_alltoallw, (const void *sendbuf, const int sendcounts[],
                                       const MPI_Aint sdispls[],
                                       const MPI_Datatype sendtypes[], void *recvbuf,
                                       const int recvcounts[], const MPI_Aint rdispls[],
                                       const MPI_Datatype recvtypes[], MPI_Comm comm))
VMPI_API(int, MPI_Ineighbor_allgather, (const void *sendbuf, int sendcount,
                                        MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                        MPI_Datatype recvtype, MPI_Comm comm,
                                        MPI_Request *request))
VMPI_API(int, MPI_Ineighbor_allgatherv, (const void *sendbuf, int sendcount,
                                         MPI_Datatype sendtype, void *recvbuf,
                                         const int recvcounts[], const int displs[],
                                         MPI_Datatype recvtype, MPI_Comm comm,
                                         MPI_Request *request))
VMPI_API(int, MPI_Ineighbor_alltoall, (const void *sendbuf, int sendcount,
                                       MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                       MPI_Datatype recvtype, MPI_Comm comm,
                                       MPI_Request *request))
VMPI_API(int, MPI_Ineighbor_alltoallv, (const void *sendbuf, const int sendcounts[],
                                        const int sdispls[], MPI_Datatype sendtype,
                                        void *recvbuf, const int recvcounts[],
                                        const int rdispls[], MPI_Datatype recvtype,
                                        MPI_Comm comm, MPI_Request *request))
VMPI_API(int, MPI_Ineighbor_alltoallw, (const void *sendbuf, const int sendcounts[],
                                        const MPI_Aint sdispls[],
                                        const MPI_Datatype sendtypes[], void *recvbuf,
                                        const int recvcounts[], const MPI_Aint rdispls[],
                                        const MPI_Datatype recvtypes[], MPI_Comm comm,
                                        MPI_Request *request))

/* --- Collectives that move data ---------------------------------------- */

VMPI_API(int, MPI_Barrier, (MPI_Comm comm))
VMPI_API(int, MPI_Bcast, (void *buffer, int count, MPI_Datatype datatype,
                          int root, MPI_Comm comm))
VMPI_API(int, MPI_Gather, (const void *sendbuf, int sendcount,
                           MPI_Datatype sendtype, void *recvbuf, int recvcount,
                           MPI_Datatype recvtype, int root, MPI_Comm comm))
VMPI_API(int, MPI_Gatherv, (const void *sendbuf, int sendcount,
                            MPI_Datatype sendtype, void *recvbuf,
                            const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, int root, MPI_Comm comm))
VMPI_API(int, MPI_Scatter, (const void *sendbuf, int sendcount,
                            MPI_Datatype sendtype, void *recvbuf, int recvcount,
                            MPI_Datatype recvtype, int root, MPI_Comm comm))
VMPI_API(int, MPI_Scatterv, (const void *sendbuf, const int sendcounts[],
                             const int displs[], MPI_Datatype sendtype,
                             void *recvbuf, int recvcount,
                             MPI_Datatype recvtype, int root, MPI_Comm comm))
VMPI_API(int, MPI_Allgather, (const void *sendbuf, int sendcount,
                              MPI_Datatype sendtype, void *recvbuf,
                              int recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm))
VMPI_API(int, MPI_Allgatherv, (const void *sendbuf, int sendcount,
                               MPI_Datatype sendtype, void *recvbuf,
                               const int recvcounts[], const int displs[],
                               MPI_Datatype recvtype, MPI_Comm comm))
VMPI_API(int, MPI_Alltoall, (const void *sendbuf, int sendcount,
                             MPI_Datatype sendtype, void *recvbuf,
                             int recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm))
VMPI_API(int, MPI_Alltoallv, (const void *sendbuf, const int sendcounts[],
                              const int sdispls[], MPI_Datatype sendtype,
                              void *recvbuf, const int recvcounts[],
                              const int rdispls[], MPI_Datatype recvtype,
                              MPI_Comm comm))
VMPI_API(int, MPI_Alltoallw, (const void *sendbuf, const int sendcounts[],
                              const int sdispls[],
                              const MPI_Datatype sendtypes[], void *recvbuf,
                              const int recvcounts[], const int rdispls[],
                              const MPI_Datatype recvtypes[], MPI_Comm comm))

/* A user reduction: inoutvec[i] = invec[i] op inoutvec[i] for *len elements
 * of *datatype (MPI_Op_create). */
typedef void (MPI_User_function)(void *invec, void *inoutvec, int *len,
                                 MPI_Datatype *datatype);

/* --- Reductions and user operations -------------------------------------- */

VMPI_API(int, MPI_Reduce, (const void *sendbuf, void *recvbuf, int count,
                           MPI_Datatype datatype, MPI_Op op, int root,
                           MPI_Comm comm))
VMPI_API(int, MPI_Allreduce, (const void *sendbuf, void *recvbuf, int count,
                              MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm))
VMPI_API(int, MPI_Reduce_scatter, (const void *sendbuf, void *recvbuf,
                                   const int recvcounts[],
                                   MPI_Datatype datatype, MPI_Op op,
                                   MPI_Comm comm))
VMPI_API(int, MPI_Reduce_scatter_block, (const void *sendbuf, void *recvbuf,
                                         int recvcount, MPI_Datatype datatype,
                                         MPI_Op op, MPI_Comm comm))
VMPI_API(int, MPI_Scan, (const void *sendbuf, void *recvbuf, int count,
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
VMPI_API(int, MPI_Exscan, (const void *sendbuf, void *recvbuf, int count,
                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
VMPI_API(int, MPI_Reduce_local, (const void *inbuf, void *inoutbuf, int count,
                                 MPI_Datatype datatype, MPI_Op op))
VMPI_API(int, MPI_Op_create, (MPI_User_function *user_fn, int commute,
                              MPI_Op *op))
VMPI_API(int, MPI_Op_free, (MPI_Op *op))
VMPI_API(int, MPI_Op_commutative, (MPI_Op op, int *commute))

/* --- Non-blocking collectives ------------------------------------------- */

VMPI_API(int, MPI_Ibarrier, (MPI_Comm comm, MPI_Request *request))
VMPI_API(int, MPI_Ibcast, (void *buffer, int count, MPI_Datatype datatype,
                           int root, MPI_Comm comm, MPI_Request *request))
VMPI_API(int, MPI_Ireduce, (const void *sendbuf, void *recvbuf, int count,
                            MPI_Datatype datatype, MPI_Op op, int root,
                            MPI_Comm comm, MPI_Request *request))
VMPI_API(int, MPI_Iallreduce, (const void *sendbuf, void *recvbuf, int count,
                               MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm, MPI_Request *request))
VMPI_API(int, MPI_Iallgather, (const void *sendbuf, int sendcount,
                               MPI_Datatype sendtype, void *recvbuf,
                               int recvcount, MPI_Datatype recvtype,
                               MPI_Comm comm, MPI_Request *request))
VMPI_API(int, MPI_Ialltoall, (const void *sendbuf, int sendcount,
                              MPI_Datatype sendtype, void *recvbuf,
                              int recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm, MPI_Request *request))
VMPI_API(int, MPI_Igather, (const void *sendbuf, int sendcount,
                            MPI_Datatype sendtype, void *recvbuf, int recvcount,
                            MPI_Datatype recvtype, int root, MPI_Comm comm,
                            MPI_Request *request))
VMPI_API(int, MPI_Igatherv, (const void *sendbuf, int sendcount,
                             MPI_Datatype sendtype, void *recvbuf,
                             const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, int root, MPI_Comm comm,
                             MPI_Request *request))
VMPI_API(int, MPI_Iscatter, (const void *sendbuf, int sendcount,
                             MPI_Datatype sendtype, void *recvbuf, int recvcount,
                             MPI_Datatype recvtype, int root, MPI_Comm comm,
                             MPI_Request *request))
VMPI_API(int, MPI_Iscatterv, (const void *sendbuf, const int sendcounts[],
                              const int displs[], MPI_Datatype sendtype,
                              void *recvbuf, int recvcount,
                              MPI_Datatype recvtype, int root, MPI_Comm comm,
                              MPI_Request *request))
VMPI_API(int, MPI_Iallgatherv, (const void *sendbuf, int sendcount,
                                MPI_Datatype sendtype, void *recvbuf,
                                const int recvcounts[], const int displs[],
                                MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Request *request))
VMPI_API(int, MPI_Ialltoallv, (const void *sendbuf, const int sendcounts[],
                               const int sdispls[], MPI_Datatype sendtype,
                               void *recvbuf, const int recvcounts[],
                               const int rdispls[], MPI_Datatype recvtype,
                               MPI_Comm comm, MPI_Request *request))
VMPI_API(int, MPI_Ialltoallw, (const void *sendbuf, const int sendcounts[],
                               const int sdispls[],
                               const MPI_Datatype sendtypes[], void *recvbuf,
                               const int recvcounts[], const int rdispls[],
                               const MPI_Datatype recvtypes[], MPI_Comm comm,
                               MPI_Request *request))
VMPI_API(int, MPI_Ireduce_scatter, (const void *sendbuf, void *recvbuf,
                                    const int recvcounts[],
                                    MPI_Datatype datatype, MPI_Op op,
                                    MPI_Comm comm, MPI_Request *request))
VMPI_API(int, MPI_Ireduce_scatter_block, (const void *sendbuf, void *recvbuf,
                                          int recvcount, MPI_Datatype datatype,
                                          MPI_Op op, MPI_Comm comm,
                                          MPI_Request *request))
VMPI_API(int, MPI_Iscan, (const void *sendbuf, void *recvbuf, int count,
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                          MPI_Request *request))
VMPI_API(int, MPI_Iexscan, (const void *sendbuf, void *recvbuf, int count,
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                            MPI_Request *request))

/* --- One-sided communication (rma/) -------------------------------------- */

/* baseptr is really a void ** passed as void * (MPI-3.1 11.2). */
VMPI_API(int, MPI_Win_create, (void *base, MPI_Aint size, int disp_unit,
                               MPI_Info info, MPI_Comm comm, MPI_Win *win))
VMPI_API(int, MPI_Win_allocate, (MPI_Aint size, int disp_unit, MPI_Info info,
                                 MPI_Comm comm, void *baseptr, MPI_Win *win))
VMPI_API(int, MPI_Win_allocate_shared, (MPI_Aint size, int disp_unit,
                                        MPI_Info info, MPI_Comm comm,
                                        void *baseptr, MPI_Win *win))
VMPI_API(int, MPI_Win_shared_query, (MPI_Win win, int rank, MPI_Aint *size,
                                     int *disp_unit, void *baseptr))
VMPI_API(int, MPI_Win_create_dynamic, (MPI_Info info, MPI_Comm comm,
                                       MPI_Win *win))
VMPI_API(int, MPI_Win_attach, (MPI_Win win, void *base, MPI_Aint size))
VMPI_API(int, MPI_Win_detach, (MPI_Win win, const void *base))
VMPI_API(int, MPI_Win_free, (MPI_Win *win))
VMPI_API(int, MPI_Win_get_attr, (MPI_Win win, int win_keyval,
                                 void *attribute_val, int *flag))
VMPI_API(int, MPI_Win_get_group, (MPI_Win win, MPI_Group *group))
VMPI_API(int, MPI_Win_set_info, (MPI_Win win, MPI_Info info))
VMPI_API(int, MPI_Win_get_info, (MPI_Win win, MPI_Info *info_used))
VMPI_API(int, MPI_Win_set_name, (MPI_Win win, const char *win_name))
VMPI_API(int, MPI_Win_get_name, (MPI_Win win, char *win_name, int *resultlen))
VMPI_API(int, MPI_Win_set_errhandler, (MPI_Win win, MPI_Errhandler errhandler))
VMPI_API(int, MPI_Win_get_errhandler, (MPI_Win win,
                                       MPI_Errhandler *errhandler))

VMPI_API(int, MPI_Put, (const void *origin_addr, int origin_count,
                        MPI_Datatype origin_datatype, int target_rank,
                        MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Win win))
VMPI_API(int, MPI_Get, (void *origin_addr, int origin_count,
                        MPI_Datatype origin_datatype, int target_rank,
                        MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Win win))
VMPI_API(int, MPI_Accumulate, (const void *origin_addr, int origin_count,
                               MPI_Datatype origin_datatype, int target_rank,
                               MPI_Aint target_disp, int target_count,
                               MPI_Datatype target_datatype, MPI_Op op,
                               MPI_Win win))
VMPI_API(int, MPI_Get_accumulate, (const void *origin_addr, int origin_count,
                                   MPI_Datatype origin_datatype,
                                   void *result_addr, int result_count,
                                   MPI_Datatype result_datatype,
                                   int target_rank, MPI_Aint target_disp,
                                   int target_count,
                                   MPI_Datatype target_datatype, MPI_Op op,
                                   MPI_Win win))
VMPI_API(int, MPI_Fetch_and_op, (const void *origin_addr, void *result_addr,
                                 MPI_Datatype datatype, int target_rank,
                                 MPI_Aint target_disp, MPI_Op op, MPI_Win win))
VMPI_API(int, MPI_Compare_and_swap, (const void *origin_addr,
                                     const void *compare_addr,
                                     void *result_addr, MPI_Datatype datatype,
                                     int target_rank, MPI_Aint target_disp,
                                     MPI_Win win))
VMPI_API(int, MPI_Rput, (const void *origin_addr, int origin_count,
                         MPI_Datatype origin_datatype, int target_rank,
                         MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Win win,
                         MPI_Request *request))
VMPI_API(int, MPI_Rget, (void *origin_addr, int origin_count,
                         MPI_Datatype origin_datatype, int target_rank,
                         MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Win win,
                         MPI_Request *request))
VMPI_API(int, MPI_Raccumulate, (const void *origin_addr, int origin_count,
                                MPI_Datatype origin_datatype, int target_rank,
                                MPI_Aint target_disp, int target_count,
                                MPI_Datatype target_datatype, MPI_Op op,
                                MPI_Win win, MPI_Request *request))
VMPI_API(int, MPI_Rget_accumulate, (const void *origin_addr, int origin_count,
                                    MPI_Datatype origin_datatype,
                                    void *result_addr, int result_count,
                                    MPI_Datatype result_datatype,
                                    int target_rank, MPI_Aint target_disp,
                                    int target_count,
                                    MPI_Datatype target_datatype, MPI_Op op,
                                    MPI_Win win, MPI_Request *request))

VMPI_API(int, MPI_Win_fence, (int assert, MPI_Win win))
VMPI_API(int, MPI_Win_post, (MPI_Group group, int assert, MPI_Win win))
VMPI_API(int, MPI_Win_start, (MPI_Group group, int assert, MPI_Win win))
VMPI_API(int, MPI_Win_complete, (MPI_Win win))
VMPI_API(int, MPI_Win_wait, (MPI_Win win))
VMPI_API(int, MPI_Win_test, (MPI_Win win, int *flag))
VMPI_API(int, MPI_Win_lock, (int lock_type, int rank, int assert, MPI_Win win))
VMPI_API(int, MPI_Win_unlock, (int rank, MPI_Win win))
VMPI_API(int, MPI_Win_lock_all, (int assert, MPI_Win win))
VMPI_API(int, MPI_Win_unlock_all, (MPI_Win win))
VMPI_API(int, MPI_Win_flush, (int rank, MPI_Win win))
VMPI_API(int, MPI_Win_flush_all, (MPI_Win win))
VMPI_API(int, MPI_Win_flush_local, (int rank, MPI_Win win))
VMPI_API(int, MPI_Win_flush_local_all, (MPI_Win win))
VMPI_API(int, MPI_Win_sync, (MPI_Win win))

/* --- Caching and error handlers (MPI-3.1 6.7, 8.3-8.5) ------------------ */

/* MPI_DUP_FN and its typed casts: copies the value, flag 1. */
VMPI_API_ATTR int MPIR_Dup_fn(MPI_Comm comm, int keyval, void *extra_state,
                              void *attribute_val_in, void *attribute_val_out, int *flag);
VMPI_API(int, MPI_Comm_create_keyval, (MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                                       MPI_Comm_delete_attr_function *comm_delete_attr_fn,
                                       int *comm_keyval, void *extra_state))
VMPI_API(int, MPI_Comm_free_keyval, (int *comm_keyval))
VMPI_API(int, MPI_Comm_set_attr, (MPI_Comm comm, int comm_keyval, void *attribute_val))
VMPI_API(int, MPI_Comm_delete_attr, (MPI_Comm comm, int comm_keyval))
VMPI_API(int, MPI_Type_create_keyval, (MPI_Type_copy_attr_function *type_copy_attr_fn,
                                       MPI_Type_delete_attr_function *type_delete_attr_fn,
                                       int *type_keyval, void *extra_state))
VMPI_API(int, MPI_Type_free_keyval, (int *type_keyval))
VMPI_API(int, MPI_Type_set_attr, (MPI_Datatype datatype, int type_keyval,
                                  void *attribute_val))
/* attribute_val is really a void ** (receives the value). */
VMPI_API(int, MPI_Type_get_attr, (MPI_Datatype datatype, int type_keyval,
                                  void *attribute_val, int *flag))
VMPI_API(int, MPI_Type_delete_attr, (MPI_Datatype datatype, int type_keyval))
VMPI_API(int, MPI_Win_create_keyval, (MPI_Win_copy_attr_function *win_copy_attr_fn,
                                      MPI_Win_delete_attr_function *win_delete_attr_fn,
                                      int *win_keyval, void *extra_state))
VMPI_API(int, MPI_Win_free_keyval, (int *win_keyval))
VMPI_API(int, MPI_Win_set_attr, (MPI_Win win, int win_keyval, void *attribute_val))
VMPI_API(int, MPI_Win_delete_attr, (MPI_Win win, int win_keyval))
/* The MPI-1 names (deprecated, still in MPI-3.1): communicator keyvals. */
VMPI_API(int, MPI_Keyval_create, (MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn,
                                  int *keyval, void *extra_state))
VMPI_API(int, MPI_Keyval_free, (int *keyval))
VMPI_API(int, MPI_Attr_put, (MPI_Comm comm, int keyval, void *attribute_val))
VMPI_API(int, MPI_Attr_get, (MPI_Comm comm, int keyval, void *attribute_val, int *flag))
VMPI_API(int, MPI_Attr_delete, (MPI_Comm comm, int keyval))

VMPI_API(int, MPI_Comm_create_errhandler, (MPI_Comm_errhandler_function *comm_errhandler_fn,
                                           MPI_Errhandler *errhandler))
VMPI_API(int, MPI_Win_create_errhandler, (MPI_Win_errhandler_function *win_errhandler_fn,
                                          MPI_Errhandler *errhandler))
VMPI_API(int, MPI_Comm_call_errhandler, (MPI_Comm comm, int errorcode))
VMPI_API(int, MPI_Win_call_errhandler, (MPI_Win win, int errorcode))
VMPI_API(int, MPI_Add_error_class, (int *errorclass))
VMPI_API(int, MPI_Add_error_code, (int errorclass, int *errorcode))
VMPI_API(int, MPI_Add_error_string, (int errorcode, const char *string))
/* MPI-1's, removed by MPI-3.0; MPICH still exports them. */
VMPI_API(int, MPI_Errhandler_create, (MPI_Comm_errhandler_function *function,
                                      MPI_Errhandler *errhandler))
VMPI_API(int, MPI_Errhandler_set, (MPI_Comm comm, MPI_Errhandler errhandler))
VMPI_API(int, MPI_Errhandler_get, (MPI_Comm comm, MPI_Errhandler *errhandler))

/* --- Language interoperability (MPI-3.1 17.2) ---------------------------- */

/* Handles are the same integers in C and Fortran, as in MPICH: c2f and f2c
 * return their argument; an invalid handle stays invalid. */
VMPI_API(MPI_Fint,       MPI_Comm_c2f, (MPI_Comm comm))
VMPI_API(MPI_Comm,       MPI_Comm_f2c, (MPI_Fint comm))
VMPI_API(MPI_Fint,       MPI_Type_c2f, (MPI_Datatype datatype))
VMPI_API(MPI_Datatype,   MPI_Type_f2c, (MPI_Fint datatype))
VMPI_API(MPI_Fint,       MPI_Group_c2f, (MPI_Group group))
VMPI_API(MPI_Group,      MPI_Group_f2c, (MPI_Fint group))
VMPI_API(MPI_Fint,       MPI_Info_c2f, (MPI_Info info))
VMPI_API(MPI_Info,       MPI_Info_f2c, (MPI_Fint info))
VMPI_API(MPI_Fint,       MPI_Request_c2f, (MPI_Request request))
VMPI_API(MPI_Request,    MPI_Request_f2c, (MPI_Fint request))
VMPI_API(MPI_Fint,       MPI_Op_c2f, (MPI_Op op))
VMPI_API(MPI_Op,         MPI_Op_f2c, (MPI_Fint op))
VMPI_API(MPI_Fint,       MPI_Errhandler_c2f, (MPI_Errhandler errhandler))
VMPI_API(MPI_Errhandler, MPI_Errhandler_f2c, (MPI_Fint errhandler))
VMPI_API(MPI_Fint,       MPI_Win_c2f, (MPI_Win win))
VMPI_API(MPI_Win,        MPI_Win_f2c, (MPI_Fint win))

/* A Fortran status is MPI_Status's five integers in the same order. The
 * two IGNORE sentinels are distinct addresses a Fortran binding passes. */
extern VMPI_API_ATTR MPI_Fint *MPI_F_STATUS_IGNORE;
extern VMPI_API_ATTR MPI_Fint *MPI_F_STATUSES_IGNORE;
VMPI_API(int, MPI_Status_c2f, (const MPI_Status *c_status, MPI_Fint *f_status))
VMPI_API(int, MPI_Status_f2c, (const MPI_Fint *f_status, MPI_Status *c_status))

/* --- The tool information interface, MPI_T (MPI-3.1 14.3) ---------------- */

/* Handles are pointers to opaque structures and the constants MPICH's
 * numbers (its 4.x ABI). Control variables are vmpi's environment knobs,
 * performance variables its channel and queue counters (docs/MPI_T.md). */
typedef struct MPIR_T_enum_s *MPI_T_enum;
typedef struct MPIR_T_cvar_handle_s *MPI_T_cvar_handle;
typedef struct MPIR_T_pvar_handle_s *MPI_T_pvar_handle;
typedef struct MPIR_T_pvar_session_s *MPI_T_pvar_session;

extern VMPI_API_ATTR struct MPIR_T_pvar_handle_s *const MPI_T_PVAR_ALL_HANDLES;

#define MPI_T_ENUM_NULL         ((MPI_T_enum)0)
#define MPI_T_CVAR_HANDLE_NULL  ((MPI_T_cvar_handle)0)
#define MPI_T_PVAR_HANDLE_NULL  ((MPI_T_pvar_handle)0)
#define MPI_T_PVAR_SESSION_NULL ((MPI_T_pvar_session)0)

/* Increasing in this order, as the standard requires. */
enum {
    MPI_T_VERBOSITY_USER_BASIC = 221,
    MPI_T_VERBOSITY_USER_DETAIL,
    MPI_T_VERBOSITY_USER_ALL,
    MPI_T_VERBOSITY_TUNER_BASIC,
    MPI_T_VERBOSITY_TUNER_DETAIL,
    MPI_T_VERBOSITY_TUNER_ALL,
    MPI_T_VERBOSITY_MPIDEV_BASIC,
    MPI_T_VERBOSITY_MPIDEV_DETAIL,
    MPI_T_VERBOSITY_MPIDEV_ALL
};
enum {
    MPI_T_BIND_NO_OBJECT = 9700,
    MPI_T_BIND_MPI_COMM,
    MPI_T_BIND_MPI_DATATYPE,
    MPI_T_BIND_MPI_ERRHANDLER,
    MPI_T_BIND_MPI_FILE,
    MPI_T_BIND_MPI_GROUP,
    MPI_T_BIND_MPI_OP,
    MPI_T_BIND_MPI_REQUEST,
    MPI_T_BIND_MPI_WIN,
    MPI_T_BIND_MPI_MESSAGE,
    MPI_T_BIND_MPI_INFO
};
enum {
    MPI_T_SCOPE_CONSTANT = 60438,
    MPI_T_SCOPE_READONLY,
    MPI_T_SCOPE_LOCAL,
    MPI_T_SCOPE_GROUP,
    MPI_T_SCOPE_GROUP_EQ,
    MPI_T_SCOPE_ALL,
    MPI_T_SCOPE_ALL_EQ
};
enum {
    MPI_T_PVAR_CLASS_STATE = 240,
    MPI_T_PVAR_CLASS_LEVEL,
    MPI_T_PVAR_CLASS_SIZE,
    MPI_T_PVAR_CLASS_PERCENTAGE,
    MPI_T_PVAR_CLASS_HIGHWATERMARK,
    MPI_T_PVAR_CLASS_LOWWATERMARK,
    MPI_T_PVAR_CLASS_COUNTER,
    MPI_T_PVAR_CLASS_AGGREGATE,
    MPI_T_PVAR_CLASS_TIMER,
    MPI_T_PVAR_CLASS_GENERIC
};

VMPI_API(int, MPI_T_init_thread, (int required, int *provided))
VMPI_API(int, MPI_T_finalize, (void))
VMPI_API(int, MPI_T_enum_get_info, (MPI_T_enum enumtype, int *num, char *name, int *name_len))
VMPI_API(int, MPI_T_enum_get_item, (MPI_T_enum enumtype, int indx, int *value, char *name,
                                    int *name_len))
VMPI_API(int, MPI_T_cvar_get_num, (int *num_cvar))
VMPI_API(int, MPI_T_cvar_get_info, (int cvar_index, char *name, int *name_len, int *verbosity,
                                    MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc,
                                    int *desc_len, int *bind, int *scope))
VMPI_API(int, MPI_T_cvar_get_index, (const char *name, int *cvar_index))
VMPI_API(int, MPI_T_cvar_handle_alloc, (int cvar_index, void *obj_handle,
                                        MPI_T_cvar_handle *handle, int *count))
VMPI_API(int, MPI_T_cvar_handle_free, (MPI_T_cvar_handle *handle))
VMPI_API(int, MPI_T_cvar_read, (MPI_T_cvar_handle handle, void *buf))
VMPI_API(int, MPI_T_cvar_write, (MPI_T_cvar_handle handle, const void *buf))
VMPI_API(int, MPI_T_pvar_get_num, (int *num_pvar))
VMPI_API(int, MPI_T_pvar_get_info, (int pvar_index, char *name, int *name_len, int *verbosity,
                                    int *var_class, MPI_Datatype *datatype,
                                    MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind,
                                    int *readonly, int *continuous, int *atomic))
VMPI_API(int, MPI_T_pvar_get_index, (const char *name, int var_class, int *pvar_index))
VMPI_API(int, MPI_T_pvar_session_create, (MPI_T_pvar_session *session))
VMPI_API(int, MPI_T_pvar_session_free, (MPI_T_pvar_session *session))
VMPI_API(int, MPI_T_pvar_handle_alloc, (MPI_T_pvar_session session, int pvar_index,
                                        void *obj_handle, MPI_T_pvar_handle *handle,
                                        int *count))
VMPI_API(int, MPI_T_pvar_handle_free, (MPI_T_pvar_session session, MPI_T_pvar_handle *handle))
VMPI_API(int, MPI_T_pvar_start, (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
VMPI_API(int, MPI_T_pvar_stop, (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
VMPI_API(int, MPI_T_pvar_read, (MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                                void *buf))
VMPI_API(int, MPI_T_pvar_write, (MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                                 const void *buf))
VMPI_API(int, MPI_T_pvar_reset, (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
VMPI_API(int, MPI_T_pvar_readreset, (MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                                     void *buf))
VMPI_API(int, MPI_T_category_get_num, (int *num_cat))
VMPI_API(int, MPI_T_category_get_info, (int cat_index, char *name, int *name_len, char *desc,
                                        int *desc_len, int *num_cvars, int *num_pvars,
                                        int *num_categories))
VMPI_API(int, MPI_T_category_get_index, (const char *name, int *cat_index))
VMPI_API(int, MPI_T_category_get_cvars, (int cat_index, int len, int indices[]))
VMPI_API(int, MPI_T_category_get_pvars, (int cat_index, int len, int indices[]))
VMPI_API(int, MPI_T_category_get_categories, (int cat_index, int len, int indices[]))
VMPI_API(int, MPI_T_category_changed, (int *update_number))

#ifdef __cplusplus
}
#endif

/* MPI-IO, as MPICH's mpi.h includes it. */
#include "mpio.h"

#endif /* VMPI_MPI_H_INCLUDED */
