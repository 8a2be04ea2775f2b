#!/usr/bin/env bash
#
# Copyright (c) 2026 The pnbc developers
# SPDX-License-Identifier: BSD-3-Clause
#
# One command for docs/performance.md: runs the benchmark suites against
# this tree's build and rewrites the page's generated tables.
#
# Each suite is one of the benchmark scripts of this folder, run on a quiet
# machine with its own interleaving (implementations alternate round by
# round):
#   persistent-np2   run-bench.sh                 (pnbc, libnbc, tuned, MPICH)
#   persistent-np4   run-bench.sh --np 4          (oversubscribed; no MPICH)
#   nonblocking-np2  run-bench.sh --nonblocking
#   partitioned      run-part-bench.sh            (MPICH, one isend; part/persist on 5.0)
#   channels         run-chan-bench.sh            (ob1 persistent, the shared-memory floor)
#   many             run-many-bench.sh
# The page marks each generated block with
#   <!-- perf: SERIES SUITE -->  ...  <!-- /perf -->
# (SERIES: ompi-4.1 or ompi-5.0); a run replaces the blocks of its series
# and suites with the suite's table, under a line that says where, when and
# at which commit it was measured and the command.  The text around the
# blocks (what a missed cell is made of) is not touched: read it again
# after a run.
#
# Usage: contrib/bench/run-performance.sh [--series native|5.0] [--quick]
#          [--suites LIST] [--out DIR] [--page FILE | --no-page]
#   --series 5.0   on a Debian 12 host: build and run inside the Debian 13
#                  root (contrib/debian13-root.sh), Open MPI 5.0.7; the
#                  results are copied back to OUT and the host's page is
#                  rewritten (default: native, this machine's Open MPI)
#   --quick        every suite's --quick (to try the command; not for the page)
#   --suites LIST  default: all seven (instructions: Open MPI 4.1 with
#                  valgrind only, skipped elsewhere)
#   --out DIR      default perf-results/<date>-<commit>
#   --page FILE    default docs/performance.md; --no-page leaves it alone
# Builds the tree first when it is not built (autogen, configure, make).

set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
series=native quick=() suites="persistent-np2,persistent-np4,nonblocking-np2,partitioned,channels,many,instructions"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
out=perf-results/$(date +%Y-%m-%d)-$commit
page=docs/performance.md
while [ $# -gt 0 ]; do
    case "$1" in
        --series) series=$2; shift ;;
        --quick) quick=(--quick) ;;
        --suites) suites=$2; shift ;;
        --out) out=$2; shift ;;
        --page) page=$2; shift ;;
        --no-page) page= ;;
        -h|--help) sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "run-performance.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
ompi_major() { sed -n 's/^OMPI_VERSION = \([0-9]*\).*/\1/p' Makefile 2>/dev/null; }

if [ "$series" = 5.0 ]; then
    ver=$( (ompi_info --parsable --version ompi full 2>/dev/null || true) | sed -n 's/^ompi:version:full:\([0-9]*\).*/\1/p')
    if [ "${ver:-}" != 5 ]; then
        # Inside the Debian 13 root: the same command, native there, its
        # results copied back here and this tree's page rewritten.
        root=${PNBC_DEBIAN13_ROOT:-/var/tmp/pnbc-debian13}
        inner=/tmp/pnbc-perf-$commit
        rm -rf "$root$inner"
        args=(--series native --suites "$suites" --out "$inner" --no-page "${quick[@]}")
        rc=0
        bash contrib/debian13-root.sh env PNBC_PERF_COMMIT="$commit" \
            bash contrib/bench/run-performance.sh "${args[@]}" || rc=$?
        [ -f "$root$inner/meta" ] || exit "$((rc ? rc : 1))"
        mkdir -p "$out"
        cp -r "$root$inner"/. "$out"/
        [ -z "$page" ] || python3 contrib/bench/perf_page.py "$page" "$out" || rc=1
        echo "run-performance.sh: results in $out${page:+, tables rewritten in $page}"
        exit "$rc"
    fi
elif [ "$series" != native ]; then
    echo "run-performance.sh: --series native or 5.0" >&2
    exit 2
fi

# This machine's series: build the tree if needed.
if [ ! -f Makefile ]; then
    ./autogen.pl >/dev/null
    ./configure -q
fi
make -s -j"${PNBC_MAKE_JOBS:-2}" >/dev/null
major=$(ompi_major)
cpath=$top/ompi/mca/coll/pnbc/.libs
[ "$major" -ge 5 ] && cpath=$cpath:$top/ompi/mca/part/pnbc/.libs
export PNBC_COMPONENT_PATH=$cpath PNBC_REQUIRE=1

mkdir -p "$out"
{
    echo "series=ompi-$( [ "$major" -ge 5 ] && echo 5.0 || echo 4.1)"
    echo "ompi=$(sed -n 's/^OMPI_VERSION = //p' Makefile)"
    echo "mpich=$( (mpichversion 2>/dev/null || true) | sed -n 's/^MPICH Version:[[:space:]]*//p')"
    echo "os=$(. /etc/os-release && echo "$PRETTY_NAME")"
    echo "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(nproc) cores"
    echo "date=$(date +%Y-%m-%d)"
    echo "commit=${PNBC_PERF_COMMIT:-$commit}"
    echo "quick=${#quick[@]}"
} >"$out/meta"

b=contrib/bench
status=0
for s in ${suites//,/ }; do
    case "$s" in
        persistent-np2) cmd=(bash $b/run-bench.sh) ;;
        persistent-np4) cmd=(bash $b/run-bench.sh --np 4 --impls pnbc,libnbc,tuned) ;;
        nonblocking-np2) cmd=(bash $b/run-bench.sh --nonblocking) ;;
        partitioned) cmd=(bash $b/run-part-bench.sh) ;;
        channels) cmd=(bash $b/run-chan-bench.sh) ;;
        many) cmd=(bash $b/run-many-bench.sh) ;;
        instructions) cmd=(bash $b/run-callgrind.sh --summary) ;;
        *) echo "run-performance.sh: unknown suite $s" >&2; exit 2 ;;
    esac
    if [ "$s" = instructions ] && { [ "$major" -ge 5 ] || ! command -v valgrind >/dev/null; }; then
        echo "== run-performance.sh: instructions: skipped (Open MPI 4.1 with valgrind only)"
        continue
    fi
    q=("${quick[@]}")
    # (run-many-bench.sh has no --quick: fewer requests, one repeat)
    [ "$s" = many ] && [ ${#quick[@]} -gt 0 ] && q=(--n 1,10,100 --repeat 1 --rounds 5)
    echo "== run-performance.sh: $s: ${cmd[*]:1} ${q[*]}"
    printf '%s\n' "${cmd[*]:1} ${q[*]}" >"$out/$s.cmd"
    "${cmd[@]}" "${q[@]}" --out "$out/$s" || { echo "run-performance.sh: $s failed"; status=1; }
done

[ -z "$page" ] || python3 $b/perf_page.py "$page" "$out" || status=1
echo "run-performance.sh: results in $out${page:+, tables rewritten in $page}"
exit $status
