/*
 * ABI probe: prints "NAME VALUE" for every constant, handle and layout fact
 * that vmpi's mpi.h must share with MPICH's.  It only evaluates constant
 * expressions and calls no MPI function, so it needs an mpi.h on the include
 * path but no MPI library at link time.  tests/abi/check_abi.sh builds it
 * against both headers and diffs the two outputs.
 *
 * Only add names here that both headers are required to define.
 */
#include <mpi.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* integer constants (handles, classes, keyvals, limits); printed in hex so
 * the handle encodings are readable, as unsigned 32-bit patterns */
#define I(name) printf("%s 0x%08x\n", #name, (unsigned)(int)(name))
/* pointer-valued constants */
#define P(name) printf("%s %ld\n", #name, (long)(intptr_t)(name))
/* layout facts */
#define Z(label, value) printf("%s %zu\n", label, (size_t)(value))

/* name of the C integer type an MPI typedef resolves to */
#define CTYPE(x) _Generic((x),                                  \
        int: "int", unsigned: "unsigned", long: "long",         \
        unsigned long: "unsigned long", long long: "long long", \
        unsigned long long: "unsigned long long",               \
        default: "other")
#define T(type) printf("typeof(%s) %s\n", #type, CTYPE((type)0))

int main(void)
{
    /* version: vmpi claims 3.1, MPICH 4.0; print only that both exist */
    printf("MPI_VERSION defined %d\n", MPI_VERSION > 0);
    printf("MPI_SUBVERSION defined %d\n", MPI_SUBVERSION >= 0);

    /* ---- types and layout ---- */
    T(MPI_Comm); T(MPI_Group); T(MPI_Datatype); T(MPI_Op);
    T(MPI_Errhandler); T(MPI_Request); T(MPI_Info); T(MPI_Fint);
    T(MPI_Aint); T(MPI_Offset); T(MPI_Count);

    Z("sizeof(MPI_Aint)", sizeof(MPI_Aint));
    Z("sizeof(MPI_Offset)", sizeof(MPI_Offset));
    Z("sizeof(MPI_Count)", sizeof(MPI_Count));
    Z("sizeof(MPI_Fint)", sizeof(MPI_Fint));
    Z("sizeof(MPI_Status)", sizeof(MPI_Status));
    Z("offsetof(MPI_Status,count_lo)", offsetof(MPI_Status, count_lo));
    Z("offsetof(MPI_Status,count_hi_and_cancelled)",
      offsetof(MPI_Status, count_hi_and_cancelled));
    Z("offsetof(MPI_Status,MPI_SOURCE)", offsetof(MPI_Status, MPI_SOURCE));
    Z("offsetof(MPI_Status,MPI_TAG)", offsetof(MPI_Status, MPI_TAG));
    Z("offsetof(MPI_Status,MPI_ERROR)", offsetof(MPI_Status, MPI_ERROR));

    /* ---- null and predefined handles ---- */
    I(MPI_COMM_NULL); I(MPI_GROUP_NULL); I(MPI_DATATYPE_NULL);
    I(MPI_ERRHANDLER_NULL); I(MPI_OP_NULL); I(MPI_INFO_NULL); I(MPI_INFO_ENV);
    I(MPI_REQUEST_NULL);
    I(MPI_COMM_WORLD); I(MPI_COMM_SELF); I(MPI_GROUP_EMPTY);
    I(MPI_ERRORS_ARE_FATAL); I(MPI_ERRORS_RETURN);

    /* ---- datatypes ---- */
    I(MPI_CHAR); I(MPI_SIGNED_CHAR); I(MPI_UNSIGNED_CHAR); I(MPI_BYTE);
    I(MPI_WCHAR); I(MPI_SHORT); I(MPI_UNSIGNED_SHORT); I(MPI_INT);
    I(MPI_UNSIGNED); I(MPI_LONG); I(MPI_UNSIGNED_LONG);
    I(MPI_LONG_LONG_INT); I(MPI_LONG_LONG); I(MPI_UNSIGNED_LONG_LONG);
    I(MPI_FLOAT); I(MPI_DOUBLE); I(MPI_LONG_DOUBLE); I(MPI_PACKED);
    I(MPI_LB); I(MPI_UB);
    I(MPI_FLOAT_INT); I(MPI_DOUBLE_INT); I(MPI_LONG_INT); I(MPI_SHORT_INT);
    I(MPI_2INT); I(MPI_LONG_DOUBLE_INT);
    I(MPI_INT8_T); I(MPI_INT16_T); I(MPI_INT32_T); I(MPI_INT64_T);
    I(MPI_UINT8_T); I(MPI_UINT16_T); I(MPI_UINT32_T); I(MPI_UINT64_T);
    I(MPI_C_BOOL); I(MPI_C_FLOAT_COMPLEX); I(MPI_C_COMPLEX);
    I(MPI_C_DOUBLE_COMPLEX); I(MPI_C_LONG_DOUBLE_COMPLEX);
    I(MPI_AINT); I(MPI_OFFSET); I(MPI_COUNT);

    /* ---- reduction operations ---- */
    I(MPI_MAX); I(MPI_MIN); I(MPI_SUM); I(MPI_PROD); I(MPI_LAND);
    I(MPI_BAND); I(MPI_LOR); I(MPI_BOR); I(MPI_LXOR); I(MPI_BXOR);
    I(MPI_MINLOC); I(MPI_MAXLOC); I(MPI_REPLACE); I(MPI_NO_OP);

    /* ---- special values ---- */
    I(MPI_ANY_SOURCE); I(MPI_PROC_NULL); I(MPI_ROOT); I(MPI_ANY_TAG);
    I(MPI_UNDEFINED); I(MPI_KEYVAL_INVALID);
    P(MPI_BOTTOM); P(MPI_IN_PLACE); P(MPI_STATUS_IGNORE);
    P(MPI_STATUSES_IGNORE); P(MPI_ERRCODES_IGNORE);
    I(MPI_MAX_PROCESSOR_NAME); I(MPI_MAX_ERROR_STRING);
    I(MPI_MAX_OBJECT_NAME); I(MPI_MAX_LIBRARY_VERSION_STRING);
    I(MPI_MAX_INFO_KEY); I(MPI_MAX_INFO_VAL);
    I(MPI_THREAD_SINGLE); I(MPI_THREAD_FUNNELED); I(MPI_THREAD_SERIALIZED);
    I(MPI_THREAD_MULTIPLE);
    I(MPI_IDENT); I(MPI_CONGRUENT); I(MPI_SIMILAR); I(MPI_UNEQUAL);
    I(MPI_GRAPH); I(MPI_CART); I(MPI_DIST_GRAPH);
    I(MPI_COMM_TYPE_SHARED);

    /* ---- predefined attribute keyvals ---- */
    I(MPI_TAG_UB); I(MPI_HOST); I(MPI_IO); I(MPI_WTIME_IS_GLOBAL);
    I(MPI_UNIVERSE_SIZE); I(MPI_LASTUSEDCODE); I(MPI_APPNUM);

    /* ---- error classes ---- */
    I(MPI_SUCCESS);
    I(MPI_ERR_BUFFER); I(MPI_ERR_COUNT); I(MPI_ERR_TYPE); I(MPI_ERR_TAG);
    I(MPI_ERR_COMM); I(MPI_ERR_RANK); I(MPI_ERR_ROOT); I(MPI_ERR_GROUP);
    I(MPI_ERR_OP); I(MPI_ERR_TOPOLOGY); I(MPI_ERR_DIMS); I(MPI_ERR_ARG);
    I(MPI_ERR_UNKNOWN); I(MPI_ERR_TRUNCATE); I(MPI_ERR_OTHER);
    I(MPI_ERR_INTERN); I(MPI_ERR_IN_STATUS); I(MPI_ERR_PENDING);
    I(MPI_ERR_REQUEST);
    I(MPI_ERR_ACCESS); I(MPI_ERR_AMODE); I(MPI_ERR_BAD_FILE);
    I(MPI_ERR_CONVERSION); I(MPI_ERR_DUP_DATAREP); I(MPI_ERR_FILE_EXISTS);
    I(MPI_ERR_FILE_IN_USE); I(MPI_ERR_FILE);
    I(MPI_ERR_INFO); I(MPI_ERR_INFO_KEY); I(MPI_ERR_INFO_VALUE);
    I(MPI_ERR_INFO_NOKEY); I(MPI_ERR_IO);
    I(MPI_ERR_NAME); I(MPI_ERR_NO_MEM); I(MPI_ERR_NOT_SAME);
    I(MPI_ERR_NO_SPACE); I(MPI_ERR_NO_SUCH_FILE); I(MPI_ERR_PORT);
    I(MPI_ERR_QUOTA); I(MPI_ERR_READ_ONLY); I(MPI_ERR_SERVICE);
    I(MPI_ERR_SPAWN); I(MPI_ERR_UNSUPPORTED_DATAREP);
    I(MPI_ERR_UNSUPPORTED_OPERATION);
    I(MPI_ERR_WIN); I(MPI_ERR_BASE); I(MPI_ERR_LOCKTYPE); I(MPI_ERR_KEYVAL);
    I(MPI_ERR_RMA_CONFLICT); I(MPI_ERR_RMA_SYNC); I(MPI_ERR_SIZE);
    I(MPI_ERR_DISP); I(MPI_ERR_ASSERT); I(MPI_ERR_RMA_RANGE);
    I(MPI_ERR_RMA_ATTACH); I(MPI_ERR_RMA_SHARED); I(MPI_ERR_RMA_FLAVOR);
    I(MPI_T_ERR_MEMORY); I(MPI_T_ERR_NOT_INITIALIZED);
    I(MPI_T_ERR_CANNOT_INIT); I(MPI_T_ERR_INVALID_INDEX);
    I(MPI_T_ERR_INVALID_ITEM); I(MPI_T_ERR_INVALID_HANDLE);
    I(MPI_T_ERR_OUT_OF_HANDLES); I(MPI_T_ERR_OUT_OF_SESSIONS);
    I(MPI_T_ERR_INVALID_SESSION); I(MPI_T_ERR_CVAR_SET_NOT_NOW);
    I(MPI_T_ERR_CVAR_SET_NEVER); I(MPI_T_ERR_PVAR_NO_STARTSTOP);
    I(MPI_T_ERR_PVAR_NO_WRITE); I(MPI_T_ERR_PVAR_NO_ATOMIC);
    I(MPI_T_ERR_INVALID_NAME); I(MPI_T_ERR_INVALID);
    I(MPI_ERR_LASTCODE);

    /* ---- tool interface (MPI_T) ---- */
    Z("sizeof(MPI_T_enum)", sizeof(MPI_T_enum));
    Z("sizeof(MPI_T_pvar_session)", sizeof(MPI_T_pvar_session));
    P(MPI_T_ENUM_NULL); P(MPI_T_CVAR_HANDLE_NULL); P(MPI_T_PVAR_HANDLE_NULL);
    P(MPI_T_PVAR_SESSION_NULL);
    I(MPI_T_VERBOSITY_USER_BASIC); I(MPI_T_VERBOSITY_USER_DETAIL);
    I(MPI_T_VERBOSITY_USER_ALL); I(MPI_T_VERBOSITY_TUNER_BASIC);
    I(MPI_T_VERBOSITY_TUNER_DETAIL); I(MPI_T_VERBOSITY_TUNER_ALL);
    I(MPI_T_VERBOSITY_MPIDEV_BASIC); I(MPI_T_VERBOSITY_MPIDEV_DETAIL);
    I(MPI_T_VERBOSITY_MPIDEV_ALL);
    I(MPI_T_BIND_NO_OBJECT); I(MPI_T_BIND_MPI_COMM); I(MPI_T_BIND_MPI_DATATYPE);
    I(MPI_T_BIND_MPI_ERRHANDLER); I(MPI_T_BIND_MPI_FILE); I(MPI_T_BIND_MPI_GROUP);
    I(MPI_T_BIND_MPI_OP); I(MPI_T_BIND_MPI_REQUEST); I(MPI_T_BIND_MPI_WIN);
    I(MPI_T_BIND_MPI_MESSAGE); I(MPI_T_BIND_MPI_INFO);
    I(MPI_T_SCOPE_CONSTANT); I(MPI_T_SCOPE_READONLY); I(MPI_T_SCOPE_LOCAL);
    I(MPI_T_SCOPE_GROUP); I(MPI_T_SCOPE_GROUP_EQ); I(MPI_T_SCOPE_ALL); I(MPI_T_SCOPE_ALL_EQ);
    I(MPI_T_PVAR_CLASS_STATE); I(MPI_T_PVAR_CLASS_LEVEL); I(MPI_T_PVAR_CLASS_SIZE);
    I(MPI_T_PVAR_CLASS_PERCENTAGE); I(MPI_T_PVAR_CLASS_HIGHWATERMARK);
    I(MPI_T_PVAR_CLASS_LOWWATERMARK); I(MPI_T_PVAR_CLASS_COUNTER);
    I(MPI_T_PVAR_CLASS_AGGREGATE); I(MPI_T_PVAR_CLASS_TIMER); I(MPI_T_PVAR_CLASS_GENERIC);

    /* ---- MPI-IO (mpio.h, included by mpi.h) ---- */
    Z("sizeof(MPI_File)", sizeof(MPI_File));
    P(MPI_FILE_NULL);
    I(MPI_MODE_CREATE); I(MPI_MODE_RDONLY); I(MPI_MODE_WRONLY); I(MPI_MODE_RDWR);
    I(MPI_MODE_DELETE_ON_CLOSE); I(MPI_MODE_UNIQUE_OPEN); I(MPI_MODE_EXCL);
    I(MPI_MODE_APPEND); I(MPI_MODE_SEQUENTIAL); I(MPI_DISPLACEMENT_CURRENT);
    I(MPI_SEEK_SET); I(MPI_SEEK_CUR); I(MPI_SEEK_END); I(MPI_MAX_DATAREP_STRING);

    return 0;
}
