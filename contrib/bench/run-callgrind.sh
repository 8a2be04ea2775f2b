#!/usr/bin/env bash
#
# Copyright (c) 2026 The pnbc developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Instructions executed by rank 0 per MPI_Start + MPI_Wait (callgrind),
# pnbc vs stock libnbc, at the given process counts (oversubscribed):
#   bash contrib/bench/run-callgrind.sh [NP ...]        (default: 4 8)
# or, with --nonblocking, pnbc's repeated 8 B nonblocking call + wait
# against its persistent Start + Wait (and tuned's blocking call) at np=2, counted at each rank in
# turn (only the counted rank runs under valgrind, so it never waits for
# the other, and the count is the call's own work):
#   bash contrib/bench/run-callgrind.sh --nonblocking
# or, with --channel, the 8 B channel (a channel each way, a ping-pong:
# chan_cost.c) per MPI_Start + MPI_Wait, counted at each rank in turn:
#   bash contrib/bench/run-callgrind.sh --channel
# (libpnbc of PNBC_BUILD_TREE, default this tree, which must be built);
# or, with --summary, both as one table for docs/performance.md (pnbc's
# persistent 8 B Start + Wait and tuned's blocking call per collective,
# and the channel, at each rank), into OUT/instructions.md:
#   bash contrib/bench/run-callgrind.sh --summary [--out OUT]
# Needs valgrind; PNBC_COMPONENT_PATH as for run-bench.sh.  With CG_KEEP=DIR,
# --nonblocking and --channel keep each count's callgrind file there
# (DIR/COLL.rRANK.MODE, DIR/channel.rRANK), for `callgrind_annotate FILE`
# by function.

set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=mpi-env.sh
. "$here/mpi-env.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$MPICC" -O2 -o "$work/start_cost" "$here/start_cost.c"
pnbc_setup_component_path
PNBC_REQUIRE=1 pnbc_detect

# The instructions of the timed calls of start_cost ARGS at rank COUNTED of
# 2 (pnbc), per call (PROG: another program; DIV: calls per count;
# KEEP_NAME: its CG_KEEP file, without the rank).
count_at_rank() {
    local counted=$1 total prog=${PROG:-$work/start_cost}; shift
    local -a vg=(valgrind -q --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/cg.%p")
    rm -f "$work"/cg.*
    if [ "$counted" = 0 ]; then
        "$MPIRUN" --mca btl self,vader --mca coll "$PNBC_COLL_LIST" \
            -np 1 "${vg[@]}" "$prog" "$@" : -np 1 "$prog" "$@" >/dev/null 2>&1
    else
        "$MPIRUN" --mca btl self,vader --mca coll "$PNBC_COLL_LIST" \
            -np 1 "$prog" "$@" : -np 1 "${vg[@]}" "$prog" "$@" >/dev/null 2>&1
    fi
    local out; out=$(ls "$work"/cg.* | head -n 1)
    total=$(callgrind_annotate "$out" 2>/dev/null |
            awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
    if [ -n "${CG_KEEP:-}" ] && [ -n "${KEEP_NAME:-}" ]; then
        cp "$out" "$CG_KEEP/$KEEP_NAME.r$counted"
    elif [ -n "${CG_KEEP:-}" ]; then
        cp "$out" "$CG_KEEP/$1.r$counted.$2"
    fi
    echo $((total / ${DIV:-${3:-1000}}))
}

build_chan_cost() {
    local tree=${PNBC_BUILD_TREE:-$(cd "$here/../.." && pwd)}
    "$MPICC" -O2 -I"$tree/ompi/mpiext/pnbc/c" -o "$work/chan_cost" "$here/chan_cost.c" \
        -L"$tree/ompi/mpiext/pnbc/.libs" -lpnbc -Wl,-rpath,"$tree/ompi/mpiext/pnbc/.libs"
}

if [ "${1:-}" = "--summary" ]; then
    out=bench-results
    while [ $# -gt 0 ]; do     # (--quick, from run-performance.sh, changes nothing)
        [ "$1" = --out ] && { out=$2; shift; }
        shift
    done
    mkdir -p "$out"
    build_chan_cost
    {
        echo "Instructions per 8 B call at np=2 (callgrind; the counted rank runs under valgrind,"
        echo "its peer runs free, so the count is the call's own work, no waiting), rank 0 / rank 1."
        echo "Root 0 for bcast and reduce; \`tuned\`: Open MPI's blocking MPI_<Coll>; channel: one"
        echo "MPI_Start + MPI_Wait of a channel (MPIX_Bind_channels) in a ping-pong."
        echo
        echo "| call | \`pnbc\` MPI_Start + MPI_Wait | \`tuned\` blocking call |"
        echo "|---|---:|---:|"
        for coll in barrier bcast reduce allreduce allgather alltoall; do
            echo "| $coll | $(count_at_rank 0 "$coll" persistent 1000) / $(count_at_rank 1 "$coll" persistent 1000)" \
                "| $(count_at_rank 0 "$coll" blocking 1000) / $(count_at_rank 1 "$coll" blocking 1000) |"
        done
        echo "| channel | $(PROG=$work/chan_cost DIV=2000 count_at_rank 0 1000) / $(PROG=$work/chan_cost DIV=2000 count_at_rank 1 1000) | - |"
        echo
    } >"$out/instructions.md"
    cat "$out/instructions.md"
    exit 0
fi

if [ "${1:-}" = "--channel" ]; then
    build_chan_cost
    printf '%-10s %-5s %12s\n' what rank "start+wait"
    for rank in 0 1; do
        printf '%-10s %-5s %12s\n' channel "$rank" \
            "$(PROG=$work/chan_cost DIV=2000 KEEP_NAME=channel count_at_rank "$rank" 1000)"
    done
    exit 0
fi

if [ "${1:-}" = "--nonblocking" ]; then
    printf '%-10s %-5s %12s %12s %8s %14s\n' coll rank persistent nonblocking ratio "tuned blocking"
    for coll in bcast reduce allreduce barrier allgather alltoall; do
        for rank in 0 1; do
            p=$(count_at_rank "$rank" "$coll" persistent 1000)
            n=$(count_at_rank "$rank" "$coll" nonblocking 1000)
            b=$(count_at_rank "$rank" "$coll" blocking 1000)
            printf '%-10s %-5s %12s %12s %8.2f %14s\n' "$coll" "$rank" "$p" "$n" \
                "$(awk -v a="$n" -v b="$p" 'BEGIN { print a / b }')" "$b"
        done
    done
    exit 0
fi

printf '%-4s %-10s %12s %12s %8s\n' np coll pnbc libnbc ratio
for np in "${@:-4 8}"; do
    for coll in allreduce bcast barrier; do
        declare -A ir=()
        for impl in pnbc libnbc; do
            list=$PNBC_COLL_LIST; [ "$impl" = libnbc ] && list=$STOCK_COLL_LIST
            rm -f "$work"/cg.*
            "$MPIRUN" --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader --mca coll "$list" \
                -np 1 valgrind -q --tool=callgrind --instr-atstart=no \
                    --callgrind-out-file="$work/cg.%p" "$work/start_cost" "$coll" : \
                -np $((np - 1)) "$work/start_cost" "$coll" >/dev/null 2>&1
            total=$(callgrind_annotate "$(ls "$work"/cg.* | head -n 1)" 2>/dev/null |
                    awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
            ir[$impl]=$((total / 1000))
        done
        printf '%-4s %-10s %12s %12s %8.2f\n' "$np" "$coll" "${ir[pnbc]}" "${ir[libnbc]}" \
            "$(awk -v a="${ir[pnbc]}" -v b="${ir[libnbc]}" 'BEGIN { print a / b }')"
    done
done
