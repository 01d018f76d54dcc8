#!/usr/bin/env python3
"""Build and run the NAS Parallel Benchmarks (NPB3.4-MPI) on vmpi, MPICH and Open MPI.

    tools/nas.py --npb DIR --build BUILD [--work DIR] [--phase build,verify,time]
                 [--kernels LIST] [--classes S,A] [--series LIST] [--reps 3] [--append]

NPB's sources are not part of vmpi: --npb (or $VMPI_NPB_DIR) names a local
copy of NPB3.4-MPI.  Phase build compiles IS, EP, CG, MG, FT, LU, BT, SP and
DT with vmpi's mpifort/mpicc (of BUILD), Debian's mpif90.mpich/mpicc.mpich
and mpif90.openmpi/mpicc.openmpi into WORK/src-*/bin.  Phase verify runs
every case once under every --verify-series (default: vmpi in one VM, two
VMs, two hosts, smp,ofi, built with `use mpi`, MPICH-built binaries on vmpi
in one VM and two, MPICH and Open MPI) and requires
NPB's "Verification = SUCCESSFUL".  Phase time runs --reps rounds of class
--timing-class, each case under every --series back to back (vmpi, MPICH,
Open MPI, ...), and writes medians.  4 ranks on fewer cores oversubscribe
the machine; the tables say so.  Results: WORK/nas-verify.jsonl,
WORK/nas-time.jsonl (every run, and the load average before each round),
WORK/nas.json and WORK/nas.md; --phase report only remakes the last two.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "python"))

from vmpi.study import nas  # noqa: E402

VERIFY_SERIES = ("vmpi", "vmpi-2vm", "vmpi-2host", "vmpi-2vm-unaware", "vmpi-usempi",
                 "mpichbin-vmpi", "mpichbin-vmpi-2vm", "mpich", "openmpi")
LIBRARY_SERIES = ("vmpi", "mpich", "openmpi", "openmpi-yield", "mpichbin-vmpi")
PLACEMENT_SERIES = ("vmpi", "vmpi-2vm", "vmpi-2host", "vmpi-2vm-unaware")
TIME_SERIES = ("vmpi", "mpich", "openmpi", "openmpi-yield", "vmpi-2vm", "vmpi-2host",
               "vmpi-2vm-unaware", "mpichbin-vmpi")


def _list(text: str) -> list[str]:
    return [v.strip() for v in text.split(",") if v.strip()]


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="tools/nas.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--npb", metavar="DIR", help="NPB3.4-MPI sources (default $VMPI_NPB_DIR)")
    ap.add_argument("--build", metavar="DIR", required=True, help="vmpi's build dir")
    ap.add_argument("--work", metavar="DIR", default="nas-work",
                    help="where builds, logs and results go (default nas-work)")
    ap.add_argument("--phase", type=_list, default=["build", "verify", "time"],
                    help="any of build,verify,time (default all three)")
    ap.add_argument("--kernels", type=_list, default=list(nas.KERNELS))
    ap.add_argument("--classes", type=_list, default=list(nas.CLASSES),
                    help="classes to build and verify (default S,A)")
    ap.add_argument("--toolchains", type=_list,
                    default=["vmpi", "vmpi-usempi", "mpich", "openmpi"],
                    help="vmpi-usempi: vmpi's, with `use mpi` instead of mpif.h")
    ap.add_argument("--verify-series", type=_list, default=list(VERIFY_SERIES),
                    help=f"known: {', '.join(nas.SERIES)}")
    ap.add_argument("--series", type=_list, default=list(TIME_SERIES),
                    help="series of the timing table")
    ap.add_argument("--timing-class", default="A")
    ap.add_argument("--reps", type=int, default=3, help="timing rounds (default 3)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds a run (default 900)")
    ap.add_argument("--rebuild", action="store_true", help="build from a fresh copy")
    ap.add_argument("--append", action="store_true",
                    help="phase time adds rounds to those on file (else starts afresh)")
    return ap


def main(argv: list[str]) -> int:
    o = _parser().parse_args(argv)
    bad = [s for s in o.series + o.verify_series if s not in nas.SERIES] + \
        [k for k in o.kernels if k not in nas.KERNELS] + \
        [c for c in o.classes + [o.timing_class] if c not in nas.DT_GRAPHS]
    if bad:
        print(f"nas: unknown {', '.join(bad)}", file=sys.stderr)
        return 2
    try:
        npb = nas.find_npb(o.npb)
    except nas.NasError as exc:
        print(f"nas: {exc}", file=sys.stderr)
        return 2
    if npb is None:
        print("nas: no NPB sources: give --npb DIR or set VMPI_NPB_DIR", file=sys.stderr)
        return 2
    build = os.path.abspath(o.build)
    if not os.path.isfile(os.path.join(build, "bin", "vmpirun")):
        print(f"nas: {build} has no bin/vmpirun", file=sys.stderr)
        return 2
    work = os.path.abspath(o.work)
    os.makedirs(work, exist_ok=True)
    summary_path = os.path.join(work, "nas.json")
    summary = json.load(open(summary_path)) if os.path.exists(summary_path) else {}
    summary["machine"] = nas.machine()
    summary["npb"] = npb
    logs = os.path.join(work, "logs")
    failed = 0
    if "build" in o.phase:
        tcs = nas.toolchains(build)
        classes = sorted(set(o.classes) | {o.timing_class})
        summary["build"] = {t: nas.build(npb, work, tcs[t], o.kernels, classes, o.rebuild)
                            for t in o.toolchains}
    vpath, tpath = os.path.join(work, "nas-verify.jsonl"), os.path.join(work, "nas-time.jsonl")
    if "verify" in o.phase:
        sink = nas.JsonLines(vpath)
        for case in nas.cases(o.kernels, o.classes):
            for s in o.verify_series:
                r = nas.run(nas.SERIES[s], case, work, build, o.timeout, logs)
                sink(r)
                failed += nas.own_failures([r])
                print(f"verify {case.name:10} {s:18} {r['status']}", flush=True)
    if "time" in o.phase:
        if os.path.exists(tpath) and not o.append:  # medians of this run's rounds only
            os.replace(tpath, tpath + ".old")
        cs = nas.cases(o.kernels, [o.timing_class], all_graphs=False)
        failed += nas.own_failures(nas.timing_rounds(
            o.series, cs, work, build, o.reps, o.timeout, logs, nas.JsonLines(tpath),
            lambda m: print(m, flush=True)))
    # the tables are made from every record on file (the last run of a
    # case and series counts for verification)
    md = []
    ver = {(r["case"], r["series"]): r for r in nas.load(vpath)}
    if ver:
        names = [c.name for c in nas.cases(nas.KERNELS, nas.CLASSES)]
        series = [s for s in nas.SERIES if any(k[1] == s for k in ver)]
        summary["verify"] = list(ver.values())
        md.append("## Verification (the last run of each)\n\n" + nas.verify_table(
            list(ver.values()), series, [n for n in names if any(k[0] == n for k in ver)]))
    recs = [r for r in nas.load(tpath) if "case" in r]
    if recs:
        rounds = [r for r in nas.load(tpath) if "case" not in r]
        series = [s for s in nas.SERIES if any(r["series"] == s for r in recs)]
        names = list(dict.fromkeys(r["case"] for r in recs))
        cores = os.cpu_count() or 1
        summary.update(time=recs, rounds=rounds, overhead_geomean={
            s: nas.geomean_overhead(recs, s) for s in series if s != "vmpi"})
        runs = ", ".join(f"{s} {sum(r['series'] == s and r['case'] == names[0] for r in recs)}"
                         for s in series)
        md.append(f"## Medians of interleaved rounds (runs of each: {runs}; {nas.RANKS} ranks "
                  f"on {cores} cores: oversubscribed; load average before each round: "
                  f"{'; '.join(r['loadavg_before'] for r in rounds)})")
        for title, part in (("Libraries, one VM", LIBRARY_SERIES),
                            ("vmpi's placements and policies", PLACEMENT_SERIES)):
            part = [s for s in part if s in series]
            if part:
                geo = ", ".join(f"{nas.SERIES[s].label} {g * 100:+.1f} %" for s in part
                                if s != "vmpi" and nas.SERIES[s].launcher == "vmpirun"
                                and (g := summary["overhead_geomean"].get(s)) is not None)
                md.append(f"### {title}: seconds (Mop/s)\n\n" +
                          nas.time_table(recs, part, names, cores) +
                          (f"\n\nGeometric mean against vmpi in one VM: {geo}." if geo else ""))
    with open(summary_path, "w") as f:
        json.dump(summary, f, indent=1)
    if md:
        with open(os.path.join(work, "nas.md"), "w") as f:
            f.write("\n\n".join(md) + "\n")
        print("\n\n".join(md))
    return 1 if failed else 0  # vmpi's failures only


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
