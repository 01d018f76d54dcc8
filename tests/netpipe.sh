#!/bin/sh
# Debian's NPmpich2, linked against libmpich.so.12, runs unmodified on vmpi
# (through LD_LIBRARY_PATH) with its integrity check in every mode.
set -e
build=${1:?usage: netpipe.sh BUILD_DIR}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$out"
# The binary must resolve libmpich.so.12 to vmpi's library.
LD_LIBRARY_PATH="$build/lib" ldd /usr/bin/NPmpich2 | grep -q "$build/lib/libmpich.so.12" || {
    echo "netpipe: NPmpich2 does not resolve libmpich.so.12 to $build/lib"; exit 1; }
# Not -z: NetPIPE 3.7 passes a hard-coded -1 as MPI_ANY_SOURCE (LAM's value),
# which is MPI_PROC_NULL in MPICH's ABI, so that mode hangs on Debian's own
# MPICH as well. ANY_SOURCE is covered by tests/c/t_p2p_anysource.c.
for mode in "" "-a" "-S" "-2"; do
    echo "== NPmpich2 -i $mode"
    LD_LIBRARY_PATH="$build/lib" "$build/bin/vmpirun" -n 2 --timeout 240 \
        -x LD_LIBRARY_PATH="$build/lib" /usr/bin/NPmpich2 -i -u 4194304 -n 3 $mode > log 2>&1 || {
        cat log; echo "netpipe: NPmpich2 -i $mode failed"; exit 1; }
    passed=$(grep -c "Integrity check passed" log || true)
    [ "$passed" -ge 30 ] || { cat log; echo "netpipe: only $passed sizes passed"; exit 1; }
    if grep -qiE "fail|error|corrupt" log; then cat log; echo "netpipe: integrity errors"; exit 1; fi
    tail -2 log
done
echo "netpipe: all modes passed"
