#!/usr/bin/env bash
#
# Copyright (c) 2026 The pnbc developers
# SPDX-License-Identifier: BSD-3-Clause
#
# pnbc's libraries and a subset of its tests built with AddressSanitizer
# and UndefinedBehaviorSanitizer, and run (contrib/test-all.sh runs this
# after the suite).  The build is a copy of this configured tree's
# sources ("make distdir", the files a release ships) in build-asan/,
# configured with the sanitizer flags, so this tree's own build is left
# alone; its test runner loads the sanitized component and libraries
# (make check-local: the build tree's .libs first in the component and
# library paths).
#
# Open MPI's programs are not sanitized: the ASan and UBSan runtimes are
# preloaded into the MPI processes (mpirun -x LD_PRELOAD), so that the
# sanitized component finds them whatever program loads it.
#   ASAN_OPTIONS   detect_leaks=0: Open MPI itself leaves memory allocated at
#                  MPI_Finalize (its own leaks are not pnbc's; the suite's
#                  leak, alloc and valgrind cases check pnbc's);
#                  halt_on_error=1
#   UBSAN_OPTIONS  print_stacktrace=1:halt_on_error=1
# A case fails on a sanitizer's exit status and also when its output has
# a report ("ERROR: AddressSanitizer", "runtime error:", ...:
# run-tests.sh's PNBC_FAIL_PATTERN), whatever the exit status.
#
# The last line is the test runner's "N passed, N failed" (a build that
# fails counts as one failed case; a compiler without the sanitizers'
# runtimes as one skipped case).  Exit status non-zero on a failure.
#
# Environment:
#   PNBC_SANITIZE_DIR    build directory (default: build-asan in this tree)
#   PNBC_SANITIZE_CFLAGS (default -fsanitize=address,undefined
#                        -fno-omit-frame-pointer -g -O1)
#   PNBC_SANITIZE_CASES  run-tests.sh globs (default: below)
#   PNBC_MAKE_JOBS       parallel make jobs (default 2)

set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
jobs=${PNBC_MAKE_JOBS:-2}
dir=${PNBC_SANITIZE_DIR:-$top/build-asan}
flags=${PNBC_SANITIZE_CFLAGS:--fsanitize=address,undefined -fno-omit-frame-pointer -g -O1}
say() { echo "test-sanitize.sh: $*"; }
# the runner's summary line for a stage that could not run its cases
give_up() { say "$1"; echo "0 passed, 1 failed"; exit 1; }

# The cases: every family of the suite at 2-3 ranks -- persistent
# collectives (conformance and the other families), request lifecycle,
# shared-memory transport, partitioned, channels, nonblocking, bad input.
cases=${PNBC_SANITIZE_CASES:-"smoke-np2 conformance-np2 conformance-shm-shared-refused-np3
lifecycle-*-np2 conf_gather-np3 conf_alltoall-np3 conf_reduce_scatter-np3 conf_neighbor-np3
conf_inter-np3 shm-fallback-np3 part-np2 part-misuse-np2 part-conform-np2 chan-misuse-np2
chan-example-np3 chan-slack-np2 nbc-misc-np2 nbc-misc-shm-np3 badinput-np3"}
# ... and the programs they run
programs="smoke conformance lifecycle conf_gather conf_alltoall conf_reduce_scatter conf_neighbor
conf_inter shm_test part_test part_misuse part_conform chan_misuse chan_example chan_slack
nbc_misc badinput"

{ [ -f Makefile ] && [ -f config.status ]; } || give_up "configure this tree first"
cc=$(sed -n 's/^CC = //p' Makefile)
# the runtimes (as the sanitized objects name them: the compiler's)
asan_rt=$(${cc:-cc} -print-file-name=libasan.so 2>/dev/null)
ubsan_rt=$(${cc:-cc} -print-file-name=libubsan.so 2>/dev/null)
if [ ! -f "$asan_rt" ] || [ ! -f "$ubsan_rt" ]; then
    say "SKIP: ${cc:-cc} has no AddressSanitizer/UndefinedBehaviorSanitizer runtime (libasan.so, libubsan.so)"
    echo "0 passed, 0 failed, 1 skipped"
    exit 0
fi

t0=$(date +%s)
case "$dir" in
    /|"$top"|"$top"/) give_up "PNBC_SANITIZE_DIR=$dir: not a directory of its own" ;;
esac
rm -rf "$dir"
mkdir -p "$dir" || give_up "cannot make $dir"
dir=$(cd "$dir" && pwd)
# make distdir wants a directory relative to the top of the tree
rel=$(realpath --relative-to="$top" "$dir/src")
make -s distdir distdir="$rel" >"$dir/distdir.log" 2>&1 ||
    give_up "make distdir failed (see $dir/distdir.log)"
cd "$dir/src" || give_up "no $dir/src"
say "building in $dir/src with $flags"
ldflags=
for w in $flags; do
    case "$w" in -fsanitize*|-fno-sanitize*) ldflags="$ldflags $w" ;; esac
done
./configure CFLAGS="$flags" LDFLAGS="${ldflags# }" >"$dir/configure.log" 2>&1 ||
    give_up "configure failed (see $dir/configure.log)"
make -j"$jobs" >"$dir/build.log" 2>&1 ||
    give_up "the sanitized build failed (see $dir/build.log)"
# shellcheck disable=SC2086
make -C test -j"$jobs" $programs alloc_counter.so deny_cma.so >"$dir/build-tests.log" 2>&1 ||
    give_up "the sanitized test programs did not build (see $dir/build-tests.log)"
say "built in $(($(date +%s) - t0))s"

mpi_args="${PNBC_MPI_ARGS:---mca btl self,vader --mca pml ob1 --bind-to none}"
mpi_args="$mpi_args -x LD_PRELOAD=$asan_rt:$ubsan_rt"
mpi_args="$mpi_args -x ASAN_OPTIONS=detect_leaks=0:halt_on_error=1"
mpi_args="$mpi_args -x UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1"
export PNBC_MPI_ARGS=$mpi_args
export PNBC_FAIL_PATTERN='ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|WARNING: AddressSanitizer failed'
make -s --no-print-directory -C test check-local \
    PNBC_CHECK_PROGS="${programs//$'\n'/ }" CASES="${cases//$'\n'/ }"
