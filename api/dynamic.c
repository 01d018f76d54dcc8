/* Process creation and management (MPI-3.1 chapter 10): argument checks,
 * then comm/dynamic.c; the name service is the process manager's. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "../pmi/pmi.h"

#define PORT_ARG(p, c, fn)                                                                  \
    VMPI_CHECK((p) && strnlen(p, MPI_MAX_PORT_NAME) < MPI_MAX_PORT_NAME, c, MPI_ERR_PORT, \
               "%s: port_name is NULL or longer than MPI_MAX_PORT_NAME", fn)

/* A service name travels as one word of the process manager's protocol. */
#define SERVICE_ARG(s, fn)                                                                    \
    VMPI_CHECK((s) && *(s) && strlen(s) < 256 && !strpbrk(s, " =\n;"), NULL, MPI_ERR_SERVICE, \
               "%s: service_name is NULL, empty, longer than 255 characters or holds a "       \
               "space, '=', ';' or a newline",                                                 \
               fn)

static int accept_or_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                             MPI_Comm *newcomm, bool accepting, const char *fn)
{
    COMM_ARG(c, comm, fn);
    VMPI_CHECK_INTRA(c, fn);
    PTR_ARG(newcomm, c, fn, "newcomm");
    VMPI_CHECK(root >= 0 && root < c->size, c, MPI_ERR_ROOT,
               "%s: root = %d is not a rank of comm (size %d)", fn, root, c->size);
    if (c->rank == root) {
        PORT_ARG(port_name, c, fn);
        VMPI_CHECK_INFO(info, c, fn);
    }
    struct vmpi_comm *n;
    int rc = accepting ? vmpi_dyn_accept(port_name, root, c, &n)
                       : vmpi_dyn_connect(port_name, root, c, &n);
    if (rc != MPI_SUCCESS)
        return vmpi_err_handle(c, rc);
    *newcomm = n->handle;
    return MPI_SUCCESS;
}

int PMPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                     MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_accept";
    VMPI_ENTER(fn);
    return accept_or_connect(port_name, info, root, comm, newcomm, true, fn);
}
VMPI_WEAK(Comm_accept);

int PMPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                      MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_connect";
    VMPI_ENTER(fn);
    return accept_or_connect(port_name, info, root, comm, newcomm, false, fn);
}
VMPI_WEAK(Comm_connect);

int PMPI_Open_port(MPI_Info info, char *port_name)
{
    static const char fn[] = "MPI_Open_port";
    VMPI_ENTER(fn);
    VMPI_CHECK_INFO(info, NULL, fn);
    PTR_ARG(port_name, NULL, fn, "port_name");
    return vmpi_dyn_open_port(port_name);
}
VMPI_WEAK(Open_port);

int PMPI_Close_port(const char *port_name)
{
    static const char fn[] = "MPI_Close_port";
    VMPI_ENTER(fn);
    PORT_ARG(port_name, NULL, fn);
    return vmpi_dyn_close_port(port_name);
}
VMPI_WEAK(Close_port);

int PMPI_Comm_disconnect(MPI_Comm *comm)
{
    static const char fn[] = "MPI_Comm_disconnect";
    VMPI_ENTER(fn);
    PTR_ARG(comm, NULL, fn, "comm");
    COMM_ARG(c, *comm, fn);
    VMPI_CHECK(c != vmpi_g.world && *comm != MPI_COMM_SELF, c, MPI_ERR_COMM,
               "%s: MPI_COMM_WORLD and MPI_COMM_SELF cannot be disconnected", fn);
    int rc = vmpi_dyn_disconnect(c);
    vmpi_comm_free(c);
    *comm = MPI_COMM_NULL;
    return rc == MPI_SUCCESS ? rc : vmpi_err_handle(NULL, rc);
}
VMPI_WEAK(Comm_disconnect);

int PMPI_Comm_get_parent(MPI_Comm *parent)
{
    static const char fn[] = "MPI_Comm_get_parent";
    VMPI_ENTER(fn);
    PTR_ARG(parent, NULL, fn, "parent");
    struct vmpi_comm *p = vmpi_dyn_parent();
    /* Freed by the program: MPI_COMM_NULL from then on. */
    *parent = p && vmpi_comm_get(p->handle) == p ? p->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}
VMPI_WEAK(Comm_get_parent);

/* What the root passes to the process manager; the arrays point into the
 * caller's arguments and info objects. */
static void spawn_free(struct vmpi_pmi_spawn *sp)
{
    for (int i = 0; sp->keys && i < sp->count; i++) {
        free(sp->keys[i]);
        free(sp->vals[i]);
    }
    free(sp->keys);
    free(sp->vals);
    free((void *)sp->ninfo);
}

static int spawn_args(struct vmpi_comm *c, int count, char *cmds[], char **argvs[],
                      const int maxprocs[], const MPI_Info infos[], struct vmpi_pmi_spawn *sp,
                      const char *fn)
{
    VMPI_CHECK(count > 0, c, MPI_ERR_ARG, "%s: count = %d must be positive", fn, count);
    PTR_ARG(cmds, c, fn, "array_of_commands");
    PTR_ARG(maxprocs, c, fn, "array_of_maxprocs");
    long total = 0;
    for (int i = 0; i < count; i++) {
        VMPI_CHECK(cmds[i] && *cmds[i], c, MPI_ERR_SPAWN, "%s: command %d is NULL or empty", fn,
                   i);
        VMPI_CHECK(maxprocs[i] >= 0, c, MPI_ERR_ARG, "%s: maxprocs = %d of command %d is "
                   "negative", fn, maxprocs[i], i);
        VMPI_CHECK(!infos || infos[i] == MPI_INFO_NULL || vmpi_info_get(infos[i]), c,
                   MPI_ERR_INFO, "%s: the info of command %d is not a valid info object", fn,
                   i);
        total += maxprocs[i];
    }
    VMPI_CHECK(total > 0 && total < (1 << 20), c, MPI_ERR_SPAWN,
               "%s: %ld processes asked for (1 to 1048575)", fn, total);
    int *ninfo = calloc((size_t)count, sizeof *ninfo);
    *sp = (struct vmpi_pmi_spawn){.count = count, .cmds = cmds, .argvs = argvs,
                                  .maxprocs = maxprocs, .ninfo = ninfo,
                                  .keys = calloc((size_t)count, sizeof(char **)),
                                  .vals = calloc((size_t)count, sizeof(char **))};
    bool ok = ninfo && sp->keys && sp->vals;
    for (int i = 0; ok && i < count; i++) {
        struct vmpi_info *in = infos && infos[i] != MPI_INFO_NULL ? vmpi_info_get(infos[i]) : NULL;
        int n = in ? in->n : 0;
        sp->keys[i] = malloc(sizeof(char *) * (size_t)(n + 1));
        sp->vals[i] = malloc(sizeof(char *) * (size_t)(n + 1));
        ok = sp->keys[i] && sp->vals[i];
        for (int j = 0; ok && j < n; j++) {
            sp->keys[i][j] = in->e[j].key;
            sp->vals[i][j] = in->e[j].val;
        }
        ninfo[i] = n;
    }
    if (!ok) {
        spawn_free(sp);
        return vmpi_err(c, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    return MPI_SUCCESS;
}

static int spawn(int count, char *cmds[], char **argvs[], const int maxprocs[],
                 const MPI_Info infos[], int root, MPI_Comm comm, MPI_Comm *intercomm,
                 int errcodes[], const char *fn)
{
    COMM_ARG(c, comm, fn);
    VMPI_CHECK_INTRA(c, fn);
    PTR_ARG(intercomm, c, fn, "intercomm");
    VMPI_CHECK(root >= 0 && root < c->size, c, MPI_ERR_ROOT,
               "%s: root = %d is not a rank of comm (size %d)", fn, root, c->size);
    struct vmpi_pmi_spawn sp = {0};
    int arc = c->rank == root ? spawn_args(c, count, cmds, argvs, maxprocs, infos, &sp, fn)
                              : MPI_SUCCESS;
    /* A root whose arguments are bad has raised its error; the others learn it. */
    int ok = arc == MPI_SUCCESS, rc = vmpi_coll_bcast(&ok, 1, vmpi_dtype_get(MPI_INT), root, c);
    if (rc == MPI_SUCCESS && !ok)
        return c->rank == root ? arc
                               : vmpi_err(c, MPI_ERR_SPAWN, "%s: the root's arguments are "
                                          "wrong (its error says why)", fn);
    struct vmpi_comm *n = NULL;
    int total = 0;
    if (rc == MPI_SUCCESS)
        rc = vmpi_dyn_spawn(&sp, root, c, &n, &total, fn);
    if (c->rank == root)
        spawn_free(&sp);
    if (errcodes != MPI_ERRCODES_IGNORE)
        for (int i = 0; i < total; i++)
            errcodes[i] = rc;
    if (rc != MPI_SUCCESS)
        return vmpi_err_handle(c, rc);
    *intercomm = n->handle;
    return MPI_SUCCESS;
}

int PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
                    MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    static const char fn[] = "MPI_Comm_spawn";
    VMPI_ENTER(fn);
    char *cmd = (char *)command;
    return spawn(1, &cmd, argv ? &argv : NULL, &maxprocs, &info, root, comm, intercomm,
                 array_of_errcodes, fn);
}
VMPI_WEAK(Comm_spawn);

int PMPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                             const int array_of_maxprocs[], const MPI_Info array_of_info[],
                             int root, MPI_Comm comm, MPI_Comm *intercomm,
                             int array_of_errcodes[])
{
    static const char fn[] = "MPI_Comm_spawn_multiple";
    VMPI_ENTER(fn);
    return spawn(count, array_of_commands, array_of_argv, array_of_maxprocs, array_of_info,
                 root, comm, intercomm, array_of_errcodes, fn);
}
VMPI_WEAK(Comm_spawn_multiple);

/* All n bytes written (out) to or read from fd; -1 on error or end. */
static int fd_all(int fd, char *buf, size_t n, bool out)
{
    while (n) {
        ssize_t k = out ? write(fd, buf, n) : read(fd, buf, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        buf += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Both ends open a port and swap names over the socket; the lower name
 * accepts, the other connects. */
int PMPI_Comm_join(int fd, MPI_Comm *intercomm)
{
    static const char fn[] = "MPI_Comm_join";
    VMPI_ENTER(fn);
    PTR_ARG(intercomm, NULL, fn, "intercomm");
    char mine[MPI_MAX_PORT_NAME] = "", theirs[MPI_MAX_PORT_NAME] = "";
    int rc = vmpi_dyn_open_port(mine);
    if (rc != MPI_SUCCESS)
        return rc;
    if (fd_all(fd, mine, sizeof mine, true) || fd_all(fd, theirs, sizeof theirs, false)) {
        int e = errno;
        vmpi_dyn_close_port(mine);
        return vmpi_err(NULL, MPI_ERR_ARG, "%s: cannot swap port names over socket %d: %s",
                        fn, fd, e ? strerror(e) : "the other end closed it");
    }
    theirs[MPI_MAX_PORT_NAME - 1] = '\0';
    int order = strcmp(mine, theirs);
    struct vmpi_comm *self = vmpi_comm_get(MPI_COMM_SELF), *n;
    if (order == 0)
        rc = vmpi_err(NULL, MPI_ERR_ARG, "%s: socket %d leads back to this process", fn, fd);
    else
        rc = order < 0 ? vmpi_dyn_accept(mine, 0, self, &n) : vmpi_dyn_connect(theirs, 0, self, &n);
    vmpi_dyn_close_port(mine);
    if (rc != MPI_SUCCESS)
        return rc;
    *intercomm = n->handle;
    return MPI_SUCCESS;
}
VMPI_WEAK(Comm_join);

/* The name service's answer rc (pmi.h) as an error of class cls. */
static int name_answer(int rc, int cls, const char *fn, const char *service, const char *no)
{
    if (rc < 0)
        return vmpi_err(NULL, cls, "%s: no name service: the process manager offers none "
                        "(start the program with vmpirun or mpiexec)", fn);
    return rc ? vmpi_err(NULL, cls, "%s: service \"%s\" %s", fn, service, no) : MPI_SUCCESS;
}

int PMPI_Publish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    static const char fn[] = "MPI_Publish_name";
    VMPI_ENTER(fn);
    SERVICE_ARG(service_name, fn);
    VMPI_CHECK_INFO(info, NULL, fn);
    PORT_ARG(port_name, NULL, fn);
    VMPI_CHECK(!strpbrk(port_name, " \n"), NULL, MPI_ERR_PORT,
               "%s: port_name holds a space or a newline", fn);
    return name_answer(vmpi_pmi_publish(service_name, port_name), MPI_ERR_SERVICE, fn,
                       service_name, "is published already");
}
VMPI_WEAK(Publish_name);

int PMPI_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    static const char fn[] = "MPI_Unpublish_name";
    VMPI_ENTER(fn);
    SERVICE_ARG(service_name, fn);
    VMPI_CHECK_INFO(info, NULL, fn);
    PORT_ARG(port_name, NULL, fn);
    return name_answer(vmpi_pmi_unpublish(service_name), MPI_ERR_SERVICE, fn, service_name,
                       "is not published");
}
VMPI_WEAK(Unpublish_name);

int PMPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
    static const char fn[] = "MPI_Lookup_name";
    VMPI_ENTER(fn);
    SERVICE_ARG(service_name, fn);
    VMPI_CHECK_INFO(info, NULL, fn);
    PTR_ARG(port_name, NULL, fn, "port_name");
    return name_answer(vmpi_pmi_lookup(service_name, port_name, MPI_MAX_PORT_NAME),
                       MPI_ERR_NAME, fn, service_name, "is not published");
}
VMPI_WEAK(Lookup_name);
