#!/bin/sh
# mpicxx and mpifort (with their other names) build and link programs
# against vmpi: a C++ program, a Fortran program with mpif.h and one with
# the mpi module; -show/-compile-info/-link-info print the command; MPICH's
# and Open MPI's variables choose the compiler.
set -e
build=$(cd "${1:?usage: wrappers.sh BUILD_DIR SOURCE_DIR}" && pwd)
src=${2:?usage: wrappers.sh BUILD_DIR SOURCE_DIR}
bin=$build/bin
# In a sanitized build the wrappers' programs load an ASan library without
# being linked with its run-time, which must then come first (in the ranks,
# not in the compilers).
asan=$(ldd "$build/lib/libvmpi.so" | awk '/libasan/ {print $3}')
run() { "$bin/vmpirun" -n "$1" --timeout 60 ${asan:+-x LD_PRELOAD="$asan"} "$2"; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "wrappers: $*"; exit 1; }

"$bin/mpicxx" -O1 -o "$out/cxx" "$src/tests/cxx/t_cxx_basic.cpp" || fail "mpicxx could not build t_cxx_basic.cpp"
run 2 "$out/cxx" | grep -q "No Errors" || fail "the mpicxx-built program failed"
"$bin/mpic++" -show x.cpp | grep -q -- "-I$build/include -L$build/lib x.cpp .*-lmpi" || fail "mpic++ -show: $("$bin/mpic++" -show x.cpp)"
[ "$(MPICH_CXX=my-c++ "$bin/mpicxx" -compile-info)" = "my-c++ -I$build/include" ] || fail "MPICH_CXX is ignored"
[ "$(OMPI_CXX=oc++ "$bin/mpicxx" -compile-info)" = "oc++ -I$build/include" ] || fail "OMPI_CXX is ignored"

if [ -x "$bin/mpifort" ]; then
    for w in mpifort mpif90 mpif77; do
        "$bin/$w" -link-info | grep -q -- "-L$build/lib .*-lvmpifort -lmpi" || fail "$w -link-info: $("$bin/$w" -link-info)"
    done
    [ "$(MPICH_FC=my-fc "$bin/mpifort" -compile-info)" = "my-fc -I$build/include" ] || fail "MPICH_FC is ignored"
    [ "$(OMPI_FC=ofc "$bin/mpif90" -compile-info)" = "ofc -I$build/include" ] || fail "OMPI_FC is ignored"
    [ "$(MPICH_F77=f77c "$bin/mpif77" -compile-info)" = "f77c -I$build/include" ] || fail "MPICH_F77 is ignored"
    "$bin/mpif90" -c -o "$out/coll.o" "$src/tests/f/t_f_coll.f" || fail "mpif90 -c of an mpif.h program"
    "$bin/mpif77" -o "$out/coll" "$out/coll.o" || fail "mpif77 could not link"
    "$bin/mpifort" -I"$src/tests/f" -o "$out/p2p" "$src/tests/f/t_f_p2p.f90" || fail "mpifort could not build a 'use mpi' program"
    for p in coll p2p; do
        run 4 "$out/$p" | grep -q "No Errors" || fail "the mpifort-built $p failed"
    done
fi
echo "wrappers: all passed"
