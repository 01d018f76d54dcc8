/* A job's area of the host region (region.h): a directory of sections,
 * each owned by one part of vmpi.
 *
 * Layout, version 4 (offsets from the start of the area):
 *
 *   0              struct vmpi_area_hdr (one page): the job's shape and the
 *                  section table
 *   sec[i].off     section i: sec[i].len bytes, page-aligned, in table
 *                  order, none overlapping the next, all inside the area
 *
 * Sections and their owners (who sizes them, initializes them in a fresh
 * area and checks their contents and parameters):
 *
 *   VMTAB   locality/detect.c  VM identities, claimed by CAS; param[0]: entries
 *   VMLIST  locality/detect.c  one byte per rank of the job: VM slot + 1
 *   CSLOT   channel/ivshmem    collective slots of the host's ranks; param[0]:
 *                              bytes per slot
 *   PAIRS   channel/ivshmem    pair blocks of the host's ranks; param: ring
 *                              cells, bulk slots, slot bytes, block stride
 *   HEAP    channel/ivshmem    heap slices of the host's ranks; param[0]:
 *                              bytes per slice
 *
 * The claimant plans the area (vmpi_area_init, then each owner's
 * vmpi_area_add), lets each owner initialize its section, and publishes
 * the area (region.h). Every rank that joins takes a private copy of the
 * directory and checks it (vmpi_area_check) before anything uses a
 * section: any VM of the host can write the area, so a section is only
 * ever found through the checked copy (vmpi_area_section), and an owner
 * checks its parameters against what it can index before it uses them. */
#ifndef VMPI_SHM_AREA_H
#define VMPI_SHM_AREA_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#define VMPI_AREA_MAGIC 0x72616a2d69706d76ull /* "vmpi-jar" */
#define VMPI_AREA_VERSION 4
#define VMPI_AREA_MAXSEC 8

enum vmpi_area_kind {
    VMPI_AREA_VMTAB = 1,
    VMPI_AREA_VMLIST = 2,
    VMPI_AREA_CSLOT = 3,
    VMPI_AREA_PAIRS = 4,
    VMPI_AREA_HEAP = 5,
};

struct vmpi_area_sec {
    uint32_t kind;     /* enum vmpi_area_kind; each kind at most once */
    uint32_t rsvd;
    uint64_t off, len; /* bytes from the start of the area */
    uint64_t param[4]; /* the owner's */
};
static_assert(sizeof(struct vmpi_area_sec) == 56, "section entries are 56 bytes");

struct vmpi_area_hdr {
    uint64_t magic;
    uint32_t version;
    uint32_t nsec;       /* entries of sec in use */
    uint32_t nranks;     /* ranks in the job */
    uint32_t nlocal;     /* ranks of the job on this host */
    uint64_t area_bytes; /* end of the last section */
    struct vmpi_area_sec sec[VMPI_AREA_MAXSEC];
    char pad[4096 - 32 - VMPI_AREA_MAXSEC * sizeof(struct vmpi_area_sec)];
};
static_assert(sizeof(struct vmpi_area_hdr) == 4096, "area directory is one page");
static_assert(offsetof(struct vmpi_area_hdr, sec) == 32, "section table after the shape");

/* Starts planning an area for a job of nranks ranks, nlocal on this host. */
void vmpi_area_init(struct vmpi_area_hdr *d, int nranks, int nlocal);
/* Appends a section of len bytes at the next page; NULL when the table is
 * full or the size overflows. The caller sets its param. */
struct vmpi_area_sec *vmpi_area_add(struct vmpi_area_hdr *d, uint32_t kind, uint64_t len);
/* Copies the directory at the start of area (area_bytes long) to d and
 * checks it: magic, version, the job's shape, and every section
 * page-aligned, after the previous one, inside the area, its kind known
 * and not repeated. 0, or -1 with what is wrong in why. */
int vmpi_area_check(const char *area, uint64_t area_bytes, int nranks,
                    struct vmpi_area_hdr *d, char *why, size_t whylen);
/* The section of `kind` in a checked directory, or NULL. */
const struct vmpi_area_sec *vmpi_area_section(const struct vmpi_area_hdr *d, uint32_t kind);

#endif
