/* vmpi-guest-init: PID 1 of a vmpi guest (a QEMU VM booted by `vmpi vm`,
 * python/vmpi/guests.py).
 *
 * The guest is a Debian kernel plus an initramfs holding this program, the
 * kernel modules it loads, the MPI program and the shared libraries it needs
 * (at their paths on the machine that built the image). It mounts the
 * kernel's file systems, loads the modules, brings up eth0 with the address
 * the launcher chose, starts this guest's ranks with PMI_PORT pointing at
 * the launcher's PMI server, relays their output and exit statuses to the
 * launcher over the second serial port, starts the processes the launcher
 * asks for there (those of spawned jobs), and powers the guest off when the
 * launcher says every job has ended. Nothing else runs in the guest: no
 * shell, no udev.
 *
 * Its parameters come on the kernel command line:
 *   vmpi.ranks=FIRST:COUNT   the world ranks of this guest
 *   vmpi.ip=A.B.C.D/LEN      eth0's address (none: no network)
 *   vmpi.pmi=A.B.C.D:PORT    the launcher's PMI server
 *   vmpi.name=NAME           the hostname
 * and the job from /vmpi/job: NUL-terminated strings
 *   CWD, ARGC, ARGV[0..ARGC-1], ENVC, ENV[0..ENVC-1]
 * with ARGV[0] an absolute path. /vmpi/modules lists the modules to load, one
 * absolute path per line, dependencies first.
 *
 * Frames on /dev/ttyS1 (raw mode), both ways, all integers little-endian:
 *   u8 0x7e, u8 type, u32 job, u32 rank, u32 length, length bytes of payload
 * Job 0 is the job of the command line, job k >= 1 the k-th a rank spawned;
 * job and rank are 0xffffffff in frames about the guest itself.
 * From the guest: 'b' booted (payload: hostname), 'o'/'e' a process's
 * stdout/stderr bytes, 'x' a process ended (payload: its wait status, u32),
 * 'f' the guest failed (payload: message).
 * From the launcher, once it has seen 'b' (the port drops what comes before
 * it is opened): 's' start process RANK of job JOB (payload laid out as
 * /vmpi/job; its environment holds the process's PMI_PORT and PMI_ID), 'w'
 * write a file a spawned process needs that the image lacks (its program or
 * a library; payload: PATH, MODE, SIZE, PORT, TOKEN, each NUL-terminated,
 * numbers in decimal), which init fetches from the launcher's address (that
 * of vmpi.pmi) at PORT: it sends TOKEN and a newline, and reads SIZE bytes;
 * 'q' power off (every process of every job has ended). Their lengths are
 * checked before anything is buffered: the serial line is bounded input. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

enum {
    MAX_PROCS = 1024,      /* processes running at once (python/vmpi/guests.py knows) */
    MAX_JOB = 1 << 20,     /* bytes of /vmpi/job, and of a launcher frame's payload */
    HDR = 14,              /* bytes of a frame header */
    MAX_SHIP = 64 << 20,   /* bytes of the files one spawn sends (python/vmpi/guests.py) */
    FETCH_LIMIT_S = 30,    /* seconds a fetch may wait for the launcher */
    CHUNK = 16384,         /* bytes of output per frame */
    PIPE_GRACE_MS = 1000,  /* output pipes a rank's descendants keep open after it ended */
    NET_WAIT_MS = 5000,    /* for eth0 to appear once virtio_net is loaded */
};
#define GUEST 0xffffffffu

/* A process this init started; its slot is free again once its 'x' frame is sent. */
struct proc {
    bool used;
    uint32_t job, rank;
    pid_t pid;
    int fd[2];        /* stdout, stderr pipes; -1 once closed */
    bool ended;       /* waitpid has seen it */
    int status;
    uint64_t ended_ms;
};

static int agent = -1;
static struct proc procs[MAX_PROCS];
static unsigned first_rank, nranks;
static char name[65] = "vmpi-guest";
static char ip[32], pmi[64];

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; /* the launcher is gone: nobody to tell */
        p += n;
        len -= (size_t)n;
    }
}

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void frame(char type, uint32_t job, uint32_t rank, const void *data, size_t len)
{
    unsigned char hdr[HDR] = {0x7e, (unsigned char)type};
    put_u32(hdr + 2, job);
    put_u32(hdr + 6, rank);
    put_u32(hdr + 10, (uint32_t)len);
    if (agent < 0)
        return;
    write_all(agent, hdr, sizeof hdr);
    write_all(agent, data, len);
}

static _Noreturn void power_off(void)
{
    sync();
    reboot(RB_POWER_OFF);
    for (;;)
        pause();
}

static _Noreturn void fail(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* also on the console, for a guest whose agent port never opened */
    dprintf(2, "vmpi-guest-init: %s\n", msg);
    frame('f', GUEST, GUEST, msg, strlen(msg));
    power_off();
}

static void mount_fs(const char *src, const char *dir, const char *type, unsigned long flags)
{
    mkdir(dir, 0755);
    if (mount(src, dir, type, flags, NULL) && errno != EBUSY)
        fail("cannot mount %s on %s: %s", type, dir, strerror(errno));
}

static void open_agent(void)
{
    agent = open("/dev/ttyS1", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (agent < 0)
        fail("cannot open /dev/ttyS1: %s", strerror(errno));
    struct termios t;
    if (tcgetattr(agent, &t) == 0) {
        cfmakeraw(&t);
        cfsetspeed(&t, B115200);
        tcsetattr(agent, TCSANOW, &t);
    }
}

static char *read_file(const char *path, size_t cap, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        fail("cannot open %s: %s", path, strerror(errno));
    char *buf = malloc(cap + 1);
    if (!buf)
        fail("out of memory reading %s", path);
    size_t n = 0;
    for (;;) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            fail("cannot read %s: %s", path, strerror(errno));
        if (r == 0)
            break;
        n += (size_t)r;
        if (n == cap)
            fail("%s is larger than %zu bytes", path, cap);
    }
    close(fd);
    buf[n] = '\0';
    *len = n;
    return buf;
}

static void copy_param(char *dst, size_t cap, const char *val, const char *key)
{
    if (strlen(val) >= cap)
        fail("kernel parameter %s is too long", key);
    strcpy(dst, val);
}

static void parse_cmdline(void)
{
    size_t len;
    char *line = read_file("/proc/cmdline", 4096, &len);
    bool have_ranks = false;
    for (char *save, *tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
        if (!strncmp(tok, "vmpi.ranks=", 11)) {
            if (sscanf(tok + 11, "%u:%u", &first_rank, &nranks) != 2 || nranks > MAX_PROCS)
                fail("bad vmpi.ranks=%s (FIRST:COUNT, at most %d ranks)", tok + 11, MAX_PROCS);
            have_ranks = true;
        } else if (!strncmp(tok, "vmpi.ip=", 8)) {
            copy_param(ip, sizeof ip, tok + 8, "vmpi.ip");
        } else if (!strncmp(tok, "vmpi.pmi=", 9)) {
            copy_param(pmi, sizeof pmi, tok + 9, "vmpi.pmi");
        } else if (!strncmp(tok, "vmpi.name=", 10)) {
            copy_param(name, sizeof name, tok + 10, "vmpi.name");
        }
    }
    free(line);
    if (!have_ranks || !pmi[0])
        fail("the kernel command line lacks vmpi.ranks or vmpi.pmi");
}

static void load_modules(void)
{
    size_t len;
    char *list = read_file("/vmpi/modules", 1 << 16, &len);
    for (char *save, *path = strtok_r(list, "\n", &save); path; path = strtok_r(NULL, "\n", &save)) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            fail("cannot open module %s: %s", path, strerror(errno));
        if (syscall(SYS_finit_module, fd, "", 0) && errno != EEXIST)
            fail("cannot load module %s: %s", path, strerror(errno));
        close(fd);
    }
    free(list);
}

static void set_flags_up(int s, const char *ifname)
{
    struct ifreq ifr = {0};
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", ifname);
    if (ioctl(s, SIOCGIFFLAGS, &ifr))
        fail("no interface %s: %s", ifname, strerror(errno));
    ifr.ifr_flags |= IFF_UP;
    if (ioctl(s, SIOCSIFFLAGS, &ifr))
        fail("cannot bring %s up: %s", ifname, strerror(errno));
}

static void set_addr(int s, unsigned long req, const char *ifname, in_addr_t a, const char *what)
{
    struct ifreq ifr = {0};
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", ifname);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = a};
    memcpy(&ifr.ifr_addr, &sin, sizeof sin);
    if (ioctl(s, req, &ifr))
        fail("cannot set the %s of %s: %s", what, ifname, strerror(errno));
}

static void write_proc(const char *path, const char *value)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        write_all(fd, value, strlen(value));
        close(fd);
    }
}

static void setup_network(void)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        fail("socket: %s", strerror(errno));
    set_flags_up(s, "lo");
    if (ip[0]) {
        char addr[32];
        unsigned len;
        char *slash = strchr(ip, '/');
        struct in_addr a;
        if (!slash || (size_t)(slash - ip) >= sizeof addr || sscanf(slash + 1, "%u", &len) != 1 ||
            len < 1 || len > 32)
            fail("bad vmpi.ip=%s (A.B.C.D/LEN)", ip);
        memcpy(addr, ip, (size_t)(slash - ip));
        addr[slash - ip] = '\0';
        if (inet_pton(AF_INET, addr, &a) != 1)
            fail("bad vmpi.ip=%s (A.B.C.D/LEN)", ip);
        /* virtio_net registers eth0 while probing; give a slow guest time */
        struct ifreq ifr = {0};
        snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "eth0");
        for (uint64_t t0 = now_ms(); ioctl(s, SIOCGIFFLAGS, &ifr);) {
            if (now_ms() - t0 > NET_WAIT_MS)
                fail("no eth0 %d ms after loading virtio_net", NET_WAIT_MS);
            usleep(10000);
        }
        set_addr(s, SIOCSIFADDR, "eth0", a.s_addr, "address");
        set_addr(s, SIOCSIFNETMASK, "eth0", htonl(len == 32 ? ~0u : ~(~0u >> len)), "netmask");
        set_flags_up(s, "eth0");
        /* the link is running (operstate up) a moment later, and libfabric
         * skips an interface that is not */
        for (uint64_t t0 = now_ms();; usleep(10000)) {
            char st[8] = "";
            int fd = open("/sys/class/net/eth0/operstate", O_RDONLY | O_CLOEXEC);
            if (fd >= 0) {
                if (read(fd, st, sizeof st - 1) < 0)
                    st[0] = '\0';
                close(fd);
            }
            if (!strncmp(st, "up\n", 3))
                break;
            if (now_ms() - t0 > NET_WAIT_MS)
                fail("eth0 is not running %d ms after it was brought up", NET_WAIT_MS);
        }
    }
    close(s);
    if (sethostname(name, strlen(name)))
        fail("cannot set the hostname %s: %s", name, strerror(errno));
}

struct job {
    char *cwd;
    char **argv;
    char **envp;
};

/* NUL-terminated strings being read: /vmpi/job, or the payload of a frame
 * from the launcher. */
struct src {
    char *buf;
    size_t len, pos;
    const char *what;
};

/* Next NUL-terminated string of src, bounds-checked. */
static char *next_str(struct src *s)
{
    char *nul = s->pos < s->len ? memchr(s->buf + s->pos, '\0', s->len - s->pos) : NULL;
    if (!nul)
        fail("%s is truncated", s->what);
    char *str = s->buf + s->pos;
    s->pos = (size_t)(nul - s->buf) + 1;
    return str;
}

static unsigned next_count(struct src *s, unsigned max, const char *what)
{
    char *str = next_str(s), *end;
    unsigned long v = strtoul(str, &end, 10);
    if (!*str || *end || v > max)
        fail("%s: bad %s count %s", s->what, what, str);
    return (unsigned)v;
}

/* The job of src, whose environment gets `spare` more empty slots; its
 * strings stay in src's buffer. */
static void parse_job(struct src *s, struct job *job, unsigned spare)
{
    job->cwd = next_str(s);
    unsigned argc = next_count(s, 65536, "argument");
    if (argc < 1)
        fail("%s has no program", s->what);
    job->argv = calloc(argc + 1, sizeof *job->argv);
    if (!job->argv)
        fail("out of memory");
    for (unsigned i = 0; i < argc; i++)
        job->argv[i] = next_str(s);
    unsigned envc = next_count(s, 65536, "environment");
    job->envp = calloc(envc + spare + 1, sizeof *job->envp);
    if (!job->envp)
        fail("out of memory");
    for (unsigned i = 0; i < envc; i++)
        job->envp[i] = next_str(s);
    if (s->pos != s->len)
        fail("%s has %zu bytes past its end", s->what, s->len - s->pos);
    if (job->argv[0][0] != '/')
        fail("%s: the program %s is not an absolute path", s->what, job->argv[0]);
}

static void mkdirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0755);
            *p = '/';
        }
    }
    mkdir(path, 0755);
}

/* The process could not start: the launcher sees it end with code 126. */
static void not_started(uint32_t job, uint32_t rank, const char *why)
{
    char msg[256];
    unsigned char st[4];
    int n = snprintf(msg, sizeof msg, "vmpi-guest-init: cannot start the process: %s\n", why);
    frame('e', job, rank, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
    put_u32(st, 126u << 8);
    frame('x', job, rank, st, sizeof st);
}

static void start_proc(uint32_t jobno, uint32_t rank, struct job *job)
{
    struct proc *p = NULL;
    for (unsigned i = 0; i < MAX_PROCS && !p; i++)
        if (!procs[i].used)
            p = &procs[i];
    if (!p) {
        not_started(jobno, rank, "this guest runs its most processes already");
        return;
    }
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC)) {
        not_started(jobno, rank, strerror(errno));
        return;
    }
    if (pipe2(err, O_CLOEXEC)) {
        not_started(jobno, rank, strerror(errno));
        close(out[0]);
        close(out[1]);
        return;
    }
    mkdirs(job->cwd);
    pid_t pid = fork();
    if (pid == 0) {
        setsid();
        int null = open("/dev/null", O_RDONLY);
        if (null < 0 || dup2(null, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
            _exit(126);
        if (chdir(job->cwd))
            dprintf(2, "vmpi-guest-init: cannot enter %s: %s\n", job->cwd, strerror(errno));
        signal(SIGPIPE, SIG_DFL);
        execve(job->argv[0], job->argv, job->envp);
        dprintf(2, "vmpi-guest-init: cannot run %s: %s\n", job->argv[0], strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
    }
    int fork_errno = errno;
    close(out[1]);
    close(err[1]);
    if (pid < 0) {
        close(out[0]);
        close(err[0]);
        not_started(jobno, rank, strerror(fork_errno));
        return;
    }
    *p = (struct proc){.used = true, .job = jobno, .rank = rank, .pid = pid,
                       .fd = {out[0], err[0]}};
}

static void start_ranks(struct job *job)
{
    size_t envc = 0;
    while (job->envp[envc])
        envc++;
    char port[96], id[32];
    snprintf(port, sizeof port, "PMI_PORT=%s", pmi);
    job->envp[envc] = port;
    job->envp[envc + 1] = id;
    for (unsigned i = 0; i < nranks; i++) {
        snprintf(id, sizeof id, "PMI_ID=%u", first_rank + i);
        start_proc(0, first_rank + i, job);
    }
}

static void reap(void)
{
    int status;
    pid_t pid;
    /* PID 1 reaps every orphan too; only its own processes' statuses matter */
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (unsigned i = 0; i < MAX_PROCS; i++) {
            struct proc *p = &procs[i];
            if (p->used && p->pid == pid && !p->ended) {
                p->ended = true;
                p->status = status;
                p->ended_ms = now_ms();
            }
        }
    }
}

static void close_pipe(struct proc *p, int k)
{
    close(p->fd[k]);
    p->fd[k] = -1;
}

/* 'x' for each process that ended and whose pipes are closed (or given up on). */
static void report(void)
{
    uint64_t now = now_ms();
    for (unsigned i = 0; i < MAX_PROCS; i++) {
        struct proc *p = &procs[i];
        if (!p->used || !p->ended)
            continue;
        if (now - p->ended_ms > PIPE_GRACE_MS)
            for (int k = 0; k < 2; k++)
                if (p->fd[k] >= 0)
                    close_pipe(p, k);
        if (p->fd[0] < 0 && p->fd[1] < 0) {
            unsigned char st[4];
            put_u32(st, (uint32_t)p->status);
            frame('x', p->job, p->rank, st, sizeof st);
            p->used = false;
        }
    }
}

/* A connection to the launcher (at the address of its PMI server) at port,
 * whose reads and writes give up after FETCH_LIMIT_S. */
static int connect_launcher(unsigned port, const char *path)
{
    char host[64];
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    size_t hl = strcspn(pmi, ":");
    if (hl >= sizeof host)
        fail("bad vmpi.pmi=%s (A.B.C.D:PORT)", pmi);
    memcpy(host, pmi, hl);
    host[hl] = '\0';
    if (inet_pton(AF_INET, host, &sin.sin_addr) != 1)
        fail("bad vmpi.pmi=%s (A.B.C.D:PORT)", pmi);
    int sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct timeval limit = {.tv_sec = FETCH_LIMIT_S};
    if (sock < 0 || setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit) ||
        setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit) ||
        connect(sock, (struct sockaddr *)&sin, sizeof sin))
        fail("cannot reach the launcher to fetch %s: %s", path, strerror(errno));
    return sock;
}

/* A 'w' frame: fetch a file at an absolute path from the launcher, over
 * the network (the serial port moves about 10 KB/s). What goes wrong here
 * would leave a spawned process without its program, so it ends the guest. */
static void fetch_file(char *data, size_t len)
{
    struct src s = {data, len, 0, "a file frame"};
    char *path = next_str(&s);
    unsigned mode = next_count(&s, 07777, "mode");
    unsigned size = next_count(&s, MAX_SHIP, "size");
    unsigned port = next_count(&s, 65535, "port");
    char *token = next_str(&s);
    if (s.pos != s.len || strlen(token) > 64)
        fail("a file frame for %.200s is malformed", path);
    char dir[4096];
    char *slash = strrchr(path, '/');
    if (path[0] != '/' || strstr(path, "/../") || (size_t)(slash - path) >= sizeof dir)
        fail("a file frame names %.200s, not a plain absolute path", path);
    memcpy(dir, path, (size_t)(slash - path));
    dir[slash - path] = '\0';
    if (dir[0])
        mkdirs(dir);
    int sock = connect_launcher(port, path);
    char line[80];
    int n = snprintf(line, sizeof line, "%s\n", token);
    write_all(sock, line, (size_t)n);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0)
        fail("cannot create %s: %s", path, strerror(errno));
    static char buf[65536];
    for (unsigned done = 0; done < size;) {
        ssize_t got = read(sock, buf, size - done < sizeof buf ? size - done : sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            fail("fetching %s: %u of %u bytes came: %s", path, done, size,
                 got < 0 ? strerror(errno) : "the launcher closed the connection");
        size_t off = 0;
        while (off < (size_t)got) {
            ssize_t w = write(fd, buf + off, (size_t)got - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                fail("cannot write %s: %s", path, w < 0 ? strerror(errno) : "no progress");
            off += (size_t)w;
        }
        done += (unsigned)got;
    }
    close(fd);
    close(sock);
}

/* One frame from the launcher; its length is already checked against its buffer. */
static void launcher_frame(char type, uint32_t jobno, uint32_t rank, char *data, size_t len)
{
    if (type == 'q') {
        /* the frames must reach the launcher before the guest is gone */
        tcdrain(agent);
        power_off();
    }
    if (type == 'w') {
        fetch_file(data, len);
        return;
    }
    if (type != 's')
        fail("the launcher sent a frame of unknown type 0x%02x", (unsigned char)type);
    if (jobno == GUEST || rank == GUEST)
        fail("the launcher sent a start frame without a job and rank");
    struct src s = {data, len, 0, "a start frame"};
    struct job job;
    parse_job(&s, &job, 0);
    start_proc(jobno, rank, &job);
    free(job.argv);
    free(job.envp);
}

/* Read what the launcher sent; act on each whole frame. */
static void read_launcher(bool *open)
{
    static unsigned char in[HDR + MAX_JOB];
    static size_t have;
    ssize_t got = read(agent, in + have, sizeof in - have);
    if (got <= 0) {
        if (got == 0 || (errno != EINTR && errno != EAGAIN))
            *open = false; /* nothing more will come; the launcher stops QEMU itself */
        return;
    }
    have += (size_t)got;
    while (have >= HDR) {
        uint32_t len = get_u32(in + 10);
        if (in[0] != 0x7e)
            fail("garbage from the launcher on the agent port");
        if (len > MAX_JOB)
            fail("the launcher sent a frame of %u bytes (at most %d)", len, MAX_JOB);
        if (have < HDR + len)
            return;
        launcher_frame((char)in[1], get_u32(in + 2), get_u32(in + 6), (char *)in + HDR, len);
        memmove(in, in + HDR + len, have - HDR - len);
        have -= HDR + len;
    }
}

/* Relay the processes' output and exits, start what the launcher asks for,
 * until it says to power off. */
static _Noreturn void serve(void)
{
    static char buf[CHUNK];
    struct pollfd pfd[1 + 2 * MAX_PROCS];
    unsigned who[1 + 2 * MAX_PROCS]; /* pfd[j] is pipe who[j] % 2 of procs[who[j] / 2] */
    bool agent_open = true;
    for (;;) {
        unsigned n = 0;
        if (agent_open)
            pfd[n++] = (struct pollfd){.fd = agent, .events = POLLIN};
        unsigned first = n;
        for (unsigned i = 0; i < MAX_PROCS; i++)
            for (int k = 0; procs[i].used && k < 2; k++)
                if (procs[i].fd[k] >= 0) {
                    who[n] = 2 * i + (unsigned)k;
                    pfd[n++] = (struct pollfd){.fd = procs[i].fd[k], .events = POLLIN};
                }
        if (poll(pfd, n, 50) < 0 && errno != EINTR)
            fail("poll: %s", strerror(errno));
        for (unsigned j = first; j < n; j++) {
            if (!pfd[j].revents)
                continue;
            struct proc *p = &procs[who[j] / 2];
            int k = (int)(who[j] % 2);
            ssize_t got = read(pfd[j].fd, buf, sizeof buf);
            if (got > 0)
                frame(k ? 'e' : 'o', p->job, p->rank, buf, (size_t)got);
            else if (got == 0 || errno != EINTR)
                close_pipe(p, k);
        }
        /* after the pipes: a start reuses the slots report() frees */
        reap();
        report();
        if (first && pfd[0].revents)
            read_launcher(&agent_open);
    }
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    mount_fs("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC);
    mount_fs("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC);
    mount_fs("devtmpfs", "/dev", "devtmpfs", MS_NOSUID);
    mount_fs("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV);
    open_agent();
    parse_cmdline();
    /* IPv4 only, as on emulated hosts: a link-local IPv6 address is one
     * libfabric may pick and then fail to reach without a scope */
    write_proc("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
    write_proc("/proc/sys/net/ipv6/conf/all/disable_ipv6", "1");
    load_modules();
    setup_network();
    size_t len;
    struct src s = {read_file("/vmpi/job", MAX_JOB, &len), 0, 0, "/vmpi/job"};
    s.len = len;
    struct job job;
    parse_job(&s, &job, 2); /* + PMI_PORT, PMI_ID */
    frame('b', GUEST, GUEST, name, strlen(name));
    start_ranks(&job);
    serve();
}
