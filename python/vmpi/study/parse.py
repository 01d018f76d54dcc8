"""Benchmark output into records.

Every bench/ program prints an OSU-style table or, with ``--json``, one
JSON object per size (lockbench: arrays of objects).  Both become a list of
*records*, one per series and size::

    {"series": "latency", "x": 8, "value": 0.21, "unit": "us",
     "samples": [...], "min": ..., "max": ..., "p99": ..., "extra": {...}}

``series`` tells apart what one program measures side by side (the
collective, the one-sided test, the lock); ``x`` is the message size in
bytes (threads for locks, ranks for rma_lock); ``value`` is the number the
table prints (one-way latency in us, bandwidth in MB/s, acquisitions/s).
Launcher banners, warnings and other stray lines are ignored.
"""

from __future__ import annotations

import json
import re

# The value the OSU table prints, by JSON key, tried in order.
_VALUE_KEYS = ("latency_us", "mbps", "mean_us", "throughput")
# Series names in the JSON objects, tried in order.
_SERIES_KEYS = ("lock", "test", "bench")
_EXTRA_KEYS = ("msg_rate", "jain", "top_half_fraction", "lat_p99_ns", "rank_min_us",
               "rank_max_us", "max_pair_us", "mean_acquire_us", "counter_ok", "window",
               "pairs", "ranks", "rate", "iters")

_COLL_TITLE = re.compile(r"collective latency test: MPI_(\w+)")
_RMA_TITLE = re.compile(r"MPI_(Put|Get|Accumulate|Get_accumulate|Fetch_and_op|"
                        r"Compare_and_swap) (Latency|Bandwidth)", re.I)
_APP_TITLE = re.compile(r"^# vmpi (\w+): ")
_RMA_LOCK = re.compile(r"^# (\d+) ranks,.*?^# throughput\s+([\d.]+)", re.M | re.S)
_TITLE_SERIES = {"tcpping bandwidth": "tcp_bw", "tcpping latency": "tcp_latency",
                 "memcpy bandwidth": "memcpy", "multi-pair latency": "multi_lat",
                 "multiple bandwidth": "mbw_mr", "bidirectional bandwidth": "bibw",
                 "bandwidth test": "bw", "latency test": "latency", "clping": "clping"}


def _unit_of(key: str) -> str:
    if key.endswith("_us"):
        return "us"
    if "mbps" in key:
        return "MB/s"
    return "1/s"


def _from_json(obj: dict) -> dict | None:
    bench = obj.get("bench")
    # clping's, memcpy's and the applications' value is the median of their
    # repetitions (applications: "rate_unit" and "verified").
    keys = ("p50_us",) if bench == "clping" or "rate_unit" in obj else _VALUE_KEYS
    vkey = next((k for k in keys if isinstance(obj.get(k), (int, float))), None)
    xkey = next((k for k in ("size", "threads", "ranks") if isinstance(obj.get(k), int)), None)
    if vkey is None or xkey is None:
        return None
    series = next((obj[k] for k in _SERIES_KEYS if isinstance(obj.get(k), str)), "value")
    unit = _unit_of(vkey)
    suffix = "_us" if unit == "us" else "_mbps"
    samples = obj.get("samples" + suffix)
    rec = {"series": series, "x": obj[xkey], "value": float(obj[vkey]), "unit": unit,
           "samples": [float(v) for v in samples] if isinstance(samples, list) else [],
           "extra": {k: obj[k] for k in _EXTRA_KEYS if k in obj}}
    for stat in ("min", "max", "p99"):
        v = obj.get(stat + suffix)
        if isinstance(v, (int, float)):
            rec[stat] = float(v)
    return rec


def _json_objects(text: str):
    """Every JSON object or array that starts a line, however many lines it spans."""
    dec = json.JSONDecoder()
    pos = 0
    while pos < len(text):
        nl = text.find("\n", pos)
        end = len(text) if nl < 0 else nl
        line = text[pos:end].lstrip()
        if line[:1] in ("{", "["):
            start = pos + (len(text[pos:end]) - len(line))
            try:
                obj, stop = dec.raw_decode(text, start)
            except json.JSONDecodeError:
                pos = end + 1
                continue
            yield obj
            pos = stop
            continue
        pos = end + 1


def _table_series(title: str, program: str | None) -> str:
    m = _APP_TITLE.match(title)
    if m:
        return m.group(1)
    m = _COLL_TITLE.search(title)
    if m:
        return m.group(1).lower()
    m = _RMA_TITLE.search(title)
    if m:
        op = {"put": "put", "get": "get", "accumulate": "acc", "get_accumulate": "get_acc",
              "fetch_and_op": "fop", "compare_and_swap": "cas"}[m.group(1).lower()]
        if op in ("fop", "cas"):
            return f"{op}_lat"
        return f"{op}_{'lat' if m.group(2).lower() == 'latency' else 'bw'}"
    for words, series in _TITLE_SERIES.items():
        if words in title:
            return series
    return program or "value"


def _from_table(text: str, program: str | None) -> list[dict]:
    recs: list[dict] = []
    title, unit, lock_cols = "", None, None
    m = _RMA_LOCK.search(text)
    if m:  # rma_lock's per-rank table and its totals
        jain = re.search(r"^# Jain's index\s+([\d.]+)", text, re.M)
        return [{"series": "rma_lock", "x": int(m.group(1)), "value": float(m.group(2)),
                 "unit": "1/s", "samples": [],
                 "extra": {"jain": float(jain.group(1))} if jain else {}}]
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            if not title and ("test" in line or "Test" in line or _APP_TITLE.match(line)):
                title = line
            if "(us)" in line:
                unit = "us"
            elif "MB/s" in line:
                unit = "MB/s"
            continue
        fields = line.split()
        if fields[:3] == ["lock", "park", "T"]:
            lock_cols = fields
            continue
        if lock_cols and len(fields) == len(lock_cols):
            try:
                recs.append({"series": fields[0], "x": int(fields[2]),
                             "value": float(fields[3]), "unit": "1/s", "samples": [],
                             "extra": {"jain": float(fields[4]),
                                       "top_half_fraction": float(fields[5]) / 100}})
            except ValueError:
                pass
            continue
        if unit is None or len(fields) < 2:
            continue
        try:
            x, value = int(fields[0]), float(fields[1])
        except ValueError:
            continue
        rec = {"series": _table_series(title, program), "x": x, "value": value, "unit": unit,
               "samples": [], "extra": {}}
        # mbw_mr's message rate, an application's work rate
        extra = ("msg_rate", 2) if "multiple bandwidth" in title else \
            ("rate", 4) if _APP_TITLE.match(title) else None
        if extra and len(fields) > extra[1]:
            try:
                rec["extra"][extra[0]] = float(fields[extra[1]])
            except ValueError:
                pass
        recs.append(rec)
    return recs


_FOOTPRINT = re.compile(r"^(\d+) (\d+) (\d+) (\d+)$", re.M)


def _from_footprint(text: str) -> list[dict]:
    """footprint's one line (ranks, VMs, shared and private KiB per rank): a
    record per kind of memory, x the ranks."""
    m = _FOOTPRINT.search(text)
    if not m:
        return []
    ranks, vms, shared, private = map(int, m.groups())
    return [{"series": series, "x": ranks, "value": float(v), "unit": "KiB", "samples": [],
             "extra": {"vms": vms}} for series, v in (("shared", shared), ("private", private))]


def parse_output(text: str, program: str | None = None) -> list[dict]:
    """Records from a benchmark's JSON output, else from its table."""
    if program == "footprint":
        return _from_footprint(text)
    recs = []
    for obj in _json_objects(text):
        for o in obj if isinstance(obj, list) else [obj]:
            if isinstance(o, dict):
                rec = _from_json(o)
                if rec is not None:
                    recs.append(rec)
    return recs if recs else _from_table(text, program)
