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
=====================================  ==========================================================

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
    "PMIServer",
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
class _Conn:
    buf: bytearray = field(default_factory=bytearray)
    initialized: bool = False
    finalized: bool = False
    in_barrier: bool = False
    # a multi-line "mcmd=spawn" block being skipped
    in_mcmd: bool = False
    mcmd_spawns_left: int = 0


def process_mapping(node_sizes: list[int]) -> str:
    """MPICH's vector form: runs of (first node, nodes, ranks per node)."""
    runs: list[list[int]] = []
    node = 0
    for n in node_sizes:
        if not n:
            continue
        if runs and runs[-1][2] == n:
            runs[-1][1] += 1
        else:
            runs.append([node, 1, n])
        node += 1
    return "(vector," + ",".join(f"({a},{b},{c})" for a, b, c in runs) + ")"


class PMIServer:
    """State of one job's PMI-1 service: the KVS, the barrier, per-rank status."""

    def __init__(self, size: int, kvsname: str, *, appnum: int = 0,
                 universe_size: int | None = None, node_sizes: list[int] | None = None):
        if size < 1:
            raise ValueError("size must be >= 1")
        self.size = size
        self.kvsname = kvsname
        self.appnum = appnum
        self.universe_size = size if universe_size is None else universe_size
        self.conns = [_Conn() for _ in range(size)]
        self.kvs: dict[str, dict[str, str]] = {kvsname: {}}
        self.published: dict[str, str] = {}
        self.barrier_epoch = 0
        # Hydra answers this key itself; MPICH-derived code reads it to learn
        # which ranks share a node (an OS instance: with emulated VMs, a VM).
        # node_sizes: ranks of each node, placed in blocks; default one node.
        self.kvs[kvsname]["PMI_process_mapping"] = process_mapping(node_sizes or [size])

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

    def _handle_line(self, rank: int, line: str) -> list:
        conn = self.conns[rank]
        line = line.rstrip("\r")
        if conn.in_mcmd:
            return self._mcmd_line(rank, line)
        if not line.strip():
            return []
        if line.startswith("mcmd="):
            # PMI_Spawn_multiple: a block of lines ending with "endcmd" per
            # spawn.  Not supported: skip the block, then refuse.
            conn.in_mcmd = True
            conn.mcmd_spawns_left = 0
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
        conn = self.conns[rank]
        key, _, val = line.partition("=")
        if key == "totspawns":
            try:
                conn.mcmd_spawns_left = int(val)
            except ValueError:
                conn.mcmd_spawns_left = 1
        if line.strip() == "endcmd":
            conn.mcmd_spawns_left -= 1
            if conn.mcmd_spawns_left <= 0:
                conn.in_mcmd = False
                return [ProtocolError(rank, "PMI spawn is not supported by vmpirun"),
                        self._reply(rank, "cmd=spawn_result rc=-1 msg=spawn_not_supported")]
        return []

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
        return [self._reply(rank, f"cmd=appnum appnum={self.appnum}")]

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

    def _cmd_publish_name(self, rank: int, a: dict) -> list:
        service = a.get("service", "")
        if not service or service in self.published:
            return [self._reply(rank, f"cmd=publish_result rc=-1 msg=cannot_publish_{service or 'empty'}")]
        self.published[service] = a.get("port", "")
        return [self._reply(rank, "cmd=publish_result rc=0 msg=success")]

    def _cmd_unpublish_name(self, rank: int, a: dict) -> list:
        service = a.get("service", "")
        if self.published.pop(service, None) is None:
            return [self._reply(rank, f"cmd=unpublish_result rc=-1 msg=service_{service}_not_found")]
        return [self._reply(rank, "cmd=unpublish_result rc=0 msg=success")]

    def _cmd_lookup_name(self, rank: int, a: dict) -> list:
        service = a.get("service", "")
        if service not in self.published:
            return [self._reply(rank, f"cmd=lookup_result rc=-1 msg=service_{service}_not_found")]
        return [self._reply(rank, f"cmd=lookup_result rc=0 msg=success port={self.published[service]}")]
