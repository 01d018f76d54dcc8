#!/bin/bash
# coll_matrix.sh BUILD_DIR [-n RANKS] [-P PLACEMENTS] [-x PATHS] [-A] [-r CASES] [-s SEED] [-o LOGDIR] [-- T_COLL_REF_ARGS]: the full collective correctness matrix (t_coll_ref over 1..9 ranks x 1 VM, 2 and 3 VMs, 2 hosts x 2 VMs x auto/flat/hier paths x every forced algorithm of coll/select.c), then a summary; about an hour on 2 cores, options trim it.
#
#   -n RANKS       rank counts (default "1 2 3 4 5 6 7 8 9")
#   -P PLACEMENTS  vm1 (one VM), v2, v3 (VMs of one host), h2v2 (2 hosts x 2 VMs);
#                  default all; a placement needs at least as many ranks as VMs
#   -x PATHS       paths for the runs of all collectives (default "auto flat hier")
#   -A             no forced-algorithm runs (each algorithm of each collective,
#                  under flat and under hier, on that collective's tests only)
#   -r CASES       cases per collective and communicator (default 12; the
#                  forced-algorithm runs use two thirds of it)
#   -s SEED        seed of the data and cases (default 1)
#   -o LOGDIR      keep every run's output there (default: a temporary directory)
# Needs root (the VM and host placements). Exit status 1 if any run failed.
set -u

usage() { sed -n '2,15s/^# \{0,1\}//p' "$0" >&2; exit 2; }

[ $# -ge 1 ] || usage
build=$(cd "$1" 2>/dev/null && pwd) || { echo "coll_matrix.sh: no build directory $1" >&2; exit 2; }
shift
ranks="1 2 3 4 5 6 7 8 9"
places="vm1 v2 v3 h2v2"
paths="auto flat hier"
algs=1
cases=12
seed=1
logdir=""
while getopts "n:P:x:Ar:s:o:h" opt; do
    case $opt in
    n) ranks=$OPTARG ;;
    P) places=$OPTARG ;;
    x) paths=$OPTARG ;;
    A) algs=0 ;;
    r) cases=$OPTARG ;;
    s) seed=$OPTARG ;;
    o) logdir=$OPTARG ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))
extra=("$@")

run=$build/bin/vmpirun
prog=$build/tests/t_coll_ref
for f in "$run" "$prog"; do
    [ -x "$f" ] || { echo "coll_matrix.sh: $f missing (build the tree first)" >&2; exit 2; }
done
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
select_c=$src/coll/select.c
if [ -z "$logdir" ]; then
    logdir=$(mktemp -d /tmp/coll_matrix.XXXXXX)
else
    mkdir -p "$logdir"
fi

# The algorithm names VMPI_COLL_<NAME> accepts, from the table in select.c:
# lines "NAME alg alg ...".
alg_table() {
    grep -o '"VMPI_COLL_[A-Z_]*", *{[^}]*}' "$select_c" |
        sed -e 's/"VMPI_COLL_\([A-Z_]*\)", *{/\1 /' -e 's/[",}]/ /g' | tr -s ' '
}

# The t_coll_ref collectives each VMPI_COLL_<NAME> steers (v/w forms follow
# their base, Exscan follows SCAN).
colls_of() {
    case $1 in
    GATHER) echo gather,gatherv ;;
    SCATTER) echo scatter,scatterv ;;
    ALLGATHER) echo allgather,allgatherv ;;
    ALLTOALL) echo alltoall,alltoallv,alltoallw ;;
    REDUCE_SCATTER) echo reduce_scatter,reduce_scatter_block ;;
    SCAN) echo scan,exscan ;;
    *) echo "$1" | tr 'A-Z' 'a-z' ;;
    esac
}

# vmpirun options of a placement (pargs) and the ranks it needs (pmin)
set_place() {
    case $1 in
    vm1) pargs=() pmin=1 ;;
    v2) pargs=(--vms 2) pmin=2 ;;
    v3) pargs=(--vms 3) pmin=3 ;;
    h2v2) pargs=(--hosts 2 --vms 2) pmin=4 ;;
    *) echo "coll_matrix.sh: unknown placement $1" >&2; exit 2 ;;
    esac
}

all_names=$(alg_table | awk '{print $1}' | tr '\n' ' ')
[ -n "$all_names" ] || { echo "coll_matrix.sh: no VMPI_COLL_ table in $select_c" >&2; exit 2; }

nrun=0
nfail=0
failed=()
t0=$(date +%s)

# one run: NAME-OF-LOG ENV-SETTING... -- T_COLL_REF-ARGS...
one() {
    local log=$logdir/$1
    shift
    local envs=()
    while [ "$1" != "--" ]; do
        envs+=(-x "$1")
        shift
    done
    shift
    nrun=$((nrun + 1))
    if "$run" -n "$np" "${pargs[@]+"${pargs[@]}"}" --timeout 900 "${envs[@]}" "$prog" \
        -s "$seed" "$@" "${extra[@]+"${extra[@]}"}" >"$log" 2>&1; then
        printf '  ok    %s\n' "${log##*/}"
    else
        nfail=$((nfail + 1))
        local first
        first=$(grep -m1 -E '^FAIL|TIMEOUT|vmpirun:|check failed' "$log" | cut -c1-300)
        failed+=("${log##*/}: ${first:-see $log}")
        printf '  FAIL  %s\n        %s\n' "${log##*/}" "${first:-see $log}"
    fi
}

for place in $places; do
    set_place "$place"
    for np in $ranks; do
        [ "$np" -ge "$pmin" ] || continue
        echo "== $place, $np ranks"
        for path in $paths; do
            envs=()
            for n in $all_names; do
                envs+=("VMPI_COLL_$n=$path")
            done
            one "$place.np$np.$path" "${envs[@]}" -- -r "$cases" -f 3
        done
        [ "$algs" = 1 ] || continue
        while read -r name list; do
            for alg in $list; do
                for path in flat hier; do
                    one "$place.np$np.$name.$path.$alg" "VMPI_COLL_$name=$path,$alg" -- \
                        -c "$(colls_of "$name")" -r $(((cases * 2 + 2) / 3)) -f 3
                done
            done
        done < <(alg_table)
    done
done

t1=$(date +%s)
echo
echo "coll_matrix: $nrun runs, $((nrun - nfail)) passed, $nfail failed ($((t1 - t0)) s, seed $seed, logs in $logdir)"
for f in "${failed[@]+"${failed[@]}"}"; do
    echo "  $f"
done
[ "$nfail" = 0 ]
