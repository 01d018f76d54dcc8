#!/bin/sh
# MPI_THREAD_MULTIPLE side by side: vmpi, Debian's MPICH and Open MPI on 2
# ranks, each pinned to its own core (a rank's threads share its core), in
# one run with interleaved repetitions (bench/compare.py, medians).
#   sh bench/threads.sh [BUILD_DIR]   (REPS=N to change the repetitions)
# Open MPI runs the threaded tests with fewer iterations (OMPI_ITERS): with
# several threads per core it takes milliseconds per message.
set -e
. "$(dirname "$0")/setup.sh"
oi=${OMPI_ITERS:-200}
vr="$build/bin/vmpirun -n 2 --bind core $build/bench/threads"
mr="mpiexec.mpich -n 2 -bind-to core $ext/mpich/threads"
orun="mpiexec.openmpi -n 2 --bind-to core $ext/openmpi/threads"
oy="mpiexec.openmpi -n 2 --bind-to core --mca mpi_yield_when_idle 1 $ext/openmpi/threads"
cmp() {
    python3 "$here/compare.py" --reps "$reps" "$@"
}
echo "### machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, Linux $(uname -r)"
echo "### 2 ranks on 2 cores; medians of $reps interleaved runs"
for what in lat rate; do
    if [ $what = lat ]; then
        echo "### (a) one thread: one-way latency of 8 bytes (us), SINGLE vs MULTIPLE requested"
    else
        echo "### (a) one thread: 8-byte messages per second (window 64), SINGLE vs MULTIPLE requested"
    fi
    cmp --run vmpi-single="$vr $what -l single" --run vmpi-multiple="$vr $what -l multiple" \
        --run mpich-single="$mr $what -l single" --run mpich-multiple="$mr $what -l multiple" \
        --run openmpi-single="$orun $what -l single" \
        --run openmpi-multiple="$orun $what -l multiple"
    echo
done
echo "### (b) T thread pairs (rows: T), 8-byte messages per second of all pairs (window 64)"
cmp --run vmpi="$vr mtrate -t 1,2,4 -i 20000" --run mpich="$mr mtrate -t 1,2,4 -i 20000" \
    --run openmpi="$orun mtrate -t 1,2,4 -i $oi" --run openmpi-yield="$oy mtrate -t 1,2,4 -i $oi"
echo
echo "### (c) T threads per rank ping-pong on one communicator (rows: T), one-way latency (us) each sees"
cmp --run vmpi="$vr mtlat -t 1,2,4 -i 100000" --run mpich="$mr mtlat -t 1,2,4 -i 100000" \
    --run openmpi="$orun mtlat -t 1,2,4 -i $oi" --run openmpi-yield="$oy mtlat -t 1,2,4 -i $oi"
echo
echo "### (d) as (b) with blocking sends, beside a thread of each rank parked in MPI_Recv (rows: T), messages per second"
cmp --run vmpi="$vr parked -t 1,2,4 -i 20000" \
    --run vmpi-nosplit="$build/bin/vmpirun -n 2 --bind core -x VMPI_THREAD_SPLIT=0 $build/bench/threads parked -t 1,2,4 -i 20000" \
    --run mpich="$mr parked -t 1,2,4 -i 20000" \
    --run openmpi="$orun parked -t 1,2,4 -i $oi" --run openmpi-yield="$oy parked -t 1,2,4 -i $oi"
