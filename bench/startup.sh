#!/bin/sh
# Start-up time side by side: MPI_Init to the first barrier (bench/startup.c)
# at N ranks on this machine's cores (oversubscribed beyond them), vmpi in
# one VM, in V emulated VMs of one host (VMS, default 4; N if fewer; the
# host region sized by vmpirun), on 2 emulated hosts and under Hydra
# (Debian's mpiexec.hydra starting vmpi's program), Debian's MPICH and Open
# MPI (as shipped and with yield when idle), medians of interleaved runs
# (bench/compare.py).
#   sh bench/startup.sh [BUILD_DIR]   (REPS=N, RANKS="2 8 32", VMS=4)
set -e
. "$(dirname "$0")/setup.sh"
echo "### machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, Linux $(uname -r)"
echo "### MPI_Init to the first MPI_Barrier (ms, from main in the first rank to the barrier's end in the last); medians of $reps interleaved runs"
for n in ${RANKS:-2 8 32}; do
    v=${VMS:-4}
    [ "$n" -lt "$v" ] && v=$n
    python3 "$here/compare.py" --reps "$reps" \
        --run vmpi="$build/bin/vmpirun -n $n $build/bench/startup" \
        --run vmpi-vms="$build/bin/vmpirun -n $n --vms $v $build/bench/startup" \
        --run vmpi-2hosts="$build/bin/vmpirun -n $n --hosts 2 $build/bench/startup" \
        --run vmpi-hydra="mpiexec.hydra -n $n $build/bench/startup" \
        --run mpich="mpiexec.mpich -n $n $ext/mpich/startup" \
        --run openmpi="mpiexec.openmpi -n $n --oversubscribe $ext/openmpi/startup" \
        --run openmpi-yield="mpiexec.openmpi -n $n --oversubscribe --mca mpi_yield_when_idle 1 $ext/openmpi/startup"
    echo
done
