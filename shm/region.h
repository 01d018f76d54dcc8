/* The host-wide shared region (an ivshmem device, or a file when emulated)
 * and the job areas in it.
 *
 * Every VM of a host can write every byte of the region, so everything read
 * from it is untrusted: each value is checked before it is used as an
 * offset, length, index or count, and a value that cannot be right is an
 * error that names the region. The functions here return such errors (base
 * error codes with their messages) and never end the job themselves: the
 * caller decides. A job area's contents are described in area.h.
 *
 * Layout, version 1 (all offsets from the start of the region):
 *
 *   0                      struct vmpi_region_hdr (64 bytes)
 *   64                     struct vmpi_region_chunk table[nchunks]
 *   first_chunk * chunk    job areas, each a run of whole chunks
 *
 * The region is cut into chunks of 2^chunk_shift bytes; table entry i
 * describes chunk i. The chunks holding the header and the table are never
 * handed out (first_chunk of them).
 *
 * Initialization: a blank region is all zeros. The first process to see it
 * moves `init` from 0 to a token (CAS; "vmpi" in the high half, random
 * bits in the low half), writes the header and stores VMPI_REGION_READY
 * with release order; any other value means the bytes are not a region. Others wait for READY; a token that
 * does not change for the lease is an initializer that died, and the next
 * process takes over with a CAS from that token.
 *
 * Claims (lock-free): a job's area is a run of consecutive chunks. Its
 * claimant moves each chunk's `state` from FREE to CLAIMING (CAS, in
 * ascending order, rolling back on a lost race), writes the key and the
 * area's directory, marks the run CONT and its first chunk HEAD (release).
 * Ranks of the job find the HEAD entry with their 128-bit job key and add
 * themselves to `users`. When two ranks of one job claim at once, both look
 * again after publishing their HEAD: the area with the lower first chunk
 * wins, the other claimant frees its run and joins the winner (sequentially
 * consistent stores and loads guarantee at least one of them sees the
 * other).
 *
 * Liveness (how a dead job's area is reclaimed): every rank attached to an
 * area runs a heartbeat thread that increments `beat` of each of the area's
 * chunks every lease/8. A claimant that finds no free run samples
 * (state, beat) of every used chunk, waits one lease (VMPI_IVSHMEM_LEASE_MS,
 * default 2000 ms) and frees, by CAS from the sampled state, each chunk whose
 * pair did not change: its owners are gone (a live owner's thread would have
 * beaten 8 times). Every free bumps the chunk's generation, so a late CAS of
 * a stale owner fails; a heartbeat thread that finds its area no longer
 * HEAD with its generation and key ends the job with an error. The last
 * rank to leave (users drops to 0) frees the area at MPI_Finalize.
 *
 * Sharing (who may have areas side by side): a HEAD entry names its job's
 * trust domain (a hash of VMPI_DOMAIN, which vmpirun gives a job and the
 * jobs it spawns; else of the job key) and whether the job checks the
 * integrity of its messages. A claimant that finds the live area of another
 * domain gives its own area back and fails, unless both jobs check
 * integrity: sharing a region between jobs is then a choice both made, not
 * an accident. (This stops honest jobs that were pointed at one region; a
 * hostile writer is what the integrity checks are for.) */
#ifndef VMPI_SHM_REGION_H
#define VMPI_SHM_REGION_H

#include <assert.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VMPI_REGION_MAGIC 0x7276692d69706d76ull /* "vmpi-ivr" in memory */
#define VMPI_REGION_VERSION 1
#define VMPI_REGION_READY 0x7964722d69706d76ull /* "vmpi-rdy" */
#define VMPI_REGION_INIT_TAG 0x69706d76ull      /* high half of a token */
#define VMPI_REGION_CHUNK_SHIFT 20 /* 1 MiB chunks */
#define VMPI_REGION_MIN (4u << 20)
#define VMPI_TRUST_INTEGRITY 1u
#define VMPI_TRUST_DOMAIN(t) ((t) & ~1u)

struct vmpi_region_hdr {
    _Atomic uint64_t init; /* 0 blank, a token while initialized, READY */
    uint64_t magic;
    uint32_t version;
    uint32_t chunk_shift;
    uint64_t size;        /* bytes, as seen by the initializer */
    uint32_t nchunks;     /* size >> chunk_shift */
    uint32_t first_chunk; /* chunks taken by this header and the table */
    uint64_t uuid;        /* random, nonzero: names the host */
    char pad[16];
};
static_assert(sizeof(struct vmpi_region_hdr) == 64, "region header is one cache line");

enum { VMPI_CHUNK_FREE = 0, VMPI_CHUNK_CLAIMING = 1, VMPI_CHUNK_HEAD = 2, VMPI_CHUNK_CONT = 3 };
#define VMPI_CHUNK_KIND(s) ((unsigned)((s)&0xff))
#define VMPI_CHUNK_GEN(s) ((s) >> 8)
#define VMPI_CHUNK_STATE(gen, kind) (((uint64_t)(gen) << 8) | (kind))

/* One entry of the job table (one per chunk). */
struct vmpi_region_chunk {
    _Atomic uint64_t state; /* generation << 8 | kind */
    _Atomic uint64_t beat;  /* heartbeats of the owning job */
    uint64_t key[2];        /* the owning job's key (HEAD and CONT) */
    uint32_t head;          /* CONT: first chunk of the area */
    uint32_t count;         /* HEAD: chunks in the area */
    _Atomic uint32_t users; /* HEAD: ranks attached */
    uint32_t trust;         /* HEAD: VMPI_TRUST_DOMAIN bits | VMPI_TRUST_INTEGRITY */
    char pad[16];
};
static_assert(sizeof(struct vmpi_region_chunk) == 64, "job table entries are one cache line");
static_assert(offsetof(struct vmpi_region_chunk, key) == 16, "key after state and beat");

/* This process's view of the region and of its job's area (private). */
struct vmpi_region {
    char path[256];
    char *base;
    size_t size;
    uint64_t uuid;
    char *area; /* the job's area, or NULL */
    size_t area_bytes;
    uint32_t head, count;
    uint64_t gen;
    uint64_t key[2];
};

extern struct vmpi_region vmpi_region;

/* Maps the region named by VMPI_IVSHMEM_PATH, or the BAR2 of an ivshmem
 * PCI device (1af4:1110), and initializes it if blank. *found is false
 * when there is none. An error code when a region that is named cannot be
 * used (too small, of another version, not a region). */
int vmpi_region_open(bool *found);

/* The claimant (one rank of the job per region) claims `bytes` for the job
 * under key and calls init on the area (which may hold an earlier job's
 * bytes, unless fresh: never held by a job, so still zero) before
 * publishing it with the job's trust word (see Sharing); the
 * other ranks wait for the area to appear and join it. An error code when
 * the region holds a live area it may not share with. An error code when the region has no room even after
 * reclaiming the areas of dead jobs. Starts the heartbeat, which calls
 * lost (from its own thread) if the area is taken from the job. */
int vmpi_region_join(const uint64_t key[2], uint32_t trust, size_t bytes, bool claimant,
                     void (*init)(char *area, bool fresh, void *arg), void *arg,
                     void (*lost)(const char *msg));

/* Stops the heartbeat, frees the area if this is its last user, unmaps. */
void vmpi_region_close(void);

/* ---- other jobs' areas (dynamic processes) ----
 * The job table as this process checked it at open: its entries, the
 * first that may head an area (*first) and their number (*n), chunks of
 * 2^*shift bytes; NULL without a region. Entries are another VM's to
 * write: read each once, and index nothing by it before checking it. */
struct vmpi_region_chunk *vmpi_region_table(uint32_t *first, uint32_t *n, unsigned *shift);
/* Whether the count - 1 entries after entry i are the rest of the area
 * that i heads (CONT entries naming i), so an area read from the table
 * covers no chunk of another area. */
bool vmpi_region_area_whole(uint32_t i, uint32_t count);
/* This process becomes one more user of the area headed by `entry` (of
 * another job), so the area outlives that job while this process may
 * still read it. */
void vmpi_region_hold(struct vmpi_region_chunk *entry);
/* One user less of the area headed by `entry`, found with state `state`
 * and `count` chunks (checked to lie inside the table); the last user
 * frees its chunks, as the area's last rank would at vmpi_region_close. */
void vmpi_region_release(struct vmpi_region_chunk *entry, uint64_t state, uint32_t count);

#endif
