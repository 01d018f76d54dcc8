"""Every command answers --help and --version with exit 0 and the version of
pyproject.toml; an installed tree runs `vmpi study`, figures included, in its
own venv (issue 30, part 7)."""
import os
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("VMPI_BUILD", "/work/main/build")).resolve()
with open(ROOT / "pyproject.toml", "rb") as f:
    VERSION = tomllib.load(f)["project"]["version"]

COMMANDS = [["bin/vmpi"], ["bin/vmpi", "study"], ["bin/vmpi", "study", "compare"],
            ["bin/vmpi", "study", "report"], ["bin/vmpi", "info"], ["bin/vmpi", "vm"],
            ["bin/vmpi", "cleanup"], ["bin/vmpi", "run"], ["bin/vmpirun"], ["bin/mpicc"],
            ["bin/mpicxx"], ["bin/mpifort"], ["bin/vmpi-stencil"], ["bin/vmpi-fft"],
            ["bin/vmpi-sort"], ["bin/vmpi-bfs"]]
BENCH = ["latency", "multi_lat", "ring", "bw", "bibw", "mbw_mr", "coll", "neighbor", "rma", "rma_lock",
         "threads", "startup", "clping", "tcpping", "lockbench"]
COMMANDS += [[f"bench/{b}"] for b in BENCH]


def call(cmd, *args, env=None, timeout=60):
    exe = BUILD / cmd[0]
    if not exe.exists():
        pytest.skip(f"{exe} is not built")
    return subprocess.run([str(exe), *cmd[1:], *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


@pytest.mark.parametrize("cmd", COMMANDS, ids=" ".join)
def test_version(cmd):
    cp = call(cmd, "--version")
    assert cp.returncode == 0, cp.stdout + cp.stderr
    first = cp.stdout.splitlines()[0]
    assert VERSION in first and "vmpi" in first, cp.stdout


@pytest.mark.parametrize("cmd", COMMANDS, ids=" ".join)
def test_help(cmd):
    cp = call(cmd, "--help")
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert "usage" in cp.stdout.lower(), cp.stdout


def test_mpi_benchmarks_name_the_library():
    """The MPI programs also print the library's own version line."""
    cp = call(["bench/latency"], "--version")
    assert cp.stdout.splitlines()[1].startswith(f"vmpi {VERSION} (MPI 3.1"), cp.stdout


def test_installed_study_runs_in_its_venv(tmp_path):
    """`make install` = cmake --install + tools/install_venv.sh: the installed
    vmpi runs a study and draws its figures with nothing of the project's
    .venv on PATH."""
    prefix = tmp_path / "prefix"
    cp = subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(prefix)],
                        capture_output=True, text=True, timeout=300)
    assert cp.returncode == 0, cp.stderr
    cp = subprocess.run(["sh", str(ROOT / "tools" / "install_venv.sh"), str(prefix)],
                        capture_output=True, text=True, timeout=600)
    if cp.returncode != 0 and "no package index" in cp.stderr:
        pytest.skip(f"pip has no package index here: {cp.stderr.strip()}")
    assert cp.returncode == 0, cp.stdout + cp.stderr
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    vmpi = prefix / "bin" / "vmpi"
    cp = subprocess.run([str(vmpi), "study", "--quick", "--bench", "latency", "--libraries",
                         "vmpi", "--placements", "vm", "--reps", "1", "--out",
                         str(tmp_path / "st")], capture_output=True, text=True, timeout=300,
                        env=env, cwd=tmp_path)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert (tmp_path / "st" / "figures" / "latency.png").stat().st_size > 0
    assert str(BUILD) not in (tmp_path / "st" / "study.json").read_text()
