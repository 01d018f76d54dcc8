/* MPI_Group_* entry points: argument checks, then core/group.c. */
#include <stdlib.h>

#include "api.h"

#define GROUP_ARG(g, h, fname, argname)                                              \
    struct vmpi_group *g = vmpi_group_get(h);                                        \
    VMPI_CHECK(g, NULL, MPI_ERR_GROUP, "%s: %s is not a valid group (0x%x)", fname, \
               argname, (unsigned)(h))

#define OUT_ARG(p, fname, argname) \
    VMPI_CHECK((p) != NULL, NULL, MPI_ERR_ARG, "%s: %s is NULL", fname, argname)

/* Wraps a freshly computed member list into a group handle. */
static int make_group(const char *fname, int n, int *world, MPI_Group *out)
{
    struct vmpi_group *g = vmpi_group_new(n, world);
    if (!g)
        return vmpi_err(NULL, MPI_ERR_NO_MEM, "%s: out of memory for a group of %d", fname, n);
    *out = g->handle;
    return MPI_SUCCESS;
}

static int *alloc_ranks(int n)
{
    return malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
}

int PMPI_Group_size(MPI_Group group, int *size)
{
    VMPI_ENTER("MPI_Group_size");
    GROUP_ARG(g, group, "MPI_Group_size", "group");
    OUT_ARG(size, "MPI_Group_size", "size");
    *size = g->size;
    return MPI_SUCCESS;
}
VMPI_WEAK(Group_size);

int PMPI_Group_rank(MPI_Group group, int *rank)
{
    VMPI_ENTER("MPI_Group_rank");
    GROUP_ARG(g, group, "MPI_Group_rank", "group");
    OUT_ARG(rank, "MPI_Group_rank", "rank");
    *rank = g->rank;
    return MPI_SUCCESS;
}
VMPI_WEAK(Group_rank);

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    VMPI_ENTER("MPI_Group_compare");
    GROUP_ARG(a, group1, "MPI_Group_compare", "group1");
    GROUP_ARG(b, group2, "MPI_Group_compare", "group2");
    OUT_ARG(result, "MPI_Group_compare", "result");
    *result = vmpi_group_compare(a->world, a->size, b->world, b->size);
    return MPI_SUCCESS;
}
VMPI_WEAK(Group_compare);

int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                               int ranks2[])
{
    static const char fn[] = "MPI_Group_translate_ranks";
    VMPI_ENTER(fn);
    GROUP_ARG(a, group1, fn, "group1");
    GROUP_ARG(b, group2, fn, "group2");
    VMPI_CHECK(n >= 0, NULL, MPI_ERR_ARG, "%s: n = %d is negative", fn, n);
    VMPI_CHECK(n == 0 || (ranks1 && ranks2), NULL, MPI_ERR_ARG, "%s: %s is NULL", fn,
               ranks1 ? "ranks2" : "ranks1");
    for (int i = 0; i < n; i++)
        VMPI_CHECK(ranks1[i] == MPI_PROC_NULL || (ranks1[i] >= 0 && ranks1[i] < a->size), NULL,
                   MPI_ERR_RANK, "%s: ranks1[%d] = %d is not a rank of group1 (size %d)", fn,
                   i, ranks1[i], a->size);
    int rc = vmpi_group_translate(a->world, a->size, n, ranks1, b->world, b->size, ranks2);
    if (rc != MPI_SUCCESS)
        return vmpi_err(NULL, rc, "%s: bad arguments", fn);
    return MPI_SUCCESS;
}
VMPI_WEAK(Group_translate_ranks);

/* Names the first offending rank of an incl/excl list for the message. */
static int bad_rank_list(const char *fn, const struct vmpi_group *g, int n, const int *ranks,
                         int rc)
{
    if (rc == MPI_ERR_NO_MEM)
        return vmpi_err(NULL, rc, "%s: out of memory", fn);
    if (n < 0 || n > g->size)
        return vmpi_err(NULL, MPI_ERR_ARG, "%s: n = %d is not in [0, %d] (group size)", fn, n,
                        g->size);
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size)
            return vmpi_err(NULL, MPI_ERR_RANK, "%s: ranks[%d] = %d is not a rank of the group "
                            "(size %d)", fn, i, ranks[i], g->size);
        for (int j = 0; j < i; j++)
            if (ranks[j] == ranks[i])
                return vmpi_err(NULL, MPI_ERR_RANK, "%s: ranks[%d] = %d repeats ranks[%d]", fn,
                                i, ranks[i], j);
    }
    return vmpi_err(NULL, rc, "%s: bad rank list", fn);
}

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    static const char fn[] = "MPI_Group_incl";
    VMPI_ENTER(fn);
    GROUP_ARG(g, group, fn, "group");
    OUT_ARG(newgroup, fn, "newgroup");
    VMPI_CHECK(n <= 0 || ranks, NULL, MPI_ERR_ARG, "%s: ranks is NULL", fn);
    int *w = alloc_ranks(n);
    if (!w)
        return vmpi_err(NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    int rc = vmpi_group_incl(g->world, g->size, n, ranks, w);
    if (rc != MPI_SUCCESS) {
        free(w);
        return bad_rank_list(fn, g, n, ranks, rc);
    }
    return make_group(fn, n, w, newgroup);
}
VMPI_WEAK(Group_incl);

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    static const char fn[] = "MPI_Group_excl";
    VMPI_ENTER(fn);
    GROUP_ARG(g, group, fn, "group");
    OUT_ARG(newgroup, fn, "newgroup");
    VMPI_CHECK(n <= 0 || ranks, NULL, MPI_ERR_ARG, "%s: ranks is NULL", fn);
    int *w = alloc_ranks(g->size);
    if (!w)
        return vmpi_err(NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    int k;
    int rc = vmpi_group_excl(g->world, g->size, n, ranks, w, &k);
    if (rc != MPI_SUCCESS) {
        free(w);
        return bad_rank_list(fn, g, n, ranks, rc);
    }
    return make_group(fn, k, w, newgroup);
}
VMPI_WEAK(Group_excl);

/* The members that ranges select (first, last, stride triplets), checked
 * as MPICH checks them: their group ranks, in selection order, into *sel
 * (malloc'ed; NULL when *k is 0). */
static int range_select(const char *fn, const struct vmpi_group *g, int n, int ranges[][3],
                        int **sel, int *k)
{
    VMPI_CHECK(n >= 0, NULL, MPI_ERR_ARG, "%s: n = %d is negative", fn, n);
    VMPI_CHECK(n == 0 || ranges, NULL, MPI_ERR_ARG, "%s: ranges is NULL", fn);
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        VMPI_CHECK(first >= 0 && first < g->size, NULL, MPI_ERR_RANK,
                   "%s: ranges[%d] first = %d is not a rank of the group (size %d)", fn, i,
                   first, g->size);
        VMPI_CHECK(last >= 0 && last < g->size, NULL, MPI_ERR_RANK,
                   "%s: ranges[%d] last = %d is not a rank of the group (size %d)", fn, i,
                   last, g->size);
        VMPI_CHECK(stride != 0, NULL, MPI_ERR_ARG, "%s: ranges[%d] stride is 0", fn, i);
        VMPI_CHECK(!((stride > 0 && first > last) || (stride < 0 && first < last)), NULL,
                   MPI_ERR_ARG, "%s: ranges[%d] = (%d, %d, %d): stride points away from last",
                   fn, i, first, last, stride);
    }
    int *ident = alloc_ranks(g->size);
    if (!ident)
        return vmpi_err(NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    for (int i = 0; i < g->size; i++)
        ident[i] = i;
    int rc = vmpi_group_range_incl(ident, g->size, n, (const int(*)[3])ranges, sel, k);
    free(ident);
    if (rc == MPI_ERR_RANK)
        return vmpi_err(NULL, rc, "%s: the ranges name a rank more than once", fn);
    if (rc != MPI_SUCCESS)
        return vmpi_err(NULL, rc, "%s: %s", fn, rc == MPI_ERR_NO_MEM ? "out of memory"
                                                                    : "bad ranges");
    return MPI_SUCCESS;
}

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    static const char fn[] = "MPI_Group_range_incl";
    VMPI_ENTER(fn);
    GROUP_ARG(g, group, fn, "group");
    OUT_ARG(newgroup, fn, "newgroup");
    int *sel, k;
    int rc = range_select(fn, g, n, ranges, &sel, &k);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < k; i++)
        sel[i] = g->world[sel[i]];
    return make_group(fn, k, sel, newgroup);
}
VMPI_WEAK(Group_range_incl);

/* The members the ranges do not select, in group order. */
int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    static const char fn[] = "MPI_Group_range_excl";
    VMPI_ENTER(fn);
    GROUP_ARG(g, group, fn, "group");
    OUT_ARG(newgroup, fn, "newgroup");
    int *sel, k;
    int rc = range_select(fn, g, n, ranges, &sel, &k);
    if (rc != MPI_SUCCESS)
        return rc;
    unsigned char *drop = calloc((size_t)g->size + 1, 1);
    int *w = alloc_ranks(g->size - k);
    if (!drop || !w) {
        free(sel);
        free(drop);
        free(w);
        return vmpi_err(NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    for (int i = 0; i < k; i++)
        drop[sel[i]] = 1;
    int m = 0;
    for (int r = 0; r < g->size; r++)
        if (!drop[r])
            w[m++] = g->world[r];
    free(sel);
    free(drop);
    return make_group(fn, m, w, newgroup);
}
VMPI_WEAK(Group_range_excl);

typedef void (*setop_fn)(const int *, int, const int *, int, int *, int *);

static int set_op(const char *fn, MPI_Group group1, MPI_Group group2, MPI_Group *newgroup,
                  setop_fn op, int cap_both)
{
    GROUP_ARG(a, group1, fn, "group1");
    GROUP_ARG(b, group2, fn, "group2");
    OUT_ARG(newgroup, fn, "newgroup");
    int *w = alloc_ranks(a->size + (cap_both ? b->size : 0));
    if (!w)
        return vmpi_err(NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    int k;
    op(a->world, a->size, b->world, b->size, w, &k);
    return make_group(fn, k, w, newgroup);
}

int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    VMPI_ENTER("MPI_Group_union");
    return set_op("MPI_Group_union", group1, group2, newgroup, vmpi_group_union, 1);
}
VMPI_WEAK(Group_union);

int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    VMPI_ENTER("MPI_Group_intersection");
    return set_op("MPI_Group_intersection", group1, group2, newgroup, vmpi_group_intersection,
                  0);
}
VMPI_WEAK(Group_intersection);

int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    VMPI_ENTER("MPI_Group_difference");
    return set_op("MPI_Group_difference", group1, group2, newgroup, vmpi_group_difference, 0);
}
VMPI_WEAK(Group_difference);

/* Freeing MPI_GROUP_EMPTY is accepted (as MPICH does) and only nulls the handle. */
int PMPI_Group_free(MPI_Group *group)
{
    VMPI_ENTER("MPI_Group_free");
    OUT_ARG(group, "MPI_Group_free", "group");
    GROUP_ARG(g, *group, "MPI_Group_free", "*group");
    vmpi_group_release(g);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}
VMPI_WEAK(Group_free);
