#!/bin/bash
# Copyright (c) 2026 The pnbc developers
# SPDX-License-Identifier: BSD-3-Clause
#
# One command for the persistent-collective benchmark suite:
#   1. builds pcoll_bench.c with Open MPI's mpicc and (if present) mpicc.mpich,
#      and shm_floor.c and exchange_floor.c with cc (no MPI);
#   2. for each round, for each collective, runs every implementation in turn
#      (the order rotates, so none is always first):
#        pnbc    persistent, Open MPI --mca coll pnbc,basic,libnbc,tuned,self
#        libnbc  persistent, Open MPI --mca coll basic,libnbc,tuned,self
#        tuned   blocking,   Open MPI --mca coll basic,libnbc,tuned,self
#        mpich   persistent, mpiexec.mpich (only if installed)
#      and on request (--impls; --nonblocking selects these five):
#        pnbc-nb    nonblocking (MPI_I<coll> + MPI_Wait, same arguments every
#                   call), Open MPI --mca coll pnbc,basic,libnbc,tuned,self;
#                   with it, in the same launch, pnbc-nb-persistent: the
#                   persistent call on the same buffers (pcoll_bench -m paired)
#        libnbc-nb  nonblocking, Open MPI --mca coll basic,libnbc,tuned,self
#        mpich-nb   nonblocking, mpiexec.mpich
#      (init_us is then the time of a call + wait with new buffers: the first
#      call of a loop, a schedule cache's miss); and, in the same rotation,
#        floor      the machine's floor (shm_floor, no MPI): bare shared-memory
#                   ping-pongs of the sizes the collective's floors need, the
#                   bare flag exchange and one memcpy of each size; at np=2
#                   also, for allgather, alltoall and allreduce from 4 KiB,
#                   the bare exchange of two processes (exchange_floor)
#   3. writes OUT/results.csv, OUT/results.md (table with the pnbc/best-peer
#      ratio and its geometric mean, each row's floor and pnbc / floor, and
#      at np=2 the bare exchanges beside pnbc's cells),
#      OUT/floor.csv and OUT/latency.png (gnuplot, else
#      matplotlib); with pnbc-nb among the implementations also
#      OUT/results-nbc.md (nbc_report.py: pnbc-nb against libnbc-nb, the best
#      peer and pnbc's persistent Start+Wait; first calls; overlap).
#
# Usage: contrib/bench/run-bench.sh [--quick] [options]
#   --quick            ~1 minute: 3 rounds of short batches (full: ~4-5 minutes)
#   --np N             ranks (default $NP or 2; >2 oversubscribes, latencies then mean little)
#   --colls LIST       default barrier,bcast,reduce,allreduce,allgather,alltoall
#   --sizes LIST       bytes per rank-block, K/M allowed (default 8,4K,64K,1M)
#   --rounds R         rounds (default 5; quick 3); results are medians over rounds
#   --batches B        timed batches per round (default 9; quick 5)
#   --batch-ms MS      target ms per batch (default 10; quick 4)
#   --probes P         MPI_Test calls during the overlap compute loop (default 0)
#   --impls LIST       subset of pnbc,pnbc-base,libnbc,tuned,mpich,pnbc-nb,libnbc-nb,mpich-nb
#                      (default: pnbc,pnbc-base,libnbc,tuned,mpich as available)
#   --nonblocking      --impls pnbc-nb,libnbc-nb,tuned,mpich-nb,pnbc
#   --no-floor         do not measure the machine's floor (floor_us then NA)
#   --out DIR          output directory (default bench-results)
#   --timeout S        kill a run after S seconds (default 300)
#   --quiet-wait S     before each run, wait up to S s for the CPUs to be idle
#                      (other processes < QUIET_THRESHOLD=0.15 of all CPU time;
#                      default 10, quick 3; 0 = don't wait) ...
#   --quiet-budget S   ... but wait at most S s in all (default 120, quick 15)
# Environment: PNBC_COMPONENT_PATH, PNBC_BASE_COMPONENT_PATH (impl pnbc-base), PNBC_STANDIN=1, PNBC_REQUIRE=1, MPICC, MPIRUN,
#   OMPI_INFO, MPICC_MPICH, MPIEXEC_MPICH (see mpi-env.sh); BUILD_DIR (default: a
#   temporary directory, removed at exit).
# Exit status: 0 on success, 1 if a build or a run failed or a data check failed.

set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/mpi-env.sh
. "$HERE/mpi-env.sh"

NP=${NP:-2}
COLLS=barrier,bcast,reduce,allreduce,allgather,alltoall
SIZES=8,4K,64K,1M
ROUNDS=""
BATCHES=""
BATCH_MS=""
PROBES=0
IMPLS_WANTED=pnbc,libnbc,tuned,mpich
IMPLS_GIVEN=0
OUT=bench-results
QUICK=0
FLOOR=1
RUN_TIMEOUT=300
QUIET_WAIT=""
QUIET_BUDGET=""

while [ $# -gt 0 ]; do
    case "$1" in
        --quick) QUICK=1 ;;
        --np) NP=$2; shift ;;
        --colls) COLLS=$2; shift ;;
        --sizes) SIZES=$2; shift ;;
        --rounds) ROUNDS=$2; shift ;;
        --batches) BATCHES=$2; shift ;;
        --batch-ms) BATCH_MS=$2; shift ;;
        --probes) PROBES=$2; shift ;;
        --impls) IMPLS_WANTED=$2; IMPLS_GIVEN=1; shift ;;
        --nonblocking) IMPLS_WANTED=pnbc-nb,libnbc-nb,tuned,mpich-nb,pnbc ;;
        --no-floor) FLOOR=0 ;;
        --out) OUT=$2; shift ;;
        --timeout) RUN_TIMEOUT=$2; shift ;;
        --quiet-wait) QUIET_WAIT=$2; shift ;;
        --quiet-budget) QUIET_BUDGET=$2; shift ;;
        -h|--help) bench_usage "${BASH_SOURCE[0]}"; exit 0 ;;
        *) pnbc_log "unknown option: $1 (try --help)"; exit 2 ;;
    esac
    shift
done
if [ "$QUICK" = 1 ]; then
    : "${ROUNDS:=3}" "${BATCHES:=5}" "${BATCH_MS:=4}" "${QUIET_WAIT:=3}" "${QUIET_BUDGET:=15}"
    WARM_MS=3
else
    : "${ROUNDS:=5}" "${BATCHES:=9}" "${BATCH_MS:=10}" "${QUIET_WAIT:=10}" "${QUIET_BUDGET:=120}"
    WARM_MS=5
fi

bench_make_dirs pnbc-contrib
RAW="$OUT/raw.csv"
LOG="$OUT/bench.log"
ERR="$OUT/errors.log"
: >"$RAW"; : >"$LOG"; : >"$ERR"
status=0

# ---------------------------------------------------------------- build
BENCH_OMPI="$BUILD_DIR/pcoll_bench.ompi"
BENCH_MPICH="$BUILD_DIR/pcoll_bench.mpich"
echo "building $BENCH_OMPI with $MPICC"
if ! "$MPICC" -O2 -Wall -o "$BENCH_OMPI" "$HERE/pcoll_bench.c"; then
    pnbc_log "error: building with $MPICC failed"
    exit 1
fi
HAVE_MPICH=0
bench_build_mpich "$BENCH_MPICH" "$HERE/pcoll_bench.c" && HAVE_MPICH=1
bench_find_python
BENCH_FLOOR="$BUILD_DIR/shm_floor"
if [ "$FLOOR" = 1 ] && ! "${CC:-cc}" -O2 -Wall -o "$BENCH_FLOOR" "$HERE/shm_floor.c"; then
    pnbc_log "error: building shm_floor.c with ${CC:-cc} failed (--no-floor to go without)"
    exit 1
fi
BENCH_EXCHANGE="$BUILD_DIR/exchange_floor"
if [ "$FLOOR" = 1 ] && ! "${CC:-cc}" -O2 -Wall -o "$BENCH_EXCHANGE" "$HERE/exchange_floor.c"; then
    pnbc_log "error: building exchange_floor.c with ${CC:-cc} failed (--no-floor to go without)"
    exit 1
fi

# ------------------------------------------------------- implementations
pnbc_setup_component_path
pnbc_detect || exit 1

mapfile -t OMPI_NP_ARGS < <(ompi_np_args "$NP")
mapfile -t MPICH_NP_ARGS < <(mpich_np_args "$NP")
[ "$NP" -gt "$(nproc 2>/dev/null || echo 2)" ] && \
    pnbc_log "WARNING: np=$NP oversubscribes $(nproc) cores: latencies are not meaningful"

wanted() { case ",$IMPLS_WANTED," in *",$1,"*) return 0 ;; esac; return 1; }
IMPLS=()
if wanted pnbc && [ -n "$PNBC_IMPL_LABEL" ]; then IMPLS+=("$PNBC_IMPL_LABEL"); fi
# pnbc-base: another pnbc build (PNBC_BASE_COMPONENT_PATH: its component
# directory), to compare two versions of pnbc in one interleaved run:
# --impls pnbc,pnbc-base gives the ratio new / base and its geometric mean.
if wanted pnbc-base && [ -n "${PNBC_BASE_COMPONENT_PATH:-}" ]; then IMPLS+=(pnbc-base); fi
if wanted pnbc-nb && [ "$PNBC_IMPL_LABEL" = pnbc ]; then IMPLS+=(pnbc-nb); fi
if wanted libnbc; then IMPLS+=(libnbc); fi
if wanted libnbc-nb; then IMPLS+=(libnbc-nb); fi
if wanted tuned; then IMPLS+=(tuned); fi
if wanted mpich-nb && [ "$HAVE_MPICH" = 1 ]; then IMPLS+=(mpich-nb); fi
if wanted mpich && [ "$HAVE_MPICH" = 1 ]; then
    if [ "$NP" -gt "$(nproc 2>/dev/null || echo 2)" ] && [ "$IMPLS_GIVEN" = 0 ]; then
        # MPICH (ch4:ucx) busy-polls and has no yield switch: oversubscribed
        # runs take milliseconds per operation.
        pnbc_log "WARNING: np=$NP > cores: skipping MPICH (it busy-polls; force with --impls ...,mpich)"
    else
        IMPLS+=(mpich)
    fi
fi
if [ ${#IMPLS[@]} -eq 0 ]; then
    pnbc_log "error: nothing to run"
    exit 1
fi
# the floor of each collective's cells: shm_floor's arguments (bench_report.py
# defines the floors), in as many and as long batches as a cell's
declare -A FLOOR_ARGS=() BARE_ARGS=()
if [ "$FLOOR" = 1 ]; then
    IMPLS+=(floor)
    for c in ${COLLS//,/ }; do
        FLOOR_ARGS[$c]=$("$PYTHON" "$HERE/bench_report.py" --floor-args "$c" "$SIZES" "$NP") || exit 1
        BARE_ARGS[$c]=$("$PYTHON" "$HERE/bench_report.py" --bare-args "$c" "$SIZES" "$NP") || exit 1
    done
fi

# Print the command for one implementation and collective (one word per line).
impl_cmd() {
    local impl=$1
    local common=(-b "$BATCHES" -T "$BATCH_MS" -w "$WARM_MS" -p "$PROBES" -s "$SIZES" -c "$2")
    case "$impl" in
        floor)
            if [ -z "${BARE_ARGS[$2]}" ]; then
                printf '%s\n' "$BENCH_FLOOR" -b "$BATCHES" -T "$BATCH_MS" "${FLOOR_ARGS[$2]}"
            else
                # the ping-pongs, then the bare exchanges: one run of two programs
                # shellcheck disable=SC2086 # the arguments, one a line, no blanks
                printf '%s\n' bash -c "$(printf '%q ' "$BENCH_FLOOR" -b "$BATCHES" -T "$BATCH_MS" \
                    ${FLOOR_ARGS[$2]}) && $(printf '%q ' "$BENCH_EXCHANGE" -b "$BATCHES" \
                    -T "$BATCH_MS" ${BARE_ARGS[$2]})"
            fi ;;
        pnbc|pnbc-standin)
            printf '%s\n' "$MPIRUN" -np "$NP" "${OMPI_NP_ARGS[@]}" --mca coll "$PNBC_IMPL_COLLS" \
                "$BENCH_OMPI" -l "$impl" -m persistent "${common[@]}" ;;
        pnbc-base)
            # the base tree's engine and libpnbc too, not this tree's
            local base_top base_ld=${LD_LIBRARY_PATH:-}
            base_top=$(cd "${PNBC_BASE_COMPONENT_PATH%%:*}/../../../../.." 2>/dev/null && pwd)
            if [ -n "$base_top" ] && [ -d "$base_top/ompi/mca/common/pnbc/.libs" ]; then
                base_ld="$base_top/ompi/mca/common/pnbc/.libs:$base_top/ompi/mpiext/pnbc/.libs${base_ld:+:$base_ld}"
            fi
            printf '%s\n' env "LD_LIBRARY_PATH=$base_ld" \
                "OMPI_MCA_mca_base_component_path=$PNBC_BASE_COMPONENT_PATH:$(pnbc_system_component_dir)" \
                "$MPIRUN" -np "$NP" "${OMPI_NP_ARGS[@]}" --mca coll "$PNBC_COLL_LIST" \
                "$BENCH_OMPI" -l pnbc-base -m persistent "${common[@]}" ;;
        pnbc-nb)
            printf '%s\n' "$MPIRUN" -np "$NP" "${OMPI_NP_ARGS[@]}" --mca coll "$PNBC_IMPL_COLLS" \
                "$BENCH_OMPI" -l pnbc-nb -m paired "${common[@]}" ;;
        libnbc-nb)
            printf '%s\n' "$MPIRUN" -np "$NP" "${OMPI_NP_ARGS[@]}" --mca coll "$STOCK_COLL_LIST" \
                "$BENCH_OMPI" -l libnbc-nb -m nonblocking "${common[@]}" ;;
        mpich-nb)
            printf '%s\n' "$MPIEXEC_MPICH" -n "$NP" "${MPICH_NP_ARGS[@]}" \
                "$BENCH_MPICH" -l mpich-nb -m nonblocking "${common[@]}" ;;
        libnbc)
            printf '%s\n' "$MPIRUN" -np "$NP" "${OMPI_NP_ARGS[@]}" --mca coll "$STOCK_COLL_LIST" \
                "$BENCH_OMPI" -l libnbc -m persistent "${common[@]}" ;;
        tuned)
            printf '%s\n' "$MPIRUN" -np "$NP" "${OMPI_NP_ARGS[@]}" --mca coll "$STOCK_COLL_LIST" \
                "$BENCH_OMPI" -l tuned -m blocking "${common[@]}" ;;
        mpich)
            printf '%s\n' "$MPIEXEC_MPICH" -n "$NP" "${MPICH_NP_ARGS[@]}" \
                "$BENCH_MPICH" -l mpich -m persistent "${common[@]}" ;;
    esac
}

IFS=, read -r -a COLL_LIST <<<"$COLLS"
nimpl=${#IMPLS[@]}
total=$((ROUNDS * ${#COLL_LIST[@]} * nimpl))
echo "implementations: ${IMPLS[*]}; np=$NP; rounds=$ROUNDS; colls=$COLLS; sizes=$SIZES; $total runs"
bench_rounds coll '[%3d/%d] round %d %-9s %-12s' "${COLL_LIST[@]}"

# ---------------------------------------------------------------- report
ompi_ver=$(ompi_version)
mpich_ver=""
[ "$HAVE_MPICH" = 1 ] && mpich_ver=$(mpich_version)
meta=(--meta "date: $(date -u '+%Y-%m-%d %H:%M UTC'); host: $(uname -srm), $(nproc) cores"
      --meta "np=$NP, rounds=$ROUNDS, batches=$BATCHES x ${BATCH_MS} ms, probes=$PROBES$([ "$QUICK" = 1 ] && echo ', --quick')"
      --meta "Open MPI: ${ompi_ver:-?}; MPICH: ${mpich_ver:-not used}"
      --meta "$(bench_busy_note)"
      --meta "each number: per round, the median over batches of (batch time / iterations, max over ranks); then the median over rounds (results.csv also has the min)")
if [ -n "${OMPI_MCA_mca_base_component_path:-}" ]; then
    meta+=(--meta "component path: \`$OMPI_MCA_mca_base_component_path\`")
fi
if ! "$PYTHON" "$HERE/bench_report.py" "$RAW" "$OUT" --errors "$ERR" "${meta[@]}"; then
    status=1
fi
# nonblocking: pnbc-nb against the others (and its persistent call, same launch)
if [[ " ${IMPLS[*]} " == *" pnbc-nb "* ]] && [ -f "$OUT/results.csv" ]; then
    "$PYTHON" "$HERE/nbc_report.py" "$OUT/results.csv" "$RAW" "$OUT/results-nbc.md" "${meta[@]}" || status=1
fi
bench_exit
