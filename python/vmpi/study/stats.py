"""The statistics of a study: per benchmark, configuration, series and size
the median over repetitions, the 3-sigma jitter across iterations and the
99th percentile, and the ratios the report quotes (overhead against native,
speedups, fraction of the physical limit).

Conventions (checked by the tests against hand-computed values):

* median: of the repetitions' table values (the mean of two middle values
  for an even count);
* jitter (3 sigma): three sample standard deviations (n - 1) of every
  per-iteration sample of every repetition pooled; without samples (table
  output) of the repetitions' values; 0 for a single value;
* p99: nearest-rank percentile of the pooled samples (the value at rank
  ceil(0.99 n)); without samples the largest repetition value;
* latency-like metrics (and memory) are better when smaller, bandwidth and rates when
  larger; overheads and speedups are oriented so that an overhead > 0 and a
  speedup > 1 mean "costs more" and "is faster".
"""

from __future__ import annotations

import math
import statistics


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def jitter3s(values: list[float], samples: list[list[float]]) -> float:
    pooled = [s for run in samples for s in run]
    data = pooled if len(pooled) >= 2 else values
    return 3 * statistics.stdev(data) if len(data) >= 2 else 0.0


def percentile(xs: list[float], q: float) -> float:
    """Nearest-rank percentile, q in (0, 100]."""
    if not xs:
        raise ValueError("percentile of no values")
    s = sorted(xs)
    return s[max(0, math.ceil(q / 100 * len(s)) - 1)]


def p99(values: list[float], samples: list[list[float]]) -> float:
    pooled = [s for run in samples for s in run]
    return percentile(pooled, 99) if pooled else max(values)


def lower_is_better(metric: str) -> bool:
    return metric in ("latency", "time", "memory")


def overhead_pct(value: float, native: float, metric: str) -> float:
    """Extra cost against the native baseline in %, as time (a bandwidth half
    the native one is +100 %)."""
    if lower_is_better(metric):
        return (value / native - 1) * 100
    return (native / value - 1) * 100


def speedup(value: float, other: float, metric: str) -> float:
    """How many times faster ``value`` is than ``other``."""
    return other / value if lower_is_better(metric) else value / other


def fraction_of_limit(value: float, limit: float, metric: str) -> float:
    """The share of the physical limit reached (1 = at the limit)."""
    return limit / value if lower_is_better(metric) else value / limit


def summarize(values: list[float], samples: list[list[float]]) -> dict:
    return {"median": median(values), "min": min(values), "max": max(values),
            "reps": len(values), "jitter3s": jitter3s(values, samples),
            "p99": p99(values, samples)}
