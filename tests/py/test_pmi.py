"""The PMI-1 server without processes: parsing and exact reply formats."""
import pytest

from vmpi import pmi


def replies(events):
    return [(e.rank, e.data.decode()) for e in events if isinstance(e, pmi.Reply)]


def test_parse_simple_command():
    assert pmi.parse_command("cmd=put kvsname=kvs_1_0 key=k value=v\n") == (
        "put", {"kvsname": "kvs_1_0", "key": "k", "value": "v"})
    assert pmi.parse_command("cmd=barrier_in") == ("barrier_in", {})


def test_parse_abort_message_keeps_spaces_and_equals():
    cmd, a = pmi.parse_command(
        "cmd=abort exitcode=5 message=application called MPI_Abort(MPI_COMM_WORLD, 5) - x=1")
    assert cmd == "abort"
    assert a == {"exitcode": "5",
                 "message": "application called MPI_Abort(MPI_COMM_WORLD, 5) - x=1"}


def test_parse_value_with_spaces_and_escapes_is_verbatim():
    _, a = pmi.parse_command("cmd=put kvsname=k key=x value=a b\\ c")
    assert a["value"] == "a b\\ c"
    _, a = pmi.parse_command("cmd=put value=one two key=x kvsname=k")
    assert a == {"value": "one two", "key": "x", "kvsname": "k"}


@pytest.mark.parametrize("line", ["", "put key=x", "cmd= key=x", "cmd=put =x", "cmd=put k!y=1"])
def test_parse_rejects_garbage(line):
    with pytest.raises(ValueError):
        pmi.parse_command(line)


def test_reply_formats_match_hydra():
    s = pmi.PMIServer(2, "kvs_42_0")
    feed = lambda r, line: replies(s.feed(r, (line + "\n").encode()))
    assert feed(0, "cmd=init pmi_version=1 pmi_subversion=1") == [
        (0, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n")]
    assert s.initialized(0) and not s.initialized(1)
    assert feed(0, "cmd=get_maxes") == [
        (0, "cmd=maxes rc=0 kvsname_max=256 keylen_max=256 vallen_max=1024\n")]
    assert feed(0, "cmd=get_appnum") == [(0, "cmd=appnum appnum=0\n")]
    assert feed(0, "cmd=get_my_kvsname") == [(0, "cmd=my_kvsname kvsname=kvs_42_0\n")]
    assert feed(1, "cmd=get_universe_size") == [(1, "cmd=universe_size size=2\n")]
    assert feed(0, "cmd=put kvsname=kvs_42_0 key=card0 value=tcp://1.2.3.4:5") == [
        (0, "cmd=put_result rc=0 msg=success\n")]
    assert feed(1, "cmd=get kvsname=kvs_42_0 key=card0") == [
        (1, "cmd=get_result rc=0 msg=success value=tcp://1.2.3.4:5\n")]
    assert feed(1, "cmd=get kvsname=kvs_42_0 key=nope") == [
        (1, "cmd=get_result rc=-1 msg=key_nope_not_found value=unknown\n")]
    assert feed(1, "cmd=get kvsname=kvs_42_0 key=PMI_process_mapping") == [
        (1, "cmd=get_result rc=0 msg=success value=(vector,(0,1,2))\n")]
    assert feed(0, "cmd=finalize") == [(0, "cmd=finalize_ack\n")]
    assert s.finalized(0) and not s.finalized(1)


def test_barrier_releases_everyone_only_when_all_are_in():
    s = pmi.PMIServer(3, "kvs")
    assert s.feed(0, b"cmd=barrier_in\n") == []
    assert s.feed(2, b"cmd=barrier_in\n") == []
    assert s.ranks_in_barrier() == [0, 2]
    out = replies(s.feed(1, b"cmd=barrier_in\n"))
    assert sorted(out) == [(0, "cmd=barrier_out\n"), (1, "cmd=barrier_out\n"), (2, "cmd=barrier_out\n")]
    assert s.ranks_in_barrier() == []
    # a second barrier works the same way
    assert s.feed(1, b"cmd=barrier_in\n") == []
    assert s.barrier_epoch == 1


def test_lines_split_across_reads_and_batched():
    s = pmi.PMIServer(1, "kvs")
    assert s.feed(0, b"cmd=put kvsname=kvs key=a va") == []
    out = replies(s.feed(0, b"lue=1\ncmd=get kvsname=kvs key=a\ncmd=abort exit"))
    assert out == [(0, "cmd=put_result rc=0 msg=success\n"),
                   (0, "cmd=get_result rc=0 msg=success value=1\n")]
    # an unterminated last line still counts when the rank closes the socket
    assert s.feed(0, b"code=4") == []
    assert s.eof(0) == [pmi.Abort(0, 4, "")]


def test_later_put_wins_and_no_put_is_lost():
    s = pmi.PMIServer(2, "kvs")
    for i in range(500):
        s.feed(i % 2, f"cmd=put kvsname=kvs key=k{i} value=v{i}\n".encode())
    s.feed(0, b"cmd=put kvsname=kvs key=k7 value=new\n")
    assert all(s.kvs["kvs"][f"k{i}"] == (f"v{i}" if i != 7 else "new") for i in range(500))


def test_abort_event_and_no_reply():
    s = pmi.PMIServer(2, "kvs")
    ev = s.feed(1, b"cmd=abort exitcode=7 message=out of cheese\n")
    assert ev == [pmi.Abort(1, 7, "out of cheese")]
    ev = s.feed(0, b"cmd=abort exitcode=3\n")
    assert ev == [pmi.Abort(0, 3, "")]


def test_unknown_command_gets_an_error_reply_not_silence():
    s = pmi.PMIServer(1, "kvs")
    ev = s.feed(0, b"cmd=frobnicate x=1\n")
    assert any(isinstance(e, pmi.ProtocolError) for e in ev)
    assert replies(ev) == [(0, "cmd=frobnicate_result rc=-1 msg=unsupported_command_frobnicate\n")]


def test_pmi2_init_is_refused():
    s = pmi.PMIServer(1, "kvs")
    out = replies(s.feed(0, b"cmd=init pmi_version=2 pmi_subversion=0\n"))
    assert out == [(0, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1\n")]
    assert not s.initialized(0)


def test_spawn_block_is_refused_after_endcmd():
    s = pmi.PMIServer(1, "kvs")
    assert replies(s.feed(0, b"mcmd=spawn\nnprocs=1\nexecname=a\ntotspawns=1\n")) == []
    out = replies(s.feed(0, b"spawnssofar=1\nargcnt=0\nendcmd\n"))
    assert out == [(0, "cmd=spawn_result rc=-1 msg=spawn_not_supported\n")]
    # the connection is usable afterwards
    assert replies(s.feed(0, b"cmd=get_appnum\n")) == [(0, "cmd=appnum appnum=0\n")]


def test_process_mapping_lists_each_node_block():
    assert pmi.process_mapping([4]) == "(vector,(0,1,4))"
    assert pmi.process_mapping([2, 2, 2, 2]) == "(vector,(0,4,2))"
    # uneven blocks and empty VMs (fewer ranks than VMs)
    assert pmi.process_mapping([3, 3, 2, 0]) == "(vector,(0,2,3),(2,1,2))"


# --- vmpi's own clients (pmi/pmi1.c, pmi/pmi2.c) against servers ------------------
#
# The program is tests/py/progs/pm_check.c built with the tested mpicc. A
# PMI-2 server of the test's own, on PMI_FD, answers as Slurm's pmi2 plugin
# does (which also sets PMI_JOBID, whence vmpi offers PMI-2 first); vmpirun
# refuses PMI-2 and serves PMI-1; Hydra is asked for PMI-1.

import os  # noqa: E402
import shutil  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
from pathlib import Path  # noqa: E402

import pmjob  # noqa: E402

VMPIRUN = pmjob.BUILD / "bin" / "vmpirun"
need_build = pytest.mark.skipif(not pmjob.have_build(), reason=pmjob.NO_BUILD)


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    return pmjob.build(tmp_path_factory.mktemp("pmi"))


def pmi2_split(body):
    """`cmd=x;k=v;...;` into (cmd, {k: v}), ';;' read as ';'."""
    pairs, cur, i = [], "", 0
    while i < len(body):
        if body[i] == ";" and body[i + 1:i + 2] == ";":
            cur += ";"
            i += 2
        elif body[i] == ";":
            pairs.append(cur)
            cur = ""
            i += 1
        else:
            cur += body[i]
            i += 1
    kv = dict(p.split("=", 1) for p in pairs)
    return kv.pop("cmd"), kv


def pmi2_frame(**kv):
    body = "".join(f"{k}={str(v).replace(';', ';;')};" for k, v in kv.items())
    return f"{len(body):<6}{body}".encode()


class FakeSlurmPMI2(threading.Thread):
    """One rank's PMI-2 server: records the commands, keeps a KVS."""

    def __init__(self, sock, jobid):
        super().__init__(daemon=True)
        self.sock, self.jobid, self.log, self.kvs = sock, jobid, [], {}

    def read(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    def run(self):
        try:
            line = b""
            while not line.endswith(b"\n"):
                line += self.read(1)
            self.log.append(("init", line.decode().strip()))
            self.sock.sendall(b"cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n")
            while True:
                cmd, a = pmi2_split(self.read(int(self.read(6))).decode())
                self.log.append((cmd, a))
                reply = self.answer(cmd, a)
                if reply:
                    self.sock.sendall(reply)
                if cmd == "finalize":
                    return
        except (EOFError, OSError, ValueError):
            return

    def answer(self, cmd, a):
        if cmd == "fullinit":
            return pmi2_frame(cmd="fullinit-response", rc=0, **{"pmi-version": 2},
                              **{"pmi-subversion": 0}, rank=0, size=1, appnum=-1)
        if cmd == "job-getid":
            return pmi2_frame(cmd="job-getid-response", rc=0, jobid=self.jobid)
        if cmd == "info-getjobattr":
            return pmi2_frame(cmd="info-getjobattr-response", rc=0, found="TRUE", value=1)
        if cmd == "kvs-put":
            self.kvs[a["key"]] = a["value"]
            return pmi2_frame(cmd="kvs-put-response", rc=0)
        if cmd == "kvs-fence":
            return pmi2_frame(cmd="kvs-fence-response", rc=0)
        if cmd == "kvs-get":
            if a["key"] in self.kvs:
                return pmi2_frame(cmd="kvs-get-response", rc=0, found="TRUE",
                                  value=self.kvs[a["key"]])
            return pmi2_frame(cmd="kvs-get-response", rc=0, found="FALSE")
        if cmd == "finalize":
            return pmi2_frame(cmd="finalize-response", rc=0)
        if cmd == "spawn":  # as Slurm answers when srun cannot start them
            return pmi2_frame(cmd="spawn-response", rc=1, errmsg="spawn failed")
        return None  # abort


def _clean_env():
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("PMI_", "PMIX_", "OMPI_", "SLURM_", "VMPI_"))}


def run_under_fake(prog, mode, jobid="job;7"):
    ours, theirs = socket.socketpair()
    server = FakeSlurmPMI2(ours, jobid)
    server.start()
    env = {**_clean_env(), "PMI_FD": str(theirs.fileno()), "PMI_RANK": "0", "PMI_SIZE": "1",
           "PMI_JOBID": "7.0"}
    try:
        cp = subprocess.run([str(prog), *mode], capture_output=True, text=True, timeout=60,
                            env=env, pass_fds=[theirs.fileno()])
    finally:
        theirs.close()
        server.join(10)
        ours.close()
    return cp, server.log


@need_build
def test_pmi2_client_conversation_with_a_slurm_like_server(prog):
    cp, log = run_under_fake(prog, ["check"])
    pmjob.assert_checked(cp, 1)
    cmds = [c for c, _ in log]
    assert cmds[:4] == ["init", "fullinit", "job-getid", "info-getjobattr"], cmds
    assert log[0][1] == "cmd=init pmi_version=2 pmi_subversion=0"
    # Slurm wants its PMI_JOBID and the rank back
    assert log[1][1] == {"pmijobid": "7.0", "pmirank": "0", "threaded": "FALSE"}, log[1]
    assert cmds[-1] == "finalize" and "kvs-fence" in cmds and "kvs-put" in cmds, cmds
    gets = [a for c, a in log if c == "kvs-get"]
    # the business card went through put, fence and get; the job id came
    # back with its ';' escaped and went out again the same way
    assert [g["key"] for g in gets] == ["vmpi-card-0"], gets
    assert all(g["jobid"] == "job;7" and g["srcid"] == "-1" for g in gets), gets


@need_build
def test_pmi2_abort_reaches_the_server_and_the_rank_exits_with_the_code(prog):
    cp, log = run_under_fake(prog, ["abort", "9"])
    assert cp.returncode == 9, (cp.returncode, cp.stderr)
    aborts = [a for c, a in log if c == "abort"]
    assert len(aborts) == 1 and aborts[0]["isworld"] == "TRUE", log
    assert "MPI_Abort(errorcode 9)" in aborts[0]["msg"], aborts


@need_build
def test_pmi2_spawn_request_and_a_refusal(prog):
    """MPI_Comm_spawn speaks PMI-2's spawn (the preput port name, the
    command, its arguments); the server's refusal is MPI_ERR_SPAWN (class
    42, the exit code of the fatal error) with its reason. The spawn itself
    runs under Slurm: test_slurm.py."""
    cp, log = run_under_fake(prog, ["spawn", "2"])
    spawns = [a for c, a in log if c == "spawn"]
    assert len(spawns) == 1, log
    s = spawns[0]
    assert (s["ncmds"], s["preputcount"], s["ppkey0"]) == ("1", "1", "PARENT_ROOT_PORT_NAME"), s
    assert s["ppval0"].startswith("vmpi-port:"), s
    assert (s["subcmd"], s["maxprocs"], s["argc"], s["argv0"], s["infokeycount"]) == \
        (str(prog), "2", "1", "child", "0"), s
    assert cp.returncode == 42, (cp.returncode, cp.stderr)
    assert "MPI_Comm_spawn: the process manager cannot start the processes: the process " \
        "manager refused: spawn failed" in cp.stderr, cp.stderr


@need_build
def test_pmi2_refused_by_vmpirun_falls_back_to_pmi1(prog, tmp_path):
    """PMI_JOBID makes vmpi offer PMI-2 first; vmpirun says no, PMI-1 works."""
    cp = subprocess.run([sys.executable, str(VMPIRUN), "-n", "3", "--timeout", "60",
                         "env", "PMI_JOBID=1.0", str(prog), "check"], capture_output=True,
                        text=True, timeout=90, cwd=tmp_path, env=_clean_env())
    pmjob.assert_checked(cp, 3)


@need_build
@pytest.mark.parametrize("value,text", [
    ("pmi2", "VMPI_PMI=pmi2, but the process manager on PMI_FD/PMI_PORT refuses PMI-2"),
    ("pmi7", "VMPI_PMI=pmi7 is none of auto, pmi1, pmi2, pmix")])
def test_vmpi_pmi_knob_is_obeyed_or_the_error_says_why(prog, tmp_path, value, text):
    cp = subprocess.run([sys.executable, str(VMPIRUN), "-n", "2", "--timeout", "60",
                         str(prog), "check"], capture_output=True, text=True, timeout=90,
                        cwd=tmp_path, env={**_clean_env(), "VMPI_PMI": value})
    assert cp.returncode != 0, cp.stdout
    assert text in cp.stderr, cp.stderr
    assert "ok " not in cp.stdout


@need_build
@pytest.mark.skipif(not shutil.which("mpiexec.hydra"), reason="no mpiexec.hydra (Debian mpich)")
@pytest.mark.parametrize("n", [1, 4])
def test_hydra_starts_a_correct_job(prog, tmp_path, n):
    cp = subprocess.run(["mpiexec.hydra", "-n", str(n), str(prog), "check"],
                        capture_output=True, text=True, timeout=90, cwd=tmp_path,
                        env=_clean_env())
    pmjob.assert_checked(cp, n)
