# -*- sh -*-
# Copyright (c) 2026 The pnbc developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Shared setup for contrib/run-example.sh and contrib/bench/run-*.sh, and the
# benchmark drivers' common steps (the bench_* functions at the end).
# Source it (bash); it defines functions and variables, runs nothing heavy.
# shellcheck shell=bash disable=SC2034
#
# Honoured environment:
#   MPICC, MPIRUN, OMPI_INFO          Open MPI tools (default: from PATH)
#   MPICC_MPICH, MPIEXEC_MPICH        MPICH tools (default: mpicc.mpich, mpiexec.mpich)
#   PNBC_COMPONENT_PATH               where mca_coll_pnbc.so lives (a directory or a
#                                     ':'-list); exported as OMPI_MCA_mca_base_component_path,
#                                     with Open MPI's own component directory appended
#                                     if the list lacks it (the variable REPLACES the
#                                     default search path; Open MPI keeps the first
#                                     component of a name it finds, so the given pnbc
#                                     wins over an installed one).
#   PNBC_STANDIN=1                    if pnbc is not found, run stock libnbc in its place,
#                                     labelled "pnbc-standin" (only to test the scripts).
#   PNBC_REQUIRE=1                    fail (pnbc_detect returns 1) instead of skipping pnbc.

: "${MPICC:=mpicc}"
: "${MPIRUN:=mpirun}"
: "${OMPI_INFO:=ompi_info}"
: "${MPICC_MPICH:=mpicc.mpich}"
: "${MPIEXEC_MPICH:=mpiexec.mpich}"

# Open MPI refuses to run as root without these.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

PNBC_COLL_LIST="pnbc,basic,libnbc,tuned,self"
STOCK_COLL_LIST="basic,libnbc,tuned,self"

pnbc_log() { printf '%s\n' "$*" >&2; }

# Open MPI's own component directory.
pnbc_system_component_dir() {
    env -u OMPI_MCA_mca_base_component_path "$OMPI_INFO" --parsable --path pkglibdir 2>/dev/null \
        | sed -n 's/^path:pkglibdir://p'
}

# Set OMPI_MCA_mca_base_component_path from PNBC_COMPONENT_PATH (if given).
pnbc_setup_component_path() {
    if [ -n "${PNBC_COMPONENT_PATH:-}" ]; then
        local sysdir
        sysdir=$(pnbc_system_component_dir)
        local cp="$PNBC_COMPONENT_PATH"
        if [ -n "$sysdir" ]; then
            case ":$cp:" in
                *":$sysdir:"*) ;;
                *) cp="$cp:$sysdir" ;;
            esac
        fi
        export OMPI_MCA_mca_base_component_path="$cp"
        pnbc_log "component path: $OMPI_MCA_mca_base_component_path"
        # Open MPI 5's PMIx reads that variable too ("bad prefix" for every
        # file there): give it back its own component directory.
        local pmix_libdir
        pmix_libdir=$(pkg-config --variable=libdir pmix 2>/dev/null)
        if [ -z "${PMIX_MCA_mca_base_component_path:-}" ] && [ -d "$pmix_libdir/pmix" ]; then
            export PMIX_MCA_mca_base_component_path="$pmix_libdir/pmix"
        fi
        # A component of a build tree (ompi/mca/coll/pnbc/.libs) needs that
        # tree's engine library, and programs its libpnbc.
        local d top
        for d in ${PNBC_COMPONENT_PATH//:/ }; do
            top=$(cd "$d/../../../../.." 2>/dev/null && pwd) || continue
            if [ -f "$top/ompi/mca/common/pnbc/.libs/libmca_common_pnbc.so" ]; then
                export LD_LIBRARY_PATH="$top/ompi/mca/common/pnbc/.libs:$top/ompi/mpiext/pnbc/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
            fi
        done
    fi
}

# Sets PNBC_IMPL_LABEL and PNBC_IMPL_COLLS:
#   pnbc found         -> "pnbc",         $PNBC_COLL_LIST
#   absent + standin   -> "pnbc-standin", $STOCK_COLL_LIST
#   absent             -> "" (caller skips the pnbc runs)
pnbc_detect() {
    PNBC_IMPL_LABEL=""
    PNBC_IMPL_COLLS=""
    if "$OMPI_INFO" 2>/dev/null | grep -q 'coll: pnbc'; then
        PNBC_IMPL_LABEL=pnbc
        PNBC_IMPL_COLLS=$PNBC_COLL_LIST
        return 0
    fi
    if [ -n "${PNBC_COMPONENT_PATH:-}" ]; then
        pnbc_log "WARNING: PNBC_COMPONENT_PATH=$PNBC_COMPONENT_PATH is set but ompi_info does not list 'coll: pnbc'"
        pnbc_log "         (is mca_coll_pnbc.so there, and does it load? try: $OMPI_INFO | grep coll)"
    else
        pnbc_log "WARNING: the pnbc component is not installed and PNBC_COMPONENT_PATH is not set"
    fi
    case "${PNBC_REQUIRE:-0}" in
        1|yes) pnbc_log "error: PNBC_REQUIRE is set and pnbc was not found"; return 1 ;;
    esac
    case "${PNBC_STANDIN:-0}" in
        1|yes|libnbc)
            pnbc_log "WARNING: PNBC_STANDIN: running stock libnbc in pnbc's place, labelled 'pnbc-standin'"
            PNBC_IMPL_LABEL=pnbc-standin
            PNBC_IMPL_COLLS=$STOCK_COLL_LIST
            ;;
        *)
            pnbc_log "WARNING: skipping the pnbc runs (set PNBC_STANDIN=1 to test the pipeline with libnbc)"
            ;;
    esac
}

# Extra mpirun arguments for NP ranks on this machine.
ompi_np_args() {
    local np=$1 ncores
    ncores=$(nproc 2>/dev/null || echo 2)
    if [ "$np" -gt "$ncores" ]; then
        printf '%s\n' --oversubscribe --mca mpi_yield_when_idle 1
    fi
}

# Extra mpiexec.mpich arguments for NP ranks.
mpich_np_args() {
    local np=$1 ncores
    ncores=$(nproc 2>/dev/null || echo 2)
    if [ "$np" -le "$ncores" ]; then
        printf '%s\n' -bind-to core
    fi
}

have_mpich() {
    command -v "$MPICC_MPICH" >/dev/null 2>&1 && command -v "$MPIEXEC_MPICH" >/dev/null 2>&1
}

# Fraction (0..1) of all CPU time that was busy over the next 0.1 s.
cpu_busy() {
    local a b
    a=$(head -n 1 /proc/stat 2>/dev/null) || { echo 0; return; }
    sleep 0.1
    b=$(head -n 1 /proc/stat)
    printf '%s\n%s\n' "$a" "$b" | awk '
        { t = 0; for (i = 2; i <= NF; i++) t += $i; idle = $5 + $6 }
        NR == 1 { t1 = t; i1 = idle }
        NR == 2 { d = t - t1; printf "%.3f\n", (d > 0 ? 1 - (idle - i1) / d : 0) }'
}

# Wait (at most $1 seconds) until other processes leave the CPUs alone, so
# that a latency run does not share this small machine with a compiler.
# Returns 1 if the machine was still busy when the time ran out.
wait_quiet() {
    local max=${1:-10} threshold=${QUIET_THRESHOLD:-0.15} waited=0 busy
    [ -r /proc/stat ] || return 0
    while :; do
        busy=$(cpu_busy)
        awk -v b="$busy" -v t="$threshold" 'BEGIN { exit !(b <= t) }' && return 0
        [ "$waited" -ge "$max" ] && return 1
        sleep 1
        waited=$((waited + 1))
    done
}

# ------------------------------------------------- benchmark driver steps
# (run-bench.sh, run-part-bench.sh, run-chan-bench.sh)

# Print the usage: the header comment of script $1, up to "set -u".
bench_usage() {
    sed -n '2,/^set -u/p' "$1" | sed '$d; s/^# \{0,1\}//'
}

# Create BUILD_DIR (if unset: a new temporary directory named after $1,
# removed at exit) and the output directory OUT; exit 1 on failure.
bench_make_dirs() {
    if [ -n "${BUILD_DIR:-}" ]; then
        mkdir -p "$BUILD_DIR" || exit 1
    else
        BUILD_DIR=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || exit 1
        trap 'rm -rf "$BUILD_DIR"' EXIT
    fi
    mkdir -p "$OUT" || exit 1
}

# Build program $1 from source $2 with MPICH's mpicc (extra flags: $3...);
# fails if MPICH is absent or the build fails (then also status=1).
bench_build_mpich() {
    local bin=$1 src=$2
    shift 2
    if ! have_mpich; then
        pnbc_log "note: $MPICC_MPICH / $MPIEXEC_MPICH not found; no MPICH column"
        return 1
    fi
    echo "building $bin with $MPICC_MPICH"
    if ! "$MPICC_MPICH" -O2 -Wall "$@" -o "$bin" "$src"; then
        pnbc_log "WARNING: building with $MPICC_MPICH failed; no MPICH column"
        status=1
        return 1
    fi
}

# Copy the pnbc libraries (libpnbc, the engine) of build tree $1 into directory $2.
pnbc_snapshot_libs() {
    mkdir -p "$2" &&
        cp -P -p "$1"/ompi/mpiext/pnbc/.libs/libpnbc.so* \
              "$1"/ompi/mca/common/pnbc/.libs/libmca_common_pnbc.so* "$2"/
}

# Print the short commit of git tree $1, with " + local changes" if it has any.
pnbc_tree_rev() {
    local rev
    rev=$(git -C "$1" rev-parse --short HEAD 2>/dev/null)
    [ -n "$rev" ] && [ -n "$(git -C "$1" status --porcelain -uno 2>/dev/null)" ] && rev="$rev + local changes"
    printf '%s\n' "$rev"
}

# The interleaved runs.  Usage: bench_rounds KIND PROGRESS_FORMAT ITEM...
# ROUNDS rounds; in each, for each ITEM (a collective, a test group: a KIND),
# every implementation of IMPLS in turn, the order rotating with the item and
# the round (none is always first); each run is the command printed by the
# caller's `impl_cmd IMPL ITEM` (one word a line), run by bench_run.
# PROGRESS_FORMAT: printf format of the run's number, total (the caller's
# number of runs), round, item and implementation.  Sets busy_runs, elapsed (s).
bench_rounds() {
    local kind=$1 fmt=$2 nimpl=${#IMPLS[@]} n=0 start round i k item impl progress cmd
    shift 2
    local items=("$@")
    start=$(date +%s)
    busy_runs=0 quiet_left=$QUIET_BUDGET
    declare -gA DEAD=()
    for ((round = 1; round <= ROUNDS; round++)); do
        for i in "${!items[@]}"; do
            item=${items[$i]}
            for ((k = 0; k < nimpl; k++)); do
                impl=${IMPLS[$(((k + i + round) % nimpl))]}
                n=$((n + 1))
                mapfile -t cmd < <(impl_cmd "$impl" "$item")
                # shellcheck disable=SC2059 # the caller's format
                printf -v progress "$fmt" "$n" "${total:?}" "$round" "$item" "$impl"
                bench_run "$progress" "$round" "$kind" "$item" "$impl" "${cmd[@]}"
            done
        done
    done
    rm -f "$OUT/.stderr"
    elapsed=$(($(date +%s) - start))
    echo "benchmark runs took ${elapsed}s"
    if [ "$busy_runs" -gt 0 ]; then
        pnbc_log "WARNING: $busy_runs of $total runs started while other processes were using the CPUs"
    fi
}

# One run of bench_rounds.  Usage: bench_run PROGRESS ROUND KIND ITEM IMPL CMD...
# Prints PROGRESS and the outcome; skips IMPL's runs of ITEM if one timed out
# before (a hang of one implementation in one test); waits up
# to QUIET_WAIT s (within quiet_left) for idle CPUs; runs CMD under RUN_TIMEOUT;
# logs to LOG ("### round=ROUND KIND=ITEM impl=IMPL"); records data-check
# failures, the failure and BENCH_ERR_CONTEXT (default 0) error lines of its
# stderr in ERR; appends its CSV rows, ROUND first, to RAW; updates busy_runs,
# quiet_left, status and DEAD.
bench_run() {
    local progress=$1 round=$2 kind=$3 item=$4 impl=$5 wmax t_wait t_run out rc
    shift 5
    if [ -n "${DEAD[$impl/$item]:-}" ]; then
        printf '%s skipped (timed out before)\n' "$progress"
        return
    fi
    printf '%s ' "$progress"
    printf '### round=%s %s=%s impl=%s\n### %s\n' "$round" "$kind" "$item" "$impl" "$*" >>"$LOG"
    wmax=$QUIET_WAIT
    [ "$wmax" -gt "$quiet_left" ] && wmax=$quiet_left
    t_wait=$SECONDS
    if ! wait_quiet "$wmax"; then
        busy_runs=$((busy_runs + 1))
        printf '(busy machine) '
    fi
    quiet_left=$((quiet_left - (SECONDS - t_wait)))
    [ "$quiet_left" -lt 0 ] && quiet_left=0
    t_run=$(date +%s.%N)
    out=$(timeout -k 10 "$RUN_TIMEOUT" "$@" 2>"$OUT/.stderr")
    rc=$?
    t_run=$(awk -v a="$t_run" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    cat "$OUT/.stderr" >>"$LOG"
    printf '%s\n' "$out" >>"$LOG"
    grep 'VERIFY FAILED' "$OUT/.stderr" | sort -u >>"$ERR"
    if [ $rc -ne 0 ]; then
        echo "run failed (exit $rc$([ $rc -eq 124 ] && echo ', timeout')): round $round $item $impl" >>"$ERR"
        if [ "${BENCH_ERR_CONTEXT:-0}" -gt 0 ]; then
            grep -v 'VERIFY FAILED' "$OUT/.stderr" | grep -m "$BENCH_ERR_CONTEXT" -i 'error\|abort\|failed' | \
                sed 's/^/    /' >>"$ERR"
        fi
        echo "FAILED (exit $rc, ${t_run} s)"
        status=1
        # a hung implementation would eat the time of every later run
        [ $rc -eq 124 ] || [ $rc -eq 137 ] && DEAD[$impl/$item]=1
    else
        echo "ok ($(printf '%s\n' "$out" | grep -c ,) rows, ${t_run} s)"
    fi
    printf '%s\n' "$out" | grep ',' | sed "s/^/$round,/" >>"$RAW"
}

# The report's line on runs that started on a busy machine (of the caller's $total).
bench_busy_note() {
    echo "runs started while other processes kept the CPUs busy: $busy_runs of ${total:?}$([ "$busy_runs" -gt 0 ] && echo ' (numbers less reliable)')"
}

# Versions of Open MPI (ompi_info) and MPICH (mpiexec.mpich) for the report.
ompi_version() { "$OMPI_INFO" --version 2>/dev/null | head -n 1; }
mpich_version() { "$MPIEXEC_MPICH" --version 2>/dev/null | sed -n 's/^ *Version: *//p' | head -n 1; }

# Set PYTHON (default: Debian's python3, where python3-matplotlib installs,
# before any other); exit 1 if there is none.
bench_find_python() {
    PYTHON=${PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
    if [ -z "$PYTHON" ]; then
        pnbc_log "error: python3 is needed for the report (apt-get install python3)"
        exit 1
    fi
}

# Exit with $status, 1 if ERR has problems (shown on stderr).
bench_exit() {
    if [ -s "$ERR" ]; then
        pnbc_log "WARNING: problems recorded in $ERR:"
        sed 's/^/  /' "$ERR" >&2
        status=1
    fi
    exit "$status"
}
