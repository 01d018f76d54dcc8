/* np: 2 4 */
/* net: h2 */
/* vms: v2 h2v2 */
/* The job of the real-VM tests (tests/py/test_guests.py), which also runs
 * everywhere else: a ping-pong between rank pairs (r, r^1) at sizes across
 * the eager/rendezvous threshold, every byte of every message checked on
 * both sides; an Allreduce of rank-dependent values, checked exactly; and a
 * Bcast of a large pattern. Rank 0 prints one line naming each rank's host
 * name, so the test sees where the ranks ran.
 *
 * "t_guest spawn CODE [CHILD]" tests MPI_Comm_spawn instead: rank 0 first
 * asks for a child on a host that does not exist and prints the refusal;
 * then the job spawns two children running CHILD (default: this program,
 * a copy of it otherwise), one where rank 0 runs and one on the host named
 * h0-g1 (info "host"). Every parent and every child exchange an eager and a
 * rendezvous message both ways over the intercommunicator, every byte
 * checked on both sides, then Allreduce over the merged communicator. Each
 * child prints its host name; child 1 exits with CODE after MPI_Finalize,
 * or with a negative CODE calls MPI_Abort(-CODE) instead of finalizing. */
#define _DEFAULT_SOURCE
#include "t_check.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

static unsigned char pattern(int from, int iter, size_t i)
{
    return (unsigned char)(from * 131 + iter * 31 + (int)(i * 7 + (i >> 9)));
}

static void pingpong(int rank, int peer, size_t n, int iters, unsigned char *buf)
{
    for (int it = 0; it < iters; it++) {
        int sender;
        if ((rank & 1) == (it & 1)) {
            for (size_t i = 0; i < n; i++)
                buf[i] = pattern(rank, it, i);
            OK(MPI_Send(buf, (int)n, MPI_BYTE, peer, it, MPI_COMM_WORLD));
            OK(MPI_Recv(buf, (int)n, MPI_BYTE, peer, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            sender = rank;
        } else {
            MPI_Status st;
            memset(buf, 0, n);
            OK(MPI_Recv(buf, (int)n, MPI_BYTE, peer, it, MPI_COMM_WORLD, &st));
            int count = -1;
            OK(MPI_Get_count(&st, MPI_BYTE, &count));
            CHECK((size_t)count == n, "received %d bytes, want %zu", count, n);
            sender = peer;
            OK(MPI_Send(buf, (int)n, MPI_BYTE, peer, it, MPI_COMM_WORLD));
        }
        /* the initiator checks the echo, the echoer checked what it got */
        for (size_t i = 0; i < n; i++)
            CHECK(buf[i] == pattern(sender, it, i), "size %zu iteration %d: byte %zu is %u",
                  n, it, i, buf[i]);
    }
}

/* Both sides of a spawn: this process (number me on its side, 100 + me for
 * parents, 200 + me for children) exchanges with every remote process. */
static void talk(MPI_Comm inter, int me, int remote_base)
{
    int rsize;
    OK(MPI_Comm_remote_size(inter, &rsize));
    size_t sizes[2] = {8, (size_t)1 << 18};
    unsigned char *out = malloc(sizes[1]), *in = malloc(sizes[1]);
    CHECK(out && in, "out of memory");
    for (int r = 0; r < rsize; r++) {
        for (int k = 0; k < 2; k++) {
            size_t n = sizes[k];
            for (size_t i = 0; i < n; i++)
                out[i] = pattern(me, r, i);
            memset(in, 0, n);
            OK(MPI_Sendrecv(out, (int)n, MPI_BYTE, r, k, in, (int)n, MPI_BYTE, r, k, inter,
                            MPI_STATUS_IGNORE));
            int mine = me % 100;
            for (size_t i = 0; i < n; i++)
                CHECK(in[i] == pattern(remote_base + r, mine, i),
                      "%zu bytes from remote %d: byte %zu is %u", n, r, i, in[i]);
        }
    }
    free(out);
    free(in);
    MPI_Comm merged;
    int msize, one = 1, sum = 0;
    OK(MPI_Intercomm_merge(inter, remote_base == 100, &merged));
    OK(MPI_Comm_size(merged, &msize));
    OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged));
    CHECK(sum == msize, "merged Allreduce %d, want %d", sum, msize);
    OK(MPI_Comm_free(&merged));
}

static int spawn_test(int argc, char **argv, int rank)
{
    int code = argc > 2 ? atoi(argv[2]) : 0;
    MPI_Comm parent, kids;
    OK(MPI_Comm_get_parent(&parent));
    if (parent != MPI_COMM_NULL) {
        talk(parent, 200 + rank, 100);
        char host[64] = "";
        gethostname(host, sizeof host - 1);
        printf("t_guest: child %d on %s ok\n", rank, host);
        fflush(stdout);
        if (rank == 1 && code < 0)
            MPI_Abort(MPI_COMM_WORLD, -code);
        OK(MPI_Comm_disconnect(&parent));
        OK(MPI_Finalize());
        return rank == 1 ? code : 0;
    }
    MPI_Info where;
    OK(MPI_Info_create(&where));
    if (rank == 0) {
        OK(MPI_Info_set(where, "host", "h9-g0"));
        OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
        int rc = MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 1, where, 0, MPI_COMM_SELF, &kids,
                                MPI_ERRCODES_IGNORE);
        t_expect_err(rc, MPI_ERR_SPAWN, "MPI_Comm_spawn", "a spawn onto host h9-g0");
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        OK(MPI_Error_string(rc, msg, &len));
        printf("t_guest: refused: %s\n", msg);
    }
    OK(MPI_Info_set(where, "host", "h0-g1"));
    char *child = argc > 3 ? argv[3] : argv[0];
    char *cmds[2] = {child, child};
    char *args[] = {"spawn", argc > 2 ? argv[2] : "0", NULL};
    char **argvs[2] = {args, args};
    int np[2] = {1, 1};
    MPI_Info infos[2] = {MPI_INFO_NULL, where};
    int codes[2] = {-1, -1};
    OK(MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, 0, MPI_COMM_WORLD, &kids, codes));
    CHECK(codes[0] == MPI_SUCCESS && codes[1] == MPI_SUCCESS, "errcodes %d %d", codes[0],
          codes[1]);
    OK(MPI_Info_free(&where));
    talk(kids, 100 + rank, 200);
    OK(MPI_Comm_disconnect(&kids));
    if (rank == 0)
        printf("t_guest: spawned 2 children ok\n");
    OK(MPI_Finalize());
    return 0;
}

int main(int argc, char **argv)
{
    int rank, size;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    if (argc > 1 && !strcmp(argv[1], "spawn"))
        return spawn_test(argc, argv, rank);
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size % 2 == 0, "needs an even number of ranks, got %d", size);

    size_t max = (size_t)1 << 20;
    unsigned char *buf = malloc(max);
    CHECK(buf != NULL, "out of memory");
    for (size_t n = 1; n <= max; n *= 8)
        pingpong(rank, rank ^ 1, n, n >= 65536 ? 4 : 20, buf);

    enum { N = 1000 };
    long in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = (long)(rank + 1) * (i + 1);
    OK(MPI_Allreduce(in, out, N, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    long ranks_sum = (long)size * (size + 1) / 2;
    for (int i = 0; i < N; i++)
        CHECK(out[i] == ranks_sum * (i + 1), "allreduce element %d is %ld, want %ld", i,
              out[i], ranks_sum * (i + 1));
    double dmax = 0;
    double mine = rank * 0.5;
    OK(MPI_Allreduce(&mine, &dmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    CHECK(dmax == (size - 1) * 0.5, "allreduce max is %g", dmax);

    size_t bn = (size_t)1 << 18;
    for (size_t i = 0; i < bn; i++)
        buf[i] = rank == size - 1 ? pattern(size - 1, 99, i) : 0;
    OK(MPI_Bcast(buf, (int)bn, MPI_BYTE, size - 1, MPI_COMM_WORLD));
    for (size_t i = 0; i < bn; i++)
        CHECK(buf[i] == pattern(size - 1, 99, i), "bcast byte %zu is %u", i, buf[i]);

    char host[64] = "";
    gethostname(host, sizeof host - 1);
    char *all = malloc((size_t)size * sizeof host);
    CHECK(all != NULL, "out of memory");
    OK(MPI_Gather(host, sizeof host, MPI_CHAR, all, sizeof host, MPI_CHAR, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        printf("t_guest: ok, %d ranks on", size);
        for (int r = 0; r < size; r++)
            printf(" %s", all + (size_t)r * sizeof host);
        printf("\n");
    }
    free(all);
    free(buf);
    OK(MPI_Finalize());
    return 0;
}
