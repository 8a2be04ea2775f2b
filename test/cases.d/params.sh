# shellcheck shell=bash
#
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# cases.d/params.sh: the engine's MCA parameters (common_pnbc_*, registered
# by the engine; the coll component's earlier names coll_pnbc_* are
# synonyms) reach every client, also when the coll component is not
# loaded: partitioned communication (libpnbc on Open MPI 4.1, part/pnbc on
# 5.0) with --mca coll without pnbc.  At common_pnbc_verbose 2 every
# schedule committed prints a "shm cid" line counting the sends and
# receives it binds to the shared-memory transport.
#   params-nocoll-verbose-np2   the engine's name: lines printed
#   params-nocoll-synonym-np2   the coll_pnbc_ synonym: lines printed
#   params-nocoll-noshm-np2     common_pnbc_shm 0 as well: no message on
#                               shared memory, and the data still right
# (uses run_case, bin, MPIRUN, PNBC_MPI_ARGS from run-tests.sh)

# shellcheck disable=SC2016
expect_no_output='
name=$1 pattern=$2; shift 2
out=$("$@" 2>&1); rc=$?
echo "$out" | grep -v "coll:pnbc" | tail -n 20
[ $rc -eq 0 ] || { echo "FAIL $name: exit $rc"; exit 1; }
n=$(echo "$out" | grep -cE "$pattern")
[ "$n" -eq 0 ] || { echo "FAIL $name: $n lines say: $pattern"; exit 1; }
echo "PASS $name (no line says: $pattern)"
'
params_shm='coll:pnbc: shm cid .*([1-9][0-9]* sends|[1-9][0-9]* receives)'
# shellcheck disable=SC2206
params_nocoll=(-np 2 $PNBC_MPI_ARGS --mca coll basic,libnbc,tuned,self)
run_case params-nocoll-verbose-np2 bash -c "$expect_output" expect params "$params_shm" \
    "$MPIRUN" "${params_nocoll[@]}" --mca common_pnbc_verbose 2 "$(bin part_test)"
run_case params-nocoll-synonym-np2 bash -c "$expect_output" expect params "$params_shm" \
    "$MPIRUN" "${params_nocoll[@]}" --mca coll_pnbc_verbose 2 "$(bin part_test)"
run_case params-nocoll-noshm-np2 bash -c "$expect_no_output" expect params "$params_shm" \
    "$MPIRUN" "${params_nocoll[@]}" --mca common_pnbc_verbose 2 --mca common_pnbc_shm 0 \
    "$(bin part_test)"
