"""Shared-memory file bookkeeping for vmpirun.

The C library names every shared-memory file of a job ``vmpi-<jobid>-...``
(in ``/dev/shm``), where ``<jobid>`` is the ``VMPI_JOB_ID`` the launcher
gave the ranks.  The library unlinks its files itself; this module is the
safety net:

* :func:`remove_job_files` removes every file of one job (run by vmpirun
  when the job ends, whatever the outcome);
* :func:`cleanup_stale` (``vmpirun --cleanup``) removes the files of jobs
  that are gone.  While a job runs, its launcher keeps a pid file
  ``vmpi-<jobid>.launcher`` holding ``"<pid> <starttime>"`` (the start time
  from ``/proc/<pid>/stat`` guards against pid reuse).  A job is gone when
  its pid file names a dead launcher, or, for files without a pid file (jobs
  started by another launcher such as Hydra), when no process on this
  machine has any of its files open or mapped.

Only names whose job id is at least 16 hex digits are considered, so
host-wide files that merely start with ``vmpi-`` are never touched.
"""

from __future__ import annotations

import os
import re
import shutil

__all__ = [
    "default_shm_dir",
    "job_id_of",
    "pidfile_path",
    "write_pidfile",
    "proc_starttime",
    "process_alive",
    "launcher_alive",
    "remove_job_files",
    "cleanup_stale",
]

PIDFILE_SUFFIX = ".launcher"
_JOBID_RE = re.compile(r"^vmpi-([0-9a-fA-F]{16,})(?=$|[-.])")


def default_shm_dir() -> str:
    """The directory holding the shared-memory files (``/dev/shm``).

    ``VMPI_SHM_DIR`` overrides it; the tests use that to work in a private
    directory.
    """
    return os.environ.get("VMPI_SHM_DIR") or "/dev/shm"


def job_id_of(name: str) -> str | None:
    """Job id of a file name ``vmpi-<jobid>...``, or None."""
    m = _JOBID_RE.match(name)
    return m.group(1) if m else None


def pidfile_path(shm_dir: str, jobid: str) -> str:
    return os.path.join(shm_dir, f"vmpi-{jobid}{PIDFILE_SUFFIX}")


def proc_starttime(pid: int) -> str | None:
    """Start time of process ``pid`` (field 22 of its stat), None if gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read().decode("ascii", errors="replace")
    except OSError:
        return None
    # the command name (field 2) may contain spaces and parentheses
    rest = data[data.rfind(")") + 2:].split()
    # rest[0] is field 3 (state); starttime is field 22
    return rest[19] if len(rest) > 19 else None


def write_pidfile(shm_dir: str, jobid: str) -> str | None:
    """Create the launcher pid file; return its path (None if impossible)."""
    path = pidfile_path(shm_dir, jobid)
    pid = os.getpid()
    text = f"{pid} {proc_starttime(pid) or 0}\n"
    tmp = path + f".tmp{pid}"
    try:
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return None
    return path


def launcher_alive(path: str) -> bool:
    """Whether the launcher named in pid file ``path`` is still running."""
    try:
        with open(path) as f:
            fields = f.read().split()
        pid = int(fields[0])
    except (OSError, ValueError, IndexError):
        return False
    return process_alive(pid, fields[1] if len(fields) > 1 else "0")


def process_alive(pid: int, starttime: str) -> bool:
    """Whether process ``pid`` runs and started at ``starttime`` ("0": unknown)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    if starttime != "0":
        st = proc_starttime(pid)
        if st is not None and st != starttime:
            return False  # the pid was reused by another process
    return True


def _remove(path: str) -> bool:
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def remove_job_files(shm_dir: str, jobid: str) -> list[str]:
    """Remove every entry of ``shm_dir`` named ``vmpi-<jobid>*``; return them."""
    prefix = f"vmpi-{jobid}"
    removed = []
    try:
        names = os.listdir(shm_dir)
    except OSError:
        return removed
    for name in names:
        if name.startswith(prefix):
            path = os.path.join(shm_dir, name)
            if _remove(path):
                removed.append(path)
    return removed


def _jobs_in_use(shm_dir: str) -> set[str]:
    """Job ids of files under ``shm_dir`` that some process has open or mapped."""
    real = os.path.realpath(shm_dir).rstrip("/") + "/"
    used: set[str] = set()

    def note(target: str) -> None:
        if target.endswith(" (deleted)"):
            target = target[: -len(" (deleted)")]
        if target.startswith(real):
            jid = job_id_of(target[len(real):])
            if jid:
                used.add(jid)

    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return used
    for pid in pids:
        try:
            with open(f"/proc/{pid}/maps") as f:
                for line in f:
                    parts = line.split(None, 5)
                    if len(parts) == 6:
                        note(parts[5].rstrip("\n"))
        except OSError:
            pass
        fd_dir = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                note(os.readlink(os.path.join(fd_dir, fd)))
            except OSError:
                pass
    return used


def cleanup_stale(shm_dir: str | None = None, log=None) -> tuple[list[str], list[str]]:
    """Remove the files of jobs that are gone.

    Returns ``(removed, failed)`` lists of paths.  ``log`` (a callable taking
    one string) receives one line per removed or kept job when given.
    """
    shm_dir = shm_dir or default_shm_dir()
    try:
        names = os.listdir(shm_dir)
    except OSError:
        return [], []
    jobs: dict[str, list[str]] = {}
    for name in names:
        jid = job_id_of(name)
        if jid:
            jobs.setdefault(jid, []).append(name)
    removed: list[str] = []
    failed: list[str] = []
    if not jobs:
        return removed, failed
    in_use = None
    for jid, files in sorted(jobs.items()):
        pidname = f"vmpi-{jid}{PIDFILE_SUFFIX}"
        if pidname in files:
            if launcher_alive(os.path.join(shm_dir, pidname)):
                if log:
                    log(f"job {jid}: launcher running, kept {len(files)} file(s)")
                continue
        else:
            if in_use is None:
                in_use = _jobs_in_use(shm_dir)
            if jid in in_use:
                if log:
                    log(f"job {jid}: files in use, kept {len(files)} file(s)")
                continue
        # remove the data files first and the pid file last, so an
        # interrupted cleanup can be rerun
        for name in sorted(files, key=lambda n: n == pidname):
            path = os.path.join(shm_dir, name)
            (removed if _remove(path) else failed).append(path)
        if log:
            log(f"job {jid}: gone, removed {len(files)} file(s)")
    return removed, failed
