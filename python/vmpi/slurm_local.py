"""A one-machine Slurm of its own: munged, slurmctld and slurmd in the foreground.

For the tests (tests/py/test_slurm.py) and the start-up benchmark
(bench/startup_slurm.py). Everything lives in one directory: the
configuration, munge's key and socket, Slurm's state, spool and logs; the
daemons listen on free ports of 127.0.0.1, so the machine's own Slurm, if
any, is not touched. Needs root and Debian's slurm-wlm and munge.
:meth:`Cluster.stop` cancels what still runs and ends the daemons, each
by its own process id.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

__all__ = ["DAEMONS", "SlurmError", "Cluster", "why_not"]

DAEMONS = ["munged", "mungekey", "slurmctld", "slurmd", "srun", "sbatch", "sinfo", "squeue",
           "scancel"]
START_TIMEOUT = 30   # seconds for the daemons to come up and the node to be idle

CONF = """\
ClusterName=vmpitest
SlurmctldHost={node}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={d}/munge/sock
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
InactiveLimit=0
KillWait=2
MinJobAge=2
NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} Sockets=1 CoresPerSocket={cpus} \
ThreadsPerCore=1 RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes={node} Default=YES MaxTime=10 State=UP OverSubscribe=FORCE:8
"""


class SlurmError(Exception):
    """The cluster did not come up; the message has the daemons' last log lines."""


def why_not() -> str | None:
    """Why a cluster cannot start here, or None."""
    if os.geteuid() != 0:
        return "starting slurmd and munged needs root"
    missing = [d for d in DAEMONS if not shutil.which(d)]
    if missing:
        return f"{', '.join(missing)} not installed (Debian: slurm-wlm, munge)"
    return None


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class Cluster:
    """munged, slurmctld and slurmd configured in directory ``d`` (empty),
    with one node of ``cpus`` CPUs (more than the machine's: jobs may
    oversubscribe it, as the tests and benchmarks do)."""

    def __init__(self, d: Path, cpus: int = 8):
        self.d = Path(d)
        self.cpus = cpus
        self.node = socket.gethostname().split(".")[0]
        self.procs: list[subprocess.Popen] = []
        self.env = dict(os.environ, SLURM_CONF=str(self.d / "slurm.conf"))
        for k in list(self.env):
            # a job of this cluster must not see an outer launcher's variables
            if k.startswith(("SLURM_", "PMI_", "PMIX_", "OMPI_")) and k != "SLURM_CONF":
                del self.env[k]

    def _start(self, name: str, *args: str) -> None:
        with open(self.d / "log" / f"{name}.out", "w") as out:
            self.procs.append(subprocess.Popen([name, *args], stdout=out,
                                               stderr=subprocess.STDOUT, env=self.env,
                                               start_new_session=True))

    def logs(self) -> str:
        text = []
        for f in sorted((self.d / "log").iterdir()):
            lines = f.read_text(errors="replace").splitlines()[-15:]
            text.append(f"--- {f.name}\n" + "\n".join(lines))
        return "\n".join(text)

    def start(self) -> None:
        """Start the daemons and wait for the node to be idle; SlurmError if not."""
        d = self.d
        for sub in ("munge", "state", "spool", "log"):
            (d / sub).mkdir(mode=0o700)
        key = d / "munge" / "munge.key"
        subprocess.run(["mungekey", "-c", "-k", str(key)], check=True, capture_output=True,
                       timeout=30)
        key.chmod(0o400)
        self._start("munged", "-F", "-f", f"--socket={d}/munge/sock", f"--key-file={key}",
                    f"--log-file={d}/log/munged.log", f"--pid-file={d}/munge/pid",
                    f"--seed-file={d}/munge/seed")
        self._wait(lambda: (d / "munge" / "sock").exists(), "munged's socket")
        ctld, slurmd = _free_ports(2)
        (d / "slurm.conf").write_text(CONF.format(node=self.node, d=d, ctld_port=ctld,
                                                  d_port=slurmd, cpus=self.cpus))
        self._start("slurmctld", "-D", "-i", "-f", str(d / "slurm.conf"))
        self._start("slurmd", "-D", "-N", self.node, "-f", str(d / "slurm.conf"))
        self._wait(self._idle, "the node to be idle in sinfo")

    def _idle(self) -> bool:
        cp = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True,
                            env=self.env, timeout=10)
        return cp.returncode == 0 and cp.stdout.strip() == "idle"

    def _wait(self, ready, what: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while not ready():
            dead = [p.args[0] for p in self.procs if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                self.stop()
                why = f"{', '.join(dead)} exited" if dead else f"{START_TIMEOUT} s passed"
                raise SlurmError(f"Slurm did not start: {why} waiting for {what}\n{self.logs()}")
            time.sleep(0.1)

    def stop(self) -> None:
        """Cancel every job, then end the daemons (slurmd last of Slurm's, so
        it can still kill its steps), each of them by its own process id."""
        if any(p.poll() is None for p in self.procs[1:]):
            subprocess.run(["scancel", "--full", "-u", "root"], capture_output=True,
                           env=self.env, timeout=30)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and self._steps():
                time.sleep(0.1)
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.procs = []

    def _steps(self) -> str:
        cp = subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True,
                            env=self.env, timeout=10)
        return cp.stdout.strip() if cp.returncode == 0 else ""

    def plugins(self) -> list[str]:
        """The MPI plugins of this Slurm (``srun --mpi=list``)."""
        cp = subprocess.run(["srun", "--mpi=list"], capture_output=True, text=True,
                            env=self.env, timeout=30)
        return (cp.stdout + cp.stderr).split()
