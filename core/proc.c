/* Processes of other jobs: cards, and world ranks for them (proc.h). The
 * network channel (through locality/) reaches them; core's per-peer state
 * grows with them. */
#include "vmpi.h"
#include "../locality/locality.h"

#include <string.h>

bool vmpi_proc_card(struct vmpi_card *c)
{
    memset(c, 0, sizeof *c);
    c->job = vmpi_locality_job();
    c->rank = vmpi_job.rank;
    c->alen = (uint32_t)vmpi_locality_address(c->addr, sizeof c->addr);
    return c->alen != 0;
}

/* Progress polls the channels locality/ started polling since `before`. */
static void poll_new(int before)
{
    const struct vmpi_locality_chan *ch;
    int after = vmpi_locality_active(&ch);
    for (int i = before; i < after; i++)
        vmpi_progress_add(ch[i].chan->poll, ch[i].poll_mask, 0);
}

int vmpi_proc_add(const struct vmpi_card *c)
{
    if (c->job == vmpi_locality_job())
        return c->rank >= 0 && c->rank < vmpi_job.size ? c->rank : -1;
    if (c->alen == 0 || c->alen > sizeof c->addr || c->rank < 0)
        return -1;
    const struct vmpi_locality_chan *ch;
    int before = vmpi_locality_active(&ch);
    int w = vmpi_locality_connect(c->job, c->rank, c->addr, c->alen);
    if (w < 0)
        return -1;
    poll_new(before);
    if (vmpi_p2p_init(vmpi_locality_procs()))
        vmpi_fatal("out of memory");
    return w;
}

int vmpi_proc_count(void)
{
    return vmpi_locality_procs();
}

uint32_t vmpi_proc_job(void)
{
    return vmpi_locality_job();
}

void vmpi_proc_greet(int w, uint32_t port, const void *msg, size_t len)
{
    const struct vmpi_locality_chan *ch;
    int before = vmpi_locality_active(&ch);
    vmpi_locality_greet(w, port, msg, len);
    poll_new(before);
}

size_t vmpi_proc_greeting(uint32_t port, void *msg, size_t cap)
{
    return vmpi_locality_greeting(port, msg, cap);
}

uint64_t vmpi_proc_name(int w)
{
    uint32_t job = vmpi_locality_job();
    int rank = w;
    if (w >= vmpi_job.size)
        vmpi_locality_name(w, &job, &rank);
    return (uint64_t)job << 32 | (uint32_t)rank;
}
