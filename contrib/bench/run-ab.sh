#!/bin/bash
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# A/B of two pnbc build trees, interleaved: for each round, pcoll_bench
# runs with the component of tree A, then with that of tree B (np=$NP,
# default 2, oversubscribed beyond 2; the default binding, vader + ob1).  Each component loads its own tree's
# engine library (its RUNPATH), so LD_LIBRARY_PATH must not name one.
# Prints every run's CSV line, then per cell and tree the median and the
# values of all rounds, sorted (this VM has slow phases: look at both).
#
# Usage: contrib/bench/run-ab.sh TREE_A TREE_B ROUNDS COLLS SIZES [MODE [MPIRUN ARGS...]]
#   e.g. contrib/bench/run-ab.sh . /tmp/base 9 bcast,reduce,allreduce 64K nonblocking
#   MODE: persistent (default) | nonblocking | blocking | paired (the
#   nonblocking call and its persistent request in the same launch: also
#   prints, per cell and tree, the ratio nonblocking / persistent of each
#   launch and their median)
#   A_ARGS, B_ARGS: more mpirun arguments for A's runs or B's alone (an A/B
#   of parameters: the same tree twice, e.g. A_ARGS="--mca coll_pnbc_x 0")
#   C_ARGS: when set, a third run per round, tree B with these arguments
set -euo pipefail
[ $# -ge 5 ] || { sed -n '2,/^set/p' "$0" | sed 's/^# \{0,1\}//;/^set/d'; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
A=$(cd "$1" && pwd); B=$(cd "$2" && pwd); ROUNDS=$3; COLLS=$4; SIZES=$5
MODE=${6:-persistent}; shift $(( $# < 6 ? $# : 6 ))
NP=${NP:-2}; OVER=()
[ "$NP" -gt 2 ] && OVER=(--oversubscribe --mca mpi_yield_when_idle 1)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
unset LD_LIBRARY_PATH
SYS=$(ompi_info --parsable --path pkglibdir | cut -d: -f3)
BUILD=$(mktemp -d); trap 'rm -rf "$BUILD"' EXIT
"${MPICC:-mpicc}" -O2 -o "$BUILD/pcoll_bench" "$HERE/pcoll_bench.c" -lm
for tree in "$A" "$B"; do
    [ -f "$tree/ompi/mca/coll/pnbc/.libs/mca_coll_pnbc.so" ] || { echo "no build in $tree" >&2; exit 1; }
done
for _ in $(seq "$ROUNDS"); do
    for label in A B ${C_ARGS+C}; do
        tree=$A; [ $label = A ] || tree=$B
        case $label in A) args=${A_ARGS:-} ;; B) args=${B_ARGS:-} ;; *) args=$C_ARGS ;; esac
        read -r -a own <<< "$args"
        "${MPIRUN:-mpirun}" -np "$NP" "${OVER[@]}" --mca btl self,vader --mca pml ob1 \
            --mca mca_base_component_path "$tree/ompi/mca/coll/pnbc/.libs:$SYS" \
            --mca coll pnbc,basic,libnbc,tuned,self "${own[@]}" "$@" \
            "$BUILD/pcoll_bench" -l "$label" -m "$MODE" -c "$COLLS" -s "$SIZES" -b 7 -T 10 -o 0 \
            | grep -v '^impl' | tee -a "$BUILD/all.csv"
    done
done
echo "A = $A, B = $B"
python3 - "$BUILD/all.csv" <<'PY'
import collections, statistics, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.strip().split(',')
    if len(f) >= 5:
        d[(f[1], int(f[2]), f[0])].append(float(f[4]))
for k in sorted(d):
    v = sorted(d[k])
    print('%-10s %8d %s  median %8.2f   %s' % (k[0], k[1], k[2], statistics.median(v),
                                               ' '.join('%.2f' % x for x in v)))
# -m paired: launch by launch, in the order run
for k in sorted(d):
    p = d.get((k[0], k[1], k[2] + '-persistent'))
    if p:
        r = [a / b for a, b in zip(d[k], p) if b > 0]
        print('%-10s %8d %s  nonblocking / persistent, same launch: median %.2f   %s'
              % (k[0], k[1], k[2], statistics.median(r), ' '.join('%.2f' % x for x in r)))
PY
