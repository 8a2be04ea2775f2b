#!/bin/bash
# valgrind_test.sh: run valgrind_small at np=2 under valgrind (memcheck) and
# fail on memory errors caused by the persistent-collective component.
#
# Fails when a valgrind error block
#   - is an "Invalid read/write/free", "Mismatched free", "overlap" or an
#     "uninitialised" error whose stack mentions $VALGRIND_MATCH
#     (default pnbc), or
#   - (strict) is an Invalid read/write/free whose stack contains data-path
#     frames the component feeds (mca_pml_*, mca_btl_*, mca_coll_*,
#     opal_convertor*, opal/ompi datatype engine, ompi_op_*): in this program
#     only the persistent collectives drive those paths;
# or when valgrind_small itself fails (wrong results, crash).
# Other valgrind reports (e.g. from MPI_Init) are counted and ignored.
#
# Exit: 0 pass, 1 fail, 77 skip (only when valgrind is not installed).
# Environment: MPIRUN (mpirun), TEST_BINDIR (dir of this script),
#   PNBC_COLL (--mca coll list, default pnbc,basic,libnbc,tuned,self),
#   PNBC_MPI_ARGS (other mpirun arguments, e.g. "--mca btl self,vader"),
#   VALGRIND_MATCH (pnbc), VALGRIND_KEEP_LOGS=1 keeps the log directory.
set -u
here=$(cd "$(dirname "$0")" && pwd)
MPIRUN=${MPIRUN:-mpirun}
BIN=${TEST_BINDIR:-$here}
MATCH=${VALGRIND_MATCH:-pnbc}
ARGS=${PNBC_MPI_ARGS:-}
COLL=${PNBC_COLL:-pnbc,basic,libnbc,tuned,self}

if ! command -v valgrind >/dev/null 2>&1; then
    echo "SKIP valgrind: valgrind is not installed"
    exit 77
fi
if [ ! -x "$BIN/valgrind_small" ]; then
    echo "FAIL valgrind: $BIN/valgrind_small not built"
    exit 1
fi

logdir=$(mktemp -d "${TMPDIR:-/tmp}/pnbc-valgrind.XXXXXX")
supp=/usr/share/openmpi/openmpi-valgrind.supp
supp_arg=()
[ -f "$supp" ] && supp_arg=(--suppressions="$supp")

# shellcheck disable=SC2086
"$MPIRUN" -np 2 $ARGS --mca coll "$COLL" \
    valgrind --tool=memcheck --error-exitcode=0 --leak-check=no --num-callers=40 \
    "${supp_arg[@]}" --log-file="$logdir/vg.%p.log" \
    "$BIN/valgrind_small" >"$logdir/program.out" 2>&1
prog_rc=$?
grep -v '^\s*$' "$logdir/program.out" | tail -n 20

status=0
if [ $prog_rc -ne 0 ]; then
    echo "FAIL valgrind: valgrind_small exited with status $prog_rc"
    status=1
fi
shopt -s nullglob
logs=("$logdir"/vg.*.log)
if [ ${#logs[@]} -lt 2 ] || ! grep -q "Memcheck" "${logs[@]}"; then
    echo "FAIL valgrind: expected 2 valgrind logs in $logdir, found ${#logs[@]}"
    status=1
fi

# The error blocks that are pnbc's (vg_errors.awk), with invalid accesses
# in Open MPI's data path counted too.
report=$(awk -v pat="$MATCH" -v datapath=1 -f "$(dirname "$0")/vg_errors.awk" "${logs[@]}")
echo "$report" | grep -v "^SUMMARY" | head -n 200
summary=$(echo "$report" | grep '^SUMMARY' | tail -n 1)
nbad=$(echo "$summary" | sed -n 's/.*offending=\([0-9]*\).*/\1/p')
echo "valgrind: logs in $logdir; ${summary#SUMMARY }; match \"$MATCH\""
if [ "${nbad:-1}" != "0" ]; then
    echo "FAIL valgrind: $nbad memory error(s) attributable to the persistent-collective component"
    status=1
fi
if [ $status -eq 0 ]; then
    echo "PASS valgrind"
    [ "${VALGRIND_KEEP_LOGS:-0}" = 1 ] || rm -rf "$logdir"
fi
exit $status
