#!/bin/sh
# MPI-IO bandwidth side by side (bench/io.c, issue 29): collective write and
# read of a 2D block-distributed array (subarray view, a checkpoint) and of
# 1 KiB blocks interleaved between ranks (vector view), 4 ranks, per-rank
# sizes SIZES, on the machine's disk and on tmpfs, in one run of
#   vmpi      build/bin/vmpirun (its two-phase collective buffering)
#   mpich     Debian's MPICH, mpiexec.mpich (ROMIO)
#   openmpi   Debian's Open MPI, mpiexec.openmpi (OMPIO), told to yield when
#             idle (mpi_yield_when_idle: its best setting with 4 ranks on 2
#             cores; --oversubscribe lets it start them)
# with interleaved repetitions and medians (bench/io.py). Every library gets
# the same placement: rank r pinned to core r mod 2 (vmpirun --bind core,
# mpiexec.mpich -bind-to core, Open MPI --bind-to core:overload-allowed), as
# bench/coll.sh does. Timed per write: open..set_view..write_all..sync..close
# (the data is on the disk at the end), per read: open..read_all..close of a
# file whose pages were dropped from the page cache (a restart's read); every
# read is verified. Each io run does every size 5 times (1 MiB..16 MiB, after
# one untimed write and read; the median) or once (larger); the REPS runs give
# the median of those.
#   sh bench/io.sh [BUILD_DIR]   (REPS=N runs per library, default 3;
#                                 SIZES=LIST per-rank sizes, default
#                                 1M,16M,256M, e.g. SIZES=1M,4M REPS=1 for a
#                                 quick run; DISK_DIR, default /var/tmp, and
#                                 TMPFS_DIR, default /dev/shm: where the files
#                                 go; FS="disk tmpfs" the ones to run;
#                                 OUT=DIR keeps the tables and every run,
#                                 default BUILD_DIR/io-results)
set -e
: "${REPS:=3}"
. "$(dirname "$0")/setup.sh"
sizes=${SIZES:-1M,16M,256M}
out=${OUT:-$build/io-results}
mkdir -p "$out"
limit="timeout -k 5 900"
vmpi="$limit $build/bin/vmpirun -n 4 --bind core"
mpich="$limit mpiexec.mpich -n 4 -bind-to core"
ompi="$limit mpiexec.openmpi -n 4 --oversubscribe --bind-to core:overload-allowed --mca mpi_yield_when_idle 1"
fstype() { df --output=fstype "$1" | tail -n 1; }

disk=${DISK_DIR:-/var/tmp}/vmpi-io.$$
tmpfs=${TMPFS_DIR:-/dev/shm}/vmpi-io.$$
trap 'rm -rf "$disk" "$tmpfs"' EXIT INT TERM
mkdir -p "$disk" "$tmpfs"
if [ "$(fstype "$disk")" = tmpfs ]; then
    echo "io.sh: $disk is on tmpfs, not a disk (set DISK_DIR)" >&2
    exit 1
fi
if [ "$(fstype "$tmpfs")" != tmpfs ]; then
    echo "io.sh: $tmpfs is not on tmpfs (set TMPFS_DIR)" >&2
    exit 1
fi

echo "### machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, Linux $(uname -r)"
echo "### load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for fs in ${FS:-disk tmpfs}; do
    eval dir=\$$fs
    a="--sizes $sizes -d $dir --json"
    echo
    python3 "$here/io.py" --reps "$reps" --json-out "$out/$fs.json" \
        --title "$fs: $dir ($(fstype "$dir"), $(df --output=source "$dir" | tail -n 1)), 4 ranks on $(nproc) cores" \
        --run vmpi="$vmpi $build/bench/io $a" \
        --run mpich="$mpich $ext/mpich/io $a" \
        --run openmpi="$ompi $ext/openmpi/io $a" | tee "$out/$fs.txt"
done
echo
echo "### load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
