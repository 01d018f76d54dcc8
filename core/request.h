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
/* GREQ: a generalized request (core/greq.c); MSG: a message taken by a
 * matched probe (an MPI_Message handle names it, core/message.c). */
enum vmpi_req_kind {
    VMPI_REQ_SEND = 1, VMPI_REQ_RECV = 2, VMPI_REQ_COLL = 3, VMPI_REQ_RMA = 4,
    VMPI_REQ_GREQ = 5, VMPI_REQ_MSG = 6
};
/* BUFFERED: only persistent requests carry it (MPI_Bsend_init). */
enum vmpi_send_mode {
    VMPI_MODE_STD = 0, VMPI_MODE_SYNC = 1, VMPI_MODE_READY = 2, VMPI_MODE_BUFFERED = 3
};

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
/* The same without the library's lock, between vmpi_cs_split_enter and
 * leave (core/thread.c): to a rank of the job whose channel has
 * send_split, while no send is queued; false: take the lock and the path
 * above. */
bool vmpi_p2p_send_split(const void *buf, size_t len, const struct vmpi_dtype *dt, int dest,
                         int tag, struct vmpi_comm *c);
/* The same for MPI_Isend: the completed send request, or NULL (also when
 * the thread has no cached requests left: vmpi_p2p_split_refill, under
 * the lock, gives it some). The request has no communicator or datatype
 * reference: nothing of the send is left to do. */
struct vmpi_req *vmpi_p2p_isend_split(const void *buf, size_t len, const struct vmpi_dtype *dt,
                                      int dest, int tag, struct vmpi_comm *c);
void vmpi_p2p_split_refill(void);
/* The first unexpected message a receive (src, tag, c) would match, or
 * NULL; its source, tag and size go to *st (may be MPI_STATUS_IGNORE).
 * POLL: make progress once if none is there yet. TAKE: remove it from the
 * queue (a matched probe): no receive can match it any more, and
 * vmpi_p2p_recv_taken gives it to a receive. */
struct vmpi_unexp;
enum { VMPI_PROBE_POLL = 1, VMPI_PROBE_TAKE = 2 };
struct vmpi_unexp *vmpi_p2p_probe(int src, int tag, struct vmpi_comm *c, MPI_Status *st,
                                  unsigned how);
void vmpi_p2p_recv_taken(struct vmpi_req *r, struct vmpi_unexp *u);
static inline bool vmpi_p2p_iprobe(int src, int tag, struct vmpi_comm *c, MPI_Status *st)
{
    return vmpi_p2p_probe(src, tag, c, st, VMPI_PROBE_POLL) != NULL;
}
/* iprobe without a progress call: what has already arrived. */
static inline bool vmpi_p2p_peek(int src, int tag, struct vmpi_comm *c, MPI_Status *st)
{
    return vmpi_p2p_probe(src, tag, c, st, 0) != NULL;
}
/* Per-peer state for nproc processes: the job's at start-up, then more as
 * processes of other jobs connect (core/proc.c). */
int vmpi_p2p_init(int nproc);
void vmpi_p2p_finalize(void);
void vmpi_req_pool_finalize(void);
/* MPI_Cancel of an operation (not a persistent request): receives that are
 * not matched yet are cancelled, generalized requests ask their cancel
 * callback (its error code comes back); sends are never cancelled. */
int vmpi_req_cancel(struct vmpi_req *r);

/* ---- generalized requests (core/greq.c) ------------------------------------
 * The user's callbacks and extra state live in r->tmp. MPI_Wait and friends
 * retire a done one with vmpi_req_settle before reading its status: the
 * query callback fills the status, then the free callback runs; the first
 * error of the two becomes the request's error. */
struct vmpi_req *vmpi_greq_start(MPI_Grequest_query_function *query_fn,
                                 MPI_Grequest_free_function *free_fn,
                                 MPI_Grequest_cancel_function *cancel_fn, void *extra_state);
void vmpi_greq_query(struct vmpi_req *r); /* query callback: status and error */
void vmpi_greq_retire(struct vmpi_req *r);
void vmpi_greq_release(struct vmpi_req *r); /* from vmpi_req_free: free callback, once */
void vmpi_greq_status(MPI_Status *st, const struct vmpi_req *r);
int vmpi_greq_cancel(struct vmpi_req *r);
static inline void vmpi_req_settle(struct vmpi_req *r)
{
    if (VMPI_UNLIKELY(r->kind == VMPI_REQ_GREQ))
        vmpi_greq_retire(r);
}

/* ---- buffered sends (core/bsend.c) -------------------------------------------
 * One attached buffer per process (MPI-3.1 3.6). */
int vmpi_bsend_attach(void *buf, size_t size); /* MPI_ERR_BUFFER if one is attached */
void vmpi_bsend_attached(void **buf, size_t *size); /* NULL, 0: none */
/* Waits until every buffered message has left, then detaches; *buf NULL and
 * *size 0 when none was attached. */
void vmpi_bsend_detach(void **buf, size_t *size);
/* Copies the message into the buffer and starts sending it; MPI_ERR_BUFFER
 * (through c's handler, message naming fn) when it does not fit. */
int vmpi_bsend(const char *fn, const void *buf, MPI_Count count, struct vmpi_dtype *dt,
               int dest, int tag, struct vmpi_comm *c);
/* What MPI_Ibsend and a started MPI_Bsend_init hold: a send request that is
 * complete, since its message is in the buffer. */
struct vmpi_req *vmpi_bsend_req(void);

/* ---- matched probe (core/message.c) ------------------------------------------ */
/* A message request for the message a matched probe took (in r->tmp). */
struct vmpi_req *vmpi_msg_new(struct vmpi_unexp *u, struct vmpi_comm *c);
/* Starts the receive of a message request's message and frees the message
 * request; the receive completes like one from vmpi_p2p_irecv. */
struct vmpi_req *vmpi_msg_recv(struct vmpi_req *msg, void *buf, MPI_Count count,
                               struct vmpi_dtype *dt);

#endif
