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
# the conf_* programs (the files with a main; the others are their parts)
conf=$(cd "$here" && grep -l '^int main(' conf_*.c 2>/dev/null | sed 's/\.c$//')
common=("$here/common.c" "$here/common_ops.c" "$here/common_data.c")
# the other source files of the programs split over several (as in Makefile.am)
parts() {
    case $1 in
    lifecycle) echo lifecycle_start.c lifecycle_misuse.c ;;
    conf_alltoall) echo conf_alltoall_req.c ;;
    conf_neighbor) echo conf_neighbor_topo.c conf_neighbor_cases.c ;;
    conf_inter) echo conf_inter_cases.c conf_inter_run.c ;;
    esac
}
$MPICC $CFLAGS -o "$out/copy_distance" "$here/copy_distance.c"
$MPICC $CFLAGS -o "$out/bcast_layouts" "$here/bcast_layouts.c"
for p in smoke conformance lifecycle alloc_test leak_test valgrind_small shm_test many_test $conf; do
    srcs=("$here/$p.c")
    for f in $(parts "$p"); do srcs+=("$here/$f"); done
    # shellcheck disable=SC2086
    $MPICC $CFLAGS -o "$out/$p" "${srcs[@]}" "${common[@]}" -ldl
done
# the preload library must not pull libmpi in
# shellcheck disable=SC2086
$MPICC $CFLAGS -shared -fPIC -Wl,--as-needed -o "$out/alloc_counter.so" "$here/alloc_counter.c" -ldl
$MPICC $CFLAGS -shared -fPIC -Wl,--as-needed -o "$out/deny_cma.so" "$here/deny_cma.c" -ldl
echo "built test programs in $out"
