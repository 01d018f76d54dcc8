#!/bin/sh
# mpicxx and mpifort (with their other names) build and link programs
# against vmpi: a C++ program, a Fortran program with mpif.h and one with
# the mpi module; -show/-compile-info/-link-info print the command; MPICH's
# and Open MPI's variables choose the compiler; pkg-config and CMake's
# FindMPI find vmpi.
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
[ "$(MPICH_CC=mcc "$bin/mpicc" --showme:compile)" = "mcc -I$build/include" ] || fail "MPICH_CC is ignored"
[ "$(OMPI_CC=occ "$bin/mpicc" -showme -c x.c)" = "occ -I$build/include -c x.c" ] || fail "OMPI_CC or -showme"
# MPICH's -cc= and -show anywhere among the arguments, the others kept in order
[ "$("$bin/mpicc" -O2 -cc=mycc x.c -show)" = "mycc -I$build/include -L$build/lib -O2 x.c -Wl,-rpath,$build/lib -lmpi" ] ||
    fail "mpicc -cc= ... -show: $("$bin/mpicc" -O2 -cc=mycc x.c -show)"
"$bin/mpicc" --showme:link | grep -q -- "-L$build/lib .*-lmpi" || fail "mpicc --showme:link"

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
# pkg-config knows vmpi as `mpi` too; CMake's FindMPI finds the wrappers
# (C, CXX and, when built, Fortran with the mpi and mpi_f08 modules).
PKG_CONFIG_PATH="$build/lib/pkgconfig" pkg-config --libs mpi | grep -q -- "-L$build/lib/pkgconfig/../../lib .*-lmpi" ||
    fail "pkg-config mpi: $(PKG_CONFIG_PATH="$build/lib/pkgconfig" pkg-config --libs mpi)"
langs="C CXX"
[ -x "$bin/mpifort" ] && langs="C CXX Fortran"
mkdir "$out/fp"
cat > "$out/fp/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(fp $langs)
find_package(MPI REQUIRED COMPONENTS $langs)
message(STATUS "modules: \${MPI_Fortran_HAVE_F90_MODULE} \${MPI_Fortran_HAVE_F08_MODULE}")
CMAKE
PATH="$bin:$PATH" cmake -S "$out/fp" -B "$out/fp/b" -DMPI_HOME="$build" > "$out/fp.log" 2>&1 ||
    { cat "$out/fp.log"; fail "find_package(MPI COMPONENTS $langs) failed"; }
grep -q "Found MPI_C: $build/lib/libmpi.so" "$out/fp.log" || { cat "$out/fp.log"; fail "FindMPI did not find vmpi"; }
if [ -x "$bin/mpifort" ]; then
    grep -q "modules: TRUE TRUE" "$out/fp.log" || { cat "$out/fp.log"; fail "FindMPI found no mpi/mpi_f08 module"; }
fi
echo "wrappers: all passed"
