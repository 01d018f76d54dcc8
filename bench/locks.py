#!/usr/bin/env python3
"""The lock study: one lockbench sweep (every lock, T = 1 .. 64 threads on
this machine's cores, futex and yield parking; the opportunistic ticket lock
also strictly FIFO) plus the opportunistic ticket lock's parameters at 16
and 32 threads, the oversubscribed points of the issue's targets: the
stealing bound and the steal spin, and the queue's parameters (distance
cut-off, N woken per unlock, time cap) both with stealing and strictly FIFO
(where every acquisition goes through the queue).

    python3 bench/locks.py [--build DIR] [--out DIR] [--duration S]
    python3 bench/locks.py --targets [--reps N] [--duration S]

Writes OUT/locks-sweep.json (lockbench's sweep file), OUT/locks-params.json
(every parameter run; each parameter point is run --reps times and the
run with the median throughput is reported), OUT/locks.svg (bench/lockplot.py), and
prints markdown tables: throughput in acquisitions/s with Jain's fairness
index in parentheses. Every run: --cs 1 (one cache line touched inside the
lock) and --delay 100 (about 100 ns of local work outside it).

--targets checks the issue's targets instead: the pthread mutex, the
spin-then-park ticket lock and the opportunistic ticket lock at 16 and 32
threads (futex parking), --reps interleaved rounds, and prints each lock's
median throughput and Jain's index and the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
COMMON = ["--cs", "1", "--delay", "100"]
# (parameter, values, fixed extra arguments, label)
FIFO = ["--steal-ns", "off"]
PARAMS = [("steal-ns", ["off", 20000, 200000, 1000000, 5000000], [], "stealing"),
          ("steal-spin", [16, 256, 4096], [], "stealing")]
for _name, _values in (("cutoff", [1, 2, 4, 8, 32]), ("wake-n", [1, 2, 4, 8]),
                       ("time-cap-ns", [2000, 20000, 200000])):
    PARAMS += [(_name, _values, FIFO, "strict FIFO"), (_name, _values, [], "stealing")]


def run_one(lockbench: str, threads: int, duration: str, extra: list[str],
            lock: str = "oticket") -> dict:
    cmd = [lockbench, "--lock", lock, "--threads", str(threads), "--duration", duration,
           "--json", *COMMON, *extra]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--out", default=".")
    ap.add_argument("--duration", default="1")
    ap.add_argument("--reps", type=int, default=3, help="runs per parameter point")
    ap.add_argument("--params-only", action="store_true",
                    help="only the parameter runs (keep OUT's sweep and plot)")
    ap.add_argument("--targets", action="store_true",
                    help="only the target check: mutex, spark, oticket at 16 and 32 threads")
    o = ap.parse_args()
    lockbench = os.path.join(os.path.abspath(o.build), "bench", "lockbench")
    if o.targets:
        run_targets(lockbench, o)
        return 0
    os.makedirs(o.out, exist_ok=True)
    sweep = os.path.join(o.out, "locks-sweep.json")
    if not o.params_only:
        run_sweep(lockbench, sweep, o)
    run_params(lockbench, o)
    return 0


def run_sweep(lockbench: str, sweep: str, o: argparse.Namespace) -> None:
    fifo = sweep + ".fifo"
    for lock, out, extra in (("all", sweep, []), ("oticket", fifo, FIFO)):
        cmd = [lockbench, "--lock", lock, "--park", "both", "--sweep", out, "--max-threads", "64",
               "--duration", o.duration, *COMMON, *extra]
        print("# " + " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True, stdout=sys.stderr)
    with open(sweep) as f:
        data = json.load(f)
    with open(fifo) as f:
        data["results"] += json.load(f)["results"]
    os.unlink(fifo)
    with open(sweep, "w") as f:
        json.dump(data, f, indent=0)
    for park in ("futex", "yield"):
        print(f"\n### throughput (acq/s) and Jain's index, {park} parking\n", flush=True)
        subprocess.run([sys.executable, os.path.join(HERE, "lockplot.py"), sweep, "--table",
                        "--park", park], check=True)
    subprocess.run([sys.executable, os.path.join(HERE, "lockplot.py"), sweep,
                    os.path.join(o.out, "locks.svg"), "--park", "all"], check=True)


def run_targets(lockbench: str, o: argparse.Namespace) -> None:
    locks = ("mutex", "spark", "oticket")
    print("| threads | lock | median acq/s | median Jain | runs (acq/s) |")
    print("| ---: | --- | ---: | ---: | --- |")
    for t in (16, 32):
        runs: dict[str, list[dict]] = {k: [] for k in locks}
        for _ in range(o.reps):
            for k in locks:
                runs[k].append(run_one(lockbench, t, o.duration, [], lock=k))
        med = {}
        for k in locks:
            tput = sorted(r["throughput"] for r in runs[k])
            jain = sorted(r["jain"] for r in runs[k])
            med[k] = statistics.median(tput)
            print(f"| {t} | {k} | {med[k] / 1e3:.0f}k | {statistics.median(jain):.2f} | "
                  + ", ".join(f"{v / 1e3:.0f}k" for v in tput) + " |", flush=True)
        print(f"| {t} | oticket / spark | {med['oticket'] / med['spark']:.1f} x | | |")
        print(f"| {t} | oticket / mutex | {med['oticket'] / med['mutex']:.2f} x | | |", flush=True)


def run_params(lockbench: str, o: argparse.Namespace) -> None:
    results = []
    for name, values, extra, label in PARAMS:
        print(f"\n### opportunistic ticket (futex, {label}), --{name}\n")
        print(f"| --{name} | T=16 acq/s | T=16 Jain | T=32 acq/s | T=32 Jain |")
        print("| ---: | ---: | ---: | ---: | ---: |")
        for v in values:
            cells = []
            for t in (16, 32):
                runs = [run_one(lockbench, t, o.duration, [*extra, f"--{name}", str(v)])
                        for _ in range(o.reps)]
                for r in runs:
                    r["param"] = name
                    r["mode"] = label
                results += runs
                r = sorted(runs, key=lambda r: r["throughput"])[len(runs) // 2]
                cells += [f"{r['throughput'] / 1e3:.0f}k", f"{r['jain']:.2f}"]
            print(f"| {v} | " + " | ".join(cells) + " |", flush=True)
    with open(os.path.join(o.out, "locks-params.json"), "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
