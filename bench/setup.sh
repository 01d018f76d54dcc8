# Sourced by the comparison scripts (main.sh, vms.sh, coll.sh, rma.sh) with
# their arguments: paths, repetitions, and the benchmark programs built
# against Debian's MPICH and Open MPI.
#   build  vmpi's build directory ($1, default build), absolute
#   reps   repetitions (REPS, default 5)
#   here   this folder, absolute
#   ext    where the MPICH and Open MPI builds go ($ext/mpich, $ext/openmpi)
build=$(cd "${1:-build}" && pwd)
reps=${REPS:-5}
here=$(cd "$(dirname "$0")" && pwd)
ext=$build/bench-ext
make -s -C "$here" MPICC=mpicc.mpich OUT="$ext/mpich" >/dev/null
make -s -C "$here" MPICC=mpicc.openmpi OUT="$ext/openmpi" >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
