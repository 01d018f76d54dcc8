/* Non-blocking collectives on intercommunicators (coll/inter.h).
 *
 * Each side runs a schedule on its private local communicator (c->local:
 * its steps address local ranks), and the messages between the sides go on
 * the intercommunicator (coll_sched_via: remote ranks). comm/idup.c builds
 * its schedules the same way, so every non-blocking operation of an
 * intercommunicator takes its tags from one counter, that of c->local,
 * whose own collectives nobody else calls. The request belongs to c, so
 * errors reach c's handler.
 *   ibarrier        local fan-in to the leader, leaders swap, fan-out
 *   ibcast          root -> remote leader, then a local binomial bcast
 *   ireduce         local binomial reduce at the leader, leader -> root
 *   iallreduce      local reduces, leaders swap, local bcasts
 *   ireduce_scatter local reduces, leaders swap, the leader sends the blocks
 *   the rest        directly between the processes concerned, one round
 * Message steps: 0 between the sides, from 1 within a side. */
#include "../core/dtype_impl.h" /* vmpi_dtype_addr */
#include "coll_impl.h"
#include "inter.h"

static char none; /* the address of empty messages */

static struct coll_sched *sched_new(struct vmpi_comm *c, MPI_Op op, const char *fn, int *rc)
{
    struct coll_sched *s = coll_sched_new(c->local, op);
    *rc = s ? MPI_SUCCESS : vmpi_err(c, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    return s;
}

/* To (send) or from remote rank peer, on the intercommunicator. */
static void remote(struct coll_sched *s, struct vmpi_comm *c, bool send, const void *buf,
                   MPI_Count count, struct vmpi_dtype *dt, int peer)
{
    coll_sched_via(s, c, send, (void *)buf, count, dt, peer, 0);
}

int vmpi_inter_ibarrier(struct vmpi_comm *c, struct vmpi_req **out)
{
    static const char fn[] = "MPI_Ibarrier";
    int rc;
    struct coll_sched *s = sched_new(c, MPI_OP_NULL, fn, &rc);
    if (!s)
        return rc;
    struct vmpi_dtype *bt = coll_byte_type();
    if (c->rank == 0) {
        for (int i = 1; i < c->size; i++)
            coll_sched_recv(s, &none, 0, bt, i, 1);
        coll_sched_round(s);
        remote(s, c, true, &none, 0, bt, 0);
        remote(s, c, false, &none, 0, bt, 0);
        coll_sched_round(s);
        for (int i = 1; i < c->size; i++)
            coll_sched_send(s, &none, 0, bt, i, 2);
    } else {
        coll_sched_send(s, &none, 0, bt, 0, 1);
        coll_sched_round(s);
        coll_sched_recv(s, &none, 0, bt, 0, 2);
    }
    return coll_sched_launch_for(s, c, fn, out);
}

int vmpi_inter_ibcast(void *buf, MPI_Count count, struct vmpi_dtype *dt, int root,
                      struct vmpi_comm *c, struct vmpi_req **out)
{
    static const char fn[] = "MPI_Ibcast";
    int rc;
    struct coll_sched *s = sched_new(c, MPI_OP_NULL, fn, &rc);
    if (!s)
        return rc;
    if (root == MPI_ROOT) {
        coll_sched_hold(s, dt);
        remote(s, c, true, buf, count, dt, 0);
    } else if (root != MPI_PROC_NULL) {
        coll_sched_hold(s, dt);
        if (c->rank == 0) {
            remote(s, c, false, buf, count, dt, root);
            coll_sched_round(s);
        }
        coll_sched_bcast(s, buf, count, dt, 0, 1);
    }
    return coll_sched_launch_for(s, c, fn, out);
}

/* The root's side of gather (recv) and scatter: one message per remote
 * process, at displs[i] elements of dt (displs NULL: i * count). */
static void root_each(struct coll_sched *s, struct vmpi_comm *c, bool recv, const void *buf,
                      MPI_Count count, const int *counts, const int *displs,
                      struct vmpi_dtype *dt)
{
    MPI_Aint ext = vmpi_dtype_extent(dt);
    coll_sched_hold(s, dt);
    for (int i = 0; i < c->peers->size; i++) {
        MPI_Aint at = (displs ? displs[i] : i * count) * ext;
        remote(s, c, !recv, vmpi_dtype_addr(buf, at), counts ? counts[i] : count, dt, i);
    }
}

int vmpi_inter_igather(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                       MPI_Count rcount, const int *rcounts, const int *displs,
                       struct vmpi_dtype *rdt, int root, struct vmpi_comm *c,
                       struct vmpi_req **out)
{
    const char *fn = rcounts ? "MPI_Igatherv" : "MPI_Igather";
    int rc;
    struct coll_sched *s = sched_new(c, MPI_OP_NULL, fn, &rc);
    if (!s)
        return rc;
    if (root == MPI_ROOT) {
        root_each(s, c, true, rbuf, rcount, rcounts, displs, rdt);
    } else if (root != MPI_PROC_NULL) {
        coll_sched_hold(s, sdt);
        remote(s, c, true, sbuf, scount, sdt, root);
    }
    return coll_sched_launch_for(s, c, fn, out);
}

int vmpi_inter_iscatter(const void *sbuf, MPI_Count scount, const int *scounts,
                        const int *displs, struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                        struct vmpi_dtype *rdt, int root, struct vmpi_comm *c,
                        struct vmpi_req **out)
{
    const char *fn = scounts ? "MPI_Iscatterv" : "MPI_Iscatter";
    int rc;
    struct coll_sched *s = sched_new(c, MPI_OP_NULL, fn, &rc);
    if (!s)
        return rc;
    if (root == MPI_ROOT) {
        root_each(s, c, false, sbuf, scount, scounts, displs, sdt);
    } else if (root != MPI_PROC_NULL) {
        coll_sched_hold(s, rdt);
        remote(s, c, false, rbuf, rcount, rdt, root);
    }
    return coll_sched_launch_for(s, c, fn, out);
}

int vmpi_inter_iexchange(const char *fn, const void *sbuf, const int *scounts,
                         const MPI_Aint *sdispls, struct vmpi_dtype *const *sdts, void *rbuf,
                         const int *rcounts, const MPI_Aint *rdispls,
                         struct vmpi_dtype *const *rdts, struct vmpi_comm *c,
                         struct vmpi_req **out)
{
    int rc;
    struct coll_sched *s = sched_new(c, MPI_OP_NULL, fn, &rc);
    if (!s)
        return rc;
    for (int i = 0; i < c->peers->size; i++) {
        coll_sched_hold(s, rdts[i]);
        coll_sched_hold(s, sdts[i]);
        remote(s, c, false, vmpi_dtype_addr(rbuf, rdispls[i]), rcounts[i], rdts[i], i);
        remote(s, c, true, vmpi_dtype_addr(sbuf, sdispls[i]), scounts[i], sdts[i], i);
    }
    return coll_sched_launch_for(s, c, fn, out);
}

/* This side's reduction of sbuf into a scratch buffer at its leader
 * (returned there; NULL elsewhere), message steps 1 and 2. */
static void *local_reduce(struct coll_sched *s, const void *sbuf, MPI_Count count,
                          struct vmpi_dtype *dt, struct vmpi_comm *c)
{
    void *mine = c->rank == 0 ? coll_sched_tmp(s, count, dt) : NULL;
    if (!coll_sched_oom(s))
        coll_sched_reduce_tree(s, sbuf, mine, count, dt, 0, 1);
    return mine;
}

int vmpi_inter_ireduce(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                       MPI_Op op, int root, struct vmpi_comm *c, struct vmpi_req **out)
{
    static const char fn[] = "MPI_Ireduce";
    int rc;
    struct coll_sched *s = sched_new(c, op, fn, &rc);
    if (!s)
        return rc;
    if (root != MPI_PROC_NULL)
        coll_sched_hold(s, dt);
    if (root == MPI_ROOT) {
        remote(s, c, false, rbuf, count, dt, 0);
    } else if (root != MPI_PROC_NULL && count > 0) {
        void *mine = local_reduce(s, sbuf, count, dt, c);
        if (c->rank == 0 && !coll_sched_oom(s))
            remote(s, c, true, mine, count, dt, root);
    }
    return coll_sched_launch_for(s, c, fn, out);
}

int vmpi_inter_iallreduce(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                          MPI_Op op, struct vmpi_comm *c, struct vmpi_req **out)
{
    static const char fn[] = "MPI_Iallreduce";
    int rc;
    struct coll_sched *s = sched_new(c, op, fn, &rc);
    if (!s)
        return rc;
    coll_sched_hold(s, dt);
    if (count > 0) {
        void *mine = local_reduce(s, sbuf, count, dt, c);
        if (c->rank == 0 && !coll_sched_oom(s)) {
            remote(s, c, true, mine, count, dt, 0);
            remote(s, c, false, rbuf, count, dt, 0);
            coll_sched_round(s);
        }
        coll_sched_bcast(s, rbuf, count, dt, 0, 3);
    }
    return coll_sched_launch_for(s, c, fn, out);
}

int vmpi_inter_ireduce_scatter(const char *fn, const void *sbuf, void *rbuf, const int *counts,
                               struct vmpi_dtype *dt, MPI_Op op, struct vmpi_comm *c,
                               struct vmpi_req **out)
{
    int rc;
    struct coll_sched *s = sched_new(c, op, fn, &rc);
    if (!s)
        return rc;
    coll_sched_hold(s, dt);
    MPI_Count total = 0;
    for (int i = 0; i < c->size; i++)
        total += counts[i];
    if (total > 0) {
        void *mine = local_reduce(s, sbuf, total, dt, c);
        void *theirs = c->rank == 0 ? coll_sched_tmp(s, total, dt) : NULL;
        if (c->rank == 0 && !coll_sched_oom(s)) {
            remote(s, c, true, mine, total, dt, 0);
            remote(s, c, false, theirs, total, dt, 0);
            coll_sched_round(s);
            MPI_Aint ext = vmpi_dtype_extent(dt), at = counts[0] * ext;
            coll_sched_copy(s, theirs, counts[0], dt, rbuf, counts[0], dt);
            for (int i = 1; i < c->size; at += counts[i] * ext, i++)
                coll_sched_send(s, vmpi_dtype_addr(theirs, at), counts[i], dt, i, 3);
        } else if (c->rank != 0) {
            coll_sched_recv(s, rbuf, counts[c->rank], dt, 0, 3);
        }
    }
    return coll_sched_launch_for(s, c, fn, out);
}
