"""vmpi study --scale: the grid its options make, footprint's output, the
report's scale section from recorded results, and one tiny real run."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PYDIR
from vmpi import netns
from vmpi.study import parse, report, scale, spec
from vmpi.study.analysis import load_results

BUILD = Path(os.environ.get("VMPI_BUILD", Path(__file__).resolve().parents[2] / "build"))
FIX = Path(__file__).parent / "fixtures" / "study"


def dry_run(*args):
    cp = subprocess.run([sys.executable, "-m", "vmpi", "study", "--dry-run", *args],
                        capture_output=True, text=True, timeout=60,
                        env=dict(os.environ, PYTHONPATH=str(PYDIR)))
    return cp


def runs_of(out: str) -> list[tuple[str, str]]:
    """(bench, label) of every `run` line of a dry run."""
    rows = []
    for ln in out.splitlines():
        if ln.startswith("run  "):
            bench, rest = ln[5:].split(" ", 1)
            rows.append((bench, rest.strip()))
    return rows


def test_default_grid_from_the_options():
    cp = dry_run("--scale")
    assert cp.returncode == 0, cp.stderr
    rows = runs_of(cp.stdout)
    benches = {b for b, _ in rows}
    for n in (4, 16, 64):
        for c in ("bcast", "allreduce", "allgather", "alltoall", "barrier", "mem"):
            assert f"scale-{c}-r{n}" in benches
    vmpi = [(b, lab) for b, lab in rows if lab.startswith("vmpi ")]
    # VMs <= ranks: 4 ranks in 1 and 4 VMs, 16 and 64 in 1, 4, 16
    assert sum(b == "scale-bcast-r4" for b, _ in vmpi) == 2
    assert sum(b == "scale-bcast-r64" for b, _ in vmpi) == 3
    assert any("16 VMs, 1 host · 64 ranks x 3" in lab for b, lab in vmpi
               if b == "scale-alltoall-r64")
    # the peers: no VMs, both settings, no memory runs
    peers = [(b, lab) for b, lab in rows if not lab.startswith("vmpi ")]
    assert peers and all("same VM" in lab for _, lab in peers)
    assert not any(b.startswith("scale-mem") for b, _ in peers)
    assert sum(b == "scale-barrier-r16" for b, _ in peers) == 4
    assert any("(yielding)" in lab for _, lab in peers)
    # 6 benches x 3 rank counts; vmpi 8 placements, peers 4 settings x 3
    assert len(rows) == 5 * (8 + 12) + 8
    assert "MPICH and Open MPI have no VMs" in cp.stdout


def test_narrowed_grid_and_iterations():
    cp = dry_run("--scale", "--scale-ranks", "4,16", "--scale-vms", "1,4,3",
                 "--libraries", "vmpi", "--reps", "2")
    assert cp.returncode == 0, cp.stderr
    rows = runs_of(cp.stdout)
    assert {b.split("-r")[-1] for b, _ in rows} == {"4", "16"}
    assert not any("3 VMs" in lab for _, lab in rows)  # 3 divides neither
    assert all(lab.startswith("vmpi ") and lab.endswith("x 2") for _, lab in rows)
    assert len(rows) == 6 * 2 * 2
    st = scale.scale_study((4, 64), (1, 16))
    args = {b.name: b.args for b in st.benches}
    assert args["scale-alltoall-r4"] == "alltoall --sizes 8,65536 -i 50 -x 5"
    assert args["scale-alltoall-r64"] == "alltoall --sizes 8,65536 -i 3 -x 1"
    assert {b.name: b.placements for b in st.benches}["scale-mem-r4"] == ("vm",)
    assert st.benches[-1].timeout > st.benches[0].timeout


def test_bad_options():
    cp = dry_run("--scale-ranks", "4")
    assert cp.returncode == 2 and "add --scale" in cp.stderr
    cp = dry_run("--scale", "--scale-ranks", "x")
    assert cp.returncode == 2 and "want numbers" in cp.stderr
    cp = dry_run("--scale", "--scale-ranks", "1")
    assert cp.returncode == 2 and "rank counts >= 2" in cp.stderr


def test_one_vm_always_runs():
    """1 VM is the baseline and where the peers run, asked for or not; a VM
    count that divides no rank count runs nowhere."""
    rows = runs_of(dry_run("--scale", "--scale-ranks", "4", "--scale-vms", "8").stdout)
    assert rows and all("same VM" in lab for _, lab in rows)
    rows = runs_of(dry_run("--scale", "--scale-ranks", "16", "--scale-vms", "4").stdout)
    labs = [lab for b, lab in rows if b == "scale-allgather-r16"]
    assert sorted(labs) == sorted(["vmpi · same VM · 16 ranks x 3",
                                   "vmpi · 4 VMs, 1 host · 16 ranks x 3",
                                   "MPICH · same VM · 16 ranks x 3",
                                   "MPICH (yielding) · same VM · 16 ranks x 3",
                                   "Open MPI · same VM · 16 ranks x 3",
                                   "Open MPI (yielding) · same VM · 16 ranks x 3"])


def test_footprint_output_parses():
    recs = parse.parse_output((FIX / "vmpi-footprint.txt").read_text(), "footprint")
    assert [(r["series"], r["x"], r["unit"]) for r in recs] == \
        [("shared", 16, "KiB"), ("private", 16, "KiB")]
    assert all(r["value"] > 0 and r["extra"]["vms"] == 4 for r in recs)
    assert parse.parse_output("vmpirun: error\n", "footprint") == []


def test_footprint_command_has_no_json():
    from vmpi.study import run as srun

    class Lay:
        vmpirun = "/x/vmpirun"

        def program(self, lib, name):
            return f"/b/{name}"
    st = scale.scale_study((16,), (4,), libraries=("vmpi",))
    mem = next(b for b in st.benches if b.name == "scale-mem-r16")
    cfg = spec.Config(mem.name, "vmpi", "4vm", "aware", 16)
    cmd, _ = srun.command(cfg, mem, Lay(), None)
    assert cmd.endswith("/b/footprint") and "-n 16" in cmd and "--vms 4" in cmd
    coll = next(b for b in st.benches if b.name == "scale-bcast-r16")
    cmd, _ = srun.command(spec.Config(coll.name, "vmpi", "4vm", "aware", 16), coll, Lay(), None)
    assert cmd.endswith("--json")


def recorded_study():
    """The fixture's study (vmpi and MPICH, 4 and 8 ranks in 1 and 2 VMs)
    and runs."""
    runs = load_results(str(FIX / "scale-results.jsonl"))
    st = scale.scale_study((4, 8), (1, 2), reps=1, libraries=("vmpi", "mpich"))
    return st, runs


def test_report_of_recorded_results(tmp_path):
    pytest.importorskip("matplotlib")
    st, runs = recorded_study()
    path, _ = report.make_report(st, str(tmp_path), runs)
    html = Path(path).read_text()
    assert "<h2 id='scale'>Scaling: ranks and VMs</h2>" in html
    for name in ("scale-time", "scale-memory"):
        assert f"<figure id='{name}'>" in html
        assert (tmp_path / "figures" / f"{name}.png").stat().st_size > 10000
    svg = (tmp_path / "figures" / "scale-time.svg").read_text()
    assert "4 and 8 ranks on 2 cores" in svg and "MPI_Alltoall, 64 KiB" in svg
    assert "MPICH · same VM" in svg and "vmpi · 2 VMs, 1 host" in svg
    mem_svg = (tmp_path / "figures" / "scale-memory.svg").read_text()
    assert "shared memory per rank (KiB)" in mem_svg and "2 VMs, 1 host" in mem_svg \
        and "1 VM, 1 host" in mem_svg
    # every recorded median is in the tables
    for r in runs:
        if r["status"] != "ok":
            continue
        for rec in r["records"]:
            if rec["unit"] == "KiB":
                assert f"<td>{rec['value']:.0f}</td>" in html, (r["bench"], rec)
            else:
                assert report._fmt(rec["value"], "us") in html, (r["bench"], rec)
    assert "<th>8 ranks on 2 cores</th>" in html
    assert "<td>8 ranks on 2 cores</td><td>2</td>" in html
    # the scale figures are in their section only, not twice
    assert html.count("<figure id='scale-time'>") == 1


def test_report_states_rank_counts_on_every_figure(tmp_path):
    pytest.importorskip("matplotlib")
    st, runs = recorded_study()
    report.make_report(st, str(tmp_path), runs)
    for name in ("scale-time", "scale-memory"):
        assert "ranks on 2 cores" in (tmp_path / "figures" / f"{name}.svg").read_text()


needs_root = pytest.mark.skipif(bool(netns._missing_caps()) or netns.find_ip() is None
                                or not (BUILD / "bench" / "footprint").exists(),
                                reason="needs root, ip and a vmpi build with bench/")


@needs_root
def test_tiny_real_scale_study(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "s"
    cp = subprocess.run([sys.executable, "-m", "vmpi", "study", "--scale", "--scale-ranks", "4",
                         "--scale-vms", "1,2", "--reps", "1", "--libraries", "vmpi",
                         "--out", str(out), "--build", str(BUILD)],
                        capture_output=True, text=True, timeout=240,
                        env=dict(os.environ, PYTHONPATH=str(PYDIR)))
    assert cp.returncode == 0, cp.stderr[-3000:]
    lines = [json.loads(ln) for ln in (out / "results.jsonl").open()]
    assert len(lines) == 12 and all(r["status"] == "ok" for r in lines)
    assert "[12/12]" in cp.stderr  # progress, one line per run off a terminal
    mem = {r["placement"]: r["records"] for r in lines if r["bench"] == "scale-mem-r4"}
    assert set(mem) == {"vm", "2vm"}
    for recs in mem.values():
        assert {r["series"] for r in recs} == {"shared", "private"}
        assert all(r["x"] == 4 and r["value"] > 0 for r in recs)
    # two VMs hold their segments and the host region: more shared memory
    shared = {pl: next(r["value"] for r in recs if r["series"] == "shared")
              for pl, recs in mem.items()}
    assert shared["2vm"] > shared["vm"]
    html = (out / "report.html").read_text()
    assert "<h2 id='scale'>" in html and "<figure id='scale-memory'>" in html
    assert f"<td>{shared['2vm']:.0f}</td>" in html
    a2a = next(r for r in lines if r["bench"] == "scale-alltoall-r4" and r["placement"] == "2vm")
    assert {r["x"] for r in a2a["records"]} == {8, 65536}
    assert report._fmt(next(r["value"] for r in a2a["records"] if r["x"] == 65536), "us") \
        in html
    # resume: nothing left to run
    cp = subprocess.run([sys.executable, "-m", "vmpi", "study", "--resume", "--out", str(out),
                         "--build", str(BUILD)], capture_output=True, text=True, timeout=120,
                        env=dict(os.environ, PYTHONPATH=str(PYDIR)))
    assert cp.returncode == 0, cp.stderr[-2000:]
    assert sum(1 for _ in (out / "results.jsonl").open()) == 12
