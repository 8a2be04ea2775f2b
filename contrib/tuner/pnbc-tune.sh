#!/usr/bin/env bash
#
# Copyright (c) 2026 The pnbc developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Measure pnbc's algorithms on this machine and write a decision file:
#
#   bash contrib/tuner/pnbc-tune.sh [NP] [OUTFILE]
#   mpirun --mca coll_pnbc_tuning_file OUTFILE ...      # use it
#
# Environment: PNBC_COMPONENT_PATH (a build tree's ompi/mca/coll/pnbc/.libs
# when pnbc is not installed), MPICC, MPIRUN.

set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../bench/mpi-env.sh
. "$here/../bench/mpi-env.sh"

np=${1:-2}
out=$(realpath -m "${2:-pnbc-tuning-np$np.txt}")
exe=$(mktemp -d)/pnbc_tune
trap 'rm -rf "$(dirname "$exe")"' EXIT

"$MPICC" -O2 -Wall -o "$exe" "$here/pnbc_tune.c"
pnbc_setup_component_path
PNBC_REQUIRE=1 pnbc_detect
mapfile -t npargs < <(ompi_np_args "$np")
"$MPIRUN" -np "$np" "${npargs[@]}" --mca coll "$PNBC_COLL_LIST" "$exe" "$out"
echo "use it with: mpirun --mca coll_pnbc_tuning_file $out ..."
