"""The host region and the ivshmem channel with real MPI jobs.

Most tests stand in for VMs with VMPI_VM_ID (one id per rank) and point
every rank at one region file with VMPI_IVSHMEM_PATH, so several jobs can
share a region; the map test uses vmpirun --hosts --vms.  The region's
layout (shm/region.h) is read here with struct to look at the job table.
"""
import os
import random
import re
import signal
import struct
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import finish, run_vmpirun, start_vmpirun
from test_mpi_jobs import build_prog, pytestmark  # noqa: F401  (same skip rule)
from test_vms import needs_hosts, needs_vms

CHUNK = 1 << 20
HDR = struct.Struct("<QQIIQIIQ16x")      # struct vmpi_region_hdr
ENTRY = struct.Struct("<QQQQIII4x16x")   # struct vmpi_region_chunk
# One VM per rank: the cards differ, so ranks of one job meet in the region.
PER_RANK_VM = ["sh", "-c", 'VMPI_VM_ID=vm$PMI_RANK exec "$0" "$@"']


@pytest.fixture(scope="module")
def ivjob(tmp_path_factory):
    return build_prog(tmp_path_factory, "ivjob")


def make_region(path, size):
    with open(path, "wb") as f:
        f.truncate(size)
    return path


def table(path):
    """(header fields, [(kind, gen, head, count, users), ...]) of a region."""
    data = Path(path).read_bytes()
    init, magic, version, shift, size, nchunks, first, uuid = HDR.unpack_from(data, 0)
    rows = []
    for i in range(nchunks):
        state, beat, k0, k1, head, count, users = ENTRY.unpack_from(data, HDR.size + i * ENTRY.size)
        rows.append((state & 0xFF, state >> 8, head, count, users))
    return (init, version, shift, nchunks, first), rows


def areas(path):
    """[(first chunk, chunks)] of the areas published in a region."""
    _, rows = table(path)
    return [(i, r[3]) for i, r in enumerate(rows) if r[0] == 2]


def region_env(region, **extra):
    return dict({"VMPI_IVSHMEM_PATH": str(region), "VMPI_VERBOSE": "1"}, **extra)


def ok_ranks(stdout):
    return sorted(int(m) for m in re.findall(r"^ivjob: rank (\d+) OK$", stdout, re.M))


def test_two_jobs_share_one_region_and_release_their_areas(ivjob, tmp_path):
    """Two jobs that both check integrity may share a region (region.h,
    Sharing)."""
    region = make_region(tmp_path / "region", 64 << 20)
    env = region_env(region, VMPI_IVSHMEM_HEAP=str(8 << 20), VMPI_INTEGRITY="crc32c")
    jobs = [start_vmpirun(tmp_path, "-n", 2, "--timeout", 60, *PER_RANK_VM, ivjob, "check", 60,
                          env=env) for _ in range(2)]
    seen = set()
    while any(j.poll() is None for j in jobs):
        seen.update(areas(region))
        time.sleep(0.01)
    results = [finish(j, 60) for j in jobs]
    for rc, out, err in results:
        assert rc == 0, err
        assert ok_ranks(out) == [0, 1], out + err
        assert re.search(r"^vmpi:\s+0\s+self\s+ivshmem$", err, re.M), err
    # two areas existed side by side, and both were freed by MPI_Finalize
    assert len(seen) >= 2 and all(a[0] + a[1] <= b[0] or b[0] + b[1] <= a[0]
                                  for a in seen for b in seen if a != b), seen
    assert areas(region) == []
    assert all(r[0] == 0 for r in table(region)[1]), "a chunk was left claimed"


def _hang(ivjob, tmp_path, region, env):
    p = start_vmpirun(tmp_path, "-n", 2, "--timeout", 120, *PER_RANK_VM, ivjob, "hang",
                      env=env)
    lines = [p.stdout.readline() for _ in range(2)]
    assert lines == ["ready\n"] * 2, (lines, p.stderr.read() if p.poll() is not None else "")
    return p


@pytest.mark.parametrize("first,second,shared", [
    ("off", "off", False), ("crc32c", "off", False), ("off", "crc32c", False),
    ("crc32c", "crc32c", True), ("same-domain", "same-domain", True)])
def test_a_region_is_shared_only_by_choice(ivjob, tmp_path, first, second, shared):
    """A job whose region holds the live area of a job of another trust
    domain (another vmpirun) fails at MPI_Init, unless both check
    integrity; jobs of one domain (VMPI_DOMAIN) always may share."""
    region = make_region(tmp_path / "region", 64 << 20)

    def env_of(mode):
        extra = {"VMPI_DOMAIN": "one"} if mode == "same-domain" else {"VMPI_INTEGRITY": mode}
        return region_env(region, VMPI_IVSHMEM_HEAP=str(8 << 20), **extra)

    p = _hang(ivjob, tmp_path, region, env_of(first))
    try:
        cp, _ = run_vmpirun("-n", 2, "--timeout", 60, *PER_RANK_VM, ivjob, "check", 12,
                            env=env_of(second), timeout=60)
        if shared:
            assert cp.returncode == 0, cp.stderr
            assert ok_ranks(cp.stdout) == [0, 1]
        else:
            assert cp.returncode == 1, cp.stderr
            want = "checks integrity, this job does not" if first == "crc32c" else \
                "does not check integrity"
            assert f"ivshmem region {region} holds the area of another live job" in cp.stderr
            assert want in cp.stderr, cp.stderr
        assert len(areas(region)) == 1 and p.poll() is None, "the first job's area is kept"
    finally:
        p.send_signal(signal.SIGTERM)
        finish(p, 10)


def _ranks_of(p):
    out = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]


# Sized so the region (15 usable chunks) holds one job's area (11 chunks).
SMALL = dict(VMPI_IVSHMEM_HEAP=str(4 << 20), VMPI_IVSHMEM_LEASE_MS="300")


def test_area_of_a_killed_job_is_reclaimed(ivjob, tmp_path):
    region = make_region(tmp_path / "region", 16 << 20)
    env = region_env(region, **SMALL)
    p = _hang(ivjob, tmp_path, region, env)
    ranks = _ranks_of(p)
    for pid in [p.pid, *ranks]:
        os.kill(pid, signal.SIGKILL)
    p.wait()
    time.sleep(0.2)
    assert len(areas(region)) == 1, "the killed job's area should still be there"
    cp, _ = run_vmpirun("-n", 2, "--timeout", 60, *PER_RANK_VM, ivjob, "check", 12, env=env,
                        timeout=60)
    assert cp.returncode == 0, cp.stderr
    assert ok_ranks(cp.stdout) == [0, 1]
    assert re.search(r"ivshmem region .*: reclaimed \d+ chunks of dead jobs", cp.stderr), cp.stderr
    assert areas(region) == []


def test_area_of_a_live_job_is_kept(ivjob, tmp_path):
    region = make_region(tmp_path / "region", 16 << 20)
    env = region_env(region, **SMALL)
    p = _hang(ivjob, tmp_path, region, env)
    try:
        before = areas(region)
        cp, _ = run_vmpirun("-n", 2, "--timeout", 60, *PER_RANK_VM, ivjob, "check", 2, env=env,
                            timeout=60)
        assert cp.returncode != 0
        assert f"ivshmem region {region} has no room for this job's area" in cp.stderr, cp.stderr
        assert areas(region) == before and p.poll() is None
    finally:
        p.send_signal(signal.SIGTERM)
        finish(p, 10)


@pytest.mark.parametrize("kind", ["small", "version", "garbage"])
def test_bad_region_is_a_clear_error_at_init(ivjob, tmp_path, kind):
    region = tmp_path / "region"
    if kind == "small":
        make_region(region, 1 << 20)
        want = "is too small"
    elif kind == "version":
        make_region(region, 16 << 20)
        with open(region, "r+b") as f:
            f.write(HDR.pack(0x7964722D69706D76, 0x7276692D69706D76, 99, 20, 16 << 20, 16, 1, 5))
        want = "has layout version 99; this vmpi uses version 1"
    else:
        region.write_bytes(random.Random(1).randbytes(8 << 20))
        want = "is not a vmpi region"
    cp, _ = run_vmpirun("-n", 2, "--timeout", 30, *PER_RANK_VM, ivjob, "shared",
                        env=region_env(region), timeout=40)
    assert cp.returncode == 1, cp.stderr
    assert f"ivshmem region {region} {want}" in cp.stderr, cp.stderr


def _control_words(region, area):
    """The byte ranges of an area's pairs that hold protocol state: ring
    cells and positions, split-copy claims, bulk slot headers."""
    with open(region, "rb") as f:
        f.seek(area)
        d = f.read(4096)
    # shm/area.h: the job's shape, then the section table (kind, off, len,
    # param[4]); kind 4 is the ivshmem channel's pairs.
    nlocal, nsec = struct.unpack_from("<I", d, 20)[0], struct.unpack_from("<I", d, 12)[0]
    for i in range(nsec):
        kind, _, chan_off, _, ncells, nslots, slot_bytes, stride = struct.unpack_from(
            "<IIQQQQQQ", d, 32 + 56 * i)
        if kind == 4:
            break
    else:
        raise AssertionError("the area has no pairs section")
    ring = 64 + ncells * 64
    spans = []
    for pair in range(nlocal * nlocal):
        base = area + chan_off + pair * stride
        spans.append((base, base + ring + 512))
        bulk = base + ring + 512
        spans += [(bulk + i * (128 + slot_bytes), bulk + i * (128 + slot_bytes) + 128)
                  for i in range(nslots)]
    return spans


def _rogue(region, spans, stop, rng, hits):
    """Writes 8 random bytes at random places of spans (a list of byte
    ranges of the region file, or a function of the open file that gives
    them, asked again every 50 ms) until stop is set."""
    with open(region, "r+b") as f:
        now, t = spans, 0.0
        while not stop.is_set():
            if callable(spans) and time.monotonic() - t > 0.05:
                now, t = spans(f), time.monotonic()
            if not now:
                time.sleep(0.005)
                continue
            lo, hi = rng.choice(now)
            off = rng.randrange(lo, hi - 8)
            f.seek(off)
            f.write(rng.randbytes(8))
            f.flush()
            hits.append(off)
            time.sleep(0.0005)


def _start_check(ivjob, tmp_path, region, env, iters):
    """Starts `ivjob check` on 2 ranks in 2 VMs; returns it and its area
    (first chunk, chunks) once published."""
    p = start_vmpirun(tmp_path, "-n", 2, "--timeout", 60, *PER_RANK_VM, ivjob, "check", iters,
                      env=env)
    t0 = time.monotonic()
    while not areas(region) and p.poll() is None and time.monotonic() - t0 < 20:
        time.sleep(0.001)
    area = areas(region)
    assert area, "the job never published its area"
    return p, area[0]


def _finish_under_rogue(p, region, spans, seed):
    """Waits for p while a rogue writes random bytes into spans."""
    stop, hits = threading.Event(), []
    th = threading.Thread(target=_rogue, args=(region, spans, stop, random.Random(seed), hits))
    th.start()
    try:
        rc, out, err = finish(p, 90)
    finally:
        stop.set()
        th.join()
    assert hits, "the rogue wrote nothing"
    return rc, out, err


@pytest.mark.parametrize("target,seed", [("rings", 1), ("rings", 2), ("rings", 3),
                                         ("control", 4), ("control", 5), ("area", 6),
                                         ("table", 7)])
def test_rogue_writer_cannot_crash_a_job_or_make_it_write_elsewhere(ivjob, tmp_path, target,
                                                                   seed):
    """Random bytes land in the protocol state of the job's pairs (rings,
    claims, bulk slot headers), anywhere in its area, or in the region
    header and job table while it runs. Allowed outcomes: verified data, an error naming
    the region, or (payload bytes are not checksummed by vmpi) the program's
    own "data corrupted". Never a signal, a hang, or a write outside the
    job's area."""
    size = 32 << 20
    region = make_region(tmp_path / "region", size)
    env = region_env(region, VMPI_IVSHMEM_HEAP=str(8 << 20))
    # A job of the same shape first, so the area's chunks are not fresh
    # (never used, hence zero: region.c skips clearing those) and the
    # claimant clears the canary out of them.
    cp, _ = run_vmpirun("-n", 2, "--timeout", 60, *PER_RANK_VM, ivjob, "check", 2, env=env,
                        timeout=60)
    assert cp.returncode == 0, cp.stderr
    canary = bytes([0xA5]) * CHUNK
    with open(region, "r+b") as f:   # everything after the table chunk
        for c in range(1, size // CHUNK):
            f.seek(c * CHUNK)
            f.write(canary)
    p, (first, count) = _start_check(ivjob, tmp_path, region, env, 150)
    spans = {"rings": lambda: _control_words(region, first * CHUNK)[::9],
             "control": lambda: _control_words(region, first * CHUNK),
             "area": lambda: [(first * CHUNK, (first + count) * CHUNK)],
             "table": lambda: [(0, CHUNK)]}[target]()
    rc, out, err = _finish_under_rogue(p, region, spans, seed)
    assert rc in (0, 1, 3), (rc, err)          # not 128 + signal, not the timeout
    assert "signal" not in err and "timed out" not in err, err
    if rc == 0:
        assert ok_ranks(out) == [0, 1], out + err
    elif rc == 1:
        assert f"ivshmem region {region}" in err, err
    else:
        assert "data corrupted" in err, err
    data = region.read_bytes()
    for c in range(1, size // CHUNK):
        if not first <= c < first + count:
            assert data[c * CHUNK:(c + 1) * CHUNK] == canary, f"chunk {c} outside the area changed"


@needs_vms
@needs_hosts
def test_verbose_map_for_2_hosts_of_2_vms(ivjob, tmp_path):
    cp, _ = run_vmpirun("-n", 8, "--hosts", 2, "--vms", 2, "--timeout", 60, ivjob, "check", 6,
                        env={"VMPI_VERBOSE": "1"}, timeout=90)
    assert cp.returncode == 0, cp.stderr
    assert ok_ranks(cp.stdout) == list(range(8))
    names = dict(re.findall(r"^vmpi: rank (\d+): host \d+ \((\S+)\) vm", cp.stderr, re.M))
    assert names == {str(r): f"h{r // 4}-vm{r // 2 % 2}" for r in range(8)}, cp.stderr
    rows = {int(m[0]): m[1].split() for m in
            re.findall(r"^vmpi:\s+(\d+)((?:\s+(?:self|smp|ivshmem|ofi))+)$", cp.stderr, re.M)}
    for a in range(8):
        want = ["self" if a == b else "smp" if a // 2 == b // 2 else
                "ivshmem" if a // 4 == b // 4 else "ofi" for b in range(8)]
        assert rows[a] == want, (a, cp.stderr)


@needs_vms
@pytest.mark.parametrize("channels,size", [(None, 4), ("smp,ofi", 2)])
def test_comm_type_shared_spans_the_host_with_ivshmem(ivjob, tmp_path, channels, size):
    env = {"VMPI_CHANNELS": channels} if channels else {}
    cp, _ = run_vmpirun("-n", 4, "--vms", 2, ivjob, "shared", env=env, timeout=60)
    assert cp.returncode == 0, cp.stderr
    got = dict(re.findall(r"^shared (\d+) (\d+)$", cp.stdout, re.M))
    assert got == {str(r): str(size) for r in range(4)}, cp.stdout


def _sections(region, area):
    """{kind: (offset in the region, length, params)} of an area's
    directory (shm/area.h: the job's shape, then kind, off, len, param[4])."""
    with open(region, "rb") as f:
        f.seek(area)
        d = f.read(4096)
    nsec = struct.unpack_from("<I", d, 12)[0]
    out = {}
    for i in range(nsec):
        kind, _, off, length, *param = struct.unpack_from("<IIQQQQQQ", d, 32 + 56 * i)
        out[kind] = (area + off, length, param)
    return out


def _data_spans(region, area, target):
    """Byte ranges of an area that hold message data, by section: ring
    cells, bulk slot data, heap slices, collective slot data."""
    sec = _sections(region, area)
    if target in ("ring", "bulk"):
        off, length, (ncells, nslots, slot_bytes, stride) = sec[4]
        ring = 64 + ncells * 64
        spans = []
        for base in range(off, off + length - stride + 1, stride):
            if target == "ring":
                spans.append((base + 64, base + ring))
            else:
                bulk = base + ring + 512
                spans += [(bulk + i * (128 + slot_bytes) + 128, bulk + (i + 1) * (128 + slot_bytes))
                          for i in range(nslots)]
        return spans
    if target == "heap":
        off, length, _ = sec[5]
        return [(off, off + length)] if length else []
    off, length, (slot_bytes, *_) = sec[3]
    return [(s + 4096, s + slot_bytes) for s in range(off, off + length, slot_bytes)]


@pytest.mark.parametrize("integrity", ["off", "crc32c"])
@pytest.mark.parametrize("target", ["ring", "bulk", "heap", "cslot"])
def test_fault_injection_into_message_data(ivjob, tmp_path, target, integrity):
    """A rogue writer changes message bytes in one section of the job's area
    while 2 ranks in 2 VMs exchange verified messages and collectives.
    With VMPI_INTEGRITY=crc32c the job either finishes with every byte
    verified or ends with an integrity error naming the region and the peer;
    never with data the program finds corrupted. Without it, the program's
    own check may find corrupted data (what docs/SECURITY.md states)."""
    region = make_region(tmp_path / "region", 64 << 20)
    env = region_env(region, VMPI_INTEGRITY=integrity)
    # Bulk chunks are in their slots only while a large message moves: more
    # rounds give the rogue time to hit one in every run.
    p, (first, _) = _start_check(ivjob, tmp_path, region, env, 600 if target == "bulk" else 120)
    spans = _data_spans(region, first * CHUNK, target)
    if integrity == "crc32c" and target == "heap":
        assert not spans, "with integrity on the area has no heap"
        spans = [(first * CHUNK + 8192, first * CHUNK + 12288)]   # the VM table page
    rc, out, err = _finish_under_rogue(p, region, spans, 7)
    assert "signal" not in err and "timed out" not in err, err
    if integrity == "crc32c":
        assert rc in (0, 1), (rc, err)
        if rc == 1:
            assert f"ivshmem region {region}" in err, err
        else:
            assert ok_ranks(out) == [0, 1], out + err
        if target == "bulk":
            # Chunks wait in their slots long enough, over 600 rounds, to be hit in every run.
            assert re.search(r"integrity check failed on bulk chunk \d+ from rank \d", err), err
    else:
        assert rc in (0, 1, 3), (rc, err)
