/* Helpers of the MPI_T tests: variables by name, counters by channel. */
#ifndef VMPI_TESTS_T_MPIT_UTIL_H
#define VMPI_TESTS_T_MPIT_UTIL_H

#include "t_check.h"

static inline int t_cvar(const char *name)
{
    int i = -1;
    CHECK(MPI_T_cvar_get_index(name, &i) == MPI_SUCCESS, "no control variable %s", name);
    return i;
}

static inline int t_pvar(const char *name, int cls)
{
    int i = -1;
    CHECK(MPI_T_pvar_get_index(name, cls, &i) == MPI_SUCCESS, "no performance variable %s", name);
    return i;
}

/* A started handle on the counter `name` in session s. */
static inline MPI_T_pvar_handle t_started(MPI_T_pvar_session s, const char *name)
{
    MPI_T_pvar_handle h;
    int count;
    OK(MPI_T_pvar_handle_alloc(s, t_pvar(name, MPI_T_PVAR_CLASS_COUNTER), NULL, &h, &count));
    CHECK(count == 1, "%s: count %d", name, count);
    OK(MPI_T_pvar_start(s, h));
    return h;
}

/* A started handle on counter vmpi_<chan>_<what> in session s. */
static inline MPI_T_pvar_handle t_counter(MPI_T_pvar_session s, const char *chan,
                                          const char *what)
{
    char name[64];
    snprintf(name, sizeof name, "vmpi_%s_%s", chan, what);
    return t_started(s, name);
}

static inline unsigned long long t_read(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    unsigned long long v = ~0ull;
    OK(MPI_T_pvar_read(s, h, &v));
    return v;
}

#endif
