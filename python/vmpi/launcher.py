"""vmpirun: start an MPI job on this machine and serve it PMI-1.

Usage::

    vmpirun -n N [--hosts H] [--vms V [--ivshmem-size SIZE]] [--bind core|none]
            [--tag-output] [-x NAME[=VALUE]]... [--env NAME[=VALUE]]...
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

One event loop (selectors) serves the PMI sockets, forwards the ranks'
stdout/stderr line by line, and reacts to signals and child exits.  If a rank
dies from a signal, exits without MPI_Finalize, or calls MPI_Abort, the job
is torn down: SIGTERM to every rank's process group, SIGKILL 2 s later.
The VMs and hosts are removed once no rank is left.
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
                      version)
from .outcome import Out, abort_message, emit_output, exit_failure, signame, wait_writable
from .placement import host_starts, vm_starts
from . import pmi
from . import shm
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


# --- the job -----------------------------------------------------------------


@dataclass
class _Rank:
    rank: int
    proc: subprocess.Popen | None = None
    pid: int = 0
    sock: socket.socket | None = None
    out_fd: int | None = None
    err_fd: int | None = None
    bufs: dict = field(default_factory=lambda: {1: bytearray(), 2: bytearray()})
    returncode: int | None = None


class Job:
    def __init__(self, opts: Options, program_path: str):
        self.o = opts
        self.program_path = program_path
        self.n = opts.nranks
        self.jobid = secrets.token_hex(16)
        self.kvsname = f"kvs_{os.getpid()}_0"
        self.ranks = [_Rank(r) for r in range(self.n)]
        # without --hosts, the machine is the one host of every rank; without
        # --vms, each host is one "VM": the unit of the local rank and size
        self.nvms = opts.vms or 1
        self.host_start = host_starts(self.n, opts.hosts or 1)
        self.vm_start = vm_starts(self.host_start, self.nvms)
        self.vm_of = [g for g in range(len(self.vm_start) - 1)
                      for _ in range(self.vm_start[g], self.vm_start[g + 1])]
        self.host_of = [g // self.nvms for g in self.vm_of]
        # each VM is a node for MPICH-derived ranks (they share memory only there)
        self.server = pmi.PMIServer(self.n, self.kvsname, node_sizes=[
            b - a for a, b in zip(self.vm_start, self.vm_start[1:])])
        self.net: netns.Network | None = None   # the emulated hosts, once made
        self.vms: vms.VMs | None = None         # the emulated VMs, once made
        self.stdout = Out(1)
        self.stderr = Out(2)
        self.sel = selectors.DefaultSelector()
        self.fdmap: dict[int, tuple[str, int]] = {}
        self.shm_dir = shm.default_shm_dir()
        self.pidfile: str | None = None
        # outcome
        self.exit_code: int | None = None   # of the first failure
        self.tearing_down = False
        # (deadline, rank, code, message) of the first MPI_Abort, not yet acted on
        self.abort: tuple[float, int, int, str] | None = None
        self.aborted: set[int] = set()  # ranks whose abort speaks for their exit
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

    # -- messages --

    def say(self, text: str) -> None:
        self.stderr.write(f"{PROG}: {text}\n".encode("utf-8", errors="replace"))

    def who(self, rank: int) -> str:
        """A rank as messages name it: its pid (in the machine's PID namespace),
        its host with --hosts or --vms, and its VM with --vms."""
        where = ""
        if self.o.hosts or self.o.vms:
            where = f", host {self.host_of[rank]}"
        if self.o.vms:
            where += f", VM {self.vm_of[rank] % self.nvms}"
        return f"rank {rank} (pid {self.ranks[rank].pid}{where})"

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
        self.fdmap[self._wake_r] = ("wake", -1)

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

    def _child_env(self, rank: int, pmi_fd: int) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not (k.startswith("PMI_") or k.startswith("PMIX_")
                       or k in ("MPI_LOCALRANKID", "MPI_LOCALNRANKS"))}
        for k, v in self.o.env:
            env[k] = v
        host, vm = self.host_of[rank], self.vm_of[rank]
        local_rank = str(rank - self.vm_start[vm])
        local_size = str(self.vm_start[vm + 1] - self.vm_start[vm])
        env.update({
            "PMI_RANK": str(rank),
            "PMI_SIZE": str(self.n),
            "PMI_FD": str(pmi_fd),
            "VMPI_JOB_ID": self.jobid,
            "VMPI_PM_REPORTS_ABORT": "1",
            "VMPI_LOCAL_RANK": local_rank,
            "VMPI_LOCAL_SIZE": local_size,
            "MPI_LOCALRANKID": local_rank,
            "MPI_LOCALNRANKS": local_size,
        })
        if self.o.hosts:
            env["VMPI_HOST_INDEX"] = str(host)
            env["VMPI_HOST_ADDR"] = netns.host_addr(host)
            # the user's own choice of interface wins
            env.setdefault("FI_TCP_IFACE", netns.IFACE)
            env.setdefault("UCX_NET_DEVICES", netns.IFACE)
        if self.o.vms:
            env["VMPI_HOST_INDEX"] = str(host)
            env["VMPI_VM_INDEX"] = str(vm % self.nvms)
            env["VMPI_IVSHMEM_PATH"] = vms.IVSHMEM_PATH
        return env

    def _preexec(self, cpus: set[int] | None, host: int | None, vm: int | None = None):
        """The preexec function of a child: of a rank, or of a VM's holder.

        A child in VM ``vm`` is born in that VM's PID namespace (the fork
        happens in :meth:`vmpi.vms.VMs.children_in`), where getppid()
        reports 0 for a parent outside the namespace; it is a rank, which
        loses the capabilities that would let it leave the VM
        (:func:`vmpi.vms.confine`).
        """
        parent = os.getpid()
        expected_ppid = parent if vm is None else 0
        net, vmset, wdir = self.net, self.vms, self.o.wdir
        prctl = None
        try:
            import ctypes
            prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            pass

        def fn() -> None:
            # die with the launcher even if it is SIGKILLed (best effort)
            if prctl is not None:
                prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
                if os.getppid() != expected_ppid:
                    os._exit(1)
            if host is not None:
                # setns(2) of the network namespace alone, unlike `ip netns
                # exec`, which also gives each process a mount namespace of
                # its own: the ranks of one host (or VM) must look like one
                # machine
                net.enter(host)
            if vm is not None:
                vmset.enter(vm)
                vms.confine()
            if wdir is not None:
                os.chdir(wdir)
            if cpus:
                try:
                    os.sched_setaffinity(0, cpus)
                except OSError:
                    pass  # the CPU went away; run unbound rather than not at all
        return fn

    def launch(self) -> None:
        places = bind_places(self.o.bind)
        argv = [self.program_path] + self.o.args
        for r in self.ranks:
            parent_sock, child_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            child_fd = child_sock.fileno()
            cpu = places[r.rank % len(places)] if places else None
            if self.o.report_bindings:
                self.say(f"rank {r.rank} bound to "
                         + (f"CPU(s) {','.join(map(str, sorted(cpu)))}" if cpu else "no CPU"))
            host = self.host_of[r.rank] if self.net else None
            vm = self.vm_of[r.rank] if self.vms else None
            try:
                with self.vms.children_in(vm) if vm is not None else contextlib.nullcontext():
                    r.proc = subprocess.Popen(
                        argv,
                        executable=self.program_path,
                        env=self._child_env(r.rank, child_fd),
                        stdin=None if r.rank == 0 else subprocess.DEVNULL,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        pass_fds=(child_fd,),
                        start_new_session=True,
                        preexec_fn=self._preexec(cpu, host, vm),
                    )
            except BaseException:
                parent_sock.close()
                child_sock.close()
                raise
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
                self.fdmap[fd] = (kind, r.rank)

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
            self.handle_pmi_events(self.server.eof(r.rank))

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
            self.handle_pmi_events(self.server.feed(r.rank, data))
            if not drain:
                return

    def _send(self, rank: int, data: bytes) -> None:
        r = self.ranks[rank]
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
                    self.say(f"{self.who(rank)} does not read its PMI socket; closing it")
                    self._close_pmi(r)
                    return
                wait_writable(r.sock, 0.1)
            except OSError:
                return  # the rank is gone; its exit is handled elsewhere

    def handle_pmi_events(self, events: list) -> None:
        for ev in events:
            if isinstance(ev, pmi.Reply):
                self._send(ev.rank, ev.data)
            elif isinstance(ev, pmi.Abort):
                code = ev.exitcode & 0xFF or 1
                msg = abort_message(self.who(ev.rank), ev.exitcode, ev.message)
                self.aborted.add(ev.rank)
                # A rank that lost a peer aborts, often before the peer's own
                # death reaches us: the death, if it comes soon, is the cause.
                if self.abort is None:
                    self.abort = (time.monotonic() + ABORT_GRACE, ev.rank, code, msg)
            elif isinstance(ev, pmi.ProtocolError):
                self.say(f"{self.who(ev.rank)}: PMI protocol error: {ev.text}")

    def _emit(self, r: _Rank, stream: int, chunk: bytes) -> None:
        """Write complete lines (or a final fragment) of one rank's stream."""
        emit_output(self.stdout if stream == 1 else self.stderr, r.rank, stream, chunk,
                    self.o.tag)

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
        if r.rank in self.aborted:
            return  # its abort (the first of the job's, or a later one) speaks for it
        bad = exit_failure(rc, self.server.initialized(r.rank), self.server.finalized(r.rank))
        if bad is not None:
            code, what, teardown = bad
            self.fail(code, f"{self.who(r.rank)} {what}", teardown=teardown)

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
                kind, rank = self.fdmap[fd]
                if kind == "wake":
                    try:
                        while os.read(fd, 512):
                            pass
                    except (BlockingIOError, InterruptedError):
                        pass
                elif kind == "pmi":
                    self.read_pmi(self.ranks[rank])
                elif kind == "out":
                    self.read_output(self.ranks[rank], 1)
                else:
                    self.read_output(self.ranks[rank], 2)

            while self.pending_signals:
                self.on_launcher_signal(self.pending_signals.pop(0))

            for r in self.ranks:
                if r.proc is not None and r.returncode is None:
                    rc = _exit_status(r.pid)
                    if rc is not None:
                        self.on_exit(r, rc)

            now = time.monotonic()
            if self.abort is not None and not self.tearing_down:
                if now >= self.abort[0] or all(r.returncode is not None for r in self.ranks):
                    self.fail(self.abort[2], self.abort[3])
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
                stuck = [str(r.rank) for r in self.ranks if r.returncode is None]
                self.say(f"rank(s) {', '.join(stuck)} survived SIGKILL (stuck in the kernel?); giving up")
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
    sys.stdout.flush()
    sys.stderr.flush()
    job = Job(opts, path)
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
                    opts.ivshmem_size or vms.DEFAULT_IVSHMEM_SIZE, job.shm_dir, unshare,
                    lambda host: job._preexec(None, host if job.net else None))
            except vms.VMError as exc:
                job.say(str(exc))
                return 1
        try:
            job.launch()
        except (OSError, subprocess.SubprocessError) as exc:
            bad = sum(1 for r in job.ranks if r.proc is None)
            why = getattr(exc, "strerror", None) or exc
            job.say(f"cannot start rank {job.n - bad} ({opts.program}): {why}")
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
                shm.remove_job_files(job.shm_dir, job.jobid)
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
