/* Handle tables: MPI handles carry an index into one of these.
 *
 * The slots never move (the first ones are in the table, the others in
 * chunks that double), so a table that grows does not reallocate what is
 * there. A thread that looks a handle up outside the library's
 * lock (MPI_Send's split path under MPI_THREAD_MULTIPLE, core/thread.c)
 * may then run beside one that creates an object. */
#include "base.h"

#include <stdlib.h>
#include <string.h>

/* The slot of index idx. */
static void **slot(struct vmpi_htab *t, uint32_t idx)
{
    if (idx < VMPI_HTAB_FIRST)
        return &t->first[idx];
    uint32_t at;
    unsigned k = vmpi_htab_chunk_of(idx, &at);
    return &t->chunk[k][at];
}

int vmpi_htab_add(struct vmpi_htab *t, void *obj, uint32_t *idx)
{
    if (t->nfree) {
        *idx = t->free[--t->nfree];
        *slot(t, *idx) = obj;
        return 0;
    }
    uint32_t used = atomic_load_explicit(&t->used, memory_order_relaxed);
    if (used == 0)
        used = 1; /* index 0 stays invalid */
    if (used >= VMPI_HTAB_MAX)
        return -1;
    if (used >= VMPI_HTAB_FIRST) {
        uint32_t at;
        unsigned k = vmpi_htab_chunk_of(used, &at);
        if (!t->chunk[k] && !(t->chunk[k] = calloc((size_t)VMPI_HTAB_FIRST << k, sizeof(void *))))
            return -1;
    }
    if (used >= t->freecap) {
        /* Every index handed out may come back: room for all of them. */
        uint32_t ncap = t->freecap ? 2 * t->freecap : VMPI_HTAB_FIRST;
        uint32_t *nf = realloc(t->free, ncap * sizeof(*nf));
        if (!nf)
            return -1;
        t->free = nf;
        t->freecap = ncap;
    }
    *slot(t, used) = obj;
    *idx = used;
    /* The slot is written before a reader can see the index as in range. */
    atomic_store_explicit(&t->used, used + 1, memory_order_release);
    return 0;
}

void vmpi_htab_del(struct vmpi_htab *t, uint32_t idx)
{
    if (idx == 0 || idx >= atomic_load_explicit(&t->used, memory_order_relaxed))
        return;
    void **s = slot(t, idx);
    if (!*s)
        return;
    *s = NULL;
    t->free[t->nfree++] = idx;
}

void vmpi_htab_destroy(struct vmpi_htab *t)
{
    for (unsigned k = 0; k < VMPI_HTAB_CHUNKS; k++)
        free(t->chunk[k]);
    free(t->free);
    memset(t, 0, sizeof *t);
}
