#!/bin/sh
# The main job: OSU-style latency and bandwidth on 2 ranks pinned to two
# cores, vmpi side by side with Debian's MPICH and Open MPI in one run
# (interleaved repetitions, per-size medians), then the raw limits.
#   sh bench/main.sh [BUILD_DIR]   (REPS=N to change the repetitions)
set -e
. "$(dirname "$0")/setup.sh"
run() {
    python3 "$here/compare.py" --reps "$reps" \
        --run vmpi="$build/bin/vmpirun -n 2 --bind core $build/bench/$1 $2" \
        --run mpich="mpiexec.mpich -n 2 -bind-to core $ext/mpich/$1 $2" \
        --run openmpi="mpiexec.openmpi -n 2 --bind-to core $ext/openmpi/$1 $2" \
        ${3:+--run clping="$build/bench/clping"}
}
echo "### machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, Linux $(uname -r)"
echo "### one-way latency (us), small messages, median of $reps interleaved runs"
echo "### (clping: one cache line ping-pong between the two cores, the physical limit)"
run latency "-m 0:8192 -i 50000" clping
echo
echo "### one-way latency (us), large messages, median of $reps interleaved runs"
run latency "-m 16384:4194304"
echo
echo "### bandwidth (MB/s), median of $reps interleaved runs"
run bw ""
echo
echo "### physical limit: single-core memcpy bandwidth"
"$build/bench/clping" --memcpy
