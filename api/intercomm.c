/* Intercommunicator entry points (MPI-3.1 6.6): argument checks, then
 * comm/inter.c. */
#include "api.h"

#define COMM_ARG(c, h, fn, argname)                                                     \
    struct vmpi_comm *c = vmpi_comm_get(h);                                             \
    VMPI_CHECK(c, NULL, MPI_ERR_COMM, "%s: %s is not a valid communicator (0x%x)", fn, \
               argname, (unsigned)(h))

#define PTR_ARG(p, c, fn, name) \
    VMPI_CHECK((p) != NULL, c, MPI_ERR_ARG, "%s: %s is NULL", fn, name)

/* comm must be an intercommunicator (inter 1) or an intracommunicator. */
#define KIND_ARG(c, inter, fn, argname)                                                      \
    VMPI_CHECK(!(c)->local == !(inter), c, MPI_ERR_COMM, "%s: %s is an %s", fn, argname, \
               (c)->local ? "intercommunicator" : "intracommunicator, not an intercommunicator")

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                          int remote_leader, int tag, MPI_Comm *newintercomm)
{
    static const char fn[] = "MPI_Intercomm_create";
    VMPI_ENTER(fn);
    COMM_ARG(c, local_comm, fn, "local_comm");
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
    COMM_ARG(c, intercomm, fn, "intercomm");
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
    COMM_ARG(c, comm, fn, "comm");
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
    COMM_ARG(c, comm, fn, "comm");
    KIND_ARG(c, 1, fn, "comm");
    PTR_ARG(group, c, fn, "group");
    vmpi_group_retain(c->peers);
    *group = c->peers->handle;
    return MPI_SUCCESS;
}
VMPI_WEAK(Comm_remote_group);
