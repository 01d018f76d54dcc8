"""Emulated hosts for ``vmpirun --hosts``: network namespaces on one machine.

A job with H hosts gets H+1 named network namespaces, made with
``ip netns add`` (bind mounts under ``/run/netns``):

* ``vmpi-<jobid>-sw``, the switch: a bridge ``br0`` with one port ``h<i>``
  per host;
* ``vmpi-<jobid>-h<i>``, host i: ``lo`` and ``vmpi0``, the veth peer of the
  switch's ``h<i>``, carrying ``198.18.0.0/15`` address number i+1
  (198.18.0.1, 198.18.0.2, ..., see :func:`host_addr`).

Nothing is added to the machine's own network namespace, and a host has no
route but the on-link /15, so no traffic leaves these namespaces.  IPv6
address generation is off on every link: the only address on ``vmpi0`` is
the IPv4 one (libfabric and UCX pick it up through FI_TCP_IFACE and
UCX_NET_DEVICES) and the links stay quiet.

Ranks join their host with setns(2) on the network namespace only (see
:meth:`Network.enter`), so the ranks of one host still share everything
else - in particular the mount namespace - the way processes of one
machine do.  With ``--vms`` the VMs of a host (see :mod:`vmpi.vms`) join its
network namespace the same way and have their other namespaces of their own.

Ownership: before it creates any namespace the launcher writes the pid file
``/run/vmpi/vmpi-<jobid>.launcher`` (the format of :mod:`vmpi.shm`, pid and
start time), and it removes the file only after it deleted the namespaces.
So a ``vmpi-<jobid>-...`` namespace whose pid file is missing or names a dead
launcher is stale, and :func:`cleanup_stale` (``vmpirun --cleanup``) removes
it.  The records live in a fixed directory rather than the shared-memory
directory, which ``VMPI_SHM_DIR`` may move: namespaces are machine-wide.
"""

from __future__ import annotations

import ctypes
import functools
import ipaddress
import os
import re
import shutil
import socket
import subprocess

from . import shm

__all__ = [
    "IFACE",
    "MAX_HOSTS",
    "NetnsError",
    "host_addr",
    "find_ip",
    "check_usable",
    "missing_caps",
    "Network",
    "cleanup_stale",
]

IFACE = "vmpi0"                 # the host's interface, in every host namespace
NETNS_DIR = "/run/netns"        # where `ip netns` keeps its namespaces
RUN_DIR = "/run/vmpi"           # the launchers' ownership records
SUBNET = ipaddress.ip_network("198.18.0.0/15")
# A Linux bridge has at most 1023 ports (BR_MAX_PORTS - 1), one per host.
MAX_HOSTS = 1023
# ip processes run at once while the hosts are configured (each holds pipes)
PARALLEL = 32

CLONE_NEWNET = 0x40000000
CAP_NET_ADMIN = 12
CAP_SYS_ADMIN = 21

_NAME_RE = re.compile(r"^vmpi-([0-9a-f]{32})-(?:sw|h[0-9]+)$")
_RECORD_RE = re.compile(r"^vmpi-([0-9a-f]{32})" + re.escape(shm.PIDFILE_SUFFIX) + "$")


class NetnsError(Exception):
    """The emulated hosts cannot be made; the text is a one-line reason."""


def host_addr(i: int) -> str:
    """The address of host ``i`` (0-based) on its ``vmpi0``."""
    return str(SUBNET.network_address + i + 1)


def find_ip() -> str | None:
    """Path of iproute2's ``ip``, also where root's PATH would have it."""
    return shutil.which("ip") or shutil.which("ip", path="/usr/sbin:/sbin")


def missing_caps(*caps: tuple[int, str]) -> list[str]:
    """Names of the (bit, name) capabilities missing from our effective set."""
    eff = 0
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("CapEff:"):
                    eff = int(line.split()[1], 16)
    except (OSError, ValueError, IndexError):
        pass
    return [name for bit, name in caps if not eff >> bit & 1]


def _missing_caps() -> list[str]:
    return missing_caps((CAP_SYS_ADMIN, "CAP_SYS_ADMIN"), (CAP_NET_ADMIN, "CAP_NET_ADMIN"))


def check_usable() -> str:
    """Return the ``ip`` path, or raise NetnsError saying what is missing."""
    missing = _missing_caps()
    if missing:
        raise NetnsError("--hosts needs CAP_SYS_ADMIN and CAP_NET_ADMIN to create network "
                         f"namespaces (run as root): this process lacks {' and '.join(missing)}")
    ip = find_ip()
    if ip is None:
        raise NetnsError("--hosts needs the ip tool (iproute2) to create network namespaces: "
                         "ip not found in PATH, /usr/sbin or /sbin")
    return ip


@functools.cache
def _setns():
    libc = ctypes.CDLL(None, use_errno=True)
    setns = libc.setns
    setns.argtypes = (ctypes.c_int, ctypes.c_int)
    return setns


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return "unknown error"


def _start_ip(ip: str, args: list[str], script: list[str]) -> tuple[subprocess.Popen, str]:
    # In a session of its own, so a Ctrl-C meant for the job cannot kill it
    # half-way through setting up or removing namespaces.
    proc = subprocess.Popen([ip, *args, "-batch", "-"], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    return proc, "".join(line + "\n" for line in script)


def _run_ip(ip: str, batches: list[tuple[list[str], list[str]]]) -> str | None:
    """Run ``ip ARGS -batch -`` for each (ARGS, lines), PARALLEL at a time.

    Returns the first line of the first failure's message, None if all
    succeeded.
    """
    error = None
    for k in range(0, len(batches), PARALLEL):
        started = [_start_ip(ip, args, script) for args, script in batches[k:k + PARALLEL]]
        for proc, text in started:
            _, err = proc.communicate(text)
            if proc.returncode != 0 and error is None:
                error = _first_line(err)
    return error


def _job_names(jobid: str) -> list[str]:
    prefix = f"vmpi-{jobid}-"
    try:
        names = os.listdir(NETNS_DIR)
    except OSError:
        return []
    return sorted(n for n in names if n.startswith(prefix) and _NAME_RE.match(n))


def _remove_record(jobid: str) -> None:
    try:
        os.unlink(shm.pidfile_path(RUN_DIR, jobid))
    except OSError:
        pass  # a record left behind names a dead launcher: --cleanup retries


def _delete(ip: str | None, names: list[str]) -> list[str]:
    """Delete namespaces (with what is in them); return those still there."""
    if names and ip is not None:
        _run_ip(ip, [(["-force"], [f"netns del {n}" for n in names])])
    return [n for n in names if os.path.lexists(os.path.join(NETNS_DIR, n))]


class Network:
    """The switch and hosts of one job; :meth:`create` makes them."""

    def __init__(self, jobid: str, nhosts: int, ip: str):
        self.jobid = jobid
        self.nhosts = nhosts
        self.ip = ip
        self.switch = f"vmpi-{jobid}-sw"
        self.hosts = [f"vmpi-{jobid}-h{i}" for i in range(nhosts)]
        self.record = shm.pidfile_path(RUN_DIR, jobid)
        self.fds: list[int] = []
        self.switch_fd = -1
        self._setns = _setns()

    @classmethod
    def create(cls, jobid: str, nhosts: int, ip: str) -> Network:
        """Make the namespaces and links; on failure remove them and raise NetnsError."""
        net = cls(jobid, nhosts, ip)
        try:
            net._create()
        except BaseException:
            net.destroy()
            raise
        return net

    def _create(self) -> None:
        try:
            os.makedirs(RUN_DIR, mode=0o755, exist_ok=True)
        except OSError as exc:
            raise NetnsError(f"--hosts: cannot create {RUN_DIR}: {exc.strerror}") from None
        if shm.write_pidfile(RUN_DIR, self.jobid) is None:
            raise NetnsError(f"--hosts: cannot write {self.record}")
        error = _run_ip(self.ip, [([], [f"netns add {ns}" for ns in [self.switch, *self.hosts]])])
        if error is None:
            switch = ["link add br0 type bridge", "link set br0 addrgenmode none"]
            for i, host in enumerate(self.hosts):
                switch += [f"link add h{i} type veth peer name {IFACE} netns {host}",
                           f"link set h{i} addrgenmode none",
                           f"link set h{i} master br0 up"]
            switch.append("link set br0 up")
            error = _run_ip(self.ip, [(["-n", self.switch], switch)])
        if error is None:
            error = _run_ip(self.ip, [
                (["-n", host], ["link set lo up",
                                f"link set {IFACE} addrgenmode none",
                                f"addr add {host_addr(i)}/{SUBNET.prefixlen} dev {IFACE}",
                                f"link set {IFACE} up"])
                for i, host in enumerate(self.hosts)])
        if error is not None:
            raise NetnsError("--hosts: cannot create the network namespaces of "
                             f"{self.nhosts} host(s): {error}")
        for host in [self.switch, *self.hosts]:
            path = os.path.join(NETNS_DIR, host)
            try:
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError as exc:
                raise NetnsError(f"--hosts: cannot open {path}: {exc.strerror}") from None
            if host == self.switch:
                self.switch_fd = fd
            else:
                self.fds.append(fd)

    def configure_switch(self, lines: list[str], what: str) -> None:
        """Run ``ip`` batch ``lines`` in the switch's namespace; raise NetnsError on failure."""
        error = _run_ip(self.ip, [(["-n", self.switch], lines)])
        if error is not None:
            raise NetnsError(f"{what}: {error}")

    def enter(self, host: int) -> None:
        """Move the calling process into ``host``'s network namespace.

        Meant for a child's preexec function: it touches nothing but the
        network namespace.
        """
        if self._setns(self.fds[host], CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns into {self.hosts[host]}: {os.strerror(err)}")

    def enter_switch(self) -> None:
        """Move the calling thread into the switch's network namespace (where
        real guests' taps live)."""
        if self._setns(self.switch_fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns into {self.switch}: {os.strerror(err)}")

    def listen_in_switch(self, addr: str, backlog: int) -> socket.socket:
        """A TCP socket listening on ``addr`` (an address of the switch's
        bridge, any port) in the switch's namespace; the calling thread
        stays in its own. A socket keeps the namespace it was made in."""
        own = os.open("/proc/self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        try:
            self.enter_switch()
            try:
                return socket.create_server((addr, 0), backlog=backlog)
            finally:
                if self._setns(own, CLONE_NEWNET) != 0:
                    err = ctypes.get_errno()
                    raise OSError(err, f"cannot return from {self.switch}: {os.strerror(err)}")
        finally:
            os.close(own)

    def destroy(self) -> list[str]:
        """Delete the job's namespaces and then its record; return names left over."""
        for fd in [*self.fds, self.switch_fd]:
            if fd >= 0:
                os.close(fd)
        self.fds = []
        self.switch_fd = -1
        left = _delete(self.ip, _job_names(self.jobid))
        if not left:
            _remove_record(self.jobid)
        return left


def cleanup_stale(log=None) -> tuple[list[str], list[str]]:
    """Remove the namespaces of jobs whose launcher is gone.

    Returns ``(removed, failed)`` lists of namespace names; ``log`` (a
    callable taking one string) gets one line per job when given.  Only
    names ``vmpi-<32 hex digits>-sw`` / ``-h<i>`` are ever touched.
    """
    try:
        entries = os.listdir(NETNS_DIR)
    except OSError:
        entries = []
    names: dict[str, list[str]] = {}
    for name in sorted(entries):
        m = _NAME_RE.match(name)
        if m:
            names.setdefault(m.group(1), []).append(name)
    # Listed after the namespaces: a launcher writes its record before it
    # creates namespaces, so a namespace seen above without a record here
    # belongs to a job that is gone.
    try:
        records = {m.group(1) for m in map(_RECORD_RE.match, os.listdir(RUN_DIR)) if m}
    except OSError:
        records = set()
    removed: list[str] = []
    failed: list[str] = []
    ip = find_ip()
    for jid in sorted(names.keys() | records):
        job_names = names.get(jid, [])
        if jid in records and shm.launcher_alive(shm.pidfile_path(RUN_DIR, jid)):
            if log:
                log(f"job {jid}: launcher running, kept {len(job_names)} network namespace(s)")
            continue
        left = _delete(ip, job_names)
        removed += [n for n in job_names if n not in left]
        failed += left
        if not left:
            _remove_record(jid)
        if log:
            log(f"job {jid}: gone, removed {len(job_names) - len(left)} network namespace(s)")
    return removed, failed
