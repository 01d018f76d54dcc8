/* What the datatype entry points (api/type*.c) share: the datatype
 * argument check and the hand-out of a new type with its envelope. */
#ifndef VMPI_API_TYPE_ARGS_H
#define VMPI_API_TYPE_ARGS_H

#include "api.h"

#include "../core/dtype_impl.h"

/* Reports an invalid datatype handle h given as argument arg of fn. */
int vmpi_api_bad_type(struct vmpi_comm *comm, const char *fn, const char *arg,
                      MPI_Datatype h);

/* Declares dt as the datatype behind handle h, or returns MPI_ERR_TYPE. */
#define GET_TYPE(dt, h, comm, fn, arg)                                          \
    struct vmpi_dtype *dt = vmpi_dtype_get(h);                                  \
    if (VMPI_UNLIKELY(!dt))                                                     \
        return vmpi_api_bad_type(comm, fn, arg, h)

#define CHECK_PTR(p, fn)                                                        \
    VMPI_CHECK((p) != NULL, NULL, MPI_ERR_ARG, fn ": " #p " is NULL")

/* Given rc from a constructor that made dt: records how it was made (a)
 * and hands it out in *newtype, or reports why it could not be made. */
int vmpi_api_type_made(int rc, struct vmpi_dtype *dt, const struct vmpi_dtype_args *a,
                       MPI_Datatype *newtype, const char *fn);

#endif
