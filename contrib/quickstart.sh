#!/usr/bin/env bash
#
# Copyright (c) 2026 The pnbc developers
# SPDX-License-Identifier: BSD-3-Clause
#
# The README's first command: install what is missing, build pnbc, install
# it into Open MPI's component directory (or $HOME/.openmpi/components when
# not root), and run the example application with pnbc and with stock
# libnbc side by side.
#
# Environment: NPS (a list of rank counts for the example, e.g. "2 4") or NP
# (one count; default 2), PNBC_CONFIGURE_ARGS; N, REPS, PASSES: see
# contrib/run-example.sh.

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

bash contrib/install-deps.sh

configure_args=${PNBC_CONFIGURE_ARGS:-}
if [ "$(id -u)" -ne 0 ] && [ -z "$configure_args" ]; then
    # Open MPI also searches ~/.openmpi/components: no root needed there;
    # libraries, headers and mpicc-pnbc go under ~/.local.
    configure_args="--prefix=$HOME/.local --with-ompi-component-dir=$HOME/.openmpi/components"
fi
if [ ! -f config.status ]; then
    ./autogen.pl
    # shellcheck disable=SC2086
    ./configure $configure_args
fi
make -j2
make install

echo
echo "== installed: $(ompi_info | grep 'MCA coll: pnbc' | sed 's/^ *//')"
echo
# Run the example against the component just built (an older installed
# copy, or an install directory Open MPI does not search, cannot interfere);
# it ends with a table per rank count: the collectives' cost per iteration
# (persistent with pnbc, persistent with libnbc, blocking) next to the whole
# iteration's, and the pnbc/libnbc and pnbc/blocking ratios of that cost.
# shellcheck disable=SC2086
PNBC_COMPONENT_PATH="$top/ompi/mca/coll/pnbc/.libs" PNBC_REQUIRE=1 \
    bash contrib/run-example.sh ${NPS:-${NP:-2}}
