/* Dynamic processes (MPI-3.1 chapter 10): ports, MPI_Comm_accept and
 * connect, spawning, the parent, disconnecting, MPI_Comm_join.
 *
 * A port name is "vmpi-port:<job>:<rank>:<number>:<address>": the card of
 * the process that opened it (its job in hex, its rank, its network address
 * in hex) and a number of that process's own. The connecting root greets
 * the port's process under that number with its card and a nonce: through
 * the network channel when the two are in different jobs, and within one
 * job as a message on a hidden communicator over the world (context
 * PORT_CTX). The two roots then talk over a bridge, a communicator of the
 * two with context BRIDGE_CTX + 2 * nonce (both outside the ids that
 * communicators agree on), and both sides build the intercommunicator as
 * MPI_Intercomm_create does, the members travelling as cards
 * (comm/inter.c).
 *
 * Spawning: the root opens a port, asks the process manager for the new
 * job with the port's name under PARENT_ROOT_PORT_NAME in that job's
 * key-value space, and accepts; the children's MPI_Init finds the name
 * (the process manager marks them spawned: pmi/) and connects.
 *
 * MPI_Finalize is collective over connected processes: every
 * intercommunicator built here is kept until MPI_Comm_disconnect or
 * MPI_Finalize, which first runs a barrier over it, so no process leaves
 * while the other side may still send to it. */
#include "comm.h"
#include "../coll/coll.h"
#include "../coll/inter.h"
#include "../pmi/pmi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PORT_CTX 0x40000000u
#define BRIDGE_CTX 0x50000000u
#define PORT_PREFIX "vmpi-port:"
#define GREET_MAGIC 0x76706f72u
#define WELCOME_TAG 1

struct greeting {
    struct vmpi_card from;
    uint32_t nonce;
    uint32_t magic;
};

/* Ports open on this process, by number. */
struct port {
    uint32_t number;
    struct port *next;
};
static struct port *ports;
static uint32_t next_port = 1;
static struct vmpi_comm *port_comm; /* the hidden communicator over the world */

/* Intercommunicators built here and not yet disconnected, newest first. */
struct conn {
    struct vmpi_comm *c;
    struct conn *next;
};
static struct conn *conns;
static struct vmpi_comm *parent;

static int port_number(const char *name, struct vmpi_card *card, uint32_t *number)
{
    unsigned job, num;
    int rank, off = 0;
    char hex[2 * sizeof card->addr + 2];
    if (strncmp(name, PORT_PREFIX, strlen(PORT_PREFIX)) ||
        sscanf(name + strlen(PORT_PREFIX), "%8x:%d:%u:%*[0-9a-f]%n", &job, &rank, &num, &off) <
            3 ||
        !off || name[strlen(PORT_PREFIX) + (size_t)off] != '\0')
        return -1;
    const char *h = strrchr(name, ':') + 1;
    if (strlen(h) >= sizeof hex)
        return -1;
    memset(card, 0, sizeof *card);
    card->job = job;
    card->rank = rank;
    card->alen = (uint32_t)vmpi_hex_decode(card->addr, sizeof card->addr, h);
    *number = num;
    return card->alen || job == vmpi_proc_job() ? 0 : -1;
}

int vmpi_dyn_open_port(char *name)
{
    struct vmpi_card me;
    struct port *p = malloc(sizeof *p);
    if (!p)
        return vmpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Open_port: out of memory");
    vmpi_proc_card(&me);
    char hex[2 * sizeof me.addr + 1] = "0";
    if (me.alen)
        vmpi_hex_encode(hex, me.addr, me.alen);
    p->number = next_port++;
    p->next = ports;
    ports = p;
    snprintf(name, MPI_MAX_PORT_NAME, PORT_PREFIX "%08x:%d:%u:%s", me.job, me.rank, p->number,
             hex);
    return MPI_SUCCESS;
}

/* The open port `name` names on this process, or NULL. */
static struct port **port_find(const char *name)
{
    struct vmpi_card card;
    uint32_t num;
    if (port_number(name, &card, &num) || card.job != vmpi_proc_job() ||
        card.rank != vmpi_job.rank)
        return NULL;
    struct port **p = &ports;
    while (*p && (*p)->number != num)
        p = &(*p)->next;
    return *p ? p : NULL;
}

int vmpi_dyn_close_port(const char *name)
{
    struct port **p = port_find(name);
    if (!p)
        return vmpi_err(NULL, MPI_ERR_PORT, "MPI_Close_port: \"%s\" is no port this process "
                        "opened (or it is closed already)", name);
    struct port *q = *p;
    *p = q->next;
    free(q);
    return MPI_SUCCESS;
}

static struct vmpi_comm *hidden_port_comm(void)
{
    if (!port_comm) {
        vmpi_group_retain(vmpi_g.world->group);
        port_comm = vmpi_comm_new(vmpi_g.world->group, PORT_CTX, 0, MPI_ERRORS_RETURN);
    }
    return port_comm;
}

/* The bridge between this root (rank `me` in it: 0 accepting, 1
 * connecting) and the other root, world rank w. */
static struct vmpi_comm *bridge_new(int w, int me, uint32_t nonce)
{
    int *two = malloc(2 * sizeof *two);
    if (!two)
        return NULL;
    two[me] = vmpi_job.rank;
    two[1 - me] = w;
    struct vmpi_group *g = vmpi_group_new(2, two);
    return g ? vmpi_comm_new(g, BRIDGE_CTX + 2 * (nonce & 0xffffffu), 0, MPI_ERRORS_RETURN)
             : NULL;
}

/* The accepting root: waits for a greeting on the port, from another job
 * (the network channel) or from this one (the hidden communicator). */
static int accept_root(const char *name, struct vmpi_comm **bridge, const char *fn)
{
    struct port **p = port_find(name);
    if (!p)
        return vmpi_err(NULL, MPI_ERR_PORT, "%s: \"%s\" is no port this process opened", fn,
                        name);
    uint32_t num = (*p)->number;
    struct greeting g;
    struct vmpi_req *r;
    struct vmpi_comm *pc = hidden_port_comm();
    if (!pc)
        return vmpi_err(NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    vmpi_p2p_irecv(&g, sizeof g, vmpi_dtype_get(MPI_BYTE), MPI_ANY_SOURCE, (int)num, pc, 0, &r);
    bool local = false;
    for (;;) {
        if (r->done) {
            local = true;
            break;
        }
        if (vmpi_proc_greeting(num, &g, sizeof g) == sizeof g)
            break;
        vmpi_progress();
    }
    if (!local)
        vmpi_p2p_cancel_recv(r);
    vmpi_p2p_wait(r, MPI_STATUS_IGNORE);
    int w = g.magic == GREET_MAGIC ? vmpi_proc_add(&g.from) : -1;
    if (w < 0)
        return vmpi_err(NULL, MPI_ERR_PORT, "%s: a malformed or unreachable greeting came to "
                        "port \"%s\"", fn, name);
    *bridge = bridge_new(w, 0, g.nonce);
    if (!*bridge)
        return vmpi_err(NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    /* The connecting root sends nothing more until this arrives: a packet
     * from a process this one does not know yet would be refused. */
    int welcome = 1;
    return vmpi_p2p_send(&welcome, 1, vmpi_dtype_get(MPI_INT), 1, WELCOME_TAG, *bridge, 0);
}

static int connect_root(const char *name, struct vmpi_comm **bridge, const char *fn)
{
    struct vmpi_card card;
    uint32_t num;
    if (port_number(name, &card, &num))
        return vmpi_err(NULL, MPI_ERR_PORT, "%s: \"%s\" is not a port name of vmpi", fn, name);
    int w = vmpi_proc_add(&card);
    if (w < 0)
        return vmpi_err(NULL, MPI_ERR_PORT, "%s: the process of port \"%s\" cannot be reached "
                        "(no network channel: VMPI_CHANNELS must allow ofi)", fn, name);
    static uint32_t count;
    struct greeting g = {.magic = GREET_MAGIC};
    vmpi_proc_card(&g.from);
    g.nonce = (g.from.job * 2654435761u) ^ ((uint32_t)g.from.rank << 12) ^ ++count ^
              (uint32_t)time(NULL) * 40503u;
    int rc = MPI_SUCCESS;
    if (w < vmpi_job.size) {
        struct vmpi_comm *pc = hidden_port_comm();
        rc = pc ? vmpi_p2p_send(&g, sizeof g, vmpi_dtype_get(MPI_BYTE), w, (int)num, pc, 0)
                : MPI_ERR_NO_MEM;
    } else {
        vmpi_proc_greet(w, num, &g, sizeof g);
    }
    *bridge = rc == MPI_SUCCESS ? bridge_new(w, 1, g.nonce) : NULL;
    if (!*bridge)
        return vmpi_err(NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    int welcome = 0;
    return vmpi_p2p_recv(&welcome, 1, vmpi_dtype_get(MPI_INT), 0, WELCOME_TAG, *bridge, 0,
                         MPI_STATUS_IGNORE);
}

static void conn_keep(struct vmpi_comm *c)
{
    struct conn *k = malloc(sizeof *k);
    if (!k)
        return;
    vmpi_comm_retain(c);
    *k = (struct conn){c, conns};
    conns = k;
}

/* Accept (accepting) or connect on port `name` (significant at root). */
static int join(const char *name, int root, struct vmpi_comm *c, bool accepting,
                struct vmpi_comm **out, const char *fn)
{
    struct vmpi_comm *bridge = NULL;
    int rc = MPI_SUCCESS;
    if (c->rank == root)
        rc = accepting ? accept_root(name, &bridge, fn) : connect_root(name, &bridge, fn);
    int ok = rc == MPI_SUCCESS;
    int brc = vmpi_coll_bcast(&ok, 1, vmpi_dtype_get(MPI_INT), root, c);
    if (brc != MPI_SUCCESS || !ok) {
        if (bridge)
            vmpi_comm_free(bridge);
        if (brc != MPI_SUCCESS)
            return brc;
        return c->rank == root ? vmpi_err_handle(c, rc)
                               : vmpi_err(c, MPI_ERR_PORT, "%s: the root could not use the "
                                          "port (its error says why)", fn);
    }
    rc = vmpi_comm_intercomm_dyn(c, root, bridge, accepting ? 1 : 0, 0, fn, out);
    if (bridge)
        vmpi_comm_free(bridge);
    if (rc == MPI_SUCCESS)
        conn_keep(*out);
    return rc;
}

int vmpi_dyn_accept(const char *name, int root, struct vmpi_comm *c, struct vmpi_comm **out)
{
    return join(name, root, c, true, out, "MPI_Comm_accept");
}

int vmpi_dyn_connect(const char *name, int root, struct vmpi_comm *c, struct vmpi_comm **out)
{
    return join(name, root, c, false, out, "MPI_Comm_connect");
}

int vmpi_dyn_spawn(struct vmpi_pmi_spawn *sp, int root, struct vmpi_comm *c,
                   struct vmpi_comm **out, int *total, const char *fn)
{
    char port[MPI_MAX_PORT_NAME];
    struct {
        int rc, total;
        char why[240];
    } res = {MPI_SUCCESS, 0, ""};
    if (c->rank == root) {
        for (int i = 0; i < sp->count; i++)
            res.total += sp->maxprocs[i];
        res.rc = vmpi_dyn_open_port(port);
        const char *key = "PARENT_ROOT_PORT_NAME", *val = port;
        sp->npre = 1;
        sp->prekeys = &key;
        sp->prevals = &val;
        if (res.rc == MPI_SUCCESS && vmpi_pmi_spawn(sp, res.why, sizeof res.why)) {
            res.rc = MPI_ERR_SPAWN;
            vmpi_dyn_close_port(port);
        }
    }
    int rc = vmpi_coll_bcast(&res, sizeof res, vmpi_dtype_get(MPI_BYTE), root, c);
    if (rc != MPI_SUCCESS)
        return rc;
    *total = res.total;
    if (res.rc != MPI_SUCCESS)
        return vmpi_err(c, res.rc, "%s: the process manager cannot start the processes: %s", fn,
                        res.why);
    rc = join(port, root, c, true, out, fn);
    if (c->rank == root)
        vmpi_dyn_close_port(port);
    return rc;
}

int vmpi_dyn_init(void)
{
    char port[MPI_MAX_PORT_NAME];
    if (!vmpi_pmi_spawned() || vmpi_pmi_get("PARENT_ROOT_PORT_NAME", port, sizeof port))
        return MPI_SUCCESS;
    int rc = join(port, 0, vmpi_g.world, false, &parent, "MPI_Init (connecting to the parent)");
    if (rc == MPI_SUCCESS)
        snprintf(parent->name, sizeof parent->name, "MPI_COMM_PARENT");
    return rc;
}

struct vmpi_comm *vmpi_dyn_parent(void)
{
    return parent;
}

static int barrier(struct vmpi_comm *c)
{
    return c->local ? vmpi_inter_barrier(c) : vmpi_coll_barrier(c);
}

int vmpi_dyn_disconnect(struct vmpi_comm *c)
{
    int rc = barrier(c);
    for (struct conn **k = &conns; *k; k = &(*k)->next) {
        if ((*k)->c != c)
            continue;
        struct conn *d = *k;
        *k = d->next;
        vmpi_comm_release(d->c);
        free(d);
        break;
    }
    if (c == parent)
        parent = NULL;
    return rc;
}

void vmpi_dyn_finalize(void)
{
    while (conns) {
        struct conn *k = conns;
        conns = k->next;
        barrier(k->c);
        vmpi_comm_release(k->c);
        free(k);
    }
    parent = NULL;
    while (ports) {
        struct port *p = ports;
        ports = p->next;
        free(p);
    }
    if (port_comm)
        vmpi_comm_free(port_comm);
    port_comm = NULL;
}
