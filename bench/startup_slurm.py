#!/usr/bin/env python3
"""The driver of bench/startup_slurm.sh: start a one-machine Slurm, run
bench/compare.py on srun commands of bench/startup at each rank count, stop
the cluster whatever happened."""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from vmpi import slurm_local  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--build", required=True, help="vmpi's build directory")
    ap.add_argument("--ext", required=True, help="where bench/ is built for MPICH and Open MPI")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--ranks", default="2 8 32", help="rank counts, e.g. '2 8 32'")
    o = ap.parse_args(argv)
    why = slurm_local.why_not()
    if why:
        print(f"startup_slurm: {why}", file=sys.stderr)
        return 2
    ranks = [int(n) for n in o.ranks.replace(",", " ").split()]
    with tempfile.TemporaryDirectory(prefix="vmpi-slurm-") as d:
        cluster = slurm_local.Cluster(Path(d))
        try:
            cluster.start()
            pmix = "pmix" in cluster.plugins()
            print(f"### srun of {cluster.node} (one node, {cluster.cpus} CPUs configured); "
                  f"Open MPI {'with --mpi=pmix' if pmix else 'left out: no pmix plugin'}",
                  flush=True)
            for n in ranks:
                runs = [f"vmpi=srun --mpi=pmi2 -O -n {n} {o.build}/bench/startup",
                        f"mpich=srun --mpi=pmi2 -O -n {n} {o.ext}/mpich/startup"]
                if pmix:
                    runs.append(f"openmpi=srun --mpi=pmix -O -n {n} {o.ext}/openmpi/startup")
                cmd = [sys.executable, str(HERE / "compare.py"), "--reps", str(o.reps)]
                for r in runs:
                    cmd += ["--run", r]
                rc = subprocess.run(cmd, env=cluster.env).returncode
                print(flush=True)
                if rc:
                    return rc
        except slurm_local.SlurmError as exc:
            print(f"startup_slurm: {exc}", file=sys.stderr)
            return 1
        finally:
            cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
