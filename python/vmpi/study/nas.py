"""The NAS Parallel Benchmarks (NPB3.4-MPI) on vmpi, MPICH and Open MPI.

NPB is not part of vmpi: it is built from a local copy of its sources
(``--npb DIR`` or ``$VMPI_NPB_DIR``, the NPB3.4-MPI folder or one that holds
it), once per toolchain, into a work folder.  Every run must print NPB's
``Verification    =               SUCCESSFUL``; its time and Mop/s are
parsed from NPB's own report.  ``tools/nas.py`` is the full tool (every
toolchain, correctness and timing phases); ``vmpi study`` uses
:func:`study_section` for its NAS application section.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import time
from dataclasses import dataclass, field

KERNELS = ("is", "ep", "cg", "mg", "ft", "lu", "bt", "sp", "dt")
CLASSES = ("S", "A")
RANKS = 4  # BT and SP want a square, the others a power of two
# DT's graphs need a rank per node: the BH and WH graphs have 4 sources and
# a sink at class S (5 nodes), 16 sources, 4 comparators and a sink at A
# (21); SH is a sorting network of sources, log2(sources) layers and sinks
# (12 at S, 80 at A).  At class A NPB 3.4's reference values of BH and SH
# match no MPI here (MPICH, Open MPI and vmpi all compute the same other
# L2 norm, which the records keep), so the timing table runs WH.
DT_GRAPHS = {"S": (("BH", 5), ("WH", 5), ("SH", 12)),
             "A": (("BH", 21), ("WH", 21), ("SH", 80))}
DT_TIMED = "WH"
# Those L2 norms (MPICH 4.0.2, Open MPI 4.1.4 and vmpi alike, gfortran/gcc
# 12 -O3): a run that prints one is "crosschecked", not failed.
DT_CROSSCHECK = {"dt.A.BH": 17791410.0, "dt.A.SH": 571204151.0}
# A job of more ranks wants a larger region than vmpirun's default with
# --vms: its channels between the VMs grow with the square of the ranks.
BIG_JOB, BIG_REGION = 16, "8G"
VERIFIED = "Verification    =               SUCCESSFUL"
# gfortran >= 10 rejects what NPB 3.4's mpif.h code does (one buffer
# argument of several types; X"..." constants): both only warn with these.
FFLAGS = "-O3 -fallow-argument-mismatch -fallow-invalid-boz"
CFLAGS = "-O3"

_TIME_RE = re.compile(r"Time in seconds =\s*([0-9.eE+-]+)")
_MOPS_RE = re.compile(r"Mop/s total\s*=\s*([0-9.eE+-]+)")
_L2_RE = re.compile(r"L2 Norm = ([0-9.eE+-]+)")  # DT's result


class NasError(Exception):
    """Sources, compilers or a build dir that cannot be used; says why."""


def find_npb(path: str | None) -> str | None:
    """The NPB3.4-MPI folder named by ``path`` or $VMPI_NPB_DIR, or None."""
    path = path or os.environ.get("VMPI_NPB_DIR")
    if not path:
        return None
    for cand in (path, os.path.join(path, "NPB3.4-MPI")):
        if os.path.isfile(os.path.join(cand, "sys", "setparams.c")) and \
                os.path.isdir(os.path.join(cand, "CG")):
            return os.path.abspath(cand)
    raise NasError(f"{path}: not NPB3.4-MPI's sources (no sys/setparams.c and CG/ there "
                   "or in NPB3.4-MPI/ below it)")


@dataclass(frozen=True)
class Case:
    """One benchmark run: kernel, class, ranks and DT's graph."""
    kernel: str
    cls: str
    ranks: int
    graph: str = ""

    @property
    def name(self) -> str:
        return f"{self.kernel}.{self.cls}" + (f".{self.graph}" if self.graph else "")

    @property
    def binary(self) -> str:
        return f"{self.kernel}.{self.cls}.x"


def cases(kernels, classes, all_graphs: bool = True) -> list[Case]:
    out = []
    for c in classes:
        for k in kernels:
            if k != "dt":
                out.append(Case(k, c, RANKS))
                continue
            out += [Case(k, c, n, g) for g, n in DT_GRAPHS[c] if all_graphs or g == DT_TIMED]
    return out


@dataclass(frozen=True)
class Toolchain:
    name: str
    fc: str
    cc: str
    use_mpi: bool = False  # NPB's mpinpb modules take `use mpi`, not mpif.h


def toolchains(build: str) -> dict[str, Toolchain]:
    b = os.path.join(build, "bin")
    fc, cc = os.path.join(b, "mpifort"), os.path.join(b, "mpicc")
    return {"vmpi": Toolchain("vmpi", fc, cc),
            "vmpi-usempi": Toolchain("vmpi-usempi", fc, cc, use_mpi=True),
            "mpich": Toolchain("mpich", "mpif90.mpich", "mpicc.mpich"),
            "openmpi": Toolchain("openmpi", "mpif90.openmpi", "mpicc.openmpi")}


_MAKE_DEF = """\
# written by vmpi's NAS driver
MPIFC = {fc}
FLINK = $(MPIFC)
FMPI_LIB =
FMPI_INC =
FFLAGS = {fflags}
FLINKFLAGS = $(FFLAGS)
MPICC = {cc}
CLINK = $(MPICC)
CMPI_LIB =
CMPI_INC =
CFLAGS = {cflags}
CLINKFLAGS = $(CFLAGS)
CC = gcc
BINDIR = ../bin
CONVERTFLAG = -DFORTRAN_REC_SIZE=1
RAND = randi8
"""


def build(npb: str, work: str, tc: Toolchain, kernels, classes, rebuild=False,
          say=print) -> dict[str, str]:
    """Build ``kernels`` x ``classes`` with ``tc`` in work/src-NAME (a copy
    of the sources: NPB builds in its tree).  Returns binary -> "ok" or
    the reason it is missing; the make output is in work/build-NAME.log."""
    if not shutil.which(tc.fc) or not shutil.which(tc.cc):
        return {f"{k}.{c}.x": f"no {tc.fc} or {tc.cc}" for c in classes for k in kernels}
    src = os.path.join(work, f"src-{tc.name}")
    if rebuild:
        shutil.rmtree(src, ignore_errors=True)
    if not os.path.isdir(src):
        shutil.copytree(npb, src, symlinks=True)
        if tc.use_mpi:
            _use_mpi_module(src)
    os.makedirs(os.path.join(src, "bin"), exist_ok=True)
    mdef = _MAKE_DEF.format(fc=tc.fc, cc=tc.cc, fflags=FFLAGS, cflags=CFLAGS)
    path = os.path.join(src, "config", "make.def")
    if not os.path.exists(path) or open(path).read() != mdef:
        with open(path, "w") as f:
            f.write(mdef)
    res = {}
    with open(os.path.join(work, f"build-{tc.name}.log"), "a") as log:
        for c in classes:
            for k in kernels:
                exe = os.path.join(src, "bin", f"{k}.{c}.x")
                if os.path.exists(exe) and not rebuild:
                    res[f"{k}.{c}.x"] = "ok"
                    continue
                # objects of another class would be linked in otherwise
                subprocess.run(["make", "-C", k.upper(), "clean"], cwd=src, stdout=log,
                               stderr=subprocess.STDOUT)
                log.write(f"\n=== {tc.name}: make {k} CLASS={c}\n")
                log.flush()
                p = subprocess.run(["make", k, f"CLASS={c}"], cwd=src, stdout=log,
                                   stderr=subprocess.STDOUT)
                ok = p.returncode == 0 and os.path.exists(exe)
                res[f"{k}.{c}.x"] = "ok" if ok else f"make failed (status {p.returncode})"
                say(f"build {tc.name:8} {k}.{c}: {res[f'{k}.{c}.x']}")
    return res


def _use_mpi_module(src: str) -> None:
    """NPB 3.4 includes mpif.h in one module per benchmark (mpinpb.f);
    with `use mpi` every MPI call of the benchmark goes through the mpi
    module's explicit interfaces instead."""
    for d in os.listdir(src):
        path = os.path.join(src, d, "mpinpb.f")
        if os.path.isfile(path):
            with open(path) as f:
                text = f.read()
            with open(path, "w") as f:
                f.write(text.replace("      include 'mpif.h'", "      use mpi"))


def binary(work: str, toolchain: str, case: Case) -> str:
    return os.path.join(work, f"src-{toolchain}", "bin", case.binary)


@dataclass(frozen=True)
class Series:
    """One column of the tables: whose binaries run how and where."""
    name: str
    label: str
    toolchain: str  # whose compiler built the binary
    launcher: str  # vmpirun, mpiexec.mpich or mpirun.openmpi
    vmpirun_args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    extra: tuple[str, ...] = field(default=())


SERIES = {s.name: s for s in (
    Series("vmpi", "vmpi, 1 VM", "vmpi", "vmpirun"),
    Series("vmpi-2vm", "vmpi, 2 VMs of 1 host", "vmpi", "vmpirun", ("--vms", "2")),
    Series("vmpi-2host", "vmpi, 2 hosts", "vmpi", "vmpirun", ("--hosts", "2")),
    Series("vmpi-2vm-unaware", "vmpi smp,ofi, 2 VMs", "vmpi", "vmpirun", ("--vms", "2"),
           (("VMPI_CHANNELS", "smp,ofi"),)),
    Series("vmpi-usempi", "vmpi `use mpi`, 1 VM", "vmpi-usempi", "vmpirun"),
    Series("mpichbin-vmpi", "MPICH-built on vmpi, 1 VM", "mpich", "vmpirun"),
    Series("mpichbin-vmpi-2vm", "MPICH-built on vmpi, 2 VMs", "mpich", "vmpirun",
           ("--vms", "2")),
    Series("mpich", "MPICH 1 VM", "mpich", "mpiexec.mpich"),
    # ch4's only way to yield while waiting (vmpi.study.spec.YIELD)
    Series("mpich-yield", "MPICH MPI_THREAD_MULTIPLE (yields), 1 VM", "mpich",
           "mpiexec.mpich", env=(("MPIR_CVAR_DEFAULT_THREAD_LEVEL", "MPI_THREAD_MULTIPLE"),)),
    Series("openmpi", "Open MPI 1 VM", "openmpi", "mpirun.openmpi"),
    Series("openmpi-yield", "Open MPI yield_when_idle, 1 VM", "openmpi", "mpirun.openmpi",
           extra=("--mca", "mpi_yield_when_idle", "1")),
)}
VMPI_SERIES = ("vmpi", "vmpi-2vm", "vmpi-2host", "vmpi-2vm-unaware")


def command(s: Series, exe: str, case: Case, build: str, timeout: float):
    """argv and environment of one run."""
    env = dict(os.environ)
    args = [case.graph] if case.graph else []
    n = str(case.ranks)
    if s.launcher == "vmpirun":
        argv = [os.path.join(build, "bin", "vmpirun"), "-n", n, *s.vmpirun_args,
                "--timeout", str(int(timeout))]
        if "--vms" in s.vmpirun_args and case.ranks > BIG_JOB:
            argv += ["--ivshmem-size", BIG_REGION]
        for k, v in s.env:
            argv += ["-x", f"{k}={v}"]
        if not s.toolchain.startswith("vmpi"):
            # MPICH-ABI binaries find vmpi as libmpich.so.12/libmpichfort.so.12
            lib = os.path.join(build, "lib")
            env["LD_LIBRARY_PATH"] = lib
            argv += ["-x", f"LD_LIBRARY_PATH={lib}"]
        return argv + [exe, *args], env
    if s.launcher == "mpiexec.mpich":
        env["MPIEXEC_TIMEOUT"] = str(int(timeout))
        genv = [w for k, v in s.env for w in ("-genv", k, v)]
        return ["mpiexec.mpich", "-n", n, *genv, exe, *args], env
    return ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe", *s.extra, "-np", n,
            exe, *args], env


def parse(text: str) -> dict:
    t, m, l2 = _TIME_RE.search(text), _MOPS_RE.search(text), _L2_RE.search(text)
    rec = {"verified": VERIFIED in text, "time": float(t.group(1)) if t else None,
           "mops": float(m.group(1)) if m else None}
    if l2:
        rec["l2norm"] = float(l2.group(1))
    return rec


def loadavg() -> str:
    try:
        with open("/proc/loadavg") as f:
            return f.read().strip()
    except OSError:
        return "unknown"


def run(s: Series, case: Case, work: str, build: str, timeout: float, logdir: str) -> dict:
    """One run; status ok, unverified, failed, timeout or missing."""
    exe = binary(work, s.toolchain, case)
    rec = {"series": s.name, "case": case.name, "ranks": case.ranks, "loadavg": loadavg(),
           "date": time.strftime("%Y-%m-%dT%H:%M:%S")}
    if not os.path.exists(exe):
        return {**rec, "status": "missing", "why": f"{exe} not built"}
    argv, env = command(s, exe, case, build, timeout)
    rec["command"] = " ".join(argv)
    t0 = time.monotonic()
    # a session of its own, so a timeout ends every rank of the job
    p = subprocess.Popen(argv, env=env, cwd=os.path.dirname(exe), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, errors="replace",
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout + 30)
        status = None
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        status = "timeout"
    rec["wall"] = round(time.monotonic() - t0, 3)
    rec["exit"] = p.returncode
    rec.update(parse(out))
    if status is None:
        status = "ok" if rec["verified"] and p.returncode == 0 else \
            "unverified" if p.returncode == 0 else "failed"
        if status == "unverified" and case.name in DT_CROSSCHECK and \
                rec.get("l2norm") == DT_CROSSCHECK[case.name]:
            status = "crosschecked"
    rec["status"] = status
    if status not in ("ok", "crosschecked"):
        os.makedirs(logdir, exist_ok=True)
        path = os.path.join(logdir, f"{case.name}.{s.name}.{int(time.time())}.log")
        with open(path, "w") as f:
            f.write(rec.get("command", "") + "\n" + out)
        rec["log"] = path
        rec["tail"] = out[-600:]
    return rec


def own_failures(recs: list[dict]) -> int:
    """Failed runs on vmpi (MPICH's and Open MPI's are results, not errors)."""
    return sum(r["status"] not in ("ok", "crosschecked") and
               SERIES[r["series"]].launcher == "vmpirun" for r in recs)


def median_of(recs: list[dict], key: str):
    vals = [r[key] for r in recs if r.get("status") == "ok" and r.get(key) is not None]
    return statistics.median(vals) if vals else None


def _pct(a, b) -> str:
    return f"{(a / b - 1) * 100:+.1f} %" if a and b else "-"


def verify_table(recs: list[dict], series: list[str], names: list[str]) -> str:
    """Markdown: case x series, ok or what went wrong."""
    got = {(r["case"], r["series"]): r for r in recs}
    head = "| case | ranks | " + " | ".join(SERIES[s].label for s in series) + " |"
    lines = [head, "|" + " --- |" * (len(series) + 2)]
    for n in names:
        row = [got.get((n, s)) for s in series]
        ranks = next((r["ranks"] for r in row if r), "")
        cells = ["-" if r is None else "verified" if r["status"] == "ok" else
                 "same L2 as MPICH, Open MPI" if r["status"] == "crosschecked" else
                 f"**{r['status'].upper()}**" +
                 (f" (L2 {r['l2norm']:.0f})" if r.get("l2norm") else "") for r in row]
        lines.append(f"| {n} | {ranks} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def time_table(recs: list[dict], series: list[str], names: list[str], cores: int) -> str:
    """Markdown: per case, the median time and Mop/s of every series, and
    each vmpi placement's overhead against vmpi in one VM."""
    by = {}
    for r in recs:
        by.setdefault((r["case"], r["series"]), []).append(r)
    ranks = {r["case"]: r["ranks"] for r in recs}
    over = [s for s in series if s != "vmpi" and SERIES[s].launcher == "vmpirun"
            and "vmpi" in series]
    head = ["case", "ranks/cores"] + [f"{SERIES[s].label}: s (Mop/s)" for s in series] + \
        [f"{SERIES[s].label} vs 1 VM" for s in over]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for n in names:
        cells = [n, f"{ranks.get(n, '?')}/{cores} (oversubscribed)"
                 if ranks.get(n, 0) > cores else f"{ranks.get(n, '?')}/{cores}"]
        base = median_of(by.get((n, "vmpi"), []), "time")
        for s in series:
            rs = by.get((n, s), [])
            t, m = median_of(rs, "time"), median_of(rs, "mops")
            bad = [r["status"] for r in rs if r["status"] != "ok"]
            cell = f"{t:.2f} ({m:.0f})" if t is not None else "-"
            if bad:
                cell += f" [{len(bad)}/{len(rs)} {'/'.join(sorted(set(bad)))}]"
            cells.append(cell)
        for s in over:
            cells.append(_pct(median_of(by.get((n, s), []), "time"), base))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def geomean_overhead(recs: list[dict], series: str, base: str = "vmpi") -> float | None:
    """Geometric mean over cases of median time(series)/time(base), - 1."""
    by = {}
    for r in recs:
        by.setdefault((r["case"], r["series"]), []).append(r)
    ratios = []
    for case in {r["case"] for r in recs}:
        a, b = median_of(by.get((case, series), []), "time"), \
            median_of(by.get((case, base), []), "time")
        if a and b:
            ratios.append(a / b)
    return statistics.geometric_mean(ratios) - 1 if ratios else None


def timing_rounds(series: list[str], cs: list[Case], work: str, build: str, reps: int,
                  timeout: float, logdir: str, sink, say=print) -> list[dict]:
    """``reps`` rounds; in each, every case runs once under every series
    back to back, so a burst of load hits all libraries alike.  The load
    average before each round goes to the records (and to ``sink``)."""
    recs = []
    for rep in range(reps):
        la = loadavg()
        sink({"round": rep, "loadavg_before": la})
        say(f"round {rep + 1}/{reps}, load average {la}")
        for case in cs:
            for s in series:
                r = run(SERIES[s], case, work, build, timeout, logdir)
                r["round"] = rep
                sink(r)
                recs.append(r)
                say(f"  {case.name:10} {s:18} {r['status']:10} "
                    f"{r.get('time') or '-'} s {r.get('mops') or '-'} Mop/s")
    return recs


def load(path: str) -> list[dict]:
    """The records of a JSON-lines file (none if it does not exist)."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(ln) for ln in f if ln.strip()]


class JsonLines:
    """Append records to a JSON-lines file as they come."""

    def __init__(self, path: str):
        self.path = path
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)

    def __call__(self, rec: dict) -> None:
        with open(self.path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def machine() -> dict:
    cpu = "unknown"
    try:
        cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo")
                    if ln.startswith("model name")), cpu)
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count()}


def study_section(npb_arg: str | None, study, out: str, root: str, say=print) -> int:
    """``vmpi study``'s NAS section: vmpi-built NPB at class A in every
    vmpi placement (and MPICH and Open MPI in one VM if the study has them),
    ``study.reps`` rounds; DIR/nas.md and DIR/nas.jsonl.  Skipped with one
    line when the sources are absent or the study is --quick.  Returns how
    many of vmpi's runs failed (those fail the study, as its own runs do)."""
    try:
        npb = find_npb(npb_arg)
    except NasError as exc:
        say(f"NAS: skipped: {exc}")
        return 0
    if npb is None:
        say("NAS: skipped: no NPB3.4-MPI sources (--npb DIR or VMPI_NPB_DIR)")
        return 0
    if study.name == "quick":
        say("NAS: skipped in --quick (class A takes minutes a benchmark)")
        return 0
    tcs = toolchains(root)
    if not os.path.exists(tcs["vmpi"].fc):
        say(f"NAS: skipped: no {tcs['vmpi'].fc} (vmpi was built without a Fortran compiler)")
        return 0
    work = os.path.join(out, "nas")
    os.makedirs(work, exist_ok=True)
    libs = [lib for lib in ("vmpi", "mpich", "openmpi") if lib in study.libraries]
    # more ranks than cores: both of each peer's settings (Open MPI's mpirun
    # yields as shipped when oversubscribed, so its two columns should agree)
    peers = ("mpich", "mpich-yield", "openmpi", "openmpi-yield") \
        if RANKS > (os.cpu_count() or 1) else ("mpich", "openmpi")
    series = [s for s in VMPI_SERIES if "vmpi" in libs] + \
        [s for s in peers if SERIES[s].toolchain in libs]
    for lib in {SERIES[s].toolchain for s in series}:
        build(npb, work, tcs[lib], KERNELS, ("A",), say=say)
    cs = cases(KERNELS, ("A",), all_graphs=False)
    path = os.path.join(out, "nas.jsonl")
    if os.path.exists(path):  # the medians are of this study's rounds
        os.remove(path)
    sink = JsonLines(path)
    recs = timing_rounds(series, cs, work, root, study.reps, 900, os.path.join(work, "logs"),
                         sink, say)
    table = time_table(recs, series, [c.name for c in cs], os.cpu_count() or 1)
    with open(os.path.join(out, "nas.md"), "w") as f:
        f.write(f"NAS Parallel Benchmarks 3.4, class A, medians of {study.reps}; more ranks "
                "than cores is oversubscribed.\n\n" + table + "\n")
    say(table)
    return own_failures(recs)
