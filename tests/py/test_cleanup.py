"""vmpirun --cleanup: remove shared-memory files of jobs that are gone."""
import mmap
import os
import secrets
import signal
import subprocess

from conftest import alive, fake, read_pids, run_vmpirun, vmpirun_cmd, wait_all_dead

from vmpi import shm


def touch(path, data=b"x" * 4096):
    with open(path, "wb") as f:
        f.write(data)


def test_cleanup_removes_only_files_of_dead_jobs(tmp_path):
    d = tmp_path
    jid = {k: secrets.token_hex(16) for k in "ABCDEF"}
    # A: the launcher pid file names a dead process
    p = subprocess.Popen(["true"])
    p.wait()
    (d / f"vmpi-{jid['A']}.launcher").write_text(f"{p.pid} 12345\n")
    touch(d / f"vmpi-{jid['A']}-seg0")
    touch(d / f"vmpi-{jid['A']}-ring-1")
    # B: the launcher (this process) is alive
    assert shm.write_pidfile(str(d), jid["B"]) == str(d / f"vmpi-{jid['B']}.launcher")
    touch(d / f"vmpi-{jid['B']}-seg0")
    # C: the pid is alive but belongs to another process (start time differs)
    (d / f"vmpi-{jid['C']}.launcher").write_text(f"{os.getpid()} 1\n")
    touch(d / f"vmpi-{jid['C']}-seg0")
    # D, E: no pid file (e.g. started by Hydra); D is open, E is mapped
    touch(d / f"vmpi-{jid['D']}-seg0")
    touch(d / f"vmpi-{jid['E']}-seg0")
    # F: no pid file and nobody uses it
    touch(d / f"vmpi-{jid['F']}-seg0")
    # not job files at all
    for name in ("vmpi-hostregion", "vmpi-12ab-short", "other-file"):
        touch(d / name)

    held = open(d / f"vmpi-{jid['D']}-seg0", "rb")
    with open(d / f"vmpi-{jid['E']}-seg0", "r+b") as f:
        mapped = mmap.mmap(f.fileno(), 4096)
    try:
        cp, _ = run_vmpirun("--cleanup", "-v", env={"VMPI_SHM_DIR": str(d)})
    finally:
        held.close()
        mapped.close()
    assert cp.returncode == 0, cp.stderr
    assert sorted(os.listdir(d)) == sorted([
        f"vmpi-{jid['B']}.launcher", f"vmpi-{jid['B']}-seg0",
        f"vmpi-{jid['D']}-seg0", f"vmpi-{jid['E']}-seg0",
        "vmpi-hostregion", "vmpi-12ab-short", "other-file"])
    assert "removed 6 stale file(s)" in cp.stdout
    assert f"job {jid['A']}: gone" in cp.stdout

    # once nobody holds them, D and E go too
    removed, failed = shm.cleanup_stale(str(d))
    assert failed == []
    assert sorted(os.path.basename(p) for p in removed) == sorted(
        [f"vmpi-{jid['D']}-seg0", f"vmpi-{jid['E']}-seg0"])


def test_cleanup_after_launcher_was_killed(tmp_path, piddir):
    tmp_path = tmp_path / "shm"
    tmp_path.mkdir()
    env = dict(os.environ, VMPI_SHM_DIR=str(tmp_path), FAKE_PIDDIR=str(piddir))
    p = subprocess.Popen(vmpirun_cmd("-n", 2, *fake("shm", "hang")), env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pids = {}
    try:
        pids = read_pids(piddir, 2)
        assert len(pids) == 2
        names = sorted(os.listdir(tmp_path))
        jobid = shm.job_id_of(names[0])
        assert names == sorted([f"vmpi-{jobid}-x0", f"vmpi-{jobid}-x1", f"vmpi-{jobid}.launcher"])

        # while the job runs, --cleanup keeps its files
        cp, _ = run_vmpirun("--cleanup", env={"VMPI_SHM_DIR": str(tmp_path)})
        assert cp.returncode == 0
        assert sorted(os.listdir(tmp_path)) == names

        # the launcher dies without cleaning up; its ranks die with it
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=5)
        assert wait_all_dead([pid for pid, _ in pids.values()]) == []
        assert sorted(os.listdir(tmp_path)) == names

        cp, _ = run_vmpirun("--cleanup", env={"VMPI_SHM_DIR": str(tmp_path)})
        assert cp.returncode == 0
        assert os.listdir(tmp_path) == []
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        # the ranks' grandchildren outlive a SIGKILLed launcher; reap them here
        for _, gc in pids.values():
            if gc and alive(gc):
                os.kill(gc, signal.SIGKILL)
