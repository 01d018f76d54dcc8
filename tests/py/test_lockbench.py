"""lockbench's output formats and the lock plot: the JSON fields the study
and bench/locks.py read, the sweep file, and the strictly FIFO opportunistic
lock as a series of its own."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("VMPI_BUILD", ROOT / "build")).resolve()
LOCKBENCH = BUILD / "bench" / "lockbench"
LOCKPLOT = ROOT / "bench" / "lockplot.py"

pytestmark = pytest.mark.skipif(not LOCKBENCH.exists(), reason="lockbench not built")


def lockbench(*args):
    cp = subprocess.run([str(LOCKBENCH), *map(str, args)], capture_output=True, text=True,
                        timeout=60)
    assert cp.returncode == 0, cp.stderr
    return cp.stdout


def test_json_fields_and_counts():
    rows = json.loads(lockbench("--lock", "oticket", "--threads", 4, "--duration", 0.2,
                                "--json", "--steal-ns", 50000, "--steal-spin", 32))
    assert len(rows) == 1
    r = rows[0]
    assert (r["lock"], r["park"], r["threads"]) == ("oticket", "futex", 4)
    assert (r["steal_ns"], r["steal_spin"]) == (50000, 32)
    assert r["acquisitions"] > 0
    assert r["throughput"] == pytest.approx(r["acquisitions"] / r["duration_s"], rel=0.01)
    assert 0.25 <= r["jain"] <= 1.0
    assert 0.5 <= r["top_half_fraction"] <= 1.0
    assert 0 < r["lat_p50_ns"] <= r["lat_p99_ns"] <= r["lat_p999_ns"]


def test_steal_off_is_null():
    r = json.loads(lockbench("--lock", "oticket", "--threads", 2, "--duration", 0.1,
                             "--json", "--steal-ns", "off"))[0]
    assert r["steal_ns"] is None


def test_sweep_and_plot(tmp_path):
    sweep = tmp_path / "s.json"
    lockbench("--lock", "oticket", "--park", "both", "--sweep", sweep, "--max-threads", 4,
              "--duration", 0.05)
    fifo = tmp_path / "f.json"
    lockbench("--lock", "oticket", "--sweep", fifo, "--max-threads", 2, "--duration", 0.05,
              "--steal-ns", "off")
    data = json.loads(sweep.read_text())
    assert data["bench"] == "lockbench"
    got = sorted((r["park"], r["threads"]) for r in data["results"])
    assert got == [("futex", 1), ("futex", 2), ("futex", 4),
                   ("yield", 1), ("yield", 2), ("yield", 4)]
    data["results"] += json.loads(fifo.read_text())["results"]
    sweep.write_text(json.dumps(data))
    table = subprocess.run([sys.executable, str(LOCKPLOT), str(sweep), "--table"],
                           capture_output=True, text=True, check=True).stdout
    lines = table.splitlines()
    assert lines[0] == "| lock | park | T=1 | T=2 | T=4 |"
    assert any(line.startswith("| opportunistic ticket | futex |") for line in lines)
    fifo_row = [line for line in lines
                if line.startswith("| opportunistic ticket, strict FIFO | futex |")]
    assert len(fifo_row) == 1 and fifo_row[0].endswith("|  |")  # no T=4 point
    svg = tmp_path / "p.svg"
    subprocess.run([sys.executable, str(LOCKPLOT), str(sweep), str(svg), "--park", "all"],
                   check=True)
    text = svg.read_text()
    assert text.startswith("<svg") and "strict FIFO" in text and "(yield)" in text


def test_help_and_version_exit_0_bad_option_exits_2():
    for args, code, stream in ((["--help"], 0, "stdout"), (["--version"], 0, "stdout"),
                               (["--frob"], 2, "stderr")):
        cp = subprocess.run([str(LOCKBENCH), *args], capture_output=True, text=True, timeout=30)
        assert cp.returncode == code, (args, cp.stderr)
        assert ("usage: lockbench" in getattr(cp, stream)) or "lockbench (vmpi)" in cp.stdout
