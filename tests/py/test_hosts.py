"""vmpirun --hosts: emulated hosts as network namespaces on one machine.

The ranks here are small shell or Python programs (no MPI library): they
report what they see (namespaces, interfaces, environment) or wait for a
go file while the test looks at the machine from outside.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from vmpi import launcher, netns, placement

from conftest import (finish, nobody_can_run_vmpirun, run_vmpirun, run_vmpirun_as_nobody,
                      start_vmpirun, wait_all_dead)

IP = netns.find_ip()
needs_netns = pytest.mark.skipif(
    bool(netns._missing_caps()) or IP is None,
    reason="needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN) and iproute2's ip")


def py(code, *args):
    """A rank program: Python code run with the test's interpreter."""
    return [sys.executable, "-S", "-c", textwrap.dedent(code), *map(str, args)]


def vmpi_namespaces():
    try:
        return {n for n in os.listdir(netns.NETNS_DIR) if n.startswith("vmpi-")}
    except FileNotFoundError:
        return set()


def job_namespaces(jobid):
    return {n for n in vmpi_namespaces() if n.startswith(f"vmpi-{jobid}-")}


def records():
    try:
        return set(os.listdir(netns.RUN_DIR))
    except FileNotFoundError:
        return set()


def root_net():
    """The links and addresses of this (the machine's own) network namespace."""
    links = set()
    for line in subprocess.run([IP, "-o", "link"], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        links.add(line.split(":")[1].strip().split("@")[0])
    addrs = set()
    for line in subprocess.run([IP, "-o", "addr"], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        f = line.split()
        addrs.add((f[1], f[2], f[3]))
    return links, addrs


# A rank that says it is ready (pid and job id in DIR/<rank>.ready), then
# exits 0 once DIR/go exists, or 3 once DIR/<rank>.fail exists.
WAITER = ["sh", "-c", textwrap.dedent("""\
    echo "$$ $VMPI_JOB_ID" > "$DIR/$PMI_RANK.tmp" && mv "$DIR/$PMI_RANK.tmp" "$DIR/$PMI_RANK.ready"
    while [ ! -e "$DIR/go" ]; do
        if [ -e "$DIR/$PMI_RANK.fail" ]; then exit 3; fi
        sleep 0.05
    done
    """)]


def wait_ready(d, n, timeout=10.0):
    """Wait for n waiters; return ({rank: pid}, jobid)."""
    deadline = time.monotonic() + timeout
    while True:
        files = list(Path(d).glob("*.ready"))
        if len(files) >= n or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    pids, jobids = {}, set()
    for f in files:
        pid, jobid = f.read_text().split()
        pids[int(f.name.split(".")[0])] = int(pid)
        jobids.add(jobid)
    assert len(pids) == n and len(jobids) == 1, (pids, jobids)
    return pids, jobids.pop()


def start_waiters(d, *args, env=None):
    return start_vmpirun(d, *args, *WAITER, env=env)


# --- placement, namespaces, addresses, environment ---------------------------

INFO = """\
    import json, os, socket, subprocess, sys
    # lo must be up: a TCP connection to ourselves
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    socket.create_connection(s.getsockname(), timeout=2).close()
    words = subprocess.run([sys.argv[1], "-o", "-4", "addr", "show", "dev", "vmpi0"],
                           capture_output=True, text=True).stdout.split()
    keys = ["VMPI_HOST_INDEX", "VMPI_HOST_ADDR", "VMPI_LOCAL_RANK", "VMPI_LOCAL_SIZE",
            "MPI_LOCALRANKID", "MPI_LOCALNRANKS", "FI_TCP_IFACE", "UCX_NET_DEVICES"]
    print(json.dumps({
        "rank": int(os.environ["PMI_RANK"]),
        "env": {k: os.environ.get(k) for k in keys},
        "net": os.readlink("/proc/self/ns/net"),
        "mnt": os.readlink("/proc/self/ns/mnt"),
        "ifaces": sorted(name for _, name in socket.if_nameindex()),
        "inet": [w for a, w in zip(words, words[1:]) if a == "inet"],
    }))
"""


def run_info(*args, env=None):
    cp, elapsed = run_vmpirun(*args, *py(INFO, IP), env=env)
    assert cp.returncode == 0, cp.stderr
    rows = {}
    for line in cp.stdout.splitlines():
        row = json.loads(line)
        rows[row["rank"]] = row
    return rows


@needs_netns
def test_block_placement_namespaces_and_addresses(monkeypatch):
    monkeypatch.delenv("FI_TCP_IFACE", raising=False)
    monkeypatch.delenv("UCX_NET_DEVICES", raising=False)
    rows = run_info("-n", 5, "--hosts", 2)
    assert sorted(rows) == [0, 1, 2, 3, 4]
    # the first N % H hosts get the extra rank
    expect = {0: (0, 0, 3), 1: (0, 1, 3), 2: (0, 2, 3), 3: (1, 0, 2), 4: (1, 1, 2)}
    own_net = os.readlink("/proc/self/ns/net")
    own_mnt = os.readlink("/proc/self/ns/mnt")
    for r, (host, lrank, lsize) in expect.items():
        env = rows[r]["env"]
        addr = f"198.18.0.{host + 1}"
        assert env == {"VMPI_HOST_INDEX": str(host), "VMPI_HOST_ADDR": addr,
                       "VMPI_LOCAL_RANK": str(lrank), "VMPI_LOCAL_SIZE": str(lsize),
                       "MPI_LOCALRANKID": str(lrank), "MPI_LOCALNRANKS": str(lsize),
                       "FI_TCP_IFACE": "vmpi0", "UCX_NET_DEVICES": "vmpi0"}, r
        assert rows[r]["ifaces"] == ["lo", "vmpi0"]
        assert rows[r]["inet"] == [f"{addr}/15"]
        assert rows[r]["net"] != own_net
        # only the network namespace differs (not `ip netns exec`)
        assert rows[r]["mnt"] == own_mnt
    assert len({rows[r]["net"] for r in (0, 1, 2)}) == 1
    assert len({rows[r]["net"] for r in (3, 4)}) == 1
    assert rows[0]["net"] != rows[3]["net"]


@pytest.mark.parametrize("n,h,starts", [(7, 3, [0, 3, 5, 7]), (4, 4, [0, 1, 2, 3, 4]),
                                        (1, 1, [0, 1]), (8, 3, [0, 3, 6, 8])])
def test_host_blocks(n, h, starts):
    assert placement.host_starts(n, h) == starts


@needs_netns
def test_users_interface_choice_wins(monkeypatch):
    monkeypatch.setenv("UCX_NET_DEVICES", "mlx5_0:1")
    monkeypatch.delenv("FI_TCP_IFACE", raising=False)
    rows = run_info("-n", 2, "--hosts", 2, "-x", "FI_TCP_IFACE=eth7")
    for row in rows.values():
        assert row["env"]["FI_TCP_IFACE"] == "eth7"
        assert row["env"]["UCX_NET_DEVICES"] == "mlx5_0:1"


def test_without_hosts_nothing_changes(monkeypatch):
    for var in ("FI_TCP_IFACE", "UCX_NET_DEVICES", "VMPI_HOST_INDEX", "VMPI_HOST_ADDR"):
        monkeypatch.delenv(var, raising=False)
    rows = run_info("-n", 3)
    for r, row in rows.items():
        assert row["net"] == os.readlink("/proc/self/ns/net")
        assert row["env"] == {"VMPI_HOST_INDEX": None, "VMPI_HOST_ADDR": None,
                              "VMPI_LOCAL_RANK": str(r), "VMPI_LOCAL_SIZE": "3",
                              "MPI_LOCALRANKID": str(r), "MPI_LOCALNRANKS": "3",
                              "FI_TCP_IFACE": None, "UCX_NET_DEVICES": None}


# --- the network -------------------------------------------------------------

TALK = """\
    import errno, os, socket, sys, time
    rank = int(os.environ["PMI_RANK"])
    if rank == 1:
        srv = socket.create_server((os.environ["VMPI_HOST_ADDR"], 5000))
        srv.settimeout(10)
        conn, peer = srv.accept()
        conn.sendall(f"hello {peer[0]} from {os.environ['VMPI_HOST_ADDR']}".encode())
        conn.close()
        sys.exit(0)
    deadline = time.monotonic() + 10
    while True:
        try:
            c = socket.create_connection(("198.18.0.2", 5000), timeout=2)
            break
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)
    print(c.recv(100).decode())
    # no route leads out of the emulated network
    for outside in sys.argv[1:]:
        try:
            socket.create_connection((outside, 9), timeout=2)
            print(f"reached {outside}")
        except OSError as exc:
            print(f"{outside}: {errno.errorcode.get(exc.errno, exc)}")
"""


@needs_netns
def test_hosts_reach_each_other_and_nothing_else():
    _, addrs = root_net()
    outside = sorted({a.split("/")[0] for _, fam, a in addrs
                      if fam == "inet" and not a.startswith("127.")}) + ["203.0.113.1"]
    cp, _ = run_vmpirun("-n", 2, "--hosts", 2, *py(TALK, *outside))
    assert cp.returncode == 0, cp.stderr
    lines = cp.stdout.splitlines()
    assert lines[0] == "hello 198.18.0.1 from 198.18.0.2"
    assert lines[1:] == [f"{a}: ENETUNREACH" for a in outside]


@needs_netns
def test_root_namespace_untouched_and_everything_removed(tmp_path):
    links0, addrs0 = root_net()
    ns0, rec0 = vmpi_namespaces(), records()
    p = start_waiters(tmp_path, "-n", 4, "--hosts", 4)
    try:
        pids, jobid = wait_ready(tmp_path, 4)
        assert root_net() == (links0, addrs0)
        names = job_namespaces(jobid)
        assert names == {f"vmpi-{jobid}-sw"} | {f"vmpi-{jobid}-h{i}" for i in range(4)}
        assert vmpi_namespaces() - ns0 == names
        assert records() - rec0 == {f"vmpi-{jobid}.launcher"}
        ports = subprocess.run([IP, "-n", f"vmpi-{jobid}-sw", "-o", "link"], capture_output=True,
                               text=True, check=True).stdout.splitlines()
        assert sum("master br0" in line for line in ports) == 4
    finally:
        (tmp_path / "go").touch()
    rc, _, err = finish(p, 15)
    assert (rc, err) == (0, "")
    assert vmpi_namespaces() == ns0
    assert records() == rec0
    assert root_net() == (links0, addrs0)
    assert wait_all_dead(pids.values()) == []


@needs_netns
def test_setup_is_fast():
    def best(*args):
        times = []
        for _ in range(3):
            cp, elapsed = run_vmpirun("-n", 4, *args, "true")
            assert cp.returncode == 0, cp.stderr
            times.append(elapsed)
        return min(times)
    assert best("--hosts", 4) - best() < 0.5


# --- removal however the job ends ------------------------------------------------

@needs_netns
@pytest.mark.parametrize("how,code", [("rank fails", 3), ("timeout", 124),
                                      ("SIGINT", 130), ("SIGTERM", 143)])
def test_namespaces_removed_when_job_ends_badly(tmp_path, how, code):
    ns0, rec0 = vmpi_namespaces(), records()
    args = ["-n", 3, "--hosts", 3]
    if how == "timeout":
        args[:0] = ["--timeout", 2]
    p = start_waiters(tmp_path, *args)
    try:
        pids, jobid = wait_ready(tmp_path, 3)
        assert len(job_namespaces(jobid)) == 4
        if how == "rank fails":
            (tmp_path / "2.fail").touch()
        elif how.startswith("SIG"):
            p.send_signal(getattr(signal, how))
    finally:
        rc, _, err = finish(p, 15)
    assert rc == code, err
    if how == "rank fails":
        assert "rank 2 (pid" in err and "host 2)" in err
    assert vmpi_namespaces() == ns0
    assert records() == rec0
    assert wait_all_dead(pids.values()) == []


@needs_netns
def test_cleanup_after_sigkill_removes_only_stale_namespaces(tmp_path):
    shm_dir = tmp_path / "shm"
    shm_dir.mkdir()
    killed, live = tmp_path / "killed", tmp_path / "live"
    killed.mkdir()
    live.mkdir()
    env = {"VMPI_SHM_DIR": str(shm_dir)}
    # not vmpi's pattern: must survive any cleanup
    foreign = ["vmpi-foreign-h0", "vmpi-0123abcd-h0"]
    for name in foreign:
        subprocess.run([IP, "netns", "add", name], check=True)
    a = start_waiters(killed, "-n", 4, "--hosts", 2, env=env)
    b = start_waiters(live, "-n", 2, "--hosts", 2, env=env)
    try:
        pids_a, job_a = wait_ready(killed, 4)
        _, job_b = wait_ready(live, 2)
        a.kill()
        a.wait()
        # the ranks die with their launcher (PR_SET_PDEATHSIG) ...
        assert wait_all_dead(pids_a.values()) == []
        # ... but nothing removed the namespaces
        assert len(job_namespaces(job_a)) == 3
        cp, _ = run_vmpirun("--cleanup", "-v", env=env)
        assert cp.returncode == 0, cp.stderr
        assert "removed 3 stale network namespace(s)" in cp.stdout
        assert f"job {job_a}: gone, removed 3 network namespace(s)" in cp.stdout
        for name in (f"vmpi-{job_a}-sw", f"vmpi-{job_a}-h0", f"vmpi-{job_a}-h1"):
            assert f"removed network namespace {name}" in cp.stdout
        assert f"job {job_b}: launcher running, kept 3 network namespace(s)" in cp.stdout
        assert job_namespaces(job_a) == set()
        assert f"vmpi-{job_a}.launcher" not in records()
        assert len(job_namespaces(job_b)) == 3
        assert set(foreign) <= vmpi_namespaces()
    finally:
        (live / "go").touch()
        rc, _, err = finish(b, 15)
        for name in foreign:
            subprocess.run([IP, "netns", "del", name])
    assert (rc, err) == (0, "")
    assert job_namespaces(job_b) == set()
    # nothing stale is left to report
    cp, _ = run_vmpirun("--cleanup", env=env)
    assert "removed 0 stale network namespace(s)" in cp.stdout


# --- usage and privilege errors ----------------------------------------------------

@pytest.mark.parametrize("args,msg", [
    (["-n", 4, "--hosts", 5], "--hosts 5: more hosts than ranks (4)"),
    (["--hosts", 3, "-n", 2], "--hosts 3: more hosts than ranks (2)"),
    (["-n", 4, "--hosts", 0], "--hosts: the number of hosts must be at least 1"),
    (["-n", 4, "--hosts", "two"], "--hosts: not a number: 'two'"),
    (["-n", 2000, "--hosts", 1024], "--hosts: at most 1023 hosts"),
])
def test_bad_hosts_is_a_usage_error(args, msg):
    ns0 = vmpi_namespaces()
    cp, _ = run_vmpirun(*args, "true")
    assert cp.returncode == 2
    assert cp.stderr.startswith(f"vmpirun: {msg}\nusage:")
    assert vmpi_namespaces() == ns0


@pytest.mark.skipif(not nobody_can_run_vmpirun(),
                    reason="needs root, setpriv, and a repository user 65534 can read")
def test_unprivileged_user_gets_a_clear_error():
    ns0, rec0 = vmpi_namespaces(), records()
    d = tempfile.mkdtemp(prefix="vmpi-test-")
    try:
        cp = run_vmpirun_as_nobody("-n", 2, "--hosts", 2, "touch", f"{d}/started", shm_dir=d)
        assert cp.returncode == 1
        assert cp.stderr == ("vmpirun: --hosts needs CAP_SYS_ADMIN and CAP_NET_ADMIN to create "
                             "network namespaces (run as root): this process lacks "
                             "CAP_SYS_ADMIN and CAP_NET_ADMIN\n")
        assert cp.stdout == ""
        assert os.listdir(d) == []          # no rank ran, no pid file is left
    finally:
        shutil.rmtree(d)
    assert vmpi_namespaces() == ns0
    assert records() == rec0


def test_missing_ip_tool(monkeypatch, capfd, tmp_path):
    monkeypatch.setattr(netns, "_missing_caps", lambda: [])
    monkeypatch.setattr(netns, "find_ip", lambda: None)
    assert launcher.main(["-n", "2", "--hosts", "2", "touch", str(tmp_path / "started")]) == 1
    out, err = capfd.readouterr()
    assert out == ""
    assert err == ("vmpirun: --hosts needs the ip tool (iproute2) to create network namespaces: "
                   "ip not found in PATH, /usr/sbin or /sbin\n")
    assert not (tmp_path / "started").exists()


@needs_netns
def test_failed_setup_exits_1_and_leaves_nothing(monkeypatch, capfd, tmp_path):
    # an interface name the kernel refuses makes the set-up fail half-way,
    # after the namespaces exist
    monkeypatch.setattr(netns, "IFACE", "x" * 20)
    monkeypatch.setenv("VMPI_SHM_DIR", str(tmp_path))
    ns0, rec0 = vmpi_namespaces(), records()
    assert launcher.main(["-n", "2", "--hosts", "2", "touch", str(tmp_path / "started")]) == 1
    out, err = capfd.readouterr()
    assert out == ""
    assert err.startswith("vmpirun: --hosts: cannot create the network namespaces of 2 host(s): ")
    assert err.count("\n") == 1
    assert vmpi_namespaces() == ns0
    assert records() == rec0
    assert os.listdir(tmp_path) == []
