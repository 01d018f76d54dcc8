/* PMI-1 client (vmpirun's only protocol; Hydra and Slurm's pmi2 plugin
 * also answer it). Commands are single text lines `cmd=NAME key=value ...\n`;
 * each gets one reply line (barrier_in is answered when all ranks entered,
 * abort gets none). */
#include "pmi_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char kvsname[256];
/* The server's limits (get_maxes), never above our own buffers. */
static size_t keylen_max = VMPI_PMI_KEYLEN, vallen_max = VMPI_PMI_VALLEN;

/* Sends a command and reads the reply, which must be `cmd=expect`. */
static int call(const char *cmd, const char *expect, char *reply, size_t cap)
{
    char c[64], rc[16];
    if (vmpi_pmi_wire_write(cmd, strlen(cmd)) || vmpi_pmi_wire_line(reply, cap))
        return -1;
    if (vmpi_pmi_wire_field(reply, "cmd", c, sizeof c) || strcmp(c, expect))
        return -1;
    if (!vmpi_pmi_wire_field(reply, "rc", rc, sizeof rc) && atoi(rc) != 0)
        return -1;
    return 0;
}

static int pmi1_put(const char *key, const char *val)
{
    if (strlen(key) >= keylen_max || strlen(val) >= vallen_max || strpbrk(key, " =\n") ||
        strpbrk(val, " \n"))
        return -1;
    char line[VMPI_PMI_VALLEN + 512];
    snprintf(line, sizeof line, "cmd=put kvsname=%s key=%s value=%s\n", kvsname, key, val);
    return call(line, "put_result", line, sizeof line);
}

static int pmi1_get(const char *key, char *val, size_t len)
{
    char line[VMPI_PMI_VALLEN + 512];
    snprintf(line, sizeof line, "cmd=get kvsname=%s key=%s\n", kvsname, key);
    if (call(line, "get_result", line, sizeof line))
        return -1;
    return vmpi_pmi_wire_field(line, "value", val, len);
}

static int pmi1_fence(void)
{
    char line[256];
    return call("cmd=barrier_in\n", "barrier_out", line, sizeof line);
}

static void pmi1_abort(int code, const char *msg)
{
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
    vmpi_pmi_wire_write(line, (size_t)n + 1);
}

static int pmi1_finalize(void)
{
    char line[256];
    int rc = call("cmd=finalize\n", "finalize_ack", line, sizeof line);
    vmpi_pmi_wire_close();
    return rc;
}

/* The server's reason after msg=, to the end of the line. */
static void reason(const char *reply, char *err, size_t cap)
{
    const char *m = strstr(reply, "msg=");
    snprintf(err, cap, "%s", m ? m + 4 : reply);
}

/* One line `key=value` of a spawn block (a bare `key` when val is NULL);
 * the value may hold spaces, not a newline. */
static int add(char **buf, size_t *len, size_t *cap, const char *key, const char *val)
{
    if (val && strchr(val, '\n'))
        return -1;
    size_t need = strlen(key) + (val ? strlen(val) : 0) + 3;
    if (*len + need >= *cap) {
        size_t ncap = (*cap + need) * 2;
        char *nb = realloc(*buf, ncap);
        if (!nb)
            return -1;
        *buf = nb;
        *cap = ncap;
    }
    *len += (size_t)snprintf(*buf + *len, *cap - *len, "%s%s%s\n", key, val ? "=" : "",
                             val ? val : "");
    return 0;
}

/* MPICH's multi-line spawn: one block per command, each repeating the
 * preput pairs, answered once after the last with cmd=spawn_result. */
static int pmi1_spawn(const struct vmpi_pmi_spawn *sp, char *err, size_t errcap)
{
    char *buf = NULL, k[64], v[32];
    size_t len = 0, cap = 0;
    int bad = 0;
    for (int i = 0; i < sp->count; i++) {
        int argc = 0;
        while (sp->argvs && sp->argvs[i] && sp->argvs[i][argc])
            argc++;
        bad |= add(&buf, &len, &cap, "mcmd", "spawn");
        snprintf(v, sizeof v, "%d", sp->maxprocs[i]);
        bad |= add(&buf, &len, &cap, "nprocs", v);
        bad |= add(&buf, &len, &cap, "execname", sp->cmds[i]);
        snprintf(v, sizeof v, "%d", sp->count);
        bad |= add(&buf, &len, &cap, "totspawns", v);
        snprintf(v, sizeof v, "%d", i + 1);
        bad |= add(&buf, &len, &cap, "spawnssofar", v);
        snprintf(v, sizeof v, "%d", argc);
        bad |= add(&buf, &len, &cap, "argcnt", v);
        for (int a = 0; a < argc; a++) {
            snprintf(k, sizeof k, "arg%d", a + 1);
            bad |= add(&buf, &len, &cap, k, sp->argvs[i][a]);
        }
        snprintf(v, sizeof v, "%d", sp->npre);
        bad |= add(&buf, &len, &cap, "preput_num", v);
        for (int j = 0; j < sp->npre; j++) {
            snprintf(k, sizeof k, "preput_key_%d", j);
            bad |= add(&buf, &len, &cap, k, sp->prekeys[j]);
            snprintf(k, sizeof k, "preput_val_%d", j);
            bad |= add(&buf, &len, &cap, k, sp->prevals[j]);
        }
        snprintf(v, sizeof v, "%d", sp->ninfo[i]);
        bad |= add(&buf, &len, &cap, "info_num", v);
        for (int j = 0; j < sp->ninfo[i]; j++) {
            snprintf(k, sizeof k, "info_key_%d", j);
            bad |= add(&buf, &len, &cap, k, sp->keys[i][j]);
            snprintf(k, sizeof k, "info_val_%d", j);
            bad |= add(&buf, &len, &cap, k, sp->vals[i][j]);
        }
        bad |= add(&buf, &len, &cap, "endcmd", NULL);
    }
    char reply[1024];
    int rc = -1;
    if (bad)
        snprintf(err, errcap, "an argument or info value holds a newline");
    else if (vmpi_pmi_wire_write(buf, len) || vmpi_pmi_wire_line(reply, sizeof reply))
        snprintf(err, errcap, "the process manager did not answer");
    else if (!strstr(reply, "cmd=spawn_result") || !strstr(reply, "rc=0"))
        reason(reply, err, errcap);
    else
        rc = 0;
    free(buf);
    return rc;
}

/* Name publishing: rc != 0 in the reply is a refusal (1), not a failure. */
static int name_call(const char *line, const char *expect, char *reply, size_t cap)
{
    char c[64], rc[16];
    if (vmpi_pmi_wire_write(line, strlen(line)) || vmpi_pmi_wire_line(reply, cap) ||
        vmpi_pmi_wire_field(reply, "cmd", c, sizeof c) || strcmp(c, expect))
        return -1;
    return !vmpi_pmi_wire_field(reply, "rc", rc, sizeof rc) && atoi(rc) != 0;
}

static int pmi1_publish(const char *service, const char *port)
{
    char line[VMPI_PMI_VALLEN + 512];
    snprintf(line, sizeof line, "cmd=publish_name service=%s port=%s\n", service, port);
    return name_call(line, "publish_result", line, sizeof line);
}

static int pmi1_unpublish(const char *service)
{
    char line[1024];
    snprintf(line, sizeof line, "cmd=unpublish_name service=%s\n", service);
    return name_call(line, "unpublish_result", line, sizeof line);
}

static int pmi1_lookup(const char *service, char *port, size_t cap)
{
    char line[VMPI_PMI_VALLEN + 512];
    snprintf(line, sizeof line, "cmd=lookup_name service=%s\n", service);
    int rc = name_call(line, "lookup_result", line, sizeof line);
    return rc ? rc : vmpi_pmi_wire_field(line, "port", port, cap) ? 1 : 0;
}

static const struct vmpi_pmi_ops pmi1_ops = {
    .put = pmi1_put,
    .get = pmi1_get,
    .fence = pmi1_fence,
    .abort = pmi1_abort,
    .finalize = pmi1_finalize,
    .spawn = pmi1_spawn,
    .publish = pmi1_publish,
    .unpublish = pmi1_unpublish,
    .lookup = pmi1_lookup,
};

int vmpi_pmi1_init(struct vmpi_pmi_job *job, const struct vmpi_pmi_ops **ops)
{
    char line[1024], v[256];
    if (call("cmd=get_maxes\n", "maxes", line, sizeof line))
        return -1;
    if (!vmpi_pmi_wire_field(line, "keylen_max", v, sizeof v) && atoi(v) > 0 &&
        (size_t)atoi(v) < keylen_max)
        keylen_max = (size_t)atoi(v);
    if (!vmpi_pmi_wire_field(line, "vallen_max", v, sizeof v) && atoi(v) > 0 &&
        (size_t)atoi(v) < vallen_max)
        vallen_max = (size_t)atoi(v);
    if (call("cmd=get_my_kvsname\n", "my_kvsname", line, sizeof line) ||
        vmpi_pmi_wire_field(line, "kvsname", kvsname, sizeof kvsname))
        return -1;
    strcpy(job->kvsname, kvsname);
    if (!call("cmd=get_universe_size\n", "universe_size", line, sizeof line) &&
        !vmpi_pmi_wire_field(line, "size", v, sizeof v) && atoi(v) > 0)
        job->universe = atoi(v);
    /* Slurm answers -1 (no MPMD): the first and only application. */
    if (!call("cmd=get_appnum\n", "appnum", line, sizeof line) &&
        !vmpi_pmi_wire_field(line, "appnum", v, sizeof v) && atoi(v) > 0)
        job->appnum = atoi(v);
    /* As Hydra and vmpirun mark the processes MPI_Comm_spawn started. */
    const char *spawned = getenv("PMI_SPAWNED");
    job->spawned = spawned && !strcmp(spawned, "1");
    *ops = &pmi1_ops;
    return 0;
}
