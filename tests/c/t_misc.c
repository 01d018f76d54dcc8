/* np: 1 2 */
/* vms: v2 */
/* Small MPI-3.1 calls:
 *  - MPI_Aint_add / MPI_Aint_diff agree with MPI_Get_address on the
 *    elements of an array and of a struct, also with negative
 *    displacements; a struct datatype built from MPI_Aint_diff
 *    displacements moves the right bytes;
 *  - MPI_Pcontrol accepts any level and extra arguments;
 *  - MPI_Get_library_version, before MPI_Init and after: vmpi's version,
 *    the MPI version, the channels of the build, and after MPI_Init the
 *    channel that reaches the other rank; resultlen is the string's length
 *    and within MPI_MAX_LIBRARY_VERSION_STRING; NULL arguments are
 *    refused. The PMPI_ twins give the same answers. */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#include "t_check.h"

static void library_version(const char *when, char *out)
{
    int len = -1;
    OK(MPI_Get_library_version(out, &len));
    CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING && (int)strlen(out) == len,
          "%s: resultlen %d for '%s'", when, len, out);
    char want[64];
    snprintf(want, sizeof want, "vmpi %s (MPI %d.%d", VMPI_VERSION_STRING, MPI_VERSION,
             MPI_SUBVERSION);
    CHECK(!strncmp(out, want, strlen(want)), "%s: '%s' does not start with '%s'", when, out,
          want);
    CHECK(strstr(out, "channels built: smp") != NULL, "%s: no channel list in '%s'", when, out);
    CHECK(strstr(out, "libfabric") != NULL, "%s: libfabric not mentioned in '%s'", when, out);
    char again[MPI_MAX_LIBRARY_VERSION_STRING];
    int len2 = -1;
    OK(PMPI_Get_library_version(again, &len2));
    CHECK(len2 == len && !strcmp(again, out), "%s: PMPI twin says '%s'", when, again);
    CHECK(MPI_Get_library_version(NULL, &len) == MPI_ERR_ARG, "%s: NULL version accepted",
          when);
    CHECK(MPI_Get_library_version(again, NULL) == MPI_ERR_ARG, "%s: NULL resultlen accepted",
          when);
}

struct rec {
    char c;
    double d;
    int i[3];
};

static void address_arithmetic(void)
{
    int a[10] = {0};
    MPI_Aint a0, a3, a7;
    OK(MPI_Get_address(&a[0], &a0));
    OK(MPI_Get_address(&a[3], &a3));
    OK(MPI_Get_address(&a[7], &a7));
    CHECK(MPI_Aint_add(a0, 3 * (MPI_Aint)sizeof(int)) == a3, "Aint_add(a0, 12) != &a[3]");
    CHECK(MPI_Aint_add(a7, -4 * (MPI_Aint)sizeof(int)) == a3, "Aint_add(a7, -16) != &a[3]");
    CHECK(MPI_Aint_diff(a7, a3) == 4 * (MPI_Aint)sizeof(int), "Aint_diff(a7, a3) = %ld",
          (long)MPI_Aint_diff(a7, a3));
    CHECK(MPI_Aint_diff(a3, a7) == -4 * (MPI_Aint)sizeof(int), "Aint_diff(a3, a7) = %ld",
          (long)MPI_Aint_diff(a3, a7));
    CHECK(MPI_Aint_diff(a0, a0) == 0, "Aint_diff(a0, a0) != 0");
    CHECK(MPI_Aint_add(MPI_Aint_diff(a7, a0), a0) == a7, "add(diff(a7, a0), a0) != a7");
    CHECK(PMPI_Aint_add(a0, 12) == MPI_Aint_add(a0, 12) && PMPI_Aint_diff(a7, a0) ==
          MPI_Aint_diff(a7, a0), "PMPI twins differ");
    /* plain numbers too: the arithmetic is the machine's */
    CHECK(MPI_Aint_add(100, -150) == -50 && MPI_Aint_diff(-50, 100) == -150,
          "Aint arithmetic on plain numbers");

    /* A struct type from MPI_Aint_diff displacements, sent to oneself. */
    struct rec r[2], s[2];
    memset(r, 0, sizeof r);
    memset(s, 0, sizeof s);
    for (int k = 0; k < 2; k++) {
        s[k].c = (char)('a' + k);
        s[k].d = 1.5 + k;
        for (int j = 0; j < 3; j++)
            s[k].i[j] = 10 * k + j;
    }
    MPI_Aint base, ac, ad, ai, next;
    OK(MPI_Get_address(&s[0], &base));
    OK(MPI_Get_address(&s[0].c, &ac));
    OK(MPI_Get_address(&s[0].d, &ad));
    OK(MPI_Get_address(&s[0].i, &ai));
    OK(MPI_Get_address(&s[1], &next));
    int bl[3] = {1, 1, 3};
    MPI_Aint disp[3] = {MPI_Aint_diff(ac, base), MPI_Aint_diff(ad, base),
                        MPI_Aint_diff(ai, base)};
    CHECK(disp[1] == (MPI_Aint)offsetof(struct rec, d) && disp[2] ==
          (MPI_Aint)offsetof(struct rec, i), "struct displacements %ld %ld", (long)disp[1],
          (long)disp[2]);
    MPI_Datatype types[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT}, t, tr;
    OK(MPI_Type_create_struct(3, bl, disp, types, &t));
    OK(MPI_Type_create_resized(t, 0, MPI_Aint_diff(next, base), &tr));
    OK(MPI_Type_commit(&tr));
    OK(MPI_Sendrecv(s, 2, tr, rank, 7, r, 2, tr, rank, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int k = 0; k < 2; k++)
        CHECK(r[k].c == s[k].c && r[k].d == s[k].d && r[k].i[2] == s[k].i[2],
              "record %d came back wrong", k);
    OK(MPI_Type_free(&t));
    OK(MPI_Type_free(&tr));
}

int main(int argc, char **argv)
{
    /* allowed before MPI_Init (MPI-3.1 8.7) */
    char before[MPI_MAX_LIBRARY_VERSION_STRING];
    library_version("before MPI_Init", before);
    CHECK(strstr(before, "set up on this rank") == NULL, "channels set up before MPI_Init: '%s'",
          before);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    char after[MPI_MAX_LIBRARY_VERSION_STRING];
    library_version("after MPI_Init", after);
    if (size > 1)
        CHECK(strstr(after, "reaching its peers: ") != NULL,
              "no channel reaching the peers in '%s'", after);
    if (rank == 0)
        printf("MPI_Get_library_version: %s\n", after);

    int v = 0, sv = -1;
    OK(MPI_Get_version(&v, &sv));
    CHECK(v == MPI_VERSION && sv == MPI_SUBVERSION, "Get_version %d.%d", v, sv);

    OK(MPI_Pcontrol(0));
    OK(MPI_Pcontrol(1));
    OK(MPI_Pcontrol(2, "extra", 3.5));
    OK(MPI_Pcontrol(-7));
    OK(PMPI_Pcontrol(1));

    address_arithmetic();

    OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    if (rank == 0)
        printf("t_misc: ok (%d ranks)\n", size);
    return 0;
}
