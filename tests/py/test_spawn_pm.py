"""vmpirun's side of dynamic processes (issue 30, part 5): the PMI-1 name
service, PMI spawn (both layouts of MPICH's clients), -usize, and what
spawned jobs do to the run: output tags, exit codes, teardown, cleanup,
placement in emulated VMs.

The ranks are a small Python program (PM below) that speaks PMI-1 itself on
PMI_FD, as MPICH's simple PMI client does, so no MPI library is needed.
"""
import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from conftest import alive, finish, run_vmpirun, start_vmpirun
from test_vms import holders, needs_hosts, needs_vms
from vmpi import netns, pmi

PM = r'''
import json, os, socket, sys, time
sys.path.insert(0, HELPERS)
import fake_rank

class PMI(fake_rank.PMI):
    def send_raw(self, text):
        self.sock.sendall(text.encode())

    def attr(self, reply, key):
        # a value ends at a space, but for get's, the last
        rest = reply.split(" " + key + "=", 1)[1]
        return rest.split(" ")[0] if key != "value" else rest

    def init(self):
        assert self.query("cmd=init pmi_version=1 pmi_subversion=1").endswith("rc=0")
        self.kvs = self.attr(self.query("cmd=get_my_kvsname"), "kvsname")
        self.usize = int(self.attr(self.query("cmd=get_universe_size"), "size"))
        self.appnum = int(self.attr(self.query("cmd=get_appnum"), "appnum"))

    def barrier(self):
        assert self.query("cmd=barrier_in") == "cmd=barrier_out"

    def spawn(self, blocks, preput, layout):
        """blocks: [(execname, nprocs, args, info)]; layout: classic or 1.1."""
        text = ""
        for i, (exe, n, args, info) in enumerate(blocks):
            lines = ["mcmd=spawn", f"nprocs={n}", f"execname={exe}",
                     f"totspawns={len(blocks)}", f"spawnssofar={i + 1}"]
            argl = [f"arg{j + 1}={a}" for j, a in enumerate(args)]
            pre = [f"preput_num={len(preput)}"] + [
                l for j, (k, v) in enumerate(preput) for l in (f"preput_key_{j}={k}",
                                                              f"preput_val_{j}={v}")]
            inf = [l for j, (k, v) in enumerate(info) for l in (f"info_key_{j}={k}",
                                                                f"info_val_{j}={v}")]
            if layout == "classic":   # MPICH 3's simple PMI: args first, preput in every block
                lines += argl + [f"argcnt={len(args)}"] + pre + [f"info_num={len(info)}"] + inf
            else:                     # pmi-1.1.txt: preput in the first block only, infonum
                lines += [f"argcnt={len(args)}"] + argl + (pre if i == 0 else [])
                lines += [f"infonum={len(info)}"] + inf
            text += "\n".join(lines + ["endcmd"]) + "\n"
        if layout == "classic":
            for line in text.splitlines(keepends=True):
                self.send_raw(line)
        else:
            self.send_raw(text)
        return self.recv()

def out(**kw):
    print(json.dumps(kw), flush=True)

rank = int(os.environ["PMI_RANK"])
mode = sys.argv[1]
p = PMI()
p.init()
if mode == "names":
    if rank == 0:
        r1 = p.query("cmd=publish_name service=ocean port=tag#0$port:198.18.0.1:4242")
        r2 = p.query("cmd=publish_name service=ocean port=other")
    p.barrier()
    if rank == 1:
        r3 = p.query("cmd=lookup_name service=ocean")
        r4 = p.query("cmd=unpublish_name service=ocean")
        r5 = p.query("cmd=unpublish_name service=ocean")
        r6 = p.query("cmd=lookup_name service=ocean")
        out(replies=[r3, r4, r5, r6], msgs=[p.attr(r5, "msg"), p.attr(r6, "msg")])
    else:
        out(replies=[r1, r2], msg=p.attr(r2, "msg"))
    p.barrier()
    p.finalize()
elif mode == "parent":
    # parent LAYOUT JSON-BLOCKS [then]: rank 0 spawns, prints the reply
    layout, blocks, then = sys.argv[2], json.loads(sys.argv[3]), sys.argv[4:]
    if rank == 0:
        p.query("cmd=publish_name service=parent-svc port=parent-port-1")
        reply = p.spawn(blocks, [("pp0", "v w"), ("pp1", "a=b")], layout)
        msg = p.attr(reply, "msg") if " msg=" in reply else None
        out(who="parent", kvs=p.kvs, usize=p.usize, reply=reply, msg=msg,
            job=os.environ["VMPI_JOB_ID"])
    p.barrier()
    if "hang" in then:
        time.sleep(30)
    p.finalize()
elif mode == "child":
    size = int(os.environ["PMI_SIZE"])
    pp = p.attr(p.query(f"cmd=get kvsname={p.kvs} key=pp0"), "value")
    put = p.query(f"cmd=put kvsname={p.kvs} key=c{rank} value={os.getpid()}")
    assert put.endswith("rc=0 msg=success"), put
    p.barrier()
    peers = [p.attr(p.query(f"cmd=get kvsname={p.kvs} key=c{r}"), "value") for r in range(size)]
    look = p.attr(p.query("cmd=lookup_name service=parent-svc"), "port")
    shm = os.environ.get("VMPI_SHM_DIR")
    if shm:   # a shared-memory file of the child's job, for vmpirun to clean up
        open(os.path.join(shm, f"vmpi-{os.environ['VMPI_JOB_ID']}-child{rank}"), "w").close()
    pidfile = os.environ.get("CHILD_PIDFILE")
    if pidfile:
        with open(f"{pidfile}.{rank}", "w") as f:
            f.write(str(os.getpid()))
    out(who="child", rank=rank, size=size, kvs=p.kvs, appnum=p.appnum, usize=p.usize,
        spawned=os.environ.get("PMI_SPAWNED"), pp=pp, peers=len(set(peers)), lookup=look,
        args=sys.argv[2:], cwd=os.getcwd(), host=socket.gethostname(),
        vm=os.environ.get("VMPI_VM_INDEX"), hidx=os.environ.get("VMPI_HOST_INDEX"),
        addr=os.environ.get("VMPI_HOST_ADDR"), job=os.environ["VMPI_JOB_ID"],
        net=os.readlink("/proc/self/ns/net"),
        local=[os.environ["VMPI_LOCAL_RANK"], os.environ["VMPI_LOCAL_SIZE"]])
    act = sys.argv[2] if len(sys.argv) > 2 else ""
    if act == "abort5":
        p.send("cmd=abort exitcode=5 message=child gives up")
        time.sleep(30)
    if act == "hang":
        time.sleep(30)
    p.finalize()
    sys.exit(3 if act == "exit3" else 0)
'''


@pytest.fixture
def prog(tmp_path):
    """The PM program, executable, in tmp_path/bin/pm."""
    d = tmp_path / "bin"
    d.mkdir()
    path = d / "pm"
    helpers = Path(__file__).resolve().parent / "helpers"
    path.write_text(f"#!{sys.executable} -S\nHELPERS = {str(helpers)!r}\n{PM}")
    path.chmod(0o755)
    return path


def records(stdout):
    """(tag, record) of each JSON line the PM ranks printed (-l tags them)."""
    rows = []
    for line in stdout.splitlines():
        tag, brace, rest = line.partition("{")
        if brace:
            rows.append((tag.strip(), json.loads(brace + rest)))
    return rows


def block(exe, n, args, info=()):
    return [str(exe), n, list(args), [list(kv) for kv in info]]


def parent_args(prog, layout, blocks, *then):
    return [prog, "parent", layout, json.dumps(blocks), *then]


# --- the server alone ------------------------------------------------------------


def replies(events):
    return [e.data.decode() for e in events if isinstance(e, pmi.Reply)]


def test_name_service_replies_are_hydras_and_shared_between_servers():
    names = {}
    a = pmi.PMIServer(1, "kvs_a", names=names)
    b = pmi.PMIServer(1, "kvs_b", names=names)
    assert replies(a.feed(0, b"cmd=publish_name service=s1 port=p:1.2.3.4:5\n")) == [
        "cmd=publish_result rc=0\n"]
    assert replies(b.feed(0, b"cmd=publish_name service=s1 port=x\n")) == [
        "cmd=publish_result rc=1 msg=service_s1_is_already_published\n"]
    assert replies(b.feed(0, b"cmd=lookup_name service=s1\n")) == [
        "cmd=lookup_result rc=0 port=p:1.2.3.4:5\n"]
    assert replies(b.feed(0, b"cmd=unpublish_name service=s1\n")) == [
        "cmd=unpublish_result rc=0\n"]
    assert replies(a.feed(0, b"cmd=unpublish_name service=s1\n")) == [
        "cmd=unpublish_result rc=1 msg=service_s1_is_not_published\n"]
    assert replies(a.feed(0, b"cmd=lookup_name service=s1\n")) == [
        "cmd=lookup_result rc=1 msg=service_s1_is_not_published\n"]


def test_spawn_request_parsed_in_both_layouts_with_escapes_and_spaces():
    s = pmi.PMIServer(1, "kvs", spawn=True)
    classic = (b"mcmd=spawn\nnprocs=2\nexecname=./a b\ntotspawns=2\nspawnssofar=1\n"
               b"arg1=one two\narg2=x\\\\y=z\nargcnt=2\npreput_num=1\npreput_key_0=k\n"
               b"preput_val_0=v w\ninfo_num=1\ninfo_key_0=wdir\ninfo_val_0=/tmp\nendcmd\n")
    assert s.feed(0, classic) == []     # one of two blocks
    ev = s.feed(0, b"mcmd=spawn\nnprocs=1\nexecname=b\ntotspawns=2\nspawnssofar=2\n"
                   b"argcnt=0\npreput_num=1\npreput_key_0=k\npreput_val_0=v w\n"
                   b"info_num=0\nendcmd\n")
    assert ev == [pmi.Spawn(0, [
        pmi.SpawnBlock("./a b", 2, ["one two", "x\\y=z"], [("wdir", "/tmp")]),
        pmi.SpawnBlock("b", 1, [], [])], {"k": "v w"})]
    modern = (b"mcmd=spawn\nnprocs=1\nexecname=c\ntotspawns=1\nspawnssofar=1\nargcnt=1\n"
              b"arg1=-v\npreput_num=2\npreput_key_0=PARENT_ROOT_PORT_NAME\npreput_val_0=tag#0\n"
              b"preput_key_1=x\npreput_val_1=1\ninfonum=1\ninfo_key_0=host\ninfo_val_0=h0-vm1\n"
              b"endcmd\n")
    assert s.feed(0, modern) == [pmi.Spawn(
        0, [pmi.SpawnBlock("c", 1, ["-v"], [("host", "h0-vm1")])],
        {"PARENT_ROOT_PORT_NAME": "tag#0", "x": "1"})]
    assert s.spawn_reply(0, None).data == b"cmd=spawn_result rc=0\n"
    assert s.spawn_reply(0, "./c: program not found").data == \
        b"cmd=spawn_result rc=1 msg=./c:_program_not_found\n"


@pytest.mark.parametrize("request_, why", [
    (b"mcmd=spawn\nnprocs=1\ntotspawns=1\nargcnt=0\nendcmd\n", "spawn block 1: no execname"),
    (b"mcmd=spawn\nnprocs=1\nexecname=a\ntotspawns=1\nargcnt=2\narg1=x\nendcmd\n",
     "spawn block 1: arg2 is missing"),
    (b"mcmd=spawn\nnprocs=x\nexecname=a\ntotspawns=1\nendcmd\n",
     "spawn block 1: nprocs='x' is not a number"),
    (b"mcmd=spawn\nnprocs=1\nexecname=a\nendcmd\n", "totspawns=''"),
    # Hydra would wait for the end forever
    (b"mcmd=spawn\nnprocs=1\nexecname=a\ntotspawns=1\nendcmd=\n", "bare 'endcmd' line"),
])
def test_malformed_spawn_is_answered_with_the_problem(request_, why):
    s = pmi.PMIServer(1, "kvs", spawn=True)
    out = replies(s.feed(0, request_))
    assert len(out) == 1 and out[0].startswith("cmd=spawn_result rc=1 msg="), out
    assert why.replace(" ", "_") in out[0], out
    # the connection still works
    assert replies(s.feed(0, b"cmd=get_appnum\n")) == ["cmd=appnum appnum=0\n"]


def test_appnum_per_rank_preput_and_general_process_mapping():
    s = pmi.PMIServer(3, "kvs_c", appnum=[0, 0, 1], preput={"k": "v w"}, node_of=[0, 0, 1])
    assert replies(s.feed(2, b"cmd=get_appnum\n")) == ["cmd=appnum appnum=1\n"]
    assert replies(s.feed(1, b"cmd=get kvsname=kvs_c key=k\n")) == [
        "cmd=get_result rc=0 msg=success value=v w\n"]
    assert s.kvs["kvs_c"]["PMI_process_mapping"] == "(vector,(0,1,2),(1,1,1))"
    assert pmi.process_mapping_of([0, 1, 0]) == "(vector,(0,2,1),(0,1,1))"
    assert pmi.process_mapping_of([0, 0, 1, 1, 2]) == "(vector,(0,2,2),(2,1,1))"


# --- under vmpirun -------------------------------------------------------------------


def test_publish_lookup_unpublish_between_ranks(prog):
    cp, _ = run_vmpirun("-n", 2, prog, "names")
    assert cp.returncode == 0, cp.stderr
    rows = dict((r["replies"][0][:12], r) for _, r in records(cp.stdout))
    r0 = rows["cmd=publish_"]
    assert r0["replies"] == ["cmd=publish_result rc=0", r0["replies"][1]]
    assert r0["replies"][1].startswith("cmd=publish_result rc=1 ")
    assert r0["msg"] == "service_ocean_is_already_published"
    r1 = rows["cmd=lookup_r"]
    assert r1["replies"][:2] == ["cmd=lookup_result rc=0 port=tag#0$port:198.18.0.1:4242",
                                 "cmd=unpublish_result rc=0"], r1
    assert r1["replies"][2].startswith("cmd=unpublish_result rc=1 ")
    assert r1["replies"][3].startswith("cmd=lookup_result rc=1 ")
    assert r1["msgs"] == ["service_ocean_is_not_published"] * 2


@pytest.mark.parametrize("layout", ["classic", "1.1"])
def test_spawn_two_blocks_makes_one_job_of_three(prog, tmp_path, layout):
    wdir = tmp_path / "work dir"
    wdir.mkdir()
    shm = tmp_path / "shm"
    shm.mkdir()
    blocks = [block("pm", 2, ["child", "two words", "k=v"],
                    [("path", str(prog.parent)), ("wdir", str(wdir)), ("color", "blue")]),
              block(prog, 1, ["child", "solo"])]
    cp, _ = run_vmpirun("-n", 2, "-usize", 7, "-l", *parent_args(prog, layout, blocks),
                        env={"VMPI_SHM_DIR": str(shm)})
    assert cp.returncode == 0, cp.stderr
    rows = records(cp.stdout)
    parent = [r for tag, r in rows if r["who"] == "parent"]
    kids = sorted((r["rank"], tag, r) for tag, r in rows if r["who"] == "child")
    assert len(parent) == 1 and parent[0]["reply"] == "cmd=spawn_result rc=0", parent
    assert [(rank, tag) for rank, tag, _ in kids] == [(0, "[1:0]"), (1, "[1:1]"), (2, "[1:2]")]
    assert next(tag for tag, r in rows if r["who"] == "parent") == "[0]"
    kvs = {r["kvs"] for _, _, r in kids}
    assert len(kvs) == 1 and parent[0]["kvs"] not in kvs, (kvs, parent)
    for rank, _, r in kids:
        assert r["size"] == 3 and r["appnum"] == (0 if rank < 2 else 1), r
        assert r["usize"] == 7 and r["spawned"] == "1", r
        assert r["local"] == [str(rank), "3"], r
        assert r["pp"] == "v w" and r["peers"] == 3, r       # preput; their own barrier
        assert r["lookup"] == "parent-port-1", r             # one name space
        assert r["args"] == (["two words", "k=v"] if rank < 2 else ["solo"]), r
        assert r["cwd"] == (str(wdir) if rank < 2 else os.getcwd()), r
    assert parent[0]["usize"] == 7
    # a job id (shared-memory key) of its own, and its files are gone
    assert len({r["job"] for _, _, r in kids}) == 1
    assert list(shm.iterdir()) == [], list(shm.iterdir())


def test_default_universe_is_unknown_as_under_hydra(prog):
    cp, _ = run_vmpirun("-n", 2, *parent_args(prog, "1.1", [block(prog, 1, ["child"])]))
    assert cp.returncode == 0, cp.stderr
    assert sorted(r["usize"] for _, r in records(cp.stdout)) == [-1, -1]
    cp, _ = run_vmpirun("-n", 2, "--universe-size=SYSTEM",
                        *parent_args(prog, "1.1", [block(prog, 1, ["child"])]))
    assert sorted(r["usize"] for _, r in records(cp.stdout)) == [len(os.sched_getaffinity(0))] * 2


@pytest.mark.parametrize("what, expect", [
    ("missing", "/nonexistent/pm: program not found"),
    ("noexec", "is not an executable file"),
    ("toomany", "cannot start 100000000 more processes"),
    ("nohost", "host elsewhere.example (info host) is not this machine"),
    ("badwdir", "(info wdir) is not a directory"),
    # found and executable, but exec fails: the first block's child is ended
    ("badexec", "cannot start rank 1 of spawned job 1 ("),
])
def test_spawn_refused_with_a_message_and_nothing_started(prog, tmp_path, what, expect):
    plain = tmp_path / "plain"
    plain.write_text("#!/bin/sh\n")
    badexec = tmp_path / "badexec"
    badexec.write_text("#!/nonexistent/interpreter\n")
    badexec.chmod(0o755)
    blocks = {"missing": [block("/nonexistent/pm", 1, ["child"])],
              "noexec": [block(prog, 1, ["child"]), block(plain, 1, [])],
              "toomany": [block(prog, 100000000, ["child"])],
              "nohost": [block(prog, 1, ["child"], [("host", "elsewhere.example")])],
              "badwdir": [block(prog, 1, ["child"], [("wdir", str(plain))])],
              "badexec": [block(prog, 1, ["child", "hang"]), block(badexec, 1, [])]}[what]
    cp, _ = run_vmpirun("-n", 1, *parent_args(prog, "classic", blocks))
    assert cp.returncode == 0, cp.stderr
    rows = records(cp.stdout)
    assert [r["who"] for _, r in rows] == ["parent"], rows     # no child ran
    reply = rows[0][1]
    assert reply["reply"].startswith("cmd=spawn_result rc=1 msg="), reply
    assert expect.replace(" ", "_") in reply["msg"], reply


def test_spawn_on_this_machine_by_name(prog):
    blocks = [block(prog, 1, ["child"], [("host", "localhost")])]
    cp, _ = run_vmpirun("-n", 1, *parent_args(prog, "1.1", blocks))
    assert cp.returncode == 0, cp.stderr
    assert [r["who"] for _, r in records(cp.stdout)] == ["parent", "child"]


def test_child_exit_code_is_the_jobs_and_names_the_child(prog):
    cp, _ = run_vmpirun("-n", 2, *parent_args(prog, "1.1", [block(prog, 2, ["child", "exit3"])]))
    assert cp.returncode == 3, (cp.returncode, cp.stderr)
    assert f"rank 0 of spawned job 1 ({prog}, pid " in cp.stderr, cp.stderr
    assert "exited with code 3 after MPI_Finalize" in cp.stderr
    # both children ran to their end (no teardown after a finalized exit)
    assert len([r for _, r in records(cp.stdout) if r["who"] == "child"]) == 2


def test_child_abort_ends_every_job(prog, tmp_path):
    shm = tmp_path / "shm"
    shm.mkdir()
    t0 = time.monotonic()
    cp, _ = run_vmpirun("-n", 2, *parent_args(prog, "1.1", [block(prog, 2, ["child", "abort5"])],
                                              "hang"), env={"VMPI_SHM_DIR": str(shm)})
    assert cp.returncode == 5, (cp.returncode, cp.stderr)
    assert time.monotonic() - t0 < 15       # the hanging parent was killed
    assert "of spawned job 1 (" in cp.stderr and "failed with exit code 5: child gives up" \
        in cp.stderr, cp.stderr
    assert cp.stderr.count("aborting job") == 1, cp.stderr
    assert list(shm.iterdir()) == [], list(shm.iterdir())


def test_sigterm_of_vmpirun_kills_spawned_jobs(prog, tmp_path):
    pidfile = tmp_path / "child"
    blocks = [block(prog, 2, ["child", "hang"])]
    p = start_vmpirun(tmp_path, "-n", 1, *parent_args(prog, "1.1", blocks, "hang"),
                      env={"CHILD_PIDFILE": str(pidfile)})
    deadline = time.monotonic() + 15
    files = []
    while time.monotonic() < deadline and len(files) < 2:
        files = sorted(tmp_path.glob("child.*"))
        time.sleep(0.05)
    assert len(files) == 2, "the children never started"
    pids = [int(f.read_text()) for f in files]
    p.send_signal(signal.SIGTERM)
    code, _, err = finish(p, 15)
    assert code == 143, err
    assert "caught SIGTERM; terminating 3 rank(s)" in err, err
    assert not [pid for pid in pids if alive(pid)]


@needs_vms
def test_spawn_into_another_emulated_vm_with_info_host(prog):
    blocks = [block(prog, 1, ["child"], [("host", "h0-vm1")]), block(prog, 1, ["child"])]
    cp, _ = run_vmpirun("-n", 2, "--vms", 2, *parent_args(prog, "classic", blocks))
    assert cp.returncode == 0, cp.stderr
    kids = sorted((r["rank"], r["host"], r["vm"]) for _, r in records(cp.stdout)
                  if r["who"] == "child")
    # rank 0 of the parent job runs in h0-vm0: the block without "host" goes there
    assert kids == [(0, "h0-vm1", "1"), (1, "h0-vm0", "0")], kids
    # alone in its VM among its job's ranks, each
    assert [r["local"] for _, r in records(cp.stdout) if r["who"] == "child"] == [["0", "1"]] * 2
    jobid = next(r["job"] for _, r in records(cp.stdout) if r["who"] == "parent")
    assert holders(jobid) == [], "a VM outlived its job"
    cp, _ = run_vmpirun("-n", 2, "--vms", 2, *parent_args(
        prog, "1.1", [block(prog, 1, ["child"], [("host", "h3-vm0")])]))
    msg = [r for _, r in records(cp.stdout)][0]["msg"]
    assert "host_h3-vm0_(info_host)_is_not_this_machine_nor_one_of_its_VMs_(h0-vm0,_h0-vm1)" \
        in msg, msg


@needs_hosts
def test_spawn_onto_another_emulated_host_with_info_host(prog):
    # rank 0 of the parent job is on host 0; the first block goes to h1, the
    # second is split between the two hosts named in a list
    blocks = [block(prog, 1, ["child"], [("host", "h1")]),
              block(prog, 2, ["child"], [("host", "h0,h1")])]
    cp, _ = run_vmpirun("-n", 2, "--hosts", 2, *parent_args(prog, "1.1", blocks))
    assert cp.returncode == 0, cp.stderr
    kids = sorted((r["rank"], r["hidx"], r["addr"], r["net"]) for _, r in records(cp.stdout)
                  if r["who"] == "child")
    assert [k[:3] for k in kids] == [(0, "1", netns.host_addr(1)), (1, "0", netns.host_addr(0)),
                                     (2, "1", netns.host_addr(1))], kids
    # in the hosts' network namespaces: two of them, neither the machine's
    assert kids[0][3] == kids[2][3] != kids[1][3] != os.readlink("/proc/self/ns/net")
    jobid = next(r["job"] for _, r in records(cp.stdout) if r["who"] == "parent")
    assert not [n for n in os.listdir(netns.NETNS_DIR) if jobid in n], "namespaces left"
