/* np: 2 4 */
/* vms: v2 */
/* User error handlers (MPI-3.1 8.3) and user error classes, codes and
 * strings (8.5): a handler gets the communicator's or window's handle and
 * the code of a real error, and the call returns that code; dups inherit
 * it; it outlives MPI_Errhandler_free while in use; MPI_*_call_errhandler;
 * MPI_Error_class / MPI_Error_string / MPI_LASTUSEDCODE know the user's
 * classes and codes; bad input gives the right class and names the call.
 * A point-to-point exchange on the communicator with a user handler checks
 * it still carries data (across VMs in the v2 variant). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "t_check.h"

#define EXPECT(call, cls, fname) t_expect_err((call), (cls), (fname), #call)

static int calls, last_code;
static MPI_Comm last_comm;
static MPI_Win last_win;

static void comm_handler(MPI_Comm *comm, int *code, ...)
{
    calls++;
    last_comm = *comm;
    last_code = *code;
}

static void win_handler(MPI_Win *win, int *code, ...)
{
    calls++;
    last_win = *win;
    last_code = *code;
}

static void comm_handlers(void)
{
    MPI_Comm c, d;
    MPI_Errhandler eh, got;
    int rank, size, cls;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    OK(MPI_Comm_create_errhandler(comm_handler, &eh));
    OK(MPI_Comm_set_errhandler(c, eh));
    OK(MPI_Comm_get_errhandler(c, &got));
    CHECK(got == eh, "get_errhandler gave %#x, want %#x", (unsigned)got, (unsigned)eh);
    OK(MPI_Errhandler_free(&got));
    /* Freed while set: it stays until the communicators using it go. */
    OK(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL, "free did not null the handle");

    /* A real error raised on c. */
    calls = 0;
    int v = 1, rc = MPI_Send(&v, 1, MPI_INT, size + 5, 0, c);
    MPI_Error_class(rc, &cls);
    CHECK(calls == 1 && last_comm == c && last_code == rc && cls == MPI_ERR_RANK,
          "handler: %d calls, comm %#x, code %d (returned %d, class %d)", calls,
          (unsigned)last_comm, last_code, rc, cls);
    /* The dup inherits it. */
    OK(MPI_Comm_dup(c, &d));
    calls = 0;
    OK(MPI_Comm_call_errhandler(d, MPI_ERR_OTHER));
    CHECK(calls == 1 && last_comm == d && last_code == MPI_ERR_OTHER,
          "call_errhandler on the dup: %d calls", calls);
    /* Still carries data. */
    int peer = rank ^ 1, got_v = -1;
    if (peer < size)
        OK(MPI_Sendrecv(&rank, 1, MPI_INT, peer, 7, &got_v, 1, MPI_INT, peer, 7, d,
                        MPI_STATUS_IGNORE));
    CHECK(peer >= size || got_v == peer, "sendrecv got %d", got_v);
    OK(MPI_Comm_free(&c));
    calls = 0;
    OK(MPI_Comm_call_errhandler(d, MPI_ERR_ARG));
    CHECK(calls == 1, "handler gone with the first communicator");
    OK(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
    calls = 0;
    OK(MPI_Comm_call_errhandler(d, MPI_ERR_ARG)); /* returns, calls nothing */
    CHECK(calls == 0, "MPI_ERRORS_RETURN called the user handler");
    /* The MPI-1 names (removed by MPI-3.0, exported as MPICH does). */
    MPI_Errhandler old, back;
    OK(MPI_Errhandler_create(comm_handler, &old));
    OK(MPI_Errhandler_set(d, old));
    OK(MPI_Errhandler_get(d, &back));
    CHECK(back == old, "MPI_Errhandler_get gave %#x", (unsigned)back);
    calls = 0;
    OK(MPI_Comm_call_errhandler(d, MPI_ERR_TAG));
    CHECK(calls == 1 && last_comm == d, "MPI-1 handler not called");
    OK(MPI_Errhandler_free(&back));
    OK(MPI_Errhandler_free(&old));
    OK(MPI_Errhandler_set(d, MPI_ERRORS_RETURN));
    OK(MPI_Comm_free(&d));
}

static void win_handlers(void)
{
    MPI_Win w;
    MPI_Errhandler eh, ceh;
    int buf[2], size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    OK(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w));
    OK(MPI_Win_create_errhandler(win_handler, &eh));
    OK(MPI_Comm_create_errhandler(comm_handler, &ceh));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN));
    EXPECT(MPI_Win_set_errhandler(w, ceh), MPI_ERR_ARG, "MPI_Win_set_errhandler");
    EXPECT(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh), MPI_ERR_ARG, "MPI_Comm_set_errhandler");
    OK(MPI_Win_set_errhandler(w, eh));
    OK(MPI_Errhandler_free(&eh));
    calls = 0;
    OK(MPI_Win_fence(0, w));
    int rc = MPI_Put(buf, 1, MPI_INT, size + 3, 0, 1, MPI_INT, w);
    int cls;
    MPI_Error_class(rc, &cls);
    CHECK(calls == 1 && last_win == w && last_code == rc && cls == MPI_ERR_RANK,
          "window handler: %d calls, win %#x, class %d", calls, (unsigned)last_win, cls);
    calls = 0;
    OK(MPI_Win_call_errhandler(w, MPI_ERR_WIN));
    CHECK(calls == 1 && last_win == w && last_code == MPI_ERR_WIN, "win_call_errhandler");
    OK(MPI_Win_fence(0, w));
    OK(MPI_Win_free(&w));
    OK(MPI_Errhandler_free(&ceh));
}

static void user_codes(void)
{
    int c1, c2, e1, e2, e3, cls, len, *last, flag;
    char s[MPI_MAX_ERROR_STRING];
    OK(MPI_Add_error_class(&c1));
    OK(MPI_Add_error_class(&c2));
    CHECK(c1 > MPI_ERR_LASTCODE && c2 != c1, "classes %d %d", c1, c2);
    OK(MPI_Add_error_code(c1, &e1));
    OK(MPI_Add_error_code(c2, &e2));
    OK(MPI_Add_error_code(MPI_ERR_ARG, &e3));
    OK(MPI_Add_error_string(e1, "the first user code"));
    OK(MPI_Add_error_string(c2, "the second user class"));
    OK(MPI_Error_class(e1, &cls));
    CHECK(cls == c1, "class of e1 %d want %d", cls, c1);
    OK(MPI_Error_class(c2, &cls));
    CHECK(cls == c2, "class of a class");
    OK(MPI_Error_class(e3, &cls));
    CHECK(cls == MPI_ERR_ARG, "class of a code of MPI_ERR_ARG: %d", cls);
    OK(MPI_Error_string(e1, s, &len));
    CHECK(!strcmp(s, "the first user code") && len == (int)strlen(s), "string '%s'", s);
    OK(MPI_Error_string(e2, s, &len));
    CHECK(len == 0 && s[0] == '\0', "a code without a string of its own: '%s'", s);
    OK(MPI_Error_string(e3, s, &len));
    CHECK(len == 0 && s[0] == '\0', "a code of MPI_ERR_ARG without a string: '%s'", s);
    OK(MPI_Error_string(c2, s, &len));
    CHECK(!strcmp(s, "the second user class"), "class string '%s'", s);
    OK(MPI_Error_string(c1, s, &len));
    CHECK(len == 0 && s[0] == '\0', "a class without a string: '%s'", s);
    OK(MPI_Add_error_string(e1, "replaced"));
    OK(MPI_Error_string(e1, s, &len));
    CHECK(!strcmp(s, "replaced"), "replaced string '%s'", s);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag && *last == e3, "MPI_LASTUSEDCODE %d, want %d", *last, e3);
    /* A user code through a user handler. */
    MPI_Errhandler eh;
    OK(MPI_Comm_create_errhandler(comm_handler, &eh));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh));
    MPI_Errhandler dead = eh; /* freed below, then no longer used */
    calls = 0;
    OK(MPI_Comm_call_errhandler(MPI_COMM_SELF, e2));
    CHECK(calls == 1 && last_code == e2 && last_comm == MPI_COMM_SELF, "user code to handler");
    OK(MPI_Errhandler_free(&eh));

    /* bad input */
    EXPECT(MPI_Add_error_class(NULL), MPI_ERR_ARG, "MPI_Add_error_class");
    EXPECT(MPI_Add_error_code(c1, NULL), MPI_ERR_ARG, "MPI_Add_error_code");
    EXPECT(MPI_Add_error_code(e1, &e2), MPI_ERR_ARG, "MPI_Add_error_code"); /* a code */
    EXPECT(MPI_Add_error_code(c2 + 1000, &e2), MPI_ERR_ARG, "MPI_Add_error_code");
    EXPECT(MPI_Add_error_code(-3, &e2), MPI_ERR_ARG, "MPI_Add_error_code");
    EXPECT(MPI_Add_error_string(MPI_ERR_ARG, "no"), MPI_ERR_ARG, "MPI_Add_error_string");
    EXPECT(MPI_Add_error_string(e1, NULL), MPI_ERR_ARG, "MPI_Add_error_string");
    EXPECT(MPI_Comm_create_errhandler(NULL, &eh), MPI_ERR_ARG, "MPI_Comm_create_errhandler");
    EXPECT(MPI_Win_create_errhandler(win_handler, NULL), MPI_ERR_ARG,
           "MPI_Win_create_errhandler");
    EXPECT(MPI_Comm_set_errhandler(MPI_COMM_WORLD, (MPI_Errhandler)0x54000077), MPI_ERR_ARG,
           "MPI_Comm_set_errhandler");
    EXPECT(MPI_Comm_call_errhandler(MPI_COMM_NULL, MPI_ERR_ARG), MPI_ERR_COMM,
           "MPI_Comm_call_errhandler");
    EXPECT(MPI_Win_call_errhandler(MPI_WIN_NULL, MPI_ERR_ARG), MPI_ERR_WIN,
           "MPI_Win_call_errhandler");
    EXPECT(MPI_Errhandler_set(MPI_COMM_NULL, MPI_ERRORS_RETURN), MPI_ERR_COMM,
           "MPI_Errhandler_set");
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    EXPECT(MPI_Errhandler_free(&dead), MPI_ERR_ARG, "MPI_Errhandler_free");
    MPI_Errhandler ret = MPI_ERRORS_RETURN;
    OK(MPI_Errhandler_free(&ret));
    CHECK(ret == MPI_ERRHANDLER_NULL, "freeing a predefined handler nulls the handle");
    /* MPI_ERRORS_ABORT (MPI-4.0, in MPICH's header) is accepted. */
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ABORT));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    comm_handlers();
    win_handlers();
    user_codes();
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Finalize();
    if (rank == 0)
        printf("t_errhan: OK\n");
    return 0;
}
