#!/usr/bin/env python3
"""Plot a lockbench sweep: throughput and fairness against threads, one line
per lock (and parking mode), as one self-contained SVG file.

    python3 bench/lockplot.py SWEEP.json OUT.svg [--park futex|yield|all]
    python3 bench/lockplot.py SWEEP.json --table [--park ...]   (markdown)

Python 3.11 standard library only: the SVG is written by hand so the plot
needs nothing beyond what `make test` installs.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict

COLORS = {"tas": "#8c564b", "ticket": "#d62728", "pticket": "#ff7f0e", "spark": "#9467bd",
          "oticket": "#2ca02c", "oticket-fifo": "#98df8a", "mcs": "#17becf",
          "mutex": "#1f77b4"}
NAMES = {"tas": "TAS + back-off", "ticket": "ticket", "pticket": "proportional ticket",
         "spark": "spin-then-park ticket", "oticket": "opportunistic ticket",
         "oticket-fifo": "opportunistic ticket, strict FIFO",
         "mcs": "MCS", "mutex": "pthread mutex"}


def series_name(r: dict) -> str:
    """The lock's name; the opportunistic lock without stealing (lockbench
    --steal-ns off writes steal_ns null) is a series of its own."""
    if r["lock"] == "oticket" and "steal_ns" in r and r["steal_ns"] is None:
        return "oticket-fifo"
    return r["lock"]


def load(path: str, park: str) -> dict[tuple[str, str], list[dict]]:
    with open(path) as f:
        data = json.load(f)
    series: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in data["results"]:
        if park != "all" and r["park"] != park:
            continue
        series[(series_name(r), r["park"])].append(r)
    for rows in series.values():
        rows.sort(key=lambda r: r["threads"])
    return series


def panel(out: list[str], x0: float, y0: float, w: float, h: float, series, key: str,
          title: str, ylog: bool, ymin: float | None = None, ymax: float | None = None) -> None:
    xs = sorted({r["threads"] for rows in series.values() for r in rows})
    vals = [r[key] for rows in series.values() for r in rows if r[key] > 0]
    lo = ymin if ymin is not None else min(vals)
    hi = ymax if ymax is not None else max(vals)
    if ylog:
        lo, hi = 10 ** math.floor(math.log10(lo)), 10 ** math.ceil(math.log10(hi))
    xl, xh = math.log2(xs[0]), math.log2(xs[-1]) or 1

    def px(t: float) -> float:
        return x0 + (math.log2(t) - xl) / (xh - xl or 1) * w

    def py(v: float) -> float:
        if ylog:
            f = (math.log10(max(v, lo)) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
        else:
            f = (v - lo) / (hi - lo or 1)
        return y0 + h - f * h

    out.append(f'<text x="{x0 + w / 2}" y="{y0 - 10}" text-anchor="middle" '
               f'font-size="14">{title}</text>')
    out.append(f'<rect x="{x0}" y="{y0}" width="{w}" height="{h}" fill="none" stroke="#444"/>')
    for t in xs:
        out.append(f'<line x1="{px(t)}" y1="{y0}" x2="{px(t)}" y2="{y0 + h}" stroke="#ddd"/>')
        out.append(f'<text x="{px(t)}" y="{y0 + h + 16}" text-anchor="middle" '
                   f'font-size="11">{t}</text>')
    out.append(f'<text x="{x0 + w / 2}" y="{y0 + h + 34}" text-anchor="middle" '
               f'font-size="12">threads on 2 cores</text>')
    ticks = ([10 ** e for e in range(round(math.log10(lo)), round(math.log10(hi)) + 1)]
             if ylog else [lo + (hi - lo) * i / 5 for i in range(6)])
    for v in ticks:
        label = f"{v:.0e}".replace("e+0", "e") if ylog else f"{v:.1f}"
        out.append(f'<line x1="{x0}" y1="{py(v)}" x2="{x0 + w}" y2="{py(v)}" stroke="#eee"/>')
        out.append(f'<text x="{x0 - 6}" y="{py(v) + 4}" text-anchor="end" '
                   f'font-size="11">{label}</text>')
    for (lock, park), rows in sorted(series.items()):
        pts = " ".join(f"{px(r['threads']):.1f},{py(r[key]):.1f}" for r in rows)
        dash = ' stroke-dasharray="5,3"' if park == "yield" else ""
        out.append(f'<polyline points="{pts}" fill="none" stroke="{COLORS.get(lock, "#000")}" '
                   f'stroke-width="2"{dash}/>')
        for r in rows:
            out.append(f'<circle cx="{px(r["threads"]):.1f}" cy="{py(r[key]):.1f}" r="2.5" '
                       f'fill="{COLORS.get(lock, "#000")}"/>')


def svg(series) -> str:
    W, H = 980, 420
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'font-family="sans-serif">', f'<rect width="{W}" height="{H}" fill="white"/>']
    panel(out, 80, 40, 360, 300, series, "throughput", "throughput (acquisitions/s)", True)
    panel(out, 520, 40, 250, 300, series, "jain", "fairness (Jain's index)", False, 0.0, 1.0)
    y = 50
    for (lock, park) in sorted(series):
        color = COLORS.get(lock, "#000")
        dash = ' stroke-dasharray="5,3"' if park == "yield" else ""
        out.append(f'<line x1="790" y1="{y}" x2="815" y2="{y}" stroke="{color}" '
                   f'stroke-width="2"{dash}/>')
        out.append(f'<text x="820" y="{y + 4}" font-size="11">{NAMES.get(lock, lock)} '
                   f'({park})</text>')
        y += 18
    out.append("</svg>")
    return "\n".join(out) + "\n"


def table(series) -> str:
    threads = sorted({r["threads"] for rows in series.values() for r in rows})
    head = "| lock | park | " + " | ".join(f"T={t}" for t in threads) + " |"
    lines = [head, "| --- | --- |" + " ---: |" * len(threads)]
    for (lock, park), rows in sorted(series.items()):
        by = {r["threads"]: r for r in rows}
        cells = [f"{by[t]['throughput'] / 1e3:.0f}k ({by[t]['jain']:.2f})" if t in by else ""
                 for t in threads]
        lines.append(f"| {NAMES.get(lock, lock)} | {park} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sweep")
    ap.add_argument("out", nargs="?")
    ap.add_argument("--park", default="futex", choices=("futex", "yield", "all"))
    ap.add_argument("--table", action="store_true", help="print a markdown table instead")
    o = ap.parse_args()
    series = load(o.sweep, o.park)
    if not series:
        sys.exit(f"lockplot: no results for --park {o.park} in {o.sweep}")
    if o.table:
        sys.stdout.write(table(series))
        return 0
    if not o.out:
        ap.error("OUT.svg is required without --table")
    with open(o.out, "w") as f:
        f.write(svg(series))
    return 0


if __name__ == "__main__":
    sys.exit(main())
