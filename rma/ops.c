/* Data movement: one Put, Get, Accumulate, Get_accumulate or
 * Compare_and_swap on one target.
 *
 * A direct target's memory is mapped here, so the operation is carried out
 * at once by this process; a net target takes Put and Get of contiguous
 * target data as libfabric writes and reads; an am target (and a net
 * target for everything else) gets a request (am.c) that its process
 * applies with the same function, vmpi_rma_apply.
 *
 * Atomicity of accumulates (MPI-3.1 11.7.1: per basic element, among
 * accumulates with the same basic type): every accumulating operation
 * (Accumulate, Get_accumulate, Fetch_and_op, Compare_and_swap) holds the
 * target's accumulate lock while it combines, whoever carries it out (an
 * origin on the target's node, or the target serving a message). Under
 * the lock a run of elements is combined by the vectorizable reduction
 * kernel in one call: per-element atomic instructions would each cost a
 * full barrier (~8 ns), 50-200x slower than a locked copy at 8 KiB, and a
 * mix of the two is not atomic (a locked read-modify-write loses an atomic
 * update that lands in between). The critical sections are a copy long,
 * and the lock yields to the scheduler while it waits.
 */
#include "rma.h"
#include "../locality/locality.h"
#include "../core/dtype_impl.h"

#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- spans -------------------------------------------------------------------- */

/* Bytes [lo, hi) relative to the target address that the layout touches;
 * false on arithmetic overflow (the layout came from another process). */
static bool layout_span(const struct rma_layout *L, MPI_Aint *lo, MPI_Aint *hi)
{
    MPI_Aint l = 0, h = 0;
    bool any = false;
    for (size_t b = 0; b < L->nblk; b++) {
        const struct vmpi_dblk *k = &L->blk[b];
        MPI_Aint last, a, z;
        if (k->len <= 0 || k->rep <= 0 || __builtin_mul_overflow(k->rep - 1, k->stride, &last) ||
            __builtin_add_overflow(k->off, last, &last))
            return false;
        a = last < k->off ? last : k->off;
        z = last > k->off ? last : k->off;
        if (__builtin_add_overflow(z, k->len, &z))
            return false;
        if (!any || a < l)
            l = a;
        if (!any || z > h)
            h = z;
        any = true;
    }
    if (!any || L->count <= 0) {
        *lo = *hi = 0;
        return true;
    }
    MPI_Aint reach;
    if (__builtin_mul_overflow(L->count - 1, L->extent, &reach))
        return false;
    if (reach < 0 ? __builtin_add_overflow(l, reach, &l) : __builtin_add_overflow(h, reach, &h))
        return false;
    *lo = l;
    *hi = h;
    return true;
}

/* ---- the accumulate lock ------------------------------------------------------------ */

static void acc_lock(struct vmpi_win_ctl *ctl)
{
    unsigned spins = 0;
    uint32_t z = 0;
    while (!atomic_compare_exchange_weak_explicit(&ctl->acc, &z, 1, memory_order_acquire,
                                                  memory_order_relaxed)) {
        z = 0;
        if (++spins % 64 == 0)
            sched_yield();
    }
}

static void acc_unlock(struct vmpi_win_ctl *ctl)
{
    atomic_store_explicit(&ctl->acc, 0, memory_order_release);
}

/* ---- applying an operation at the target ------------------------------------------ */

/* Copies between the runs of L at `at` and a packed buffer: gathers the
 * runs into `to`, or (to NULL) scatters `from` over them. */
static void layout_copy(const struct rma_layout *L, char *at, char *to, const char *from)
{
    for (MPI_Count i = 0; i < L->count; i++)
        for (size_t b = 0; b < L->nblk; b++) {
            const struct vmpi_dblk *k = &L->blk[b];
            for (MPI_Aint r = 0; r < k->rep; r++) {
                char *run = at + i * L->extent + k->off + r * k->stride;
                if (to) {
                    memcpy(to, run, (size_t)k->len);
                    to += k->len;
                } else {
                    memcpy(run, from, (size_t)k->len);
                    from += k->len;
                }
            }
        }
}

/* Accumulate or Get_accumulate on a padded pair (MPI_SHORT_INT,
 * MPI_DOUBLE_INT, ...): value and index are separate runs with padding
 * between them, so no run holds whole pairs for the kernel. Under the lock
 * the target's pairs are gathered into packed form, combined there one
 * whole pair at a time (in the builtin's C layout, which the kernel wants)
 * and scattered back. total is a whole number of pairs. */
static int apply_pairs(char *at, const struct rma_layout *L, size_t total, const char *in,
                       void *out, MPI_Op op, const struct vmpi_dtype *bt,
                       struct vmpi_win_ctl *ctl)
{
    size_t es = L->esize;
    union { max_align_t align; unsigned char b[64]; } a, t;
    if (vmpi_dtype_extent(bt) > (MPI_Aint)sizeof a.b)
        return MPI_ERR_TYPE;
    char *cur = malloc(total);
    if (!cur)
        return MPI_ERR_NO_MEM;
    acc_lock(ctl);
    layout_copy(L, at, cur, NULL);
    if (out)
        memcpy(out, cur, total);
    if (op == MPI_REPLACE) {
        layout_copy(L, at, NULL, in);
    } else if (op != MPI_NO_OP) {
        for (size_t off = 0; off < total; off += es) {
            vmpi_dtype_unpack(a.b, 1, bt, 0, in + off, es);
            vmpi_dtype_unpack(t.b, 1, bt, 0, cur + off, es);
            vmpi_op_apply(op, a.b, t.b, 1, bt);
            vmpi_dtype_pack(cur + off, t.b, 1, bt, 0, es);
        }
        layout_copy(L, at, NULL, cur);
    }
    acc_unlock(ctl);
    free(cur);
    return MPI_SUCCESS;
}

int vmpi_rma_apply(int kind, char *at, const char *lo, const char *hi,
                   const struct rma_layout *L, const void *in, const void *cmp, void *out,
                   MPI_Op op, struct vmpi_win_ctl *ctl)
{
    MPI_Aint a, z;
    if (!layout_span(L, &a, &z))
        return MPI_ERR_RMA_RANGE;
    if (a == z)
        return MPI_SUCCESS;
    if ((uintptr_t)at + (uintptr_t)a < (uintptr_t)lo || a > z ||
        (uintptr_t)at + (uintptr_t)a > (uintptr_t)hi ||
        (uintptr_t)(z - a) > (uintptr_t)hi - ((uintptr_t)at + (uintptr_t)a))
        return MPI_ERR_RMA_RANGE;
    const struct vmpi_dtype *bt = NULL;
    bool accumulates = kind == RMA_ACC || kind == RMA_GACC || kind == RMA_CAS;
    if (accumulates) {
        /* The type and op may come from another process: only predefined
         * ones of the right size are applied, to whole elements. */
        bt = vmpi_dtype_get(L->basic);
        size_t es = L->esize;
        if (!bt || !bt->builtin || !es || (size_t)vmpi_dtype_size(bt) != es)
            return MPI_ERR_TYPE;
        if (kind != RMA_CAS && (vmpi_op_is_user(op) || vmpi_op_check(op, bt) != MPI_SUCCESS))
            return MPI_ERR_OP;
        /* A padded pair builtin is two runs (value, index): its runs hold
         * parts of pairs, only their sum must be whole pairs. */
        bool padded = bt->nblk > 1;
        size_t total = 0;
        for (size_t b = 0; b < L->nblk; b++) {
            size_t n;
            if ((!padded && L->blk[b].len % (MPI_Aint)es) ||
                __builtin_mul_overflow((size_t)L->blk[b].len, (size_t)L->blk[b].rep, &n) ||
                __builtin_add_overflow(total, n, &total))
                return MPI_ERR_TYPE;
        }
        if (padded && (__builtin_mul_overflow(total, (size_t)L->count, &total) || total % es))
            return MPI_ERR_TYPE;
        if (padded && kind != RMA_CAS) /* CAS compares bytes: the runs do */
            return apply_pairs(at, L, total, in, out, op, bt, ctl);
        acc_lock(ctl);
    }
    /* count elements of one dense run (a basic or contiguous type): one
     * run of count times its length, so the kernel sees whole arrays. */
    struct rma_layout dense;
    struct vmpi_dblk one;
    if (L->nblk == 1 && L->blk[0].rep == 1 && L->blk[0].len == L->extent && L->count > 1) {
        one = L->blk[0];
        one.len *= L->count;
        dense = *L;
        dense.count = 1;
        dense.blk = &one;
        L = &dense;
    }
    const char *src = in;
    const char *c = cmp;
    char *dst = out;
    for (MPI_Count i = 0; i < L->count; i++) {
        char *el = at + i * L->extent;
        for (size_t b = 0; b < L->nblk; b++) {
            const struct vmpi_dblk *k = &L->blk[b];
            for (MPI_Aint r = 0; r < k->rep; r++) {
                char *run = el + k->off + r * k->stride;
                size_t len = (size_t)k->len;
                if (kind == RMA_PUT) {
                    memcpy(run, src, len);
                    src += len;
                    continue;
                }
                if (dst) {
                    memcpy(dst, run, len);
                    dst += len;
                }
                if (kind == RMA_CAS) {
                    if (memcmp(run, c, len) == 0)
                        memcpy(run, src, len);
                    c += len;
                } else if (kind != RMA_GET && op == MPI_REPLACE) {
                    memcpy(run, src, len);
                } else if (kind != RMA_GET && op != MPI_NO_OP) {
                    vmpi_op_apply(op, src, run, (MPI_Count)(len / L->esize), bt);
                }
                if (src)
                    src += len;
            }
        }
    }
    if (accumulates)
        acc_unlock(ctl);
    return MPI_SUCCESS;
}

/* ---- the origin's side ---------------------------------------------------------- */

static void layout_of(struct rma_layout *L, MPI_Count count, const struct vmpi_dtype *dt)
{
    L->count = count;
    L->extent = vmpi_dtype_extent(dt);
    L->nblk = dt->nblk;
    L->blk = dt->blk;
    L->basic = dt->basic;
    const struct vmpi_dtype *bt = dt->basic ? vmpi_dtype_get(dt->basic) : NULL;
    L->esize = bt ? (size_t)vmpi_dtype_size(bt) : 0;
}

/* Origin data as one packed block: the buffer itself when contiguous. */
static const void *packed_in(const void *buf, MPI_Count count, const struct vmpi_dtype *dt,
                             size_t bytes, void **tmp)
{
    *tmp = NULL;
    if (!bytes || !buf)
        return buf;
    if (vmpi_dtype_is_contig(dt))
        return (const char *)buf + vmpi_dtype_true_lb(dt);
    if (!(*tmp = malloc(bytes)))
        return NULL;
    vmpi_dtype_pack(*tmp, buf, count, dt, 0, bytes);
    return *tmp;
}

static struct vmpi_req *done_req(struct vmpi_win *w, int err)
{
    struct vmpi_req *r = vmpi_req_alloc(VMPI_REQ_RMA);
    r->comm = w->comm;
    vmpi_comm_retain(r->comm);
    r->st_error = err;
    r->done = 1;
    return r;
}

static int direct_op(const char *fn, struct vmpi_win *w, const struct rma_op *o,
                     const struct win_target *t, char *at, size_t tbytes)
{
    struct rma_layout L;
    layout_of(&L, o->tcount, o->tdt);
    if (o->kind == RMA_PUT && vmpi_dtype_is_contig(o->odt) && vmpi_dtype_is_contig(o->tdt)) {
        vmpi_copy(at + vmpi_dtype_true_lb(o->tdt),
                  (const char *)o->oaddr + vmpi_dtype_true_lb(o->odt), tbytes);
        return MPI_SUCCESS;
    }
    if (o->kind == RMA_GET && vmpi_dtype_is_contig(o->odt) && vmpi_dtype_is_contig(o->tdt)) {
        vmpi_copy((char *)o->raddr + vmpi_dtype_true_lb(o->odt),
                  at + vmpi_dtype_true_lb(o->tdt), tbytes);
        return MPI_SUCCESS;
    }
    void *itmp = NULL, *otmp = NULL;
    const void *in = NULL, *cmp = NULL;
    bool wants_in = o->kind != RMA_GET && !(o->kind == RMA_GACC && o->op == MPI_NO_OP);
    if (wants_in && !(in = packed_in(o->oaddr, o->ocount, o->odt, tbytes, &itmp)) && tbytes)
        return vmpi_err(w->comm, MPI_ERR_NO_MEM, "%s: out of memory packing %zu bytes", fn,
                        tbytes);
    if (o->kind == RMA_CAS)
        cmp = o->compare;
    bool wants_out = o->kind == RMA_GET || o->kind == RMA_GACC || o->kind == RMA_CAS;
    void *out = NULL;
    struct vmpi_dtype *rdt = o->kind == RMA_GET ? o->odt : o->rdt;
    MPI_Count rcount = o->kind == RMA_GET ? o->ocount : o->rcount;
    if (wants_out && tbytes) {
        if (vmpi_dtype_is_contig(rdt)) {
            out = (char *)o->raddr + vmpi_dtype_true_lb(rdt);
        } else if (!(out = otmp = malloc(tbytes))) {
            free(itmp);
            return vmpi_err(w->comm, MPI_ERR_NO_MEM, "%s: out of memory for %zu bytes", fn,
                            tbytes);
        }
    }
    int rc = vmpi_rma_apply(o->kind, at, t->base, t->base + t->size, &L, in, cmp, out, o->op,
                            t->ctl);
    if (rc == MPI_SUCCESS && otmp)
        vmpi_dtype_unpack(o->raddr, rcount, rdt, 0, otmp, tbytes);
    free(itmp);
    free(otmp);
    if (rc == MPI_ERR_RMA_RANGE)
        return vmpi_err(w->comm, rc, "%s: the target layout leaves rank %d's window", fn,
                        o->target);
    if (rc == MPI_ERR_NO_MEM)
        return vmpi_err(w->comm, rc, "%s: out of memory combining at rank %d", fn, o->target);
    if (rc != MPI_SUCCESS)
        return vmpi_err(w->comm, rc, "%s: the op or target type cannot be applied at rank %d",
                        fn, o->target);
    return MPI_SUCCESS;
}

/* Put or Get of contiguous target data by a libfabric write or read. A
 * non-contiguous Put origin is packed first; the copy lives until the
 * write has completed. */
static int net_op(const char *fn, struct vmpi_win *w, const struct rma_op *o, MPI_Aint off,
                  size_t tbytes, struct vmpi_req **user)
{
    struct win_target *t = &w->t[o->target];
    void *tmp = NULL;
    char *buf;
    if (o->kind == RMA_GET || vmpi_dtype_is_contig(o->odt)) {
        const void *b = o->kind == RMA_GET ? o->raddr : o->oaddr;
        buf = (char *)b + vmpi_dtype_true_lb(o->odt);
    } else {
        if (!(buf = tmp = malloc(tbytes)))
            return vmpi_err(w->comm, MPI_ERR_NO_MEM, "%s: out of memory packing %zu bytes", fn,
                            tbytes);
        vmpi_dtype_pack(tmp, o->oaddr, o->ocount, o->odt, 0, tbytes);
    }
    struct vmpi_req *r = vmpi_req_alloc(VMPI_REQ_RMA), *u = NULL;
    if (user) {
        u = vmpi_req_alloc(VMPI_REQ_RMA);
        u->comm = w->comm;
        vmpi_comm_retain(u->comm);
        *user = u;
    }
    vmpi_rma_pend_net(w, r, u, tmp, o->target);
    uint64_t at = (uint64_t)(off + vmpi_dtype_true_lb(o->tdt));
    if (o->kind == RMA_PUT)
        vmpi_locality_rdma_put(t->world, buf, tbytes, &t->net_key, at, &r->x);
    else
        vmpi_locality_rdma_get(t->world, buf, tbytes, &t->net_key, at, &r->x);
    return MPI_SUCCESS;
}

/* The request message of an am operation: header, the target type's runs,
 * then the packed origin data (CAS: compare value, then origin value). */
static int am_op(const char *fn, struct vmpi_win *w, const struct rma_op *o, size_t tbytes,
                 MPI_Aint off, struct vmpi_req *user)
{
    const struct vmpi_dtype *tdt = o->tdt;
    if (tdt->nblk > RMA_AM_MAX_RUNS)
        return vmpi_err(w->comm, MPI_ERR_TYPE,
                        "%s: the target datatype has %zu runs; a rank reached by messages "
                        "takes at most %d", fn, tdt->nblk, RMA_AM_MAX_RUNS);
    bool wants_in = o->kind != RMA_GET && !(o->kind == RMA_GACC && o->op == MPI_NO_OP);
    size_t dlen = wants_in ? tbytes * (o->kind == RMA_CAS ? 2 : 1) : 0;
    size_t runs = tdt->nblk * sizeof(struct rma_am_run);
    size_t len = sizeof(struct rma_am_hdr) + runs + dlen;
    char *msg = malloc(len);
    if (!msg)
        return vmpi_err(w->comm, MPI_ERR_NO_MEM, "%s: out of memory for a %zu-byte request",
                        fn, len);
    struct rma_am_hdr *h = (struct rma_am_hdr *)msg;
    memset(h, 0, sizeof *h);
    h->kind = (uint32_t)o->kind;
    h->op = o->op;
    h->basic = tdt->basic;
    const struct vmpi_dtype *bt = tdt->basic ? vmpi_dtype_get(tdt->basic) : NULL;
    h->esize = bt ? (uint64_t)vmpi_dtype_size(bt) : 0;
    h->disp = off;
    h->count = o->tcount;
    h->extent = vmpi_dtype_extent(tdt);
    h->nblk = tdt->nblk;
    h->dlen = dlen;
    h->rlen = o->kind == RMA_PUT || o->kind == RMA_ACC ? 0 : tbytes;
    struct rma_am_run *run = (struct rma_am_run *)(msg + sizeof *h);
    for (size_t b = 0; b < tdt->nblk; b++)
        run[b] = (struct rma_am_run){tdt->blk[b].off, tdt->blk[b].len, tdt->blk[b].rep,
                                     tdt->blk[b].stride};
    char *data = msg + sizeof *h + runs;
    if (o->kind == RMA_CAS) {
        memcpy(data, o->compare, tbytes);
        memcpy(data + tbytes, o->oaddr, tbytes);
    } else if (wants_in) {
        vmpi_dtype_pack(data, o->oaddr, o->ocount, o->odt, 0, tbytes);
    }
    void *rbuf = NULL;
    MPI_Count rcount = 0;
    struct vmpi_dtype *rdt = NULL;
    if (o->kind == RMA_GET) {
        rbuf = o->raddr, rcount = o->ocount, rdt = o->odt;
    } else if (o->kind == RMA_GACC || o->kind == RMA_CAS) {
        rbuf = o->raddr, rcount = o->rcount, rdt = o->rdt;
    }
    return vmpi_rma_am_send(w, o->target, msg, len, h->rlen ? rbuf : NULL, rcount, rdt, user);
}

int vmpi_rma_op(const char *fn, struct vmpi_win *w, const struct rma_op *o,
                struct vmpi_req **user)
{
    struct win_target *t = &w->t[o->target];
    size_t tbytes = (size_t)(o->tcount * vmpi_dtype_size(o->tdt));
    MPI_Aint off;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        off = o->disp;
    else if (__builtin_mul_overflow(o->disp, (MPI_Aint)t->disp_unit, &off))
        return vmpi_err(w->comm, MPI_ERR_RMA_RANGE,
                        "%s: target_disp %ld times disp_unit %d overflows", fn, (long)o->disp,
                        t->disp_unit);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC && tbytes) {
        MPI_Aint a, z;
        bool spanned = true;
        if (vmpi_dtype_is_contig(o->tdt)) {
            a = vmpi_dtype_true_lb(o->tdt);
            z = a + (MPI_Aint)tbytes;
        } else {
            struct rma_layout L;
            layout_of(&L, o->tcount, o->tdt);
            spanned = layout_span(&L, &a, &z);
        }
        if (!spanned || off < 0 || a < -off || z > (MPI_Aint)t->size - off)
            return vmpi_err(w->comm, MPI_ERR_RMA_RANGE,
                            "%s: target_disp %ld with %ld elements of the target datatype "
                            "reaches bytes [%ld, %ld) of rank %d's window, which has %llu",
                            fn, (long)o->disp, (long)o->tcount, (long)(off + a),
                            (long)(off + z), o->target, (unsigned long long)t->size);
    }
    if (!w->lock_all && !t->lock && !(w->started && t->in_start))
        w->fence_ops = true;
    if (!tbytes) {
        if (user)
            *user = done_req(w, MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    if (t->base) {
        int rc = direct_op(fn, w, o, t, t->base + off, tbytes);
        if (user)
            *user = done_req(w, rc);
        return rc;
    }
    if (t->net && (o->kind == RMA_PUT || o->kind == RMA_GET) && vmpi_dtype_is_contig(o->tdt) &&
        (o->kind == RMA_PUT || vmpi_dtype_is_contig(o->odt)))
        return net_op(fn, w, o, off, tbytes, user);
    struct vmpi_req *u = NULL;
    bool replies = o->kind != RMA_PUT && o->kind != RMA_ACC;
    if (user) {
        u = replies ? vmpi_req_alloc(VMPI_REQ_RMA) : done_req(w, MPI_SUCCESS);
        if (replies) {
            u->comm = w->comm;
            vmpi_comm_retain(u->comm);
        }
    }
    int rc = am_op(fn, w, o, tbytes, off, replies ? u : NULL);
    if (rc != MPI_SUCCESS) {
        if (u)
            vmpi_req_free(u);
        return rc;
    }
    if (user)
        *user = u;
    return MPI_SUCCESS;
}
