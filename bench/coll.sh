#!/bin/sh
# Collective latency (bench/coll, OSU semantics) on 4 ranks, per collective
# one interleaved run of six configurations (repetitions, per-size medians
# from bench/compare.py):
#   one VM     vmpi         vmpirun -n 4
#              mpich        Debian's MPICH (mpiexec.mpich)
#              openmpi      Debian's Open MPI (mpiexec.openmpi)
#   two VMs    vmpi-2vm     vmpirun -n 4 --vms 2 (2 ranks per VM; the
#                           hierarchical collectives through the ivshmem region)
#              vnic         the same with VMPI_CHANNELS=smp,ofi (the VMs talk
#                           over the virtual network)
#              mpich-2vm    MPICH in the same two VMs under vmpirun's PMI-1
#                           server, UCX over TCP between the VMs (as vms.sh)
# Binding: the machine has 2 cores, so 4 ranks oversubscribe it.  Every
# configuration pins ranks 0,2 to the first core and 1,3 to the second
# (vmpirun --bind core, mpiexec.mpich -bind-to core and Open MPI's
# --bind-to core:overload-allowed all place rank r on core r mod 2), so all
# libraries get the same placement, each VM one rank per core, and the
# numbers do not depend on where the scheduler happens to migrate ranks.
# Each library keeps its own idle policy, which is what a user gets: Open MPI
# (told so by --oversubscribe) and vmpi (more ranks than processors, see
# VMPI_YIELD_POLLS) yield the processor now and then while idle, MPICH polls.
# MPICH 4.0.2 over UCX TCP often hangs in MPI_Finalize here: a rank still
# disconnecting its UCX endpoints waits for a peer that already sits in the
# PMI barrier (skew between ranks, which oversubscription makes large).
# Every result is printed before MPI_Finalize, so the mpich-2vm runs go
# through --stop-after: the job is stopped 5 s after its last result.
#   sh bench/coll.sh [BUILD_DIR]   (REPS=N repetitions, default 5;
#                                   COLLS="NAME ..." runs only these (the
#                                   neighbourhood ones as neighbor_NAME) and
#                                   prints the tables of every result in OUT;
#                                   ITERS=N iterations per size, default 30;
#                                   OUT=DIR keeps the raw results,
#                                   default BUILD_DIR/coll-results)
set -e
# --stop-after SIZE CMD...: run CMD, print its output; once the JSON record
# of SIZE is out, give CMD 5 s to exit and then stop it.  Succeeds iff that
# record was printed.
if [ "$1" = --stop-after ]; then
    last="\"size\":$2,"
    shift 2
    log=$(mktemp)
    "$@" >"$log" &
    pid=$!
    grace=25   # 0.2 s ticks
    while kill -0 "$pid" 2>/dev/null; do
        if grep -q "$last" "$log"; then
            grace=$((grace - 1))
            if [ "$grace" -eq 0 ]; then
                kill "$pid" 2>/dev/null || true
            fi
        fi
        sleep 0.2
    done
    wait "$pid" || true
    cat "$log"
    grep -q "$last" "$log" && rc=0 || rc=1
    rm -f "$log"
    exit "$rc"
fi
. "$(dirname "$0")/setup.sh"
iters=${ITERS:-30}
out=${OUT:-$build/coll-results}
mkdir -p "$out"
# A hung run is killed instead of stalling the whole script.
limit="timeout -k 5 120"
vmpi="$limit $build/bin/vmpirun -n 4 --bind core"
vms="$vmpi --vms 2"
mpich="$limit mpiexec.mpich -n 4 -bind-to core"
ompi="$limit mpiexec.openmpi -n 4 --oversubscribe --bind-to core:overload-allowed"
# cmp NAME ARGS [PROG]: the six configurations of collective NAME of
# bench/PROG (default coll; results as PROG_NAME for another), interleaved
# (ARGS lists --sizes in increasing order, or -m MIN:MAX).
cmp() {
    p=${3:-coll}
    key=${3:+${3}_}$1
    case " ${COLLS:-$key} " in *" $key "*) ;; *) return 0 ;; esac
    a="$2 --json"
    last=$(echo "$2" | sed -n -e 's/.*--sizes [0-9,]*,\([0-9]*\).*/\1/p' \
                              -e 's/.*-m [0-9]*:\([0-9]*\).*/\1/p')
    last=${last:-0}   # barrier: one record, size 0
    echo "# $key $2" >&2
    python3 "$here/compare.py" --reps "$reps" --json-out "$out/$key.json" \
        --run vmpi="$vmpi $build/bench/$p $1 $a" \
        --run mpich="$mpich $ext/mpich/$p $1 $a" \
        --run openmpi="$ompi $ext/openmpi/$p $1 $a" \
        --run vmpi-2vm="$vms $build/bench/$p $1 $a" \
        --run vnic="$vms -x VMPI_CHANNELS=smp,ofi $build/bench/$p $1 $a" \
        --run mpich-2vm="sh $here/coll.sh --stop-after $last $vms -x UCX_TLS=tcp,self $ext/mpich/$p $1 $a" \
        >"$out/$key.txt"
}
# Short runs: with 4 ranks on 2 cores a step that waits for the rank sharing
# the core costs a scheduler time slice in the polling libraries, so few
# sizes and iterations (sizes > 8 KiB run a tenth of -i).
it="-i $iters -x $(((iters + 4) / 5))"
main="--sizes 8,512,8192,65536 $it"
more="--sizes 8,8192,65536 $it"
cmp allreduce "$main"
cmp bcast "$main"
cmp allgather "$main"
cmp alltoall "$main"
cmp barrier "$it"
cmp reduce "$more"
cmp gather "$more"
cmp scatter "$more"
# The non-blocking forms, call to the end of MPI_Wait.
cmp iallreduce "$more"
cmp ibcast "$more"
cmp iallgather "$more"
cmp ialltoall "$more"
cmp ibarrier "$it"
# Neighbourhood collectives on a periodic 2x2 grid (4 neighbours a rank).
for n in allgather alltoall iallgather ialltoall; do
    cmp $n "-m 8:65536 $it" neighbor
done

echo "### machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, Linux $(uname -r)"
echo "### collective latency (us, average over 4 ranks), median of $reps interleaved runs"
echo "### commands and every run: $out/<collective>.json"
python3 - "$out" <<'EOF'
import json, sys

TABLES = (("one VM", "vmpi", ("mpich", "openmpi")),
          ("two VMs x 2 ranks", "vmpi-2vm", ("vnic", "mpich-2vm")))


def cell(v):
    return "-" if v is None else (f"{v:.2f}" if v >= 10 else f"{v:.3f}")


def ratio(v, base):
    return "-" if v is None or not base else f"{v / base:.3g}"


for name in ("allreduce", "bcast", "allgather", "alltoall",
             "barrier", "reduce", "gather", "scatter",
             "iallreduce", "ibcast", "iallgather", "ialltoall", "ibarrier",
             "neighbor_allgather", "neighbor_alltoall", "neighbor_iallgather",
             "neighbor_ialltoall"):
    try:
        with open(f"{sys.argv[1]}/{name}.json", encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        continue
    med = doc["median"]
    for title, base, others in TABLES:
        cols = (base,) + others + tuple(f"{o}/{base}" for o in others)
        width = max(12, *(len(c) + 2 for c in cols))
        print(f"\n## {name}, {title}")
        print(f"{'# Size':<10}" + "".join(f"{c:>{width}}" for c in cols))
        for size in doc["sizes"]:
            vals = [med[c].get(str(size)) for c in (base,) + others]
            print(f"{size if not name.endswith('barrier') else '-':<10}"
                  + "".join(f"{cell(v):>{width}}" for v in vals)
                  + "".join(f"{ratio(v, vals[0]):>{width}}" for v in vals[1:]))
EOF
