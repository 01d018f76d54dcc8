/* Tables of the tool interface (core/mpit.h). */
#include "mpit.h"
#include "../channel/chan.h"
#include "vmpi/lock.h"

#include <stdio.h>
#include <string.h>

struct vmpi_pvar vmpi_pvars[VMPI_PVAR_MAX];
int vmpi_npvars;
struct vmpi_tcat vmpi_tcats[VMPI_TCAT_MAX];
int vmpi_ntcats;

static_assert(sizeof(size_t) == sizeof(uint64_t) && sizeof(vmpi_lock_parks) == sizeof(uint64_t) &&
                  sizeof(vmpi_cs_yields) == sizeof(uint64_t) &&
                  sizeof(vmpi_cs_bias_moves) == sizeof(uint64_t),
              "unexp_bytes, vmpi_lock_parks and the thread counters are read as 64-bit counters");

static const struct {
    const char *name, *desc;
} cat_desc[] = {
    {"vmpi", "All of vmpi's variables, by layer and channel"},
    {"vmpi.core", "Matching, progress, the unexpected queue and the progress thread"},
    {"vmpi.launch", "What the launcher tells the library"},
    {"vmpi.locality", "Who runs where, and which channels the job may use"},
    {"vmpi.smp", "Channel smp: shared memory between the ranks of one VM"},
    {"vmpi.ivshmem", "Channel ivshmem: the host region shared by the VMs of one host"},
    {"vmpi.ofi", "Channel ofi: the network, through libfabric"},
    {"vmpi.coll", "Choice of collective algorithms"},
    {"vmpi.rma", "One-sided communication windows"},
};

/* The index of category name, added (under the root) when new. */
static int cat_of(const char *name)
{
    static char names[VMPI_TCAT_MAX][32];
    for (int i = 0; i < vmpi_ntcats; i++)
        if (!strcmp(vmpi_tcats[i].name, name))
            return i;
    if (vmpi_ntcats == VMPI_TCAT_MAX)
        vmpi_fatal("internal error: more than %d MPI_T categories", VMPI_TCAT_MAX);
    int c = vmpi_ntcats++;
    snprintf(names[c], sizeof names[c], "%s", name);
    vmpi_tcats[c].name = names[c];
    vmpi_tcats[c].desc = "";
    for (size_t k = 0; k < sizeof cat_desc / sizeof *cat_desc; k++)
        if (!strcmp(cat_desc[k].name, name))
            vmpi_tcats[c].desc = cat_desc[k].desc;
    if (c > 0)
        vmpi_tcats[0].subs[vmpi_tcats[0].nsubs++] = c;
    return c;
}

static void pvar_add(const char *cat, const uint64_t *src, int cls, int verbosity,
                     const char *name, const char *desc)
{
    if (vmpi_npvars == VMPI_PVAR_MAX)
        vmpi_fatal("internal error: more than %d MPI_T performance variables", VMPI_PVAR_MAX);
    struct vmpi_pvar *p = &vmpi_pvars[vmpi_npvars];
    snprintf(p->name, sizeof p->name, "%s", name);
    snprintf(p->desc, sizeof p->desc, "%s", desc);
    p->var_class = cls;
    p->verbosity = verbosity;
    /* Counters start and stop per handle; levels and watermarks are read
     * as they are. */
    p->continuous = cls != MPI_T_PVAR_CLASS_COUNTER;
    p->readonly = p->continuous;
    p->src = src;
    struct vmpi_tcat *c = &vmpi_tcats[cat_of(cat)];
    c->pvars[c->npvars++] = vmpi_npvars++;
}

static void channel_pvars(const struct vmpi_chan *ch)
{
    static const struct {
        const char *what, *desc;
        size_t off;
        int verbosity;
    } counters[] = {
        {"msgs_sent", "Messages this rank sent through channel %s (eager and rendezvous)",
         offsetof(struct vmpi_chan_stats, msgs_sent), MPI_T_VERBOSITY_USER_BASIC},
        {"bytes_sent", "Bytes of the messages this rank sent through channel %s",
         offsetof(struct vmpi_chan_stats, bytes_sent), MPI_T_VERBOSITY_USER_BASIC},
        {"rndv_sent", "Messages this rank sent through channel %s by rendezvous (larger than "
                      "its eager limit)",
         offsetof(struct vmpi_chan_stats, rndv_sent), MPI_T_VERBOSITY_TUNER_BASIC},
        {"msgs_recvd", "Messages that arrived at this rank through channel %s",
         offsetof(struct vmpi_chan_stats, msgs_recvd), MPI_T_VERBOSITY_USER_BASIC},
        {"bytes_recvd", "Bytes of the messages that arrived at this rank through channel %s "
                        "(a rendezvous counts when announced)",
         offsetof(struct vmpi_chan_stats, bytes_recvd), MPI_T_VERBOSITY_USER_BASIC},
    };
    char cat[32], name[48], desc[192];
    snprintf(cat, sizeof cat, "vmpi.%s", ch->name);
    for (size_t k = 0; k < sizeof counters / sizeof *counters; k++) {
        snprintf(name, sizeof name, "vmpi_%s_%s", ch->name, counters[k].what);
        snprintf(desc, sizeof desc, counters[k].desc, ch->name);
        pvar_add(cat, (const uint64_t *)((const char *)ch->stats + counters[k].off),
                 MPI_T_PVAR_CLASS_COUNTER, counters[k].verbosity, name, desc);
    }
}

void vmpi_mpit_tables(void)
{
    if (vmpi_ntcats)
        return;
    cat_of("vmpi");
    for (int i = 0; i < vmpi_nknobs; i++) {
        struct vmpi_tcat *c = &vmpi_tcats[cat_of(vmpi_knobs[i].category)];
        c->cvars[c->ncvars++] = i;
    }
    pvar_add("vmpi.core", &vmpi_g.unexp_len, MPI_T_PVAR_CLASS_LEVEL, MPI_T_VERBOSITY_TUNER_BASIC,
             "vmpi_unexpected_len", "Messages in the unexpected queue now (arrived, no "
                                    "matching receive posted yet)");
    pvar_add("vmpi.core", &vmpi_g.unexp_hwm, MPI_T_PVAR_CLASS_HIGHWATERMARK,
             MPI_T_VERBOSITY_TUNER_BASIC, "vmpi_unexpected_hwm",
             "Most messages ever in the unexpected queue at once in this process");
    pvar_add("vmpi.core", (const uint64_t *)&vmpi_g.unexp_bytes, MPI_T_PVAR_CLASS_LEVEL,
             MPI_T_VERBOSITY_TUNER_BASIC, "vmpi_unexpected_bytes",
             "Bytes of unexpected messages held in memory now (capped by VMPI_UNEXPECTED_MAX)");
    pvar_add("vmpi.core", (const uint64_t *)&vmpi_lock_parks, MPI_T_PVAR_CLASS_COUNTER,
             MPI_T_VERBOSITY_TUNER_BASIC, "vmpi_lock_parks",
             "Times a waiter of the library's parking locks (windows' locks in shared memory, the "
             "MPI_THREAD_MULTIPLE lock) parked or backed off instead of spinning");
    pvar_add("vmpi.core", (const uint64_t *)&vmpi_cs_yields, MPI_T_PVAR_CLASS_COUNTER,
             MPI_T_VERBOSITY_TUNER_BASIC, "vmpi_thread_yields",
             "Times a thread waiting in a blocking call under MPI_THREAD_MULTIPLE gave its "
             "processor away (sched_yield, without the library's lock) so that another "
             "application thread could run");
    pvar_add("vmpi.core", (const uint64_t *)&vmpi_cs_bias_moves, MPI_T_PVAR_CLASS_COUNTER,
             MPI_T_VERBOSITY_TUNER_BASIC, "vmpi_thread_bias_moves",
             "Times the MPI_THREAD_MULTIPLE lock was biased to a thread that had used it alone "
             "for a while, so its calls stopped taking the lock");
    pvar_add("vmpi.core", NULL, MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_TUNER_BASIC,
             "vmpi_thread_split_sends",
             "Eager MPI_Send and MPI_Isend calls under MPI_THREAD_MULTIPLE that held only their "
             "peer's send lock, not the library's (VMPI_THREAD_SPLIT)");
    vmpi_pvars[vmpi_npvars - 1].read = vmpi_cs_split_sends;
    for (int k = 0; vmpi_channels[k]; k++)
        channel_pvars(vmpi_channels[k]);
}
