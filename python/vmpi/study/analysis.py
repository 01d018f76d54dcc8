"""From the runs of a study (results.jsonl) to its tables: every point
(benchmark, library, placement, policy, ranks, series, size) summarized over
its repetitions, and the headline table the report and the terminal open
with."""

from __future__ import annotations

import csv
import json
import math
from collections import defaultdict
from typing import NamedTuple

from . import stats
from .spec import PEERS, Placement, machine_cores, ranks_on_cores, series_label


class Key(NamedTuple):
    bench: str
    library: str
    placement: str
    policy: str
    ranks: int
    series: str
    x: int


def load_results(path: str) -> list[dict]:
    """The runs in a results file, the last line of each run key winning
    (a resumed study may have retried a failed run)."""
    runs: dict[str, dict] = {}
    try:
        with open(path) as f:
            for line in f:
                try:
                    run = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by a crash
                if isinstance(run, dict) and "key" in run:
                    runs[run["key"]] = run
    except FileNotFoundError:
        return []
    return list(runs.values())


def summarize_runs(runs: list[dict]) -> dict[Key, dict]:
    values: dict[Key, list[float]] = defaultdict(list)
    samples: dict[Key, list[list[float]]] = defaultdict(list)
    extra: dict[Key, list[dict]] = defaultdict(list)
    meta: dict[Key, dict] = {}
    for run in runs:
        if run.get("status") != "ok":
            continue
        for rec in run.get("records", []):
            k = Key(run["bench"], run["library"], run["placement"], run["policy"],
                    run["ranks"], rec["series"], rec["x"])
            values[k].append(rec["value"])
            samples[k].append(rec.get("samples") or [])
            extra[k].append(rec.get("extra") or {})
            meta[k] = {"kind": run["kind"], "metric": run["metric"], "unit": rec["unit"],
                       "program": run["program"], "headline": run.get("headline"),
                       "cores": (run.get("machine") or {}).get("cores") or machine_cores()}
    table = {}
    for k, vals in values.items():
        row = {**meta[k], **stats.summarize(vals, samples[k])}
        jains = [e["jain"] for e in extra[k] if isinstance(e.get("jain"), (int, float))]
        if jains:
            row["jain"] = stats.median(jains)
        table[k] = row
    return table


def _limit(table: dict[Key, dict], placement: str, metric: str, x: int) -> float | None:
    """The physical limit for a point: cache-line ping-pong / memcpy inside a
    host, raw TCP between hosts; of the nearest size measured."""
    remote = Placement.parse(placement).hosts > 1
    want = ("tcp_lat" if metric == "latency" else "tcp_bw") if remote else \
        ("clping" if metric == "latency" else "memcpy")
    pts = [(k.x, row["median"]) for k, row in table.items() if row["program"] == want]
    if not pts:
        return None
    return min(pts, key=lambda p: (abs(math.log2(max(p[0], 1)) - math.log2(max(x, 1))),
                                   -p[0]))[1]


def point(table, bench, library, placement, policy, ranks, series, x) -> dict | None:
    return table.get(Key(bench, library, placement, policy, ranks, series, x))


def native_policy(library: str, policy: str) -> str:
    """The policy of a configuration's one-VM baseline: vmpi's default (its
    unaware policy picks the same channels in one VM), a peer's same setting."""
    return "aware" if library == "vmpi" else policy


def best_setting(table, bench, library, placement, ranks, series, x, metric
                 ) -> tuple[str, dict] | None:
    """A peer's better setting at a point, as shipped or yielding, and its
    row (None: neither ran).  A tie goes to as shipped."""
    have = [(pol, r) for pol in ("default", "yield")
            if (r := point(table, bench, library, placement, pol, ranks, series, x))]
    if not have:
        return None
    sign = 1 if stats.lower_is_better(metric) else -1
    return min(have, key=lambda pr: sign * pr[1]["median"])


def headline(table: dict[Key, dict], placements: list[str]) -> list[dict]:
    """One row per benchmark series and placement at the benchmark's headline
    size: vmpi's value, its overhead against vmpi in one VM, its speedup against
    the locality-unaware policy and against MPICH (Open MPI) at the same
    placement, and the fraction of the physical limit.  A peer that ran both as
    shipped and with its yielding setting (oversubscribed points) counts with
    the better of the two; the row says which (``mpich_setting``) and keeps
    both (``mpich_default``, ``mpich_yield``)."""
    rows = []
    order = []
    for k, row in table.items():
        if k.library == "vmpi" and row["kind"] in ("p2p", "coll", "rma", "app") \
                and (k.bench, k.series, k.ranks) not in order:
            order.append((k.bench, k.series, k.ranks))
    for bench, series, ranks in order:
        xs = sorted({k.x for k in table if k.bench == bench and k.series == series})
        some = next(r for k, r in table.items() if k.bench == bench)
        metric = some["metric"]
        x = some["headline"] if some["headline"] in xs else \
            (xs[0] if stats.lower_is_better(metric) else xs[-1])
        for pl in placements:
            v = point(table, bench, "vmpi", pl, "aware", ranks, series, x)
            if v is None:
                continue
            r = {"bench": bench, "series": series, "x": x, "kind": some["kind"],
                 "ranks": ranks, "cores": v["cores"], "placement": pl,
                 "metric": metric, "unit": some["unit"], "vmpi": v["median"],
                 "vmpi_jitter3s": v["jitter3s"]}
            nat = point(table, bench, "vmpi", "vm", "aware", ranks, series, x)
            if nat is not None and pl != "vm":
                r["overhead_pct"] = stats.overhead_pct(v["median"], nat["median"], metric)
            un = point(table, bench, "vmpi", pl, "unaware", ranks, series, x)
            if un is not None:
                r["unaware"] = un["median"]
                r["vs_unaware"] = stats.speedup(v["median"], un["median"], metric)
            for lib in PEERS:
                best = best_setting(table, bench, lib, pl, ranks, series, x, metric)
                if best is None:
                    continue
                setting, o = best
                r[lib] = o["median"]
                r[f"{lib}_setting"] = setting
                for pol in ("default", "yield"):
                    each = point(table, bench, lib, pl, pol, ranks, series, x)
                    if each is not None:
                        r[f"{lib}_{pol}"] = each["median"]
                r[f"vs_{lib}"] = stats.speedup(v["median"], o["median"], metric)
                onat = best_setting(table, bench, lib, "vm", ranks, series, x, metric)
                if onat is not None and pl != "vm":
                    r[f"{lib}_overhead_pct"] = stats.overhead_pct(
                        o["median"], onat[1]["median"], metric)
            if some["kind"] == "p2p":
                lim = _limit(table, pl, metric, x)
                if lim is not None:
                    r["limit"] = lim
                    r["of_limit"] = stats.fraction_of_limit(v["median"], lim, metric)
            rows.append(r)
    return rows


def size_label(x: int) -> str:
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if x >= div and x % div == 0:
            return f"{x // div} {unit}"
    return f"{x} B"


def x_label(x: int, kind: str) -> str:
    """A point's x as the benchmark means it: bytes, threads, or an
    application's problem size."""
    if kind == "app":
        return f"n={x}"
    if kind == "locks":
        return f"{x} threads"
    return size_label(x)


def _num(v: float) -> str:
    if v >= 1e5:
        return f"{v:.3g}"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


HEADLINE_COLUMNS = ("benchmark", "placement", "ranks on cores", "vmpi", "overhead vs 1 VM",
                    "vs smp,ofi", "MPICH", "MPICH overhead", "vs MPICH", "Open MPI",
                    "vs Open MPI", "of limit")
# marks a peer's value (and vmpi's ratio to it) where its yielding setting
# was the better one
YIELD_MARK = "*"


def headline_cells(r: dict, mark: str = YIELD_MARK) -> list[str]:
    def ratio(key, lib=None):
        m = mark if lib and r.get(f"{lib}_setting") == "yield" else ""
        return f"{r[key]:.2f}x{m}" if key in r else "-"

    def pct(key):
        return f"{r[key]:+.0f} %" if key in r else "-"

    def peer(lib):
        if lib not in r:
            return "-"
        return f"{_num(r[lib])} {r['unit']}{mark if r[f'{lib}_setting'] == 'yield' else ''}"

    name = r["bench"] if r["series"].startswith(r["bench"]) or r["series"] == "value" \
        else f"{r['bench']} {r['series']}"
    return [f"{name} {x_label(r['x'], r['kind'])}", Placement.parse(r["placement"]).label,
            f"{r['ranks']} on {r['cores']}",
            f"{_num(r['vmpi'])} {r['unit']}", pct("overhead_pct"), ratio("vs_unaware"),
            peer("mpich"), pct("mpich_overhead_pct"), ratio("vs_mpich", "mpich"),
            peer("openmpi"), ratio("vs_openmpi", "openmpi"),
            f"{r['of_limit'] * 100:.0f} %" if "of_limit" in r else "-"]


def headline_legend(rows: list[dict], mark: str = YIELD_MARK) -> str:
    """What the ranks column and the mark mean, for under the table."""
    from .spec import YIELD_TEXT
    cores = rows[0]["cores"] if rows else machine_cores()
    over = sorted({r["ranks"] for r in rows if r["ranks"] > r["cores"]})
    text = (f"Medians. \"ranks on cores\": ranks of the job on the machine's {cores} cores "
            "(emulated VMs and hosts share them).")
    if over:
        text += (f" With more ranks than cores MPICH and Open MPI ran as shipped and with "
                 f"their yielding setting (MPICH {YIELD_TEXT['mpich']}: ch4 has no other; "
                 f"Open MPI {YIELD_TEXT['openmpi']}); each cell shows the better of the "
                 f"two, {mark} where that was the yielding one.")
    return text


def format_headline(rows: list[dict]) -> str:
    cells = [list(HEADLINE_COLUMNS)] + [headline_cells(r) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(HEADLINE_COLUMNS))]
    lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                       for i, (c, w) in enumerate(zip(row, widths))).rstrip()
             for row in cells]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines) + "\n" + headline_legend(rows)


CSV_FIELDS = ("bench", "series", "library", "placement", "policy", "ranks", "x", "unit",
              "median", "min", "max", "jitter3s", "p99", "reps", "overhead_pct",
              "fraction_of_limit")


def write_csv(table: dict[Key, dict], path: str) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_FIELDS)
        for k in sorted(table):
            row = table[k]
            nat = point(table, k.bench, k.library, "vm", native_policy(k.library, k.policy),
                        k.ranks, k.series, k.x)
            over = stats.overhead_pct(row["median"], nat["median"], row["metric"]) \
                if nat is not None and k.placement != "vm" and row["kind"] != "limit" else ""
            lim = _limit(table, k.placement, row["metric"], k.x) \
                if row["kind"] == "p2p" else None
            frac = stats.fraction_of_limit(row["median"], lim, row["metric"]) if lim else ""
            w.writerow([k.bench, k.series, k.library, k.placement, k.policy, k.ranks, k.x,
                        row["unit"], row["median"], row["min"], row["max"], row["jitter3s"],
                        row["p99"], row["reps"], over, frac])


def config_label(k: Key) -> str:
    return series_label(k.library, k.placement, k.policy)
