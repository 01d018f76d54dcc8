/* Environment: init and finalize, time, versions, errors, memory. */
#include "api.h"
#include "../io/io.h"
#include "../locality/locality.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_t main_thread;

/* Errors outside Init..Finalize take the fatal path: no communicator
 * exists whose handler could say otherwise (MPI_ERRORS_ARE_FATAL applies,
 * as MPI-4 states); the job ends with the error class as its status. */
_Noreturn void vmpi_api_not_initialized(const char *fname)
{
    vmpi_fatal_status(MPI_ERR_OTHER, "%s called %s", fname,
                      vmpi_g.state == 0 ? "before MPI_Init" : "after MPI_Finalize");
}

static int init_common(const char *fname, int *argc, char ***argv, int required,
                       int *provided)
{
    if (vmpi_g.state != 0)
        vmpi_fatal_status(MPI_ERR_OTHER, "%s called %s", fname,
                          vmpi_g.state == 1 ? "twice" : "after MPI_Finalize");
    main_thread = pthread_self();
    int rc = vmpi_core_init(required, provided);
    vmpi_info_env_init(argc ? *argc : 0, argv ? *argv : NULL, required);
    vmpi_coll_init();
    if (rc == MPI_SUCCESS)
        rc = vmpi_dyn_init();
    return rc;
}

int PMPI_Init(int *argc, char ***argv)
{
    return init_common("MPI_Init", argc, argv, MPI_THREAD_SINGLE, NULL);
}
VMPI_WEAK(Init);

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (!provided)
        vmpi_fatal_status(MPI_ERR_ARG, "MPI_Init_thread: provided is NULL");
    if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
        vmpi_fatal_status(MPI_ERR_ARG,
                          "MPI_Init_thread: required level %d is not one of MPI_THREAD_SINGLE "
                          "(%d), FUNNELED, SERIALIZED, MULTIPLE (%d)",
                          required, MPI_THREAD_SINGLE, MPI_THREAD_MULTIPLE);
    return init_common("MPI_Init_thread", argc, argv, required, provided);
}
VMPI_WEAK(Init_thread);

int PMPI_Initialized(int *flag)
{
    if (!flag)
        return MPI_ERR_ARG;
    *flag = vmpi_g.state != 0;
    return MPI_SUCCESS;
}
VMPI_WEAK(Initialized);

int PMPI_Finalized(int *flag)
{
    if (!flag)
        return MPI_ERR_ARG;
    *flag = vmpi_g.state == 2;
    return MPI_SUCCESS;
}
VMPI_WEAK(Finalized);

int PMPI_Finalize(void)
{
    VMPI_ENTER("MPI_Finalize");
    /* First, while all of MPI still works: MPI_COMM_SELF's attributes
     * (MPI-3.1 8.7.1), then MPI_COMM_WORLD's. Then a barrier: a receive
     * the program freed before its message came (MPI_Request_free of an
     * MPI_Irecv) must still take it, and its sender may be waiting for
     * that in MPI_Wait. */
    vmpi_attr_finalize_comms();
    vmpi_dyn_finalize();
    vmpi_io_tp_finalize();
    int rc = vmpi_coll_barrier(vmpi_g.world);
    if (rc != MPI_SUCCESS)
        return vmpi_err_handle(vmpi_g.world, rc);
    return vmpi_core_finalize();
}
VMPI_WEAK(Finalize);

/* Takes no lock: another thread may be blocked inside MPI for good. */
int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    if (vmpi_g.state != 1)
        vmpi_api_not_initialized("MPI_Abort");
    (void)comm; /* vmpi aborts the whole job, as the standard allows */
    vmpi_fatal_status(errorcode, "MPI_Abort(errorcode %d) called", errorcode);
}
VMPI_WEAK(Abort);

double PMPI_Wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
VMPI_WEAK(Wtime);

double PMPI_Wtick(void)
{
    struct timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
VMPI_WEAK(Wtick);

int PMPI_Get_processor_name(char *name, int *resultlen)
{
    VMPI_ENTER("MPI_Get_processor_name");
    VMPI_CHECK(name && resultlen, NULL, MPI_ERR_ARG,
               "MPI_Get_processor_name: name or resultlen is NULL");
    if (gethostname(name, MPI_MAX_PROCESSOR_NAME))
        strcpy(name, "unknown");
    name[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}
VMPI_WEAK(Get_processor_name);

int PMPI_Get_version(int *version, int *subversion)
{
    if (!version || !subversion)
        return MPI_ERR_ARG;
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}
VMPI_WEAK(Get_version);

/* vmpi's version (CMake's project version, VMPI_VERSION), the channels of
 * the build and, once MPI_Init has run, the ones this rank set up (the
 * locality layer's description), and libfabric: the network channel loads
 * it with dlopen only when a job needs the network, so the version of the
 * headers it was built against is what is known here. May be called before
 * MPI_Init (MPI-3.1 8.7). */
int PMPI_Get_library_version(char *version, int *resultlen)
{
    if (!version || !resultlen)
        return MPI_ERR_ARG;
    char chans[1024];
    vmpi_locality_describe(chans, sizeof chans);
    int n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                     "vmpi %s (MPI %d.%d, MPICH ABI); %s; libfabric: loaded at run time when "
                     "the job needs the network, built against %s",
                     VMPI_VERSION, MPI_VERSION, MPI_SUBVERSION, chans, VMPI_LIBFABRIC_BUILD);
    *resultlen = n < MPI_MAX_LIBRARY_VERSION_STRING ? n : MPI_MAX_LIBRARY_VERSION_STRING - 1;
    return MPI_SUCCESS;
}
VMPI_WEAK(Get_library_version);

/* Profiling control (MPI-3.1 14.2.4). vmpi has no profiling levels of its
 * own, so every level is accepted and changes nothing, which the standard
 * allows ("MPI libraries themselves make no use of this routine"); the call
 * exists for tools that intercept it through the profiling interface. */
int PMPI_Pcontrol(const int level, ...)
{
    VMPI_ENTER("MPI_Pcontrol");
    (void)level;
    return MPI_SUCCESS;
}
VMPI_WEAK(Pcontrol);

int PMPI_Query_thread(int *provided)
{
    VMPI_ENTER("MPI_Query_thread");
    VMPI_CHECK(provided, NULL, MPI_ERR_ARG, "MPI_Query_thread: provided is NULL");
    *provided = vmpi_g.thread_level;
    return MPI_SUCCESS;
}
VMPI_WEAK(Query_thread);

int PMPI_Is_thread_main(int *flag)
{
    VMPI_ENTER("MPI_Is_thread_main");
    VMPI_CHECK(flag, NULL, MPI_ERR_ARG, "MPI_Is_thread_main: flag is NULL");
    *flag = pthread_equal(main_thread, pthread_self()) != 0;
    return MPI_SUCCESS;
}
VMPI_WEAK(Is_thread_main);

/* Short descriptions of the error classes, indexed by class. */
static const char *const class_text[] = {
    [MPI_SUCCESS] = "no error",
    [MPI_ERR_BUFFER] = "invalid buffer pointer",
    [MPI_ERR_COUNT] = "invalid count argument",
    [MPI_ERR_TYPE] = "invalid datatype",
    [MPI_ERR_TAG] = "invalid tag",
    [MPI_ERR_COMM] = "invalid communicator",
    [MPI_ERR_RANK] = "invalid rank",
    [MPI_ERR_ROOT] = "invalid root",
    [MPI_ERR_GROUP] = "invalid group",
    [MPI_ERR_OP] = "invalid reduce operation",
    [MPI_ERR_TOPOLOGY] = "invalid topology",
    [MPI_ERR_DIMS] = "invalid dimension argument",
    [MPI_ERR_ARG] = "invalid argument",
    [MPI_ERR_UNKNOWN] = "unknown error",
    [MPI_ERR_TRUNCATE] = "message truncated",
    [MPI_ERR_OTHER] = "other error",
    [MPI_ERR_INTERN] = "internal error",
    [MPI_ERR_IN_STATUS] = "error code is in status",
    [MPI_ERR_PENDING] = "pending request",
    [MPI_ERR_REQUEST] = "invalid request",
    [MPI_ERR_INFO] = "invalid info object",
    [MPI_ERR_INFO_KEY] = "invalid info key",
    [MPI_ERR_INFO_VALUE] = "invalid info value",
    [MPI_ERR_INFO_NOKEY] = "info key not found",
    [MPI_ERR_KEYVAL] = "invalid keyval",
    [MPI_ERR_NO_MEM] = "out of memory",
    [MPI_ERR_SIZE] = "invalid size",
};

int PMPI_Error_class(int errorcode, int *errorclass)
{
    if (!errorclass || errorcode < 0)
        return MPI_ERR_ARG;
    /* The class bits stay valid after the code's message slot is reused;
     * user codes know their class (core/err.c). */
    *errorclass = vmpi_err_class_of(errorcode);
    if (*errorclass < 0 || (*errorclass > MPI_T_ERR_INVALID && !(*errorclass & VMPI_ERR_DYN)))
        return MPI_ERR_ARG;
    return MPI_SUCCESS;
}
VMPI_WEAK(Error_class);

int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    if (!string || !resultlen || errorcode < 0)
        return MPI_ERR_ARG;
    int cls = vmpi_err_class_of(errorcode);
    if (cls < 0)
        return MPI_ERR_ARG;
    const char *t = errorcode & VMPI_ERR_DYN ? vmpi_err_dyn_text(errorcode)
                                             : vmpi_err_text(errorcode);
    if (!t && cls < (int)(sizeof class_text / sizeof *class_text))
        t = class_text[cls];
    if (!t) {
        if (errorcode > MPI_ERR_LASTCODE || cls > MPI_ERR_LASTCODE)
            return MPI_ERR_ARG;
        t = "error";
    }
    int n = snprintf(string, MPI_MAX_ERROR_STRING, "%s", t);
    *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
    return MPI_SUCCESS;
}
VMPI_WEAK(Error_string);

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    VMPI_ENTER("MPI_Alloc_mem");
    VMPI_CHECK(size >= 0, NULL, MPI_ERR_SIZE, "MPI_Alloc_mem: size %ld is negative",
               (long)size);
    VMPI_CHECK_INFO(info, NULL, "MPI_Alloc_mem"); /* no hint is used */
    VMPI_CHECK(baseptr, NULL, MPI_ERR_ARG, "MPI_Alloc_mem: baseptr is NULL");
    /* Memory in the host region lets another VM's rank copy a message out
     * of it directly (channel/ivshmem/). */
    void *p = vmpi_locality_mem_alloc((size_t)size);
    /* Cache-line alignment keeps rings and pipelines on whole lines. */
    if (!p && posix_memalign(&p, VMPI_CACHELINE, size ? (size_t)size : 1))
        return vmpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Alloc_mem: cannot allocate %ld bytes",
                        (long)size);
    memcpy(baseptr, &p, sizeof p);
    return MPI_SUCCESS;
}
VMPI_WEAK(Alloc_mem);

int PMPI_Free_mem(void *base)
{
    VMPI_ENTER("MPI_Free_mem");
    if (!vmpi_locality_mem_free(base))
        free(base);
    return MPI_SUCCESS;
}
VMPI_WEAK(Free_mem);
