/* The variables of the tool interface (MPI_T, MPI-3.1 14.3) as tables
 * api/mpit*.c serves: control variables are the knobs of base/knob.c (by
 * their row), performance variables the counters of every channel in the
 * channel list and of the unexpected queue, and categories group both, one
 * per layer or channel under a root "vmpi". Built once per process, on the
 * first MPI_T_init_thread: neither the knobs nor the channels change. */
#ifndef VMPI_CORE_MPIT_H
#define VMPI_CORE_MPIT_H

#include "vmpi.h"

#define VMPI_PVAR_MAX 64
#define VMPI_TCAT_MAX 16

struct vmpi_pvar {
    char name[48];
    char desc[192];
    int var_class;   /* MPI_T_PVAR_CLASS_* */
    int verbosity;   /* MPI_T_VERBOSITY_* */
    bool continuous; /* always counting: no start or stop */
    bool readonly;   /* no write or reset */
    const uint64_t *src; /* the counter (an MPI_UNSIGNED_LONG_LONG) */
    uint64_t (*read)(void); /* or, when set, what computes it */
};

struct vmpi_tcat {
    const char *name, *desc;
    int cvars[VMPI_KNOB_MAX], ncvars;
    int pvars[VMPI_PVAR_MAX], npvars;
    int subs[VMPI_TCAT_MAX], nsubs;
};

extern struct vmpi_pvar vmpi_pvars[VMPI_PVAR_MAX];
extern int vmpi_npvars;
extern struct vmpi_tcat vmpi_tcats[VMPI_TCAT_MAX];
extern int vmpi_ntcats;

void vmpi_mpit_tables(void);

#endif
