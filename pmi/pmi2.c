/* PMI-2 client (Hydra, Slurm's `srun --mpi=pmi2`), after the PMI-1 style
 * `cmd=init pmi_version=2` was accepted. Each command, and each reply, is
 * a 6-character decimal length (space padded) followed by that many bytes
 * of `cmd=NAME;key=value;...;`, a ';' inside a value doubled:
 *
 *   cmd=fullinit;[pmijobid=J;]pmirank=R|pmiid=I;threaded=FALSE;
 *        -> cmd=fullinit-response;rc=0;rank=R;size=N;appnum=A;...
 *   cmd=job-getid;                     -> ...;jobid=J;
 *   cmd=info-getjobattr;key=universeSize;  -> ...;found=TRUE;value=N;
 *   cmd=kvs-put;key=K;value=V;         -> cmd=kvs-put-response;rc=0;
 *   cmd=kvs-fence;                     -> (when every rank fenced)
 *   cmd=kvs-get;jobid=J;srcid=-1;key=K;    -> ...;found=TRUE;value=V;
 *   cmd=abort;isworld=TRUE;msg=M;      (no reply; no exit code in PMI-2)
 *   cmd=finalize;                      -> cmd=finalize-response;rc=0;
 *   cmd=spawn;ncmds=N;preputcount=P;ppkey0=K;ppval0=V;...  then per command
 *        subcmd=PROG;maxprocs=M;argc=A;argv0=...;infokeycount=I;infokey0=..;
 *        infoval0=..;  -> cmd=spawn-response;rc=0;jobid=J;...  (once started)
 *
 * The children's fullinit-response names the job that spawned them
 * (spawner-jobid), and their key-value space holds its preput pairs.
 */
#include "pmi_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PMI2_LENLEN 6
/* A command or reply: a value escaped (each ';' doubled) plus the rest. */
#define PMI2_MAX (2 * VMPI_PMI_VALLEN + 512)

static char jobid[256];

/* Appends `key=value;` to the command in b (length *n), escaping ';'. */
static int append(char *b, size_t *n, const char *key, const char *val)
{
    size_t kl = strlen(key);
    if (*n + kl + 2 + 2 * strlen(val) >= PMI2_MAX)
        return -1;
    memcpy(b + *n, key, kl);
    *n += kl;
    b[(*n)++] = '=';
    for (const char *p = val; *p; p++) {
        if (*p == ';')
            b[(*n)++] = ';';
        b[(*n)++] = *p;
    }
    b[(*n)++] = ';';
    return 0;
}

/* Puts the length before the command in b (n bytes with the length's
 * room) and sends it. */
static int frame(char *b, size_t n)
{
    char len[PMI2_LENLEN + 1];
    snprintf(len, sizeof len, "%-6d", (int)(n - PMI2_LENLEN));
    memcpy(b, len, PMI2_LENLEN);
    return vmpi_pmi_wire_write(b, n);
}

/* Sends `cmd=NAME;` and the NULL-terminated key, value pairs. */
static int send_cmd(const char *name, ...)
{
    char b[PMI2_LENLEN + PMI2_MAX + 1];
    size_t n = PMI2_LENLEN;
    va_list ap;
    va_start(ap, name);
    int rc = append(b, &n, "cmd", name);
    for (const char *k; !rc && (k = va_arg(ap, const char *));)
        rc = append(b, &n, k, va_arg(ap, const char *));
    va_end(ap);
    return rc ? -1 : frame(b, n);
}

/* The value of `key` in a reply body, ";;" read as ';'. */
static int field(const char *body, const char *key, char *out, size_t cap)
{
    size_t kl = strlen(key);
    const char *p = body;
    while (*p) {
        bool match = !strncmp(p, key, kl) && p[kl] == '=';
        const char *v = strchr(p, '=');
        if (!v)
            return -1;
        size_t o = 0;
        for (p = v + 1; *p && !(*p == ';' && p[1] != ';'); p++) {
            if (*p == ';')
                p++;
            if (match && o + 1 < cap)
                out[o++] = *p;
            else if (match)
                return -1;
        }
        if (match) {
            out[o] = '\0';
            return 0;
        }
        if (*p == ';')
            p++;
    }
    return -1;
}

/* Reads the reply, which must be `cmd=expect` with rc=0. */
static int reply(const char *expect, char *body, size_t cap)
{
    char len[PMI2_LENLEN + 1], c[64], *end;
    if (vmpi_pmi_wire_read(len, PMI2_LENLEN))
        return -1;
    len[PMI2_LENLEN] = '\0';
    long n = strtol(len, &end, 10);
    while (*end == ' ')
        end++;
    if (*end || n <= 0 || (size_t)n >= cap || vmpi_pmi_wire_read(body, (size_t)n))
        return -1;
    body[n] = '\0';
    if (field(body, "cmd", c, sizeof c) || strcmp(c, expect))
        return -1;
    if (!field(body, "rc", c, sizeof c) && atoi(c) != 0)
        return -1;
    return 0;
}

/* A job attribute or KVS value: the reply says found=TRUE. */
static int found(const char *body, char *val, size_t len)
{
    char f[8];
    if (field(body, "found", f, sizeof f) || strcmp(f, "TRUE"))
        return -1;
    return field(body, "value", val, len);
}

static int pmi2_put(const char *key, const char *val)
{
    char body[PMI2_MAX];
    if (strlen(key) >= VMPI_PMI_KEYLEN || strlen(val) >= VMPI_PMI_VALLEN ||
        send_cmd("kvs-put", "key", key, "value", val, NULL))
        return -1;
    return reply("kvs-put-response", body, sizeof body);
}

static int pmi2_get(const char *key, char *val, size_t len)
{
    char body[PMI2_MAX];
    if (send_cmd("kvs-get", "jobid", jobid, "srcid", "-1", "key", key, NULL) ||
        reply("kvs-get-response", body, sizeof body))
        return -1;
    return found(body, val, len);
}

static int pmi2_fence(void)
{
    char body[PMI2_MAX];
    if (send_cmd("kvs-fence", NULL))
        return -1;
    return reply("kvs-fence-response", body, sizeof body);
}

/* PMI-2's abort carries no exit code: the rank exits with it right after
 * (base/err.c), before the process manager's kill reaches it. */
static void pmi2_abort(int code, const char *msg)
{
    char m[VMPI_PMI_VALLEN];
    (void)code;
    snprintf(m, sizeof m, "%s", msg ? msg : "");
    send_cmd("abort", "isworld", "TRUE", "msg", m, NULL);
}

static int pmi2_finalize(void)
{
    char body[PMI2_MAX];
    int rc = send_cmd("finalize", NULL) || reply("finalize-response", body, sizeof body);
    vmpi_pmi_wire_close();
    return rc ? -1 : 0;
}

/* `KEYi=value` (i >= 0) or `key=n` (i < 0, an integer value). */
static int append_at(char *b, size_t *n, const char *key, int i, const char *val, int num)
{
    char k[32], v[16];
    snprintf(k, sizeof k, i >= 0 ? "%s%d" : "%s", key, i);
    snprintf(v, sizeof v, "%d", num);
    return append(b, n, k, val ? val : v);
}

static int pmi2_spawn(const struct vmpi_pmi_spawn *sp, char *err, size_t errcap)
{
    /* append() keeps within PMI2_MAX: the preput pairs get that much, and
     * each command as much again. */
    char *b = malloc(PMI2_LENLEN + (size_t)(sp->count + 1) * PMI2_MAX), body[PMI2_MAX], why[256];
    size_t n = PMI2_LENLEN;
    if (!b) {
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    int bad = append(b, &n, "cmd", "spawn") | append_at(b, &n, "ncmds", -1, NULL, sp->count) |
              append_at(b, &n, "preputcount", -1, NULL, sp->npre);
    for (int j = 0; j < sp->npre; j++)
        bad |= append_at(b, &n, "ppkey", j, sp->prekeys[j], 0) |
               append_at(b, &n, "ppval", j, sp->prevals[j], 0);
    for (int i = 0; i < sp->count && !bad; i++) {
        int argc = 0;
        while (sp->argvs && sp->argvs[i] && sp->argvs[i][argc])
            argc++;
        size_t start = n;
        n = 0;
        char *c = b + start;
        bad |= append(c, &n, "subcmd", sp->cmds[i]) |
               append_at(c, &n, "maxprocs", -1, NULL, sp->maxprocs[i]) |
               append_at(c, &n, "argc", -1, NULL, argc);
        for (int a = 0; a < argc; a++)
            bad |= append_at(c, &n, "argv", a, sp->argvs[i][a], 0);
        bad |= append_at(c, &n, "infokeycount", -1, NULL, sp->ninfo[i]);
        for (int j = 0; j < sp->ninfo[i]; j++)
            bad |= append_at(c, &n, "infokey", j, sp->keys[i][j], 0) |
                   append_at(c, &n, "infoval", j, sp->vals[i][j], 0);
        n += start;
    }
    int rc = -1;
    if (bad)
        snprintf(err, errcap, "the command, its arguments or info values are too long for "
                              "PMI-2");
    else if (frame(b, n))
        snprintf(err, errcap, "the connection to the process manager failed");
    else if (reply("spawn-response", body, sizeof body))
        snprintf(err, errcap, "the process manager refused: %s",
                 field(body, "errmsg", why, sizeof why) ? "no reason given" : why);
    else
        rc = 0;
    free(b);
    return rc;
}

static const struct vmpi_pmi_ops pmi2_ops = {
    .abort_at_exit = true,
    .put = pmi2_put,
    .get = pmi2_get,
    .fence = pmi2_fence,
    .abort = pmi2_abort,
    .finalize = pmi2_finalize,
    .spawn = pmi2_spawn,
};

/* fullinit names this process as the server knows it: by PMI_ID in port
 * mode, else by rank; Slurm also wants its PMI_JOBID back. */
static int fullinit(struct vmpi_pmi_job *job, char *body, size_t cap)
{
    char rank[16];
    const char *id = getenv("PMI_ID"), *jid = getenv("PMI_JOBID");
    snprintf(rank, sizeof rank, "%d", job->rank);
    const char *who = id ? "pmiid" : "pmirank", *idv = id ? id : rank;
    int rc = jid ? send_cmd("fullinit", "pmijobid", jid, who, idv, "threaded", "FALSE", NULL)
                 : send_cmd("fullinit", who, idv, "threaded", "FALSE", NULL);
    if (rc || reply("fullinit-response", body, cap))
        return -1;
    char v[32];
    if (field(body, "rank", v, sizeof v))
        return -1;
    job->rank = atoi(v);
    if (field(body, "size", v, sizeof v))
        return -1;
    job->size = atoi(v);
    /* Slurm answers -1 (no MPMD): the first and only application. */
    if (!field(body, "appnum", v, sizeof v) && atoi(v) > 0)
        job->appnum = atoi(v);
    char spawner[256];
    job->spawned = !field(body, "spawner-jobid", spawner, sizeof spawner) && *spawner;
    return 0;
}

int vmpi_pmi2_init(struct vmpi_pmi_job *job, const struct vmpi_pmi_ops **ops)
{
    char body[PMI2_MAX], v[32];
    if (fullinit(job, body, sizeof body))
        return -1;
    if (send_cmd("job-getid", NULL) || reply("job-getid-response", body, sizeof body) ||
        field(body, "jobid", jobid, sizeof jobid))
        return -1;
    strcpy(job->kvsname, jobid);
    if (!send_cmd("info-getjobattr", "key", "universeSize", NULL) &&
        !reply("info-getjobattr-response", body, sizeof body) && !found(body, v, sizeof v) &&
        atoi(v) > 0)
        job->universe = atoi(v);
    *ops = &pmi2_ops;
    return 0;
}
