/* The knob table: every environment variable the library reads, once.
 *
 * Each knob is read through vmpi_knob_num / vmpi_knob_str (or, where its
 * default is computed at the call, vmpi_env_u64 / vmpi_env_bytes), and all
 * of them refuse a name that is not in this table, so a new knob is added
 * here or the first run that reads it stops. The tool interface (MPI_T
 * control variables) and `vmpi info` list this table; default and range
 * live here and nowhere else, except for the `computed` ones, whose
 * default the description explains. */
#include "base.h"

#define NUM(n, cat, d, lo, hi, desc) {n, cat, VMPI_KNOB_NUM, false, d, lo, hi, desc}
#define BYTES(n, cat, d, lo, hi, desc) {n, cat, VMPI_KNOB_BYTES, false, d, lo, hi, desc}
#define STR(n, cat, desc) {n, cat, VMPI_KNOB_STR, false, 0, 0, 0, desc}
#define COMPUTED(n, cat, kind, desc) {n, cat, kind, true, 0, 0, UINT64_MAX, desc}
#define COLL(n) STR("VMPI_COLL_" n, "vmpi.coll",                                          \
                    "Path and algorithm of this collective: a comma list of at most one " \
                    "of auto, flat, hier and at most one network algorithm")

const struct vmpi_knob vmpi_knobs[] = {
    /* core */
    BYTES("VMPI_UNEXPECTED_MAX", "vmpi.core", 64ull << 20, 0, UINT64_MAX,
          "Unexpected eager data held in memory before senders are stalled (bytes; K, M, G)"),
    COMPUTED("VMPI_YIELD_POLLS", "vmpi.core", VMPI_KNOB_NUM,
             "Idle progress polls between sched_yield calls, 0 = never; default 1 when the "
             "machine has more ranks than processors, else 0, and at most 64 once a second "
             "thread calls MPI under MPI_THREAD_MULTIPLE (at most 4096)"),
    NUM("VMPI_ASYNC", "vmpi.core", 1, 0, 1,
        "1: a progress helper thread serves passive-target RMA while ranks compute; 0: off"),
    NUM("VMPI_ASYNC_MIN_US", "vmpi.core", 50, 1, 1000000,
        "Shortest sleep of the progress helper thread between polls (microseconds)"),
    COMPUTED("VMPI_ASYNC_MAX_US", "vmpi.core", VMPI_KNOB_NUM,
             "Longest sleep of the progress helper thread between polls (microseconds; default "
             "1000, at least VMPI_ASYNC_MIN_US)"),
    NUM("VMPI_THREAD_LEVEL", "vmpi.core", 3, 0, 3,
        "Highest thread level MPI_Init_thread grants (0 SINGLE .. 3 MULTIPLE)"),
    NUM("VMPI_THREAD_BIAS", "vmpi.core", 1, 0, 1,
        "MPI_THREAD_MULTIPLE: 1: the initial thread runs without the library's lock until "
        "another thread calls MPI; 0: every call takes it"),
    NUM("VMPI_THREAD_SPLIT", "vmpi.core", 1, 0, 1,
        "MPI_THREAD_MULTIPLE: 1: once several threads use MPI, an eager MPI_Send or MPI_Isend "
        "to a rank of the job on shared memory holds only that peer's send lock; 0: the "
        "library's lock"),
    NUM("VMPI_THREAD_STEAL_NS", "vmpi.core", 20000, 1, 100000000,
        "MPI_THREAD_MULTIPLE: how long running threads may take the library's lock before a "
        "queued thread gets it handed over (nanoseconds)"),
    STR("VMPI_VERBOSE", "vmpi.core",
        "A number above 0: rank 0 prints the channel table at MPI_Init, ranks report region "
        "clean-up"),
    /* launch */
    STR("VMPI_DOMAIN", "vmpi.launch",
        "Trust domain of the job (set by vmpirun for a job and the jobs it spawns): jobs of one "
        "domain may share a host region; default: the job alone"),
    STR("VMPI_JOB_ID", "vmpi.launch",
        "Job id naming the job's shared-memory files (set by vmpirun; else the PMI kvs name)"),
    STR("VMPI_PM_REPORTS_ABORT", "vmpi.launch",
        "1: the process manager prints a failing rank's message itself (set by vmpirun)"),
    STR("VMPI_PMI", "vmpi.launch",
        "Process-manager interface: auto (default: from the environment), pmi1, pmi2 or pmix"),
    /* locality */
    STR("VMPI_CHANNELS", "vmpi.locality",
        "Channels the job may use, a comma list of smp, ivshmem, ofi (default: all)"),
    STR("VMPI_VM_ID", "vmpi.locality", "Overrides this process's VM identity (boot id and "
                                       "namespaces): ranks with equal ids share a VM"),
    STR("VMPI_HOST_ID", "vmpi.locality", "Overrides this process's host identity: ranks with "
                                         "equal ids share a host"),
    /* smp */
    COMPUTED("VMPI_SMP_RING_CELLS", "vmpi.smp", VMPI_KNOB_NUM,
             "Cells of 64 bytes in each ring between two ranks of a VM (a power of two, 64 to "
             "2^20); default 2048 up to 16 ranks in the VM, 16/n of it above, at least 256"),
    COMPUTED("VMPI_SMP_BULK_SLOTS", "vmpi.smp", VMPI_KNOB_NUM,
             "Bulk slots per pair for pipelined rendezvous copies within a VM (2 to 1024); "
             "default 8, fewer (at least 2) when the slots are 16 KiB and n > 16 ranks share"),
    COMPUTED("VMPI_SMP_BULK_SLOT_BYTES", "vmpi.smp", VMPI_KNOB_BYTES,
             "Bytes of each bulk slot within a VM (K, M, G; 4K to 64M); default 32K up to 16 "
             "ranks in the VM, 16/n of it above, at least 16K"),
    NUM("VMPI_SMP_CMA", "vmpi.smp", 1, 0, 1,
        "1: rendezvous data is copied once with process_vm_readv; 0: through the bulk slots"),
    BYTES("VMPI_SMP_SPLIT_MIN", "vmpi.smp", 131072, 8192, UINT64_MAX,
          "Smallest single-copy transfer that sender and receiver copy half each (bytes)"),
    BYTES("VMPI_SMP_EAGER_MAX", "vmpi.smp", 8192, 0, 1u << 26,
          "Largest message sent eagerly within a VM (bytes); larger ones use rendezvous"),
    /* ivshmem */
    STR("VMPI_IVSHMEM_PATH", "vmpi.ivshmem",
        "File of the host region (default: the ivshmem PCI device's BAR2)"),
    NUM("VMPI_IVSHMEM_LEASE_MS", "vmpi.ivshmem", 2000, 50, 600000,
        "Milliseconds after which a job's area of the region whose lease was not renewed "
        "may be reclaimed"),
    COMPUTED("VMPI_IVSHMEM_RING_CELLS", "vmpi.ivshmem", VMPI_KNOB_NUM,
             "Cells of 64 bytes in each ring between two VMs' ranks (a power of two, 64 to "
             "2^20); default 2048 up to 16 ranks on the host, 16/n of it above, at least 256"),
    COMPUTED("VMPI_IVSHMEM_BULK_SLOTS", "vmpi.ivshmem", VMPI_KNOB_NUM,
             "Bulk slots per pair for pipelined rendezvous copies between VMs (2 to 1024); "
             "default 8, fewer (at least 2) when the slots are 16 KiB and n > 16 ranks share"),
    COMPUTED("VMPI_IVSHMEM_BULK_SLOT_BYTES", "vmpi.ivshmem", VMPI_KNOB_BYTES,
             "Bytes of each bulk slot between VMs (K, M, G; 4K to 64M); default 64K up to 16 "
             "ranks on the host, 16/n of it above, at least 16K"),
    COMPUTED("VMPI_IVSHMEM_HEAP", "vmpi.ivshmem", VMPI_KNOB_BYTES,
             "Bytes of the region's heap per rank (MPI_Alloc_mem, windows); default: half the "
             "region left after the rings, split among the host's ranks, 16 MiB to 1 GiB"),
    BYTES("VMPI_IVSHMEM_SPLIT_MIN", "vmpi.ivshmem", 131072, 8192, UINT64_MAX,
          "Smallest single-copy transfer between VMs that both sides copy half of (bytes)"),
    BYTES("VMPI_IVSHMEM_EAGER_MAX", "vmpi.ivshmem", 8192, 0, 1u << 26,
          "Largest message sent eagerly between VMs (bytes); larger ones use rendezvous"),
    STR("VMPI_INTEGRITY", "vmpi.ivshmem",
        "crc32c: every message between VMs carries a checksum keyed by a secret of the job "
        "(between jobs, of its trust domain), "
        "checked in private memory, and the region holds no program memory; off (default)"),
    /* ofi */
    STR("FI_PROVIDER", "vmpi.ofi", "libfabric provider for the network channel (e.g. tcp, "
                                   "verbs, efa); default: the first that fits"),
    STR("VMPI_OFI_DOMAIN", "vmpi.ofi", "libfabric domain (NIC) for the network channel"),
    NUM("VMPI_OFI_RMA", "vmpi.ofi", 1, 0, 1,
        "1: use the provider's RMA (rendezvous by RMA read, windows) when offered; 0: never"),
    BYTES("VMPI_OFI_EAGER_MAX", "vmpi.ofi", 16384, 0, 1u << 20,
          "Largest message sent eagerly over the network (bytes)"),
    BYTES("VMPI_OFI_CHUNK", "vmpi.ofi", 256u << 10, 4096, 1ull << 30,
          "Largest piece of a rendezvous transfer over the network (bytes)"),
    COMPUTED("VMPI_OFI_CREDITS", "vmpi.ofi", VMPI_KNOB_NUM,
             "Packets a rank may send to one network peer before it replies (2 to 4096; "
             "default 1024 / peers, 4 to 64)"),
    /* coll */
    COLL("BARRIER"), COLL("BCAST"), COLL("REDUCE"), COLL("ALLREDUCE"), COLL("GATHER"),
    COLL("SCATTER"), COLL("ALLGATHER"), COLL("ALLTOALL"), COLL("REDUCE_SCATTER"), COLL("SCAN"),
    /* rma */
    STR("VMPI_RMA_LOCK", "vmpi.rma",
        "Lock of windows in shared memory: oticket (default) or spark"),
    NUM("VMPI_RMA_NET", "vmpi.rma", 1, 0, 1,
        "1: windows use libfabric RMA between hosts where offered; 0: active messages"),
};

const int vmpi_nknobs = (int)(sizeof vmpi_knobs / sizeof vmpi_knobs[0]);
_Static_assert(sizeof vmpi_knobs / sizeof vmpi_knobs[0] <= VMPI_KNOB_MAX, "raise VMPI_KNOB_MAX");
