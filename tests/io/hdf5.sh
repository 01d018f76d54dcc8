#!/bin/sh
# Parallel HDF5 on vmpi: tests/io/h5_rw.c, built with Debian's h5pcc.mpich
# (libhdf5-mpich-dev, HDF5 for MPICH), runs unmodified on vmpi's
# libmpich.so.12 through LD_LIBRARY_PATH: 4 ranks write a contiguous and a
# chunked 2D dataset collectively and read them back, in one VM and across
# two emulated VMs. Skipped (77) only without h5pcc.mpich.
set -e
build=$(cd "${1:?usage: hdf5.sh BUILD_DIR SOURCE_DIR}" && pwd)
src=${2:?usage: hdf5.sh BUILD_DIR SOURCE_DIR}
command -v h5pcc.mpich >/dev/null || {
    echo "hdf5: no h5pcc.mpich (Debian package libhdf5-mpich-dev): skipped"; exit 77; }
# In a sanitized build the ASan run-time must come first in a program
# that was not linked with it.
pre=$(ldd "$build/lib/libvmpi.so" | awk '/libasan/ {print $3}')
out=$(mktemp -d /tmp/vmpi-hdf5.XXXXXX)
trap 'rm -rf "$out"' EXIT
cd "$out"
h5pcc.mpich -Wall -Wextra -Werror -o h5_rw "$src/tests/io/h5_rw.c" > log 2>&1 || {
    cat log; echo "hdf5: h5pcc.mpich could not build h5_rw.c"; exit 1; }
LD_LIBRARY_PATH="$build/lib" ldd ./h5_rw | grep -q "libmpich.so.12 => $build/lib/" || {
    echo "hdf5: h5_rw does not resolve libmpich.so.12 to $build/lib"; exit 1; }
for place in "" "--vms 2"; do
    rm -f data.h5
    # shellcheck disable=SC2086 # $place is two words or none
    LD_LIBRARY_PATH="$build/lib" "$build/bin/vmpirun" -n 4 $place --timeout 60 \
        -x LD_LIBRARY_PATH="$build/lib" ${pre:+-x LD_PRELOAD="$pre"} ./h5_rw "$out/data.h5" \
        > log 2>&1 || { cat log; echo "hdf5: h5_rw (4 ranks $place) failed on vmpi"; exit 1; }
    grep -q "No Errors" log || { cat log; echo "hdf5: h5_rw (4 ranks $place) did not finish"; exit 1; }
    # The file is HDF5's, not just readable by the program that wrote it.
    [ "$(od -An -c -N8 data.h5 | tr -d ' ')" = "211HDF\r\n032\n" ] || {
        echo "hdf5: data.h5 does not start with HDF5's signature"; exit 1; }
    echo "hdf5: h5_rw passed on 4 ranks ${place:-in one VM}"
done
