"""``vmpi study``: the measurement suite.

    vmpi study [--quick | --config FILE.toml] [--out DIR] [--reps R] [--ranks N]
               [--bench LIST] [--libraries LIST] [--placements LIST]
               [--build DIR] [--npb DIR] [--force] [--dry-run]
    vmpi study --scale [--scale-ranks 4,16,64] [--scale-vms 1,4,16] [--out DIR] ...
    vmpi study --resume --out DIR
    vmpi study report DIR
    vmpi study compare OLD NEW [--threshold PCT]
    vmpi study model [--out DIR] [--skip-measure] ...   (vmpi.study.model_run)

A study is a grid of runs (library x placement x channel policy x
benchmark, each repeated R times); see :mod:`vmpi.study.spec`.  Every
finished run is one line of DIR/results.jsonl; at the end DIR holds
summary.csv, figures/ and report.html, and the headline table is printed.
Exit status 1 if a run of vmpi or of a limit failed; MPICH's and Open MPI's
failures are reported, not fatal.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys

from ..options import UsageError, probe_rr
from .spec import CATALOGUE, SCHEDS, Study, StudyError, default_study, grid, load_toml, quick_study
from .spec import series_label

DEFAULT_OUT = "vmpi-study"


def _list(text: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in text.split(",") if v.strip())


def _ints(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(v) for v in _list(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: want numbers, e.g. 4,16") from None


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="vmpi study", description="Measure native vs virtualized vs vmpi "
        "communication and write tables, figures and an HTML report.",
        epilog="vmpi study report DIR remakes the report of DIR; vmpi study compare OLD NEW "
        "prints what got faster or slower beyond noise (exit status 1 if anything is "
        "slower).")
    what = ap.add_mutually_exclusive_group()
    what.add_argument("--quick", action="store_true", help="a one-minute smoke study")
    what.add_argument("--config", metavar="FILE", help="a study file (TOML)")
    what.add_argument("--scale", action="store_true",
                      help="instead of the default study: collectives and vmpi's memory per "
                           "rank over ranks x VMs (vmpi.study.scale; 3 repetitions unless "
                           "--reps)")
    ap.add_argument("--scale-ranks", type=_ints, metavar="LIST",
                    help="the --scale grid's rank counts (default 4,16,64)")
    ap.add_argument("--scale-vms", type=_ints, metavar="LIST",
                    help="the --scale grid's VM counts (default 1,4,16; each runs with "
                         "the rank counts it divides; 1 VM always runs)")
    ap.add_argument("--out", metavar="DIR", default=DEFAULT_OUT,
                    help=f"where results and the report go (default {DEFAULT_OUT})")
    ap.add_argument("--reps", type=int, help="repetitions of every run (default 5)")
    ap.add_argument("--ranks", type=int, help="ranks for collectives and multi-pair tests")
    ap.add_argument("--bench", type=_list, help="only these benchmarks (comma-separated; "
                    f"known: {', '.join(CATALOGUE)})")
    ap.add_argument("--libraries", type=_list, help="only these of vmpi,mpich,openmpi")
    ap.add_argument("--placements", type=_list,
                    help="e.g. vm,2vm,2host,4vm,2host2vm; 2guest, 2host1guest: real QEMU guests")
    ap.add_argument("--real-vms", action="store_true",
                    help="add placement 2guest: two real QEMU guests sharing an ivshmem device "
                         "(vmpi only; vmpirun --vm-guests)")
    ap.add_argument("--sched", choices=SCHEDS,
                    help="every MPI run's scheduling policy: the kernel's default, or rr "
                         "(SCHED_RR: vmpirun --sched rr, the peers under chrt -r 1; needs "
                         "root or ulimit -r; not the NAS section, not QEMU guests), where a "
                         "rank that yields waits for every other rank of its core to have "
                         "had a turn; runs with a core per rank get it too, and their "
                         "polling ranks then leave the machine's other processes only what "
                         "RT throttling keeps back")
    ap.add_argument("--build", metavar="DIR", help="vmpi's build tree or install prefix")
    ap.add_argument("--resume", action="store_true",
                    help="go on with the study in --out (runs only what is missing)")
    ap.add_argument("--force", action="store_true",
                    help="replace a study already in --out")
    ap.add_argument("--dry-run", action="store_true", help="print the grid, run nothing")
    ap.add_argument("--npb", metavar="DIR", help="NPB3.4-MPI sources for the NAS section "
                    "(default $VMPI_NPB_DIR; without them the section is skipped)")
    return ap


def _study(o) -> Study:
    if o.config:
        try:
            with open(o.config) as f:
                study = load_toml(f.read(), o.config)
        except OSError as exc:
            raise StudyError(f"cannot read {o.config}: {exc.strerror}") from None
    elif o.scale:
        from .scale import RANKS, VMS, scale_study
        study = scale_study(o.scale_ranks or RANKS, o.scale_vms or VMS)
    else:
        study = quick_study() if o.quick else default_study()
    if o.reps is not None:
        study.reps = o.reps
    if o.sched:
        study.sched = o.sched
    if o.ranks is not None:
        study.ranks = o.ranks
    if o.libraries:
        study.libraries = o.libraries
    if o.placements:
        study.placements = o.placements
    if o.real_vms and "2guest" not in study.placements:
        study.placements = (*study.placements, "2guest")
    if (o.scale_ranks or o.scale_vms) and not o.scale:
        raise StudyError("--scale-ranks and --scale-vms shape the --scale grid: add --scale")
    if o.bench:
        unknown = [n for n in o.bench if n not in {b.name for b in study.benches}]
        if unknown:
            raise StudyError(f"--bench: {', '.join(unknown)} not in this study "
                             f"({', '.join(b.name for b in study.benches)})")
        study.benches = [b for b in study.benches if b.name in o.bench]
    study.check()
    return study


def _prepare(o) -> Study:
    plan = os.path.join(o.out, "study.json")
    if o.resume:
        try:
            with open(plan) as f:
                saved = Study.from_json(json.load(f))
        except FileNotFoundError:
            raise StudyError(f"--resume: no study in {o.out} (no study.json)") from None
        except (ValueError, KeyError, TypeError) as exc:
            raise StudyError(f"--resume: {plan} is damaged: {exc}") from None
        if o.sched and o.sched != saved.sched:
            raise StudyError(f"--resume: the study in {o.out} runs --sched {saved.sched}; a "
                             "resumed study keeps its settings")
        return saved
    study = _study(o)
    if o.dry_run:
        return study
    if study.sched == "rr":
        # else every MPI run of the grid would fail the same way
        try:
            probe_rr()
        except UsageError as exc:
            raise StudyError(str(exc)) from None
        if not shutil.which("chrt"):
            raise StudyError("--sched rr: no chrt here (util-linux), which starts the peers' "
                             "launchers round-robin")
    if os.path.exists(plan):
        if not o.force:
            raise StudyError(f"{o.out} already holds a study: --resume goes on with it, "
                             "--force replaces it")
        for name in ("results.jsonl", "study.json", "summary.csv", "report.html"):
            if os.path.exists(os.path.join(o.out, name)):
                os.remove(os.path.join(o.out, name))
        shutil.rmtree(os.path.join(o.out, "figures"), ignore_errors=True)
    os.makedirs(o.out, exist_ok=True)
    with open(plan, "w") as f:
        json.dump(study.to_json(), f, indent=1)
    return study


def _report(study: Study, out: str) -> int:
    from .analysis import format_headline, load_results
    from .report import ReportError, make_report
    runs = load_results(os.path.join(out, "results.jsonl"))
    if not runs:
        print(f"vmpi study: no results in {out}", file=sys.stderr)
        return 1
    try:
        path, head = make_report(study, out, runs)
    except ReportError as exc:
        print(f"vmpi study: {exc}", file=sys.stderr)
        return 1
    if head:
        print(format_headline(head))
    if any(b.kind == "scale" for b in study.benches):
        from .analysis import summarize_runs
        from .scale import format_text
        cores = next((r["machine"]["cores"] for r in runs if r.get("machine")), None)
        print(format_text(summarize_runs(runs), cores or os.cpu_count() or 1))
    print(f"\nreport: {os.path.abspath(path)}")
    return 0


def _run(argv: list[str]) -> int:
    o = _parser().parse_args(argv)
    try:
        study = _prepare(o)
        if o.dry_run:
            configs, skipped = grid(study)
            for c in configs:
                print(f"run  {c.bench:10} {series_label(c.library, c.placement, c.policy)}"
                      f" · {c.ranks} ranks x {study.reps}")
            for c, why in skipped:
                print(f"skip {c.bench:10} {series_label(c.library, c.placement, c.policy)}"
                      f": {why}")
            return 0
        from .run import Layout, run_grid
        layout = Layout(o.build, o.out)
        counts = run_grid(study, o.out, layout)
        from .nas import study_section
        nas_failed = study_section(o.npb, study, o.out, layout.root)
        counts["own"] += nas_failed
        counts["failed"] += nas_failed
    except StudyError as exc:
        print(f"vmpi study: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\nvmpi study: interrupted; every finished run is in "
              f"{os.path.join(o.out, 'results.jsonl')}; go on with: "
              f"vmpi study --resume --out {o.out}", file=sys.stderr)
        return 130
    rc = _report(study, o.out)
    bad = counts["failed"] + counts["timeout"]
    if bad:
        whose = f"{counts['own']} of them vmpi's" if counts["own"] else \
            "all of other libraries, which does not fail the study"
        print(f"vmpi study: {bad} run(s) failed or timed out ({whose}; listed in the "
              "report)", file=sys.stderr)
    # MPICH's or Open MPI's failures are results to report, not vmpi's
    return rc or (1 if counts["own"] else 0)


def main(argv: list[str]) -> int:
    if argv[:1] == ["model"]:
        from .model_run import main as model_main
        return model_main(argv[1:])
    if argv[:1] == ["compare"]:
        ap = argparse.ArgumentParser(prog="vmpi study compare",
                                     description="What got faster or slower beyond noise.")
        ap.add_argument("old")
        ap.add_argument("new")
        ap.add_argument("--threshold", type=float, default=5.0,
                        help="smallest change that counts, in %% (default 5)")
        o = ap.parse_args(argv[1:])
        from .analysis import load_results
        from .compare import compare, format_compare
        sides = []
        for d in (o.old, o.new):
            path = d if d.endswith(".jsonl") else os.path.join(d, "results.jsonl")
            runs = load_results(path)
            if not runs:
                print(f"vmpi study compare: no results in {path}", file=sys.stderr)
                return 2
            sides.append(runs)
        res = compare(sides[0], sides[1], o.threshold / 100)
        print(format_compare(res, o.threshold / 100))
        return 1 if res["slower"] else 0
    if argv[:1] == ["report"]:
        if argv[1:] in (["-h"], ["--help"]):
            print("usage: vmpi study report DIR\n\n(re)writes DIR's tables, plots and "
                  "report.html from DIR/study.json and its results")
            return 0
        if len(argv) != 2:
            print("usage: vmpi study report DIR", file=sys.stderr)
            return 2
        try:
            with open(os.path.join(argv[1], "study.json")) as f:
                study = Study.from_json(json.load(f))
        except (OSError, ValueError, KeyError, TypeError, StudyError) as exc:
            print(f"vmpi study report: no usable study.json in {argv[1]}: {exc}",
                  file=sys.stderr)
            return 2
        return _report(study, argv[1])
    return _run(argv)
