#!/bin/bash
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# Compare pnbc's algorithms of one collective with each other and with
# stock libnbc persistent, interleaved (how the built-in rules were
# derived: docs/selection.md).
#
# Usage: contrib/bench/run-alg-compare.sh NP COLL SIZES "ALG1 ALG2 ..."
#   e.g. contrib/bench/run-alg-compare.sh 4 gather 4K,64K,1M "linear binomial"
# Prints, per (implementation/algorithm, size), the median µs per
# Start+Wait of each round.  Environment: ROUNDS (default 3),
# PNBC_COMPONENT_PATH (see mpi-env.sh), MPICC, MPIRUN.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/mpi-env.sh
. "$HERE/mpi-env.sh"
[ $# -eq 4 ] || { sed -n '2,/^set -u/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 2; }
np=$1 coll=$2 sizes=$3 algs=$4
BUILD=$(mktemp -d "${TMPDIR:-/tmp}/pnbc-alg.XXXXXX") || exit 1
trap 'rm -rf "$BUILD"' EXIT
"$MPICC" -O2 -o "$BUILD/pcoll_bench" "$HERE/pcoll_bench.c" || exit 1
pnbc_setup_component_path
mapfile -t npargs < <(ompi_np_args "$np")
run() {     # label colls [mca args]
    local label=$1 colls=$2
    shift 2
    timeout 300 "$MPIRUN" -np "$np" "${npargs[@]}" --bind-to none --mca btl self,vader \
        --mca pml ob1 --mca coll "$colls" "$@" "$BUILD/pcoll_bench" -l "$label" -c "$coll" \
        -s "$sizes" -b 7 -T 10 -o 0 -i 5 2>/dev/null
}
for _ in $(seq "${ROUNDS:-3}"); do
    for a in $algs; do
        run "pnbc-$a" "$PNBC_COLL_LIST" --mca "coll_pnbc_${coll}_algorithm" "$a"
    done
    run libnbc "$STOCK_COLL_LIST"
done | awk -F, '{ k = $1 "," $2 "," $3; v[k] = v[k] " " $5 } END { for (k in v) print k ":" v[k] }' | sort
