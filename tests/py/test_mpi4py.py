"""mpi4py, built from source with vmpi's mpicc, on 4 ranks across two VMs.

The first run per build dir builds mpi4py (pinned version, from the PyPI
sdist) into a venv at $VMPI_BUILD/mpi4py-venv: a few minutes, most of it
compiling mpi4py's one large C file. Later runs reuse the venv while it was
built against the same include/mpi.h (mpi4py's build probes which MPI
functions the header declares) by the same mpicc; libmpi itself is linked
dynamically (rpath), so a rebuilt library is picked up without a rebuild.
The test is skipped only when PyPI cannot be reached.

progs/m4p_objects.py checks the values of the object API (bcast, allreduce,
gather, scatter, alltoall, send/recv of small and > 64 KiB objects,
isend/irecv, Split, Dup and attribute caching, Create_subarray, Info).

mpi4py's own test suite (the test/ directory of the same release's source,
fetched from PyPI's index like the build) runs module by module through
tools/mpi4py_suite.py on 4 ranks in two VMs.
"""
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import urllib.request
from pathlib import Path

import pytest

from vmpi import netns, vms

HERE = Path(__file__).resolve().parent
BUILD = Path(os.environ.get("VMPI_BUILD", HERE.parents[1] / "build")).resolve()
MPICC = BUILD / "bin" / "mpicc"
VMPIRUN = BUILD / "bin" / "vmpirun"
VENV = BUILD / "mpi4py-venv"
STAMP = VENV / "vmpi-stamp"
MPI4PY = "mpi4py==4.1.2"
SUITE = BUILD / "mpi4py-src"
INDEX = "https://pypi.org/simple/mpi4py/"
SDIST_SHA256 = "56860286dc45f20e8821e93cb06669e30462348bf866f685553fa4b712d58d02"
# what pip says when it cannot reach the index (no network, no DNS, proxy)
OFFLINE = re.compile(r"NewConnectionError|Network is unreachable|Temporary failure in name "
                     r"resolution|Max retries exceeded|ConnectTimeout|ProxyError|"
                     r"No matching distribution found for")

pytestmark = [
    pytest.mark.skipif(not (MPICC.is_file() and VMPIRUN.is_file()),
                       reason=f"no vmpi build at VMPI_BUILD={BUILD}"),
    pytest.mark.skipif(
        bool(netns.missing_caps((vms.CAP_SYS_ADMIN, "admin"), (vms.CAP_SYS_CHROOT, "chroot")))
        or vms._find_unshare() is None,
        reason="--vms needs root (CAP_SYS_ADMIN, CAP_SYS_CHROOT) and util-linux's unshare"),
]


def _stamp():
    """What the venv's mpi4py must have been built against."""
    header = hashlib.sha256((BUILD / "include" / "mpi.h").read_bytes()).hexdigest()
    return f"{MPI4PY} mpicc={MPICC} ldflags=-L{BUILD / 'lib'} mpi.h={header}\n"


def _run(cmd, timeout, **kw):
    """Run to completion; on a timeout kill its whole session (pip's build
    children too), then raise."""
    p = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True, **kw)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


@pytest.fixture(scope="module")
def python():
    """The venv's python, with mpi4py built against this build's mpi.h."""
    py = VENV / "bin" / "python"
    if STAMP.is_file() and STAMP.read_text() == _stamp() and py.is_file():
        return py
    shutil.rmtree(VENV, ignore_errors=True)
    cp = _run([sys.executable, "-m", "venv", VENV], 120)
    assert cp.returncode == 0, cp.stderr
    # -O0: the build is mostly one ~10 MB C file; optimizing it costs minutes
    # and nothing this test measures
    # LDFLAGS: setuptools puts -L<python's LIBDIR> (/usr/lib/x86_64-linux-gnu
    # with Debian's shared libpython) before mpicc's own -L, where -lmpi would
    # find another MPI's libmpi.so; LDFLAGS comes first of all
    env = dict(os.environ, MPICC=str(MPICC), CFLAGS="-O0", LDFLAGS=f"-L{BUILD / 'lib'}")
    cp = _run([py, "-m", "pip", "install", "--no-cache-dir", "--no-binary", "mpi4py", MPI4PY],
              1800, env=env)
    if cp.returncode != 0:
        shutil.rmtree(VENV, ignore_errors=True)
        if OFFLINE.search(cp.stdout + cp.stderr):
            pytest.skip(f"cannot reach PyPI for {MPI4PY}: "
                        f"{(cp.stderr.strip().splitlines() or ['?'])[-1]}")
    assert cp.returncode == 0, (f"building mpi4py with {MPICC} failed:\n"
                                f"{cp.stdout[-3000:]}\n{cp.stderr[-3000:]}")
    STAMP.write_text(_stamp())
    return py


def test_mpi4py_links_this_vmpi(python):
    """The extension module is vmpi's: MPI_Get_library_version names vmpi, and
    the dynamic loader resolves its one MPI library to this build's libvmpi
    (not another MPI's libmpi.so found first on the link line)."""
    cp = _run([python, "-c", "from mpi4py import MPI; import mpi4py.MPI as m; "
               "print(MPI.Get_library_version()); print(m.__file__)"], 60)
    assert cp.returncode == 0, cp.stderr
    version, ext = cp.stdout.strip().splitlines()[:2]
    assert version.startswith("vmpi "), version
    ldd = _run(["ldd", ext], 60).stdout
    mpis = [ln for ln in ldd.splitlines() if "libmpi" in ln or "libvmpi" in ln]
    assert len(mpis) == 1 and "libvmpi" in mpis[0] and str(BUILD / "lib") in mpis[0], ldd


def test_mpi4py_object_api_two_vms(python):
    cp = _run([VMPIRUN, "-n", 4, "--vms", 2, python, HERE / "progs" / "m4p_objects.py"], 120)
    assert cp.returncode == 0, f"rc={cp.returncode}\n{cp.stdout}\n{cp.stderr}"
    assert "mpi4py object API: OK h0-vm0, h0-vm1" in cp.stdout, cp.stdout


def test_mpi4py_futures_pool(python):
    """MPIPoolExecutor: the pool's workers are spawned processes (issue 30)."""
    cp = _run([VMPIRUN, "-n", 1, "--timeout", 100, python, HERE / "progs" / "m4p_futures.py"],
              120)
    assert cp.returncode == 0, f"rc={cp.returncode}\n{cp.stdout}\n{cp.stderr}"
    assert "mpi4py.futures: OK 40 tasks on" in cp.stdout, cp.stdout


@pytest.fixture(scope="module")
def suite():
    """The test/ directory of mpi4py's source release, from the package
    index, checked against the release's sha256."""
    version = MPI4PY.split("==")[1]
    tests = SUITE / f"mpi4py-{version}" / "test"
    if (tests / "main.py").is_file():
        return tests
    name = f"mpi4py-{version}.tar.gz"
    try:
        page = urllib.request.urlopen(INDEX, timeout=60).read().decode()
        m = re.search(r'href="([^"#]*/' + re.escape(name) + r')#', page)
        assert m, f"{INDEX} lists no {name}"
        data = urllib.request.urlopen(m.group(1), timeout=300).read()
    except OSError as e:
        pytest.skip(f"cannot reach {INDEX}: {e}")
    assert hashlib.sha256(data).hexdigest() == SDIST_SHA256, f"{name}: sha256 differs"
    # into a fresh directory, renamed when whole: a half extraction is never
    # taken for the suite
    shutil.rmtree(SUITE, ignore_errors=True)
    part = SUITE.with_name(SUITE.name + ".part")
    shutil.rmtree(part, ignore_errors=True)
    part.mkdir(parents=True)
    (part / name).write_bytes(data)
    with tarfile.open(part / name) as t:
        members = [x for x in t.getmembers() if x.name.startswith(f"mpi4py-{version}/test/")
                   and ".." not in x.name and (x.isfile() or x.isdir())]
        for x in members:   # as plain files of ours, whatever the archive says
            x.mode = 0o755 if x.isdir() else 0o644
            x.uid = x.gid = 0
            x.uname = x.gname = ""
        # (Debian 12's Python 3.11.2 predates extractall's filter argument)
        t.extractall(part, members=members)
    part.rename(SUITE)
    return tests


def test_mpi4py_own_suite_4_ranks_in_2_vms(python, suite, tmp_path):
    """Every module of mpi4py's own test suite passes on 4 ranks in two
    emulated VMs: each rank's unittest run says OK and the job exits 0.
    (What mpi4py skips as features newer than MPI-3.1, e.g. persistent
    collectives and sessions, it skips by probing, not by vmpi's name.)"""
    mods = sorted(p.stem for p in suite.glob("test_*.py"))
    assert len(mods) > 50, mods
    out = tmp_path / "suite"
    cp = _run([sys.executable, HERE.parents[1] / "tools" / "mpi4py_suite.py", "--suite", suite,
               "--build", BUILD, "--vmpi-python", python, "--np", 4, "--vms", 2,
               "--timeout", 120, "--modules", *mods, "--out", out], 3600)
    assert (out / "table.md").is_file(), cp.stdout + cp.stderr
    results = json.loads((out / "results.json").read_text())
    assert sorted(r["module"] for r in results) == mods
    assert cp.returncode == 0 and all(r["status"] == "pass" for r in results), \
        (out / "table.md").read_text()
    assert sum(r["ran"] for r in results) > 1000, cp.stdout
