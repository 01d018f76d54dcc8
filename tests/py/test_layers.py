"""tools/layer_check.py: no file includes a header of a higher layer
(design.md, "Layers"), and channels do not include each other."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "layer_check.py"


def check(root=None):
    cmd = [sys.executable, str(SCRIPT)] + (["--root", str(root)] if root else [])
    cp = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    print(cp.stdout, cp.stderr)  # shown by pytest when a test fails
    return cp


def tree(tmp_path, files):
    """A synthetic repository: {path: text} under tmp_path."""
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


# A small tree that follows every rule: downward includes, same-layer
# includes, public headers both <...> and "...", the channel contract, the
# shared pair protocol, and a top-level channel list that sees every channel.
CLEAN = {
    "include/mpi.h": "",
    "include/vmpi/lock.h": "#include <stdint.h>\n",
    "api/api.h": '#include "../core/vmpi.h"\n#include <mpi.h>\n',
    "api/p2p.c": '#include "api.h"\n#include "../rma/rma.h"\n',
    "rma/rma.h": '#include "vmpi/lock.h"\n#include "../comm/comm.h"\n',
    "comm/comm.h": '#include "../coll/coll.h"\n',
    "coll/coll.h": '#include "../core/vmpi.h"\n',
    "core/vmpi.h": '#include "../base/base.h"\n',
    "core/init.c": '#include "vmpi.h"\n#include "../channel/chan.h"\n'
                   '#include "../locality/locality.h"\n',
    "locality/locality.h": '#include "../channel/chan.h"\n',
    "channel/chan.h": '#include "../shm/ring.h"\n#include "../base/base.h"\n',
    "channel/list.c": '#include "smp/smp.h"\n#include "ofi/ofi.h"\n',
    "channel/pair/pair.h": '#include "../chan.h"\n#include "../../shm/ring.h"\n',
    "channel/smp/smp.h": '#include "../chan.h"\n',
    "channel/smp/smp.c": '#include "smp.h"\n#include "../pair/pair.h"\n'
                         '#include "../../pmi/pmi.h"\n',
    "channel/ofi/ofi.h": '#include "../chan.h"\n',
    "shm/ring.h": '#include "../base/base.h"\n',
    "pmi/pmi.h": '#include "../base/base.h"\n',
    "base/base.h": "#include <stddef.h>\n",
}


def test_clean_tree_passes(tmp_path):
    cp = check(tree(tmp_path, CLEAN))
    assert cp.returncode == 0
    assert cp.stdout.strip() == f"layer check: {len(CLEAN)} files, no upward includes"


@pytest.mark.parametrize("rel, text, expect", [
    # upward include between layers
    ("core/sched.c", '#include "../coll/coll.h"\n',
     "core/sched.c:1: core includes coll/coll.h of higher layer coll"),
    # relative path two folders up, from inside a channel
    ("channel/smp/bad.c", '#include "x.h"\n#include "../../core/vmpi.h"\n',
     "channel/smp/bad.c:2: channel includes core/vmpi.h of higher layer core"),
    # one channel reaching into another
    ("channel/smp/bad.c", '#include "../ofi/ofi.h"\n',
     "channel/smp/bad.c:1: channel/smp includes channel/ofi/ofi.h "
     "of sibling channel/ofi"),
    # the shared pair protocol is not a way into a channel either
    ("channel/pair/pair.c", '#  include "../smp/smp.h"\n',
     "channel/pair/pair.c:1: channel/pair includes channel/smp/smp.h "
     "of sibling channel/smp"),
    # the contract knows no implementation
    ("channel/chan2.h", '#include "smp/smp.h"\n',
     "channel/chan2.h:1: channel contract includes channel/smp/smp.h "
     "of subfolder channel/smp"),
    # a public header may not pull a layer in
    ("include/vmpi/bad.h", '#include "../../shm/ring.h"\n',
     "include/vmpi/bad.h:1: include includes shm/ring.h of higher layer shm"),
    # spelled from the root: caught all the same
    ("base/bad.c", '#include "pmi/pmi.h"\n',
     "base/bad.c:1: base includes pmi/pmi.h of higher layer pmi"),
])
def test_violation_fails(tmp_path, rel, text, expect):
    files = dict(CLEAN)
    files["channel/smp/x.h"] = ""
    files[rel] = text
    cp = check(tree(tmp_path, files))
    assert cp.returncode == 1
    lines = cp.stdout.splitlines()
    found = [l for l in lines
             if not l.startswith(("warning:", "layer check:", "  "))]
    assert found == [expect]
    assert any(l.startswith("layer check: FAILED, 1 violations") for l in lines)


def test_angle_includes_and_unknown_folders_ignored(tmp_path):
    files = dict(CLEAN)
    files["base/sys.c"] = "#include <mpi.h>\n#include <vmpi/lock.h>\n"
    files["tests/t.c"] = '#include "../api/api.h"\n'  # not a layer: not checked
    files["shm/gen.c"] = '#include "generated.h"\n'  # not found: a warning only
    cp = check(tree(tmp_path, files))
    assert cp.returncode == 0
    assert 'warning: shm/gen.c:1: "generated.h" not found' in cp.stdout


def test_same_layer_cycle_is_a_warning(tmp_path):
    files = dict(CLEAN)
    files["core/a.h"] = '#include "b.h"\n'
    files["core/b.h"] = '#include "a.h"\n'
    cp = check(tree(tmp_path, files))
    assert cp.returncode == 0
    assert "warning: include cycle: core/a.h -> core/b.h -> core/a.h" in cp.stdout


def test_empty_root_is_an_error(tmp_path):
    assert check(tmp_path).returncode == 2


def test_real_tree():
    """The repository itself has no upward include (its output is printed)."""
    cp = check()
    assert cp.returncode == 0, cp.stdout


def objects(tmp_path, sources):
    """Object files compiled from {layer path: C text}, in the folder layout
    CMake gives them (core/init.c -> core/init.c.o)."""
    objdir = tmp_path / "obj"
    for rel, text in sources.items():
        src = tmp_path / "src" / rel
        src.parent.mkdir(parents=True, exist_ok=True)
        src.write_text(text)
        obj = objdir / (rel + ".o")
        obj.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cc", "-c", "-o", str(obj), str(src)], check=True)
    return objdir


@pytest.mark.parametrize("caller,expect", [
    ("core/init.c", "core/init.c.o: core calls vmpi_coll_init of higher layer coll"),
    ("channel/smp/smp.c", "channel/smp/smp.c.o: channel calls vmpi_coll_init of higher layer"),
])
def test_upward_call_without_include_fails(tmp_path, caller, expect):
    """A function declared by hand instead of included still cannot call up."""
    objdir = objects(tmp_path, {
        "coll/select.c": "void vmpi_coll_init(void) {}\n",
        caller: "void vmpi_coll_init(void);\nvoid f(void) { vmpi_coll_init(); }\n",
    })
    cp = subprocess.run([sys.executable, str(SCRIPT), "--root", str(tree(tmp_path, CLEAN)),
                         "--objects", str(objdir)], capture_output=True, text=True, timeout=60)
    print(cp.stdout)
    assert cp.returncode == 1
    assert any(l.startswith(expect) for l in cp.stdout.splitlines())


def test_sibling_channel_call_fails_and_downward_calls_pass(tmp_path):
    objdir = objects(tmp_path, {
        "base/err.c": "void vmpi_fatal(void) {}\n",
        "channel/ofi/ofi.c": "int ofi_poll_all(void) { return 0; }\n",
        "channel/pair/pair.c": "void vmpi_fatal(void);\nvoid vmpi_pair_poll(void) { vmpi_fatal(); }\n",
        "channel/smp/smp.c": "void vmpi_pair_poll(void);\nint ofi_poll_all(void);\n"
                             "void g(void) { vmpi_pair_poll(); ofi_poll_all(); }\n",
    })
    cp = subprocess.run([sys.executable, str(SCRIPT), "--root", str(tree(tmp_path, CLEAN)),
                         "--objects", str(objdir)], capture_output=True, text=True, timeout=60)
    print(cp.stdout)
    assert cp.returncode == 1
    lines = [l for l in cp.stdout.splitlines() if "calls" in l and ".o:" in l]
    assert lines == ["channel/smp/smp.c.o: calls ofi_poll_all of channel/ofi/ofi.c.o, a sibling"]
