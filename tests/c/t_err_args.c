/* np: 2 */
/* net: ofi h2 */
/* Bad arguments to point-to-point (and a few collective) calls with
 * MPI_ERRORS_RETURN on MPI_COMM_WORLD: each call returns a code of the
 * right error class, MPI_Error_string names the function, nothing is sent
 * or received, and communication still works afterwards. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#include "t_check.h"

static int nchecks;

static void expect_err(int rc, int want, const char *fname, const char *what, int line)
{
    int cls = -1;
    nchecks++;
    CHECK(rc != MPI_SUCCESS, "line %d: %s: returned MPI_SUCCESS, want class %d", line, what,
          want);
    OK(MPI_Error_class(rc, &cls));
    CHECK(cls == want, "line %d: %s: error class %d, want %d", line, what, cls, want);
    char msg[MPI_MAX_ERROR_STRING];
    int len = -1;
    OK(MPI_Error_string(rc, msg, &len));
    CHECK(len > 0 && len < MPI_MAX_ERROR_STRING && (int)strlen(msg) == len,
          "line %d: %s: Error_string length %d for '%s'", line, what, len, msg);
    CHECK(strstr(msg, fname) != NULL, "line %d: %s: message '%s' does not name %s", line, what,
          msg, fname);
}
#define EXPECT(call, cls, fname) expect_err((call), (cls), (fname), #call, __LINE__)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2, "needs 2 ranks");
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Errhandler eh;
    OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "errhandler %#x", (unsigned)eh);

    int *tagub_p = NULL, flag = 0;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tagub_p, &flag));
    CHECK(flag && tagub_p && *tagub_p >= 32767, "MPI_TAG_UB: flag %d value %d", flag,
          tagub_p ? *tagub_p : -1);
    const int tag_ub = *tagub_p;
    const int peer = 1 - rank;
    int a[8] = {0}, b[8] = {0};
    MPI_Request q = MPI_REQUEST_NULL;
    MPI_Status st;
    const MPI_Comm bad_comm = (MPI_Comm)0x12345;
    const MPI_Datatype bad_type = (MPI_Datatype)0x12345;

    MPI_Datatype uncommitted, freed, freed_copy;
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &uncommitted));
    OK(MPI_Type_contiguous(2, MPI_INT, &freed));
    OK(MPI_Type_commit(&freed));
    freed_copy = freed;
    OK(MPI_Type_free(&freed));

    /* --- communicator --- */
    EXPECT(MPI_Send(a, 1, MPI_INT, peer, 0, bad_comm), MPI_ERR_COMM, "MPI_Send");
    EXPECT(MPI_Send(a, 1, MPI_INT, peer, 0, MPI_COMM_NULL), MPI_ERR_COMM, "MPI_Send");
    EXPECT(MPI_Recv(a, 1, MPI_INT, peer, 0, MPI_COMM_NULL, &st), MPI_ERR_COMM, "MPI_Recv");
    EXPECT(MPI_Recv(a, 1, MPI_INT, peer, 0, bad_comm, &st), MPI_ERR_COMM, "MPI_Recv");
    EXPECT(MPI_Isend(a, 1, MPI_INT, peer, 0, bad_comm, &q), MPI_ERR_COMM, "MPI_Isend");
    EXPECT(MPI_Irecv(a, 1, MPI_INT, peer, 0, MPI_COMM_NULL, &q), MPI_ERR_COMM, "MPI_Irecv");
    EXPECT(MPI_Ssend(a, 1, MPI_INT, peer, 0, MPI_COMM_NULL), MPI_ERR_COMM, "MPI_Ssend");
    EXPECT(MPI_Probe(peer, 0, bad_comm, &st), MPI_ERR_COMM, "MPI_Probe");
    EXPECT(MPI_Iprobe(peer, 0, MPI_COMM_NULL, &flag, &st), MPI_ERR_COMM, "MPI_Iprobe");
    EXPECT(MPI_Send_init(a, 1, MPI_INT, peer, 0, bad_comm, &q), MPI_ERR_COMM, "MPI_Send_init");
    EXPECT(MPI_Sendrecv(a, 1, MPI_INT, peer, 0, b, 1, MPI_INT, peer, 0, MPI_COMM_NULL, &st),
           MPI_ERR_COMM, "MPI_Sendrecv");
    CHECK(q == MPI_REQUEST_NULL, "a failed call set the request to %#x", (unsigned)q);

    /* --- datatype --- */
    EXPECT(MPI_Send(a, 1, bad_type, peer, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Send");
    EXPECT(MPI_Send(a, 1, MPI_DATATYPE_NULL, peer, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Send");
    EXPECT(MPI_Send(a, 1, freed_copy, peer, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Send");
    EXPECT(MPI_Send(a, 1, uncommitted, peer, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Send");
    EXPECT(MPI_Recv(a, 1, MPI_DATATYPE_NULL, peer, 0, MPI_COMM_WORLD, &st), MPI_ERR_TYPE,
           "MPI_Recv");
    EXPECT(MPI_Recv(a, 1, uncommitted, peer, 0, MPI_COMM_WORLD, &st), MPI_ERR_TYPE, "MPI_Recv");
    EXPECT(MPI_Irecv(a, 1, freed_copy, peer, 0, MPI_COMM_WORLD, &q), MPI_ERR_TYPE, "MPI_Irecv");
    EXPECT(MPI_Isend(a, 1, bad_type, peer, 0, MPI_COMM_WORLD, &q), MPI_ERR_TYPE, "MPI_Isend");
    EXPECT(MPI_Get_count(&st, bad_type, &flag), MPI_ERR_TYPE, "MPI_Get_count");
    EXPECT(MPI_Type_commit(&freed_copy), MPI_ERR_TYPE, "MPI_Type_commit");
    {
        int s = -1;
        EXPECT(MPI_Type_size(MPI_DATATYPE_NULL, &s), MPI_ERR_TYPE, "MPI_Type_size");
    }
    /* the uncommitted type becomes usable once committed */
    OK(MPI_Type_commit(&uncommitted));

    /* --- rank --- */
    EXPECT(MPI_Send(a, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "MPI_Send");
    EXPECT(MPI_Send(a, 1, MPI_INT, -7, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "MPI_Send");
    EXPECT(MPI_Send(a, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD), MPI_ERR_RANK,
           "MPI_Send");
    EXPECT(MPI_Isend(a, 1, MPI_INT, 1000, 0, MPI_COMM_WORLD, &q), MPI_ERR_RANK, "MPI_Isend");
    EXPECT(MPI_Recv(a, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK, "MPI_Recv");
    EXPECT(MPI_Irecv(a, 1, MPI_INT, -9, 0, MPI_COMM_WORLD, &q), MPI_ERR_RANK, "MPI_Irecv");
    EXPECT(MPI_Probe(size + 1, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK, "MPI_Probe");
    EXPECT(MPI_Iprobe(-9, 0, MPI_COMM_WORLD, &flag, &st), MPI_ERR_RANK, "MPI_Iprobe");
    EXPECT(MPI_Recv_init(a, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &q), MPI_ERR_RANK,
           "MPI_Recv_init");
    EXPECT(MPI_Sendrecv(a, 1, MPI_INT, size, 0, b, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &st),
           MPI_ERR_RANK, "MPI_Sendrecv");
    EXPECT(MPI_Sendrecv_replace(a, 1, MPI_INT, peer, 0, size, 0, MPI_COMM_WORLD, &st),
           MPI_ERR_RANK, "MPI_Sendrecv_replace");

    /* --- tag --- */
    EXPECT(MPI_Send(a, 1, MPI_INT, peer, -5, MPI_COMM_WORLD), MPI_ERR_TAG, "MPI_Send");
    EXPECT(MPI_Send(a, 1, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG, "MPI_Send");
    if (tag_ub < 0x7fffffff)
        EXPECT(MPI_Send(a, 1, MPI_INT, peer, tag_ub + 1, MPI_COMM_WORLD), MPI_ERR_TAG,
               "MPI_Send");
    EXPECT(MPI_Issend(a, 1, MPI_INT, peer, -2, MPI_COMM_WORLD, &q), MPI_ERR_TAG, "MPI_Issend");
    EXPECT(MPI_Recv(a, 1, MPI_INT, peer, -5, MPI_COMM_WORLD, &st), MPI_ERR_TAG, "MPI_Recv");
    if (tag_ub < 0x7fffffff)
        EXPECT(MPI_Irecv(a, 1, MPI_INT, peer, tag_ub + 1, MPI_COMM_WORLD, &q), MPI_ERR_TAG,
               "MPI_Irecv");
    EXPECT(MPI_Iprobe(peer, -3, MPI_COMM_WORLD, &flag, &st), MPI_ERR_TAG, "MPI_Iprobe");

    /* --- count --- */
    EXPECT(MPI_Send(a, -1, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "MPI_Send");
    EXPECT(MPI_Recv(a, -1, MPI_INT, peer, 0, MPI_COMM_WORLD, &st), MPI_ERR_COUNT, "MPI_Recv");
    EXPECT(MPI_Isend(a, -100, MPI_INT, peer, 0, MPI_COMM_WORLD, &q), MPI_ERR_COUNT,
           "MPI_Isend");
    EXPECT(MPI_Rsend(a, -1, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "MPI_Rsend");

    /* --- buffer --- */
    EXPECT(MPI_Send(NULL, 3, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER, "MPI_Send");
    EXPECT(MPI_Recv(NULL, 3, MPI_INT, peer, 0, MPI_COMM_WORLD, &st), MPI_ERR_BUFFER,
           "MPI_Recv");
    EXPECT(MPI_Irecv(NULL, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, &q), MPI_ERR_BUFFER,
           "MPI_Irecv");

    /* --- requests --- */
    MPI_Request badq = (MPI_Request)0x12345, bq2 = (MPI_Request)0x7c000005;
    EXPECT(MPI_Wait(&badq, &st), MPI_ERR_REQUEST, "MPI_Wait");
    EXPECT(MPI_Wait(&bq2, &st), MPI_ERR_REQUEST, "MPI_Wait");
    EXPECT(MPI_Test(&badq, &flag, &st), MPI_ERR_REQUEST, "MPI_Test");
    EXPECT(MPI_Start(&badq), MPI_ERR_REQUEST, "MPI_Start");
    EXPECT(MPI_Request_free(&badq), MPI_ERR_REQUEST, "MPI_Request_free");
    {
        MPI_Request arr[2] = {MPI_REQUEST_NULL, (MPI_Request)0x12345};
        MPI_Status sts[2];
        int idx;
        EXPECT(MPI_Waitall(2, arr, sts), MPI_ERR_REQUEST, "MPI_Waitall");
        EXPECT(MPI_Waitany(2, arr, &idx, &st), MPI_ERR_REQUEST, "MPI_Waitany");
        EXPECT(MPI_Testall(2, arr, &flag, sts), MPI_ERR_REQUEST, "MPI_Testall");
    }
    /* a completed (freed) request handle is no longer valid */
    {
        MPI_Request done;
        OK(MPI_Isend(a, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &done));
        MPI_Request stale = done;
        OK(MPI_Wait(&done, &st));
        CHECK(done == MPI_REQUEST_NULL, "Wait did not null the request");
        EXPECT(MPI_Wait(&stale, &st), MPI_ERR_REQUEST, "MPI_Wait");
        /* ... also once its slot holds a new request, which stays intact */
        MPI_Request fresh;
        OK(MPI_Irecv(b, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &fresh));
        CHECK(fresh != stale, "a new request got the handle of a freed one");
        EXPECT(MPI_Request_free(&stale), MPI_ERR_REQUEST, "MPI_Request_free");
        int fdone = 0;
        OK(MPI_Test(&fresh, &fdone, &st));
        CHECK(fdone && fresh == MPI_REQUEST_NULL, "the new request was disturbed");
    }
    /* Start on a non-persistent request */
    {
        MPI_Request nq;
        OK(MPI_Irecv(b, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &nq));
        EXPECT(MPI_Start(&nq), MPI_ERR_REQUEST, "MPI_Start");
        OK(MPI_Wait(&nq, &st));
    }

    /* --- collectives: op and root --- */
    EXPECT(MPI_Reduce(a, b, 1, MPI_INT, MPI_OP_NULL, 0, MPI_COMM_WORLD), MPI_ERR_OP,
           "MPI_Reduce");
    EXPECT(MPI_Reduce(a, b, 1, MPI_INT, (MPI_Op)0x12345, 0, MPI_COMM_WORLD), MPI_ERR_OP,
           "MPI_Reduce");
    EXPECT(MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, size, MPI_COMM_WORLD), MPI_ERR_ROOT,
           "MPI_Reduce");
    EXPECT(MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, -1, MPI_COMM_WORLD), MPI_ERR_ROOT,
           "MPI_Reduce");
    EXPECT(MPI_Bcast(a, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT, "MPI_Bcast");
    EXPECT(MPI_Bcast(a, 1, MPI_INT, -5, MPI_COMM_WORLD), MPI_ERR_ROOT, "MPI_Bcast");
    EXPECT(MPI_Allreduce(a, b, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP,
           "MPI_Allreduce");

    /* Error_class of every class constant is itself; a bogus code is refused. */
    for (int c = MPI_SUCCESS; c <= MPI_ERR_REQUEST; c++) {
        int cls = -1;
        OK(MPI_Error_class(c, &cls));
        CHECK(cls == c, "Error_class(%d) = %d", c, cls);
    }

    /* Nothing above sent or posted anything: the valid edge cases work and
     * the exchange below is the first message. Tag MPI_TAG_UB is valid. */
    int x = 100 + rank, y = -1;
    OK(MPI_Sendrecv(&x, 1, MPI_INT, peer, tag_ub, &y, 1, MPI_INT, peer, tag_ub, MPI_COMM_WORLD,
                    &st));
    CHECK(y == 100 + peer && st.MPI_TAG == tag_ub, "exchange after errors: %d tag %d", y,
          st.MPI_TAG);
    OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    CHECK(!flag, "a failed call left a message behind (source %d tag %d)", st.MPI_SOURCE,
          st.MPI_TAG);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    /* the committed vector works */
    int v4[4] = {1, 2, 3, 4}, r2[2] = {0, 0};
    OK(MPI_Sendrecv(v4, 1, uncommitted, peer, 1, r2, 2, MPI_INT, peer, 1, MPI_COMM_WORLD, &st));
    CHECK(r2[0] == 1 && r2[1] == 3, "vector after commit: %d %d", r2[0], r2[1]);
    OK(MPI_Type_free(&uncommitted));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("t_err_args: OK (%d error checks)\n", nchecks);
    MPI_Finalize();
    return 0;
}
