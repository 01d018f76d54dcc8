/* Synchronization: fence, post/start/complete/wait, and passive-target
 * locks and flushes.
 *
 * Window locks are reader-writer locks in the target's control block
 * (struct vmpi_win_ctl, rma.h) built on the lock library's ticket locks:
 * a writer takes the ticket lock and keeps it until it unlocks, first
 * waiting for the readers to leave; a reader passes the ticket lock
 * (so it queues behind writers in ticket order), counts itself in and
 * releases the ticket lock at once. Waiting never sleeps in the kernel:
 * across VMs there is no shared futex, and a waiting rank must keep
 * serving the requests other ranks send it, so the lock library calls
 * back into MPI progress wherever it would park. VMPI_RMA_LOCK=spark
 * selects the spin-then-park ticket lock instead of the default
 * opportunistic one, for comparison. */
#include "rma.h"

#include <sched.h>
#include <stdlib.h>

void vmpi_rma_poll(void *arg)
{
    (void)arg;
    vmpi_progress();
}

/* ---- the reader-writer lock ------------------------------------------------------- */

static void tl_acquire(const struct vmpi_win *w, struct vmpi_win_ctl *ctl)
{
    if (w->lock_kind == VMPI_RMA_LOCK_SPARK)
        vmpi_spark_lock_acquire_poll(&ctl->tl, vmpi_rma_poll, NULL);
    else
        vmpi_oticket_lock_acquire_poll(&ctl->tl, vmpi_rma_poll, NULL);
}

static void tl_release(const struct vmpi_win *w, struct vmpi_win_ctl *ctl)
{
    if (w->lock_kind == VMPI_RMA_LOCK_SPARK)
        vmpi_spark_unlock(&ctl->tl);
    else
        vmpi_oticket_unlock(&ctl->tl);
}

static void wait_no_readers(struct vmpi_win_ctl *ctl)
{
    for (unsigned i = 0; atomic_load_explicit(&ctl->readers, memory_order_acquire); i++) {
        vmpi_progress();
        if (i % 16 == 15)
            sched_yield();
    }
}

static void lock_ctl(const struct vmpi_win *w, struct vmpi_win_ctl *ctl, int type)
{
    tl_acquire(w, ctl);
    if (type == MPI_LOCK_EXCLUSIVE) {
        wait_no_readers(ctl);
        return;
    }
    atomic_fetch_add_explicit(&ctl->readers, 1, memory_order_acq_rel);
    tl_release(w, ctl);
}

void vmpi_rma_unlock_ctl(struct vmpi_win *w, struct vmpi_win_ctl *ctl, int type)
{
    if (type == MPI_LOCK_EXCLUSIVE)
        tl_release(w, ctl);
    else
        atomic_fetch_sub_explicit(&ctl->readers, 1, memory_order_release);
}

bool vmpi_rma_try_lock(struct vmpi_win *w, struct vmpi_win_ctl *ctl, int type, bool *holds_tl)
{
    if (!*holds_tl) {
        int got = w->lock_kind == VMPI_RMA_LOCK_SPARK ? vmpi_spark_trylock(&ctl->tl)
                                                      : vmpi_oticket_trylock(&ctl->tl);
        if (!got)
            return false;
        *holds_tl = true;
    }
    if (type == MPI_LOCK_EXCLUSIVE)
        return atomic_load_explicit(&ctl->readers, memory_order_acquire) == 0;
    atomic_fetch_add_explicit(&ctl->readers, 1, memory_order_acq_rel);
    tl_release(w, ctl);
    *holds_tl = false;
    return true;
}

/* ---- epochs ----------------------------------------------------------------------- */

bool vmpi_rma_in_epoch(const struct vmpi_win *w, int t)
{
    return w->lock_all || w->t[t].lock || (w->started && w->t[t].in_start) || w->fence_open;
}

/* The lock kept in win_target.lock: type, and whether it was taken. */
enum { HELD_SHARED = 1, HELD_EXCL = 2, HELD_NOCHECK = 4 };

static int held_type(uint8_t held)
{
    return held & HELD_EXCL ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED;
}

static int report(const char *fn, struct vmpi_win *w, int t, int err)
{
    if (err == MPI_SUCCESS)
        return MPI_SUCCESS;
    if (t >= 0)
        return vmpi_err(w->comm, err, "%s: rank %d refused an operation of this epoch "
                        "(error class %d; a range outside its window or its attached memory?)",
                        fn, t, err);
    return vmpi_err(w->comm, err, "%s: a target refused an operation of this epoch (error "
                    "class %d; a range outside its window or its attached memory?)", fn, err);
}

/* Every operation of this origin to target t has completed there. */
static int complete_at(struct vmpi_win *w, int t)
{
    int err = MPI_SUCCESS;
    if (w->t[t].dirty)
        err = vmpi_rma_am_flush(w, t);
    vmpi_rma_wait_pending(w, t);
    if (!err) {
        err = w->am_err;
        w->am_err = MPI_SUCCESS;
    }
    return err;
}

static int complete_all(struct vmpi_win *w)
{
    int err = MPI_SUCCESS;
    for (int t = 0; t < w->size; t++) {
        int e = w->t[t].dirty ? vmpi_rma_am_flush(w, t) : MPI_SUCCESS;
        if (!err)
            err = e;
    }
    vmpi_rma_wait_pending(w, -1);
    if (!err)
        err = w->am_err;
    w->am_err = MPI_SUCCESS;
    atomic_thread_fence(memory_order_seq_cst);
    return err;
}

int vmpi_rma_fence(const char *fn, struct vmpi_win *w, int assert_)
{
    const int ok = MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED;
    if (assert_ & ~ok)
        return vmpi_err(w->comm, MPI_ERR_ASSERT, "%s: assert %#x has bits other than "
                        "MPI_MODE_NOSTORE, NOPUT, NOPRECEDE and NOSUCCEED", fn,
                        (unsigned)assert_);
    if (w->nlocks || w->lock_all || w->started || w->posted)
        return vmpi_err(w->comm, MPI_ERR_RMA_SYNC,
                        "%s: called inside a %s epoch of this window", fn,
                        w->nlocks || w->lock_all ? "passive-target (lock)"
                                                 : "post/start/complete/wait");
    if ((assert_ & MPI_MODE_NOPRECEDE) && w->fence_ops)
        return vmpi_err(w->comm, MPI_ERR_RMA_SYNC,
                        "%s: MPI_MODE_NOPRECEDE, but this rank issued operations since the "
                        "previous fence", fn);
    int err = complete_all(w);
    int rc = vmpi_coll_barrier(w->comm);
    w->fence_open = !(assert_ & MPI_MODE_NOSUCCEED);
    w->fence_ops = false;
    if (rc != MPI_SUCCESS)
        return rc;
    return report(fn, w, -1, err);
}

/* The window ranks of group g's members, or -1 (and an error) when one is
 * not in the window's group. */
static int group_ranks(const char *fn, struct vmpi_win *w, struct vmpi_group *g, int *out)
{
    for (int i = 0; i < g->size; i++) {
        out[i] = w->rank_of_world[g->world[i]];
        if (out[i] < 0)
            return vmpi_err(w->comm, MPI_ERR_GROUP,
                            "%s: group member %d (world rank %d) is not in the window's group",
                            fn, i, g->world[i]);
    }
    return MPI_SUCCESS;
}

int vmpi_rma_post(const char *fn, struct vmpi_win *w, struct vmpi_group *g, int assert_)
{
    if (assert_ & ~(MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT))
        return vmpi_err(w->comm, MPI_ERR_ASSERT, "%s: assert %#x has bits other than "
                        "MPI_MODE_NOCHECK, NOSTORE and NOPUT", fn, (unsigned)assert_);
    if (w->posted)
        return vmpi_err(w->comm, MPI_ERR_RMA_SYNC,
                        "%s: the window is already exposed by an MPI_Win_post", fn);
    int *ranks = malloc(((size_t)g->size + 1) * sizeof *ranks);
    struct vmpi_req **done = malloc(((size_t)g->size + 1) * sizeof *done);
    if (!ranks || !done) {
        free(ranks);
        free(done);
        return vmpi_err(w->comm, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    int rc = group_ranks(fn, w, g, ranks);
    if (rc != MPI_SUCCESS) {
        free(ranks);
        free(done);
        return rc;
    }
    atomic_thread_fence(memory_order_seq_cst);
    for (int i = 0; i < g->size; i++) {
        vmpi_p2p_irecv(NULL, 0, vmpi_dtype_get(MPI_BYTE), ranks[i], RMA_TAG_DONE, w->comm, 0,
                       &done[i]);
        if (!(assert_ & MPI_MODE_NOCHECK)) {
            struct vmpi_req *r;
            vmpi_p2p_isend(NULL, 0, vmpi_dtype_get(MPI_BYTE), ranks[i], RMA_TAG_POST, w->comm,
                           0, VMPI_MODE_STD, &r);
            vmpi_p2p_wait(r, MPI_STATUS_IGNORE);
        }
    }
    free(ranks);
    w->post_done = done;
    w->npost = g->size;
    w->posted = true;
    return MPI_SUCCESS;
}

int vmpi_rma_start(const char *fn, struct vmpi_win *w, struct vmpi_group *g, int assert_)
{
    if (assert_ & ~MPI_MODE_NOCHECK)
        return vmpi_err(w->comm, MPI_ERR_ASSERT,
                        "%s: assert %#x has bits other than MPI_MODE_NOCHECK", fn,
                        (unsigned)assert_);
    if (w->started)
        return vmpi_err(w->comm, MPI_ERR_RMA_SYNC,
                        "%s: an access epoch of MPI_Win_start is already open", fn);
    int *ranks = malloc(((size_t)g->size + 1) * sizeof *ranks);
    if (!ranks)
        return vmpi_err(w->comm, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    int rc = group_ranks(fn, w, g, ranks);
    for (int i = 0; rc == MPI_SUCCESS && i < g->size; i++) {
        w->t[ranks[i]].in_start = 1;
        if (!(assert_ & MPI_MODE_NOCHECK))
            vmpi_p2p_recv(NULL, 0, vmpi_dtype_get(MPI_BYTE), ranks[i], RMA_TAG_POST, w->comm,
                          0, MPI_STATUS_IGNORE);
    }
    free(ranks);
    if (rc != MPI_SUCCESS) {
        for (int t = 0; t < w->size; t++)
            w->t[t].in_start = 0;
        return rc;
    }
    w->started = true;
    return MPI_SUCCESS;
}

int vmpi_rma_complete(const char *fn, struct vmpi_win *w)
{
    if (!w->started)
        return vmpi_err(w->comm, MPI_ERR_RMA_SYNC, "%s: no MPI_Win_start epoch to complete", fn);
    int err = MPI_SUCCESS;
    for (int t = 0; t < w->size; t++) {
        if (!w->t[t].in_start)
            continue;
        int e = complete_at(w, t);
        if (!err)
            err = e;
    }
    atomic_thread_fence(memory_order_seq_cst);
    for (int t = 0; t < w->size; t++) {
        if (!w->t[t].in_start)
            continue;
        w->t[t].in_start = 0;
        vmpi_p2p_send(NULL, 0, vmpi_dtype_get(MPI_BYTE), t, RMA_TAG_DONE, w->comm, 0);
    }
    w->started = false;
    return report(fn, w, -1, err);
}

int vmpi_rma_wait(const char *fn, struct vmpi_win *w, int *flag)
{
    if (!w->posted)
        return vmpi_err(w->comm, MPI_ERR_RMA_SYNC, "%s: no MPI_Win_post epoch to wait for", fn);
    for (;;) {
        int i = 0;
        while (i < w->npost && w->post_done[i]->done)
            i++;
        if (i == w->npost)
            break;
        vmpi_progress();
        if (flag && w->post_done[i]->done == 0) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    for (int i = 0; i < w->npost; i++)
        vmpi_req_free(w->post_done[i]);
    free(w->post_done);
    w->post_done = NULL;
    w->npost = 0;
    w->posted = false;
    atomic_thread_fence(memory_order_seq_cst);
    if (flag)
        *flag = 1;
    return MPI_SUCCESS;
}

/* ---- passive target --------------------------------------------------------------- */

static int lock_one(struct vmpi_win *w, int t, int type, bool nocheck)
{
    struct win_target *x = &w->t[t];
    x->lock = (uint8_t)((type == MPI_LOCK_EXCLUSIVE ? HELD_EXCL : HELD_SHARED) |
                        (nocheck ? HELD_NOCHECK : 0));
    if (nocheck)
        return MPI_SUCCESS;
    if (x->ctl) {
        lock_ctl(w, x->ctl, type);
        return MPI_SUCCESS;
    }
    return vmpi_rma_am_lock(w, t, type);
}

static int unlock_one(struct vmpi_win *w, int t)
{
    struct win_target *x = &w->t[t];
    uint8_t held = x->lock;
    x->lock = 0;
    int err;
    if (!x->ctl && !(held & HELD_NOCHECK)) {
        /* Writes must have landed before another process may lock. */
        vmpi_rma_wait_net(w, t);
        err = vmpi_rma_am_unlock(w, t, held_type(held));
        vmpi_rma_wait_pending(w, t);
    } else {
        err = complete_at(w, t);
        atomic_thread_fence(memory_order_seq_cst);
        if (!(held & HELD_NOCHECK))
            vmpi_rma_unlock_ctl(w, x->ctl, held_type(held));
    }
    return err;
}

int vmpi_rma_lock(const char *fn, struct vmpi_win *w, int type, int t, int assert_)
{
    if (type != MPI_LOCK_SHARED && type != MPI_LOCK_EXCLUSIVE)
        return vmpi_err(w->comm, MPI_ERR_LOCKTYPE, "%s: lock_type %d is neither "
                        "MPI_LOCK_SHARED nor MPI_LOCK_EXCLUSIVE", fn, type);
    if (assert_ & ~MPI_MODE_NOCHECK)
        return vmpi_err(w->comm, MPI_ERR_ASSERT,
                        "%s: assert %#x has bits other than MPI_MODE_NOCHECK", fn,
                        (unsigned)assert_);
    if (t == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (w->lock_all || w->t[t].lock)
        return vmpi_err(w->comm, MPI_ERR_RMA_SYNC, "%s: rank %d of the window is already "
                        "locked by this process%s", fn, t,
                        w->lock_all ? " (MPI_Win_lock_all)" : "");
    int err = lock_one(w, t, type, assert_ & MPI_MODE_NOCHECK);
    if (err) {
        w->t[t].lock = 0;
        return report(fn, w, t, err);
    }
    w->nlocks++;
    return MPI_SUCCESS;
}

int vmpi_rma_unlock(const char *fn, struct vmpi_win *w, int t)
{
    if (t == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (w->lock_all || !w->t[t].lock)
        return vmpi_err(w->comm, MPI_ERR_RMA_SYNC,
                        "%s: rank %d of the window is not locked by this process%s", fn, t,
                        w->lock_all ? " with MPI_Win_lock (it is, by MPI_Win_lock_all)" : "");
    w->nlocks--;
    return report(fn, w, t, unlock_one(w, t));
}

int vmpi_rma_lock_all(const char *fn, struct vmpi_win *w, int assert_)
{
    if (assert_ & ~MPI_MODE_NOCHECK)
        return vmpi_err(w->comm, MPI_ERR_ASSERT,
                        "%s: assert %#x has bits other than MPI_MODE_NOCHECK", fn,
                        (unsigned)assert_);
    if (w->lock_all || w->nlocks)
        return vmpi_err(w->comm, MPI_ERR_RMA_SYNC, "%s: this process already holds %s", fn,
                        w->lock_all ? "MPI_Win_lock_all" : "locks from MPI_Win_lock");
    int err = MPI_SUCCESS;
    for (int t = 0; t < w->size; t++) {
        int e = lock_one(w, t, MPI_LOCK_SHARED, assert_ & MPI_MODE_NOCHECK);
        if (!err)
            err = e;
    }
    w->lock_all = true;
    return report(fn, w, -1, err);
}

int vmpi_rma_unlock_all(const char *fn, struct vmpi_win *w)
{
    if (!w->lock_all)
        return vmpi_err(w->comm, MPI_ERR_RMA_SYNC,
                        "%s: this process holds no MPI_Win_lock_all on the window", fn);
    int err = MPI_SUCCESS;
    for (int t = 0; t < w->size; t++) {
        int e = unlock_one(w, t);
        if (!err)
            err = e;
    }
    w->lock_all = false;
    return report(fn, w, -1, err);
}

int vmpi_rma_flush(const char *fn, struct vmpi_win *w, int t, bool local)
{
    if (!w->lock_all && (t < 0 ? w->nlocks == 0 : !w->t[t].lock))
        return vmpi_err(w->comm, MPI_ERR_RMA_SYNC,
                        "%s: no passive-target epoch (MPI_Win_lock or MPI_Win_lock_all) is open "
                        "on %s", fn, t < 0 ? "the window" : "that rank");
    if (t >= 0 && !w->t[t].dirty && !w->pend) {
        /* Nothing in flight: only this process's stores to order. */
        atomic_thread_fence(memory_order_seq_cst);
        return MPI_SUCCESS;
    }
    int err = MPI_SUCCESS;
    for (int x = t < 0 ? 0 : t; x < (t < 0 ? w->size : t + 1); x++) {
        if (t < 0 && !w->lock_all && !w->t[x].lock)
            continue;
        int e;
        if (local) {
            vmpi_rma_wait_pending(w, x);
            e = w->am_err;
            w->am_err = MPI_SUCCESS;
        } else {
            e = complete_at(w, x);
        }
        if (!err)
            err = e;
    }
    atomic_thread_fence(memory_order_seq_cst);
    return report(fn, w, t, err);
}
