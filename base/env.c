/* Environment knobs. */
#include "base.h"

#include <stdlib.h>

uint64_t vmpi_env_u64(const char *name, uint64_t def, uint64_t lo, uint64_t hi)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return def;
    char *end;
    unsigned long long v = strtoull(s, &end, 0);
    if (*end || v < lo || v > hi)
        vmpi_fatal("%s=%s is not a number in [%llu, %llu]", name, s,
                   (unsigned long long)lo, (unsigned long long)hi);
    return v;
}
