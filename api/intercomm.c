/* Constructors whose collective is not one intracommunicator: the
 * intercommunicator entry points (MPI-3.1 6.6, comm/inter.c) and
 * MPI_Comm_create_group (6.4.2, comm/group.c); argument checks, then comm/. */
#include <stdlib.h>

#include "api.h"

/* comm must be an intercommunicator (inter 1) or an intracommunicator. */
#define KIND_ARG(c, inter, fn, argname)                                                      \
    VMPI_CHECK(!(c)->local == !(inter), c, MPI_ERR_COMM, "%s: %s is an %s", fn, argname, \
               (c)->local ? "intercommunicator" : "intracommunicator, not an intercommunicator")

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                          int remote_leader, int tag, MPI_Comm *newintercomm)
{
    static const char fn[] = "MPI_Intercomm_create";
    VMPI_ENTER(fn);
    COMM_NAMED_ARG(c, local_comm, fn, "local_comm");
    KIND_ARG(c, 0, fn, "local_comm");
    PTR_ARG(newintercomm, c, fn, "newintercomm");
    VMPI_CHECK(local_leader >= 0 && local_leader < c->size, c, MPI_ERR_RANK,
               "%s: local_leader = %d is not a rank of local_comm (size %d)", fn, local_leader,
               c->size);
    struct vmpi_comm *peer = NULL;
    if (c->rank == local_leader) {
        peer = vmpi_comm_get(peer_comm);
        VMPI_CHECK(peer, c, MPI_ERR_COMM, "%s: peer_comm is not a valid communicator (0x%x)",
                   fn, (unsigned)peer_comm);
        VMPI_CHECK(remote_leader >= 0 && remote_leader < peer->peers->size, c, MPI_ERR_RANK,
                   "%s: remote_leader = %d is not a rank of peer_comm (size %d)", fn,
                   remote_leader, peer->peers->size);
        VMPI_CHECK(peer->local || remote_leader != peer->rank, c, MPI_ERR_RANK,
                   "%s: remote_leader = %d is the local leader itself: the groups must be "
                   "disjoint", fn, remote_leader);
        VMPI_CHECK(tag >= 0 && tag <= VMPI_TAG_UB, c, MPI_ERR_TAG,
                   "%s: tag = %d is not in 0..MPI_TAG_UB", fn, tag);
    }
    struct vmpi_comm *n;
    int rc = vmpi_comm_intercomm_create(c, local_leader, peer, remote_leader, tag, &n);
    if (rc != MPI_SUCCESS)
        return vmpi_err_handle(c, rc);
    *newintercomm = n->handle;
    return MPI_SUCCESS;
}
VMPI_WEAK(Intercomm_create);

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    static const char fn[] = "MPI_Intercomm_merge";
    VMPI_ENTER(fn);
    COMM_NAMED_ARG(c, intercomm, fn, "intercomm");
    KIND_ARG(c, 1, fn, "intercomm");
    PTR_ARG(newintracomm, c, fn, "newintracomm");
    struct vmpi_comm *n;
    int rc = vmpi_comm_intercomm_merge(c, high, &n);
    if (rc != MPI_SUCCESS)
        return vmpi_err_handle(c, rc);
    *newintracomm = n->handle;
    return MPI_SUCCESS;
}
VMPI_WEAK(Intercomm_merge);

int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    static const char fn[] = "MPI_Comm_remote_size";
    VMPI_ENTER(fn);
    COMM_NAMED_ARG(c, comm, fn, "comm");
    KIND_ARG(c, 1, fn, "comm");
    PTR_ARG(size, c, fn, "size");
    *size = c->peers->size;
    return MPI_SUCCESS;
}
VMPI_WEAK(Comm_remote_size);

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    static const char fn[] = "MPI_Comm_remote_group";
    VMPI_ENTER(fn);
    COMM_NAMED_ARG(c, comm, fn, "comm");
    KIND_ARG(c, 1, fn, "comm");
    PTR_ARG(group, c, fn, "group");
    vmpi_group_retain(c->peers);
    *group = c->peers->handle;
    return MPI_SUCCESS;
}
VMPI_WEAK(Comm_remote_group);

int vmpi_api_subgroup(struct vmpi_comm *c, struct vmpi_group *g, const char *fn)
{
    if (g->size == 0)
        return MPI_SUCCESS;
    int scratch[64], k;
    int *out = g->size <= 64 ? scratch : malloc(sizeof(int) * (size_t)g->size);
    if (!out)
        return vmpi_err(c, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    vmpi_group_difference(g->world, g->size, c->group->world, c->group->size, out, &k);
    int stray = k > 0 ? out[0] : -1;
    if (out != scratch)
        free(out);
    VMPI_CHECK(k == 0, c, MPI_ERR_GROUP,
               "%s: group is not a subgroup of comm's group (world rank %d is not in comm)", fn,
               stray);
    return MPI_SUCCESS;
}

/* A process outside the group gets MPI_COMM_NULL at once, as in MPICH. */
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_create_group";
    VMPI_ENTER(fn);
    COMM_NAMED_ARG(c, comm, fn, "comm");
    KIND_ARG(c, 0, fn, "comm");
    PTR_ARG(newcomm, c, fn, "newcomm");
    struct vmpi_group *g = vmpi_group_get(group);
    VMPI_CHECK(g, c, MPI_ERR_GROUP, "%s: group is not a valid group (0x%x)", fn,
               (unsigned)group);
    VMPI_CHECK(tag >= 0 && tag <= VMPI_TAG_UB, c, MPI_ERR_TAG,
               "%s: tag = %d is not in 0..MPI_TAG_UB", fn, tag);
    int rc = vmpi_api_subgroup(c, g, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    struct vmpi_comm *n;
    rc = vmpi_comm_create_group(c, g, tag, &n);
    if (rc != MPI_SUCCESS)
        return vmpi_err_handle(c, rc);
    *newcomm = n ? n->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}
VMPI_WEAK(Comm_create_group);
