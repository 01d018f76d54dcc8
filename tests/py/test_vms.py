"""vmpirun --vms: emulated VMs (mount, IPC, UTS and PID namespaces) and one
ivshmem region per host.

The ranks are small shell or Python programs (no MPI library) that report
what they see; they meet at file barriers in a directory every VM shares
(the test's tmp_path), or wait for a go file while the test looks at the
machine from outside.  Inside a VM a rank's pid is not its pid on the
machine: machine_pid() translates.
"""
import errno
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from vmpi import launcher, netns, placement, shm, vms

from conftest import (ROOT, fake, finish, nobody_can_run_vmpirun, run_vmpirun,
                      run_vmpirun_as_nobody, start_vmpirun, wait_all_dead)

needs_vms = pytest.mark.skipif(
    bool(netns.missing_caps((vms.CAP_SYS_ADMIN, "admin"), (vms.CAP_SYS_CHROOT, "chroot")))
    or vms._find_unshare() is None,
    reason="needs root (CAP_SYS_ADMIN, CAP_SYS_CHROOT) and util-linux's unshare")
needs_hosts = pytest.mark.skipif(
    bool(netns._missing_caps()) or netns.find_ip() is None,
    reason="needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN) and iproute2's ip")
needs_nobody = pytest.mark.skipif(
    not nobody_can_run_vmpirun(), reason="needs root, setpriv, and a repository user 65534 can read")

NS = ("pid", "ipc", "mnt", "uts", "net")


def py(code, *args):
    """A rank program: Python code run with the test's interpreter."""
    return [sys.executable, "-S", "-c", textwrap.dedent(code), *map(str, args)]


# Rank-side helpers, prepended to the Python rank programs below.
RANK_LIB = """\
import json, os, socket, sys, time
D = os.environ["DIR"]
R = int(os.environ["PMI_RANK"])
N = int(os.environ["PMI_SIZE"])

def barrier(tag):
    open(f"{D}/{tag}.{R}", "w").close()
    while sum(f.startswith(tag + ".") for f in os.listdir(D)) < N:
        time.sleep(0.01)

def ns():
    return {k: os.readlink(f"/proc/self/ns/{k}") for k in %r}
""" % (NS,)


def rank_py(code, *args):
    return py(RANK_LIB + textwrap.dedent(code), *args)


def run_ranks(d, *args, env=None):
    """Run vmpirun with DIR=d; return {rank: JSON line it printed}."""
    cp, _ = run_vmpirun(*args, env=dict(env or {}, DIR=str(d)), timeout=60)
    assert cp.returncode == 0, cp.stderr
    assert cp.stderr == ""
    rows = {}
    for line in cp.stdout.splitlines():
        row = json.loads(line)
        rows[row["rank"]] = row
    return rows


def own_ns():
    return {k: os.readlink(f"/proc/self/ns/{k}") for k in NS}


def machine_pid(pidns, inner):
    """The machine's pid of the process that is ``inner`` in PID namespace ``pidns``."""
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{p}/ns/pid") != pidns:
                continue
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("NSpid:") and int(line.split()[-1]) == inner:
                        return int(p)
        except OSError:
            continue
    return None


def ns_refs():
    """Every namespace a process is in or holds open (``pid:[...]``, ...)."""
    refs = set()
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        for sub in ("ns", "fd"):
            try:
                names = os.listdir(f"/proc/{p}/{sub}")
            except OSError:
                continue
            for name in names:
                try:
                    link = os.readlink(f"/proc/{p}/{sub}/{name}")
                except OSError:
                    continue
                if re.fullmatch(r"[a-z_]+:\[\d+\]", link):
                    refs.add(link)
    return refs


def holders(jobid=None):
    """Pids of processes whose command line is a VM holder's (of one job)."""
    found = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                argv = f.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        if vms.HOLDER_TAG in argv and (jobid is None or jobid in argv):
            found.append(int(p))
    return found


def mountinfo():
    """The machine's mounts (ours), but the network namespaces of --hosts jobs,
    which come and go with other tests' jobs (job_namespaces() checks ours)."""
    with open("/proc/self/mountinfo") as f:
        return {line for line in f if f" {netns.NETNS_DIR}/vmpi-" not in line}


# --- placement, namespaces, environment --------------------------------------

INFO = """\
    barrier("up")
    # which ranks of this job can this rank see in its /proc?
    seen = set()
    for p in os.listdir("/proc"):
        try:
            env = open(f"/proc/{p}/environ", "rb").read().split(b"\\0")
        except (OSError, ValueError):
            continue
        if ("VMPI_JOB_ID=" + os.environ["VMPI_JOB_ID"]).encode() in env:
            seen |= {int(e[9:]) for e in env if e.startswith(b"PMI_RANK=")}
    barrier("seen")
    keys = ["VMPI_HOST_INDEX", "VMPI_VM_INDEX", "VMPI_HOST_ADDR", "VMPI_LOCAL_RANK",
            "VMPI_LOCAL_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", "VMPI_IVSHMEM_PATH",
            "FI_TCP_IFACE"]
    path = os.environ.get("VMPI_IVSHMEM_PATH")
    resolved = {}
    for name in ("h0-vm0", "h0-vm1", "h1-vm0", "h1-vm1"):
        try:
            resolved[name] = socket.gethostbyname(name)
        except OSError:
            pass
    print(json.dumps({
        "resolved": resolved,
        "rank": R, "env": {k: os.environ.get(k) for k in keys}, "ns": ns(),
        "hostname": socket.gethostname(), "seen": sorted(seen), "pid": os.getpid(),
        "region": os.stat(path).st_size if path else None,
    }))
"""


def check_vms(rows, vm_of, host_of):
    """Ranks share their pid/ipc/mnt/uts namespaces exactly with their VM,
    their network namespace exactly with their host, and see exactly the
    ranks of their VM."""
    machine = own_ns()
    for r, row in rows.items():
        for q, other in rows.items():
            for k in ("pid", "ipc", "mnt", "uts"):
                assert (row["ns"][k] == other["ns"][k]) == (vm_of[r] == vm_of[q]), (r, q, k)
            assert (row["ns"]["net"] == other["ns"]["net"]) == (host_of[r] == host_of[q]), (r, q)
        for k in ("pid", "ipc", "mnt", "uts"):
            assert row["ns"][k] != machine[k]
        assert row["seen"] == sorted(q for q in rows if vm_of[q] == vm_of[r]), r
        # a rank's pid is its pid in its VM: PID 1 is the VM's holder
        assert 1 < row["pid"] < 1000


@needs_vms
@needs_hosts
def test_8_ranks_on_2_hosts_of_2_vms(tmp_path, monkeypatch):
    monkeypatch.delenv("FI_TCP_IFACE", raising=False)
    rows = run_ranks(tmp_path, "-n", 8, "--hosts", 2, "--vms", 2, *rank_py(INFO))
    assert sorted(rows) == list(range(8))
    check_vms(rows, vm_of=[r // 2 for r in range(8)], host_of=[r // 4 for r in range(8)])
    for r, row in rows.items():
        h, j = r // 4, r % 4 // 2
        assert row["hostname"] == f"h{h}-vm{j}"
        assert row["env"] == {
            "VMPI_HOST_INDEX": str(h), "VMPI_VM_INDEX": str(j),
            "VMPI_HOST_ADDR": f"198.18.0.{h + 1}",
            "VMPI_LOCAL_RANK": str(r % 2), "VMPI_LOCAL_SIZE": "2",
            "MPI_LOCALRANKID": str(r % 2), "MPI_LOCALNRANKS": "2",
            "VMPI_IVSHMEM_PATH": "/run/vmpi/ivshmem", "FI_TCP_IFACE": "vmpi0"}, r
        assert row["region"] == vms.DEFAULT_IVSHMEM_SIZE   # the default --ivshmem-size
        assert row["ns"]["net"] != own_ns()["net"]
        # every VM's name resolves to its host's address, in every VM
        assert row["resolved"] == {f"h{a}-vm{b}": f"198.18.0.{a + 1}"
                                   for a in range(2) for b in range(2)}, r


@needs_vms
def test_uneven_vms_without_hosts(tmp_path, monkeypatch):
    monkeypatch.delenv("FI_TCP_IFACE", raising=False)
    rows = run_ranks(tmp_path, "-n", 5, "--vms", 2, *rank_py(INFO))
    # the first VM gets the extra rank
    vm_of = [0, 0, 0, 1, 1]
    check_vms(rows, vm_of=vm_of, host_of=[0] * 5)
    local = [(0, 3), (1, 3), (2, 3), (0, 2), (1, 2)]
    for r, row in rows.items():
        lrank, lsize = map(str, local[r])
        assert row["hostname"] == f"h0-vm{vm_of[r]}"
        assert row["env"] == {
            "VMPI_HOST_INDEX": "0", "VMPI_VM_INDEX": str(vm_of[r]), "VMPI_HOST_ADDR": None,
            "VMPI_LOCAL_RANK": lrank, "VMPI_LOCAL_SIZE": lsize,
            "MPI_LOCALRANKID": lrank, "MPI_LOCALNRANKS": lsize,
            "VMPI_IVSHMEM_PATH": "/run/vmpi/ivshmem", "FI_TCP_IFACE": None}, r
        # without --hosts the one host is the machine's network namespace
        assert row["ns"]["net"] == own_ns()["net"]
        assert row["resolved"] == {"h0-vm0": "127.0.0.1", "h0-vm1": "127.0.0.1"}, r


@pytest.mark.parametrize("n,h,v,starts", [
    (8, 2, 2, [0, 2, 4, 6, 8]), (5, 1, 2, [0, 3, 5]), (7, 2, 2, [0, 2, 4, 6, 7]),
    (10, 3, 2, [0, 2, 4, 6, 7, 9, 10]), (3, 1, 3, [0, 1, 2, 3]), (4, 2, 1, [0, 2, 4])])
def test_vm_blocks(n, h, v, starts):
    assert placement.vm_starts(placement.host_starts(n, h), v) == starts


def test_without_vms_nothing_changes(tmp_path, monkeypatch):
    for var in ("VMPI_HOST_INDEX", "VMPI_VM_INDEX", "VMPI_IVSHMEM_PATH"):
        monkeypatch.delenv(var, raising=False)
    rows = run_ranks(tmp_path, "-n", 2, *rank_py(INFO))
    for r, row in rows.items():
        assert row["ns"] == own_ns()
        assert row["hostname"] == socket.gethostname()
        assert row["env"]["VMPI_VM_INDEX"] is None
        assert row["env"]["VMPI_HOST_INDEX"] is None
        assert row["env"]["VMPI_IVSHMEM_PATH"] is None
        assert row["env"]["VMPI_LOCAL_SIZE"] == "2"


# --- --vm-disk: a directory that is each VM's own -----------------------------

VM_DISK = """\
    disk = sys.argv[1]
    open(f"{disk}/from-{R}", "w").close()
    barrier("wrote")
    print(json.dumps({"rank": R, "seen": sorted(os.listdir(disk))}))
"""


@needs_vms
def test_vm_disk_is_each_vms_own(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    (disk / "machine").touch()
    rows = run_ranks(tmp_path, "-n", 5, "--vms", 2, "--vm-disk", disk,
                     *rank_py(VM_DISK, disk))
    # ranks 0-2 are VM 0, 3-4 VM 1: each sees its VM's files only, on a
    # fresh disk (not the machine's directory), which stays as it was
    for r, row in rows.items():
        mine = range(3) if r < 3 else range(3, 5)
        assert row["seen"] == [f"from-{q}" for q in mine], r
    assert sorted(os.listdir(disk)) == ["machine"]


BUILD = Path(os.environ.get("VMPI_BUILD", ROOT / "build")).resolve()


def build_prog(name, out_dir):
    """tests/py/progs/NAME.c built with the build's mpicc into out_dir."""
    prog = Path(out_dir) / name
    cp = subprocess.run([str(BUILD / "bin" / "mpicc"), "-O1", "-o", str(prog),
                         str(Path(__file__).parent / "progs" / f"{name}.c")],
                        capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    return prog


@needs_vms
@needs_hosts
def test_mpi_io_on_vm_disks(tmp_path):
    """MPI-IO on a directory no two VMs share: a collective open across VMs
    fails with the right class on every rank (the file is missing, or is
    another file in each VM), and a communicator per VM reads back what it
    wrote (tests/py/progs/io_vmdisk.c)."""
    prog = build_prog("io_vmdisk", tmp_path)
    disk = tmp_path / "disk"
    disk.mkdir()
    cp, _ = run_vmpirun("-n", 6, "--hosts", 2, "--vms", 2, "--vm-disk", disk, prog, disk,
                        timeout=120)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert cp.stdout == "io_vmdisk ok 4\n"
    assert os.listdir(disk) == []


@pytest.mark.parametrize("args,msg", [
    (["-n", 2, "--vm-disk", "/tmp"], "--vm-disk needs --vms"),
    (["-n", 2, "--vms", 2, "--vm-disk", "relative"],
     "--vm-disk: 'relative' is not an existing directory given by its absolute path (nor /)"),
    (["-n", 2, "--vms", 2, "--vm-disk", "/nonexistent/dir"],
     "--vm-disk: '/nonexistent/dir' is not an existing directory given by its absolute path "
     "(nor /)"),
])
def test_bad_vm_disk_is_a_usage_error(args, msg):
    cp, _ = run_vmpirun(*args, "true")
    assert cp.returncode == 2
    assert cp.stderr.startswith(f"vmpirun: {msg}\nusage:")


# --- /dev/shm and the region ---------------------------------------------------

SHM = """\
    name = f"/dev/shm/vmpi-vmtest-{os.environ['VMPI_JOB_ID']}"
    if R == 0:
        with open(name, "w") as f:
            f.write("from rank 0")
    barrier("made")
    with open(f"{D}/{R}.tmp", "w") as f:
        json.dump({"exists": os.path.exists(name), "shm": sorted(os.listdir("/dev/shm")),
                   "jobid": os.environ["VMPI_JOB_ID"]}, f)
    os.rename(f"{D}/{R}.tmp", f"{D}/{R}.json")
    while not os.path.exists(f"{D}/go"):
        time.sleep(0.02)
"""


def wait_files(d, names, timeout=20.0):
    deadline = time.monotonic() + timeout
    while not all((Path(d) / n).exists() for n in names):
        assert time.monotonic() < deadline, f"missing {names} in {os.listdir(d)}"
        time.sleep(0.02)


@needs_vms
def test_dev_shm_is_private_to_each_vm(tmp_path):
    p = start_vmpirun(tmp_path, "-n", 4, "--vms", 2, *rank_py(SHM))
    try:
        wait_files(tmp_path, [f"{r}.json" for r in range(4)])
        seen = {r: json.loads((tmp_path / f"{r}.json").read_text()) for r in range(4)}
        jobid = seen[0]["jobid"]
        # not in the machine's /dev/shm either
        assert not os.path.exists(f"/dev/shm/vmpi-vmtest-{jobid}")
    finally:
        (tmp_path / "go").touch()
    rc, _, err = finish(p, 20)
    assert (rc, err) == (0, "")
    assert [seen[r]["exists"] for r in range(4)] == [True, True, False, False]
    # a fresh tmpfs: VM 1 sees nothing at all, VM 0 only rank 0's file
    assert seen[2]["shm"] == seen[3]["shm"] == []
    assert seen[0]["shm"] == seen[1]["shm"] == [f"vmpi-vmtest-{jobid}"]


ESCAPE = """\
    import ctypes, errno
    libc = ctypes.CDLL(None, use_errno=True)
    def tried(rc):
        return "ok" if rc == 0 else errno.errorcode[ctypes.get_errno()]
    def opened(path):
        try:
            os.close(os.open(path, os.O_RDWR))
            return "ok"
        except OSError as exc:
            return errno.errorcode[exc.errno]
    caps = {l.split(":")[0]: l.split()[1] for l in open("/proc/self/status")
            if l.startswith(("CapBnd", "CapEff", "NoNewPrivs"))}
    out = {"umount": tried(libc.umount2(b"/dev/shm", 2)),            # MNT_DETACH
           "mount": tried(libc.mount(b"none", b"/mnt", b"tmpfs", 0, None)),
           "unshare": tried(libc.unshare(0x00020000)),                # CLONE_NEWNS
           "chroot": tried(libc.chroot(b"/")),
           "shm": sorted(os.listdir("/dev/shm")), "caps": caps,
           "uid": [os.getuid(), os.geteuid()], "open": [opened(p) for p in sys.argv[1:]]}
    with open(f"{D}/{R}.tmp", "w") as f:
        json.dump(out, f)
    os.rename(f"{D}/{R}.tmp", f"{D}/{R}.json")
"""


def escape_from_vms(d, *args, paths=()):
    """Run ESCAPE (opening ``paths`` too) in 2 VMs with vmpirun options
    ``args``; check it stayed in; return what each rank saw."""
    marker = Path("/dev/shm") / f"vmpi-escape-marker-{secrets.token_hex(4)}"
    marker.write_text("machine")
    try:
        cp, _ = run_vmpirun("-n", 2, "--vms", 2, *args, *rank_py(ESCAPE, *paths),
                            env={"DIR": str(d)}, cwd=d, timeout=60)
    finally:
        marker.unlink()
    assert cp.returncode == 0, cp.stderr
    seen = [json.loads((Path(d) / f"{r}.json").read_text()) for r in range(2)]
    for row in seen:
        assert row["umount"] == row["mount"] == row["unshare"] == row["chroot"] == "EPERM", row
        assert row["shm"] == [], row
        bnd = int(row["caps"]["CapBnd"], 16)
        for name, cap in vms.CONFINED_CAPS.items():
            assert not bnd >> cap & 1, (name, row["caps"])
        assert int(row["caps"]["CapEff"], 16) & ~bnd == 0
        assert row["caps"]["NoNewPrivs"] == "1"
    return seen


@needs_vms
def test_a_rank_cannot_leave_its_emulated_vm(tmp_path, monkeypatch):
    """The escape a hostile tester found: as root with CAP_SYS_ADMIN a rank
    could unmount its VM's /dev/shm and open the machine's, every job's
    region file among them. Ranks now run without the capabilities that undo
    namespaces; the machine's /dev/shm stays out of sight."""
    monkeypatch.delenv("SUDO_UID", raising=False)
    for row in escape_from_vms(tmp_path):
        assert row["uid"] == [0, 0], row  # plain root (no sudo, no --user) stays root


# --- ranks as another user (--user, or the user who ran vmpirun through sudo) ---------

try:
    NOBODY = pwd.getpwuid(65534)    # the user of nobody_can_run_vmpirun()
except KeyError:
    NOBODY = None


@pytest.fixture
def open_dir():
    """A directory every user may write (pytest's tmp_path is root's alone)."""
    d = Path(tempfile.mkdtemp(prefix="vmpi-test-"))
    d.chmod(0o777)
    yield d
    shutil.rmtree(d)


def other_regions(where):
    """Two region files of other jobs in ``where``: root's and another
    user's (uid 4242), both mode 0600 as vmpirun makes them."""
    paths = []
    for owner in (0, 4242):
        path = Path(where) / f"vmpi-escape-region-{owner}-{secrets.token_hex(4)}"
        path.write_bytes(b"another job's region")
        os.chown(path, owner, owner)
        path.chmod(0o600)
        paths.append(path)
    return paths


@needs_vms
@needs_nobody
@pytest.mark.skipif(not (BUILD / "tests" / "t_coll_basic").exists(),
                    reason="needs the library build (build/tests)")
@pytest.mark.parametrize("layout", [["--vms", 2], []])
def test_mpi_job_runs_as_the_given_user(open_dir, layout):
    """--user: every rank and every process it spawns is that user's, MPI
    works as that user (smp segments, the region it owns, PMI, output), and
    the region files of other jobs, root's or another user's, do not open:
    EACCES where a rank can see them, and the machine's /dev/shm is out of
    a VM's sight (tests/py/progs/as_user.c)."""
    prog = build_prog("as_user", open_dir)
    others = other_regions(open_dir) + other_regions("/dev/shm")
    try:
        cp, _ = run_vmpirun("-n", 4, *layout, "--user", NOBODY.pw_name, prog, "--spawn", 2,
                            *others, cwd=open_dir, timeout=120)
    finally:
        for path in others:
            path.unlink()
    assert cp.returncode == 0, cp.stdout + cp.stderr
    uid, gid = NOBODY.pw_uid, NOBODY.pw_gid
    ngroups = len(os.getgrouplist(NOBODY.pw_name, gid))
    machine_shm = errno.ENOENT if layout else errno.EACCES
    region = uid if layout else -1
    assert sorted(cp.stdout.splitlines()) == sorted(
        f"{who}rank {r} uid {uid} euid {uid} gid {gid} groups {ngroups} region {region} open "
        f"{errno.EACCES} {errno.EACCES} {machine_shm} {machine_shm}"
        for who, n in (("", 4), ("child ", 2)) for r in range(n))
    if layout:
        cp, _ = run_vmpirun("-n", 4, *layout, "--user", NOBODY.pw_uid,
                            BUILD / "tests" / "t_coll_basic", cwd=open_dir, timeout=120)
        assert (cp.returncode, cp.stdout) == (0, "t_coll_basic: ok (np 4)\n"), cp.stderr


@needs_vms
@needs_nobody
def test_a_rank_run_as_a_user_cannot_leave_its_vm(open_dir):
    """The escape attempt once more as the user: no capability, and no
    permission on other jobs' regions even where the VM shows them; its own
    region (mode 0600, the user's) opens."""
    others = other_regions(open_dir)
    seen = escape_from_vms(open_dir, "--user", NOBODY.pw_name,
                           paths=[vms.IVSHMEM_PATH, *others])
    for row in seen:
        assert row["uid"] == [NOBODY.pw_uid] * 2, row
        assert int(row["caps"]["CapEff"], 16) == 0, row
        assert row["open"] == ["ok", "EACCES", "EACCES"], row


@needs_nobody
def test_under_sudo_ranks_run_as_the_user_who_ran_sudo(open_dir, monkeypatch):
    for var in ("SUDO_UID", "SUDO_GID", "SUDO_USER"):
        monkeypatch.delenv(var, raising=False)
    sudo = {"SUDO_UID": str(NOBODY.pw_uid), "SUDO_GID": str(NOBODY.pw_gid),
            "SUDO_USER": NOBODY.pw_name}
    ids = ["sh", "-c", 'echo "$(id -u) $(id -g) $USER $HOME"']
    nobody = f"{NOBODY.pw_uid} {NOBODY.pw_gid} {NOBODY.pw_name} {NOBODY.pw_dir}"
    for args, env, want in (([], sudo, nobody),
                            (["-x", "HOME=/x"], sudo, nobody.replace(NOBODY.pw_dir, "/x")),
                            (["--user", "root"], sudo, "0 0"),    # root kept on request
                            ([], {}, "0 0")):                     # plain root stays root
        cp, _ = run_vmpirun("-n", 2, *args, *ids, env=env, cwd=open_dir)
        assert cp.returncode == 0, cp.stderr
        assert [line.split()[:len(want.split())] for line in cp.stdout.splitlines()] == \
            [want.split()] * 2, (args, env)


@needs_nobody
def test_a_working_directory_the_user_cannot_enter(open_dir):
    private = open_dir / "private"
    private.mkdir(mode=0o700)
    cp, _ = run_vmpirun("-n", 2, "--user", NOBODY.pw_name, "touch", open_dir / "started",
                        cwd=private)
    assert cp.returncode == 126
    assert cp.stderr == (f"vmpirun: the ranks run as user {NOBODY.pw_name}, who cannot enter "
                         f"the working directory {private}: Permission denied\n")
    assert not (open_dir / "started").exists()


@needs_nobody
def test_only_root_may_name_another_user():
    d = tempfile.mkdtemp(prefix="vmpi-test-")
    try:
        cp = run_vmpirun_as_nobody("-n", 1, "--user", "root", "true", shm_dir=d)
        assert cp.returncode == 2
        assert cp.stderr.startswith("vmpirun: --user root: only root can run ranks as another "
                                    f"user (vmpirun runs as uid {NOBODY.pw_uid})\nusage:")
        cp = run_vmpirun_as_nobody("-n", 1, "--user", NOBODY.pw_name, "true", shm_dir=d)
        assert (cp.returncode, cp.stderr) == (0, "")
    finally:
        shutil.rmtree(d)


@pytest.mark.parametrize("args,msg", [
    (["--user", "vmpi-no-such-user", "true"], "--user: no user 'vmpi-no-such-user' on this machine"),
    (["--user", "4000000000", "true"], "--user: no user '4000000000' on this machine"),
    (["--user", "", "true"], "--user: no user '' on this machine"),
    (["--cleanup", "--user", "SELF"], "--cleanup takes no --user"),
    (["-n", 2, "--vm-guests", 1, "--user", "SELF", "true"],
     "--user does not apply to --vm-guests (ranks run in the guests)"),
])
def test_bad_user_is_a_usage_error(args, msg):
    me = pwd.getpwuid(os.geteuid()).pw_name
    cp, _ = run_vmpirun(*[me if a == "SELF" else a for a in args])
    assert cp.returncode == 2
    assert cp.stderr.startswith(f"vmpirun: {msg}\nusage:")


REGION = """\
    import mmap
    path = os.environ["VMPI_IVSHMEM_PATH"]
    host, vm = int(os.environ["VMPI_HOST_INDEX"]), int(os.environ["VMPI_VM_INDEX"])
    fd = os.open(path, os.O_RDWR)
    m = mmap.mmap(fd, os.fstat(fd).st_size)
    if vm == 0:
        m[1000:1000 + 32] = f"host {host} written by rank {R}".ljust(32).encode()
    barrier("written")
    with open(f"{D}/{R}.tmp", "w") as f:
        json.dump({"size": len(m), "read": m[1000:1032].decode().strip(),
                   "dev": os.fstat(fd).st_dev, "ino": os.fstat(fd).st_ino}, f)
    os.rename(f"{D}/{R}.tmp", f"{D}/{R}.json")
    while not os.path.exists(f"{D}/go"):
        time.sleep(0.02)
"""


@needs_vms
@needs_hosts
def test_one_region_per_host_shared_by_its_vms(tmp_path):
    shm_dir = tmp_path / "shm"
    shm_dir.mkdir()
    d = tmp_path / "d"
    d.mkdir()
    p = start_vmpirun(d, "-n", 4, "--hosts", 2, "--vms", 2, "--ivshmem-size", "64K",
                      *rank_py(REGION), env={"VMPI_SHM_DIR": str(shm_dir)})
    try:
        wait_files(d, [f"{r}.json" for r in range(4)])
        seen = {r: json.loads((d / f"{r}.json").read_text()) for r in range(4)}
        jobid = next(shm.job_id_of(n) for n in os.listdir(shm_dir))
        regions = sorted(os.listdir(shm_dir))
        assert regions == sorted([f"vmpi-{jobid}-ivshmem-h0", f"vmpi-{jobid}-ivshmem-h1",
                                  f"vmpi-{jobid}.launcher"])
        files = {}
        for h in range(2):
            path = shm_dir / f"vmpi-{jobid}-ivshmem-h{h}"
            st = path.stat()
            files[h] = st
            assert st.st_size == 65536
            assert st.st_blocks * 512 <= 8192         # sparse: one page written
            with open(path, "rb") as f:
                f.seek(1000)
                assert f.read(32).decode().strip() == f"host {h} written by rank {2 * h}"
    finally:
        (d / "go").touch()
    rc, _, err = finish(p, 20)
    assert (rc, err) == (0, "")
    for r in range(4):
        h = r // 2
        assert seen[r]["size"] == 65536
        # VM 1 reads what VM 0 of the same host wrote, not the other host's
        assert seen[r]["read"] == f"host {h} written by rank {2 * h}", r
        assert (seen[r]["dev"], seen[r]["ino"]) == (files[h].st_dev, files[h].st_ino)
    assert os.listdir(shm_dir) == []


# --- launcher features for ranks in VMs -------------------------------------------

@needs_vms
def test_pmi_output_and_binding_in_vms():
    cp, _ = run_vmpirun("-n", 4, "--vms", 2, *fake("kvs"))
    assert cp.returncode == 0, cp.stderr
    assert sorted(int(line.split()[1]) for line in cp.stdout.splitlines()) == [0, 1, 2, 3]

    cp, _ = run_vmpirun("-n", 4, "--vms", 2, "--tag-output", "sh", "-c",
                        'echo "out $(hostname)"; echo "err $PMI_RANK" >&2')
    assert cp.returncode == 0, cp.stderr
    assert sorted(cp.stdout.splitlines()) == [
        f"[1,{r}]<stdout>: out h0-vm{r // 2}" for r in range(4)]
    assert sorted(cp.stderr.splitlines()) == [f"[1,{r}]<stderr>: err {r}" for r in range(4)]

    allowed = sorted(os.sched_getaffinity(0))
    cp, _ = run_vmpirun("-n", 4, "--vms", 2, "--bind", "core", *fake("affinity"))
    assert cp.returncode == 0, cp.stderr
    assert sorted(cp.stdout.splitlines()) == [
        f"rank {r} cpus {allowed[r % len(allowed)]}" for r in range(4)]


@needs_vms
@needs_hosts
def test_setup_is_fast():
    def best(*args):
        times = []
        for _ in range(3):
            cp, elapsed = run_vmpirun("-n", 4, *args, "true")
            assert cp.returncode == 0, cp.stderr
            times.append(elapsed)
        return min(times)
    assert best("--hosts", 2, "--vms", 2) - best("--hosts", 2) < 0.5


@needs_vms
def test_working_directory_and_exit_code():
    # Only rank 0 fails, after rank 1 has printed and ended: the exit code
    # and the message cannot depend on which rank the launcher reaps first.
    cp, _ = run_vmpirun("-n", 2, "--vms", 2, "sh", "-c",
                        'pwd; if [ "$PMI_RANK" = 0 ]; then sleep 0.5; exit 5; fi', cwd=ROOT)
    assert cp.stdout.splitlines() == [str(ROOT)] * 2
    assert cp.returncode == 5
    assert re.search(r"^vmpirun: rank 0 \(pid \d+, host 0, VM 0\) exited with code 5 without "
                     r"calling MPI_Finalize; aborting job$", cp.stderr, re.M), cp.stderr


# --- removal however the job ends --------------------------------------------------

# A rank that says it is ready (inner pid and namespaces in DIR/<rank>.ready),
# then exits 0 once DIR/go exists, or 3 once DIR/<rank>.fail exists.  It
# leaves two processes in its VM that would outlive it: one in its process
# group, one in a session of its own that only the end of the VM kills.
WAITER = ["sh", "-c", textwrap.dedent("""\
    sleep 600 &
    setsid sleep 600 &
    echo "$$ $VMPI_JOB_ID $(readlink /proc/self/ns/pid /proc/self/ns/mnt /proc/self/ns/ipc \\
        /proc/self/ns/uts)" > "$DIR/$PMI_RANK.tmp" && mv "$DIR/$PMI_RANK.tmp" "$DIR/$PMI_RANK.ready"
    while [ ! -e "$DIR/go" ]; do
        if [ -e "$DIR/$PMI_RANK.fail" ]; then exit 3; fi
        sleep 0.05
    done
    """)]


def wait_ready(d, n, timeout=20.0):
    """Wait for n waiters; return ({rank: (machine pid, namespaces)}, jobid)."""
    wait_files(d, [f"{r}.ready" for r in range(n)], timeout)
    ranks, jobids = {}, set()
    for r in range(n):
        inner, jobid, *nss = (Path(d) / f"{r}.ready").read_text().split()
        ranks[r] = (machine_pid(nss[0], int(inner)), set(nss))
        jobids.add(jobid)
    assert len(jobids) == 1 and all(pid for pid, _ in ranks.values()), ranks
    return ranks, jobids.pop()


def job_namespaces(jobid):
    try:
        return {n for n in os.listdir(netns.NETNS_DIR) if n.startswith(f"vmpi-{jobid}-")}
    except FileNotFoundError:
        return set()


def check_all_gone(jobid, ranks, shm_dir, mounts, ns_grace=0.0):
    """Nothing of the job (4 ranks, one per VM) is left.

    A namespace goes with its last process once that is reaped: at once
    when vmpirun ends the job; with ``ns_grace`` seconds for the machine's
    init to reap ranks whose launcher was killed.
    """
    assert holders(jobid) == []
    assert wait_all_dead([pid for pid, _ in ranks.values()]) == []
    vm_ns = set().union(*(nss for _, nss in ranks.values()))
    assert len(vm_ns) == 4 * 4          # 4 VMs, 4 namespaces each
    deadline = time.monotonic() + ns_grace
    while vm_ns & ns_refs() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert vm_ns & ns_refs() == set()
    assert [n for n in os.listdir(shm_dir) if jobid in n] == []
    assert job_namespaces(jobid) == set()
    assert mountinfo() == mounts


@needs_vms
@needs_hosts
@pytest.mark.parametrize("how,code", [("ends", 0), ("rank fails", 3), ("rank killed", 137),
                                      ("timeout", 124), ("SIGINT", 130), ("SIGTERM", 143)])
def test_everything_removed_however_the_job_ends(tmp_path, how, code):
    mounts = mountinfo()
    args = ["-n", 4, "--hosts", 2, "--vms", 2]
    if how == "timeout":
        args[:0] = ["--timeout", 3]
    p = start_vmpirun(tmp_path, *args, *WAITER)
    t0 = None
    try:
        ranks, jobid = wait_ready(tmp_path, 4)
        # 2 processes per VM: unshare and PID 1 of the VM
        assert len(holders(jobid)) == 4 * 2
        region = Path(shm.default_shm_dir()) / f"vmpi-{jobid}-ivshmem-h1"
        assert region.stat().st_size == vms.DEFAULT_IVSHMEM_SIZE
        assert len(job_namespaces(jobid)) == 3
        t0 = time.monotonic()
        if how == "ends":
            (tmp_path / "go").touch()
        elif how == "rank fails":
            (tmp_path / "2.fail").touch()
        elif how == "rank killed":
            os.kill(ranks[3][0], signal.SIGKILL)
        elif how.startswith("SIG"):
            p.send_signal(getattr(signal, how))
    finally:
        rc, _, err = finish(p, 20)
    took = time.monotonic() - t0
    assert rc == code, err
    if how == "rank fails":
        assert (f"vmpirun: rank 2 (pid {ranks[2][0]}, host 1, VM 0) exited with code 3 without "
                "calling MPI_Finalize; aborting job\n") in err
    elif how == "rank killed":
        assert (f"vmpirun: rank 3 (pid {ranks[3][0]}, host 1, VM 1) killed by signal 9 "
                "(SIGKILL); aborting job\n") in err
        assert took < 5.0, f"the job took {took:.1f} s to end"
    elif how == "SIGINT":
        assert "vmpirun: caught SIGINT; terminating 4 rank(s)\n" in err
    check_all_gone(jobid, ranks, shm.default_shm_dir(), mounts)


@needs_vms
@needs_hosts
@pytest.mark.parametrize("user", [None, "nobody"])
def test_cleanup_after_the_launcher_was_killed(tmp_path, request, user):
    if user and not nobody_can_run_vmpirun():
        pytest.skip("needs a repository user 65534 can read")
    mounts = mountinfo()
    shm_dir = tmp_path / "shm"
    shm_dir.mkdir()
    # the ranks' directory: one the user may write
    d = request.getfixturevalue("open_dir") if user else tmp_path / "d"
    d.mkdir(exist_ok=True)
    env = {"VMPI_SHM_DIR": str(shm_dir)}
    p = start_vmpirun(d, "-n", 4, "--hosts", 2, "--vms", 2,
                      *(["--user", NOBODY.pw_name] if user else []), *WAITER, env=env)
    try:
        ranks, jobid = wait_ready(d, 4)
        region = shm_dir / f"vmpi-{jobid}-ivshmem-h0"
        assert region.stat().st_uid == (NOBODY.pw_uid if user else os.geteuid())
        assert region.stat().st_mode & 0o777 == 0o600
        p.kill()
        p.wait()
        # the ranks and the VMs die with their launcher (PR_SET_PDEATHSIG) ...
        assert wait_all_dead([pid for pid, _ in ranks.values()]) == []
        deadline = time.monotonic() + 5
        while holders(jobid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert holders(jobid) == []
        # ... but nothing removed the regions and the network namespaces
        assert f"vmpi-{jobid}-ivshmem-h0" in os.listdir(shm_dir)
        assert len(job_namespaces(jobid)) == 3
        cp, _ = run_vmpirun("--cleanup", "-v", env=env)
        assert cp.returncode == 0, cp.stderr
        for h in range(2):
            assert f"vmpirun: removed {shm_dir}/vmpi-{jobid}-ivshmem-h{h}\n" in cp.stdout
        assert f"job {jobid}: gone, removed 3 network namespace(s)" in cp.stdout
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    check_all_gone(jobid, ranks, shm_dir, mounts, ns_grace=10.0)


def fake_holder(jobid, launcher_id, name):
    """A process whose command line is that of a VM holder (it only sleeps)."""
    return subprocess.Popen([sys.executable, "-S", "-c", "import time; time.sleep(60)",
                             *vms.holder_args(jobid, launcher_id, name, "/dev/null",
                                              "127.0.0.1\th0-vm0\n", "")])


def test_cleanup_stops_holders_of_dead_launchers_only(tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale_job, live_job = secrets.token_hex(16), secrets.token_hex(16)
    me = f"{os.getpid()}:{shm.proc_starttime(os.getpid())}"
    stale = [fake_holder(stale_job, f"{dead.pid}:1234", name) for name in ("h0-vm0", "h0-vm1")]
    live = fake_holder(live_job, me, "h0-vm0")
    try:
        deadline = time.monotonic() + 10
        while len(holders(stale_job) + holders(live_job)) < 3:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        cp, _ = run_vmpirun("--cleanup", "-v", env={"VMPI_SHM_DIR": str(tmp_path)})
        assert cp.returncode == 0, cp.stderr
        assert f"vmpirun: job {stale_job}: gone, stopped 2 VM(s)\n" in cp.stdout
        assert f"vmpirun: stopped VM {stale_job}/h0-vm1\n" in cp.stdout
        assert f"vmpirun: job {live_job}: launcher running, kept 1 VM(s)\n" in cp.stdout
        assert [h.wait(timeout=5) for h in stale] == [-signal.SIGKILL] * 2
        assert live.poll() is None
    finally:
        for h in stale + [live]:
            h.kill()
            h.wait()


# --- errors ------------------------------------------------------------------------

@pytest.mark.parametrize("args,msg", [
    (["-n", 4, "--ivshmem-size", "1M"], "--ivshmem-size needs --vms or --vm-guests"),
    (["-n", 4, "--vms", 0], "--vms: the number of VMs per host must be at least 1"),
    (["-n", 4, "--vms", "two"], "--vms: not a number: 'two'"),
    (["-n", 3, "--vms", 4], "--vms 4: more VMs than ranks (3)"),
    (["-n", 5, "--hosts", 2, "--vms", 3], "--hosts 2 --vms 3: more VMs (6) than ranks (5)"),
    (["-n", 2, "--vms", 2, "--ivshmem-size", "12X"],
     "--ivshmem-size: not a size: '12X' (bytes, or a number with K, M or G)"),
    (["-n", 2, "--vms", 2, "--ivshmem-size", "1000"],
     "--ivshmem-size: must be a positive multiple of the page size (4096 bytes)"),
    (["-n", 2, "--vms", 2, "--ivshmem-size", "0"],
     "--ivshmem-size: must be a positive multiple of the page size (4096 bytes)"),
])
def test_bad_vms_is_a_usage_error(args, msg):
    if os.sysconf("SC_PAGE_SIZE") != 4096 and "page size" in msg:
        pytest.skip("the message names a 4 KiB page")
    cp, _ = run_vmpirun(*args, "true")
    assert cp.returncode == 2
    assert cp.stderr.startswith(f"vmpirun: {msg}\nusage:")


@pytest.mark.parametrize("nlocal,gib", [(1, 4), (32, 4), (37, 4), (38, 5), (64, 11), (80, 16)])
def test_region_size_grows_with_the_ranks_of_a_host(nlocal, gib):
    assert vms.region_size(nlocal) == gib << 30


@needs_vms
def test_32_ranks_in_4_vms_fit_the_default_region(tmp_path):
    """Their channels need more than 1 GiB of the region (the default is
    sized for them and a job's spawned children)."""
    cp, _ = run_vmpirun("-n", 32, "--vms", 4,
                        BUILD / "tests" / "t_comm_basic", timeout=300)
    assert cp.returncode == 0, cp.stdout + cp.stderr


@pytest.mark.parametrize("text,size", [("4096", 4096), ("64K", 65536), ("256m", 256 << 20),
                                       ("2G", 2 << 30)])
def test_parse_size(text, size):
    assert vms.parse_size(text) == size
    assert launcher.parse_args(["--vms", "1", "--ivshmem-size", text, "true"]).ivshmem_size == size


@pytest.mark.skipif(not nobody_can_run_vmpirun(),
                    reason="needs root, setpriv, and a repository user 65534 can read")
def test_unprivileged_user_gets_a_clear_error():
    d = tempfile.mkdtemp(prefix="vmpi-test-")
    try:
        cp = run_vmpirun_as_nobody("-n", 2, "--vms", 2, "touch", f"{d}/started", shm_dir=d)
        assert cp.returncode == 1
        assert cp.stderr == ("vmpirun: --vms needs CAP_SYS_ADMIN and CAP_SYS_CHROOT to create "
                             "namespaces and mounts (run as root): this process lacks "
                             "CAP_SYS_ADMIN and CAP_SYS_CHROOT\n")
        assert cp.stdout == ""
        assert os.listdir(d) == []
    finally:
        shutil.rmtree(d)


def test_missing_unshare_tool(monkeypatch, capfd, tmp_path):
    monkeypatch.setattr(netns, "missing_caps", lambda *caps: [])
    monkeypatch.setattr(vms, "_find_unshare", lambda: None)
    assert launcher.main(["-n", "2", "--vms", "2", "touch", str(tmp_path / "started")]) == 1
    out, err = capfd.readouterr()
    assert out == ""
    assert err == ("vmpirun: --vms needs the unshare tool (util-linux) to create namespaces: "
                   "unshare not found in PATH, /usr/bin or /bin\n")
    assert not (tmp_path / "started").exists()


@needs_vms
def test_failed_setup_exits_1_and_leaves_nothing(tmp_path):
    # a working directory the VMs cannot see: their /dev/shm is their own
    cwd = Path(tempfile.mkdtemp(prefix="vmpi-test-", dir="/dev/shm"))
    shm_dir = tmp_path / "shm"
    shm_dir.mkdir()
    mounts, before = mountinfo(), set(holders())
    try:
        cp, _ = run_vmpirun("-n", 2, "--vms", 2, "touch", str(tmp_path / "started"),
                            cwd=cwd, env={"VMPI_SHM_DIR": str(shm_dir)})
    finally:
        cwd.rmdir()
    assert cp.returncode == 1
    assert cp.stderr == (f"vmpirun: --vms: the working directory {cwd} does not exist inside "
                         "the VMs (their /dev/shm and /run/vmpi are their own)\n")
    assert not (tmp_path / "started").exists()
    assert os.listdir(shm_dir) == []
    assert set(holders()) <= before
    assert mountinfo() == mounts


# --- a real MPI program -------------------------------------------------------------

P2P = ROOT / "build" / "tests" / "t_p2p_order"


@needs_vms
@needs_hosts
@pytest.mark.skipif(not P2P.exists(), reason="needs the library build (build/tests)")
@pytest.mark.parametrize("layout", [["--vms", 2], ["--hosts", 2, "--vms", 2]])
def test_mpi_program_in_vms(layout):
    cp, _ = run_vmpirun("-n", 4, *layout, P2P, timeout=120)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert "t_p2p_order: OK (4 ranks)" in cp.stdout
