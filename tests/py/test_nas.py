"""The NAS Parallel Benchmarks driver (tools/nas.py, vmpi.study.nas) without
NPB's sources (CI has none): parsing NPB's report, the cases and command
lines, the tables, timing rounds through a fake vmpirun and fake
benchmarks, and the one-line skip when the sources are absent."""

import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT
from test_study_run import FAKE_VMPIRUN
from vmpi.study import nas

REPORT = """
 CG Benchmark Completed.
 Class           =                        A
 Time in seconds =                     1.25
 Mop/s total     =                  1197.34
 Verification    =               SUCCESSFUL
"""



def test_parse_report():
    assert nas.parse(REPORT) == {"verified": True, "time": 1.25, "mops": 1197.34}
    bad = nas.parse(REPORT.replace("   SUCCESSFUL", " UNSUCCESSFUL"))
    assert bad["verified"] is False and bad["time"] == 1.25
    assert nas.parse(" DT_BH.A L2 Norm = 17791410.000000\n")["l2norm"] == 17791410
    assert nas.parse("Segmentation fault") == {"verified": False, "time": None, "mops": None}


def test_cases_give_dt_a_rank_per_graph_node():
    cs = {c.name: c for c in nas.cases(nas.KERNELS, ("S", "A"))}
    assert cs["bt.A"].ranks == 4 and cs["is.S"].binary == "is.S.x"
    assert (cs["dt.S.BH"].ranks, cs["dt.S.SH"].ranks) == (5, 12)
    assert (cs["dt.A.WH"].ranks, cs["dt.A.SH"].ranks) == (21, 80)
    timed = [c.name for c in nas.cases(["dt"], ["A"], all_graphs=False)]
    assert timed == ["dt.A.WH"]


def test_command_lines():
    case = nas.Case("dt", "S", 5, "BH")
    argv, env = nas.command(nas.SERIES["vmpi-2vm-unaware"], "/x/dt.S.x", case, "/b", 60)
    assert argv == ["/b/bin/vmpirun", "-n", "5", "--vms", "2", "--timeout", "60",
                    "-x", "VMPI_CHANNELS=smp,ofi", "/x/dt.S.x", "BH"]
    argv, _ = nas.command(nas.SERIES["vmpi-2vm"], "/x/dt.A.x", nas.Case("dt", "A", 80, "SH"),
                          "/b", 60)
    assert argv[5:7] == ["--timeout", "60"] and argv[7:9] == ["--ivshmem-size", "8G"]
    argv, env = nas.command(nas.SERIES["mpichbin-vmpi"], "/x/cg.A.x", nas.Case("cg", "A", 4),
                            "/b", 60)
    assert env["LD_LIBRARY_PATH"] == "/b/lib" and "LD_LIBRARY_PATH=/b/lib" in argv
    argv, _ = nas.command(nas.SERIES["openmpi-yield"], "/x/cg.A.x", nas.Case("cg", "A", 4),
                          "/b", 60)
    assert argv[:3] == ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe"]
    assert "mpi_yield_when_idle" in argv
    argv, env = nas.command(nas.SERIES["mpich"], "/x/cg.A.x", nas.Case("cg", "A", 4), "/b", 60)
    assert argv[0] == "mpiexec.mpich" and env["MPIEXEC_TIMEOUT"] == "60"


def test_find_npb(tmp_path, monkeypatch):
    monkeypatch.delenv("VMPI_NPB_DIR", raising=False)
    assert nas.find_npb(None) is None
    npb = tmp_path / "NPB3.4-MPI"
    (npb / "sys").mkdir(parents=True)
    (npb / "CG").mkdir()
    (npb / "sys" / "setparams.c").write_text("")
    assert nas.find_npb(str(tmp_path)) == str(npb)
    monkeypatch.setenv("VMPI_NPB_DIR", str(npb))
    assert nas.find_npb(None) == str(npb)
    try:
        nas.find_npb(str(tmp_path / "nope"))
        raise AssertionError("a folder without NPB was accepted")
    except nas.NasError as exc:
        assert "setparams.c" in str(exc)


def _fake_job(tmp_path):
    build = tmp_path / "build"
    (build / "bin").mkdir(parents=True)
    (build / "bin" / "vmpirun").write_text(FAKE_VMPIRUN)
    (build / "bin" / "vmpirun").chmod(0o755)
    work = tmp_path / "work"
    bin_ = work / "src-vmpi" / "bin"
    bin_.mkdir(parents=True)
    # cg verifies in 2 s, ep fails its verification, dt computes what every
    # MPI computes for BH (not NPB 3.4's reference)
    unverified = REPORT.replace("   SUCCESSFUL", " UNSUCCESSFUL")
    for name, text in (("cg.A.x", REPORT.replace("1.25", "2.00")), ("ep.A.x", unverified),
                       ("dt.A.x", " DT_BH.A L2 Norm = 17791410.000000\n" + unverified)):
        (bin_ / name).write_text(f"#!/bin/sh\ncat <<'EOF'\n{text}\nEOF\n")
        (bin_ / name).chmod(0o755)
    return build, work


def test_timing_rounds_and_tables(tmp_path):
    build, work = _fake_job(tmp_path)
    lines = []
    cs = nas.cases(["cg", "ep", "mg"], ["A"])
    recs = nas.timing_rounds(["vmpi", "vmpi-2vm"], cs, str(work), str(build), 2, 30,
                             str(tmp_path / "logs"), lines.append, say=lambda m: None)
    assert [r["loadavg_before"] for r in lines if "round" in r and "case" not in r]
    got = {(r["case"], r["series"], r["round"]): r["status"] for r in recs}
    assert got[("cg.A", "vmpi-2vm", 1)] == "ok"
    assert got[("ep.A", "vmpi", 0)] == "unverified"
    assert got[("mg.A", "vmpi", 0)] == "missing"
    table = nas.time_table(recs, ["vmpi", "vmpi-2vm"], [c.name for c in cs], 2)
    assert "| cg.A | 4/2 (oversubscribed) | 2.00 (1197) | 2.00 (1197) | +0.0 % |" in table
    assert "[2/2 unverified]" in table
    assert nas.geomean_overhead(recs, "vmpi-2vm") == 0.0
    vt = nas.verify_table(recs, ["vmpi"], ["cg.A", "ep.A"])
    assert "| cg.A | 4 | verified |" in vt and "**UNVERIFIED**" in vt
    assert nas.own_failures(recs) == 2 * 2 * 2  # ep and mg, 2 series, 2 rounds
    dt = nas.Case("dt", "A", 21, "BH")
    r = nas.run(nas.SERIES["vmpi"], dt, str(work), str(build), 30, str(tmp_path / "logs"))
    assert r["status"] == "crosschecked" and nas.own_failures([r]) == 0
    r = nas.run(nas.SERIES["vmpi"], nas.Case("dt", "A", 80, "SH"), str(work), str(build), 30,
                str(tmp_path / "logs"))
    assert r["status"] == "unverified" and r["l2norm"] == 17791410 and "log" in r


def test_tool_without_sources_says_so(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "VMPI_NPB_DIR"}
    cp = subprocess.run([sys.executable, str(ROOT / "tools" / "nas.py"), "--build",
                         str(tmp_path)], capture_output=True, text=True, env=env)
    assert cp.returncode == 2 and "no NPB sources" in cp.stderr


def test_study_section_skipped_without_sources(monkeypatch, tmp_path):
    monkeypatch.delenv("VMPI_NPB_DIR", raising=False)
    said = []

    class S:
        name, reps, libraries = "default", 1, ("vmpi",)
    assert nas.study_section(None, S(), str(tmp_path), "/nonexistent", said.append) == 0
    assert said == ["NAS: skipped: no NPB3.4-MPI sources (--npb DIR or VMPI_NPB_DIR)"]
    assert not list(Path(tmp_path).iterdir())
