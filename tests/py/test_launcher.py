"""vmpirun end to end, with fake ranks that speak PMI-1 over PMI_FD."""
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vmpi import launcher, runas

from conftest import (PYDIR, ROOT, alive, fake, read_pids, run_vmpirun, since_last_pidfile,
                      vmpirun_cmd, wait_all_dead)


def all_pids(pids):
    return [p for pair in pids.values() for p in pair if p]


# --- PMI service ---------------------------------------------------------------

def test_kvs_put_barrier_get_across_4_ranks():
    cp, _ = run_vmpirun("-n", 4, *fake("kvs"))
    assert cp.returncode == 0, cp.stderr
    rows = {}
    for line in cp.stdout.splitlines():
        m = re.fullmatch(r"rank (\d) pid (\d+) kvs (\S+) got (.*)", line)
        assert m, line
        rows[int(m.group(1))] = (int(m.group(2)), m.group(3), m.group(4).split())
    assert sorted(rows) == [0, 1, 2, 3]
    expected = [f"addr-{r}-{rows[r][0]}" for r in range(4)]
    for r, (_, kvsname, got) in rows.items():
        assert got == expected, (r, got)
        assert kvsname == rows[0][1]
    assert cp.stderr == ""


@pytest.mark.skipif(not shutil.which("mpiexec.hydra"), reason="no mpiexec.hydra")
def test_fake_client_expectations_hold_under_hydra_too():
    # the fake rank asserts the exact reply formats; Hydra must satisfy them
    # too, or the formats vmpirun is tested against are not Hydra's
    cp = subprocess.run(["mpiexec.hydra", "-n", "3", *fake("kvs")], capture_output=True,
                        text=True, timeout=20)
    assert cp.returncode == 0, cp.stderr
    assert len(cp.stdout.splitlines()) == 3


# --- exit codes ------------------------------------------------------------------

def test_all_ranks_ok_gives_0_and_no_messages():
    cp, _ = run_vmpirun("-n", 3, *fake("act", "*=ok"))
    assert (cp.returncode, cp.stderr) == (0, "")


def test_exit_code_after_finalize_is_propagated_without_teardown():
    cp, _ = run_vmpirun("-n", 3, *fake("act", "2=exit7,*=ok"))
    assert cp.returncode == 7
    assert "rank 2" in cp.stderr and "exited with code 7" in cp.stderr
    assert "aborting job" not in cp.stderr


def test_non_mpi_programs_are_fine():
    # rank 0 exits 0 without ever talking PMI: fine; rank 1's code is the job's
    cp, _ = run_vmpirun("-n", 2, "sh", "-c", 'echo "r$PMI_RANK"; exit $((PMI_RANK * 4))')
    assert cp.returncode == 4
    assert sorted(cp.stdout.split()) == ["r0", "r1"]
    assert "rank 1 (pid" in cp.stderr and "rank 0" not in cp.stderr


def test_first_failure_by_time_decides_the_exit_code():
    # rank 1 fails at once; rank 0 would fail later with another code but is
    # torn down first
    cp, _ = run_vmpirun("-n", 2, "sh", "-c",
                        'if [ "$PMI_RANK" = 1 ]; then exit 6; else sleep 30; exit 9; fi')
    assert cp.returncode == 6
    assert "rank 1" in cp.stderr and "exited with code 6" in cp.stderr


# --- failures and teardown --------------------------------------------------------

def test_sigkill_rank_tears_down_job_fast(piddir):
    cp, _ = run_vmpirun("-n", 4, *fake("act", "1=sig9,*=hang"),
                              env={"FAKE_PIDDIR": str(piddir)})
    teardown = since_last_pidfile(piddir)
    pids = read_pids(piddir, 4, timeout=0)
    assert len(pids) == 4
    assert cp.returncode == 128 + 9
    assert teardown < 5
    line = f"vmpirun: rank 1 (pid {pids[1][0]}) killed by signal 9 (SIGKILL); aborting job"
    assert line in cp.stderr.splitlines()
    assert cp.stderr.count("aborting job") == 1
    # ranks and their grandchildren are all gone
    assert wait_all_dead(all_pids(pids)) == []


def test_exit_without_finalize(piddir):
    cp, _ = run_vmpirun("-n", 3, *fake("act", "1=nofin3,*=hang"),
                              env={"FAKE_PIDDIR": str(piddir)})
    teardown = since_last_pidfile(piddir)
    pids = read_pids(piddir, 3, timeout=0)
    assert cp.returncode == 3
    assert teardown < 5
    assert (f"vmpirun: rank 1 (pid {pids[1][0]}) exited with code 3 without calling "
            "MPI_Finalize; aborting job") in cp.stderr
    assert wait_all_dead(all_pids(pids)) == []


def test_exit_0_without_finalize_after_init_is_a_failure():
    cp, _ = run_vmpirun("-n", 2, *fake("act", "0=nofin0,*=ok"))
    assert cp.returncode != 0
    assert "rank 0" in cp.stderr and "without calling MPI_Finalize" in cp.stderr


def test_abort_with_message(piddir):
    cp, _ = run_vmpirun("-n", 3, *fake("act", "2=abort5:ran out of cheese (really),*=hang"),
                              env={"FAKE_PIDDIR": str(piddir)})
    teardown = since_last_pidfile(piddir)
    pids = read_pids(piddir, 3, timeout=0)
    assert cp.returncode == 5
    assert teardown < 5
    assert (f"vmpirun: rank 2 (pid {pids[2][0]}) failed with exit code 5: "
            "ran out of cheese (really); aborting job") in cp.stderr
    assert wait_all_dead(all_pids(pids)) == []


def test_death_just_after_an_abort_is_reported_as_the_cause(piddir):
    # a rank that lost its peer aborts, and its abort can reach vmpirun
    # before the peer's death does: the death is what the user must see
    cp, _ = run_vmpirun("-n", 3, *fake("act", "0=abort1:lost rank 1,1=sig9+50,*=hang"),
                        env={"FAKE_PIDDIR": str(piddir)})
    pids = read_pids(piddir, 3, timeout=0)
    assert cp.returncode == 128 + 9, cp.stderr
    assert (f"vmpirun: rank 1 (pid {pids[1][0]}) killed by signal 9 (SIGKILL); "
            "aborting job") in cp.stderr.splitlines(), cp.stderr
    assert "MPI_Abort" not in cp.stderr
    assert wait_all_dead(all_pids(pids)) == []


def test_rank_ignoring_sigterm_gets_sigkill(piddir):
    cp, elapsed = run_vmpirun("-n", 3, *fake("act", "0=nofin2,*=stubborn"),
                              env={"FAKE_PIDDIR": str(piddir)})
    teardown = since_last_pidfile(piddir)
    pids = read_pids(piddir, 3, timeout=0)
    assert cp.returncode == 2
    assert elapsed > 1.9       # SIGTERM was ignored; SIGKILL came 2 s later
    assert teardown < 5
    assert wait_all_dead(all_pids(pids)) == []


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_to_vmpirun_ends_all_ranks(piddir, sig, code):
    env = dict(os.environ, FAKE_PIDDIR=str(piddir))
    p = subprocess.Popen(vmpirun_cmd("-n", 3, *fake("act", "*=hang")), env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        pids = read_pids(piddir, 3)
        assert len(pids) == 3
        assert all(alive(p) for p in all_pids(pids))
        t0 = time.monotonic()
        p.send_signal(sig)
        _, err = p.communicate(timeout=10)
        assert time.monotonic() - t0 < 5
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == code
    assert f"caught {sig.name}" in err
    assert wait_all_dead(all_pids(pids)) == []


def test_timeout():
    cp, elapsed = run_vmpirun("-n", 2, "--timeout", "0.5", *fake("act", "*=hang"))
    assert cp.returncode == 124
    assert "timeout" in cp.stderr
    assert elapsed < 4


# --- output --------------------------------------------------------------------------

def test_tag_output_whole_lines_never_interleaved():
    count, length = 300, 3000
    cp, _ = run_vmpirun("-n", 2, "--tag-output", *fake("lines", count, length))
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout.endswith("\n")
    seen = {0: 0, 1: 0}
    finals = {0: 0, 1: 0}
    for line in cp.stdout.splitlines():
        m = re.fullmatch(r"\[1,(\d)\]<stdout>: ([a-z]+)", line)
        assert m, line[:80]
        r, text = int(m.group(1)), m.group(2)
        ch = "ab"[r]
        if len(text) == length:
            assert text == ch * length
            seen[r] += 1
        else:
            assert text == ch * 7   # the final unterminated line, flushed at EOF
            finals[r] += 1
    assert seen == {0: count, 1: count}
    assert finals == {0: 1, 1: 1}


def test_untagged_output_lines_are_whole():
    count, length = 200, 5000
    cp, _ = run_vmpirun("-n", 2, *fake("lines", count, length))
    assert cp.returncode == 0, cp.stderr
    lines = cp.stdout.split("\n")
    full = [l for l in lines if len(l) > 20]
    assert len(full) == 2 * count
    assert all(l in ("a" * length, "b" * length) for l in full)
    # the unterminated last lines are flushed at EOF, never glued to other output
    assert sorted(l for l in lines if len(l) <= 20) == ["aaaaaaa", "bbbbbbb"]
    assert not cp.stdout.endswith("\n")


def test_single_rank_output_is_passed_through_byte_exact():
    cp, _ = run_vmpirun("-n", 1, "sh", "-c", "printf 'one\\ntwo'; printf 'x' >&2")
    assert cp.returncode == 0
    assert (cp.stdout, cp.stderr) == ("one\ntwo", "x")


def test_tag_output_stderr():
    cp, _ = run_vmpirun("-n", 2, "--tag-output", "sh", "-c",
                        'echo "out $PMI_RANK"; echo "err $PMI_RANK" >&2')
    assert cp.returncode == 0
    assert sorted(cp.stdout.splitlines()) == ["[1,0]<stdout>: out 0", "[1,1]<stdout>: out 1"]
    assert sorted(cp.stderr.splitlines()) == ["[1,0]<stderr>: err 0", "[1,1]<stderr>: err 1"]


# --- binding, environment -------------------------------------------------------------

def _affinities(cp):
    out = {}
    for line in cp.stdout.splitlines():
        m = re.fullmatch(r"rank (\d+) cpus ([\d,]+)", line)
        assert m, line
        out[int(m.group(1))] = {int(c) for c in m.group(2).split(",")}
    return out


def test_bind_core_pins_each_rank():
    allowed = sorted(os.sched_getaffinity(0))
    cp, _ = run_vmpirun("-n", 4, "--bind", "core", *fake("affinity"))
    assert cp.returncode == 0, cp.stderr
    assert _affinities(cp) == {r: {allowed[r % len(allowed)]} for r in range(4)}
    # core binding is the default
    assert launcher.parse_args(["-n", "4", "prog"]).bind == "core"


def test_bind_none_leaves_affinity_alone():
    allowed = set(os.sched_getaffinity(0))
    cp, _ = run_vmpirun("-n", 2, "--bind", "none", *fake("affinity"))
    assert cp.returncode == 0, cp.stderr
    assert _affinities(cp) == {0: allowed, 1: allowed}


@pytest.mark.skipif(os.geteuid() != 0, reason="SCHED_RR needs root here")
def test_sched_rr_runs_the_ranks_round_robin_and_the_default_does_not():
    show = ["sh", "-c", 'python3 -c "import os; print(os.sched_getscheduler(0))"']
    cp, _ = run_vmpirun("-n", 2, "--sched", "rr", *show)
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout.split() == [str(os.SCHED_RR)] * 2
    cp, _ = run_vmpirun("-n", 2, *show)
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout.split() == [str(os.SCHED_OTHER)] * 2
    with pytest.raises(launcher.UsageError, match="--sched: expected 'default' or 'rr'"):
        launcher.parse_args(["--sched", "fifo", "prog"])
    with pytest.raises(launcher.UsageError, match="--sched rr does not apply to --vm-guests"):
        launcher.parse_args(["-n", "2", "--vm-guests", "1", "--sched", "rr", "prog"])
    # root without the capability is told before any rank starts
    if shutil.which("setpriv"):
        cp = subprocess.run(["setpriv", "--inh-caps", "-sys_nice", "--bounding-set", "-sys_nice",
                             *vmpirun_cmd("--sched", "rr", "-n", 1, "true")],
                            capture_output=True, text=True, timeout=60)
        assert cp.returncode == 2, cp.stderr
        assert "--sched rr: this process may not run round-robin (Operation not permitted)" \
            in cp.stderr, cp.stderr


def test_environment(monkeypatch):
    monkeypatch.setenv("VMPI_TEST_EXPORTED", "from launcher")
    script = ('echo "$PMI_RANK|$PMI_SIZE|$VMPI_LOCAL_RANK|$VMPI_LOCAL_SIZE|$VMPI_JOB_ID|'
              '$FOO|$BAR|$VMPI_TEST_EXPORTED|$PMI_FD"')
    cp, _ = run_vmpirun("-n", 3, "-x", "FOO=a=b", "--env", "BAR=2", "-x", "VMPI_TEST_EXPORTED",
                        "sh", "-c", script)
    assert cp.returncode == 0, cp.stderr
    rows = sorted(l.split("|") for l in cp.stdout.splitlines())
    assert len(rows) == 3
    jobids = {row[4] for row in rows}
    assert len(jobids) == 1 and re.fullmatch(r"[0-9a-f]{32}", jobids.pop())
    for r, row in enumerate(rows):
        assert row[:4] == [str(r), "3", str(r), "3"]
        assert row[5:8] == ["a=b", "2", "from launcher"]
        assert row[8].isdigit()


def test_export_of_unset_variable_is_an_error(monkeypatch):
    monkeypatch.delenv("VMPI_SURELY_UNSET", raising=False)
    cp, _ = run_vmpirun("-n", 1, "-x", "VMPI_SURELY_UNSET", "true")
    assert cp.returncode == 2
    assert "VMPI_SURELY_UNSET" in cp.stderr


# --- errors ---------------------------------------------------------------------------

def test_program_not_found():
    cp, _ = run_vmpirun("-n", 2, "vmpi-no-such-program-xyz")
    assert cp.returncode == 127
    assert "vmpi-no-such-program-xyz" in cp.stderr and "not found" in cp.stderr


def test_bad_option_prints_usage_and_exits_2():
    cp, _ = run_vmpirun("--frob", "-n", "1", "true")
    assert cp.returncode == 2
    assert "unknown option '--frob'" in cp.stderr and "usage:" in cp.stderr


@pytest.mark.parametrize("args", [["-n", "zero", "true"], ["-n", "0", "true"], ["-n", "2"], [],
                                  ["--bind", "numa", "true"], ["--timeout", "-1", "true"],
                                  ["-n"], ["--tag-output=yes", "true"], ["--cleanup", "prog"],
                                  ["-x", "1BAD=x", "true"]])
def test_bad_options_in_process(args, capsys):
    assert launcher.main(args) == 2
    assert "usage:" in capsys.readouterr().err


def test_parse_args():
    o = launcher.parse_args(["-np", "3", "--bind=none", "--tag-output", "-x", "A=1=2",
                             "--env", "B=", "--timeout", "2.5", "prog", "-n", "7", "--x"])
    assert (o.nranks, o.bind, o.tag, o.timeout) == (3, "none", "ompi", 2.5)
    assert o.env == [("A", "1=2"), ("B", "")]
    assert (o.program, o.args) == ("prog", ["-n", "7", "--x"])
    o = launcher.parse_args(["--cleanup", "-v"])
    assert o.cleanup and o.verbose and o.program is None


def test_whom_the_ranks_run_as(monkeypatch):
    """--user, else sudo's invoking user when vmpirun is root, else vmpirun's own
    (None); runs as any user, so the root cases pretend with geteuid."""
    me = os.geteuid()
    o = launcher.parse_args(["--user", str(me), "prog"])
    assert (o.user.uid, o.user.name) == (me, pwd.getpwuid(me).pw_name)
    assert runas.ranks_user(o.user, {}) is None              # itself: nothing to change
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    daemon = pwd.getpwuid(1) if me != 1 else pwd.getpwuid(2)
    assert runas.ranks_user(None, {"SUDO_UID": str(daemon.pw_uid)}).name == daemon.pw_name
    for env in ({}, {"SUDO_UID": "0"}, {"SUDO_UID": "x"}, {"SUDO_UID": "4000000000"}):
        assert runas.ranks_user(None, env) is None, env
    chosen = runas.lookup(daemon.pw_name)
    assert runas.ranks_user(chosen, {"SUDO_UID": "0"}) == chosen
    assert (chosen.uid, chosen.gid) == (daemon.pw_uid, daemon.pw_gid)
    assert chosen.groups == tuple(os.getgrouplist(daemon.pw_name, daemon.pw_gid))
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert runas.ranks_user(None, {"SUDO_UID": str(daemon.pw_uid)}) is None


def test_np_alias_and_double_dash():
    cp, _ = run_vmpirun("-np", 3, "--", "sh", "-c", "echo $PMI_SIZE")
    assert cp.returncode == 0
    assert cp.stdout.split() == ["3", "3", "3"]


def test_module_entry_points():
    env = dict(os.environ, PYTHONPATH=str(PYDIR))
    for cmd in ([sys.executable, "-m", "vmpi.launcher", "-n", "2", "sh", "-c", "echo x"],
                [sys.executable, "-m", "vmpi", "run", "-n", "2", "sh", "-c", "echo x"]):
        cp = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=20,
                            cwd="/")
        assert (cp.returncode, cp.stdout) == (0, "x\nx\n"), cp.stderr


# --- shared-memory safety net ----------------------------------------------------------

@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="no /dev/shm")
def test_job_shm_files_removed_even_if_ranks_crash():
    cp, _ = run_vmpirun("-n", 2, *fake("shm", "sig9"), env={"VMPI_SHM_DIR": ""})
    assert cp.returncode == 137
    created = []
    for line in cp.stdout.splitlines():
        m = re.fullmatch(r"rank \d created (\S+) launcher (\d+) parent (\d+)", line)
        assert m, line
        created.append(Path(m.group(1)))
        # the launcher's pid file named the launcher while the job ran
        assert m.group(2) == m.group(3)
    assert len(created) == 2
    assert all(p.parent == Path("/dev/shm") for p in created)
    assert not any(p.exists() for p in created)
    jobid = created[0].name.split("-")[1]
    assert not [n for n in os.listdir("/dev/shm") if n.startswith(f"vmpi-{jobid}")]


def test_more_ranks_than_the_machine_can_start_is_refused_at_once():
    """Not a launcher that grows by hundreds of MB a second until killed."""
    cp, secs = run_vmpirun("-n", 99999999, *fake("act", "*=ok"), timeout=20)
    assert cp.returncode == 2, cp.stderr
    assert "-n 99999999: this machine can start at most" in cp.stderr, cp.stderr
    assert secs < 5


# --- job scripts of MPICH (Hydra) and Open MPI ---------------------------------------

def test_hydra_and_open_mpi_options_parse():
    o = launcher.parse_args(["-np", "4", "-ppn", "2", "-genv", "A", "1 2", "-env", "B", "x",
                             "-genvall", "--oversubscribe", "--allow-run-as-root",
                             "--map-by", "core", "-bind-to", "socket", "--report-bindings",
                             "-l", "-hosts", "localhost", "-H", "127.0.0.1:4", "prog", "a"])
    assert (o.nranks, o.bind, o.report_bindings, o.tag) == (4, "socket", True, "rank")
    assert o.env == [("A", "1 2"), ("B", "x")]
    assert (o.program, o.args) == ("prog", ["a"])


@pytest.mark.parametrize("args,msg", [
    (["-hosts", "node17,localhost", "true"], "-hosts: node17 is not this machine"),
    (["-H", "198.51.100.7", "true"], "-H: 198.51.100.7 is not this machine"),
    (["-n", "2", "./a", ":", "-n", "3", "./b"], "an MPMD job, which vmpirun does not support"),
    (["-configfile", "cfg"], "MPMD jobs are not supported yet"),
    (["--map-by", "diagonal", "true"], "--map-by: expected one of core, socket, slot, node"),
    (["-wdir", "/nonexistent/dir", "true"], "-wdir /nonexistent/dir: not a directory"),
    (["-genv", "A"], "option -genv needs a value"),
])
def test_other_launchers_options_refused_clearly(args, msg, capsys):
    assert launcher.main(args) == 2
    assert msg in capsys.readouterr().err


def test_hostfile_of_this_machine_wdir_label_and_env(tmp_path):
    hostfile = tmp_path / "hosts"
    hostfile.write_text(f"localhost:2\n{socket.gethostname()} slots=2  # this machine\n")
    wdir = tmp_path / "wd"
    wdir.mkdir()
    cp, _ = run_vmpirun("-np", 2, "-f", hostfile, "-wdir", wdir, "-l", "-genv", "GREETING",
                        "hello there", "sh", "-c", 'echo "$GREETING $(pwd)"')
    assert cp.returncode == 0, cp.stderr
    assert sorted(cp.stdout.splitlines()) == [f"[0] hello there {wdir}",
                                              f"[1] hello there {wdir}"]


def test_mpiexec_timeout_and_report_bindings():
    cp, secs = run_vmpirun("-n", 2, "--report-bindings", "sleep", "30",
                           env={"MPIEXEC_TIMEOUT": "1"}, timeout=20)
    assert cp.returncode == 124, cp.stderr
    assert secs < 10
    assert re.search(r"^vmpirun: rank 0 bound to CPU\(s\) \d+$", cp.stderr, re.M), cp.stderr


def test_mpirun_is_installed_beside_mpiexec():
    build = Path(os.environ.get("VMPI_BUILD", ROOT / "build"))
    assert os.path.realpath(build / "bin" / "mpirun") == os.path.realpath(build / "bin" / "vmpirun")
