/* Buffered sends (MPI-3.1 3.6): MPI_Bsend copies the message into the
 * buffer the user attached and returns; the copy is sent as an ordinary
 * standard-mode send of packed bytes, so the receiver sees no difference.
 *
 * Layout: each message takes one segment of the buffer, a header followed
 * by its packed bytes, rounded up to 8 bytes; segments are kept in address
 * order and a new one goes into the first gap that fits. A segment is
 * reclaimed once its send has completed (the data has left the buffer).
 * The send frees itself when it completes (as a request the user freed
 * does), so one still under way at MPI_Finalize goes with the flush there,
 * and its cookie going stale tells that it is done. Space is reclaimed
 * at the next buffered send, in MPI_Buffer_detach, and by a progress poller
 * that runs while any buffered message is in flight. While one is, the
 * asynchronous progress helper is wanted, so buffered messages keep moving
 * when the application makes no MPI call; MPI_Buffer_detach and
 * MPI_Finalize wait for all of them.
 *
 * Per message this costs at most sizeof(struct bseg) + 7 bytes beyond its
 * packed size, plus 7 for aligning the buffer's start: within
 * MPI_BSEND_OVERHEAD, so a buffer sized as the standard says always holds
 * the messages it was sized for. */
#include "vmpi.h"

#include <stdint.h>

struct bseg {
    struct bseg *next; /* next segment in the buffer, by address */
    size_t size;       /* bytes of the buffer it takes, itself included */
    uint64_t cookie;   /* names the send of its bytes while that is under way */
};
static_assert(sizeof(struct bseg) + 2 * 7 <= MPI_BSEND_OVERHEAD,
              "a buffered message fits in its size plus MPI_BSEND_OVERHEAD");

static struct {
    void *user;            /* what MPI_Buffer_attach got, for detach */
    size_t user_size;
    char *base, *end;      /* the 8-aligned part of it */
    struct bseg *head;
    bool polling;          /* bsend_poll is registered */
} bs;

static size_t round8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

/* Frees the segments whose sends are done; returns how many. */
static int reclaim(void)
{
    int n = 0;
    for (struct bseg **pp = &bs.head, *s; (s = *pp);) {
        if (vmpi_req_from_cookie(s->cookie)) {
            pp = &s->next;
            continue;
        }
        *pp = s->next;
        n++;
    }
    return n;
}

static int bsend_poll(void)
{
    int n = reclaim();
    if (!bs.head) {
        vmpi_progress_remove(bsend_poll);
        vmpi_async_want_for(VMPI_ASYNC_BSEND, false);
        bs.polling = false;
    }
    return n;
}

int vmpi_bsend_attach(void *buf, size_t size)
{
    if (bs.user)
        return MPI_ERR_BUFFER;
    uintptr_t a = ((uintptr_t)buf + 7) & ~(uintptr_t)7;
    bs.user = buf;
    bs.user_size = size;
    bs.base = (char *)a;
    bs.end = a - (uintptr_t)buf <= size ? (char *)buf + size : bs.base;
    bs.head = NULL;
    return MPI_SUCCESS;
}

void vmpi_bsend_attached(void **buf, size_t *size)
{
    *buf = bs.user;
    *size = bs.user_size;
}

struct vmpi_req *vmpi_bsend_req(void)
{
    struct vmpi_req *r = vmpi_req_alloc(VMPI_REQ_SEND);
    r->done = 1;
    return r;
}

void vmpi_bsend_detach(void **buf, size_t *size)
{
    while (bs.head) {
        vmpi_progress();
        reclaim();
    }
    *buf = bs.user;
    *size = bs.user_size;
    bs.user = NULL;
    bs.user_size = 0;
    bs.base = bs.end = NULL;
}

/* The first gap of at least need bytes, or NULL; *prev is the segment
 * before it (NULL: at the start). */
static char *find_gap(size_t need, struct bseg **prev)
{
    char *at = bs.base;
    *prev = NULL;
    for (struct bseg *s = bs.head; s; s = s->next) {
        if ((size_t)((char *)s - at) >= need)
            return at;
        at = (char *)s + s->size;
        *prev = s;
    }
    return (size_t)(bs.end - at) >= need ? at : NULL;
}

/* Free bytes in total and in the largest gap, for the error message. */
static void free_space(size_t *total, size_t *largest)
{
    char *at = bs.base;
    *total = *largest = 0;
    for (struct bseg *s = bs.head;; s = s->next) {
        size_t gap = (size_t)((s ? (char *)s : bs.end) - at);
        *total += gap;
        if (gap > *largest)
            *largest = gap;
        if (!s)
            return;
        at = (char *)s + s->size;
    }
}

static int no_room(const char *fn, struct vmpi_comm *c, size_t len)
{
    if (!bs.user)
        return vmpi_err(c, MPI_ERR_BUFFER,
                        "%s: no buffer is attached (MPI_Buffer_attach) for a %zu-byte "
                        "buffered message",
                        fn, len);
    size_t total, largest;
    free_space(&total, &largest);
    return vmpi_err(c, MPI_ERR_BUFFER,
                    "%s: a %zu-byte message needs %zu bytes of the attached buffer (its "
                    "size plus at most MPI_BSEND_OVERHEAD = %d); the %zu-byte buffer has %zu "
                    "bytes free (largest free block %zu) while earlier buffered messages are "
                    "still being sent",
                    fn, len, round8(sizeof(struct bseg) + len), MPI_BSEND_OVERHEAD,
                    bs.user_size, total, largest);
}

int vmpi_bsend(const char *fn, const void *buf, MPI_Count count, struct vmpi_dtype *dt,
               int dest, int tag, struct vmpi_comm *c)
{
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    size_t len = (size_t)count * (size_t)vmpi_dtype_size(dt);
    size_t need = round8(sizeof(struct bseg) + len);
    struct bseg *prev;
    char *at = NULL;
    if (bs.user) {
        reclaim();
        if (!(at = find_gap(need, &prev))) {
            vmpi_progress();
            reclaim();
            at = find_gap(need, &prev);
        }
    }
    if (!at)
        return no_room(fn, c, len);
    struct bseg *s = (struct bseg *)at;
    char *data = at + sizeof *s;
    vmpi_dtype_pack(data, buf, count, dt, 0, len);
    struct vmpi_req *r;
    vmpi_p2p_isend(data, (MPI_Count)len, vmpi_dtype_get(MPI_BYTE), dest, tag, c, 0,
                   VMPI_MODE_STD, &r);
    if (r->done) { /* gone already (eager, room in the channel) */
        vmpi_req_free(r);
        return MPI_SUCCESS;
    }
    r->user_freed = 1;
    s->cookie = vmpi_req_cookie(r);
    s->size = need;
    s->next = prev ? prev->next : bs.head;
    if (prev)
        prev->next = s;
    else
        bs.head = s;
    if (!bs.polling) {
        bs.polling = true;
        vmpi_progress_add(bsend_poll, 63, 0);
        vmpi_async_want_for(VMPI_ASYNC_BSEND, true);
    }
    return MPI_SUCCESS;
}
