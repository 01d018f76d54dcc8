/* Environment knobs. */
#include "base.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* def when name is unset; false when it is not a number (with a unit
 * suffix when units) in [lo, hi]. */
static bool env_parse(const char *name, bool units, uint64_t def, uint64_t lo, uint64_t hi,
                      uint64_t *out)
{
    const char *s = getenv(name);
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

uint64_t vmpi_env_u64(const char *name, uint64_t def, uint64_t lo, uint64_t hi)
{
    uint64_t v;
    if (!env_parse(name, false, def, lo, hi, &v))
        vmpi_fatal("%s=%s is not a number in [%llu, %llu]", name, getenv(name),
                   (unsigned long long)lo, (unsigned long long)hi);
    return v;
}

uint64_t vmpi_env_bytes(const char *name, uint64_t def, uint64_t lo, uint64_t hi)
{
    uint64_t v;
    if (!env_parse(name, true, def, lo, hi, &v))
        vmpi_fatal("%s=%s is not a size in [%llu, %llu] bytes (a number, or one with K, M "
                   "or G)", name, getenv(name), (unsigned long long)lo, (unsigned long long)hi);
    return v;
}
