#!/usr/bin/env python3
"""Run MPICH's test suite (test/mpi of pmodels/mpich) on Debian's MPICH and on vmpi.

Each C test is built once with Debian's mpicc.mpich, so it is an
MPICH-ABI binary, and that same binary runs under mpiexec.mpich and under
vmpirun with vmpi's libmpich.so.12 first on LD_LIBRARY_PATH: both see the
same program. A test passes when it exits 0 and prints "No Errors", as
MPICH's own runtests decides. The suite is not part of vmpi (get it with
`git clone https://github.com/pmodels/mpich`); nothing of it is copied.

  python3 tools/mpich_suite.py --suite ~/mpich/test/mpi --build build \\
      --dirs attr coll --out /tmp/suite [--vms 1 2] [--max-np 8]

Writes OUT/results.json (every run) and OUT/table.md (per directory:
tests, passed by MPICH, passed by vmpi in one VM and across two VMs, and
each test MPICH passes that vmpi does not, with the first line of what
went wrong). Run again with --table-only to remake the table.
"""
import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_DIRS = ["attr", "basic", "coll", "comm", "datatype", "errhan", "group", "info",
                "init", "pt2pt", "rma", "topo"]

# What a configure run of the suite would have found on Debian 12.
CONF_H = """\
#define HAVE_STDARG_H 1
#define HAVE_STRING_H 1
#define HAVE_STDLIB_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_UNISTD_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_LONG_LONG 1
#define HAVE_INT64_T 1
#define HAVE_UINT64_T 1
#define THREAD_PACKAGE_NAME 2 /* THREAD_PACKAGE_POSIX */
#define USE_STRICT_MPI 1
"""


def parse_testlist(d):
    """Entries of DIR/testlist(.in): dicts with name, np, args, env, limit."""
    path = d / "testlist"
    if not path.exists():
        path = d / "testlist.in"
    if not path.exists():
        return []
    entries = []
    for line in path.read_text().splitlines():
        # @comm_overlap@ marks tests of communicators used by several
        # threads at once: MPICH's configure enables them with MULTIPLE.
        line = line.split("#", 1)[0].replace("@comm_overlap@", "").strip()
        if not line or "@" in line:
            continue
        words = shlex.split(line)
        if len(words) < 2 or not words[1].isdigit():
            continue
        e = {"name": words[0], "np": int(words[1]), "args": [], "env": [], "limit": 0,
             "xfail": "", "bench": False}
        for w in words[2:]:
            key, _, val = w.partition("=")
            if key == "arg":
                e["args"].append(val)
            elif key == "env":
                e["env"].append(val)
            elif key == "timeLimit":
                e["limit"] = int(val)
            elif key == "xfail":
                e["xfail"] = val
            elif key == "resultTest":
                e["bench"] = True
            elif key == "mpiversion" and val not in ("3.0", "3.1", "2.2", "2.1", "1.0"):
                e["xfail"] = f"needs MPI {val}"
        entries.append(e)
    return entries


def makefile_sources(d):
    """name -> (source files, extra cpp flags) from DIR/Makefile.am."""
    text = (d / "Makefile.am").read_text() if (d / "Makefile.am").exists() else ""
    text = text.replace("\\\n", " ")
    out = {}
    for m in re.finditer(r"^(\w+)_SOURCES\s*=\s*(.+)$", text, re.M):
        out.setdefault(m.group(1), [[], []])[0] = m.group(2).split()
    for m in re.finditer(r"^(\w+)_CPPFLAGS\s*=\s*(.+)$", text, re.M):
        flags = [f for f in m.group(2).split() if f.startswith("-D")]
        out.setdefault(m.group(1), [[], []])[1] = flags
    return out


def build(suite, d, name, bindir, cache):
    exe = bindir / d.name / name
    if name in cache:
        return cache[name]
    srcs, flags = makefile_sources(d).get(name, [[], []])
    srcs = [str(d / s) for s in srcs if s.endswith(".c")] or [str(d / f"{name}.c")]
    if not Path(srcs[0]).exists():
        cache[name] = (None, "no C source (another language or generated)")
        return cache[name]
    util = suite / "util"
    extra = [str(util / "mtest.c"), str(util / "mtest_common.c"), str(util / "dtypes.c"),
             str(util / "mtest_thread.c")]
    text = "".join(Path(s).read_text(errors="replace") for s in srcs)
    if re.search(r"^int run\(const char", text, re.M):
        extra.append(str(util / "run_mpitests.c"))
    if "dtpools.h" in text:
        extra += [str(p) for p in sorted((suite / "dtpools" / "src").glob("*.c"))]
    exe.parent.mkdir(parents=True, exist_ok=True)
    cmd = (["mpicc.mpich", "-g", "-O1", "-w", f"-I{bindir / 'include'}", f"-I{suite / 'include'}",
            f"-I{suite / 'dtpools' / 'include'}"] + flags + srcs + extra
           + ["-o", str(exe), "-lm", "-lpthread"])
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        first = next((l for l in r.stderr.splitlines() if "error" in l), r.stderr[:200])
        cache[name] = (None, "does not build with mpicc.mpich: " + first.strip())
    else:
        cache[name] = (exe, "")
    return cache[name]


def verdict(rc, out, timed_out):
    if timed_out:
        return False, "timeout"
    m = re.search(r"undefined symbol: (\w+)", out)
    if m:
        return False, f"missing {m.group(1)}"
    if rc == 0 and re.search(r"^\s*No Errors\s*$", out, re.M):
        return True, ""
    lines = [l.strip() for l in out.splitlines() if l.strip()]
    return False, (lines[0] if lines else f"exit {rc}, no output")[:160]


def run_one(impl, exe, e, cwd, build_dir, lib_dir, vms, timeout):
    limit = max(timeout, e["limit"])
    env = dict(os.environ)
    for kv in e["env"]:
        k, _, v = kv.partition("=")
        env[k] = v
    if impl == "mpich":
        cmd = ["mpiexec.mpich", "-n", str(e["np"]), str(exe)] + e["args"]
    else:
        lib = str(lib_dir)
        cmd = [str(Path(build_dir, "bin", "vmpirun")), "-n", str(e["np"]), "--timeout",
               str(limit), "-x", f"LD_LIBRARY_PATH={lib}"]
        cmd += [a for kv in e["env"] for a in ("-x", kv)]
        if vms > 1:
            cmd += ["--vms", str(vms)]
        cmd += [str(exe)] + e["args"]
    t0 = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=limit + 30, cwd=cwd,
                           env=env, errors="replace")
        ok, why = verdict(r.returncode, r.stdout + r.stderr, False)
    except subprocess.TimeoutExpired:
        subprocess.run(["pkill", "-9", "-f", str(exe)], capture_output=True)
        ok, why = verdict(None, "", True)
    return {"pass": ok, "why": why, "secs": round(time.time() - t0, 2)}


def key_of(d, e):
    return f"{d}/{e['name']} {e['np']} {' '.join(e['args'])}".strip()


def later_mpi(row):
    """The post-3.1 function a test needs (vmpi implements MPI-3.1), or None."""
    mpi31 = set(Path(__file__).with_name("mpi31_functions.txt").read_text().split())
    for r in row.values():
        m = re.match(r"missing (P?MPI_\w+)", r.get("why", ""))
        if m and m.group(1).lstrip("P") not in mpi31:
            return m.group(1)
    return None


def table(results, dirs, configs):
    """Per directory: MPI-3.1 tests, passed by MPICH, passed by vmpi in
    each placement (of the tests that placement can run: two VMs need two
    ranks); then every test MPICH passes and vmpi does not, and the tests
    left out because they need a later MPI."""
    cols = ["MPICH"] + [f"vmpi, {v} VM{'s' if v > 1 else ''}" for v in configs]
    lines = ["| directory | tests | " + " | ".join(cols) + " |",
             "|---|---|" + "---|" * len(cols)]
    gaps, later = [], []
    totals = [0] * (2 + 2 * len(configs))
    for d in dirs:
        rows = {}
        for k, v in results.items():
            if not k.startswith(d + "/"):
                continue
            need = later_mpi(v)
            if need:
                later.append(f"`{k}` ({need})")
            else:
                rows[k] = v
        counts = [len(rows), sum(1 for v in rows.values() if v.get("mpich", {}).get("pass"))]
        for c in configs:
            ran = [v[f"vmpi{c}"] for v in rows.values() if f"vmpi{c}" in v]
            counts += [sum(1 for r in ran if r["pass"]), len(ran)]
        totals = [a + b for a, b in zip(totals, counts)]
        lines.append(f"| {d} | {counts[0]} | {counts[1]} | "
                     + " | ".join(f"{counts[2 + 2 * i]} of {counts[3 + 2 * i]}"
                                  for i in range(len(configs))) + " |")
        for k, v in sorted(rows.items()):
            if not v.get("mpich", {}).get("pass"):
                continue
            for c in configs:
                r = v.get(f"vmpi{c}")
                if r and not r["pass"]:
                    gaps.append(f"- `{k}` ({c} VM{'s' if c > 1 else ''}): {r['why']}")
    lines.append(f"| **all** | **{totals[0]}** | **{totals[1]}** | "
                 + " | ".join(f"**{totals[2 + 2 * i]} of {totals[3 + 2 * i]}**"
                              for i in range(len(configs))) + " |")
    out = "\n".join(lines) + "\n\nTests MPICH passes and vmpi does not:\n\n"
    out += ("\n".join(gaps) if gaps else "(none)") + "\n"
    if later:
        out += "\nLeft out, they call functions added after MPI-3.1: " + ", ".join(later) + ".\n"
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", required=True, type=Path, help="test/mpi of an MPICH checkout")
    ap.add_argument("--build", default="build", type=Path, help="vmpi build directory")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--dirs", nargs="*", default=DEFAULT_DIRS)
    ap.add_argument("--only", help="regular expression on 'dir/name np args'")
    ap.add_argument("--vms", nargs="*", type=int, default=[1, 2],
                    help="vmpi placements: ranks in 1 VM, spread over 2 VMs")
    ap.add_argument("--max-np", type=int, default=8)
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--skip-mpich", action="store_true", help="keep MPICH's earlier results")
    ap.add_argument("--table-only", action="store_true")
    args = ap.parse_args()
    suite = args.suite.resolve()
    args.build = args.build.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    res_path = args.out / "results.json"
    results = json.loads(res_path.read_text()) if res_path.exists() else {}
    if not args.table_only:
        # A copy of the library, so that a rebuild during a long run does not
        # pull it from under the tests.
        lib_dir = args.out / "vmpi-lib"
        shutil.rmtree(lib_dir, ignore_errors=True)  # this run's library, not a mix
        shutil.copytree(args.build / "lib", lib_dir, symlinks=True, dirs_exist_ok=True)
        (args.out / "include").mkdir(exist_ok=True)
        (args.out / "include" / "mpitestconf.h").write_text(CONF_H)
        # configure's list of MPIX extensions: the tests use none here.
        (args.out / "include" / "mtest_mpix.h").write_text("/* no MPIX extensions */\n")
        for dname in args.dirs:
            d = suite / dname
            cache = {}
            for e in parse_testlist(d):
                k = key_of(dname, e)
                if args.only and not re.search(args.only, k):
                    continue
                if e["np"] > args.max_np or e["xfail"] or e["bench"]:
                    continue
                exe, why = build(suite, d, e["name"], args.out, cache)
                row = results.setdefault(k, {})
                if exe is None:
                    results.pop(k)
                    print(f"{k}: skipped, {why}", flush=True)
                    continue
                impls = ([] if args.skip_mpich and "mpich" in row else [("mpich", 1)])
                impls += [("vmpi", v) for v in args.vms if v <= e["np"]]
                for impl, v in impls:
                    tag = "mpich" if impl == "mpich" else f"vmpi{v}"
                    # spawn's tests start "./name": from their binary's directory
                    cwd = exe.parent if d.name == "spawn" else d
                    row[tag] = run_one(impl, exe, e, cwd, args.build, lib_dir, v, args.timeout)
                    print(f"{k} [{tag}]: {'pass' if row[tag]['pass'] else 'FAIL ' + row[tag]['why']}",
                          flush=True)
                res_path.write_text(json.dumps(results, indent=1, sort_keys=True))
    (args.out / "table.md").write_text(table(results, args.dirs, args.vms))
    print((args.out / "table.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
