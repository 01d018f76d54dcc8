/* MPI_Put, MPI_Get, the accumulates and their request-based forms (rma/). */
#include "api.h"
#include "../core/dtype_impl.h"
#include "../rma/rma.h"

#define WIN_ARG(w, h, fn)                                                                 \
    struct vmpi_win *w = vmpi_win_get(h);                                                 \
    VMPI_CHECK(w, NULL, MPI_ERR_WIN, "%s: win is not a valid window (0x%x)", fn, (unsigned)(h))

/* A datatype argument: valid and committed. */
static int type_arg(const char *fn, struct vmpi_win *w, MPI_Datatype h, const char *name,
                    struct vmpi_dtype **out)
{
    struct vmpi_dtype *dt = vmpi_dtype_lookup(h);
    VMPI_CHECK(dt, w->comm, MPI_ERR_TYPE, "%s: %s is not a valid datatype (0x%x)", fn, name,
               (unsigned)h);
    VMPI_CHECK(vmpi_dtype_committed(dt), w->comm, MPI_ERR_TYPE,
               "%s: %s is not committed", fn, name);
    *out = dt;
    return MPI_SUCCESS;
}

static int count_arg(const char *fn, struct vmpi_win *w, int count, const char *name)
{
    VMPI_CHECK(count >= 0, w->comm, MPI_ERR_COUNT, "%s: %s = %d is negative", fn, name, count);
    return MPI_SUCCESS;
}

/* The arguments every operation shares, then the call. `user` is set for
 * the request-based forms, which MPI allows only in passive-target epochs. */
static int run(const char *fn, struct vmpi_win *w, struct rma_op *o, MPI_Request *request)
{
    if (request)
        VMPI_CHECK(request, w->comm, MPI_ERR_ARG, "%s: request is NULL", fn);
    VMPI_CHECK(o->target == MPI_PROC_NULL || (o->target >= 0 && o->target < w->size), w->comm,
               MPI_ERR_RANK, "%s: target_rank %d is not in the window's group of %d", fn,
               o->target, w->size);
    if (o->target == MPI_PROC_NULL) {
        if (request) {
            struct vmpi_req *r = vmpi_req_alloc(VMPI_REQ_RMA);
            r->done = 1;
            *request = vmpi_req_handle(r);
        }
        return MPI_SUCCESS;
    }
    VMPI_CHECK(vmpi_rma_in_epoch(w, o->target), w->comm, MPI_ERR_RMA_SYNC,
               "%s: no access epoch of this process covers rank %d of the window (open one "
               "with MPI_Win_fence, MPI_Win_start or MPI_Win_lock(_all))", fn, o->target);
    if (request)
        VMPI_CHECK(w->lock_all || w->t[o->target].lock, w->comm, MPI_ERR_RMA_SYNC,
                   "%s: request-based operations need a passive-target epoch "
                   "(MPI_Win_lock or MPI_Win_lock_all)", fn);
    VMPI_CHECK(o->disp >= 0, w->comm, MPI_ERR_RMA_RANGE, "%s: target_disp %ld is negative", fn,
               (long)o->disp);
    MPI_Count tbytes = o->tcount * vmpi_dtype_size(o->tdt);
    bool takes_origin = o->kind != RMA_GET && !(o->kind == RMA_GACC && o->op == MPI_NO_OP);
    if (o->odt && (takes_origin || o->kind == RMA_GET))
        VMPI_CHECK(o->ocount * vmpi_dtype_size(o->odt) == tbytes, w->comm, MPI_ERR_TYPE,
                   "%s: the origin data has %ld bytes, the target data %ld", fn,
                   (long)(o->ocount * vmpi_dtype_size(o->odt)), (long)tbytes);
    if (o->rdt)
        VMPI_CHECK(o->rcount * vmpi_dtype_size(o->rdt) == tbytes, w->comm, MPI_ERR_TYPE,
                   "%s: the result buffer has %ld bytes, the target data %ld", fn,
                   (long)(o->rcount * vmpi_dtype_size(o->rdt)), (long)tbytes);
    struct vmpi_req *r = NULL;
    int rc = vmpi_rma_op(fn, w, o, request ? &r : NULL);
    if (rc == MPI_SUCCESS && request)
        *request = vmpi_req_handle(r);
    return rc;
}

/* Accumulates: a predefined op valid for the target's one basic type, and
 * origin data of the same basic type. */
static int acc_args(const char *fn, struct vmpi_win *w, const struct rma_op *o)
{
    VMPI_CHECK(!vmpi_op_is_user(o->op), w->comm, MPI_ERR_OP,
               "%s: user-defined operations are not allowed in one-sided accumulates", fn);
    VMPI_CHECK(o->tdt->basic != MPI_DATATYPE_NULL, w->comm, MPI_ERR_TYPE,
               "%s: the target datatype mixes basic types", fn);
    if (o->op != MPI_NO_OP && o->odt && o->ocount && o->tcount)
        VMPI_CHECK(o->odt->basic == o->tdt->basic, w->comm, MPI_ERR_TYPE,
                   "%s: origin and target datatypes are made of different basic types", fn);
    /* no data, no reduction: like MPICH, a zero count takes any op (mpi4py
     * probes for MPI_Get_accumulate with a zero-count MPI_SUM on MPI_BYTE) */
    VMPI_CHECK(!o->tcount || vmpi_op_check(o->op, o->tdt) == MPI_SUCCESS, w->comm, MPI_ERR_OP,
               "%s: op 0x%x is not a predefined operation defined for the target datatype", fn,
               (unsigned)o->op);
    return MPI_SUCCESS;
}

static int put_get(const char *fn, int kind, const void *oaddr, int ocount, MPI_Datatype odt,
                   int target, MPI_Aint disp, int tcount, MPI_Datatype tdt, MPI_Win win,
                   MPI_Request *request)
{
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    struct rma_op o = {.kind = kind, .oaddr = oaddr, .ocount = ocount, .target = target,
                       .disp = disp, .tcount = tcount};
    TRY(count_arg(fn, w, ocount, "origin_count"));
    TRY(count_arg(fn, w, tcount, "target_count"));
    TRY(type_arg(fn, w, odt, "origin_datatype", &o.odt));
    TRY(type_arg(fn, w, tdt, "target_datatype", &o.tdt));
    if (kind == RMA_GET)
        o.raddr = (void *)oaddr;
    return run(fn, w, &o, request);
}

int PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count,
             MPI_Datatype target_datatype, MPI_Win win)
{
    return put_get("MPI_Put", RMA_PUT, origin_addr, origin_count, origin_datatype, target_rank,
                   target_disp, target_count, target_datatype, win, NULL);
}
VMPI_WEAK(Put);

int PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count,
             MPI_Datatype target_datatype, MPI_Win win)
{
    return put_get("MPI_Get", RMA_GET, origin_addr, origin_count, origin_datatype, target_rank,
                   target_disp, target_count, target_datatype, win, NULL);
}
VMPI_WEAK(Get);

int PMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count,
              MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    return put_get("MPI_Rput", RMA_PUT, origin_addr, origin_count, origin_datatype, target_rank,
                   target_disp, target_count, target_datatype, win, request);
}
VMPI_WEAK(Rput);

int PMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count,
              MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    return put_get("MPI_Rget", RMA_GET, origin_addr, origin_count, origin_datatype, target_rank,
                   target_disp, target_count, target_datatype, win, request);
}
VMPI_WEAK(Rget);

static int accumulate(const char *fn, const void *oaddr, int ocount, MPI_Datatype odt,
                      void *raddr, int rcount, MPI_Datatype rdt, int target, MPI_Aint disp,
                      int tcount, MPI_Datatype tdt, MPI_Op op, MPI_Win win, bool fetch,
                      MPI_Request *request)
{
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    struct rma_op o = {.kind = fetch ? RMA_GACC : RMA_ACC, .oaddr = oaddr, .ocount = ocount,
                       .raddr = raddr, .rcount = rcount, .target = target, .disp = disp,
                       .tcount = tcount, .op = op};
    TRY(count_arg(fn, w, tcount, "target_count"));
    TRY(type_arg(fn, w, tdt, "target_datatype", &o.tdt));
    if (!fetch || op != MPI_NO_OP) {
        TRY(count_arg(fn, w, ocount, "origin_count"));
        TRY(type_arg(fn, w, odt, "origin_datatype", &o.odt));
    }
    if (fetch) {
        TRY(count_arg(fn, w, rcount, "result_count"));
        TRY(type_arg(fn, w, rdt, "result_datatype", &o.rdt));
    } else {
        VMPI_CHECK(op != MPI_NO_OP, w->comm, MPI_ERR_OP,
                   "%s: MPI_NO_OP is only for MPI_Get_accumulate and MPI_Fetch_and_op", fn);
    }
    TRY(acc_args(fn, w, &o));
    return run(fn, w, &o, request);
}

int PMPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return accumulate("MPI_Accumulate", origin_addr, origin_count, origin_datatype, NULL, 0,
                      MPI_DATATYPE_NULL, target_rank, target_disp, target_count,
                      target_datatype, op, win, false, NULL);
}
VMPI_WEAK(Accumulate);

int PMPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                     MPI_Request *request)
{
    return accumulate("MPI_Raccumulate", origin_addr, origin_count, origin_datatype, NULL, 0,
                      MPI_DATATYPE_NULL, target_rank, target_disp, target_count,
                      target_datatype, op, win, false, request);
}
VMPI_WEAK(Raccumulate);

int PMPI_Get_accumulate(const void *origin_addr, int origin_count,
                        MPI_Datatype origin_datatype, void *result_addr, int result_count,
                        MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return accumulate("MPI_Get_accumulate", origin_addr, origin_count, origin_datatype,
                      result_addr, result_count, result_datatype, target_rank, target_disp,
                      target_count, target_datatype, op, win, true, NULL);
}
VMPI_WEAK(Get_accumulate);

int PMPI_Rget_accumulate(const void *origin_addr, int origin_count,
                         MPI_Datatype origin_datatype, void *result_addr, int result_count,
                         MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                         int target_count, MPI_Datatype target_datatype, MPI_Op op,
                         MPI_Win win, MPI_Request *request)
{
    return accumulate("MPI_Rget_accumulate", origin_addr, origin_count, origin_datatype,
                      result_addr, result_count, result_datatype, target_rank, target_disp,
                      target_count, target_datatype, op, win, true, request);
}
VMPI_WEAK(Rget_accumulate);

int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    static const char fn[] = "MPI_Fetch_and_op";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    struct vmpi_dtype *dt = vmpi_dtype_lookup(datatype);
    VMPI_CHECK(dt && dt->builtin, w->comm, MPI_ERR_TYPE,
               "%s: datatype (0x%x) is not a predefined datatype", fn, (unsigned)datatype);
    return accumulate(fn, origin_addr, 1, datatype, result_addr, 1, datatype, target_rank,
                      target_disp, 1, datatype, op, win, true, NULL);
}
VMPI_WEAK(Fetch_and_op);

int PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                          MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Win win)
{
    static const char fn[] = "MPI_Compare_and_swap";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    struct vmpi_dtype *dt = vmpi_dtype_lookup(datatype);
    /* C integer, Fortran integer, logical and byte types (MPI-3.1 11.3.6):
     * those MPI_BAND or MPI_LAND is defined for. */
    VMPI_CHECK(dt && dt->builtin &&
                   (vmpi_op_check(MPI_BAND, dt) == MPI_SUCCESS ||
                    vmpi_op_check(MPI_LAND, dt) == MPI_SUCCESS),
               w->comm, MPI_ERR_TYPE,
               "%s: datatype (0x%x) is not a predefined integer, logical or byte type", fn,
               (unsigned)datatype);
    VMPI_CHECK(origin_addr && compare_addr && result_addr, w->comm, MPI_ERR_BUFFER,
               "%s: origin_addr, compare_addr and result_addr must not be NULL", fn);
    struct rma_op o = {.kind = RMA_CAS, .oaddr = origin_addr, .ocount = 1, .odt = dt,
                       .raddr = result_addr, .rcount = 1, .rdt = dt, .compare = compare_addr,
                       .target = target_rank, .disp = target_disp, .tcount = 1, .tdt = dt};
    return run(fn, w, &o, NULL);
}
VMPI_WEAK(Compare_and_swap);
