/* MPI_Comm_idup (MPI-3.1 6.4.2): a duplicate made by a schedule on the
 * parent, so it is ordered with the parent's other non-blocking
 * collectives, and the program may build other communicators meanwhile.
 *
 * Ids. A blocking constructor takes the lowest id free on all members at
 * once; an idup agrees on an id from bitmaps read long before it ends, so
 * that id may be taken meanwhile. Idups take their ids from their own region
 * (the last VMPI_CTX_NB_WORDS words, core/communicator.h), which blocking
 * constructors never use, and among themselves they agree in attempts:
 *   1. allreduce (on an intercommunicator: each side on its local
 *      communicator, the leaders swap, each side again) of the free,
 *      unreserved ids of the region: AND;
 *   2. the lowest agreed id (two on an intercommunicator: the second for
 *      the private local communicator) is checked here: free and unreserved,
 *      it is reserved and the vote is yes; used, or reserved by an idup with
 *      a lower key, no; reserved by one with a higher key, this idup waits
 *      until that one ends (wait-die: waits only go to higher keys, so no
 *      cycle, and the lowest pending idup never fails, so no livelock);
 *   3. allreduce of the vote (MIN); all yes: the communicator is made, else
 *      the ids are released and another attempt starts with fresh bitmaps.
 * A key is the parent's id and the schedule's first tag: the same on every
 * member, different for idups pending on one process.
 *
 * Instances. An idup's communicator gets 2^31 + its id's slot + 512 times
 * a per-slot count of uses (the MAX over members, taken while every member
 * holds the id reserved, so no other communicator of theirs can get it);
 * blocking constructors count below 2^31 (comm/comm.c).
 *
 * The attributes are copied at the call (api/idup.c) and attached, with
 * the parent's topology and error handler as of the call, when the schedule
 * ends; *newcomm is written then too. */
#include "comm.h"
#include "../coll/coll_impl.h"
#include "../core/attr.h"

#include <stdlib.h>
#include <string.h>

enum { NB_SLOTS = VMPI_CTX_NB_WORDS * 32, NB_FIRST = (VMPI_CTX_WORDS - VMPI_CTX_NB_WORDS) * 32 };

/* What the members merge: ids (AND), the ids' use counts (MAX), vote (MIN). */
struct agree {
    uint32_t mask[VMPI_CTX_NB_WORDS];
    uint32_t uses[2];
    uint32_t vote;
};

struct idup {
    struct idup *next, *prev; /* the pending list */
    struct vmpi_comm *c;      /* the parent (a reference) */
    struct coll_sched *s;
    uint64_t key;
    int nids;                 /* 2 on an intercommunicator */
    int slot[2];              /* the candidates' slots in the region */
    bool held;                /* this process reserved them */
    int tag, vtag;            /* next message steps: local, between the leaders */
    struct agree a, in;
    MPI_Errhandler errh;
    struct vmpi_attr *attrs;
    MPI_Comm *out;
};

static struct idup *pending;
static uint32_t reserved[VMPI_CTX_NB_WORDS];
static uint32_t uses[NB_SLOTS];

static bool bit(const uint32_t *m, int i)
{
    return m[i / 32] >> (i % 32) & 1u;
}

static void reserve(const struct idup *d, bool on)
{
    for (int k = 0; k < d->nids; k++)
        if (on)
            reserved[d->slot[k] / 32] |= 1u << (d->slot[k] % 32);
        else
            reserved[d->slot[k] / 32] &= ~(1u << (d->slot[k] % 32));
}

static bool merge(struct coll_sched *s, void *arg)
{
    (void)s;
    struct idup *d = arg;
    for (int w = 0; w < VMPI_CTX_NB_WORDS; w++)
        d->a.mask[w] &= d->in.mask[w];
    for (int k = 0; k < 2; k++)
        d->a.uses[k] = d->in.uses[k] > d->a.uses[k] ? d->in.uses[k] : d->a.uses[k];
    d->a.vote = d->in.vote < d->a.vote ? d->in.vote : d->a.vote;
    return true;
}

/* Appends the agreement on d->a among all processes of the parent. */
static void exchange(struct idup *d)
{
    struct coll_sched *s = d->s;
    coll_sched_allreduce_call(s, &d->a, &d->in, sizeof d->a, merge, d, &d->tag);
    if (!d->c->local)
        return;
    if (d->c->rank == 0) {
        struct vmpi_dtype *bt = vmpi_dtype_get(MPI_BYTE);
        coll_sched_via(s, d->c, true, &d->a, sizeof d->a, bt, 0, d->vtag);
        coll_sched_via(s, d->c, false, &d->in, sizeof d->in, bt, 0, d->vtag);
        coll_sched_round(s);
        coll_sched_call(s, merge, d);
    }
    d->vtag++;
    /* The others hold this side's result already and the merge is
     * idempotent: a second allreduce spreads the leader's. */
    coll_sched_allreduce_call(s, &d->a, &d->in, sizeof d->a, merge, d, &d->tag);
}

static bool pick(struct coll_sched *s, void *arg);

/* Step 1 of an attempt: this process's free, unreserved ids of the region. */
static void attempt(struct idup *d)
{
    vmpi_comm_ctx_free_nb(d->a.mask);
    for (int w = 0; w < VMPI_CTX_NB_WORDS; w++)
        d->a.mask[w] &= ~reserved[w];
    d->a.uses[0] = d->a.uses[1] = 0;
    d->a.vote = 1;
    exchange(d);
    coll_sched_call(d->s, pick, d);
}

static void finish(struct idup *d)
{
    if (d->held)
        reserve(d, false);
    if (d->prev)
        d->prev->next = d->next;
    else
        pending = d->next;
    if (d->next)
        d->next->prev = d->prev;
    if (d->attrs) { /* failed: no communicator takes them */
        vmpi_attr_clear(&d->attrs, MPI_COMM_NULL);
        vmpi_attr_drop(&d->attrs);
    }
    vmpi_errh_release(d->errh);
    vmpi_comm_release(d->c);
    free(d);
}

/* The pending idup that holds slot i reserved. */
static const struct idup *holder(int i)
{
    for (const struct idup *h = pending; h; h = h->next)
        for (int k = 0; h->held && k < h->nids; k++)
            if (h->slot[k] == i)
                return h;
    return NULL;
}

static bool decide(struct coll_sched *s, void *arg);

/* Step 2: the agreed ids, checked here; the vote goes out. */
static bool pick(struct coll_sched *s, void *arg)
{
    struct idup *d = arg;
    if (coll_sched_error(s)) {
        finish(d);
        return true;
    }
    int n = 0;
    for (int i = 0; i < NB_SLOTS && n < d->nids; i++)
        if (bit(d->a.mask, i))
            d->slot[n++] = i;
    if (n < d->nids) { /* the same AND everywhere: every member stops here */
        coll_sched_fail(s, vmpi_err_make(MPI_ERR_OTHER,
                                         "MPI_Comm_idup: no context id for duplicates made by "
                                         "MPI_Comm_idup is free on all members (at most %d "
                                         "may exist at once); free some with MPI_Comm_free",
                                         NB_SLOTS / d->nids));
        finish(d);
        return true;
    }
    uint32_t now[VMPI_CTX_NB_WORDS];
    vmpi_comm_ctx_free_nb(now);
    uint32_t vote = 1;
    for (int k = 0; k < d->nids; k++) {
        const struct idup *h = bit(reserved, d->slot[k]) ? holder(d->slot[k]) : NULL;
        if (h && d->key < h->key)
            return false; /* wait for h to make or release it */
        if (h || !bit(now, d->slot[k]))
            vote = 0;
    }
    if (vote) {
        reserve(d, true);
        d->held = true;
        for (int k = 0; k < d->nids; k++)
            d->a.uses[k] = uses[d->slot[k]];
    }
    d->a.vote = vote;
    exchange(d);
    coll_sched_call(s, decide, d);
    return true;
}

static uint32_t ctx_of(int slot)
{
    return 2u * (uint32_t)(NB_FIRST + slot);
}

static uint32_t inst_of(struct idup *d, int k)
{
    uses[d->slot[k]] = d->a.uses[k] + 1;
    return 0x80000000u | uses[d->slot[k]] * NB_SLOTS | (uint32_t)d->slot[k];
}

/* The duplicate with the agreed ids (reserved here until now). */
static int make(struct idup *d, struct vmpi_comm **out)
{
    struct vmpi_comm *c = d->c, *local = NULL;
    reserve(d, false);
    d->held = false;
    if (c->local) {
        vmpi_group_retain(c->group);
        local = vmpi_comm_new(c->group, ctx_of(d->slot[1]), inst_of(d, 1), d->errh);
        if (!local)
            return MPI_ERR_NO_MEM;
    }
    vmpi_group_retain(c->group);
    struct vmpi_comm *n = vmpi_comm_new(c->group, ctx_of(d->slot[0]), inst_of(d, 0), d->errh);
    if (!n) {
        if (local)
            vmpi_comm_free(local);
        return MPI_ERR_NO_MEM;
    }
    if (local) {
        vmpi_group_retain(c->peers);
        vmpi_comm_make_inter(n, c->peers, local);
    } else if (vmpi_topo_copy(c, n) != MPI_SUCCESS) {
        vmpi_comm_free(n);
        return MPI_ERR_NO_MEM;
    }
    n->attrs = d->attrs;
    d->attrs = NULL;
    *out = n;
    return MPI_SUCCESS;
}

/* Step 3: all voted yes, or another attempt. */
static bool decide(struct coll_sched *s, void *arg)
{
    struct idup *d = arg;
    if (coll_sched_error(s)) {
        finish(d);
        return true;
    }
    if (!d->a.vote) {
        if (d->held)
            reserve(d, false);
        d->held = false;
        attempt(d);
        return true;
    }
    struct vmpi_comm *n;
    if (make(d, &n) == MPI_SUCCESS)
        *d->out = n->handle;
    else
        coll_sched_fail(s, vmpi_err_make(MPI_ERR_NO_MEM, "MPI_Comm_idup: out of memory"));
    finish(d);
    return true;
}

int vmpi_comm_idup(struct vmpi_comm *c, struct vmpi_attr *attrs, MPI_Comm *newcomm,
                   struct vmpi_req **out)
{
    const char *fn = "MPI_Comm_idup";
    struct idup *d = calloc(1, sizeof *d);
    struct coll_sched *s = d ? coll_sched_new(c->local ? c->local : c, MPI_OP_NULL) : NULL;
    if (!s) {
        free(d);
        return vmpi_err(c, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    vmpi_comm_retain(c);
    *d = (struct idup){.c = c, .s = s, .nids = c->local ? 2 : 1, .errh = c->errh,
                       .attrs = attrs, .out = newcomm};
    vmpi_errh_retain(c->errh);
    d->key = (uint64_t)c->ctx << 32 | (uint32_t)coll_sched_tag0(s);
    d->next = pending;
    if (pending)
        pending->prev = d;
    pending = d;
    attempt(d);
    int rc = coll_sched_launch_for(s, c, fn, out);
    if (rc != MPI_SUCCESS) { /* nothing ran; the caller still owns attrs */
        d->attrs = NULL;
        finish(d);
    }
    return rc;
}
