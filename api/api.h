/* Conventions for the MPI entry points.
 *
 * Every MPI_X is defined as PMPI_X with a weak MPI_X alias (the profiling
 * interface). Each entry point first calls VMPI_ENTER, then checks its
 * arguments and reports a bad one through vmpi_err(), which names the
 * function and the argument and applies the communicator's error handler. */
#ifndef VMPI_API_API_H
#define VMPI_API_API_H

#include "../coll/coll.h"
#include "../comm/comm.h"

/* Defines MPI_name as a weak alias of PMPI_name; used as a declaration,
 * `VMPI_WEAK(Send);`, so tools that read declarations see both names. */
#define VMPI_WEAK(name) \
    extern __typeof__(PMPI_##name) MPI_##name __attribute__((weak, alias("PMPI_" #name)))

_Noreturn void vmpi_api_not_initialized(const char *fname);

static inline int vmpi_api_enter(const char *fname)
{
    if (VMPI_UNLIKELY(vmpi_g.state != 1))
        vmpi_api_not_initialized(fname);
    if (vmpi_cs_depth++ == 0 && VMPI_UNLIKELY(vmpi_cs_on))
        vmpi_cs_begin();
    return 0;
}

static inline void vmpi_api_leave(int *scope)
{
    (void)scope;
    if (--vmpi_cs_depth == 0 &&
        VMPI_UNLIKELY(vmpi_cs_on | vmpi_async_on | (vmpi_async_wanted != 0))) {
        if (!vmpi_cs_held && vmpi_cs_owner && !vmpi_async_wanted && !vmpi_async_on)
            vmpi_cs_owner_leave();
        else
            vmpi_cs_leave();
    }
}

/* MPI calls outside Init..Finalize end the job with a message naming the
 * call (MPI_ERR_OTHER, the fatal path of errors before MPI_Init). The
 * scope variable marks the call as inside MPI until the function returns,
 * by whichever path. */
#define VMPI_ENTER(fname)                                                          \
    __attribute__((cleanup(vmpi_api_leave))) int vmpi_api_scope_ = vmpi_api_enter(fname); \
    (void)vmpi_api_scope_

/* Calls defined on intracommunicators only refuse an intercommunicator. */
#define VMPI_CHECK_INTRA(c, fn)                                                        \
    VMPI_CHECK(!(c)->local, c, MPI_ERR_COMM,                                           \
               "%s: comm is an intercommunicator; this call needs an intracommunicator", fn)

/* group must be a subgroup of c's group, else MPI_ERR_GROUP naming fn
 * (api/intercomm.c). */
int vmpi_api_subgroup(struct vmpi_comm *c, struct vmpi_group *g, const char *fn);

/* Argument check helpers: each returns the error code from the enclosing
 * function when the check fails. */
#define VMPI_CHECK(cond, comm, cls, ...)                    \
    do {                                                    \
        if (VMPI_UNLIKELY(!(cond)))                         \
            return vmpi_err((comm), (cls), __VA_ARGS__);    \
    } while (0)

/* Returns a failed check's error code (its handler already applied). */
#define TRY(call)               \
    do {                        \
        int rc_ = (call);       \
        if (rc_ != MPI_SUCCESS) \
            return rc_;         \
    } while (0)

/* struct vmpi_comm *c for the handle h of argument argname, else
 * MPI_ERR_COMM; COMM_ARG for the usual argument name, comm. */
#define COMM_NAMED_ARG(c, h, fn, argname)                                               \
    struct vmpi_comm *c = vmpi_comm_get(h);                                             \
    VMPI_CHECK(c, NULL, MPI_ERR_COMM, "%s: %s is not a valid communicator (0x%x)", fn, \
               argname, (unsigned)(h))
#define COMM_ARG(c, h, fn) COMM_NAMED_ARG(c, h, fn, "comm")

/* A pointer argument that must not be NULL (MPI_ERR_ARG through comm c). */
#define PTR_ARG(p, c, fn, name) \
    VMPI_CHECK((p) != NULL, c, MPI_ERR_ARG, "%s: %s is NULL", fn, name)

/* The MPI_Info argument of a call that takes hints: MPI_INFO_NULL or a valid
 * info object, else MPI_ERR_INFO. Hints vmpi does not use are ignored, as
 * the standard allows (MPI-3.1 9). */
#define VMPI_CHECK_INFO(info, comm, fname)                                           \
    VMPI_CHECK((info) == MPI_INFO_NULL || vmpi_info_get(info), comm, MPI_ERR_INFO, \
               "%s: info is not a valid info object (%#x)", fname, (unsigned)(info))

#endif
