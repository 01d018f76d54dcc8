"""The collective cost model (vmpi.study.model): the fit recovers the
parameters that made synthetic data, the simulator's predictions behave as
the algorithms they mirror must, and `vmpi study model --skip-measure`
turns stored measurements into the validation table and the predictions."""

import json
import os
import subprocess
import sys

import pytest

from vmpi.study import model
from vmpi.study.model import Chan, Params, Placement, predict

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TRUE = {"smp": Chan(0.3, 1.5e-4, 2.0, 1e-4, 0.2, 1e-4, 1.0, 1.2e-4),
        "ivshmem": Chan(0.35, 2e-4, 2.5, 1.1e-4, 0.25, 1.2e-4, 1.5, 1.3e-4),
        "ofi": Chan(12.0, 1.1e-3, 30.0, 1e-3, 9.0, 1e-3, 20.0, 2e-3)}
SIZES = (1, 8, 64, 512, 4096, 16384, 32768, 65536)
TURNS = {2: 2.0, 8: 2.5, 32: 4.0}   # us a turn with k ranks on one core


def synthetic() -> dict:
    data = {}
    for c, ch in TRUE.items():
        data[c] = {"latency": {m: ch.one(m) for m in SIZES},
                   "gap": {m: ch.gap(m) for m in SIZES}}
        data["handoff-" + c] = {"latency": {8: 2.0 + ch.L}}
    data["turns"] = {"latency": TURNS}
    data["copy"] = {"gap": {1 << 16: (1 << 16) * 2e-5, 1 << 20: (1 << 20) * 1.25e-4}}
    return data


def params() -> Params:
    return model.fit(synthetic())


def test_fit_recovers_parameters():
    prm = params()
    for c, ch in TRUE.items():
        got = prm.chans[c]
        for name in ("L", "G", "Lr", "Gr", "g", "Gg", "gr", "Ggr"):
            assert getattr(got, name) == pytest.approx(getattr(ch, name), rel=1e-6), (c, name)
        assert prm.handoff[c] == pytest.approx(2.0 + ch.L)
    assert prm.copy_us(1 << 20) == pytest.approx((1 << 20) * 1.25e-4)
    # in cache below 64 KiB, out of it above, the largest beyond
    assert prm.copy_us(1000) == pytest.approx(1000 * 2e-5)
    assert prm.copy_us(100000) == pytest.approx(100000 * 1.25e-4)
    assert prm.copy_us(1 << 22) == pytest.approx((1 << 22) * 1.25e-4)


def test_a_turn_costs_what_the_ring_measured_at_that_many_ranks():
    prm = params()
    assert prm.turn == TURNS
    assert prm.turn_at(2) == 2.0 and prm.turn_at(1) == 2.0
    assert prm.turn_at(20) == pytest.approx(2.5 + 12 * 1.5 / 24)
    # beyond the largest count the last segment goes on (the scan grows),
    # but a falling last segment (noise) does not take a turn below it
    assert prm.turn_at(64) == pytest.approx(4.0 + 32 * 1.5 / 24)
    fall = Params(prm.chans, prm.handoff, prm.copy, {16: 2.0, 32: 1.8})
    assert fall.turn_at(24) == pytest.approx(1.9) and fall.turn_at(400) == 1.8
    # measurements from before the ring: every turn is the smp hand-off
    old = Params(prm.chans, prm.handoff, prm.copy)
    assert old.turn_at(32) == prm.handoff["smp"]
    # more ranks on a core: each further rank's turn costs more
    pl16, pl64 = Placement(1, 1, 16), Placement(1, 1, 64)
    grow = predict("barrier", pl64, 0, True, prm, cores=2) / \
        predict("barrier", pl64, 0, True, old, cores=2)
    assert grow > predict("barrier", pl16, 0, True, prm, cores=2) / \
        predict("barrier", pl16, 0, True, old, cores=2) > 0.99


def test_fit_line_is_robust_to_noise_and_needs_two_points():
    pts = {m: (5.0 + 1e-3 * m) * (1.05 if i % 2 else 0.95) for i, m in enumerate(SIZES)}
    a, b = model.fit_line(pts)
    assert a == pytest.approx(5.0, rel=0.1)
    assert b == pytest.approx(1e-3, rel=0.1)
    with pytest.raises(ValueError):
        model.fit_line({8: 1.0})
    with pytest.raises(ValueError):
        model.fit({"smp": synthetic()["smp"]})
    # a hand-off that was not measured (its runs failed) is not a free turn
    broken = synthetic()
    del broken["handoff-ivshmem"]
    with pytest.raises(ValueError, match="no hand-off measured for channel ivshmem"):
        model.fit(broken)
    # the protocol switch: each regime is its own line
    ch = TRUE["ofi"]
    assert ch.one(model.EAGER) < ch.one(model.EAGER + 1) - 10


def test_params_round_trip_json():
    prm = params()
    back = Params.from_json(json.loads(json.dumps(prm.to_json())))
    assert back == prm
    # a model.json written before the turns were measured still loads
    doc = prm.to_json()
    del doc["turn_us"]
    assert Params.from_json(doc).turn == {}


@pytest.mark.parametrize("coll", model.COLLECTIVES)
@pytest.mark.parametrize("aware", (True, False))
def test_more_ranks_and_bytes_never_cost_less(coll, aware):
    prm = params()
    # (at 64 KiB the reductions switch from Rabenseifner to binomial once
    # the vector has fewer elements than ranks, which can be cheaper)
    for m in (8,) if "reduce" in coll else (8, 65536):
        last = 0.0
        for hosts, vms in ((1, 1), (1, 4), (4, 4), (64, 8), (1024, 8)):
            t = predict(coll, Placement(hosts, vms, 4), m, aware, prm)
            assert t >= last * 0.999, (coll, aware, hosts, vms, m, t, last)
            last = t
        if coll != "barrier":
            small = predict(coll, Placement(16, 4, 4), 8, aware, prm)
            big = predict(coll, Placement(16, 4, 4), 65536, aware, prm)
            assert big > small


def test_one_vm_needs_no_network_and_unaware_pays_it():
    prm = params()
    pl1 = Placement(1, 1, 16)
    for coll in model.COLLECTIVES:
        for aware in (True, False):
            assert all(r.chan == "smp" for r in model.rounds(coll, pl1, 8, aware))
    # 4 VMs of one host: the aware path never touches the network, the
    # unaware one crosses it in every collective
    pl = Placement(1, 4, 4)
    for coll in model.COLLECTIVES:
        assert all(r.chan != "ofi" for r in model.rounds(coll, pl, 8, True)), coll
        assert any(r.chan == "ofi" for r in model.rounds(coll, pl, 8, False)), coll
        assert predict(coll, pl, 8, False, prm) > predict(coll, pl, 8, True, prm), coll


def test_rounds_follow_the_flat_algorithms():
    v = model.full_view(Placement(1, 1, 16), False)
    assert len(model.flat_barrier(v)) == 4                      # log2 16 rounds
    assert len(model.flat_allgather(v, 65536)) == 15            # ring: p - 1
    assert len(model.flat_allgather(v, 8)) == 4                 # recursive doubling
    assert len(model.flat_alltoall(v, 65536)) == 15             # pairwise
    assert len(model.flat_alltoall(v, 8)) == 4                  # Bruck, p >= 8
    assert len(model.flat_alltoall(model.full_view(Placement(1, 1, 4), False), 8)) == 1
    # recursive doubling at 8 B; Rabenseifner at 64 KiB: 2 log2 p rounds
    assert len(model.flat_allreduce(v, 8)) == 4
    assert len(model.flat_allreduce(v, 65536)) == 8
    # xor partners stay in the VM below its size, cross above
    v = model.full_view(Placement(2, 2, 4), True)
    assert [v.chan(v.level_xor(d)) for d in (1, 2, 4, 8)] == ["smp", "smp", "ivshmem", "ofi"]


def test_hierarchy_sends_once_per_host():
    prm = params()
    pl = Placement(1024, 8, 4)
    ofi = [r for r in model.rounds("allreduce", pl, 8, True) if r.chan == "ofi"]
    assert len(ofi) == 10          # recursive doubling over 1024 leaders
    assert predict("bcast", pl, 8, True, prm) < predict("bcast", pl, 8, False, prm)


def test_oversubscription_costs_turns():
    prm = params()
    pl = Placement(1, 1, 16)
    assert predict("allreduce", pl, 8, True, prm, cores=2) > \
        predict("allreduce", pl, 8, True, prm)
    assert predict("allreduce", Placement(1, 1, 2), 8, True, prm, cores=2) == \
        predict("allreduce", Placement(1, 1, 2), 8, True, prm)


def _store(tmp_path):
    """Stored measurements made from the synthetic parameters."""
    chan = []
    for c, d in synthetic().items():
        if c == "turns":
            chan += [{"channel": c, "bench": "ring", "ranks": k, "records": [
                {"size": 8, "p50_us": t}]} for k, t in d["latency"].items()]
        elif "latency" in d:
            chan.append({"channel": c, "bench": "latency", "records": [
                {"size": m, "p50_us": t} for m, t in d["latency"].items()]})
        bench = "memcpy" if c == "copy" else "bw"
        if "gap" in d:
            chan.append({"channel": c, "bench": bench, "records": [
                {"size": m, "mbps": m / t, "samples_mbps": [m / t]} for m, t in d["gap"].items()]})
    with open(tmp_path / "channels.jsonl", "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in chan)
    prm = params()
    pl = Placement(1, 2, 2)
    with open(tmp_path / "colls.jsonl", "w") as f:
        for rep, scale in enumerate((1.3, 1.0, 1.1)):
            t = predict("allreduce", pl, 8, True, prm, cores=2) * scale
            f.write(json.dumps({"ranks": 4, "hosts": 1, "vms": 2, "policy": "aware",
                                "coll": "allreduce", "rep": rep,
                                "records": [{"size": 8, "mean_us": t}]}) + "\n")


def test_subcommand_from_stored_measurements(tmp_path):
    _store(tmp_path)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    p = subprocess.run([sys.executable, "-m", "vmpi", "study", "model", "--skip-measure",
                        "--out", str(tmp_path)], capture_output=True, text=True, env=env,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    doc = json.loads((tmp_path / "model.json").read_text())
    assert doc["params"]["turn_us"] == {str(k): t for k, t in TURNS.items()}
    (row,) = doc["validation"]
    assert row["reps"] == 3
    # the least disturbed run is the model's value; the median is kept
    assert row["error_pct"] == pytest.approx(0.0, abs=1e-6)
    assert row["median_us"] == pytest.approx(row["predicted_us"] * 1.1)
    assert doc["within_25pct"] == 1
    labels = {p["placement"] for p in doc["predictions"]}
    assert {"1 x 4 x 4", "1 x 16 x 4", "1024 x 8 x 4"} <= labels
    assert "| 1024 x 8 x 4 | 32768 | allreduce |" in p.stdout
    assert "a turn with k ranks on one core (a ring's hop, us): 2 2, 8 2.5, 32 4" in p.stdout
    # the quiet-machine runs of docs/PERFORMANCE.md are validated too
    ref = doc["reference"]
    assert len(ref) > 50 and all(r["predicted_us"] > 0 for r in ref)
    assert {r["policy"] for r in ref} == {"aware", "vnic"}


def test_failed_runs_and_mixed_policies_are_not_measurements(tmp_path):
    from vmpi.study import model_run
    runs = [{"channel": "turns", "bench": "ring", "ranks": 8, "sched": "rr", "error": "",
             "records": [{"size": 8, "p50_us": 2.5}]},
            {"channel": "turns", "bench": "ring", "ranks": 16, "sched": "rr",
             "error": "exit 2: --sched rr: this process may not run round-robin",
             "records": [{"size": 8, "p50_us": 0.1}]}]
    assert model_run.channel_data(runs)["turns"]["latency"] == {8: 2.5}
    assert model_run.stored_sched(runs) == "rr"
    assert model_run.stored_sched([{"channel": "smp", "records": []}]) == "default"
    with pytest.raises(model_run.StudyError, match="several scheduling policies"):
        model_run.stored_sched(runs + [{"coll": "barrier", "ranks": 4, "records": []}])
    # --skip-measure keeps the policy the measurements had
    _store(tmp_path)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    p = subprocess.run([sys.executable, "-m", "vmpi", "study", "model", "--skip-measure",
                        "--sched", "rr", "--out", str(tmp_path)], capture_output=True,
                       text=True, env=env, timeout=60)
    assert p.returncode == 2 and "ran --sched default" in p.stderr, p.stderr


def test_subcommand_without_measurements(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    p = subprocess.run([sys.executable, "-m", "vmpi", "study", "model", "--skip-measure",
                        "--out", str(tmp_path)], capture_output=True, text=True, env=env,
                       timeout=60)
    assert p.returncode == 2
    assert "no channel measurements" in p.stderr


def test_vnic_keeps_the_hierarchy_inside_each_vm():
    prm = params()
    pl = Placement(1, 4, 4)
    vnic = model.rounds("allreduce", pl, 8, True, vnic=True)
    flat = model.rounds("allreduce", pl, 8, False)
    # slots inside each VM, a recursive doubling over 4 VM leaders on ofi
    assert [r.chan for r in vnic].count("ofi") == 2
    assert sum(r.chan == "ofi" for r in flat) == 2 and len(flat) == 4
    assert model.predict_policy("allreduce", pl, 8, "vnic", prm) > \
        model.predict_policy("allreduce", pl, 8, "aware", prm)
    with pytest.raises(ValueError):
        model.predict_policy("allreduce", pl, 8, "sriov", prm)


def test_round_robin_reaches_the_oversubscribed_runs_only():
    """--sched rr: the hand-offs and the collectives (oversubscribed) run
    round-robin; the 2-rank channel fits (one rank a core) stay as they are."""
    from types import SimpleNamespace
    from vmpi.study import model_run
    lay = SimpleNamespace(vmpirun="/x/vmpirun", bench="/x/bench")
    chans = model_run.channel_jobs(lay, "rr")
    for key, cmd in chans:
        if key["channel"].startswith("handoff-") or key["channel"] == "turns":
            assert cmd[:4] == ["taskset", "-c", "0", "/x/vmpirun"] and "--sched" in cmd, cmd
            assert cmd[cmd.index("--sched") + 1] == "rr"
        else:
            assert "--sched" not in cmd, cmd
    rings = [(key["ranks"], cmd[cmd.index("/x/bench/ring"):]) for key, cmd in chans
             if key["channel"] == "turns"]
    assert [k for k, _ in rings] == list(model_run.TURN_RANKS)
    assert all("--json" in cmd and "-n" not in cmd for _, cmd in rings), rings
    colls = model_run.coll_jobs(lay, model_run.QUICK, "rr")
    assert colls and all(cmd[cmd.index("--sched") + 1] == "rr" for _, cmd in colls)
    assert all("--sched" not in cmd for _, cmd in model_run.coll_jobs(lay, model_run.QUICK))
