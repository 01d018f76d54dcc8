/* The socket to a PMI-1/PMI-2 process manager (vmpirun, Hydra, Slurm's
 * pmi2 plugin). Both protocols start on it with the same PMI-1 line,
 * `cmd=init pmi_version=V pmi_subversion=S`, whose answer says whether the
 * server speaks V; PMI-1 then goes on in lines, PMI-2 in length-prefixed
 * commands, hence a reader for both. */
#include "pmi_impl.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int pmi_fd = -1;
static char rbuf[4096];
static size_t rlen;

int vmpi_pmi_env_int(const char *name, int *out)
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

int vmpi_pmi_wire_write(const char *s, size_t n)
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

/* Reads more bytes into rbuf; -1 at end of stream or on error. */
static int fill(void)
{
    for (;;) {
        if (rlen == sizeof rbuf)
            return -1;
        ssize_t r = read(pmi_fd, rbuf + rlen, sizeof rbuf - rlen);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        rlen += (size_t)r;
        return 0;
    }
}

static void consume(char *out, size_t n, size_t skip)
{
    memcpy(out, rbuf, n);
    rlen -= n + skip;
    memmove(rbuf, rbuf + n + skip, rlen);
}

int vmpi_pmi_wire_line(char *line, size_t cap)
{
    for (;;) {
        char *nl = memchr(rbuf, '\n', rlen);
        if (nl) {
            size_t n = (size_t)(nl - rbuf);
            if (n >= cap)
                return -1;
            consume(line, n, 1);
            line[n] = '\0';
            return 0;
        }
        if (fill())
            return -1;
    }
}

int vmpi_pmi_wire_read(char *buf, size_t n)
{
    /* Larger than the buffer: the server is not speaking the protocol. */
    if (n > sizeof rbuf)
        return -1;
    while (rlen < n)
        if (fill())
            return -1;
    consume(buf, n, 0);
    return 0;
}

int vmpi_pmi_wire_field(const char *line, const char *key, char *out, size_t cap)
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

/* Port mode (Hydra's, and vmpirun's for emulated VMs): the server learns
 * who connected from PMI_ID and tells rank and size after an initack. */
static int port_handshake(struct vmpi_pmi_job *job)
{
    char line[1024], v[64];
    int id = 0;
    vmpi_pmi_env_int("PMI_ID", &id);
    snprintf(line, sizeof line, "cmd=initack pmiid=%d\n", id);
    if (vmpi_pmi_wire_write(line, strlen(line)) || vmpi_pmi_wire_line(line, sizeof line) ||
        vmpi_pmi_wire_field(line, "cmd", v, sizeof v) || strcmp(v, "initack"))
        return -1;
    for (int i = 0; i < 3; i++) {
        if (vmpi_pmi_wire_line(line, sizeof line))
            return -1;
        if (!vmpi_pmi_wire_field(line, "size", v, sizeof v))
            job->size = atoi(v);
        else if (!vmpi_pmi_wire_field(line, "rank", v, sizeof v))
            job->rank = atoi(v);
    }
    return 0;
}

int vmpi_pmi_wire_open(struct vmpi_pmi_job *job)
{
    rlen = 0;
    if (vmpi_pmi_env_int("PMI_FD", &pmi_fd) == 0)
        return vmpi_pmi_env_int("PMI_RANK", &job->rank) ||
                       vmpi_pmi_env_int("PMI_SIZE", &job->size)
                   ? -1
                   : 0;
    pmi_fd = -1;
    if (!getenv("PMI_PORT"))
        return 1;
    pmi_fd = connect_port(getenv("PMI_PORT"));
    if (pmi_fd < 0)
        return -1;
    return port_handshake(job);
}

int vmpi_pmi_wire_hello(int version, int subversion)
{
    char line[256], v[32];
    snprintf(line, sizeof line, "cmd=init pmi_version=%d pmi_subversion=%d\n", version,
             subversion);
    if (vmpi_pmi_wire_write(line, strlen(line)) || vmpi_pmi_wire_line(line, sizeof line) ||
        vmpi_pmi_wire_field(line, "cmd", v, sizeof v) || strcmp(v, "response_to_init"))
        return -1;
    if (!vmpi_pmi_wire_field(line, "rc", v, sizeof v) && atoi(v) != 0)
        return 1;
    /* A server may accept while naming the version it will speak. */
    if (!vmpi_pmi_wire_field(line, "pmi_version", v, sizeof v) && atoi(v) != version)
        return 1;
    return 0;
}

void vmpi_pmi_wire_close(void)
{
    if (pmi_fd >= 0)
        close(pmi_fd);
    pmi_fd = -1;
    rlen = 0;
}
