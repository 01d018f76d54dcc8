/*
 * tcpping.c - raw TCP baseline without MPI: ping-pong latency and streaming
 * bandwidth between two processes over one TCP connection.
 *
 *     tcpping --server [--port P] [--bind ADDR]
 *     tcpping --client ADDR [--port P] [--bw] [--spin] [-m [MIN:]MAX]
 *             [-i ITER] [-x WARMUP] [-W WINDOW] [--json]
 *
 * The server accepts exactly one client, runs the test that client asks for
 * and exits, so a benchmark script can start one server per run.  All test
 * parameters travel from the client to the server in a small header; the
 * server itself takes only --port and --bind.  The client prints the results.
 *
 * Latency (default): the semantics of latency.c / OSU's osu_latency.  The
 * client sends SIZE bytes and waits for SIZE bytes back; the server mirrors
 * it.  One-way latency = round trip / 2, averaged over ITER round trips after
 * WARMUP untimed ones.  TCP_NODELAY is set on both ends.  A byte stream has no
 * empty message, so size 0 is skipped.
 *
 * Bandwidth (--bw): the semantics of bw.c / OSU's osu_bw.  Per iteration the
 * client writes a window of W messages of SIZE bytes; the server reads
 * W * SIZE bytes and answers with a one-byte ack that the client reads before
 * the next window.  MB/s = SIZE * W * ITER / time / 1e6.
 *
 * By default both sides block in recv(2)/send(2), so every message also pays
 * the sleep/wake-up of the receiver.  With --spin (the client passes it on to
 * the server) both sides busy-poll with MSG_DONTWAIT, as the progress engines
 * of MPI libraries do: use --spin when comparing with MPI over TCP.
 *
 * Output is the OSU table of latency.c / bw.c, or with --json one object per
 * size with the same fields as theirs ("bench" is "tcp_latency" / "tcp_bw").
 * Partial reads and writes and EINTR are handled.  The client retries a
 * refused connection for up to 10 s so the server may be started just before.
 * --port 0 on the server picks a free port; the server always prints
 * "tcpping: listening on ADDR port P" to stderr once it accepts connections.
 *
 * Build:  cc -O2 -std=c11 -D_GNU_SOURCE tcpping.c -o tcpping
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include "bench_common.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

static const char usage[] =
    "Usage: tcpping --server [--port P] [--bind ADDR]\n"
    "       tcpping --client ADDR [--port P] [--bw] [--spin] [options]\n"
    "  Raw TCP baseline (no MPI).  The server serves one client, then exits;\n"
    "  the client chooses the test and prints the results.\n"
    "  --server       wait for one client (all addresses unless --bind)\n"
    "  --client ADDR  connect to the server at ADDR (name or IPv4/IPv6)\n"
    "  --port P       TCP port (default 18515; 0 on the server = any free port)\n"
    "  --bind ADDR    server: listen on ADDR only\n"
    "  --bw           streaming bandwidth instead of ping-pong latency\n"
    "  -m [MIN:]MAX   message sizes from MIN to MAX bytes, doubling\n"
    "                 (default 1:4194304; size 0 is skipped)\n"
    "  -i ITER        measured iterations per size; latency: default 10000,\n"
    "                 1000 for sizes > 8192; --bw: windows, default 100, 20\n"
    "  -x WARMUP      untimed iterations per size; latency: default 1000,\n"
    "                 100 for sizes > 8192; --bw: default 10, 2\n"
    "  -W WINDOW      --bw: messages per window (default 64)\n"
    "  --spin         both sides busy-poll (non-blocking send/recv in a loop,\n"
    "                 as MPI progress engines do) instead of sleeping in the\n"
    "                 kernel until data arrives; use it to compare with MPI\n"
    "  --json         one JSON object per size instead of the table (fields\n"
    "                 as latency / bw --json; bench is tcp_latency / tcp_bw)\n"
    "  -h, --help     this text\n";

#define DEFAULT_PORT 18515
#define HDR_MAGIC 0x54435050u   /* "TCPP" */
#define HDR_VERSION 1u
#define MODE_LATENCY 0u
#define MODE_BW 1u
#define CONNECT_RETRY_SEC 10.0

#define FLAG_SPIN 1u

/*
 * Client -> server, all fields big-endian 32/64-bit.  iters and warmup are
 * the -i/-x values, all ones (-1) when not given: per-size defaults.
 */
struct wire_hdr {
    uint32_t magic, version, mode, window, flags;
    uint64_t min_size, max_size, iters, warmup;
};
#define WIRE_HDR_BYTES 52

struct tcp_counts {
    long iters_small, iters_large;
    long warmup_small, warmup_large;
};
/* Same defaults as latency.c and bw.c. */
static const struct tcp_counts lat_counts = { 10000, 1000, 1000, 100 };
static const struct tcp_counts bw_counts = { 100, 20, 10, 2 };

/* --spin: busy-poll with non-blocking calls instead of sleeping in the kernel. */
static int g_spin;

static double now_sec(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Write exactly len bytes; 0 on success, -1 on error (errno set). */
static int write_full(int fd, const void *buf, size_t len)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL | (g_spin ? MSG_DONTWAIT : 0));

        if (n < 0) {
            if (errno == EINTR || (g_spin && (errno == EAGAIN || errno == EWOULDBLOCK)))
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Read exactly len bytes; 0 on success, -1 on error or early EOF. */
static int read_full(int fd, void *buf, size_t len)
{
    char *p = buf;

    while (len > 0) {
        ssize_t n = recv(fd, p, len, g_spin ? MSG_DONTWAIT : 0);

        if (n < 0) {
            if (errno == EINTR || (g_spin && (errno == EAGAIN || errno == EWOULDBLOCK)))
                continue;
            return -1;
        }
        if (n == 0) {
            errno = ECONNRESET;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Read `total` bytes into a buffer of `cap` bytes, overwriting it. */
static int drain_bytes(int fd, char *buf, size_t cap, uint64_t total)
{
    while (total > 0) {
        size_t want = total < cap ? (size_t)total : cap;

        if (read_full(fd, buf, want))
            return -1;
        total -= want;
    }
    return 0;
}

static void put_be32(unsigned char *p, uint32_t v)
{
    for (int k = 3; k >= 0; k--, v >>= 8)
        p[k] = (unsigned char)(v & 0xff);
}

static void put_be64(unsigned char *p, uint64_t v)
{
    for (int k = 7; k >= 0; k--, v >>= 8)
        p[k] = (unsigned char)(v & 0xff);
}

static uint32_t get_be32(const unsigned char *p)
{
    uint32_t v = 0;

    for (int k = 0; k < 4; k++)
        v = (v << 8) | p[k];
    return v;
}

static uint64_t get_be64(const unsigned char *p)
{
    uint64_t v = 0;

    for (int k = 0; k < 8; k++)
        v = (v << 8) | p[k];
    return v;
}

static void hdr_encode(const struct wire_hdr *h, unsigned char *b)
{
    put_be32(b + 0, h->magic);
    put_be32(b + 4, h->version);
    put_be32(b + 8, h->mode);
    put_be32(b + 12, h->window);
    put_be32(b + 16, h->flags);
    put_be64(b + 20, h->min_size);
    put_be64(b + 28, h->max_size);
    put_be64(b + 36, h->iters);
    put_be64(b + 44, h->warmup);
}

static void hdr_decode(const unsigned char *b, struct wire_hdr *h)
{
    h->magic = get_be32(b + 0);
    h->version = get_be32(b + 4);
    h->mode = get_be32(b + 8);
    h->window = get_be32(b + 12);
    h->flags = get_be32(b + 16);
    h->min_size = get_be64(b + 20);
    h->max_size = get_be64(b + 28);
    h->iters = get_be64(b + 36);
    h->warmup = get_be64(b + 44);
}

static int set_nodelay(int fd)
{
    int one = 1;

    return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Iterations and warm-up for one size: -i/-x override the per-size defaults. */
static void counts_for(const struct wire_hdr *h, const struct tcp_counts *d,
                       long size, long *iters, long *warmup)
{
    int large = size > BENCH_LARGE_MESSAGE;

    *iters = (int64_t)h->iters >= 0 ? (long)h->iters
                                    : (large ? d->iters_large : d->iters_small);
    *warmup = (int64_t)h->warmup >= 0 ? (long)h->warmup
                                      : (large ? d->warmup_large : d->warmup_small);
}

/* First size of the run: a byte stream has no empty message, so skip 0. */
static long first_size(long min)
{
    return min > 0 ? min : 1;
}

/* ------------------------------------------------------------------ server */

static int serve_one(int fd)
{
    unsigned char hb[WIRE_HDR_BYTES];
    struct wire_hdr h;
    const struct tcp_counts *d;
    char *buf;
    unsigned char ack = 'k';

    if (read_full(fd, hb, sizeof hb) != 0) {
        perror("tcpping: reading the request");
        return 1;
    }
    hdr_decode(hb, &h);
    if (h.magic != HDR_MAGIC || h.version != HDR_VERSION ||
        (h.mode != MODE_LATENCY && h.mode != MODE_BW) ||
        h.max_size > (uint64_t)(INT_MAX / 2) || h.min_size > h.max_size ||
        h.window < 1 || h.window > (1u << 20) || (h.flags & ~FLAG_SPIN) != 0) {
        fprintf(stderr, "tcpping: invalid request from the client\n");
        return 1;
    }
    g_spin = (h.flags & FLAG_SPIN) != 0;
    d = h.mode == MODE_BW ? &bw_counts : &lat_counts;
    buf = bench_alloc_touched((size_t)h.max_size, 'b');
    if (buf == NULL) {
        fprintf(stderr, "tcpping: cannot allocate %llu bytes\n",
                (unsigned long long)h.max_size);
        return 1;
    }
    /* Ready: the client starts once it has read this byte. */
    if (write_full(fd, &ack, 1) != 0)
        goto io_error;

    for (long size = first_size((long)h.min_size); size <= (long)h.max_size;
         size = bench_next_size(size)) {
        long iters, warmup, total;

        counts_for(&h, d, size, &iters, &warmup);
        total = iters + warmup;
        for (long i = 0; i < total; i++) {
            if (h.mode == MODE_LATENCY) {
                if (read_full(fd, buf, (size_t)size) != 0 ||
                    write_full(fd, buf, (size_t)size) != 0)
                    goto io_error;
            } else {
                if (drain_bytes(fd, buf, (size_t)h.max_size,
                                (uint64_t)size * h.window) != 0 ||
                    write_full(fd, &ack, 1) != 0)
                    goto io_error;
            }
        }
    }
    free(buf);
    return 0;

io_error:
    perror("tcpping: server I/O");
    free(buf);
    return 1;
}

static int run_server(const char *bind_addr, const char *port)
{
    struct addrinfo hints, *res = NULL, *ai;
    int lfd = -1, fd, rc, one = 1;
    char host[NI_MAXHOST], serv[NI_MAXSERV];
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;

    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    rc = getaddrinfo(bind_addr, port, &hints, &res);
    if (rc != 0) {
        fprintf(stderr, "tcpping: %s: %s\n", bind_addr ? bind_addr : "*",
                gai_strerror(rc));
        return 1;
    }
    /* Prefer an IPv6 wildcard (dual-stack) when no address was given. */
    for (int pass = 0; pass < 2 && lfd < 0; pass++) {
        for (ai = res; ai != NULL; ai = ai->ai_next) {
            if (bind_addr == NULL && pass == 0 && ai->ai_family != AF_INET6)
                continue;
            lfd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
            if (lfd < 0)
                continue;
            setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
            if (ai->ai_family == AF_INET6 && bind_addr == NULL) {
                int zero = 0;
                setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
            }
            if (bind(lfd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(lfd, 1) == 0)
                break;
            close(lfd);
            lfd = -1;
        }
    }
    freeaddrinfo(res);
    if (lfd < 0) {
        fprintf(stderr, "tcpping: cannot listen on %s port %s: %s\n",
                bind_addr ? bind_addr : "*", port, strerror(errno));
        return 1;
    }
    if (getsockname(lfd, (struct sockaddr *)&ss, &sl) == 0 &&
        getnameinfo((struct sockaddr *)&ss, sl, host, sizeof host, serv, sizeof serv,
                    NI_NUMERICHOST | NI_NUMERICSERV) == 0)
        fprintf(stderr, "tcpping: listening on %s port %s\n", host, serv);
    else
        fprintf(stderr, "tcpping: listening on port %s\n", port);
    fflush(stderr);

    do {
        fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    close(lfd);
    if (fd < 0) {
        perror("tcpping: accept");
        return 1;
    }
    set_nodelay(fd);
    rc = serve_one(fd);
    close(fd);
    return rc;
}

/* ------------------------------------------------------------------ client */

static int connect_to(const char *addr, const char *port)
{
    struct addrinfo hints, *res = NULL, *ai;
    double deadline = now_sec() + CONNECT_RETRY_SEC;
    int fd = -1, rc, err = 0;

    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    rc = getaddrinfo(addr, port, &hints, &res);
    if (rc != 0) {
        fprintf(stderr, "tcpping: %s: %s\n", addr, gai_strerror(rc));
        return -1;
    }
    for (;;) {
        for (ai = res; ai != NULL; ai = ai->ai_next) {
            fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
            if (fd < 0) {
                err = errno;
                continue;
            }
            do {
                rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
            } while (rc != 0 && errno == EINTR);
            if (rc == 0)
                break;
            err = errno;
            close(fd);
            fd = -1;
        }
        if (fd >= 0 || (err != ECONNREFUSED && err != ENETUNREACH) ||
            now_sec() >= deadline)
            break;
        {
            struct timespec pause = { 0, 50 * 1000 * 1000 };
            nanosleep(&pause, NULL);
        }
    }
    freeaddrinfo(res);
    if (fd < 0)
        fprintf(stderr, "tcpping: cannot connect to %s port %s: %s\n", addr, port,
                strerror(err));
    return fd;
}

static void print_json_latency(long size, long iters, long warmup, double *lat)
{
    printf("{\"bench\":\"tcp_latency\",\"size\":%ld,\"iterations\":%ld,"
           "\"warmup\":%ld,\"spin\":%s,", size, iters, warmup,
           g_spin ? "true" : "false");
    if (bench_json_dist(stdout, lat, (size_t)iters, "us", 3) != 0) {
        fprintf(stderr, "tcpping: out of memory\n");
        exit(1);
    }
    fputs("}\n", stdout);
}

static void print_json_bw(long size, long iters, long warmup, long window,
                          double mbps, double *bw)
{
    printf("{\"bench\":\"tcp_bw\",\"size\":%ld,\"iterations\":%ld,"
           "\"warmup\":%ld,\"window\":%ld,\"spin\":%s,\"mbps\":%.2f,",
           size, iters, warmup, window, g_spin ? "true" : "false", mbps);
    if (bench_json_dist(stdout, bw, (size_t)iters, "mbps", 2) != 0) {
        fprintf(stderr, "tcpping: out of memory\n");
        exit(1);
    }
    fputs("}\n", stdout);
}

static int run_client(const char *addr, const char *port, int bw_mode,
                      const struct bench_opts *o)
{
    struct wire_hdr h = { HDR_MAGIC, HDR_VERSION, bw_mode ? MODE_BW : MODE_LATENCY,
                          (uint32_t)o->window, g_spin ? FLAG_SPIN : 0u,
                          (uint64_t)o->min_size,
                          (uint64_t)o->max_size, (uint64_t)o->iters,
                          (uint64_t)o->warmup };
    const struct tcp_counts *d = bw_mode ? &bw_counts : &lat_counts;
    unsigned char hb[WIRE_HDR_BYTES], ack;
    char *sbuf, *rbuf;
    double *ts = NULL, *samples = NULL;
    int fd;

    sbuf = bench_alloc_touched((size_t)o->max_size, 'a');
    rbuf = bench_alloc_touched((size_t)o->max_size, 'b');
    if (sbuf == NULL || rbuf == NULL) {
        fprintf(stderr, "tcpping: cannot allocate %ld bytes\n", o->max_size);
        return 1;
    }
    fd = connect_to(addr, port);
    if (fd < 0)
        return 1;
    if (set_nodelay(fd) != 0)
        perror("tcpping: TCP_NODELAY");

    hdr_encode(&h, hb);
    if (write_full(fd, hb, sizeof hb) != 0 || read_full(fd, &ack, 1) != 0)
        goto io_error;

    if (!o->json) {
        printf("# vmpi tcpping %s test (TCP to %s port %s%s)\n",
               bw_mode ? "bandwidth" : "latency", addr, port,
               g_spin ? ", busy-polling" : "");
        printf("%-10s%18s\n", "# Size", bw_mode ? "Bandwidth (MB/s)" : "Latency (us)");
        fflush(stdout);
    }

    for (long size = first_size(o->min_size); size <= o->max_size;
         size = bench_next_size(size)) {
        long iters, warmup, total;
        double t_start = 0.0, t_end;

        counts_for(&h, d, size, &iters, &warmup);
        total = iters + warmup;
        if (o->json) {
            free(ts);
            free(samples);
            ts = malloc((size_t)(iters + 1) * sizeof *ts);
            samples = malloc((size_t)iters * sizeof *samples);
            if (ts == NULL || samples == NULL) {
                fprintf(stderr, "tcpping: cannot allocate samples\n");
                close(fd);
                return 1;
            }
        }

        for (long i = 0; i < total; i++) {
            /* Table mode reads the clock only around the whole loop, as OSU
             * does; JSON mode also stamps every iteration. */
            if (i == warmup) {
                t_start = now_sec();
                if (o->json)
                    ts[0] = t_start;
            } else if (o->json && i > warmup) {
                ts[i - warmup] = now_sec();
            }
            if (!bw_mode) {
                if (write_full(fd, sbuf, (size_t)size) != 0 ||
                    read_full(fd, rbuf, (size_t)size) != 0)
                    goto io_error;
            } else {
                for (long j = 0; j < o->window; j++)
                    if (write_full(fd, sbuf, (size_t)size) != 0)
                        goto io_error;
                if (read_full(fd, &ack, 1) != 0)
                    goto io_error;
            }
        }
        t_end = now_sec();

        if (!bw_mode) {
            if (!o->json) {
                printf("%-10ld%18.2f\n", size,
                       (t_end - t_start) * 1e6 / (2.0 * (double)iters));
            } else {
                ts[iters] = t_end;
                for (long k = 0; k < iters; k++)
                    samples[k] = (ts[k + 1] - ts[k]) * 1e6 / 2.0;
                print_json_latency(size, iters, warmup, samples);
            }
        } else {
            double mbps = (double)size * (double)o->window * (double)iters /
                          (t_end - t_start) / 1e6;

            if (!o->json) {
                printf("%-10ld%18.2f\n", size, mbps);
            } else {
                ts[iters] = t_end;
                for (long k = 0; k < iters; k++)
                    samples[k] = (double)size * (double)o->window /
                                 (ts[k + 1] - ts[k]) / 1e6;
                print_json_bw(size, iters, warmup, o->window, mbps, samples);
            }
        }
        fflush(stdout);
    }

    close(fd);
    free(ts);
    free(samples);
    free(sbuf);
    free(rbuf);
    return 0;

io_error:
    perror("tcpping: client I/O");
    close(fd);
    return 1;
}

/* -------------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    struct bench_opts o = { .min_size = 1, .max_size = BENCH_MAX_MESSAGE,
                            .iters = -1, .warmup = -1, .window = 64 };
    const char *client = NULL, *bind_addr = NULL, *port = NULL;
    char **rest, err[160], portbuf[16];
    int nrest = 1, server = 0, bw_mode = 0, bench_args = 0, rc;
    long portnum = DEFAULT_PORT;

    bench_version(argc, argv, NULL);
    /* Our own options first; the rest goes to the shared OSU-style parser. */
    rest = calloc((size_t)argc + 1, sizeof *rest);
    if (rest == NULL)
        return 1;
    rest[0] = argv[0];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];

        if (strcmp(a, "--server") == 0) {
            server = 1;
        } else if (strcmp(a, "--bw") == 0) {
            bw_mode = 1;
            bench_args = 1;
        } else if (strcmp(a, "--spin") == 0) {
            g_spin = 1;
            bench_args = 1;
        } else if (strcmp(a, "--client") == 0 || strcmp(a, "--port") == 0 ||
                   strcmp(a, "--bind") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "tcpping: option %s needs an argument\n", a);
                free(rest);
                return 2;
            }
            if (a[2] == 'c')
                client = argv[++i];
            else if (a[2] == 'b')
                bind_addr = argv[++i];
            else
                port = argv[++i];
        } else {
            if (strcmp(a, "-h") != 0 && strcmp(a, "--help") != 0)
                bench_args = 1;
            rest[nrest++] = argv[i];
        }
    }
    rc = bench_parse_opts(nrest, rest, &o, bw_mode, err, sizeof err);
    free(rest);
    if (rc != 0) {
        fprintf(stderr, "tcpping: %s\n", err);
        return 2;
    }
    if (o.help) {
        fputs(usage, stdout);
        return 0;
    }
    if (port != NULL && (bench_parse_long(port, &portnum) != 0 || portnum > 65535)) {
        fprintf(stderr, "tcpping: invalid --port (want 0..65535)\n");
        return 2;
    }
    snprintf(portbuf, sizeof portbuf, "%ld", portnum);
    if (server == (client != NULL)) {
        fprintf(stderr, "tcpping: give exactly one of --server and --client ADDR "
                        "(try -h)\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    if (server) {
        if (bench_args) {
            fprintf(stderr, "tcpping: the server takes only --port and --bind; "
                            "test options belong to the client\n");
            return 2;
        }
        return run_server(bind_addr, portbuf);
    }
    if (bind_addr != NULL) {
        fprintf(stderr, "tcpping: --bind is a server option\n");
        return 2;
    }
    if (portnum == 0) {
        fprintf(stderr, "tcpping: the client needs a non-zero --port\n");
        return 2;
    }
    if (o.max_size < 1) {
        fprintf(stderr, "tcpping: MAX must be at least 1 byte\n");
        return 2;
    }
    return run_client(client, portbuf, bw_mode, &o);
}
