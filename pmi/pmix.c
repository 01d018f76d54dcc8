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
 * key-value space, where the gets look. */
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

static const struct vmpi_pmi_ops pmix_ops = {
    .abort_at_exit = true,
    .put = pmix_put,
    .get = pmix_get,
    .fence = pmix_fence,
    .abort = pmix_abort,
    .finalize = pmix_finalize,
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
        {(void **)&px.error_string, "PMIx_Error_string"},
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
    *ops = &pmix_ops;
    return 0;
}
