# shellcheck shell=bash
#
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# cases.d/selection.sh: coll/pnbc is found, lists its parameters and is the
# one serving the persistent collectives (selection_test.sh), sourced by
# run-tests.sh last (uses its run_case, here).

run_case selection bash "$here/selection_test.sh"
