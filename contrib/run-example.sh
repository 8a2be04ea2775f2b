#!/bin/bash
# Copyright (c) 2026 The pnbc developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Build and run contrib/examples/jacobi_persistent.c (a Jacobi-preconditioned
# pipelined CG solver whose iterations use a persistent allreduce and a
# persistent bcast) once with the pnbc component and once with stock libnbc,
# then print a side-by-side summary.
#
# Usage: contrib/run-example.sh [NP]
# Environment:
#   NP                    ranks (default 2; >2 oversubscribes this 2-core machine)
#   N                     grid points per direction (default 32)
#   REPS                  timed solves per mode (default 50)
#   PASSES                runs per component, interleaved; the fastest is shown (default 2)
#   BUILD_DIR             where the binary goes (default: a temporary directory)
#   PNBC_COMPONENT_PATH   directory holding mca_coll_pnbc.so (if not installed)
#   PNBC_STANDIN=1        if pnbc is absent, run libnbc in its place (script testing only)
#   PNBC_REQUIRE=1        fail instead of skipping when pnbc is absent
#   MPICC, MPIRUN, OMPI_INFO
# Exit status: 0 if every run converged and agreed with its blocking twin and
# the components agree with each other; 1 otherwise.

set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/bench/mpi-env.sh
. "$HERE/bench/mpi-env.sh"

NP=${1:-${NP:-2}}
N=${N:-32}
REPS=${REPS:-50}
PASSES=${PASSES:-2}
if [ -n "${BUILD_DIR:-}" ]; then
    mkdir -p "$BUILD_DIR" || exit 1
else
    BUILD_DIR=$(mktemp -d "${TMPDIR:-/tmp}/pnbc-contrib.XXXXXX") || exit 1
    trap 'rm -rf "$BUILD_DIR"' EXIT
fi
EXE="$BUILD_DIR/jacobi_persistent"

if ! "$MPICC" -O2 -Wall -o "$EXE" "$HERE/examples/jacobi_persistent.c" -lm; then
    pnbc_log "error: building the example with $MPICC failed"
    exit 1
fi

pnbc_setup_component_path
pnbc_detect || exit 1

mapfile -t NPARGS < <(ompi_np_args "$NP")

declare -a LABELS COLLS
if [ -n "$PNBC_IMPL_LABEL" ]; then
    LABELS+=("$PNBC_IMPL_LABEL"); COLLS+=("$PNBC_IMPL_COLLS")
fi
LABELS+=(libnbc); COLLS+=("$STOCK_COLL_LIST")

field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# PASSES runs per component, in A B B A ... order; the summary keeps each
# component's fastest pass (this machine is noisy), and every pass must be
# correct.
status=0
declare -A RES AGREE
for ((pass = 1; pass <= PASSES; pass++)); do
    order=("${!LABELS[@]}")
    if [ $((pass % 2)) -eq 0 ]; then
        order=(); for ((k = ${#LABELS[@]} - 1; k >= 0; k--)); do order+=("$k"); done
    fi
    for k in "${order[@]}"; do
        label=${LABELS[$k]}
        out=$("$MPIRUN" -np "$NP" "${NPARGS[@]}" --mca coll "${COLLS[$k]}" \
              "$EXE" -n "$N" -r "$REPS" -l "$label" 2>&1)
        rc=$?
        line=$(printf '%s\n' "$out" | grep '^RESULT ' | tail -n 1)
        if [ "$pass" -eq 1 ] || [ $rc -ne 0 ] || [ -z "$line" ] || [ "$(field "$line" agree)" != yes ]; then
            printf '%s\n' "--- $label (--mca coll ${COLLS[$k]}), pass $pass ---" "$out" | grep -v '^RESULT '
        fi
        if [ -z "$line" ]; then        # crashed, hung up or aborted
            status=1
            RES[$label]=FAILED
            continue
        fi
        [ $rc -eq 0 ] || status=1        # ran, but disagreed or did not converge
        if [ "$(field "$line" agree)" != yes ]; then
            status=1
            AGREE[$label]=no
        fi
        prev=${RES[$label]:-}
        [ "$prev" = FAILED ] && continue
        if [ -z "$prev" ] || awk -v a="$(field "$line" us_per_iter_persistent)" \
               -v b="$(field "$prev" us_per_iter_persistent)" 'BEGIN { exit !(a < b) }'; then
            RES[$label]=$line
        fi
    done
done

echo
echo "== jacobi_persistent summary: np=$NP, ${N}x${N} grid; us per iteration = median of $REPS solves, fastest of $PASSES runs =="
printf '%-13s %-62s %-6s %13s %13s\n' component "result (iterations, true rel. residual, checksum)" agree \
       "us/it pers." "us/it block."
for label in "${LABELS[@]}"; do
    line=${RES[$label]:-}
    if [ -z "$line" ] || [ "$line" = FAILED ]; then
        printf '%-13s %s\n' "$label" "FAILED (no RESULT line in some pass; see output above)"
        continue
    fi
    result="iters=$(field "$line" iters) resid=$(field "$line" resid) checksum=$(field "$line" checksum)"
    [ "$(field "$line" converged)" = yes ] || result="$result NOT-CONVERGED"
    agree=${AGREE[$label]:-yes}
    printf '%-13s %-62s %-6s %13s %13s\n' "$label" "$result" "$agree" \
           "$(field "$line" us_per_iter_persistent)" "$(field "$line" us_per_iter_blocking)"
done
if [ -z "$PNBC_IMPL_LABEL" ]; then
    printf '%-13s %s\n' pnbc "skipped: component not found (set PNBC_COMPONENT_PATH)"
fi

# The two components must produce the same solution (same iteration count;
# checksums equal to 1e-10 relative: at np>2 the reduction order may differ).
if [ "${#LABELS[@]}" -ge 2 ] && [ "${RES[${LABELS[0]}]:-FAILED}" != FAILED ] && \
   [ "${RES[libnbc]:-FAILED}" != FAILED ]; then
    a=${RES[${LABELS[0]}]} b=${RES[libnbc]}
    if [ "$(field "$a" iters)" = "$(field "$b" iters)" ] && \
       awk -v x="$(field "$a" checksum)" -v y="$(field "$b" checksum)" \
           'BEGIN { d = x - y; if (d < 0) d = -d; s = (x < 0 ? -x : x); exit !(d <= 1e-10 * s) }'; then
        echo "cross-check: ${LABELS[0]} and libnbc solutions agree"
    else
        echo "cross-check: ${LABELS[0]} and libnbc solutions DIFFER"
        status=1
    fi
fi
exit $status
