/* Which process manager started this process, and which of its interfaces
 * to speak; the calls of pmi.h then go to that client's table (ops), or
 * to a process-local key-value space for a singleton.
 *
 * The choice, unless VMPI_PMI forces one (pmi1, pmi2, pmix):
 *  - PMI_FD or PMI_PORT (vmpirun, Hydra, srun --mpi=pmi2): PMI-2 under
 *    Slurm, PMI-1 elsewhere, the other one if the server refuses it
 *    (wire_init says why);
 *  - else PMIX_NAMESPACE/PMIX_RANK (srun --mpi=pmix, Open MPI's mpirun,
 *    prterun): PMIx through libpmix;
 *  - else the environment of a launcher that started several processes
 *    without any of these (srun --mpi=none, Open MPI's launcher without
 *    PMIx) is an error: a singleton there would be one of N rank 0s;
 *  - else a singleton, rank 0 of 1. */
#include "pmi_impl.h"
#include "../base/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct vmpi_pmi_ops *ops; /* NULL: singleton */
static struct vmpi_pmi_job job = {.kvsname = "singleton"};

/* The process-local key-value space: a singleton's, or a client's copy of
 * what the others put (pmix.c); the latest put of a key comes first. */
struct kv { char *key, *val; struct kv *next; };
static struct kv *local_kvs;

enum want { WANT_AUTO, WANT_PMI1, WANT_PMI2, WANT_PMIX, WANT_BAD };

static enum want wanted(void)
{
    const char *w = vmpi_knob_str("VMPI_PMI");
    if (!w || !*w || !strcmp(w, "auto"))
        return WANT_AUTO;
    if (!strcmp(w, "pmi1"))
        return WANT_PMI1;
    if (!strcmp(w, "pmi2"))
        return WANT_PMI2;
    return !strcmp(w, "pmix") ? WANT_PMIX : WANT_BAD;
}

static bool pmix_env(void)
{
    return getenv("PMIX_NAMESPACE") || getenv("PMIX_RANK");
}

/* The launcher that started this process among others without giving it
 * a process-manager connection, described in buf, or NULL. */
static const char *foreign_manager(char *buf, size_t cap)
{
    int n;
    if (!vmpi_pmi_env_int("OMPI_COMM_WORLD_SIZE", &n) && n > 1)
        snprintf(buf, cap, "Open MPI's launcher (OMPI_COMM_WORLD_SIZE=%d)", n);
    else if (!vmpi_pmi_env_int("SLURM_STEP_NUM_TASKS", &n) && n > 1 && getenv("SLURM_PROCID"))
        snprintf(buf, cap, "Slurm's srun without a PMI plugin (SLURM_STEP_NUM_TASKS=%d)", n);
    else
        return NULL;
    return buf;
}

/* A failed exchange on PMI_FD/PMI_PORT, naming the step. */
static int wire_failed(const char *step)
{
    const char *fd = getenv("PMI_FD");
    return vmpi_err_make(MPI_ERR_OTHER,
                         "MPI_Init: %s with the process manager on %s=%s failed: is it gone, "
                         "or is this not a PMI-1/PMI-2 server?",
                         step, fd ? "PMI_FD" : "PMI_PORT", fd ? fd : getenv("PMI_PORT"));
}

/* The version offered first: PMI-2 where the server is Slurm's pmi2 plugin
 * (which sets PMI_JOBID and wants it back), PMI-1 elsewhere: Hydra 4.0
 * accepts PMI-2 but its kvs-fence does not wait for the other ranks and it
 * does not know PMI-2's abort, and vmpirun speaks only PMI-1. The other
 * version is offered when the server refuses the first. */
static int wire_init(enum want w)
{
    int first = w == WANT_PMI2 || (w == WANT_AUTO && getenv("PMI_JOBID")) ? 2 : 1;
    for (int v = first, tries = w == WANT_AUTO ? 2 : 1; tries--; v = 3 - v) {
        int rc = vmpi_pmi_wire_hello(v, v == 2 ? 0 : 1);
        if (rc < 0)
            return wire_failed("the PMI version offer");
        if (rc == 0 && v == 2)
            return vmpi_pmi2_init(&job, &ops) ? wire_failed("the PMI-2 start-up") : 0;
        if (rc == 0)
            return vmpi_pmi1_init(&job, &ops) ? wire_failed("the PMI-1 start-up") : 0;
    }
    if (w == WANT_AUTO)
        return vmpi_err_make(MPI_ERR_OTHER, "MPI_Init: the process manager on PMI_FD/PMI_PORT "
                                            "refuses both PMI-1 and PMI-2");
    return vmpi_err_make(MPI_ERR_OTHER,
                         "MPI_Init: VMPI_PMI=%s, but the process manager on PMI_FD/PMI_PORT "
                         "refuses PMI-%d",
                         vmpi_knob_str("VMPI_PMI"), first);
}

static int choose(void)
{
    char buf[256];
    enum want w = wanted();
    if (w == WANT_BAD)
        return vmpi_err_make(MPI_ERR_OTHER, "MPI_Init: VMPI_PMI=%s is none of auto, pmi1, "
                                            "pmi2, pmix", vmpi_knob_str("VMPI_PMI"));
    if (w == WANT_PMIX || (w == WANT_AUTO && !getenv("PMI_FD") && !getenv("PMI_PORT") &&
                           pmix_env()))
        return vmpi_pmix_init(&job, &ops);
    int rc = vmpi_pmi_wire_open(&job);
    if (rc < 0)
        return wire_failed("connecting (or, with PMI_FD, reading PMI_RANK and PMI_SIZE)");
    if (rc == 0)
        return wire_init(w);
    if (w != WANT_AUTO)
        return vmpi_err_make(MPI_ERR_OTHER, "MPI_Init: VMPI_PMI=%s, but neither PMI_FD nor "
                                            "PMI_PORT is set", vmpi_knob_str("VMPI_PMI"));
    if (foreign_manager(buf, sizeof buf))
        return vmpi_err_make(MPI_ERR_OTHER,
                             "MPI_Init: this process was started by %s, which vmpi cannot "
                             "speak; vmpi speaks PMI-1 and PMI-2 (vmpirun, mpiexec.hydra, srun "
                             "--mpi=pmi2) and PMIx (srun --mpi=pmix, Open MPI's mpirun)",
                             buf);
    return 0;
}

/* A rank that exits with a non-zero status before MPI_Finalize ends the
 * job with that status, as MPI_Abort would. vmpirun and Hydra (PMI-1) see
 * such an exit themselves; under Slurm the others would wait for it
 * forever (PMI-2) or be killed and the signal reported instead (PMIx).
 * vmpi's own fatal errors leave with _exit, past this, after their abort;
 * atexit handlers registered before MPI_Init do not run here. */
static pid_t rank_pid;

static void early_exit(int status, void *arg)
{
    char msg[128];
    (void)arg;
    /* A forked child that exits is not the rank. */
    if (!ops || !ops->abort_at_exit || status == 0 || getpid() != rank_pid)
        return;
    snprintf(msg, sizeof msg, "rank %d exited with code %d before MPI_Finalize", job.rank,
             status);
    fprintf(stderr, "vmpi: %s: ending the job\n", msg);
    ops->abort(status, msg);
    /* The process manager kills the job now: leave with our status before
     * that reaches us (the rest of exit could take long enough). */
    fflush(NULL);
    _exit(status);
}

int vmpi_pmi_init(int *rank, int *size, int *appnum)
{
    static bool hooked;
    job.rank = 0;
    job.size = 1;
    job.appnum = 0;
    job.universe = 0;
    job.spawned = false;
    int rc = choose();
    if (rc) {
        vmpi_pmi_wire_close();
        ops = NULL;
        /* The rank the launcher meant, for the error message. */
        const char *names[] = {"PMI_RANK", "PMIX_RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK"};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (!vmpi_pmi_env_int(names[i], rank))
                break;
        return rc;
    }
    if (job.universe > 0 && job.universe < job.size)
        job.universe = job.size;
    rank_pid = getpid();
    if (!hooked && ops && ops->abort_at_exit && !on_exit(early_exit, NULL))
        hooked = true;
    *rank = job.rank;
    *size = job.size;
    *appnum = job.appnum;
    return 0;
}

const char *vmpi_pmi_kvsname(void) { return job.kvsname; }
bool vmpi_pmi_connected(void) { return ops != NULL; }
int vmpi_pmi_universe_size(void) { return job.universe > 0 ? job.universe : 0; }
int vmpi_pmi_appnum(void) { return job.appnum; }
bool vmpi_pmi_spawned(void) { return job.spawned; }

/* Keys and values travel as words: PMI-1 ends them at a space. */
int vmpi_pmi_put(const char *key, const char *val)
{
    if (strlen(key) >= VMPI_PMI_KEYLEN || strlen(val) >= VMPI_PMI_VALLEN ||
        strpbrk(key, " =;\n") || strpbrk(val, " \n"))
        return -1;
    return ops ? ops->put(key, val) : vmpi_pmi_local_put(key, val);
}

int vmpi_pmi_local_put(const char *key, const char *val)
{
    struct kv *e = malloc(sizeof *e);
    if (!e)
        return -1;
    e->key = strdup(key);
    e->val = strdup(val);
    e->next = local_kvs;
    local_kvs = e;
    return e->key && e->val ? 0 : -1;
}

int vmpi_pmi_local_get(const char *key, char *val, size_t len)
{
    for (struct kv *e = local_kvs; e; e = e->next)
        if (!strcmp(e->key, key) && strlen(e->val) < len) {
            strcpy(val, e->val);
            return 0;
        }
    return -1;
}

int vmpi_pmi_get(const char *key, char *val, size_t len)
{
    return ops ? ops->get(key, val, len) : vmpi_pmi_local_get(key, val, len);
}

int vmpi_pmi_fence(void)
{
    return ops ? ops->fence() : 0;
}

void vmpi_pmi_abort(int code, const char *msg)
{
    if (ops)
        ops->abort(code, msg);
}

int vmpi_pmi_finalize(void)
{
    while (local_kvs) {
        struct kv *e = local_kvs;
        local_kvs = e->next;
        free(e->key);
        free(e->val);
        free(e);
    }
    int rc = ops ? ops->finalize() : 0;
    ops = NULL;
    return rc;
}

int vmpi_pmi_spawn(const struct vmpi_pmi_spawn *s, char *err, size_t cap)
{
    if (ops && ops->spawn)
        return ops->spawn(s, err, cap);
    snprintf(err, cap, "a singleton cannot spawn: start the program with vmpirun");
    return -1;
}

int vmpi_pmi_publish(const char *service, const char *port)
{
    return ops && ops->publish ? ops->publish(service, port) : -1;
}

int vmpi_pmi_unpublish(const char *service)
{
    return ops && ops->unpublish ? ops->unpublish(service) : -1;
}

int vmpi_pmi_lookup(const char *service, char *port, size_t cap)
{
    return ops && ops->lookup ? ops->lookup(service, port, cap) : -1;
}
