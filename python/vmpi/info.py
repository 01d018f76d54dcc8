"""``vmpi info``: what this vmpi is, like ompi_info or mpichversion.

The build (version, compiler, flags), the channels built, the libfabric
providers on this machine, and every control variable (environment knob,
with its description and the value the library would use now) and
performance variable of the library. The library's side comes from
``vmpi-mpit-info`` (tools/mpit_info.c), a program built with the library
that reads it through the MPI tool interface without starting a job; it
sits in lib/vmpi of the build tree and of an installation."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

USAGE = """\
usage: vmpi info [--raw]

Prints the build, the channels, the libfabric providers found and every
MPI_T control and performance variable of the library (docs/MPI_T.md).
--raw  the helper's tab-separated lines instead
"""


class InfoError(Exception):
    pass


def helper() -> Path:
    """The vmpi-mpit-info program beside this package (lib/vmpi)."""
    here = Path(__file__).parent  # not resolved: the build tree links python/ in
    cands = []
    if os.environ.get("VMPI_BUILD"):
        cands.append(Path(os.environ["VMPI_BUILD"]) / "lib/vmpi/vmpi-mpit-info")
    cands += [here.parents[1] / "vmpi-mpit-info",               # lib/vmpi/python/vmpi
              here.parents[1] / "build/lib/vmpi/vmpi-mpit-info"]  # python/vmpi in the source
    for c in cands:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    raise InfoError("vmpi-mpit-info is not built: run 'make' (or set VMPI_BUILD to the build "
                    "directory)")


def library_lines() -> list[list[str]]:
    exe = helper()
    try:
        cp = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InfoError(f"{exe}: {exc}") from None
    if cp.returncode != 0:
        raise InfoError(f"{exe} failed: {cp.stderr.strip() or cp.returncode}")
    return [l.split("\t") for l in cp.stdout.splitlines() if l]


def providers() -> str:
    """libfabric's providers as fi_info lists them."""
    fi = shutil.which("fi_info")
    if not fi:
        return "none found (fi_info is not installed; the network channel needs libfabric)"
    try:
        cp = subprocess.run([fi, "-l"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unknown (fi_info: {exc})"
    names = [l[:-1] for l in cp.stdout.splitlines() if l.endswith(":") and not l.startswith(" ")]
    return ", ".join(names) if names else "none found (fi_info -l lists none)"


def cvar_value(kind: str, state: str, value: str, desc: str) -> str:
    if state == "set":
        return value
    if kind == "text":
        return "(unset)"
    if value == "0" and "default" in desc:
        return "(unset; default computed at MPI_Init, see below)"
    return f"{value} (default)"


def render(lines: list[list[str]], out) -> None:
    lib = next((l[1] for l in lines if l[0] == "library"), "")
    build = next((l[1:] for l in lines if l[0] == "build"), ["?", "?"])
    chans = lib.split("channels built: ", 1)[1].split(";", 1)[0] if "channels built: " in lib \
        else "?"
    out.write(f"{lib.split(';', 1)[0]}\n")
    out.write(f"  library    {lib}\n")
    out.write(f"  compiler   {build[0]}\n")
    out.write(f"  flags      {build[1] if len(build) > 1 else '?'}\n")
    out.write(f"  lib/vmpi   {helper().parent}\n")
    out.write(f"  channels   {chans}\n")
    out.write(f"  libfabric  providers: {providers()}\n")
    out.write("\nControl variables (MPI_T cvars: the environment variables the library reads; "
              "set them in the\nenvironment, or with MPI_T_cvar_write before MPI_Init):\n")
    cat = None
    for l in (l for l in lines if l[0] == "cvar"):
        _, name, c, kind, state, value, desc = (l + [""] * 7)[:7]
        if c != cat:
            out.write(f"  [{c}]\n")
            cat = c
        out.write(f"    {name} = {cvar_value(kind, state, value, desc)}\n        {desc}\n")
    out.write("\nPerformance variables (MPI_T pvars, per process; read them with a session "
              "in the program):\n")
    cat = None
    for l in (l for l in lines if l[0] == "pvar"):
        _, name, c, cls, desc = (l + [""] * 5)[:5]
        if c != cat:
            out.write(f"  [{c}]\n")
            cat = c
        out.write(f"    {name} ({cls})\n        {desc}\n")


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0
    if argv not in ([], ["--raw"]):
        sys.stderr.write(f"vmpi info: unknown argument {argv[0]!r}\n{USAGE}")
        return 2
    try:
        lines = library_lines()
        if argv:
            for l in lines:
                sys.stdout.write("\t".join(l) + "\n")
        else:
            render(lines, sys.stdout)
    except InfoError as exc:
        sys.stderr.write(f"vmpi info: {exc}\n")
        return 1
    except BrokenPipeError:  # vmpi info | head
        sys.stderr.close()
    return 0
