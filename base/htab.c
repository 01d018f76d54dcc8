/* Handle tables: MPI handles carry an index into one of these. */
#include "base.h"

#include <stdlib.h>

int vmpi_htab_add(struct vmpi_htab *t, void *obj, uint32_t *idx)
{
    if (t->nfree) {
        *idx = t->free[--t->nfree];
        t->slot[*idx] = obj;
        return 0;
    }
    bool first = t->used == 0;
    if (first)
        t->used = 1; /* index 0 stays invalid */
    if (t->used >= t->cap) {
        uint32_t ncap = t->cap ? 2 * t->cap : 64;
        if (ncap > VMPI_HTAB_MAX)
            return -1;
        void **ns = realloc(t->slot, ncap * sizeof(*ns));
        if (!ns)
            return -1;
        t->slot = ns;
        uint32_t *nf = realloc(t->free, ncap * sizeof(*nf));
        if (!nf)
            return -1;
        t->free = nf;
        t->cap = ncap;
        if (first)
            t->slot[0] = NULL;
    }
    *idx = t->used++;
    t->slot[*idx] = obj;
    return 0;
}

void vmpi_htab_del(struct vmpi_htab *t, uint32_t idx)
{
    if (idx == 0 || idx >= t->used || !t->slot[idx])
        return;
    t->slot[idx] = NULL;
    t->free[t->nfree++] = idx;
}

void vmpi_htab_destroy(struct vmpi_htab *t)
{
    free(t->slot);
    free(t->free);
    *t = (struct vmpi_htab){0};
}
