/* Environment knobs: reading them through the table of base/knob.c, and
 * what the tool interface needs (the value in use, setting one before
 * MPI_Init). The environment itself holds a value set through MPI_T, so
 * every reader of a knob sees it. */
#include "base.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* What the library last read from each numeric knob (vmpi_knob_peek). */
static uint64_t knob_used[VMPI_KNOB_MAX];
static bool knob_seen[VMPI_KNOB_MAX];

int vmpi_knob_index(const char *name)
{
    for (int i = 0; i < vmpi_nknobs; i++)
        if (!strcmp(vmpi_knobs[i].name, name))
            return i;
    return -1;
}

static int knob_row(const char *name)
{
    int i = vmpi_knob_index(name);
    if (i < 0)
        vmpi_fatal("internal error: environment knob %s is not in base/knob.c's table", name);
    return i;
}

/* def when s is unset or empty; false when it is not a number (with a unit
 * suffix when units) in [lo, hi]. */
static bool parse(const char *s, bool units, uint64_t def, uint64_t lo, uint64_t hi,
                  uint64_t *out)
{
    *out = def;
    if (!s || !*s)
        return true;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    unsigned shift = 0;
    if (units && *end && !end[1]) {
        const char *u = strchr("kKmMgG", *end);
        if (u) {
            shift = 10 * (unsigned)(1 + (u - "kKmMgG") / 2);
            end++;
        }
    }
    if (*end || errno || end == s || *s == '-' || (shift && v > (UINT64_MAX >> shift)))
        return false;
    *out = (uint64_t)v << shift;
    return *out >= lo && *out <= hi;
}

static uint64_t knob_read(int i, uint64_t def, uint64_t lo, uint64_t hi)
{
    const struct vmpi_knob *k = &vmpi_knobs[i];
    const char *s = getenv(k->name);
    uint64_t v;
    if (k->kind == VMPI_KNOB_STR)
        vmpi_fatal("internal error: environment knob %s is text, read as a number", k->name);
    if (!parse(s, k->kind == VMPI_KNOB_BYTES, def, lo, hi, &v)) {
        if (k->kind == VMPI_KNOB_BYTES)
            vmpi_fatal("%s=%s is not a size in [%llu, %llu] bytes (a number, or one with K, M "
                       "or G)", k->name, s, (unsigned long long)lo, (unsigned long long)hi);
        vmpi_fatal("%s=%s is not a number in [%llu, %llu]", k->name, s, (unsigned long long)lo,
                   (unsigned long long)hi);
    }
    knob_used[i] = v;
    knob_seen[i] = true;
    return v;
}

uint64_t vmpi_knob_num(const char *name)
{
    int i = knob_row(name);
    const struct vmpi_knob *k = &vmpi_knobs[i];
    if (k->computed)
        vmpi_fatal("internal error: knob %s has a computed default; read it with vmpi_env_u64",
                   name);
    return knob_read(i, k->def, k->lo, k->hi);
}

const char *vmpi_knob_str(const char *name)
{
    return getenv(vmpi_knobs[knob_row(name)].name);
}

static uint64_t env_num(const char *name, uint64_t def, uint64_t lo, uint64_t hi)
{
    int i = knob_row(name);
    if (!vmpi_knobs[i].computed && def != vmpi_knobs[i].def)
        vmpi_fatal("internal error: knob %s read with default %llu, the table says %llu", name,
                   (unsigned long long)def, (unsigned long long)vmpi_knobs[i].def);
    return knob_read(i, def, lo, hi);
}

uint64_t vmpi_env_u64(const char *name, uint64_t def, uint64_t lo, uint64_t hi)
{
    return env_num(name, def, lo, hi);
}

uint64_t vmpi_env_bytes(const char *name, uint64_t def, uint64_t lo, uint64_t hi)
{
    return env_num(name, def, lo, hi);
}

bool vmpi_knob_peek(int i, uint64_t *num, bool *known)
{
    const struct vmpi_knob *k = &vmpi_knobs[i];
    *known = true;
    if (knob_seen[i]) {
        *num = knob_used[i];
        return true;
    }
    const char *s = getenv(k->name);
    if (k->computed && (!s || !*s)) {
        *known = false;
        *num = 0;
        return true;
    }
    return parse(s, k->kind == VMPI_KNOB_BYTES, k->def, k->lo, k->hi, num);
}

bool vmpi_knob_set(int i, const char *text)
{
    const struct vmpi_knob *k = &vmpi_knobs[i];
    uint64_t v;
    if (k->kind != VMPI_KNOB_STR && !parse(text, k->kind == VMPI_KNOB_BYTES, 0, k->lo, k->hi, &v))
        return false;
    knob_seen[i] = false;
    return setenv(k->name, text, 1) == 0;
}
