#!/bin/sh
# One-sided communication, 2 ranks pinned to two cores, in one run
# (interleaved repetitions, per-size medians; bench/compare.py):
#   vmpi         vmpi, both ranks in one VM
#   mpich        Debian's MPICH, same VM
#   openmpi      Debian's Open MPI, same VM
#   vmpi-2vm     vmpi, two emulated VMs of one host (vmpirun --vms 2)
#   mpich-2vm    Debian's MPICH in the same two VMs under vmpirun's PMI-1
#                server (UCX over TCP, what UCX picks between real VMs)
# then the contended exclusive-lock benchmark (bench/rma_lock): 8 ranks in
# two VMs, all locking rank 0's window, opportunistic ticket vs
# spin-then-park ticket window locks (VMPI_RMA_LOCK); last, vmpi between
# two emulated hosts (vmpirun --hosts 2): Put and Get by libfabric RMA
# (default) against active messages (VMPI_RMA_NET=0).
#   sh bench/rma.sh [BUILD_DIR]   (REPS=N repetitions, TESTS="put_lat ..."
#                                  a subset, SYNCS="flush ..." the modes)
set -e
. "$(dirname "$0")/setup.sh"
limit="timeout -k 5 300"
run="$limit $build/bin/vmpirun -n 2 --bind core"
vms="$run --vms 2"
mpich="$limit mpiexec.mpich -n 2 -bind-to core"
ompi="$limit mpiexec.openmpi -n 2 --bind-to core"
cmp() {
    python3 "$here/compare.py" --reps "$reps" \
        --run vmpi="$run $build/bench/rma $1" \
        --run mpich="$mpich $ext/mpich/rma $1" \
        --run openmpi="$ompi $ext/openmpi/rma $1" \
        --run vmpi-2vm="$vms $build/bench/rma $1" \
        --run mpich-2vm="$vms -x UCX_TLS=tcp,self $ext/mpich/rma $1"
}
echo "### machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, Linux $(uname -r)"
for t in ${TESTS:-put_lat get_lat acc_lat fop_lat put_bw get_bw}; do
    for s in ${SYNCS:-flush}; do
        case $t in
        *_bw) m="-m 8:1048576" ;;
        fop_lat | cas_lat) m="" ;;
        *) m="-m 8:65536" ;;
        esac
        echo
        echo "### rma -t $t -w allocate -s $s $m: median of $reps interleaved runs"
        cmp "-t $t -w allocate -s $s $m"
    done
done
for t in ${NET_TESTS-put_lat get_lat}; do
    echo
    echo "### rma -t $t -w allocate -s flush -m 8:1048576, two hosts: median of $reps interleaved runs"
    python3 "$here/compare.py" --reps "$reps" \
        --run vmpi-net="$run --hosts 2 $build/bench/rma -t $t -m 8:1048576" \
        --run vmpi-am="$run --hosts 2 -x VMPI_RMA_NET=0 $build/bench/rma -t $t -m 8:1048576"
done
echo
echo "### rma_lock: 8 ranks in two VMs, exclusive locks on rank 0 (acquisitions/s), median of $reps"
for i in $(seq "$reps"); do
    for k in oticket spark; do
        $limit "$build/bin/vmpirun" -n 8 --vms 2 -x VMPI_RMA_LOCK=$k "$build/bench/rma_lock" -T 2 |
            sed -n "s/^# throughput *\([0-9.]*\).*/$k \1/p"
    done
done | python3 -c '
import statistics, sys
runs = {}
for line in sys.stdin:
    k, v = line.split()
    runs.setdefault(k, []).append(float(v))
for k, v in runs.items():
    print(f"{k:8s} median {statistics.median(v):10.0f}  runs {sorted(round(x) for x in v)}")
med = {k: statistics.median(v) for k, v in runs.items()}
if len(med) == 2:
    print("oticket/spark %.2f" % (med["oticket"] / med["spark"]))
'
