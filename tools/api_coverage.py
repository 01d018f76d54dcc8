#!/usr/bin/env python3
"""What of MPI-3.1's C interface vmpi has, read from the code.

The reference list, tools/mpi31_functions.txt, is every C procedure of
MPI-3.1 from the MPI Forum's machine-readable standard (the pympistandard
package); --refresh-standard rewrites it (needs pympistandard, which
describes the newest MPI: the procedures added after 3.1 are left out by
name below). vmpi's side is what include/mpi.h declares with VMPI_API().

  --check LIB        mpi.h and the library agree: every declared MPI_X and
                     PMPI_X is exported by LIB, and every exported MPI_ or
                     PMPI_ symbol is declared (functions and variables).
  --write FILE       write the coverage page (docs/COVERAGE.md)
  --check-doc FILE   exit 1 when FILE is not what --write would write
  --refresh-standard rewrite tools/mpi31_functions.txt from pympistandard

Exit 0 when all is well, 1 on a mismatch (each printed on a line).
"""
import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADER = ROOT / "include" / "mpi.h"
STANDARD = ROOT / "tools" / "mpi31_functions.txt"

# Procedures of the newest standard that MPI-3.1 does not have: added by
# MPI-4.0, 4.1 and 5.0 (sessions, partitioned and persistent collectives,
# buffer and status accessors, the ABI and integer-handle calls, ...).
AFTER_31 = re.compile(
    r"^MPI_(Abi_|Session_|Psend_init|Precv_init|Pready|Parrived|Isendrecv"
    r"|Comm_create_from_group|Group_from_session_pset|Comm_idup_with_info"
    r"|Info_get_string|Info_create_env|(Comm|Session)_(attach|detach|flush|iflush)_buffer"
    r"|Buffer_(flush|iflush)|Status_(get|set)_(source|tag|error)|Type_get_value_index"
    r"|Get_hw_resource_info|Request_get_status_(any|all|some)|Remove_error_"
    r"|\w+_(toint|fromint)$|\w+_init$|Intercomm_create_from_groups"
    r"|Status_(c2f08|f082c|f082f|f2f08)|T_event_|T_source_|T_category_get_(events|num_events)"
    r")")
# MPI-3.1 procedures whose names end in _init (persistent point-to-point and
# the tool interface's init): the pattern above would drop them.
INIT_31 = {"MPI_Init", "MPI_Send_init", "MPI_Bsend_init", "MPI_Ssend_init",
           "MPI_Rsend_init", "MPI_Recv_init", "MPI_T_init_thread"}

# Chapters of MPI-3.1, first match wins (patterns ignore case, so MPI_Ibcast
# is found by "bcast"); the issue that builds what is absent.
CHAPTERS = [
    ("I/O (13)", r"^MPI_(File_|Register_datarep)", "29"),
    ("Tool information interface (14.3)", r"^MPI_T_", "30"),
    ("Process creation and management (10)",
     r"^MPI_(Comm_(spawn|accept|connect|disconnect|get_parent|join)|Open_port|Close_port"
     r"|(Un)?[Pp]ublish_name|Lookup_name)", "30"),
    ("Language bindings (17)", r"_(c2f|f2c)$", "27"),
    ("One-sided communication (11)",
     r"^MPI_(Win_(?!create_keyval|free_keyval|(set|get|delete)_attr|create_errhandler"
     r"|call_errhandler|set_errhandler|get_errhandler)|Put|Get$|Rput|Rget|Accumulate|Raccumulate"
     r"|Get_accumulate|Rget_accumulate|Fetch_and_op|Compare_and_swap)", "27"),
    ("Topologies and neighborhood collectives (7)",
     r"^MPI_(Cart|Graph|Dist_graph|Dims_create|Topo_test|I?neighbor_)", "27"),
    ("Collectives (5)",
     r"^MPI_I?(Barrier|Bcast|Gather|Scatter|Allgather|Alltoall|Allreduce|Reduce|Scan|Exscan)"
     r"|^MPI_(Op_|Reduce_local)", "27"),
    ("Caching (6.7)", r"_(keyval|attr)$|^MPI_(Attr_|Keyval_)", "27"),
    ("Groups and communicators (6)", r"^MPI_(Comm_(?!.*errhandler)|Group_|Intercomm_)", "27"),
    ("Datatypes (4)",
     r"^MPI_(Type_|Get_address|Aint_|Pack|Unpack|Get_elements)", "27"),
    ("External interfaces (12)",
     r"^MPI_(Grequest_|Status_set_|Init_thread|Query_thread|Is_thread_main)", "27"),
    ("Info objects (9)", r"^MPI_Info_", "27"),
    ("Point-to-point (3)",
     r"^MPI_(I?[bsr]?send|Recv|Irecv|Sendrecv|[IM]?m?probe|Iprobe|Probe|Mrecv|Imrecv|Buffer_"
     r"|\w*send_init|Recv_init|Start|Wait|Test|Request_|Cancel|Get_count|Status_)", "27"),
    ("Environment and errors (8)", r"^MPI_", "27"),
]


def standard_functions():
    return [line.strip() for line in STANDARD.read_text().splitlines()
            if line.strip() and not line.startswith("#")]


def declared(header=HEADER):
    """(functions, variables) that mpi.h and the mpio.h it includes declare
    as exported."""
    text = header.read_text() + (header.parent / "mpio.h").read_text()
    funcs = set(re.findall(r"^VMPI_API\(\s*[^,]+,\s*(MPI_\w+)\s*,", text, re.M))
    variables = set(re.findall(r"^extern\s+VMPI_API_ATTR\b[^;(]*?\b(MPI_\w+)\s*(?:\[[^]]*\])?;",
                               text, re.M))
    return funcs, variables


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", str(lib)], check=True,
                         capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and re.match(r"P?MPI_", parts[2]):
            names.add(parts[2])
    return names


def check_exports(lib):
    funcs, variables = declared()
    want = {n for f in funcs for n in (f, "P" + f)} | variables
    have = exported(lib)
    problems = [f"{n}: declared in include/mpi.h, not exported by {lib}"
                for n in sorted(want - have)]
    problems += [f"{n}: exported by {lib}, not declared in include/mpi.h"
                 for n in sorted(have - want)]
    return problems


def chapter_of(name):
    for title, pattern, issue in CHAPTERS:
        if re.search(pattern, name, re.I):
            return title, issue
    raise ValueError(name)


def render():
    std = standard_functions()
    funcs, _ = declared()
    extra = sorted(funcs - set(std))
    by_chapter = {title: [] for title, _, _ in CHAPTERS}
    for name in std:
        by_chapter[chapter_of(name)[0]].append(name)
    have = sum(1 for n in std if n in funcs)
    lines = [
        "# MPI-3.1 coverage",
        "",
        "Generated by `python3 tools/api_coverage.py --write docs/COVERAGE.md` from",
        "include/mpi.h; do not edit by hand. The reference is MPI-3.1's C procedures",
        "from the MPI Forum's machine-readable standard (tools/mpi31_functions.txt).",
        "A test (`api_exports`) checks that the library exports exactly what mpi.h",
        "declares, each function with its PMPI_ twin.",
        "",
        f"vmpi declares **{have} of {len(std)}** MPI-3.1 C functions.",
        "",
        "| chapter | vmpi has | of | missing (issue that builds them) |",
        "|---|---|---|---|",
    ]
    for title, _, issue in CHAPTERS:
        names = by_chapter[title]
        missing = [n for n in names if n not in funcs]
        miss = ", ".join(f"`{n}`" for n in missing) + f" (#{issue})" if missing else ""
        lines.append(f"| {title} | {len(names) - len(missing)} | {len(names)} | {miss} |")
    if extra:
        lines += ["", "Declared beyond MPI-3.1: " + ", ".join(f"`{n}`" for n in extra) + "."]
    lines += ["", "## Every MPI-3.1 function vmpi declares", ""]
    for title, _, _ in CHAPTERS:
        names = [n for n in by_chapter[title] if n in funcs]
        if names:
            lines += [f"**{title}**: " + ", ".join(f"`{n}`" for n in names), ""]
    return "\n".join(lines).rstrip() + "\n"


def refresh_standard():
    import pympistandard as std
    std.use_api_version(1)
    names = sorted({p.express.iso_c.name for p in std.PROCEDURES.values()
                    if p._parseset["attributes"]["c_expressible"]
                    and not p._parseset["attributes"]["callback"]})
    names = [n for n in names if n in INIT_31 or not AFTER_31.match(n)]
    STANDARD.write_text("# MPI-3.1 C procedures: tools/api_coverage.py --refresh-standard\n"
                        + "\n".join(names) + "\n")
    print(f"{STANDARD}: {len(names)} procedures")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", metavar="LIB")
    ap.add_argument("--write", metavar="FILE")
    ap.add_argument("--check-doc", metavar="FILE")
    ap.add_argument("--refresh-standard", action="store_true")
    args = ap.parse_args()
    rc = 0
    if args.refresh_standard:
        refresh_standard()
    if args.check:
        problems = check_exports(args.check)
        for p in problems:
            print(p)
        rc |= bool(problems)
    if args.write:
        Path(args.write).write_text(render())
    if args.check_doc:
        if Path(args.check_doc).read_text() != render():
            print(f"{args.check_doc} is out of date: run "
                  f"python3 tools/api_coverage.py --write {args.check_doc}")
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
