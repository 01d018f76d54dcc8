"""vmpirun: start an MPI job on this machine and serve it (and the jobs it
spawns) PMI-1.

Usage::

    vmpirun -n N [--hosts H] [--vms V [--ivshmem-size SIZE] [--vm-disk DIR]] [--bind core|none]
            [--user NAME|UID] [--tag-output] [-x NAME[=VALUE]]... [--env NAME[=VALUE]]...
            [--timeout SECONDS] PROGRAM [ARGS...]
    vmpirun --cleanup [-v]

Every rank is a child process in its own session (so its process group,
grandchildren included, can be signalled as a whole) with

* ``PMI_RANK``, ``PMI_SIZE``, ``PMI_FD`` - its end of a socketpair on which
  it speaks the PMI-1 wire protocol (see :mod:`vmpi.pmi`);
* ``VMPI_JOB_ID`` - 128 random bits in hex, the job key (shared-memory
  files are named ``vmpi-<VMPI_JOB_ID>-...``);
* ``VMPI_PM_REPORTS_ABORT=1`` - a rank that aborts leaves its message to
  vmpirun, which prints it once, naming the rank, its pid, host and VM;
* ``VMPI_LOCAL_RANK``/``VMPI_LOCAL_SIZE`` (and Hydra's ``MPI_LOCALRANKID``/
  ``MPI_LOCALNRANKS``) - its place among the ranks of its machine;
* the ``-x``/``--env`` variables.

``--hosts H`` emulates H hosts on this machine (see :mod:`vmpi.netns`): each
host is a network namespace with one interface, ``vmpi0``, on a virtual
switch, and every rank joins its host's namespace (nothing else changes).
Ranks are placed in blocks: host h gets ranks ``h*q + min(h, N%H)`` on, q+1
of them for the first N%H hosts and q = N//H for the others.  The "machine"
of the local rank and size is then the host, and each rank also gets
``VMPI_HOST_INDEX`` (h), ``VMPI_HOST_ADDR`` (its address on ``vmpi0``) and,
unless already set, ``FI_TCP_IFACE=vmpi0`` and ``UCX_NET_DEVICES=vmpi0`` so
that libfabric's tcp provider and UCX use the emulated network.  The
namespaces are removed when the job ends, however it ends; ``--cleanup``
removes those of launchers that were killed.

``--vms V`` runs each host (the machine, without ``--hosts``) as V emulated
VMs (see :mod:`vmpi.vms`): the ranks of a VM share their own mount, IPC,
UTS and PID namespaces, with a private ``/dev/shm``, ``/proc`` of their PID
namespace and the hostname ``h<i>-vm<j>``; the VMs of a host share its
network namespace (without ``--hosts``, the machine's) and one region file,
its "ivshmem device", bind-mounted in each of them at ``/run/vmpi/ivshmem``.
Within its host's block, VM j gets a block of ranks the same way hosts do.
Each rank then also gets ``VMPI_HOST_INDEX``, ``VMPI_VM_INDEX`` (j) and
``VMPI_IVSHMEM_PATH`` (``/run/vmpi/ivshmem``), and its local rank and size
are those within its VM.  The ranks are still children of vmpirun, and the
pids it reports are their pids in the machine's PID namespace (inside its
VM a rank has another one).

``--user NAME|UID`` runs the ranks (spawned ones too) as that user, and so
does a root vmpirun started through sudo by default, as the user who ran
sudo (see :mod:`vmpi.runas`): each rank's child joins its host's and VM's
namespaces and drops the VM's capabilities as root, then takes the user's
groups, gid and uid, and enters the working directory as the user; the
regions of ``--vms`` belong to the user (mode 0600).  ``HOME``, ``USER``
and ``LOGNAME`` are the user's unless ``-x`` sets them.  vmpirun itself
stays root: it serves PMI, relays output and removes everything at the end.

A rank may spawn a new job (PMI spawn, MPI_Comm_spawn): vmpirun checks
every program of the request (found, executable, its working directory and
its place), then starts the job's ranks as it starts its own, with the same
environment but their own ``PMI_RANK``/``PMI_SIZE``, ``PMI_SPAWNED=1`` and
a ``VMPI_JOB_ID`` of their own (the job's shared-memory key), its own PMI
key-value space (the spawn's preput pairs in it), barrier and ``kvsname``,
the same universe size and name space (``publish_name``).  They run in the
emulated VM (or host) of the rank that spawned them unless the info key
``host`` names another; messages name them "rank 1 of spawned job 1
(./child, pid ...)", ``-l`` tags their lines ``[1:r]``, ``--tag-output``
``[2,r]``.

One event loop (selectors) serves the PMI sockets, forwards the ranks'
stdout/stderr line by line, and reacts to signals and child exits.  If a rank
of any job dies from a signal, exits without MPI_Finalize, or calls
MPI_Abort, every job is torn down: SIGTERM to every rank's process group,
SIGKILL 2 s later.  vmpirun ends when the last rank of every job has; the
VMs and hosts are removed once no rank is left, and each job's
shared-memory files.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field

from . import netns
from .options import (PROG, USAGE, Options, ShowHelp, ShowVersion, UsageError, parse_args,
                      rank_limit, version)
from .outcome import (Out, abort_message, emit_output, exit_failure, rank_name, signame,
                      wait_writable)
from .placement import host_starts, place_names, vm_starts
from . import pmi
from . import runas
from . import shm
from . import spawning
from . import vms

__all__ = ["main", "parse_args", "Options", "UsageError"]

TERM_GRACE = 2.0        # seconds between SIGTERM and SIGKILL in a teardown
STUCK_GRACE = 5.0       # seconds after SIGKILL before giving up on a rank
DRAIN_GRACE = 2.0       # seconds to wait for output EOF once all ranks exited
ABORT_GRACE = 0.2       # seconds an MPI_Abort waits for a rank death it may follow from
MAX_PARTIAL = 1 << 20   # an unterminated line longer than this is flushed
READ_CHUNK = 1 << 16

def bind_places(bind: str) -> list[set[int]]:
    """Where --bind puts ranks, round-robin: each allowed CPU (core), the
    allowed CPUs of each socket (socket), or nowhere (none)."""
    allowed = sorted(os.sched_getaffinity(0))
    if bind == "core":
        return [{c} for c in allowed]
    if bind == "socket":
        by_socket: dict[int, set[int]] = {}
        for c in allowed:
            try:
                with open(f"/sys/devices/system/cpu/cpu{c}/topology/physical_package_id") as f:
                    pkg = int(f.read())
            except (OSError, ValueError):
                pkg = 0
            by_socket.setdefault(pkg, set()).add(c)
        return [by_socket[k] for k in sorted(by_socket)]
    return []


def _set_nonblocking(fd: int) -> None:
    fl = fcntl.fcntl(fd, fcntl.F_GETFL)
    fcntl.fcntl(fd, fcntl.F_SETFL, fl | os.O_NONBLOCK)


def _exit_status(pid: int) -> int | None:
    """Exit status of child ``pid`` if it has ended, without reaping it.

    The zombie keeps the pid, and so the process-group id, reserved until
    the job ends: killpg() on it can then only hit the rank's own group,
    never a process that reused the number.  Returns the exit code, -S for a
    child killed by signal S, or None while the child runs.
    """
    try:
        res = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return 255  # already reaped elsewhere; should not happen
    if res is None or res.si_pid == 0:
        return None
    if res.si_code == os.CLD_EXITED:
        return res.si_status
    return -res.si_status


# --- the jobs ----------------------------------------------------------------


@dataclass
class _Group:
    """One MPI job: the one vmpirun starts (index 0), or one a rank spawned."""

    index: int
    jobid: str              # its VMPI_JOB_ID: shared-memory files are per job
    kvsname: str
    server: pmi.PMIServer | None = None
    ranks: list = field(default_factory=list)


@dataclass
class _Rank:
    rank: int               # in its job
    group: _Group
    program: str            # as the command line or the spawn request named it
    host: int = 0
    vm: int = 0             # host * VMs per host + the VM's index in its host
    local: tuple[int, int] = (0, 1)     # rank and size among its job's ranks in its VM
    idx: int = 0            # in start order among all processes of vmpirun
    proc: subprocess.Popen | None = None
    pid: int = 0
    sock: socket.socket | None = None
    out_fd: int | None = None
    err_fd: int | None = None
    bufs: dict = field(default_factory=lambda: {1: bytearray(), 2: bytearray()})
    returncode: int | None = None
    aborted: bool = False   # its abort speaks for its exit
    discarded: bool = False  # started by a spawn that failed half-way: its exit says nothing


class Job:
    """Every process vmpirun starts: the job of its command line and the jobs
    its ranks spawn (PMI spawn), each with its own PMI service, sharing one
    name space, one universe size, the emulated hosts and VMs, the output and
    the outcome: vmpirun ends when the last process of any job has."""

    def __init__(self, opts: Options, program_path: str, user: runas.User | None = None):
        self.o = opts
        self.program_path = program_path
        self.user = user        # whom the ranks run as (None: vmpirun's own user)
        self.n = opts.nranks
        # without --hosts, the machine is the one host of every rank; without
        # --vms, each host is one "VM": the unit of the local rank and size
        self.nvms = opts.vms or 1
        self.vm_start = vm_starts(host_starts(self.n, opts.hosts or 1), self.nvms)
        # unknown (-1) unless -usize says, as under Hydra (docs/LAUNCH.md)
        self.universe = opts.usize if opts.usize is not None else -1
        self.names: dict[str, str] = {}         # publish_name, for every job
        self.base_dir = opts.wdir or os.getcwd()
        self.places: list[set[int]] = []        # of --bind, once launching
        # what a spawn's info "host" may name
        self.place_names = (place_names(opts.hosts or 1, self.nvms, bool(opts.vms))
                            if opts.hosts or opts.vms else [])
        self.nstarted = 0
        self.groups: list[_Group] = []
        self.ranks: list[_Rank] = []            # of every job
        first = self._new_group()
        self.jobid = first.jobid
        # the trust domain's secret, in every job's key-value space
        self.kvs_extra = spawning.domain_preput(opts)
        starts = self.vm_start
        self._add_ranks(first, opts.program, [g for g in range(len(starts) - 1)
                                              for _ in range(starts[g], starts[g + 1])])
        self._set_local(first)
        # each VM is a node for MPICH-derived ranks (they share memory only there)
        first.server = pmi.PMIServer(
            self.n, first.kvsname, universe_size=self.universe, names=self.names, spawn=True,
            preput=self.kvs_extra,
            node_sizes=[b - a for a, b in zip(self.vm_start, self.vm_start[1:])])
        self.net: netns.Network | None = None   # the emulated hosts, once made
        self.vms: vms.VMs | None = None         # the emulated VMs, once made
        self.stdout = Out(1)
        self.stderr = Out(2)
        self.sel = selectors.DefaultSelector()
        self.fdmap: dict[int, tuple[str, _Rank | None]] = {}
        self.shm_dir = shm.default_shm_dir()
        self.pidfile: str | None = None
        # outcome
        self.exit_code: int | None = None   # of the first failure
        self.tearing_down = False
        # (deadline, code, message) of the first MPI_Abort, not yet acted on
        self.abort: tuple[float, int, str] | None = None
        self.term_at = 0.0
        self.killed = False
        self.pending_signals: list[int] = []
        self.interrupts = 0
        self.start = time.monotonic()
        self.deadline = self.start + opts.timeout if opts.timeout else None
        self.drain_deadline: float | None = None
        self._wake_r = self._wake_w = -1
        self._old_handlers: dict[int, object] = {}
        self._old_wakeup = -1

    def _new_group(self) -> _Group:
        g = _Group(len(self.groups), secrets.token_hex(16), f"kvs_{os.getpid()}_{len(self.groups)}")
        self.groups.append(g)
        return g

    def _add_ranks(self, group: _Group, program: str, vms_of: list[int]) -> None:
        """Ranks of group running program, the next in VM vms_of[0] (see
        _Rank.vm), and so on."""
        for vm in vms_of:
            r = _Rank(len(group.ranks), group, program, host=vm // self.nvms, vm=vm)
            group.ranks.append(r)
            self.ranks.append(r)

    @staticmethod
    def _set_local(group: _Group) -> None:
        """Each rank's rank and size among its job's ranks in its VM."""
        size: dict[int, int] = {}
        for r in group.ranks:
            r.local = (size.get(r.vm, 0), 0)
            size[r.vm] = r.local[0] + 1
        for r in group.ranks:
            r.local = (r.local[0], size[r.vm])

    # -- messages --

    def say(self, text: str) -> None:
        self.stderr.write(f"{PROG}: {text}\n".encode("utf-8", errors="replace"))

    def label(self, r: _Rank) -> str:
        """A rank as short messages name it: "rank 3", or "rank 1 of spawned
        job 1 (./child)" for a rank of a job a rank spawned."""
        return rank_name(r.rank, r.group.index, r.program)

    def as_user(self) -> str:
        """" as user NAME" when the ranks run as another user, for messages."""
        return f" as user {self.user.name}" if self.user is not None else ""

    def who(self, r: _Rank) -> str:
        """A rank as messages name it: its pid (in the machine's PID namespace),
        its host with --hosts or --vms, and its VM with --vms."""
        where = ""
        if self.o.hosts or self.o.vms:
            where = f", host {r.host}"
        if self.o.vms:
            where += f", VM {r.vm % self.nvms}"
        return rank_name(r.rank, r.group.index, r.program, f"pid {r.pid}{where}")

    # -- signals --

    def _on_signal(self, signum, frame) -> None:
        self.pending_signals.append(signum)

    def install_signals(self) -> None:
        self._wake_r, self._wake_w = os.pipe()
        _set_nonblocking(self._wake_r)
        _set_nonblocking(self._wake_w)
        os.set_inheritable(self._wake_r, False)
        os.set_inheritable(self._wake_w, False)
        self._old_wakeup = signal.set_wakeup_fd(self._wake_w, warn_on_full_buffer=False)
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
            self._old_handlers[s] = signal.signal(s, self._on_signal)
        self.sel.register(self._wake_r, selectors.EVENT_READ)
        self.fdmap[self._wake_r] = ("wake", None)

    def restore_signals(self) -> None:
        for s, h in self._old_handlers.items():
            try:
                signal.signal(s, h)
            except (TypeError, ValueError):
                pass
        self._old_handlers.clear()
        if self._wake_w >= 0:
            signal.set_wakeup_fd(self._old_wakeup)
            for fd in (self._wake_r, self._wake_w):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._wake_r = self._wake_w = -1

    # -- launching --

    def _env_path(self) -> str:
        """The PATH the ranks get."""
        return dict(self.o.env).get("PATH", os.environ.get("PATH", os.defpath))

    def _child_env(self, r: _Rank, pmi_fd: int) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not (k.startswith("PMI_") or k.startswith("PMIX_")
                       or k in ("MPI_LOCALRANKID", "MPI_LOCALNRANKS"))}
        if self.user is not None:
            env.update(runas.env_of(self.user))
        for k, v in self.o.env:
            env[k] = v
        local_rank, local_size = map(str, r.local)
        env.update({
            "PMI_RANK": str(r.rank),
            "PMI_SIZE": str(len(r.group.ranks)),
            "PMI_FD": str(pmi_fd),
            "VMPI_JOB_ID": r.group.jobid,
            "VMPI_PM_REPORTS_ABORT": "1",
            "VMPI_LOCAL_RANK": local_rank,
            "VMPI_LOCAL_SIZE": local_size,
            "MPI_LOCALRANKID": local_rank,
            "MPI_LOCALNRANKS": local_size,
        })
        # A job and the jobs it spawns are one trust domain: their areas may
        # share a host region (shm/region.h, Sharing).
        env.setdefault("VMPI_DOMAIN", self.jobid)
        if r.group.index:
            spawning.spawned_env(env, region=bool(self.o.vms))
        if self.o.hosts:
            env["VMPI_HOST_INDEX"] = str(r.host)
            env["VMPI_HOST_ADDR"] = netns.host_addr(r.host)
            # the user's own choice of interface wins
            env.setdefault("FI_TCP_IFACE", netns.IFACE)
            env.setdefault("UCX_NET_DEVICES", netns.IFACE)
        if self.o.vms:
            env["VMPI_HOST_INDEX"] = str(r.host)
            env["VMPI_VM_INDEX"] = str(r.vm % self.nvms)
            env["VMPI_IVSHMEM_PATH"] = vms.IVSHMEM_PATH
        return env

    def _preexec(self, cpus: set[int] | None, host: int | None, vm: int | None = None,
                 wdir: str | None = None, user: runas.User | None = None, rr: bool = False):
        """The preexec function of a child: of a rank, or of a VM's holder.

        A child in VM ``vm`` is born in that VM's PID namespace (the fork
        happens in :meth:`vmpi.vms.VMs.children_in`), where getppid()
        reports 0 for a parent outside the namespace; it is a rank, which
        loses the capabilities that would let it leave the VM
        (:func:`vmpi.vms.confine`).  A rank given ``user`` then becomes that
        user (:func:`vmpi.runas.become`), last, once nothing needs root.
        ``wdir`` (default ``--wdir``) is where it starts. ``rr``: it runs
        round-robin (``--sched rr``), set before the VM takes the right to.
        """
        parent = os.getpid()
        expected_ppid = parent if vm is None else 0
        net, vmset, wdir = self.net, self.vms, wdir or self.o.wdir
        if user is not None:
            # entered as the user, so one it may not enter fails here
            wdir = wdir or self.base_dir
        prctl = None
        try:
            import ctypes
            prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            pass

        def die_with_launcher() -> None:
            # even if it is SIGKILLed (best effort)
            if prctl is not None:
                prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
                if os.getppid() != expected_ppid:
                    os._exit(1)

        def fn() -> None:
            die_with_launcher()
            if host is not None:
                # setns(2) of the network namespace alone, unlike `ip netns
                # exec`, which also gives each process a mount namespace of
                # its own: the ranks of one host (or VM) must look like one
                # machine
                net.enter(host)
            if rr:
                os.sched_setscheduler(0, os.SCHED_RR, os.sched_param(1))
            if vm is not None:
                vmset.enter(vm)
                vms.confine()
            if user is not None:
                runas.become(user)
                die_with_launcher()     # a new uid clears the parent-death signal
            if wdir is not None:
                os.chdir(wdir)
            if cpus:
                try:
                    os.sched_setaffinity(0, cpus)
                except OSError:
                    pass  # the CPU went away; run unbound rather than not at all
        return fn

    def _start(self, r: _Rank, argv: list[str], path: str, wdir: str | None = None) -> None:
        """Start rank r: argv with the program at path, in wdir (default --wdir)."""
        parent_sock, child_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        child_fd = child_sock.fileno()
        r.idx = self.nstarted
        cpu = self.places[r.idx % len(self.places)] if self.places else None
        if self.o.report_bindings:
            self.say(f"{self.label(r)} bound to "
                     + (f"CPU(s) {','.join(map(str, sorted(cpu)))}" if cpu else "no CPU"))
        host = r.host if self.net else None
        vm = r.vm if self.vms else None
        try:
            with self.vms.children_in(vm) if vm is not None else contextlib.nullcontext():
                r.proc = subprocess.Popen(
                    argv,
                    executable=path,
                    env=self._child_env(r, child_fd),
                    stdin=None if r.idx == 0 else subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    pass_fds=(child_fd,),
                    start_new_session=True,
                    preexec_fn=self._preexec(cpu, host, vm, wdir, self.user,
                                             self.o.sched == "rr"),
                )
        except BaseException:
            parent_sock.close()
            child_sock.close()
            raise
        self.nstarted += 1
        child_sock.close()
        r.pid = r.proc.pid
        r.sock = parent_sock
        parent_sock.setblocking(False)
        r.out_fd = r.proc.stdout.fileno()
        r.err_fd = r.proc.stderr.fileno()
        for fd, kind in ((parent_sock.fileno(), "pmi"), (r.out_fd, "out"), (r.err_fd, "err")):
            if kind != "pmi":
                _set_nonblocking(fd)
            self.sel.register(fd, selectors.EVENT_READ)
            self.fdmap[fd] = (kind, r)

    def launch(self) -> None:
        self.places = bind_places(self.o.bind)
        argv = [self.program_path] + self.o.args
        for r in self.groups[0].ranks:
            self._start(r, argv, self.program_path)

    # -- spawn --

    def spawn(self, parent: _Rank, ev: pmi.Spawn) -> str | None:
        """Start the job a rank asked for (PMI spawn); None, or why not, and
        then nothing runs of it."""
        if self.tearing_down:
            return "the job is ending"
        total = sum(b.nprocs for b in ev.blocks)
        live = sum(1 for r in self.ranks if r.returncode is None)
        limit, why = rank_limit()
        if live + total > limit:
            return (f"cannot start {total} more processes beside the {live} running: this "
                    f"machine can run at most {limit} ({why})")
        plans, err = spawning.plan(ev, base_dir=self.base_dir, env_path=self._env_path(),
                                   home=parent.vm, names=self.place_names, user=self.user)
        if err:
            return err
        g = self._new_group()
        for c in plans:
            self._add_ranks(g, c.block.execname, c.places)
        self._set_local(g)
        g.server = spawning.server(plans, g.kvsname, universe=self.universe, names=self.names,
                                   preput=dict(ev.preput, **self.kvs_extra))
        shm.write_pidfile(self.shm_dir, g.jobid)
        started = []
        try:
            todo = iter(g.ranks)
            for c in plans:
                for _ in c.places:
                    r = next(todo)
                    self._start(r, [c.path] + c.block.args, c.path, c.wdir)
                    started.append(r)
        except (OSError, subprocess.SubprocessError) as exc:
            # end what started: its job cannot be whole
            for r in started:
                r.discarded = True
                self._signal_rank(r, signal.SIGKILL)
            self.ranks = [r for r in self.ranks if r.group is not g or r.proc is not None]
            failed = g.ranks[len(started)]
            return (f"cannot start {self.label(failed)}{self.as_user()}: "
                    f"{getattr(exc, 'strerror', None) or exc}")
        return None

    # -- rank I/O --

    def _unregister(self, fd: int) -> None:
        if fd in self.fdmap:
            del self.fdmap[fd]
            try:
                self.sel.unregister(fd)
            except (KeyError, ValueError):
                pass

    def _close_pmi(self, r: _Rank) -> None:
        sock, r.sock = r.sock, None
        if sock is not None:
            self._unregister(sock.fileno())
            sock.close()
            # an unterminated last command (e.g. an abort) still counts;
            # replies to it have nowhere to go and are dropped
            self.handle_pmi_events(r.group, r.group.server.eof(r.rank))

    def read_pmi(self, r: _Rank, drain: bool = False) -> None:
        """Read what the rank's PMI socket holds (all of it if ``drain``)."""
        while r.sock is not None:
            try:
                data = r.sock.recv(READ_CHUNK)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                data = b""
            if not data:
                self._close_pmi(r)
                return
            self.handle_pmi_events(r.group, r.group.server.feed(r.rank, data))
            if not drain:
                return

    def _send(self, r: _Rank, data: bytes) -> None:
        if r.sock is None:
            return
        view = memoryview(data)
        deadline = time.monotonic() + 5.0
        while view:
            try:
                k = r.sock.send(view)
                view = view[k:]
            except (BlockingIOError, InterruptedError):
                if time.monotonic() > deadline:
                    self.say(f"{self.who(r)} does not read its PMI socket; closing it")
                    self._close_pmi(r)
                    return
                wait_writable(r.sock, 0.1)
            except OSError:
                return  # the rank is gone; its exit is handled elsewhere

    def handle_pmi_events(self, group: _Group, events: list) -> None:
        for ev in events:
            if isinstance(ev, pmi.Reply):
                self._send(group.ranks[ev.rank], ev.data)
            elif isinstance(ev, pmi.Spawn):
                r = group.ranks[ev.rank]
                self._send(r, group.server.spawn_reply(ev.rank, self.spawn(r, ev)).data)
            elif isinstance(ev, pmi.Abort):
                r = group.ranks[ev.rank]
                code = ev.exitcode & 0xFF or 1
                msg = abort_message(self.who(r), ev.exitcode, ev.message)
                r.aborted = True
                # A rank that lost a peer aborts, often before the peer's own
                # death reaches us: the death, if it comes soon, is the cause.
                if self.abort is None:
                    self.abort = (time.monotonic() + ABORT_GRACE, code, msg)
            elif isinstance(ev, pmi.ProtocolError):
                self.say(f"{self.who(group.ranks[ev.rank])}: PMI protocol error: {ev.text}")

    def _emit(self, r: _Rank, stream: int, chunk: bytes) -> None:
        """Write complete lines (or a final fragment) of one rank's stream."""
        emit_output(self.stdout if stream == 1 else self.stderr, r.rank, stream, chunk,
                    self.o.tag, r.group.index)

    def read_output(self, r: _Rank, stream: int, drain: bool = False) -> None:
        fd = r.out_fd if stream == 1 else r.err_fd
        while fd is not None:
            try:
                data = os.read(fd, READ_CHUNK)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                data = b""
            buf = r.bufs[stream]
            if not data:
                # EOF: flush a final partial line
                self._emit(r, stream, bytes(buf))
                buf.clear()
                self._unregister(fd)
                if stream == 1:
                    r.proc.stdout.close()
                    r.out_fd = None
                else:
                    r.proc.stderr.close()
                    r.err_fd = None
                return
            buf += data
            nl = buf.rfind(b"\n")
            if nl >= 0:
                self._emit(r, stream, bytes(buf[:nl + 1]))
                del buf[:nl + 1]
            elif len(buf) > MAX_PARTIAL:
                self._emit(r, stream, bytes(buf) + (b"\n" if self.o.tag else b""))
                buf.clear()
            if not drain:
                return

    # -- failures and teardown --

    def fail(self, code: int, message: str, *, teardown: bool = True) -> None:
        """Record a failure; the first one decides the exit code."""
        if self.exit_code is None:
            self.exit_code = code
        if teardown:
            if not self.tearing_down:
                # a rank's own fatal message may say so already
                end = "" if message.endswith("aborting job") else "; aborting job"
                self.say(message + end)
                self.teardown()
        elif not self.tearing_down:
            self.say(message)

    def _signal_rank(self, r: _Rank, sig: int) -> None:
        for kill in (lambda: os.killpg(r.pid, sig), lambda: os.kill(r.pid, sig)):
            try:
                kill()
            except (ProcessLookupError, PermissionError):
                pass

    def teardown(self) -> None:
        if self.tearing_down:
            return
        self.tearing_down = True
        self.term_at = time.monotonic()
        for r in self.ranks:
            if r.pid and r.returncode is None:
                self._signal_rank(r, signal.SIGTERM)

    def kill_all(self) -> None:
        """SIGKILL every rank's process group (ranks, and what is left of them)."""
        self.killed = True
        for r in self.ranks:
            if r.pid:
                self._signal_rank(r, signal.SIGKILL)

    def on_exit(self, r: _Rank, rc: int) -> None:
        r.returncode = rc
        # Whatever the rank said before exiting (an abort, finalize) counts
        # before its exit, and its last output comes before our message.
        self.read_pmi(r, drain=True)
        self.read_output(r, 1, drain=True)
        self.read_output(r, 2, drain=True)
        if self.tearing_down:
            return  # we are killing it, or the job already failed
        if r.aborted or r.discarded:
            return  # its abort (the first of the job's, or a later one) speaks for it
        server = r.group.server
        bad = exit_failure(rc, server.initialized(r.rank), server.finalized(r.rank))
        if bad is not None:
            code, what, teardown = bad
            self.fail(code, f"{self.who(r)} {what}", teardown=teardown)

    def on_launcher_signal(self, sig: int) -> None:
        if sig == signal.SIGCHLD:
            return
        self.interrupts += 1
        if not self.tearing_down:
            live = sum(1 for r in self.ranks if r.pid and r.returncode is None)
            if self.exit_code is None:
                self.exit_code = 128 + sig
            self.say(f"caught {signame(sig)}; terminating {live} rank(s)")
            self.teardown()
        elif sig == signal.SIGINT and self.interrupts > 1 and not self.killed:
            self.say("caught SIGINT again; killing all ranks")
            self.kill_all()

    # -- main loop --

    def run(self) -> int:
        while True:
            now = time.monotonic()
            waits = [0.5]
            if self.deadline is not None and not self.tearing_down:
                waits.append(self.deadline - now)
            if self.tearing_down and not self.killed:
                waits.append(self.term_at + TERM_GRACE - now)
            if self.drain_deadline is not None:
                waits.append(self.drain_deadline - now)
            if self.abort is not None and not self.tearing_down:
                waits.append(self.abort[0] - now)
            timeout = max(0.0, min(waits))
            for key, _ in self.sel.select(timeout):
                fd = key.fd
                if fd not in self.fdmap:
                    continue
                kind, r = self.fdmap[fd]
                if kind == "wake":
                    try:
                        while os.read(fd, 512):
                            pass
                    except (BlockingIOError, InterruptedError):
                        pass
                elif kind == "pmi":
                    self.read_pmi(r)
                elif kind == "out":
                    self.read_output(r, 1)
                else:
                    self.read_output(r, 2)

            while self.pending_signals:
                self.on_launcher_signal(self.pending_signals.pop(0))

            # (a spawn, read from a rank that exits, adds ranks)
            for r in list(self.ranks):
                if r.proc is not None and r.returncode is None:
                    rc = _exit_status(r.pid)
                    if rc is not None:
                        self.on_exit(r, rc)

            now = time.monotonic()
            if self.abort is not None and not self.tearing_down:
                if now >= self.abort[0] or all(r.returncode is not None for r in self.ranks):
                    self.fail(self.abort[1], self.abort[2])
            if self.deadline is not None and now >= self.deadline and not self.tearing_down:
                if self.exit_code is None:
                    self.exit_code = 124
                t = self.o.timeout
                self.say(f"job exceeded the timeout of {t:g} s; aborting job")
                self.teardown()
            if self.tearing_down and not self.killed and now >= self.term_at + TERM_GRACE:
                self.kill_all()
            if (self.tearing_down and now >= self.term_at + TERM_GRACE + STUCK_GRACE
                    and any(r.returncode is None for r in self.ranks)):
                stuck = [self.label(r) for r in self.ranks if r.returncode is None]
                self.say(f"{', '.join(stuck)} survived SIGKILL (stuck in the kernel?); giving up")
                break

            if all(r.returncode is not None for r in self.ranks):
                if self.drain_deadline is None:
                    # no rank is left: kill what remains in their process
                    # groups (orphaned grandchildren), then drain the pipes
                    self.kill_all()
                    self.drain_deadline = now + DRAIN_GRACE
                pipes_open = any(r.out_fd is not None or r.err_fd is not None for r in self.ranks)
                if not pipes_open or now >= self.drain_deadline:
                    break
        return self.exit_code if self.exit_code is not None else 0

    def reap_all(self) -> None:
        """Kill what is left of every rank's process group, then reap the ranks.

        Ranks are only reaped here, at the very end: until then their
        zombies keep the process-group ids reserved for killpg().
        """
        if any(r.pid for r in self.ranks):
            self.kill_all()
        for r in self.ranks:
            if r.proc is not None:
                try:
                    rc = r.proc.wait(timeout=5 if r.returncode is not None else 1)
                except subprocess.TimeoutExpired:
                    continue
                if r.returncode is None:
                    r.returncode = rc

    def close(self) -> None:
        for r in self.ranks:
            for stream in (1, 2):
                if r.bufs[stream]:
                    self._emit(r, stream, bytes(r.bufs[stream]))
                    r.bufs[stream].clear()
            for fd in (r.out_fd, r.err_fd):
                if fd is not None:
                    self._unregister(fd)
            if r.proc is not None:
                for f in (r.proc.stdout, r.proc.stderr):
                    if f is not None:
                        f.close()
                r.out_fd = r.err_fd = None
            if r.sock is not None:
                self._unregister(r.sock.fileno())
                r.sock.close()
                r.sock = None
        self.sel.close()

    def remove_vms(self) -> None:
        """End the emulated VMs; run once no rank is left in them."""
        vmset, self.vms = self.vms, None
        if vmset is not None:
            left = vmset.destroy()
            if left:
                self.say(f"VM(s) {', '.join(left)} would not end; "
                         f"'{PROG} --cleanup' stops them later")

    def remove_hosts(self) -> None:
        """Delete the emulated hosts; run once no rank is left in them."""
        net, self.net = self.net, None
        if net is not None:
            left = net.destroy()
            if left:
                self.say(f"cannot remove network namespace(s) {', '.join(left)}; "
                         f"'{PROG} --cleanup' removes them later")


def _resolve_program(program: str) -> str | None:
    if "/" in program:
        return program if os.path.exists(program) else None
    return shutil.which(program)


def run(opts: Options) -> int:
    path = _resolve_program(opts.program)
    if path is None:
        sys.stderr.write(f"{PROG}: {opts.program}: program not found\n")
        return 127
    if os.path.isdir(path) or not os.access(path, os.X_OK):
        sys.stderr.write(f"{PROG}: {opts.program}: not an executable file\n")
        return 126
    if opts.vm_guests:
        from . import guests   # only this mode needs QEMU and the guest image
        return guests.run(opts, os.path.abspath(path))
    ip = unshare = None
    try:
        if opts.hosts:
            ip = netns.check_usable()
        if opts.vms:
            unshare = vms.check_usable()
    except (netns.NetnsError, vms.VMError) as exc:
        sys.stderr.write(f"{PROG}: {exc}\n")
        return 1
    user = runas.ranks_user(opts.user)
    if user is not None:
        where = opts.wdir or os.getcwd()
        why = runas.cannot_enter(user, where)
        if why:
            sys.stderr.write(f"{PROG}: the ranks run as user {user.name}, who cannot enter the "
                             f"working directory {where}: {why}\n")
            return 126
    sys.stdout.flush()
    sys.stderr.flush()
    job = Job(opts, path, user)
    job.install_signals()
    code = 1
    try:
        job.pidfile = shm.write_pidfile(job.shm_dir, job.jobid)
        if opts.hosts:
            try:
                job.net = netns.Network.create(job.jobid, opts.hosts, ip)
            except netns.NetnsError as exc:
                job.say(str(exc))
                return 1
        if opts.vms:
            try:
                job.vms = vms.VMs.create(
                    job.jobid, opts.hosts or 1, opts.vms,
                    opts.ivshmem_size or vms.region_size(-(-job.n // (opts.hosts or 1))),
                    job.shm_dir, unshare,
                    lambda host: job._preexec(None, host if job.net else None),
                    [netns.host_addr(h) for h in range(opts.hosts)] if job.net else None,
                    opts.vm_disk, user)
            except vms.VMError as exc:
                job.say(str(exc))
                return 1
        try:
            job.launch()
        except (OSError, subprocess.SubprocessError) as exc:
            bad = sum(1 for r in job.ranks if r.proc is None)
            why = getattr(exc, "strerror", None) or exc
            job.say(f"cannot start rank {job.n - bad} ({opts.program}){job.as_user()}: {why}")
            job.exit_code = 127 if isinstance(exc, FileNotFoundError) else 126
            job.teardown()
            job.ranks = [r for r in job.ranks if r.proc is not None]
        if job.ranks:
            code = job.run()
        else:
            code = job.exit_code or 1
    finally:
        # never leave ranks behind, whatever happened above
        try:
            job.reap_all()
            job.close()
        finally:
            # namespaces go while our signal handlers still hold, so a
            # second Ctrl-C cannot interrupt their removal; the VMs first,
            # whose holders are in the hosts' network namespaces
            try:
                try:
                    job.remove_vms()
                finally:
                    job.remove_hosts()
            finally:
                job.restore_signals()
                # the --vms region files too
                for g in job.groups:
                    shm.remove_job_files(job.shm_dir, g.jobid)
    return code


def cleanup(opts: Options) -> int:
    log = (lambda s: sys.stdout.write(f"{PROG}: {s}\n")) if opts.verbose else None
    stopped, failed_vms = vms.cleanup_stale(log=log)
    for name in failed_vms:
        sys.stderr.write(f"{PROG}: cannot stop VM {name}\n")
    if opts.verbose:
        for name in stopped:
            sys.stdout.write(f"{PROG}: stopped VM {name}\n")
    sys.stdout.write(f"{PROG}: stopped {len(stopped)} stale VM(s)\n")
    shm_dir = shm.default_shm_dir()
    removed, failed = shm.cleanup_stale(shm_dir, log=log)
    for path in failed:
        sys.stderr.write(f"{PROG}: cannot remove {path}\n")
    if opts.verbose:
        for path in removed:
            sys.stdout.write(f"{PROG}: removed {path}\n")
    sys.stdout.write(f"{PROG}: removed {len(removed)} stale file(s) from {shm_dir}\n")
    removed_ns, failed_ns = netns.cleanup_stale(log=log)
    for name in failed_ns:
        sys.stderr.write(f"{PROG}: cannot remove network namespace {name}\n")
    if opts.verbose:
        for name in removed_ns:
            sys.stdout.write(f"{PROG}: removed network namespace {name}\n")
    sys.stdout.write(f"{PROG}: removed {len(removed_ns)} stale network namespace(s)\n")
    return 1 if failed or failed_ns or failed_vms else 0


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    try:
        opts = parse_args(argv)
    except ShowHelp:
        sys.stdout.write(USAGE)
        return 0
    except ShowVersion:
        sys.stdout.write(f"{PROG} (vmpi) {version()}\n")
        return 0
    except UsageError as exc:
        sys.stderr.write(f"{PROG}: {exc}\n{USAGE}")
        return 2
    if opts.cleanup:
        return cleanup(opts)
    return run(opts)


if __name__ == "__main__":
    sys.exit(main())
