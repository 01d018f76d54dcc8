/* Communicator entry points (intracommunicators only) and names: argument
 * checks, then core/comm.c. Attributes are api/attr.c's, error handlers
 * api/errhan.c's. */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "attr.h"

static MPI_Comm handle_of(const struct vmpi_comm *c)
{
    return c ? c->handle : MPI_COMM_NULL;
}

int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    VMPI_ENTER("MPI_Comm_size");
    COMM_NAMED_ARG(c, comm, "MPI_Comm_size", "comm");
    PTR_ARG(size, c, "MPI_Comm_size", "size");
    *size = c->size;
    return MPI_SUCCESS;
}
VMPI_WEAK(Comm_size);

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    VMPI_ENTER("MPI_Comm_rank");
    COMM_NAMED_ARG(c, comm, "MPI_Comm_rank", "comm");
    PTR_ARG(rank, c, "MPI_Comm_rank", "rank");
    *rank = c->rank;
    return MPI_SUCCESS;
}
VMPI_WEAK(Comm_rank);

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    static const char fn[] = "MPI_Comm_compare";
    VMPI_ENTER(fn);
    COMM_NAMED_ARG(a, comm1, fn, "comm1");
    COMM_NAMED_ARG(b, comm2, fn, "comm2");
    PTR_ARG(result, a, fn, "result");
    *result = vmpi_comm_compare(a, b);
    return MPI_SUCCESS;
}
VMPI_WEAK(Comm_compare);

/* vmpi has intracommunicators only. */
int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    VMPI_ENTER("MPI_Comm_test_inter");
    COMM_NAMED_ARG(c, comm, "MPI_Comm_test_inter", "comm");
    PTR_ARG(flag, c, "MPI_Comm_test_inter", "flag");
    *flag = c->local != NULL;
    return MPI_SUCCESS;
}
VMPI_WEAK(Comm_test_inter);

/* The communicator's own group, with one more reference. */
int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    VMPI_ENTER("MPI_Comm_group");
    COMM_NAMED_ARG(c, comm, "MPI_Comm_group", "comm");
    PTR_ARG(group, c, "MPI_Comm_group", "group");
    vmpi_group_retain(c->group);
    *group = c->group->handle;
    return MPI_SUCCESS;
}
VMPI_WEAK(Comm_group);

/* MPI_Comm_dup and MPI_Comm_dup_with_info (whose hints vmpi drops, see
 * below; MPI_INFO_NULL for the plain dup). */
static int comm_dup(const char *fn, MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    COMM_NAMED_ARG(c, comm, fn, "comm");
    VMPI_CHECK_INFO(info, c, fn);
    PTR_ARG(newcomm, c, fn, "newcomm");
    struct vmpi_comm *n;
    int rc = vmpi_comm_dup(c, &n);
    if (rc != MPI_SUCCESS)
        return vmpi_err_handle(c, rc);
    rc = vmpi_api_comm_dup_attrs(c, n, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    *newcomm = n->handle;
    return MPI_SUCCESS;
}

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    VMPI_ENTER("MPI_Comm_dup");
    return comm_dup("MPI_Comm_dup", comm, MPI_INFO_NULL, newcomm);
}
VMPI_WEAK(Comm_dup);

/* Communicator hints: vmpi uses none, which MPI-3.1 6.4.4 allows, so a
 * hint is checked and dropped, and MPI_Comm_get_info reports the hints in
 * use: none, as a new empty object the caller frees. */
int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    VMPI_ENTER("MPI_Comm_dup_with_info");
    return comm_dup("MPI_Comm_dup_with_info", comm, info, newcomm);
}
VMPI_WEAK(Comm_dup_with_info);

int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    static const char fn[] = "MPI_Comm_set_info";
    VMPI_ENTER(fn);
    COMM_NAMED_ARG(c, comm, fn, "comm");
    VMPI_CHECK_INFO(info, c, fn);
    return MPI_SUCCESS;
}
VMPI_WEAK(Comm_set_info);

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    static const char fn[] = "MPI_Comm_get_info";
    VMPI_ENTER(fn);
    COMM_NAMED_ARG(c, comm, fn, "comm");
    PTR_ARG(info_used, c, fn, "info_used");
    struct vmpi_info *i = vmpi_info_new();
    VMPI_CHECK(i, c, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    *info_used = i->handle;
    return MPI_SUCCESS;
}
VMPI_WEAK(Comm_get_info);

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_split";
    VMPI_ENTER(fn);
    COMM_NAMED_ARG(c, comm, fn, "comm");
    PTR_ARG(newcomm, c, fn, "newcomm");
    VMPI_CHECK(color >= 0 || color == MPI_UNDEFINED, c, MPI_ERR_ARG,
               "%s: color = %d is neither non-negative nor MPI_UNDEFINED", fn, color);
    struct vmpi_comm *n;
    int rc = vmpi_comm_split(c, color, key, &n);
    if (rc != MPI_SUCCESS)
        return vmpi_err_handle(c, rc);
    *newcomm = handle_of(n);
    return MPI_SUCCESS;
}
VMPI_WEAK(Comm_split);

int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                         MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_split_type";
    VMPI_ENTER(fn);
    COMM_NAMED_ARG(c, comm, fn, "comm");
    VMPI_CHECK_INFO(info, c, fn); /* no hint is used */
    PTR_ARG(newcomm, c, fn, "newcomm");
    VMPI_CHECK(split_type == MPI_COMM_TYPE_SHARED || split_type == MPI_UNDEFINED, c,
               MPI_ERR_ARG,
               "%s: split_type = %d is neither MPI_COMM_TYPE_SHARED nor MPI_UNDEFINED", fn,
               split_type);
    struct vmpi_comm *n;
    int rc = vmpi_comm_split_type(c, split_type, key, &n);
    if (rc != MPI_SUCCESS)
        return vmpi_err_handle(c, rc);
    *newcomm = handle_of(n);
    return MPI_SUCCESS;
}
VMPI_WEAK(Comm_split_type);

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_create";
    VMPI_ENTER(fn);
    COMM_NAMED_ARG(c, comm, fn, "comm");
    PTR_ARG(newcomm, c, fn, "newcomm");
    struct vmpi_group *g = vmpi_group_get(group);
    VMPI_CHECK(g, c, MPI_ERR_GROUP, "%s: group is not a valid group (0x%x)", fn,
               (unsigned)group);
    int rc = vmpi_api_subgroup(c, g, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    struct vmpi_comm *n;
    rc = vmpi_comm_create(c, g, &n);
    if (rc != MPI_SUCCESS)
        return vmpi_err_handle(c, rc);
    *newcomm = handle_of(n);
    return MPI_SUCCESS;
}
VMPI_WEAK(Comm_create);

int PMPI_Comm_free(MPI_Comm *comm)
{
    static const char fn[] = "MPI_Comm_free";
    VMPI_ENTER(fn);
    PTR_ARG(comm, NULL, fn, "comm");
    COMM_NAMED_ARG(c, *comm, fn, "*comm");
    VMPI_CHECK(*comm != MPI_COMM_WORLD && *comm != MPI_COMM_SELF, c, MPI_ERR_COMM,
               "%s: %s cannot be freed", fn,
               *comm == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : "MPI_COMM_SELF");
    /* The delete callbacks see the communicator still valid; one that
     * fails keeps it (MPI-3.1 6.7.2). */
    int rc = vmpi_api_free_attrs(fn, VMPI_ATTR_COMM, *comm);
    if (rc != MPI_SUCCESS)
        return rc;
    vmpi_comm_free(c);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}
VMPI_WEAK(Comm_free);

int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
    static const char fn[] = "MPI_Comm_set_name";
    VMPI_ENTER(fn);
    COMM_NAMED_ARG(c, comm, fn, "comm");
    PTR_ARG(comm_name, c, fn, "comm_name");
    size_t n = strnlen(comm_name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(c->name, comm_name, n);
    c->name[n] = '\0';
    return MPI_SUCCESS;
}
VMPI_WEAK(Comm_set_name);

int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
    static const char fn[] = "MPI_Comm_get_name";
    VMPI_ENTER(fn);
    COMM_NAMED_ARG(c, comm, fn, "comm");
    PTR_ARG(comm_name, c, fn, "comm_name");
    PTR_ARG(resultlen, c, fn, "resultlen");
    size_t n = strlen(c->name);
    memcpy(comm_name, c->name, n + 1);
    *resultlen = (int)n;
    return MPI_SUCCESS;
}
VMPI_WEAK(Comm_get_name);
