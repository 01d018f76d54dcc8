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

static const struct vmpi_pmi_ops pmi1_ops = {
    .put = pmi1_put,
    .get = pmi1_get,
    .fence = pmi1_fence,
    .abort = pmi1_abort,
    .finalize = pmi1_finalize,
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
    *ops = &pmi1_ops;
    return 0;
}
