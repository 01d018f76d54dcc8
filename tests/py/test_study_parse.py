"""vmpi study: parsing every benchmark's table and --json output, recorded
from real runs of vmpi, Debian's MPICH and Open MPI
(fixtures/study/record.sh made them)."""

import json
import math
import os

import pytest

from vmpi.study.parse import parse_output

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "study")
P2 = [1, 2, 4, 8, 16, 32, 64]
P8 = [8, 16, 32, 64]

# fixture name -> (series, sizes, unit, extra key every record has)
EXPECT = {
    "latency": ("latency", [0] + P2, "us", None),
    "bw": ("bw", P2, "MB/s", None),
    "bibw": ("bibw", P2, "MB/s", None),
    "mbw_mr": ("mbw_mr", P2, "MB/s", "msg_rate"),
    "multi_lat": ("multi_lat", P2, "us", None),
    "allreduce": ("allreduce", [8, 1024], "us", None),
    "put": ("put_lat", P8, "us", None),
    "get_bw": ("get_bw", P8, "MB/s", None),
    "fop": ("fop_lat", [8], "us", None),
    "rma_lock": ("rma_lock", [2], "1/s", "jain"),
}
RAW = {
    "clping": ("clping", [8], "us", None),
    "memcpy": ("memcpy", [4194304], "MB/s", None),
    "lockbench": ("spark", [2], "1/s", "jain"),
    "tcp": ("tcp_latency", P8, "us", None),
    "tcp_bw": ("tcp_bw", P8, "MB/s", None),
}
# the application kernels: their problem size, the median repetition time
# and the work rate
APPS = {"stencil": ("stencil", [512], "us", "rate"), "fft": ("fft", [256], "us", "rate"),
        "sort": ("sort", [524288], "us", "rate"), "bfs": ("bfs", [12], "us", "rate")}
CASES = [(f"{lib}-{name}", exp) for lib in ("vmpi", "mpich", "openmpi")
         for name, exp in {**EXPECT, **APPS}.items()]
CASES += [(f"raw-{name}", exp) for name, exp in RAW.items()]
# JSON records keep per-iteration samples (for the jitter), except the
# programs that report one aggregate per run.
NO_SAMPLES = ("rma_lock", "lockbench")


@pytest.mark.parametrize("fmt", ["", "-json"])
@pytest.mark.parametrize("name,expect", CASES, ids=[c[0] for c in CASES])
def test_parse_fixture(name, expect, fmt):
    series, sizes, unit, extra = expect
    with open(os.path.join(FIX, name + fmt + ".txt")) as f:
        recs = parse_output(f.read())
    assert [r["series"] for r in recs] == [series] * len(sizes)
    assert [r["x"] for r in recs] == sizes
    for r in recs:
        assert r["unit"] == unit
        # 2 decimals: 1 byte in a few iterations can print 0.00 MB/s
        assert math.isfinite(r["value"]) and r["value"] >= 0
        if extra:
            assert extra in r["extra"]
        if fmt and not name.endswith(NO_SAMPLES):
            assert r["samples"] and r["min"] <= r["p99"] <= r["max"]
        if not fmt:
            assert r["samples"] == []


def test_table_value_is_the_printed_number():
    text = ("launcher banner\n# vmpi latency test\n# Size          Latency (us)\n"
            "8                       0.21\n16                      0.23\nwarning: x\n")
    recs = parse_output(text)
    assert [(r["x"], r["value"]) for r in recs] == [(8, 0.21), (16, 0.23)]


def test_json_value_keys_and_stray_lines():
    text = ('noise {not json\n'
            '{"bench":"latency","size":8,"mean_us":0.5,"p50_us":0.4,"min_us":0.3,'
            '"max_us":0.9,"p99_us":0.8,"samples_us":[0.3,0.9]}\n'
            '{"bench":"clping","size":8,"mean_us":0.2,"p50_us":0.12,"samples_us":[0.12]}\n'
            '{"bench":"multi_lat","size":8,"latency_us":0.7,"mean_us":0.6}\n'
            '[{"lock":"mcs","threads":4,"throughput":5.0,\n  "jain":0.5}]\n'
            '{"size": 8}\n')
    recs = parse_output(text)
    assert [(r["series"], r["value"]) for r in recs] == [
        ("latency", 0.5), ("clping", 0.12), ("multi_lat", 0.7), ("mcs", 5.0)]
    assert recs[0]["p99"] == 0.8 and recs[0]["samples"] == [0.3, 0.9]
    assert recs[3]["x"] == 4 and recs[3]["extra"] == {"jain": 0.5}
    assert parse_output("") == [] and parse_output("# only comments\n") == []


def test_app_value_is_the_median_repetition():
    """An application's value is its median repetition time (not the mean),
    in the table and in the JSON record alike."""
    with open(os.path.join(FIX, "openmpi-stencil-json.txt")) as f:
        text = f.read()
    rec, raw = parse_output(text)[0], json.loads(text)
    assert rec["value"] == raw["p50_us"] != raw["mean_us"] and rec["extra"]["rate"] == raw["rate"]
    assert sorted(rec["samples"])[1] == rec["value"]
    table = "\n".join(["# vmpi fft: 2D complex FFT, 64x64", "# 4 ranks, 2 iterations x 3",
                       "# Size  Time (us)  Min (us)  Max (us)  Gflop/s  Verified",
                       "64  120.50  110.00  130.25  1.25  yes"])
    rec = parse_output(table)[0]
    assert (rec["series"], rec["x"], rec["value"]) == ("fft", 64, 120.5)
    assert rec["extra"]["rate"] == 1.25
