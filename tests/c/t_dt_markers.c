/* np: 1 */
/* The MPI-1 bound markers MPI_LB and MPI_UB in MPI_Type_create_struct
 * (MPI-1 3.12.3): an LB entry fixes lb at the smallest LB displacement, a
 * UB entry ub at the largest UB one; a side without a marker comes from the
 * data (0 if there is none: a struct of only (LB, 10) has extent -10), and
 * without a UB marker the extent is rounded up to the alignment. Markers
 * have no size, repeat with the type, and place its copies in sends. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int rank, size;

#include "t_check.h"

static MPI_Datatype mk(int n, const int *bl, const MPI_Aint *d, const MPI_Datatype *ty)
{
    MPI_Datatype t;
    OK(MPI_Type_create_struct(n, bl, d, ty, &t));
    return t;
}

static void expect(MPI_Datatype t, const char *what, int sz, MPI_Aint lb, MPI_Aint ext)
{
    int s;
    MPI_Aint l, e;
    OK(MPI_Type_size(t, &s));
    OK(MPI_Type_get_extent(t, &l, &e));
    CHECK(s == sz && l == lb && e == ext, "%s: size %d lb %ld extent %ld, want %d %ld %ld", what,
          s, (long)l, (long)e, sz, (long)lb, (long)ext);
}

#define ONE(...) ((const int[]){__VA_ARGS__})
#define DISP(...) ((const MPI_Aint[]){__VA_ARGS__})
#define TYPES(...) ((const MPI_Datatype[]){__VA_ARGS__})

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Datatype t, u;

    /* markers only: size 0, the missing side is 0 */
    t = mk(1, ONE(1), DISP(10), TYPES(MPI_LB));
    expect(t, "{(LB,10)}", 0, 10, -10);
    OK(MPI_Type_free(&t));
    t = mk(1, ONE(1), DISP(10), TYPES(MPI_UB));
    expect(t, "{(UB,10)}", 0, 0, 10);
    OK(MPI_Type_free(&t));
    t = mk(2, ONE(1, 1), DISP(-5, 20), TYPES(MPI_LB, MPI_UB));
    expect(t, "{(LB,-5),(UB,20)}", 0, -5, 25);
    OK(MPI_Type_contiguous(2, t, &u)); /* markers at -5, 20 and 20, 45 */
    expect(u, "contiguous(2, {(LB,-5),(UB,20)})", 0, -5, 50);
    OK(MPI_Type_free(&u));
    OK(MPI_Type_free(&t));
    t = mk(2, ONE(3, 2), DISP(10, 4), TYPES(MPI_LB, MPI_UB));
    expect(t, "{3(LB,10),2(UB,4)}", 0, 10, -6);
    OK(MPI_Type_free(&t));

    /* markers with data */
    t = mk(2, ONE(1, 1), DISP(0, -4), TYPES(MPI_INT, MPI_LB));
    expect(t, "{(INT,0),(LB,-4)}", 4, -4, 8);
    OK(MPI_Type_free(&t));
    t = mk(2, ONE(1, 1), DISP(0, 20), TYPES(MPI_INT, MPI_UB));
    expect(t, "{(INT,0),(UB,20)}", 4, 0, 20);
    OK(MPI_Type_free(&t));
    t = mk(2, ONE(1, 1), DISP(0, 2), TYPES(MPI_INT, MPI_UB));
    expect(t, "{(INT,0),(UB,2)}: a UB marker is not rounded", 4, 0, 2);
    OK(MPI_Type_free(&t));
    t = mk(3, ONE(1, 1, 1), DISP(2, 6, 0), TYPES(MPI_LB, MPI_LB, MPI_INT));
    expect(t, "{(LB,2),(LB,6),(INT,0)}: the smallest LB", 4, 2, 4);
    OK(MPI_Type_free(&t));
    t = mk(3, ONE(1, 1, 1), DISP(2, 9, 0), TYPES(MPI_UB, MPI_UB, MPI_INT));
    expect(t, "{(UB,2),(UB,9),(INT,0)}: the largest UB", 4, 0, 9);
    OK(MPI_Type_free(&t));
    t = mk(3, ONE(1, 1, 1), DISP(0, 4, -3), TYPES(MPI_CHAR, MPI_INT, MPI_LB));
    expect(t, "{(CHAR,0),(INT,4),(LB,-3)}: extent 11 rounded to 12", 5, -3, 12);
    OK(MPI_Type_free(&t));
    t = mk(3, ONE(1, 1, 1), DISP(0, 8, -3), TYPES(MPI_DOUBLE, MPI_CHAR, MPI_LB));
    expect(t, "{(DOUBLE,0),(CHAR,8),(LB,-3)}: extent 12 rounded to 16", 9, -3, 16);
    OK(MPI_Type_free(&t));
    t = mk(2, ONE(0, 1), DISP(10, 4), TYPES(MPI_LB, MPI_INT));
    expect(t, "{0 x (LB,10),(INT,4)}: no marker", 4, 4, 4);
    OK(MPI_Type_free(&t));

    /* the markers place the copies: (LB,-4) (INT,0) (UB,8), 3 of them
     * every 12 bytes, sent to self and received as plain ints */
    t = mk(3, ONE(1, 1, 1), DISP(-4, 0, 8), TYPES(MPI_LB, MPI_INT, MPI_UB));
    expect(t, "{(LB,-4),(INT,0),(UB,8)}", 4, -4, 12);
    OK(MPI_Type_commit(&t));
    int buf[10], got[3] = {0};
    for (int i = 0; i < 10; i++)
        buf[i] = 10 + i;
    OK(MPI_Sendrecv(buf + 1, 3, t, 0, 0, got, 3, MPI_INT, 0, 0, MPI_COMM_SELF,
                    MPI_STATUS_IGNORE));
    CHECK(got[0] == 11 && got[1] == 14 && got[2] == 17, "sent %d %d %d, want 11 14 17", got[0],
          got[1], got[2]);
    OK(MPI_Type_free(&t));

    MPI_Finalize();
    if (rank == 0)
        printf("t_dt_markers: ok (np %d)\n", size);
    return 0;
}
