/* np: 1 2 3 */
/* vms: v2 */
/* MPI_Comm_spawn and spawn_multiple: the job spawns 3 copies of this
 * program (arguments "child" "a b"), which find their parent; then two
 * commands of 1 and 2 processes (appnum 0 and 1). Checked: sizes of the
 * intercommunicators and the children's world, argv as passed, MPI_APPNUM,
 * errcodes, messages both ways (eager and 1 MiB) with values that depend
 * on the sender, a merge with an Allreduce over parents and children, a
 * name published by the parents' root and looked up by the children,
 * Comm_disconnect; bad input: a command that does not exist (MPI_ERR_SPAWN
 * on every rank, naming the function), maxprocs < 0, unpublishing a name
 * twice, looking up an unknown name. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_check.h"

#define BIG (1 << 20)

static int rank, size;

/* Both sides: every process sends to every remote process and receives
 * from each; then the merge (parents first) and its Allreduce. */
static void talk(MPI_Comm inter, int parent_side, int total)
{
    int lrank, rsize;
    OK(MPI_Comm_rank(inter, &lrank));
    OK(MPI_Comm_remote_size(inter, &rsize));
    char *out = malloc(BIG), *in = malloc(BIG);
    CHECK(out && in, "out of memory");
    memset(out, 'a' + lrank + (parent_side ? 0 : 10), BIG);
    for (int r = 0; r < rsize; r++) {
        int v = 100 * lrank + parent_side, got = -1;
        OK(MPI_Sendrecv(&v, 1, MPI_INT, r, 1, &got, 1, MPI_INT, r, 1, inter, MPI_STATUS_IGNORE));
        CHECK(got == 100 * r + !parent_side, "got %d from remote %d", got, r);
        OK(MPI_Sendrecv(out, BIG, MPI_CHAR, r, 2, in, BIG, MPI_CHAR, r, 2, inter,
                        MPI_STATUS_IGNORE));
        char want = (char)('a' + r + (parent_side ? 10 : 0));
        CHECK(in[0] == want && in[BIG - 1] == want, "1 MiB from remote %d: %c..%c", r, in[0],
              in[BIG - 1]);
    }
    free(out);
    free(in);
    MPI_Comm merged;
    OK(MPI_Intercomm_merge(inter, !parent_side, &merged));
    int msize, one = 1, sum = 0;
    OK(MPI_Comm_size(merged, &msize));
    CHECK(msize == total, "merged size %d, want %d", msize, total);
    OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged));
    CHECK(sum == total, "merged Allreduce %d, want %d", sum, total);
    OK(MPI_Comm_free(&merged));
}

static void child(MPI_Comm parent, int argc, char **argv)
{
    int psize, appnum = -1, flag = 0, *ap;
    OK(MPI_Comm_remote_size(parent, &psize));
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &ap, &flag));
    if (flag)
        appnum = *ap;
    if (argc > 1 && !strcmp(argv[1], "child")) {
        CHECK(size == 3, "children's world has %d processes, want 3", size);
        CHECK(argc == 3 && !strcmp(argv[2], "a b"), "argv: %d arguments, second '%s'", argc,
              argc > 2 ? argv[2] : "");
        talk(parent, 0, psize + size);
        char port[MPI_MAX_PORT_NAME];
        OK(MPI_Lookup_name("vmpi-t-dyn", MPI_INFO_NULL, port));
        MPI_Comm inter;
        OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
        int v = -1;
        if (rank == 0)
            OK(MPI_Recv(&v, 1, MPI_INT, 0, 5, inter, MPI_STATUS_IGNORE));
        OK(MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD));
        CHECK(v == 4242, "value through the published port: %d", v);
        OK(MPI_Comm_disconnect(&inter));
    } else {
        CHECK(size == 3, "spawn_multiple's world has %d processes, want 3", size);
        CHECK(appnum == (rank == 0 ? 0 : 1), "rank %d has appnum %d", rank, appnum);
        CHECK(argc == 2 && !strcmp(argv[1], rank == 0 ? "one" : "two"), "argv[1] = '%s'",
              argc > 1 ? argv[1] : "");
        talk(parent, 0, psize + size);
    }
    OK(MPI_Comm_disconnect(&parent));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm parent;
    OK(MPI_Comm_get_parent(&parent));
    if (parent != MPI_COMM_NULL) {
        child(parent, argc, argv);
        MPI_Finalize();
        return 0;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* The name is published before the children look it up. */
    char port[MPI_MAX_PORT_NAME] = "";
    if (rank == 0) {
        OK(MPI_Open_port(MPI_INFO_NULL, port));
        OK(MPI_Publish_name("vmpi-t-dyn", MPI_INFO_NULL, port));
    }
    char *args[] = {"child", "a b", NULL};
    int codes[3] = {-1, -1, -1};
    MPI_Comm kids;
    OK(MPI_Comm_spawn(argv[0], args, 3, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &kids, codes));
    for (int i = 0; i < 3; i++)
        CHECK(codes[i] == MPI_SUCCESS, "errcode %d is %d", i, codes[i]);
    int n;
    OK(MPI_Comm_remote_size(kids, &n));
    CHECK(n == 3, "%d children", n);
    talk(kids, 1, size + 3);
    MPI_Comm inter;
    OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
    if (rank == 0) {
        int v = 4242;
        OK(MPI_Send(&v, 1, MPI_INT, 0, 5, inter));
        OK(MPI_Unpublish_name("vmpi-t-dyn", MPI_INFO_NULL, port));
        t_expect_err(MPI_Unpublish_name("vmpi-t-dyn", MPI_INFO_NULL, port), MPI_ERR_SERVICE,
                     "MPI_Unpublish_name", "unpublishing twice");
        char p2[MPI_MAX_PORT_NAME];
        t_expect_err(MPI_Lookup_name("vmpi-t-no-such", MPI_INFO_NULL, p2), MPI_ERR_NAME,
                     "MPI_Lookup_name", "an unknown name");
        OK(MPI_Close_port(port));
    }
    OK(MPI_Comm_disconnect(&inter));
    OK(MPI_Comm_disconnect(&kids));

    char *cmds[2] = {argv[0], argv[0]};
    char *a1[] = {"one", NULL}, *a2[] = {"two", NULL};
    char **argvs[2] = {a1, a2};
    int np[2] = {1, 2};
    MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
    OK(MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, 0, MPI_COMM_WORLD, &kids,
                               MPI_ERRCODES_IGNORE));
    OK(MPI_Comm_remote_size(kids, &n));
    CHECK(n == 3, "%d children of spawn_multiple", n);
    talk(kids, 1, size + 3);
    OK(MPI_Comm_disconnect(&kids));

    t_expect_err(MPI_Comm_spawn("/nonexistent/vmpi-no-such-program", MPI_ARGV_NULL, 1,
                                MPI_INFO_NULL, 0, MPI_COMM_WORLD, &kids, MPI_ERRCODES_IGNORE),
                 MPI_ERR_SPAWN, "MPI_Comm_spawn", "a command that does not exist");
    if (rank == 0) {
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        t_expect_err(MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, -1, MPI_INFO_NULL, 0, MPI_COMM_SELF,
                                    &kids, MPI_ERRCODES_IGNORE),
                     MPI_ERR_ARG, "MPI_Comm_spawn", "maxprocs -1");
    }
    MPI_Finalize();
    if (rank == 0)
        printf("OK\n");
    return 0;
}
