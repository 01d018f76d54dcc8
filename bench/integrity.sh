#!/bin/sh
# The cost of VMPI_INTEGRITY=crc32c (checksummed messages between VMs,
# channel/pair/sum.c): 2 ranks in two emulated VMs of one host, pinned to
# two cores, in one run (interleaved repetitions, per-size medians):
#   off         the default
#   crc32c      VMPI_INTEGRITY=crc32c
#   off-am      buffers from MPI_Alloc_mem (in the region: single copies)
#   crc32c-am   the same with the checks (Alloc_mem memory is then private)
# Latency is the mean one-way time of -i iterations (--json), so small
# differences are not lost to the table's two decimals.
#   sh bench/integrity.sh [BUILD_DIR]   (REPS=N to change the repetitions)
set -e
. "$(dirname "$0")/setup.sh"
vms="$build/bin/vmpirun -n 2 --bind core --vms 2"
on="-x VMPI_INTEGRITY=crc32c"
cmp() {
    python3 "$here/compare.py" --reps "$reps" \
        --run off="$vms $build/bench/$1 $2" \
        --run crc32c="$vms $on $build/bench/$1 $2" \
        --run off-am="$vms $build/bench/$1 $2 --alloc-mem" \
        --run crc32c-am="$vms $on $build/bench/$1 $2 --alloc-mem"
}
echo "### machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, Linux $(uname -r)"
echo "### one-way latency (us), median of $reps interleaved runs"
cmp latency "-m 8:65536 -i 100000 --json"
echo
echo "### bandwidth (MB/s), window of 64, median of $reps interleaved runs"
cmp bw "-m 65536:4194304"
