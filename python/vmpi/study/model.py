"""A cost model of vmpi's collectives for placements one machine cannot run.

Channels.  Each channel c (smp, ivshmem, ofi) has LogGP-style parameters
fitted from this machine's point-to-point runs (:func:`fit`):

    L, G    latency and time per byte of one message alone (ping-pong,
            one way): L + m*G.  L is LogGP's L + 2o: the send and receive
            overheads are not separable from ping-pong and window runs.
    g, Gg   gap: the time per message of a stream of back-to-back messages
            (the window bandwidth run), g + m*Gg; g holds LogGP's o.

each pair twice, for eager messages (up to EAGER bytes) and for rendezvous
ones (Lr, Gr, gr, Ggr), fitted by least squares on relative error.  So k
messages a rank sends in a row take one(m) + (k-1)*gap(m).  Memory copies
into and out of the collective slots cost what memcpy costs per byte for
a buffer of that size (measured at 64 KiB to 4 MiB: in cache or not; see
:meth:`Params.copy_us`), and a reduction the same per byte of input (an
assumption: summing floats streams like a copy).

Placements.  H hosts x V VMs x R ranks, ranks in blocks (vmpirun's order).
With vmpi's default (locality-aware) choice a host is one node: its V*R
ranks share the collective slots in the host region, and the node's lowest
rank leads it on the network.  The locality-unaware path is what
``VMPI_CHANNELS=smp,ofi`` with every ``VMPI_COLL_*=flat`` runs: the flat
algorithms over all ranks, every message over smp inside a VM and over ofi
(the virtual NIC) otherwise.  Between the two, vnic (``VMPI_CHANNELS=smp,ofi``
alone): each VM is a node, with its slots inside and its leader on the
virtual NIC.

Algorithms mirror coll/select.c, coll/hier.c, coll/node.c and the flat
algorithms' choice by size and ranks (coll/flat_move.c, flat_reduce.c).
Each is a sequence of rounds; a round's time is that of its slowest
message: the channel of the highest locality level some pair of the round
crosses (exactly so for partners r xor d and r + d in block placements).

Two machines.  ``cores=None``: every rank has its own core (a cluster);
flows leaving a host in one round share its NIC, which one flow fills
(their bytes serialize at ofi's per-byte gap); flows between the VMs of
one host (vnic, unaware) each run at ofi's rate, as measured here, where
the virtual network between VMs is the host's own bridge.  ``cores=C``
(this machine, for validation): all ranks share C cores, so a round costs at least the CPU
work of all its ranks divided by C plus the turns of the ranks that share
a core: one hand-off over the round's channel (``handoff``: the one-way
time of a ping-pong with both ranks on one core, so a waiting rank yields
and the sender runs) and one turn for each further rank of the core. A
turn costs more the more ranks share the core (``turn``: the hop of a
message around a ring of k ranks on one core, bench/ring, at several k):
each comes back to a cache the others have filled, and its progress
engine scans the rings of all its peers.  Every round is one such step for every rank, which waits in the
collective whether or not it has a message in that round; except the node
broadcast's, whose readers find the root's data already published.

The model predicts the time of one call from a common start; bench/coll
reports the average over ranks of each rank's own call time, which is at
most that.  Nothing of the collectives' measurements goes into the fit.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

CHANNELS = ("smp", "ivshmem", "ofi")
LEVELS = ("smp", "ivshmem", "ofi")   # same VM, same host, other host
SLOT_HALF = 256 * 1024               # shm/cslot.h VMPI_CSLOT_HALF
NODE_SLICE_MIN = 4096                # coll/node.c
EAGER = 8192                         # VMPI_SMP_EAGER_MAX, VMPI_IVSHMEM_EAGER_MAX
# coll/flat_move.c and coll/flat_reduce.c thresholds (bytes)
BCAST_LONG = 128 * 1024
GATHER_SHORT = 4096
ALLGATHER_SHORT = 80 * 1024
ALLGATHER_LONG = 512 * 1024
ALLTOALL_SHORT = 256
ALLTOALL_MEDIUM = 32 * 1024
ALLREDUCE_SMALL = 8 * 1024
ALLREDUCE_RING_MIN = 1 << 20
REDUCE_LARGE = 8 * 1024
FLOAT = 4                            # bench/coll reduces MPI_FLOATs
COLLECTIVES = ("barrier", "bcast", "reduce", "allreduce", "gather", "scatter",
               "allgather", "alltoall")


@dataclass
class Chan:
    """LogGP with a protocol switch: messages up to EAGER bytes go eagerly,
    larger ones by rendezvous, each regime with its own line."""
    L: float      # us, one eager message alone: L + m*G
    G: float      # us per byte
    Lr: float     # us, one rendezvous message alone: Lr + m*Gr
    Gr: float
    g: float      # us per message in a stream, eager: g + m*Gg
    Gg: float
    gr: float     # the same, rendezvous: gr + m*Ggr
    Ggr: float

    def one(self, m: float) -> float:
        return self.L + m * self.G if m <= EAGER else self.Lr + m * self.Gr

    def gap(self, m: float) -> float:
        return self.g + m * self.Gg if m <= EAGER else self.gr + m * self.Ggr

    def burst(self, k: int, m: float) -> float:
        """k messages of m bytes sent in a row, until the last arrives."""
        if k <= 0:
            return 0.0
        return self.one(m) + (k - 1) * self.gap(m)

    def cpu(self, m: float) -> float:
        """CPU time one message costs its two ranks together: at least its
        gap (a stream runs at the pace of the busier side)."""
        return self.gap(m)


@dataclass
class Params:
    chans: dict            # name -> Chan
    handoff: dict          # name -> us, see the module text
    copy: dict             # buffer bytes -> us per byte of memcpy
    turn: dict = field(default_factory=dict)  # ranks on one core -> us a turn

    def turn_at(self, k: float) -> float:
        """A turn's cost with k ranks on one core: linear between the
        measured counts, and beyond the largest the last segment's line
        (the scan of the peers' rings grows with k) but never below the
        largest count's; the smp hand-off when none was measured."""
        if not self.turn:
            return self.handoff.get("smp", 0.0)
        ks = sorted(self.turn)
        if k <= ks[0] or len(ks) == 1:
            return self.turn[ks[0]]
        lo = next((i for i in range(len(ks) - 1) if k <= ks[i + 1]), len(ks) - 2)
        a, b = ks[lo], ks[lo + 1]
        t = self.turn[a] + (k - a) * (self.turn[b] - self.turn[a]) / (b - a)
        return max(t, self.turn[b]) if k > b else t

    def copy_us(self, nbytes: float) -> float:
        """Time to copy nbytes: the per-byte cost of the smallest measured
        buffer at least that large (the largest one's beyond)."""
        if nbytes <= 0:
            return 0.0
        sizes = sorted(self.copy)
        size = next((s for s in sizes if s >= nbytes), sizes[-1])
        return nbytes * self.copy[size]

    def to_json(self) -> dict:
        return {"channels": {k: asdict(v) for k, v in self.chans.items()},
                "handoff_us": self.handoff,
                "copy_us_per_byte": {str(k): v for k, v in self.copy.items()},
                "turn_us": {str(k): v for k, v in self.turn.items()}}

    @staticmethod
    def from_json(doc: dict) -> "Params":
        return Params({k: Chan(**v) for k, v in doc["channels"].items()}, doc["handoff_us"],
                      {int(k): v for k, v in doc["copy_us_per_byte"].items()},
                      {int(k): v for k, v in doc.get("turn_us", {}).items()})


# ---- fitting -----------------------------------------------------------------

def fit_line(points: dict) -> tuple[float, float]:
    """Least squares a + b*x over {x: y}, each point weighted by 1/y^2 so
    that small and large sizes count alike (relative error); a, b >= 0."""
    xs = [(float(x), float(y)) for x, y in points.items() if y and y > 0]
    if len(xs) < 2:
        raise ValueError("need two sizes to fit a line")
    sw = swx = swy = swxx = swxy = 0.0
    for x, y in xs:
        w = 1.0 / (y * y)
        sw += w
        swx += w * x
        swy += w * y
        swxx += w * x * x
        swxy += w * x * y
    det = sw * swxx - swx * swx
    b = (sw * swxy - swx * swy) / det if det else 0.0
    b = max(b, 0.0)
    a = max((swy - b * swx) / sw, 0.0)
    return a, b


def fit(data: dict) -> Params:
    """Params from {channel: {"latency": {size: one-way us},
    "gap": {size: us per message in a window}}}, data["handoff-" + channel]
    ["latency"] (the one-core ping-pong), data["copy"]["gap"] (memcpy:
    {size: us}) and data["turns"]["latency"] (the one-core ring: {ranks:
    us a hop}, optional)."""
    chans, hand = {}, {}
    for c in CHANNELS:
        if c not in data:
            raise ValueError(f"no measurements of channel {c}")
        lat, gap = data[c]["latency"], data[c]["gap"]
        L, G = fit_line({m: t for m, t in lat.items() if m <= EAGER})
        Lr, Gr = fit_line({m: t for m, t in lat.items() if m > EAGER})
        g, Gg = fit_line({m: t for m, t in gap.items() if m <= EAGER})
        gr, Ggr = fit_line({m: t for m, t in gap.items() if m > EAGER})
        chans[c] = Chan(L, G, Lr, Gr, g, Gg, gr, Ggr)
        h = data.get("handoff-" + c, {}).get("latency", {})
        if not h:
            raise ValueError(f"no hand-off measured for channel {c}")
        hand[c] = min(h.values())
    cp = data.get("copy", {}).get("gap", {})
    copy = {int(s): t / s for s, t in cp.items()} if cp else {1 << 20: chans["smp"].Ggr}
    turn = {int(k): t for k, t in data.get("turns", {}).get("latency", {}).items()}
    return Params(chans, hand, copy, turn)


# ---- placements and rounds ---------------------------------------------------

@dataclass(frozen=True)
class Placement:
    hosts: int
    vms: int      # per host
    ranks: int    # per VM

    @property
    def n(self) -> int:
        return self.hosts * self.vms * self.ranks

    def label(self) -> str:
        return f"{self.hosts} x {self.vms} x {self.ranks}"


@dataclass
class Round:
    chan: str           # the slowest channel of the round
    nbytes: float       # bytes per message
    k: int = 1          # messages a rank sends in a row
    local: float = 0.0  # bytes a rank copies or reduces locally
    active: int = 0     # ranks that send in the round (CPU work)
    nic: int = 0        # flows leaving one host in the round
    sync: bool = True   # every rank waits for another rank's part
    hops: int = 1       # latencies in a row: a slot step reads the flag, then the data


def _chan_of_level(level: int, aware: bool) -> str:
    if level == 0:
        return "smp"
    if level == 1 and aware:
        return "ivshmem"
    return "ofi"


class View:
    """The ranks a flat algorithm runs on: ``p`` ranks in groups of
    ``groups`` (sizes of the VM and host blocks, in ranks of the view)."""

    def __init__(self, p: int, groups: tuple[int, int], aware: bool, per_host: int):
        self.p = p
        self.groups = groups
        self.aware = aware
        self.per_host = per_host   # ranks of the view on one host

    def level_xor(self, d: int) -> int:
        """Highest level crossed by pairs (r, r xor d): a pair stays in a
        group when the group is a whole number of aligned 2d blocks."""
        for lv, s in enumerate(self.groups):
            if s % (2 * d) == 0:
                return lv
        return 2 if self.groups[1] < self.p else (1 if self.groups[0] < self.p else 0)

    def level_plus(self, d: int) -> int:
        """Highest level crossed by pairs (r, r + d mod p), 0 < d < p."""
        if self.groups[1] < self.p:
            return 2
        return 1 if self.groups[0] < self.p else 0

    def chan(self, level: int) -> str:
        return _chan_of_level(level, self.aware)

    def _nic(self, level: int, senders: int) -> int:
        """Flows through one host's NIC: the messages of its ranks to other
        hosts, senders spread evenly over the hosts."""
        if level < 2:
            return 0
        return max(1, min(self.per_host, math.ceil(senders * self.per_host / self.p)))

    def r_xor(self, d: int, nbytes: float, local: float = 0.0, active: int | None = None) -> Round:
        act = self.p if active is None else active
        lv = self.level_xor(d)
        return Round(self.chan(lv), nbytes, 1, local, act, self._nic(lv, act))

    def r_plus(self, d: int, nbytes: float, k: int = 1, local: float = 0.0) -> Round:
        """Every rank sends k messages to partners d apart: of a host's
        ranks, min(d, p - d) have their partner on another host."""
        lv = self.level_plus(d)
        flows = max(1, min(d, self.p - d, self.per_host)) if lv == 2 else 0
        return Round(self.chan(lv), nbytes, k, local, self.p, flows)


def full_view(pl: Placement, aware: bool) -> View:
    return View(pl.n, (pl.ranks, pl.vms * pl.ranks), aware, pl.vms * pl.ranks)


def _log2(p: int) -> int:
    return max(0, math.ceil(math.log2(p))) if p > 1 else 0


def _pof2(p: int) -> int:
    return 1 << (p.bit_length() - 1)


# ---- flat algorithms (coll/flat_move.c, coll/flat_reduce.c) ------------------

def flat_barrier(v: View, m: int = 0) -> list[Round]:
    return [v.r_plus(1 << k, 0) for k in range(_log2(v.p))]


def flat_bcast(v: View, m: int) -> list[Round]:
    p = v.p
    if p == 1:
        return []
    if m >= BCAST_LONG and p >= 3:
        out = [v.r_xor(1 << k, m / (2 << (_log2(p) - 1 - k)), active=1 << k)
               for k in range(_log2(p))]
        return out + [v.r_plus(1, m / p) for _ in range(p - 1)]
    # binomial from the root: the biggest distance first
    return [v.r_xor(1 << k, m, active=1 << (_log2(p) - 1 - k))
            for k in reversed(range(_log2(p)))]


def _fold(v: View, m: float) -> list[Round]:
    """The non-power-of-two fold in and out (ranks 2i, 2i + 1)."""
    if v.p == _pof2(v.p):
        return []
    return [v.r_xor(1, m, local=m, active=v.p - _pof2(v.p))]


def flat_allreduce(v: View, m: int) -> list[Round]:
    p, q = v.p, _pof2(v.p)
    if p == 1:
        return []
    count = m // FLOAT
    if m < ALLREDUCE_SMALL or count < q:
        return _fold(v, m) + [v.r_xor(1 << k, m, local=m) for k in range(_log2(q))] + \
            _fold(v, m)
    if q != p and m >= ALLREDUCE_RING_MIN:
        return [v.r_plus(1, m / p, local=m / p) for _ in range(p - 1)] + \
            [v.r_plus(1, m / p) for _ in range(p - 1)]
    lg = _log2(q)
    rs = [v.r_xor(q >> (k + 1), m / (2 << k), local=m / (2 << k)) for k in range(lg)]
    ag = [v.r_xor(1 << k, m / q * (1 << k)) for k in range(lg)]
    return _fold(v, m) + rs + ag + _fold(v, m)


def flat_reduce(v: View, m: int) -> list[Round]:
    p, q = v.p, _pof2(v.p)
    if p == 1:
        return []
    if m >= REDUCE_LARGE and m // FLOAT >= q:
        lg = _log2(q)
        rs = [v.r_xor(q >> (k + 1), m / (2 << k), local=m / (2 << k)) for k in range(lg)]
        ga = [v.r_xor(1 << k, m / q * (1 << k), active=q >> (k + 1)) for k in range(lg)]
        return _fold(v, m) + rs + ga
    return [v.r_xor(1 << k, m, local=m, active=p >> (k + 1)) for k in range(_log2(p))]


def flat_gather(v: View, m: int) -> list[Round]:
    p = v.p
    if p == 1:
        return []
    if m < GATHER_SHORT and p > 2:
        return [v.r_xor(1 << k, m * (1 << k), active=p >> (k + 1)) for k in range(_log2(p))]
    # linear: the root takes p - 1 messages, from every level
    return [Round(v.chan(v.level_plus(1)), m, p - 1, 0.0, p, 1 if v.level_plus(1) == 2 else 0)]


flat_scatter = flat_gather


def flat_allgather(v: View, m: int) -> list[Round]:
    p = v.p
    if p == 1:
        return []
    pof2 = p == _pof2(p)
    if pof2 and p * m < ALLGATHER_LONG:
        return [v.r_xor(1 << k, m * (1 << k)) for k in range(_log2(p))]
    if p * m < ALLGATHER_SHORT:
        return [v.r_plus(1 << k, m * min(1 << k, p - (1 << k))) for k in range(_log2(p))]
    return [v.r_plus(1, m) for _ in range(p - 1)]


def flat_alltoall(v: View, m: int) -> list[Round]:
    p = v.p
    if p == 1:
        return []
    if m <= ALLTOALL_SHORT and p >= 8:
        # each step packs, sends and unpacks about half the blocks
        return [v.r_plus(1 << k, m * p / 2, local=m * p) for k in range(_log2(p))]
    if m <= ALLTOALL_MEDIUM:
        return [v.r_plus(1, m, k=p - 1)]
    return [v.r_plus(s, m) for s in range(1, p)]


FLAT = {"barrier": flat_barrier, "bcast": flat_bcast, "reduce": flat_reduce,
        "allreduce": flat_allreduce, "gather": flat_gather, "scatter": flat_scatter,
        "allgather": flat_allgather, "alltoall": flat_alltoall}


# ---- node collectives through the slots (coll/node.c) ------------------------

def _node_chan(pl: Placement) -> str:
    """Flags and copies go through the VM's segment or the host region;
    the flag's cache line crosses VMs when the node has several."""
    return "ivshmem" if pl.vms > 1 else "smp"


def _chunks(m: float) -> int:
    return max(1, math.ceil(m / SLOT_HALF))


def node_rounds(coll: str, pl: Placement, m: int) -> list[Round]:
    """One node's part; a Round's ``local`` is the bytes a rank copies or
    reduces, ``k`` the flags the busiest rank reads."""
    n = pl.vms * pl.ranks
    c = _node_chan(pl)
    if n == 1:
        return []
    if coll == "barrier":
        return [Round(c, 0, n - 1, 0.0, n), Round(c, 0, 1, 0.0, n)]
    if coll == "bcast":
        # the readers wait for the root alone, which publishes as soon as
        # it enters: in bench/coll it leaves the barrier first (its leader)
        return [Round(c, 0, 1, 2 * min(m, SLOT_HALF), n, sync=False, hops=2)
                for _ in range(_chunks(m))]
    if coll in ("reduce", "allreduce"):
        out = []
        for _ in range(_chunks(m)):
            b = min(m, SLOT_HALF)
            if b <= NODE_SLICE_MIN:
                out.append(Round(c, 0, n - 1, b + n * b, n, hops=2))
            else:
                out += [Round(c, 0, n - 1, b + b, n, hops=2), Round(c, 0, n - 1, b, n, hops=2)]
        return out
    if coll in ("gather", "scatter"):
        return [Round(c, 0, n - 1, m + (n - 1) * m / n, n, hops=2)]
    if coll == "allgather":
        return [Round(c, 0, n - 1, m + n * m, n, hops=2)]
    if coll == "alltoall":
        steps = max(1, math.ceil(n * m / SLOT_HALF))
        return [Round(c, 0, n - 1, 2 * n * m / steps, n, hops=2) for _ in range(steps)]
    raise ValueError(coll)


# ---- the two paths -----------------------------------------------------------

def rounds(coll: str, pl: Placement, m: int, aware: bool, vnic: bool = False) -> list[Round]:
    """The rounds of one call at placement pl (coll/select.c's choice):
    aware, vmpi's default; vnic (with aware), ``VMPI_CHANNELS=smp,ofi``
    alone: every VM a node of its own, its leader on the virtual NIC;
    not aware, the flat algorithms over smp and ofi."""
    if coll not in COLLECTIVES:
        raise ValueError(f"unknown collective {coll}")
    if pl.n == 1:
        return []
    if not aware:
        return FLAT[coll](full_view(pl, False), m)
    nodes = pl.hosts * pl.vms if vnic else pl.hosts
    one = Placement(1, 1, pl.ranks) if vnic else Placement(1, pl.vms, pl.ranks)
    if nodes == 1:
        return node_rounds(coll, one, m)
    # several nodes: the data-movement ones without a hierarchical version
    # run flat over every rank (select.c: one_node is NULL)
    if coll in ("allgather", "alltoall", "gather", "scatter"):
        return FLAT[coll](full_view(pl, not vnic), m)
    # the leaders: one a host, or (vnic) one a VM, a host's VMs sharing its NIC
    lv = View(nodes, (1, pl.vms), False, pl.vms) if vnic else View(nodes, (1, 1), True, 1)

    def node(c: str, size: int) -> list[Round]:
        return node_rounds(c, one, size)
    if coll == "barrier":
        return node("barrier", 0)[:1] + flat_barrier(lv) + node("barrier", 0)[1:]
    if coll == "bcast":
        return node("bcast", m) + flat_bcast(lv, m) + node("bcast", m)
    if coll == "reduce":
        return node("reduce", m) + flat_reduce(lv, m)
    return node("reduce", m) + flat_allreduce(lv, m) + node("bcast", m)


def round_time(r: Round, prm: Params, n_all: int, cores: int | None) -> float:
    ch = prm.chans[r.chan]
    copy = prm.copy_us(r.local)
    t = ch.burst(r.k, r.nbytes) + (r.hops - 1) * ch.L
    t += copy
    if cores is None:
        if r.nic > 1 and r.chan == "ofi":
            # the NIC carries the bytes of all flows; each sender's own
            # per-message cost is already in t
            ofi = prm.chans["ofi"]
            per_byte = ofi.Gg if r.nbytes <= EAGER else ofi.Ggr
            t = max(t, ofi.one(r.nbytes) + (r.nic * r.k - 1) * r.nbytes * per_byte)
        return t
    if n_all <= cores:
        return t
    if r.nbytes == 0 and r.k > 1:
        work = r.active * (ch.L + copy)
    else:
        work = r.active * (r.k * ch.cpu(r.nbytes) + copy)
    # one hand-off over the round's channel, and one turn of each further
    # rank that shares the core
    per_core = n_all / cores
    turns = prm.handoff[r.chan] * min(1.0, per_core - 1) + \
        max(0.0, per_core - 2) * prm.turn_at(per_core) if r.sync else 0.0
    return max(t, work / cores + turns)


def predict(coll: str, pl: Placement, m: int, aware: bool, prm: Params,
            cores: int | None = None, vnic: bool = False) -> float:
    """Predicted time of one call in us."""
    if coll == "barrier":
        m = 0
    return sum(round_time(r, prm, pl.n, cores) for r in rounds(coll, pl, m, aware, vnic))


POLICIES = ("aware", "vnic", "unaware")


def predict_policy(coll: str, pl: Placement, m: int, policy: str, prm: Params,
                   cores: int | None = None) -> float:
    """aware, vnic or unaware (see :func:`rounds`; unaware is vnic's
    channels with every ``VMPI_COLL_*=flat``)."""
    if policy == "vnic":
        return predict(coll, pl, m, True, prm, cores, vnic=True)
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy}")
    return predict(coll, pl, m, policy == "aware", prm, cores)


# ---- validation and predictions ---------------------------------------------

# Where the model is published: the seeds' scales and a big cluster.
TARGETS = (Placement(1, 4, 4), Placement(1, 16, 4), Placement(4, 4, 4),
           Placement(64, 8, 4), Placement(1024, 8, 4))
TARGET_COLLS = ("barrier", "bcast", "allreduce", "allgather", "alltoall")
TARGET_SIZES = (8, 65536)


def placement_of(row: dict) -> Placement:
    hosts, vms = row["hosts"], row["vms"]
    return Placement(hosts, vms, row["ranks"] // (hosts * vms))


def validate(prm: Params, measured: list[dict], cores: int = 2) -> tuple[list, list]:
    """Each measured row with its prediction on ``cores`` cores and the
    error; and the errors summed up by collective and ranks."""
    rows = []
    for r in measured:
        pred = predict_policy(r["coll"], placement_of(r), r["size"], r["policy"], prm, cores)
        rows.append({**r, "predicted_us": pred,
                     "error_pct": 100.0 * (pred - r["us"]) / r["us"] if r["us"] else None})
    errs: dict = {}
    for r in rows:
        if r["error_pct"] is not None:
            errs.setdefault((r["coll"], r["ranks"]), []).append(abs(r["error_pct"]))
    by_scale = [{"coll": c, "ranks": n, "cases": len(v), "median_abs_pct": _median(v),
                 "max_abs_pct": max(v), "within_25pct": sum(1 for e in v if e <= 25)}
                for (c, n), v in sorted(errs.items())]
    return rows, by_scale


def evaluate(prm: Params, measured: list[dict], reference: list[dict] | None = None,
             cores: int = 2) -> dict:
    """The validation against this run's measurements and against the
    reference (earlier, quieter runs of the same benchmark), and the
    predictions (one core per rank) with, as error bar, the largest error
    of that collective in the reference at 4 and 16 ranks (where those
    runs were least dominated by oversubscription), else in this run."""
    rows, by_scale = validate(prm, measured, cores)
    ref_rows, ref_scale = validate(prm, reference or [], cores)
    bars: dict = {}
    for e in (ref_scale if ref_scale else by_scale):
        if e["ranks"] <= 16:
            bars[e["coll"]] = max(bars.get(e["coll"], 0.0), e["max_abs_pct"])
    preds = []
    for pl in TARGETS:
        for coll in TARGET_COLLS:
            for m in ((0,) if coll == "barrier" else TARGET_SIZES):
                t = {pol: predict_policy(coll, pl, m, pol, prm) for pol in POLICIES}
                preds.append({"placement": pl.label(), "ranks": pl.n, "coll": coll,
                              "size": m, **{f"{pol}_us": v for pol, v in t.items()},
                              "error_bar_pct": bars.get(coll)})
    return {"params": prm.to_json(), "cores": cores, "validation": rows, "errors": by_scale,
            "reference": ref_rows, "reference_errors": ref_scale, "error_bar_pct": bars,
            "within_25pct": sum(1 for r in rows if r["error_pct"] is not None
                                and abs(r["error_pct"]) <= 25),
            "predictions": preds}


def _median(v: list[float]) -> float:
    s = sorted(v)
    return (s[len(s) // 2] + s[(len(s) - 1) // 2]) / 2


def _us(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:.3g}" if v < 1000 else f"{v:.0f}"


def _validation_md(rows: list[dict], errors: list[dict], title: str, cores: int) -> list[str]:
    if not rows:
        return []
    within = sum(1 for r in rows if r["error_pct"] is not None and abs(r["error_pct"]) <= 25)
    out = [f"Validation against {title} ({len(rows)} cases, {within} within 25 %; "
           "measured: the least disturbed of the repetitions, median in parentheses "
           "where there were several):", "",
           "| ranks | hosts x VMs | path | collective | small: measured | predicted | "
           "error | 64 KiB: measured | predicted | error |",
           "| ---: | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    cells: dict = {}
    for r in rows:
        key = (r["ranks"], r["hosts"], r["vms"], r["policy"], r["coll"])
        err = "-" if r["error_pct"] is None else f"{r['error_pct']:+.0f} %"
        med = f" ({_us(r['median_us'])})" if r.get("reps", 1) > 1 else ""
        cells.setdefault(key, {})[r["size"] > 4096] = \
            f"{_us(r['us'])}{med} | {_us(r['predicted_us'])} | {err}"
    for key, c in cells.items():
        n, h, v, pol, coll = key
        out.append(f"| {n} | {h} x {v} | {pol} | {coll} | {c.get(False, '| |')} | "
                   f"{c.get(True, '| |')} |")
    out += ["", f"Error by collective and ranks, {title} (|predicted - measured| / measured; "
            f"{cores} cores):", "",
            "| collective | ranks | cases | within 25 % | median error | largest error |",
            "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for e in errors:
        out.append(f"| {e['coll']} | {e['ranks']} | {e['cases']} | {e['within_25pct']} | "
                   f"{e['median_abs_pct']:.0f} % | {e['max_abs_pct']:.0f} % |")
    return out + [""]


def format_markdown(doc: dict) -> str:
    out = [f"Channel parameters (us; per byte in ns; eager up to {EAGER} bytes, "
           "rendezvous above):", "",
           "| channel | L | G | g | g per byte | L rdv | G rdv | g rdv | g rdv per byte |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for c, p in doc["params"]["channels"].items():
        out.append(f"| {c} | {p['L']:.3g} | {p['G'] * 1e3:.3g} | {p['g']:.3g} | "
                   f"{p['Gg'] * 1e3:.3g} | {p['Lr']:.3g} | {p['Gr'] * 1e3:.3g} | "
                   f"{p['gr']:.3g} | {p['Ggr'] * 1e3:.3g} |")
    hand = ", ".join(f"{c} {v:.3g}" for c, v in doc["params"]["handoff_us"].items())
    out += ["", f"Hand-off (ping-pong with both ranks on one core, one way, us): {hand}; "
            "memcpy " + ", ".join(f"{int(k) >> 10} KiB {v * 1e6:.3g} us/MB" for k, v in
                                  sorted(doc["params"]["copy_us_per_byte"].items(),
                                         key=lambda kv: int(kv[0])))]
    if doc.get("sched") == "rr":
        out[-1] += "; the hand-offs, turns and collectives ran round-robin (--sched rr)"
    turn = doc["params"].get("turn_us", {})
    if turn:
        out[-1] += "; a turn with k ranks on one core (a ring's hop, us): " + ", ".join(
            f"{k} {v:.3g}" for k, v in sorted(turn.items(), key=lambda kv: int(kv[0])))
    out.append("")
    for rows, errors, title in (("validation", "errors", "this run"),
                                ("reference", "reference_errors", "the reference runs")):
        out += _validation_md(doc[rows], doc[errors], title, doc["cores"])
    out += [f"Predictions, one core per rank (us; error bar: the largest error of that "
            "collective in the reference runs at 4 and 16 ranks):", "",
            "| hosts x VMs x ranks | ranks | collective | size | aware | vnic | unaware | "
            "vnic / aware | unaware / aware | error bar |",
            "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for p in doc["predictions"]:
        bar = "-" if p["error_bar_pct"] is None else f"±{p['error_bar_pct']:.0f} %"
        a = p["aware_us"]
        out.append(f"| {p['placement']} | {p['ranks']} | {p['coll']} | {p['size']} | "
                   f"{_us(a)} | {_us(p['vnic_us'])} | {_us(p['unaware_us'])} | "
                   f"{p['vnic_us'] / a:.2f} | {p['unaware_us'] / a:.2f} | {bar} |")
    return "\n".join(out)
