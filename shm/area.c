/* The section table of a job area (layout: area.h). */
#include "area.h"

#include <stdio.h>
#include <string.h>

#define PAGE 4096ull

static uint64_t page_up(uint64_t v)
{
    return (v + PAGE - 1) & ~(PAGE - 1);
}

void vmpi_area_init(struct vmpi_area_hdr *d, int nranks, int nlocal)
{
    memset(d, 0, sizeof *d);
    d->magic = VMPI_AREA_MAGIC;
    d->version = VMPI_AREA_VERSION;
    d->nranks = (uint32_t)nranks;
    d->nlocal = (uint32_t)nlocal;
    d->area_bytes = sizeof *d;
}

struct vmpi_area_sec *vmpi_area_add(struct vmpi_area_hdr *d, uint32_t kind, uint64_t len)
{
    uint64_t off = page_up(d->area_bytes), end;
    if (d->nsec == VMPI_AREA_MAXSEC || __builtin_add_overflow(off, len, &end))
        return NULL;
    struct vmpi_area_sec *s = &d->sec[d->nsec++];
    *s = (struct vmpi_area_sec){.kind = kind, .off = off, .len = len};
    d->area_bytes = end;
    return s;
}

int vmpi_area_check(const char *area, uint64_t area_bytes, int nranks,
                    struct vmpi_area_hdr *d, char *why, size_t whylen)
{
    memcpy(d, area, sizeof *d);
    if (d->magic != VMPI_AREA_MAGIC || d->version != VMPI_AREA_VERSION) {
        snprintf(why, whylen, "no directory of this vmpi (version %u, this vmpi %u)",
                 d->magic == VMPI_AREA_MAGIC ? d->version : 0, VMPI_AREA_VERSION);
        return -1;
    }
    if (d->nranks != (uint32_t)nranks || d->nlocal < 1 || d->nlocal > d->nranks ||
        d->nsec > VMPI_AREA_MAXSEC || d->area_bytes > area_bytes) {
        snprintf(why, whylen, "a directory of %u ranks, %u here, %u sections, %llu bytes "
                 "(the job has %d ranks, the area %llu bytes)",
                 d->nranks, d->nlocal, d->nsec, (unsigned long long)d->area_bytes, nranks,
                 (unsigned long long)area_bytes);
        return -1;
    }
    uint64_t at = sizeof *d;
    unsigned seen = 0;
    for (uint32_t i = 0; i < d->nsec; i++) {
        const struct vmpi_area_sec *s = &d->sec[i];
        uint64_t end;
        if (s->kind < VMPI_AREA_VMTAB || s->kind > VMPI_AREA_HEAP || (seen >> s->kind & 1) ||
            s->off % PAGE || s->off < at || __builtin_add_overflow(s->off, s->len, &end) ||
            end > d->area_bytes) {
            snprintf(why, whylen, "section %u (kind %u, %llu bytes at %llu) is out of place", i,
                     s->kind, (unsigned long long)s->len, (unsigned long long)s->off);
            return -1;
        }
        seen |= 1u << s->kind;
        at = end;
    }
    return 0;
}

const struct vmpi_area_sec *vmpi_area_section(const struct vmpi_area_hdr *d, uint32_t kind)
{
    for (uint32_t i = 0; i < d->nsec && i < VMPI_AREA_MAXSEC; i++)
        if (d->sec[i].kind == kind)
            return &d->sec[i];
    return NULL;
}
