/* np: 1 2 */
/* Generalized requests (MPI-3.1 12.2):
 *  - MPI_Test is false until MPI_Grequest_complete; MPI_Wait then calls
 *    query (which fills the status through the MPI_Status_set_* calls)
 *    and free after it, once each;
 *  - MPI_Request_get_status calls query but frees nothing;
 *  - MPI_Request_free before completion: free runs at
 *    MPI_Grequest_complete, query never; after completion: free at once;
 *  - MPI_Cancel calls cancel with the `complete` flag;
 *  - the array calls (Waitall, Waitany, Waitsome, Testall, Testany,
 *    Testsome) with generalized requests mixed with receives;
 *  - errors from query and free come back from MPI_Wait, and as
 *    MPI_ERR_IN_STATUS with the code in the status from MPI_Waitall;
 *  - bad input. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int rank;

#include "t_check.h"

struct state {
    int id;
    int queries, frees, cancels, last_complete;
    int query_rc, free_rc;
    int order; /* 1: free ran after query (or with no query) */
};

static int query_fn(void *extra, MPI_Status *st)
{
    struct state *s = extra;
    s->queries++;
    st->MPI_SOURCE = 100 + s->id;
    st->MPI_TAG = 200 + s->id;
    OK(MPI_Status_set_elements(st, MPI_INT, s->id + 1));
    OK(MPI_Status_set_cancelled(st, s->cancels > 0));
    return s->query_rc;
}

static int free_fn(void *extra)
{
    struct state *s = extra;
    s->frees++;
    s->order = 1;
    return s->free_rc;
}

static int cancel_fn(void *extra, int complete)
{
    struct state *s = extra;
    s->cancels++;
    s->last_complete = complete;
    return MPI_SUCCESS;
}

static MPI_Request start(struct state *s, int id)
{
    memset(s, 0, sizeof *s);
    s->id = id;
    MPI_Request r;
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, s, &r));
    CHECK(r != MPI_REQUEST_NULL, "Grequest_start gave MPI_REQUEST_NULL");
    return r;
}

static void expect_status(const MPI_Status *st, const struct state *s, const char *what)
{
    int n = -1, canc = -1;
    OK(MPI_Get_count(st, MPI_INT, &n));
    OK(MPI_Test_cancelled(st, &canc));
    CHECK(st->MPI_SOURCE == 100 + s->id && st->MPI_TAG == 200 + s->id && n == s->id + 1 &&
              canc == (s->cancels > 0),
          "%s: status %d/%d count %d cancelled %d", what, st->MPI_SOURCE, st->MPI_TAG, n, canc);
}

static void single(void)
{
    struct state s;
    MPI_Request r = start(&s, 1);
    MPI_Status st;
    int flag = 1;
    OK(MPI_Test(&r, &flag, &st));
    CHECK(!flag && s.queries == 0 && s.frees == 0, "Test before complete: flag %d q %d f %d",
          flag, s.queries, s.frees);
    OK(MPI_Request_get_status(r, &flag, &st));
    CHECK(!flag && s.queries == 0, "Request_get_status before complete: flag %d", flag);
    OK(MPI_Grequest_complete(r));
    OK(MPI_Request_get_status(r, &flag, &st));
    CHECK(flag && s.queries == 1 && s.frees == 0, "Request_get_status: flag %d q %d f %d", flag,
          s.queries, s.frees);
    expect_status(&st, &s, "Request_get_status");
    OK(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL && s.queries == 2 && s.frees == 1 && s.order,
          "Wait: q %d f %d", s.queries, s.frees);
    expect_status(&st, &s, "Wait");

    /* Test completes it too; MPI_STATUS_IGNORE still calls query. */
    r = start(&s, 2);
    OK(MPI_Grequest_complete(r));
    OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
    CHECK(flag && s.queries == 1 && s.frees == 1, "Test: flag %d q %d f %d", flag, s.queries,
          s.frees);
}

static void freed_and_cancelled(void)
{
    struct state s;
    MPI_Request r = start(&s, 3), keep = r;
    OK(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL && s.frees == 0, "free before complete ran free_fn");
    OK(MPI_Grequest_complete(keep));
    CHECK(s.frees == 1 && s.queries == 0, "complete after free: q %d f %d", s.queries, s.frees);

    r = start(&s, 4);
    OK(MPI_Grequest_complete(r));
    OK(MPI_Request_free(&r));
    CHECK(s.frees == 1 && s.queries == 0, "free after complete: q %d f %d", s.queries, s.frees);

    r = start(&s, 5);
    OK(MPI_Cancel(&r));
    CHECK(s.cancels == 1 && s.last_complete == 0, "cancel before complete: %d/%d", s.cancels,
          s.last_complete);
    OK(MPI_Grequest_complete(r));
    OK(MPI_Cancel(&r));
    CHECK(s.cancels == 2 && s.last_complete == 1, "cancel after complete: %d/%d", s.cancels,
          s.last_complete);
    MPI_Status st;
    OK(MPI_Wait(&r, &st));
    expect_status(&st, &s, "cancelled"); /* the query reported it cancelled */
}

/* Arrays mixing generalized requests and receives from self. */
static void arrays(void)
{
    struct state s[3];
    MPI_Request r[4];
    MPI_Status st[4];
    int x = 7, y = 0, idx = -1, flag = -1, out = -1, ind[4];
    r[0] = start(&s[0], 0);
    OK(MPI_Irecv(&y, 1, MPI_INT, 0, 9, MPI_COMM_SELF, &r[1]));
    r[2] = start(&s[1], 1);
    r[3] = MPI_REQUEST_NULL;
    OK(MPI_Testall(4, r, &flag, st));
    CHECK(!flag && s[0].queries == 0, "Testall with nothing complete: %d", flag);
    OK(MPI_Testany(4, r, &idx, &flag, st));
    CHECK(!flag && idx == MPI_UNDEFINED, "Testany: flag %d index %d", flag, idx);
    OK(MPI_Testsome(4, r, &out, ind, st));
    CHECK(out == 0, "Testsome: %d", out);
    OK(MPI_Grequest_complete(r[2]));
    OK(MPI_Waitany(4, r, &idx, &st[0]));
    CHECK(idx == 2 && r[2] == MPI_REQUEST_NULL && s[1].queries == 1 && s[1].frees == 1,
          "Waitany: index %d", idx);
    expect_status(&st[0], &s[1], "Waitany");
    OK(MPI_Send(&x, 1, MPI_INT, 0, 9, MPI_COMM_SELF));
    OK(MPI_Grequest_complete(r[0]));
    OK(MPI_Waitsome(4, r, &out, ind, st));
    CHECK(out == 2 && ind[0] == 0 && ind[1] == 1 && y == 7, "Waitsome: %d (%d %d), y %d", out,
          ind[0], ind[1], y);
    expect_status(&st[0], &s[0], "Waitsome");
    CHECK(st[1].MPI_SOURCE == 0 && st[1].MPI_TAG == 9, "Waitsome receive status");

    r[0] = start(&s[0], 3);
    r[1] = start(&s[1], 4);
    r[2] = start(&s[2], 5);
    for (int i = 0; i < 3; i++)
        OK(MPI_Grequest_complete(r[i]));
    OK(MPI_Testall(3, r, &flag, st));
    CHECK(flag, "Testall with all complete");
    for (int i = 0; i < 3; i++) {
        CHECK(s[i].queries == 1 && s[i].frees == 1, "Testall: request %d q %d f %d", i,
              s[i].queries, s[i].frees);
        expect_status(&st[i], &s[i], "Testall");
    }
    r[0] = start(&s[0], 6);
    r[1] = start(&s[1], 7);
    OK(MPI_Grequest_complete(r[1]));
    OK(MPI_Grequest_complete(r[0]));
    OK(MPI_Waitall(2, r, st));
    expect_status(&st[0], &s[0], "Waitall");
    expect_status(&st[1], &s[1], "Waitall");
    CHECK(s[0].frees == 1 && s[1].frees == 1, "Waitall frees");
}

static void callback_errors(void)
{
    struct state s[2];
    MPI_Request r = start(&s[0], 1);
    s[0].query_rc = MPI_ERR_OTHER;
    OK(MPI_Grequest_complete(r));
    int rc = MPI_Wait(&r, MPI_STATUS_IGNORE), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OTHER && s[0].frees == 1, "query error from Wait: class %d", cls);

    r = start(&s[0], 1);
    s[0].free_rc = MPI_ERR_INTERN;
    OK(MPI_Grequest_complete(r));
    rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_INTERN, "free error from Wait: class %d", cls);

    MPI_Request a[2] = {start(&s[0], 1), start(&s[1], 2)};
    s[1].query_rc = MPI_ERR_OTHER;
    OK(MPI_Grequest_complete(a[0]));
    OK(MPI_Grequest_complete(a[1]));
    MPI_Status st[2];
    rc = MPI_Waitall(2, a, st);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_IN_STATUS && st[0].MPI_ERROR == MPI_SUCCESS &&
              st[1].MPI_ERROR == MPI_ERR_OTHER,
          "Waitall: class %d, errors %d %d", cls, st[0].MPI_ERROR, st[1].MPI_ERROR);
}

static void bad_input(void)
{
    int rc = MPI_Grequest_complete(MPI_REQUEST_NULL);
    t_expect_err(rc, MPI_ERR_REQUEST, "MPI_Grequest_complete", "MPI_REQUEST_NULL");
    MPI_Request q;
    int x;
    OK(MPI_Irecv(&x, 1, MPI_INT, 0, 1, MPI_COMM_SELF, &q));
    rc = MPI_Grequest_complete(q);
    t_expect_err(rc, MPI_ERR_REQUEST, "MPI_Grequest_complete", "a receive");
    OK(MPI_Cancel(&q));
    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    struct state s;
    MPI_Request r = start(&s, 1);
    OK(MPI_Grequest_complete(r));
    rc = MPI_Grequest_complete(r);
    t_expect_err(rc, MPI_ERR_REQUEST, "MPI_Grequest_complete", "twice");
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    rc = MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, NULL);
    t_expect_err(rc, MPI_ERR_ARG, "MPI_Grequest_start", "NULL request");
    /* NULL callbacks do nothing. */
    OK(MPI_Grequest_start(NULL, NULL, NULL, NULL, &r));
    OK(MPI_Cancel(&r));
    OK(MPI_Grequest_complete(r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    single();
    freed_and_cancelled();
    arrays();
    callback_errors();
    bad_input();

    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("t_greq: OK\n");
    MPI_Finalize();
    return 0;
}
