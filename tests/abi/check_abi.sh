#!/bin/sh
# Compare vmpi's mpi.h against MPICH's, which defines the ABI vmpi follows.
#
#   tests/abi/check_abi.sh INCLUDE_DIR
#
# INCLUDE_DIR is the directory holding vmpi's mpi.h (normally <repo>/include).
# Set MPICH_INCLUDE to use another MPICH header directory (default: Debian's).
#
# Checks, all compile-only (no MPI library is linked or loaded):
#   1. vmpi's mpi.h compiles cleanly as C11 (-Wall -Wextra -Werror -pedantic)
#      and as C++ (-Wall -Wextra -Werror).
#   2. abi_probe.c built against each header prints identical constants,
#      handle values, typedef types and MPI_Status layout.
#   3. every MPI_/PMPI_ function declared by vmpi has exactly the prototype
#      MPICH declares (types after typedef names, via gcc -aux-info).
# Exits non-zero, printing the differences, if any check fails.
set -u

if [ $# -ne 1 ]; then
    echo "usage: $0 INCLUDE_DIR" >&2
    exit 2
fi
VMPI_INC=$1
MPICH_INC=${MPICH_INCLUDE:-/usr/include/x86_64-linux-gnu/mpich}
CC=${CC:-gcc}
CXX=${CXX:-g++}
HERE=$(cd "$(dirname "$0")" && pwd)

for f in "$VMPI_INC/mpi.h" "$MPICH_INC/mpi.h"; do
    [ -f "$f" ] || { echo "check_abi: missing $f" >&2; exit 2; }
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/vmpi-abi.XXXXXX") || exit 2
trap 'rm -rf "$WORK"' EXIT INT TERM
fail=0

# --- 1. header hygiene -----------------------------------------------------
printf '#include <mpi.h>\nint vmpi_abi_dummy;\n' > "$WORK/inc.c"
cp "$WORK/inc.c" "$WORK/inc.cc"
if ! "$CC" -std=c11 -Wall -Wextra -Werror -pedantic -fsyntax-only \
        -I "$VMPI_INC" "$WORK/inc.c"; then
    echo "check_abi: FAIL: mpi.h does not compile cleanly as C11"
    fail=1
fi
if ! "$CXX" -Wall -Wextra -Werror -fsyntax-only -I "$VMPI_INC" "$WORK/inc.cc"; then
    echo "check_abi: FAIL: mpi.h does not compile cleanly as C++"
    fail=1
fi

# --- 2. constants and layout -------------------------------------------------
"$CC" -std=c11 -Wall -Wextra -Werror -pedantic -I "$VMPI_INC" \
    -o "$WORK/probe_vmpi" "$HERE/abi_probe.c" || exit 1
# MPICH's header is not -pedantic clean; only build it.
"$CC" -std=c11 -I "$MPICH_INC" -o "$WORK/probe_mpich" "$HERE/abi_probe.c" || exit 1
"$WORK/probe_vmpi"  > "$WORK/vmpi.txt"  || exit 1
"$WORK/probe_mpich" > "$WORK/mpich.txt" || exit 1
if ! diff -u "$WORK/mpich.txt" "$WORK/vmpi.txt" \
        --label "MPICH ($MPICH_INC)" --label "vmpi ($VMPI_INC)"; then
    echo "check_abi: FAIL: constants/layout differ (- MPICH, + vmpi)"
    fail=1
fi
nconst=$(wc -l < "$WORK/vmpi.txt")

# --- 3. function prototypes ------------------------------------------------
# -aux-info lines look like:
#   /* file:line:NC */ extern int MPI_Send (const void *, int, ...);
protos() {
    "$CC" -std=c11 -fsyntax-only -aux-info "$WORK/$1.aux" -I "$2" "$WORK/inc.c" || exit 1
    sed -n 's|^/\*.*\*/ *||p' "$WORK/$1.aux" \
        | grep -E '^extern [^(]* \*?P?MPI_[A-Za-z0-9_]+ \(' \
        | sed 's/  */ /g' | sort -u > "$WORK/$1.protos"
}
protos vmpi "$VMPI_INC"
protos mpich "$MPICH_INC"
# lines declared by vmpi that MPICH does not declare identically; MPICH
# makes the handle conversions (MPI_Comm_c2f, ...) macros, which vmpi also
# exports as functions for bindings that look symbols up
grep -oE '^#define P?MPI_[A-Za-z0-9_]+\(' "$MPICH_INC/mpi.h" | sed 's/^#define //; s/($//' \
    | sort -u > "$WORK/mpich.macros"
comm -23 "$WORK/vmpi.protos" "$WORK/mpich.protos" | while IFS= read -r line; do
    name=$(printf '%s\n' "$line" | sed -E 's/^extern [^(]* \*?(P?MPI_[A-Za-z0-9_]+) \(.*/\1/')
    grep -qx "$name" "$WORK/mpich.macros" || printf '%s\n' "$line"
done > "$WORK/proto.bad"
if [ -s "$WORK/proto.bad" ]; then
    echo "check_abi: FAIL: prototypes in vmpi's mpi.h that differ from MPICH's:"
    while IFS= read -r line; do
        name=$(printf '%s\n' "$line" | sed -E 's/^extern [^(]* \*?(P?MPI_[A-Za-z0-9_]+) \(.*/\1/')
        echo "  vmpi : $line"
        grep -E " \*?$name \(" "$WORK/mpich.protos" | sed 's/^/  mpich: /' \
            || echo "  mpich: (not declared)"
    done < "$WORK/proto.bad"
    fail=1
fi
nproto=$(wc -l < "$WORK/vmpi.protos")

if [ "$fail" -ne 0 ]; then
    exit 1
fi
echo "check_abi: OK ($nconst constants/layout lines, $nproto prototypes match MPICH)"
exit 0
