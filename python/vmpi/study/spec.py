"""What a study runs: its benchmarks, libraries, placements and channel
policies, and the grid of runs they span, with the combinations that cannot
exist and why.

A *placement* names where the ranks run: ``vm`` (one VM), ``NvM`` (N VMs
of one host), ``Nhost`` (N hosts, one VM each) and ``NhostMvm``, all
emulated with namespaces; ``Nguest`` and ``NhostMguest`` put the ranks in
real QEMU guests instead (vmpirun --vm-guests; vmpi only).  A *policy*
is vmpi's channel choice: ``aware`` (the default: smp, ivshmem, ofi by
locality) or ``unaware`` (``VMPI_CHANNELS=smp,ofi``: the virtual NIC between
VMs, what other MPIs do).  MPICH and Open MPI run ``default`` (as shipped)
and, where ranks outnumber the machine's cores, also ``yield``: their own
setting for waiting without holding the core (:data:`YIELD`), so that a
comparison under oversubscription measures their communication and not
their busy polling.  Library ``raw`` runs the physical limits (no MPI).
"""

from __future__ import annotations

import dataclasses
import os
import re
import tomllib
from dataclasses import dataclass, field

LIBRARIES = ("vmpi", "mpich", "openmpi")
POLICIES = ("aware", "unaware")
PEERS = ("mpich", "openmpi")
PEER_POLICIES = ("default", "yield")
# The scheduling policy every MPI run of a study gets: the kernel's default,
# or round-robin (vmpirun --sched rr; the peers under chrt -r 1), where a
# rank that yields waits until every other rank of its CPU has had a turn.
SCHEDS = ("default", "rr")
# Each peer's own setting for yielding the core while it waits.  Open MPI:
# mpi_yield_when_idle (its mpirun already sets it when it sees more ranks
# than slots).  Debian's MPICH 4.0.2 (ch4:ucx) has no such setting:
# MPIR_CVAR_POLLS_BEFORE_YIELD is in the library but only ch3:nemesis reads
# it; ch4's MPID_Progress_wait calls sched_yield between polls only when the
# library runs at MPI_THREAD_MULTIPLE (under its default global critical
# section), which this variable makes MPI_Init ask for.
YIELD = {"mpich": ("MPIR_CVAR_DEFAULT_THREAD_LEVEL", "MPI_THREAD_MULTIPLE"),
         "openmpi": ("mpi_yield_when_idle", "1")}
YIELD_TEXT = {"mpich": "MPIR_CVAR_DEFAULT_THREAD_LEVEL=MPI_THREAD_MULTIPLE",
              "openmpi": "--mca mpi_yield_when_idle 1"}
# "scale": the --scale grid's collectives and memory (vmpi.study.scale)
KINDS = ("p2p", "coll", "rma", "limit", "locks", "app", "scale")
METRICS = ("latency", "bandwidth", "rate", "time", "memory")
UNITS = {"latency": "us", "bandwidth": "MB/s", "rate": "1/s", "time": "us", "memory": "KiB"}

_PLACEMENT_RE = re.compile(r"^(?:(\d+)host)?(?:(\d+)?(vm|guest))?$")


class StudyError(Exception):
    """A study file or option that cannot be used; the message says why."""


@dataclass(frozen=True)
class Placement:
    name: str
    hosts: int
    vms: int  # per host
    real: bool = False  # QEMU guests rather than emulated VMs

    @classmethod
    def parse(cls, name: str) -> Placement:
        m = _PLACEMENT_RE.match(name)
        if not name or not m or (m.group(1) is None and m.group(3) is None):
            raise StudyError(f"placement {name!r}: want vm, NvM, Nhost or NhostMvm, or with "
                             "guest for real VMs (e.g. vm, 2vm, 2host, 2host2vm, 2guest)")
        hosts = int(m.group(1) or 1)
        vms = int(m.group(2) or 1)
        if hosts < 1 or vms < 1 or hosts > 64 or vms > 64:
            raise StudyError(f"placement {name!r}: hosts and VMs must be 1..64")
        return cls(name, hosts, vms, m.group(3) == "guest")

    @property
    def label(self) -> str:
        if self.real:
            per = f"{self.vms} real VM{'s' if self.vms > 1 else ''}"
            return f"{per}, 1 host" if self.hosts == 1 else f"{self.hosts} hosts x {per}"
        if self.hosts == 1:
            return "same VM" if self.vms == 1 else f"{self.vms} VMs, 1 host"
        per = "" if self.vms == 1 else f" x {self.vms} VMs"
        return f"{self.hosts} hosts{per}"

    @property
    def shares_host(self) -> bool:
        """Whether some ranks sit in different VMs of one host."""
        return self.vms > 1


@dataclass
class Bench:
    """One benchmark of the study (a program and its arguments)."""
    name: str
    program: str  # a bench/ program, an application (vmpi-NAME), or a limit below
    args: str = ""
    kind: str = "p2p"
    metric: str = "latency"
    ranks: int | None = None  # None: the study's ranks
    libraries: tuple[str, ...] | None = None  # None: all of the study's
    placements: tuple[str, ...] | None = None
    headline: int | None = None  # the size the summary table quotes
    timeout: float = 180.0

    @property
    def unit(self) -> str:
        return UNITS[self.metric]

    def check(self) -> None:
        if self.kind not in KINDS:
            raise StudyError(f"benchmark {self.name}: kind {self.kind!r} not one of {KINDS}")
        if self.metric not in METRICS:
            raise StudyError(f"benchmark {self.name}: metric {self.metric!r} not one of "
                             f"{METRICS}")
        if not self.program or not re.match(r"^[A-Za-z0-9_.-]+$", self.program):
            raise StudyError(f"benchmark {self.name}: program {self.program!r} must be the "
                             "name of a program in bench/")
        if self.ranks is not None and self.ranks < 1:
            raise StudyError(f"benchmark {self.name}: ranks must be >= 1")
        if self.timeout <= 0:
            raise StudyError(f"benchmark {self.name}: timeout must be > 0")


def _b(name, program, args, kind="p2p", metric="latency", **kw) -> Bench:
    return Bench(name, program, args, kind, metric, **kw)


# The application kernels (apps/) and their arguments in the default study.
APP_ARGS = {"stencil": "-n 256 -i 10 -r 3", "fft": "-n 128 -i 1 -r 3",
            "sort": "-n 262144 -i 1 -r 3", "bfs": "-n 10 -i 2 -r 3"}

# The catalogue: every benchmark a study can name.  The arguments keep the
# default study within 10 minutes on a 2-core machine (5 repetitions).
CATALOGUE: dict[str, Bench] = {b.name: b for b in (
    _b("latency", "latency", "-m 1:1048576 -i 500 -x 50", headline=8),
    _b("bw", "bw", "-m 64:4194304 -i 5 -x 1 -W 32", metric="bandwidth", headline=1048576),
    _b("bibw", "bibw", "-m 64:4194304 -i 5 -x 1 -W 32", metric="bandwidth",
       headline=1048576),
    _b("mbw_mr", "mbw_mr", "-m 8:1048576 -i 10 -x 2 -W 32", metric="bandwidth",
       headline=1048576),
    _b("multi_lat", "multi_lat", "-m 1:65536 -i 1000 -x 100", headline=8),
    _b("allreduce", "coll", "allreduce --sizes 8,1024,65536 -i 10 -x 1", "coll",
       ranks=4, headline=8, timeout=15),
    _b("bcast", "coll", "bcast --sizes 8,1024,65536 -i 10 -x 1", "coll",
       ranks=4, headline=8, timeout=15),
    _b("alltoall", "coll", "alltoall --sizes 8,1024,65536 -i 50 -x 5", "coll",
       ranks=4, headline=8, timeout=30),
    _b("put", "rma", "-t put_lat -m 8:65536 -i 1000 -x 100", "rma", ranks=2,
       libraries=("vmpi", "mpich"), headline=8, timeout=30),
    _b("get", "rma", "-t get_lat -m 8:65536 -i 1000 -x 100", "rma", ranks=2,
       libraries=("vmpi", "mpich"), headline=8, timeout=30),
    _b("clping", "clping", "-i 100000", "limit", ranks=1, libraries=("raw",),
       placements=("vm",)),
    _b("memcpy", "memcpy", "-s 65536,1048576,4194304 -i 50", "limit", "bandwidth", ranks=1,
       libraries=("raw",), placements=("vm",)),
    _b("tcp_lat", "tcp_lat", "-m 1:1048576 -i 1000 -x 100", "limit", ranks=2,
       libraries=("raw",), placements=("2host",)),
    _b("tcp_bw", "tcp_bw", "-m 64:4194304 -i 10 -x 2 -W 32", "limit", "bandwidth", ranks=2,
       libraries=("raw",), placements=("2host",)),
    _b("locks", "lockbench", "--lock ticket,spark,oticket,mcs,mutex --duration 0.1 "
       "--threads 1,2,4,8", "locks", "rate", ranks=1, libraries=("vmpi",),
       placements=("vm",)),
) + tuple(_b(a, f"vmpi-{a}", args, "app", "time", ranks=4, timeout=15)
          for a, args in APP_ARGS.items())}
for _bench in CATALOGUE.values():
    _bench.ranks = _bench.ranks or 2


@dataclass
class Study:
    name: str = "default"
    reps: int = 5
    ranks: int | None = None  # overrides the benchmarks' own rank counts (not limits)
    libraries: tuple[str, ...] = LIBRARIES
    placements: tuple[str, ...] = ("vm", "2vm", "2host")
    policies: tuple[str, ...] = POLICIES
    benches: list[Bench] = field(default_factory=list)
    peer_policies: tuple[str, ...] = PEER_POLICIES  # MPICH's and Open MPI's settings
    sched: str = "default"  # every MPI run's scheduling policy: "default" or "rr" (SCHED_RR)

    def check(self) -> None:
        if self.reps < 1:
            raise StudyError("reps must be >= 1")
        if self.ranks is not None and self.ranks < 2:
            raise StudyError("ranks must be >= 2")
        for lib in self.libraries:
            if lib not in LIBRARIES:
                raise StudyError(f"library {lib!r} not one of {LIBRARIES}")
        for pol in self.policies:
            if pol not in POLICIES:
                raise StudyError(f"policy {pol!r} not one of {POLICIES}")
        if "default" not in self.peer_policies or \
                any(p not in PEER_POLICIES for p in self.peer_policies):
            raise StudyError(f"peer_policies {list(self.peer_policies)}: want \"default\" "
                             "and optionally \"yield\"")
        if self.sched not in SCHEDS:
            raise StudyError(f"sched {self.sched!r} not one of {SCHEDS}")
        for p in self.placements:
            Placement.parse(p)
        if not self.benches:
            raise StudyError("the study names no benchmark")
        names = [b.name for b in self.benches]
        if len(set(names)) != len(names):
            raise StudyError("benchmark names must be unique")
        for b in self.benches:
            b.check()

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> Study:
        benches = [Bench(**{**b, "libraries": _tuple(b.get("libraries")),
                            "placements": _tuple(b.get("placements"))})
                   for b in d.get("benches", [])]
        s = cls(name=d["name"], reps=d["reps"], ranks=d.get("ranks"),
                libraries=tuple(d["libraries"]), placements=tuple(d["placements"]),
                policies=tuple(d["policies"]), benches=benches,
                # a study planned before the peers had two settings ran one
                peer_policies=tuple(d.get("peer_policies", ("default",))),
                sched=d.get("sched", "default"))
        s.check()
        return s


def _tuple(v):
    return None if v is None else tuple(v)


DEFAULT_BENCHES = ("latency", "bw", "bibw", "allreduce", "bcast", "put",
                   "clping", "memcpy", "tcp_lat", "tcp_bw", "locks", *APP_ARGS)

# --quick: a smoke run of every part (about a minute): one repetition, few
# sizes and iterations.
QUICK_ARGS = {
    "latency": "-m 8:1024 -i 200 -x 20",
    "bw": "-m 4096:65536 -i 4 -x 1 -W 16",
    "allreduce": "allreduce --sizes 8,1024 -i 10 -x 2",
    "put": "-t put_lat -m 8:64 -i 200 -x 20",
    "clping": "-i 20000",
    "memcpy": "-s 65536 -i 10",
    "tcp_lat": "-m 8:1024 -i 200 -x 20",
    "tcp_bw": "-m 4096:65536 -i 4 -x 1 -W 16",
    "locks": "--lock spark,oticket --duration 0.05 --threads 1,2",
    "stencil": "-n 64 -i 10 -r 2",
}


def default_study() -> Study:
    return Study(benches=[dataclasses.replace(CATALOGUE[n]) for n in DEFAULT_BENCHES])


def quick_study() -> Study:
    benches = []
    for name, args in QUICK_ARGS.items():
        b = dataclasses.replace(CATALOGUE[name], args=args)
        if b.kind in ("coll", "app"):
            b.ranks = 2
        benches.append(b)
    return Study(name="quick", reps=1, benches=benches)


_STUDY_KEYS = {"name", "reps", "ranks", "libraries", "placements", "policies", "benchmarks",
               "bench", "peer_policies", "sched"}
_BENCH_KEYS = {f.name for f in dataclasses.fields(Bench)} - {"name"}


def load_toml(text: str, origin: str = "study file") -> Study:
    """A study from TOML: study keys, ``benchmarks`` (names), ``[bench.NAME]``
    tables that change catalogue entries or define new ones."""
    try:
        d = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise StudyError(f"{origin}: {exc}") from None
    unknown = set(d) - _STUDY_KEYS
    if unknown:
        raise StudyError(f"{origin}: unknown key(s) {', '.join(sorted(unknown))} "
                         f"(known: {', '.join(sorted(_STUDY_KEYS))})")
    tables = d.get("bench", {})
    if not isinstance(tables, dict):
        raise StudyError(f"{origin}: [bench.NAME] must be tables")
    names = d.get("benchmarks", list(DEFAULT_BENCHES))
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise StudyError(f"{origin}: benchmarks must be a list of names")
    benches = []
    for name in names:
        over = tables.get(name, {})
        if not isinstance(over, dict):
            raise StudyError(f"{origin}: [bench.{name}] must be a table")
        bad = set(over) - _BENCH_KEYS
        if bad:
            raise StudyError(f"{origin}: [bench.{name}]: unknown key(s) "
                             f"{', '.join(sorted(bad))} (known: {', '.join(sorted(_BENCH_KEYS))})")
        if name in CATALOGUE:
            base = dataclasses.replace(CATALOGUE[name])
        elif "program" in over:
            base = Bench(name, over["program"], ranks=2)
        else:
            raise StudyError(f"{origin}: benchmark {name!r} is not in the catalogue "
                             f"({', '.join(CATALOGUE)}); define it with [bench.{name}] "
                             "and a program")
        for key, value in over.items():
            if key in ("libraries", "placements"):
                value = tuple(value)
            setattr(base, key, value)
        benches.append(base)
    study = Study(
        name=d.get("name", "custom"), reps=d.get("reps", 5), ranks=d.get("ranks"),
        libraries=tuple(d.get("libraries", LIBRARIES)),
        placements=tuple(d.get("placements", ("vm", "2vm", "2host"))),
        policies=tuple(d.get("policies", POLICIES)), benches=benches,
        peer_policies=tuple(d.get("peer_policies", PEER_POLICIES)),
        sched=d.get("sched", "default"))
    try:
        study.check()
    except StudyError as exc:
        raise StudyError(f"{origin}: {exc}") from None
    return study


@dataclass(frozen=True)
class Config:
    """One combination of the grid, run ``reps`` times."""
    bench: str
    library: str
    placement: str
    policy: str
    ranks: int

    @property
    def key(self) -> str:
        return f"{self.bench}|{self.library}|{self.placement}|{self.policy}|{self.ranks}"

    @property
    def label(self) -> str:
        return series_label(self.library, self.placement, self.policy)


def series_label(library: str, placement: str, policy: str) -> str:
    lab = {"vmpi": "vmpi", "mpich": "MPICH", "openmpi": "Open MPI", "raw": "limit"}[library]
    if library == "vmpi" and policy == "unaware":
        lab += " (smp,ofi)"
    if policy == "yield":
        lab += " (yielding)"
    return f"{lab} · {Placement.parse(placement).label}"


def machine_cores() -> int:
    return os.cpu_count() or 1


def oversubscribed(ranks: int, cores: int) -> bool:
    """More ranks than the machine has cores (emulated VMs and hosts share it)."""
    return ranks > cores


def ranks_on_cores(ranks: int, cores: int, what: str = "rank") -> str:
    return f"{ranks} {what}{'s' if ranks != 1 else ''} on {cores} core{'s' if cores != 1 else ''}"


def skip_reason(b: Bench, lib: str, pl: Placement, policy: str, ranks: int,
                cores: int | None = None) -> str | None:
    """Why a combination cannot exist or is not worth running (None: it runs)."""
    if pl.real and lib != "vmpi":
        return "real QEMU guests run vmpi only (vmpirun --vm-guests serves PMI-1 to its ranks)"
    if pl.real and b.kind in ("limit", "locks"):
        return "physical limits and locks are measured on the machine, not in guests"
    if b.kind == "scale" and lib in PEERS and pl.vms > 1:
        return ("MPICH and Open MPI have no VMs: they run the same rank counts on the "
                "machine (placement vm)")
    if lib == "openmpi" and pl.vms > 1:
        return ("Open MPI cannot start ranks in vmpirun's emulated VMs: its launcher "
                "bootstraps over PMIx, vmpirun serves PMI-1")
    if policy == "unaware" and not pl.shares_host:
        return "smp,ofi picks the same channels as the default when no two VMs share a host"
    if b.kind != "limit" and ranks < pl.hosts * pl.vms:
        return f"{ranks} ranks cannot fill {pl.hosts * pl.vms} VMs"
    cores = cores or machine_cores()
    if policy == "yield" and not oversubscribed(ranks, cores):
        return (f"{ranks_on_cores(ranks, cores)} is not oversubscribed: every rank keeps a "
                "core, so yielding while waiting changes nothing")
    return None


# Programs that always run on exactly two ranks.
TWO_RANK_PROGRAMS = ("latency", "bw", "bibw", "rma")


def grid(study: Study, cores: int | None = None
         ) -> tuple[list[Config], list[tuple[Config, str]]]:
    """The configurations to run on a machine of ``cores`` cores (default:
    this one), and those skipped with the reason."""
    cores = cores or machine_cores()
    run, skipped = [], []
    for b in study.benches:
        libs = b.libraries or study.libraries
        if b.kind != "limit":
            libs = tuple(lib for lib in libs if lib in study.libraries)
        pls = b.placements or study.placements
        for lib in libs:
            vmpi_mpi = lib == "vmpi" and b.kind != "locks"
            policies = (study.policies or ("aware",)) if vmpi_mpi else \
                study.peer_policies if lib in PEERS else ("default",)
            for pname in pls:
                pl = Placement.parse(pname)
                for pol in policies:
                    ranks = b.ranks or 2
                    if study.ranks and b.kind in ("p2p", "coll", "app") \
                            and b.program not in TWO_RANK_PROGRAMS:
                        ranks = study.ranks
                    cfg = Config(b.name, lib, pname, pol, ranks)
                    why = skip_reason(b, lib, pl, pol, cfg.ranks, cores)
                    if why:
                        skipped.append((cfg, why))
                    else:
                        run.append(cfg)
    return run, skipped
