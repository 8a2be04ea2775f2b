#!/bin/bash
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# The partitioned-communication benchmark (np=2, one node):
#   1. builds part_bench.c three times:
#        pnbc   Open MPI 4.1 + libpnbc, MPI-4 names through pnbc_mpi4.h
#               (mpicc-pnbc if installed, else mpicc + the build tree's libpnbc);
#               Open MPI 5: plain mpicc, Open MPI's own names served by
#               part/pnbc (--mca part pnbc; a build tree's through
#               PNBC_COMPONENT_PATH=<tree>/ompi/mca/part/pnbc/.libs)
#        persist  Open MPI 5 only: the same program with --mca part persist
#        mpich  MPICH's own partitioned communication (mpicc.mpich)
#        isend  Open MPI, one MPI_Isend/MPI_Irecv of the whole buffer
#   2. for each round, for each test group (pingpong, earlybird), runs every
#      implementation in turn (the order rotates); Open MPI runs use
#      --mca pml ob1 --mca btl self,vader;
#   3. writes OUT/part.csv, OUT/part.md (tables with the pnbc/mpich and
#      pnbc/isend ratios and the targets) and OUT/part.png (gnuplot).
#
# Usage: contrib/bench/run-part-bench.sh [--quick] [options]
#   --quick            ~1 minute: 3 rounds of short batches (full: <= 5 minutes)
#   --rounds R         rounds (default 7; quick 3); results are medians over rounds
#   --batches B        ping-pong batches per cell and round (default 9; quick 5)
#   --batch-ms MS      target ms per batch (default 10; quick 4)
#   --reps N           early-bird repetitions per cell and round (default 300; quick 100)
#   --work-us US       early-bird busy work before each partition (default 20)
#   --sizes LIST       ping-pong totals (default 8,64,4K,64K,1M,4M)
#   --parts LIST       ping-pong partition counts (default 1,8,64)
#   --eb LIST          early-bird configurations NxSIZE (default 8x8K,64x1K)
#   --impls LIST       subset of pnbc,persist,mpich,isend (default: all available)
#   --bind none|core   process binding of every run (default none)
#   --ompi-coll LIST   --mca coll of both Open MPI runs (default ^pnbc: the harness's
#                      barriers, reductions and MPI_Comm_dup, all outside the timed
#                      parts, never use an installed pnbc collective component)
#   --out DIR          output directory (default part-bench-results)
#   --timeout S        kill a run after S seconds (default 120)
#   --quiet-wait S     before each run, wait up to S s for idle CPUs (default 10, quick 3) ...
#   --quiet-budget S   ... but at most S s in all (default 60, quick 15)
# Environment:
#   MPICC_PNBC         the pnbc compiler wrapper (default: $PNBC_PREFIX/bin/mpicc-pnbc,
#                      else mpicc-pnbc from PATH, else mpicc + the build tree)
#   PNBC_PREFIX        where pnbc is installed (its lib/ goes to LD_LIBRARY_PATH)
#   PNBC_BUILD_TREE    build tree with ompi/mpiext/pnbc/.libs/libpnbc.so (default:
#                      this source tree, used when no mpicc-pnbc is found; when set,
#                      it is used before an mpicc-pnbc on PATH)
#   PNBC_REQUIRE=1     fail instead of skipping the pnbc column when pnbc is missing
#   MPICC, MPIRUN, OMPI_INFO, MPICC_MPICH, MPIEXEC_MPICH (see mpi-env.sh),
#   PNBC_COMPONENT_PATH (optional, see mpi-env.sh; partitioned does not need it),
#   BUILD_DIR (default: a temporary directory, removed at exit).
# Exit status: 0 on success, 1 if a build or a run failed or a data check failed.

set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC_TREE=$(cd "$HERE/../.." && pwd)
# shellcheck source=SCRIPTDIR/mpi-env.sh
. "$HERE/mpi-env.sh"

CMDLINE="contrib/bench/run-part-bench.sh${*:+ $*}"
ROUNDS="" BATCHES="" BATCH_MS="" REPS="" WORK_US=20
SIZES=8,64,4K,64K,1M,4M
PARTS=1,8,64
EBS=8x8K,64x1K
IMPLS_WANTED=pnbc,persist,mpich,isend
BIND=none
OMPI_COLL=^pnbc
OUT=part-bench-results
QUICK=0
RUN_TIMEOUT=120
QUIET_WAIT="" QUIET_BUDGET=""

while [ $# -gt 0 ]; do
    case "$1" in
        --quick) QUICK=1 ;;
        --rounds) ROUNDS=$2; shift ;;
        --batches) BATCHES=$2; shift ;;
        --batch-ms) BATCH_MS=$2; shift ;;
        --reps) REPS=$2; shift ;;
        --work-us) WORK_US=$2; shift ;;
        --sizes) SIZES=$2; shift ;;
        --parts) PARTS=$2; shift ;;
        --eb) EBS=$2; shift ;;
        --impls) IMPLS_WANTED=$2; shift ;;
        --bind) BIND=$2; shift ;;
        --ompi-coll) OMPI_COLL=$2; shift ;;
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
    : "${ROUNDS:=3}" "${BATCHES:=5}" "${BATCH_MS:=4}" "${REPS:=100}" "${QUIET_WAIT:=3}" "${QUIET_BUDGET:=15}"
    WARM_MS=3
else
    : "${ROUNDS:=7}" "${BATCHES:=9}" "${BATCH_MS:=10}" "${REPS:=300}" "${QUIET_WAIT:=10}" "${QUIET_BUDGET:=60}"
    WARM_MS=5
fi
case "$BIND" in none|core) ;; *) pnbc_log "--bind must be none or core"; exit 2 ;; esac

bench_make_dirs pnbc-part
RAW="$OUT/raw.csv" LOG="$OUT/bench.log" ERR="$OUT/errors.log"
: >"$RAW"; : >"$LOG"; : >"$ERR"
status=0
wanted() { case ",$IMPLS_WANTED," in *",$1,"*) return 0 ;; esac; return 1; }
HDR_DIR="$SRC_TREE/ompi/mpiext/pnbc/c"
IMPLS=()

# ---------------------------------------------------------------- build
BENCH_PNBC="$BUILD_DIR/part_bench.pnbc"
BENCH_MPICH="$BUILD_DIR/part_bench.mpich"
BENCH_ISEND="$BUILD_DIR/part_bench.isend"
PNBC_LDPATH=""
PNBC_HOW=""
# Open MPI 5 has the MPI-4 names itself and its part framework: pnbc is
# part/pnbc behind them, persist Open MPI's own component.
OMPI5=0
case $("$MPICC" --showme:version 2>&1) in *"Open MPI 5"*|*"Open MPI v5"*) OMPI5=1 ;; esac
if wanted pnbc && [ "$OMPI5" = 1 ]; then
    echo "building $BENCH_PNBC with $MPICC (Open MPI 5's own MPI-4 names)"
    PNBC_HOW="\`$MPICC\` (Open MPI 5's \`MPI_Psend_init\` ... served by part/pnbc, \`--mca part pnbc\`)"
    "$MPICC" -O2 -Wall -I"$HDR_DIR" -o "$BENCH_PNBC" "$HERE/part_bench.c" && IMPLS+=(pnbc)
    if wanted persist && [[ " ${IMPLS[*]-} " == *" pnbc "* ]]; then
        IMPLS+=(persist)
    fi
elif wanted pnbc; then
    tree=${PNBC_BUILD_TREE:-$SRC_TREE}
    wrapper=${MPICC_PNBC:-}
    if [ -z "$wrapper" ] && [ -n "${PNBC_PREFIX:-}" ] && [ -x "$PNBC_PREFIX/bin/mpicc-pnbc" ]; then
        wrapper=$PNBC_PREFIX/bin/mpicc-pnbc
    fi
    # an explicit PNBC_BUILD_TREE wins over an installed mpicc-pnbc found on PATH
    [ -z "$wrapper" ] && [ -z "${PNBC_BUILD_TREE:-}" ] && wrapper=$(command -v mpicc-pnbc 2>/dev/null)
    if [ -n "$wrapper" ]; then
        echo "building $BENCH_PNBC with $wrapper"
        PNBC_HOW="\`$wrapper\`"
        [ -n "${PNBC_PREFIX:-}" ] && PNBC_LDPATH="$PNBC_PREFIX/lib"
        "$wrapper" -O2 -Wall -I"$HDR_DIR" -o "$BENCH_PNBC" "$HERE/part_bench.c" && IMPLS+=(pnbc)
    elif [ -e "$tree/ompi/mpiext/pnbc/.libs/libpnbc.so" ]; then
        # A snapshot of the tree's libraries: a rebuild of the tree during
        # the benchmark does not change (or break) what the runs use.
        libdir="$BUILD_DIR/pnbc-lib"
        pnbc_snapshot_libs "$tree" "$libdir" || exit 1
        PNBC_LDPATH="$libdir"
        rev=$(pnbc_tree_rev "$tree")
        PNBC_HOW="\`$MPICC\` + the libpnbc.so of the build tree \`$tree\` (commit ${rev:-?}; library built $(date -u -r "$tree/ompi/mpiext/pnbc/.libs/libpnbc.so" '+%Y-%m-%d %H:%M UTC'), copied at the start of the run)"
        echo "building $BENCH_PNBC with $MPICC and a copy of $tree/ompi/mpiext/pnbc/.libs/libpnbc.so"
        "$MPICC" -O2 -Wall -I"$HDR_DIR" -o "$BENCH_PNBC" "$HERE/part_bench.c" \
            -L"$libdir" -lpnbc -Wl,-rpath,"$libdir" && IMPLS+=(pnbc)
    else
        pnbc_log "WARNING: pnbc not found (no mpicc-pnbc, no $tree/ompi/mpiext/pnbc/.libs/libpnbc.so)"
    fi
    if [[ " ${IMPLS[*]-} " != *" pnbc "* ]]; then
        pnbc_log "WARNING: no pnbc column"
        status=1
        case "${PNBC_REQUIRE:-0}" in 1|yes) pnbc_log "error: PNBC_REQUIRE is set"; exit 1 ;; esac
    fi
fi
if wanted mpich && bench_build_mpich "$BENCH_MPICH" "$HERE/part_bench.c" -I"$HDR_DIR"; then
    IMPLS+=(mpich)
fi
if wanted isend; then
    echo "building $BENCH_ISEND with $MPICC"
    if "$MPICC" -O2 -Wall -DPART_BENCH_NO_PNBC -o "$BENCH_ISEND" "$HERE/part_bench.c"; then
        IMPLS+=(isend)
    else
        pnbc_log "WARNING: building with $MPICC failed; no isend column"
        status=1
    fi
fi
if [ ${#IMPLS[@]} -eq 0 ]; then
    pnbc_log "error: nothing to run"
    exit 1
fi
pnbc_setup_component_path

OMPI_ARGS=(-np 2 --mca pml ob1 --mca btl "self,vader" --mca coll "$OMPI_COLL" --bind-to "$BIND")
if [[ " ${IMPLS[*]} " == *" pnbc "* ]]; then
    # which libpnbc the runs load
    lib=$(env "LD_LIBRARY_PATH=$PNBC_LDPATH${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd "$BENCH_PNBC" 2>/dev/null |
          sed -n 's/^[[:space:]]*libpnbc[^ ]* => \([^ ]*\).*/\1/p' | head -n 1)
    if [ -n "$lib" ]; then
        PNBC_HOW="$PNBC_HOW; runs load \`$(readlink -f "$lib")\` (built $(date -u -r "$lib" '+%Y-%m-%d %H:%M UTC'))"
    fi
fi
# Print the command for one implementation and test group (one word per line).
impl_cmd() {
    local impl=$1 group=$2 tests
    local common=(-b "$BATCHES" -T "$BATCH_MS" -w "$WARM_MS" -r "$REPS" -W "$WORK_US"
                  -s "$SIZES" -n "$PARTS" -e "$EBS")
    case "$group" in
        pingpong) tests=pingpong ;;
        *) tests=earlybird,eb_parrived ;;
    esac
    case "$impl" in
        pnbc)
            if [ "$OMPI5" = 1 ]; then
                printf '%s\n' "$MPIRUN" "${OMPI_ARGS[@]}" --mca part pnbc \
                    "$BENCH_PNBC" -l pnbc -m part -t "$tests" "${common[@]}"
            else
                printf '%s\n' env "LD_LIBRARY_PATH=$PNBC_LDPATH${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
                    "$MPIRUN" "${OMPI_ARGS[@]}" -x LD_LIBRARY_PATH \
                    "$BENCH_PNBC" -l pnbc -m part -t "$tests" "${common[@]}"
            fi ;;
        persist)
            printf '%s\n' "$MPIRUN" "${OMPI_ARGS[@]}" --mca part persist \
                "$BENCH_PNBC" -l persist -m part -t "$tests" "${common[@]}" ;;
        mpich)
            printf '%s\n' "$MPIEXEC_MPICH" -n 2 -bind-to "$BIND" \
                "$BENCH_MPICH" -l mpich -m part -t "$tests" "${common[@]}" ;;
        isend)
            printf '%s\n' "$MPIRUN" "${OMPI_ARGS[@]}" \
                "$BENCH_ISEND" -l isend -m isend -t "$tests" "${common[@]}" ;;
    esac
}

GROUPS_LIST=(pingpong earlybird)
nimpl=${#IMPLS[@]}
total=$((ROUNDS * ${#GROUPS_LIST[@]} * nimpl))
echo "implementations: ${IMPLS[*]}; rounds=$ROUNDS; sizes=$SIZES; parts=$PARTS; early-bird=$EBS; $total runs"
BENCH_ERR_CONTEXT=3  # a failed run's first 3 error lines go to errors.log
bench_rounds group '[%2d/%d] round %d %-9s %-6s' "${GROUPS_LIST[@]}"

# ---------------------------------------------------------------- report
ompi_ver=$(ompi_version)
mpich_ver=""
[[ " ${IMPLS[*]} " == *" mpich "* ]] && mpich_ver=$(mpich_version)
meta=(--command "$CMDLINE"
      --meta "date: $(date -u '+%Y-%m-%d %H:%M UTC'); host: $(uname -srm), $(nproc) cores; runs took ${elapsed} s"
      --meta "np=2, rounds=$ROUNDS, ping-pong batches=$BATCHES x ${BATCH_MS} ms, early-bird reps=$REPS, work=${WORK_US} us per partition, binding: $BIND$([ "$QUICK" = 1 ] && echo ', --quick')"
      --meta "Open MPI: ${ompi_ver:-?} (\`--mca pml ob1 --mca btl self,vader --mca coll $OMPI_COLL\`); MPICH: ${mpich_ver:-not used}"
      --meta "pnbc built with: ${PNBC_HOW:-not built}"
      --meta "$(bench_busy_note)")
bench_find_python
"$PYTHON" "$HERE/part_report.py" "$RAW" "$OUT" --errors "$ERR" "${meta[@]}" || status=1
bench_exit
