# shellcheck shell=bash
#
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# cases.d/resources.sh: what the library keeps (allocation counter: no
# heap call per start; leaks over many cycles; valgrind), sourced by
# run-tests.sh after every other area but selection.sh (uses its run_case,
# mpiargs, bin, alloc_args, MPIRUN, here).

# shellcheck disable=SC2046
run_case alloc-np2 "$MPIRUN" $(mpiargs 2) $(alloc_args) "$(bin alloc_test)"

# shellcheck disable=SC2046
run_case leak-cycles-np4 "$MPIRUN" $(mpiargs 4) "$(bin leak_test)" cycles
# shellcheck disable=SC2046
run_case leak-longloop-np2 "$MPIRUN" $(mpiargs 2) "$(bin leak_test)" longloop

run_case valgrind-np2 bash "$here/valgrind_test.sh"
