"""vmpi study: statistics against hand-computed values, the headline table,
compare, and study files."""

import math

import pytest

from vmpi.study import analysis, compare, spec, stats


def test_median_jitter_p99_by_hand():
    assert stats.median([3.0, 1.0, 2.0]) == 2.0
    assert stats.median([4.0, 1.0, 3.0, 2.0]) == 2.5
    # pooled samples 1..5: sample variance 2.5 -> 3 sigma = 3 * sqrt(2.5)
    assert stats.jitter3s([9.0], [[1, 2, 3], [4, 5]]) == pytest.approx(3 * math.sqrt(2.5))
    # no samples: the repetitions' values 2, 4 -> stdev sqrt(2)
    assert stats.jitter3s([2.0, 4.0], [[], []]) == pytest.approx(3 * math.sqrt(2))
    assert stats.jitter3s([2.0], [[]]) == 0.0
    assert stats.percentile(list(range(1, 101)), 99) == 99
    assert stats.percentile(list(range(1, 11)), 99) == 10
    assert stats.percentile([5.0, 1.0], 50) == 1.0
    assert stats.p99([1.0, 7.0], [[], []]) == 7.0
    with pytest.raises(ValueError):
        stats.percentile([], 99)


def test_ratios_by_hand():
    assert stats.overhead_pct(0.3, 0.2, "latency") == pytest.approx(50)
    assert stats.overhead_pct(500, 1000, "bandwidth") == pytest.approx(100)
    assert stats.speedup(2.0, 20.0, "latency") == pytest.approx(10)
    assert stats.speedup(3000, 1000, "bandwidth") == pytest.approx(3)
    assert stats.fraction_of_limit(0.25, 0.1, "latency") == pytest.approx(0.4)
    assert stats.fraction_of_limit(5000, 10000, "bandwidth") == pytest.approx(0.5)


def run(bench, library, placement, values, *, policy=None, kind="p2p", metric="latency",
        program=None, x=8, series=None, rep0=0, headline=8, ranks=2, unit=None, cores=2):
    """Result lines as the runner writes them: one per repetition, on a
    machine of ``cores`` cores."""
    policy = policy or ("aware" if library == "vmpi" else "default")
    unit = unit or spec.UNITS[metric]
    out = []
    for i, v in enumerate(values):
        out.append({"key": f"{bench}|{library}|{placement}|{policy}|{ranks}|{rep0 + i}",
                    "config": f"{bench}|{library}|{placement}|{policy}|{ranks}",
                    "bench": bench, "program": program or bench, "kind": kind,
                    "metric": metric, "headline": headline, "library": library,
                    "placement": placement, "policy": policy, "ranks": ranks, "rep": rep0 + i,
                    "status": "ok", "seconds": 1.0, "command": "x",
                    "machine": {"cores": cores},
                    "records": [{"series": series or bench, "x": x, "value": v, "unit": unit,
                                 "samples": [], "extra": {}}]})
    return out


def synthetic():
    return (run("latency", "vmpi", "vm", [0.20, 0.21, 0.19])
            + run("latency", "vmpi", "2vm", [0.30, 0.31, 0.29])
            + run("latency", "vmpi", "2vm", [20.0, 21.0, 19.0], policy="unaware")
            + run("latency", "mpich", "vm", [0.25, 0.25, 0.25])
            + run("latency", "mpich", "2vm", [25.0, 24.0, 26.0])
            + run("latency", "openmpi", "vm", [0.4, 0.4, 0.4])
            + run("clping", "raw", "vm", [0.12, 0.12, 0.12], kind="limit"))


def test_headline_by_hand():
    table = analysis.summarize_runs(synthetic())
    rows = analysis.headline(table, ["vm", "2vm", "2host"])
    assert [r["placement"] for r in rows] == ["vm", "2vm"]
    vm, vms = rows
    assert vm["vmpi"] == pytest.approx(0.20)
    assert "overhead_pct" not in vm
    assert vm["vs_openmpi"] == pytest.approx(2.0)
    assert vm["of_limit"] == pytest.approx(0.6)
    assert vms["overhead_pct"] == pytest.approx(50)
    assert vms["vs_unaware"] == pytest.approx(20.0 / 0.30)
    assert vms["vs_mpich"] == pytest.approx(25.0 / 0.30)
    assert vms["mpich_overhead_pct"] == pytest.approx((25.0 / 0.25 - 1) * 100)
    assert vms["of_limit"] == pytest.approx(0.12 / 0.30)
    text = analysis.format_headline(rows)
    assert "latency 8 B" in text and "+50 %" in text and "66.67x" in text


def test_failed_runs_do_not_count_and_last_line_wins(tmp_path):
    runs = run("latency", "vmpi", "vm", [1.0, 2.0, 3.0])
    runs[2]["status"] = "failed"
    path = tmp_path / "results.jsonl"
    import json
    retried = dict(runs[1], records=[dict(runs[1]["records"][0], value=5.0)])
    path.write_text("\n".join(json.dumps(r) for r in runs + [retried]) + "\n{cut")
    loaded = analysis.load_results(str(path))
    assert len(loaded) == 3
    table = analysis.summarize_runs(loaded)
    (row,) = table.values()
    assert row["reps"] == 2 and row["median"] == pytest.approx(3.0)


def test_compare_needs_change_beyond_noise():
    old = run("latency", "vmpi", "vm", [1.0, 1.1, 0.9]) + \
        run("bw", "vmpi", "vm", [1000, 1010, 990], metric="bandwidth") + \
        run("latency", "mpich", "vm", [1.0, 1.1, 0.9])
    # vmpi latency 2x faster, bandwidth 20 % lower with separate ranges,
    # MPICH 10 % slower by the median but its ranges overlap (noise)
    new = run("latency", "vmpi", "vm", [0.5, 0.55, 0.45]) + \
        run("bw", "vmpi", "vm", [800, 810, 790], metric="bandwidth") + \
        run("latency", "mpich", "vm", [1.1, 1.2, 1.0])
    res = compare.compare(old, new, 0.05)
    assert [(k.bench, k.library) for k, *_ in res["faster"]] == [("latency", "vmpi")]
    assert [(k.bench, k.library) for k, *_ in res["slower"]] == [("bw", "vmpi")]
    assert res["same"] == 1
    text = compare.format_compare(res, 0.05)
    assert "2.00x faster" in text and "1.25x slower" in text
    # a threshold above the change hides it
    assert not compare.compare(old, new, 0.3)["slower"]


def test_compare_cli_exit_status(tmp_path):
    import json
    from vmpi.study import main
    for name, vals in (("old", [1.0, 1.0]), ("new", [2.0, 2.0])):
        d = tmp_path / name
        d.mkdir()
        (d / "results.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in run("latency", "vmpi", "vm", vals)))
    assert main(["compare", str(tmp_path / "old"), str(tmp_path / "new")]) == 1
    assert main(["compare", str(tmp_path / "new"), str(tmp_path / "old")]) == 0
    assert main(["compare", str(tmp_path / "old"), str(tmp_path / "none")]) == 2


def test_grid_skips_with_reasons():
    study = spec.default_study()
    configs, skipped = spec.grid(study)
    keys = {c.key for c in configs}
    assert "latency|vmpi|2vm|unaware|2" in keys
    assert "latency|openmpi|2host|default|2" in keys
    assert "allreduce|vmpi|2vm|aware|4" in keys
    why = {c.key: w for c, w in skipped}
    assert "PMI-1" in why["latency|openmpi|2vm|default|2"]
    assert "same channels" in why["latency|vmpi|vm|unaware|2"]
    assert "allreduce|openmpi|vm|default|4" in keys
    study.ranks = 8
    assert "allreduce|vmpi|2vm|aware|8" in {c.key for c in spec.grid(study)[0]}
    assert "latency|vmpi|2vm|aware|2" in {c.key for c in spec.grid(study)[0]}


def test_placements():
    assert spec.Placement.parse("vm") == spec.Placement("vm", 1, 1)
    assert spec.Placement.parse("4vm") == spec.Placement("4vm", 1, 4)
    assert spec.Placement.parse("2host2vm") == spec.Placement("2host2vm", 2, 2)
    assert spec.Placement.parse("2host").label == "2 hosts"
    for bad in ("", "host", "2hosts", "vm2", "0vm"):
        with pytest.raises(spec.StudyError):
            spec.Placement.parse(bad)


def test_toml_study():
    s = spec.load_toml("""
name = "mine"
reps = 3
libraries = ["vmpi", "mpich"]
placements = ["vm", "4vm"]
benchmarks = ["latency", "alltoall16"]
[bench.latency]
args = "-m 8:64"
[bench.alltoall16]
program = "coll"
args = "alltoall --sizes 8"
kind = "coll"
ranks = 16
""")
    assert s.name == "mine" and s.reps == 3 and s.placements == ("vm", "4vm")
    lat, a2a = s.benches
    assert lat.args == "-m 8:64" and lat.program == "latency" and lat.headline == 8
    assert a2a.program == "coll" and a2a.ranks == 16 and a2a.kind == "coll"
    assert spec.CATALOGUE["latency"].args != "-m 8:64"  # the catalogue is untouched
    assert spec.Study.from_json(s.to_json()) == s
    for bad, msg in (("colour = 1", "unknown key"), ('benchmarks = ["nope"]', "not in the "),
                     ('libraries = ["lam"]', "library 'lam'"), ("reps = 0", "reps"),
                     ('[bench.latency]\nkind = "x"', "kind"), ("reps = ", "study file"),
                     ('placements = ["3hosts"]', "placement")):
        with pytest.raises(spec.StudyError, match=msg):
            spec.load_toml(bad)


# --- the peers' yielding settings (issue 25: honest peers) -------------------


def test_grid_runs_the_yielding_settings_only_when_oversubscribed():
    study = spec.default_study()
    configs, skipped = spec.grid(study, cores=2)
    keys = {c.key for c in configs}
    # 4 ranks on 2 cores: both settings of both peers wherever they can run
    for key in ("allreduce|mpich|vm|yield|4", "allreduce|mpich|2vm|yield|4",
                "allreduce|mpich|2host|yield|4", "allreduce|openmpi|vm|yield|4",
                "allreduce|openmpi|2host|yield|4", "stencil|openmpi|vm|yield|4",
                "bfs|mpich|2host|yield|4", "allreduce|openmpi|vm|default|4"):
        assert key in keys, key
    # 2 ranks on 2 cores: as shipped only, and the report can say why
    assert "latency|mpich|vm|default|2" in keys
    assert not any(c.policy == "yield" and c.ranks <= 2 for c in configs)
    why = {c.key: w for c, w in skipped}
    assert "2 ranks on 2 cores is not oversubscribed" in why["latency|mpich|vm|yield|2"]
    assert "PMI-1" in why["allreduce|openmpi|2vm|yield|4"]
    # vmpi, the limits and the lock sweep have no such setting
    assert not any(c.policy == "yield" and c.library not in spec.PEERS for c in configs)
    # on 8 cores nothing in the default study is oversubscribed
    assert not any(c.policy == "yield" for c in spec.grid(study, cores=8)[0])
    # --ranks 8 on 4 cores oversubscribes the collectives again
    study.ranks = 8
    assert "bcast|mpich|vm|yield|8" in {c.key for c in spec.grid(study, cores=4)[0]}


def test_peer_policies_can_be_left_out_and_old_plans_read():
    s = spec.load_toml('peer_policies = ["default"]\nbenchmarks = ["allreduce"]')
    assert s.peer_policies == ("default",)
    assert not any(c.policy == "yield" for c in spec.grid(s, cores=2)[0])
    assert spec.load_toml('benchmarks = ["allreduce"]').peer_policies == ("default", "yield")
    for bad in ('peer_policies = ["yield"]', 'peer_policies = ["default", "spin"]'):
        with pytest.raises(spec.StudyError, match="peer_policies"):
            spec.load_toml(bad)
    # a study planned before the yielding settings existed resumes as it was
    d = spec.default_study().to_json()
    assert tuple(d["peer_policies"]) == ("default", "yield")
    del d["peer_policies"]
    assert spec.Study.from_json(d).peer_policies == ("default",)


def oversubscribed_runs():
    """allreduce at 4 ranks on 2 cores: MPICH busy-polls as shipped and is
    faster yielding; Open MPI is a little faster as shipped."""
    kw = dict(kind="coll", program="coll", ranks=4)
    return (run("allreduce", "vmpi", "vm", [4.0, 5.0, 4.5], **kw)
            + run("allreduce", "vmpi", "2vm", [6.0, 6.0, 6.0], **kw)
            + run("allreduce", "mpich", "vm", [7000.0, 7100.0, 6900.0], **kw)
            + run("allreduce", "mpich", "vm", [60.0, 50.0, 55.0], policy="yield", **kw)
            + run("allreduce", "mpich", "2vm", [40000.0] * 3, **kw)
            + run("allreduce", "mpich", "2vm", [120.0] * 3, policy="yield", **kw)
            + run("allreduce", "openmpi", "vm", [30.0, 30.0, 30.0], **kw)
            + run("allreduce", "openmpi", "vm", [31.0, 32.0, 30.5], policy="yield", **kw))


def test_headline_takes_each_peers_better_setting():
    rows = analysis.headline(analysis.summarize_runs(oversubscribed_runs()), ["vm", "2vm"])
    vm, vms = rows
    assert (vm["ranks"], vm["cores"]) == (4, 2)
    assert vm["mpich"] == 55.0 and vm["mpich_setting"] == "yield"
    assert vm["mpich_default"] == 7000.0 and vm["mpich_yield"] == 55.0
    assert vm["vs_mpich"] == pytest.approx(55.0 / 4.5)
    assert vm["openmpi"] == 30.0 and vm["openmpi_setting"] == "default"
    assert vm["openmpi_yield"] == 31.0
    assert vm["vs_openmpi"] == pytest.approx(30.0 / 4.5)
    # the overhead across VMs compares MPICH's better settings at both places
    assert vms["mpich"] == 120.0 and vms["mpich_setting"] == "yield"
    assert vms["mpich_overhead_pct"] == pytest.approx((120.0 / 55.0 - 1) * 100)
    assert vms["vs_mpich"] == pytest.approx(20.0)
    assert "openmpi" not in vms
    cells = dict(zip(analysis.HEADLINE_COLUMNS, analysis.headline_cells(vm)))
    assert cells["ranks on cores"] == "4 on 2"
    assert cells["MPICH"] == "55.0 us*" and cells["vs MPICH"] == "12.22x*"
    assert cells["Open MPI"] == "30.0 us" and cells["vs Open MPI"] == "6.67x"
    assert analysis.headline_cells(vm, "†")[6] == "55.0 us†"


def test_better_setting_by_metric_and_ties():
    kw = dict(metric="bandwidth", headline=8)
    table = analysis.summarize_runs(
        run("bw", "mpich", "vm", [1000.0], **kw)
        + run("bw", "mpich", "vm", [900.0], policy="yield", **kw)
        + run("bw", "openmpi", "vm", [5.0]) + run("bw", "openmpi", "vm", [5.0], policy="yield"))
    pol, row = analysis.best_setting(table, "bw", "mpich", "vm", 2, "bw", 8, "bandwidth")
    assert (pol, row["median"]) == ("default", 1000.0)  # more bandwidth is better
    pol, _ = analysis.best_setting(table, "bw", "openmpi", "vm", 2, "bw", 8, "latency")
    assert pol == "default"  # a tie goes to as shipped
    assert analysis.best_setting(table, "bw", "mpich", "2vm", 2, "bw", 8, "bandwidth") is None


def test_ranks_on_cores_text():
    assert spec.ranks_on_cores(4, 2) == "4 ranks on 2 cores"
    assert spec.ranks_on_cores(1, 1, "thread") == "1 thread on 1 core"
    assert spec.oversubscribed(4, 2) and not spec.oversubscribed(2, 2)
    rows = analysis.headline(analysis.summarize_runs(synthetic() + oversubscribed_runs()),
                             ["vm", "2vm"])
    text = analysis.format_headline(rows)
    assert "ranks on cores" in text.splitlines()[0]
    lat = next(ln for ln in text.splitlines() if ln.startswith("latency 8 B"))
    assert " 2 on 2 " in lat and "*" not in lat
    assert "55.0 us*" in text
    legend = text.splitlines()[-1]
    assert "2 cores" in legend and "MPIR_CVAR_DEFAULT_THREAD_LEVEL=MPI_THREAD_MULTIPLE" in legend
    assert "--mca mpi_yield_when_idle 1" in legend and "* where" in legend
    # without oversubscribed rows there is nothing to mark or explain
    calm = analysis.headline_legend(analysis.headline(analysis.summarize_runs(synthetic()),
                                                      ["vm"]))
    assert "2 cores" in calm and "yield" not in calm
