#!/usr/bin/env python3
"""Run several OSU-style benchmark commands interleaved and compare them.

Each ``--run LABEL=CMD`` is a shell command that prints an OSU table
(``size value`` rows, ``#`` comment lines) or JSON lines from ``--json``.
The commands run ``--reps`` times interleaved (A, B, C, A, B, C, ...) so
slow drifts and noise hit every label alike.  Per size the median over the
repetitions is taken and one side-by-side table is printed: ``# Size``, one
column per label, then one ratio column per further label against the first
(``other/first``, e.g. ``mpich/vmpi``).

Example::

    python3 bench/compare.py --reps 5 \\
        --run vmpi="vmpirun -n 2 build/bench/latency -m 1:1024" \\
        --run mpich="mpiexec.mpich -n 2 -bind-to core bench/build/latency -m 1:1024"

Python 3.11 standard library only.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import time

# JSON keys tried, in order, when --metric is not given.  "mean_us" equals the
# latency table's value; "mbps" is the aggregate bandwidth the bw/bibw tables
# print.
DEFAULT_JSON_METRICS = ("mean_us", "mbps", "mean_mbps", "p50_us", "p50_mbps")


def parse_run(text: str) -> tuple[str, str]:
    label, sep, cmd = text.partition("=")
    if not sep or not label or not cmd.strip():
        raise argparse.ArgumentTypeError(f"expected LABEL=CMD, got {text!r}")
    return label.strip(), cmd


def parse_output(text: str, metric: str | None) -> dict[int, float]:
    """Return {size: value} from an OSU table or from JSON lines."""
    values: dict[int, float] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("{"):
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not isinstance(rec, dict) or "size" not in rec:
                continue
            keys = (metric,) if metric else DEFAULT_JSON_METRICS
            for key in keys:
                if key in rec and isinstance(rec[key], (int, float)):
                    values[int(rec["size"])] = float(rec[key])
                    break
            continue
        fields = line.split()
        if len(fields) < 2:
            continue
        try:
            size = int(fields[0])
            value = float(fields[1])
        except ValueError:
            continue  # stray output (launcher banners etc.)
        values[size] = value
    return values


def run_once(label: str, cmd: str, metric: str | None) -> dict[int, float]:
    proc = subprocess.run(
        cmd, shell=True, executable="/bin/bash", capture_output=True, text=True
    )
    if proc.returncode != 0:
        sys.stderr.write(
            f"compare.py: run {label!r} failed (exit {proc.returncode}): {cmd}\n"
            f"{proc.stderr}"
        )
        sys.exit(1)
    values = parse_output(proc.stdout, metric)
    if not values:
        sys.stderr.write(
            f"compare.py: run {label!r} printed no results: {cmd}\n{proc.stdout}"
        )
        sys.exit(1)
    return values


def fmt_value(v: float | None) -> str:
    if v is None or math.isnan(v):
        return "-"
    return f"{v:.2f}" if abs(v) >= 10 else f"{v:.3f}"



def checked_runs(ap: argparse.ArgumentParser, args) -> tuple[list[str], dict[str, str]]:
    """--reps and the --run pairs checked: the labels in order, their commands."""
    if args.reps < 1:
        ap.error("--reps must be >= 1")
    labels = [label for label, _ in args.run]
    if len(set(labels)) != len(labels):
        ap.error("labels must be unique")
    return labels, dict(args.run)

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Run OSU-style benchmarks interleaved; print per-size "
        "medians side by side with ratios against the first label."
    )
    ap.add_argument(
        "--run",
        action="append",
        type=parse_run,
        required=True,
        metavar="LABEL=CMD",
        help="label and shell command; give several (the first is the baseline)",
    )
    ap.add_argument("--reps", type=int, default=3, help="repetitions per command")
    ap.add_argument(
        "--metric",
        help="JSON key to compare for --json output (default: first of "
        + ", ".join(DEFAULT_JSON_METRICS) + ")",
    )
    ap.add_argument("--json-out", metavar="FILE", help="write the medians as JSON")
    args = ap.parse_args(argv)
    labels, cmds = checked_runs(ap, args)

    runs: dict[str, list[dict[int, float]]] = {label: [] for label in labels}
    started = time.time()
    for rep in range(args.reps):
        for label in labels:
            print(f"# rep {rep + 1}/{args.reps}: {label}", file=sys.stderr, flush=True)
            runs[label].append(run_once(label, cmds[label], args.metric))

    sizes = sorted({size for label in labels for r in runs[label] for size in r})
    medians: dict[str, dict[int, float]] = {}
    for label in labels:
        medians[label] = {}
        for size in sizes:
            vals = [r[size] for r in runs[label] if size in r]
            if vals:
                medians[label][size] = statistics.median(vals)

    base = labels[0]
    ratio_names = [f"{label}/{base}" for label in labels[1:]]
    width = max(18, *(len(n) + 2 for n in labels + ratio_names))

    print(f"# compare: median of {args.reps} interleaved runs per label")
    for label in labels:
        print(f"# {label}: {cmds[label]}")
    header = f"{'# Size':<10}" + "".join(f"{n:>{width}}" for n in labels + ratio_names)
    print(header)
    for size in sizes:
        row = f"{size:<10d}"
        for label in labels:
            row += f"{fmt_value(medians[label].get(size)):>{width}}"
        b = medians[base].get(size)
        for label in labels[1:]:
            v = medians[label].get(size)
            if v is None or b is None or b == 0:
                cell = "-"
            else:
                cell = f"{v / b:.3f}"
            row += f"{cell:>{width}}"
        print(row)

    if args.json_out:
        doc = {
            "reps": args.reps,
            "metric": args.metric,
            "labels": labels,
            "commands": cmds,
            "baseline": base,
            "started": started,
            "sizes": sizes,
            "median": {label: {str(s): v for s, v in medians[label].items()}
                       for label in labels},
            "ratio": {
                f"{label}/{base}": {
                    str(s): medians[label][s] / medians[base][s]
                    for s in sizes
                    if s in medians[label] and medians[base].get(s)
                }
                for label in labels[1:]
            },
            "runs": {label: [{str(s): v for s, v in r.items()} for r in runs[label]]
                     for label in labels},
        }
        with open(args.json_out, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
