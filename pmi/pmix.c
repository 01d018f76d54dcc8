/* PMIx client (Slurm's `srun --mpi=pmix`, Open MPI's mpirun and prterun)
 * through the real PMIx library, loaded with dlopen only when the job's
 * environment names a PMIx server (PMIX_NAMESPACE/PMIX_RANK): libvmpi does
 * not link libpmix, so it builds and runs where libpmix is absent, and a
 * PMIx job there fails at MPI_Init saying why.
 *
 * PMI's key-value space over PMIx's: PMIx_Get must name the rank that put
 * a key, which vmpi's gets do not know (and PMIX_RANK_UNDEF, "any rank",
 * fails in libpmix's shared-memory store). So a rank's puts between two
 * fences travel as one string, PMIx_Put as "vmpi-kvs-<fence number>"; the
 * fence (PMIx_Commit, PMIx_Fence collecting the data) brings everyone's to
 * every rank, and the first get after it copies them all into the local
 * key-value space, where the gets look.
 *
 * Spawn (pmix_spawn): PMIx_Spawn, with the pairs the new job must find in
 * its key-value space carried in its environment (PMIx has no preput).
 * Slurm's pmix plugin refuses it, Open MPI's mpirun serves it. */
#include "pmi_impl.h"
#include "pmix_abi.h"
#include "../base/base.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct vmpix_api px;
static vmpix_proc_t me;

/* An integer job attribute of `rank` (or the whole job, WILDCARD). */
static int get_int(uint32_t rank, const char *key, int *out)
{
    vmpix_proc_t p = me;
    vmpix_value_t *v = NULL;
    p.rank = rank;
    if (px.get(&p, key, NULL, 0, &v) != VMPIX_SUCCESS || !v)
        return -1;
    long long x;
    int rc = 0;
    switch (v->type) {
    case VMPIX_UINT32:
    case VMPIX_PROC_RANK: x = v->data.uint32; break;
    case VMPIX_INT:
    case VMPIX_INT32: x = v->data.int32; break;
    case VMPIX_UINT: x = v->data.uint; break;
    case VMPIX_UINT16: x = v->data.uint16; break;
    case VMPIX_SIZE: x = (long long)v->data.size; break;
    default: rc = -1; x = 0;
    }
    px.value_destruct(v);
    free(v);
    if (rc || x < 0 || x > 0x7fffffff)
        return -1;
    *out = (int)x;
    return 0;
}

/* This rank's puts since the last fence, as "key=value\n" lines. */
static char *pending;
static size_t plen, pcap;
/* Fences done; epochs whose puts are in the local key-value space. */
static unsigned epoch, fetched;
static int nranks;

static int pmix_put(const char *key, const char *val)
{
    size_t kl = strlen(key), vl = strlen(val);
    if (plen + kl + vl + 3 > pcap) {
        size_t cap = 2 * (plen + kl + vl + 3);
        char *p = realloc(pending, cap);
        if (!p)
            return -1;
        pending = p;
        pcap = cap;
    }
    plen += (size_t)sprintf(pending + plen, "%s=%s\n", key, val);
    return 0;
}

/* Every rank publishes its puts of each epoch as one value (maybe empty),
 * so a get never asks for a key that a rank did not put. */
static int pmix_fence(void)
{
    char key[32];
    snprintf(key, sizeof key, "vmpi-kvs-%u", epoch);
    vmpix_value_t v = {.type = VMPIX_STRING, .data.string = plen ? pending : ""};
    vmpix_info_t collect = {.key = VMPIX_COLLECT_DATA,
                            .value = {.type = VMPIX_BOOL, .data.flag = true}};
    if (px.put(VMPIX_GLOBAL, key, &v) != VMPIX_SUCCESS || px.commit() != VMPIX_SUCCESS ||
        px.fence(NULL, 0, &collect, 1) != VMPIX_SUCCESS)
        return -1;
    plen = 0;
    epoch++;
    return 0;
}

/* Copies the puts of `rank` in epoch e into the local key-value space. */
static int fetch(unsigned e, int rank)
{
    char key[32];
    vmpix_proc_t p = me;
    vmpix_value_t *v = NULL;
    p.rank = (uint32_t)rank;
    snprintf(key, sizeof key, "vmpi-kvs-%u", e);
    if (px.get(&p, key, NULL, 0, &v) != VMPIX_SUCCESS || !v)
        return -1;
    int rc = v->type == VMPIX_STRING ? 0 : -1;
    for (char *line = v->data.string, *nl; !rc && line && (nl = strchr(line, '\n'));
         line = nl + 1) {
        char *eq = memchr(line, '=', (size_t)(nl - line));
        *nl = '\0';
        if (!eq)
            rc = -1;
        else {
            *eq = '\0';
            rc = vmpi_pmi_local_put(line, eq + 1);
        }
    }
    px.value_destruct(v);
    free(v);
    return rc;
}

static int pmix_get(const char *key, char *val, size_t len)
{
    for (; fetched < epoch; fetched++)
        for (int r = 0; r < nranks; r++)
            if (fetch(fetched, r))
                return -1;
    return vmpi_pmi_local_get(key, val, len);
}

static void pmix_abort(int code, const char *msg)
{
    px.abort(code, msg ? msg : "", NULL, 0);
}

/* libpmix stays loaded: its threads are gone, but a handler it left with
 * libevent or atexit could still point into it. */
static int pmix_finalize(void)
{
    free(pending);
    pending = NULL;
    plen = pcap = 0;
    return px.finalize(NULL, 0) == VMPIX_SUCCESS ? 0 : -1;
}

/* PMIx_Spawn has no preput: the pairs for the new job travel in its
 * environment as PRE_ENV<key>=<value>, which its processes move into their
 * key-value space at init and take out of their environment. */
#define PRE_ENV "VMPI_PMIX_PRE_"

/* Each command with its arguments behind it (PMIx's argv[0] is the
 * command), the preput pairs as environment, info keys "host"/"hosts" as
 * PMIX_HOST and "wdir" as the working directory; other keys are not
 * PMIx's and are left out, as MPI lets an implementation do. */
static int pmix_spawn(const struct vmpi_pmi_spawn *sp, char *err, size_t errcap)
{
    vmpix_app_t *apps = calloc((size_t)sp->count, sizeof *apps);
    char **env = calloc((size_t)sp->npre + 1, sizeof *env);
    int rc = apps && env ? 0 : -1;
    for (int j = 0; rc == 0 && j < sp->npre; j++)
        if (asprintf(&env[j], "%s%s=%s", PRE_ENV, sp->prekeys[j], sp->prevals[j]) < 0) {
            env[j] = NULL;
            rc = -1;
        }
    for (int i = 0; rc == 0 && i < sp->count; i++) {
        vmpix_app_t *a = &apps[i];
        int argc = 0;
        while (sp->argvs && sp->argvs[i] && sp->argvs[i][argc])
            argc++;
        a->cmd = sp->cmds[i];
        a->argv = calloc((size_t)argc + 2, sizeof *a->argv);
        a->info = calloc((size_t)sp->ninfo[i] + 1, sizeof *a->info);
        a->env = env;
        a->maxprocs = sp->maxprocs[i];
        if (!a->argv || !a->info) {
            rc = -1;
            break;
        }
        a->argv[0] = sp->cmds[i];
        for (int k = 0; k < argc; k++)
            a->argv[k + 1] = sp->argvs[i][k];
        for (int j = 0; j < sp->ninfo[i]; j++) {
            const char *k = sp->keys[i][j];
            if (!strcmp(k, "wdir")) {
                a->cwd = sp->vals[i][j];
            } else if (!strcmp(k, "host") || !strcmp(k, "hosts")) {
                vmpix_info_t *in = &a->info[a->ninfo++];
                snprintf(in->key, sizeof in->key, "%s", VMPIX_HOST);
                in->value.type = VMPIX_STRING;
                in->value.data.string = sp->vals[i][j];
            }
        }
        if (!a->ninfo) { /* libpmix packs an info array that is not NULL, whatever ninfo says */
            free(a->info);
            a->info = NULL;
        }
    }
    char nspace[VMPIX_MAX_NSLEN + 1] = "";
    if (rc)
        snprintf(err, errcap, "out of memory");
    vmpix_status_t st = rc ? VMPIX_SUCCESS : px.spawn(NULL, 0, apps, (size_t)sp->count, nspace);
    if (!rc && st != VMPIX_SUCCESS) {
        snprintf(err, errcap, "the process manager refused (PMIx_Spawn: %s)%s",
                 px.error_string(st),
                 st == VMPIX_ERR_NOT_SUPPORTED && getenv("SLURM_JOB_ID")
                     ? "; Slurm's pmix plugin does not spawn, its pmi2 plugin does (srun "
                       "--mpi=pmi2)"
                     : "");
        rc = -1;
    }
    for (int i = 0; apps && i < sp->count; i++) {
        free(apps[i].argv);
        free(apps[i].info);
    }
    for (int j = 0; env && j < sp->npre; j++)
        free(env[j]);
    free(env);
    free(apps);
    return rc;
}

/* The pairs a spawning job left in the environment (pmix_spawn). */
static int pre_pairs(struct vmpi_pmi_job *job)
{
    extern char **environ;
    for (int i = 0; environ[i];) {
        char *e = environ[i], *eq = strchr(e, '=');
        if (strncmp(e, PRE_ENV, sizeof PRE_ENV - 1) || !eq) {
            i++;
            continue;
        }
        char key[256];
        snprintf(key, sizeof key, "%.*s", (int)(eq - e - (sizeof PRE_ENV - 1)),
                 e + sizeof PRE_ENV - 1);
        if (vmpi_pmi_local_put(key, eq + 1))
            return -1;
        job->spawned = true;
        char name[sizeof key + sizeof PRE_ENV];
        snprintf(name, sizeof name, "%s%s", PRE_ENV, key);
        unsetenv(name); /* environ[i] is now the next one */
    }
    return 0;
}

static const struct vmpi_pmi_ops pmix_ops = {
    .abort_at_exit = true,
    .put = pmix_put,
    .get = pmix_get,
    .fence = pmix_fence,
    .abort = pmix_abort,
    .finalize = pmix_finalize,
    .spawn = pmix_spawn,
};

/* An error code whose message says which process manager started us and
 * why vmpi cannot speak to it. */
static int refuse(const char *fmt, ...)
{
    char why[512];
    const char *ns = getenv("PMIX_NAMESPACE");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return vmpi_err_make(MPI_ERR_OTHER,
                         "MPI_Init: this process was started by a PMIx process manager "
                         "(PMIX_NAMESPACE=%s: srun --mpi=pmix, Open MPI's mpirun or prterun), "
                         "but %s",
                         ns ? ns : "unset", why);
}

/* The library and every entry point, or an error code naming what is
 * missing. Older than PMIx 3, pmix_value_t was smaller than declared. */
static int load(void)
{
    void *h = dlopen(VMPIX_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return refuse("the PMIx library cannot be loaded (%s); install it (Debian: libpmix2) or "
                      "start the job with vmpirun, mpiexec.hydra or srun --mpi=pmi2",
                      dlerror());
    struct { void **fn; const char *name; } syms[] = {
        {(void **)&px.get_version, "PMIx_Get_version"}, {(void **)&px.init, "PMIx_Init"},
        {(void **)&px.finalize, "PMIx_Finalize"},       {(void **)&px.abort, "PMIx_Abort"},
        {(void **)&px.put, "PMIx_Put"},                 {(void **)&px.commit, "PMIx_Commit"},
        {(void **)&px.fence, "PMIx_Fence"},             {(void **)&px.get, "PMIx_Get"},
        {(void **)&px.value_destruct, "PMIx_Value_destruct"},
        {(void **)&px.error_string, "PMIx_Error_string"}, {(void **)&px.spawn, "PMIx_Spawn"},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
        if (!(*syms[i].fn = dlsym(h, syms[i].name)))
            return refuse("%s lacks %s", VMPIX_SONAME, syms[i].name);
    /* "OpenPMIx 4.2.2, ..." or "PMIx 3.1.5 ..." */
    const char *ver = px.get_version(), *d = ver ? strpbrk(ver, "0123456789") : NULL;
    if (!d || atoi(d) < 3)
        return refuse("%s is %s; vmpi needs PMIx 3 or later", VMPIX_SONAME,
                      ver ? ver : "of unknown version");
    return 0;
}

int vmpi_pmix_init(struct vmpi_pmi_job *job, const struct vmpi_pmi_ops **ops)
{
    int rc = load();
    if (rc)
        return rc;
    vmpix_status_t st = px.init(&me, NULL, 0);
    if (st != VMPIX_SUCCESS)
        return refuse("PMIx_Init failed (%s): is its server gone?", px.error_string(st));
    if (me.rank > 0x7fffffff || get_int(VMPIX_RANK_WILDCARD, VMPIX_JOB_SIZE, &job->size)) {
        px.finalize(NULL, 0);
        return refuse("its server does not tell the job size (%s)", VMPIX_JOB_SIZE);
    }
    job->rank = (int)me.rank;
    nranks = job->size;
    get_int(me.rank, VMPIX_APPNUM, &job->appnum);
    get_int(VMPIX_RANK_WILDCARD, VMPIX_UNIV_SIZE, &job->universe);
    snprintf(job->kvsname, sizeof job->kvsname, "%s", me.nspace);
    if (pre_pairs(job)) {
        px.finalize(NULL, 0);
        return refuse("the pairs of the job that spawned this one do not fit");
    }
    *ops = &pmix_ops;
    return 0;
}
