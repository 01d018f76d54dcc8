"""vmpi's PMIx client (pmi/pmix.c) under Open MPI's launcher.

Debian's mpirun.openmpi (Open MPI 4.1: ORTE runs a PMIx server, libpmix 4)
starts the same pm_check binary as every other launcher: ranks and sizes,
a ring message, allreduces, MPI_Abort's and an early exit's code as the
job's exit code. Also: the PMIx declarations vmpi makes itself
(pmi/pmix_abi.h) equal Debian's pmix_common.h, libvmpi does not link
libpmix, and a PMIx job where libpmix cannot be loaded, or whose server is
gone, fails at MPI_Init naming PMIx. PMIx under Slurm: test_slurm.py.
"""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import pmjob

ROOT = Path(__file__).resolve().parents[2]
MPIRUN = shutil.which("mpirun.openmpi")
LIBPMIX = Path("/usr/lib/x86_64-linux-gnu/libpmix.so.2")

pytestmark = pytest.mark.skipif(not pmjob.have_build(), reason=pmjob.NO_BUILD)
need_ompi = pytest.mark.skipif(not MPIRUN or not LIBPMIX.exists(),
                               reason="no mpirun.openmpi or libpmix.so.2 (Debian: openmpi-bin, "
                                      "libpmix2)")


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    return pmjob.build(tmp_path_factory.mktemp("pmix"))


def mpirun(n, *args):
    return pmjob.run([MPIRUN, "--allow-run-as-root", "--oversubscribe", "-n", n, *args],
                     timeout=60)


@need_ompi
@pytest.mark.parametrize("n", [1, 2, 4])
def test_open_mpi_mpirun_starts_a_correct_job(prog, n):
    pmjob.assert_checked(mpirun(n, prog, "check"), n)


@need_ompi
def test_mpi_abort_code_is_mpiruns_exit_code(prog):
    cp = mpirun(3, prog, "abort", 7)
    assert cp.returncode == 7, (cp.returncode, cp.stderr)
    assert cp.stderr.count("MPI_Abort(errorcode 7)") == 1, cp.stderr


@need_ompi
def test_exit_before_finalize_ends_the_job_with_its_code(prog):
    cp = mpirun(3, prog, "exit", 3)
    assert cp.returncode == 3, (cp.returncode, cp.stderr)
    assert "rank 2 exited with code 3 before MPI_Finalize" in cp.stderr, cp.stderr


@need_ompi
def test_spawn_under_open_mpi_mpirun(prog):
    """MPI_Comm_spawn through PMIx_Spawn: Open MPI's mpirun starts the
    children, which find their parent's port in the pairs the spawn passed
    and talk and merge with it."""
    cp = mpirun(2, prog, "spawn", 3)
    assert cp.returncode == 0, (cp.returncode, cp.stdout, cp.stderr)
    assert "spawned 3 5" in cp.stdout.splitlines(), cp.stdout + cp.stderr
    assert sorted(l for l in cp.stdout.splitlines() if l.startswith("child ")) == \
        [f"child {r} of 3" for r in range(3)], cp.stdout


@need_ompi
@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"),
                    reason="hiding libpmix from the ranks needs root and unshare")
def test_missing_libpmix_is_an_error_at_init_from_every_rank(prog):
    """Each rank runs in a mount namespace where libpmix.so.2 is empty."""
    real = LIBPMIX.resolve()
    cp = mpirun(2, "unshare", "-m", "sh", "-c",
                f"mount --bind /dev/null {real} && exec {prog} check")
    assert cp.returncode != 0, cp.stdout
    for r in range(2):
        assert (f"vmpi: rank {r}: MPI_Init: this process was started by a PMIx process manager"
                in cp.stderr), cp.stderr
    assert "the PMIx library cannot be loaded" in cp.stderr, cp.stderr
    assert "ok " not in cp.stdout


@pytest.mark.skipif(not LIBPMIX.exists(), reason="no libpmix.so.2 (Debian: libpmix2)")
def test_pmix_environment_without_a_server_is_an_error_not_a_singleton(prog, tmp_path):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PMI_", "PMIX_", "OMPI_", "SLURM_"))}
    cp = subprocess.run([str(prog), "check"], capture_output=True, text=True, timeout=60,
                        cwd=tmp_path, env={**env, "PMIX_NAMESPACE": "job7", "PMIX_RANK": "1"})
    assert cp.returncode == 1, (cp.returncode, cp.stdout, cp.stderr)
    assert ("vmpi: rank 1: MPI_Init: this process was started by a PMIx process manager "
            "(PMIX_NAMESPACE=job7" in cp.stderr), cp.stderr
    assert "PMIx_Init failed" in cp.stderr, cp.stderr
    assert "ok " not in cp.stdout


def test_libvmpi_does_not_link_libpmix():
    lib = pmjob.BUILD / "lib" / "libvmpi.so"
    cp = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True, timeout=30)
    assert cp.returncode == 0, cp.stderr
    needed = [l for l in cp.stdout.splitlines() if "(NEEDED)" in l]
    assert needed and not [l for l in needed if "pmix" in l], needed


def _pmix_cflags():
    if not shutil.which("pkg-config"):
        return None
    cp = subprocess.run(["pkg-config", "--cflags", "pmix"], capture_output=True, text=True)
    return cp.stdout.split() if cp.returncode == 0 else None


# Every value of pmi/pmix_abi.h against the real header.
ABI_CHECK = r"""
#include <pmix.h>
#include "pmix_abi.h"
#include <string.h>
#define SAME(a, b) static_assert((a) == (b), #a " != " #b)
SAME(VMPIX_MAX_NSLEN, PMIX_MAX_NSLEN);
SAME(VMPIX_MAX_KEYLEN, PMIX_MAX_KEYLEN);
SAME(VMPIX_RANK_UNDEF, PMIX_RANK_UNDEF);
SAME(VMPIX_RANK_WILDCARD, PMIX_RANK_WILDCARD);
SAME(VMPIX_SUCCESS, PMIX_SUCCESS);
SAME(VMPIX_ERR_NOT_FOUND, PMIX_ERR_NOT_FOUND);
SAME(VMPIX_ERR_NOT_SUPPORTED, PMIX_ERR_NOT_SUPPORTED);
SAME(VMPIX_BOOL, PMIX_BOOL);
SAME(VMPIX_STRING, PMIX_STRING);
SAME(VMPIX_SIZE, PMIX_SIZE);
SAME(VMPIX_INT, PMIX_INT);
SAME(VMPIX_INT32, PMIX_INT32);
SAME(VMPIX_UINT, PMIX_UINT);
SAME(VMPIX_UINT16, PMIX_UINT16);
SAME(VMPIX_UINT32, PMIX_UINT32);
SAME(VMPIX_PROC_RANK, PMIX_PROC_RANK);
SAME(VMPIX_GLOBAL, PMIX_GLOBAL);
SAME(sizeof(vmpix_proc_t), sizeof(pmix_proc_t));
SAME(offsetof(vmpix_proc_t, rank), offsetof(pmix_proc_t, rank));
SAME(sizeof(vmpix_value_t), sizeof(pmix_value_t));
SAME(offsetof(vmpix_value_t, data), offsetof(pmix_value_t, data));
SAME(sizeof(vmpix_info_t), sizeof(pmix_info_t));
SAME(offsetof(vmpix_info_t, flags), offsetof(pmix_info_t, flags));
SAME(offsetof(vmpix_info_t, value), offsetof(pmix_info_t, value));
SAME(sizeof(vmpix_app_t), sizeof(pmix_app_t));
SAME(offsetof(vmpix_app_t, argv), offsetof(pmix_app_t, argv));
SAME(offsetof(vmpix_app_t, env), offsetof(pmix_app_t, env));
SAME(offsetof(vmpix_app_t, cwd), offsetof(pmix_app_t, cwd));
SAME(offsetof(vmpix_app_t, maxprocs), offsetof(pmix_app_t, maxprocs));
SAME(offsetof(vmpix_app_t, info), offsetof(pmix_app_t, info));
SAME(offsetof(vmpix_app_t, ninfo), offsetof(pmix_app_t, ninfo));
int main(void)
{
    /* the attribute names */
    return strcmp(VMPIX_JOB_SIZE, PMIX_JOB_SIZE) || strcmp(VMPIX_UNIV_SIZE, PMIX_UNIV_SIZE) ||
           strcmp(VMPIX_APPNUM, PMIX_APPNUM) || strcmp(VMPIX_COLLECT_DATA, PMIX_COLLECT_DATA) ||
           strcmp(VMPIX_HOST, PMIX_HOST);
}
"""


@pytest.mark.skipif(_pmix_cflags() is None, reason="no PMIx headers (Debian: libpmix-dev)")
def test_own_pmix_declarations_match_pmix_common_h(tmp_path):
    src = tmp_path / "abi.c"
    src.write_text(ABI_CHECK)
    exe = tmp_path / "abi"
    cp = subprocess.run(["cc", "-std=gnu11", *_pmix_cflags(),
                         f"-I{ROOT / 'pmi'}", "-o", str(exe), str(src)],
                        capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    assert subprocess.run([str(exe)], timeout=30).returncode == 0
