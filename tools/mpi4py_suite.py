#!/usr/bin/env python3
"""Run mpi4py's own test suite on vmpi and on Debian's MPICH, module by module.

mpi4py probes its MPI's header when it is built, so each library gets its
own build of the same mpi4py release: one made with vmpi's mpicc (the venv
tests/py/test_mpi4py.py builds, $VMPI_BUILD/mpi4py-venv) and one made with
mpicc.mpich. The suite is the test/ directory of mpi4py's source release
(not part of vmpi; get it from PyPI's sdist). Each test module runs as one
job of N ranks (`main.py test_x`), so a module that hangs costs its own
time limit and not the rest; a module passes when every rank's unittest
run says OK and the job exits 0. mpi4py skips, by the library's name, what
it knows to fail on MPICH; vmpi is not on its lists, so nothing is skipped
for it that way.

  python3 tools/mpi4py_suite.py --suite /tmp/mpi4py-4.1.2/test --build build \\
      --vmpi-python build/mpi4py-venv/bin/python \\
      [--mpich-python /tmp/venv-mpich/bin/python] [--np 1 2 4] [--vms 1 2] \\
      [--modules test_comm test_p2p_buf] --out /tmp/m4p-suite

Writes OUT/results.json (every run) and OUT/table.md: per configuration the
modules that passed and the tests run, failed, in error and skipped, and
every test that failed on vmpi with the first line of what went wrong.
Runs already in OUT/results.json are kept and not repeated (delete a row
to run it again); --table-only remakes the table. Exits 1 when a module did
not pass on vmpi.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

RAN = re.compile(r"^Ran (\d+) tests? in ", re.M)
DONE = re.compile(r"^(OK|FAILED)(?: \((.*)\))?\s*$", re.M)
PROBLEM = re.compile(r"^(FAIL|ERROR): (\S+) \(([^)]*)\)", re.M)


def parse(outs: list) -> dict:
    """What the ranks' unittest runs said, one output per rank: tests run
    (the largest count of a rank), failures, errors and skips (summed over
    the ranks, which repeat a test that fails on every rank once per rank,
    so the failing tests are also kept by name), and whether every rank
    said OK: one summary line, OK, and no FAILED."""
    counts = {"failures": 0, "errors": 0, "skipped": 0, "expected failures": 0}
    runs, ok, names = [], bool(outs), set()
    for out in outs:
        ran = RAN.findall(out)
        verdicts = DONE.findall(out)
        runs += [int(n) for n in ran]
        ok &= len(ran) == 1 and [v for v, _ in verdicts] == ["OK"]
        for _, detail in verdicts:
            for part in filter(None, (detail or "").split(", ")):
                key, _, val = part.partition("=")
                if key in counts and val.isdigit():
                    counts[key] += int(val)
        # unittest names a test "name (module.Class.name)" since Python 3.11,
        # "name (module.Class)" before
        names |= {where if where.endswith("." + name) else f"{where}.{name}"
                  for _, name, where in PROBLEM.findall(out)}
    return {"ran": max(runs, default=0), "summaries": len(runs), "all_ok": ok,
            **counts, "problems": sorted(names)}


def first_problem(out: str, test: str) -> str:
    """The last line of the traceback that follows test's FAIL/ERROR header."""
    short = test.rsplit(".", 1)[-1]
    m = re.search(r"^(?:FAIL|ERROR): " + re.escape(short) + r" .*?\n-+\n(.*?)(?:\n\n|\Z)",
                  out, re.M | re.S)
    if not m:
        return ""
    lines = [ln.strip() for ln in m.group(1).splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""


def run(cmd: list, timeout: float, env: dict) -> tuple:
    """Runs cmd in its own session; on the time limit stops the session
    (SIGTERM, so a launcher can take its ranks along, then SIGKILL)."""
    t0 = time.monotonic()
    p = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, errors="replace", env=env,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out, time.monotonic() - t0
    except subprocess.TimeoutExpired:
        pass
    for sig, grace in ((signal.SIGTERM, 5), (signal.SIGKILL, None)):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            pass
        try:
            out, _ = p.communicate(timeout=grace)
            break
        except subprocess.TimeoutExpired:
            continue
    return None, out, time.monotonic() - t0


def module_names(suite: Path, wanted: list) -> list:
    mods = sorted(p.stem for p in suite.glob("test_*.py"))
    return [m for m in mods if not wanted or m in wanted]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", type=Path, required=True, help="mpi4py's test/ directory")
    ap.add_argument("--build", type=Path, default=Path("build"), help="vmpi build directory")
    ap.add_argument("--vmpi-python", type=Path, required=True,
                    help="a Python whose mpi4py was built with vmpi's mpicc")
    ap.add_argument("--mpich-python", type=Path,
                    help="a Python whose mpi4py was built with mpicc.mpich (MPICH's column)")
    ap.add_argument("--np", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--vms", type=int, nargs="+", default=[1, 2],
                    help="vmpi's ranks in this many emulated VMs (2: only for 2 ranks or more)")
    ap.add_argument("--modules", nargs="*", default=[], help="test modules (default: all)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per module and job")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--table-only", action="store_true", help="remake table.md from results.json")
    o = ap.parse_args()
    o.out.mkdir(parents=True, exist_ok=True)
    res_path = o.out / "results.json"
    results = json.loads(res_path.read_text()) if res_path.exists() else []
    if not o.table_only:
        vmpirun = (o.build / "bin" / "vmpirun").resolve()
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        configs = []
        for n in o.np:
            if o.mpich_python:
                configs.append(("mpich", n, 1))
            configs += [("vmpi", n, v) for v in o.vms if v == 1 or n >= v]
        done = {(r["lib"], r["np"], r["vms"], r["module"]) for r in results}
        for mod in module_names(o.suite, o.modules):
            for lib, n, v in configs:
                if (lib, n, v, mod) in done:
                    continue
                # each rank writes its own file: the ranks' lines would interleave
                logs = o.out / "logs" / f"{lib}-np{n}-vms{v}-{mod}"
                logs.parent.mkdir(exist_ok=True)
                for old in logs.parent.glob(logs.name + ".*"):
                    old.unlink()
                py = o.vmpi_python if lib == "vmpi" else o.mpich_python
                rank_cmd = ["sh", "-c", 'log="$1"; shift; exec "$@" > "$log.$PMI_RANK" 2>&1',
                            "sh", logs, py, o.suite / "main.py", mod]
                if lib == "vmpi":
                    cmd = [vmpirun, "--timeout", int(o.timeout), "-n", n] + \
                        (["--vms", v] if v > 1 else []) + rank_cmd
                    job_env = env
                else:
                    cmd = ["mpiexec.mpich", "-n", n] + rank_cmd
                    job_env = dict(env, MPIEXEC_TIMEOUT=str(int(o.timeout)))
                rc, job, secs = run(cmd, o.timeout + 30, job_env)
                outs = [f.read_text(errors="replace") for f in
                        sorted(logs.parent.glob(logs.name + ".*"))]
                out = "\n".join(outs + [job])
                got = parse(outs)
                status = ("timeout" if rc is None else
                          "pass" if rc == 0 and got["all_ok"] and got["summaries"] == n else
                          "fail")
                why = {t: first_problem(out, t) for t in got["problems"]}
                if status != "pass" and not got["problems"]:
                    tail = [ln for ln in (job.strip() or out.strip()).splitlines()
                            if ln.strip()][-3:]
                    why = {"(the job)": " / ".join(tail)[:300]}
                results.append({"lib": lib, "np": n, "vms": v, "module": mod, "rc": rc,
                                "status": status, "seconds": round(secs, 1), **got,
                                "why": why})
                res_path.write_text(json.dumps(results, indent=1))
                print(f"{lib:5} np={n} vms={v} {mod:28} {status:7} ran {got['ran']:4} "
                      f"fail {got['failures']} err {got['errors']} skip {got['skipped']} "
                      f"{secs:6.1f}s", flush=True)
    (o.out / "table.md").write_text(table(results))
    print(f"wrote {o.out / 'table.md'}")
    return int(any(r["lib"] == "vmpi" and r["status"] != "pass" for r in results))


def table(results: list) -> str:
    keys = sorted({(r["lib"], r["np"], r["vms"]) for r in results},
                  key=lambda k: (k[1], k[0] != "mpich", k[2]))
    out = ["| library | ranks | VMs | modules passed | tests run | failed | errors | skipped |"
           " time (s) |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for k in keys:
        rs = [r for r in results if (r["lib"], r["np"], r["vms"]) == k]
        ok = sum(r["status"] == "pass" for r in rs)
        out.append(f"| {k[0]} | {k[1]} | {k[2]} | {ok} of {len(rs)} | "
                   f"{sum(r['ran'] for r in rs)} | {sum(r['failures'] for r in rs)} | "
                   f"{sum(r['errors'] for r in rs)} | {sum(r['skipped'] for r in rs)} | "
                   f"{sum(r['seconds'] for r in rs):.0f} |")
    passed_mpich = {(r["np"], r["module"]) for r in results
                    if r["lib"] == "mpich" and r["status"] == "pass"}
    out += ["", "Modules that did not pass on vmpi (MPICH's outcome with the same ranks):", ""]
    for r in results:
        if r["lib"] != "vmpi" or r["status"] == "pass":
            continue
        mp = ("passed" if (r["np"], r["module"]) in passed_mpich else
              "not passed" if any(x["lib"] == "mpich" and x["np"] == r["np"] and
                                  x["module"] == r["module"] for x in results) else "not run")
        out.append(f"- {r['module']}, {r['np']} ranks, {r['vms']} VM(s): {r['status']} "
                   f"(MPICH {mp})")
        for t, why in r["why"].items():
            out.append(f"  - {t}: {why}")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
