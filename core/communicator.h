/* Groups (core/group.c, vmpi_group_) and the communicator object
 * (core/comm.c, vmpi_comm_): what every layer above reads of a
 * communicator. Building communicators is comm/'s (comm/comm.h). */
#ifndef VMPI_CORE_COMMUNICATOR_H
#define VMPI_CORE_COMMUNICATOR_H

#include "../base/base.h"
#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
    /* Whom point-to-point ranks name: the group, or an intercommunicator's
     * remote group. `local`: an intercommunicator's private
     * intracommunicator over its local group (comm/inter.c), else NULL. */
    struct vmpi_group *peers;
    struct vmpi_comm *local;
    MPI_Errhandler errh;
    int errh_obj;  /* the handle a user error handler gets: this one, or its window's */
    struct vmpi_attr *attrs; /* cached attributes, newest first (core/attr.h) */
    int topo;      /* MPI_UNDEFINED or MPI_CART */
    int ndims;
    int *dims, *periods;
    char name[MPI_MAX_OBJECT_NAME];
    void *slot[VMPI_COMM_SLOTS]; /* the layers' own data (vmpi_comm_slot_new) */
};

struct vmpi_comm *vmpi_comm_get(MPI_Comm h); /* NULL: invalid */
struct vmpi_group *vmpi_group_get(MPI_Group h);
/* The world rank of rank r of c's point-to-point (remote, on an
 * intercommunicator) group. */
static inline int vmpi_comm_world_rank(const struct vmpi_comm *c, int r)
{
    return c->peers->world[r];
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
/* Makes c (just made by vmpi_comm_new) an intercommunicator: it takes the
 * reference on `remote` and owns `local`, whose handle goes away. */
/* An intercommunicator's private local communicator may take the
 * intercommunicator's id with this bit set instead of agreeing on one of
 * its own (comm/inter.c says why): a twin id. It holds the plain id until
 * the twin goes, so the id outlives requests that still use the twin. */
#define VMPI_CTX_TWIN (1u << 30)
void vmpi_comm_make_inter(struct vmpi_comm *c, struct vmpi_group *remote,
                          struct vmpi_comm *local);
/* Context ids: this process's bitmap of free ids (bit i of word w: id
 * 2 * (32 w + i) is free), and instance numbers (see comm/comm.c). */
#define VMPI_CTX_WORDS 64
void vmpi_comm_ctx_free(uint32_t mask[VMPI_CTX_WORDS]);
/* The last VMPI_CTX_NB_WORDS words of ids are MPI_Comm_idup's
 * (comm/idup.c): vmpi_comm_ctx_free reports none of them, so a blocking
 * constructor never picks one an idup may be agreeing on meanwhile;
 * vmpi_comm_ctx_free_nb reports those free (word 0: the region's first). */
#define VMPI_CTX_NB_WORDS 16
void vmpi_comm_ctx_free_nb(uint32_t mask[VMPI_CTX_NB_WORDS]);
/* Under MPI_THREAD_MULTIPLE, agreements on context ids that run at once in
 * several threads take turns with the free bitmap: the one with the lowest
 * key (the parent's context id, then a tag) among those running offers the
 * free ids, the others offer none; an agreement that found no id because a
 * member lacked the turn passes the turn on and runs again. */
struct vmpi_ctx_turn {
    uint64_t key;
    struct vmpi_ctx_turn *next;
};
void vmpi_comm_ctx_turn_begin(struct vmpi_ctx_turn *t, uint64_t key);
/* Fills mask as vmpi_comm_ctx_free when it is t's turn (always without
 * MULTIPLE), else with zeros; returns 1 when t lacks the turn. */
uint32_t vmpi_comm_ctx_offer(struct vmpi_ctx_turn *t, uint32_t mask[VMPI_CTX_WORDS]);
/* Between rounds: drops t's turn and polls, so the holder can run. */
void vmpi_comm_ctx_turn_pass(struct vmpi_ctx_turn *t);
void vmpi_comm_ctx_turn_end(struct vmpi_ctx_turn *t);
/* The ids an agreement among this process alone may take at once, without
 * a turn: the free ones the turn's holder has not offered (it keeps some
 * back); false when there are none. Such agreements (MPI_COMM_SELF's dup)
 * are often made under a lock of the program's own, so waiting for the turn
 * could wait for a thread that waits for that lock. */
bool vmpi_comm_ctx_free_alone(uint32_t mask[VMPI_CTX_WORDS]);
/* Marks id ctx as taken (on) or free again before a communicator takes it. */
void vmpi_comm_ctx_hold(uint32_t ctx, bool on);
uint32_t vmpi_comm_inst_seen(void);
void vmpi_comm_inst_saw(uint32_t inst);

#endif
