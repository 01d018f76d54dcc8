/*
 * vmpi-bfs - Graph500-style breadth-first search on a Kronecker graph.
 *
 * Follows the Graph500 benchmark specification (graph500.org, BFS kernel 2):
 * an R-MAT/Kronecker graph of 2^SCALE vertices (-n SCALE) and edge factor
 * 16, initiator A=0.57, B=0.19, C=0.19, D=0.05, vertex labels randomly
 * permuted; -i BFS roots per repetition, chosen at random among vertices with
 * a neighbour other than themselves; each search yields a parent array that
 * is validated by the specification's five rules. The rate is in MTEPS:
 * the input edges in the searched components, summed over the roots of a
 * repetition, per second of the median repetition.
 *
 * Generation: edge k's endpoints come from a counter-based hash of k, so
 * every rank generates its own contiguous slice of the edge list and the
 * graph does not depend on the rank count; the relabelling is a bijective
 * mix of SCALE-bit integers. Vertices are block-distributed (uneven when the
 * rank count does not divide 2^SCALE); each edge goes to both endpoints'
 * owners with MPI_Alltoall (counts) + MPI_Alltoallv, and each rank builds a
 * CSR of its vertices (self-loops and duplicate edges stay, as allowed).
 *
 * BFS: level-synchronous top-down. Per level each rank scans its frontier's
 * adjacency, claims its own unvisited children directly and sends
 * (child, parent) pairs to the other children's owners (MPI_Alltoall counts
 * + MPI_Alltoallv); an owner takes the first parent offered to an unvisited
 * child. MPI_Allreduce of the next frontier's size ends the search.
 *
 * Verification, after timing, by a fresh search from each root: (1) the
 * parent array is a tree rooted at the root (levels by distributed pointer
 * chasing; a cycle or an unvisited parent fails), (2) tree edges join levels
 * differing by one, (3) every edge of the generated edge list (not the CSR)
 * joins levels differing by at most one, (4) no edge joins a visited and an
 * unvisited vertex, (5) every (vertex, parent) is an edge of the CSR. All
 * roots are validated up to SCALE 16, the first 8 above. The visited count
 * must match the timed searches and, up to SCALE 18, a serial union-find of
 * the whole edge list on rank 0, which also checks the TEPS edge count.
 */
#include "app_common.h"

#include <limits.h>
#include <unistd.h>

static const struct app_info APP = {
    "bfs",
    "  -n SCALE graph of 2^SCALE vertices and 16 x 2^SCALE edges (default 12)\n"
    "  -i ROOTS BFS roots per repetition (default 8; Graph500 uses 64)\n",
    12, 8, 5};

typedef long long i64;

/* A (child, parent) or (vertex, neighbour) pair; sent as two MPI_LONG_LONG. */
typedef struct {
    i64 a, b;
} pair;

#define EDGE_FACTOR 16
#define MAX_SCALE 25           /* 2 x 16 x 2^25 directed edges still fit int counts */
#define VALIDATE_ALL_SCALE 16  /* above this, validate only the first roots */
#define VALIDATE_FEW 8
#define REFERENCE_SCALE 18     /* serial union-find up to this scale */
#define MAX_SEARCHES (1 << 24) /* -i x -r: per-search arrays, int counts */
#define SEED 0x5eed0f6b0f500ULL

static const uint64_t RELABEL_K[6] = {0x9e3779b97f4a7c15ULL, 0x3c6ef372fe94f82aULL,
                                      0xbb67ae8584caa73bULL, 0xdaa66d2c7ddf743fULL,
                                      0x510e527fade682d1ULL, 0x1f83d9abfb41bd6bULL};
static const uint64_t ROOTS_K[6] = {0xa54ff53a5f1d36f1ULL, 0x5be0cd19137e2179ULL,
                                    0x6a09e667f3bcc909ULL, 0x9b05688c2b3e6c1fULL,
                                    0xcbbb9d5dc1059ed9ULL, 0x629a292a367cd507ULL};

/* A strong 64-bit mixer (splitmix64's finalizer): hash of a counter. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/*
 * A bijection of [0, 2^scale): three rounds of multiply by an odd constant,
 * xorshift right and add, each invertible modulo 2^scale.
 */
static i64 scramble(uint64_t x, int scale, const uint64_t k[6])
{
    uint64_t mask = (1ULL << scale) - 1;
    int h = (scale + 1) / 2;

    for (int r = 0; r < 3; r++) {
        x = (x * (k[2 * r] | 1)) & mask;
        x ^= x >> h;
        x = (x + k[2 * r + 1]) & mask;
    }
    return (i64)x;
}

/*
 * Edge k of the list: SCALE recursive quadrant choices with probabilities
 * A, B, C, D (32-bit draws from a hash of k), then the relabelling.
 */
static void kron_edge(uint64_t k, int scale, i64 *u, i64 *v)
{
    const uint32_t ta = (uint32_t)(0.57 * 4294967296.0);
    const uint32_t tb = (uint32_t)(0.76 * 4294967296.0);
    const uint32_t tc = (uint32_t)(0.95 * 4294967296.0);
    uint64_t key = mix64(SEED ^ mix64(k)), r = 0, a = 0, b = 0;

    for (int l = 0; l < scale; l++) {
        uint32_t x;

        if ((l & 1) == 0)
            r = mix64(key + (uint64_t)(l + 1) * 0x9e3779b97f4a7c15ULL);
        x = (uint32_t)((l & 1) ? r : r >> 32);
        a <<= 1;
        b <<= 1;
        if (x >= tc) {
            a |= 1;
            b |= 1;
        } else if (x >= tb) {
            a |= 1;
        } else if (x >= ta) {
            b |= 1;
        }
    }
    *u = scramble(a, scale, RELABEL_K);
    *v = scramble(b, scale, RELABEL_K);
}

static int cmp_i64(const void *a, const void *b)
{
    i64 x = *(const i64 *)a, y = *(const i64 *)b;

    return (x > y) - (x < y);
}

/* Index of x in the sorted a[0..n), or -1. */
static i64 find_sorted(const i64 *a, i64 n, i64 x)
{
    i64 lo = 0, hi = n;

    while (lo < hi) {
        i64 mid = lo + (hi - lo) / 2;

        if (a[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && a[lo] == x ? lo : -1;
}

/* Grows a buffer to hold n elements (extra room so later levels rarely realloc). */
static void *grow(void *p, size_t *cap, size_t n, size_t esize)
{
    size_t c;

    if (n <= *cap && p != NULL)
        return p;
    c = n + n / 2 + 16;
    if (c > SIZE_MAX / esize)
        app_fail(&APP, "buffer of %zu x %zu bytes overflows", c, esize);
    p = realloc(p, c * esize);
    if (p == NULL)
        app_fail(&APP, "out of memory (%zu bytes)", c * esize);
    *cap = c;
    return p;
}

/* 1D block distribution of n items: the first `rem` ranks get one more. */
struct dist {
    int nranks, rank;
    i64 n, base, rem, big; /* big: items held by the first rem ranks */
    i64 lo, nloc;          /* this rank's block */
};

static void dist_init(struct dist *d, i64 n, int nranks, int rank)
{
    d->nranks = nranks;
    d->rank = rank;
    d->n = n;
    d->base = n / nranks;
    d->rem = n % nranks;
    d->big = d->rem * (d->base + 1);
    d->lo = rank * d->base + (rank < d->rem ? rank : d->rem);
    d->nloc = d->base + (rank < d->rem);
}

static int owner(const struct dist *d, i64 v)
{
    return (int)(v < d->big ? v / (d->base + 1) : d->rem + (v - d->big) / d->base);
}

/* Counts and displacements of one all-to-all exchange ("s" out, "r" in). */
struct xch {
    int *scnt, *sdsp, *rcnt, *rdsp, *fill;
};

static void xch_init(struct xch *x, int nranks)
{
    x->scnt = app_alloc(&APP, (size_t)nranks, sizeof(int));
    x->sdsp = app_alloc(&APP, (size_t)nranks, sizeof(int));
    x->rcnt = app_alloc(&APP, (size_t)nranks, sizeof(int));
    x->rdsp = app_alloc(&APP, (size_t)nranks, sizeof(int));
    x->fill = app_alloc(&APP, (size_t)nranks, sizeof(int));
}

static void xch_free(struct xch *x)
{
    free(x->scnt);
    free(x->sdsp);
    free(x->rcnt);
    free(x->rdsp);
    free(x->fill);
}

/* Displacements from counts; the total must fit an int (MPI counts). */
static int displs(const int *cnt, int *dsp, int n)
{
    i64 t = 0;

    for (int i = 0; i < n; i++) {
        dsp[i] = (int)t;
        t += cnt[i];
    }
    if (t > INT_MAX)
        app_fail(&APP, "exchange of %lld elements exceeds an int count", t);
    return (int)t;
}

/* Zeroes the send counts and sets fill[] to the send displacements. */
static int xch_layout(struct xch *x, int nranks)
{
    int n = displs(x->scnt, x->sdsp, nranks);

    memcpy(x->fill, x->sdsp, (size_t)nranks * sizeof(int));
    return n;
}

/*
 * Sends sbuf laid out by scnt/sdsp: MPI_Alltoall of the counts, then
 * MPI_Alltoallv into rbuf, grown as needed and returned; *nr = elements received.
 */
static void *exchange(struct xch *x, int nranks, const void *sbuf, void *rbuf, size_t *rcap,
                      size_t esize, MPI_Datatype type, int *nr)
{
    MPI_Alltoall(x->scnt, 1, MPI_INT, x->rcnt, 1, MPI_INT, MPI_COMM_WORLD);
    *nr = displs(x->rcnt, x->rdsp, nranks);
    rbuf = grow(rbuf, rcap, (size_t)*nr, esize);
    MPI_Alltoallv(sbuf, x->scnt, x->sdsp, type, rbuf, x->rcnt, x->rdsp, type, MPI_COMM_WORLD);
    return rbuf;
}

struct graph {
    struct dist d;
    int scale;
    i64 nedges;            /* global edge count, 16 x 2^scale */
    i64 *off, *adj;        /* CSR of the owned vertices; each list sorted */
    MPI_Datatype pair_type;
    /* Validation of the edge list: this rank's slice as indices into ghost[] */
    i64 nslice, nghost, *ghost;
    uint32_t *eidx;
    struct xch gx;         /* ghost level exchange: s = my ghosts, r = asked of me */
    i64 *greq;             /* owned vertices other ranks hold as ghosts */
    int ngreq;
};

/* Sends every edge to both endpoints' owners and builds the CSR. */
static void build_graph(struct graph *g, pair *slice)
{
    struct dist *d = &g->d;
    struct xch x;
    pair *sbuf, *rbuf = NULL;
    size_t rcap = 0;
    int nr;

    xch_init(&x, d->nranks);
    memset(x.scnt, 0, (size_t)d->nranks * sizeof(int));
    for (i64 e = 0; e < g->nslice; e++) {
        x.scnt[owner(d, slice[e].a)]++;
        x.scnt[owner(d, slice[e].b)]++;
    }
    sbuf = app_alloc(&APP, (size_t)xch_layout(&x, d->nranks), sizeof *sbuf);
    for (i64 e = 0; e < g->nslice; e++) {
        pair p = slice[e], q = {p.b, p.a};

        sbuf[x.fill[owner(d, p.a)]++] = p;
        sbuf[x.fill[owner(d, p.b)]++] = q;
    }
    rbuf = exchange(&x, d->nranks, sbuf, rbuf, &rcap, sizeof *rbuf, g->pair_type, &nr);
    free(sbuf);
    g->off = app_alloc(&APP, (size_t)d->nloc + 1, sizeof *g->off);
    memset(g->off, 0, ((size_t)d->nloc + 1) * sizeof *g->off);
    for (int i = 0; i < nr; i++) {
        i64 v = rbuf[i].a - d->lo;

        if (v < 0 || v >= d->nloc)
            app_fail(&APP, "received edge (%lld,%lld) for a vertex owned by rank %d",
                     rbuf[i].a, rbuf[i].b, owner(d, rbuf[i].a));
        g->off[v + 1]++;
    }
    for (i64 v = 0; v < d->nloc; v++)
        g->off[v + 1] += g->off[v];
    g->adj = app_alloc(&APP, (size_t)nr, sizeof *g->adj);
    for (int i = 0; i < nr; i++)
        g->adj[g->off[rbuf[i].a - d->lo]++] = rbuf[i].b;
    for (i64 v = d->nloc; v > 0; v--)
        g->off[v] = g->off[v - 1];
    g->off[0] = 0;
    /* Sorted lists: rule 5 looks parents up by binary search. */
    for (i64 v = 0; v < d->nloc; v++)
        qsort(g->adj + g->off[v], (size_t)(g->off[v + 1] - g->off[v]), sizeof *g->adj, cmp_i64);
    free(rbuf);
    xch_free(&x);
}

/*
 * Ghosts: the distinct endpoints of this rank's edge slice. Their owners
 * learn once which of their vertices to send, so validating rules 3 and 4
 * costs one MPI_Alltoallv of levels per root.
 */
static void build_ghosts(struct graph *g, const pair *slice)
{
    struct dist *d = &g->d;
    i64 n = 0, *ends = app_alloc(&APP, 2 * (size_t)g->nslice, sizeof *ends);
    size_t cap = 0;

    for (i64 e = 0; e < g->nslice; e++) {
        ends[2 * e] = slice[e].a;
        ends[2 * e + 1] = slice[e].b;
    }
    qsort(ends, 2 * (size_t)g->nslice, sizeof *ends, cmp_i64);
    for (i64 i = 0; i < 2 * g->nslice; i++)
        if (n == 0 || ends[n - 1] != ends[i])
            ends[n++] = ends[i];
    g->ghost = ends;
    g->nghost = n;
    g->eidx = app_alloc(&APP, 2 * (size_t)g->nslice, sizeof *g->eidx);
    for (i64 e = 0; e < g->nslice; e++) {
        g->eidx[2 * e] = (uint32_t)find_sorted(ends, n, slice[e].a);
        g->eidx[2 * e + 1] = (uint32_t)find_sorted(ends, n, slice[e].b);
    }
    xch_init(&g->gx, d->nranks);
    memset(g->gx.scnt, 0, (size_t)d->nranks * sizeof(int));
    for (i64 i = 0; i < n; i++)
        g->gx.scnt[owner(d, ends[i])]++;
    xch_layout(&g->gx, d->nranks);
    g->greq = exchange(&g->gx, d->nranks, ends, NULL, &cap, sizeof *g->greq, MPI_LONG_LONG,
                       &g->ngreq);
    for (int i = 0; i < g->ngreq; i++)
        if (owner(d, g->greq[i]) != d->rank)
            app_fail(&APP, "ghost request for vertex %lld reached rank %d, its owner is %d",
                     g->greq[i], d->rank, owner(d, g->greq[i]));
}

/* Search state reused by every BFS (buffers only grow). */
struct bfs {
    i64 *parent, *front, *next;
    pair *sbuf, *rbuf;
    size_t scap, rcap;
    struct xch x;
};

/* One level-synchronous BFS from root; returns the number of vertices reached. */
static i64 bfs_run(const struct graph *g, struct bfs *b, i64 root)
{
    const struct dist *d = &g->d;
    i64 nf = 0, visited = 1, lo = d->lo;

    for (i64 v = 0; v < d->nloc; v++)
        b->parent[v] = -1;
    if (owner(d, root) == d->rank) {
        b->parent[root - lo] = root;
        b->front[nf++] = root - lo;
    }
    for (;;) {
        i64 nn = 0, total = 0;
        int nr, ns;

        memset(b->x.scnt, 0, (size_t)d->nranks * sizeof(int));
        /* Own children are claimed here; the others are counted per owner. */
        for (i64 f = 0; f < nf; f++) {
            i64 u = b->front[f];

            for (i64 j = g->off[u]; j < g->off[u + 1]; j++) {
                i64 w = g->adj[j];
                int o = owner(d, w);

                if (o != d->rank) {
                    b->x.scnt[o]++;
                } else if (b->parent[w - lo] < 0) {
                    b->parent[w - lo] = u + lo;
                    b->next[nn++] = w - lo;
                }
            }
        }
        ns = xch_layout(&b->x, d->nranks);
        b->sbuf = grow(b->sbuf, &b->scap, (size_t)ns, sizeof *b->sbuf);
        for (i64 f = 0; f < nf; f++) {
            i64 u = b->front[f];

            for (i64 j = g->off[u]; j < g->off[u + 1]; j++) {
                int o = owner(d, g->adj[j]);

                if (o != d->rank)
                    b->sbuf[b->x.fill[o]++] = (pair){g->adj[j], u + lo};
            }
        }
        b->rbuf = exchange(&b->x, d->nranks, b->sbuf, b->rbuf, &b->rcap, sizeof *b->rbuf,
                           g->pair_type, &nr);
        for (int i = 0; i < nr; i++) {
            i64 c = b->rbuf[i].a - lo;

            if (c < 0 || c >= d->nloc)
                app_fail(&APP, "BFS from %lld: rank %d received child %lld owned by rank %d",
                         root, d->rank, b->rbuf[i].a, owner(d, b->rbuf[i].a));
            if (b->parent[c] < 0) {
                b->parent[c] = b->rbuf[i].b;
                b->next[nn++] = c;
            }
        }
        MPI_Allreduce(&nn, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (total == 0)
            return visited;
        visited += total;
        i64 *t = b->front;
        b->front = b->next;
        b->next = t;
        nf = nn;
    }
}

/* Input edges in the searched component: half the degree sum of visited vertices. */
static i64 component_edges(const struct graph *g, const i64 *parent)
{
    i64 deg = 0, all = 0;

    for (i64 v = 0; v < g->d.nloc; v++)
        if (parent[v] >= 0)
            deg += g->off[v + 1] - g->off[v];
    MPI_Allreduce(&deg, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return all / 2;
}

/* Validation scratch: levels and the pointer-chasing request buffers. */
struct check {
    i64 *level, *pending, *ans, *req, *who, *rep, *back, *gsend, *glev;
    size_t reqcap, repcap;
    struct xch x;
};

/*
 * For the local vertices pending[0..n), asks each parent's owner for the
 * parent's level: ans[j] = level (>= 0), -1 if not yet known, -2 if the
 * parent was not visited.
 */
static void parent_levels(const struct graph *g, const i64 *parent, struct check *c, i64 n)
{
    const struct dist *d = &g->d;
    int nr;

    memset(c->x.scnt, 0, (size_t)d->nranks * sizeof(int));
    for (i64 j = 0; j < n; j++)
        c->x.scnt[owner(d, parent[c->pending[j]])]++;
    xch_layout(&c->x, d->nranks);
    for (i64 j = 0; j < n; j++) {
        int k = c->x.fill[owner(d, parent[c->pending[j]])]++;

        c->req[k] = parent[c->pending[j]];
        c->who[k] = j;
    }
    c->rep = exchange(&c->x, d->nranks, c->req, c->rep, &c->repcap, sizeof *c->rep,
                      MPI_LONG_LONG, &nr);
    for (int i = 0; i < nr; i++) {
        i64 v = c->rep[i] - d->lo;

        if (v < 0 || v >= d->nloc)
            app_fail(&APP, "level request for vertex %lld reached rank %d, its owner is %d",
                     c->rep[i], d->rank, owner(d, c->rep[i]));
        c->rep[i] = parent[v] < 0 ? -2 : c->level[v];
    }
    MPI_Alltoallv(c->rep, c->x.rcnt, c->x.rdsp, MPI_LONG_LONG, c->back, c->x.scnt, c->x.sdsp,
                  MPI_LONG_LONG, MPI_COMM_WORLD);
    for (i64 k = 0; k < n; k++)
        c->ans[c->who[k]] = c->back[k];
}

/*
 * The Graph500 rules for the parent array of the search from root (number
 * idx), which reached `visited` vertices and `edges` input edges.
 */
static void validate(const struct graph *g, const i64 *parent, struct check *c, i64 root,
                     long idx, i64 visited, i64 edges)
{
    const struct dist *d = &g->d;
    i64 np = 0, lo = d->lo, cnt[2] = {0, 0}, all[2];

    for (i64 v = 0; v < d->nloc; v++) {
        c->level[v] = -1;
        if (parent[v] < 0)
            continue;
        if (parent[v] >= d->n)
            app_fail(&APP, "rule 1 (tree), root %lld: vertex %lld has parent %lld, not a vertex",
                     root, v + lo, parent[v]);
        if (v + lo == root)
            c->level[v] = 0;
        else if (parent[v] == v + lo)
            app_fail(&APP, "rule 1 (tree), root %lld: vertex %lld is its own parent", root,
                     v + lo);
        else
            c->pending[np++] = v;
    }
    if (owner(d, root) == d->rank && parent[root - lo] != root)
        app_fail(&APP, "rule 1 (tree), root %lld: parent[root] is %lld, not the root", root,
                 parent[root - lo]);
    c->req = grow(c->req, &c->reqcap, (size_t)np, sizeof *c->req);
    c->who = realloc(c->who, ((size_t)np + 1) * sizeof *c->who);
    c->back = realloc(c->back, ((size_t)np + 1) * sizeof *c->back);
    c->ans = realloc(c->ans, ((size_t)np + 1) * sizeof *c->ans);
    if (c->who == NULL || c->back == NULL || c->ans == NULL)
        app_fail(&APP, "out of memory for validation");
    /* Rule 1: levels by pointer chasing; a round without progress means a cycle. */
    for (i64 left = np;;) {
        i64 k = 0, prog[2] = {0, 0}, gprog[2];

        parent_levels(g, parent, c, left);
        for (i64 j = 0; j < left; j++) {
            i64 v = c->pending[j];

            if (c->ans[j] == -2)
                app_fail(&APP, "rule 1 (tree), root %lld: parent %lld of vertex %lld was not "
                         "visited", root, parent[v], v + lo);
            if (c->ans[j] >= 0)
                c->level[v] = c->ans[j] + 1;
            else
                c->pending[k++] = v;
        }
        prog[0] = left - k;
        prog[1] = k;
        left = k;
        MPI_Allreduce(prog, gprog, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (gprog[1] == 0)
            break;
        if (gprog[0] == 0 && left > 0)
            app_fail(&APP, "rule 1 (tree), root %lld: following parents from vertex %lld "
                     "never reaches the root (cycle)", root, c->pending[0] + lo);
        if (gprog[0] == 0)
            app_fail(&APP, "rule 1 (tree), root %lld: another rank's parents form a cycle",
                     root);
    }
    /* Rule 2: ask each parent's owner again for its final level. */
    np = 0;
    for (i64 v = 0; v < d->nloc; v++)
        if (parent[v] >= 0 && v + lo != root)
            c->pending[np++] = v;
    parent_levels(g, parent, c, np);
    for (i64 j = 0; j < np; j++) {
        i64 v = c->pending[j];

        if (c->ans[j] < 0 || c->level[v] != c->ans[j] + 1)
            app_fail(&APP, "rule 2 (tree edge levels), root %lld: vertex %lld at level %lld, "
                     "its parent %lld at level %lld", root, v + lo, c->level[v], parent[v],
                     c->ans[j]);
    }
    /* Rule 5: each (vertex, parent) is an edge; the vertex's own list holds it. */
    for (i64 j = 0; j < np; j++) {
        i64 v = c->pending[j];

        if (find_sorted(g->adj + g->off[v], g->off[v + 1] - g->off[v], parent[v]) < 0)
            app_fail(&APP, "rule 5 (parent edges), root %lld: (%lld, %lld) is not an edge of "
                     "the graph", root, v + lo, parent[v]);
    }
    /* Rules 3 and 4 on the generated edge list, with the endpoints' levels. */
    for (int j = 0; j < g->ngreq; j++)
        c->gsend[j] = c->level[g->greq[j] - lo];
    MPI_Alltoallv(c->gsend, g->gx.rcnt, g->gx.rdsp, MPI_LONG_LONG, c->glev, g->gx.scnt,
                  g->gx.sdsp, MPI_LONG_LONG, MPI_COMM_WORLD);
    for (i64 e = 0; e < g->nslice; e++) {
        i64 lu = c->glev[g->eidx[2 * e]], lv = c->glev[g->eidx[2 * e + 1]];
        i64 u = g->ghost[g->eidx[2 * e]], v = g->ghost[g->eidx[2 * e + 1]];

        if ((lu < 0) != (lv < 0))
            app_fail(&APP, "rule 4 (spanning), root %lld: edge (%lld, %lld) joins a visited "
                     "and an unvisited vertex", root, u, v);
        if (lu >= 0 && (lu - lv > 1 || lv - lu > 1))
            app_fail(&APP, "rule 3 (edge levels), root %lld: edge (%lld, %lld) joins levels "
                     "%lld and %lld", root, u, v, lu, lv);
        cnt[1] += lu >= 0;
    }
    for (i64 v = 0; v < d->nloc; v++)
        cnt[0] += c->level[v] >= 0;
    MPI_Allreduce(cnt, all, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (all[0] != visited)
        app_fail(&APP, "root %ld (%lld): the tree has %lld vertices, the BFS counted %lld",
                 idx, root, all[0], visited);
    if (all[1] != edges)
        app_fail(&APP, "root %ld (%lld): %lld edges of the edge list are in the component, "
                 "the CSR degrees give %lld", idx, root, all[1], edges);
}

static i64 uf_find(i64 *up, i64 x)
{
    while (up[x] != x) {
        up[x] = up[up[x]];
        x = up[x];
    }
    return x;
}

/*
 * Independent reference on one rank: union-find over the whole edge list,
 * regenerated serially; ref[2i], ref[2i+1] = vertices and edges of root i's
 * component.
 */
static void reference(int scale, long nroots, const i64 *roots, i64 *ref)
{
    i64 n = 1LL << scale, m = n * EDGE_FACTOR;
    i64 *up = app_alloc(&APP, (size_t)n, sizeof *up);
    i64 *size = app_alloc(&APP, (size_t)n, sizeof *size);
    i64 *ecnt = app_alloc(&APP, (size_t)n, sizeof *ecnt);

    for (i64 v = 0; v < n; v++) {
        up[v] = v;
        size[v] = 1;
        ecnt[v] = 0;
    }
    for (i64 k = 0; k < m; k++) {
        i64 u, v, a, b;

        kron_edge((uint64_t)k, scale, &u, &v);
        a = uf_find(up, u);
        b = uf_find(up, v);
        if (a != b) {
            if (size[a] < size[b]) {
                i64 t = a;
                a = b;
                b = t;
            }
            up[b] = a;
            size[a] += size[b];
            ecnt[a] += ecnt[b];
        }
        ecnt[a]++;
    }
    for (long i = 0; i < nroots; i++) {
        i64 r = uf_find(up, roots[i]);

        ref[2 * i] = size[r];
        ref[2 * i + 1] = ecnt[r];
    }
    free(up);
    free(size);
    free(ecnt);
}

/*
 * Roots: walk a bijective scramble of 0, 1, 2, ... (mod 2^scale) and keep
 * the vertices with a neighbour other than themselves, in that order, so the
 * roots do not depend on the rank count; they repeat only if -i exceeds the
 * number of such vertices.
 */
static void pick_roots(const struct graph *g, long nroots, i64 *roots)
{
    const struct dist *d = &g->d;
    enum { BATCH = 256 };
    int mine[BATCH], any[BATCH];
    i64 linked = 0, all = 0;
    uint64_t j = 0;
    long got = 0;

    for (i64 v = 0; v < d->nloc; v++)
        linked += g->off[v + 1] > g->off[v] &&
                  (g->adj[g->off[v]] != v + d->lo || g->adj[g->off[v + 1] - 1] != v + d->lo);
    MPI_Allreduce(&linked, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (all == 0)
        app_fail(&APP, "no vertex has an edge to another vertex; no BFS root");
    while (got < nroots) {
        for (int t = 0; t < BATCH; t++) {
            i64 c = scramble((j + (uint64_t)t) & (uint64_t)(d->n - 1), g->scale, ROOTS_K);
            i64 v = c - d->lo;

            mine[t] = v >= 0 && v < d->nloc && g->off[v + 1] > g->off[v] &&
                      (g->adj[g->off[v]] != c || g->adj[g->off[v + 1] - 1] != c);
        }
        MPI_Allreduce(mine, any, BATCH, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        for (int t = 0; t < BATCH && got < nroots; t++)
            if (any[t])
                roots[got++] = scramble((j + (uint64_t)t) & (uint64_t)(d->n - 1), g->scale,
                                        ROOTS_K);
        j += BATCH;
    }
}

/*
 * Rather than die in the OOM killer: the bytes one rank needs (about 128
 * per edge: the directed edge copies during the build, the CSR, the edge
 * list indices and the BFS buffers) if more than the node's physical memory
 * divided among its ranks allow, on any node; else 0.
 */
static double node_memory_short(int scale, int nranks)
{
    MPI_Comm node;
    int local;
    double need = 128.0 * (double)(EDGE_FACTOR << scale) / nranks, have, least;

    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &local);
    MPI_Comm_free(&node);
    have = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGE_SIZE) / local;
    MPI_Allreduce(&have, &least, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    return need > least ? need : 0.0;
}

int main(int argc, char **argv)
{
    struct app_opts o;
    struct graph g;
    struct bfs b;
    struct check c;
    int nranks, rank, rc;

    rc = app_start(&APP, &argc, &argv, &o);
    if (rc >= 0)
        return rc;
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* Every rank owns at least one vertex; counts of directed edges fit an int. */
    int min_scale = 1;
    while ((1LL << min_scale) < nranks)
        min_scale++;
    if (o.size < min_scale || o.size > MAX_SCALE)
        return app_reject(&APP, "-n %ld: SCALE must be %d..%d on %d ranks (2^SCALE "
                          "vertices, at least one per rank)", o.size, min_scale, MAX_SCALE,
                          nranks);
    if (o.iters > MAX_SEARCHES / o.reps)
        return app_reject(&APP, "-i %ld x -r %ld: at most %d searches", o.iters, o.reps,
                          MAX_SEARCHES);
    double need = node_memory_short((int)o.size, nranks);
    if (need > 0.0)
        return app_reject(&APP, "-n %ld: SCALE %ld needs about %.1f GB per rank, more "
                          "than this node's memory allows (try a smaller -n)", o.size, o.size,
                          need / 1e9);
    g.scale = (int)o.size;
    g.nedges = (1LL << g.scale) * EDGE_FACTOR;
    dist_init(&g.d, 1LL << g.scale, nranks, rank);
    MPI_Type_contiguous(2, MPI_LONG_LONG, &g.pair_type);
    MPI_Type_commit(&g.pair_type);

    /* Set-up: generate this rank's slice of the edge list, distribute, build. */
    struct dist es;
    dist_init(&es, g.nedges, nranks, rank);
    g.nslice = es.nloc;
    pair *slice = app_alloc(&APP, (size_t)g.nslice, sizeof *slice);
    for (i64 e = 0; e < g.nslice; e++)
        kron_edge((uint64_t)(es.lo + e), g.scale, &slice[e].a, &slice[e].b);
    build_graph(&g, slice);
    build_ghosts(&g, slice);
    free(slice);

    i64 *roots = app_alloc(&APP, (size_t)o.iters, sizeof *roots);
    pick_roots(&g, o.iters, roots);
    memset(&b, 0, sizeof b);
    b.parent = app_alloc(&APP, (size_t)g.d.nloc, sizeof *b.parent);
    b.front = app_alloc(&APP, (size_t)g.d.nloc, sizeof *b.front);
    b.next = app_alloc(&APP, (size_t)g.d.nloc, sizeof *b.next);
    xch_init(&b.x, nranks);

    double *times = app_alloc(&APP, (size_t)o.reps, sizeof *times);
    double *rt = app_alloc(&APP, (size_t)(o.reps * o.iters), sizeof *rt);
    double *rtmax = app_alloc(&APP, (size_t)(o.reps * o.iters), sizeof *rtmax);
    i64 *vis = app_alloc(&APP, (size_t)(o.reps * o.iters), sizeof *vis);
    /* One untimed warm-up repetition, then the timed ones (each search timed too). */
    for (long i = 0; i < o.iters; i++)
        bfs_run(&g, &b, roots[i]);
    for (long r = 0; r < o.reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();

        for (long i = 0; i < o.iters; i++) {
            double t1 = MPI_Wtime();

            vis[r * o.iters + i] = bfs_run(&g, &b, roots[i]);
            rt[r * o.iters + i] = MPI_Wtime() - t1;
        }
        times[r] = app_elapsed_max(t0);
    }
    MPI_Allreduce(rt, rtmax, (int)(o.reps * o.iters), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

    /* Verification: search again from every root, validate, compare counts. */
    long nval = o.iters;
    if (g.scale > VALIDATE_ALL_SCALE && nval > VALIDATE_FEW)
        nval = VALIDATE_FEW;
    i64 *edges = app_alloc(&APP, (size_t)o.iters, sizeof *edges);
    i64 *ref = app_alloc(&APP, 2 * (size_t)o.iters, sizeof *ref);
    int have_ref = g.scale <= REFERENCE_SCALE;

    memset(&c, 0, sizeof c);
    c.level = app_alloc(&APP, (size_t)g.d.nloc, sizeof *c.level);
    c.pending = app_alloc(&APP, (size_t)g.d.nloc, sizeof *c.pending);
    c.gsend = app_alloc(&APP, (size_t)g.ngreq, sizeof *c.gsend);
    c.glev = app_alloc(&APP, (size_t)g.nghost, sizeof *c.glev);
    xch_init(&c.x, nranks);
    if (have_ref) {
        if (rank == 0)
            reference(g.scale, o.iters, roots, ref);
        MPI_Bcast(ref, (int)(2 * o.iters), MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    }
    for (long i = 0; i < o.iters; i++) {
        i64 v = bfs_run(&g, &b, roots[i]);

        edges[i] = component_edges(&g, b.parent);
        for (long r = 0; r < o.reps; r++)
            if (vis[r * o.iters + i] != v)
                app_fail(&APP, "root %ld (%lld): repetition %ld reached %lld vertices, the "
                         "verification search %lld", i, roots[i], r, vis[r * o.iters + i], v);
        if (have_ref && (ref[2 * i] != v || ref[2 * i + 1] != edges[i]))
            app_fail(&APP, "root %ld (%lld): the BFS reached %lld vertices and %lld edges, "
                     "the serial union-find finds %lld and %lld", i, roots[i], v, edges[i],
                     ref[2 * i], ref[2 * i + 1]);
        if (i < nval)
            validate(&g, b.parent, &c, roots[i], i, v, edges[i]);
    }

    i64 work = 0;
    double hsum = 0.0;
    for (long i = 0; i < o.iters; i++)
        work += edges[i];
    for (long k = 0; k < o.reps * o.iters; k++)
        hsum += rtmax[k] / ((double)edges[k % o.iters] / 1e6);
    char what[220];
    snprintf(what, sizeof what, "Graph500 BFS, SCALE %d (%lld vertices, %lld edges), %ld roots"
             " (%ld validated%s), %lld edges per repetition", g.scale, g.d.n, g.nedges,
             o.iters, nval, have_ref ? ", union-find checked" : "", work);
    app_report(&APP, &o, what, times, (double)work / 1e6, "MTEPS");
    if (rank == 0 && !o.json && hsum > 0.0)
        printf("# harmonic mean over the %ld searches: %.2f MTEPS\n", o.reps * o.iters,
               (double)(o.reps * o.iters) / hsum);

    free(edges);
    free(ref);
    free(c.level);
    free(c.pending);
    free(c.ans);
    free(c.req);
    free(c.who);
    free(c.rep);
    free(c.back);
    free(c.gsend);
    free(c.glev);
    xch_free(&c.x);
    free(times);
    free(rt);
    free(rtmax);
    free(vis);
    free(b.parent);
    free(b.front);
    free(b.next);
    free(b.sbuf);
    free(b.rbuf);
    xch_free(&b.x);
    free(roots);
    free(g.off);
    free(g.adj);
    free(g.ghost);
    free(g.eidx);
    free(g.greq);
    xch_free(&g.gx);
    MPI_Type_free(&g.pair_type);
    MPI_Finalize();
    return 0;
}
