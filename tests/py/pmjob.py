"""Shared by the process-manager tests (test_pmix.py, test_slurm.py): the
helper program tests/py/progs/pm_check.c built with the tested mpicc, and
the check of what its `check` mode prints."""
import os
import re
import subprocess
from pathlib import Path

BUILD = Path(os.environ.get("VMPI_BUILD", "/work/main/build")).resolve()
MPICC = BUILD / "bin" / "mpicc"
PROG = Path(__file__).resolve().parent / "progs" / "pm_check.c"

RANK_RE = re.compile(r"^rank (\d+) of (\d+) local (\d+)$", re.M)


def have_build():
    return MPICC.is_file() and os.access(MPICC, os.X_OK)


NO_BUILD = f"no vmpi build at VMPI_BUILD={BUILD} (need bin/mpicc)"


def build(outdir):
    """pm_check built with the tested mpicc into outdir."""
    out = Path(outdir) / "pm_check"
    # a sanitized library needs its run-time first in the program
    cache = BUILD / "CMakeCache.txt"
    san = (["-fsanitize=address,undefined"]
           if cache.exists() and "VMPI_SANITIZE:BOOL=ON" in cache.read_text() else [])
    cp = subprocess.run([str(MPICC), "-O1", "-g", *san, "-o", str(out), str(PROG)],
                        capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, f"mpicc failed:\n{cp.stdout}\n{cp.stderr}"
    return out


def assert_checked(cp, n, local=None):
    """Every one of n ranks said it is rank r of n (with `local` ranks in
    its shared-memory communicator, n by default: one machine), the ring
    and the allreduces held, and the job exited 0."""
    out = cp.stdout + cp.stderr
    assert cp.returncode == 0, (cp.returncode, out)
    ranks = sorted((int(r), int(s), int(l)) for r, s, l in RANK_RE.findall(cp.stdout))
    assert ranks == [(r, n, local or n) for r in range(n)], out
    assert f"ok {n} {n * (n + 1) // 2} {n - 1}" in cp.stdout.splitlines(), out


def run(cmd, timeout, env=None, cwd=None):
    """Run cmd to completion; on timeout kill it and fail saying so (a hung
    job must not take the test run with it)."""
    full = dict(os.environ)
    full.update(env or {})
    try:
        return subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                              timeout=timeout, env=full, cwd=cwd)
    except subprocess.TimeoutExpired as e:
        said = [s.decode(errors="replace") if isinstance(s, bytes) else s or ""
                for s in (e.stdout, e.stderr)]
        raise AssertionError(f"{' '.join(map(str, cmd))} did not finish within {timeout} s; "
                             f"output so far:\n{said[0]}\n{said[1]}") from None
