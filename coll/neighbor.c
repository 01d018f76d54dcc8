/* Neighbourhood collectives: one round of point-to-point messages with the
 * topology's neighbours, in the communicator's collective context.
 *
 * Every receive is posted first, then every send, all at once (a single
 * round: neighbours exchange independent blocks, nothing is forwarded).
 * Peers in the same VM or on the same host get their messages through
 * shared memory, the network only carries those between hosts: the
 * point-to-point layer picks the channel per peer, which is where the
 * locality lies for these collectives.
 *
 * Tags: each call, blocking or not, takes the communicator's next
 * non-blocking sequence number (vmpi_hier_nbc_seq, as coll/sched.c) and
 * uses that collective's tag range, so calls in flight at once never
 * mix. Graph and distributed-graph messages all carry step 0: messages of
 * one pair are matched in posting order, which both ends take from their
 * edge lists (the k-th edge i -> j at i is the k-th at j). Cartesian ones
 * carry the direction: the send to out[i] has step i, the receive from
 * in[i] expects step i ^ 1 (what that rank sent the other way).
 *
 * A non-blocking call returns a VMPI_REQ_COLL request; a poller (added
 * while any is pending) completes it when all its messages have. The
 * point-to-point requests hold the datatypes, the request holds the
 * communicator, so the user may free both before the wait. */
#include <stdlib.h>

#include "../core/dtype_impl.h" /* vmpi_dtype_addr */
#include "coll_impl.h"
#include "neighbor.h"

struct nbr_op {
    struct nbr_op *next, *prev; /* pending non-blocking ones */
    struct vmpi_req *req;       /* the user's request */
    int n, ndone;
    int err;
    struct vmpi_req *sub[]; /* the sends and receives */
};

static struct nbr_op *pending;

static char *block_addr(const struct vmpi_nbr_buf *b, int i, MPI_Count *count,
                        struct vmpi_dtype **dt)
{
    *count = b->counts ? b->counts[i] : b->count;
    *dt = b->dts ? b->dts[i] : b->dt;
    if (b->same)
        return b->buf;
    if (b->bdispls)
        return vmpi_dtype_addr(b->buf, b->bdispls[i]);
    MPI_Aint ext = vmpi_dtype_extent(*dt);
    MPI_Aint off = b->displs ? (MPI_Aint)b->displs[i] * ext : (MPI_Aint)i * (MPI_Aint)*count * ext;
    return vmpi_dtype_addr(b->buf, off);
}

/* Posts the receives, then the sends; the first error stays in op->err. */
static void post_all(struct nbr_op *op, struct vmpi_comm *c, int nin, const int *in, int nout,
                     const int *out, bool cart, const struct vmpi_nbr_buf *send,
                     const struct vmpi_nbr_buf *recv)
{
    int tag0 = COLL_TAG_NBC + (int)(vmpi_hier_nbc_seq(c) % NBC_WINDOW) * NBC_STRIDE;
    MPI_Count count;
    struct vmpi_dtype *dt;
    for (int i = 0; i < nin; i++) {
        if (in[i] == MPI_PROC_NULL)
            continue;
        char *buf = block_addr(recv, i, &count, &dt);
        int tag = tag0 + (cart ? (i ^ 1) % NBC_STRIDE : 0);
        int rc = vmpi_p2p_irecv(buf, count, dt, in[i], tag, c, 1, &op->sub[op->n]);
        if (rc == MPI_SUCCESS)
            op->n++;
        else if (!op->err)
            op->err = rc;
    }
    for (int i = 0; i < nout; i++) {
        if (out[i] == MPI_PROC_NULL)
            continue;
        char *buf = block_addr(send, i, &count, &dt);
        int tag = tag0 + (cart ? i % NBC_STRIDE : 0);
        int rc = vmpi_p2p_isend(buf, count, dt, out[i], tag, c, 1, VMPI_MODE_STD,
                                &op->sub[op->n]);
        if (rc == MPI_SUCCESS)
            op->n++;
        else if (!op->err)
            op->err = rc;
    }
}

/* Frees the completed sub-requests, keeping the first error. */
static void collect(struct nbr_op *op)
{
    for (int i = 0; i < op->n; i++) {
        if (op->sub[i]->st_error != MPI_SUCCESS && !op->err)
            op->err = op->sub[i]->st_error;
        vmpi_req_free(op->sub[i]);
    }
    op->n = 0;
}

static int nbr_progress(void)
{
    int events = 0;
    for (struct nbr_op *op = pending, *next; op; op = next) {
        next = op->next;
        while (op->ndone < op->n && op->sub[op->ndone]->done)
            op->ndone++;
        if (op->ndone < op->n)
            continue;
        if (op->prev)
            op->prev->next = op->next;
        else
            pending = op->next;
        if (op->next)
            op->next->prev = op->prev;
        if (!pending)
            vmpi_progress_remove(nbr_progress);
        collect(op);
        struct vmpi_req *r = op->req;
        r->st_error = op->err;
        free(op);
        vmpi_req_complete(r); /* frees r if the user already has */
        events++;
    }
    return events;
}

int vmpi_nbr_exchange(struct vmpi_comm *c, int nin, const int *in, int nout, const int *out,
                      bool cart, const struct vmpi_nbr_buf *send,
                      const struct vmpi_nbr_buf *recv, const char *fn, struct vmpi_req **req)
{
    size_t nsub = (size_t)nin + (size_t)nout;
    struct nbr_op *op = malloc(sizeof *op + sizeof(struct vmpi_req *) * nsub);
    if (!op)
        return vmpi_err(c, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    op->n = op->ndone = op->err = 0;
    post_all(op, c, nin, in, nout, out, cart, send, recv);
    if (!req) {
        for (int i = 0; i < op->n; i++)
            while (!op->sub[i]->done)
                vmpi_progress();
        collect(op);
        int err = op->err;
        free(op);
        if (err == MPI_ERR_TRUNCATE)
            return vmpi_err(c, err, "%s: a neighbour sent more data than its receive block "
                            "holds (the ranks passed counts or datatypes that do not match)", fn);
        if (err != MPI_SUCCESS)
            return vmpi_err(c, err, "%s: a message to or from a neighbour failed", fn);
        return MPI_SUCCESS;
    }
    struct vmpi_req *r = vmpi_req_alloc(VMPI_REQ_COLL);
    r->comm = c;
    vmpi_comm_retain(c);
    op->req = r;
    *req = r;
    op->prev = NULL;
    op->next = pending;
    if (pending)
        pending->prev = op;
    else
        vmpi_progress_add(nbr_progress, 0, VMPI_POLL_WAIT);
    pending = op;
    return MPI_SUCCESS;
}
