"""mpi4py.futures on vmpi: an MPIPoolExecutor spawns two workers
(MPI_Comm_spawn) that find their parent, take tasks over the
intercommunicator and disconnect at shutdown."""
import os

from mpi4py import MPI
from mpi4py.futures import MPIPoolExecutor


def work(x):
    return x * x, os.getpid(), MPI.Comm.Get_parent() != MPI.COMM_NULL


if __name__ == "__main__":
    with MPIPoolExecutor(max_workers=2) as pool:
        out = list(pool.map(work, range(40)))
    assert [v for v, _, _ in out] == [i * i for i in range(40)], out
    pids = {p for _, p, _ in out}
    assert os.getpid() not in pids and 1 <= len(pids) <= 2, pids
    assert all(spawned for _, _, spawned in out)
    print(f"mpi4py.futures: OK {len(out)} tasks on {len(pids)} spawned workers")
