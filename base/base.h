/* The ground floor: what every layer of vmpi uses and nothing below it
 * provides. Errors and fatal exits, environment knobs, the message-path
 * copy, hex text, handle tables, and who this process is in the job.
 * Prefix: vmpi_ followed by the facility (vmpi_err_, vmpi_env_, vmpi_hex_,
 * vmpi_htab_, vmpi_job, vmpi_fnv, vmpi_self_, vmpi_sum_), and vmpi_fatal / vmpi_copy. Includes nothing of
 * vmpi but <mpi.h>. */
#ifndef VMPI_BASE_BASE_H
#define VMPI_BASE_BASE_H

#include <assert.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VMPI_LIKELY(x) __builtin_expect(!!(x), 1)
#define VMPI_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define VMPI_CACHELINE 64

/* memcpy for the message path: sizes up to 16 bytes are copied inline with
 * two possibly overlapping loads and stores, which spares a small message a
 * call into the C library on each side. */
static inline void vmpi_copy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (n >= 8 && n <= 16) {
        uint64_t a, b;
        __builtin_memcpy(&a, s, 8);
        __builtin_memcpy(&b, s + n - 8, 8);
        __builtin_memcpy(d, &a, 8);
        __builtin_memcpy(d + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t a, b;
        __builtin_memcpy(&a, s, 4);
        __builtin_memcpy(&b, s + n - 4, 4);
        __builtin_memcpy(d, &a, 4);
        __builtin_memcpy(d + n - 4, &b, 4);
    } else if (n < 4) {
        for (size_t i = 0; i < n; i++)
            d[i] = s[i];
    } else {
        __builtin_memcpy(d, s, n);
    }
}

/* ---- who this process is (base/err.c) ------------------------------------
 * Filled once by core at MPI_Init from the process manager, read by every
 * layer (messages name the rank; shared-memory files carry the job id). */
struct vmpi_job {
    int rank, size; /* in MPI_COMM_WORLD */
    char id[40];    /* [A-Za-z0-9_]: names the job's shared-memory files */
};
extern struct vmpi_job vmpi_job;

/* ---- errors (base/err.c) -------------------------------------------------
 * An error code is class | (slot << 7): the slot indexes a small ring of
 * formatted messages so that MPI_Error_string can return the text that named
 * the function and argument. */
int vmpi_err_make(int errclass, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int vmpi_err_class(int code);
const char *vmpi_err_text(int code); /* NULL if code is not valid */
/* Ends the job with exit status `status` (1 for vmpi_fatal): the message,
 * with this rank, goes to stderr unless the process manager reports it
 * itself (`reported`: vmpirun does, naming the rank's host and VM; Hydra
 * does not), so it is printed once; then the abort hook (core sets it)
 * tells the process manager. Printing comes first: the process manager
 * may kill this process as soon as it hears. */
_Noreturn void vmpi_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void vmpi_fatal_status(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void vmpi_fatal_hook(void (*abort_job)(int status, const char *msg), bool reported);

/* ---- environment knobs (base/env.c; the table is base/knob.c) --------------
 * Every variable the library reads is a row of vmpi_knobs; reading one that
 * is not there is a fatal error, so none is forgotten by the tool interface
 * (MPI_T control variables) or `vmpi info`. */
enum vmpi_knob_kind {
    VMPI_KNOB_NUM,   /* a number */
    VMPI_KNOB_BYTES, /* a size in bytes, which may end in K, M or G (binary units,
                      * either case), as vmpirun's --ivshmem-size does */
    VMPI_KNOB_STR    /* text, checked where it is read */
};
struct vmpi_knob {
    const char *name, *category; /* category: "vmpi.<layer or channel>" */
    enum vmpi_knob_kind kind;
    bool computed;    /* the default is decided where the knob is read (desc says how) */
    uint64_t def, lo, hi; /* numbers: the default and the accepted range */
    const char *desc;
};
#define VMPI_KNOB_MAX 64 /* rows the table may have */
extern const struct vmpi_knob vmpi_knobs[];
extern const int vmpi_nknobs;
/* The row of name, or -1. */
int vmpi_knob_index(const char *name);
/* The value of numeric knob name: its default when unset; fatal when it is
 * not a number in its range. */
uint64_t vmpi_knob_num(const char *name);
/* The text of knob name, or NULL when unset. */
const char *vmpi_knob_str(const char *name);
/* A numeric knob whose default (def) and lower bound are computed at the
 * call; a knob with a default in the table must pass that default. */
uint64_t vmpi_env_u64(const char *name, uint64_t def, uint64_t lo, uint64_t hi);
uint64_t vmpi_env_bytes(const char *name, uint64_t def, uint64_t lo, uint64_t hi);
/* The value of numeric knob i as last read by the library or, before that,
 * as it would be read now; *known is false for a computed default not yet
 * read. False when the environment holds no valid value for it. */
bool vmpi_knob_peek(int i, uint64_t *num, bool *known);
/* Sets knob i's environment text for the library to read later: false when
 * text is not a valid value of a numeric knob (or the environment refuses). */
bool vmpi_knob_set(int i, const char *text);

/* ---- hex text (base/hex.c) --------------------------------------------------- */
/* out (2n + 1 bytes) = the n bytes at in as lowercase hex. */
void vmpi_hex_encode(char *out, const unsigned char *in, size_t n);
/* The bytes of hex string in, into out (at most cap): their count, or 0
 * when in is not whole bytes of lowercase hex or does not fit. */
size_t vmpi_hex_decode(unsigned char *out, size_t cap, const char *in);

/* One round of a spin-wait. */
static inline void vmpi_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

/* ---- handle tables (base/htab.c) -------------------------------------------
 * A growable table of object pointers indexed by handle index; freed slots
 * are reused. Index 0 is never handed out so that a zeroed handle is
 * invalid; indexes stay below VMPI_HTAB_MAX (26 bits, MPICH's index field).
 * Slots never move, so a lookup may run beside an add in another thread:
 * the first VMPI_HTAB_FIRST are in the table itself (one load, where the
 * pool's reuse keeps most handles), then chunk k holds the next
 * VMPI_HTAB_FIRST << k. */
#define VMPI_HTAB_MAX (1u << 26)
#define VMPI_HTAB_FIRST_LOG 10
#define VMPI_HTAB_FIRST (1u << VMPI_HTAB_FIRST_LOG)
#define VMPI_HTAB_CHUNKS 16 /* enough for VMPI_HTAB_MAX slots */
struct vmpi_htab {
    void *first[VMPI_HTAB_FIRST];
    void **chunk[VMPI_HTAB_CHUNKS];
    _Atomic uint32_t used; /* indexes [0, used) were handed out */
    uint32_t *free;
    uint32_t nfree, freecap;
};
static_assert((uint64_t)VMPI_HTAB_FIRST << VMPI_HTAB_CHUNKS >= VMPI_HTAB_MAX,
              "the chunks cover every index");
int vmpi_htab_add(struct vmpi_htab *t, void *obj, uint32_t *idx);
void vmpi_htab_del(struct vmpi_htab *t, uint32_t idx);
/* Where the slot of index idx (at least VMPI_HTAB_FIRST) is: its chunk,
 * and its place there (*at). */
static inline unsigned vmpi_htab_chunk_of(uint32_t idx, uint32_t *at)
{
    unsigned k = (unsigned)(31 - __builtin_clz(idx)) - VMPI_HTAB_FIRST_LOG;
    *at = idx - (VMPI_HTAB_FIRST << k);
    return k;
}
static inline void *vmpi_htab_get(const struct vmpi_htab *t, uint32_t idx)
{
    if (idx >= atomic_load_explicit(&t->used, memory_order_acquire))
        return NULL;
    if (VMPI_LIKELY(idx < VMPI_HTAB_FIRST))
        return t->first[idx];
    uint32_t at;
    unsigned k = vmpi_htab_chunk_of(idx, &at);
    return t->chunk[k][at];
}
void vmpi_htab_destroy(struct vmpi_htab *t);

/* ---- hashes and this process's kernel (base/self.c) --------------------------
 * vmpi_fnv: FNV-1a over n bytes at p, continuing from h (VMPI_FNV_BASIS to
 * start), for names and identities processes must compute alike.
 * vmpi_self_boot: this kernel's boot id, hashed; equal values see the same
 * devices, pids and memory. vmpi_self_ns: the inode of this process's
 * namespace ns ("mnt", "ipc", "pid", "net"), 0 if unknown. */
#define VMPI_FNV_BASIS 0xcbf29ce484222325ull
static inline uint64_t vmpi_fnv(uint64_t h, const void *p, size_t n)
{
    for (const unsigned char *c = p; n--; c++)
        h = (h ^ *c) * 0x100000001b3ull;
    return h;
}
uint64_t vmpi_self_boot(void);
uint64_t vmpi_self_ns(const char *ns);

/* ---- the integrity checksum (base/sum.c) -------------------------------------
 * vmpi_sum_copy: copies n bytes from src to dst (none when dst is NULL) and
 * returns their checksum from seed, in one pass. vmpi_sum_copy_head: the
 * same for the 24 bytes at head followed by the n at src (a packet header
 * and its payload, from two places). vmpi_sum_init: before the first use
 * (software: the table even where the CPU has the instruction). */
void vmpi_sum_init(bool software);
/* SipHash-2-4 of n bytes under the 128-bit key k0 (bytes 0-7, little-endian), k1. */
uint64_t vmpi_siphash(uint64_t k0, uint64_t k1, const void *msg, size_t n);
uint32_t vmpi_sum_copy(uint32_t seed, void *dst, const void *src, size_t n);
uint32_t vmpi_sum_copy_head(uint32_t seed, void *dst, const void *head, const void *src,
                            size_t n);

#endif
