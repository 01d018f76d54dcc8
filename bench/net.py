#!/usr/bin/env python3
"""The network table: 2 ranks on 2 emulated hosts, vmpi next to MPICH, Open
MPI and raw TCP, in one run (interleaved repetitions, per-size medians, by
bench/compare.py).

    python3 bench/net.py [--build DIR] [--reps N]      (as root)

Two emulated hosts (network namespaces joined by a bridge, made with the
launcher's own vmpi.netns) carry every run, each rank pinned to its own
core (rank r on core r):

* vmpi: ``vmpirun --hosts 2`` (its own pair of namespaces, built the same
  way), the ofi channel with libfabric's default provider choice;
* raw TCP: bench/tcpping --spin (busy-polling, as MPI progress engines do),
  server on host 1, client on host 0;
* libfabric alone (latency only): its own fi_pingpong over the provider
  vmpi picks by default ("net", the native TCP RDM provider of libfabric
  1.17), the floor of any MPI built on it;
* MPICH (Debian, ch4:ucx): mpiexec.hydra, each rank entering its host with
  ``ip netns exec`` (UCX lists interfaces in /sys, which only ``ip netns
  exec`` remounts for the namespace), UCX_TLS=tcp,self so UCX cannot take
  its shared-memory transports (it considers both namespaces one machine);
* Open MPI (Debian): mpirun must run inside host 0's namespace with PMIx on
  vmpi0 (its PMIx server listens on 127.0.0.1 otherwise, which the other
  namespace cannot reach), btl tcp,self for the same reason as UCX_TLS.

Nothing is added to the machine's own network namespace; the namespaces
are removed at the end, also on errors and Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from vmpi import netns  # noqa: E402

WRAP = """#!/bin/sh
# Enter the emulated host of this rank and pin it to core = rank.
r=${PMI_RANK:-$OMPI_COMM_WORLD_RANK}
exec ip netns exec "$NS_PREFIX$r" taskset -c "$r" "$@"
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--reps", type=int, default=int(os.environ.get("REPS", "7")))
    ap.add_argument("--tables", default="latency,bw", help="which tables (latency,bw)")
    o = ap.parse_args()
    build = os.path.abspath(o.build)
    ext = os.path.join(build, "bench-ext")
    for cc, out in (("mpicc.mpich", "mpich"), ("mpicc.openmpi", "openmpi")):
        subprocess.run(["make", "-s", "-C", HERE, f"MPICC={cc}", f"OUT={ext}/{out}"],
                       check=True, stdout=subprocess.DEVNULL)
    # SIGTERM too must reach the finally below that removes the namespaces.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    ip = netns.check_usable()
    net = netns.Network.create(secrets.token_hex(16), 2, ip)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            wrap = os.path.join(tmp, "nswrap")
            with open(wrap, "w") as f:
                f.write(WRAP)
            os.chmod(wrap, 0o755)
            prefix = net.hosts[0][:-1]
            h0, h1 = net.hosts
            peer = netns.host_addr(1)
            env = (f"NS_PREFIX={prefix} OMPI_ALLOW_RUN_AS_ROOT=1 "
                   "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
            vmpirun = f"{build}/bin/vmpirun -n 2 --hosts 2 --bind core"
            mpich = (f"{env} UCX_TLS=tcp,self UCX_NET_DEVICES={netns.IFACE} "
                     f"mpiexec.hydra -n 2 {wrap}")
            ompi = (f"{env} PMIX_MCA_ptl_base_if_include={netns.IFACE} ip netns exec {h0} "
                    "mpirun.openmpi -np 2 --mca pml ob1 --mca btl tcp,self "
                    f"--mca btl_tcp_if_include {netns.IFACE} {wrap}")
            tcp = (f"(ip netns exec {h1} taskset -c 1 {build}/bench/tcpping --server "
                   f"--port 18515 2>/dev/null &) ; ip netns exec {h0} taskset -c 0 "
                   f"{build}/bench/tcpping --client {peer} --port 18515 --spin")

            # fi_pingpong prints "bytes #sent #ack total time MB/sec usec/xfer
            # Mxfers/sec" (usec/xfer is the one-way latency), one size per run
            # (its -S all would go on to megabytes).
            fi = (f"for s in 1 8 64 512; do (ip netns exec {h1} taskset -c 1 fi_pingpong "
                  f"-p net -e rdm -S $s -I 10000 >/dev/null 2>&1 &) ; sleep 0.3 ; "
                  f"ip netns exec {h0} taskset -c 0 fi_pingpong -p net -e rdm -S $s -I 10000 "
                  f"{peer} | awk '$1 ~ /^[0-9]+$/ {{print $1, $7}}'; done")

            def table(title: str, prog: str, args: str, tcpargs: str, extra: list[str]) -> None:
                print(f"### {title}, median of {o.reps} interleaved runs", flush=True)
                subprocess.run([sys.executable, os.path.join(HERE, "compare.py"),
                                "--reps", str(o.reps),
                                "--run", f"vmpi={vmpirun} {build}/bench/{prog} {args}",
                                "--run", f"tcp={tcp} {tcpargs}",
                                "--run", f"mpich={mpich} {ext}/mpich/{prog} {args}",
                                "--run", f"openmpi={ompi} {ext}/openmpi/{prog} {args}",
                                *extra],
                               check=True)
                print(flush=True)

            if "latency" in o.tables:
                table("one-way latency (us) between 2 emulated hosts", "latency",
                      "-m 1:65536 -i 10000", "-m 1:65536 -i 10000", ["--run", f"fi_net={fi}"])
            if "bw" in o.tables:
                table("bandwidth (MB/s) between 2 emulated hosts", "bw",
                      "-m 65536:4194304", "--bw -m 65536:4194304", [])
    finally:
        left = net.destroy()
        if left:
            print(f"net.py: could not remove {', '.join(left)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
