#!/bin/bash
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# The many-live-requests benchmark (many_bench.c): N persistent allreduce
# requests of SIZE bytes kept alive together, as an application with one
# per field keeps them; init of all N, one MPI_Startall + MPI_Waitall round
# (the first), ROUNDS more rounds, free of all N; the largest ru_maxrss of
# the ranks; the cost of one MPI_Test (one progress pass) while the N
# requests wait for a rank that starts late.  Every round's results are
# checked.
#   impls: pnbc (Open MPI + this tree's coll/pnbc), libnbc (stock Open MPI),
#          mpich (MPICH's MPI_Allreduce_init), each run REPEAT times in turn
#          (interleaved; the best of the runs is kept per cell)
# Writes OUT/many.csv (every run), OUT/many.md (best per cell, per-request
# costs and the pnbc/libnbc ratios) and OUT/many.png (gnuplot, if found:
# per-request init and round cost against N).
#
# With --nb, each round calls MPI_Iallreduce N times instead, all outstanding
# until one MPI_Waitall (nonblocking calls repeated with the same arguments;
# init, free and the late round are 0).
#
# Usage: contrib/bench/run-many-bench.sh [--np LIST] [--n LIST] [--sizes LIST]
#          [--rounds R] [--repeat K] [--impls LIST] [--out DIR] [--timeout S] [--nb]
#   defaults: --np 2 --n 1,10,100,1000,10000 --sizes 8,16384 --rounds 19
#             --repeat 2 --impls pnbc,libnbc,mpich --out many-bench-results
# Environment: PNBC_COMPONENT_PATH (see mpi-env.sh), MPICC, MPIRUN,
#   MPICC_MPICH, MPIEXEC_MPICH.
# Exit status: 0 on success, 1 if a build failed or a run failed its check.

set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/mpi-env.sh
. "$HERE/mpi-env.sh"

CMDLINE="contrib/bench/run-many-bench.sh${*:+ $*}"
NPS=2 NS=1,10,100,1000,10000 SIZES=8,16384 ROUNDS=19 REPEAT=2 IMPLS=pnbc,libnbc,mpich
OUT=many-bench-results TIMEOUT=600 MODE=
while [ $# -gt 0 ]; do
    case "$1" in
        --np) NPS=$2; shift ;;
        --n) NS=$2; shift ;;
        --sizes) SIZES=$2; shift ;;
        --rounds) ROUNDS=$2; shift ;;
        --repeat) REPEAT=$2; shift ;;
        --impls) IMPLS=$2; shift ;;
        --out) OUT=$2; shift ;;
        --timeout) TIMEOUT=$2; shift ;;
        --nb) MODE=nb ;;
        -h|--help) sed -n '2,/^set -u/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) pnbc_log "unknown option: $1 (try --help)"; exit 2 ;;
    esac
    shift
done
mkdir -p "$OUT" || exit 1
BUILD=$(mktemp -d "${TMPDIR:-/tmp}/pnbc-many.XXXXXX") || exit 1
trap 'rm -rf "$BUILD"' EXIT
pnbc_setup_component_path

"$MPICC" -O2 -o "$BUILD/many_ompi" "$HERE/many_bench.c" || exit 1
case ",$IMPLS," in
    *,mpich,*)
        if have_mpich; then
            "$MPICC_MPICH" -O2 -DMANY_BENCH_MPI4 -o "$BUILD/many_mpich" "$HERE/many_bench.c" \
                2>/dev/null || exit 1
        else
            pnbc_log "MPICH not found: no mpich runs"
            IMPLS=${IMPLS//mpich/}
        fi ;;
esac

run_one() {     # impl np n size -> one CSV line (or nothing)
    local impl=$1 np=$2 n=$3 size=$4 args
    # shellcheck disable=SC2207
    args=($(ompi_np_args "$np"))
    case $impl in
        pnbc|libnbc)
            local colls=$PNBC_COLL_LIST
            [ "$impl" = libnbc ] && colls=$STOCK_COLL_LIST
            timeout "$TIMEOUT" "$MPIRUN" -np "$np" "${args[@]}" --bind-to none \
                --mca btl self,vader --mca pml ob1 --mca coll "$colls" \
                "$BUILD/many_ompi" "$n" "$size" "$ROUNDS" $MODE ;;
        mpich)
            # shellcheck disable=SC2046
            timeout "$TIMEOUT" "$MPIEXEC_MPICH" -n "$np" $(mpich_np_args "$np") \
                "$BUILD/many_mpich" "$n" "$size" "$ROUNDS" $MODE ;;
    esac
}

status=0
echo "impl,n,bytes,np,init_s,first_s,rounds_s,free_s,maxrss_kb,idle_test_s,ok" > "$OUT/many.csv"
for np in ${NPS//,/ }; do
    for size in ${SIZES//,/ }; do
        for n in ${NS//,/ }; do
            for rep in $(seq "$REPEAT"); do
                for impl in ${IMPLS//,/ }; do
                    wait_quiet 10 || true
                    line=$(run_one "$impl" "$np" "$n" "$size" 2>"$BUILD/err" | grep -E '^[0-9]+,' | tail -1)
                    if [ -z "$line" ] || [ "${line##*,}" != ok ]; then
                        pnbc_log "FAILED: $impl np=$np n=$n size=$size (rep $rep): $(tail -3 "$BUILD/err")"
                        status=1
                        continue
                    fi
                    echo "$impl,$line" | tee -a "$OUT/many.csv"
                done
            done
        done
    done
done

python3 "$HERE/many_report.py" "$OUT" "$CMDLINE" || status=1
exit $status
