"""Shared helpers for the vmpirun tests."""
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYDIR = ROOT / "python"
VMPIRUN = PYDIR / "vmpirun"
FAKE = Path(__file__).resolve().parent / "helpers" / "fake_rank.py"

if str(PYDIR) not in sys.path:
    sys.path.insert(0, str(PYDIR))


def vmpirun_cmd(*args):
    return [sys.executable, "-S", str(VMPIRUN), *map(str, args)]


def fake(*args):
    """The command line of the fake rank program."""
    return [sys.executable, "-S", str(FAKE), *map(str, args)]


def run_vmpirun(*args, timeout=20, env=None, **kw):
    """Run vmpirun to completion; return (CompletedProcess, seconds)."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    t0 = time.monotonic()
    cp = subprocess.run(vmpirun_cmd(*args), capture_output=True, text=True,
                        timeout=timeout, env=full_env, **kw)
    return cp, time.monotonic() - t0


def alive(pid):
    """Whether pid is a running (not zombie) process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
    except OSError:
        return False
    state = data[data.rfind(")") + 2:].split()[0]
    return state not in ("Z", "X")


def read_pids(piddir, nranks, timeout=10.0):
    """Wait for the fake ranks' pid files; return {rank: (pid, grandchild)}."""
    deadline = time.monotonic() + timeout
    while True:
        pids = {}
        for r in range(nranks):
            p = Path(piddir) / f"{r}.pid"
            if p.exists():
                pid, gc = p.read_text().split()
                pids[r] = (int(pid), int(gc))
        if len(pids) == nranks or time.monotonic() > deadline:
            return pids
        time.sleep(0.02)


def since_last_pidfile(piddir):
    """Seconds since the last fake rank wrote its pid file.

    The ranks write them right before they sync and act, so this measures
    the teardown without the (load-dependent) start-up of the job.
    """
    newest = max(p.stat().st_mtime for p in Path(piddir).glob("*.pid"))
    return time.time() - newest


def wait_all_dead(pids, timeout=2.0):
    """Wait until none of pids is alive; return the survivors."""
    deadline = time.monotonic() + timeout
    while True:
        left = [p for p in pids if p and alive(p)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.02)


@pytest.fixture
def piddir(tmp_path):
    d = tmp_path / "pids"
    d.mkdir()
    return d


def nobody_can_run_vmpirun():
    """Whether user 65534 can run vmpirun here (root, setpriv, readable tree)."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return False
    cp = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                         *vmpirun_cmd("--version")], capture_output=True, text=True)
    return cp.returncode == 0


def run_vmpirun_as_nobody(*args, shm_dir):
    """Run vmpirun ARGS as user 65534 with VMPI_SHM_DIR=shm_dir (made writable)."""
    os.chmod(shm_dir, 0o777)
    env = dict(os.environ, VMPI_SHM_DIR=str(shm_dir))
    return subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                           *vmpirun_cmd(*args)], capture_output=True, text=True, env=env,
                          timeout=20)


def start_vmpirun(d, *args, env=None):
    """Start vmpirun ARGS in the background with DIR=d in the environment."""
    full = dict(os.environ, DIR=str(d), **(env or {}))
    return subprocess.Popen(vmpirun_cmd(*args), env=full, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(p, timeout):
    """Wait for a started vmpirun; kill it if it outlives timeout.

    Returns (exit code, stdout, stderr)."""
    try:
        out, err = p.communicate(timeout=timeout)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return p.returncode, out, err
