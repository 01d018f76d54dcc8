/* Locality: who runs where (detect.c); which channel reaches each peer, and
 * which memory windows and MPI_Alloc_mem use (coord.c: the peer table, the
 * active channels, their memory faces). Prefix vmpi_locality_. */
#ifndef VMPI_LOCALITY_H
#define VMPI_LOCALITY_H

#include "../channel/chan.h"

/* Where every rank of the job runs, from the business cards, and this
 * rank's own view from the VM list in the host region. */
struct vmpi_placement {
    int *vm_of;     /* world rank -> lowest world rank of its VM */
    int *host_of;   /* world rank -> lowest world rank of its host */
    int *kernel_of; /* world rank -> lowest world rank running on its kernel (boot id): the
                     * ranks that compete for its processors, emulated hosts included */
    int *pid;       /* world rank -> process id (in its own PID namespace) */
    char **hostname;
    uint64_t *region; /* world rank -> id of the host region it mapped, 0 if none */
    int *group;     /* this rank's host in the region: world ranks, ascending */
    int ngroup, me_in_group; /* 0 and -1 without a region */
};

/* Collective over the job: publishes this rank's card through PMI, and,
 * when use_region, opens the host region, joins the job's area and runs the
 * VM-list detection (two PMI barriers). */
void vmpi_locality_detect(struct vmpi_placement *pl, bool use_region);
void vmpi_locality_placement_free(struct vmpi_placement *pl);
/* A rank alone on its host at init did not join the job's area; processes
 * of other jobs in other VMs of the host meet it there, so it joins now
 * (tried once; an area without heap slices; on failure other jobs reach it
 * over the network). */
void vmpi_locality_join_alone(void);

/* ---- the coordinator (coord.c) --------------------------------------------- */

/* The peer table, by world rank: written by the coordinator alone, read by
 * core's send path (one indexed load and an indirect call). The entry of
 * this rank itself has no channel. */
struct vmpi_peer {
    const struct vmpi_chan *chan; /* which channel reaches this world rank */
    void *cstate;                 /* that channel's per-peer state */
    size_t eager_max;             /* largest message the channel sends eagerly */
};
extern struct vmpi_peer *vmpi_locality_peers;
/* The job's own ranks' entries as set at init, which stay where they are
 * until finalize while the table grows for other jobs' processes: what
 * core's split send path reads outside the library's lock. */
extern const struct vmpi_peer *vmpi_locality_job_peers;

/* Collective over the job: detects the placement, gives every other rank a
 * channel (VMPI_CHANNELS restricts the choice), sets the channels up with
 * the up-call table `up` and fills the peer table. */
int vmpi_locality_init(const struct vmpi_chan_up *up);
void vmpi_locality_finalize(void);
/* The channels with peers on this rank, in list order, and how often to
 * poll each: on progress calls where (count & poll_mask) == 0. */
struct vmpi_locality_chan {
    const struct vmpi_chan *chan;
    unsigned poll_mask;
};
int vmpi_locality_active(const struct vmpi_locality_chan **list);
/* What MPI_Get_library_version tells of the channels, into out (cap
 * bytes, always terminated): the channels of this build, in list order,
 * and, between MPI_Init and MPI_Finalize, the ones this rank started with
 * what each says of itself (its describe line). */
void vmpi_locality_describe(char *out, size_t cap);
/* Some active channel still has packets or transfers queued. */
bool vmpi_locality_busy(void);
/* Ranks of the job on this rank's kernel, this one included (they compete
 * for its processors, emulated VMs and hosts included). */
int vmpi_locality_kernel_ranks(void);
/* The same value for ranks that can share memory (the lowest world rank of
 * their host region when the ivshmem channel is on, else of their VM). */
int vmpi_locality_shared_id(int world_rank);
/* Whether that sharing is through the host region (else the VM's memory). */
bool vmpi_locality_shared_region(int world_rank);
/* The collective slots (shm/cslot.h) of the n ranks `worlds` (one node),
 * into slots: in the memory of the widest-reaching channel that spans all
 * of them (the host region, else the VM's segment). False when none does.
 * The answer depends only on the job-wide placement, so every rank of the
 * node gets the same one. */
bool vmpi_locality_cslots(const int *worlds, int n, struct vmpi_cslot **slots);

/* ---- memory placement: the channels' memory faces ------------------------
 * Shared: memory that every rank of the host maps (the region), for
 * MPI_Alloc_mem and windows; NULL / false when there is none. */
void *vmpi_locality_mem_alloc(size_t n);
bool vmpi_locality_mem_free(void *p); /* false: p is not such memory */
/* The key under which ranks of the host map [p, p + n), when p is such
 * memory of this rank. */
bool vmpi_locality_mem_key(const void *p, size_t n, struct vmpi_mem_key *key);
/* Where n bytes that world rank `world` named by key lie here, or NULL. */
void *vmpi_locality_mem_map(int world, const struct vmpi_mem_key *key, uint64_t n);
/* Remote: one-sided access over the network to other hosts. on(): this
 * rank has a network channel with peers whose memory face offers it. */
bool vmpi_locality_rdma_on(void);
bool vmpi_locality_rdma_to(int world);
bool vmpi_locality_rdma_expose(void *p, size_t n, struct vmpi_mem_reg *reg);
void vmpi_locality_rdma_unexpose(struct vmpi_mem_reg *reg);
void vmpi_locality_rdma_put(int world, const void *buf, size_t len,
                            const struct vmpi_mem_key *key, uint64_t off, struct vmpi_xfer *x);
void vmpi_locality_rdma_get(int world, void *buf, size_t len, const struct vmpi_mem_key *key,
                            uint64_t off, struct vmpi_xfer *x);

/* ---- processes of other jobs (dynamic processes) --------------------------
 * They get world ranks after the job's own, in the order they connect, and
 * the first channel that takes them: smp for a process of this VM,
 * ivshmem for one of another VM of this host (the host region), else the
 * network channel (the one that greets). job(): this job's name for
 * them. address(): this process's address for them, one record per
 * channel that connects (0 when no network channel reaches other jobs).
 * connect(): the world rank of rank `rank` of job `job` at that address
 * (an existing one if known; a rank of this job's own when it is this
 * job), -1 when it cannot be reached. procs(): how many world ranks there
 * are now. greet()/greeting(): the network channel's, whichever channel
 * carries the peer's data. */
uint32_t vmpi_locality_job(void);
size_t vmpi_locality_address(void *buf, size_t cap);
int vmpi_locality_connect(uint32_t job, int rank, const void *addr, size_t alen);
int vmpi_locality_procs(void);
/* Job and rank of world rank `world` of another job. */
void vmpi_locality_name(int world, uint32_t *job, int *rank);
void vmpi_locality_greet(int world, uint32_t port, const void *msg, size_t len);
size_t vmpi_locality_greeting(uint32_t port, void *msg, size_t cap);

#endif
