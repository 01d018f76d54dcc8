/* Communication coordinator: the per-peer channel table.
 *
 * From the placement, every other world rank gets one channel: the first of
 * the channel list (channel/list.c: smp, ivshmem, ofi) that is allowed and
 * reaches it: smp when it shares this rank's VM, ivshmem when it shares
 * this rank's host region (another VM of the host), else ofi (the
 * network). VMPI_CHANNELS lists the channels allowed (default all);
 * "smp,ofi" sends ranks in different VMs of a host over the virtual
 * network, the locality-unaware baseline, and leaving smp out too sends
 * even ranks of one VM over it. The table is vmpi_locality_peers: sending
 * to a rank is one indexed load and an indirect call. With VMPI_VERBOSE=1
 * rank 0 prints the placement and the channel of every pair at start-up. */
#include "locality.h"
#include "../channel/ivshmem/ivshmem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vmpi_peer *vmpi_locality_peers;
const struct vmpi_peer *vmpi_locality_job_peers;

/* Processes of other jobs, by world rank beyond the job's (dynamic.c's
 * numbering): their job and rank there, and, when a shared-memory channel
 * carries their data, their network address and state on the network
 * channel, which greetings take (vmpi_locality_greet). */
static struct other {
    uint32_t job;
    int rank;
    uint8_t net[VMPI_ADDR_MAX];
    size_t netlen;
    void *netcs;
} *others;
static int nothers;

#define MAX_CHANNELS 8
static struct vmpi_placement place;
static unsigned allowed;  /* bit i: vmpi_channels[i] may be used */
static unsigned started;  /* bit i: vmpi_channels[i] was set up */
static struct vmpi_locality_chan active[MAX_CHANNELS];
static int nactive;

static int nchannels(void)
{
    int n = 0;
    while (vmpi_channels[n])
        n++;
    return n;
}

static void channel_names(char *out, size_t cap)
{
    out[0] = '\0';
    for (int k = 0; vmpi_channels[k]; k++)
        snprintf(out + strlen(out), cap - strlen(out), "%s%s", k ? ", " : "",
                 vmpi_channels[k]->name);
}

static unsigned parse_channels(void)
{
    const char *env = vmpi_knob_str("VMPI_CHANNELS");
    unsigned all = (1u << nchannels()) - 1;
    if (!env || !*env)
        return all;
    unsigned set = 0;
    char buf[256], names[128];
    channel_names(names, sizeof names);
    snprintf(buf, sizeof buf, "%s", env);
    for (char *save = NULL, *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        unsigned c = 0;
        for (int k = 0; vmpi_channels[k]; k++)
            if (!strcmp(t, vmpi_channels[k]->name))
                c = 1u << k;
        if (!c)
            vmpi_fatal("VMPI_CHANNELS=%s: unknown channel \"%s\" (available: %s)", env, t, names);
        set |= c;
    }
    if (!set)
        vmpi_fatal("VMPI_CHANNELS=%s names no channel (available: %s)", env, names);
    return set;
}

/* How world ranks a and b relate: VMPI_REACH_* bits. */
static unsigned relation(int a, int b)
{
    unsigned r = VMPI_REACH_NET;
    if (a >= vmpi_job.size || b >= vmpi_job.size)
        return r;
    if (place.vm_of[a] == place.vm_of[b])
        r |= VMPI_REACH_VM;
    if (place.region[a] && place.region[a] == place.region[b])
        r |= VMPI_REACH_REGION;
    return r;
}

/* The index of the channel between world ranks a and b (a != b) under the
 * policy, or -1. */
static int channel_of(int a, int b)
{
    unsigned rel = relation(a, b);
    for (int k = 0; vmpi_channels[k]; k++)
        if ((allowed & (1u << k)) && (vmpi_channels[k]->reach & rel))
            return k;
    return -1;
}

/* What started channel k says of itself, or NULL. */
static const char *started_line(int k)
{
    const struct vmpi_chan *ch = vmpi_channels[k];
    return (started & (1u << k)) && ch->describe ? ch->describe() : NULL;
}

static void print_table(void)
{
    int n = vmpi_job.size;
    fprintf(stderr, "vmpi: %d ranks; channels", n);
    for (int k = 0, sep = ' '; vmpi_channels[k]; k++)
        if (allowed & (1u << k)) {
            fprintf(stderr, "%c%s", sep, vmpi_channels[k]->name);
            sep = ',';
        }
    for (int k = 0; vmpi_channels[k]; k++) {
        const char *d = started_line(k);
        if (d)
            fprintf(stderr, " (%s)", d);
    }
    fprintf(stderr, "\n");
    for (int r = 0; r < n; r++)
        fprintf(stderr, "vmpi: rank %d: host %d (%s) vm %d pid %d\n", r, place.host_of[r],
                place.hostname[r], place.vm_of[r], place.pid[r]);
    if (n > 64) {
        fprintf(stderr, "vmpi: (channel table omitted for more than 64 ranks)\n");
        return;
    }
    fprintf(stderr, "vmpi: channel from row to column:\nvmpi:     ");
    for (int b = 0; b < n; b++)
        fprintf(stderr, " %7d", b);
    fprintf(stderr, "\n");
    for (int a = 0; a < n; a++) {
        fprintf(stderr, "vmpi: %4d", a);
        for (int b = 0; b < n; b++) {
            int k = a == b ? -1 : channel_of(a, b);
            fprintf(stderr, " %7s", a == b ? "self" : k < 0 ? "none" : vmpi_channels[k]->name);
        }
        fprintf(stderr, "\n");
    }
    fflush(stderr);
}

static void note_pair(int a, int b, unsigned *used, int *lost_a, int *lost_b)
{
    int k = channel_of(a, b);
    if (k >= 0) {
        *used |= 1u << k;
    } else if (*lost_a < 0) {
        *lost_a = a;
        *lost_b = b;
    }
}

/* Which channels some pair of the job uses (every rank computes the same
 * answer), and a pair that no allowed channel reaches (lost_a < 0: none).
 * Ranks of one VM relate alike to everybody, so it looks at each VM's own
 * pairs and at one rank per VM. */
static unsigned channels_used(int *lost_a, int *lost_b)
{
    int n = vmpi_job.size, nvm = 0;
    unsigned used = 0;
    int *first = malloc((size_t)n * sizeof *first);
    if (!first)
        vmpi_fatal("out of memory");
    for (int r = 0; r < n; r++) {
        if (place.vm_of[r] == r)
            first[nvm++] = r;
        else
            note_pair(place.vm_of[r], r, &used, lost_a, lost_b);
    }
    for (int i = 0; i < nvm; i++)
        for (int j = i + 1; j < nvm; j++)
            note_pair(first[i], first[j], &used, lost_a, lost_b);
    free(first);
    return used;
}

/* Sets up channel k: its peers, its group (the ranks within its reach),
 * then its entries of the peer table. */
static void channel_start(int k, const struct vmpi_chan_up *up, bool used)
{
    const struct vmpi_chan *ch = vmpi_channels[k];
    int n = vmpi_job.size, me = vmpi_job.rank;
    int *peers = malloc((size_t)n * sizeof *peers), *group = malloc((size_t)n * sizeof *group);
    if (!peers || !group)
        vmpi_fatal("out of memory");
    struct vmpi_chan_setup s = {.peers = peers, .group = group, .pid = place.pid, .used = used,
                                .job = vmpi_locality_job()};
    for (int r = 0; r < n; r++) {
        if (r == me) {
            s.me = s.ngroup;
            group[s.ngroup++] = r;
            continue;
        }
        if (ch->reach & relation(me, r))
            group[s.ngroup++] = r;
        if (channel_of(me, r) == k)
            peers[s.npeers++] = r;
    }
    ch->init(up, &s);
    started |= 1u << k;
    for (int i = 0; i < s.npeers; i++) {
        struct vmpi_peer *p = &vmpi_locality_peers[peers[i]];
        p->chan = ch;
        p->cstate = ch->add_peer(peers[i], &p->eager_max);
    }
    if (s.npeers)
        active[nactive++] = (struct vmpi_locality_chan){ch, 0};
    free(peers);
    free(group);
}

/* A slow poll (a system call with TCP providers, hundreds of ns) next to
 * shared-memory peers is made on every 16th progress call: it costs
 * network messages a few shared-memory polls (well under their latency)
 * and keeps shared-memory latency at its own level. */
static void set_poll_masks(void)
{
    bool fast = false;
    for (int i = 0; i < nactive; i++)
        fast |= !active[i].chan->slow_poll;
    for (int i = 0; i < nactive; i++)
        active[i].poll_mask = fast && active[i].chan->slow_poll ? 15 : 0;
}

int vmpi_locality_init(const struct vmpi_chan_up *up)
{
    if (nchannels() > MAX_CHANNELS)
        vmpi_fatal("more than %d channels in the channel list", MAX_CHANNELS);
    allowed = parse_channels();
    vmpi_locality_peers = calloc((size_t)vmpi_job.size, sizeof *vmpi_locality_peers);
    vmpi_locality_job_peers = vmpi_locality_peers;
    if (!vmpi_locality_peers)
        vmpi_fatal("out of memory");
    bool region = false;
    for (int k = 0; vmpi_channels[k]; k++)
        region |= (allowed & (1u << k)) && vmpi_channels[k]->reach == VMPI_REACH_REGION;
    vmpi_locality_detect(&place, region);

    int lost_a = -1, lost_b = -1;
    unsigned used = channels_used(&lost_a, &lost_b);
    if (lost_a >= 0)
        vmpi_fatal("rank %d cannot share memory with rank %d and VMPI_CHANNELS=%s gives no "
                   "channel between them (add ofi)",
                   lost_b, lost_a, vmpi_knob_str("VMPI_CHANNELS"));
    /* Set-ups may be collective (PMI barriers), so every rank starts every
     * allowed channel, in list order. */
    for (int k = 0; vmpi_channels[k]; k++)
        if (allowed & (1u << k))
            channel_start(k, up, (used >> k) & 1);
    set_poll_masks();
    const char *verbose = vmpi_knob_str("VMPI_VERBOSE");
    if (vmpi_job.rank == 0 && verbose && atoi(verbose) > 0)
        print_table();
    return 0;
}

int vmpi_locality_active(const struct vmpi_locality_chan **list)
{
    *list = active;
    return nactive;
}

void vmpi_locality_describe(char *out, size_t cap)
{
    char names[128];
    channel_names(names, sizeof names);
    size_t n = (size_t)snprintf(out, cap, "channels built: %s", names);
    const char *sep = "; set up on this rank: ";
    for (int k = 0; vmpi_channels[k] && n < cap; k++) {
        if (!(started & (1u << k)))
            continue;
        const char *d = started_line(k);
        n += (size_t)snprintf(out + n, cap - n, "%s%s%s%s%s", sep, vmpi_channels[k]->name,
                              d ? " (" : "", d ? d : "", d ? ")" : "");
        sep = ", ";
    }
    sep = "; reaching its peers: ";
    for (int i = 0; i < nactive && n < cap; i++) {
        n += (size_t)snprintf(out + n, cap - n, "%s%s", sep, active[i].chan->name);
        sep = ", ";
    }
}

bool vmpi_locality_busy(void)
{
    for (int i = 0; i < nactive; i++)
        if (active[i].chan->busy())
            return true;
    return false;
}

int vmpi_locality_kernel_ranks(void)
{
    int n = 0;
    for (int r = 0; r < vmpi_job.size; r++)
        n += place.kernel_of[r] == place.kernel_of[vmpi_job.rank];
    return n;
}

void vmpi_locality_finalize(void)
{
    for (int k = 0; vmpi_channels[k]; k++)
        if (started & (1u << k))
            vmpi_channels[k]->finalize();
    started = 0;
    nactive = 0;
    if (vmpi_locality_peers != vmpi_locality_job_peers)
        free(vmpi_locality_peers);
    free((void *)vmpi_locality_job_peers);
    vmpi_locality_peers = NULL;
    vmpi_locality_job_peers = NULL;
    free(others);
    others = NULL;
    nothers = 0;
    vmpi_locality_placement_free(&place);
}

/* The allowed channel that shares memory through the host region (none
 * with integrity checks on: the region then carries messages only). */
static bool region_on(int world)
{
    if (world >= vmpi_job.size)
        return false;
    for (int k = 0; vmpi_channels[k]; k++)
        if ((allowed & (1u << k)) && vmpi_channels[k]->reach == VMPI_REACH_REGION)
            return place.region[world] != 0 && !vmpi_ivshmem_integrity();
    return false;
}

int vmpi_locality_shared_id(int world_rank)
{
    if (region_on(world_rank)) {
        /* Every rank of the host can map the region. */
        for (int r = 0; r < world_rank; r++)
            if (place.region[r] == place.region[world_rank])
                return r;
        return world_rank;
    }
    return world_rank < vmpi_job.size ? place.vm_of[world_rank] : world_rank;
}

bool vmpi_locality_shared_region(int world_rank)
{
    return region_on(world_rank);
}

bool vmpi_locality_cslots(const int *worlds, int n, struct vmpi_cslot **slots)
{
    /* The widest reach whose memory holds slots and spans all n ranks. */
    const struct vmpi_chan *best = NULL;
    for (int k = 0; vmpi_channels[k]; k++) {
        const struct vmpi_chan *ch = vmpi_channels[k];
        if (!(started & (1u << k)) || !ch->cslot || ch->reach == VMPI_REACH_NET ||
            (best && best->reach > ch->reach))
            continue;
        bool spans = true;
        for (int i = 1; i < n && spans; i++)
            spans = (relation(worlds[0], worlds[i]) & ch->reach) != 0;
        if (spans && (ch->reach != VMPI_REACH_REGION || place.region[worlds[0]]))
            best = ch;
    }
    if (!best)
        return false;
    for (int i = 0; i < n; i++)
        if (!(slots[i] = best->cslot(worlds[i])))
            return false;
    return true;
}

/* ---- memory placement ------------------------------------------------------ */

/* The started channel whose memory face maps memory across its group (the
 * host region), or NULL. */
static const struct vmpi_chan_mem *shared_face(void)
{
    for (int k = 0; vmpi_channels[k]; k++) {
        const struct vmpi_chan_mem *m = vmpi_channels[k]->mem;
        if ((started & (1u << k)) && m && m->alloc && m->map)
            return m;
    }
    return NULL;
}

/* The active channel whose memory face reaches other hosts' memory, or NULL. */
static const struct vmpi_chan_mem *remote_face(void)
{
    for (int i = 0; i < nactive; i++) {
        const struct vmpi_chan_mem *m = active[i].chan->mem;
        if (m && m->put)
            return m;
    }
    return NULL;
}

void *vmpi_locality_mem_alloc(size_t n)
{
    const struct vmpi_chan_mem *m = shared_face();
    return m ? m->alloc(n) : NULL;
}

bool vmpi_locality_mem_free(void *p)
{
    const struct vmpi_chan_mem *m = shared_face();
    return m && m->free(p);
}

bool vmpi_locality_mem_key(const void *p, size_t n, struct vmpi_mem_key *key)
{
    const struct vmpi_chan_mem *m = shared_face();
    struct vmpi_mem_reg reg;
    if (!m || !m->expose((void *)p, n, &reg))
        return false;
    *key = reg.key;
    return true;
}

void *vmpi_locality_mem_map(int world, const struct vmpi_mem_key *key, uint64_t n)
{
    const struct vmpi_chan_mem *m = shared_face();
    return m && world < vmpi_job.size ? m->map(world, key, n) : NULL;
}

bool vmpi_locality_rdma_on(void)
{
    return remote_face() != NULL;
}

bool vmpi_locality_rdma_to(int world)
{
    const struct vmpi_chan_mem *m = remote_face();
    return m && m->reaches(world);
}

bool vmpi_locality_rdma_expose(void *p, size_t n, struct vmpi_mem_reg *reg)
{
    const struct vmpi_chan_mem *m = remote_face();
    return m && m->expose(p, n, reg);
}

void vmpi_locality_rdma_unexpose(struct vmpi_mem_reg *reg)
{
    remote_face()->unexpose(reg);
}

void vmpi_locality_rdma_put(int world, const void *buf, size_t len,
                            const struct vmpi_mem_key *key, uint64_t off, struct vmpi_xfer *x)
{
    remote_face()->put(world, buf, len, key, off, x);
}

void vmpi_locality_rdma_get(int world, void *buf, size_t len, const struct vmpi_mem_key *key,
                            uint64_t off, struct vmpi_xfer *x)
{
    remote_face()->get(world, buf, len, key, off, x);
}

/* ---- processes of other jobs ------------------------------------------------ */

uint32_t vmpi_locality_job(void)
{
    uint32_t h = 2166136261u; /* FNV-1a of the job id, never 0 */
    for (const char *c = vmpi_job.id; *c; c++)
        h = (h ^ (uint8_t)*c) * 16777619u;
    return h ? h : 1;
}

/* The started channel that reaches other jobs (it greets), or NULL. */
static const struct vmpi_chan *net_chan(int *k)
{
    for (*k = 0; vmpi_channels[*k]; (*k)++)
        if ((started & (1u << *k)) && vmpi_channels[*k]->greet)
            return vmpi_channels[*k];
    return NULL;
}

/* An address for other jobs is one record per started channel that can
 * connect to them, in the channels' order: channel index, length, the
 * channel's own address. A process connecting takes the first channel
 * whose record both have and whose connect accepts, so both ends of a
 * pair choose alike (a shared-memory channel accepts a process of its own
 * VM or host region, and decides from what both ends see alike: the two
 * addresses, or the region). Without a network channel there is none:
 * greetings need one. */
size_t vmpi_locality_address(void *buf, size_t cap)
{
    int net;
    if (!net_chan(&net))
        return 0;
    for (int k = 0; vmpi_channels[k]; k++)
        if ((started & (1u << k)) && vmpi_channels[k]->reach == VMPI_REACH_REGION)
            vmpi_locality_join_alone();
    uint8_t *b = buf;
    size_t n = 0;
    /* The network's record first: it must fit, the others if they do. */
    for (int i = -1; i == -1 || vmpi_channels[i]; i++) {
        int k = i < 0 ? net : i;
        const struct vmpi_chan *ch = vmpi_channels[k];
        if ((i >= 0 && k == net) || !(started & (1u << k)) || !ch->address || n + 2 > cap)
            continue;
        size_t len = ch->address(b + n + 2, cap - n - 2 < 255 ? cap - n - 2 : 255);
        if (!len && k == net)
            return 0;
        if (len) {
            b[n] = (uint8_t)k;
            b[n + 1] = (uint8_t)len;
            n += 2 + len;
        }
    }
    return n;
}

/* Channel k's record in addr (from another job: checked), or NULL. */
static const uint8_t *record(const void *addr, size_t alen, int k, size_t *len)
{
    const uint8_t *b = addr;
    for (size_t i = 0; i + 2 <= alen && (size_t)b[i + 1] <= alen - i - 2; i += 2 + b[i + 1])
        if (b[i] == k) {
            *len = b[i + 1];
            return b + i + 2;
        }
    return NULL;
}

int vmpi_locality_procs(void)
{
    return vmpi_job.size + nothers;
}

/* Polls channel ch from now on (it has a peer now). */
static void activate(const struct vmpi_chan *ch)
{
    for (int i = 0; i < nactive; i++)
        if (active[i].chan == ch)
            return;
    active[nactive++] = (struct vmpi_locality_chan){ch, 0};
    set_poll_masks();
}

int vmpi_locality_connect(uint32_t job, int rank, const void *addr, size_t alen)
{
    if (job == vmpi_locality_job())
        return rank >= 0 && rank < vmpi_job.size ? rank : -1;
    for (int i = 0; i < nothers; i++)
        if (others[i].job == job && others[i].rank == rank)
            return vmpi_job.size + i;
    int net, world = vmpi_job.size + nothers;
    size_t netlen = 0;
    const uint8_t *netrec = net_chan(&net) ? record(addr, alen, net, &netlen) : NULL;
    struct other *o = realloc(others, sizeof *o * (size_t)(nothers + 1));
    others = o ? o : others;
    struct vmpi_peer *p = o ? malloc(sizeof *p * (size_t)(world + 1)) : NULL;
    if (!p)
        vmpi_fatal("out of memory");
    memcpy(p, vmpi_locality_peers, sizeof *p * (size_t)world);
    if (vmpi_locality_peers != vmpi_locality_job_peers)
        free(vmpi_locality_peers);
    vmpi_locality_peers = p;
    if (!netrec || netlen > VMPI_ADDR_MAX)
        return -1;
    /* A channel both addresses have a record of: the other end sees the
     * same two (making this one also sets the channels up for it). */
    uint8_t mine[VMPI_ADDR_MAX];
    size_t minelen = vmpi_locality_address(mine, sizeof mine), len;
    const struct vmpi_chan *ch = NULL;
    for (int k = 0; vmpi_channels[k] && !ch; k++) {
        const uint8_t *rec = record(addr, alen, k, &len);
        if (!rec || !record(mine, minelen, k, &(size_t){0}) || !(started & (1u << k)) ||
            !vmpi_channels[k]->connect)
            continue;
        p[world] = (struct vmpi_peer){.chan = vmpi_channels[k]};
        p[world].cstate = vmpi_channels[k]->connect(world, job, rank, rec, len,
                                                    &p[world].eager_max);
        if (p[world].cstate)
            ch = vmpi_channels[k];
    }
    if (!ch)
        return -1;
    o = &others[nothers++];
    *o = (struct other){job, rank, {0}, netlen, ch == vmpi_channels[net] ? p[world].cstate : NULL};
    memcpy(o->net, netrec, netlen);
    activate(ch);
    return world;
}

void vmpi_locality_name(int world, uint32_t *job, int *rank)
{
    const struct other *o = &others[world - vmpi_job.size];
    *job = o->job;
    *rank = o->rank;
}

void vmpi_locality_greet(int world, uint32_t port, const void *msg, size_t len)
{
    struct other *o = &others[world - vmpi_job.size];
    int net;
    const struct vmpi_chan *ch = net_chan(&net);
    if (!o->netcs) {
        size_t eager;
        /* Its data go over shared memory: the network channel knows it for
         * greetings only. */
        o->netcs = ch->connect(world, o->job, o->rank, o->net, o->netlen, &eager);
        if (!o->netcs)
            vmpi_fatal("rank %d of job %08x cannot be greeted over %s", o->rank, o->job,
                       ch->name);
        activate(ch);
    }
    ch->greet(o->netcs, port, msg, len);
}

size_t vmpi_locality_greeting(uint32_t port, void *msg, size_t cap)
{
    int k;
    const struct vmpi_chan *ch = net_chan(&k);
    return ch ? ch->greeting(port, msg, cap) : 0;
}
