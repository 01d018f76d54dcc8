"""Dynamic processes by locality across emulated VMs (issue 30, part 5): a
child spawned into another VM of its parent's host talks to it through the
host region (the ivshmem channel's pool of pair slots in the job areas),
checked by the MPI_T channel counters in tests/c/t_dyn_region.c. The ctest
runs cover two children per spawn (an area made at MPI_Init) and 2 hosts;
these cover a child alone in its VM (its area is made when it first meets
another job), spawns in a row (each round's children finalize and their
areas go back to the region while the parent lives on) and integrity
checks: the jobs of vmpirun's trust domain then key their pool pairs with
the domain's secret (docs/SECURITY.md), so they still meet in the region,
and a writer changing bytes of those pairs is caught; jobs without the
secret (a VMPI_DOMAIN the user named) go over the network. Jobs of two
vmpirun launches on one region file share pool pairs only within a domain."""
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
from test_ivshmem import CHUNK, ENTRY, HDR, _rogue
from test_vms import BUILD, needs_hosts, needs_vms

PROG = BUILD / "tests" / "t_dyn_region"
CONNECT = BUILD / "tests" / "t_dyn_connect"
INTEGRITY = ("-x", "VMPI_INTEGRITY=crc32c")

needs_prog = pytest.mark.skipif(not PROG.exists(), reason="needs the library build (tests/t_dyn_region)")


# 2 ranks in 2 VMs spawning (program arguments: children per parent, spawns
# in a row); what they count per channel. Rank 0 (h0-vm0) meets a child in
# h0-vm1 through the region, rank 1 in its own VM. A VMPI_DOMAIN the user
# names comes without a secret (another launch may use the same name): with
# integrity checks its jobs' messages cannot be keyed alike, so they go over
# the network.
REGION_CASES = {
    "lone children in a row": ((), (1, 4), "2 parent(s) x 1 child(ren) x 4: 4 pairs over smp, "
                               "4 over ivshmem, 0 over ofi"),
    "integrity, jobs of the domain": (INTEGRITY, (), "2 parent(s) x 2 child(ren) x 1: 2 pairs "
                                      "over smp, 2 over ivshmem, 0 over ofi"),
    "integrity, lone children": (INTEGRITY, (1, 2), "2 parent(s) x 1 child(ren) x 2: 2 pairs "
                                 "over smp, 2 over ivshmem, 0 over ofi"),
    "integrity, a domain without secret": (
        (*INTEGRITY, "-x", "VMPI_DOMAIN=mine", "-x", "T_DYN_REGION=off"), (),
        "2 parent(s) x 2 child(ren) x 1: 2 pairs over smp, 0 over ivshmem, 2 over ofi"),
}


@needs_vms
@needs_prog
@pytest.mark.parametrize("case", REGION_CASES)
def test_spawned_jobs_in_2_vms_take_the_expected_channels(case):
    opts, args, counts = REGION_CASES[case]
    cp, _ = run_vmpirun("-n", 2, "--vms", 2, "--timeout", 100, *opts, PROG, *args, timeout=120)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert cp.stdout == f"t_dyn_region: {counts} OK\n", cp.stderr


@needs_vms
@needs_hosts
@needs_prog
def test_with_integrity_checks_spawns_on_2_hosts_use_region_and_network():
    cp, _ = run_vmpirun("-n", 4, "--hosts", 2, "--vms", 2, "--timeout", 100, *INTEGRITY, PROG,
                        timeout=120)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    # h0-vm0 -> ivshmem, h0-vm1 -> smp, h1-vm* -> ofi; 2 children each
    assert cp.stdout == ("t_dyn_region: 4 parent(s) x 2 child(ren) x 1: 2 pairs over smp, "
                         "2 over ivshmem, 4 over ofi OK\n"), cp.stderr


@needs_vms
@pytest.mark.skipif(not CONNECT.exists(), reason="needs the library build (tests/t_dyn_connect)")
def test_with_integrity_checks_jobs_meeting_through_a_port_use_the_region():
    cp, _ = run_vmpirun("-n", 2, "--vms", 2, "--timeout", 100, *INTEGRITY, CONNECT, timeout=120)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert cp.stdout == ("t_dyn_connect: 4 of 4 pairs between jobs A and B over ivshmem OK\n"
                         "t_dyn_connect: joined over a socket, ivshmem OK\n"), cp.stderr


def _pool_bulk(f):
    """Byte ranges of the bulk slot data of the claimed slots of every
    area's pool in the region file f (channel/ivshmem/ivshmem.c: struct
    iv_pool after the n * n pairs of the PAIRS section, then the member
    list, then each slot's two pair blocks)."""
    f.seek(0)
    head = f.read(CHUNK)
    nchunks = HDR.unpack_from(head, 0)[5]
    spans = []
    for i in range(min(nchunks, (CHUNK - HDR.size) // ENTRY.size)):
        state, _, _, _, _, count, _ = ENTRY.unpack_from(head, HDR.size + i * ENTRY.size)
        if state & 0xFF != 2 or not count:
            continue
        f.seek(i * CHUNK)
        d = f.read(4096)
        nsec, nlocal = struct.unpack_from("<I", d, 12)[0], struct.unpack_from("<I", d, 20)[0]
        for k in range(min(nsec, 60)):
            kind, _, off, length, ncells, nslots, slot_bytes, stride = struct.unpack_from(
                "<IIQQQQQQ", d, 32 + 56 * k)
            if kind != 4 or not stride:
                continue
            pool = i * CHUNK + off + nlocal * nlocal * stride
            f.seek(pool)
            magic, _, npool, _, _ = struct.unpack_from("<QIIII", f.read(64))
            if magic != 0x6C6F6F702D766976:
                continue
            f.seek(pool + 24)
            claims = struct.unpack(f"<{npool}Q", f.read(8 * npool))
            slots = pool + 4096 + ((4 * nlocal + 4095) & ~4095)
            bulk = 64 + ncells * 64 + 512
            for s, c in enumerate(claims):
                for block in (slots + stride * 2 * s, slots + stride * (2 * s + 1)):
                    spans += [(block + bulk + j * (128 + slot_bytes) + 128,
                               block + bulk + (j + 1) * (128 + slot_bytes)) for j in range(nslots)
                              if c]
    return spans


def _rogue_pools(shm_dir, stop, rng, hits):
    """Writes random bytes into the bulk data of the pool pairs of the job's
    host region while they are in use."""
    while not stop.is_set() and not list(shm_dir.glob("vmpi-*-ivshmem-h0")):
        time.sleep(0.01)
    for path in shm_dir.glob("vmpi-*-ivshmem-h0"):
        _rogue(path, _pool_bulk, stop, rng, hits)


@needs_vms
@needs_prog
@pytest.mark.parametrize("seed", [1, 2])
def test_with_integrity_checks_changed_bytes_between_jobs_are_an_error(tmp_path, seed):
    """A writer changes bytes of the bulk chunks in the pool pairs while a
    parent and its 2 children (another job, another VM) exchange 200 times
    each way: the job ends with an integrity error naming the region, never with
    data the program finds changed."""
    stop, hits = threading.Event(), []
    th = threading.Thread(target=_rogue_pools, args=(tmp_path, stop, random.Random(seed), hits))
    th.start()
    try:
        p = start_vmpirun(tmp_path, "-n", 2, "--vms", 2, "--timeout", 100, *INTEGRITY, PROG, 2,
                          1, 200, env={"VMPI_SHM_DIR": str(tmp_path)})
        rc, out, err = finish(p, 120)
    finally:
        stop.set()
        th.join()
    assert hits, "the rogue wrote nothing"
    assert "signal" not in err and "timed out" not in err, err
    assert not re.search(r"\.[ch]:\d+: check failed", err), err   # the program's own check
    assert rc == 1, (rc, out, err)
    # the peer is a process of the other job: named by its rank there and its job
    assert re.search(r"ivshmem region \S+: integrity check failed on bulk chunk \d+ from rank "
                     r"[01] of job [0-9a-f]{8}:", err), err


# Two jobs of two vmpirun launches that share one region file (VMPI_VM_ID
# puts each rank in a "VM" of its own, so a job's two ranks make its area
# at MPI_Init) meet through a port written to a file: rank 0 of job A
# counts per channel what rank 0 of job B sends.
XDOMAIN_C = r'''
#include "t_dyn_chan.h"
#include <unistd.h>

int main(int argc, char **argv)
{
    int provided, rank;
    char port[MPI_MAX_PORT_NAME] = "", tmp[4096];
    MPI_Comm ab;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK(argc == 3, "usage: xdomain accept|connect FILE");
    int accept = !strcmp(argv[1], "accept");
    if (accept && rank == 0) {
        OK(MPI_Open_port(MPI_INFO_NULL, port));
        snprintf(tmp, sizeof tmp, "%s.tmp", argv[2]);
        FILE *f = fopen(tmp, "w");
        CHECK(f && fputs(port, f) >= 0 && !fclose(f) && !rename(tmp, argv[2]), "cannot write %s",
              argv[2]);
    } else if (rank == 0) {
        FILE *f = NULL;
        for (int t = 0; t < 6000 && !(f = fopen(argv[2], "r")); t++)
            usleep(10000);
        CHECK(f && fgets(port, sizeof port, f), "no port in %s", argv[2]);
        fclose(f);
    }
    if (accept)
        OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ab));
    else
        OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ab));
    int go = 1;
    if (rank == 0 && accept) {
        unsigned long long got[T_DYN_NCHAN];
        /* B sends only now, so A counts every byte. */
        OK(MPI_Send(&go, 1, MPI_INT, 0, 2, ab));
        t_dyn_counted(ab, 0, 7, got);
        printf("xdomain: smp %llu ivshmem %llu ofi %llu\n", got[0], got[1], got[2]);
        OK(MPI_Close_port(port));
    } else if (rank == 0) {
        OK(MPI_Recv(&go, 1, MPI_INT, 0, 2, ab, MPI_STATUS_IGNORE));
        t_dyn_exchange(ab, 0, 7, 1);
    }
    OK(MPI_Barrier(ab));
    OK(MPI_Comm_disconnect(&ab));
    OK(MPI_T_finalize());
    OK(MPI_Finalize());
    return 0;
}
'''


@pytest.fixture(scope="module")
def xdomain(tmp_path_factory):
    from test_mpi_jobs import MPICC
    d = tmp_path_factory.mktemp("xdomain")
    (d / "xdomain.c").write_text(XDOMAIN_C)
    cp = subprocess.run([str(MPICC), "-O1", "-I", str(Path(__file__).parents[1] / "c"), "-o",
                         str(d / "xdomain"), str(d / "xdomain.c")],
                        capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    return d / "xdomain"


@needs_prog
@pytest.mark.parametrize("domain,integrity,channel", [
    ("one", "off", "ivshmem"),      # one domain, named alike by both: the pool
    (None, "crc32c", "ofi"),        # two domains (each vmpirun's own): never a pool pair
    ("one", "crc32c", "ofi"),       # one named domain, no secret: no keyed pool pair
])
def test_jobs_of_two_launches_share_pool_pairs_only_within_a_domain(xdomain, tmp_path, domain,
                                                                   integrity, channel):
    """Without integrity checks two jobs may pool their pairs when the user
    names one domain for both; with them, only jobs that share a domain's
    secret (vmpirun's own domain and the jobs it spawns) do. Jobs of two
    domains may share the region (both check integrity) but never a pair."""
    region = tmp_path / "region"
    with open(region, "wb") as f:
        f.truncate(256 << 20)
    env = {"VMPI_IVSHMEM_PATH": str(region), "VMPI_INTEGRITY": integrity,
           "VMPI_CHANNELS": "ivshmem,ofi", "VMPI_IVSHMEM_HEAP": str(8 << 20)}
    if domain:
        env["VMPI_DOMAIN"] = domain
    port = tmp_path / "port"
    a = start_vmpirun(tmp_path, "-n", 2, "--timeout", 60, "sh", "-c",
                      'VMPI_VM_ID=vmA$PMI_RANK exec "$0" "$@"', xdomain, "accept", port, env=env)
    b = start_vmpirun(tmp_path, "-n", 2, "--timeout", 60, "sh", "-c",
                      'VMPI_VM_ID=vmB$PMI_RANK exec "$0" "$@"', xdomain, "connect", port, env=env)
    rb, outb, errb = finish(b, 90)
    ra, outa, erra = finish(a, 90)
    assert (ra, rb) == (0, 0), erra + errb
    m = re.fullmatch(r"xdomain: smp (\d+) ivshmem (\d+) ofi (\d+)\n", outa)
    assert m, outa + erra
    got = dict(zip(("smp", "ivshmem", "ofi"), map(int, m.groups())))
    assert got["smp"] == 0, got
    assert got[channel] >= 3 * 1000 + 256 * 1024, got
    if channel == "ofi":
        assert got["ivshmem"] == 0, got
    else:   # the network may carry the greeting, never the data
        assert got["ofi"] < 3 * 1000, got


# Two launches meet as in XDOMAIN_C; rank 0 of each then polls until the
# test says go, and the two rank 0s exchange a message (send), or each
# only waits for one from the other (recv).
XFLIP_C = r'''
#include "t_dyn_chan.h"
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, out = 7, in = 0;
    char port[MPI_MAX_PORT_NAME] = "", tmp[4096];
    MPI_Comm ab;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK(argc == 5, "usage: xflip accept|connect DIR INTS send|recv");
    int n = atoi(argv[3]);
    int *big = calloc((size_t)n, sizeof *big);
    CHECK(n > 0 && big, "INTS: %s", argv[3]);
    int accept = !strcmp(argv[1], "accept");
    snprintf(tmp, sizeof tmp, "%s/port", argv[2]);
    if (accept && rank == 0) {
        /* written whole under another name: the other side may open it at once */
        char part[4200];
        OK(MPI_Open_port(MPI_INFO_NULL, port));
        snprintf(part, sizeof part, "%s.tmp", tmp);
        FILE *f = fopen(part, "w");
        CHECK(f && fputs(port, f) >= 0 && !fclose(f) && !rename(part, tmp), "cannot write %s",
              tmp);
    } else if (rank == 0) {
        FILE *f = NULL;
        for (int t = 0; t < 6000 && !(f = fopen(tmp, "r")); t++)
            usleep(10000);
        CHECK(f && fgets(port, sizeof port, f), "no port in %s", tmp);
        fclose(f);
    }
    if (accept)
        OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ab));
    else
        OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ab));
    if (rank == 0) {
        /* One message each way first, so both pairs are set up. */
        OK(MPI_Sendrecv(&out, 1, MPI_INT, 0, 1, &in, 1, MPI_INT, 0, 1, ab, MPI_STATUS_IGNORE));
        snprintf(tmp, sizeof tmp, "%s/ready.%s", argv[2], argv[1]);
        FILE *f = fopen(tmp, "w");
        CHECK(f && !fclose(f), "cannot write %s", tmp);
        snprintf(tmp, sizeof tmp, "%s/go", argv[2]);
        int flag;
        while (access(tmp, F_OK)) {
            OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, ab, &flag, MPI_STATUS_IGNORE));
            usleep(1000);
        }
        big[0] = out;
        if (!strcmp(argv[4], "recv"))
            OK(MPI_Recv(big, n, MPI_INT, 0, 2, ab, MPI_STATUS_IGNORE));
        else
            OK(MPI_Sendrecv_replace(big, n, MPI_INT, 0, 2, 0, 2, ab, MPI_STATUS_IGNORE));
        CHECK(big[0] == 7, "got %d", big[0]);
        printf("xflip: exchanged\n");
    }
    OK(MPI_Comm_disconnect(&ab));
    OK(MPI_Finalize());
    return 0;
}
'''


@needs_prog
@pytest.mark.parametrize("ints,mode", [(1, "send"), (65536, "send"), (1, "recv")],
                         ids=["eager", "rendezvous", "receive"])
def test_a_send_to_a_peer_whose_area_was_taken_back_is_an_error(tmp_path, ints, mode):
    """Two launches on one region meet in a pool pair, whose slot lies in the
    area of one of them. Someone changes that area's entry in the region's
    table: the other process, which polls meanwhile, sees the area taken
    back and moves the pair out of it, and its next send to that peer (an
    eager message, or the request that starts a rendezvous) ends its job
    with an error naming the peer, where it used to go into memory nobody
    reads while both jobs waited for their timeout; so does a receive it
    posts for that peer alone. (The owner's job then waits for a message
    that cannot come, as for a process that has ended; the test stops it.)"""
    from test_mpi_jobs import MPICC
    (tmp_path / "xflip.c").write_text(XFLIP_C)
    prog = tmp_path / "xflip"
    cp = subprocess.run([str(MPICC), "-O1", "-I", str(Path(__file__).parents[1] / "c"), "-o",
                         str(prog), str(tmp_path / "xflip.c")],
                        capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    region = tmp_path / "region"
    with open(region, "wb") as f:
        f.truncate(256 << 20)
    # a lease of 10 minutes: the jobs' own heartbeats look at their areas
    # at start only, so only the other job's check sees the change
    env = {"VMPI_IVSHMEM_PATH": str(region), "VMPI_DOMAIN": "one",
           "VMPI_CHANNELS": "ivshmem,ofi", "VMPI_IVSHMEM_HEAP": str(8 << 20),
           "VMPI_IVSHMEM_LEASE_MS": "600000"}
    procs = [start_vmpirun(tmp_path, "-n", 2, "--timeout", 90, "sh", "-c",
                           f'VMPI_VM_ID=vm{side}$PMI_RANK exec "$0" "$@"', prog, side, tmp_path,
                           ints, mode, env=env) for side in ("accept", "connect")]
    try:
        deadline = time.monotonic() + 60
        while not all((tmp_path / f"ready.{s}").exists() for s in ("accept", "connect")):
            gone = [p for p in procs if p.poll() is not None]
            assert not gone, [finish(p, 10) for p in gone]
            assert time.monotonic() < deadline
            time.sleep(0.05)
        with open(region, "r+b") as f:
            head = f.read(CHUNK)
            nchunks = HDR.unpack_from(head, 0)[5]
            heads = [HDR.size + i * ENTRY.size for i in range(min(nchunks, (CHUNK - HDR.size)
                                                                  // ENTRY.size))
                     if ENTRY.unpack_from(head, HDR.size + i * ENTRY.size)[0] & 0xFF == 2]
            assert len(heads) == 2, heads
            for off in heads:   # another generation
                f.seek(off)
                f.write(struct.pack("<Q", struct.unpack_from("<Q", head, off)[0] ^ 1 << 40))
                f.flush()
        time.sleep(0.5)   # polls see the change before the exchange begins
        (tmp_path / "go").touch()
        deadline = time.monotonic() + 60
        while all(p.poll() is None for p in procs) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1)   # the other launch, if it ends too
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)   # vmpirun takes its ranks along
        results = [finish(p, 30) for p in procs]
    finally:
        # SIGTERM first: vmpirun takes its ranks along (a SIGKILL would leave
        # them polling on the machine until they give up)
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    errs = "".join(r[2] for r in results)
    assert "signal" not in errs, errs
    said = (r"cannot reach rank 0 of job [0-9a-f]{8}: its job's area" if mode == "send" else
            r"a receive or probe waits for rank 0 of job [0-9a-f]{8}, whose job's area")
    # (or, if the change is first seen when the exchange has begun, as a
    # change with a transfer or receive under way)
    assert re.search(r"ivshmem region \S+: (" + said + r" of the region was taken back|rank 0 "
                     r"of job [0-9a-f]{8}'s job's area of the region was taken back .* under "
                     r"way)", errs), errs
    assert 1 in (results[0][0], results[1][0]), results
