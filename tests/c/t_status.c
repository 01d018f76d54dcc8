/* np: 2 */
/* net: ofi */
/* vms: v2 */
/* Status setters and MPI_Request_get_status:
 *  - MPI_Status_set_elements(_x) agree with MPI_Get_count and
 *    MPI_Get_elements(_x) for basic types, a struct type of mixed elements
 *    and counts beyond 32 bits; MPI_Status_set_cancelled with
 *    MPI_Test_cancelled; neither disturbs the other's bits;
 *  - MPI_Request_get_status does not free the request: pending receive
 *    (false), completed receive (true, status as MPI_Wait's), across ranks
 *    with eager and rendezvous sizes; MPI_REQUEST_NULL and an inactive
 *    persistent request (true, empty status); a send request;
 *  - bad input: error class and the function's name. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;

#include "t_check.h"

static void counts(MPI_Status *st, MPI_Datatype dt, int *count, MPI_Count *elems)
{
    OK(MPI_Get_count(st, dt, count));
    OK(MPI_Get_elements_x(st, dt, elems));
    int e;
    OK(MPI_Get_elements(st, dt, &e));
    CHECK(*elems > 0x7fffffff ? e == MPI_UNDEFINED : e == *elems,
          "Get_elements %d vs Get_elements_x %lld", e, (long long)*elems);
}

static void setters(void)
{
    MPI_Status st;
    int n;
    MPI_Count e;
    memset(&st, 0, sizeof st);
    OK(MPI_Status_set_elements(&st, MPI_DOUBLE, 5));
    counts(&st, MPI_DOUBLE, &n, &e);
    CHECK(n == 5 && e == 5, "5 doubles: count %d elements %lld", n, (long long)e);
    counts(&st, MPI_INT, &n, &e);
    CHECK(n == 10 && e == 10, "5 doubles as ints: count %d elements %lld", n, (long long)e);

    /* {int, double}: 2 basic elements, 12 bytes of data per element. */
    MPI_Datatype pair;
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    OK(MPI_Type_create_struct(2, bl, disp, types, &pair));
    OK(MPI_Type_commit(&pair));
    OK(MPI_Status_set_elements(&st, pair, 3));
    counts(&st, pair, &n, &e);
    CHECK(n == MPI_UNDEFINED && e == 3, "3 elements of {int,double}: count %d elements %lld", n,
          (long long)e);
    OK(MPI_Status_set_elements(&st, pair, 4));
    counts(&st, pair, &n, &e);
    CHECK(n == 2 && e == 4, "4 elements of {int,double}: count %d elements %lld", n,
          (long long)e);
    OK(MPI_Type_free(&pair));

    OK(MPI_Status_set_cancelled(&st, 1));
    MPI_Count big = (MPI_Count)1 << 40;
    OK(MPI_Status_set_elements_x(&st, MPI_BYTE, big));
    int canc = 0;
    OK(MPI_Test_cancelled(&st, &canc));
    counts(&st, MPI_BYTE, &n, &e);
    CHECK(canc == 1 && e == big && n == MPI_UNDEFINED,
          "2^40 bytes: cancelled %d elements %lld count %d", canc, (long long)e, n);
    OK(MPI_Status_set_cancelled(&st, 0));
    OK(MPI_Test_cancelled(&st, &canc));
    counts(&st, MPI_BYTE, &n, &e);
    CHECK(canc == 0 && e == big, "after set_cancelled(0): %d %lld", canc, (long long)e);
    OK(MPI_Status_set_elements(&st, MPI_INT, 0));
    counts(&st, MPI_INT, &n, &e);
    CHECK(n == 0 && e == 0, "0 ints: %d %lld", n, (long long)e);
}

static void get_status(int len)
{
    int *b = malloc(sizeof(int) * (size_t)len);
    CHECK(b, "malloc");
    MPI_Request q;
    MPI_Status st, st2;
    int flag = -1;
    if (rank == 1) {
        OK(MPI_Irecv(b, len, MPI_INT, 0, 3, MPI_COMM_WORLD, &q));
        OK(MPI_Request_get_status(q, &flag, &st));
        CHECK(!flag && q != MPI_REQUEST_NULL, "receive complete before the send");
        OK(MPI_Send(&flag, 1, MPI_INT, 0, 4, MPI_COMM_WORLD)); /* go */
        double t0 = MPI_Wtime();
        while (!flag) {
            OK(MPI_Request_get_status(q, &flag, &st));
            CHECK(MPI_Wtime() - t0 < 30, "Request_get_status never saw completion");
        }
        int n;
        OK(MPI_Get_count(&st, MPI_INT, &n));
        CHECK(q != MPI_REQUEST_NULL && st.MPI_SOURCE == 0 && st.MPI_TAG == 3 && n == len,
              "get_status: %d/%d count %d", st.MPI_SOURCE, st.MPI_TAG, n);
        OK(MPI_Request_get_status(q, &flag, &st2)); /* still there, same answer */
        CHECK(flag && st2.MPI_SOURCE == 0, "second get_status");
        OK(MPI_Wait(&q, &st2));
        CHECK(q == MPI_REQUEST_NULL && st2.MPI_TAG == 3, "Wait after get_status");
        for (int i = 0; i < len; i++)
            CHECK(b[i] == i + len, "element %d", i);
    } else {
        for (int i = 0; i < len; i++)
            b[i] = i + len;
        int go;
        OK(MPI_Recv(&go, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Isend(b, len, MPI_INT, 1, 3, MPI_COMM_WORLD, &q));
        double t0 = MPI_Wtime();
        do {
            OK(MPI_Request_get_status(q, &flag, MPI_STATUS_IGNORE));
            CHECK(MPI_Wtime() - t0 < 30, "send never completed");
        } while (!flag);
        CHECK(q != MPI_REQUEST_NULL, "get_status freed the send");
        OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    }
    free(b);
}

static void null_and_inactive(void)
{
    MPI_Status st;
    int flag = 0, n = -1, x = 0;
    memset(&st, 0x7f, sizeof st);
    OK(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st));
    OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(flag && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG && n == 0,
          "MPI_REQUEST_NULL: flag %d status %d/%d/%d", flag, st.MPI_SOURCE, st.MPI_TAG, n);
    MPI_Request p;
    OK(MPI_Recv_init(&x, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &p));
    flag = 0;
    memset(&st, 0x7f, sizeof st);
    OK(MPI_Request_get_status(p, &flag, &st));
    CHECK(flag && st.MPI_SOURCE == MPI_ANY_SOURCE && p != MPI_REQUEST_NULL,
          "inactive persistent: flag %d source %d", flag, st.MPI_SOURCE);
    OK(MPI_Start(&p));
    OK(MPI_Request_get_status(p, &flag, &st));
    CHECK(!flag, "started persistent receive with no message is complete");
    int y = 11;
    OK(MPI_Send(&y, 1, MPI_INT, 0, 5, MPI_COMM_SELF));
    OK(MPI_Request_get_status(p, &flag, &st));
    CHECK(flag && st.MPI_TAG == 5 && x == 11, "active persistent after the send: %d", flag);
    OK(MPI_Wait(&p, &st));
    CHECK(p != MPI_REQUEST_NULL, "persistent request freed by Wait");
    OK(MPI_Request_free(&p));
}

static void bad_input(void)
{
    MPI_Status st;
    int flag;
    int rc = MPI_Status_set_elements(&st, MPI_INT, -1);
    t_expect_err(rc, MPI_ERR_COUNT, "MPI_Status_set_elements", "negative count");
    rc = MPI_Status_set_elements_x(&st, MPI_DATATYPE_NULL, 1);
    t_expect_err(rc, MPI_ERR_TYPE, "MPI_Status_set_elements_x", "null datatype");
    rc = MPI_Status_set_elements(MPI_STATUS_IGNORE, MPI_INT, 1);
    t_expect_err(rc, MPI_ERR_ARG, "MPI_Status_set_elements", "MPI_STATUS_IGNORE");
    rc = MPI_Status_set_elements_x(&st, MPI_DOUBLE, (MPI_Count)1 << 61);
    t_expect_err(rc, MPI_ERR_COUNT, "MPI_Status_set_elements_x", "2^64 bytes");
    rc = MPI_Status_set_cancelled(NULL, 1);
    t_expect_err(rc, MPI_ERR_ARG, "MPI_Status_set_cancelled", "NULL status");
    rc = MPI_Request_get_status(0x12345, &flag, &st);
    t_expect_err(rc, MPI_ERR_REQUEST, "MPI_Request_get_status", "invalid request");
    rc = MPI_Request_get_status(MPI_REQUEST_NULL, NULL, &st);
    t_expect_err(rc, MPI_ERR_ARG, "MPI_Request_get_status", "NULL flag");
}

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2, "needs 2 ranks");
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    setters();
    get_status(10);
    get_status(1 << 18);
    null_and_inactive();
    bad_input();

    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("t_status: OK\n");
    MPI_Finalize();
    return 0;
}
