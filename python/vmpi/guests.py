"""Real VMs: ``vmpirun --vm-guests N`` runs the ranks inside QEMU guests.

Each of H emulated hosts (``--hosts``, default 1) gets N guests and one
region file, given to all of its guests as the same ivshmem-plain device
(``memory-backend-file,share=on``), the way a cloud host would give one
shared device to the VMs of a job. Inside, vmpi finds the device by its PCI
id (1af4:1110) and maps BAR2, so its locality detector sees co-resident
guests from the region alone; guests of other hosts map another region and
are reached over the network.

The network: every guest has a virtio-net NIC on a tap device in the job's
switch namespace (:mod:`vmpi.netns`), joined by the bridge ``br0``; guest g
has address ``host_addr(g)`` and the launcher listens for PMI on
``PMI_ADDR`` on the bridge. Nothing is added to the machine's own network
namespace. Ranks reach the launcher's PMI-1 server with ``PMI_PORT`` and
``PMI_ID`` (Hydra's port mode).

The launcher reaches each guest through its second serial port, which QEMU
connects to its own stdin/stdout (the frame format is at the top of
guest/init.c): the guest's init sends framed output, exit statuses and
failures there, each tagged with the job and rank of its process, and the
launcher sends it frames to start a process and, once every process of
every job has ended, to power off. The first serial port is the kernel
console, logged to ``<shm dir>/vmpi-<job>-g<i>.console`` and shown when a
guest fails to boot.

Spawn (PMI spawn, MPI_Comm_spawn) is served as in vmpirun's other modes
(:mod:`vmpi.spawning`): each spawned job has its own PMI service and
listener (its ``PMI_PORT``), key-value space and job id; its processes run
in the guest of the rank that spawned them, or in the guests the info
``host`` names (``h<i>-g<j>``), started by a start frame to that guest's
init. A spawned program, and any library of its the guest lacks (the
image holds the job's program and its libraries), is fetched by the init
from the launcher over the network first (:meth:`GuestJob._serve_fetch`),
told by a frame naming the file and a one-time token. Messages name a
child "rank 1 of spawned job 1 (./child, guest h0-g1)"; ``-l`` tags its
lines ``[1:r]``; the first failing process of any job decides the exit
code.

Teardown: every QEMU runs in the switch namespace with PR_SET_PDEATHSIG, so
it dies with the launcher even if the launcher is killed; the namespace,
region files, images and console logs carry the job id and go with
``vmpirun --cleanup`` like those of emulated hosts and VMs.
"""

from __future__ import annotations

import ctypes
import os
import secrets
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field

from . import cloud
from . import guest_image
from . import netns
from .outcome import Out, abort_message, emit_output, exit_failure, rank_name, signame
from .placement import host_starts, vm_starts
from . import pmi
from . import shm
from . import spawning
from . import vms

__all__ = ["GuestError", "check_usable", "run", "DEFAULT_IVSHMEM_SIZE"]

PROG = "vmpirun"
DEFAULT_IVSHMEM_SIZE = 256 << 20   # a power of two, as ivshmem-plain needs
GUEST_MEM = "512M"
PMI_ADDR = str(netns.SUBNET.broadcast_address - 1)
BOOT_TIMEOUT = 120.0    # seconds for a guest to start its ranks (software emulation)
POWEROFF_GRACE = 15.0   # seconds for a guest whose ranks ended to power off
TERM_GRACE = 2.0        # seconds between SIGTERM and SIGKILL to QEMU
MAX_FRAME = 1 << 20     # payload bytes of a frame from a guest
MAX_START = 1 << 20     # of a start frame to one (guest/init.c: MAX_JOB)
GUEST_PROCS = 1024      # processes an init runs at once (guest/init.c: MAX_PROCS)
MAX_SHIP = 64 << 20     # bytes of files one spawn may send (guest/init.c: MAX_SHIP)
AGENT_STALL = 60.0      # seconds a guest may leave frames for it unread
GUEST = 0xFFFFFFFF      # job and rank of a frame about a guest itself
HEADER = "<BcIII"       # magic, type, job, rank, payload length
PR_SET_PDEATHSIG = 1


class GuestError(Exception):
    pass


def check_usable() -> tuple[str, str]:
    """Return the (qemu, ip) paths, or raise GuestError naming what is missing."""
    qemu = shutil.which("qemu-system-x86_64")
    if qemu is None:
        raise GuestError("--vm-guests: qemu-system-x86_64 not found "
                         "(Debian: apt-get install qemu-system-x86)")
    if not os.access("/dev/net/tun", os.R_OK | os.W_OK):
        raise GuestError("--vm-guests: /dev/net/tun is not usable (the guests' NICs are taps)")
    try:
        ip = netns.check_usable()
    except netns.NetnsError as exc:
        raise GuestError(str(exc).replace("--hosts", "--vm-guests")) from None
    return qemu, ip


def _preexec(net: netns.Network, cpu: int | None):
    libc = ctypes.CDLL(None, use_errno=True)

    def fn() -> None:
        # QEMU must not outlive a launcher killed with SIGKILL
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        net.enter_switch()
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})
    return fn


@dataclass
class _Guest:
    index: int
    host: int
    name: str
    first: int
    count: int
    console: str
    proc: subprocess.Popen | None = None
    frames: bytearray = field(default_factory=bytearray)
    err: bytearray = field(default_factory=bytearray)
    outq: bytearray = field(default_factory=bytearray)   # frames for it not yet written
    writing: bool = False       # outq waits for QEMU's stdin to take more
    out_at: float = 0.0         # when QEMU last took some
    shipped: set = field(default_factory=set)   # files sent to it for spawned processes
    booted: bool = False
    stopping: bool = False      # told to power off
    exited: int | None = None


@dataclass
class _Group:
    """One MPI job: the one of the command line (index 0), or one a rank
    spawned; each has its own PMI service and listener (its PMI_PORT)."""

    index: int
    jobid: str
    kvsname: str
    server: pmi.PMIServer | None = None
    listener: socket.socket | None = None
    ranks: list = field(default_factory=list)


@dataclass
class _Fetch:
    """A guest's init fetching a file: it sends the file's token and a
    newline, then reads the bytes."""

    sock: socket.socket
    line: bytearray = field(default_factory=bytearray)
    data: memoryview | None = None     # what is left to send, once the token is known


@dataclass
class _Rank:
    rank: int               # in its job
    group: _Group
    guest: int
    program: str            # as the command line or the spawn named it
    sock: socket.socket | None = None
    status: int | None = None          # exit code, or -signal
    bufs: dict = field(default_factory=lambda: {1: bytearray(), 2: bytearray()})


class GuestJob:
    def __init__(self, opts, program: str, qemu: str, ip: str):
        self.o = opts
        self.program = program
        self.qemu = qemu
        self.ip = ip
        self.n = opts.nranks
        self.nhosts = opts.hosts or 1
        self.per_host = opts.vm_guests
        self.shm_dir = shm.default_shm_dir()
        starts = vm_starts(host_starts(self.n, self.nhosts), self.per_host)
        self.groups: list[_Group] = []
        self.ranks: list[_Rank] = []        # of every job
        first = self._new_group()
        self.jobid = first.jobid
        self.guests = [
            _Guest(g, g // self.per_host, f"h{g // self.per_host}-g{g % self.per_host}",
                   starts[g], starts[g + 1] - starts[g],
                   os.path.join(self.shm_dir, f"vmpi-{self.jobid}-g{g}.console"))
            for g in range(len(starts) - 1)]
        self._add_ranks(first, opts.program, [g.index for g in self.guests for _ in range(g.count)])
        # as vmpirun's other modes: the universe unknown unless -usize says,
        # one name space for every job, the trust domain's secret in each KVS
        self.universe = opts.usize if opts.usize is not None else -1
        self.names: dict[str, str] = {}
        self.kvs_extra = spawning.domain_preput(opts)
        first.server = pmi.PMIServer(self.n, first.kvsname, universe_size=self.universe,
                                     names=self.names, preput=self.kvs_extra, spawn=True,
                                     node_sizes=[g.count for g in self.guests])
        self.size = opts.ivshmem_size or DEFAULT_IVSHMEM_SIZE
        self.regions = [vms.region_path(self.shm_dir, self.jobid, h) for h in range(self.nhosts)]
        self.initrd = os.path.join(self.shm_dir, f"vmpi-{self.jobid}-guest.initrd")
        self.image: set[str] = set()        # the programs and libraries the guests hold
        self.env: dict[str, str] = {}       # of every process, before its own variables
        self.net: netns.Network | None = None
        # PMI connections by fd: those still to send their initack (with
        # what they sent so far, and the job whose port they came to), and
        # the rank of each that did
        self.pending: dict[int, tuple[socket.socket, bytearray, _Group]] = {}
        self.rank_of: dict[int, _Rank] = {}
        # files for the inits to fetch, by token, and their fetches under way
        self.files: socket.socket | None = None
        self.offers: dict[str, bytes] = {}
        self.fetches: dict[int, _Fetch] = {}
        self.sel = selectors.DefaultSelector()
        self.exit_code: int | None = None
        self.tearing_down = False
        self.term_at = 0.0
        self.signals: list[int] = []
        self.start = time.monotonic()
        self.deadline = self.start + opts.timeout if opts.timeout else None
        self.all_done_at: float | None = None
        self.out = {1: Out(1), 2: Out(2)}

    def _new_group(self) -> _Group:
        g = _Group(len(self.groups), secrets.token_hex(16), f"kvs_{os.getpid()}_{len(self.groups)}")
        self.groups.append(g)
        return g

    def _add_ranks(self, group: _Group, program: str, guests: list[int]) -> None:
        """Ranks of group running program, the next in guest guests[0], and so on."""
        for gi in guests:
            r = _Rank(len(group.ranks), group, gi, program)
            group.ranks.append(r)
            self.ranks.append(r)

    # -- messages and output --

    def say(self, text: str) -> None:
        sys.stderr.write(f"{PROG}: {text}\n")
        sys.stderr.flush()

    def who(self, r: _Rank) -> str:
        return rank_name(r.rank, r.group.index, r.program, f"guest {self.guests[r.guest].name}")

    def _emit(self, r: _Rank, stream: int, chunk: bytes) -> None:
        emit_output(self.out[stream], r.rank, stream, chunk, self.o.tag, r.group.index)

    def _output(self, r: _Rank, stream: int, data: bytes) -> None:
        buf = r.bufs[stream]
        buf += data
        nl = buf.rfind(b"\n")
        if nl >= 0:
            self._emit(r, stream, bytes(buf[:nl + 1]))
            del buf[:nl + 1]

    def _flush_output(self, r: _Rank) -> None:
        for stream, buf in r.bufs.items():
            self._emit(r, stream, bytes(buf))
            buf.clear()

    # -- failures --

    def fail(self, code: int, message: str, *, teardown: bool = True) -> None:
        """Record a failure (the first one decides the exit code)."""
        if self.exit_code is None:
            self.exit_code = code
        if not self.tearing_down:
            self.say(f"{message}; aborting job" if teardown else message)
            if teardown:
                self.teardown()

    def teardown(self) -> None:
        if self.tearing_down:
            return
        self.tearing_down = True
        self.term_at = time.monotonic()
        for g in self.guests:
            if g.proc is not None and g.exited is None:
                g.proc.terminate()

    def _console_tail(self, g: _Guest, lines: int = 8) -> str:
        try:
            with open(g.console, "rb") as f:
                text = f.read()[-4096:].decode("utf-8", errors="replace")
        except OSError:
            return ""
        tail = [ln.rstrip("\r") for ln in text.splitlines() if ln.strip()][-lines:]
        return "".join(f"\n  | {ln}" for ln in tail)

    # -- setting up --

    def create(self) -> None:
        k = guest_image.kernel(log=self.say)
        init = guest_image.find_init()
        self.env = self._guest_env()
        self.image = guest_image.write_initrd(self.initrd, k, init, [self.program, *self.o.args],
                                              self.env, os.getcwd())
        for path in self.regions:
            # QEMU maps the file whole: it must have the device's size already
            with open(path, "wb") as f:
                f.truncate(self.size)
        self.net = netns.Network.create(self.jobid, 0, self.ip)
        lines = [f"addr add {PMI_ADDR}/{netns.SUBNET.prefixlen} dev br0"]
        for g in self.guests:
            lines += [f"tuntap add g{g.index} mode tap", f"link set g{g.index} addrgenmode none",
                      f"link set g{g.index} master br0 up"]
        self.net.configure_switch(lines, "--vm-guests: cannot make the guests' network")
        self._listen(self.groups[0])
        # the boot limit and --timeout count from here: fetching the kernel
        # into an empty cache is no part of the job
        self.start = time.monotonic()
        self.deadline = self.start + self.o.timeout if self.o.timeout else None
        for g in self.guests:
            self._boot(g, str(k.vmlinux))

    def _guest_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not (k.startswith(("PMI_", "PMIX_", "VMPI_IVSHMEM_PATH")) or
                       k in ("MPI_LOCALRANKID", "MPI_LOCALNRANKS", "PWD", "OLDPWD"))}
        env.update(dict(self.o.env))
        env["VMPI_JOB_ID"] = self.jobid
        env["VMPI_PM_REPORTS_ABORT"] = "1"
        env.setdefault("VMPI_DOMAIN", self.jobid)
        # libfabric 1.17's tcp transport ("net") has a variable of its own;
        # without it, it may pick lo, which sorts first when eth0 reports no speed
        env.setdefault("FI_TCP_IFACE", "eth0")
        env.setdefault("FI_NET_IFACE", "eth0")
        env.setdefault("UCX_NET_DEVICES", "eth0")
        env.setdefault("HOME", "/root")
        return env

    def _listener(self, backlog: int, data) -> socket.socket:
        """A socket listening on the bridge (any port), served from the loop as data says."""
        sock = self.net.listen_in_switch(PMI_ADDR, backlog)
        sock.setblocking(False)
        self.sel.register(sock, selectors.EVENT_READ, data)
        return sock

    def _listen(self, group: _Group) -> None:
        """The job's PMI listener (its PMI_PORT)."""
        group.listener = self._listener(group.server.size + 16, ("listen", group))

    def _pmi_port(self, group: _Group) -> str:
        return f"{PMI_ADDR}:{group.listener.getsockname()[1]}"

    def _boot(self, g: _Guest, vmlinux: str) -> None:
        append = (f"console=ttyS0 quiet loglevel=3 panic=-1 vmpi.ranks={g.first}:{g.count} "
                  f"vmpi.ip={netns.host_addr(g.index)}/{netns.SUBNET.prefixlen} "
                  f"vmpi.pmi={self._pmi_port(self.groups[0])} vmpi.name={g.name}")
        mac = "52:54:00:%02x:%02x:%02x" % (g.index >> 16 & 0xFF, g.index >> 8 & 0xFF,
                                            g.index & 0xFF)
        accel = os.environ.get("VMPI_GUEST_ACCEL", "tcg")
        # --bind core: guest g on the g-th allowed CPU, like rank r with --vms
        allowed = sorted(os.sched_getaffinity(0))
        cpu = allowed[g.index % len(allowed)] if self.o.bind == "core" else None
        cmd = [self.qemu, "-name", f"vmpi-{self.jobid}-{g.name}", "-accel", accel,
               "-cpu", "max", "-smp", "1", "-m", os.environ.get("VMPI_GUEST_MEM", GUEST_MEM),
               "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
               "-kernel", vmlinux, "-initrd", self.initrd, "-append", append,
               "-serial", f"file:{g.console}",
               "-chardev", "stdio,id=agent,signal=off", "-serial", "chardev:agent",
               "-netdev", f"tap,id=net0,ifname=g{g.index},script=no,downscript=no",
               "-device", f"virtio-net-pci,netdev=net0,mac={mac},romfile=",
               *cloud.qemu_ivshmem_args(self.regions[g.host], self.size)]
        g.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, preexec_fn=_preexec(self.net, cpu),
                                  start_new_session=True)
        for stream, f in (("agent", g.proc.stdout), ("qemu", g.proc.stderr)):
            os.set_blocking(f.fileno(), False)
            self.sel.register(f, selectors.EVENT_READ, (stream, g))
        os.set_blocking(g.proc.stdin.fileno(), False)

    # -- PMI --

    def _accepted(self, listener: socket.socket, kind: str) -> list[socket.socket]:
        """The connections waiting on listener, non-blocking, served as kind."""
        socks = []
        while True:
            try:
                sock, _ = listener.accept()
            except (BlockingIOError, InterruptedError):
                return socks
            sock.setblocking(False)
            self.sel.register(sock, selectors.EVENT_READ, (kind, None))
            socks.append(sock)

    def _send(self, r: _Rank, data: bytes) -> None:
        sock = r.sock
        if sock is None:
            return
        sock.setblocking(True)
        sock.settimeout(5.0)
        try:
            sock.sendall(data)
        except OSError:
            pass   # the rank is gone; its exit frame tells
        finally:
            sock.setblocking(False)

    def _pmi_events(self, group: _Group, events: list) -> None:
        for ev in events:
            if isinstance(ev, pmi.Reply):
                self._send(group.ranks[ev.rank], ev.data)
            elif isinstance(ev, pmi.Spawn):
                r = group.ranks[ev.rank]
                self._send(r, group.server.spawn_reply(ev.rank, self.spawn(r, ev)).data)
            elif isinstance(ev, pmi.Abort):
                self.fail(ev.exitcode & 0xFF or 1,
                          abort_message(self.who(group.ranks[ev.rank]), ev.exitcode, ev.message))
            elif isinstance(ev, pmi.ProtocolError):
                self.say(f"{self.who(group.ranks[ev.rank])}: PMI protocol error: {ev.text}")

    def _close_sock(self, sock: socket.socket) -> None:
        self.rank_of.pop(sock.fileno(), None)
        self.sel.unregister(sock)
        sock.close()

    def _read_pmi(self, sock: socket.socket) -> None:
        try:
            data = sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        fd = sock.fileno()
        if fd in self.pending:
            _, buf, group = self.pending[fd]
            buf += data
            if not data or b"\n" in buf:
                del self.pending[fd]
                self._initack(sock, buf, group)
            return
        r = self.rank_of[fd]
        if not data:
            r.sock = None
            self._close_sock(sock)
            self._pmi_events(r.group, r.group.server.eof(r.rank))
            return
        self._pmi_events(r.group, r.group.server.feed(r.rank, data))

    def _initack(self, sock: socket.socket, buf: bytearray, group: _Group) -> None:
        line, _, rest = bytes(buf).partition(b"\n")
        try:
            cmd, attrs = pmi.parse_command(line.decode("utf-8", errors="replace"))
            rank = int(attrs.get("pmiid", "-1"))
        except ValueError:
            cmd, rank = "", -1
        size = len(group.ranks)
        if cmd != "initack" or not 0 <= rank < size or group.ranks[rank].sock is not None:
            self.say(f"a PMI client sent {line[:80]!r} instead of a valid initack; closed")
            self._close_sock(sock)
            return
        r = group.ranks[rank]
        r.sock = sock
        self.rank_of[sock.fileno()] = r
        self._send(r, f"cmd=initack\ncmd=set size={size}\ncmd=set rank={rank}\n"
                      "cmd=set debug=0\n".encode())
        if rest:
            self._pmi_events(group, group.server.feed(rank, rest))

    # -- spawn --

    def spawn(self, parent: _Rank, ev: pmi.Spawn) -> str | None:
        """Have the guests' inits start the job a rank asked for (PMI spawn);
        None, or why not, and then nothing runs of it."""
        if self.tearing_down:
            return "the job is ending"
        path_env = self.env.get("PATH", os.defpath)
        plans, err = spawning.plan(ev, base_dir=os.getcwd(), env_path=path_env,
                                   home=parent.guest, names=[g.name for g in self.guests])
        if err:
            return err
        for gi, more in Counter(vm for c in plans for vm in c.places).items():
            g = self.guests[gi]
            live = sum(1 for r in self.ranks if r.guest == gi and r.status is None)
            if g.stopping or g.exited is not None:
                return f"guest {g.name} has stopped"
            if live + more > GUEST_PROCS:
                return (f"cannot start {more} more processes in guest {g.name} beside its "
                        f"{live}: its init runs at most {GUEST_PROCS}")
        ships, err = self._files_to_ship(plans)
        if err:
            return err
        try:
            port = self._file_port() if ships else 0
        except OSError as exc:
            return f"cannot serve the spawned programs to the guests: {exc.strerror or exc}"
        group = self._new_group()
        for c in plans:
            self._add_ranks(group, c.block.execname, c.places)
        group.server = spawning.server(plans, group.kvsname, universe=self.universe,
                                       names=self.names, preput=dict(ev.preput, **self.kvs_extra))
        try:
            self._listen(group)
            starts = self._start_frames(group, plans)
        except (OSError, guest_image.ImageError) as exc:
            self._drop_group(group)
            return f"cannot start the spawned job: {getattr(exc, 'strerror', None) or exc}"
        for path, (mode, data, where) in ships.items():
            for gi in sorted(where):
                token = secrets.token_hex(16)
                self.offers[token] = data
                self.guests[gi].shipped.add(path)
                self._tell(self.guests[gi], b"w", GUEST, GUEST, guest_image.nul_strings(
                    [path, str(mode), str(len(data)), str(port), token]))
        for r, payload in starts:
            self._tell(self.guests[r.guest], b"s", r.group.index, r.rank, payload)
        return None

    def _start_frames(self, group: _Group, plans: list[spawning.Command]) -> list:
        """(rank, start frame payload) of each process of the spawned job;
        raises ImageError for one that cannot be sent."""
        starts = []
        todo = iter(group.ranks)
        for c in plans:
            for _ in c.places:
                r = next(todo)
                env = dict(self.env, VMPI_JOB_ID=group.jobid, PMI_PORT=self._pmi_port(group),
                           PMI_ID=str(r.rank))
                spawning.spawned_env(env, region=True)
                payload = guest_image.job_file(c.wdir, [os.path.normpath(c.path),
                                                         *c.block.args], env)
                if len(payload) > MAX_START:
                    raise guest_image.ImageError(f"the arguments and environment of "
                                                 f"{self.who(r)} exceed {MAX_START} bytes")
                starts.append((r, payload))
        return starts

    def _files_to_ship(self, plans: list[spawning.Command]) -> tuple[dict, str]:
        """The files the spawn's programs need that their guests lack (the
        program and its libraries, as for the image): {path: (mode, bytes,
        {guest})}, or ({}, why not)."""
        ships: dict[str, tuple[int, bytes, set[int]]] = {}
        for c in plans:
            try:
                need = [c.path, *guest_image.library_closure([c.path], self.env)]
            except guest_image.ImageError as exc:
                return {}, f"{c.block.execname}: {exc}"
            for path in map(os.path.normpath, need):
                lack = {gi for gi in c.places if path not in self.guests[gi].shipped}
                if path in self.image or not lack:
                    continue
                if path in ships:
                    ships[path][2].update(lack)
                    continue
                try:
                    with open(path, "rb") as f:
                        data = f.read(MAX_SHIP + 1)   # more fails below
                        ships[path] = (os.fstat(f.fileno()).st_mode & 0o777, data, lack)
                except OSError as exc:
                    return {}, f"{c.block.execname}: cannot read {path}: {exc.strerror}"
        size = sum(len(data) * len(where) for _, data, where in ships.values())
        if size > MAX_SHIP:
            return {}, (f"the files the spawned programs need that the guests lack come to "
                        f"{size >> 20} MiB, more than the {MAX_SHIP >> 20} MiB a spawn may send")
        return ships, ""

    def _drop_group(self, group: _Group) -> None:
        """Forget a spawned job that did not start."""
        if group.listener is not None:
            self.sel.unregister(group.listener)
            group.listener.close()
        self.ranks = [r for r in self.ranks if r.group is not group]
        self.groups.remove(group)

    # -- files for spawned processes --

    def _file_port(self) -> int:
        """The port of the listener from which inits fetch files (made on first use)."""
        if self.files is None:
            self.files = self._listener(len(self.guests) + 4, ("files", None))
        return self.files.getsockname()[1]

    def _serve_fetch(self, sock: socket.socket) -> None:
        """Read the token (a line of at most 64 bytes), then send its file."""
        f = self.fetches[sock.fileno()]
        try:
            if f.data is None:
                got = sock.recv(65 - len(f.line))
                f.line += got
                if b"\n" not in f.line:
                    if got and len(f.line) < 65:
                        return
                    raise ConnectionError   # closed early, or too long to be a token
                data = self.offers.pop(f.line.partition(b"\n")[0].decode(errors="replace"), None)
                if data is None:
                    raise ConnectionError   # no file of that token (any more)
                f.data = memoryview(data)
                self.sel.modify(sock, selectors.EVENT_WRITE, ("fetch", None))
            f.data = f.data[sock.send(f.data):]
            if f.data:
                return
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            pass   # the init reports a fetch that fails
        del self.fetches[sock.fileno()]
        self.sel.unregister(sock)
        sock.close()

    # -- guests --

    def _tell(self, g: _Guest, kind: bytes, job: int, rank: int, payload: bytes = b"") -> None:
        """Send a frame to g's init; it waits in g.outq until g has booted,
        the port dropping what comes before init opens it."""
        g.outq += struct.pack(HEADER, 0x7E, kind, job, rank, len(payload)) + payload
        if g.booted:
            self._flush_outq(g)

    def _flush_outq(self, g: _Guest) -> None:
        """Write what QEMU takes now; the loop writes the rest when it can
        (a shipped file may take a while through the serial port)."""
        while g.outq:
            try:
                del g.outq[:os.write(g.proc.stdin.fileno(), g.outq)]
                g.out_at = time.monotonic()
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                g.outq.clear()   # QEMU is gone; its exit is handled elsewhere
        want = bool(g.outq)
        if want != g.writing:
            if want:
                self.sel.register(g.proc.stdin, selectors.EVENT_WRITE, ("stdin", g))
            else:
                self.sel.unregister(g.proc.stdin)
            g.writing = want

    def _read_guest(self, g: _Guest, stream: str, f) -> None:
        try:
            data = os.read(f.fileno(), 65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            try:
                self.sel.unregister(f)
            except KeyError:
                pass   # seen before
            return
        if stream == "qemu":
            g.err += data
            del g.err[:-4096]
            return
        g.frames += data
        hdr = struct.calcsize(HEADER)
        while len(g.frames) >= hdr:
            magic, kind, job, rank, length = struct.unpack_from(HEADER, g.frames)
            if magic != 0x7E or length > MAX_FRAME:
                self.fail(1, f"guest {g.name} sent garbage on its agent port")
                g.frames.clear()
                return
            if len(g.frames) < hdr + length:
                return
            payload = bytes(g.frames[hdr:hdr + length])
            del g.frames[:hdr + length]
            self._frame(g, kind, job, rank, payload)

    def _frame(self, g: _Guest, kind: bytes, job: int, rank: int, payload: bytes) -> None:
        if kind == b"b":
            g.booted = True
            self._flush_outq(g)
            return
        if kind == b"f":
            self.fail(1, f"guest {g.name}: {payload.decode('utf-8', errors='replace')}")
            return
        ranks = self.groups[job].ranks if job < len(self.groups) else []
        r = ranks[rank] if rank < len(ranks) else None
        if r is None or r.guest != g.index or r.status is not None:
            self.fail(1, f"guest {g.name} sent a frame for rank {rank} of job {job}, "
                         "not one of its running processes")
            return
        if kind in (b"o", b"e"):
            self._output(r, 1 if kind == b"o" else 2, payload)
        elif kind == b"x" and len(payload) == 4:
            status = struct.unpack("<I", payload)[0]
            self._rank_exit(r, os.waitstatus_to_exitcode(status))
        else:
            self.fail(1, f"guest {g.name} sent a frame of type {kind!r} ({len(payload)} bytes) "
                         "it has no business sending")

    def _rank_exit(self, r: _Rank, rc: int) -> None:
        r.status = rc
        self._flush_output(r)
        if r.sock is not None:
            # what the rank said last (an abort, its finalize) comes before its exit
            while True:
                sock = r.sock
                self._read_pmi(sock)
                if r.sock is None or not _readable(sock):
                    break
        if self.tearing_down:
            return
        server = r.group.server
        bad = exit_failure(rc, server.initialized(r.rank), server.finalized(r.rank))
        if bad is not None:
            code, what, teardown = bad
            self.fail(code, f"{self.who(r)} {what}", teardown=teardown)

    def _check_guests(self, now: float) -> None:
        for g in self.guests:
            if g.proc is None or g.exited is not None:
                continue
            rc = g.proc.poll()
            if rc is None:
                if not g.booted and now - self.start > BOOT_TIMEOUT and not self.tearing_down:
                    self.fail(1, f"guest {g.name} did not start its ranks within "
                                 f"{BOOT_TIMEOUT:g} s; its console:{self._console_tail(g)}")
                if g.writing and now - g.out_at > AGENT_STALL and not self.tearing_down:
                    self.fail(1, f"guest {g.name} has read nothing from its agent port for "
                                 f"{AGENT_STALL:g} s")
                continue
            # what QEMU wrote before it ended
            self._read_guest(g, "agent", g.proc.stdout)
            self._read_guest(g, "qemu", g.proc.stderr)
            g.exited = rc
            if not g.stopping and not self.tearing_down:
                why = g.err.decode("utf-8", errors="replace").strip().splitlines()
                # QEMU's error is its first line; hints may follow
                detail = f": {why[0]}" if why else self._console_tail(g)
                self.fail(1, f"guest {g.name} stopped before its ranks ended "
                             f"(QEMU exit status {rc}){detail}")

    # -- main loop --

    def run(self) -> int:
        while True:
            for key, _ in self.sel.select(0.2):
                kind, g = key.data
                if kind == "listen":
                    for sock in self._accepted(g.listener, "pmi"):
                        self.pending[sock.fileno()] = (sock, bytearray(), g)
                elif kind == "pmi":
                    self._read_pmi(key.fileobj)
                elif kind == "stdin":
                    self._flush_outq(g)
                elif kind == "files":
                    for sock in self._accepted(self.files, "fetch"):
                        self.fetches[sock.fileno()] = _Fetch(sock)
                elif kind == "fetch":
                    self._serve_fetch(key.fileobj)
                else:
                    self._read_guest(g, kind, key.fileobj)
            while self.signals:
                sig = self.signals.pop(0)
                if self.exit_code is None:
                    self.exit_code = 128 + sig
                if not self.tearing_down:
                    self.say(f"caught {signame(sig)}; stopping "
                             f"{len(self.guests)} guest(s)")
                self.teardown()
            now = time.monotonic()
            self._check_guests(now)
            if self.deadline is not None and now >= self.deadline and not self.tearing_down:
                if self.exit_code is None:
                    self.exit_code = 124
                self.say(f"job exceeded the timeout of {self.o.timeout:g} s; aborting job")
                self.teardown()
            if all(r.status is not None for r in self.ranks) and self.all_done_at is None:
                # every job has ended: no spawn can come any more
                self.all_done_at = now
                for g in self.guests:
                    if g.exited is None:
                        g.stopping = True
                        self._tell(g, b"q", GUEST, GUEST)
            if (self.all_done_at is not None and not self.tearing_down
                    and now - self.all_done_at > POWEROFF_GRACE):
                self.teardown()   # a guest that would not power off
            if self.tearing_down and now - self.term_at > TERM_GRACE:
                for g in self.guests:
                    if g.exited is None and g.proc is not None:
                        g.proc.kill()
            if all(g.exited is not None for g in self.guests):
                break
        if self.exit_code is None and any(r.status is None for r in self.ranks):
            self.exit_code = 1
        return self.exit_code if self.exit_code is not None else 0

    def close(self) -> None:
        for g in self.guests:
            if g.proc is not None:
                if g.proc.poll() is None:
                    g.proc.kill()
                g.proc.wait()
                for f in (g.proc.stdin, g.proc.stdout, g.proc.stderr):
                    f.close()
        for r in self.ranks:
            if r.sock is not None:
                r.sock.close()
        for sock, _, _ in self.pending.values():
            sock.close()
        for group in self.groups:
            if group.listener is not None:
                group.listener.close()
        for f in self.fetches.values():
            f.sock.close()
        if self.files is not None:
            self.files.close()
        self.sel.close()
        if self.net is not None:
            left = self.net.destroy()
            if left:
                self.say(f"cannot remove network namespace(s) {', '.join(left)}; "
                         f"'{PROG} --cleanup' removes them later")
        shm.remove_job_files(self.shm_dir, self.jobid)


def _readable(sock: socket.socket) -> bool:
    s = selectors.DefaultSelector()
    try:
        s.register(sock, selectors.EVENT_READ)
        return bool(s.select(0))
    finally:
        s.close()


def run(opts, program: str) -> int:
    """Run the job of ``opts`` (vmpirun's options) in QEMU guests."""
    try:
        qemu, ip = check_usable()
    except GuestError as exc:
        sys.stderr.write(f"{PROG}: {exc}\n")
        return 1
    job = GuestJob(opts, program, qemu, ip)
    old = {}

    def on_signal(signum, frame) -> None:
        job.signals.append(signum)

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        old[s] = signal.signal(s, on_signal)
    try:
        shm.write_pidfile(job.shm_dir, job.jobid)
        try:
            job.create()
        except (guest_image.ImageError, netns.NetnsError, OSError) as exc:
            job.say(f"--vm-guests: {exc}" if not str(exc).startswith("--") else str(exc))
            return 1
        return job.run()
    finally:
        try:
            job.close()   # removes the job's files, the pid file last
        finally:
            for s, h in old.items():
                signal.signal(s, h)
