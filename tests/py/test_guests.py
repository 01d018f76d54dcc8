"""Real VMs: vmpirun --vm-guests runs ranks in QEMU guests (python/vmpi/guests.py).

Two guests of one emulated host share one ivshmem-plain device and talk
through it; guests of two hosts talk over their virtio network. The MPI job
is tests/c/t_guest.c (ping-pong, Allreduce and Bcast with every byte
checked), from $VMPI_BUILD. The guests boot a Debian kernel under software
emulation (a few seconds each); the first test fetches it into the cache.
"""
import os
import re
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
import lzma
from pathlib import Path

import pytest

from conftest import ROOT, run_vmpirun, vmpirun_cmd
from vmpi import guest_image, guests, launcher, netns, shm
from vmpi.study import run as study_run
from vmpi.study.spec import Bench, Config, Placement, skip_reason

BUILD = Path(os.environ.get("VMPI_BUILD", ROOT / "build")).resolve()
T_GUEST = BUILD / "tests" / "t_guest"
JOBS_TIMEOUT = 240


def _usable() -> str | None:
    try:
        guests.check_usable()
    except guests.GuestError as exc:
        return str(exc)
    if not T_GUEST.exists():
        return f"no {T_GUEST} (build first)"
    return None


needs_guests = pytest.mark.skipif(_usable() is not None, reason=str(_usable()))


def qemus(jobid=None):
    """Pids of QEMU processes of vmpi guests (of one job if given)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"-name" in cmd:
            name = cmd[cmd.index(b"-name") + 1].decode(errors="replace")
            if name.startswith("vmpi-") and (jobid is None or jobid in name):
                found.append(int(pid))
    return found


def leftovers():
    """What guest jobs leave on the machine: namespaces, shm files, QEMUs."""
    nets = [n for n in os.listdir(netns.NETNS_DIR)] if os.path.isdir(netns.NETNS_DIR) else []
    files = [f for f in os.listdir(shm.default_shm_dir())
             if f.startswith("vmpi-") and ("ivshmem" in f or "guest" in f or "console" in f)]
    return sorted(n for n in nets if n.startswith("vmpi-")), sorted(files), qemus()


@pytest.fixture
def clean():
    before = leftovers()
    yield
    deadline = time.monotonic() + 10
    while leftovers() != before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert leftovers() == before


def vmpirun(*args, timeout=JOBS_TIMEOUT, env=None):
    cp, _ = run_vmpirun(*args, timeout=timeout,
                        env={"VMPI_BUILD": str(BUILD), **(env or {})})
    return cp


def channels(text):
    """The channel matrix VMPI_VERBOSE=1 prints: {(row, col): channel}."""
    out = {}
    for line in text.splitlines():
        line = re.sub(r"^\[1,\d+\]<std(?:out|err)>: ", "", line)
        m = re.match(r"^vmpi:\s+(\d+)\s+((?:\s*\S+)+)$", line)
        if m and not line.startswith("vmpi: rank"):
            for col, ch in enumerate(m.group(2).split()):
                out[(int(m.group(1)), col)] = ch
    return out


@needs_guests
def test_two_guests_of_one_host_talk_over_ivshmem(clean):
    cp = vmpirun("-n", 2, "--vm-guests", 2, "-x", "VMPI_VERBOSE=1", T_GUEST)
    assert cp.returncode == 0, cp.stderr
    assert "t_guest: ok, 2 ranks on h0-g0 h0-g1" in cp.stdout
    m = channels(cp.stdout + cp.stderr)
    assert m[(0, 1)] == "ivshmem" and m[(1, 0)] == "ivshmem", m
    # found by its PCI id inside the guest, not through a path the launcher set
    assert re.search(r"ivshmem region /sys/bus/pci/devices/[0-9a-f:.]+/resource2",
                     cp.stdout + cp.stderr)


@needs_guests
def test_guests_of_two_hosts_talk_over_the_virtio_network(clean):
    cp = vmpirun("-n", 2, "--hosts", 2, "--vm-guests", 1, "-x", "VMPI_VERBOSE=1", T_GUEST)
    assert cp.returncode == 0, cp.stderr
    assert "t_guest: ok, 2 ranks on h0-g0 h1-g0" in cp.stdout
    m = channels(cp.stdout + cp.stderr)
    assert m[(0, 1)] == "ofi" and m[(1, 0)] == "ofi", m


@needs_guests
def test_two_hosts_of_two_guests_mix_the_channels(clean):
    cp = vmpirun("-n", 4, "--hosts", 2, "--vm-guests", 2, "-x", "VMPI_VERBOSE=1", T_GUEST)
    assert cp.returncode == 0, cp.stderr
    assert "t_guest: ok, 4 ranks on h0-g0 h0-g1 h1-g0 h1-g1" in cp.stdout
    m = channels(cp.stdout + cp.stderr)
    assert m[(0, 1)] == m[(2, 3)] == "ivshmem", m
    assert m[(0, 2)] == m[(1, 3)] == m[(3, 0)] == "ofi", m


@needs_guests
def test_locality_unaware_policy_uses_the_virtio_network(clean):
    cp = vmpirun("-n", 2, "--vm-guests", 2, "-x", "VMPI_VERBOSE=1",
                 "-x", "VMPI_CHANNELS=smp,ofi", T_GUEST)
    assert cp.returncode == 0, cp.stderr
    assert channels(cp.stdout + cp.stderr)[(0, 1)] == "ofi"


@needs_guests
def test_ranks_of_one_guest_share_memory(clean):
    cp = vmpirun("-n", 2, "--vm-guests", 1, "-x", "VMPI_VERBOSE=1", "--tag-output", T_GUEST)
    assert cp.returncode == 0, cp.stderr
    assert "[1,0]<stdout>: t_guest: ok, 2 ranks on h0-g0 h0-g0" in cp.stdout
    assert channels(cp.stdout + cp.stderr)[(0, 1)] == "smp"


@needs_guests
def test_exit_code_and_message_of_a_failing_rank(clean):
    cp = vmpirun("-n", 2, "--vm-guests", 2, "/bin/sh", "-c", 'exit $((PMI_ID + 3))')
    assert cp.returncode in (3, 4), cp.stderr
    assert re.search(r"rank [01] \(guest h0-g[01]\) exited with code [34]", cp.stderr)


@needs_guests
def test_output_and_environment_reach_the_guest(clean):
    cp = vmpirun("-n", 1, "--vm-guests", 1, "-x", "VMPI_TEST_WORD=guest-env-ok", "/bin/sh", "-c",
                 'read h < /proc/sys/kernel/hostname; echo "$VMPI_TEST_WORD $h"; '
                 'echo to-stderr >&2; printf unterminated')
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout.splitlines() == ["guest-env-ok h0-g0", "unterminated"]
    assert "to-stderr" in cp.stderr


@needs_guests
def test_a_qemu_that_cannot_start_is_reported(clean):
    cp = vmpirun("-n", 1, "--vm-guests", 1, T_GUEST, env={"VMPI_GUEST_MEM": "bogus"})
    assert cp.returncode == 1
    assert "guest h0-g0 stopped before its ranks ended" in cp.stderr
    assert "bogus" in cp.stderr   # QEMU's own complaint


@needs_guests
def test_spawned_children_run_in_the_guests_and_talk_to_their_parents(clean, tmp_path):
    # t_guest spawn 3 CHILD: one child beside rank 0, one in h0-g1 (info
    # host); child 1 exits with code 3 after MPI_Finalize. CHILD, a copy of
    # t_guest, is not in the guests' image: their inits fetch it.
    child = tmp_path / "t_guest_child"
    shutil.copy(T_GUEST, child)
    cp = vmpirun("-n", 2, "--vm-guests", 2, "-l", T_GUEST, "spawn", 3, child)
    lines = cp.stdout.splitlines()
    assert "[1:0] t_guest: child 0 on h0-g0 ok" in lines, cp.stdout + cp.stderr
    assert "[1:1] t_guest: child 1 on h0-g1 ok" in lines, cp.stdout
    assert "[0] t_guest: spawned 2 children ok" in lines, cp.stdout
    # a place that is none of the guests refuses the spawn, saying so
    assert any(ln.startswith("[0] t_guest: refused: MPI_Comm_spawn: ") and
               "host_h9-g0_(info_host)_is_not_this_machine_nor_one_of_its_VMs_(h0-g0,_h0-g1)"
               in ln for ln in lines), cp.stdout
    assert cp.returncode == 3, cp.stderr
    assert (f"vmpirun: rank 1 of spawned job 1 ({child}, guest h0-g1) exited with code 3 "
            "after MPI_Finalize") in cp.stderr


@needs_guests
def test_a_child_that_aborts_ends_every_job(clean):
    t0 = time.monotonic()
    cp = vmpirun("-n", 2, "--vm-guests", 2, T_GUEST, "spawn", -5)
    assert cp.returncode == 5, cp.stderr
    assert (f"vmpirun: rank 1 of spawned job 1 ({T_GUEST}, guest h0-g1) called "
            "MPI_Abort(errorcode 5); aborting job") in cp.stderr, cp.stderr
    assert cp.stderr.count("aborting job") == 1, cp.stderr
    assert time.monotonic() - t0 < 60   # the parents, left waiting, were stopped


def fake_guest_job():
    """A GuestJob of 2 ranks in 2 guests, never started, whose failures are kept."""
    job = guests.GuestJob(launcher.parse_args(["-n", "2", "--vm-guests", "2", "/bin/true"]),
                          "/bin/true", "qemu", "ip")
    job.failures = []
    job.fail = lambda code, message, teardown=True: job.failures.append((code, message))
    return job


def frame(kind, job, rank, payload=b"", length=None):
    return struct.pack(guests.HEADER, 0x7E, kind, job, rank,
                       len(payload) if length is None else length) + payload


@pytest.mark.parametrize("data, why", [
    (frame(b"o", 0, 1, b"hi"), "rank 1 of job 0, not one of its running processes"),
    (frame(b"o", 1, 0, b"hi"), "rank 0 of job 1, not one of its running processes"),
    (frame(b"x", 0, 0, b"\0"), "type b'x' (1 bytes)"),
    (frame(b"o", 0, 0, length=guests.MAX_FRAME + 1), "garbage"),
    (b"\x7f" + bytes(20), "garbage"),
])
def test_frames_from_a_guest_are_checked(data, why):
    job = fake_guest_job()
    job._read_guest(job.guests[0], "agent", FakePipe(data))
    assert len(job.failures) == 1 and why in job.failures[0][1], job.failures


def test_frames_of_a_guest_attribute_output_and_exits_to_job_and_rank(capfd):
    job = fake_guest_job()
    ok = frame(b"o", 0, 0, b"line\n") + frame(b"x", 0, 0, struct.pack("<I", 3 << 8))
    # a frame split anywhere waits for its rest
    job._read_guest(job.guests[0], "agent", FakePipe(ok[:7]))
    job._read_guest(job.guests[0], "agent", FakePipe(ok[7:]))
    assert capfd.readouterr().out == "line\n"
    assert job.ranks[0].status == 3
    assert job.failures == [(3, "rank 0 (guest h0-g0) exited with code 3 without calling "
                                "MPI_Finalize")]


def test_an_init_fetches_a_file_by_its_token_only():
    job = fake_guest_job()
    job.offers["t1"] = b"program bytes"
    fetches = []
    for line in (b"t1\n", b"t1\n", b"x" * 70):   # the first fetch takes the file
        mine, theirs = socket.socketpair()
        theirs.setblocking(False)
        job.fetches[theirs.fileno()] = guests._Fetch(theirs)
        job.sel.register(theirs, selectors.EVENT_READ, ("fetch", None))
        mine.sendall(line)
        while theirs.fileno() in job.fetches:
            job._serve_fetch(theirs)
        mine.settimeout(5)
        try:
            fetches.append(mine.recv(100))
        except ConnectionResetError:   # closed with some of a long line unread
            fetches.append(None)
        mine.close()
    assert fetches[:2] == [b"program bytes", b""] and fetches[2] in (b"", None)
    assert job.offers == {} and job.fetches == {}


class FakePipe:
    """What _read_guest reads from: one read returns data."""

    def __init__(self, data):
        self.r, w = os.pipe()
        os.write(w, data)
        os.close(w)

    def fileno(self):
        return self.r

    def __del__(self):
        os.close(self.r)


def start_sleeping_guest():
    """vmpirun with one guest whose rank sleeps, once the rank is running."""
    p = subprocess.Popen(vmpirun_cmd("-n", 1, "--vm-guests", 1, "/bin/sh", "-c",
                                     "echo started; exec sleep 100"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env={**os.environ, "VMPI_BUILD": str(BUILD)})
    assert p.stdout.readline() == "started\n"
    return p


@needs_guests
def test_ctrl_c_stops_the_guests_and_removes_everything(clean):
    p = start_sleeping_guest()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 130, err
    assert "caught SIGINT; stopping 1 guest(s)" in err


@needs_guests
def test_a_killed_launcher_takes_its_guests_along_and_cleanup_removes_the_rest():
    before = leftovers()
    p = start_sleeping_guest()
    assert qemus()
    p.kill()
    p.wait()
    deadline = time.monotonic() + 10
    while qemus() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert qemus() == before[2], "QEMU outlived its launcher"
    assert leftovers() != before   # the namespace and files are still there
    cp, _ = run_vmpirun("--cleanup")
    assert cp.returncode == 0, cp.stderr
    # --cleanup also takes what dead jobs before this test left behind
    assert all(set(now) <= set(was) for now, was in zip(leftovers(), before)), leftovers()


@pytest.mark.parametrize("args, message", [
    (["--vm-guests", "0"], "at least 1"),
    (["--vm-guests", "x"], "not a number"),
    (["--vm-guests", "2", "--vms", "2", "-n", "4"], "exclude each other"),
    (["--vm-guests", "3", "-n", "2"], "more guests (3) than ranks (2)"),
    (["--hosts", "2", "--vm-guests", "2", "-n", "3"], "more guests (4) than ranks (3)"),
    (["--vm-guests", "1", "--ivshmem-size", "12M"], "power of two"),
    (["--vm-guests", "1", "--ivshmem-size", "2M"], "at least 4M"),
])
def test_bad_guest_options(args, message):
    cp, _ = run_vmpirun(*args, "/bin/true")
    assert cp.returncode == 2
    assert message in cp.stderr


def test_usage_mentions_guests():
    cp, _ = run_vmpirun("--help")
    assert "--vm-guests N" in cp.stdout


# --- the image ---------------------------------------------------------------


def read_cpio(data: bytes) -> dict:
    """{name: (mode, bytes)} of a cpio newc archive, checking its framing."""
    out, pos = {}, 0
    while True:
        assert data[pos:pos + 6] == b"070701", f"bad magic at {pos}"
        fields = [int(data[pos + 6 + 8 * i:pos + 14 + 8 * i], 16) for i in range(13)]
        mode, size, namesize = fields[1], fields[6], fields[11]
        name = data[pos + 110:pos + 110 + namesize - 1].decode()
        assert data[pos + 110 + namesize - 1] == 0
        pos += 110 + namesize
        pos += -pos % 4
        if name == "TRAILER!!!":
            return out
        out[name] = (mode, data[pos:pos + size])
        pos += size
        pos += -pos % 4


def test_cpio_archive_round_trips(tmp_path):
    with open(tmp_path / "a.cpio", "wb") as f:
        cp = guest_image._Cpio(f)
        cp.file("/usr/lib/x/libz.so.1", b"abc", 0o755)
        cp.file("/vmpi/job", b"")
        cp.file("/usr/lib/x/libz.so.1", b"twice")   # the first copy wins
        cp.close()
    entries = read_cpio((tmp_path / "a.cpio").read_bytes())
    assert entries["usr/lib/x/libz.so.1"] == (0o100755, b"abc")
    assert entries["vmpi/job"] == (0o100644, b"")
    for d in ("usr", "usr/lib", "usr/lib/x", "vmpi"):
        assert entries[d][0] == 0o40755
    assert list(entries).index("usr/lib/x") < list(entries).index("usr/lib/x/libz.so.1")


def test_job_file_layout():
    data = guest_image.job_file("/w", ["/bin/prog", "a b", ""], {"K": "v=1"})
    assert data == b"/w\x003\x00/bin/prog\x00a b\x00\x001\x00K=v=1\x00"
    with pytest.raises(guest_image.ImageError, match="NUL"):
        guest_image.job_file("/w", ["/bin/prog", "a\0b"], {})


def test_kernel_is_found_inside_a_bzimage():
    elf = b"\x7fELF" + bytes(range(256)) * 64
    fake = b"MZ" + b"\0" * 1000 + b"\xfd7zXZ\x00broken" + b"\0" * 20 + lzma.compress(elf)
    assert guest_image._decompress_kernel(fake) == elf
    with pytest.raises(guest_image.ImageError, match="no xz or gzip payload"):
        guest_image._decompress_kernel(b"MZ" + b"\0" * 100)


@needs_guests
def test_cached_kernel_holds_virtio_modules_in_load_order():
    k = guest_image.kernel()
    names = [os.path.basename(m) for m in k.modules]
    assert names.index("virtio.ko") < names.index("virtio_pci.ko") < names.index("virtio_net.ko")
    assert names.index("virtio_ring.ko") < names.index("virtio.ko")
    assert k.vmlinux.read_bytes()[:4] == b"\x7fELF"
    deps = guest_image._modinfo_depends((k.dir / k.modules[-1].lstrip("/")).read_bytes())
    assert "virtio" in deps and "net_failover" in deps


def test_library_closure_finds_libc_and_the_loader():
    libs = guest_image.library_closure([sys.executable])
    assert any(os.path.basename(x).startswith("libc.so") for x in libs)
    assert any("ld-linux" in x for x in libs)


# --- the study's real-VM placement ------------------------------------------


def test_study_guest_placements():
    pl = Placement.parse("2guest")
    assert (pl.hosts, pl.vms, pl.real, pl.label) == (1, 2, True, "2 real VMs, 1 host")
    assert Placement.parse("2host1guest").label == "2 hosts x 1 real VM"
    assert not Placement.parse("2vm").real
    b = Bench("latency", "latency")
    assert "vmpi only" in skip_reason(b, "mpich", pl, "default", 2)
    assert skip_reason(b, "vmpi", pl, "unaware", 2) is None


def test_study_command_boots_guests():
    class Lay:
        vmpirun = "/x/vmpirun"

        def program(self, lib, name):
            return f"/x/{name}"

    b = Bench("latency", "latency", args="-m 8:8")
    cmd, _ = study_run.command(Config("latency", "vmpi", "2guest", "unaware", 2), b, Lay(), None)
    assert "--vm-guests 2" in cmd and "--vms" not in cmd
    assert "-x VMPI_CHANNELS=smp,ofi" in cmd
    assert f"--timeout {int(b.timeout + study_run.GUEST_BOOT)}" in cmd
    assert launcher.parse_args(cmd.split()[1:]).vm_guests == 2


@needs_guests
@pytest.mark.skipif(not os.path.exists("/usr/bin/NPmpich2"), reason="needs netpipe-mpich2")
def test_a_binary_built_for_mpich_runs_on_vmpi_in_the_guests(clean):
    # the launcher's LD_LIBRARY_PATH decides which libmpich.so.12 goes into the image
    cp = vmpirun("-n", 2, "--vm-guests", 2, "-x", f"LD_LIBRARY_PATH={BUILD / 'lib'}",
                 "/usr/bin/NPmpich2", "-u", 1024, "-n", 5)
    assert cp.returncode == 0, cp.stderr
    out = cp.stdout + cp.stderr   # NetPIPE reports on stderr
    assert re.search(r"1024 bytes\s+5 times -->\s+[0-9.]+ Mbps", out), out
