/* PMI-1 client. Commands are single text lines `cmd=NAME key=value ...\n`;
 * each gets one reply line (barrier_in is answered when all ranks entered). */
#include "pmi.h"
#include "../base/base.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int pmi_fd = -1;
static char kvsname[256] = "singleton";
static int universe = 1;
/* The server's limits (get_maxes), never above our own buffers. */
static size_t keylen_max = VMPI_PMI_KEYLEN, vallen_max = VMPI_PMI_VALLEN;

/* Singleton key-value space. */
struct kv { char *key, *val; struct kv *next; };
static struct kv *local_kvs;

static char rbuf[4096];
static size_t rlen;

static int write_all(const char *s, size_t n)
{
    while (n) {
        ssize_t w = write(pmi_fd, s, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Reads one reply line into line (NUL-terminated, without '\n'). */
static int read_line(char *line, size_t cap)
{
    for (;;) {
        char *nl = memchr(rbuf, '\n', rlen);
        if (nl) {
            size_t n = (size_t)(nl - rbuf);
            if (n >= cap)
                return -1;
            memcpy(line, rbuf, n);
            line[n] = '\0';
            rlen -= n + 1;
            memmove(rbuf, nl + 1, rlen);
            return 0;
        }
        if (rlen == sizeof rbuf)
            return -1;
        ssize_t r = read(pmi_fd, rbuf + rlen, sizeof rbuf - rlen);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        rlen += (size_t)r;
    }
}

/* Copies the value of `key` in a reply line; 0 if present. */
static int field(const char *line, const char *key, char *out, size_t cap)
{
    size_t kl = strlen(key);
    for (const char *p = line; *p;) {
        while (*p == ' ')
            p++;
        const char *end = strchr(p, ' ');
        if (!end)
            end = p + strlen(p);
        if ((size_t)(end - p) > kl && !strncmp(p, key, kl) && p[kl] == '=') {
            size_t n = (size_t)(end - p) - kl - 1;
            if (n >= cap)
                return -1;
            memcpy(out, p + kl + 1, n);
            out[n] = '\0';
            return 0;
        }
        p = end;
    }
    return -1;
}

/* Sends a command and reads the reply, which must be `cmd=expect`. */
static int call(const char *cmd, const char *expect, char *reply, size_t cap)
{
    char c[64];
    if (write_all(cmd, strlen(cmd)) || read_line(reply, cap))
        return -1;
    if (field(reply, "cmd", c, sizeof c) || strcmp(c, expect))
        return -1;
    char rc[16];
    if (!field(reply, "rc", rc, sizeof rc) && atoi(rc) != 0)
        return -1;
    return 0;
}

static int env_int(const char *name, int *out)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return -1;
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v < 0 || v > 0x7fffffff)
        return -1;
    *out = (int)v;
    return 0;
}

static int connect_port(const char *hostport)
{
    char host[256];
    const char *colon = strrchr(hostport, ':');
    if (!colon || (size_t)(colon - hostport) >= sizeof host)
        return -1;
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = '\0';
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res;
    if (getaddrinfo(host, colon + 1, &hints, &res))
        return -1;
    int fd = -1;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) == 0)
            break;
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}

/* The process manager that started this process among others without
 * giving it a PMI-1 connection, described in buf, or NULL. Starting as a
 * singleton there would run N copies of rank 0 of 1 that all exit 0. */
static const char *foreign_manager(char *buf, size_t cap)
{
    const char *ns = getenv("PMIX_NAMESPACE");
    int n;
    if (ns || getenv("PMIX_RANK"))
        snprintf(buf, cap, "a PMIx process manager (PMIX_NAMESPACE=%s: srun --mpi=pmix, Open "
                 "MPI's mpirun or prterun)", ns ? ns : "unset");
    else if (!env_int("OMPI_COMM_WORLD_SIZE", &n) && n > 1)
        snprintf(buf, cap, "Open MPI's launcher (OMPI_COMM_WORLD_SIZE=%d)", n);
    else if (!env_int("SLURM_STEP_NUM_TASKS", &n) && n > 1 && getenv("SLURM_PROCID"))
        snprintf(buf, cap, "Slurm's srun without a PMI plugin (SLURM_STEP_NUM_TASKS=%d)", n);
    else
        return NULL;
    return buf;
}

int vmpi_pmi_init(int *rank, int *size, int *appnum)
{
    char line[1024], v[256];
    const char *who;
    *appnum = 0;
    if (env_int("PMI_FD", &pmi_fd) == 0) {
        if (env_int("PMI_RANK", rank) || env_int("PMI_SIZE", size))
            return -1;
    } else if (getenv("PMI_PORT")) {
        /* Port mode: the server assigns rank and size after an initack. */
        int id = 0;
        pmi_fd = connect_port(getenv("PMI_PORT"));
        if (pmi_fd < 0)
            return -1;
        env_int("PMI_ID", &id);
        snprintf(line, sizeof line, "cmd=initack pmiid=%d\n", id);
        if (call(line, "initack", line, sizeof line))
            return -1;
        for (int i = 0; i < 3; i++) {
            if (read_line(line, sizeof line))
                return -1;
            if (!field(line, "size", v, sizeof v))
                *size = atoi(v);
            else if (!field(line, "rank", v, sizeof v))
                *rank = atoi(v);
        }
    } else if ((who = foreign_manager(line, sizeof line))) {
        return vmpi_err_make(MPI_ERR_OTHER,
                             "MPI_Init: this process was started by %s, which vmpi cannot "
                             "speak; vmpi speaks PMI-1 (vmpirun, mpiexec.hydra, srun "
                             "--mpi=pmi2)",
                             who);
    } else {
        pmi_fd = -1;
        *rank = 0;
        *size = 1;
        return 0;
    }
    if (call("cmd=init pmi_version=1 pmi_subversion=1\n", "response_to_init", line,
             sizeof line))
        return -1;
    if (call("cmd=get_maxes\n", "maxes", line, sizeof line))
        return -1;
    if (!field(line, "keylen_max", v, sizeof v) && atoi(v) > 0 &&
        (size_t)atoi(v) < keylen_max)
        keylen_max = (size_t)atoi(v);
    if (!field(line, "vallen_max", v, sizeof v) && atoi(v) > 0 &&
        (size_t)atoi(v) < vallen_max)
        vallen_max = (size_t)atoi(v);
    if (call("cmd=get_my_kvsname\n", "my_kvsname", line, sizeof line) ||
        field(line, "kvsname", kvsname, sizeof kvsname))
        return -1;
    universe = *size;
    if (!call("cmd=get_universe_size\n", "universe_size", line, sizeof line) &&
        !field(line, "size", v, sizeof v) && atoi(v) > 0)
        universe = atoi(v);
    if (!call("cmd=get_appnum\n", "appnum", line, sizeof line) &&
        !field(line, "appnum", v, sizeof v))
        *appnum = atoi(v);
    return 0;
}

const char *vmpi_pmi_kvsname(void) { return kvsname; }
bool vmpi_pmi_connected(void) { return pmi_fd >= 0; }
int vmpi_pmi_universe_size(void) { return universe; }

int vmpi_pmi_put(const char *key, const char *val)
{
    if (strlen(key) >= keylen_max || strlen(val) >= vallen_max ||
        strpbrk(key, " =\n") || strpbrk(val, " \n"))
        return -1;
    if (pmi_fd < 0) {
        struct kv *e = malloc(sizeof *e);
        if (!e)
            return -1;
        e->key = strdup(key);
        e->val = strdup(val);
        e->next = local_kvs;
        local_kvs = e;
        return e->key && e->val ? 0 : -1;
    }
    char line[VMPI_PMI_VALLEN + 512];
    snprintf(line, sizeof line, "cmd=put kvsname=%s key=%s value=%s\n", kvsname, key, val);
    return call(line, "put_result", line, sizeof line);
}

int vmpi_pmi_get(const char *key, char *val, size_t len)
{
    if (pmi_fd < 0) {
        for (struct kv *e = local_kvs; e; e = e->next)
            if (!strcmp(e->key, key) && strlen(e->val) < len) {
                strcpy(val, e->val);
                return 0;
            }
        return -1;
    }
    char line[VMPI_PMI_VALLEN + 512];
    snprintf(line, sizeof line, "cmd=get kvsname=%s key=%s\n", kvsname, key);
    if (call(line, "get_result", line, sizeof line))
        return -1;
    return field(line, "value", val, len);
}

int vmpi_pmi_fence(void)
{
    char line[256];
    if (pmi_fd < 0)
        return 0;
    return call("cmd=barrier_in\n", "barrier_out", line, sizeof line);
}

void vmpi_pmi_abort(int code, const char *msg)
{
    if (pmi_fd < 0)
        return;
    char line[1200];
    int n = snprintf(line, sizeof line - 1, "cmd=abort exitcode=%d message=%s", code,
                     msg ? msg : "");
    if (n < 0)
        return;
    if ((size_t)n > sizeof line - 2)
        n = (int)sizeof line - 2;
    /* The whole command must stay one line. */
    for (int i = 0; i < n; i++)
        if (line[i] == '\n')
            line[i] = ' ';
    line[n] = '\n';
    line[n + 1] = '\0';
    write_all(line, strlen(line));
}

int vmpi_pmi_finalize(void)
{
    char line[256];
    while (local_kvs) {
        struct kv *e = local_kvs;
        local_kvs = e->next;
        free(e->key);
        free(e->val);
        free(e);
    }
    if (pmi_fd < 0)
        return 0;
    int rc = call("cmd=finalize\n", "finalize_ack", line, sizeof line);
    close(pmi_fd);
    pmi_fd = -1;
    return rc;
}
