/* Cartesian process topologies and MPI_Dims_create.
 *
 * A Cartesian communicator is an ordinary communicator with topo = MPI_CART
 * and its dims/periods. Ranks are laid out in row-major order (the last
 * dimension varies fastest), as the standard requires; reorder is ignored,
 * so grid rank i is parent rank i and parent ranks beyond the grid get
 * MPI_COMM_NULL. Graph topologies are in topo_graph.c. */
#include <stdlib.h>
#include <string.h>

#include "comm.h"

/* Attaches a Cartesian topology (copies of dims and periods, periods as 0/1). */
int vmpi_topo_set_cart(struct vmpi_comm *c, int ndims, const int *dims, const int *periods)
{
    size_t n = (size_t)(ndims > 0 ? ndims : 1);
    int *d = malloc(sizeof(int) * n), *p = malloc(sizeof(int) * n);
    if (!d || !p) {
        free(d);
        free(p);
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < ndims; i++) {
        d[i] = dims[i];
        p[i] = periods[i] != 0;
    }
    free(c->dims);
    free(c->periods);
    c->dims = d;
    c->periods = p;
    c->ndims = ndims;
    c->topo = MPI_CART;
    return MPI_SUCCESS;
}

/* A communicator over the first n ranks of c (MPI_COMM_NULL on the others):
 * what the Cartesian and graph constructors build, ranks kept in order.
 * Collective over c. */
int vmpi_topo_comm_first(struct vmpi_comm *c, int n, const char *fn, struct vmpi_comm **out)
{
    int *world = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (!world)
        return vmpi_err(c, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    memcpy(world, c->group->world, sizeof(int) * (size_t)n);
    struct vmpi_group *g = vmpi_group_new(n, world);
    if (!g)
        return vmpi_err(c, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    int rc = vmpi_comm_create(c, g, out);
    vmpi_group_release(g);
    return rc;
}

/* Collective over c; dims already checked (positive, product <= c->size). */
int vmpi_topo_cart_create(struct vmpi_comm *c, int ndims, const int *dims, const int *periods,
                          struct vmpi_comm **out)
{
    int n = 1;
    for (int i = 0; i < ndims; i++)
        n *= dims[i];
    int rc = vmpi_topo_comm_first(c, n, "MPI_Cart_create", out);
    if (rc != MPI_SUCCESS || !*out)
        return rc;
    if (vmpi_topo_set_cart(*out, ndims, dims, periods) != MPI_SUCCESS) {
        vmpi_comm_free(*out);
        *out = NULL;
        return vmpi_err(c, MPI_ERR_NO_MEM, "MPI_Cart_create: out of memory");
    }
    return MPI_SUCCESS;
}

/* The ranks sharing this rank's coordinates in the dropped dimensions form
 * one sub-grid (color: those coordinates as one number); ordered by rank,
 * they are in row-major order of the kept ones. */
int vmpi_topo_cart_sub(struct vmpi_comm *c, const int *remain, struct vmpi_comm **out)
{
    int n = c->ndims > 0 ? c->ndims : 1;
    int *coords = malloc(sizeof(int) * (size_t)n), *dims = malloc(sizeof(int) * (size_t)n);
    int *periods = malloc(sizeof(int) * (size_t)n);
    int rc = MPI_ERR_NO_MEM, color = 0, k = 0;
    if (!coords || !dims || !periods)
        goto out;
    vmpi_topo_cart_coords(c, c->rank, coords);
    for (int i = 0; i < c->ndims; i++) {
        if (remain[i]) {
            dims[k] = c->dims[i];
            periods[k++] = c->periods[i];
        } else {
            color = color * c->dims[i] + coords[i];
        }
    }
    rc = vmpi_comm_split(c, color, c->rank, out);
    if (rc == MPI_SUCCESS && vmpi_topo_set_cart(*out, k, dims, periods) != MPI_SUCCESS) {
        vmpi_comm_free(*out);
        *out = NULL;
        rc = MPI_ERR_NO_MEM;
    }
out:
    free(coords);
    free(dims);
    free(periods);
    if (rc == MPI_ERR_NO_MEM)
        return vmpi_err(c, rc, "MPI_Cart_sub: out of memory");
    return rc;
}

/* Sources and destinations are the same list: dimension by dimension, the
 * rank one step down, then the one step up. */
int vmpi_topo_nbrs(const struct vmpi_comm *c, struct vmpi_topo_nbrs *nb)
{
    *nb = (struct vmpi_topo_nbrs){0};
    if (c->topo != MPI_CART)
        return vmpi_topo_graph_nbrs(c, nb);
    int n = 2 * c->ndims;
    nb->own = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (!nb->own)
        return MPI_ERR_NO_MEM;
    for (int d = 0; d < c->ndims; d++)
        vmpi_topo_cart_shift(c, d, 1, &nb->own[2 * d], &nb->own[2 * d + 1]);
    nb->nin = nb->nout = n;
    nb->in = nb->out = nb->own;
    nb->cart = true;
    return MPI_SUCCESS;
}

void vmpi_topo_nbrs_free(struct vmpi_topo_nbrs *nb)
{
    free(nb->own);
    nb->own = NULL;
}

void vmpi_topo_cart_coords(const struct vmpi_comm *c, int rank, int *coords)
{
    for (int i = c->ndims - 1; i >= 0; i--) {
        coords[i] = rank % c->dims[i];
        rank /= c->dims[i];
    }
}

/* Periodic coordinates wrap; a non-periodic one out of range is MPI_ERR_ARG
 * (MPICH's class for it). */
int vmpi_topo_cart_rank(const struct vmpi_comm *c, const int *coords, int *rank)
{
    int r = 0;
    for (int i = 0; i < c->ndims; i++) {
        int d = c->dims[i], x = coords[i];
        if (x < 0 || x >= d) {
            if (!c->periods[i])
                return MPI_ERR_ARG;
            x %= d;
            if (x < 0)
                x += d;
        }
        r = r * d + x;
    }
    *rank = r;
    return MPI_SUCCESS;
}

/* Neighbours disp steps down (src) and up (dst) along dimension dir;
 * MPI_PROC_NULL past a non-periodic edge. */
void vmpi_topo_cart_shift(const struct vmpi_comm *c, int dir, int disp, int *src, int *dst)
{
    int stride = 1; /* rank distance between neighbours along dir */
    for (int i = dir + 1; i < c->ndims; i++)
        stride *= c->dims[i];
    int d = c->dims[dir];
    int x = (c->rank / stride) % d;
    for (int k = 0; k < 2; k++) {
        long y = (long)x + (k ? (long)disp : -(long)disp);
        int *res = k ? dst : src;
        if (y < 0 || y >= d) {
            if (!c->periods[dir]) {
                *res = MPI_PROC_NULL;
                continue;
            }
            y %= d;
            if (y < 0)
                y += d;
        }
        *res = c->rank + (int)(y - x) * stride;
    }
}

/* ---- MPI_Dims_create ------------------------------------------------------
 * The free dimensions (dims[i] == 0) get factors of rem = nnodes /
 * prod(fixed) that are as close to each other as possible: among all
 * non-increasing factorizations of rem into k factors we take the one with
 * the smallest max - min (16 in 3 is 4x2x2, 12 in 2 is 4x3). Ties go to the
 * larger smallest factor, then the larger next-smallest and so on (5040 in 3
 * is 21x16x15, not 20x18x14): the choice MPICH makes, so that programs get
 * the same grids under both. The search walks the divisors of rem. */

struct dsearch {
    int k, ndiv;
    const int *div; /* divisors of rem, ascending */
    int *cur, *best;
    long best_spread;
    int found;
};

/* The largest r with r^m <= x (m >= 1, x >= 1). */
static long iroot(long x, int m)
{
    if (m == 1)
        return x;
    long lo = 1, hi = 1;
    while (1) { /* grow hi until hi^m > x */
        long long p = 1;
        int over = 0;
        for (int i = 0; i < m && !over; i++) {
            p *= hi;
            over = p > x;
        }
        if (over)
            break;
        lo = hi;
        hi *= 2;
    }
    while (hi - lo > 1) { /* lo^m <= x < hi^m */
        long mid = lo + (hi - lo) / 2;
        long long p = 1;
        int over = 0;
        for (int i = 0; i < m && !over; i++) {
            p *= mid;
            over = p > x;
        }
        if (over)
            hi = mid;
        else
            lo = mid;
    }
    return lo;
}

/* Is a spread of at least lb with largest factor top worse than the best?
 * At the best spread the smallest factor is top - spread, so a smaller top
 * loses the tie; an equal top still has to be compared factor by factor. */
static int hopeless(const struct dsearch *s, long lb, int top)
{
    return s->found && (lb > s->best_spread || (lb == s->best_spread && top < s->best[0]));
}

/* Does the complete cur (spread given) beat the best so far? */
static int better(const struct dsearch *s, long spread)
{
    if (!s->found || spread < s->best_spread)
        return 1;
    if (spread > s->best_spread)
        return 0;
    for (int i = s->k - 1; i >= 0; i--) /* from the smallest factor up */
        if (s->cur[i] != s->best[i])
            return s->cur[i] > s->best[i];
    return 0;
}

/* Places factors pos.. (each <= maxd, non-increasing) of what is left, rem.
 * Candidates go upwards from the smallest that can still work, so balanced
 * answers come first and the bound cuts the rest. */
static void dsearch(struct dsearch *s, int pos, int rem, int maxd)
{
    int left = s->k - pos; /* factors still to place, this one included */
    if (left == 1) {
        if (rem > maxd)
            return;
        s->cur[pos] = rem;
        long spread = (long)s->cur[0] - rem;
        if (better(s, spread)) {
            s->found = 1;
            s->best_spread = spread;
            memcpy(s->best, s->cur, sizeof(int) * (size_t)s->k);
        }
        return;
    }
    long lo = iroot(rem, left); /* d^left >= rem needs d >= lo (or lo + 1) */
    for (int i = 0; i < s->ndiv; i++) {
        int d = s->div[i];
        if (d < lo || rem % d)
            continue;
        if (d > maxd || d > rem)
            break;
        long long pw = 1;
        for (int j = 0; j < left && pw < rem; j++)
            pw *= d;
        if (pw < rem)
            continue; /* the later factors (<= d) cannot make up rem */
        /* the smallest later factor is at most the (left-1)-th root of rem/d */
        int top = pos == 0 ? d : s->cur[0];
        long lb = (long)top - iroot(rem / d, left - 1);
        if (s->found && lb > s->best_spread)
            break; /* lb only grows with d */
        if (hopeless(s, lb, top))
            continue; /* a larger d may still win the tie (pos 0: top = d) */
        s->cur[pos] = d;
        dsearch(s, pos + 1, rem / d, d);
    }
}

/* MPI_SUCCESS, MPI_ERR_DIMS if the fixed entries do not divide nnodes
 * (or are negative), MPI_ERR_NO_MEM. Arguments are otherwise checked. */
int vmpi_topo_dims_create(int nnodes, int ndims, int *dims)
{
    if (ndims == 0)
        return MPI_SUCCESS; /* nothing to fill (MPICH accepts any nnodes) */
    long fixed = 1;
    int k = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return MPI_ERR_DIMS;
        if (dims[i] == 0)
            k++;
        else {
            fixed *= dims[i];
            if (fixed > nnodes)
                return MPI_ERR_DIMS;
        }
    }
    if (nnodes % fixed)
        return MPI_ERR_DIMS;
    int rem = (int)(nnodes / fixed);
    if (k == 0)
        return rem == 1 ? MPI_SUCCESS : MPI_ERR_DIMS;
    struct dsearch s = {.k = k};
    s.cur = malloc(sizeof(int) * (size_t)k);
    s.best = malloc(sizeof(int) * (size_t)k);
    if (!s.cur || !s.best) {
        free(s.cur);
        free(s.best);
        return MPI_ERR_NO_MEM;
    }
    /* divisors of rem, ascending: the small ones up to sqrt, then their
     * cofactors */
    int cap = 2048; /* an int has at most 1536 divisors */
    int *div = malloc(sizeof(int) * (size_t)cap);
    if (!div) {
        free(s.cur);
        free(s.best);
        return MPI_ERR_NO_MEM;
    }
    int nsmall = 0, n = 0;
    for (long d = 1; d * d <= rem; d++)
        if (rem % d == 0)
            div[nsmall++] = (int)d;
    n = nsmall;
    for (int i = nsmall - 1; i >= 0; i--)
        if ((long)div[i] * div[i] != rem)
            div[n++] = rem / div[i];
    s.div = div;
    s.ndiv = n;
    dsearch(&s, 0, rem, rem);
    free(div);
    /* a solution always exists: rem, 1, 1, ... */
    for (int i = 0, j = 0; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = s.best[j++];
    free(s.cur);
    free(s.best);
    return MPI_SUCCESS;
}
