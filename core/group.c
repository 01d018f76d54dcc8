/* Process groups.
 *
 * A group is an ordered list of world ranks (group rank -> world rank).
 * Groups are shared by reference: a communicator holds one reference to its
 * group, MPI_Comm_group hands out another, MPI_Group_free drops one; the
 * object (and its handle) goes away with the last reference.
 *
 * The set operations are written twice over: vmpi_group_* work on plain arrays
 * of world ranks and know nothing about handles or process state (the unit
 * tests call them directly); api/group.c wraps their results in objects. */
#include <stdlib.h>
#include <string.h>

#include "vmpi.h"

/* ---- pure logic ---------------------------------------------------------- */

static int max_rank(const int *a, int n)
{
    int m = -1;
    for (int i = 0; i < n; i++)
        if (a[i] > m)
            m = a[i];
    return m;
}

/* A scratch map indexed by world rank, covering [0, max(a ∪ b)]. Entries are
 * initialised to `fill`. NULL if out of memory. */
static int *rank_map(const int *a, int na, const int *b, int nb, int fill, int *len)
{
    int m = max_rank(a, na);
    int mb = max_rank(b, nb);
    if (mb > m)
        m = mb;
    *len = m + 1;
    int *map = malloc(sizeof(int) * (size_t)(m + 1 > 0 ? m + 1 : 1));
    if (map)
        for (int i = 0; i <= m; i++)
            map[i] = fill;
    return map;
}

/* Checks n ranks of a group of `size` members: each in range, no duplicate.
 * MPI_ERR_ARG if n is out of range, MPI_ERR_RANK for a bad rank,
 * MPI_ERR_NO_MEM if scratch memory is short. */
static int check_ranks(int size, int n, const int *ranks)
{
    if (n < 0 || n > size)
        return MPI_ERR_ARG;
    if (n == 0)
        return MPI_SUCCESS;
    if (!ranks)
        return MPI_ERR_ARG;
    unsigned char *seen = calloc((size_t)size, 1);
    if (!seen)
        return MPI_ERR_NO_MEM;
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= size || seen[ranks[i]]) {
            rc = MPI_ERR_RANK;
            break;
        }
        seen[ranks[i]] = 1;
    }
    free(seen);
    return rc;
}

/* out[i] = w[ranks[i]]; out holds n entries. */
int vmpi_group_incl(const int *w, int size, int n, const int *ranks, int *out)
{
    int rc = check_ranks(size, n, ranks);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < n; i++)
        out[i] = w[ranks[i]];
    return MPI_SUCCESS;
}

/* The members of w not listed in ranks, in their order; out holds size entries. */
int vmpi_group_excl(const int *w, int size, int n, const int *ranks, int *out, int *outn)
{
    int rc = check_ranks(size, n, ranks);
    if (rc != MPI_SUCCESS)
        return rc;
    unsigned char *drop = calloc((size_t)(size > 0 ? size : 1), 1);
    if (!drop)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++)
        drop[ranks[i]] = 1;
    int k = 0;
    for (int i = 0; i < size; i++)
        if (!drop[i])
            out[k++] = w[i];
    free(drop);
    *outn = k;
    return MPI_SUCCESS;
}

/* Triplets (first, last, stride). As in MPICH: first and last must be ranks of
 * the group (MPI_ERR_RANK), stride must be non-zero and point from first
 * towards last (MPI_ERR_ARG), and no rank may be produced twice
 * (MPI_ERR_RANK). *out is malloc'ed (NULL when *outn is 0). */
int vmpi_group_range_incl(const int *w, int size, int n, const int (*ranges)[3], int **out,
                        int *outn)
{
    *out = NULL;
    *outn = 0;
    if (n < 0)
        return MPI_ERR_ARG;
    if (n > 0 && !ranges)
        return MPI_ERR_ARG;
    long total = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (first < 0 || first >= size || last < 0 || last >= size)
            return MPI_ERR_RANK;
        if (stride == 0 || (stride > 0 && first > last) || (stride < 0 && first < last))
            return MPI_ERR_ARG;
        total += ((long)last - first) / stride + 1;
        if (total > size)
            return MPI_ERR_RANK; /* more ranks than members: some repeat */
    }
    if (total == 0)
        return MPI_SUCCESS;
    int *o = malloc(sizeof(int) * (size_t)total);
    unsigned char *seen = calloc((size_t)size, 1);
    if (!o || !seen) {
        free(o);
        free(seen);
        return MPI_ERR_NO_MEM;
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        long cnt = ((long)last - first) / stride + 1;
        for (long j = 0; j < cnt; j++) {
            int r = (int)(first + j * stride);
            if (seen[r]) {
                free(o);
                free(seen);
                return MPI_ERR_RANK;
            }
            seen[r] = 1;
            o[k++] = w[r];
        }
    }
    free(seen);
    *out = o;
    *outn = k;
    return MPI_SUCCESS;
}

/* All of a in order, then the members of b not in a, in b's order.
 * out holds na + nb entries. Without scratch memory the quadratic scan is used. */
void vmpi_group_union(const int *a, int na, const int *b, int nb, int *out, int *outn)
{
    int len, k = 0;
    int *in_a = rank_map(a, na, b, nb, 0, &len);
    for (int i = 0; i < na; i++) {
        out[k++] = a[i];
        if (in_a)
            in_a[a[i]] = 1;
    }
    for (int j = 0; j < nb; j++) {
        int found = 0;
        if (in_a) {
            found = in_a[b[j]];
        } else {
            for (int i = 0; i < na && !found; i++)
                found = a[i] == b[j];
        }
        if (!found)
            out[k++] = b[j];
    }
    free(in_a);
    *outn = k;
}

static void keep_if(const int *a, int na, const int *b, int nb, int want, int *out,
                    int *outn)
{
    int len, k = 0;
    int *in_b = rank_map(a, na, b, nb, 0, &len);
    if (in_b)
        for (int j = 0; j < nb; j++)
            in_b[b[j]] = 1;
    for (int i = 0; i < na; i++) {
        int found = 0;
        if (in_b) {
            found = in_b[a[i]];
        } else {
            for (int j = 0; j < nb && !found; j++)
                found = a[i] == b[j];
        }
        if (found == want)
            out[k++] = a[i];
    }
    free(in_b);
    *outn = k;
}

/* Members of a that are also in b, in a's order; out holds na entries. */
void vmpi_group_intersection(const int *a, int na, const int *b, int nb, int *out, int *outn)
{
    keep_if(a, na, b, nb, 1, out, outn);
}

/* Members of a that are not in b, in a's order; out holds na entries. */
void vmpi_group_difference(const int *a, int na, const int *b, int nb, int *out, int *outn)
{
    keep_if(a, na, b, nb, 0, out, outn);
}

/* r2[i] = rank in b of the process a[r1[i]], MPI_UNDEFINED if absent,
 * MPI_PROC_NULL for MPI_PROC_NULL. MPI_ERR_RANK for a rank outside a. */
int vmpi_group_translate(const int *a, int na, int n, const int *r1, const int *b, int nb,
                       int *r2)
{
    if (n < 0)
        return MPI_ERR_ARG;
    for (int i = 0; i < n; i++)
        if (r1[i] != MPI_PROC_NULL && (r1[i] < 0 || r1[i] >= na))
            return MPI_ERR_RANK;
    int len;
    int *pos = rank_map(a, na, b, nb, MPI_UNDEFINED, &len);
    if (pos)
        for (int j = nb - 1; j >= 0; j--)
            pos[b[j]] = j;
    for (int i = 0; i < n; i++) {
        if (r1[i] == MPI_PROC_NULL) {
            r2[i] = MPI_PROC_NULL;
            continue;
        }
        int w = a[r1[i]];
        if (pos) {
            r2[i] = pos[w];
        } else {
            r2[i] = MPI_UNDEFINED;
            for (int j = 0; j < nb; j++)
                if (b[j] == w) {
                    r2[i] = j;
                    break;
                }
        }
    }
    free(pos);
    return MPI_SUCCESS;
}

/* MPI_IDENT (same members, same order), MPI_SIMILAR (same members) or
 * MPI_UNEQUAL. Group members are distinct, so equal sizes plus a ⊆ b means
 * the same set. */
int vmpi_group_compare(const int *a, int na, const int *b, int nb)
{
    if (na != nb)
        return MPI_UNEQUAL;
    int same_order = 1;
    for (int i = 0; i < na; i++)
        if (a[i] != b[i]) {
            same_order = 0;
            break;
        }
    if (same_order)
        return MPI_IDENT;
    int k;
    int *tmp = malloc(sizeof(int) * (size_t)(na > 0 ? na : 1));
    if (!tmp) { /* quadratic fallback */
        for (int i = 0; i < na; i++) {
            int found = 0;
            for (int j = 0; j < nb && !found; j++)
                found = a[i] == b[j];
            if (!found)
                return MPI_UNEQUAL;
        }
        return MPI_SIMILAR;
    }
    vmpi_group_intersection(a, na, b, nb, tmp, &k);
    free(tmp);
    return k == na ? MPI_SIMILAR : MPI_UNEQUAL;
}

/* ---- group objects ------------------------------------------------------- */

static struct vmpi_htab group_tab;

/* MPI_GROUP_EMPTY: never freed; reference counting is a no-op on it. */
static struct vmpi_group group_empty = {
    .handle = MPI_GROUP_EMPTY, .refcount = 1, .size = 0, .rank = MPI_UNDEFINED, .world = NULL
};

struct vmpi_group *vmpi_group_get(MPI_Group h)
{
    if (h == MPI_GROUP_EMPTY)
        return &group_empty;
    if (VMPI_HKIND(h) != VMPI_HK_INDIRECT || VMPI_HTYPE(h) != VMPI_OBJ_GROUP)
        return NULL;
    if (VMPI_HINDEX(h) == 0) /* never handed out (and slot 0 is not set) */
        return NULL;
    return vmpi_htab_get(&group_tab, VMPI_HINDEX(h));
}

/* A group of `size` members; takes ownership of `world` (malloc'ed). The
 * result holds one reference and has a handle. size 0 gives MPI_GROUP_EMPTY
 * (and frees world). NULL if out of memory (world is freed). */
struct vmpi_group *vmpi_group_new(int size, int *world)
{
    if (size == 0) {
        free(world);
        return &group_empty;
    }
    struct vmpi_group *g = malloc(sizeof *g);
    uint32_t idx;
    if (!g || vmpi_htab_add(&group_tab, g, &idx) != 0) {
        free(g);
        free(world);
        return NULL;
    }
    g->handle = VMPI_HMAKE(VMPI_HK_INDIRECT, VMPI_OBJ_GROUP, idx);
    g->refcount = 1;
    g->size = size;
    g->world = world;
    g->rank = MPI_UNDEFINED;
    for (int i = 0; i < size; i++)
        if (world[i] == vmpi_job.rank) {
            g->rank = i;
            break;
        }
    return g;
}

void vmpi_group_retain(struct vmpi_group *g)
{
    if (g && g != &group_empty)
        g->refcount++;
}

void vmpi_group_release(struct vmpi_group *g)
{
    if (!g || g == &group_empty)
        return;
    if (--g->refcount > 0)
        return;
    vmpi_htab_del(&group_tab, VMPI_HINDEX(g->handle));
    free(g->world);
    free(g);
}

/* At MPI_Finalize: drop every group still around (user leaks included). */
void vmpi_group_finalize(void)
{
    for (uint32_t i = 1; i < group_tab.used; i++) { /* index 0 is never used */
        struct vmpi_group *g = vmpi_htab_get(&group_tab, i);
        if (g) {
            free(g->world);
            free(g);
        }
    }
    vmpi_htab_destroy(&group_tab);
    memset(&group_tab, 0, sizeof group_tab);
}
