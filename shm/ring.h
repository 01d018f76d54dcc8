/* Single-producer single-consumer ring of cache-line cells in shared memory.
 *
 * Layout of one ring (one direction between two ranks), in shared memory:
 *
 *   struct vmpi_ring_ctl   one cache line: the consumer's published position
 *   struct vmpi_ring_cell  cells[ncells], 64 bytes each, ncells a power of 2
 *
 * A record starts on a cell and occupies ceil((8 + len) / 64) consecutive
 * cells without wrapping (a SKIP record pads to the end of the ring). Its
 * first 8 bytes are {seq, len}; the payload follows contiguously. The
 * producer writes the payload and len, then stores seq = low 32 bits of
 * (absolute start cell + 1) with release order; the consumer polls the seq
 * of the cell at its position with acquire order, so one cache-line transfer
 * delivers a small message.
 *
 * Invariants:
 *  - a cell's seq word is either 0 or the seq of a record that started there
 *    in an earlier lap: the consumer zeroes the seq words of a record's
 *    continuation cells before releasing them, so payload bytes can never be
 *    mistaken for a header;
 *  - the producer may write cell i only if i < consumed + ncells, where
 *    consumed is read (acquire) from the ctl line; the consumer publishes it
 *    (release) lazily: every ncells/4 cells, and whenever it finds the ring
 *    empty;
 *  - everything read from the ring is checked before use (len against the
 *    ring's bounds), since with ivshmem another VM can write these bytes;
 *    so are the seq word at the consumer's position (a record that starts
 *    at cell pos has seq - 1 == pos modulo ncells, in any lap, so any other
 *    nonzero value is corruption, not a record still to come) and the
 *    published position (never beyond the producer's). */
#ifndef VMPI_SHM_RING_H
#define VMPI_SHM_RING_H

#include <assert.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define VMPI_RING_CELL 64
#define VMPI_RING_SKIP 0xffffffffu /* len of a record that pads to the end */

struct vmpi_ring_ctl {
    alignas(64) _Atomic uint64_t consumed; /* cells released by the consumer */
    char pad[56];
};
static_assert(sizeof(struct vmpi_ring_ctl) == 64, "ring ctl is one cache line");

struct vmpi_ring_cell {
    _Atomic uint32_t seq; /* (start cell + 1) mod 2^32, written last */
    uint32_t len;         /* payload bytes of the record, or VMPI_RING_SKIP */
    unsigned char data[56];
};
static_assert(sizeof(struct vmpi_ring_cell) == VMPI_RING_CELL, "cell is one cache line");
static_assert(offsetof(struct vmpi_ring_cell, data) == 8, "payload follows {seq,len}");

static inline size_t vmpi_ring_bytes(uint32_t ncells)
{
    return sizeof(struct vmpi_ring_ctl) + (size_t)ncells * VMPI_RING_CELL;
}

/* Private producer state (lives in the producer's own memory). */
struct vmpi_ring_tx {
    struct vmpi_ring_ctl *ctl;
    struct vmpi_ring_cell *cells;
    uint32_t ncells;
    uint64_t tail;      /* absolute cell of the next record */
    uint64_t consumed;  /* last value read from ctl */
    uint32_t pending;   /* cells of the reserved record */
    bool corrupt;       /* ctl held a position beyond ours */
};

/* Private consumer state. */
struct vmpi_ring_rx {
    struct vmpi_ring_ctl *ctl;
    struct vmpi_ring_cell *cells;
    uint32_t ncells;
    uint64_t head;      /* absolute cell of the next record */
    uint64_t published; /* last value stored to ctl */
};

static inline void vmpi_ring_init(void *base, uint32_t ncells)
{
    memset(base, 0, vmpi_ring_bytes(ncells));
}

static inline void vmpi_ring_tx_attach(struct vmpi_ring_tx *t, void *base, uint32_t ncells)
{
    t->ctl = base;
    t->cells = (struct vmpi_ring_cell *)((char *)base + sizeof(struct vmpi_ring_ctl));
    t->ncells = ncells;
    t->tail = t->consumed = 0;
    t->pending = 0;
    t->corrupt = false;
}

static inline void vmpi_ring_rx_attach(struct vmpi_ring_rx *r, void *base, uint32_t ncells)
{
    r->ctl = base;
    r->cells = (struct vmpi_ring_cell *)((char *)base + sizeof(struct vmpi_ring_ctl));
    r->ncells = ncells;
    r->head = r->published = 0;
}

static inline uint32_t vmpi_ring_cells_for(size_t len)
{
    return (uint32_t)((len + 8 + VMPI_RING_CELL - 1) / VMPI_RING_CELL);
}

/* Largest payload a record may carry in a ring of ncells cells. */
static inline size_t vmpi_ring_max_len(uint32_t ncells)
{
    return (size_t)(ncells / 2) * VMPI_RING_CELL - 8;
}

static inline bool vmpi_ring_has_room(struct vmpi_ring_tx *t, uint64_t need)
{
    if (t->tail + need - t->consumed <= t->ncells)
        return true;
    uint64_t c = atomic_load_explicit(&t->ctl->consumed, memory_order_acquire);
    if (c > t->tail) {
        t->corrupt = true;
        return false;
    }
    t->consumed = c;
    return t->tail + need - t->consumed <= t->ncells;
}

/* Reserves a record of len payload bytes (len <= vmpi_ring_max_len) and
 * returns where the payload goes, or NULL if the ring is full for now. */
static inline void *vmpi_ring_reserve(struct vmpi_ring_tx *t, size_t len)
{
    uint32_t k = vmpi_ring_cells_for(len);
    uint32_t pos = (uint32_t)(t->tail & (t->ncells - 1));
    uint32_t pad = pos + k > t->ncells ? t->ncells - pos : 0;
    if (!vmpi_ring_has_room(t, (uint64_t)pad + k))
        return NULL;
    if (pad) {
        struct vmpi_ring_cell *c = &t->cells[pos];
        c->len = VMPI_RING_SKIP;
        atomic_store_explicit(&c->seq, (uint32_t)(t->tail + 1), memory_order_release);
        t->tail += pad;
        pos = 0;
    }
    t->pending = k;
    return t->cells[pos].data;
}

/* Publishes the reserved record with its final length (<= reserved). */
static inline void vmpi_ring_commit(struct vmpi_ring_tx *t, size_t len)
{
    struct vmpi_ring_cell *c = &t->cells[t->tail & (t->ncells - 1)];
    c->len = (uint32_t)len;
    atomic_store_explicit(&c->seq, (uint32_t)(t->tail + 1), memory_order_release);
    t->tail += t->pending;
    t->pending = 0;
}

enum { VMPI_RING_EMPTY = 0, VMPI_RING_OK = 1, VMPI_RING_CORRUPT = -1 };

/* An idle consumer publishes everything, so a producer waiting for a large
 * record never waits on the lazy threshold; it also rewrites a published
 * position that someone else changed, which would stall the producer. The
 * line stays in this core's cache until the producer looks. */
static inline void ring_idle(struct vmpi_ring_rx *r)
{
    if (r->published != r->head ||
        atomic_load_explicit(&r->ctl->consumed, memory_order_relaxed) != r->head) {
        r->published = r->head;
        atomic_store_explicit(&r->ctl->consumed, r->head, memory_order_release);
    }
}

/* Looks at the next record: VMPI_RING_OK with data and len set, EMPTY, or
 * CORRUPT when the bytes in the ring cannot be a record. SKIP records are
 * consumed here. */
static inline int vmpi_ring_peek(struct vmpi_ring_rx *r, const void **data, size_t *len)
{
    for (;;) {
        uint32_t pos = (uint32_t)(r->head & (r->ncells - 1));
        struct vmpi_ring_cell *c = &r->cells[pos];
        uint32_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
        if (seq != (uint32_t)(r->head + 1)) {
            if (seq && ((seq - 1) & (r->ncells - 1)) != pos)
                return VMPI_RING_CORRUPT;
            ring_idle(r);
            return VMPI_RING_EMPTY;
        }
        uint32_t l = *(volatile uint32_t *)&c->len; /* read once: checked, then used */
        if (l == VMPI_RING_SKIP) {
            if (pos == 0)
                return VMPI_RING_CORRUPT;
            r->head += r->ncells - pos;
            continue;
        }
        if ((uint64_t)l + 8 > (uint64_t)(r->ncells - pos) * VMPI_RING_CELL ||
            l > vmpi_ring_max_len(r->ncells))
            return VMPI_RING_CORRUPT;
        *data = c->data;
        *len = l;
        return VMPI_RING_OK;
    }
}

/* Whether a record (or corrupt bytes) waits at the consumer's position; an
 * idle consumer publishes its position here, as in vmpi_ring_peek. */
static inline bool vmpi_ring_ready(struct vmpi_ring_rx *r)
{
    uint32_t pos = (uint32_t)(r->head & (r->ncells - 1));
    uint32_t seq = atomic_load_explicit(&r->cells[pos].seq, memory_order_acquire);
    /* A seq that no record can have there is left for peek to report. */
    if (seq == (uint32_t)(r->head + 1) || (seq && ((seq - 1) & (r->ncells - 1)) != pos))
        return true;
    ring_idle(r);
    return false;
}

/* Releases the record returned by the last peek (len as returned). */
static inline void vmpi_ring_release(struct vmpi_ring_rx *r, size_t len)
{
    uint32_t k = vmpi_ring_cells_for(len);
    uint32_t pos = (uint32_t)(r->head & (r->ncells - 1));
    for (uint32_t i = 1; i < k; i++)
        atomic_store_explicit(&r->cells[pos + i].seq, 0, memory_order_relaxed);
    r->head += k;
    if (r->head - r->published >= r->ncells / 4) {
        r->published = r->head;
        atomic_store_explicit(&r->ctl->consumed, r->head, memory_order_release);
    }
}

#endif
