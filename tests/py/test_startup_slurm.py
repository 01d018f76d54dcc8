"""bench/startup_slurm.sh end to end: its own one-machine Slurm, one run of
vmpi and MPICH (and Open MPI where Slurm has pmix) at 2 ranks, the table of
bench/compare.py, and no daemon left behind. Skips where Slurm cannot start
(not root, not installed), as tests/py/test_slurm.py does."""
import os
import subprocess

import pytest

import pmjob
from conftest import ROOT
from vmpi import slurm_local

WHY = slurm_local.why_not() if pmjob.have_build() else pmjob.NO_BUILD
pytestmark = pytest.mark.skipif(WHY is not None, reason=str(WHY))


def daemons():
    cp = subprocess.run(["pgrep", "-f", "vmpi-slurm-"], capture_output=True, text=True)
    return cp.stdout.split()


def test_startup_slurm_table():
    build = os.environ.get("VMPI_BUILD", str(ROOT / "build"))
    cp = subprocess.run(["sh", str(ROOT / "bench" / "startup_slurm.sh"), build],
                        env=dict(os.environ, REPS="1", RANKS="2"), capture_output=True,
                        text=True, timeout=300)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    lines = [ln.split() for ln in cp.stdout.splitlines() if ln and not ln.startswith("#")]
    # one row: the rank count's time under each library, then the ratios
    assert len(lines) == 1, cp.stdout
    row = lines[0]
    assert len(row) in (4, 6), cp.stdout
    assert all(float(v) > 0 for v in row[1:]), cp.stdout
    assert daemons() == []
