"""vmpirun's command line: its own options, and the common options of
MPICH's Hydra (``mpiexec``) and Open MPI's ``mpirun``, so that job scripts
written for either run unchanged.

Options of the other launchers that only say where ranks go (``-ppn``,
``--map-by``, ``--oversubscribe``) are accepted: on one machine every rank
runs here anyway.  A host list (``-hosts``, ``-H``, ``-f``) naming only this
machine runs the job here; one naming other machines is refused with the
advice to use Hydra or Slurm, which start ranks over ssh or the resource
manager (vmpi needs no launcher of its own there).
"""
from __future__ import annotations

import os
import re
import resource
import socket
from dataclasses import dataclass, field

from . import cloud
from . import netns
from . import runas
from . import vms

__all__ = ["PROG", "USAGE", "Options", "UsageError", "ShowHelp", "ShowVersion", "parse_args",
           "rank_limit", "this_machine", "version"]

PROG = "vmpirun"

USAGE = f"""\
usage: {PROG} -n N [options] PROGRAM [ARGS...]
       {PROG} --cleanup [-v]

Start N ranks of PROGRAM on this machine and serve them PMI-1.

options:
  -n, -np N              number of ranks (default 1)
  --hosts H              emulate H hosts (1..N): each is a network namespace
                         whose interface vmpi0 (host h: 198.18.0.0/15 address
                         h+1) is on a virtual switch; ranks are placed in
                         blocks, the first N%H hosts get one rank more
                         (needs root)
  --vms V                run each host (or the machine) as V emulated VMs
                         (H*V <= N): each has its own mount, IPC, UTS and
                         PID namespaces, /dev/shm and hostname h<i>-vm<j>;
                         the VMs of a host share its network and its ivshmem
                         region at /run/vmpi/ivshmem (VMPI_IVSHMEM_PATH);
                         ranks are placed in blocks within each host
                         (needs root)
  --vm-guests N          run each host (or the machine) as N real QEMU guests
                         (H*N <= -n) sharing one ivshmem-plain device
                         per host, on a virtio network; needs qemu-system-x86
                         and the guest image (vmpi vm image; README, "Real
                         VMs") (needs root)
  --vm-disk DIR          with --vms: DIR is each VM's own disk (a fresh tmpfs
                         in every VM, as a cloud VM's local disk: files one
                         VM writes there the others do not see); DIR must
                         exist
  --ivshmem-size SIZE    size of each host's region with --vms or
                         --vm-guests, in bytes or with a K, M or G suffix
                         (default with --vms 4G, or for hosts of 38 ranks
                         and more what their channels need, e.g. 11G for
                         64 ranks (sparse: only what is used costs); 256M
                         with --vm-guests, which needs a power of two)
  --user NAME|UID        run the ranks (and spawned ones) as this user: its
                         uid, primary group and groups, after the --hosts and
                         --vms set-up that needs root (only root may name
                         another user). Default: the user who ran vmpirun
                         through sudo (SUDO_UID) when vmpirun is root, else
                         vmpirun's own user (plain root stays root);
                         --user root keeps root under sudo
  --bind core|socket|none
                         pin rank r to the r-th allowed CPU (core) or to the
                         CPUs of the r-th socket (socket), modulo their number
                         (default core); -bind-to, --bind-to are aliases
  --report-bindings      say on stderr where each rank is pinned
  --sched default|rr     the ranks' scheduling policy: the kernel's default,
                         or round-robin (SCHED_RR at priority 1, which needs
                         root or `ulimit -r` of 1 or more): a rank that
                         yields then waits for every other rank of its CPU to
                         have had a turn, as oversubscribed collectives
                         assume (docs/PERFORMANCE.md, "Oversubscribed:
                         the scheduler"); default: default
  --tag-output           prefix each output line with [1,r]<stdout>: or
                         [1,r]<stderr>: (Open MPI's format)
  -l, --prepend-rank     prefix each output line with [r] (Hydra's format)
  -x NAME=VALUE, --env NAME=VALUE, -genv NAME VALUE, -env NAME VALUE
                         set an environment variable in every rank
  -x NAME, --env NAME    export the launcher's value of NAME (every variable
                         is exported anyway; -genvall is accepted)
  -wdir DIR, --wdir DIR  the ranks' working directory (also -wd, --wd)
  --timeout SECONDS      abort the job if it runs longer (exit code 124);
                         default $MPIEXEC_TIMEOUT
  -usize, --universe-size N|SYSTEM|INFINITE
                         MPI_UNIVERSE_SIZE of every job (spawned ones too):
                         N, the CPUs vmpirun may use (SYSTEM) or unknown
                         (INFINITE, the default, as under Hydra)
  --cleanup              remove /dev/shm/vmpi-* files, network namespaces
                         and VMs of jobs that are gone
  -v, --verbose          with --cleanup: say what is removed or kept
  -h, --help             show this help
  --version              show the version

accepted for job scripts of MPICH and Open MPI (one machine runs every rank):
  -ppn, -npernode, --npernode N; --map-by core|socket|slot|node;
  -hosts, -host, --host, -H LIST and -f, -hostfile, --hostfile, -machinefile,
  --machinefile FILE naming only this machine (localhost, its name or its
  addresses; slots are ignored); --oversubscribe, --allow-run-as-root,
  -genvall, --genvall.  MPMD (':', -configfile) is not supported yet.

A rank may spawn jobs (MPI_Comm_spawn): they run in the spawner's VM (or
host) unless the info key "host" names one of h<i>-vm<j> (--vms), h<i>
(--hosts) or this machine; "wdir" and "path" are understood too.

exit status: 0 if all ranks (of every job) exit 0; else the status of the
first rank that failed (128+S for a rank killed by signal S, the errorcode for MPI_Abort,
the error class for a fatal MPI error);
124 on --timeout, 127 if PROGRAM is not found, 126 if it cannot be started
(not executable, or not by the ranks' user, or a working directory that
user cannot enter), 2 for bad options,
1 if the --hosts or --vms namespaces cannot be made, 130/143 if vmpirun
is interrupted by SIGINT/SIGTERM.  Messages name a rank by its pid in this
machine's PID namespace.
"""

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# What one rank needs of the machine at least (its code, stacks, heap and
# its share of shared memory), for refusing a job that cannot start.
RANK_MIN_MEMORY = 8 << 20

_NO_VALUE = ("--oversubscribe", "--allow-run-as-root", "-genvall", "--genvall")
_PPN = ("-ppn", "--ppn", "-npernode", "--npernode")
_HOST_LIST = ("-hosts", "-host", "--host", "-H")
_HOST_FILE = ("-f", "-hostfile", "--hostfile", "-machinefile", "--machinefile")
_MAP_BY = ("core", "socket", "slot", "node")


class UsageError(Exception):
    pass


class ShowHelp(Exception):
    """--help: print USAGE and exit 0."""


class ShowVersion(Exception):
    """--version: print the version and exit 0."""


@dataclass
class Options:
    nranks: int = 1
    hosts: int | None = None
    vms: int | None = None
    vm_guests: int | None = None
    ivshmem_size: int | None = None
    vm_disk: str | None = None
    user: runas.User | None = None      # --user; see runas.ranks_user for the default
    bind: str = "core"
    report_bindings: bool = False
    sched: str = "default"      # --sched: "default" or "rr"
    tag: str = ""            # "": none, "ompi": [1,r]<stdout>:, "rank": [r]
    env: list[tuple[str, str]] = field(default_factory=list)
    wdir: str | None = None
    timeout: float | None = None
    usize: int | None = None    # -1: unknown (Hydra's INFINITE)
    cleanup: bool = False
    verbose: bool = False
    program: str | None = None
    args: list[str] = field(default_factory=list)


def version() -> str:
    try:
        from . import __version__
        return __version__
    except ImportError:  # pragma: no cover
        return "unknown"


def rank_limit() -> tuple[int, str]:
    """How many ranks this machine can start, and what bounds it: the
    processes the kernel still allows, and the available memory."""
    limits = []
    try:
        with open("/proc/sys/kernel/pid_max") as f:
            limits.append((int(f.read()) // 2, "half the kernel's pid_max"))
    except (OSError, ValueError):
        pass
    soft, _ = resource.getrlimit(resource.RLIMIT_NPROC)
    if soft != resource.RLIM_INFINITY:
        limits.append((soft, "the process limit (ulimit -u)"))
    try:
        with open("/proc/meminfo") as f:
            kib = next(int(l.split()[1]) for l in f if l.startswith("MemAvailable:"))
        limits.append((kib * 1024 // RANK_MIN_MEMORY,
                       f"{kib >> 10} MiB available at {RANK_MIN_MEMORY >> 20} MiB a rank"))
    except (OSError, ValueError, StopIteration):
        pass
    return min(limits, default=(1 << 20, "vmpirun's own bound"))


def this_machine() -> set[str]:
    """The names and addresses by which a host list can mean this machine."""
    names = {"localhost", "localhost.localdomain", "127.0.0.1", "::1", socket.gethostname()}
    names.add(socket.getfqdn())
    try:
        names.update(socket.gethostbyname_ex(socket.gethostname())[2])
    except OSError:
        pass
    return names


def check_hosts(what: str, hosts: list[str]) -> None:
    """Accepts a host list (host or host:slots entries) that names only this
    machine; a job across machines belongs to Hydra or Slurm."""
    here = this_machine()
    for entry in hosts:
        host = entry.rsplit(":", 1)[0] if entry.count(":") == 1 else entry
        if host and host not in here:
            raise UsageError(f"{what}: {host} is not this machine; vmpirun starts ranks here "
                             "only: across machines start the job with mpiexec.hydra -f "
                             "HOSTFILE or srun --mpi=pmi2 (README, \"Real clusters\")")


def _host_file(path: str) -> list[str]:
    try:
        with open(path) as f:
            lines = [l.split("#", 1)[0].split() for l in f]
    except OSError as exc:
        raise UsageError(f"cannot read the host file {path}: {exc.strerror}") from None
    # "host", "host:slots", "host slots=N" (Open MPI) or "host:N" (Hydra)
    return [words[0] for words in lines if words]


def parse_args(argv: list[str]) -> Options:
    """Parse vmpirun's command line (options stop at PROGRAM)."""
    o = Options()
    i = 0
    n = len(argv)
    while i < n:
        a = argv[i]
        if a == "--":
            i += 1
            break
        if not a.startswith("-") or a == "-":
            break
        if a.startswith("--") and "=" in a:
            name, inline = a.split("=", 1)
            has_inline = True
        else:
            name, inline, has_inline = a, "", False

        def value() -> str:
            nonlocal i
            if has_inline:
                return inline
            i += 1
            if i >= n:
                raise UsageError(f"option {name} needs a value")
            return argv[i]

        def flag() -> None:
            if has_inline:
                raise UsageError(f"option {name} takes no value")

        def count(what: str, v: str | None = None) -> int:
            if v is None:
                v = value()
            try:
                k = int(v)
            except ValueError:
                raise UsageError(f"{name}: not a number: {v!r}"
                                 + (" (nor SYSTEM or INFINITE)" if name.endswith("size") else "")
                                 ) from None
            if k < 1:
                raise UsageError(f"{name}: the number of {what} must be at least 1")
            return k

        def env_var(var: str, val: str | None) -> None:
            if not _NAME_RE.match(var):
                raise UsageError(f"{name}: invalid variable name {var!r}")
            if val is None:
                if var not in os.environ:
                    raise UsageError(f"{name} {var}: {var} is not set in the environment")
                val = os.environ[var]
            o.env.append((var, val))

        if name in ("-n", "-np", "--np", "--n"):
            o.nranks = count("ranks")
        elif name == "--hosts":
            o.hosts = count("hosts")
            if o.hosts > netns.MAX_HOSTS:
                raise UsageError(f"--hosts: at most {netns.MAX_HOSTS} hosts")
        elif name == "--vms":
            o.vms = count("VMs per host")
        elif name == "--vm-guests":
            o.vm_guests = count("guests per host")
        elif name == "--vm-disk":
            v = value()
            if not os.path.isabs(v) or not os.path.isdir(v) or os.path.realpath(v) == "/":
                raise UsageError(f"--vm-disk: {v!r} is not an existing directory given by its "
                                 "absolute path (nor /)")
            o.vm_disk = os.path.realpath(v)
        elif name == "--ivshmem-size":
            v = value()
            try:
                o.ivshmem_size = vms.parse_size(v)
            except ValueError:
                raise UsageError(f"--ivshmem-size: not a size: {v!r} "
                                 "(bytes, or a number with K, M or G)") from None
            page = os.sysconf("SC_PAGE_SIZE")
            if o.ivshmem_size < page or o.ivshmem_size % page:
                raise UsageError(f"--ivshmem-size: must be a positive multiple of the "
                                 f"page size ({page} bytes)")
        elif name == "--user":
            v = value()
            try:
                o.user = runas.lookup(v)
            except ValueError:
                raise UsageError(f"--user: no user {v!r} on this machine") from None
            if os.geteuid() != 0 and o.user.uid != os.geteuid():
                raise UsageError(f"--user {v}: only root can run ranks as another user "
                                 f"(vmpirun runs as uid {os.geteuid()})")
        elif name in ("--bind", "--bind-to", "-bind-to"):
            v = value()
            if v not in ("core", "socket", "none"):
                raise UsageError(f"{name}: expected 'core', 'socket' or 'none', got {v!r}")
            o.bind = v
        elif name == "--sched":
            v = value()
            if v not in ("default", "rr"):
                raise UsageError(f"--sched: expected 'default' or 'rr', got {v!r}")
            o.sched = v
        elif name == "--map-by":
            v = value()
            if v.split(":")[0].lower() not in _MAP_BY:
                raise UsageError(f"{name}: expected one of {', '.join(_MAP_BY)}, got {v!r}")
        elif name in _PPN:
            count("ranks per node")
        elif name in _HOST_LIST:
            check_hosts(name, value().split(","))
        elif name in _HOST_FILE:
            path = value()
            check_hosts(f"{name} {path}", _host_file(path))
        elif name in _NO_VALUE:
            flag()
        elif name == "--report-bindings":
            flag()
            o.report_bindings = True
        elif name == "--tag-output":
            flag()
            o.tag = "ompi"
        elif name in ("-l", "--prepend-rank"):
            flag()
            o.tag = "rank"
        elif name in ("-x", "--env"):
            var, eq, val = value().partition("=")
            env_var(var, val if eq else None)
        elif name in ("-genv", "-env"):
            var = value()
            env_var(var, value())
        elif name in ("-wdir", "--wdir", "-wd", "--wd"):
            o.wdir = value()
            if not os.path.isdir(o.wdir):
                raise UsageError(f"{name} {o.wdir}: not a directory")
        elif name == "--timeout":
            v = value()
            try:
                o.timeout = float(v)
            except ValueError:
                raise UsageError(f"--timeout: not a number: {v!r}") from None
            if not o.timeout > 0:
                raise UsageError("--timeout: must be positive")
        elif name in ("-usize", "--usize", "--universe-size"):
            v = value()
            if v.upper() == "SYSTEM":
                o.usize = len(os.sched_getaffinity(0))
            elif v.upper() == "INFINITE":
                o.usize = -1
            else:
                o.usize = count("processes in the universe", v)
        elif name in ("-configfile", "--configfile", "--app"):
            raise UsageError(f"{name}: MPMD jobs are not supported yet")
        elif name == "--cleanup":
            flag()
            o.cleanup = True
        elif name in ("-v", "--verbose"):
            flag()
            o.verbose = True
        elif name in ("-h", "--help"):
            raise ShowHelp()
        elif name == "--version":
            raise ShowVersion()
        else:
            raise UsageError(f"unknown option {a!r}")
        i += 1
    if i < n:
        o.program = argv[i]
        o.args = list(argv[i + 1:])
        if ":" in o.args:
            raise UsageError("':' separates the programs of an MPMD job, which vmpirun does "
                             "not support yet")
    if o.timeout is None and os.environ.get("MPIEXEC_TIMEOUT"):
        try:
            o.timeout = float(os.environ["MPIEXEC_TIMEOUT"])
        except ValueError:
            raise UsageError(f"MPIEXEC_TIMEOUT={os.environ['MPIEXEC_TIMEOUT']!r}: not a "
                             "number of seconds") from None
        if not o.timeout > 0:
            o.timeout = None  # Hydra's convention: 0 means no limit
    _check(o)
    return o


def probe_rr() -> None:
    """Whether this process may run round-robin (root with CAP_SYS_NICE, or
    `ulimit -r` of 1 or more, and an RT budget in its cgroup): a child
    tries, so this process keeps its own policy, and a rank never fails to
    start for it."""
    pid = os.fork()
    if pid == 0:
        try:
            os.sched_setscheduler(0, os.SCHED_RR, os.sched_param(1))
            os._exit(0)
        except OSError as exc:
            os._exit(exc.errno or 1)
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    if code:
        raise UsageError(f"--sched rr: this process may not run round-robin "
                         f"({os.strerror(code) if code > 0 else 'killed'}): it needs root with "
                         "CAP_SYS_NICE, or `ulimit -r` of 1 or more, and real-time time in its "
                         "cgroup (cpu.rt_runtime_us)")


def _check(o: Options) -> None:
    """The rules between options, once all are read."""
    if o.cleanup:
        if o.program is not None:
            raise UsageError("--cleanup takes no program")
        if o.user is not None:
            raise UsageError("--cleanup takes no --user")
    elif o.program is None:
        raise UsageError("no program given")
    elif o.nranks > (limit := rank_limit())[0]:
        raise UsageError(f"-n {o.nranks}: this machine can start at most {limit[0]} ranks "
                         f"({limit[1]})")
    elif o.hosts is not None and o.hosts > o.nranks:
        raise UsageError(f"--hosts {o.hosts}: more hosts than ranks ({o.nranks})")
    elif o.vms is not None and (o.hosts or 1) * o.vms > o.nranks:
        if o.hosts:
            raise UsageError(f"--hosts {o.hosts} --vms {o.vms}: more VMs ({o.hosts * o.vms}) "
                             f"than ranks ({o.nranks})")
        raise UsageError(f"--vms {o.vms}: more VMs than ranks ({o.nranks})")
    if o.vm_guests is not None and o.program is not None:
        if o.vms is not None:
            raise UsageError("--vm-guests and --vms exclude each other")
        if o.user is not None:
            raise UsageError("--user does not apply to --vm-guests (ranks run in the guests)")
        if (o.hosts or 1) * o.vm_guests > o.nranks:
            raise UsageError(f"--vm-guests {o.vm_guests}: more guests "
                             f"({(o.hosts or 1) * o.vm_guests}) than ranks ({o.nranks})")
        if o.ivshmem_size is not None and (o.ivshmem_size & (o.ivshmem_size - 1)
                                           or o.ivshmem_size < cloud.MIN_SIZE):
            raise UsageError("--ivshmem-size: with --vm-guests, a power of two (ivshmem-plain's "
                             f"rule) of at least {cloud.MIN_SIZE >> 20}M (vmpi's smallest region)")
    if o.sched == "rr" and o.program is not None:
        if o.vm_guests is not None:
            raise UsageError("--sched rr does not apply to --vm-guests (ranks run in the guests)")
        probe_rr()
    if o.vm_disk is not None and o.vms is None:
        raise UsageError("--vm-disk needs --vms")
    if o.ivshmem_size is not None and o.vms is None and o.vm_guests is None:
        raise UsageError("--ivshmem-size needs --vms or --vm-guests")
