"""``vmpi study compare OLD NEW``: what got faster or slower beyond noise.

A point (benchmark, configuration, series, size) in both studies changed
when its median moved by more than the threshold (default 5 %) *and* the
ranges of the repetitions' values do not overlap, so one noisy repetition
cannot make a regression.  With one repetition per side only the threshold
applies.
"""

from __future__ import annotations

from . import analysis, stats


def compare(old: list[dict], new: list[dict], threshold: float = 0.05) -> dict:
    told, tnew = analysis.summarize_runs(old), analysis.summarize_runs(new)
    faster, slower, same = [], [], 0
    for k in sorted(set(told) & set(tnew)):
        o, n = told[k], tnew[k]
        metric = n["metric"]
        sp = stats.speedup(n["median"], o["median"], metric)
        if stats.lower_is_better(metric):
            apart_fast, apart_slow = n["max"] < o["min"], n["min"] > o["max"]
        else:
            apart_fast, apart_slow = n["min"] > o["max"], n["max"] < o["min"]
        if sp > 1 + threshold and apart_fast:
            faster.append((k, o, n, sp))
        elif sp < 1 / (1 + threshold) and apart_slow:
            slower.append((k, o, n, sp))
        else:
            same += 1
    return {"faster": faster, "slower": slower, "same": same,
            "only_old": len(set(told) - set(tnew)), "only_new": len(set(tnew) - set(told))}


def _line(k, o, n, sp) -> str:
    unit = n["unit"]
    change = f"{sp:.2f}x faster" if sp >= 1 else f"{1 / sp:.2f}x slower"
    series = "" if k.series in (k.bench, "value") else f" {k.series}"
    return (f"  {k.bench}{series} · {analysis.config_label(k)} · "
            f"{analysis.x_label(k.x, n['kind'])}: {analysis._num(o['median'])} -> "
            f"{analysis._num(n['median'])} {unit} ({change})")


def format_compare(res: dict, threshold: float) -> str:
    out = []
    for name in ("slower", "faster"):
        items = sorted(res[name], key=lambda t: t[3] if name == "slower" else -t[3])
        out.append(f"{name} ({len(items)}):")
        out += [_line(*t) for t in items] or ["  none"]
    out.append(f"{len(res['faster']) + len(res['slower']) + res['same']} points compared, "
               f"{res['same']} unchanged within noise (threshold {threshold * 100:.0f} % and "
               "non-overlapping repetition ranges)"
               + (f"; {res['only_old']} only in OLD" if res["only_old"] else "")
               + (f"; {res['only_new']} only in NEW" if res["only_new"] else ""))
    return "\n".join(out)
