#!/usr/bin/env bash
#
# Copyright (c) 2026 The pnbc developers
# SPDX-License-Identifier: BSD-3-Clause
#
# One command to test pnbc: install the dependencies, build (reusing an
# already configured tree), install, and run "make check" -- on this
# machine's Open MPI, and on a Debian 12 machine (Open MPI 4.1) also inside
# a Debian 13 root (Open MPI 5.0, contrib/debian13-root.sh, which runs this
# same script there), so both supported series are tested.  Each series'
# summary is printed with its Open MPI version; the last line is the total,
# "N passed, N failed" (", N skipped" when there are skips).  The exit
# status is non-zero if a build or any test failed.
#
# Environment:
#   PNBC_SERIES          native (or 4.1): this machine's Open MPI only;
#                        5.0: only Open MPI 5.0 in a Debian 13 root;
#                        all: both (default: all on Debian 12 as root with
#                        Open MPI 4.x, else native -- on Debian 13 or with
#                        Open MPI 5 installed the suite runs natively)
#   PNBC_CONFIGURE_ARGS  extra arguments for ./configure (fresh builds,
#                        which get --enable-werror first)
#   PNBC_MAKE_JOBS       parallel make jobs for the build (default 2)
#   PNBC_SKIP_DEPS=1     do not run contrib/install-deps.sh
#   PNBC_DEBIAN13_ROOT   where the Debian 13 root lives (see debian13-root.sh)

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

series=${PNBC_SERIES:-}
if [ -z "$series" ]; then
    series=native
    host_ompi=$( (mpicc --showme:version 2>/dev/null || true) |
        sed -n 's/.*Open MPI \([0-9][0-9]*\)\..*/\1/p')
    if grep -qs '^VERSION_ID="12"' /etc/os-release && [ "${host_ompi:-4}" -lt 5 ]; then
        if [ "$(id -u)" -eq 0 ]; then
            series=all
        else
            echo "test-all.sh: not root, so Open MPI 5.0 (Debian 13 root) is not tested; run as root for both series"
        fi
    fi
fi
case "$series" in
    native|4.1) series=native ;;
    all) ;;
    5.0)
        # Only the Debian 13 root's Open MPI 5.0 (its own summary is last).
        exec bash contrib/debian13-root.sh env PNBC_SERIES=native bash contrib/test-all.sh ;;
    *) echo "test-all.sh: PNBC_SERIES=$series: native, 4.1, 5.0 or all"; exit 2 ;;
esac

# mpirun refuses to run as root without these (CI runs as root).
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

if [ "${PNBC_SKIP_DEPS:-0}" != 1 ]; then
    bash contrib/install-deps.sh
fi

if [ ! -f config.status ] || [ ! -f Makefile ]; then
    ./autogen.pl
    # Warnings are errors here (the compilers pnbc is tested with build
    # it without one); PNBC_CONFIGURE_ARGS=--disable-werror undoes it.
    # shellcheck disable=SC2086
    ./configure --enable-werror ${PNBC_CONFIGURE_ARGS:-}
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

# mawk (Debian's default awk) reads a pipe in large blocks: ask it to read
# line by line so the results show as they come.
awk_live=()
if awk -W version 2>&1 | grep -qi mawk; then awk_live=(-W interactive); fi
set +e
make -s --no-print-directory check 2>&1 | awk "${awk_live[@]}" -v sumfile="$summary_file" '
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
ompi_version=$(sed -n 's/^OMPI_VERSION = //p' Makefile)
native_line=
if [ -z "$summary" ]; then
    echo "test-all.sh: make check (exit status $make_status) ended without the test runner's \"N passed, N failed\" summary"
    native_ok=0
else
    native_line="openmpi-${ompi_version:-?}: $(printf '%s' "$summary" | sed 's/^[[:space:]]*//')"
    failed=$(printf '%s\n' "$summary" | sed -n 's/^[[:space:]]*[0-9][0-9]* passed, \([0-9][0-9]*\) failed.*/\1/p')
    native_ok=1
    if [ "$make_status" -ne 0 ] || [ "${failed:-1}" -ne 0 ]; then
        native_ok=0
    fi
fi

if [ "$series" = native ]; then
    [ -n "$summary" ] || exit 1
    # The series' labelled line (test-all.sh run by debian13-root.sh is read
    # by the caller for it), then the plain summary again, last.
    echo "$native_line"
    printf '%s\n' "$summary" | sed 's/^[[:space:]]*//'
    [ "$native_ok" -eq 1 ] || exit 1
    exit 0
fi

# Open MPI 5.0: this script again, inside the Debian 13 root.
echo
echo "== test-all.sh: Open MPI 5.0 in a Debian 13 root (contrib/debian13-root.sh)"
root_log=$(mktemp)
trap 'rm -f "$summary_file" "$root_log"' EXIT
set +e
bash contrib/debian13-root.sh env PNBC_SERIES=native bash contrib/test-all.sh 2>&1 | tee "$root_log"
root_status=${PIPESTATUS[0]}
set -e
root_summary=$(grep -E '^openmpi-[0-9.]+: [0-9]+ passed, [0-9]+ failed' "$root_log" | tail -n 1)

echo
total_pass=0 total_fail=0 total_skip=0
add_counts() {
    local line=$1 n
    n=$(printf '%s' "$line" | sed -n 's/.*: \([0-9][0-9]*\) passed.*/\1/p'); total_pass=$((total_pass + ${n:-0}))
    n=$(printf '%s' "$line" | sed -n 's/.* \([0-9][0-9]*\) failed.*/\1/p'); total_fail=$((total_fail + ${n:-0}))
    n=$(printf '%s' "$line" | sed -n 's/.* \([0-9][0-9]*\) skipped.*/\1/p'); total_skip=$((total_skip + ${n:-0}))
}
if [ -n "$native_line" ]; then
    echo "$native_line"
    add_counts "$native_line"
else
    echo "openmpi-${ompi_version:-?}: no summary (the build or make check failed)"
    total_fail=$((total_fail + 1))
fi
if [ -n "$root_summary" ]; then
    echo "$root_summary"
    add_counts "$root_summary"
else
    echo "openmpi-5.0 (Debian 13 root): no summary (exit status $root_status: the root, the build or make check failed)"
    total_fail=$((total_fail + 1))
fi
total="$total_pass passed, $total_fail failed"
[ "$total_skip" -gt 0 ] && total="$total, $total_skip skipped"
echo "$total"
if [ "$native_ok" -eq 1 ] && [ "$root_status" -eq 0 ] && [ "$total_fail" -eq 0 ]; then
    exit 0
fi
exit 1
