/* Private to pmi/: the seam between the dispatch (pmi.c) and the clients
 * of the three process-manager interfaces (pmi1.c, pmi2.c, pmix.c), and
 * the socket helpers the two wire protocols share (wire.c). */
#ifndef VMPI_PMI_IMPL_H
#define VMPI_PMI_IMPL_H

#include "pmi.h"

#include <stddef.h>

/* What a client learned at init; kvsname names the job (shared-memory
 * file names derive from it). */
struct vmpi_pmi_job {
    int rank, size, appnum, universe;
    bool spawned; /* started by MPI_Comm_spawn of another job */
    char kvsname[256];
};

/* One client; pmi.c calls through the table the client's init filled in. */
struct vmpi_pmi_ops {
    /* A non-zero exit before MPI_Finalize must abort the job (pmi.c). */
    bool abort_at_exit;
    int (*put)(const char *key, const char *val);
    int (*get)(const char *key, char *val, size_t len);
    int (*fence)(void);
    void (*abort)(int code, const char *msg);
    int (*finalize)(void);
    /* Dynamic processes (NULL where the client has none): as pmi.h's. */
    int (*spawn)(const struct vmpi_pmi_spawn *s, char *err, size_t cap);
    int (*publish)(const char *service, const char *port);
    int (*unpublish)(const char *service);
    int (*lookup)(const char *service, char *port, size_t cap);
};

/* The wire clients go on from a connection whose server accepted their
 * version (vmpi_pmi_wire_hello), with job->rank and size from PMI_RANK/
 * PMI_SIZE or the port-mode handshake. 0 on success. */
int vmpi_pmi1_init(struct vmpi_pmi_job *job, const struct vmpi_pmi_ops **ops);
int vmpi_pmi2_init(struct vmpi_pmi_job *job, const struct vmpi_pmi_ops **ops);
/* Loads libpmix; an error code with a message when the library cannot be
 * loaded or PMIx_Init fails. */
int vmpi_pmix_init(struct vmpi_pmi_job *job, const struct vmpi_pmi_ops **ops);

/* pmi.c's process-local key-value space, which a client may fill. */
int vmpi_pmi_local_put(const char *key, const char *val);
int vmpi_pmi_local_get(const char *key, char *val, size_t len);

/* --- wire.c: one socket to the process manager, shared by PMI-1 and -2 --- */

/* Connects through PMI_FD or PMI_PORT (port mode: the PMI-1 initack
 * handshake gives rank and size); 1 when neither is set, -1 on failure. */
int vmpi_pmi_wire_open(struct vmpi_pmi_job *job);
int vmpi_pmi_wire_write(const char *s, size_t n);
/* Reads one '\n'-terminated line (without it) / exactly n bytes. */
int vmpi_pmi_wire_line(char *line, size_t cap);
int vmpi_pmi_wire_read(char *buf, size_t n);
void vmpi_pmi_wire_close(void);
/* Offers `cmd=init pmi_version=V`: 0 if the server accepts V, 1 if it
 * refuses (the connection stays usable for another offer), -1 if the
 * connection fails. */
int vmpi_pmi_wire_hello(int version, int subversion);
/* The value of `key` in a PMI-1 line of space-separated key=value words. */
int vmpi_pmi_wire_field(const char *line, const char *key, char *out, size_t cap);
/* A non-negative decimal environment variable. */
int vmpi_pmi_env_int(const char *name, int *out);

#endif
