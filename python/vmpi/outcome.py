"""What a job's ranks leave behind, handled the same by both launchers
(:mod:`vmpi.launcher` for processes, :mod:`vmpi.guests` for QEMU guests):
their output, forwarded to the launcher's own stdout and stderr
(:class:`Out`, :func:`emit_output`), and what their exits mean for the job
(:func:`exit_failure`).
"""

from __future__ import annotations

import errno
import os
import selectors
import signal

__all__ = ["Out", "abort_message", "emit_output", "exit_failure", "rank_name", "signame",
           "wait_writable"]


def wait_writable(fd, timeout: float) -> None:
    """Waits at most timeout seconds for fd (or a socket) to take writes."""
    sel = selectors.DefaultSelector()
    try:
        sel.register(fd, selectors.EVENT_WRITE)
        sel.select(timeout)
    finally:
        sel.close()


class Out:
    """Blocking, whole-buffer writes to one of our own output fds.

    A closed reader (EPIPE) makes further output to that fd be dropped
    instead of failing the job.
    """

    def __init__(self, fd: int):
        self.fd = fd
        self.broken = False
        # (job, rank, stream) whose unterminated line was written last, if any
        self.midline: tuple[int, int, int] | None = None

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view and not self.broken:
            try:
                k = os.write(self.fd, view)
                view = view[k:]
            except BlockingIOError:
                # someone made our stdout non-blocking; wait until writable
                wait_writable(self.fd, 1.0)
            except (BrokenPipeError, OSError) as exc:
                if isinstance(exc, BrokenPipeError) or exc.errno in (errno.EPIPE, errno.EBADF):
                    self.broken = True
                else:
                    raise


def emit_output(out: Out, rank: int, stream: int, chunk: bytes, tag: str, job: int = 0) -> None:
    """Write complete lines (or a final fragment) of one rank's stream to out,
    each line prefixed as tag says: "ompi" [1,r]<stdout>:, "rank" [r], "" none.
    A rank of spawned job j (j >= 1) is [j+1,r]<stdout>: and [j:r]."""
    if not chunk:
        return
    if tag:
        if tag == "ompi":
            prefix = f"[{job + 1},{rank}]<{'stdout' if stream == 1 else 'stderr'}>: "
        else:
            prefix = f"[{job}:{rank}] " if job else f"[{rank}] "
        lines = chunk.split(b"\n")
        if lines[-1] == b"":
            lines.pop()
        out.write(b"".join(prefix.encode() + line + b"\n" for line in lines))
    else:
        if out.midline is not None and out.midline != (job, rank, stream):
            # another rank left its last line unterminated: end it there
            # rather than glue this output to it
            out.write(b"\n")
        out.write(chunk)
        out.midline = None if chunk.endswith(b"\n") else (job, rank, stream)


def exit_failure(rc: int, initialized: bool, finalized: bool) -> tuple[int, str, bool] | None:
    """What a rank's exit means for the job: None if nothing went wrong, else
    (exit code, what happened, whether to tear the job down). ``rc`` is the
    exit code, or -S for a rank killed by signal S."""
    if rc < 0:
        return 128 - rc, f"killed by signal {-rc} ({signame(-rc)})", True
    if not finalized:
        if rc != 0 or initialized:
            return rc or 1, f"exited with code {rc} without calling MPI_Finalize", True
    elif rc != 0:
        return rc, f"exited with code {rc} after MPI_Finalize", False
    return None


def rank_name(rank: int, job: int, program: str, where: str = "") -> str:
    """A rank as messages name it: "rank 3 (where)" in the first job, "rank 1
    of spawned job 1 (./child, where)" in a job a rank spawned (job >= 1)."""
    if job == 0:
        return f"rank {rank} ({where})" if where else f"rank {rank}"
    return f"rank {rank} of spawned job {job} ({program}{', ' + where if where else ''})"


def abort_message(who: str, exitcode: int, message: str) -> str:
    """What the launcher prints when a rank aborts the job through PMI: its
    MPI_Abort (vmpi's message starts "MPI_Abort("), or an error that ended
    it with its message, which vmpi leaves to us (VMPI_PM_REPORTS_ABORT)
    so that it is printed once."""
    if not message or message.startswith("MPI_Abort("):
        return f"{who} called MPI_Abort(errorcode {exitcode})"
    return f"{who} failed with exit code {exitcode & 0xFF or 1}: {message}"


def signame(sig: int) -> str:
    """A signal as messages name it: SIGTERM, or "signal 99" if unknown."""
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"
