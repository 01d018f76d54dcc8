/* np: 2 */
/* vms: v2 */
/* MPI_Pack_external / MPI_Unpack_external / MPI_Pack_external_size with
 * "external32": the sizes of MPI-3.1 13.5.2 (long 4 bytes, no padding), a
 * big-endian byte image checked on the receiving rank, the round trip of
 * a struct mixing types and of a strided vector through another rank, two
 * calls appending at *position, and bad input. */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "t_check.h"

struct rec {
    int i;
    double d;
    long l;
    char c[3];
};

static MPI_Datatype rec_type(void)
{
    int bl[4] = { 1, 1, 1, 3 };
    MPI_Aint disp[4] = { offsetof(struct rec, i), offsetof(struct rec, d),
                         offsetof(struct rec, l), offsetof(struct rec, c) };
    MPI_Datatype ty[4] = { MPI_INT, MPI_DOUBLE, MPI_LONG, MPI_CHAR }, t;
    OK(MPI_Type_create_struct(4, bl, disp, ty, &t));
    OK(MPI_Type_commit(&t));
    return t;
}

static void test_move(MPI_Comm pair)
{
    int me;
    MPI_Comm_rank(pair, &me);
    MPI_Datatype rt = rec_type(), vt;
    OK(MPI_Type_vector(4, 1, 3, MPI_SHORT, &vt)); /* every third short */
    OK(MPI_Type_commit(&vt));
    MPI_Aint rsize, vsize;
    OK(MPI_Pack_external_size("external32", 3, rt, &rsize));
    OK(MPI_Pack_external_size("external32", 1, vt, &vsize));
    CHECK(rsize == 3 * (4 + 8 + 4 + 3) && vsize == 8, "external32 sizes %ld %ld", (long)rsize,
          (long)vsize);
    struct rec r[3];
    short s[12];
    unsigned char buf[128];
    MPI_Aint pos = 0;
    if (me == 0) {
        for (int k = 0; k < 3; k++)
            r[k] = (struct rec){ .i = 0x01020304 + k, .d = 0.5 * k - 1, .l = -5 - k,
                                 .c = { 'x', 'y', (char)('0' + k) } };
        for (int k = 0; k < 12; k++)
            s[k] = (short)(k * 257);
        OK(MPI_Pack_external("external32", r, 3, rt, buf, sizeof buf, &pos));
        OK(MPI_Pack_external("external32", s, 1, vt, buf, sizeof buf, &pos));
        CHECK(pos == rsize + vsize, "position %ld after two packs", (long)pos);
        OK(MPI_Send(buf, (int)pos, MPI_PACKED, 1, 5, pair));
    } else {
        memset(r, 0, sizeof r);
        for (int k = 0; k < 12; k++)
            s[k] = -1;
        OK(MPI_Recv(buf, sizeof buf, MPI_PACKED, 0, 5, pair, MPI_STATUS_IGNORE));
        /* int 0x01020304, double -1.0, long -5 as 4 bytes, "xy0". */
        static const unsigned char head[19] = { 1, 2, 3, 4, 0xbf, 0xf0, 0, 0, 0, 0, 0, 0,
                                                0xff, 0xff, 0xff, 0xfb, 'x', 'y', '0' };
        for (int k = 0; k < 19; k++)
            CHECK(buf[k] == head[k], "byte %d is %02x, want %02x", k, buf[k], head[k]);
        OK(MPI_Unpack_external("external32", buf, sizeof buf, &pos, r, 3, rt));
        OK(MPI_Unpack_external("external32", buf, sizeof buf, &pos, s, 1, vt));
        CHECK(pos == rsize + vsize, "position %ld after two unpacks", (long)pos);
        for (int k = 0; k < 3; k++)
            CHECK(r[k].i == 0x01020304 + k && r[k].d == 0.5 * k - 1 && r[k].l == -5 - k &&
                      r[k].c[2] == '0' + k,
                  "record %d: %x %g %ld", k, r[k].i, r[k].d, r[k].l);
        for (int k = 0; k < 12; k++)
            CHECK(s[k] == (k % 3 == 0 ? k * 257 : -1), "short %d is %d", k, s[k]);
    }
    OK(MPI_Type_free(&rt));
    OK(MPI_Type_free(&vt));
}

static void test_errors(void)
{
    int v[4] = { 1, 2, 3, 4 };
    unsigned char buf[16];
    MPI_Aint pos = 0, sz;
    t_expect_err(MPI_Pack_external_size("native", 1, MPI_INT, &sz), MPI_ERR_ARG,
                 "MPI_Pack_external_size", "datarep native");
    t_expect_err(MPI_Pack_external("external64", v, 1, MPI_INT, buf, 16, &pos), MPI_ERR_ARG,
                 "MPI_Pack_external", "unknown datarep");
    t_expect_err(MPI_Pack_external("external32", v, 4, MPI_INT, buf, 12, &pos),
                 MPI_ERR_TRUNCATE, "MPI_Pack_external", "outsize too small");
    CHECK(pos == 0, "a failed pack moved position to %ld", (long)pos);
    t_expect_err(MPI_Pack_external("external32", v, -1, MPI_INT, buf, 16, &pos), MPI_ERR_COUNT,
                 "MPI_Pack_external", "negative count");
    t_expect_err(MPI_Pack_external("external32", v, 1, MPI_INT, buf, 16, NULL), MPI_ERR_ARG,
                 "MPI_Pack_external", "NULL position");
    MPI_Datatype t;
    OK(MPI_Type_contiguous(2, MPI_INT, &t));
    t_expect_err(MPI_Pack_external("external32", v, 1, t, buf, 16, &pos), MPI_ERR_TYPE,
                 "MPI_Pack_external", "uncommitted type");
    OK(MPI_Type_free(&t));
    pos = 14;
    t_expect_err(MPI_Unpack_external("external32", buf, 16, &pos, v, 1, MPI_INT),
                 MPI_ERR_TRUNCATE, "MPI_Unpack_external", "2 bytes left for an int");
    pos = 20;
    t_expect_err(MPI_Unpack_external("external32", buf, 16, &pos, v, 1, MPI_INT), MPI_ERR_ARG,
                 "MPI_Unpack_external", "position beyond insize");
    t_expect_err(MPI_Pack_external_size("external32", 1, MPI_DATATYPE_NULL, &sz), MPI_ERR_TYPE,
                 "MPI_Pack_external_size", "null datatype");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm pair = t_pair_comm();
    test_move(pair);
    OK(MPI_Comm_free(&pair));
    test_errors();
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Finalize();
    if (rank == 0)
        printf("t_dt_external: OK\n");
    return 0;
}
