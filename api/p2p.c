/* Point-to-point entry points. */
#include "p2p_args.h"
#include "../core/dtype_impl.h"

#include <stdlib.h>
#include <string.h>

/* Checks the (buffer, count, datatype) triple and the communicator shared
 * by every point-to-point call. */
int p2p_check_buf(const char *fn, MPI_Comm comm, struct vmpi_comm **c, const void *buf,
                  int count, MPI_Datatype datatype, struct vmpi_dtype **dt)
{
    *c = vmpi_comm_get(comm);
    VMPI_CHECK(*c, NULL, MPI_ERR_COMM, "%s: invalid communicator %#x", fn, (unsigned)comm);
    VMPI_CHECK(count >= 0, *c, MPI_ERR_COUNT, "%s: count %d is negative", fn, count);
    *dt = vmpi_dtype_get(datatype);
    VMPI_CHECK(*dt, *c, MPI_ERR_TYPE, "%s: invalid datatype %#x", fn, (unsigned)datatype);
    VMPI_CHECK(vmpi_dtype_committed(*dt), *c, MPI_ERR_TYPE,
               "%s: datatype %#x is not committed", fn, (unsigned)datatype);
    /* MPI_BOTTOM (NULL) is legal with derived types holding absolute addresses. */
    VMPI_CHECK(buf || count == 0 || !(*dt)->builtin || (*dt)->size == 0,
               *c, MPI_ERR_BUFFER, "%s: buffer is NULL with count %d", fn, count);
    return MPI_SUCCESS;
}

int p2p_check_dest(const char *fn, struct vmpi_comm *c, int dest, int tag)
{
    VMPI_CHECK(dest == MPI_PROC_NULL || (dest >= 0 && dest < c->peers->size), c, MPI_ERR_RANK,
               "%s: destination rank %d is not in [0, %d) of communicator %s", fn, dest,
               c->peers->size, c->name);
    VMPI_CHECK(tag >= 0 && tag <= VMPI_TAG_UB, c, MPI_ERR_TAG,
               "%s: tag %d is not in [0, MPI_TAG_UB=%d]", fn, tag, VMPI_TAG_UB);
    return MPI_SUCCESS;
}

int p2p_check_src(const char *fn, struct vmpi_comm *c, int src, int tag)
{
    VMPI_CHECK(src == MPI_PROC_NULL || src == MPI_ANY_SOURCE || (src >= 0 && src < c->peers->size),
               c, MPI_ERR_RANK, "%s: source rank %d is not in [0, %d) of communicator %s",
               fn, src, c->peers->size, c->name);
    VMPI_CHECK(tag == MPI_ANY_TAG || (tag >= 0 && tag <= VMPI_TAG_UB), c, MPI_ERR_TAG,
               "%s: tag %d is not MPI_ANY_TAG or in [0, MPI_TAG_UB=%d]", fn, tag,
               VMPI_TAG_UB);
    return MPI_SUCCESS;
}

/* The fast predicates: true when the arguments need no further look.
 * Otherwise the check_* functions above find and report the problem. */
static inline bool buf_ok(MPI_Comm comm, const void *buf, int count, MPI_Datatype datatype,
                          struct vmpi_comm **c, struct vmpi_dtype **dt)
{
    *c = vmpi_comm_lookup(comm);
    *dt = vmpi_dtype_lookup(datatype);
    return *c && *dt && (*dt)->committed && count >= 0 &&
           (buf || count == 0 || !(*dt)->builtin || (*dt)->size == 0);
}

static inline bool dest_ok(const struct vmpi_comm *c, int dest, int tag)
{
    return ((unsigned)dest < (unsigned)c->peers->size || dest == MPI_PROC_NULL) &&
           (unsigned)tag <= VMPI_TAG_UB;
}

static inline bool src_ok(const struct vmpi_comm *c, int src, int tag)
{
    return ((unsigned)src < (unsigned)c->peers->size || src == MPI_ANY_SOURCE ||
            src == MPI_PROC_NULL) &&
           ((unsigned)tag <= VMPI_TAG_UB || tag == MPI_ANY_TAG);
}

__attribute__((cold, noinline)) static int send_args_error(const char *fn, MPI_Comm comm,
                                                           const void *buf, int count,
                                                           MPI_Datatype datatype, int dest,
                                                           int tag)
{
    struct vmpi_comm *c;
    struct vmpi_dtype *dt;
    int rc = p2p_check_buf(fn, comm, &c, buf, count, datatype, &dt);
    return rc != MPI_SUCCESS ? rc : p2p_check_dest(fn, c, dest, tag);
}

__attribute__((cold, noinline)) static int recv_args_error(const char *fn, MPI_Comm comm,
                                                           const void *buf, int count,
                                                           MPI_Datatype datatype, int src,
                                                           int tag)
{
    struct vmpi_comm *c;
    struct vmpi_dtype *dt;
    int rc = p2p_check_buf(fn, comm, &c, buf, count, datatype, &dt);
    return rc != MPI_SUCCESS ? rc : p2p_check_src(fn, c, src, tag);
}

#define CHECK_SEND(fn)                                                                   \
    struct vmpi_comm *c;                                                                 \
    struct vmpi_dtype *dt;                                                               \
    if (VMPI_UNLIKELY(!buf_ok(comm, buf, count, datatype, &c, &dt) ||                    \
                      !dest_ok(c, dest, tag)))                                           \
    return send_args_error(fn, comm, buf, count, datatype, dest, tag)

#define CHECK_RECV(fn)                                                                   \
    struct vmpi_comm *c;                                                                 \
    struct vmpi_dtype *dt;                                                               \
    if (VMPI_UNLIKELY(!buf_ok(comm, buf, count, datatype, &c, &dt) ||                    \
                      !src_ok(c, source, tag)))                                          \
    return recv_args_error(fn, comm, buf, count, datatype, source, tag)

/* Reports a truncated receive through the communicator's error handler. */
int p2p_recv_error(const char *fn, const struct vmpi_req *r)
{
    if (r->st_error == MPI_SUCCESS)
        return MPI_SUCCESS;
    return vmpi_err(r->comm, r->st_error,
                    "%s: message of %zu bytes from rank %d (tag %d) truncated to the %zu-byte "
                    "receive buffer",
                    fn, r->msglen, r->st_source, r->st_tag, r->len);
}

/* Reports a failed non-blocking collective through its communicator's
 * error handler. */
static int coll_error(const char *fn, const struct vmpi_req *r)
{
    if (r->st_error == MPI_SUCCESS || r->st_error != vmpi_err_class(r->st_error))
        return vmpi_err_handle(r->comm, r->st_error); /* a code with its own message */
    return vmpi_err(r->comm, r->st_error, "%s: non-blocking collective failed: %s", fn,
                    r->st_error == MPI_ERR_TRUNCATE
                        ? "a rank received more data than it expected (the ranks passed "
                          "counts or datatypes that do not match)"
                        : "out of memory for a local copy");
}

static int rma_error(const char *fn, const struct vmpi_req *r)
{
    if (r->st_error == MPI_SUCCESS)
        return MPI_SUCCESS;
    return vmpi_err(r->comm, r->st_error,
                    "%s: a one-sided operation failed at its target (error class %d)", fn,
                    r->st_error);
}

static inline __attribute__((always_inline)) int blocking_send(const char *fn, const void *buf, int count, MPI_Datatype datatype,
                         int dest, int tag, MPI_Comm comm, int mode)
{
    CHECK_SEND(fn);
    if (mode != VMPI_MODE_SYNC && dest != MPI_PROC_NULL &&
        vmpi_p2p_send_fast(buf, (size_t)count * (size_t)dt->size, dt, dest, tag, c))
        return MPI_SUCCESS;
    struct vmpi_req *r;
    vmpi_p2p_isend(buf, count, dt, dest, tag, c, 0, mode, &r);
    while (!r->done)
        vmpi_progress();
    vmpi_req_free(r);
    return MPI_SUCCESS;
}

/* Under MPI_THREAD_MULTIPLE, once several threads use MPI: an eager send
 * to a rank of the job on shared memory without the library's lock
 * (core/thread.c). False: the call takes the usual path, which also
 * reports what is wrong with the arguments. request NULL: MPI_Send. */
__attribute__((noinline)) static bool send_split(const void *buf, int count,
                                                 MPI_Datatype datatype, int dest, int tag,
                                                 MPI_Comm comm, MPI_Request *request)
{
    if (vmpi_g.state != 1 || vmpi_cs_depth != 0 || !vmpi_cs_split_enter())
        return false;
    struct vmpi_comm *c;
    struct vmpi_dtype *dt;
    bool sent = false;
    if (buf_ok(comm, buf, count, datatype, &c, &dt) && dest_ok(c, dest, tag) &&
        dest != MPI_PROC_NULL) {
        size_t len = (size_t)count * (size_t)dt->size;
        if (!request) {
            sent = vmpi_p2p_send_split(buf, len, dt, dest, tag, c);
        } else {
            struct vmpi_req *r = vmpi_p2p_isend_split(buf, len, dt, dest, tag, c);
            if (r) {
                *request = vmpi_req_handle(r);
                sent = true;
            }
        }
    }
    vmpi_cs_split_leave(sent);
    return sent;
}

static inline bool split_now(void)
{
    return VMPI_UNLIKELY(atomic_load_explicit(&vmpi_chan_mt, memory_order_relaxed));
}

int PMPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
              MPI_Comm comm)
{
    if (split_now() && send_split(buf, count, datatype, dest, tag, comm, NULL))
        return MPI_SUCCESS;
    VMPI_ENTER("MPI_Send");
    return blocking_send("MPI_Send", buf, count, datatype, dest, tag, comm, VMPI_MODE_STD);
}
VMPI_WEAK(Send);

int PMPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm)
{
    VMPI_ENTER("MPI_Ssend");
    return blocking_send("MPI_Ssend", buf, count, datatype, dest, tag, comm, VMPI_MODE_SYNC);
}
VMPI_WEAK(Ssend);

int PMPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm)
{
    VMPI_ENTER("MPI_Rsend");
    return blocking_send("MPI_Rsend", buf, count, datatype, dest, tag, comm, VMPI_MODE_READY);
}
VMPI_WEAK(Rsend);

int PMPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
              MPI_Comm comm, MPI_Status *status)
{
    VMPI_ENTER("MPI_Recv");
    CHECK_RECV("MPI_Recv");
    /* The request lives on this stack frame: nothing refers to it once done. */
    struct vmpi_req r;
    r.kind = VMPI_REQ_RECV;
    r.done = r.matched = r.cancelled = r.user_freed = r.persistent = r.inflight = 0;
    r.st_error = MPI_SUCCESS;
    r.tmp = NULL;
    vmpi_p2p_recv_fill(&r, buf, count, dt, source, tag, c, 0);
    vmpi_p2p_post_recv(&r);
    while (!r.done)
        vmpi_progress();
    vmpi_req_status(status, &r);
    return p2p_recv_error("MPI_Recv", &r);
}
VMPI_WEAK(Recv);

static int nonblocking_send(const char *fn, const void *buf, int count, MPI_Datatype datatype,
                            int dest, int tag, MPI_Comm comm, int mode, MPI_Request *request)
{
    CHECK_SEND(fn);
    VMPI_CHECK(request, c, MPI_ERR_ARG, "%s: request is NULL", fn);
    if (mode == VMPI_MODE_STD && split_now() && vmpi_cs_slot >= 0)
        vmpi_p2p_split_refill();
    struct vmpi_req *r;
    vmpi_p2p_isend(buf, count, dt, dest, tag, c, 0, mode, &r);
    *request = vmpi_req_handle(r);
    return MPI_SUCCESS;
}

int PMPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm, MPI_Request *request)
{
    if (split_now() && request && send_split(buf, count, datatype, dest, tag, comm, request))
        return MPI_SUCCESS;
    VMPI_ENTER("MPI_Isend");
    return nonblocking_send("MPI_Isend", buf, count, datatype, dest, tag, comm, VMPI_MODE_STD,
                            request);
}
VMPI_WEAK(Isend);

int PMPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm, MPI_Request *request)
{
    VMPI_ENTER("MPI_Issend");
    return nonblocking_send("MPI_Issend", buf, count, datatype, dest, tag, comm,
                            VMPI_MODE_SYNC, request);
}
VMPI_WEAK(Issend);

int PMPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm, MPI_Request *request)
{
    VMPI_ENTER("MPI_Irsend");
    return nonblocking_send("MPI_Irsend", buf, count, datatype, dest, tag, comm,
                            VMPI_MODE_READY, request);
}
VMPI_WEAK(Irsend);

int PMPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
               MPI_Comm comm, MPI_Request *request)
{
    VMPI_ENTER("MPI_Irecv");
    CHECK_RECV("MPI_Irecv");
    VMPI_CHECK(request, c, MPI_ERR_ARG, "MPI_Irecv: request is NULL");
    struct vmpi_req *r;
    vmpi_p2p_irecv(buf, count, dt, source, tag, c, 0, &r);
    *request = vmpi_req_handle(r);
    return MPI_SUCCESS;
}
VMPI_WEAK(Irecv);

/* ---- completion -------------------------------------------------------------- */

/* Outcome of looking at one request handle. */
enum { R_NULL, R_PENDING, R_DONE };

static int req_state(MPI_Request h, struct vmpi_req **out)
{
    *out = NULL;
    if (h == MPI_REQUEST_NULL)
        return R_NULL;
    struct vmpi_req *r = vmpi_req_from_handle(h);
    *out = r;
    if (!r || r->kind == VMPI_REQ_MSG) /* an MPI_Message is no request to complete */
        return -1;
    if (r->persistent) {
        if (!r->active)
            return R_NULL;
        return r->inner->done ? R_DONE : R_PENDING;
    }
    return r->done ? R_DONE : R_PENDING;
}

void p2p_empty_status(MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    st->count_lo = 0;
    st->count_hi_and_cancelled = 0;
}

/* Retires a completed request: fills the status, frees or deactivates it,
 * and returns its error code (after the communicator's handler). */
static int req_finish(const char *fn, MPI_Request *h, struct vmpi_req *r, MPI_Status *st)
{
    struct vmpi_req *op = r->persistent ? r->inner : r;
    vmpi_req_settle(op);
    vmpi_req_status(st, op);
    int rc = op->kind == VMPI_REQ_RECV   ? p2p_recv_error(fn, op)
             : op->kind == VMPI_REQ_COLL ? coll_error(fn, op)
             : op->kind == VMPI_REQ_RMA  ? rma_error(fn, op)
             : op->kind == VMPI_REQ_GREQ ? vmpi_err_handle(NULL, op->st_error)
                                         : MPI_SUCCESS;
    if (r->persistent) {
        vmpi_req_free(op);
        r->inner = NULL;
        r->active = 0;
    } else {
        vmpi_req_free(r);
        *h = MPI_REQUEST_NULL;
    }
    return rc;
}

static int bad_request(const char *fn, MPI_Request h)
{
    return vmpi_err(NULL, MPI_ERR_REQUEST, "%s: invalid request %#x", fn, (unsigned)h);
}

int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
    VMPI_ENTER("MPI_Wait");
    VMPI_CHECK(request, NULL, MPI_ERR_ARG, "MPI_Wait: request is NULL");
    struct vmpi_req *r;
    int s;
    while ((s = req_state(*request, &r)) == R_PENDING)
        vmpi_progress();
    if (s < 0)
        return bad_request("MPI_Wait", *request);
    if (s == R_NULL) {
        p2p_empty_status(status);
        return MPI_SUCCESS;
    }
    return req_finish("MPI_Wait", request, r, status);
}
VMPI_WEAK(Wait);

int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    VMPI_ENTER("MPI_Test");
    VMPI_CHECK(request && flag, NULL, MPI_ERR_ARG, "MPI_Test: request or flag is NULL");
    struct vmpi_req *r;
    int s = req_state(*request, &r);
    if (s == R_PENDING) {
        vmpi_progress();
        s = req_state(*request, &r);
    }
    if (s < 0)
        return bad_request("MPI_Test", *request);
    *flag = s != R_PENDING;
    if (s == R_NULL)
        p2p_empty_status(status);
    else if (s == R_DONE)
        return req_finish("MPI_Test", request, r, status);
    return MPI_SUCCESS;
}
VMPI_WEAK(Test);

static MPI_Status *status_at(MPI_Status *array, int i)
{
    return array == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &array[i];
}

/* Checks every handle of an array once, so bad input fails before waiting. */
static int check_array(const char *fn, int count, MPI_Request reqs[])
{
    VMPI_CHECK(count >= 0, NULL, MPI_ERR_COUNT, "%s: count %d is negative", fn, count);
    VMPI_CHECK(count == 0 || reqs, NULL, MPI_ERR_ARG, "%s: array_of_requests is NULL", fn);
    for (int i = 0; i < count; i++) {
        struct vmpi_req *r;
        if (req_state(reqs[i], &r) < 0)
            return vmpi_err(NULL, MPI_ERR_REQUEST, "%s: array_of_requests[%d] = %#x is invalid",
                            fn, i, (unsigned)reqs[i]);
    }
    return MPI_SUCCESS;
}

/* Remembers the first failed request's communicator (kept alive past the
 * request's release): its error handler decides what MPI_ERR_IN_STATUS does. */
static void note_error(struct vmpi_req *op, int e, int *err, struct vmpi_comm **ecomm)
{
    if (e == MPI_SUCCESS)
        return;
    *err = e;
    if (!*ecomm && op->comm) {
        *ecomm = op->comm;
        vmpi_comm_retain(op->comm);
    }
}

/* Retires one done request of an array; its error goes to its status. */
static void finish_in_array(const char *fn, MPI_Request *h, struct vmpi_req *r, MPI_Status *st,
                            int *err, struct vmpi_comm **ecomm)
{
    struct vmpi_req *op = r->persistent ? r->inner : r;
    vmpi_req_settle(op);
    int e = op->st_error;
    op->st_error = MPI_SUCCESS;
    note_error(op, e, err, ecomm);
    req_finish(fn, h, r, st);
    if (st != MPI_STATUS_IGNORE)
        st->MPI_ERROR = e;
}

/* Completes every done request of the array into statuses; with all set,
 * only when all are done. Returns completions, or -1 for "not all done". */
static int finish_done(const char *fn, int count, MPI_Request reqs[], MPI_Status statuses[],
                       int *err, struct vmpi_comm **ecomm)
{
    int n = 0;
    *err = MPI_SUCCESS;
    *ecomm = NULL;
    for (int i = 0; i < count; i++) {
        struct vmpi_req *r;
        int s = req_state(reqs[i], &r);
        MPI_Status *st = status_at(statuses, i);
        if (s == R_NULL) {
            p2p_empty_status(st);
            if (st != MPI_STATUS_IGNORE)
                st->MPI_ERROR = MPI_SUCCESS;
            continue;
        }
        finish_in_array(fn, &reqs[i], r, st, err, ecomm);
        n++;
    }
    return n;
}

static bool all_done(int count, MPI_Request reqs[])
{
    for (int i = 0; i < count; i++) {
        struct vmpi_req *r;
        if (req_state(reqs[i], &r) == R_PENDING)
            return false;
    }
    return true;
}

static int multi_error(const char *fn, int err, struct vmpi_comm *ecomm)
{
    if (err == MPI_SUCCESS)
        return MPI_SUCCESS;
    int rc = vmpi_err(ecomm, MPI_ERR_IN_STATUS, "%s: a request failed (%s); see its status",
                      fn, vmpi_err_class(err) == MPI_ERR_TRUNCATE ? "message truncated" : "error");
    if (ecomm)
        vmpi_comm_release(ecomm);
    return rc;
}

int PMPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status *array_of_statuses)
{
    VMPI_ENTER("MPI_Waitall");
    int rc = check_array("MPI_Waitall", count, array_of_requests);
    if (rc != MPI_SUCCESS)
        return rc;
    /* In order: a request found done stays done, so each is looked at until
     * it completes and never again. */
    for (int i = 0; i < count; i++) {
        struct vmpi_req *r;
        while (req_state(array_of_requests[i], &r) == R_PENDING)
            vmpi_progress();
    }
    int err;
    struct vmpi_comm *ecomm;
    finish_done("MPI_Waitall", count, array_of_requests, array_of_statuses, &err, &ecomm);
    return multi_error("MPI_Waitall", err, ecomm);
}
VMPI_WEAK(Waitall);

int PMPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                 MPI_Status *array_of_statuses)
{
    VMPI_ENTER("MPI_Testall");
    VMPI_CHECK(flag, NULL, MPI_ERR_ARG, "MPI_Testall: flag is NULL");
    int rc = check_array("MPI_Testall", count, array_of_requests);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!all_done(count, array_of_requests))
        vmpi_progress();
    *flag = all_done(count, array_of_requests);
    if (!*flag)
        return MPI_SUCCESS;
    int err;
    struct vmpi_comm *ecomm;
    finish_done("MPI_Testall", count, array_of_requests, array_of_statuses, &err, &ecomm);
    return multi_error("MPI_Testall", err, ecomm);
}
VMPI_WEAK(Testall);

/* Index of a done request, MPI_UNDEFINED if all are null/inactive, or -1. */
static int find_any(int count, MPI_Request reqs[])
{
    bool any_active = false;
    for (int i = 0; i < count; i++) {
        struct vmpi_req *r;
        int s = req_state(reqs[i], &r);
        if (s == R_DONE)
            return i;
        if (s == R_PENDING)
            any_active = true;
    }
    return any_active ? -1 : MPI_UNDEFINED;
}

static int any_common(const char *fn, int count, MPI_Request reqs[], int *index, int *flag,
                      MPI_Status *status, bool block)
{
    VMPI_CHECK(index, NULL, MPI_ERR_ARG, "%s: index is NULL", fn);
    int rc = check_array(fn, count, reqs);
    if (rc != MPI_SUCCESS)
        return rc;
    int i = find_any(count, reqs);
    if (i == -1) {
        do
            vmpi_progress();
        while ((i = find_any(count, reqs)) == -1 && block);
    }
    if (flag)
        *flag = i != -1;
    if (i == -1) {
        *index = MPI_UNDEFINED; /* MPI-3.1 3.7.5: Testany with nothing done */
        return MPI_SUCCESS;
    }
    *index = i;
    if (i == MPI_UNDEFINED) {
        p2p_empty_status(status);
        return MPI_SUCCESS;
    }
    struct vmpi_req *r;
    req_state(reqs[i], &r);
    return req_finish(fn, &reqs[i], r, status);
}

int PMPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    VMPI_ENTER("MPI_Waitany");
    return any_common("MPI_Waitany", count, array_of_requests, index, NULL, status, true);
}
VMPI_WEAK(Waitany);

int PMPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
                 MPI_Status *status)
{
    VMPI_ENTER("MPI_Testany");
    VMPI_CHECK(flag, NULL, MPI_ERR_ARG, "MPI_Testany: flag is NULL");
    return any_common("MPI_Testany", count, array_of_requests, index, flag, status, false);
}
VMPI_WEAK(Testany);

static int some_common(const char *fn, int incount, MPI_Request reqs[], int *outcount,
                       int indices[], MPI_Status statuses[], bool block)
{
    VMPI_CHECK(outcount, NULL, MPI_ERR_ARG, "%s: outcount is NULL", fn);
    int rc = check_array(fn, incount, reqs);
    if (rc != MPI_SUCCESS)
        return rc;
    VMPI_CHECK(incount == 0 || indices, NULL, MPI_ERR_ARG, "%s: array_of_indices is NULL", fn);
    int i = find_any(incount, reqs);
    if (i == -1) {
        do
            vmpi_progress();
        while ((i = find_any(incount, reqs)) == -1 && block);
    }
    if (i == MPI_UNDEFINED) {
        *outcount = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    int n = 0, err = MPI_SUCCESS;
    struct vmpi_comm *ecomm = NULL;
    for (i = 0; i < incount; i++) {
        struct vmpi_req *r;
        if (req_state(reqs[i], &r) != R_DONE)
            continue;
        finish_in_array(fn, &reqs[i], r, status_at(statuses, n), &err, &ecomm);
        indices[n++] = i;
    }
    *outcount = n;
    return multi_error(fn, err, ecomm);
}

int PMPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                  int array_of_indices[], MPI_Status *array_of_statuses)
{
    VMPI_ENTER("MPI_Waitsome");
    return some_common("MPI_Waitsome", incount, array_of_requests, outcount, array_of_indices,
                       array_of_statuses, true);
}
VMPI_WEAK(Waitsome);

int PMPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                  int array_of_indices[], MPI_Status *array_of_statuses)
{
    VMPI_ENTER("MPI_Testsome");
    return some_common("MPI_Testsome", incount, array_of_requests, outcount, array_of_indices,
                       array_of_statuses, false);
}
VMPI_WEAK(Testsome);

int PMPI_Request_free(MPI_Request *request)
{
    VMPI_ENTER("MPI_Request_free");
    VMPI_CHECK(request, NULL, MPI_ERR_ARG, "MPI_Request_free: request is NULL");
    struct vmpi_req *r = vmpi_req_from_handle(*request);
    VMPI_CHECK(r, NULL, MPI_ERR_REQUEST, "MPI_Request_free: invalid request %#x",
               (unsigned)*request);
    struct vmpi_req *op = r;
    if (r->persistent) {
        op = r->active ? r->inner : NULL;
        vmpi_req_free(r);
    }
    /* An active operation still runs to completion, then frees itself. */
    if (op) {
        /* A generalized request stays nameable for MPI_Grequest_complete. */
        if (op->kind != VMPI_REQ_GREQ)
            op->handle = MPI_REQUEST_NULL;
        if (op->done)
            vmpi_req_free(op);
        else
            op->user_freed = 1;
    }
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}
VMPI_WEAK(Request_free);

int PMPI_Cancel(MPI_Request *request)
{
    VMPI_ENTER("MPI_Cancel");
    VMPI_CHECK(request, NULL, MPI_ERR_ARG, "MPI_Cancel: request is NULL");
    struct vmpi_req *r = vmpi_req_from_handle(*request);
    VMPI_CHECK(r, NULL, MPI_ERR_REQUEST, "MPI_Cancel: invalid request %#x", (unsigned)*request);
    VMPI_CHECK(r->kind != VMPI_REQ_COLL && r->kind != VMPI_REQ_RMA, r->comm, MPI_ERR_REQUEST,
               "MPI_Cancel: request %#x is a non-blocking collective or one-sided operation, "
               "which MPI does not allow to be cancelled", (unsigned)*request);
    if (r->persistent)
        r = r->active ? r->inner : NULL;
    /* Sends are never cancelled: the cancel "fails", as the standard allows. */
    int rc = r ? vmpi_req_cancel(r) : MPI_SUCCESS;
    return rc == MPI_SUCCESS ? rc : vmpi_err_handle(NULL, rc);
}
VMPI_WEAK(Cancel);

int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    VMPI_ENTER("MPI_Test_cancelled");
    VMPI_CHECK(status && flag, NULL, MPI_ERR_ARG, "MPI_Test_cancelled: status or flag is NULL");
    *flag = status->count_hi_and_cancelled & 1;
    return MPI_SUCCESS;
}
VMPI_WEAK(Test_cancelled);

/* ---- probe ---------------------------------------------------------------------- */

static int probe_common(const char *fn, int source, int tag, MPI_Comm comm, int *flag,
                        MPI_Status *status, bool block)
{
    struct vmpi_comm *c = vmpi_comm_get(comm);
    VMPI_CHECK(c, NULL, MPI_ERR_COMM, "%s: invalid communicator %#x", fn, (unsigned)comm);
    int rc = p2p_check_src(fn, c, source, tag);
    if (rc != MPI_SUCCESS)
        return rc;
    if (source == MPI_PROC_NULL) {
        p2p_empty_status(status);
        if (status != MPI_STATUS_IGNORE)
            status->MPI_SOURCE = MPI_PROC_NULL;
        if (flag)
            *flag = 1;
        return MPI_SUCCESS;
    }
    bool found;
    while (!(found = vmpi_p2p_iprobe(source, tag, c, status)) && block)
        ;
    if (flag)
        *flag = found;
    if (found && status != MPI_STATUS_IGNORE)
        status->count_hi_and_cancelled &= ~1;
    return MPI_SUCCESS;
}

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    VMPI_ENTER("MPI_Probe");
    return probe_common("MPI_Probe", source, tag, comm, NULL, status, true);
}
VMPI_WEAK(Probe);

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    VMPI_ENTER("MPI_Iprobe");
    VMPI_CHECK(flag, NULL, MPI_ERR_ARG, "MPI_Iprobe: flag is NULL");
    return probe_common("MPI_Iprobe", source, tag, comm, flag, status, false);
}
VMPI_WEAK(Iprobe);

/* ---- combined ------------------------------------------------------------------- */

int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                  int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                  int recvtag, MPI_Comm comm, MPI_Status *status)
{
    VMPI_ENTER("MPI_Sendrecv");
    struct vmpi_comm *c;
    struct vmpi_dtype *sdt, *rdt;
    int rc = p2p_check_buf("MPI_Sendrecv", comm, &c, sendbuf, sendcount, sendtype, &sdt);
    if (rc == MPI_SUCCESS)
        rc = p2p_check_dest("MPI_Sendrecv", c, dest, sendtag);
    if (rc == MPI_SUCCESS)
        rc = p2p_check_buf("MPI_Sendrecv", comm, &c, recvbuf, recvcount, recvtype, &rdt);
    if (rc == MPI_SUCCESS)
        rc = p2p_check_src("MPI_Sendrecv", c, source, recvtag);
    if (rc != MPI_SUCCESS)
        return rc;
    struct vmpi_req *rr, *sr;
    vmpi_p2p_irecv(recvbuf, recvcount, rdt, source, recvtag, c, 0, &rr);
    vmpi_p2p_isend(sendbuf, sendcount, sdt, dest, sendtag, c, 0, VMPI_MODE_STD, &sr);
    while (!rr->done || !sr->done)
        vmpi_progress();
    vmpi_req_free(sr);
    vmpi_req_status(status, rr);
    rc = p2p_recv_error("MPI_Sendrecv", rr);
    vmpi_req_free(rr);
    return rc;
}
VMPI_WEAK(Sendrecv);

int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    VMPI_ENTER("MPI_Sendrecv_replace");
    struct vmpi_comm *c;
    struct vmpi_dtype *dt;
    int rc = p2p_check_buf("MPI_Sendrecv_replace", comm, &c, buf, count, datatype, &dt);
    if (rc == MPI_SUCCESS)
        rc = p2p_check_dest("MPI_Sendrecv_replace", c, dest, sendtag);
    if (rc == MPI_SUCCESS)
        rc = p2p_check_src("MPI_Sendrecv_replace", c, source, recvtag);
    if (rc != MPI_SUCCESS)
        return rc;
    /* The outgoing data is packed first so the receive may overwrite buf. */
    size_t len = (size_t)count * (size_t)vmpi_dtype_size(dt);
    void *tmp = malloc(len ? len : 1);
    if (!tmp)
        return vmpi_err(c, MPI_ERR_NO_MEM, "MPI_Sendrecv_replace: cannot allocate %zu bytes",
                        len);
    vmpi_dtype_pack(tmp, buf, count, dt, 0, len);
    struct vmpi_req *rr, *sr;
    vmpi_p2p_irecv(buf, count, dt, source, recvtag, c, 0, &rr);
    vmpi_p2p_isend(tmp, (MPI_Count)len, vmpi_dtype_get(MPI_BYTE), dest, sendtag, c, 0,
                   VMPI_MODE_STD, &sr);
    while (!rr->done || !sr->done)
        vmpi_progress();
    vmpi_req_free(sr);
    free(tmp);
    vmpi_req_status(status, rr);
    rc = p2p_recv_error("MPI_Sendrecv_replace", rr);
    vmpi_req_free(rr);
    return rc;
}
VMPI_WEAK(Sendrecv_replace);

int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    VMPI_ENTER("MPI_Get_count");
    VMPI_CHECK(status && count, NULL, MPI_ERR_ARG, "MPI_Get_count: status or count is NULL");
    struct vmpi_dtype *dt = vmpi_dtype_get(datatype);
    VMPI_CHECK(dt, NULL, MPI_ERR_TYPE, "MPI_Get_count: invalid datatype %#x",
               (unsigned)datatype);
    MPI_Count bytes = vmpi_req_status_count(status), size = vmpi_dtype_size(dt);
    if (size == 0)
        *count = 0;
    else if (bytes % size || bytes / size > 0x7fffffff)
        *count = MPI_UNDEFINED;
    else
        *count = (int)(bytes / size);
    return MPI_SUCCESS;
}
VMPI_WEAK(Get_count);
