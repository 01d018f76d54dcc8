/* Requests (core/request.c, vmpi_req_) and point-to-point: matching and
 * the eager and rendezvous protocols (core/p2p.c, vmpi_p2p_). */
#ifndef VMPI_CORE_REQUEST_H
#define VMPI_CORE_REQUEST_H

#include "../channel/chan.h"
#include "communicator.h"
#include "dtype.h"
#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- requests and point-to-point (core/request.c, core/p2p.c) ----------- */
/* COLL: a non-blocking collective; its schedule (coll/sched.c) completes it. */
enum vmpi_req_kind { VMPI_REQ_SEND = 1, VMPI_REQ_RECV = 2, VMPI_REQ_COLL = 3, VMPI_REQ_RMA = 4 };
enum vmpi_send_mode { VMPI_MODE_STD = 0, VMPI_MODE_SYNC = 1, VMPI_MODE_READY = 2 };

struct vmpi_req {
    struct vmpi_req *next, *prev; /* posted/unexpected queue links */
    int handle;                   /* MPI handle, or MPI_REQUEST_NULL if internal */
    uint32_t index, gen;          /* pool slot and generation: the wire cookie */
    uint8_t kind, mode;
    uint8_t done;                 /* set by whoever completes the request */
    uint8_t persistent, active;   /* persistent: inactive until MPI_Start */
    uint8_t user_freed;           /* MPI_Request_free while active */
    uint8_t cancelled;
    uint8_t matched;              /* receive matched (can no longer be cancelled) */
    uint8_t inflight;             /* counted as waiting on x.peer (core/p2p.c) */
    int peer;                     /* comm rank of the partner (or ANY_SOURCE) */
    int tag;
    uint32_t ctx;
    struct vmpi_comm *comm;
    void *buf;
    MPI_Count count;
    struct vmpi_dtype *dt;
    size_t len;                   /* packed bytes: message size / receive capacity */
    size_t msglen;                /* receive: size of the matched message */
    /* outcome */
    int st_source, st_tag, st_error;
    size_t st_bytes;
    void *tmp;                    /* packed copy of non-contiguous data */
    /* what the channel moving the data sees (x.peer: the partner's world
     * rank, x.cookie: this request's cookie) */
    struct vmpi_xfer x;
    struct vmpi_req *inner;       /* persistent: the operation MPI_Start posted */
};

struct vmpi_req *vmpi_req_alloc(int kind);   /* internal (no MPI handle) */
int vmpi_req_handle(struct vmpi_req *r);     /* give it an MPI handle */
struct vmpi_req *vmpi_req_from_handle(MPI_Request h);
struct vmpi_req *vmpi_req_from_cookie(uint64_t cookie); /* NULL if stale/invalid */
static inline uint64_t vmpi_req_cookie(const struct vmpi_req *r)
{
    return r->x.cookie;
}
static inline struct vmpi_req *vmpi_req_of(struct vmpi_xfer *x)
{
    return (struct vmpi_req *)((char *)x - offsetof(struct vmpi_req, x));
}
void vmpi_req_free(struct vmpi_req *r);
void vmpi_p2p_inflight_end(struct vmpi_req *r);
void vmpi_req_complete(struct vmpi_req *r);

/* Post operations. `coll` selects the collective context (ctx + 1), so
 * collective traffic never matches user point-to-point receives. */
int vmpi_p2p_isend(const void *buf, MPI_Count count, struct vmpi_dtype *dt, int dest,
                   int tag, struct vmpi_comm *c, int coll, int mode, struct vmpi_req **out);
int vmpi_p2p_irecv(void *buf, MPI_Count count, struct vmpi_dtype *dt, int src, int tag,
                   struct vmpi_comm *c, int coll, struct vmpi_req **out);
/* Wait for an internal request, fill *st (may be MPI_STATUS_IGNORE) and free it. */
int vmpi_p2p_wait(struct vmpi_req *r, MPI_Status *st);
/* Blocking helpers for collectives (coll context). */
int vmpi_p2p_send(const void *buf, MPI_Count count, struct vmpi_dtype *dt, int dest,
                  int tag, struct vmpi_comm *c, int coll);
int vmpi_p2p_recv(void *buf, MPI_Count count, struct vmpi_dtype *dt, int src, int tag,
                  struct vmpi_comm *c, int coll, MPI_Status *st);
int vmpi_p2p_sendrecv(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, int dest,
                      int stag, void *rbuf, MPI_Count rcount, struct vmpi_dtype *rdt,
                      int src, int rtag, struct vmpi_comm *c, int coll, MPI_Status *st);
void vmpi_req_status(MPI_Status *st, const struct vmpi_req *r);
void vmpi_req_status_set_count(MPI_Status *st, MPI_Count bytes);
MPI_Count vmpi_req_status_count(const MPI_Status *st);

/* Largest tag (MPI_TAG_UB). */
#define VMPI_TAG_UB ((1 << 30) - 1)

bool vmpi_p2p_cancel_recv(struct vmpi_req *r);
/* Fills the matching and buffer fields of a receive request. */
void vmpi_p2p_recv_fill(struct vmpi_req *r, void *buf, MPI_Count count, struct vmpi_dtype *dt,
                        int src, int tag, struct vmpi_comm *c, int coll);
/* Posts an initialized receive (which may live on the caller's stack if
 * the caller waits for it). */
void vmpi_p2p_post_recv(struct vmpi_req *r);
/* A blocking standard send of contiguous data straight into the channel
 * with no request; false when it must take the general path. */
bool vmpi_p2p_send_fast(const void *buf, size_t len, const struct vmpi_dtype *dt, int dest,
                        int tag, struct vmpi_comm *c);
bool vmpi_p2p_iprobe(int src, int tag, struct vmpi_comm *c, MPI_Status *st);
/* iprobe without a progress call: what has already arrived. */
bool vmpi_p2p_peek(int src, int tag, struct vmpi_comm *c, MPI_Status *st);
int vmpi_p2p_init(void);
void vmpi_p2p_finalize(void);
void vmpi_req_pool_finalize(void);

#endif
