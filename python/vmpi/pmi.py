"""PMI-1 wire-protocol server (the side vmpirun plays for its ranks).

The protocol is line oriented: a client writes ``cmd=NAME key=value ...\\n``
and, for every command except ``abort``, reads one reply line.  The reply
formats below are the ones Hydra (MPICH 4.0's ``hydra_pmi_proxy``) sends,
checked against Debian's ``mpiexec.hydra`` 4.0.2, so one client library
works under both launchers:

=====================================  ==========================================================
query                                  reply
=====================================  ==========================================================
cmd=init pmi_version=1 pmi_subversion=1  cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0
cmd=get_maxes                          cmd=maxes rc=0 kvsname_max=256 keylen_max=256 vallen_max=1024
cmd=get_appnum                         cmd=appnum appnum=0
cmd=get_my_kvsname                     cmd=my_kvsname kvsname=NAME
cmd=get_universe_size                  cmd=universe_size size=N
cmd=put kvsname=K key=X value=Y        cmd=put_result rc=0 msg=success
cmd=get kvsname=K key=X                cmd=get_result rc=0 msg=success value=Y
                                       cmd=get_result rc=-1 msg=key_X_not_found value=unknown
cmd=barrier_in                         cmd=barrier_out            (to every rank, once all are in)
cmd=finalize                           cmd=finalize_ack
cmd=abort exitcode=E [message=...]     (no reply; the launcher tears the job down)
cmd=publish_name service=S port=P      cmd=publish_result rc=0
                                       cmd=publish_result rc=1 msg=service_S_is_already_published
cmd=unpublish_name service=S           cmd=unpublish_result rc=0
                                       cmd=unpublish_result rc=1 msg=service_S_is_not_published
cmd=lookup_name service=S              cmd=lookup_result rc=0 port=P
                                       cmd=lookup_result rc=1 msg=service_S_is_not_published
mcmd=spawn ... endcmd (see below)      cmd=spawn_result rc=0
                                       cmd=spawn_result rc=1 msg=WHY
=====================================  ==========================================================

An error message (``msg``) joins its words with underscores (see
:func:`escape_msg`).

``PMI_Spawn_multiple`` sends one block of ``key=value`` lines per program,
each block starting ``mcmd=spawn`` and ending ``endcmd``; a value runs to
the end of its line (backslash escapes read as MPICH reads them).  Both
layouts MPICH's clients send are accepted, in any order within a block:

* the classic simple PMI: ``nprocs``, ``execname``, ``totspawns``,
  ``spawnssofar``, ``arg1``..``argN`` (1-based), ``argcnt``, ``preput_num``
  and ``preput_key_i``/``preput_val_i`` (0-based, repeated in every block),
  ``info_num`` and ``info_key_i``/``info_val_i``;
* PMI-1.1 (``pmi-1.1.txt``): the same, with ``infonum`` for ``info_num`` and
  the preput pairs in the first block only.

The request is complete after ``totspawns`` blocks; the server then hands
it to the launcher (:class:`Spawn`), which starts the new job and answers
through :meth:`PMIServer.spawn_reply`.  A server made without
``spawn=True`` refuses spawns itself (``rc=-1 msg=spawn_not_supported``).

Names (``publish_name``) live in a dictionary the launcher may share among
the servers of all its jobs: one name space per launcher.

This module does no I/O: :class:`PMIServer` consumes the bytes read from a
rank's socket and returns the replies to write and the events the launcher
must act on, which keeps it testable without processes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = [
    "KVSNAME_MAX",
    "KEYLEN_MAX",
    "VALLEN_MAX",
    "MAX_LINE",
    "parse_command",
    "Reply",
    "Abort",
    "Initialized",
    "Finalized",
    "ProtocolError",
    "Spawn",
    "SpawnBlock",
    "PMIServer",
    "escape_msg",
    "process_mapping",
    "process_mapping_of",
]

KVSNAME_MAX = 256
KEYLEN_MAX = 256
VALLEN_MAX = 1024
# A line longer than this is a protocol error (the client is not speaking
# PMI-1 or is corrupt); it protects the launcher from unbounded buffering.
MAX_LINE = 64 * 1024

# A value ends at a space followed by the next "key=" (keys use the same
# character set as MPICH's wire parser); a backslash escapes the next
# character.  This keeps values that contain spaces (abort messages, an
# unescaped put value) whole, as long as they do not contain " word=".
_KEY_RE = re.compile(r"[A-Za-z0-9_\-/]+")
_NEXT_TOKEN_RE = re.compile(r" +(?=[A-Za-z0-9_\-/]+=)")

# For these commands the named attribute takes the rest of the line verbatim.
_REST_OF_LINE = {"abort": "message"}

# A spawn request larger than this many lines is not a client's (every
# argument, info and preput pair is a line): protocol error.
MAX_SPAWN_LINES = 1 << 16


def escape_msg(text: str) -> str:
    """An error message as a reply's value: words joined by underscores, as
    Hydra's (``key_already_present``), since MPICH 4.0's simple PMI client
    (Debian's libmpich) fails on a reply with a space even where escaped."""
    return "_".join(text.split())


def _unescape(value: str) -> str:
    """A backslash stands for the character after it (MPICH's unescape_val)."""
    if "\\" not in value:
        return value
    out = []
    i, n = 0, len(value)
    while i < n:
        if value[i] == "\\" and i + 1 < n:
            out.append(value[i + 1])
            i += 2
        else:
            out.append(value[i])
            i += 1
    return "".join(out)


def _split_value(text: str, pos: int) -> int:
    """Return the index where the value starting at ``pos`` ends."""
    i = pos
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n:
            i += 2
            continue
        if c == " " and _NEXT_TOKEN_RE.match(text, i):
            return i
        i += 1
    return n


def parse_command(line: str) -> tuple[str, dict[str, str]]:
    """Parse one PMI-1 line (without its newline) into ``(cmd, attrs)``.

    Values are returned verbatim (escapes are not interpreted), so whatever a
    client stores with ``put`` it gets back byte for byte with ``get``.
    Raises :class:`ValueError` when the line is not a PMI-1 command.
    """
    line = line.rstrip("\r\n")
    if not line.startswith("cmd="):
        raise ValueError("expected 'cmd=' at the start of the line")
    attrs: dict[str, str] = {}
    cmd = ""
    pos = 0
    n = len(line)
    first = True
    while pos < n:
        while pos < n and line[pos] == " ":
            pos += 1
        if pos >= n:
            break
        m = _KEY_RE.match(line, pos)
        if not m:
            raise ValueError(f"expected a key at column {pos}: {line[pos:pos + 20]!r}")
        key = m.group(0)
        pos = m.end()
        if pos < n and line[pos] == "=":
            pos += 1
            if first:
                # the command name ends at the first space
                end = line.find(" ", pos)
                end = n if end < 0 else end
                value = line[pos:end]
            elif _REST_OF_LINE.get(cmd) == key:
                end = n
                value = line[pos:].rstrip(" ")
            else:
                end = _split_value(line, pos)
                value = line[pos:end]
            pos = end
        elif pos >= n or line[pos] == " ":
            value = ""
        else:
            raise ValueError(f"invalid character after key {key!r}: {line[pos]!r}")
        if first:
            if key != "cmd" or not value:
                raise ValueError("expected 'cmd=NAME'")
            cmd = value
            first = False
        else:
            attrs.setdefault(key, value)
    if first:
        raise ValueError("empty command")
    return cmd, attrs


# --- events returned to the launcher -------------------------------------


@dataclass
class Reply:
    """Bytes to write to ``rank``'s PMI socket."""

    rank: int
    data: bytes


@dataclass
class Initialized:
    rank: int


@dataclass
class Finalized:
    rank: int


@dataclass
class Abort:
    rank: int
    exitcode: int
    message: str


@dataclass
class ProtocolError:
    rank: int
    text: str


@dataclass
class SpawnBlock:
    """One program of a spawn request (one ``mcmd=spawn`` block)."""

    execname: str
    nprocs: int
    args: list[str]
    info: list[tuple[str, str]]


@dataclass
class Spawn:
    """``rank`` asks for a new job of ``blocks``, whose KVS starts with
    ``preput``; the launcher answers with :meth:`PMIServer.spawn_reply`."""

    rank: int
    blocks: list[SpawnBlock]
    preput: dict[str, str]


@dataclass
class _Conn:
    buf: bytearray = field(default_factory=bytearray)
    initialized: bool = False
    finalized: bool = False
    in_barrier: bool = False
    # the blocks of a spawn request being read: one dict per block
    mcmd: list[dict[str, str]] | None = None
    mcmd_lines: int = 0
    mcmd_open: bool = False     # inside a block (after mcmd=spawn, before endcmd)


def process_mapping_of(node_of: list[int]) -> str:
    """MPICH's vector form of a placement (the node of each rank): runs of
    (first node, nodes, ranks per node), each node's ranks consecutive."""
    blocks: list[list[int]] = []        # [node, ranks] of consecutive ranks
    for node in node_of:
        if blocks and blocks[-1][0] == node:
            blocks[-1][1] += 1
        else:
            blocks.append([node, 1])
    runs: list[list[int]] = []
    for node, n in blocks:
        if runs and runs[-1][2] == n and runs[-1][0] + runs[-1][1] == node:
            runs[-1][1] += 1
        else:
            runs.append([node, 1, n])
    return "(vector," + ",".join(f"({a},{b},{c})" for a, b, c in runs) + ")"


def process_mapping(node_sizes: list[int]) -> str:
    """The vector form for ranks placed in blocks, ``node_sizes`` ranks on
    each node in turn (a node without ranks takes no node number)."""
    sizes = [n for n in node_sizes if n]
    return process_mapping_of([i for i, n in enumerate(sizes) for _ in range(n)])


def _count(block: dict[str, str], key: str, what: str) -> int:
    """A block's non-negative count ``key`` (absent: 0)."""
    text = block.get(key, "0")
    try:
        n = int(text)
    except ValueError:
        raise ValueError(f"{what}: {key}={text!r} is not a number") from None
    if n < 0:
        raise ValueError(f"{what}: {key}={n} is negative")
    return n


def _indexed(block: dict[str, str], key: str, count: int, base: int, what: str) -> list[str]:
    """Values of ``key<base>``..``key<base+count-1>``; each must be there."""
    out = []
    for i in range(base, base + count):
        if f"{key}{i}" not in block:
            raise ValueError(f"{what}: {key}{i} is missing")
        out.append(block[f"{key}{i}"])
    return out


def parse_spawn(blocks: list[dict[str, str]]) -> tuple[list[SpawnBlock], dict[str, str]]:
    """The programs and preput pairs of a complete spawn request; raises
    ValueError naming what is wrong with it."""
    out = []
    preput: dict[str, str] = {}
    for i, b in enumerate(blocks):
        what = f"spawn block {i + 1}"
        if not b.get("execname"):
            raise ValueError(f"{what}: no execname")
        if "nprocs" not in b:
            raise ValueError(f"{what}: no nprocs")
        nprocs = _count(b, "nprocs", what)
        args = _indexed(b, "arg", _count(b, "argcnt", what), 1, what)
        ninfo = _count(b, "info_num" if "info_num" in b else "infonum", what)
        info = list(zip(_indexed(b, "info_key_", ninfo, 0, what),
                        _indexed(b, "info_val_", ninfo, 0, what)))
        npre = _count(b, "preput_num", what)
        preput.update(zip(_indexed(b, "preput_key_", npre, 0, what),
                          _indexed(b, "preput_val_", npre, 0, what)))
        out.append(SpawnBlock(b["execname"], nprocs, args, info))
    return out, preput


class PMIServer:
    """State of one job's PMI-1 service: the KVS, the barrier, per-rank status.

    ``appnum`` is the job's, or a list with each rank's; ``names`` is the
    name space of ``publish_name`` (a dict the launcher may share among
    jobs); ``preput`` pairs are in the KVS from the start; ``spawn`` says
    whether the launcher serves spawn requests (:class:`Spawn` events).
    """

    def __init__(self, size: int, kvsname: str, *, appnum: int | list[int] = 0,
                 universe_size: int | None = None, node_sizes: list[int] | None = None,
                 node_of: list[int] | None = None, names: dict[str, str] | None = None,
                 preput: dict[str, str] | None = None, spawn: bool = False):
        if size < 1:
            raise ValueError("size must be >= 1")
        self.size = size
        self.kvsname = kvsname
        self.appnum = appnum if isinstance(appnum, list) else [appnum] * size
        self.universe_size = size if universe_size is None else universe_size
        self.conns = [_Conn() for _ in range(size)]
        self.kvs: dict[str, dict[str, str]] = {kvsname: dict(preput or {})}
        self.published = {} if names is None else names
        self.spawn = spawn
        self.barrier_epoch = 0
        # Hydra answers this key itself; MPICH-derived code reads it to learn
        # which ranks share a node (an OS instance: with emulated VMs, a VM).
        # node_sizes: ranks of each node, placed in blocks; node_of: the
        # node of each rank; default one node.
        self.kvs[kvsname]["PMI_process_mapping"] = (
            process_mapping_of(node_of) if node_of is not None
            else process_mapping(node_sizes or [size]))

    # -- state queries ------------------------------------------------------

    def initialized(self, rank: int) -> bool:
        return self.conns[rank].initialized

    def finalized(self, rank: int) -> bool:
        return self.conns[rank].finalized

    def ranks_in_barrier(self) -> list[int]:
        return [r for r, c in enumerate(self.conns) if c.in_barrier]

    # -- input --------------------------------------------------------------

    def feed(self, rank: int, data: bytes) -> list:
        """Consume bytes read from ``rank``'s socket; return the events."""
        conn = self.conns[rank]
        conn.buf += data
        events: list = []
        while True:
            nl = conn.buf.find(b"\n")
            if nl < 0:
                if len(conn.buf) > MAX_LINE:
                    events.append(ProtocolError(rank, f"line longer than {MAX_LINE} bytes"))
                    conn.buf.clear()
                break
            raw = bytes(conn.buf[:nl])
            del conn.buf[:nl + 1]
            line = raw.decode("utf-8", errors="surrogateescape")
            events.extend(self._handle_line(rank, line))
        return events

    def eof(self, rank: int) -> list:
        """The rank closed its socket; an unterminated last line still counts."""
        conn = self.conns[rank]
        if conn.buf.strip():
            line = bytes(conn.buf).decode("utf-8", errors="surrogateescape")
            conn.buf.clear()
            return self._handle_line(rank, line)
        conn.buf.clear()
        return []

    # -- command handling ---------------------------------------------------

    def _reply(self, rank: int, text: str) -> Reply:
        return Reply(rank, (text + "\n").encode("utf-8", errors="surrogateescape"))

    def _fail(self, rank: int, cmd: str, why: str) -> Reply:
        return self._reply(rank, f"cmd={cmd} rc=1 msg={escape_msg(why)}")

    def _handle_line(self, rank: int, line: str) -> list:
        conn = self.conns[rank]
        line = line.rstrip("\r")
        if conn.mcmd is not None:
            if line.startswith("cmd="):
                # the client gave up on its spawn request half-way
                conn.mcmd = None
                return [self._fail(rank, "spawn_result", "spawn request ended before its "
                                   "last endcmd"), *self._handle_line(rank, line)]
            return self._mcmd_line(rank, line)
        if not line.strip():
            return []
        if line.startswith("mcmd="):
            conn.mcmd = []
            conn.mcmd_lines = 0
            conn.mcmd_open = False
            return self._mcmd_line(rank, line)
        try:
            cmd, a = parse_command(line)
        except ValueError as exc:
            return [ProtocolError(rank, f"{exc}: {line[:200]!r}")]
        handler = getattr(self, "_cmd_" + cmd, None)
        if handler is None:
            return [ProtocolError(rank, f"unsupported command {cmd!r}"),
                    self._reply(rank, f"cmd={cmd}_result rc=-1 msg=unsupported_command_{cmd}")]
        return handler(rank, a)

    def _mcmd_line(self, rank: int, line: str) -> list:
        """One line of a spawn request (``PMI_Spawn_multiple``)."""
        conn = self.conns[rank]
        conn.mcmd_lines += 1
        if conn.mcmd_lines > MAX_SPAWN_LINES:
            conn.mcmd = None
            return [ProtocolError(rank, f"spawn request longer than {MAX_SPAWN_LINES} lines"),
                    self._fail(rank, "spawn_result", "spawn request too long")]
        if not line.strip():
            return []
        key, eq, val = line.partition("=")
        if key == "mcmd":
            if conn.mcmd_open or val != "spawn":
                conn.mcmd = None
                return [self._fail(rank, "spawn_result", f"unexpected line {line[:100]!r} "
                                   "in a spawn request")]
            conn.mcmd.append({})
            conn.mcmd_open = True
            return []
        if not conn.mcmd_open:
            conn.mcmd = None
            return [self._fail(rank, "spawn_result", f"{line[:100]!r} outside a spawn block")]
        block = conn.mcmd[-1]
        if line == "endcmd":
            conn.mcmd_open = False
            total = conn.mcmd[0].get("totspawns", "")
            if not total.isdigit() or int(total) < 1:
                conn.mcmd = None
                return [self._fail(rank, "spawn_result",
                                   f"spawn request: totspawns={total!r} is not a count")]
            if len(conn.mcmd) < int(total):
                return []
            blocks, conn.mcmd = conn.mcmd, None
            return self._spawn(rank, blocks)
        if key == "endcmd":
            # Hydra waits for a bare "endcmd" line: say so rather than wait too
            conn.mcmd = None
            return [self._fail(rank, "spawn_result", f"{line[:100]!r} where a block ends: "
                               "MPICH and Hydra end it with a bare 'endcmd' line")]
        if not eq:
            return []   # a word without a value; no spawn key is one
        # a later "key=" in a block replaces an earlier one
        block[key] = _unescape(val)
        return []

    def _spawn(self, rank: int, blocks: list[dict[str, str]]) -> list:
        if not self.spawn:
            return [ProtocolError(rank, "PMI spawn is not supported by this launcher"),
                    self._reply(rank, "cmd=spawn_result rc=-1 msg=spawn_not_supported")]
        try:
            programs, preput = parse_spawn(blocks)
        except ValueError as exc:
            return [self._fail(rank, "spawn_result", str(exc))]
        return [Spawn(rank, programs, preput)]

    def spawn_reply(self, rank: int, error: str | None) -> Reply:
        """The answer to ``rank``'s spawn: done, or refused because of ``error``."""
        if error is None:
            return self._reply(rank, "cmd=spawn_result rc=0")
        return self._fail(rank, "spawn_result", error)

    def _cmd_init(self, rank: int, a: dict) -> list:
        ver = a.get("pmi_version", "1")
        if ver != "1":
            return [ProtocolError(rank, f"client asked for PMI version {ver}.{a.get('pmi_subversion', '?')};"
                                        " vmpirun serves PMI-1 only"),
                    self._reply(rank, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1")]
        self.conns[rank].initialized = True
        return [Initialized(rank),
                self._reply(rank, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0")]

    def _cmd_get_maxes(self, rank: int, a: dict) -> list:
        return [self._reply(rank, f"cmd=maxes rc=0 kvsname_max={KVSNAME_MAX} "
                                  f"keylen_max={KEYLEN_MAX} vallen_max={VALLEN_MAX}")]

    def _cmd_get_appnum(self, rank: int, a: dict) -> list:
        return [self._reply(rank, f"cmd=appnum appnum={self.appnum[rank]}")]

    def _cmd_get_my_kvsname(self, rank: int, a: dict) -> list:
        return [self._reply(rank, f"cmd=my_kvsname kvsname={self.kvsname}")]

    def _cmd_get_universe_size(self, rank: int, a: dict) -> list:
        return [self._reply(rank, f"cmd=universe_size size={self.universe_size}")]

    def _cmd_put(self, rank: int, a: dict) -> list:
        key = a.get("key")
        if not key:
            return [self._reply(rank, "cmd=put_result rc=-1 msg=missing_key")]
        kvsname = a.get("kvsname") or self.kvsname
        # Puts are visible at once (allowed by PMI-1, which only promises
        # visibility after the next barrier); a later put of the same key wins.
        self.kvs.setdefault(kvsname, {})[key] = a.get("value", "")
        return [self._reply(rank, "cmd=put_result rc=0 msg=success")]

    def _cmd_get(self, rank: int, a: dict) -> list:
        key = a.get("key", "")
        kvsname = a.get("kvsname") or self.kvsname
        space = self.kvs.get(kvsname, {})
        if key in space:
            return [self._reply(rank, f"cmd=get_result rc=0 msg=success value={space[key]}")]
        return [self._reply(rank, f"cmd=get_result rc=-1 msg=key_{key}_not_found value=unknown")]

    def _cmd_barrier_in(self, rank: int, a: dict) -> list:
        conn = self.conns[rank]
        if conn.in_barrier:
            return [ProtocolError(rank, "barrier_in while already in the barrier")]
        conn.in_barrier = True
        if all(c.in_barrier for c in self.conns):
            self.barrier_epoch += 1
            for c in self.conns:
                c.in_barrier = False
            return [self._reply(r, "cmd=barrier_out") for r in range(self.size)]
        return []

    def _cmd_finalize(self, rank: int, a: dict) -> list:
        self.conns[rank].finalized = True
        return [Finalized(rank), self._reply(rank, "cmd=finalize_ack")]

    def _cmd_abort(self, rank: int, a: dict) -> list:
        try:
            code = int(a.get("exitcode", "1"))
        except ValueError:
            code = 1
        return [Abort(rank, code, a.get("message", ""))]

    # Name service (MPI_Publish_name and friends): Hydra's replies, rc=1 on
    # failure, with our message.

    def _cmd_publish_name(self, rank: int, a: dict) -> list:
        service, port = a.get("service", ""), a.get("port", "")
        if not service or not port:
            return [self._fail(rank, "publish_result", "publish_name needs a service and a port")]
        if service in self.published:
            return [self._fail(rank, "publish_result", f"service {service} is already published")]
        self.published[service] = port
        return [self._reply(rank, "cmd=publish_result rc=0")]

    def _cmd_unpublish_name(self, rank: int, a: dict) -> list:
        service = a.get("service", "")
        if self.published.pop(service, None) is None:
            return [self._fail(rank, "unpublish_result", f"service {service} is not published")]
        return [self._reply(rank, "cmd=unpublish_result rc=0")]

    def _cmd_lookup_name(self, rank: int, a: dict) -> list:
        service = a.get("service", "")
        if service not in self.published:
            return [self._fail(rank, "lookup_result", f"service {service} is not published")]
        return [self._reply(rank, f"cmd=lookup_result rc=0 port={self.published[service]}")]
