"""mpi4py's object API on vmpi: every rank checks the values it gets.

Run on 4 ranks (test_mpi4py.py runs it across two VMs). Exits non-zero on
the first wrong value, naming the check and the rank.
"""
import array
import sys

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()


def check(cond, what):
    if not cond:
        print(f"rank {rank}: FAIL {what}", file=sys.stderr, flush=True)
        comm.Abort(1)


check(size == 4, f"size {size} != 4")

# bcast, allreduce, gather, scatter, alltoall of Python objects
obj = comm.bcast({"a": [1, 2.5, "x"], "b": (None, True)} if rank == 0 else None, root=0)
check(obj == {"a": [1, 2.5, "x"], "b": (None, True)}, f"bcast {obj!r}")
check(comm.allreduce(1) == size, "allreduce(1)")
check(comm.allreduce(rank, op=MPI.MAX) == size - 1, "allreduce MAX")
check(comm.allreduce([rank]) == list(range(size)), "allreduce of lists (SUM concatenates)")
g = comm.gather(("r", rank), root=1)
check(g == [("r", r) for r in range(size)] if rank == 1 else g is None, f"gather {g!r}")
check(comm.allgather(rank * rank) == [r * r for r in range(size)], "allgather")
s = comm.scatter([{"to": r} for r in range(size)] if rank == 2 else None, root=2)
check(s == {"to": rank}, f"scatter {s!r}")
a = comm.alltoall([(rank, d) for d in range(size)])
check(a == [(src, rank) for src in range(size)], f"alltoall {a!r}")
check(comm.reduce(rank + 1, op=MPI.PROD, root=3) == (24 if rank == 3 else None), "reduce PROD")
check(comm.exscan(1) == (rank if rank else None), "exscan")
check(comm.scan(rank) == sum(range(rank + 1)), "scan")

# send/recv of dicts, small and larger than 64 KiB (past the eager limits)
big = {"blob": bytes(range(256)) * 1024, "n": 70000, "l": list(range(20000))}
nxt, prv = (rank + 1) % size, (rank - 1) % size
if rank % 2 == 0:
    comm.send({"from": rank, "k": [rank] * 3}, dest=nxt, tag=7)
    comm.send(dict(big, src=rank), dest=nxt, tag=8)
    small = comm.recv(source=prv, tag=7)
    large = comm.recv(source=prv, tag=8)
else:
    small = comm.recv(source=prv, tag=7)
    large = comm.recv(source=prv, tag=8)
    comm.send({"from": rank, "k": [rank] * 3}, dest=nxt, tag=7)
    comm.send(dict(big, src=rank), dest=nxt, tag=8)
check(small == {"from": prv, "k": [prv] * 3}, f"recv small {small!r}")
check(large == dict(big, src=prv), "recv > 64 KiB dict")
st = MPI.Status()
got = comm.sendrecv({"sr": rank}, dest=nxt, sendtag=9, source=MPI.ANY_SOURCE, recvtag=9,
                    status=st)
check(got == {"sr": prv} and st.Get_source() == prv, f"sendrecv {got!r} from {st.Get_source()}")

# isend/irecv of objects (irecv of a large one needs a buffer in mpi4py)
reqs = [comm.isend({"i": rank, "pad": "x" * 100}, dest=d, tag=11) for d in range(size)]
objs = [comm.irecv(source=s, tag=11).wait() for s in range(size)]
MPI.Request.waitall(reqs)
check(objs == [{"i": s, "pad": "x" * 100} for s in range(size)], "isend/irecv")
rq = comm.isend(big, dest=nxt, tag=12)
rr = comm.irecv(bytearray(1 << 20), source=prv, tag=12)
check(rr.wait() == big, "irecv > 64 KiB")
rq.wait()
comm.Barrier()

# Split: two halves, ordered by key = -rank (reversed)
sub = comm.Split(color=rank % 2, key=-rank)
check(sub.Get_size() == 2, "Split size")
members = sub.allgather(rank)
check(members == sorted([r for r in range(size) if r % 2 == rank % 2], reverse=True),
      f"Split members {members}")
check(sub.bcast(rank if sub.Get_rank() == 0 else None) == members[0], "bcast in Split")
sub.Free()

# Dup and attribute caching
dup = comm.Dup()
check(MPI.Comm.Compare(comm, dup) == MPI.CONGRUENT, "Dup congruent")
kv = MPI.Comm.Create_keyval(copy_fn=lambda o, k, v: v + ["copied"])
dup.Set_attr(kv, ["v", rank])
check(dup.Get_attr(kv) == ["v", rank], "Get_attr")
dup2 = dup.Dup()
check(dup2.Get_attr(kv) == ["v", rank, "copied"], f"attr copied on Dup {dup2.Get_attr(kv)!r}")
dup.Delete_attr(kv)
check(dup.Get_attr(kv) is None, "Delete_attr")
check(dup2.allreduce(rank) == 6, "allreduce on a Dup")
dup2.Free()
dup.Free()
MPI.Comm.Free_keyval(kv)
check(isinstance(comm.Get_attr(MPI.TAG_UB), int) and comm.Get_attr(MPI.TAG_UB) >= 32767, "TAG_UB")

# Create_subarray: rank 0 sends the 2x3 block at (1, 2) of a 4x6 int array
t = MPI.INT.Create_subarray([4, 6], [2, 3], [1, 2]).Commit()
check(t.Get_size() == 6 * 4 and t.Get_extent() == (0, 4 * 6 * 4), "subarray size/extent")
if rank == 0:
    for d in range(1, size):
        comm.Send([array.array("i", range(24)), 1, t], dest=d, tag=20)
else:
    got = array.array("i", [0] * 6)
    comm.Recv([got, MPI.INT], source=0, tag=20)
    check(list(got) == [8, 9, 10, 14, 15, 16], f"subarray recv {list(got)}")
    back = array.array("i", [-1] * 24)
    comm.Sendrecv([got, MPI.INT], dest=rank, recvbuf=[back, 1, t], source=rank)
    check([i for i, v in enumerate(back) if v != -1] == [8, 9, 10, 14, 15, 16], "subarray unpack")
t.Free()

# Info
info = MPI.Info.Create()
info.Set("key", "value")
info["other"] = "2"
check(info.Get("key") == "value" and info.Get_nkeys() == 2, "Info Set/Get")
check(sorted(info.keys()) == ["key", "other"], f"Info keys {info.keys()}")
info2 = info.Dup()
info.Delete("key")
check(info.Get("key") is None and info2.Get("key") == "value", "Info Delete/Dup")
info.Free()
info2.Free()

# processor name, Wtime
name = MPI.Get_processor_name()
names = comm.allgather(name)
check(isinstance(name, str) and name and len(set(names)) >= 1, f"processor name {names}")
t0 = MPI.Wtime()
check(isinstance(t0, float) and MPI.Wtick() > 0 and MPI.Wtime() >= t0, "Wtime")

comm.Barrier()
if rank == 0:
    print("mpi4py object API: OK", ", ".join(sorted(set(names))), flush=True)
