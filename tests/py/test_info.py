"""`vmpi info`: the build, channels, libfabric providers and the MPI_T
variables, from the build tree and after `cmake --install`; and that every
environment variable the library's C code reads is a control variable
(the knob table of base/knob.c cannot miss one).

The build to test is $VMPI_BUILD (default /work/main/build)."""
import os
import sys
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("VMPI_BUILD", "/work/main/build")).resolve()
VMPI = BUILD / "bin" / "vmpi"
LIB_DIRS = ["api", "io", "comm", "core", "coll", "rma", "locality", "channel", "shm", "pmi",
            "base"]

pytestmark = pytest.mark.skipif(
    not (BUILD / "lib" / "vmpi" / "vmpi-mpit-info").exists(),
    reason=f"no vmpi build with vmpi-mpit-info at VMPI_BUILD={BUILD}")


def info(*args, env=None, vmpi=VMPI):
    full = dict(os.environ)
    full.pop("VMPI_BUILD", None)  # the command must find its own helper
    full.update(env or {})
    return subprocess.run([str(vmpi), "info", *args], capture_output=True, text=True,
                          timeout=60, env=full)


def cvars(out):
    """{name: value text} of the control variables `vmpi info` printed."""
    return dict(re.findall(r"^    ([A-Z][A-Z0-9_]+) = (.*)$", out, re.M))


def knobs_read_by_library():
    """Every environment variable name the library's C code reads."""
    call = re.compile(r'(?:getenv|vmpi_knob_num|vmpi_knob_str|vmpi_env_u64|vmpi_env_bytes)'
                      r'\(\s*"([A-Z][A-Z0-9_]+)"')
    names = set()
    for d in LIB_DIRS:
        for f in (ROOT / d).rglob("*.c"):
            text = f.read_text(errors="replace")
            names |= {n for n in call.findall(text) if n.startswith(("VMPI_", "FI_"))}
    # knobs named in a table and read through it (coll/select.c)
    names |= set(re.findall(r'"(VMPI_COLL_[A-Z_]+)"', (ROOT / "coll/select.c").read_text()))
    return names


def test_build_tree():
    cp = info()
    assert cp.returncode == 0, cp.stderr
    out = cp.stdout
    assert out.startswith("vmpi ") and "MPICH ABI" in out.splitlines()[0]
    assert re.search(r"^  channels   smp, ivshmem, ofi$", out, re.M), out
    assert re.search(r"^  compiler   \S+ \d", out, re.M), out
    assert re.search(r"^  flags      ", out, re.M), out
    assert f"lib/vmpi   {BUILD}/lib/vmpi" in out
    v = cvars(out)
    assert v["VMPI_SMP_EAGER_MAX"] == "8192 (default)"
    assert v["VMPI_CHANNELS"] == "(unset)"
    for chan in ("smp", "ivshmem", "ofi"):
        assert f"  [vmpi.{chan}]" in out
        for what in ("msgs_sent", "bytes_sent", "rndv_sent", "msgs_recvd", "bytes_recvd"):
            assert f"    vmpi_{chan}_{what} (counter)" in out
    assert "    vmpi_unexpected_hwm (highwatermark)" in out


def test_every_knob_is_a_cvar():
    cp = info()
    assert cp.returncode == 0, cp.stderr
    listed = set(cvars(cp.stdout))
    read = knobs_read_by_library()
    assert len(read) > 30, read
    missing = sorted(read - listed)
    assert not missing, f"read by the library but not MPI_T control variables: {missing}"
    # and each has a description line under it
    for name in read:
        assert re.search(rf"^    {name} = .*\n        \S", cp.stdout, re.M), name


def test_values_from_environment():
    cp = info(env={"VMPI_SMP_EAGER_MAX": "4k", "VMPI_CHANNELS": "smp,ofi",
                   "VMPI_OFI_RMA": "7"})
    assert cp.returncode == 0, cp.stderr
    v = cvars(cp.stdout)
    assert v["VMPI_SMP_EAGER_MAX"] == "4096"
    assert v["VMPI_CHANNELS"] == "smp,ofi"
    assert v["VMPI_OFI_RMA"].startswith("invalid: 7"), v["VMPI_OFI_RMA"]


def test_raw_lines():
    cp = info("--raw")
    assert cp.returncode == 0, cp.stderr
    kinds = [l.split("\t")[0] for l in cp.stdout.splitlines()]
    assert kinds[:2] == ["library", "build"]
    assert kinds.count("pvar") >= 18 and kinds.count("cvar") > 30
    for l in cp.stdout.splitlines():
        f = l.split("\t")
        assert len(f) == {"library": 2, "build": 3, "cvar": 7, "pvar": 5}[f[0]], l


def test_no_fi_info(tmp_path):
    # a PATH with python but without fi_info
    # (the interpreter itself: `command -v python3` may be a shell shim)
    (tmp_path / "python3").symlink_to(os.path.realpath(sys.executable))
    cp = info(env={"PATH": str(tmp_path)})
    assert cp.returncode == 0, cp.stderr
    assert "libfabric  providers: none found (fi_info is not installed" in cp.stdout


def test_usage():
    cp = info("--help")
    assert cp.returncode == 0 and "usage: vmpi info" in cp.stdout
    cp = info("--bogus")
    assert cp.returncode == 2 and "unknown argument '--bogus'" in cp.stderr


def test_installed(tmp_path):
    prefix = tmp_path / "prefix"
    cp = subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(prefix)],
                        capture_output=True, text=True, timeout=300)
    assert cp.returncode == 0, cp.stderr
    cp = info(vmpi=prefix / "bin" / "vmpi")
    assert cp.returncode == 0, cp.stderr
    assert f"lib/vmpi   {prefix}/lib/vmpi" in cp.stdout
    assert str(BUILD) not in cp.stdout
    assert "VMPI_SMP_EAGER_MAX = 8192 (default)" in cp.stdout


def test_docs_list_every_cvar():
    cp = info()
    assert cp.returncode == 0, cp.stderr
    doc = (ROOT / "docs" / "MPI_T.md").read_text()
    missing = sorted(n for n in cvars(cp.stdout) if f"`{n}`" not in doc)
    assert not missing, f"docs/MPI_T.md does not list {missing}"
