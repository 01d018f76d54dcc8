/* Unit test of the group set logic (core/group.c, vmpi_group_*): pure
 * functions on arrays of world ranks, no MPI_Init needed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/vmpi.h"

#include "u_check.h"

static void expect(const char *what, const int *got, int ngot, const int *want, int nwant)
{
    int ok = ngot == nwant && (nwant == 0 || memcmp(got, want, sizeof(int) * (size_t)nwant) == 0);
    if (!ok) {
        fprintf(stderr, "u_group: %s: got [", what);
        for (int i = 0; i < ngot; i++)
            fprintf(stderr, " %d", got[i]);
        fprintf(stderr, " ], want [");
        for (int i = 0; i < nwant; i++)
            fprintf(stderr, " %d", want[i]);
        fprintf(stderr, " ]\n");
        failures++;
    }
}

int main(void)
{
    /* group A = world ranks {5, 2, 7, 0, 3}, B = {3, 4, 5, 6} */
    const int A[] = {5, 2, 7, 0, 3}, B[] = {3, 4, 5, 6};
    int out[16], n, rc;

    /* incl */
    const int r1[] = {4, 0, 2};
    rc = vmpi_group_incl(A, 5, 3, r1, out);
    CHECK(rc == MPI_SUCCESS, "incl rc %d", rc);
    expect("incl", out, 3, (const int[]){3, 5, 7}, 3);
    CHECK(vmpi_group_incl(A, 5, 0, NULL, out) == MPI_SUCCESS, "incl of nothing");
    CHECK(vmpi_group_incl(A, 5, 2, (const int[]){1, 5}, out) == MPI_ERR_RANK, "incl rank 5");
    CHECK(vmpi_group_incl(A, 5, 2, (const int[]){-1, 0}, out) == MPI_ERR_RANK, "incl rank -1");
    CHECK(vmpi_group_incl(A, 5, 3, (const int[]){1, 3, 1}, out) == MPI_ERR_RANK, "incl dup");
    CHECK(vmpi_group_incl(A, 5, 6, (const int[]){0, 1, 2, 3, 4, 0}, out) == MPI_ERR_ARG,
          "incl n > size");
    CHECK(vmpi_group_incl(A, 5, -1, r1, out) == MPI_ERR_ARG, "incl n < 0");

    /* excl */
    rc = vmpi_group_excl(A, 5, 2, (const int[]){3, 1}, out, &n);
    CHECK(rc == MPI_SUCCESS, "excl rc %d", rc);
    expect("excl", out, n, (const int[]){5, 7, 3}, 3);
    rc = vmpi_group_excl(A, 5, 5, (const int[]){0, 1, 2, 3, 4}, out, &n);
    CHECK(rc == MPI_SUCCESS && n == 0, "excl all");
    CHECK(vmpi_group_excl(A, 5, 2, (const int[]){2, 2}, out, &n) == MPI_ERR_RANK, "excl dup");
    CHECK(vmpi_group_excl(A, 5, 1, (const int[]){9}, out, &n) == MPI_ERR_RANK, "excl 9");

    /* range_incl over a group of 10: world = 100 + i */
    int W[10];
    for (int i = 0; i < 10; i++)
        W[i] = 100 + i;
    int *ro;
    rc = vmpi_group_range_incl(W, 10, 2, (const int[][3]){{0, 6, 3}, {9, 7, -1}}, &ro, &n);
    CHECK(rc == MPI_SUCCESS, "range rc %d", rc);
    expect("range", ro, n, (const int[]){100, 103, 106, 109, 108, 107}, 6);
    free(ro);
    rc = vmpi_group_range_incl(W, 10, 1, (const int[][3]){{4, 4, 7}}, &ro, &n);
    expect("range single", ro, n, (const int[]){104}, 1);
    free(ro);
    rc = vmpi_group_range_incl(W, 10, 1, (const int[][3]){{1, 8, 10}}, &ro, &n);
    expect("range big stride", ro, n, (const int[]){101}, 1);
    free(ro);
    CHECK(vmpi_group_range_incl(W, 10, 1, (const int[][3]){{0, 5, 0}}, &ro, &n) == MPI_ERR_ARG,
          "stride 0");
    CHECK(vmpi_group_range_incl(W, 10, 1, (const int[][3]){{5, 0, 1}}, &ro, &n) == MPI_ERR_ARG,
          "stride away from last");
    CHECK(vmpi_group_range_incl(W, 10, 1, (const int[][3]){{0, 10, 1}}, &ro, &n) ==
              MPI_ERR_RANK, "last out of range");
    CHECK(vmpi_group_range_incl(W, 10, 2, (const int[][3]){{0, 4, 2}, {4, 5, 1}}, &ro, &n) ==
              MPI_ERR_RANK, "overlapping ranges");
    CHECK(vmpi_group_range_incl(W, 10, 0, NULL, &ro, &n) == MPI_SUCCESS && n == 0,
          "no ranges");

    /* union: A then members of B not in A */
    vmpi_group_union(A, 5, B, 4, out, &n);
    expect("union", out, n, (const int[]){5, 2, 7, 0, 3, 4, 6}, 7);
    vmpi_group_union(B, 4, A, 5, out, &n);
    expect("union BA", out, n, (const int[]){3, 4, 5, 6, 2, 7, 0}, 7);
    vmpi_group_union(A, 5, NULL, 0, out, &n);
    expect("union empty", out, n, A, 5);
    /* intersection in A's order */
    vmpi_group_intersection(A, 5, B, 4, out, &n);
    expect("intersection", out, n, (const int[]){5, 3}, 2);
    vmpi_group_intersection(B, 4, A, 5, out, &n);
    expect("intersection BA", out, n, (const int[]){3, 5}, 2);
    vmpi_group_intersection(A, 5, (const int[]){1, 8}, 2, out, &n);
    CHECK(n == 0, "disjoint intersection has %d", n);
    /* difference */
    vmpi_group_difference(A, 5, B, 4, out, &n);
    expect("difference", out, n, (const int[]){2, 7, 0}, 3);
    vmpi_group_difference(B, 4, A, 5, out, &n);
    expect("difference BA", out, n, (const int[]){4, 6}, 2);
    vmpi_group_difference(A, 5, A, 5, out, &n);
    CHECK(n == 0, "A - A has %d", n);

    /* translate A -> B */
    const int tr[] = {0, 1, 4, MPI_PROC_NULL, 3};
    rc = vmpi_group_translate(A, 5, 5, tr, B, 4, out);
    CHECK(rc == MPI_SUCCESS, "translate rc %d", rc);
    expect("translate", out, 5,
           (const int[]){2, MPI_UNDEFINED, 0, MPI_PROC_NULL, MPI_UNDEFINED}, 5);
    CHECK(vmpi_group_translate(A, 5, 1, (const int[]){5}, B, 4, out) == MPI_ERR_RANK,
          "translate rank 5");
    CHECK(vmpi_group_translate(A, 5, 0, NULL, B, 4, out) == MPI_SUCCESS, "translate none");

    /* compare */
    CHECK(vmpi_group_compare(A, 5, A, 5) == MPI_IDENT, "A vs A");
    CHECK(vmpi_group_compare(A, 5, (const int[]){0, 2, 3, 5, 7}, 5) == MPI_SIMILAR, "similar");
    CHECK(vmpi_group_compare(A, 5, (const int[]){0, 2, 3, 5, 8}, 5) == MPI_UNEQUAL, "unequal");
    CHECK(vmpi_group_compare(A, 5, B, 4) == MPI_UNEQUAL, "sizes differ");
    CHECK(vmpi_group_compare(NULL, 0, NULL, 0) == MPI_IDENT, "empty vs empty");

    if (failures) {
        fprintf(stderr, "u_group: %d failure(s)\n", failures);
        return 1;
    }
    printf("u_group: ok\n");
    return 0;
}
