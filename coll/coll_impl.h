/* Interfaces between the parts of coll/.
 *
 *   coll/util.c         scratch buffers, local copies, the p2p helpers on a view
 *   coll/flat_move.c    flat algorithms that move data (barrier, bcast, gather,
 *                       scatter, allgather, alltoall and their v/w forms)
 *   coll/flat_reduce.c  flat reductions (reduce, allreduce, reduce_scatter,
 *                       scan, exscan)
 *   coll/sched.c        non-blocking collectives: schedules run by progress
 *   coll/hier.c         hierarchical versions: node-local part in shared
 *                       memory, leaders' part with the flat algorithms
 *   coll/node.c         the node-local parts through the collective slots
 *   coll/select.c       vmpi_coll_* (coll.h): picks flat or hierarchical (VMPI_COLL_*)
 *
 * A flat algorithm runs on a view: a list of the communicator's ranks (all of
 * them, or e.g. the node leaders), addressed by view rank. All traffic uses
 * the communicator's collective context (coll = 1), so it never matches user
 * receives. Blocking collectives use the fixed tags below: every member calls
 * them in the same order and pairs are FIFO, so reusing a tag from one call to
 * the next cannot mismatch. Non-blocking ones use tags from COLL_TAG_NBC up,
 * numbered per communicator (coll/sched.c). */
#ifndef VMPI_COLL_COLL_IMPL_H
#define VMPI_COLL_COLL_IMPL_H

#include "coll.h"

enum {
    COLL_TAG_BARRIER = 0x100, /* + round */
    COLL_TAG_BCAST = 0x200,
    COLL_TAG_REDUCE = 0x300,
    COLL_TAG_ALLREDUCE = 0x400, /* + step */
    COLL_TAG_ALLGATHER = 0x500,
    COLL_TAG_GATHER = 0x600,
    COLL_TAG_SCATTER = 0x700,
    COLL_TAG_ALLTOALL = 0x800,
    COLL_TAG_REDSCAT = 0x900,
    COLL_TAG_SCAN = 0xa00,
    COLL_TAG_HIER = 0xb00,  /* hierarchical glue (coll/hier.c) */
    COLL_TAG_NBC = 0x10000  /* first tag of non-blocking collectives */
};

/* Which collective, for the algorithm choices below. */
enum coll_id {
    COLL_BARRIER, COLL_BCAST, COLL_REDUCE, COLL_ALLREDUCE, COLL_GATHER, COLL_SCATTER,
    COLL_ALLGATHER, COLL_ALLTOALL, COLL_REDUCE_SCATTER, COLL_SCAN, COLL_N
};

/* Network-level (flat) algorithms; 0 always means "by message size and
 * process count" (each flat file documents its thresholds). The names are
 * those VMPI_COLL_<NAME> accepts (coll/select.c). */
enum { BCAST_BINOMIAL = 1, BCAST_SCATTER_ALLGATHER };
enum { REDUCE_BINOMIAL = 1, REDUCE_RABENSEIFNER };
enum { ALLREDUCE_RECURSIVE_DOUBLING = 1, ALLREDUCE_RABENSEIFNER, ALLREDUCE_RING };
enum { GATHER_BINOMIAL = 1, GATHER_LINEAR };
enum { SCATTER_BINOMIAL = 1, SCATTER_LINEAR };
enum { ALLGATHER_RING = 1, ALLGATHER_RECURSIVE_DOUBLING, ALLGATHER_BRUCK };
enum { ALLTOALL_BRUCK = 1, ALLTOALL_PAIRWISE, ALLTOALL_LINEAR };
enum { REDUCE_SCATTER_RECURSIVE_HALVING = 1, REDUCE_SCATTER_PAIRWISE };

/* Hierarchical or flat: COLL_PATH_AUTO lets coll/select.c decide. */
enum { COLL_PATH_AUTO, COLL_PATH_FLAT, COLL_PATH_HIER };
struct coll_choice {
    int path;
    int alg; /* one of the enums above, 0 = by size */
};
extern struct coll_choice coll_choice[COLL_N]; /* from VMPI_COLL_*, at MPI_Init */

/* View rank i is communicator rank map[i] (map NULL: the identity). The
 * map is increasing, so view order is communicator order (what
 * non-commutative reductions and rank-ordered results rely on). */
struct coll_view {
    struct vmpi_comm *comm;
    int size, rank; /* rank: this process's view rank */
    const int *map;
};

static inline int coll_peer(const struct coll_view *v, int i)
{
    return v->map ? v->map[i] : i;
}

static inline struct coll_view coll_view_all(struct vmpi_comm *c)
{
    return (struct coll_view){.comm = c, .size = c->size, .rank = c->rank, .map = NULL};
}

/* ---- coll/util.c ----------------------------------------------------------- */
/* Scratch space laid out like (count, dt) in user memory: the returned
 * pointer is the buffer address to use with (count, dt); free *raw. NULL when
 * out of memory. */
void *coll_tmp_alloc(MPI_Count count, const struct vmpi_dtype *dt, void **raw);
/* dst = src for (count, dt) layouts (either may be non-contiguous). */
int coll_local_copy(void *dst, const void *src, MPI_Count count, const struct vmpi_dtype *dt);
/* Copy between layouts of possibly different type signatures of equal
 * packed size (e.g. a gather's send and receive types). */
int coll_local_copy2(void *dst, MPI_Count dcount, const struct vmpi_dtype *ddt,
                     const void *src, MPI_Count scount, const struct vmpi_dtype *sdt);
struct vmpi_dtype *coll_byte_type(void);

/* Point-to-point between view ranks, in the collective context. */
int coll_send(const struct coll_view *v, const void *buf, MPI_Count count,
              struct vmpi_dtype *dt, int to, int tag);
int coll_recv(const struct coll_view *v, void *buf, MPI_Count count, struct vmpi_dtype *dt,
              int from, int tag);
int coll_sendrecv(const struct coll_view *v, const void *sbuf, MPI_Count scount,
                  struct vmpi_dtype *sdt, int to, void *rbuf, MPI_Count rcount,
                  struct vmpi_dtype *rdt, int from, int tag);

/* ---- coll/flat_move.c --------------------------------------------------- */
int vmpi_flat_barrier(const struct coll_view *v);
int vmpi_flat_bcast(const struct coll_view *v, void *buf, MPI_Count count,
                    struct vmpi_dtype *dt, int root);
/* Per-rank arrays (counts, displacements, types) are indexed by view rank.
 * MPI_IN_PLACE as in MPI: sbuf at the gather root, rbuf at the scatter
 * root, sbuf in allgather(v) and alltoall(v/w). Arguments ignored on a rank
 * may be NULL, datatypes included. */
int vmpi_flat_gather(const struct coll_view *v, const void *sbuf, MPI_Count scount,
                     struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                     struct vmpi_dtype *rdt, int root);
int vmpi_flat_gatherv(const struct coll_view *v, const void *sbuf, MPI_Count scount,
                      struct vmpi_dtype *sdt, void *rbuf, const int *rcounts,
                      const int *displs, struct vmpi_dtype *rdt, int root);
int vmpi_flat_scatter(const struct coll_view *v, const void *sbuf, MPI_Count scount,
                      struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                      struct vmpi_dtype *rdt, int root);
int vmpi_flat_scatterv(const struct coll_view *v, const void *sbuf, const int *scounts,
                       const int *displs, struct vmpi_dtype *sdt, void *rbuf,
                       MPI_Count rcount, struct vmpi_dtype *rdt, int root);
int vmpi_flat_allgather(const struct coll_view *v, const void *sbuf, MPI_Count scount,
                        struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                        struct vmpi_dtype *rdt);
int vmpi_flat_allgatherv(const struct coll_view *v, const void *sbuf, MPI_Count scount,
                         struct vmpi_dtype *sdt, void *rbuf, const int *rcounts,
                         const int *displs, struct vmpi_dtype *rdt);
int vmpi_flat_alltoall(const struct coll_view *v, const void *sbuf, MPI_Count scount,
                       struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                       struct vmpi_dtype *rdt);
int vmpi_flat_alltoallv(const struct coll_view *v, const void *sbuf, const int *scounts,
                        const int *sdispls, struct vmpi_dtype *sdt, void *rbuf,
                        const int *rcounts, const int *rdispls, struct vmpi_dtype *rdt);
/* sdispls, rdispls in bytes; a NULL type is allowed where the count is 0 */
int vmpi_flat_alltoallw(const struct coll_view *v, const void *sbuf, const int *scounts,
                        const int *sdispls, struct vmpi_dtype *const *sdts, void *rbuf,
                        const int *rcounts, const int *rdispls, struct vmpi_dtype *const *rdts);

/* ---- coll/flat_reduce.c ------------------------------------------------- */
int vmpi_flat_reduce(const struct coll_view *v, const void *sbuf, void *rbuf, MPI_Count count,
                     struct vmpi_dtype *dt, MPI_Op op, int root);
int vmpi_flat_allreduce(const struct coll_view *v, const void *sbuf, void *rbuf,
                        MPI_Count count, struct vmpi_dtype *dt, MPI_Op op);
/* counts[i] (i a view rank) elements of the result go to view rank i. */
int vmpi_flat_reduce_scatter(const struct coll_view *v, const void *sbuf, void *rbuf,
                             const MPI_Count *counts, struct vmpi_dtype *dt, MPI_Op op);
int vmpi_flat_reduce_scatter_block(const struct coll_view *v, const void *sbuf, void *rbuf,
                                   MPI_Count count, struct vmpi_dtype *dt, MPI_Op op);
int vmpi_flat_scan(const struct coll_view *v, const void *sbuf, void *rbuf, MPI_Count count,
                   struct vmpi_dtype *dt, MPI_Op op);
int vmpi_flat_exscan(const struct coll_view *v, const void *sbuf, void *rbuf, MPI_Count count,
                     struct vmpi_dtype *dt, MPI_Op op);

/* ---- coll/node.c ---------------------------------------------------------- */
/* The ranks of one node of a communicator and their collective slots
 * (shm/cslot.h). slot is NULL when some rank of the node has none (a
 * channel is turned off); then the node parts use point-to-point. */
struct vmpi_cslot;
struct coll_node {
    int n, me;                /* node size, this rank's node rank */
    struct vmpi_cslot **slot; /* node rank -> its slot */
    uint32_t seq;             /* node collectives run on this communicator */
    uint32_t inst;            /* the communicator's instance number */
};
/* All node ranks call these in the same order. between (NULL on every
 * rank, or on none) runs on the leader (node rank 0) once every rank has
 * arrived, before any leaves. Roots are node ranks. */
int vmpi_node_barrier(struct coll_node *nd, int (*between)(void *), void *arg);
int vmpi_node_bcast(struct coll_node *nd, void *buf, MPI_Count count, struct vmpi_dtype *dt,
                    int root);
/* Whether reductions on dt can run on shared memory (packed form = layout). */
bool vmpi_node_reduce_ok(const struct vmpi_dtype *dt);
int vmpi_node_reduce(struct coll_node *nd, const void *sbuf, void *rbuf, MPI_Count count,
                     struct vmpi_dtype *dt, MPI_Op op, int root);
int vmpi_node_allreduce(struct coll_node *nd, const void *sbuf, void *rbuf, MPI_Count count,
                        struct vmpi_dtype *dt, MPI_Op op);
/* Whether the data-movement collectives below can run on the node (they
 * split a half slot in one part per rank). Arguments as for the flat ones. */
bool vmpi_node_move_ok(const struct coll_node *nd);
int vmpi_node_allgather(struct coll_node *nd, const void *sbuf, MPI_Count scount,
                        struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                        struct vmpi_dtype *rdt);
int vmpi_node_gather(struct coll_node *nd, const void *sbuf, MPI_Count scount,
                     struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                     struct vmpi_dtype *rdt, int root);
int vmpi_node_scatter(struct coll_node *nd, const void *sbuf, MPI_Count scount,
                      struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                      struct vmpi_dtype *rdt, int root);
int vmpi_node_alltoall(struct coll_node *nd, const void *sbuf, MPI_Count scount,
                       struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                       struct vmpi_dtype *rdt);
int vmpi_node_allgatherv(struct coll_node *nd, const void *sbuf, MPI_Count scount,
                         struct vmpi_dtype *sdt, void *rbuf, const int *rcounts,
                         const int *displs, struct vmpi_dtype *rdt);
int vmpi_node_gatherv(struct coll_node *nd, const void *sbuf, MPI_Count scount,
                      struct vmpi_dtype *sdt, void *rbuf, const int *rcounts, const int *displs,
                      struct vmpi_dtype *rdt, int root);
int vmpi_node_scatterv(struct coll_node *nd, const void *sbuf, const int *scounts,
                       const int *displs, struct vmpi_dtype *sdt, void *rbuf, MPI_Count rcount,
                       struct vmpi_dtype *rdt, int root);
int vmpi_node_alltoallv(struct coll_node *nd, const void *sbuf, const int *scounts,
                        const int *sdispls, struct vmpi_dtype *sdt, void *rbuf,
                        const int *rcounts, const int *rdispls, struct vmpi_dtype *rdt);

/* ---- coll/hier.c ---------------------------------------------------------- */
/* Whether the hierarchy wins on c: some node holds several of its ranks, and
 * c spans several nodes or its one node shares memory (for a reduction on
 * dt, memory the node reductions can use; dt NULL for the others). */
/* Takes the communicator slot that holds each communicator's layout. */
void vmpi_hier_init(void);
/* The sequence number of the next non-blocking collective on c (its tags). */
uint32_t vmpi_hier_nbc_seq(struct vmpi_comm *c);
/* Schedules' progress (coll/sched.c), a poller while any runs. */
int vmpi_coll_nbc_progress(void);
bool vmpi_hier_useful(struct vmpi_comm *c, const struct vmpi_dtype *dt);
/* c's one node when c is a single node whose ranks can run the data-movement
 * collectives in shared memory (vmpi_node_move_ok), else NULL. */
struct coll_node *vmpi_hier_one_node(struct vmpi_comm *c);
int vmpi_hier_barrier(struct vmpi_comm *c);
int vmpi_hier_bcast(void *buf, MPI_Count count, struct vmpi_dtype *dt, int root,
                    struct vmpi_comm *c);
int vmpi_hier_reduce(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                     MPI_Op op, int root, struct vmpi_comm *c);
/* The whole result, p * rcount elements, must be at most INT_MAX bytes
 * (the leaders' allgatherv counts are ints): vmpi_hier_allgather_fits. */
bool vmpi_hier_allgather_fits(struct vmpi_comm *c, MPI_Count rcount, const struct vmpi_dtype *rdt);
int vmpi_hier_allgather(const void *sbuf, MPI_Count scount, struct vmpi_dtype *sdt, void *rbuf,
                        MPI_Count rcount, struct vmpi_dtype *rdt, struct vmpi_comm *c);
int vmpi_hier_allreduce(const void *sbuf, void *rbuf, MPI_Count count, struct vmpi_dtype *dt,
                        MPI_Op op, struct vmpi_comm *c);

/* ---- coll/sched.c ----------------------------------------------------------
 * Non-blocking collectives (vmpi_coll_i*, core/vmpi.h) run as schedules of
 * rounds driven by vmpi_progress. Collective number seq of a communicator
 * uses the tags COLL_TAG_NBC + (seq mod NBC_WINDOW) * NBC_STRIDE + step,
 * step < NBC_STRIDE: all below MPI_TAG_UB, disjoint from the blocking tags. */
enum { NBC_STRIDE = 256, NBC_WINDOW = 1 << 21 };

/* Building a schedule (the algorithms in coll/sched*.c use these): rounds of
 * steps; the steps of a round start together, in the order added, and the
 * next round starts when every send and receive of the round is done. Peers
 * are ranks of the communicator; tags are message steps (taken mod
 * NBC_STRIDE) of this collective. Building never fails half way: running
 * out of memory is remembered (coll_sched_oom) and coll_sched_launch then
 * frees the schedule and reports MPI_ERR_NO_MEM naming fn. */
struct coll_sched;
/* A schedule on all ranks of c that reduces with op (MPI_OP_NULL: none);
 * takes c's next non-blocking sequence number. NULL when out of memory. */
struct coll_sched *coll_sched_new(struct vmpi_comm *c, MPI_Op op);
void coll_sched_send(struct coll_sched *s, const void *buf, MPI_Count count,
                     struct vmpi_dtype *dt, int peer, int tag);
void coll_sched_recv(struct coll_sched *s, void *buf, MPI_Count count, struct vmpi_dtype *dt,
                     int peer, int tag);
/* inout = in op inout: in is the left operand. */
void coll_sched_reduce(struct coll_sched *s, const void *in, void *inout, MPI_Count count,
                       struct vmpi_dtype *dt);
/* acc = acc op t, where t holds data of higher ranks than acc (t is
 * overwritten when op does not commute). */
void coll_sched_combine_higher(struct coll_sched *s, void *t, void *acc, MPI_Count count,
                               struct vmpi_dtype *dt, bool commut);
/* Same packed size on both sides (checked by the caller). */
void coll_sched_copy(struct coll_sched *s, const void *src, MPI_Count scount,
                     struct vmpi_dtype *sdt, void *dst, MPI_Count count, struct vmpi_dtype *dt);
/* Closes the round being added to (nothing if it is empty). */
void coll_sched_round(struct coll_sched *s);
/* Scratch laid out like (count, dt), freed with the schedule (at most 3 a
 * schedule); NULL when out of memory. */
void *coll_sched_tmp(struct coll_sched *s, MPI_Count count, const struct vmpi_dtype *dt);
/* Keeps a user datatype alive until the schedule ends (dt not NULL). */
void coll_sched_hold(struct coll_sched *s, struct vmpi_dtype *dt);
bool coll_sched_oom(const struct coll_sched *s);
/* Gives a built schedule its request (*out) and starts it. */
int coll_sched_launch(struct coll_sched *s, const char *fn, struct vmpi_req **out);
/* The same, the request and its errors belonging to owner rather than the
 * schedule's communicator (an intercommunicator whose side runs it). */
int coll_sched_launch_for(struct coll_sched *s, struct vmpi_comm *owner, const char *fn,
                          struct vmpi_req **out);

/* Steps that run code (comm/idup.c's agreement on a context id). A CALL
 * step runs fn(s, arg) when its round starts; fn returns false to be run
 * again at later progress (the round waits for it). fn may add steps: they
 * form rounds after the schedule's last one, and their message steps keep
 * counting in the schedule's tag range. */
typedef bool coll_sched_fn(struct coll_sched *s, void *arg);
void coll_sched_call(struct coll_sched *s, coll_sched_fn *fn, void *arg);
/* A send (or receive) on the collective context of `via` instead of the
 * view's communicator, peer a rank there (an intercommunicator's leaders). */
void coll_sched_via(struct coll_sched *s, struct vmpi_comm *via, bool send, void *buf,
                    MPI_Count count, struct vmpi_dtype *dt, int peer, int tag);
/* The request ends with error code `code` (the first one set), and the
 * code so far; the schedule's first tag (distinct among the communicator's
 * running schedules). */
void coll_sched_fail(struct coll_sched *s, int code);
int coll_sched_error(const struct coll_sched *s);
int coll_sched_tag0(const struct coll_sched *s);
struct vmpi_comm *coll_sched_comm(const struct coll_sched *s); /* all its ranks run it */
MPI_Op coll_sched_op(const struct coll_sched *s);
/* coll/sched_tree.c: appends a binomial-tree bcast of (buf, count, dt)
 * from root (message step tag), and a reduce with the schedule's op of in
 * into out at root (out only read there; steps tag and tag + 1). */
void coll_sched_bcast(struct coll_sched *s, void *buf, MPI_Count count, struct vmpi_dtype *dt,
                      int root, int tag);
void coll_sched_reduce_tree(struct coll_sched *s, const void *in, void *out, MPI_Count count,
                            struct vmpi_dtype *dt, int root, int tag);
/* coll/sched_call.c: appends an allreduce of the n bytes at buf over the
 * view, recursive doubling (ranks beyond the largest power of two fold in
 * first), message steps from *tag (advanced past them). After each
 * receive into tmp (n bytes) a CALL step merge(s, arg) folds tmp into buf;
 * the merge must be commutative and associative. */
void coll_sched_allreduce_call(struct coll_sched *s, void *buf, void *tmp, size_t n,
                               coll_sched_fn *merge, void *arg, int *tag);

#endif
