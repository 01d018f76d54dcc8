"""``vmpi study model``: measure what the model needs, fit it, check it
against the emulation and print its predictions (:mod:`vmpi.study.model`).

    vmpi study model [--out DIR] [--build DIR] [--reps R] [--quick]
                     [--skip-measure] [--no-validate]

Steps, each result kept in DIR (default vmpi-model) so that a later call
with --skip-measure only refits and reprints:

1. channels.jsonl: bench/latency (ping-pong) and bench/bw (window of 64)
   on smp (2 ranks, one VM), ivshmem (2 VMs of one host), ofi (2 hosts),
   and the hand-off of each: the ping-pong with both ranks on one core,
   what a rank pays to get its turn when ranks outnumber cores,
   and memcpy of 64 KiB to 4 MiB (bench/clping --memcpy), the copies
   through the collective slots;
2. colls.jsonl: bench/coll at the validation placements (4, 16 and 64
   ranks, 1 to 16 VMs, 2 hosts at 4 ranks), vmpi's default (aware), the
   virtual NIC between VMs (vnic: ``VMPI_CHANNELS=smp,ofi``) and the
   locality-unaware path (unaware: that and every ``VMPI_COLL_*=flat``);
3. model.json: the fitted parameters, the validation tables (predicted
   against measured, error in %: this run's, and the reference runs' of
   model_ref.json, bench/coll results docs/PERFORMANCE.md recorded on a
   quieter machine) and the predictions; printed as Markdown.

Runs are interleaved (every configuration once, then again, R times).  A
point-to-point value is the median over the repetitions of a run's median;
a collective's measured value is the minimum over the repetitions of the
run's mean (the median is kept beside it): this machine is shared, and
other jobs only ever add time, most of all to oversubscribed runs.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time

from ..options import UsageError, probe_rr
from . import model
from .run import Layout
from .spec import SCHEDS, StudyError
from .stats import median

DEFAULT_OUT = "vmpi-model"
# (ranks, hosts, VMs per host, policy) measured for the validation; the
# unaware path only where VMs differ from nodes.  2 ranks: one a core, the
# only placements this machine runs without oversubscription.
VALIDATION = (
    (2, 1, 1, "aware"), (2, 1, 2, "aware"), (2, 1, 2, "unaware"), (2, 2, 1, "aware"),
    (4, 1, 1, "aware"), (4, 1, 2, "aware"), (4, 1, 2, "unaware"), (4, 2, 1, "aware"),
    (16, 1, 1, "aware"), (16, 1, 4, "aware"), (16, 1, 4, "unaware"),
    (64, 1, 1, "aware"), (64, 1, 16, "aware"), (64, 1, 16, "unaware"),
    (4, 1, 2, "vnic"), (16, 1, 4, "vnic"), (64, 1, 16, "vnic"),
)
QUICK = ((4, 1, 1, "aware"), (4, 1, 2, "unaware"))
COPY_SIZES = (65536, 262144, 1048576, 4194304)
TURN_RANKS = (2, 4, 8, 16, 32)   # ranks on one core whose turns are measured
COLLS = ("barrier", "bcast", "allreduce", "allgather", "alltoall")
SIZES = (8, 65536)
UNAWARE_ENV = ["VMPI_CHANNELS=smp,ofi"] + [
    f"VMPI_COLL_{c}=flat" for c in ("BARRIER", "BCAST", "REDUCE", "ALLREDUCE", "GATHER",
                                     "SCATTER", "ALLGATHER", "ALLTOALL")]


def _records(text: str) -> list[dict]:
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def _run(cmd: list[str], timeout: float) -> tuple[list[dict], str]:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return [], "timeout"
    if p.returncode != 0:
        return _records(p.stdout), f"exit {p.returncode}: {p.stderr.strip()[-300:]}"
    return _records(p.stdout), ""


def _vmpirun(lay: Layout, n: int, hosts: int, vms: int, env: list[str],
             bind: bool = True, sched: str = "default") -> list[str]:
    cmd = [lay.vmpirun, "-n", str(n), "--timeout", "170"]
    if sched != "default":
        cmd += ["--sched", sched]
    if bind:
        cmd += ["--bind", "core"]
    if hosts > 1:
        cmd += ["--hosts", str(hosts)]
    if vms > 1:
        cmd += ["--vms", str(vms)]
    for e in env:
        cmd += ["-x", e]
    return cmd


def channel_jobs(lay: Layout, sched: str = "default") -> list[tuple[dict, list[str]]]:
    """(key, command) of every point-to-point run the fit uses; the
    hand-offs under ``sched``, as the collectives that pay them."""
    lat = [os.path.join(lay.bench, "latency"), "-m", "1:65536", "-i", "2000", "--json"]
    bw = [os.path.join(lay.bench, "bw"), "-m", "8:65536", "--json"]
    jobs = []
    for chan, hosts, vms in (("smp", 1, 1), ("ivshmem", 1, 2), ("ofi", 2, 1)):
        base = _vmpirun(lay, 2, hosts, vms, [])
        jobs.append(({"channel": chan, "bench": "latency"}, base + lat))
        jobs.append(({"channel": chan, "bench": "bw"}, base + bw))
    # Both ranks on one core, yielding while they wait as oversubscribed
    # jobs do (VMPI_YIELD_POLLS is 1 there): the hand-off of each channel.
    for chan, hosts, vms in (("smp", 1, 1), ("ivshmem", 1, 2), ("ofi", 2, 1)):
        jobs.append(({"channel": "handoff-" + chan, "bench": "latency", "sched": sched},
                     ["taskset", "-c", "0"]
                     + _vmpirun(lay, 2, hosts, vms, ["VMPI_YIELD_POLLS=1"], bind=False,
                                sched=sched)
                     + [os.path.join(lay.bench, "latency"), "-m", "8:8", "-i", "1000",
                        "--json"]))
    # A turn with k ranks on one core: the hop of a message around a ring
    # of k ranks, yielding as above, about 8,000 hops a run.
    for k in TURN_RANKS:
        jobs.append(({"channel": "turns", "bench": "ring", "ranks": k, "sched": sched},
                     ["taskset", "-c", "0"]
                     + _vmpirun(lay, k, 1, 1, ["VMPI_YIELD_POLLS=1"], bind=False, sched=sched)
                     + [os.path.join(lay.bench, "ring"), "-i", str(8000 // k), "--json"]))
    # What a copy through the collective slots costs per byte: memcpy of
    # buffers from cache-sized to larger than the caches.
    for size in COPY_SIZES:
        jobs.append(({"channel": "copy", "bench": "memcpy"},
                     [os.path.join(lay.bench, "clping"), "--memcpy", "-s", str(size), "--json"]))
    return jobs


def coll_jobs(lay: Layout, grid, sched: str = "default") -> list[tuple[dict, list[str]]]:
    jobs = []
    for n, hosts, vms, policy in grid:
        env = {"unaware": UNAWARE_ENV, "vnic": UNAWARE_ENV[:1]}.get(policy, [])
        iters = "50" if n >= 64 else "200"
        for coll in COLLS:
            args = [os.path.join(lay.bench, "coll"), coll, "-i", iters, "-x", "10", "--json"]
            if coll != "barrier":
                args[2:2] = ["--sizes", ",".join(map(str, SIZES))]
            key = {"ranks": n, "hosts": hosts, "vms": vms, "policy": policy, "coll": coll,
                   "sched": sched}
            jobs.append((key, _vmpirun(lay, n, hosts, vms, env, sched=sched) + args))
    return jobs


def runnable() -> int:
    """Processes running or ready to run now, this one left out."""
    with open("/proc/loadavg") as f:
        return int(f.read().split()[3].split("/")[0]) - 1


def quiet(limit: int = 1, patience: float = 6.0) -> float:
    """Wait (at most patience seconds) until at most limit other processes
    want a processor, three readings 0.2 s apart; the seconds waited.
    Other jobs on a shared machine distort oversubscribed runs most."""
    t0 = time.monotonic()
    calm = 0
    while calm < 3 and time.monotonic() - t0 < patience:
        calm = calm + 1 if runnable() <= limit else 0
        time.sleep(0.2)
    return time.monotonic() - t0


def measure(jobs, path: str, reps: int, stream=sys.stderr) -> None:
    """Every job once per repetition, interleaved, each started when the
    machine is quiet (:func:`quiet`); one line per run in path."""
    with open(path, "a") as f:
        for rep in range(reps):
            for i, (key, cmd) in enumerate(jobs):
                waited = quiet()
                t0 = time.monotonic()
                recs, err = _run(cmd, 200)
                dt = time.monotonic() - t0
                print(f"[{rep + 1}/{reps} {i + 1}/{len(jobs)}] {json.dumps(key)} "
                      f"{dt:.1f} s {err}", file=stream, flush=True)
                f.write(json.dumps({**key, "rep": rep, "cmd": shlex.join(cmd),
                                    "error": err, "load": os.getloadavg()[0],
                                    "waited": round(waited, 1),
                                    "seconds": round(dt, 2), "records": [
                                        {k: r.get(k) for k in ("size", "p50_us", "mean_us",
                                                               "mbps", "samples_mbps")}
                                        for r in recs]}) + "\n")
                f.flush()


def stored_sched(runs: list[dict]) -> str:
    """The policy the stored oversubscribed runs had ("default" for runs
    from before it was kept); mixed measurements are refused."""
    seen = {r.get("sched", "default") for r in runs
            if r.get("channel", "").startswith(("handoff-", "turns")) or "coll" in r}
    if len(seen) > 1:
        raise StudyError(f"measurements of several scheduling policies ({', '.join(sorted(seen))})"
                         " in one directory")
    return seen.pop() if seen else "default"


def _load(path: str) -> list[dict]:
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def channel_data(runs: list[dict]) -> dict:
    """{channel: {"latency": {size: us}, "gap": {size: us per message}}},
    medians over repetitions; the window rate from the median window; the
    rings' hops as "turns": {"latency": {ranks on the core: us}}."""
    acc: dict = {}
    for r in runs:
        if r.get("error"):
            continue
        ch = acc.setdefault(r["channel"], {"latency": {}, "gap": {}})
        for rec in r["records"]:
            if r["bench"] == "ring" and rec.get("p50_us") is not None:
                ch["latency"].setdefault(r["ranks"], []).append(rec["p50_us"])
            elif r["bench"] == "latency" and rec.get("p50_us") is not None:
                ch["latency"].setdefault(rec["size"], []).append(rec["p50_us"])
            elif r["bench"] == "memcpy" and rec.get("mbps"):
                ch["gap"].setdefault(rec["size"], []).append(rec["size"] / rec["mbps"])
            elif r["bench"] == "bw":
                mb = median(rec["samples_mbps"]) if rec.get("samples_mbps") else rec.get("mbps")
                if mb:
                    ch["gap"].setdefault(rec["size"], []).append(rec["size"] / mb)
    return {c: {k: {s: median(v) for s, v in d[k].items()} for k in d} for c, d in acc.items()}


def coll_data(runs: list[dict]) -> list[dict]:
    """One row per (placement, policy, collective, size): the median and
    the minimum over repetitions of the run's mean latency (bench/coll's
    table value).  Other jobs on the machine only add time, so the
    minimum is the least disturbed reading."""
    acc: dict = {}
    for r in runs:
        for rec in r["records"]:
            if rec.get("mean_us") is None:
                continue
            key = (r["ranks"], r["hosts"], r["vms"], r["policy"], r["coll"], rec["size"])
            acc.setdefault(key, []).append(rec["mean_us"])
    return [{"ranks": k[0], "hosts": k[1], "vms": k[2], "policy": k[3], "coll": k[4],
             "size": k[5], "us": min(v), "median_us": median(v), "reps": len(v)}
            for k, v in sorted(acc.items())]


REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model_ref.json")


def load_reference(path: str) -> list[dict]:
    """The rows of a reference file (model_ref.json's format)."""
    try:
        with open(path) as f:
            doc = json.load(f)
        return [{k: r[k] for k in ("ranks", "hosts", "vms", "policy", "coll", "size", "us")}
                for r in doc["rows"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise StudyError(f"--reference {path}: {exc}") from None


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="vmpi study model",
        description="Fit LogGP-style channel parameters, check the collective model "
                    "against the emulation and predict collectives at scale.")
    ap.add_argument("--out", metavar="DIR", default=DEFAULT_OUT,
                    help=f"where measurements and model.json go (default {DEFAULT_OUT})")
    ap.add_argument("--build", metavar="DIR", help="vmpi's build tree or install prefix")
    ap.add_argument("--reps", type=int, default=3, help="interleaved repetitions (default 3)")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run: 4 ranks, two placements, one repetition")
    ap.add_argument("--skip-measure", action="store_true",
                    help="use the measurements already in --out")
    ap.add_argument("--reference", metavar="FILE", default=REFERENCE,
                    help="earlier bench/coll results to validate against as well "
                         "(default: the quiet-machine runs of docs/PERFORMANCE.md, "
                         "model_ref.json; none: skip)")
    ap.add_argument("--sched", choices=SCHEDS,
                    help="the scheduling policy of the oversubscribed runs (the hand-offs "
                         "and the collectives): the kernel's default, or rr (vmpirun --sched "
                         "rr)")
    ap.add_argument("--no-validate", action="store_true",
                    help="measure the channels only, not the collectives")
    return ap


def main(argv: list[str]) -> int:
    o = _parser().parse_args(argv)
    chan_path = os.path.join(o.out, "channels.jsonl")
    coll_path = os.path.join(o.out, "colls.jsonl")
    try:
        if not o.skip_measure:
            sched = o.sched or "default"
            if sched == "rr":
                probe_rr()  # else every oversubscribed run would fail alike
            lay = Layout(o.build, o.out)
            os.makedirs(o.out, exist_ok=True)
            for p in (chan_path, coll_path):
                if os.path.exists(p):
                    os.remove(p)
            reps = 1 if o.quick else o.reps
            measure(channel_jobs(lay, sched), chan_path, reps)
            if not o.no_validate:
                measure(coll_jobs(lay, QUICK if o.quick else VALIDATION, sched), coll_path,
                        reps)
        if not os.path.exists(chan_path):
            raise StudyError(f"no channel measurements in {o.out} (run without --skip-measure)")
        chan_runs = _load(chan_path)
        coll_runs = _load(coll_path) if os.path.exists(coll_path) else []
        sched = stored_sched(chan_runs + coll_runs)
        if o.skip_measure and o.sched and o.sched != sched:
            raise StudyError(f"--sched {o.sched}: the measurements in {o.out} ran --sched "
                             f"{sched}")
        params = model.fit(channel_data(chan_runs))
        measured = coll_data(coll_runs)
        reference = load_reference(o.reference) if o.reference != "none" else []
    except (StudyError, UsageError, ValueError) as exc:
        print(f"vmpi study model: {exc}", file=sys.stderr)
        return 2
    doc = model.evaluate(params, measured, reference)
    doc["sched"] = sched
    with open(os.path.join(o.out, "model.json"), "w") as f:
        json.dump(doc, f, indent=1)
    print(model.format_markdown(doc))
    return 0
