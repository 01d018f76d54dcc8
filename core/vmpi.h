/* Internal interfaces shared by every layer of vmpi.
 *
 * Layers (see ../shared/design.md): api/ checks arguments and calls core/;
 * core/ owns communicators, datatypes, requests, matching and the protocols;
 * channel/ moves packets between ranks; shm/ and pmi/ are the plumbing below.
 * Public MPI names appear only in api/; everything here is vmpi_<part>_. */
#ifndef VMPI_CORE_VMPI_H
#define VMPI_CORE_VMPI_H

#include "../base/base.h"
#include "../channel/chan.h"

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- handles ------------------------------------------------------------
 * MPICH's encoding: bits 31-30 kind, 29-26 object type, 25-0 index.
 * Predefined objects are "builtin" (kind 1); objects vmpi creates use
 * kind 3 ("indirect") so they never collide with MPICH's direct-kind
 * predefined pair types (0x8c00000x). */
#define VMPI_HKIND(h) (((uint32_t)(h)) >> 30)
#define VMPI_HTYPE(h) ((((uint32_t)(h)) >> 26) & 0xfu)
#define VMPI_HINDEX(h) (((uint32_t)(h)) & 0x03ffffffu)
#define VMPI_HMAKE(kind, type, idx) \
    ((int)(((uint32_t)(kind) << 30) | ((uint32_t)(type) << 26) | (uint32_t)(idx)))
enum { VMPI_HK_INVALID = 0, VMPI_HK_BUILTIN = 1, VMPI_HK_DIRECT = 2, VMPI_HK_INDIRECT = 3 };
enum {
    VMPI_OBJ_COMM = 1, VMPI_OBJ_GROUP = 2, VMPI_OBJ_DTYPE = 3, VMPI_OBJ_ERRH = 5,
    VMPI_OBJ_OP = 6, VMPI_OBJ_WIN = 8, VMPI_OBJ_REQ = 11
};

/* ---- errors (core/err.c) ----------------------------------------------------
 * An error raised on a communicator goes through its error handler: the
 * code comes back (MPI_ERRORS_RETURN) or the job ends. */
struct vmpi_comm;
int vmpi_err(struct vmpi_comm *comm, int errclass, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int vmpi_err_handle(struct vmpi_comm *comm, int code); /* apply errhandler to an existing code */

/* ---- datatypes (core/dtype.c) ------------------------------------------- */
struct vmpi_dtype;
struct vmpi_dtype *vmpi_dtype_get(MPI_Datatype h);      /* NULL: invalid or freed */
bool vmpi_dtype_is_contig(const struct vmpi_dtype *dt);  /* committed data is one block */
MPI_Count vmpi_dtype_size(const struct vmpi_dtype *dt);  /* bytes of data per element */
MPI_Aint vmpi_dtype_extent(const struct vmpi_dtype *dt);
MPI_Aint vmpi_dtype_true_lb(const struct vmpi_dtype *dt);
bool vmpi_dtype_committed(const struct vmpi_dtype *dt);
/* Bytes [off, off+max) of the packed form of (buf, count, dt) go to out;
 * returns the bytes written. Whole contiguous blocks are copied at once. */
size_t vmpi_dtype_pack(void *out, const void *buf, MPI_Count count,
                       const struct vmpi_dtype *dt, size_t off, size_t max);
/* The reverse: len bytes of packed stream starting at off go into (buf, count, dt). */
size_t vmpi_dtype_unpack(void *buf, MPI_Count count, const struct vmpi_dtype *dt,
                         size_t off, const void *in, size_t len);
/* Basic elements in `bytes` bytes of packed data, or MPI_UNDEFINED. */
MPI_Count vmpi_dtype_elements(const struct vmpi_dtype *dt, MPI_Count bytes);
int vmpi_dtype_init(void);
void vmpi_dtype_finalize(void);

/* ---- reduction operations (core/op.c) ----------------------------------- */
/* MPI_SUCCESS, or MPI_ERR_OP if op is invalid (or freed) or not defined for
 * dt. A user op is defined on every type. */
int vmpi_op_check(MPI_Op op, const struct vmpi_dtype *dt);
/* inout = in op inout, element-wise over (count, dt) layouts; in is the left
 * operand. A user function gets the handle of dt and a piece of at most
 * INT_MAX elements at a time. */
void vmpi_op_apply(MPI_Op op, const void *in, void *inout, MPI_Count count,
                   const struct vmpi_dtype *dt);
bool vmpi_op_commutative(MPI_Op op); /* false for user ops created non-commutative */
/* User operations. vmpi_op_free (MPI_Op_free) makes the handle invalid for
 * the user; an operation that may still apply the op after it returns to
 * the user (a non-blocking collective) holds a reference from vmpi_op_retain
 * to vmpi_op_release, and the op lives until the last one goes. Both are
 * no-ops on predefined ops. */
int vmpi_op_create(MPI_User_function *fn, bool commute, MPI_Op *out); /* or MPI_ERR_NO_MEM */
int vmpi_op_free(MPI_Op op); /* MPI_ERR_OP unless a live user op */
bool vmpi_op_is_user(MPI_Op op); /* a live (not freed) user op */
void vmpi_op_retain(MPI_Op op);
void vmpi_op_release(MPI_Op op);

/* ---- groups and communicators (core/group.c, core/comm.c) --------------- */
struct vmpi_group {
    int handle;
    int refcount;
    int size;
    int rank;   /* this process's rank in the group, or MPI_UNDEFINED */
    int *world; /* group rank -> world rank */
};

/* A layer above core keeps its own per-communicator data in a slot of the
 * communicator: vmpi_comm_slot_new gives it an index and takes the
 * destructor run on non-NULL data when the communicator goes. */
#define VMPI_COMM_SLOTS 4
int vmpi_comm_slot_new(void (*destroy)(void *data));

struct vmpi_comm {
    int handle;
    int refcount;
    uint32_t ctx;  /* point-to-point context id; collectives use ctx + 1 */
    uint32_t inst; /* instance number, new on every process (core/comm.c) */
    int rank, size;
    struct vmpi_group *group;
    MPI_Errhandler errh;
    int topo;      /* MPI_UNDEFINED or MPI_CART */
    int ndims;
    int *dims, *periods;
    char name[MPI_MAX_OBJECT_NAME];
    void *slot[VMPI_COMM_SLOTS]; /* the layers' own data (vmpi_comm_slot_new) */
};

struct vmpi_comm *vmpi_comm_get(MPI_Comm h); /* NULL: invalid */
struct vmpi_group *vmpi_group_get(MPI_Group h);
static inline int vmpi_comm_world_rank(const struct vmpi_comm *c, int r)
{
    return c->group->world[r];
}
int vmpi_comm_init(void);   /* builds MPI_COMM_WORLD and MPI_COMM_SELF */
void vmpi_comm_finalize(void);

/* Group arithmetic on plain arrays of world ranks (core/group.c). */
int vmpi_group_incl(const int *w, int size, int n, const int *ranks, int *out);
int vmpi_group_excl(const int *w, int size, int n, const int *ranks, int *out, int *outn);
int vmpi_group_range_incl(const int *w, int size, int n, const int (*ranges)[3], int **out,
                        int *outn);
void vmpi_group_union(const int *a, int na, const int *b, int nb, int *out, int *outn);
void vmpi_group_intersection(const int *a, int na, const int *b, int nb, int *out, int *outn);
void vmpi_group_difference(const int *a, int na, const int *b, int nb, int *out, int *outn);
int vmpi_group_translate(const int *a, int na, int n, const int *r1, const int *b, int nb,
                       int *r2);
int vmpi_group_compare(const int *a, int na, const int *b, int nb);
struct vmpi_group *vmpi_group_new(int size, int *world);
void vmpi_group_retain(struct vmpi_group *g);
void vmpi_group_release(struct vmpi_group *g);
void vmpi_group_finalize(void);

/* The communicator object (core/comm.c); building communicators, which
 * needs collectives, is comm/'s. */
void vmpi_comm_retain(struct vmpi_comm *c);
void vmpi_comm_release(struct vmpi_comm *c);
int vmpi_comm_free(struct vmpi_comm *c); /* MPI_Comm_free: the handle goes now */
int vmpi_comm_compare(const struct vmpi_comm *a, const struct vmpi_comm *b);
/* A communicator over g (takes the caller's reference on g) with context id
 * ctx, which it marks used on this process; NULL if out of memory (g is
 * released). */
struct vmpi_comm *vmpi_comm_new(struct vmpi_group *g, uint32_t ctx, uint32_t inst,
                                MPI_Errhandler errh);
/* Context ids: this process's bitmap of free ids (bit i of word w: id
 * 2 * (32 w + i) is free), and instance numbers (see comm/comm.c). */
#define VMPI_CTX_WORDS 64
void vmpi_comm_ctx_free(uint32_t mask[VMPI_CTX_WORDS]);
uint32_t vmpi_comm_inst_seen(void);
void vmpi_comm_inst_saw(uint32_t inst);

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
void vmpi_status_set(MPI_Status *st, const struct vmpi_req *r);
void vmpi_status_set_count(MPI_Status *st, MPI_Count bytes);
MPI_Count vmpi_status_get_count(const MPI_Status *st);

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

/* ---- progress (core/progress.c) -------------------------------------------- */
int vmpi_progress(void); /* runs every poller once; returns events handled */
/* Registers fn to run on progress calls where (count & mask) == 0 (no-op if
 * it is registered); VMPI_POLL_WAIT: MPI_Finalize waits while it is. */
enum { VMPI_POLL_WAIT = 1 };
void vmpi_progress_add(int (*fn)(void), unsigned mask, unsigned flags);
void vmpi_progress_remove(int (*fn)(void));
/* Nothing queued anywhere: no waiting poller, p2p quiet, no channel busy. */
bool vmpi_progress_idle(void);
void vmpi_progress_finalize(void);
/* Point-to-point's share of progress (core/p2p.c): the deferred sends and
 * pulls (returns events), the idle-time pull of unexpected rendezvous data,
 * and whether anything of it is still under way. */
int vmpi_p2p_deferred(void);
void vmpi_p2p_idle_pull(void);
bool vmpi_p2p_quiet(void);
/* The up-call table the channels get (core/p2p.c). */
extern const struct vmpi_chan_up vmpi_p2p_up;

/* Asynchronous progress (core/async.c): a helper thread polls while the
 * application is outside MPI, for as long as something wants it. */
extern int vmpi_async_depth;     /* MPI calls the application is inside (nested count) */
extern bool vmpi_async_on;     /* the helper runs: outermost calls take its lock */
extern bool vmpi_async_wanted;
void vmpi_async_want(bool on); /* takes effect when the outermost MPI call returns */
void vmpi_async_acquire(void);
void vmpi_async_leave(void);   /* outermost return: drop the lock, start or stop the helper */

/* ---- process-wide state --------------------------------------------------- */
struct vmpi_global {
    int state; /* 0 before Init, 1 initialized, 2 finalized */
    int thread_level;
    unsigned yield_polls;        /* oversubscribed: sched_yield after this many idle polls */
    struct vmpi_comm *world; /* MPI_COMM_WORLD, for the lookup fast path */
    size_t unexp_bytes, unexp_max; /* unexpected eager data held, and its cap */
};
extern struct vmpi_global vmpi_g;

/* vmpi_comm_get with MPI_COMM_WORLD inline. */
static inline struct vmpi_comm *vmpi_comm_lookup(MPI_Comm h)
{
    if (VMPI_LIKELY(h == MPI_COMM_WORLD && vmpi_g.world))
        return vmpi_g.world;
    return vmpi_comm_get(h);
}

int vmpi_core_init(int required, int *provided);
int vmpi_core_finalize(void);

#endif
