/* The host-wide shared region and the job areas in it (layout and
 * protocols: region.h). */
#include "region.h"
#include "../base/base.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct vmpi_region vmpi_region;

static struct vmpi_region_chunk *table;
static uint32_t nchunks, first_chunk, chunk_shift;
static uint64_t *mystate;   /* expected state of each chunk of our area */
static unsigned lease_ms;
static bool attached;

static void (*lost_hook)(const char *msg); /* the heartbeat found the area gone */
static pthread_t beat_thread;
static pthread_mutex_t beat_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t beat_cv;
static bool beat_stop, beat_running;

/* A random nonzero number, or 0 when the kernel gives none. */
static uint64_t random64(void)
{
    uint64_t v = 0;
    while (!v)
        if (getrandom(&v, sizeof v, 0) != sizeof v && errno != EINTR)
            return 0;
    return v;
}

static int fail(const char *fmt, const char *path, ...) __attribute__((format(printf, 1, 3)));

/* An error code (base/err.c) whose message names the region. */
static int fail(const char *fmt, const char *path, ...)
{
    char msg[MPI_MAX_ERROR_STRING - 64];
    va_list ap;
    va_start(ap, path);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return vmpi_err_make(MPI_ERR_OTHER, "ivshmem region %s%s", path, msg);
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) && errno == EINTR)
        ;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static bool read_hex(const char *dir, const char *name, unsigned long *v)
{
    char path[512], buf[32];
    snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fgets(buf, sizeof buf, f) != NULL;
    fclose(f);
    if (ok)
        *v = strtoul(buf, NULL, 16);
    return ok;
}

/* Inside a real VM the region is BAR2 of QEMU's ivshmem device. */
static bool pci_find(char *out, size_t cap)
{
    DIR *d = opendir("/sys/bus/pci/devices");
    if (!d)
        return false;
    bool found = false;
    for (struct dirent *e; !found && (e = readdir(d));) {
        unsigned long vendor, device;
        if (e->d_name[0] == '.' || !read_hex(e->d_name, "vendor", &vendor) ||
            !read_hex(e->d_name, "device", &device) || vendor != 0x1af4 || device != 0x1110)
            continue;
        found = (size_t)snprintf(out, cap, "/sys/bus/pci/devices/%s/resource2", e->d_name) < cap;
    }
    closedir(d);
    return found;
}

static bool write_header(struct vmpi_region_hdr *h, size_t size)
{
    uint64_t n = size >> VMPI_REGION_CHUNK_SHIFT;
    if (n > (1u << 20))
        n = 1u << 20;
    h->magic = VMPI_REGION_MAGIC;
    h->version = VMPI_REGION_VERSION;
    h->chunk_shift = VMPI_REGION_CHUNK_SHIFT;
    h->size = size;
    h->nchunks = (uint32_t)n;
    uint64_t meta = sizeof *h + n * sizeof(struct vmpi_region_chunk);
    h->first_chunk = (uint32_t)((meta + (1u << VMPI_REGION_CHUNK_SHIFT) - 1) >>
                                VMPI_REGION_CHUNK_SHIFT);
    h->uuid = random64();
    return h->uuid != 0;
}

/* Brings a blank region to READY (or waits for whoever does) and checks
 * the header. */
static int setup_header(void)
{
    struct vmpi_region_hdr *h = (struct vmpi_region_hdr *)vmpi_region.base;
    const char *path = vmpi_region.path;
    uint64_t token = VMPI_REGION_INIT_TAG << 32 | (random64() & 0xffffffffu) | 1;
    uint64_t seen = 0, since = 0;
    for (;;) {
        uint64_t v = atomic_load_explicit(&h->init, memory_order_acquire);
        if (v == VMPI_REGION_READY)
            break;
        if (v != 0 && v >> 32 != VMPI_REGION_INIT_TAG)
            return fail(" is not a vmpi region (bad header)", path);
        if (v != 0 && (v != seen || !since)) {
            seen = v; /* someone is initializing: give them a lease */
            since = now_ms();
        }
        if (v == 0 || now_ms() - since > lease_ms) {
            if (atomic_compare_exchange_strong(&h->init, &v, token)) {
                if (!write_header(h, vmpi_region.size))
                    return fail(": getrandom failed: %s", path, strerror(errno));
                atomic_store_explicit(&h->init, VMPI_REGION_READY, memory_order_release);
                break;
            }
            continue;
        }
        sleep_ms(1);
    }
    if (h->magic != VMPI_REGION_MAGIC)
        return fail(" is not a vmpi region (bad magic)", path);
    if (h->version != VMPI_REGION_VERSION)
        return fail(" has layout version %u; this vmpi uses version %u", path, h->version,
                    VMPI_REGION_VERSION);
    uint32_t shift = h->chunk_shift, n = h->nchunks, first = h->first_chunk;
    uint64_t meta = sizeof *h + (uint64_t)n * sizeof(struct vmpi_region_chunk);
    if (shift < 16 || shift > 30 || n > (1u << 20) || ((uint64_t)n << shift) > vmpi_region.size ||
        first != (meta + (1ull << shift) - 1) >> shift || first >= n)
        return fail(": header describes an impossible layout (%u chunks of 2^%u bytes in %zu "
                    "bytes)",
                    path, n, shift, vmpi_region.size);
    chunk_shift = shift;
    nchunks = n;
    first_chunk = first;
    vmpi_region.uuid = h->uuid ? h->uuid : 1;
    table = (struct vmpi_region_chunk *)(vmpi_region.base + sizeof *h);
    return 0;
}

int vmpi_region_open(bool *found)
{
    const char *env = vmpi_knob_str("VMPI_IVSHMEM_PATH");
    char dev[256];
    *found = false;
    if (!env || !*env) {
        if (!pci_find(dev, sizeof dev))
            return 0;
        env = dev;
    }
    lease_ms = (unsigned)vmpi_knob_num("VMPI_IVSHMEM_LEASE_MS");
    if ((size_t)snprintf(vmpi_region.path, sizeof vmpi_region.path, "%s", env) >=
        sizeof vmpi_region.path)
        return vmpi_err_make(MPI_ERR_OTHER, "VMPI_IVSHMEM_PATH is longer than %zu bytes",
                             sizeof vmpi_region.path - 1);
    int fd = open(env, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return fail(": cannot open: %s", env, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) || st.st_size < (off_t)VMPI_REGION_MIN) {
        close(fd);
        return fail(" is too small (%lld bytes; at least %u MiB)", env, (long long)st.st_size,
                    VMPI_REGION_MIN >> 20);
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED)
        return fail(": cannot map %lld bytes: %s", env, (long long)st.st_size, strerror(e));
    vmpi_region.base = p;
    vmpi_region.size = (size_t)st.st_size;
    *found = true;
    return setup_header();
}

static bool key_is(const struct vmpi_region_chunk *c, const uint64_t key[2])
{
    return c->key[0] == key[0] && c->key[1] == key[1];
}

/* The first chunk of the area published under key, or 0. */
static uint32_t find_head(const uint64_t key[2])
{
    for (uint32_t i = first_chunk; i < nchunks; i++) {
        uint64_t s = atomic_load_explicit(&table[i].state, memory_order_acquire);
        if (VMPI_CHUNK_KIND(s) == VMPI_CHUNK_HEAD && key_is(&table[i], key))
            return i;
    }
    return 0;
}

static void free_chunk(uint32_t i, uint64_t expect)
{
    atomic_compare_exchange_strong(&table[i].state, &expect,
                                   VMPI_CHUNK_STATE(VMPI_CHUNK_GEN(expect) + 1, VMPI_CHUNK_FREE));
}

/* Claims `need` consecutive free chunks; their states (CLAIMING) go to
 * mystate. Returns the first chunk, or 0 if no free run exists. */
static uint32_t claim_run(uint32_t need)
{
    for (uint32_t start = first_chunk; start + need <= nchunks;) {
        uint32_t got = 0;
        for (; got < need; got++) {
            uint32_t i = start + got;
            uint64_t s = atomic_load_explicit(&table[i].state, memory_order_acquire);
            uint64_t to = VMPI_CHUNK_STATE(VMPI_CHUNK_GEN(s) + 1, VMPI_CHUNK_CLAIMING);
            if (VMPI_CHUNK_KIND(s) != VMPI_CHUNK_FREE ||
                !atomic_compare_exchange_strong(&table[i].state, &s, to))
                break;
            mystate[got] = to;
        }
        if (got == need)
            return start;
        for (uint32_t k = 0; k < got; k++)
            free_chunk(start + k, mystate[k]);
        start += got + 1;
    }
    return 0;
}

/* Frees the chunks of jobs whose heartbeat stopped; returns how many. */
static uint32_t reclaim(void)
{
    uint32_t n = nchunks - first_chunk, freed = 0;
    uint64_t *st = malloc(2 * (size_t)n * sizeof *st);
    if (!st)
        return 0;
    for (uint32_t k = 0; k < n; k++) {
        st[2 * k] = atomic_load(&table[first_chunk + k].state);
        st[2 * k + 1] = atomic_load(&table[first_chunk + k].beat);
    }
    sleep_ms(lease_ms);
    for (uint32_t k = 0; k < n; k++) {
        struct vmpi_region_chunk *c = &table[first_chunk + k];
        uint64_t s = st[2 * k];
        if (VMPI_CHUNK_KIND(s) == VMPI_CHUNK_FREE || atomic_load(&c->beat) != st[2 * k + 1])
            continue;
        freed += atomic_compare_exchange_strong(
            &c->state, &s, VMPI_CHUNK_STATE(VMPI_CHUNK_GEN(s) + 1, VMPI_CHUNK_FREE));
    }
    free(st);
    return freed;
}

static void *beat_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&beat_mu);
    while (!beat_stop) {
        for (uint32_t k = 0; k < vmpi_region.count; k++) {
            struct vmpi_region_chunk *c = &table[vmpi_region.head + k];
            if (atomic_load(&c->state) != mystate[k] || !key_is(c, vmpi_region.key)) {
                char msg[MPI_MAX_ERROR_STRING];
                snprintf(msg, sizeof msg, "ivshmem region %s: this job's area (chunk %u of "
                         "%u..%u) was taken over or overwritten by someone else",
                         vmpi_region.path, vmpi_region.head + k, vmpi_region.head,
                         vmpi_region.head + vmpi_region.count - 1);
                pthread_mutex_unlock(&beat_mu);
                lost_hook(msg);
                return NULL;
            }
            atomic_fetch_add(&c->beat, 1);
        }
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        long ns = ts.tv_nsec + (long)(lease_ms / 8) * 1000000L;
        ts.tv_sec += ns / 1000000000L;
        ts.tv_nsec = ns % 1000000000L;
        pthread_cond_timedwait(&beat_cv, &beat_mu, &ts);
    }
    pthread_mutex_unlock(&beat_mu);
    return NULL;
}

static int beat_start(void)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&beat_cv, &ca);
    pthread_condattr_destroy(&ca);
    beat_stop = false;
    if (pthread_create(&beat_thread, NULL, beat_main, NULL))
        return fail(": cannot start the heartbeat thread", vmpi_region.path);
    beat_running = true;
    return 0;
}

static void beat_end(void)
{
    if (!beat_running)
        return;
    pthread_mutex_lock(&beat_mu);
    beat_stop = true;
    pthread_cond_signal(&beat_cv);
    pthread_mutex_unlock(&beat_mu);
    pthread_join(beat_thread, NULL);
    pthread_cond_destroy(&beat_cv);
    beat_running = false;
}

/* The first of the count - 1 entries after entry i that is not a CONT
 * entry naming i (its distance from i), or 0 when the area is whole; the
 * states read go to st[1..count-1] when st is given. i + count must lie
 * inside the table. */
static uint32_t area_break(uint32_t i, uint32_t count, uint64_t *st)
{
    for (uint32_t k = 1; k < count; k++) {
        uint64_t s = atomic_load(&table[i + k].state);
        if (st)
            st[k] = s;
        if (VMPI_CHUNK_KIND(s) != VMPI_CHUNK_CONT || table[i + k].head != i)
            return k;
    }
    return 0;
}

/* Attaches to the area whose first chunk is i, of `need` chunks (checked
 * against the table, which anyone on the host can write). */
static int attach(uint32_t i, uint32_t need)
{
    struct vmpi_region_chunk *h = &table[i];
    uint64_t s = atomic_load_explicit(&h->state, memory_order_acquire);
    uint32_t count = *(volatile uint32_t *)&h->count; /* read once */
    if (VMPI_CHUNK_KIND(s) != VMPI_CHUNK_HEAD || count != need || count > nchunks - i)
        return fail(": job table entry %u is inconsistent", vmpi_region.path, i);
    uint64_t *st = realloc(mystate, count * sizeof *st);
    if (!st)
        return vmpi_err_make(MPI_ERR_NO_MEM, "out of memory");
    mystate = st;
    mystate[0] = s;
    uint32_t k = area_break(i, count, mystate);
    if (k)
        return fail(": job table entry %u is inconsistent", vmpi_region.path, i + k);
    vmpi_region.head = i;
    vmpi_region.count = count;
    vmpi_region.gen = VMPI_CHUNK_GEN(s);
    vmpi_region.area = vmpi_region.base + ((size_t)i << chunk_shift);
    vmpi_region.area_bytes = (size_t)count << chunk_shift;
    attached = true;
    return 0;
}

/* Whether the area whose HEAD is entry i has a live job: its beat moves
 * within a lease (its owners beat 8 times a lease). */
static bool head_alive(uint32_t i)
{
    uint64_t b = atomic_load(&table[i].beat), t0 = now_ms();
    while (now_ms() - t0 < lease_ms + lease_ms / 4) {
        sleep_ms(10);
        if (atomic_load(&table[i].beat) != b)
            return true;
        if (VMPI_CHUNK_KIND(atomic_load(&table[i].state)) != VMPI_CHUNK_HEAD)
            return false;
    }
    return false;
}

/* The first chunk of a live area, other than mine, that a job of trust
 * word `trust` may not share the region with (region.h, Sharing), or 0. */
static uint32_t forbidden_neighbour(uint32_t mine, uint32_t trust)
{
    for (uint32_t i = first_chunk; i < nchunks; i++) {
        uint64_t s = atomic_load_explicit(&table[i].state, memory_order_acquire);
        uint32_t t = table[i].trust;
        if (i == mine || VMPI_CHUNK_KIND(s) != VMPI_CHUNK_HEAD ||
            VMPI_TRUST_DOMAIN(t) == VMPI_TRUST_DOMAIN(trust) || (t & trust & VMPI_TRUST_INTEGRITY))
            continue;
        if (head_alive(i))
            return i;
    }
    return 0;
}

int vmpi_region_join(const uint64_t key[2], uint32_t trust, size_t bytes, bool claimant,
                     void (*init)(char *area, bool fresh, void *arg), void *arg,
                     void (*lost)(const char *msg))
{
    const char *path = vmpi_region.path;
    int rc;
    lost_hook = lost;
    vmpi_region.key[0] = key[0];
    vmpi_region.key[1] = key[1];
    uint64_t need64 = (bytes + (1ull << chunk_shift) - 1) >> chunk_shift;
    if (need64 > nchunks - first_chunk)
        return fail(" is too small for this job: its area needs %llu MiB, the region has %llu "
                    "MiB for job areas (vmpirun --ivshmem-size)",
                    path, (unsigned long long)((need64 << chunk_shift) >> 20),
                    (unsigned long long)(((uint64_t)(nchunks - first_chunk) << chunk_shift) >>
                                         20));
    uint32_t need = (uint32_t)need64;
    if (!claimant) {
        uint64_t t0 = now_ms();
        uint32_t i;
        while (!(i = find_head(key))) {
            if (now_ms() - t0 > 60000 + 4ull * lease_ms)
                return fail(": this job's area did not appear (its claimant died, or the job "
                            "table was overwritten)",
                            path);
            sleep_ms(1);
        }
        if ((rc = attach(i, need)))
            return rc;
        atomic_fetch_add(&table[i].users, 1);
        return beat_start();
    }
    mystate = malloc(need * sizeof *mystate);
    if (!mystate)
        return vmpi_err_make(MPI_ERR_NO_MEM, "out of memory");
    uint32_t start = claim_run(need);
    if (!start) {
        uint32_t freed = reclaim();
        const char *verbose = vmpi_knob_str("VMPI_VERBOSE");
        if (freed && verbose && atoi(verbose) > 0)
            fprintf(stderr, "vmpi: ivshmem region %s: reclaimed %u chunks of dead jobs\n", path,
                    freed);
        start = claim_run(need);
    }
    if (!start) {
        uint32_t used = 0;
        for (uint32_t i = first_chunk; i < nchunks; i++)
            used += VMPI_CHUNK_KIND(atomic_load(&table[i].state)) != VMPI_CHUNK_FREE;
        return fail(" has no room for this job's area (%u MiB): %u of %u MiB are held by live "
                    "jobs (vmpirun --ivshmem-size)",
                    path, (unsigned)((need64 << chunk_shift) >> 20),
                    (unsigned)(((uint64_t)used << chunk_shift) >> 20),
                    (unsigned)(((uint64_t)(nchunks - first_chunk) << chunk_shift) >> 20));
    }
    char *area = vmpi_region.base + ((size_t)start << chunk_shift);
    /* Chunks no job ever held (generation 1 once claimed) are still the
     * blank region's zeros: the area's owners need not clear them, which
     * for the pair rings of many ranks is most of the start-up. */
    bool fresh = true;
    for (uint32_t k = 0; k < need; k++)
        fresh = fresh && VMPI_CHUNK_GEN(mystate[k]) == 1;
    init(area, fresh, arg);
    for (uint32_t k = need; k-- > 0;) {
        struct vmpi_region_chunk *c = &table[start + k];
        c->key[0] = key[0];
        c->key[1] = key[1];
        c->head = start;
        c->count = k ? 0 : need;
        c->trust = k ? 0 : trust;
        if (!k)
            atomic_store(&c->users, 1);
        uint64_t to = VMPI_CHUNK_STATE(VMPI_CHUNK_GEN(mystate[k]), k ? VMPI_CHUNK_CONT
                                                                     : VMPI_CHUNK_HEAD);
        atomic_store_explicit(&c->state, to, memory_order_release);
    }
    if ((rc = attach(start, need)) || (rc = beat_start()))
        return rc;
    /* Checked after publishing and beating: of two claimants at once, each
     * sees the other alive, so neither goes on unseen. */
    uint32_t other = forbidden_neighbour(start, trust);
    if (other) {
        beat_end();
        for (uint32_t k = need; k-- > 0;)
            free_chunk(start + k, mystate[k]);
        attached = false;
        return fail(" holds the area of another live job (chunk %u), which %s: jobs share a "
                    "region only when every one of them checks integrity (VMPI_INTEGRITY=crc32c); "
                    "else give each job a region of its own, as vmpirun does",
                    path, other,
                    table[other].trust & VMPI_TRUST_INTEGRITY ? "checks integrity, this job "
                                                                "does not"
                                                              : "does not check integrity");
    }
    return 0;
}

void vmpi_region_close(void)
{
    beat_end();
    if (attached && atomic_fetch_sub(&table[vmpi_region.head].users, 1) == 1)
        for (uint32_t k = vmpi_region.count; k-- > 0;)
            free_chunk(vmpi_region.head + k, mystate[k]);
    attached = false;
    free(mystate);
    mystate = NULL;
    if (vmpi_region.base)
        munmap(vmpi_region.base, vmpi_region.size);
    vmpi_region = (struct vmpi_region){0};
    table = NULL;
}

bool vmpi_region_area_whole(uint32_t i, uint32_t count)
{
    return table && i >= first_chunk && i < nchunks && count && count <= nchunks - i &&
           !area_break(i, count, NULL);
}

struct vmpi_region_chunk *vmpi_region_table(uint32_t *first, uint32_t *n, unsigned *shift)
{
    *first = first_chunk;
    *n = nchunks;
    *shift = chunk_shift;
    return table;
}

void vmpi_region_hold(struct vmpi_region_chunk *entry)
{
    atomic_fetch_add(&entry->users, 1);
}

void vmpi_region_release(struct vmpi_region_chunk *entry, uint64_t state, uint32_t count)
{
    if (atomic_fetch_sub(&entry->users, 1) != 1)
        return;
    uint32_t head = (uint32_t)(entry - table);
    for (uint32_t k = count; k-- > 0;) {
        uint64_t s = k ? atomic_load(&entry[k].state) : state;
        /* A chunk that is no longer part of this area is someone else's. */
        if (k && (VMPI_CHUNK_KIND(s) != VMPI_CHUNK_CONT || entry[k].head != head))
            continue;
        free_chunk(head + k, s);
    }
}
