/* np: 2 */
/* vms: v2 */
/* C/Fortran conversions (MPI-3.1 17.2): every handle kind survives
 * c2f then f2c and the handle still works (a communicator still sends, a
 * datatype still moves its bytes, a request still completes); the null
 * handles map to themselves; a status converted to Fortran and back keeps
 * source, tag, error, count and the cancelled flag; converting to or from
 * NULL or an IGNORE sentinel is MPI_ERR_ARG naming the function. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int rank, size;

#include "t_check.h"

static void check_err(int rc, int want_class, const char *fname)
{
    int cls = -1, len = 0;
    char msg[MPI_MAX_ERROR_STRING];
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, msg, &len);
    CHECK(cls == want_class, "%s: class %d, want %d (%s)", fname, cls, want_class, msg);
    CHECK(strstr(msg, fname) != NULL, "message '%s' does not name %s", msg, fname);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int peer = 1 - rank;

    MPI_Comm dup;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Comm comm = MPI_Comm_f2c(MPI_Comm_c2f(dup));
    CHECK(comm == dup, "comm round trip gave %#x for %#x", (unsigned)comm, (unsigned)dup);
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_NULL)) == MPI_COMM_NULL, "MPI_COMM_NULL changed");

    MPI_Datatype vec;
    OK(MPI_Type_vector(3, 1, 2, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    MPI_Datatype t = MPI_Type_f2c(MPI_Type_c2f(vec));
    CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_DATATYPE_NULL)) == MPI_DATATYPE_NULL,
          "MPI_DATATYPE_NULL changed");

    /* The converted communicator and datatype carry a strided message. */
    int sendbuf[6] = {10 + rank, -1, 20 + rank, -1, 30 + rank, -1}, recvbuf[6] = {0};
    MPI_Request req;
    OK(MPI_Irecv(recvbuf, 1, t, peer, 7, comm, &req));
    MPI_Request fr = MPI_Request_f2c(MPI_Request_c2f(req));
    OK(MPI_Send(sendbuf, 1, t, peer, 7, comm));
    MPI_Status st;
    OK(MPI_Wait(&fr, &st));
    CHECK(fr == MPI_REQUEST_NULL, "request not freed through its converted handle");
    CHECK(recvbuf[0] == 10 + peer && recvbuf[2] == 20 + peer && recvbuf[4] == 30 + peer &&
              recvbuf[1] == 0,
          "received %d %d %d %d", recvbuf[0], recvbuf[1], recvbuf[2], recvbuf[4]);

    MPI_Group g, g2;
    OK(MPI_Comm_group(comm, &g));
    g2 = MPI_Group_f2c(MPI_Group_c2f(g));
    int gsize = 0;
    OK(MPI_Group_size(g2, &gsize));
    CHECK(gsize == size, "group size %d through converted handle", gsize);

    MPI_Info info;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(MPI_Info_f2c(MPI_Info_c2f(info)), "k", "v"));
    int nkeys = 0;
    OK(MPI_Info_get_nkeys(info, &nkeys));
    CHECK(nkeys == 1, "info has %d keys after a set through its converted handle", nkeys);

    CHECK(MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)) == MPI_SUM, "MPI_SUM changed");
    int one = 1, sum = 0;
    OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)), comm));
    CHECK(sum == size, "allreduce through converted op gave %d", sum);
    CHECK(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_RETURN)) == MPI_ERRORS_RETURN,
          "MPI_ERRORS_RETURN changed");

    int wbuf = -1;
    MPI_Win win;
    OK(MPI_Win_create(&wbuf, sizeof wbuf, sizeof wbuf, MPI_INFO_NULL, comm, &win));
    MPI_Win w2 = MPI_Win_f2c(MPI_Win_c2f(win));
    OK(MPI_Win_fence(0, w2));
    OK(MPI_Put(&rank, 1, MPI_INT, peer, 0, 1, MPI_INT, w2));
    OK(MPI_Win_fence(0, w2));
    CHECK(wbuf == peer, "window through converted handle holds %d", wbuf);
    OK(MPI_Win_free(&w2));

    /* Status: every field, the count and the cancelled flag survive. */
    MPI_Fint f[5];
    OK(MPI_Status_c2f(&st, f));
    CHECK(f[2] == peer && f[3] == 7, "Fortran status source %d tag %d", (int)f[2], (int)f[3]);
    MPI_Status back;
    memset(&back, 0xff, sizeof back);
    OK(MPI_Status_f2c(f, &back));
    int count = -1, cancelled = -1;
    OK(MPI_Get_count(&back, t, &count));
    OK(MPI_Test_cancelled(&back, &cancelled));
    CHECK(back.MPI_SOURCE == peer && back.MPI_TAG == 7 && back.MPI_ERROR == st.MPI_ERROR &&
              count == 1 && cancelled == 0,
          "status back: source %d tag %d count %d cancelled %d", back.MPI_SOURCE,
          back.MPI_TAG, count, cancelled);

    check_err(MPI_Status_c2f(MPI_STATUS_IGNORE, f), MPI_ERR_ARG, "MPI_Status_c2f");
    check_err(MPI_Status_c2f(&st, NULL), MPI_ERR_ARG, "MPI_Status_c2f");
    check_err(MPI_Status_f2c(MPI_F_STATUS_IGNORE, &back), MPI_ERR_ARG, "MPI_Status_f2c");
    check_err(MPI_Status_f2c(f, MPI_STATUS_IGNORE), MPI_ERR_ARG, "MPI_Status_f2c");
    CHECK(MPI_F_STATUS_IGNORE != NULL && MPI_F_STATUSES_IGNORE != NULL &&
              MPI_F_STATUS_IGNORE != MPI_F_STATUSES_IGNORE,
          "the Fortran IGNORE sentinels are not two distinct addresses");

    /* The PMPI twins are the same conversions. */
    CHECK(PMPI_Comm_c2f(comm) == MPI_Comm_c2f(comm) && PMPI_Type_f2c(MPI_Type_c2f(t)) == t,
          "PMPI conversions differ");

    MPI_Info_free(&info);
    MPI_Group_free(&g);
    MPI_Type_free(&vec);
    MPI_Comm_free(&dup);
    MPI_Finalize();
    if (rank == 0)
        printf("t_handle: ok\n");
    return 0;
}
