"""Dynamic processes by locality across emulated VMs (issue 30, part 5): a
child spawned into another VM of its parent's host talks to it through the
host region (the ivshmem channel's pool of pair slots in the job areas),
checked by the MPI_T channel counters in tests/c/t_dyn_region.c. The ctest
runs cover two children per spawn (an area made at MPI_Init) and 2 hosts;
these cover a child alone in its VM (its area is made when it first meets
another job), spawns in a row (each round's children finalize and their
areas go back to the region while the parent lives on) and integrity
checks (the region then carries no other job's messages: the network does)."""
import pytest

from conftest import run_vmpirun
from test_vms import BUILD, needs_vms

PROG = BUILD / "tests" / "t_dyn_region"

needs_prog = pytest.mark.skipif(not PROG.exists(), reason="needs the library build (tests/t_dyn_region)")


@needs_vms
@needs_prog
def test_lone_children_in_a_row_reach_their_parent_through_the_region():
    cp, _ = run_vmpirun("-n", 2, "--vms", 2, "--timeout", 100, PROG, 1, 4, timeout=120)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    # rank 0 (h0-vm0) meets each child (h0-vm1) through the region, rank 1 in its VM
    assert cp.stdout == ("t_dyn_region: 2 parent(s) x 1 child(ren) x 4: 4 pairs over smp, "
                         "4 over ivshmem, 0 over ofi OK\n"), cp.stderr


@needs_vms
@needs_prog
def test_with_integrity_checks_other_jobs_go_over_the_network():
    cp, _ = run_vmpirun("-n", 2, "--vms", 2, "--timeout", 100, "-x", "VMPI_INTEGRITY=crc32c",
                        PROG, timeout=120)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert cp.stdout == ("t_dyn_region: 2 parent(s) x 2 child(ren) x 1: 2 pairs over smp, "
                         "0 over ivshmem, 2 over ofi OK\n"), cp.stderr
