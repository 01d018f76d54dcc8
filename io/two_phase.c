/* Two-phase collective buffering for the collective data accesses (the
 * _all forms, MPI-3.1 13.4.1).
 *
 * A few aggregators do the file I/O of the whole group. The bytes the group
 * accesses, [least offset, greatest end), are split evenly into one file
 * domain per aggregator, each done a window of at most cb_buffer_size
 * bytes per round. In a round every rank sends each aggregator the pieces
 * (file offset, length) of its access that fall in that aggregator's
 * window (alltoall of the sizes, alltoallv of the pieces), and for a write
 * their data (alltoallv); the aggregator copies the data into its window
 * and writes each merged contiguous run with one pwrite (runs with holes
 * between them stay separate writes: no read-modify-write of bytes nobody
 * wrote). For a read it preads the span its pieces cover once and sends
 * every piece back in the order asked. So many small runs per rank become
 * a few large contiguous accesses per aggregator.
 *
 * Aggregators: the lowest rank of each shared-memory domain of the group
 * (a VM, or a host when the ivshmem channel is on: vmpi_locality_shared_id),
 * so the exchange moves data over shared memory into it; on a file system
 * of the machine (below) every rank, since all write into one page cache
 * and one aggregator per VM would do every copy alone (bench/io's 1 KiB
 * strided pattern, 4 ranks: 2-4x faster); the hint cb_nodes asks for
 * fewer (the first domains) or more (then further ranks in order).
 * Hints honoured: cb_nodes, cb_buffer_size (default 16 MiB, 4 MiB on a file
 * system of the machine, where windows that stay in the caches beat large
 * requests: bench/io 10-25 % faster at 16 and 64 MiB per rank), romio_cb_write
 * and romio_cb_read ("disable": each rank does its own access; "enable":
 * two-phase whenever it can; otherwise automatic, below).
 *
 * Automatic: on a file system of the machine (ext4, xfs, btrfs, tmpfs),
 * whose page cache merges neighbouring writes anyway, ranks whose runs are
 * all large (CB_RUN_MIN on average) do their own access: funnelling every
 * byte through one aggregator per VM costs a copy and leaves the other
 * ranks idle (bench/io: 1.4-5.4x faster on 2D blocks of 16 KiB rows and
 * more). Small runs, and shared file systems (NFS, Lustre), keep two-phase.
 *
 * Used when every rank's view keeps its data in file order within one tile
 * ("native"/"internal", not one_tile), outside atomic mode: decided
 * together after one allgather; otherwise each rank does its own access.
 * Either way the ranks agree on the outcome. */
#include "io.h"
#include "../locality/locality.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

enum { CB_DEFAULT = 16 << 20, CB_LOCAL = 4 << 20, CB_RUN_MIN = 16 << 10 };

struct piece {
    int64_t off, len;
};

/* This rank's access: its file ranges in file order, where each starts in
 * its data stream, and the stream itself. */
struct access {
    struct piece *r;
    int64_t *spos;
    size_t n;
    char *data;
};

static int ranges_of(const struct vmpi_file *f, MPI_Offset pos, MPI_Offset len, struct access *a)
{
    size_t cap = 0;
    for (MPI_Offset done = 0; done < len;) {
        MPI_Offset left, off = vmpi_io_byte_of(f, pos + done, &left);
        MPI_Offset n = left < len - done ? left : len - done;
        if (a->n > 0 && a->r[a->n - 1].off + a->r[a->n - 1].len == off) {
            a->r[a->n - 1].len += n;
        } else {
            if (a->n == cap) {
                cap = cap ? 2 * cap : 16;
                struct piece *r = realloc(a->r, cap * sizeof *r);
                int64_t *s = r ? realloc(a->spos, cap * sizeof *s) : NULL;
                if (r)
                    a->r = r;
                if (!s)
                    return ENOMEM;
                a->spos = s;
            }
            a->r[a->n] = (struct piece){off, n};
            a->spos[a->n++] = done;
        }
        done += n;
    }
    return 0;
}

/* The aggregators, in the order their file domains follow each other. */
static int choose_aggregators(const struct vmpi_file *f, int *aggr)
{
    const struct vmpi_comm *c = f->comm;
    int n = 0;
    for (int r = 0; r < c->size; r++) {
        int id = vmpi_locality_shared_id(vmpi_comm_world_rank(c, r)), q = 0;
        while (q < n && vmpi_locality_shared_id(vmpi_comm_world_rank(c, aggr[q])) != id)
            q++;
        if (q == n)
            aggr[n++] = r;
    }
    int64_t want = vmpi_io_hint_int(f, "cb_nodes", f->local_fs ? c->size : n);
    if (want > c->size)
        want = c->size;
    for (int r = 0; n < want && r < c->size; r++) {
        int q = 0;
        while (q < n && aggr[q] != r)
            q++;
        if (q == n)
            aggr[n++] = r;
    }
    return want < n ? (int)want : n;
}

/* The window and the received data's buffer of the last collective access,
 * kept for the next (under the critical section; a concurrent one on
 * another file makes its own): fresh ones each time cost a page fault per
 * 4 KiB, as glibc gives large freed blocks back (bench/io at 4 MiB per
 * rank: 0.7 against 1.4 GB/s written). */
enum { TP_WIN, TP_RDATA, TP_SPARE_MAX = CB_DEFAULT };
static struct {
    char *p;
    size_t cap;
} spare[2];

/* A buffer of at least n bytes (its size in *cap), or NULL. */
static char *buf_take(int k, size_t n, size_t *cap)
{
    char *p = spare[k].p;
    size_t have = spare[k].cap;
    spare[k].p = NULL;
    if (p && have >= n) {
        *cap = have;
        return p;
    }
    free(p);
    p = malloc(n ? n : 1);
    *cap = p ? n : 0;
    return p;
}

static void buf_give(int k, char *p, size_t cap)
{
    if (!spare[k].p && cap <= TP_SPARE_MAX) {
        spare[k].p = p;
        spare[k].cap = cap;
    } else {
        free(p);
    }
}

void vmpi_io_tp_finalize(void)
{
    for (int k = 0; k < 2; k++) {
        free(spare[k].p);
        spare[k].p = NULL;
    }
}

/* State of one collective access. */
struct tp {
    struct vmpi_file *f;
    bool write;
    struct access a;
    int naggr, *aggr, me; /* me: this rank's index among the aggregators, or -1 */
    int64_t gmin, gmax, dom, cb;
    size_t *cur;          /* per aggregator: first range that may reach its next window */
    int *scnt, *sdis, *rcnt, *rdis; /* alltoallv counts (bytes), one per rank */
    struct piece *sp, *rp;          /* pieces sent, received */
    char *sdata, *rdata, *win;
    size_t rcap, wcap;
    /* Data go to and come from the aggregators straight from the stream
     * (a file-order view keeps each window's pieces contiguous there),
     * unless offsets in it overflow alltoallv's ints: through sdata. */
    bool direct;
    int e;                          /* errno of this rank's I/O */
};

static void window(const struct tp *t, int a, int64_t round, int64_t *lo, int64_t *hi)
{
    int64_t dlo = t->gmin + a * t->dom, dhi = dlo + t->dom;
    *lo = dlo + round * t->cb;
    *hi = *lo + t->cb;
    if (*hi > dhi)
        *hi = dhi;
    if (*hi > t->gmax)
        *hi = t->gmax;
}

/* This rank's pieces for every aggregator's window of the round, in
 * t->sp grouped by aggregator, with their sizes and places in bytes
 * (scnt, sdis); returns how many. */
static size_t cut_pieces(struct tp *t, int64_t round)
{
    size_t np = 0;
    struct vmpi_comm *c = t->f->comm;
    memset(t->scnt, 0, sizeof(int) * 2 * c->size); /* counts and displacements */
    for (int a = 0; a < t->naggr; a++) {
        int64_t lo, hi;
        window(t, a, round, &lo, &hi);
        size_t i = t->cur[a];
        while (i < t->a.n && t->a.r[i].off + t->a.r[i].len <= lo)
            i++;
        t->cur[a] = i;
        t->sdis[t->aggr[a]] = (int)(np * sizeof(struct piece));
        for (; i < t->a.n && t->a.r[i].off < hi && lo < hi; i++) {
            int64_t s = t->a.r[i].off > lo ? t->a.r[i].off : lo;
            int64_t e = t->a.r[i].off + t->a.r[i].len < hi ? t->a.r[i].off + t->a.r[i].len : hi;
            t->sp[np++] = (struct piece){s, e - s};
        }
        t->scnt[t->aggr[a]] = (int)(np * sizeof(struct piece)) - t->sdis[t->aggr[a]];
    }
    return np;
}

/* Where in the data stream file byte off (inside one of the ranges) is. */
static char *stream_at(const struct tp *t, int64_t off)
{
    size_t lo = 0, hi = t->a.n;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (t->a.r[mid].off <= off)
            lo = mid;
        else
            hi = mid;
    }
    return t->a.data + t->a.spos[lo] + (off - t->a.r[lo].off);
}

static int cmp_piece(const void *x, const void *y)
{
    const struct piece *a = x, *b = y;
    return a->off < b->off ? -1 : a->off > b->off;
}

/* Aggregator, write: the round's pieces (data at rdata, in order) into the
 * window, then one pwrite per merged run. */
static void aggregate_write(struct tp *t, size_t nr, int64_t lo)
{
    char *d = t->rdata;
    for (size_t k = 0; k < nr; k++) {
        memcpy(t->win + (t->rp[k].off - lo), d, (size_t)t->rp[k].len);
        d += t->rp[k].len;
    }
    qsort(t->rp, nr, sizeof *t->rp, cmp_piece);
    for (size_t k = 0; k < nr && !t->e;) {
        int64_t s = t->rp[k].off, e = s + t->rp[k].len;
        for (k++; k < nr && t->rp[k].off <= e; k++)
            if (t->rp[k].off + t->rp[k].len > e)
                e = t->rp[k].off + t->rp[k].len;
        ssize_t got = vmpi_io_full(t->f->fd, true, t->win + (s - lo), (size_t)(e - s), s);
        if (got < 0)
            t->e = (int)-got;
    }
}

/* Aggregator, read: one pread of the span of the round's pieces, then
 * each piece's bytes into rdata in the order received. */
static void aggregate_read(struct tp *t, size_t nr, int64_t lo)
{
    int64_t s = INT64_MAX, e = 0;
    for (size_t k = 0; k < nr; k++) {
        s = t->rp[k].off < s ? t->rp[k].off : s;
        e = t->rp[k].off + t->rp[k].len > e ? t->rp[k].off + t->rp[k].len : e;
    }
    if (nr > 0 && !t->e) {
        ssize_t got = vmpi_io_full(t->f->fd, false, t->win + (s - lo), (size_t)(e - s), s);
        if (got < 0)
            t->e = (int)-got;
        else
            memset(t->win + (s - lo) + got, 0, (size_t)(e - s - got));
    }
    char *d = t->rdata;
    for (size_t k = 0; k < nr; k++) {
        memcpy(d, t->win + (t->rp[k].off - lo), (size_t)t->rp[k].len);
        d += t->rp[k].len;
    }
}

/* Data bytes in pieces [p, p + bytes/sizeof *p). */
static int data_of(const struct piece *p, int bytes)
{
    int64_t n = 0;
    for (int k = 0; k < bytes / (int)sizeof *p; k++)
        n += p[k].len;
    return (int)n;
}

static int round_trip(struct tp *t, int64_t round)
{
    struct vmpi_comm *c = t->f->comm;
    struct vmpi_dtype *byte = vmpi_dtype_lookup(MPI_BYTE), *i32 = vmpi_dtype_lookup(MPI_INT);
    size_t np = cut_pieces(t, round);
    int rc = vmpi_coll_alltoall(t->scnt, 1, i32, t->rcnt, 1, i32, c);
    int64_t rtot = 0;
    for (int q = 0; q < c->size; q++) {
        t->rdis[q] = (int)rtot;
        rtot += t->rcnt[q];
    }
    size_t nr = (size_t)rtot / sizeof(struct piece);
    struct piece *rp = realloc(t->rp, rtot ? (size_t)rtot : 1);
    if (!rp)
        return vmpi_err_make(MPI_ERR_NO_MEM, "two-phase I/O: out of memory");
    t->rp = rp;
    if (rc == MPI_SUCCESS)
        rc = vmpi_coll_alltoallv(t->sp, t->scnt, t->sdis, byte, t->rp, t->rcnt, t->rdis, byte,
                                 c);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Data counts: what the pieces hold, per rank, both ways. Data go in
     * the pieces' order: the aggregators' order for those sent (not rank
     * order when cb_nodes adds ranks after each domain's first), rank
     * order for those received. */
    int *sdc = t->scnt, *rdc = t->rcnt;
    int64_t rd = 0;
    for (int q = 0; q < c->size; q++) {
        sdc[q] = data_of((struct piece *)((char *)t->sp + t->sdis[q]), t->scnt[q]);
        int rn = data_of((struct piece *)((char *)t->rp + t->rdis[q]), t->rcnt[q]);
        rdc[q] = rn, t->rdis[q] = (int)rd, rd += rn;
    }
    int64_t sd = 0;
    for (int a = 0; a < t->naggr; a++) {
        int q = t->aggr[a];
        const struct piece *first = (struct piece *)((char *)t->sp + t->sdis[q]);
        t->sdis[q] = !t->direct ? (int)sd
                     : sdc[q] ? (int)(stream_at(t, first->off) - t->a.data) : 0;
        sd += sdc[q];
    }
    if ((size_t)rd > t->rcap) {
        free(t->rdata);
        t->rdata = malloc((size_t)rd);
        t->rcap = t->rdata ? (size_t)rd : 0;
        if (!t->rdata)
            return vmpi_err_make(MPI_ERR_NO_MEM, "two-phase I/O: out of memory");
    }
    int64_t lo = 0, hi;
    if (t->me >= 0)
        window(t, t->me, round, &lo, &hi);
    char *sbuf = t->direct ? t->a.data : t->sdata;
    if (t->write) {
        char *d = t->sdata;
        for (size_t k = 0; !t->direct && k < np; d += t->sp[k++].len)
            memcpy(d, stream_at(t, t->sp[k].off), (size_t)t->sp[k].len);
        rc = vmpi_coll_alltoallv(sbuf, sdc, t->sdis, byte, t->rdata, rdc, t->rdis, byte, c);
        if (rc == MPI_SUCCESS && t->me >= 0)
            aggregate_write(t, nr, lo);
    } else {
        if (t->me >= 0)
            aggregate_read(t, nr, lo);
        /* Back the other way: what this rank received it sends. */
        rc = vmpi_coll_alltoallv(t->rdata, rdc, t->rdis, byte, sbuf, sdc, t->sdis, byte, c);
        char *d = t->sdata;
        for (size_t k = 0; !t->direct && rc == MPI_SUCCESS && k < np; d += t->sp[k++].len)
            memcpy(stream_at(t, t->sp[k].off), d, (size_t)t->sp[k].len);
    }
    return rc;
}

static void tp_free(struct tp *t)
{
    free(t->a.r);
    free(t->a.spos);
    free(t->aggr);
    free(t->cur);
    free(t->scnt);
    free(t->sp);
    free(t->rp);
    free(t->sdata);
    buf_give(TP_RDATA, t->rdata, t->rcap);
    if (t->win)
        buf_give(TP_WIN, t->win, t->wcap);
}

/* Sets up t for an access of len stream bytes from pos; false: no memory. */
static bool tp_init(struct tp *t, MPI_Offset pos, MPI_Offset len)
{
    int n = t->f->comm->size;
    t->aggr = malloc(sizeof(int) * n);
    t->scnt = malloc(sizeof(int) * 4 * n);
    if (!t->aggr || !t->scnt || ranges_of(t->f, pos, len, &t->a) != 0)
        return false;
    t->sdis = t->scnt + n, t->rcnt = t->sdis + n, t->rdis = t->rcnt + n;
    t->naggr = choose_aggregators(t->f, t->aggr);
    t->cb = vmpi_io_hint_int(t->f, "cb_buffer_size", t->f->local_fs ? CB_LOCAL : CB_DEFAULT);
    if (t->cb > INT_MAX / 2)
        t->cb = INT_MAX / 2; /* alltoallv counts are ints */
    t->me = -1;
    for (int a = 0; a < t->naggr; a++)
        if (t->aggr[a] == t->f->comm->rank)
            t->me = a;
    int64_t most = (int64_t)t->naggr * t->cb;
    t->cur = calloc((size_t)t->naggr, sizeof *t->cur);
    t->sp = malloc((t->a.n + (size_t)t->naggr) * sizeof *t->sp);
    t->direct = len <= INT_MAX;
    t->sdata = t->direct ? NULL : malloc((size_t)(len < most ? len : most));
    t->rdata = buf_take(TP_RDATA, 0, &t->rcap);
    t->win = t->me >= 0 ? buf_take(TP_WIN, (size_t)t->cb, &t->wcap) : NULL;
    return t->cur && t->sp && (t->direct || t->sdata) && t->rdata && (t->me < 0 || t->win);
}

/* The whole exchange, once every rank has agreed to it: gmin..gmax. */
static int two_phase(struct tp *t, int64_t gmin, int64_t gmax)
{
    t->gmin = gmin, t->gmax = gmax;
    t->dom = (gmax - gmin + t->naggr - 1) / t->naggr;
    int64_t rounds = (t->dom + t->cb - 1) / t->cb;
    int rc = MPI_SUCCESS;
    for (int64_t r = 0; r < rounds && rc == MPI_SUCCESS; r++)
        rc = round_trip(t, r);
    return rc;
}

/* Whether automatic collective buffering wants two-phase for this rank. */
static bool wants_two_phase(const struct vmpi_file *f, const struct access *a, int64_t total)
{
    return a->n > 0 && (!f->local_fs || total / (int64_t)a->n < CB_RUN_MIN);
}

int vmpi_io_rw_all(struct vmpi_file *f, bool write, MPI_Offset offset, void *buf,
                   MPI_Count count, struct vmpi_dtype *dt, MPI_Count *done, MPI_Count *bytes,
                   const char *fn)
{
    struct vmpi_comm *c = f->comm;
    MPI_Offset total = f->rep ? 0 : count * vmpi_io_stream_size(f, dt), pos = offset * f->esize;
    const char *cbh = f->hints ? vmpi_info_find(f->hints, write ? "romio_cb_write"
                                                               : "romio_cb_read") : NULL;
    /* Converted accesses (a user's representation) are each rank's own. */
    bool able = !f->atomic && !f->ext32 && !f->rep && !f->one_tile &&
                (f->fsize > 0 || total == 0) && !(cbh && !strcmp(cbh, "disable")) && c->size > 1;
    MPI_Offset size;
    if (able && !write && total > 0) { /* reads stop at the end of the file */
        able = vmpi_io_get_size(f, &size, fn) == MPI_SUCCESS;
        MPI_Offset in = able ? vmpi_io_stream_before(f, size) - pos : 0;
        total = in < 0 ? 0 : in < total ? in : total;
    }
    struct tp t = {.f = f, .write = write};
    able = able && tp_init(&t, pos, total);
    /* The data stream: the buffer itself, or packed. */
    bool contig = vmpi_dtype_is_contig(dt);
    char *tmp = able && !contig && total > 0 ? malloc((size_t)total) : NULL;
    able = able && (contig || total == 0 || tmp);
    t.a.data = contig ? vmpi_dtype_addr(buf, vmpi_dtype_true_lb(dt)) : tmp;
    /* me[0]: 0 unable, 1 able, 3 able and wanting two-phase */
    bool want = able && ((cbh && !strcmp(cbh, "enable")) || wants_two_phase(f, &t.a, total));
    int64_t me[3] = {able ? 1 + 2 * want : 0, t.a.n ? t.a.r[0].off : INT64_MAX,
                     t.a.n ? t.a.r[t.a.n - 1].off + t.a.r[t.a.n - 1].len : 0};
    int64_t *all = malloc(sizeof(int64_t) * 3 * c->size);
    int rc = all ? vmpi_coll_allgather(me, all, 3, vmpi_dtype_lookup(MPI_INT64_T), c)
                 : vmpi_err_make(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    int64_t gmin = INT64_MAX, gmax = 0;
    bool wanted = false;
    for (int q = 0; rc == MPI_SUCCESS && q < c->size; q++) {
        able = able && all[3 * q];
        wanted = wanted || all[3 * q] == 3;
        gmin = all[3 * q + 1] < gmin ? all[3 * q + 1] : gmin;
        gmax = all[3 * q + 2] > gmax ? all[3 * q + 2] : gmax;
    }
    free(all);
    if (rc != MPI_SUCCESS || !able || !wanted) {
        free(tmp);
        tp_free(&t);
        if (rc != MPI_SUCCESS)
            return rc;
        return vmpi_io_agree(c, vmpi_io_rw(f, write, offset, buf, count, dt, done, bytes, fn),
                             fn);
    }
    if (tmp && write)
        vmpi_dtype_pack(tmp, buf, count, dt, 0, (size_t)total);
    if (gmax > gmin)
        rc = two_phase(&t, gmin, gmax);
    if (tmp && !write && rc == MPI_SUCCESS)
        vmpi_dtype_unpack(buf, count, dt, 0, tmp, (size_t)total);
    free(tmp);
    int local = rc;
    if (local == MPI_SUCCESS && t.e)
        local = vmpi_io_errno(t.e, "%s: %s '%s' (two-phase, as aggregator %d)", fn,
                              write ? "writing" : "reading", f->name, t.me);
    tp_free(&t);
    *done = *bytes = local == MPI_SUCCESS ? total : 0;
    return vmpi_io_agree(c, local, fn);
}
