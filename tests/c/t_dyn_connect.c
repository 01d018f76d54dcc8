/* np: 1 */
/* vms: v2 h2v2 */
/* Two jobs that meet through a port talk by locality like spawned ones: in
 * other VMs of one host through the host region (ivshmem). The parent
 * spawns job A (2 processes) in h0-vm1 and job B (2) in h0-vm0 under
 * emulated VMs, else both beside it; A opens a port, the parent passes its
 * name to B, A accepts and B connects. Every A process then receives from
 * every B process, one at a time, 3 eager messages and one of 256 KiB,
 * counting with the MPI_T channel counters which channel brought them, and
 * answers; both sides check the data. Then the first process of each joins
 * the other's over a socket (MPI_Comm_join) and they exchange again. */
#include "t_dyn_chan.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

enum { NPROC = 2 };

/* A and B over their intercommunicator: A counts, B sends first. */
static void meet(MPI_Comm ab, int is_a)
{
    int rank, rsize, len, ivshmem = 0, all = 0;
    char me[MPI_MAX_PROCESSOR_NAME] = "";
    OK(MPI_Get_processor_name(me, &len));
    OK(MPI_Comm_rank(ab, &rank));
    OK(MPI_Comm_remote_size(ab, &rsize));
    CHECK(rsize == NPROC, "remote size %d", rsize);
    /* Names first, so nothing else arrives while A counts. */
    char *names = calloc(NPROC, MPI_MAX_PROCESSOR_NAME);
    CHECK(names != NULL, "no memory");
    for (int p = 0; p < rsize; p++)
        if (is_a)
            OK(MPI_Recv(names + p * MPI_MAX_PROCESSOR_NAME, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, p,
                        1, ab, MPI_STATUS_IGNORE));
        else
            OK(MPI_Send(me, len + 1, MPI_CHAR, p, 1, ab));
    for (int p = 0; p < rsize; p++) {
        int go = 1;
        if (!is_a) {
            OK(MPI_Recv(&go, 1, MPI_INT, p, 2, ab, MPI_STATUS_IGNORE));
            t_dyn_exchange(ab, p, 10 + rank, 1);
            t_dyn_exchange(ab, p, 20 + p, 0);
            continue;
        }
        unsigned long long got[T_DYN_NCHAN];
        const char *peer = names + p * MPI_MAX_PROCESSOR_NAME;
        OK(MPI_Send(&go, 1, MPI_INT, p, 2, ab));
        t_dyn_counted(ab, p, 10 + p, got);
        int k = t_dyn_channel(me, peer);
        t_dyn_check(got, k, me, peer);
        ivshmem += k == 1;
        t_dyn_exchange(ab, p, 20 + rank, 1);
    }
    free(names);
    if (!is_a)
        return;
    /* No A process's bytes may reach one that still counts (a barrier carries none). */
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Allreduce(&ivshmem, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(!t_dyn_region_on(me) || all == NPROC * NPROC, "%d of %d pairs over ivshmem", all,
          NPROC * NPROC);
    if (rank == 0)
        printf("t_dyn_connect: %d of %d pairs between jobs A and B over ivshmem OK\n", all,
               NPROC * NPROC);
}

/* A's rank 0 listens on the loopback (the VMs of a host share its
 * network), tells B's rank 0 the port over ab, and both join. */
static void join(MPI_Comm ab, int is_a)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = 0;
    CHECK(fd >= 0, "socket");
    if (is_a) {
        CHECK(!bind(fd, (struct sockaddr *)&sa, sizeof sa) && !listen(fd, 1) &&
                  !getsockname(fd, (struct sockaddr *)&sa, &len),
              "listen on the loopback");
        port = ntohs(sa.sin_port);
        OK(MPI_Send(&port, 1, MPI_INT, 0, 3, ab));
        int c = accept(fd, NULL, NULL);
        CHECK(c >= 0, "accept");
        close(fd);
        fd = c;
    } else {
        OK(MPI_Recv(&port, 1, MPI_INT, 0, 3, ab, MPI_STATUS_IGNORE));
        sa.sin_port = htons((uint16_t)port);
        CHECK(!connect(fd, (struct sockaddr *)&sa, sizeof sa), "connect to port %d", port);
    }
    MPI_Comm j;
    OK(MPI_Comm_join(fd, &j));
    close(fd);
    char me[MPI_MAX_PROCESSOR_NAME] = "", peer[MPI_MAX_PROCESSOR_NAME] = "";
    int n;
    OK(MPI_Get_processor_name(me, &n));
    OK(MPI_Sendrecv(me, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, 1, peer, MPI_MAX_PROCESSOR_NAME,
                    MPI_CHAR, 0, 1, j, MPI_STATUS_IGNORE));
    if (is_a) {
        unsigned long long got[T_DYN_NCHAN];
        t_dyn_counted(j, 0, 30, got);
        t_dyn_check(got, t_dyn_channel(me, peer), me, peer);
        printf("t_dyn_connect: joined over a socket, %s OK\n",
               t_dyn_chan[t_dyn_channel(me, peer)]);
    } else {
        t_dyn_exchange(j, 0, 30, 1);
    }
    OK(MPI_Comm_disconnect(&j));
}

/* A process of job A (is_a) or B: meets the other job through A's port,
 * then its first process joins the other's. */
static void member(MPI_Comm parent, int is_a, int rank)
{
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm ab;
    if (rank == 0 && is_a) {
        OK(MPI_Open_port(MPI_INFO_NULL, port));
        OK(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 1, parent));
    } else if (rank == 0) {
        OK(MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 1, parent, MPI_STATUS_IGNORE));
    }
    if (is_a)
        OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ab));
    else
        OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ab));
    meet(ab, is_a);
    if (rank == 0)
        join(ab, is_a);
    OK(MPI_Barrier(MPI_COMM_WORLD)); /* nothing reaches a joined process that counts */
    OK(MPI_Comm_disconnect(&ab));
    if (rank == 0 && is_a)
        OK(MPI_Close_port(port));
    OK(MPI_Comm_disconnect(&parent));
}

static MPI_Comm spawn(const char *prog, const char *role, const char *host)
{
    MPI_Info info = MPI_INFO_NULL;
    MPI_Comm inter;
    char *args[] = {(char *)role, NULL};
    if (host) {
        OK(MPI_Info_create(&info));
        OK(MPI_Info_set(info, "host", host));
    }
    OK(MPI_Comm_spawn(prog, args, NPROC, info, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE));
    if (host)
        OK(MPI_Info_free(&info));
    return inter;
}

int main(int argc, char **argv)
{
    int provided, len, rank;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    MPI_Comm parent;
    OK(MPI_Comm_get_parent(&parent));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    char me[MPI_MAX_PROCESSOR_NAME] = "", port[MPI_MAX_PORT_NAME] = "";
    OK(MPI_Get_processor_name(me, &len));
    if (parent == MPI_COMM_NULL) {
        int vms = strstr(me, "-vm") != NULL;
        MPI_Comm a = spawn(argv[0], "a", vms ? "h0-vm1" : NULL);
        MPI_Comm b = spawn(argv[0], "b", vms ? "h0-vm0" : NULL);
        if (rank == 0) {
            OK(MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 1, a, MPI_STATUS_IGNORE));
            OK(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 1, b));
        }
        OK(MPI_Comm_disconnect(&a));
        OK(MPI_Comm_disconnect(&b));
    } else {
        member(parent, argc > 1 && !strcmp(argv[1], "a"), rank);
    }
    OK(MPI_T_finalize());
    OK(MPI_Finalize());
    return 0;
}
