"""vmpi jobs under a real Slurm: srun --mpi=pmi2, --mpi=pmix, --mpi=none, sbatch.

The module starts a one-machine cluster of its own (vmpi.slurm_local):
munged, slurmctld and slurmd (Debian's slurm-wlm and munge) in the
foreground, configured in a temporary directory (their own ports, munge
socket, state and spool), and stops them at the end whatever happened,
cancelling what still runs. It
skips, saying why, where that cannot be (not root, Slurm or munge not
installed); CI runs as root with tools/deps.sh's packages, so there it
runs, and a daemon that does not come up there fails with its log.

The helper program is tests/py/progs/pm_check.c (see pmjob.py), the same
binary as under the other launchers. Exit codes: srun's is the highest
exit code of the tasks unless a task died of a signal (then 128+signal),
and the PMIx plugin returns the status given to PMIx_Abort; so under
--mpi=pmix MPI_Abort's code and a rank's early exit code are srun's exit
status, while under --mpi=pmi2, whose abort kills the other tasks with
SIGKILL and carries no code, srun exits 137 and names the rank's code.
"""
import time

import pytest

import pmjob
from vmpi import slurm_local

JOB_TIMEOUT = 60     # seconds for one srun/sbatch


def _why_not():
    if not pmjob.have_build():
        return pmjob.NO_BUILD
    return slurm_local.why_not()


pytestmark = pytest.mark.skipif(_why_not() is not None, reason=str(_why_not()))


class Cluster(slurm_local.Cluster):
    """The module's cluster (vmpi.slurm_local), running jobs with a time limit."""

    def run(self, *cmd, cwd=None):
        return pmjob.run(cmd, timeout=JOB_TIMEOUT, env=self.env, cwd=cwd)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("slurm"))
    try:
        try:
            c.start()
        except slurm_local.SlurmError as exc:
            # root with everything installed: a cluster that cannot start
            # is a failure to look at, not a skip
            pytest.fail(str(exc))
        yield c
    finally:
        c.stop()


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    return pmjob.build(tmp_path_factory.mktemp("slurmprog"))


PMIX = "pmix"


def need_pmix(cluster):
    if PMIX not in cluster.plugins():
        pytest.skip("this Slurm has no pmix plugin (srun --mpi=list; Debian's slurm-wlm "
                    "22.05 has it)")


@pytest.mark.parametrize("mpi,force,n", [("pmi2", None, 4), ("pmi2", "pmi1", 3),
                                         ("pmix", None, 4), ("pmix", None, 1)])
def test_srun_starts_a_correct_job(cluster, prog, tmp_path, mpi, force, n):
    """--mpi=pmi2 (vmpi speaks PMI-2 there; VMPI_PMI=pmi1 its PMI-1) and
    --mpi=pmix: the right ranks, one shared-memory domain, data moves."""
    if mpi == PMIX:
        need_pmix(cluster)
    env = ["env", f"VMPI_PMI={force}"] if force else []
    cp = cluster.run("srun", f"--mpi={mpi}", "-n", n, *env, prog, "check", cwd=tmp_path)
    pmjob.assert_checked(cp, n)


@pytest.mark.parametrize("mpi", ["pmi2", PMIX])
def test_srun_mpi_abort(cluster, prog, tmp_path, mpi):
    if mpi == PMIX:
        need_pmix(cluster)
    cp = cluster.run("srun", f"--mpi={mpi}", "-n", 3, prog, "abort", 7, cwd=tmp_path)
    assert cp.stderr.count("vmpi: rank 2: MPI_Abort(errorcode 7)") == 1, cp.stderr
    assert "task 2: Exited with exit code 7" in cp.stderr, cp.stderr
    # PMI-2's abort has no code and kills the others with SIGKILL: 128+9
    assert cp.returncode == (7 if mpi == PMIX else 137), (cp.returncode, cp.stderr)


@pytest.mark.parametrize("mpi", ["pmi2", PMIX])
def test_srun_rank_exits_early(cluster, prog, tmp_path, mpi):
    """A rank that exits 3 before MPI_Finalize ends the job promptly instead
    of leaving the others waiting for it."""
    if mpi == PMIX:
        need_pmix(cluster)
    t0 = time.monotonic()
    cp = cluster.run("srun", f"--mpi={mpi}", "-n", 3, prog, "exit", 3, cwd=tmp_path)
    assert "vmpi: rank 2 exited with code 3 before MPI_Finalize: ending the job" in cp.stderr, \
        cp.stderr
    assert "task 2: Exited with exit code 3" in cp.stderr, cp.stderr
    assert cp.returncode == (3 if mpi == PMIX else 137), (cp.returncode, cp.stderr)
    assert time.monotonic() - t0 < 30, "the job took too long to end"


def test_spawn_under_srun_pmi2(cluster, prog, tmp_path):
    """MPI_Comm_spawn through Slurm's PMI-2 plugin: srun starts the children
    as another step of the allocation (which must have their CPUs, and the
    parents' step must not hold all of it: --overlap), they find their
    parent and both sides talk and merge."""
    cp = cluster.run("salloc", "-n", 5, "srun", "--overlap", "--mpi=pmi2", "-n", 2, prog,
                     "spawn", 3, cwd=tmp_path)
    assert cp.returncode == 0, (cp.returncode, cp.stdout, cp.stderr)
    assert "spawned 3 5" in cp.stdout.splitlines(), cp.stdout + cp.stderr
    assert sorted(l for l in cp.stdout.splitlines() if l.startswith("child ")) == \
        [f"child {r} of 3" for r in range(3)], cp.stdout


def test_spawn_under_srun_pmix_is_refused_clearly(cluster, prog, tmp_path):
    """vmpi asks PMIx_Spawn; Slurm's pmix plugin does not spawn, and the
    error says so and where spawning works."""
    need_pmix(cluster)
    cp = cluster.run("salloc", "-n", 5, "srun", "--overlap", "--mpi=pmix", "-n", 2, prog,
                     "spawn", 3, cwd=tmp_path)
    assert cp.returncode == 42, (cp.returncode, cp.stdout, cp.stderr)  # MPI_ERR_SPAWN
    for r in range(2):
        assert (f"vmpi: rank {r}: MPI_Comm_spawn: the process manager cannot start the "
                "processes: the process manager refused (PMIx_Spawn: NOT-SUPPORTED); Slurm's "
                "pmix plugin does not spawn, its pmi2 plugin does (srun --mpi=pmi2)"
                in cp.stderr), cp.stderr


def test_srun_without_pmi_fails_clearly_not_n_singletons(cluster, prog, tmp_path):
    cp = cluster.run("srun", "--mpi=none", "-n", 2, prog, "check", cwd=tmp_path)
    assert cp.returncode == 1, (cp.returncode, cp.stdout, cp.stderr)
    for r in range(2):
        assert (f"vmpi: rank {r}: MPI_Init: this process was started by Slurm's srun without "
                f"a PMI plugin (SLURM_STEP_NUM_TASKS=2)" in cp.stderr), cp.stderr
    assert "rank 0 of 1" not in cp.stdout and "ok " not in cp.stdout, cp.stdout


def test_sbatch_script_runs_steps_and_reports_their_exit_code(cluster, prog, tmp_path):
    """A batch script as users write them: two steps that must work, then
    one that aborts with 5; sbatch --wait exits with the job's exit code."""
    if PMIX in cluster.plugins():
        mpi_abort = PMIX
    else:
        mpi_abort = None
    script = tmp_path / "job.sh"
    last = (f"srun --mpi={mpi_abort} -n 2 {prog} abort 5" if mpi_abort else "exit 5")
    script.write_text(f"""#!/bin/sh
#SBATCH -n 4
#SBATCH -o {tmp_path}/out.txt
srun --mpi=pmi2 {prog} check || exit 90
srun --mpi=pmi2 -n 2 {prog} check || exit 91
{last}
""")
    cp = cluster.run("sbatch", "--wait", str(script), cwd=tmp_path)
    out = (tmp_path / "out.txt").read_text() if (tmp_path / "out.txt").exists() else ""
    assert cp.returncode == 5, (cp.returncode, cp.stdout, cp.stderr, out)
    assert "ok 4 10 3" in out.splitlines() and "ok 2 3 1" in out.splitlines(), out
    assert len(pmjob.RANK_RE.findall(out)) == 6, out
    if mpi_abort:
        assert "MPI_Abort(errorcode 5)" in out, out
