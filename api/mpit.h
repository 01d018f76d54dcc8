/* Shared by api/mpit.c (init, enums, control variables, categories) and
 * api/mpit_pvar.c (performance variables, sessions).
 *
 * MPI_T works before MPI_Init and after MPI_Finalize (MPI-3.1 14.3.4), so
 * its entry points do not use VMPI_ENTER. They return MPI_T_ERR_* classes
 * themselves, as tools compare them (no error handler is called), and are
 * serialized by one lock, so any thread level is provided. */
#ifndef VMPI_API_MPIT_H
#define VMPI_API_MPIT_H

#include "api.h"
#include "../core/mpit.h"

#include <pthread.h>

extern pthread_mutex_t vmpi_mpit_lock;
extern int vmpi_mpit_refs; /* MPI_T_init_thread minus MPI_T_finalize calls */

static inline void vmpi_mpit_unlock(int *scope)
{
    (void)scope;
    pthread_mutex_unlock(&vmpi_mpit_lock);
}

/* Takes the lock until the function returns; MPI_T_ERR_NOT_INITIALIZED
 * outside MPI_T_init_thread .. MPI_T_finalize. */
#define MPIT_ENTER()                                                     \
    pthread_mutex_lock(&vmpi_mpit_lock);                                 \
    __attribute__((cleanup(vmpi_mpit_unlock))) int vmpi_mpit_scope_ = 0; \
    (void)vmpi_mpit_scope_;                                              \
    if (vmpi_mpit_refs == 0)                                             \
        return MPI_T_ERR_NOT_INITIALIZED

/* MPI_T_ERR_INVALID when a required pointer argument is NULL. */
#define MPIT_PTR(p)         \
    do {                    \
        if (!(p))           \
            return MPI_T_ERR_INVALID; \
    } while (0)

/* Defines `static T **name(T **head, const T *x)`: the link that points at
 * x in the list from *head (linked by `next`), or NULL when x is not on it,
 * so a stale or made-up handle is refused, never dereferenced. */
#define MPIT_LINK_FN(name, T)                                   \
    static T **name(T **pp, const T *x)                         \
    {                                                           \
        for (; *pp; pp = &(*pp)->next)                          \
            if (*pp == x)                                       \
                return pp;                                      \
        return NULL;                                            \
    }

/* Copies s into buf of *len bytes as MPI-3.1 14.3.3 says: at most *len - 1
 * characters and a terminator, *len set to what was written with the
 * terminator; with a NULL buf or *len 0 only *len is set, to the length
 * needed. Either pointer may be NULL. */
void vmpi_mpit_str(const char *s, char *buf, int *len);

/* Frees every session and its handles (the last MPI_T_finalize). */
void vmpi_mpit_pvar_cleanup(void);

#endif
