"""Real MPI jobs (C programs built with vmpi's mpicc) under the launchers.

Failure handling end to end: a rank killed by a signal, Ctrl-C, a rank that
exits without MPI_Finalize, MPI_Abort, MPI calls outside Init..Finalize and
MPI_ERRORS_ARE_FATAL all end the job promptly with a message that says what
happened, the right exit code, no rank left running and no shared-memory
file of the job left in /dev/shm. Also: the same binary under Debian's
Hydra (PMI-1 over PMI_FD), and an installed tree (cmake --install) that
works on its own.

The build to test is $VMPI_BUILD (default /work/main/build); the helper
program is tests/py/progs/jobs.c, compiled with $VMPI_BUILD/bin/mpicc.
"""
import os
import queue
import re
import resource
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import alive, wait_all_dead

HERE = Path(__file__).resolve().parent
PROGS = HERE / "progs"
BUILD = Path(os.environ.get("VMPI_BUILD", "/work/main/build")).resolve()
MPICC = BUILD / "bin" / "mpicc"
VMPIRUN = BUILD / "bin" / "vmpirun"
SHM = Path("/dev/shm")

pytestmark = pytest.mark.skipif(
    not (MPICC.is_file() and os.access(MPICC, os.X_OK) and VMPIRUN.is_file()),
    reason=f"no vmpi build at VMPI_BUILD={BUILD} (need bin/mpicc and bin/vmpirun; "
           "build with cmake or set VMPI_BUILD)")

HELLO_RE = re.compile(r"^rank (\d+) pid (\d+) job (\S+)$", re.M)


# --- helpers ---------------------------------------------------------------------

def _no_core():
    # a crashing rank must not leave a core file (or wait for a core dumper)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run(cmd, timeout=60, cwd=None, env=None):
    """Run to completion; return (CompletedProcess, seconds)."""
    full = dict(os.environ)
    if env:
        full.update(env)
    t0 = time.monotonic()
    cp = subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                        timeout=timeout, cwd=cwd, env=full, preexec_fn=_no_core)
    return cp, time.monotonic() - t0


def hellos(stdout):
    """{rank: (pid, jobid)} from the helper's first lines."""
    return {int(m.group(1)): (int(m.group(2)), m.group(3))
            for m in HELLO_RE.finditer(stdout)}


def shm_names():
    try:
        return {p.name for p in SHM.iterdir() if p.name.startswith("vmpi-")}
    except OSError:
        return set()


def leftovers(before, jobids):
    """vmpi files created during the test that belong to one of our jobs.

    Other jobs (other tests, other users of the machine) may create and
    remove vmpi-* files at the same time, so only names carrying our job
    ids count; the before/after difference limits it to new files."""
    new = shm_names() - before
    return sorted(n for n in new if any(j != "-" and j in n for j in jobids))


def shm_clean(before, jobids, timeout=3.0):
    deadline = time.monotonic() + timeout
    while True:
        left = leftovers(before, jobids)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def build_prog(tmp_path_factory, name):
    """tests/py/progs/NAME.c built with the tested mpicc."""
    out = tmp_path_factory.mktemp("progs") / name
    cp = subprocess.run([str(MPICC), "-O1", "-g", "-o", str(out), str(PROGS / f"{name}.c")],
                        capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, f"mpicc failed:\n{cp.stdout}\n{cp.stderr}"
    return out


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    """The helper program, built with the tested mpicc."""
    return build_prog(tmp_path_factory, "jobs")


# --- (a) a rank dies of SIGSEGV --------------------------------------------------

def test_segv_rank_tears_down_job_names_rank_pid_signal(jobs, tmp_path):
    before = shm_names()
    cp, secs = run([VMPIRUN, "-n", 2, "--timeout", 60, jobs, "segv"], cwd=tmp_path)
    t_end = time.monotonic()
    h = hellos(cp.stdout)
    assert sorted(h) == [0, 1], cp.stdout + cp.stderr
    pid1 = h[1][0]
    assert cp.returncode == 128 + signal.SIGSEGV, (cp.returncode, cp.stderr)
    # the message names the rank, its pid and the signal
    line = next((l for l in cp.stderr.splitlines() if f"pid {pid1}" in l), None)
    assert line is not None, f"no stderr line names pid {pid1}:\n{cp.stderr}"
    assert re.search(r"\brank 1\b", line), line
    assert "SIGSEGV" in line or "signal 11" in line, line
    # torn down within 5 s of the crash (same CLOCK_MONOTONIC as the rank's)
    m = re.search(r"^crash (\d+\.\d+)$", cp.stdout, re.M)
    assert m, cp.stdout
    assert t_end - float(m.group(1)) < 5.0, f"job ended {t_end - float(m.group(1)):.1f} s after the crash"
    assert not [p for p, _ in h.values() if alive(p)], "a rank survived"
    assert shm_clean(before, [j for _, j in h.values()]) == []
    assert not list(tmp_path.glob("core*")), "core file left behind"


# --- (b) Ctrl-C ------------------------------------------------------------------

def test_sigint_to_vmpirun_kills_ranks_exit_130_no_leftovers(jobs, tmp_path):
    before = shm_names()
    proc = subprocess.Popen([str(VMPIRUN), "-n", "2", "--timeout", "60", str(jobs), "loop"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path, preexec_fn=_no_core)
    lines = queue.Queue()
    err = []

    def reader(stream, sink):
        for line in stream:
            sink(line)

    t_out = threading.Thread(target=reader, args=(proc.stdout, lines.put), daemon=True)
    t_err = threading.Thread(target=reader, args=(proc.stderr, err.append), daemon=True)
    t_out.start()
    t_err.start()
    seen, ready = {}, set()
    deadline = time.monotonic() + 30
    try:
        while len(ready) < 2:
            left = deadline - time.monotonic()
            assert left > 0, f"ranks never got ready: {seen} {''.join(err)}"
            try:
                line = lines.get(timeout=left).strip()
            except queue.Empty:
                continue
            m = HELLO_RE.match(line)
            if m:
                seen[int(m.group(1))] = (int(m.group(2)), m.group(3))
            elif line.startswith("ready "):
                ready.add(int(line.split()[1]))
        assert sorted(seen) == [0, 1]
        time.sleep(0.3)  # well inside the communication loop
        pids = [p for p, _ in seen.values()]
        assert all(alive(p) for p in pids)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        rc = proc.wait(timeout=15)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    t_out.join(5)
    t_err.join(5)
    stderr = "".join(err)
    assert rc == 130, (rc, stderr)
    assert took < 10, f"vmpirun took {took:.1f} s to stop after SIGINT"
    assert wait_all_dead(pids, 2.0) == [], f"ranks still running after SIGINT: {stderr}"
    assert "SIGINT" in stderr, stderr
    assert shm_clean(before, [j for _, j in seen.values()]) == []


# --- (c) exit without MPI_Finalize -----------------------------------------------

def test_rank_exit3_without_finalize_gives_3_and_message(jobs, tmp_path):
    before = shm_names()
    cp, secs = run([VMPIRUN, "-n", 2, "--timeout", 60, jobs, "exit3"], cwd=tmp_path)
    h = hellos(cp.stdout)
    assert cp.returncode == 3, (cp.returncode, cp.stderr)
    assert sorted(h) == [0, 1], cp.stdout
    assert re.search(rf"rank 1 \(pid {h[1][0]}\).*code 3", cp.stderr), cp.stderr
    assert "MPI_Finalize" in cp.stderr, cp.stderr
    assert secs < 30
    assert not [p for p, _ in h.values() if alive(p)]
    assert shm_clean(before, [j for _, j in h.values()]) == []


# --- (d) MPI_Abort ---------------------------------------------------------------

def test_mpi_abort_7_gives_exit_code_7(jobs, tmp_path):
    before = shm_names()
    cp, secs = run([VMPIRUN, "-n", 2, "--timeout", 60, jobs, "abort7"], cwd=tmp_path)
    h = hellos(cp.stdout)
    assert cp.returncode == 7, (cp.returncode, cp.stderr)
    assert "MPI_Abort" in cp.stderr and "rank 1" in cp.stderr, cp.stderr
    assert secs < 30
    assert not [p for p, _ in h.values() if alive(p)]
    assert shm_clean(before, [j for _, j in h.values()]) == []


# --- (e) MPI calls outside Init..Finalize ----------------------------------------

@pytest.mark.parametrize("mode,text", [("before_init", "before MPI_Init"),
                                       ("after_finalize", "after MPI_Finalize")])
@pytest.mark.parametrize("launch", ["vmpirun", "singleton"])
def test_call_outside_init_finalize_is_a_clear_error(jobs, tmp_path, mode, text, launch):
    if launch == "vmpirun":
        cmd = [VMPIRUN, "-n", 2, "--timeout", 60, jobs, mode]
    else:
        cmd = [jobs, mode]
    cp, _ = run(cmd, cwd=tmp_path)
    assert cp.returncode != 0, cp.stdout
    # no crash: neither a signal death of the process nor of a rank
    assert cp.returncode > 0 and cp.returncode < 128, (cp.returncode, cp.stderr)
    assert "killed by signal" not in cp.stderr, cp.stderr
    assert text in cp.stderr and "MPI_Send" in cp.stderr, cp.stderr
    assert "returned" not in cp.stdout, cp.stdout
    # the fatal path of MPI errors: the job's status is the class, MPI_ERR_OTHER
    assert cp.returncode == 15, (cp.returncode, cp.stderr)
    # at most once per process (the job may end before the other rank gets there)
    assert 1 <= cp.stderr.count("MPI_Send called " + text) <= (2 if launch == "vmpirun" else 1), \
        cp.stderr


@pytest.mark.parametrize("launch", ["vmpirun", "singleton"])
def test_init_thread_with_a_level_that_is_none_is_mpi_err_arg(jobs, tmp_path, launch):
    cmd = [VMPIRUN, "-n", 2, "--timeout", 60, jobs, "bad_level"] if launch == "vmpirun" \
        else [jobs, "bad_level"]
    cp, _ = run(cmd, cwd=tmp_path)
    assert cp.returncode == 12, (cp.returncode, cp.stderr)  # MPI_ERR_ARG
    assert "MPI_Init_thread" in cp.stderr and "level 7" in cp.stderr, cp.stderr
    assert "returned" not in cp.stdout, cp.stdout


# --- (f) MPI_ERRORS_ARE_FATAL ----------------------------------------------------

def test_errors_are_fatal_bad_rank_aborts_naming_mpi_send(jobs, tmp_path):
    before = shm_names()
    cp, secs = run([VMPIRUN, "-n", 2, "--timeout", 60, jobs, "badrank"], cwd=tmp_path)
    h = hellos(cp.stdout)
    assert cp.returncode != 0 and cp.returncode != 124, (cp.returncode, cp.stderr)
    assert "MPI_Send" in cp.stderr, cp.stderr
    assert "returned" not in cp.stdout, "MPI_Send to rank 99 returned under ERRORS_ARE_FATAL"
    assert secs < 30, f"job took {secs:.1f} s to abort"
    assert not [p for p, _ in h.values() if alive(p)]
    assert shm_clean(before, [j for _, j in h.values()]) == []


LAUNCHERS = [pytest.param([VMPIRUN, "-n", 2, "--timeout", 60], id="vmpirun"),
             pytest.param(["mpiexec.hydra", "-n", 2], id="hydra",
                          marks=pytest.mark.skipif(not shutil.which("mpiexec.hydra"),
                                                   reason="no mpiexec.hydra (Debian mpich)"))]


@pytest.mark.parametrize("launch", LAUNCHERS)
def test_fatal_error_exits_with_its_class_and_says_so_once(jobs, tmp_path, launch):
    """As MPICH does: the job's exit code is the error class (MPI_ERR_RANK,
    6), and the message is printed once, by vmpirun (naming the rank's pid)
    or, under Hydra, which does not print it, by the rank."""
    cp, _ = run([*launch, jobs, "badrank"], cwd=tmp_path, timeout=120)
    assert cp.returncode == 6, (cp.returncode, cp.stderr)
    lines = [l for l in cp.stderr.splitlines() if "destination rank 99" in l]
    assert len(lines) == 1, cp.stderr
    assert "(error class 6)" in lines[0] and "rank 0" in lines[0], lines
    assert lines[0].count("aborting job") == 1, lines


@pytest.mark.parametrize("launch", LAUNCHERS)
def test_mpi_abort_says_so_once(jobs, tmp_path, launch):
    cp, _ = run([*launch, jobs, "abort7"], cwd=tmp_path, timeout=120)
    assert cp.returncode == 7, (cp.returncode, cp.stderr)
    lines = [l for l in cp.stderr.splitlines() if "MPI_Abort(errorcode 7)" in l]
    assert len(lines) == 1 and "rank 1" in lines[0], cp.stderr


# --- (g) Hydra -------------------------------------------------------------------

@pytest.mark.skipif(not shutil.which("mpiexec.hydra"), reason="no mpiexec.hydra (Debian mpich)")
def test_pingpong_under_hydra(jobs, tmp_path):
    before = shm_names()
    cp, _ = run(["mpiexec.hydra", "-n", 2, jobs, "pingpong"], cwd=tmp_path, timeout=120)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    expect = sum(i * 64 + 63 + 1 for i in range(1000))
    assert f"pingpong ok 1000 {expect}" in cp.stdout.splitlines(), cp.stdout
    h = hellos(cp.stdout)
    assert sorted(h) == [0, 1], cp.stdout
    # Under Hydra the job key is the PMI kvs name (vmpirun's jobs use hex ids
    # instead): no segment of a Hydra job created during the test may stay.
    assert shm_clean(before, ["kvs"]) == []


# --- (h) installed tree ----------------------------------------------------------

def test_installed_tree_compiles_and_runs(tmp_path):
    prefix = tmp_path / "prefix"
    cp = subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(prefix)],
                        capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    mpicc = prefix / "bin" / "mpicc"
    mpiexec = prefix / "bin" / "mpiexec"
    assert mpicc.is_file() and os.access(mpicc, os.X_OK)
    assert mpiexec.exists()
    show = subprocess.run([str(mpicc), "-show", "x.c", "-o", "x"], capture_output=True,
                          text=True, timeout=30)
    assert show.returncode == 0, show.stderr
    real_prefix = str(prefix.resolve())
    assert real_prefix in show.stdout or str(prefix) in show.stdout, show.stdout
    assert str(BUILD) not in show.stdout, f"mpicc -show refers to the build tree: {show.stdout}"
    prog = tmp_path / "pingpong"
    cp = subprocess.run([str(mpicc), "-o", str(prog), str(PROGS / "jobs.c")],
                        capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    # the binary must use the installed library, not the build tree's
    ldd = subprocess.run(["ldd", str(prog)], capture_output=True, text=True, timeout=30)
    if ldd.returncode == 0:
        libline = next((l for l in ldd.stdout.splitlines()
                        if "libmpi" in l or "libvmpi" in l), "")
        assert str(BUILD) not in libline, libline
        assert real_prefix in libline or str(prefix) in libline, ldd.stdout
    cp, _ = run([mpiexec, "-n", 2, "--timeout", 60, prog, "pingpong"], cwd=tmp_path)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    expect = sum(i * 64 + 63 + 1 for i in range(1000))
    assert f"pingpong ok 1000 {expect}" in cp.stdout.splitlines(), cp.stdout


def test_mpicc_links_vmpi_before_a_system_libmpi(tmp_path):
    """A -L of the system's library directory among the caller's arguments
    (setuptools passes one) must not make -lmpi find Open MPI's libmpi.so."""
    system = Path("/usr/lib/x86_64-linux-gnu")
    if not (system / "libmpi.so").exists():
        pytest.skip("no other libmpi.so in /usr/lib/x86_64-linux-gnu to be confused with")
    prog = tmp_path / "prog"
    cp = subprocess.run([str(BUILD / "bin" / "mpicc"), f"-L{system}", "-o", str(prog),
                         str(PROGS / "jobs.c")], capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    ldd = subprocess.run(["ldd", str(prog)], capture_output=True, text=True, timeout=30)
    lines = [l for l in ldd.stdout.splitlines() if "libmpi" in l or "libvmpi" in l]
    assert lines and all(str(BUILD) in l for l in lines), ldd.stdout


def test_pkg_config_of_installed_tree(tmp_path):
    """pkg-config's flags for the installed vmpi.pc build a working program."""
    prefix = tmp_path / "prefix"
    cp = subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(prefix)],
                        capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "vmpi"], capture_output=True,
                           text=True, timeout=30, env=env)
    assert flags.returncode == 0, flags.stderr
    assert "-lmpi" in flags.stdout and str(BUILD) not in flags.stdout, flags.stdout
    prog = tmp_path / "pingpong"
    cp = subprocess.run(["cc", "-o", str(prog), str(PROGS / "jobs.c"), *flags.stdout.split()],
                        capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    cp, _ = run([prefix / "bin" / "vmpirun", "-n", 2, "--timeout", 60, prog, "pingpong"],
                cwd=tmp_path)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert any(l.startswith("pingpong ok 1000 ") for l in cp.stdout.splitlines()), cp.stdout


# --- (i) process managers vmpi cannot speak -----------------------------------------

# The environments that Open MPI's launcher without PMIx and srun without a
# PMI plugin give each process (PMIx itself: test_pmix.py).
FOREIGN = [
    ({"OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_RANK": "2"},
     "Open MPI's launcher (OMPI_COMM_WORLD_SIZE=4)"),
    ({"SLURM_STEP_NUM_TASKS": "2", "SLURM_PROCID": "1"},
     "Slurm's srun without a PMI plugin (SLURM_STEP_NUM_TASKS=2)"),
]


def _no_pm_env():
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("PMI_", "PMIX_", "OMPI_", "SLURM_"))}


@pytest.mark.parametrize("extra,who", FOREIGN)
def test_unknown_process_manager_is_an_error_at_init_not_a_singleton(jobs, tmp_path, extra,
                                                                      who):
    """N silent singletons (each rank 0 of 1, exit 0) would be wrong results."""
    cp = subprocess.run([str(jobs), "pingpong"], capture_output=True, text=True, timeout=60,
                        cwd=tmp_path, env={**_no_pm_env(), **extra})
    assert cp.returncode == 1, (cp.returncode, cp.stdout, cp.stderr)
    assert f"MPI_Init: this process was started by {who}" in cp.stderr, cp.stderr
    assert "vmpi speaks PMI-1" in cp.stderr, cp.stderr
    assert "pingpong ok" not in cp.stdout


def test_singleton_still_starts_without_a_process_manager(tmp_path):
    """One task of srun or Open MPI is still a plain singleton."""
    env = {**_no_pm_env(), "SLURM_STEP_NUM_TASKS": "1", "SLURM_PROCID": "0",
           "OMPI_COMM_WORLD_SIZE": "1"}
    cp = subprocess.run([str(BUILD / "tests" / "t_p2p_self")], capture_output=True, text=True,
                        timeout=60, cwd=tmp_path, env=env)
    assert cp.returncode == 0, cp.stderr
    assert "was started by" not in cp.stderr, cp.stderr


# --- (j) size knobs ----------------------------------------------------------------

def test_size_knobs_take_units_and_refuse_garbage_naming_the_variable(jobs, tmp_path):
    cp, _ = run([VMPIRUN, "-n", 2, "--timeout", 60, jobs, "pingpong"], cwd=tmp_path,
                env={"VMPI_SMP_EAGER_MAX": "4k", "VMPI_UNEXPECTED_MAX": "1G"})
    assert cp.returncode == 0, cp.stderr
    cp, _ = run([VMPIRUN, "-n", 2, "--timeout", 60, jobs, "pingpong"], cwd=tmp_path,
                env={"VMPI_SMP_EAGER_MAX": "4Q"})
    assert cp.returncode == 1, cp.stderr
    lines = [l for l in cp.stderr.splitlines() if "VMPI_SMP_EAGER_MAX=4Q is not a size" in l]
    assert len(lines) == 1, cp.stderr
