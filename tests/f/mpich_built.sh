#!/bin/sh
# The Fortran tests (MPI-IO among them) built with Debian's mpif90.mpich (MPICH's mpif.h and mpi
# module) run unmodified on vmpi's libmpichfort.so.12 through
# LD_LIBRARY_PATH, in one VM and across two. Skipped (77) without MPICH's
# Fortran compiler wrapper.
set -e
build=$(cd "${1:?usage: mpich_built.sh BUILD_DIR SOURCE_DIR}" && pwd)
src=${2:?usage: mpich_built.sh BUILD_DIR SOURCE_DIR}
command -v mpif90.mpich >/dev/null || { echo "mpich_built: no mpif90.mpich: skipped"; exit 77; }
# In a sanitized build the ASan run-time must come first in a program
# that was not linked with it.
pre=""
asan=$(ldd "$build/lib/libvmpi.so" | awk '/libasan/ {print $3}')
[ -n "$asan" ] && pre="$asan"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$out"
for t in t_f_p2p.f90 t_f_coll.f t_f_halo.f90 t_f_io.f90; do
    p=${t%.*}
    mpif90.mpich -I"$src/tests/f" -o "$p" "$src/tests/f/$t" || { echo "mpich_built: mpif90.mpich could not build $t"; exit 1; }
    LD_LIBRARY_PATH="$build/lib" ldd "./$p" | grep -q "libmpichfort.so.12 => $build/lib/" || {
        echo "mpich_built: $p does not resolve libmpichfort.so.12 to $build/lib"; exit 1; }
    for place in "" "--vms 2"; do
        # shellcheck disable=SC2086 # $place is two words or none
        LD_LIBRARY_PATH="$build/lib" "$build/bin/vmpirun" -n 4 $place --timeout 60 \
            -x LD_LIBRARY_PATH="$build/lib" ${pre:+-x LD_PRELOAD="$pre"} "./$p" > log 2>&1 || {
            cat log; echo "mpich_built: $p ($place) failed on vmpi"; exit 1; }
        grep -q "No Errors" log || { cat log; echo "mpich_built: $p ($place) did not finish"; exit 1; }
    done
    echo "mpich_built: $p passed in one VM and across two"
done
