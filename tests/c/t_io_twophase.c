/* np: 4 2 */
/* vms: v2 h2v2 */
/* Two-phase collective buffering (io/two_phase.c) against the independent
 * path: the same accesses through write_at_all (two-phase, with several
 * cb_buffer_size and cb_nodes hints, so windows split runs and rounds
 * repeat) and through write_at on a second file (independent) must leave
 * the same bytes; read_at_all through each hint set must give back each
 * rank's data. Patterns: a 2D block-distributed int array (a checkpoint:
 * subarray views), and an interleaved vector view where one rank writes
 * nothing. Also romio_cb_write=disable (the independent path, agreed). */
#include "t_io_util.h"

enum { GR = 37, GC = 29, NV = 40 };
static int rank, size;

static MPI_Info hints(const char *cb, const char *nodes, const char *disable)
{
    MPI_Info info;
    OK(MPI_Info_create(&info));
    if (cb)
        OK(MPI_Info_set(info, "cb_buffer_size", cb));
    if (nodes)
        OK(MPI_Info_set(info, "cb_nodes", nodes));
    if (disable) {
        OK(MPI_Info_set(info, "romio_cb_write", disable));
        OK(MPI_Info_set(info, "romio_cb_read", disable));
    }
    return info;
}

/* The block-distributed view: rank's block of a GR x GC array. */
static MPI_Datatype block_type(int *n)
{
    int dims[2] = {0, 0}, gs[2] = {GR, GC}, sub[2], st[2];
    OK(MPI_Dims_create(size, 2, dims));
    int pr = rank / dims[1], pc = rank % dims[1];
    for (int d = 0; d < 2; d++) {
        int p = d ? pc : pr, q = gs[d] / dims[d], r = gs[d] % dims[d];
        st[d] = p * q + (p < r ? p : r);
        sub[d] = q + (p < r);
    }
    MPI_Datatype t;
    OK(MPI_Type_create_subarray(2, gs, sub, st, MPI_ORDER_C, MPI_INT, &t));
    OK(MPI_Type_commit(&t));
    *n = sub[0] * sub[1];
    return t;
}

/* Interleaved blocks of 3 ints; the last rank writes none (count 0). */
static MPI_Datatype vector_type(int *n)
{
    MPI_Datatype v, t;
    OK(MPI_Type_vector(NV, 3, 3 * size, MPI_INT, &v));
    OK(MPI_Type_create_resized(v, 0, (MPI_Aint)sizeof(int) * 3 * size * NV, &t));
    OK(MPI_Type_commit(&t));
    OK(MPI_Type_free(&v));
    *n = rank == size - 1 && size > 1 ? 0 : 3 * NV;
    return t;
}

static void compare(MPI_Datatype (*make)(int *), MPI_Offset disp, MPI_Info info,
                    const char *what)
{
    char p1[128], p2[128];
    MPI_File f1, f2;
    MPI_Status st;
    int n;
    MPI_Datatype ft = make(&n);
    int *mine = malloc(sizeof(int) * (n + 1)), *back = malloc(sizeof(int) * (n + 1));
    for (int i = 0; i < n; i++)
        mine[i] = rank * 1000003 + i * 7;
    OK(MPI_File_open(MPI_COMM_WORLD, t_io_path(p1, "coll"),
                     MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, info, &f1));
    OK(MPI_File_open(MPI_COMM_WORLD, t_io_path(p2, "indep"),
                     MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                     &f2));
    OK(MPI_File_set_view(f1, disp, MPI_INT, ft, "native", info));
    OK(MPI_File_set_view(f2, disp, MPI_INT, ft, "native", MPI_INFO_NULL));
    OK(MPI_File_write_at_all(f1, 0, mine, n, MPI_INT, &st));
    int got = -1;
    OK(MPI_Get_count(&st, MPI_INT, &got));
    CHECK(got == n, "%s: write_at_all counted %d, want %d", what, got, n);
    OK(MPI_File_write_at(f2, 0, mine, n, MPI_INT, &st));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_File_read_at_all(f1, 0, back, n, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &got));
    CHECK(got == n, "%s: read_at_all counted %d, want %d", what, got, n);
    for (int i = 0; i < n; i++)
        CHECK(back[i] == mine[i], "%s: int %d read back %d, want %d", what, i, back[i], mine[i]);
    MPI_Offset s1, s2;
    OK(MPI_File_get_size(f1, &s1));
    OK(MPI_File_get_size(f2, &s2));
    CHECK(s1 == s2, "%s: %ld bytes two-phase, %ld independent", what, (long)s1, (long)s2);
    int *a = t_io_read_whole(f1, (int)(s1 / 4)), *b = t_io_read_whole(f2, (int)(s2 / 4));
    for (int i = 0; i < s1 / 4; i++)
        CHECK(a[i] == b[i], "%s: file int %d is %d two-phase, %d independent", what, i, a[i],
              b[i]);
    free(a);
    free(b);
    free(mine);
    free(back);
    OK(MPI_File_close(&f1));
    OK(MPI_File_close(&f2));
    OK(MPI_Type_free(&ft));
}

int main(int argc, char **argv)
{
    t_io_init(&argc, &argv, &rank, &size);
    const char *cfg[][3] = {{NULL, NULL, NULL}, {"4096", NULL, NULL}, {"1000", "1", NULL},
                            {"512", "3", NULL}, {NULL, "8", NULL}, {NULL, NULL, "disable"}};
    for (size_t k = 0; k < sizeof cfg / sizeof cfg[0]; k++) {
        MPI_Info info = hints(cfg[k][0], cfg[k][1], cfg[k][2]);
        char what[96];
        snprintf(what, sizeof what, "block, cb %s nodes %s%s", cfg[k][0] ? cfg[k][0] : "-",
                 cfg[k][1] ? cfg[k][1] : "-", cfg[k][2] ? " disabled" : "");
        compare(block_type, 0, info, what);
        what[0] = 'v', memcpy(what + 1, "ector", 5);
        compare(vector_type, 12 + rank * 3 * (MPI_Offset)sizeof(int), info, what);
        OK(MPI_Info_free(&info));
    }
    return t_io_finish("t_io_twophase");
}
