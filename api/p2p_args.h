/* What the point-to-point entry points share (api/p2p.c, api/persist.c,
 * api/bsend.c, api/message.c, api/status.c): argument checks, the error of
 * a finished receive, the empty status. */
#ifndef VMPI_API_P2P_ARGS_H
#define VMPI_API_P2P_ARGS_H

#include "api.h"

/* The (buffer, count, datatype) triple and the communicator; sets *c, *dt. */
int p2p_check_buf(const char *fn, MPI_Comm comm, struct vmpi_comm **c, const void *buf,
                  int count, MPI_Datatype datatype, struct vmpi_dtype **dt);
int p2p_check_dest(const char *fn, struct vmpi_comm *c, int dest, int tag);
int p2p_check_src(const char *fn, struct vmpi_comm *c, int src, int tag);
/* A truncated receive, through its communicator's error handler. */
int p2p_recv_error(const char *fn, const struct vmpi_req *r);
/* The status of a null or inactive request (MPI-3.1 3.7.3). */
void p2p_empty_status(MPI_Status *st);

#endif
