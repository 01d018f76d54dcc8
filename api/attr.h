/* What the entry points of other objects call of caching (api/attr.c):
 * user attributes of windows (MPI_Win_get_attr answers the predefined
 * ones itself), and the attribute steps of MPI_Type_dup, MPI_Type_free
 * and MPI_Win_free. Each reports its own errors (vmpi_err). */
#ifndef VMPI_API_ATTR_H
#define VMPI_API_ATTR_H

#include <mpi.h>

int vmpi_api_attr_get(const char *fn, int kind, int obj, int keyval, void *attribute_val,
                      int *flag);
/* After a successful MPI_Type_dup: copies the attributes; on a failed copy
 * callback the new type is freed again and *newtype is MPI_DATATYPE_NULL. */
int vmpi_api_type_dup_attrs(MPI_Datatype oldtype, MPI_Datatype *newtype);
/* After a successful MPI_Comm_dup(_with_info): copies the attributes; on
 * a failed copy callback n is freed again. */
struct vmpi_comm;
int vmpi_api_comm_dup_attrs(struct vmpi_comm *c, struct vmpi_comm *n, const char *fn);
/* Before freeing a datatype or window: runs the delete callbacks. */
int vmpi_api_free_attrs(const char *fn, int kind, int obj);

#endif
