"""The network path end to end: jobs across emulated hosts (vmpirun --hosts)
and over the ofi channel, and how they fail.

A rank killed on another host ends the job within 5 s with a message that
names it; a libfabric provider that does not exist, and an address exchange
that finds no address, are clear errors at MPI_Init instead of hangs;
VMPI_VERBOSE=1 shows the placement and the channel of every pair; Debian's
Hydra runs a job over the network path (VMPI_CHANNELS=ofi), and across
emulated hosts the way it runs across real machines: a hostfile, and an
"ssh" that enters the host's namespace instead of logging in.

Uses the helper program tests/py/progs/jobs.c (built by test_mpi_jobs's
fixture) and $VMPI_BUILD like test_mpi_jobs.
"""
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import FAKE, PYDIR, wait_all_dead
from test_mpi_jobs import BUILD, VMPIRUN, hellos, jobs, run  # noqa: F401 (fixture)

pytestmark = [
    pytest.mark.skipif(not (VMPIRUN.is_file() and (BUILD / "bin" / "mpicc").is_file()),
                       reason=f"no vmpi build at VMPI_BUILD={BUILD}"),
    pytest.mark.skipif(os.geteuid() != 0, reason="--hosts needs root"),
]


def vmpi_netns():
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.startswith("vmpi-")}


def test_pingpong_across_hosts_and_verbose_table(jobs):
    cp, _ = run([VMPIRUN, "-n", 4, "--hosts", 2, "-x", "VMPI_VERBOSE=1", jobs, "pingpong"],
                timeout=120)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert "pingpong ok 1000" in cp.stdout
    err = cp.stderr
    assert re.search(r"channels smp,ivshmem,ofi \(ofi provider \S+", err), err
    # block placement: ranks 0,1 on the first host, 2,3 on the second
    hosts = dict(re.findall(r"vmpi: rank (\d): host (\d+)", err))
    assert hosts == {"0": "0", "1": "0", "2": "2", "3": "2"}, err
    rows = {m.group(1): m.group(2).split()
            for m in re.finditer(r"^vmpi:\s+(\d)\s+((?:\S+\s*){4})$", err, re.M)}
    assert rows["0"] == ["self", "smp", "ofi", "ofi"], err
    assert rows["3"] == ["ofi", "ofi", "smp", "self"], err


def test_channels_ofi_forces_network_inside_one_host(jobs):
    cp, _ = run([VMPIRUN, "-n", 2, "-x", "VMPI_CHANNELS=ofi", "-x", "VMPI_VERBOSE=1",
                 jobs, "pingpong"], timeout=120)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert re.search(r"^vmpi:\s+0\s+self\s+ofi$", cp.stderr, re.M), cp.stderr


def test_unknown_channel_is_a_clear_error(jobs):
    cp, _ = run([VMPIRUN, "-n", 2, "-x", "VMPI_CHANNELS=smp,carrier-pigeon", jobs, "pingpong"],
                timeout=60)
    assert cp.returncode != 0
    assert 'unknown channel "carrier-pigeon" (available: smp, ivshmem, ofi)' in cp.stderr, cp.stderr


def test_no_channel_between_hosts_is_a_clear_error(jobs):
    cp, _ = run([VMPIRUN, "-n", 2, "--hosts", 2, "-x", "VMPI_CHANNELS=smp", jobs, "pingpong"],
                timeout=60)
    assert cp.returncode != 0
    assert "gives no channel between them (add ofi)" in cp.stderr, cp.stderr


def test_kill9_rank_on_other_host_ends_job_naming_it(jobs):
    before = vmpi_netns()
    p = subprocess.Popen([str(VMPIRUN), "-n", "2", "--hosts", "2", str(jobs), "bigloop"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # Both ranks' hello lines and rank 1's "ready" may come in any order.
        lines = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = p.stdout.readline()
            if not line:
                break
            lines.append(line)
            pids = hellos("".join(lines))
            if 0 in pids and 1 in pids and any(x.startswith("ready 1") for x in lines):
                break
        pids = hellos("".join(lines))
        assert 1 in pids and 0 in pids, lines
        time.sleep(0.3)  # mid-transfer: 4 MiB messages are moving all the time
        t0 = time.monotonic()
        os.kill(pids[1][0], signal.SIGKILL)
        out, err = p.communicate(timeout=30)
        took = time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert took < 5.0, f"job took {took:.1f} s to end after rank 1 was killed"
    assert p.returncode == 128 + 9, err
    assert re.search(r"rank 1 \(pid \d+, host 1\) killed by signal 9", err), err
    assert wait_all_dead([pids[0][0]]) == []
    assert vmpi_netns() - before == set()


def test_nonexistent_provider_is_a_clear_error(jobs):
    cp, took = run([VMPIRUN, "-n", 2, "--hosts", 2, "-x", "FI_PROVIDER=nonexistent",
                    jobs, "pingpong"], timeout=60)
    assert cp.returncode != 0
    assert re.search(r'MPI_Init: libfabric provider "nonexistent" \(FI_PROVIDER\) offers no '
                     r"reliable-datagram endpoint.*providers in this libfabric: .*tcp",
                     cp.stderr), cp.stderr
    assert took < 20


def test_missing_network_address_is_an_error_not_a_hang(jobs):
    # Rank 1 publishes a business card of another host but no address; vmpi's
    # MPI_Init runs 5 PMI barriers before it reads the addresses (cards, VM
    # list, two for the smp segment, one for the address exchange).
    script = (f'if [ "$PMI_RANK" = 1 ]; then exec {sys.executable} -S {FAKE} nonet 5; '
              f'else exec {jobs} pingpong; fi')
    cp, took = run([VMPIRUN, "-n", 2, "--timeout", 60, "sh", "-c", script], timeout=90)
    assert cp.returncode != 0
    assert "rank 1 published no network address (PMI key vmpi-ofi-1 is missing)" in cp.stderr, \
        cp.stderr
    assert took < 30, f"took {took:.1f} s"


@pytest.mark.skipif(not shutil.which("mpiexec.hydra"), reason="no mpiexec.hydra (Debian mpich)")
def test_pingpong_under_hydra_over_ofi(jobs, tmp_path):
    cp, _ = run(["mpiexec.hydra", "-n", 2, "-genv", "VMPI_CHANNELS", "ofi",
                 "-genv", "VMPI_VERBOSE", "1", jobs, "pingpong"], cwd=tmp_path, timeout=120)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert "pingpong ok 1000" in cp.stdout
    assert re.search(r"^vmpi:\s+0\s+self\s+ofi$", cp.stderr, re.M), cp.stderr


# Hydra's ssh launcher runs "SSH [-x] HOST COMMAND"; this one runs COMMAND in
# the network namespace of the emulated host with that address.
NSSH = """#!/bin/sh
while [ "${1#-}" != "$1" ]; do shift; done
host=$1; shift
case $host in
  198.18.0.1) ns=%s ;;
  198.18.0.2) ns=%s ;;
  *) echo "nssh: unknown host $host" >&2; exit 1 ;;
esac
exec ip netns exec "$ns" sh -c "$*"
"""


@pytest.mark.skipif(not shutil.which("mpiexec.hydra"), reason="no mpiexec.hydra (Debian mpich)")
def test_hydra_hostfile_across_emulated_hosts(jobs, tmp_path):
    sys.path.insert(0, str(PYDIR))
    from vmpi import netns
    net = netns.Network.create(secrets.token_hex(16), 2, netns.check_usable())
    try:
        ssh = tmp_path / "nssh"
        ssh.write_text(NSSH % tuple(net.hosts))
        ssh.chmod(0o755)
        hostfile = tmp_path / "hostfile"
        hostfile.write_text("198.18.0.1:1\n198.18.0.2:1\n")
        # mpiexec runs on the first host and tells the proxies to call back
        # on its vmpi0 address, as on a cluster's management network.
        cp, _ = run(["ip", "netns", "exec", net.hosts[0], "mpiexec.hydra", "-iface", "vmpi0",
                     "-launcher", "ssh", "-launcher-exec", ssh, "-f", hostfile, "-n", 2,
                     "-genv", "VMPI_VERBOSE", "1", jobs, "pingpong"], cwd=tmp_path, timeout=120)
    finally:
        assert net.destroy() == []
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert "pingpong ok 1000" in cp.stdout
    hosts = dict(re.findall(r"vmpi: rank (\d): host (\d+)", cp.stderr))
    assert hosts == {"0": "0", "1": "1"}, cp.stderr
    assert re.search(r"^vmpi:\s+0\s+self\s+ofi$", cp.stderr, re.M), cp.stderr
