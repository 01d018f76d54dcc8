/* Start-up and shut-down of the whole library. */
#include "vmpi.h"
#include "../locality/locality.h"
#include "../pmi/pmi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct vmpi_global vmpi_g;

/* The job id names shared-memory files: the launcher's VMPI_JOB_ID, else
 * the PMI kvs name (unique per job under Hydra), else our pid. */
static void job_id(void)
{
    const char *id = getenv("VMPI_JOB_ID");
    char buf[64];
    if (!id || !*id) {
        if (vmpi_pmi_connected()) {
            id = vmpi_pmi_kvsname();
        } else {
            snprintf(buf, sizeof buf, "single%ld", (long)getpid());
            id = buf;
        }
    }
    size_t n = 0;
    for (const char *p = id; *p && n < sizeof vmpi_job.id - 1; p++)
        vmpi_job.id[n++] = (char)((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                                            (*p >= '0' && *p <= '9')
                                        ? *p
                                        : '_');
    vmpi_job.id[n] = '\0';
}

/* The active channels are the first pollers, in channel-list order. */
static void progress_init(void)
{
    const struct vmpi_locality_chan *ch;
    int n = vmpi_locality_active(&ch);
    for (int i = 0; i < n; i++)
        vmpi_progress_add(ch[i].chan->poll, ch[i].poll_mask, 0);
    /* More ranks on this machine than processors: a rank that spins while
     * the one it waits for has no processor holds things up for a whole
     * time slice, so idle polling yields now and then. Emulated VMs and
     * hosts share the machine's processors, hence all ranks on this kernel
     * are counted. */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int onhost = vmpi_locality_kernel_ranks();
    vmpi_g.yield_polls = (unsigned)vmpi_env_u64("VMPI_YIELD_POLLS",
                                                 ncpu > 0 && onhost > ncpu ? 1 : 0, 0, 4096);
    vmpi_g.yield_auto = !vmpi_knob_str("VMPI_YIELD_POLLS");
}

int vmpi_core_init(int required, int *provided)
{
    int appnum;
    int rc = vmpi_pmi_init(&vmpi_job.rank, &vmpi_job.size, &appnum);
    if (rc)
        vmpi_fatal("%s", rc > 0 && vmpi_err_text(rc)
                             ? vmpi_err_text(rc)
                             : "cannot connect to the process manager (PMI_FD/PMI_PORT)");
    if (vmpi_job.size < 1 || vmpi_job.rank < 0 || vmpi_job.rank >= vmpi_job.size)
        vmpi_fatal("process manager gave rank %d of %d", vmpi_job.rank, vmpi_job.size);
    job_id();
    /* vmpirun reports an abort's message itself, with the rank's host and
     * VM (VMPI_PM_REPORTS_ABORT in the ranks' environment); Hydra does not. */
    const char *rep = getenv("VMPI_PM_REPORTS_ABORT");
    vmpi_fatal_hook(vmpi_pmi_abort, rep && !strcmp(rep, "1") && vmpi_pmi_connected());
    /* Every level is offered; VMPI_THREAD_LEVEL caps it (a program that
     * asks for MULTIPLE but calls MPI from one thread at a time runs
     * without the lock under SERIALIZED). */
    int cap = (int)vmpi_knob_num("VMPI_THREAD_LEVEL");
    vmpi_g.thread_level = required < cap ? required : cap;
    if (provided)
        *provided = vmpi_g.thread_level;
    vmpi_cs_init(vmpi_g.thread_level);
    vmpi_g.unexp_max = vmpi_env_bytes("VMPI_UNEXPECTED_MAX", (uint64_t)64 << 20, 0, UINT64_MAX);
    if (vmpi_p2p_init(vmpi_job.size))
        vmpi_fatal("out of memory during MPI_Init");
    if (vmpi_dtype_init() || vmpi_comm_init())
        vmpi_fatal("cannot set up predefined datatypes and communicators");
    vmpi_g.state = 1;
    vmpi_locality_init(&vmpi_p2p_up);
    progress_init();
    return MPI_SUCCESS;
}

int vmpi_core_finalize(void)
{
    /* Everything this rank queued must reach its peers before we leave. */
    while (!vmpi_progress_idle())
        vmpi_progress();
    if (vmpi_pmi_fence())
        vmpi_fatal("PMI barrier failed in MPI_Finalize");
    vmpi_progress_finalize();
    vmpi_locality_finalize();
    vmpi_p2p_finalize();
    vmpi_comm_finalize();
    vmpi_info_finalize();
    vmpi_dtype_finalize();
    vmpi_req_pool_finalize();
    vmpi_pmi_finalize();
    /* A fatal error after this (an MPI call after MPI_Finalize) has no
     * process manager to tell: the rank prints it. */
    vmpi_fatal_hook(NULL, false);
    vmpi_g.state = 2;
    return MPI_SUCCESS;
}
