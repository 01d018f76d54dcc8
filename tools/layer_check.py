#!/usr/bin/env python3
"""Layer check: no C file includes a header of a higher layer.

design.md, "Layers": calls go down; what comes back up comes through tables
given at init. So a file includes headers of its own layer and of layers
below it, never above. Each layer is one folder of the repository root.
include/ holds the public headers (mpi.h, vmpi/lock.h) that every layer may
include; it is checked as a floor under the lowest layer, so a public header
cannot pull a layer's internals into everyone. Inside channel/ each channel
is a subfolder and channels do not see each other: only the contract
(channel/*.h) and the shared pair protocol (channel/pair/) are common.

With --objects DIR (the library's object files of a build without
link-time optimization, e.g. build-asan/CMakeFiles/vmpi_obj.dir, whose
folders mirror the source tree) it also checks the calls themselves: no
object uses a symbol defined in a higher layer or in a sibling channel, so
a function declared by hand instead of included cannot call up either.

Usage: python3 tools/layer_check.py [--root DIR] [--objects DIR]
Prints one line per violation; exit 1 on any, 0 if clean, 2 if no files.
"""
import argparse
import collections
import re
import subprocess
import sys
from pathlib import Path

# The layer order, top (may include every layer below) to bottom (includes
# no other layer). The only place it is written down.
LAYERS = ["api", "io", "rma", "comm", "coll", "core",
          "locality", "channel", "shm", "pmi", "base"]

PUBLIC = "include"  # public headers: below every layer, so all may use them
RANK = {name: i for i, name in enumerate(LAYERS + [PUBLIC])}

# Layers whose subfolders are siblings that must not include each other.
# Value: the subfolders every sibling may include (a shared mechanism).
# A top-level header of such a layer (its contract) includes no subfolder;
# a top-level .c (e.g. the channel list) may include them all.
SIBLINGS = {"channel": {"pair"}}

# Quoted includes only: <...> is the public/system path, always allowed.
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def layer_of(rel):
    """The layer of a root-relative path, or None if outside every layer."""
    return rel.parts[0] if len(rel.parts) > 1 and rel.parts[0] in RANK else None


def resolve(root, including, spelled):
    """Where cc finds a quoted include, as a root-relative path, or None.

    The including file's directory first, then include/ (the library's one
    -I). The root last: should it ever become an include directory, a
    root-relative spelling ("core/vmpi.h") must not slip past the check."""
    for base in (including.parent, root / PUBLIC, root):
        cand = (base / spelled).resolve()
        if cand.is_file():
            try:
                return cand.relative_to(root)
            except ValueError:  # outside the tree: not ours to judge
                return None
    return None


def sibling_violation(src, hdr):
    """The message if src reaches into a sibling's subfolder, else None."""
    layer = src.parts[0]
    shared = SIBLINGS.get(layer)
    if shared is None or len(hdr.parts) < 3:
        return None  # no sibling rule here, or hdr is top-level (contract)
    target = hdr.parts[1]
    if len(src.parts) == 2:  # a top-level file of the layer
        if src.suffix == ".h":
            return (f"{layer} contract includes {hdr} "
                    f"of subfolder {layer}/{target}")
        return None
    own = src.parts[1]
    if target != own and target not in shared:
        return f"{layer}/{own} includes {hdr} of sibling {layer}/{target}"
    return None


def find_cycles(graph):
    """Include cycles in graph (file -> set of files), by depth-first search."""
    cycles, seen, stack = [], set(), []

    def visit(node):
        seen.add(node)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt in stack:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in seen:
                visit(nxt)
        stack.pop()

    for node in sorted(graph):
        if node not in seen:
            visit(node)
    return cycles


def symbol_violations(objdir):
    """(object, line) for every symbol an object uses from a higher layer or
    from a sibling channel, read with nm."""
    defined, used = {}, []
    for obj in sorted(objdir.rglob("*.o")):
        rel = obj.relative_to(objdir)
        if layer_of(rel) is None:
            continue
        out = subprocess.run(["nm", str(obj)], capture_output=True, text=True,
                             check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1].isupper() and parts[1] != "U":
                defined[parts[2]] = rel
            elif len(parts) == 2 and parts[0] == "U":
                used.append((rel, parts[1]))
    bad = []
    for rel, sym in used:
        home = defined.get(sym)
        if home is None:
            continue  # the C library, libfabric, ...
        mine, theirs = layer_of(rel), layer_of(home)
        if RANK[theirs] < RANK[mine]:
            bad.append((rel, f"{rel}: {mine} calls {sym} of higher layer {theirs} ({home})"))
        elif theirs == mine and sibling_violation(rel, home):
            bad.append((rel, f"{rel}: calls {sym} of {home}, a sibling"))
    return bad


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path,
                    default=Path(__file__).resolve().parent.parent,
                    help="repository root (default: the parent of tools/)")
    ap.add_argument("--objects", type=Path,
                    help="also check the symbols of these object files")
    args = ap.parse_args(argv)
    root = args.root.resolve()

    # Every .c/.h of every layer and of include/; io/ may not exist yet.
    files = sorted(p for top in RANK if (root / top).is_dir()
                   for p in (root / top).rglob("*")
                   if p.suffix in (".c", ".h") and p.is_file())
    if not files:  # a wrong --root must not pass as "clean"
        print(f"layer check: no layer folder with .c/.h files under {root}")
        return 2
    violations = []                        # (file, output line)
    pairs = collections.Counter()          # (from, to) -> count, summary
    graph = collections.defaultdict(set)   # same-layer includes, for cycles
    warnings = []

    for path in files:
        src = path.relative_to(root)
        mine = layer_of(src)
        lines = path.read_text(errors="replace").splitlines()
        for lineno, line in enumerate(lines, 1):
            m = INCLUDE_RE.match(line)
            if not m:
                continue
            where = f"{src}:{lineno}"
            hdr = resolve(root, path, m.group(1))
            if hdr is None:  # a blind spot of the check, so say so
                warnings.append(f"{where}: \"{m.group(1)}\" not found")
                continue
            theirs = layer_of(hdr)
            if theirs is None:
                continue  # outside the layers (not compiled into the library)
            if RANK[theirs] < RANK[mine]:
                violations.append((src, f"{where}: {mine} includes {hdr} "
                                        f"of higher layer {theirs}"))
                pairs[(mine, theirs)] += 1
            elif theirs == mine:
                graph[src].add(hdr)
                msg = sibling_violation(src, hdr)
                if msg:
                    violations.append((src, f"{where}: {msg}"))
                    frm = src.parts[:2] if len(src.parts) > 2 else src.parts[:1]
                    pairs[("/".join(frm), "/".join(hdr.parts[:2]))] += 1

    # Upward-free already rules out cycles across layers; cycles inside one
    # layer are only warned about (the design forbids upward includes only).
    for cyc in find_cycles(graph):
        warnings.append("include cycle: " + " -> ".join(map(str, cyc)))

    if args.objects:
        objs = symbol_violations(args.objects.resolve())
        violations += objs
        for src, _ in objs:
            pairs[("calls " + src.parts[0], "up")] += 1

    for _, line in violations:
        print(line)
    for line in warnings:
        print("warning: " + line)
    if violations:
        nfiles = len({src for src, _ in violations})
        print(f"layer check: FAILED, {len(violations)} violations in {nfiles} "
              f"of {len(files)} files; layers top to bottom: "
              f"{' > '.join(LAYERS)}; by pair:")
        for (a, b), n in sorted(pairs.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"  {a} -> {b}: {n}")
        return 1
    print(f"layer check: {len(files)} files, no upward includes"
          + (", no upward calls" if args.objects else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
