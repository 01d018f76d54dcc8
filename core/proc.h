/* Processes of other jobs (core/proc.c, vmpi_proc_): what MPI_Comm_connect,
 * accept, spawn and join build on. A card names a process to any job: its
 * job, its rank there and its network address; adding a card gives the
 * process a world rank after the job's own, which communicators' groups
 * then hold like any other. */
#ifndef VMPI_CORE_PROC_H
#define VMPI_CORE_PROC_H

#include "../channel/chan.h"

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vmpi_card {
    uint32_t job;
    int32_t rank;
    uint32_t alen; /* bytes of addr in use */
    uint8_t addr[VMPI_ADDR_MAX];
};
static_assert(sizeof(struct vmpi_card) == 64, "a card is 64 bytes");

/* This process's card; false when no channel reaches other jobs (the card
 * then names it within its own job only). */
bool vmpi_proc_card(struct vmpi_card *c);
/* The world rank of the process a card names (cards from another job are
 * untrusted: checked here), or -1 when it cannot be reached. */
int vmpi_proc_add(const struct vmpi_card *c);
/* World ranks in use: the job's and those added. */
int vmpi_proc_count(void);
/* This job's name for other jobs (the `job` of its cards). */
uint32_t vmpi_proc_job(void);
/* The first words to world rank w of another job, under port number
 * `port` (at most 256 bytes), and a greeting that arrived for `port`
 * (copied into msg; its length, 0 while none has). */
void vmpi_proc_greet(int w, uint32_t port, const void *msg, size_t len);
size_t vmpi_proc_greeting(uint32_t port, void *msg, size_t cap);
/* A name of world rank w that every job gives it alike: its job, then its
 * rank there. */
uint64_t vmpi_proc_name(int w);
/* Whether world rank w is a process of another job. */
static inline bool vmpi_proc_other(int w)
{
    return w >= vmpi_job.size;
}
/* Whether any of the n world ranks is a process of another job. */
static inline bool vmpi_proc_any_other(const int *world, int n)
{
    for (int r = 0; r < n; r++)
        if (vmpi_proc_other(world[r]))
            return true;
    return false;
}

#endif
