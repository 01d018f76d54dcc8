/* The bootstrap: a client of the process manager that started the job
 * (PMI-1 or PMI-2 on PMI_FD/PMI_PORT: vmpirun, Hydra, srun --mpi=pmi2;
 * PMIx through libpmix: srun --mpi=pmix, Open MPI's mpirun), or a
 * singleton. pmi.c says how it is chosen. */
#ifndef VMPI_PMI_PMI_H
#define VMPI_PMI_PMI_H

#include <stdbool.h>
#include <stddef.h>

#define VMPI_PMI_VALLEN 1024
#define VMPI_PMI_KEYLEN 64

/* Connects to the process manager the environment names; without one
 * the process is a singleton (rank 0 of 1) with a process-local key-value
 * space, unless the environment shows a launcher that started it among
 * others without a connection vmpi can use (srun --mpi=none, Open MPI's
 * launcher without PMIx): then, as when the connection fails, an error
 * code whose message names the process manager. */
int vmpi_pmi_init(int *rank, int *size, int *appnum);
int vmpi_pmi_put(const char *key, const char *val);
/* Gets a key that some rank put before the last fence; 0 on success. */
int vmpi_pmi_get(const char *key, char *val, size_t len);
int vmpi_pmi_fence(void);
const char *vmpi_pmi_kvsname(void);
/* Connected to a process manager (else a singleton). */
bool vmpi_pmi_connected(void);
/* How many processes the job may grow to (MPI_UNIVERSE_SIZE), 0 when the
 * process manager does not say; the command of this rank in an MPMD or
 * spawn_multiple start (MPI_APPNUM). */
int vmpi_pmi_universe_size(void);
int vmpi_pmi_appnum(void);
/* Whether another job spawned this one (its port is then the key-value
 * space's PARENT_ROOT_PORT_NAME). */
bool vmpi_pmi_spawned(void);
/* Tells the process manager to kill the job with exit code `code`; returns
 * if there is none. */
void vmpi_pmi_abort(int code, const char *msg);
int vmpi_pmi_finalize(void);

/* ---- dynamic processes -------------------------------------------------------
 * Spawn: count commands, maxprocs[i] processes of cmds[i] each, with the
 * arguments argvs[i] (NULL-terminated; argvs or argvs[i] may be NULL) and
 * ninfo[i] info pairs keys[i][j]=vals[i][j], as one new job that finds the
 * npre `pre` pairs in its key-value space. 0, or -1 with the reason in err. */
struct vmpi_pmi_spawn {
    int count;
    char **cmds;
    char ***argvs;
    const int *maxprocs;
    const int *ninfo;
    char ***keys, ***vals;
    int npre;
    const char **prekeys, **prevals;
};
int vmpi_pmi_spawn(const struct vmpi_pmi_spawn *s, char *err, size_t cap);
/* The process manager's name service (a process-local table for a
 * singleton): 0, 1 when it refuses (published already / not published /
 * not found), -1 when it cannot be asked. */
int vmpi_pmi_publish(const char *service, const char *port);
int vmpi_pmi_unpublish(const char *service);
int vmpi_pmi_lookup(const char *service, char *port, size_t cap);

#endif
