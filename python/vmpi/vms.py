"""Emulated VMs for ``vmpirun --vms V``: namespaces and one ivshmem region per host.

Each emulated host (one network namespace with ``--hosts``, the machine's
own network namespace without it) runs V VMs.  A VM is a set of ranks that
share their own mount, IPC, UTS and PID namespaces, and nothing else with the
other VMs of their host but that host's network namespace and its region:

* ``/dev/shm`` is a fresh tmpfs of the VM (the machine's is hidden), so the
  library's ``shm_open`` segments are per VM;
* ``/proc`` is mounted for the VM's PID namespace: a rank sees the pids of
  its own VM only (``getpid()`` inside the VM differs from the machine's pid);
* the hostname is ``h<i>-vm<j>`` (host i, VM j of that host), and every VM's
  ``/etc/hosts`` (the machine's, bind-mounted over by a copy with lines of
  its own) resolves the job's VM names: to their host's address with
  ``--hosts``, else to 127.0.0.1 (all VMs share the machine's network), so
  a program can reach another VM by its name, as MPI_Comm_join's callers do;
* :data:`IVSHMEM_PATH` (``/run/vmpi/ivshmem``, on a small tmpfs of the VM) is
  a bind mount of the host's region file, as QEMU exposes one
  memory-backend-file to several guests as an ivshmem device.  The region is
  ``vmpi-<jobid>-ivshmem-h<i>`` in the launcher's shared-memory directory
  (:func:`vmpi.shm.default_shm_dir`), a sparse file of ``--ivshmem-size``
  bytes, so the job's file cleanup removes it like any other job file; it
  has mode 0600 and belongs to the user the ranks run as (:mod:`vmpi.runas`),
  so the ranks of other users cannot open it even where they see it;
* with ``--vm-disk DIR``, DIR is a fresh tmpfs of the VM: a local disk that
  the VM's ranks share and no other VM sees, as a cloud VM's.

The namespaces live as long as a *holder*: per VM, util-linux ``unshare
--pid --fork --kill-child --mount --ipc --uts --mount-proc --propagation
private`` (started by the launcher in its host's network namespace, with
PR_SET_PDEATHSIG) whose forked child, PID 1 of the VM, is
:func:`holder_main`: it makes the mounts and sets the hostname, says
``ready``, then reaps orphans until its stdin, a pipe from the launcher,
reaches EOF.  Its mounts are private to the VM's mount namespace, so nothing
appears among the machine's mounts.

Ranks are not started through the holder: the launcher setns(2)es its own
``pid_for_children`` into the VM's PID namespace around the fork of a rank
(:meth:`VMs.children_in`), and the child joins the VM's IPC, UTS and mount
namespaces before exec (:meth:`VMs.enter`).  So every rank is still a direct
child of the launcher - its exit status, process group, pipes and PMI socket
work as without VMs - and the pid the launcher knows and reports is the
rank's pid in the machine's PID namespace.

When the job ends the launcher closes the holders' stdin: PID 1 of each VM
exits and the kernel kills whatever is left in the VM (also processes that
left their rank's process group); the namespaces and their mounts go with
the last process.  If the launcher is killed, PR_SET_PDEATHSIG ends the
``unshare`` processes and ``--kill-child`` their PID 1.  Holders carry the
launcher's pid and start time on their command line, so
:func:`cleanup_stale` (``vmpirun --cleanup``) can stop any whose launcher is
gone.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import time

from . import netns
from . import shm

__all__ = [
    "IVSHMEM_PATH",
    "DEFAULT_IVSHMEM_SIZE",
    "VMError",
    "parse_size",
    "region_size",
    "vm_name",
    "region_path",
    "check_usable",
    "VMs",
    "holder_main",
    "cleanup_stale",
]

MOUNT_DIR = "/run/vmpi"             # a tmpfs inside each VM, hiding the machine's
IVSHMEM_PATH = MOUNT_DIR + "/ivshmem"
# Sparse: a job takes about half (its heap's default), jobs it spawns the
# rest (mpi4py's suite has each of 4 ranks spawn 8 at once).
DEFAULT_IVSHMEM_SIZE = 4 << 30
# Bounds of a job's area in a host's region (channel/ivshmem/ivshmem.c lays
# it out): per ordered pair of the host's ranks its ring and bulk slots
# (652 KiB with the default VMPI_IVSHMEM_* knobs), per rank its collective
# slot and at least 16 MiB of heap.
PAIR_BOUND = 1 << 20
RANK_BOUND = 17 << 20
HOLDER_TAG = "vmpi-vm-holder"       # marks a holder's command line for --cleanup
READY_TIMEOUT = 10.0                # seconds for the holders to set their VMs up
STOP_GRACE = 2.0                    # seconds for holders to end before SIGKILL

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CAP_SYS_CHROOT = 18
CAP_SYS_ADMIN = 21
# What a rank in an emulated VM must not keep: the capabilities that undo
# or reach past its namespaces (unmount its /dev/shm and see the machine's,
# mount, setns, chroot, open files by handle, raw devices and memory,
# modules, the network's configuration, ptrace without the usual checks).
# Dropped from the bounding set, a root rank cannot get them back at exec.
CONFINED_CAPS = {
    "CAP_DAC_READ_SEARCH": 2, "CAP_SETPCAP": 8, "CAP_NET_ADMIN": 12, "CAP_NET_RAW": 13,
    "CAP_SYS_MODULE": 16, "CAP_SYS_RAWIO": 17, "CAP_SYS_CHROOT": 18, "CAP_SYS_PTRACE": 19,
    "CAP_SYS_ADMIN": 21, "CAP_SYS_BOOT": 22, "CAP_MKNOD": 27, "CAP_SYSLOG": 34,
    "CAP_PERFMON": 38, "CAP_BPF": 39,
}
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_BIND = 0x1000

_SIZE_RE = re.compile(r"^([0-9]+)([KMG]?)$", re.IGNORECASE)
_JOBID_RE = re.compile(r"^[0-9a-f]{32}$")
_LAUNCHER_RE = re.compile(r"^([0-9]+):([0-9]+)$")


class VMError(Exception):
    """The VMs cannot be made; the text is a one-line reason."""


def region_size(nlocal: int) -> int:
    """The region of a host whose job has ``nlocal`` ranks, when no
    ``--ivshmem-size`` is given: DEFAULT_IVSHMEM_SIZE, or twice a bound of
    the job's area in whole GiB if larger (a job's heap is half the region
    less its channels; the file is sparse, so only what is used costs)."""
    need = 2 * (nlocal * nlocal * PAIR_BOUND + nlocal * RANK_BOUND)
    return max(DEFAULT_IVSHMEM_SIZE, -(-need >> 30) << 30)


def parse_size(text: str) -> int:
    """Bytes of a size such as ``4096``, ``64K``, ``256M`` or ``1G`` (binary units)."""
    m = _SIZE_RE.match(text)
    if not m:
        raise ValueError(text)
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2).upper()]


def vm_name(host: int, vm: int) -> str:
    """Hostname of VM ``vm`` of host ``host``."""
    return f"h{host}-vm{vm}"


def region_path(shm_dir: str, jobid: str, host: int) -> str:
    """The region file (ivshmem device) of one host, on the machine."""
    return os.path.join(shm_dir, f"vmpi-{jobid}-ivshmem-h{host}")


def _find_unshare() -> str | None:
    return shutil.which("unshare") or shutil.which("unshare", path="/usr/bin:/bin")


def check_usable() -> str:
    """Return the ``unshare`` path, or raise VMError saying what is missing."""
    missing = netns.missing_caps((CAP_SYS_ADMIN, "CAP_SYS_ADMIN"),
                                 (CAP_SYS_CHROOT, "CAP_SYS_CHROOT"))
    if missing:
        raise VMError("--vms needs CAP_SYS_ADMIN and CAP_SYS_CHROOT to create namespaces and "
                      f"mounts (run as root): this process lacks {' and '.join(missing)}")
    unshare = _find_unshare()
    if unshare is None:
        raise VMError("--vms needs the unshare tool (util-linux) to create namespaces: "
                      "unshare not found in PATH, /usr/bin or /bin")
    return unshare


@functools.cache
def _libc():
    return ctypes.CDLL(None, use_errno=True)


def confine() -> None:
    """Makes the calling process (a rank's child before exec) unable to leave
    its emulated VM: the capabilities above leave its bounding set (CAP_SETPCAP,
    which dropping needs, last), no ambient ones stay, and no_new_privs stops a
    set-uid program from bringing any back."""
    prctl = _libc().prctl
    for name, cap in sorted(CONFINED_CAPS.items(), key=lambda kv: kv[0] == "CAP_SETPCAP"):
        if prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            err = ctypes.get_errno()
            if err != errno.EINVAL:  # EINVAL: a capability this kernel does not know
                raise OSError(err, f"cannot drop {name}: {os.strerror(err)}")
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    if prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"cannot set no_new_privs: {os.strerror(err)}")


def _setns(fd: int, nstype: int, what: str) -> None:
    if _libc().setns(fd, nstype) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"setns into {what}: {os.strerror(err)}")


class VMs:
    """The holders, namespaces and regions of one job; :meth:`create` makes them."""

    def __init__(self, jobid: str, nhosts: int, nvms: int, shm_dir: str, unshare: str,
                 host_addrs: list[str] | None = None, disk: str | None = None):
        self.jobid = jobid
        self.disk = disk or ""
        self.nvms = nvms
        self.unshare = unshare
        self.names = [vm_name(h, j) for h in range(nhosts) for j in range(nvms)]
        self.regions = [region_path(shm_dir, jobid, h) for h in range(nhosts)]
        self.hosts_lines = "".join(
            f"{host_addrs[g // nvms] if host_addrs else '127.0.0.1'}\t{name}\n"
            for g, name in enumerate(self.names))
        self.holders: list[subprocess.Popen] = []
        self.ns: list[dict[int, int]] = []      # per VM: CLONE_NEW* -> namespace fd
        self.own_pid_ns = -1
        self.cwd = ""

    @classmethod
    def create(cls, jobid: str, nhosts: int, nvms: int, size: int, shm_dir: str,
               unshare: str, preexec, host_addrs: list[str] | None = None,
               disk: str | None = None, owner=None) -> VMs:
        """Make the regions and start the holders; on failure undo all and raise VMError.

        ``preexec(host)`` returns the preexec function of host ``host``'s
        holders: it must put them into the host's network namespace and
        tie their life to the launcher's. ``host_addrs`` are the emulated
        hosts' addresses (None: the VMs are the machine's). ``disk``: the
        directory that is each VM's own (``--vm-disk``), or None.
        ``owner`` (a :class:`vmpi.runas.User`, or None: vmpirun's user) owns
        the regions, the user the ranks run as.
        """
        vms = cls(jobid, nhosts, nvms, shm_dir, unshare, host_addrs, disk)
        try:
            vms._create(size, preexec, owner)
        except BaseException:
            vms.destroy()
            raise
        return vms

    def _create(self, size: int, preexec, owner) -> None:
        try:
            # a rank's working directory, by path: joining a mount namespace
            # moves a process to its root
            self.cwd = os.getcwd()
        except OSError as exc:
            raise VMError(f"--vms: no working directory: {exc.strerror}") from None
        try:
            os.makedirs(MOUNT_DIR, mode=0o755, exist_ok=True)
        except OSError as exc:
            raise VMError(f"--vms: cannot create {MOUNT_DIR}: {exc.strerror}") from None
        for path in self.regions:
            try:
                # the ranks' user alone may open it (0600 whatever the umask)
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
                try:
                    if owner is not None:
                        os.fchown(fd, owner.uid, owner.gid)
                    os.fchmod(fd, 0o600)
                    os.ftruncate(fd, size)      # sparse: no memory until written
                finally:
                    os.close(fd)
            except OSError as exc:
                raise VMError(f"--vms: cannot create the region {path}: {exc.strerror}") from None
        launcher = f"{os.getpid()}:{shm.proc_starttime(os.getpid()) or 0}"
        boot = ("import sys; sys.path.insert(0, %r); from vmpi.vms import holder_main; "
                "holder_main(sys.argv[1:])" % os.path.dirname(os.path.dirname(__file__)))
        for g, name in enumerate(self.names):
            host = g // self.nvms
            try:
                self.holders.append(subprocess.Popen(
                    [self.unshare, "--pid", "--fork", "--kill-child", "--mount", "--ipc", "--uts",
                     "--mount-proc", "--propagation", "private", "--",
                     sys.executable, "-I", "-S", "-c", boot,
                     *holder_args(self.jobid, launcher, name, self.regions[host],
                                  self.hosts_lines, self.disk)],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                    # out of the job's session: a Ctrl-C must not end a VM
                    # before its ranks
                    start_new_session=True, preexec_fn=preexec(host)))
            except (OSError, subprocess.SubprocessError) as exc:
                why = getattr(exc, "strerror", None) or exc
                raise VMError(f"--vms: cannot start the holder of VM {name}: {why}") from None
        self._wait_ready()
        for g, holder in enumerate(self.holders):
            # the unshare process is in the VM's mount, IPC and UTS
            # namespaces; its children (PID 1 of the VM) in the PID namespace
            fds = {}
            self.ns.append(fds)
            for nstype, file in ((CLONE_NEWPID, "pid_for_children"), (CLONE_NEWNS, "mnt"),
                                 (CLONE_NEWIPC, "ipc"), (CLONE_NEWUTS, "uts")):
                path = f"/proc/{holder.pid}/ns/{file}"
                try:
                    fds[nstype] = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
                except OSError as exc:
                    raise VMError(f"--vms: VM {self.names[g]}: cannot open {path}: "
                                  f"{exc.strerror}") from None
        self.own_pid_ns = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        if not os.path.isdir(f"/proc/{self.holders[0].pid}/root{self.cwd}"):
            raise VMError(f"--vms: the working directory {self.cwd} does not exist inside "
                          f"the VMs (their /dev/shm and {MOUNT_DIR} are their own)")

    def _wait_ready(self) -> None:
        """Wait until every holder said ``ready``; raise VMError for the first that failed."""
        sel = selectors.DefaultSelector()
        out: dict[int, bytearray] = {}
        try:
            for g, holder in enumerate(self.holders):
                sel.register(holder.stdout, selectors.EVENT_READ, g)
                out[g] = bytearray()
            deadline = time.monotonic() + READY_TIMEOUT
            while out:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise VMError(f"--vms: VM {self.names[min(out)]} was not set up within "
                                  f"{READY_TIMEOUT:g} s")
                for key, _ in sel.select(left):
                    g = key.data
                    data = os.read(key.fd, 4096)
                    out[g] += data
                    if out[g].startswith(b"ready\n"):
                        sel.unregister(key.fileobj)
                        del out[g]
                    elif not data:
                        rc = self.holders[g].wait()
                        lines = out[g].decode(errors="replace").split("\n")
                        why = next((s.strip() for s in reversed(lines) if s.strip()),
                                   f"its holder exited with status {rc}")
                        raise VMError(f"--vms: cannot set up VM {self.names[g]}: {why}")
        finally:
            sel.close()
            for holder in self.holders:
                holder.stdout.close()

    @contextlib.contextmanager
    def children_in(self, vm: int):
        """While in the block, processes we fork are born in ``vm``'s PID namespace."""
        _setns(self.ns[vm][CLONE_NEWPID], CLONE_NEWPID, f"the PID namespace of {self.names[vm]}")
        try:
            yield
        finally:
            _setns(self.own_pid_ns, CLONE_NEWPID, "the launcher's PID namespace")

    def enter(self, vm: int) -> None:
        """Move the calling process into ``vm``'s IPC, UTS and mount namespaces.

        Meant for the preexec function of a child forked in
        :meth:`children_in`; it goes back to the launcher's working directory.
        """
        for nstype, what in ((CLONE_NEWIPC, "IPC"), (CLONE_NEWUTS, "UTS"),
                             (CLONE_NEWNS, "mount")):
            _setns(self.ns[vm][nstype], nstype, f"the {what} namespace of {self.names[vm]}")
        os.chdir(self.cwd)

    def destroy(self) -> list[str]:
        """End every VM; return the names of those whose holder would not end.

        Run once no rank is left: PID 1 of a VM waits until all processes of
        its namespace are reaped, ranks included.
        """
        for fds in self.ns:
            for fd in fds.values():
                os.close(fd)
        self.ns = []
        if self.own_pid_ns >= 0:
            os.close(self.own_pid_ns)
            self.own_pid_ns = -1
        for holder in self.holders:
            holder.stdout.close()       # still open if the set-up failed half-way
            holder.stdin.close()        # EOF: PID 1 of the VM exits
        deadline = time.monotonic() + STOP_GRACE
        left = []
        for g, holder in enumerate(self.holders):
            try:
                holder.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                holder.kill()           # --kill-child takes PID 1 along
                try:
                    holder.wait(timeout=1.0)
                except subprocess.TimeoutExpired:
                    left.append(self.names[g])
        self.holders = []
        return left


# --- inside a VM ---------------------------------------------------------------


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    if _libc().mount(source.encode(), target.encode(), fstype and fstype.encode(), flags,
                     data and data.encode()) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {source} on {target}: {os.strerror(err)}")


def holder_args(jobid: str, launcher: str, name: str, region: str, hosts_lines: str,
                disk: str) -> list[str]:
    """A holder's arguments, as :func:`holder_main` and :func:`_holders` read them."""
    return [HOLDER_TAG, jobid, launcher, name, region, hosts_lines, disk]


def holder_main(argv: list[str]) -> None:
    """PID 1 of a VM: ``HOLDER_TAG JOBID LAUNCHER NAME REGION HOSTS_LINES DISK``.

    Runs in the VM's fresh namespaces (made private by ``unshare``, /proc
    already mounted); prints ``ready`` or one line saying what failed.
    """
    _tag, _jobid, _launcher, name, region, hosts_lines, disk = argv
    try:
        try:
            with open("/etc/hosts") as f:
                machine = f.read()
        except OSError:
            machine = ""
        _mount("tmpfs", MOUNT_DIR, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=755,size=64k")
        os.close(os.open(IVSHMEM_PATH, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        # before the tmpfs hides the machine's /dev/shm, where the region is
        _mount(region, IVSHMEM_PATH, None, MS_BIND, None)
        _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
        hosts = os.path.join(MOUNT_DIR, "hosts")
        with open(hosts, "w") as f:
            f.write(machine + ("" if machine.endswith("\n") or not machine else "\n")
                    + hosts_lines)
            os.fchmod(f.fileno(), 0o644)    # ranks may run as another user (--user)
        _mount(hosts, "/etc/hosts", None, MS_BIND, None)
        if disk:
            _mount("tmpfs", disk, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
        if _libc().sethostname(name.encode(), len(name)) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"sethostname {name}: {os.strerror(err)}")
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        os.write(1, f"{exc.strerror}{where}\n".encode())
        sys.exit(1)

    def reap(signum=None, frame=None) -> None:
        # orphans of the VM are reparented to us, its init
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass

    signal.signal(signal.SIGCHLD, reap)
    reap()
    # As PID 1 we get no signal we do not handle, except SIGKILL from
    # outside: only the launcher (EOF on stdin, or SIGKILL) ends the VM.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.write(1, b"ready\n")
    null = os.open("/dev/null", os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    while os.read(0, 4096):
        pass


# --- vmpirun --cleanup -----------------------------------------------------------


def _holders() -> dict[str, list[tuple[int, str, str]]]:
    """Holder processes by job id: (pid, launcher, VM name) each."""
    found: dict[str, list[tuple[int, str, str]]] = {}
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return found
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().decode(errors="replace").split("\0")[:-1]
        except OSError:
            continue
        if HOLDER_TAG not in argv:
            continue
        rest = argv[argv.index(HOLDER_TAG) + 1:]
        if (len(rest) == len(holder_args(*[""] * 6)) - 1 and _JOBID_RE.match(rest[0])
                and _LAUNCHER_RE.match(rest[1])):
            found.setdefault(rest[0], []).append((pid, rest[1], rest[2]))
    return found


def cleanup_stale(log=None) -> tuple[list[str], list[str]]:
    """Stop the VMs of jobs whose launcher is gone.

    Returns ``(stopped, failed)`` lists of ``<jobid>/<VM name>``; ``log`` (a
    callable taking one string) gets one line per job when given.  Only
    processes whose command line is a holder's are ever signalled.
    """
    stopped: list[str] = []
    failed: list[str] = []
    for jid, procs in sorted(_holders().items()):
        names = sorted({name for _, _, name in procs})
        pid, start = _LAUNCHER_RE.match(procs[0][1]).groups()
        if shm.process_alive(int(pid), start):
            if log:
                log(f"job {jid}: launcher running, kept {len(names)} VM(s)")
            continue
        for p, _, _ in procs:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + STOP_GRACE
        while time.monotonic() < deadline and jid in _holders():
            time.sleep(0.02)
        left = {name for _, _, name in _holders().get(jid, [])}
        stopped += [f"{jid}/{n}" for n in names if n not in left]
        failed += [f"{jid}/{n}" for n in sorted(left)]
        if log:
            log(f"job {jid}: gone, stopped {len(names) - len(left)} VM(s)")
    return stopped, failed
