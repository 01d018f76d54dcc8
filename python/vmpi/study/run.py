"""Running a study: where the programs are, the command line of every
combination, the emulated hosts the other libraries run on, the progress
bar, and results.jsonl (one line per finished run, flushed at once, so
Ctrl-C or a crash keeps every finished result and ``--resume`` goes on from
there)."""

from __future__ import annotations

import datetime
import json
import os
import platform
import random
import secrets
import shlex
import signal
import subprocess
import sys
import time

from .. import netns
from . import parse
from .spec import YIELD, Bench, Config, Placement, Study, StudyError, grid

RESULTS = "results.jsonl"
PLAN = "study.json"
OMPI_ROOT = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}

# Enters the emulated host of the rank (block placement of NSW_RANKS ranks on
# NSW_HOSTS hosts) and pins it to one core; MPICH's and Open MPI's ranks
# start through it.
WRAPPER = """#!/bin/sh
r=${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-0}}
h=$(( r * NSW_HOSTS / NSW_RANKS ))
[ "$NSW_CPUS" -gt 0 ] && pin="taskset -c $(( r % NSW_CPUS ))"
exec ip netns exec "$NSW_PREFIX$h" $pin "$@"
"""


class Layout:
    """Where vmpi and the benchmark programs are.

    ``root`` is vmpi's build tree or install prefix (both have bin/vmpirun);
    the benchmarks are in root/bench (build) or root/lib/vmpi/bench
    (install), their sources in the source tree's bench/ or
    root/lib/vmpi/bench/src; the MPICH and Open MPI builds of them go to
    ``ext``, bench-ext beside the benchmarks' folder when writable, else
    in the study's folder.
    """

    def __init__(self, build: str | None, out: str):
        here = os.path.dirname(os.path.realpath(__file__))
        repo = os.path.normpath(os.path.join(here, "..", "..", ".."))
        prefix = os.path.normpath(os.path.join(here, "..", "..", "..", "..", ".."))
        cands = [build] if build else [os.environ.get("VMPI_BUILD"),
                                       os.path.join(repo, "build"), prefix]
        root = next((os.path.abspath(c) for c in cands
                     if c and os.path.isfile(os.path.join(c, "bin", "vmpirun"))), None)
        if root is None:
            raise StudyError("cannot find vmpi (bin/vmpirun) in " + ", ".join(
                c for c in cands if c) + ": build it (make) or name it with --build")
        self.root = root
        self.vmpirun = os.path.join(root, "bin", "vmpirun")
        installed = os.path.isdir(os.path.join(root, "lib", "vmpi", "bench"))
        self.bench = os.path.join(root, "lib", "vmpi", "bench") if installed \
            else os.path.join(root, "bench")
        self.src = os.path.join(self.bench, "src") if installed \
            else os.path.join(repo, "bench")
        self.apps_src = os.path.join(root, "lib", "vmpi", "apps", "src") if installed \
            else os.path.join(repo, "apps")
        here_ext = os.path.join(os.path.dirname(self.bench), "bench-ext")
        self.ext = here_ext if os.access(os.path.dirname(self.bench), os.W_OK) \
            else os.path.join(out, "bench-ext")
        self.repo = repo if os.path.isdir(os.path.join(repo, ".git")) else None

    def program(self, library: str, program: str) -> str:
        if library == "vmpi" and program.startswith("vmpi-"):
            return os.path.join(self.root, "bin", program)
        if library in ("vmpi", "raw"):
            path = os.path.join(self.bench, program)
            # an install puts lockbench in bin/
            alt = os.path.join(self.root, "bin", program)
            return alt if not os.path.exists(path) and os.path.exists(alt) else path
        return os.path.join(self.ext, library, program)

    def build_ext(self, libraries: set[str]) -> None:
        """Build the benchmarks and applications against Debian's MPICH / Open
        MPI (make skips what is up to date)."""
        for lib in sorted(libraries & {"mpich", "openmpi"}):
            cc = f"mpicc.{lib}"
            for src in (self.src, self.apps_src):
                proc = subprocess.run(["make", "-s", "-C", src, f"MPICC={cc}",
                                       f"OUT={os.path.join(self.ext, lib)}"],
                                      capture_output=True, text=True)
                if proc.returncode != 0:
                    raise StudyError(f"building {src} with {cc} failed:\n"
                                     + proc.stderr[-2000:])


def _first_line(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "not found"
    return next((ln.strip() for ln in out.splitlines() if ln.strip()), "unknown")


def context(layout: Layout) -> dict:
    """What every result line records about where and with what it ran."""
    from .. import __version__
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo")
                if ln.startswith("model name")), platform.processor() or "unknown")
    git = "unknown"
    if layout.repo:
        git = _first_line(["git", "-C", layout.repo, "describe", "--always", "--dirty"])
    return {"machine": {"hostname": platform.node(), "cpu": cpu, "cores": os.cpu_count(),
                        "kernel": platform.release(),
                        "memory_gib": round(os.sysconf("SC_PAGE_SIZE")
                                            * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)},
            "git": git,
            "versions": {"vmpi": f"vmpi {__version__} ({git})",
                         "mpich": _first_line(["mpichversion"]).replace("\t", " "),
                         "openmpi": _first_line(["ompi_info", "--version"]),
                         "raw": "no MPI"}}


class Hosts:
    """Emulated hosts for the libraries vmpirun does not start across hosts
    (and raw TCP), made on first use and removed at the end."""

    def __init__(self, nhosts: int, workdir: str):
        self.nhosts = nhosts
        self.workdir = workdir
        self.net: netns.Network | None = None
        self.wrapper = os.path.join(workdir, "nswrap")

    def get(self) -> netns.Network:
        if self.net is None:
            ip = netns.check_usable()
            self.net = netns.Network.create(secrets.token_hex(16), self.nhosts, ip)
            os.makedirs(self.workdir, exist_ok=True)
            with open(self.wrapper, "w") as f:
                f.write(WRAPPER)
            os.chmod(self.wrapper, 0o755)
        return self.net

    def destroy(self) -> list[str]:
        left = self.net.destroy() if self.net else []
        self.net = None
        return left


def _sweep(prog: str, args: str, lists: dict[str, str]) -> str:
    """Programs that take one value of an option per run (lockbench's --lock
    and --threads, clping's -s): one run per combination of the
    comma-separated values given, in nested shell loops."""
    words = shlex.split(args)
    rest, loops = [], []
    i = 0
    while i < len(words):
        if words[i] in lists and i + 1 < len(words):
            var = lists[words[i]]
            loops.append((var, words[i], words[i + 1].split(",")))
            i += 2
            continue
        rest.append(words[i])
        i += 1
    inner = f"{prog} " + " ".join(f"{opt} ${var}" for var, opt, _ in loops) + \
        (" " + shlex.join(rest) if rest else "") + " --json || exit 1"
    for var, _, vals in reversed(loops):
        inner = f"for {var} in {' '.join(map(shlex.quote, vals))}; do {inner}; done"
    return inner


# Seconds real guests add to a run: booting under software emulation.
GUEST_BOOT = 60.0


def _boot(pl: Placement) -> float:
    return GUEST_BOOT if pl.real else 0.0


def sched_of(cfg: Config, b: Bench, sched: str) -> str:
    """The policy a run of the study's ``sched`` gets: round-robin reaches
    MPI jobs only, and not in QEMU guests, which start their ranks
    themselves (vmpirun refuses --sched there)."""
    if (sched == "rr" and cfg.library != "raw" and b.program != "lockbench"
            and not Placement.parse(cfg.placement).real):
        return "rr"
    return "default"


def command(cfg: Config, b: Bench, lay: Layout, hosts: Hosts,
            sched: str = "default") -> tuple[str, dict]:
    """The shell command of one run and the variables it adds; ``sched``
    "rr" runs an MPI job's ranks round-robin (vmpirun --sched rr; the
    peers' launchers under chrt, whose children inherit it)."""
    cmd, env = _command(cfg, b, lay, hosts)
    if sched_of(cfg, b, sched) == "rr":
        cmd = (cmd.replace(lay.vmpirun, f"{lay.vmpirun} --sched rr", 1)
               if cmd.startswith(lay.vmpirun) else f"chrt -r 1 {cmd}")
    return cmd, env


def _command(cfg: Config, b: Bench, lay: Layout, hosts: Hosts) -> tuple[str, dict]:
    pl = Placement.parse(cfg.placement)
    n = cfg.ranks
    prog = lay.program(cfg.library, "clping" if b.program == "memcpy" else
                       "tcpping" if b.program.startswith("tcp_") else b.program)
    args = b.args
    cpus = os.cpu_count() or 1
    env: dict[str, str] = {}
    if cfg.library == "raw":
        if b.program == "memcpy":
            return _sweep(f"{prog} --memcpy", args, {"-s": "s"}), env
        if b.program.startswith("tcp_"):
            net = hosts.get()
            # below Linux's ephemeral ports (32768-60999), which the namespace's
            # own connections may hold: a server that cannot bind exits, and its
            # client then meets a refused connection
            port = random.randint(20000, 32767)
            bw = " --bw" if b.program == "tcp_bw" else ""
            return (f"ip netns exec {net.hosts[1]} taskset -c {1 % cpus} {prog} --server "
                    f"--port {port} 2>/dev/null & "
                    f"ip netns exec {net.hosts[0]} taskset -c 0 {prog} --client "
                    f"{netns.host_addr(1)} --port {port} --spin{bw} {args} --json; "
                    "rc=$?; kill $! 2>/dev/null; wait; exit $rc"), env
        return f"{prog} {args} --json", env
    if b.program == "lockbench":
        return _sweep(prog, args, {"--lock": "l", "--threads": "t"}), env
    # footprint takes no options and prints one line of its own
    tail = f"{prog} {args}".strip() if b.program == "footprint" else f"{prog} {args} --json"
    if cfg.library == "vmpi" or (cfg.library == "mpich" and pl.hosts == 1 and pl.vms > 1):
        cmd = f"{lay.vmpirun} -n {n} --bind core --timeout {int(b.timeout + _boot(pl))}"
        if pl.hosts > 1:
            cmd += f" --hosts {pl.hosts}"
        if pl.real:
            cmd += f" --vm-guests {pl.vms}"
        elif pl.vms > 1:
            cmd += f" --vms {pl.vms}"
        if cfg.policy == "unaware":
            cmd += " -x VMPI_CHANNELS=smp,ofi"
        if cfg.library == "mpich":
            # UCX would take its shared-memory transports between the emulated
            # VMs; between real VMs it has only the network.
            cmd += " -x UCX_TLS=tcp,self"
            if cfg.policy == "yield":
                cmd += " -x {}={}".format(*YIELD["mpich"])
        return f"{cmd} {tail}", env
    bind_mpich = "-bind-to core" if n <= cpus else "-bind-to none"
    bind_ompi = "--bind-to core" if n <= cpus else "--oversubscribe --bind-to none"
    # the peer's own setting for waiting without holding the core
    yld = ""
    if cfg.policy == "yield":
        yld = " -genv {} {}" if cfg.library == "mpich" else " --mca {} {}"
        yld = yld.format(*YIELD[cfg.library])
    if pl.hosts == 1:
        if cfg.library == "mpich":
            return f"mpiexec.mpich -n {n} {bind_mpich}{yld} {tail}", env
        return f"mpiexec.openmpi -n {n} {bind_ompi}{yld} {tail}", {**OMPI_ROOT}
    net = hosts.get()
    env = {"NSW_PREFIX": net.hosts[0][:-1], "NSW_HOSTS": str(pl.hosts), "NSW_RANKS": str(n),
           "NSW_CPUS": str(cpus)}
    if cfg.library == "mpich":
        # UCX lists interfaces in /sys, which only `ip netns exec` (the
        # wrapper) remounts for the namespace.
        env.update(UCX_TLS="tcp,self", UCX_NET_DEVICES=netns.IFACE)
        return f"mpiexec.hydra -n {n} -bind-to none{yld} {hosts.wrapper} {tail}", env
    # Open MPI's PMIx server must listen on the emulated network, so mpirun
    # itself runs in host 0.
    env.update(OMPI_ROOT, PMIX_MCA_ptl_base_if_include=netns.IFACE)
    return (f"ip netns exec {net.hosts[0]} mpirun.openmpi -np {n} --oversubscribe "
            f"--bind-to none --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include "
            f"{netns.IFACE}{yld} {hosts.wrapper} {tail}"), env


def execute(cmd: str, env: dict, timeout: float) -> tuple[str, int | None, str, str, float]:
    """Run one command in its own session; (status, rc, stdout, stderr, seconds).
    Ctrl-C stops it (and its children) and propagates."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, shell=True, executable="/bin/bash", text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, start_new_session=True,
                            env={**os.environ, **env})

    def stop(sig) -> tuple[str, str]:
        for s, wait in ((sig, 5), (signal.SIGKILL, 5)):
            try:
                os.killpg(proc.pid, s)
            except ProcessLookupError:
                pass
            try:
                return proc.communicate(timeout=wait)
            except subprocess.TimeoutExpired:
                continue
        return "", ""

    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        out, err = stop(signal.SIGTERM)
        return "timeout", None, out or "", err or "", time.monotonic() - t0
    except KeyboardInterrupt:
        stop(signal.SIGINT)
        raise
    status = "ok" if proc.returncode == 0 else "failed"
    return status, proc.returncode, out, err, time.monotonic() - t0


def _fmt_time(s: float) -> str:
    s = int(round(s))
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


class Progress:
    """What runs now, how far the study is and the time left, on stderr: a
    bar redrawn in place on a terminal, one line per run otherwise."""

    def __init__(self, total: int, done: int, stream=None):
        self.total = total
        self.done = done
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.took: dict[str, list[float]] = {}

    def learn(self, cfg_key: str, seconds: float) -> None:
        self.took.setdefault(cfg_key, []).append(seconds)

    def estimate(self, remaining: list[Config]) -> float:
        every = [s for v in self.took.values() for s in v]
        default = sum(every) / len(every) if every else 3.0
        left = 0.0
        for cfg in remaining:
            mine = self.took.get(cfg.key)
            left += sum(mine) / len(mine) if mine else default
        return left

    def begin(self, what: str, left: float) -> None:
        if self.tty:
            width = 24
            fill = width * self.done // max(self.total, 1)
            bar = "#" * fill + "." * (width - fill)
            self.stream.write(f"\r\033[K[{bar}] {self.done}/{self.total} {what} "
                              f"· about {_fmt_time(left)} left")
            self.stream.flush()

    def end(self, what: str, status: str, seconds: float, left: float, error: str) -> None:
        self.done += 1
        if self.tty and status == "ok":
            return
        if self.tty:
            self.stream.write("\r\033[K")
        line = f"[{self.done}/{self.total}] {what}: {status} in {seconds:.1f} s"
        if status != "ok":
            line += f" ({error})" if error else ""
        elif left > 0:
            line += f", about {_fmt_time(left)} left"
        self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\r\033[K")
            self.stream.flush()


def _error_of(status: str, rc, out: str, err: str, timeout: float) -> str:
    if status == "timeout":
        return f"no result after {timeout:.0f} s"
    lines = [ln.strip() for ln in (err + "\n" + out).splitlines() if ln.strip()]
    if status == "ok":
        return "" if lines else "no output"
    # the program's own complaint, rather than the launcher's summary after it
    why = next((ln for ln in lines if "error" in ln.lower()), lines[-1] if lines else "no output")
    return f"exit status {rc}: {why[:300]}"


def run_grid(study: Study, out: str, layout: Layout, stream=None) -> dict:
    """Run what results.jsonl in ``out`` does not hold yet (as ``ok``).
    Returns counts; KeyboardInterrupt propagates after the current run is
    stopped (everything finished is on disk)."""
    configs, _ = grid(study)
    benches = {b.name: b for b in study.benches}
    results = os.path.join(out, RESULTS)
    have: dict[str, dict] = {}
    if os.path.exists(results):
        from .analysis import load_results
        have = {r["key"]: r for r in load_results(results)}
    todo = [(rep, cfg) for rep in range(study.reps) for cfg in configs
            if have.get(f"{cfg.key}|{rep}", {}).get("status") != "ok"]
    layout.build_ext({c.library for c in configs})
    ctx = context(layout)
    need_hosts = max([Placement.parse(c.placement).hosts for c in configs
                      if c.library != "vmpi"] + [2])
    hosts = Hosts(need_hosts, os.path.join(out, ".work"))
    total = study.reps * len(configs)
    prog = Progress(total, total - len(todo), stream)
    for r in have.values():
        if r.get("status") == "ok":
            prog.learn(r["config"], r["seconds"])
    # "own": failures of vmpi's runs and of the limits, which fail the study
    counts = {"ok": 0, "failed": 0, "timeout": 0, "skipped": 0, "own": 0}
    hung: dict[str, str] = {}  # configuration -> why it is not repeated
    # SIGTERM must reach the finally below that removes the namespaces.
    old_term = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        with open(results, "a") as f:
            for i, (rep, cfg) in enumerate(todo):
                b = benches[cfg.bench]
                what = f"{cfg.bench} · {cfg.label} · rep {rep + 1}/{study.reps}"
                prog.begin(what, prog.estimate([c for _, c in todo[i:]]))
                cmd, env = "", {}
                if cfg.key in hung:
                    status, rc, sout, secs = "skipped", None, "", 0.0
                    error = f"not repeated: {hung[cfg.key]}"
                else:
                    try:
                        cmd, env = command(cfg, b, layout, hosts, study.sched)
                    except (StudyError, netns.NetnsError) as exc:
                        status, rc, sout, serr, secs = "failed", None, "", str(exc), 0.0
                    else:
                        limit = b.timeout + 5 + _boot(Placement.parse(cfg.placement))
                        status, rc, sout, serr, secs = execute(cmd, env, limit)
                        if status == "failed" and rc == 124 and cmd.startswith(layout.vmpirun):
                            status = "timeout"  # vmpirun's own --timeout
                    error = _error_of(status, rc, sout, serr, limit)
                # An application prints its one verified record last: a run that
                # hangs after it (MPICH over UCX's tcp transport can hang in
                # MPI_Finalize) still measured what it had to.
                keep = status == "ok" or (status == "timeout" and b.kind == "app")
                records = parse.parse_output(sout, b.program) if keep else []
                if status == "ok" and not records:
                    status, error = "failed", "no result in the output"
                if status == "timeout":
                    # a configuration that hangs once costs no further timeouts
                    hung[cfg.key] = f"timed out in repetition {rep + 1}"
                    if records:
                        status = "ok"
                        error = "result kept: the job hung after printing it (at exit)"
                        hung[cfg.key] = (f"hung at exit in repetition {rep + 1} "
                                         "(its result is kept)")
                line = {"key": f"{cfg.key}|{rep}", "config": cfg.key, "study": study.name,
                        "bench": cfg.bench, "program": b.program, "kind": b.kind,
                        "metric": b.metric, "headline": b.headline,
                        "library": cfg.library, "library_version": ctx["versions"][cfg.library],
                        "placement": cfg.placement, "policy": cfg.policy, "ranks": cfg.ranks,
                        "sched": sched_of(cfg, b, study.sched),
                        "rep": rep, "status": status, "seconds": round(secs, 3),
                        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
                        "command": " ".join([*(f"{k}={v}" for k, v in env.items()), cmd]),
                        "machine": ctx["machine"], "git": ctx["git"], "records": records}
                if error:
                    line["error" if status != "ok" else "note"] = error
                f.write(json.dumps(line) + "\n")
                f.flush()
                counts[status] += 1
                if status in ("failed", "timeout") and cfg.library in ("vmpi", "raw"):
                    counts["own"] += 1
                if status == "ok":
                    prog.learn(cfg.key, secs)
                prog.end(what, status, secs, prog.estimate([c for _, c in todo[i + 1:]]),
                         error)
    finally:
        prog.close()
        signal.signal(signal.SIGTERM, old_term)
        left = hosts.destroy()
        if left:
            print(f"vmpi study: could not remove {', '.join(left)} "
                  "(vmpirun --cleanup removes them)", file=sys.stderr)
    return counts
