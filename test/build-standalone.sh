#!/bin/bash
# Build the test programs with mpicc directly, without the autotools build
# (for developing the tests, or before configure exists):
#     bash test/build-standalone.sh [OUTDIR]        (default: test/)
#     PNBC_COLL=basic,libnbc,tuned,self TEST_BINDIR=OUTDIR bash test/run-tests.sh
set -e
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
MPICC=${MPICC:-mpicc}
CFLAGS=${CFLAGS:--O2 -g -Wall -Wextra}
mkdir -p "$out"
conf=$(cd "$here" && ls conf_*.c 2>/dev/null | sed 's/\.c$//')
for p in smoke conformance lifecycle alloc_test leak_test valgrind_small shm_test many_test $conf; do
    # shellcheck disable=SC2086
    $MPICC $CFLAGS -o "$out/$p" "$here/$p.c" "$here/common.c" -ldl
done
# the preload library must not pull libmpi in
# shellcheck disable=SC2086
$MPICC $CFLAGS -shared -fPIC -Wl,--as-needed -o "$out/alloc_counter.so" "$here/alloc_counter.c" -ldl
echo "built test programs in $out"
