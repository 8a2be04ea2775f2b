# shellcheck shell=bash
#
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# cases.d/badinput.sh: every pnbc entry point called with each invalid
# argument it can detect locally (test/badinput.c, badinput_pc.c; the table
# is docs/bad-input.md), sourced by run-tests.sh (uses its run_case,
# mpiargs, bin, MPIRUN).
#   badinput-np1..3        the misuse sequence once: the 22 MPIX_<Coll>_init
#                          and the 22 MPI_I<coll> (world dup, MPI_COMM_SELF,
#                          a periodic Cartesian communicator, an
#                          intercommunicator from np=2), partitioned
#                          communication, channels: the MPI error class of
#                          each call, no request created; then correct
#                          collectives, a partitioned and a channel exchange
#                          with checked results
#   badinput-leak-np2      the sequence 300 times: resident set size may grow
#                          by at most 2 MiB after the second round
#   badinput-valgrind-np2  3 rounds under valgrind: no invalid access, use
#                          of uninitialised memory or definitely lost block
#                          whose stack mentions pnbc (SKIP without valgrind)
# The program targets pnbc: another component behind the same wrappers
# (libnbc) crashes on the request=NULL calls.

for bi_np in 1 2 3; do
    # shellcheck disable=SC2046
    run_case "badinput-np$bi_np" "$MPIRUN" $(mpiargs $bi_np) "$(bin badinput)"
done
# shellcheck disable=SC2046
run_case badinput-leak-np2 "$MPIRUN" $(mpiargs 2) "$(bin badinput)" "${BADINPUT_LEAK_ROUNDS:-300}"

# shellcheck disable=SC2016
bi_valgrind='
command -v valgrind >/dev/null 2>&1 || { echo "SKIP badinput-valgrind: valgrind is not installed"; exit 77; }
d=$(mktemp -d "${TMPDIR:-/tmp}/pnbc-badinput-vg.XXXXXX")
vgawk=$1 prog=$2; shift 2
# the program itself, not libtool'"'"'s wrapper script (libpnbc is found
# through LD_LIBRARY_PATH, which run-tests.sh sets)
real=$(dirname "$prog")/.libs/$(basename "$prog"); [ -x "$real" ] && prog=$real
# (without Open MPI'"'"'s suppression file: it hides leaks of objects pnbc asks
# Open MPI for, such as attribute keys)
"$@" valgrind --tool=memcheck --error-exitcode=0 --leak-check=full --show-leak-kinds=definite \
    --num-callers=40 --log-file="$d/vg.%p.log" "$prog" 3 || { echo "FAIL badinput-valgrind: badinput"; exit 1; }
bad=$(awk -v leaks=1 -f "$vgawk" "$d"/vg.*.log)
echo "$bad" | tail -n 60
case "$bad" in *"offending=0 "*) rm -rf "$d"; echo "PASS badinput-valgrind"; exit 0;; esac
echo "FAIL badinput-valgrind: memory errors or leaks in pnbc (logs: $d)"; exit 1
'
# shellcheck disable=SC2046
run_case badinput-valgrind-np2 bash -c "$bi_valgrind" badinput-valgrind "$here/vg_errors.awk" "$(bin badinput)" "$MPIRUN" $(mpiargs 2)
unset bi_np bi_valgrind
