#!/usr/bin/env bash
#
# Copyright (c) 2026 The pnbc developers
# SPDX-License-Identifier: BSD-3-Clause
#
# One command to test pnbc: install the dependencies, build (reusing an
# already configured tree), install, and run "make check".  The last line printed
# is the test runner's "N passed, N failed" summary; the exit status is
# non-zero if the build failed or any test failed.
#
# Environment:
#   PNBC_CONFIGURE_ARGS  extra arguments for ./configure (fresh builds)
#   PNBC_MAKE_JOBS       parallel make jobs for the build (default 2)
#   PNBC_SKIP_DEPS=1     do not run contrib/install-deps.sh

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

# mpirun refuses to run as root without these (CI runs as root).
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

if [ "${PNBC_SKIP_DEPS:-0}" != 1 ]; then
    bash contrib/install-deps.sh
fi

if [ ! -f config.status ] || [ ! -f Makefile ]; then
    ./autogen.pl
    # shellcheck disable=SC2086
    ./configure ${PNBC_CONFIGURE_ARGS:-}
fi

make -j"${PNBC_MAKE_JOBS:-2}"

# Install (component, engine and MPI extension libraries, headers,
# mpicc-pnbc, pnbc.pc): the MPI-4 name tests build programs with the
# installed wrapper and pkg-config file, as a user would.  The other tests
# still run the component of this build tree.
prefix=$(sed -n 's/^prefix = //p' Makefile)
if [ "$(id -u)" -eq 0 ] || [ -w "${prefix:-/usr/local}" ]; then
    make install >/dev/null
else
    echo "test-all.sh: not installing into $prefix (not writable): the MPI-4 name tests will fail"
fi

# Run the tests.  Output is shown as it comes; after the runner's summary
# line, make's own chatter ("Making check in ...", "make[1]: *** ...
# Error 1" when a test failed) is dropped, and if anything else was
# printed after it the summary is repeated so that it stays last.
summary_file=$(mktemp)
trap 'rm -f "$summary_file"' EXIT

set +e
make -s --no-print-directory check 2>&1 | awk -v sumfile="$summary_file" '
    /^[[:space:]]*[0-9]+ passed, [0-9]+ failed/ {
        summary = $0; after = 0; print; fflush(); next
    }
    summary != "" && (/^g?make(\[[0-9]+\])?: / || /^Making [[:alnum:]_-]+ in /) { next }
    { print; fflush(); if (summary != "") after = 1 }
    END {
        if (summary != "") {
            if (after) print summary
            print summary > sumfile
        }
    }'
make_status=${PIPESTATUS[0]}
set -e

summary=$(cat "$summary_file")
if [ -z "$summary" ]; then
    echo "test-all.sh: make check (exit status $make_status) ended without the test runner's \"N passed, N failed\" summary"
    exit 1
fi

failed=$(printf '%s\n' "$summary" | sed -n 's/^[[:space:]]*[0-9][0-9]* passed, \([0-9][0-9]*\) failed.*/\1/p')
if [ "$make_status" -ne 0 ] || [ "${failed:-1}" -ne 0 ]; then
    exit 1
fi
exit 0
