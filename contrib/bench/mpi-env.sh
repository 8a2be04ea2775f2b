# -*- sh -*-
# Copyright (c) 2026 The pnbc developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Shared setup for contrib/run-example.sh and contrib/bench/run-bench.sh.
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
