#!/usr/bin/env bash
#
# Copyright (c) 2026 The pnbc developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Instructions executed by rank 0 per MPI_Start + MPI_Wait (callgrind),
# pnbc vs stock libnbc, at the given process counts (oversubscribed):
#   bash contrib/bench/run-callgrind.sh [NP ...]        (default: 4 8)
# Needs valgrind; PNBC_COMPONENT_PATH as for run-bench.sh.

set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=mpi-env.sh
. "$here/mpi-env.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$MPICC" -O2 -o "$work/start_cost" "$here/start_cost.c"
pnbc_setup_component_path
PNBC_REQUIRE=1 pnbc_detect

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
