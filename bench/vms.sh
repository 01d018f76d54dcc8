#!/bin/sh
# Co-resident VMs: 2 ranks pinned to two cores, in one run (interleaved
# repetitions, per-size medians):
#   smp         vmpi, both ranks in one VM
#   ivshmem     vmpi, two emulated VMs of one host (vmpirun --vms 2)
#   ivshmem-am  the same with buffers from MPI_Alloc_mem (in the region)
#   vnic        vmpi, two VMs with VMPI_CHANNELS=smp,ofi (the virtual network)
#   mpich       Debian's MPICH in the same two VMs under vmpirun's PMI-1
#               server, UCX over TCP (what UCX picks between real VMs)
#   sh bench/vms.sh [BUILD_DIR]   (REPS=N to change the repetitions)
set -e
. "$(dirname "$0")/setup.sh"
run="$build/bin/vmpirun -n 2 --bind core"
vms="$run --vms 2"
cmp() {
    python3 "$here/compare.py" --reps "$reps" \
        --run smp="$run $build/bench/$1 $2" \
        --run ivshmem="$vms $build/bench/$1 $2" \
        --run ivshmem-am="$vms $build/bench/$1 $2 --alloc-mem" \
        --run vnic="$vms -x VMPI_CHANNELS=smp,ofi $build/bench/$1 $2" \
        --run mpich="$vms -x UCX_TLS=tcp,self $ext/mpich/$1 $2"
}
echo "### machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, Linux $(uname -r)"
echo "### one-way latency (us), median of $reps interleaved runs"
cmp latency "-m 8:8192 -i 20000"
echo
echo "### bandwidth (MB/s), median of $reps interleaved runs"
cmp bw "-m 262144:4194304"
