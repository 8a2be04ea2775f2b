#!/usr/bin/env bash
#
# Copyright (c) 2026 The pnbc developers
# SPDX-License-Identifier: BSD-3-Clause
#
# One command to test pnbc: install the dependencies, build (reusing an
# already configured tree), install, and run "make check" -- on this
# machine's Open MPI, and on a Debian 12 machine (Open MPI 4.1) also inside
# a Debian 13 root (Open MPI 5.0, contrib/debian13-root.sh, which runs this
# same script there), so both supported series are tested.  After each
# series' suite, its libraries and a subset of the tests are built and run
# again with AddressSanitizer and UndefinedBehaviorSanitizer
# (contrib/test-sanitize.sh).  Each series' summary is printed with its
# Open MPI version ("openmpi-4.1.4: ...", "openmpi-4.1.4 asan+ubsan: ...");
# the last line is the total, "N passed, N failed" (", N skipped" when
# there are skips).  The exit status is non-zero if a build or any test
# failed.  The build is configured with --enable-werror: a compiler
# warning in the libraries or the test programs fails it.
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
#   PNBC_SANITIZE=0      leave out the sanitizer build (both series)

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

# run_stage LABEL COMMAND...: run COMMAND (a test runner), showing its
# output as above; sets stage_line to "LABEL: <its summary>" (empty when
# it printed none) and stage_ok to 1 when it passed.
run_stage() {
    local label=$1 status summary failed
    shift
    : >"$summary_file"
    set +e
    "$@" 2>&1 | awk "${awk_live[@]}" -v sumfile="$summary_file" '
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
    status=${PIPESTATUS[0]}
    set -e
    summary=$(cat "$summary_file")
    stage_line='' stage_ok=0
    if [ -z "$summary" ]; then
        echo "test-all.sh: $* (exit status $status) ended without the test runner's \"N passed, N failed\" summary"
        return 0
    fi
    stage_line="$label: $(printf '%s' "$summary" | sed 's/^[[:space:]]*//')"
    failed=$(printf '%s\n' "$summary" | sed -n 's/^[[:space:]]*[0-9][0-9]* passed, \([0-9][0-9]*\) failed.*/\1/p')
    if [ "$status" -eq 0 ] && [ "${failed:-1}" -eq 0 ]; then
        stage_ok=1
    fi
}

total_pass=0 total_fail=0 total_skip=0
add_counts() {
    local line=$1 n
    n=$(printf '%s' "$line" | sed -n 's/.*: \([0-9][0-9]*\) passed.*/\1/p'); total_pass=$((total_pass + ${n:-0}))
    n=$(printf '%s' "$line" | sed -n 's/.* \([0-9][0-9]*\) failed.*/\1/p'); total_fail=$((total_fail + ${n:-0}))
    n=$(printf '%s' "$line" | sed -n 's/.* \([0-9][0-9]*\) skipped.*/\1/p'); total_skip=$((total_skip + ${n:-0}))
}

ompi_version=$(sed -n 's/^OMPI_VERSION = //p' Makefile)
run_stage "openmpi-${ompi_version:-?}" make -s --no-print-directory check
native_line=$stage_line native_ok=$stage_ok

# The libraries and a subset of the tests again, built with AddressSanitizer
# and UndefinedBehaviorSanitizer (contrib/test-sanitize.sh): a line of
# their own, counted in the total.  PNBC_SANITIZE=0 leaves them out.
san_line='' san_ok=1
if [ "${PNBC_SANITIZE:-1}" != 0 ]; then
    echo
    echo "== test-all.sh: sanitizer build (contrib/test-sanitize.sh; PNBC_SANITIZE=0 skips it)"
    run_stage "openmpi-${ompi_version:-?} asan+ubsan" bash contrib/test-sanitize.sh
    san_line=${stage_line:-"openmpi-${ompi_version:-?} asan+ubsan: 0 passed, 1 failed"} san_ok=$stage_ok
fi

if [ "$series" = native ]; then
    [ -n "$native_line" ] || exit 1
    # The series' labelled lines (test-all.sh run by debian13-root.sh is
    # read by the caller for them), then their total, last.
    for line in "$native_line" "$san_line"; do
        [ -n "$line" ] || continue
        echo "$line"
        add_counts "$line"
    done
    total="$total_pass passed, $total_fail failed"
    [ "$total_skip" -gt 0 ] && total="$total, $total_skip skipped"
    echo "$total"
    [ "$native_ok" -eq 1 ] && [ "$san_ok" -eq 1 ] || exit 1
    exit 0
fi

# Open MPI 5.0: this script again, inside the Debian 13 root.
echo
echo "== test-all.sh: Open MPI 5.0 in a Debian 13 root (contrib/debian13-root.sh)"
root_log=$(mktemp)
trap 'rm -f "$summary_file" "$root_log"' EXIT
set +e
bash contrib/debian13-root.sh env PNBC_SERIES=native PNBC_SANITIZE="${PNBC_SANITIZE:-1}" \
    bash contrib/test-all.sh 2>&1 | tee "$root_log"
root_status=${PIPESTATUS[0]}
set -e
# its labelled lines (the suite's, the sanitizer build's), the last of each
root_lines=$(grep -E '^openmpi-[0-9.]+( asan\+ubsan)?: [0-9]+ passed, [0-9]+ failed' "$root_log" |
    awk '{ l = substr($0, 1, index($0, ":")) } !(l in last) { order[++n] = l } { last[l] = $0 }
         END { for (i = 1; i <= n; i++) print last[order[i]] }')
root_summary=$(printf '%s\n' "$root_lines" | grep -E '^openmpi-[0-9.]+:' || true)

echo
if [ -n "$native_line" ]; then
    echo "$native_line"
    add_counts "$native_line"
else
    echo "openmpi-${ompi_version:-?}: no summary (the build or make check failed)"
    total_fail=$((total_fail + 1))
fi
if [ -n "$san_line" ]; then
    echo "$san_line"
    add_counts "$san_line"
fi
if [ -n "$root_summary" ]; then
    while IFS= read -r line; do
        echo "$line"
        add_counts "$line"
    done <<<"$root_lines"
else
    echo "openmpi-5.0 (Debian 13 root): no summary (exit status $root_status: the root, the build or make check failed)"
    total_fail=$((total_fail + 1))
fi
total="$total_pass passed, $total_fail failed"
[ "$total_skip" -gt 0 ] && total="$total, $total_skip skipped"
echo "$total"
if [ "$native_ok" -eq 1 ] && [ "$san_ok" -eq 1 ] && [ "$root_status" -eq 0 ] && [ "$total_fail" -eq 0 ]; then
    exit 0
fi
exit 1
