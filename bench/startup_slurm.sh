#!/bin/sh
# Start-up time under Slurm: MPI_Init to the first barrier (bench/startup.c)
# started by srun in a one-machine cluster of the script's own
# (python/vmpi/slurm_local.py, as tests/py/test_slurm.py starts it):
#   vmpi      srun --mpi=pmi2 (vmpi's PMI-2 client)
#   mpich     Debian's MPICH, srun --mpi=pmi2
#   openmpi   Debian's Open MPI, srun --mpi=pmix (when this Slurm has the
#             plugin)
# each with -O (the node has 8 CPUs configured; more ranks oversubscribe
# it), medians of interleaved runs (bench/compare.py).
#   sh bench/startup_slurm.sh [BUILD_DIR]   (REPS=N, RANKS="2 8 32"; root,
#                                            slurm-wlm and munge)
set -e
. "$(dirname "$0")/setup.sh"
exec python3 "$here/startup_slurm.py" --build "$build" --ext "$ext" --reps "$reps" \
    --ranks "${RANKS:-2 8 32}"
