#!/usr/bin/env python3
"""Run bench/io under several MPI libraries interleaved and compare them.

Each ``--run LABEL=CMD`` is a shell command running ``io --json`` (one JSON
object per pattern and size, with ``write_mbps`` and ``read_mbps``).  The
commands run ``--reps`` times interleaved (A, B, C, A, B, C, ...) so that
slow drifts of the machine hit every label alike.  Per pattern, size and
direction the median over the repetitions is printed, one column per
label, then one ratio column per further label against the first
(``other/first``: above 1 means the other library is faster).

Example::

    python3 bench/io.py --reps 3 \\
        --run vmpi="vmpirun -n 4 build/bench/io --json -d /tmp" \\
        --run mpich="mpiexec.mpich -n 4 bench/build/io --json -d /tmp"

Python 3.11 standard library only.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

from compare import checked_runs, parse_run  # bench/compare.py, next to this file


def run_once(label: str, cmd: str) -> dict[tuple[str, int, str], float]:
    """{(pattern, size, "write"|"read"): MB/s} of one run; exits on failure."""
    proc = subprocess.run(cmd, shell=True, executable="/bin/bash",
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(f"io.py: run {label!r} failed (exit {proc.returncode}): {cmd}\n"
                         f"{proc.stdout[-2000:]}{proc.stderr[-4000:]}")
        sys.exit(1)
    values = {}
    for line in proc.stdout.splitlines():
        if not line.startswith("{"):
            continue
        rec = json.loads(line)
        if rec.get("bench") != "io":
            continue
        for op in ("write", "read"):
            values[(rec["pattern"], int(rec["size"]), op)] = float(rec[f"{op}_mbps"])
    if not values:
        sys.stderr.write(f"io.py: run {label!r} printed no results: {cmd}\n{proc.stdout}")
        sys.exit(1)
    return values


def size_name(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return str(n)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="bench/io side by side, interleaved, medians")
    ap.add_argument("--run", action="append", type=parse_run, required=True,
                    metavar="LABEL=CMD", help="label and command (the first is the baseline)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions per command")
    ap.add_argument("--title", default="", help="a line printed above the table")
    ap.add_argument("--json-out", metavar="FILE", help="write medians and every run as JSON")
    args = ap.parse_args(argv)
    labels, cmds = checked_runs(ap, args)

    runs: dict[str, list[dict]] = {label: [] for label in labels}
    for rep in range(args.reps):
        for label in labels:
            print(f"# rep {rep + 1}/{args.reps}: {label}", file=sys.stderr, flush=True)
            runs[label].append(run_once(label, cmds[label]))

    keys = sorted({k for label in labels for r in runs[label] for k in r},
                  key=lambda k: (k[0], k[1], k[2] != "write"))
    med = {label: {k: statistics.median([r[k] for r in runs[label] if k in r])
                   for k in keys if any(k in r for r in runs[label])}
           for label in labels}
    base = labels[0]
    others = labels[1:]
    if args.title:
        print(f"### {args.title}")
    print(f"### MB/s (all ranks' bytes / slowest rank's time), median of {args.reps} "
          "interleaved runs; ratios other/" + base + " (> 1: the other is faster)")
    for label in labels:
        print(f"# {label}: {cmds[label]}")
    cols = labels + [f"{o}/{base}" for o in others]
    print("| pattern | size/rank | op | " + " | ".join(cols) + " |")
    print("|" + "---|" * (3 + len(cols)))
    for k in keys:
        vals = [med[label].get(k) for label in labels]
        cells = [f"{v:.0f}" if v is not None else "-" for v in vals]
        b = vals[0]
        cells += [f"{v / b:.2f}" if v is not None and b else "-" for v in vals[1:]]
        print(f"| {k[0]} | {size_name(k[1])} | {k[2]} | " + " | ".join(cells) + " |")
    if args.json_out:
        doc = {"reps": args.reps, "labels": labels, "commands": cmds,
               "median": {label: {f"{p}/{s}/{op}": v for (p, s, op), v in med[label].items()}
                          for label in labels},
               "runs": {label: [{f"{p}/{s}/{op}": v for (p, s, op), v in r.items()}
                                for r in runs[label]] for label in labels}}
        with open(args.json_out, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
