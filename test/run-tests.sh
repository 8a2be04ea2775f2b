#!/bin/bash
# run-tests.sh: the pnbc test suite.  Every test runs as a separate case with a
# timeout; prints "PASS name" / "FAIL name" (with the tail of the failing
# output) / "SKIP name" per case and, as its last line,
#     N passed, N failed            (", N skipped" appended when N > 0)
# Exit status 1 if any case failed.
#
# Usage: run-tests.sh [GLOB ...]     run only the cases matching a glob,
#                                    e.g. 'conformance-*' 'lifecycle-h*'
#        run-tests.sh --list         list the case names
# Environment:
#   PNBC_COMPONENT_PATH  if set, exported as OMPI_MCA_mca_base_component_path
#                        (it must contain the system component dir too)
#   PNBC_COLL            --mca coll list (default pnbc,basic,libnbc,tuned,self)
#   MPIRUN               mpirun (default mpirun)
#   TEST_BINDIR          directory of the built test programs (default: here)
#   TEST_TIMEOUT         seconds per case (default 300)
#   TEST_BUDGET          seconds for the whole suite (default 1800): cases not
#                        started by then FAIL as "not run" (a hanging
#                        component must not eat the CI time)
#   PNBC_MPI_ARGS        other mpirun arguments
#                        (default "--mca btl self,vader --mca pml ob1 --bind-to none")
#   PNBC_LIBRARY_PATH    prepended to LD_LIBRARY_PATH (the build tree's .libs of
#                        libmca_common_pnbc and libpnbc)
#   ALLOC_COUNTER_MATCH  objects attributed by the alloc test (default pnbc: the
#                        component, the engine library and libpnbc)
#   VALGRIND_MATCH       stack substring for the valgrind test (default pnbc)
#   TEST_KEEP_LOGS=1     keep the per-case logs (directory printed at the end)
#   PNBC_FAIL_PATTERN    a case whose output has a line matching this (grep
#                        -E) FAILs whatever its exit status (the sanitizer
#                        build: "ERROR: AddressSanitizer|runtime error:")
set -u
here=$(cd "$(dirname "$0")" && pwd)
MPIRUN=${MPIRUN:-mpirun}
PNBC_COLL=${PNBC_COLL:-pnbc,basic,libnbc,tuned,self}
TEST_BINDIR=${TEST_BINDIR:-$here}
TEST_TIMEOUT=${TEST_TIMEOUT:-300}
TEST_BUDGET=${TEST_BUDGET:-1800}
PNBC_MPI_ARGS=${PNBC_MPI_ARGS:---mca btl self,vader --mca pml ob1 --bind-to none}
ALLOC_COUNTER_MATCH=${ALLOC_COUNTER_MATCH:-pnbc}
if [ -n "${PNBC_COMPONENT_PATH:-}" ]; then
    export OMPI_MCA_mca_base_component_path="$PNBC_COMPONENT_PATH"
    # Open MPI 5's PMIx takes that variable for its own component path too and
    # prints "bad prefix" for every file there: give PMIx back its own.
    pmix_libdir=$(pkg-config --variable=libdir pmix 2>/dev/null)
    if [ -z "${PMIX_MCA_mca_base_component_path:-}" ] && [ -d "$pmix_libdir/pmix" ]; then
        export PMIX_MCA_mca_base_component_path="$pmix_libdir/pmix"
    fi
fi
# The engine library (libmca_common_pnbc) and libpnbc of a build tree are
# found through LD_LIBRARY_PATH (installed ones through the loader's cache).
if [ -n "${PNBC_LIBRARY_PATH:-}" ]; then
    export LD_LIBRARY_PATH="$PNBC_LIBRARY_PATH${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
# needed when run as root (CI); harmless otherwise
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Single copy as on a machine where it is cheap, whatever this one measures
# (coll_pnbc_shm_single_copy_dear_ns), so that every case takes the same
# paths everywhere; the shm-dear-* cases below set it themselves.  Set it in
# the environment to run the suite otherwise (1: as where it is dear).
export OMPI_MCA_coll_pnbc_shm_single_copy_dear_ns=${OMPI_MCA_coll_pnbc_shm_single_copy_dear_ns:-0}
export MPIRUN PNBC_COLL TEST_BINDIR PNBC_MPI_ARGS

LIFECYCLE_SUBTESTS="a-start-order b-startall-permuted c-mixed-p2p d-wait-never-started
e-startall-active e-start-active f-free-active g-free-never-started h-freed-type-op i-comm-self"

list_only=0
patterns=()
for a in "$@"; do
    if [ "$a" = "--list" ]; then list_only=1; else patterns+=("$a"); fi
done

selected() {
    [ ${#patterns[@]} -eq 0 ] && return 0
    local p
    for p in "${patterns[@]}"; do
        # shellcheck disable=SC2053
        [[ $1 == $p ]] && return 0
    done
    return 1
}

# mpirun arguments for np ranks
mpiargs() {
    local np=$1
    local a="-np $np $PNBC_MPI_ARGS --mca coll $PNBC_COLL"
    if [ "$np" -gt 2 ]; then a="$a --oversubscribe --mca mpi_yield_when_idle 1"; fi
    echo "$a"
}

logdir=$(mktemp -d "${TMPDIR:-/tmp}/pnbc-tests.XXXXXX")
npass=0
nfail=0
nskip=0
ncase=0
failed_names=()
t_suite=$(date +%s.%N)

# skip_case NAME REASON: a case that cannot apply here (e.g. to this Open
# MPI series) is listed and counted as "SKIP NAME: REASON", never dropped.
skip_case() {
    local name=$1
    shift
    selected "$name" || return 0
    if [ $list_only -eq 1 ]; then echo "$name"; return 0; fi
    echo "SKIP $name: $*"
    nskip=$((nskip + 1))
}

run_case() {
    local name=$1
    shift
    selected "$name" || return 0
    if [ $list_only -eq 1 ]; then echo "$name"; return 0; fi
    local log="$logdir/$name.log"
    local t0 t1 dur rc
    t0=$(date +%s.%N)
    if awk -v a="$t_suite" -v b="$t0" -v l="$TEST_BUDGET" 'BEGIN { exit !(b - a > l) }'; then
        echo "FAIL $name (not run: the suite's time budget of ${TEST_BUDGET}s is used up)"
        nfail=$((nfail + 1))
        failed_names+=("$name")
        return 0
    fi
    echo "+ $*" >"$log"
    # Each case has its own TMPDIR, removed afterwards: mpirun's session
    # directory is named after its pid (Open MPI 5's PRRTE refuses to start
    # when that directory exists), and a launcher killed on purpose or by
    # the timeout leaves its directory behind for a later mpirun to meet
    # once pids wrap around.  A failed case's TMPDIR stays with its log
    # (some cases keep their own logs there).
    ncase=$((ncase + 1))
    local casetmp="$logdir/t$ncase"
    mkdir -p "$casetmp"
    TMPDIR=$casetmp timeout -k 15 "$TEST_TIMEOUT" "$@" >>"$log" 2>&1 </dev/null
    rc=$?
    local flagged=0
    if [ -n "${PNBC_FAIL_PATTERN:-}" ] && grep -qE "$PNBC_FAIL_PATTERN" "$log"; then
        flagged=1
        { [ $rc -eq 0 ] || [ $rc -eq 77 ]; } && rc=1
    fi
    [ $rc -eq 0 ] && rm -rf "$casetmp"
    t1=$(date +%s.%N)
    dur=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf("%.1f", b - a) }')
    if [ $rc -eq 0 ]; then
        echo "PASS $name (${dur}s)"
        npass=$((npass + 1))
    elif [ $rc -eq 77 ]; then
        echo "SKIP $name (${dur}s): $(grep -m1 '^SKIP' "$log" | sed 's/^SKIP *//')"
        nskip=$((nskip + 1))
    else
        local why="exit status $rc"
        [ $rc -eq 124 ] && why="TIMEOUT after ${TEST_TIMEOUT}s"
        [ $flagged -eq 1 ] && why="$why; output matches \$PNBC_FAIL_PATTERN"
        echo "FAIL $name (${dur}s, $why)"
        # the report's first lines and frames (a sanitizer's)
        [ $flagged -eq 1 ] && grep -E -A 12 "$PNBC_FAIL_PATTERN" "$log" | head -n 30 | sed 's/^/    | /'
        # failing output: the FAIL/CRASH/WATCHDOG lines first, then the tail
        # of everything else
        local pat='^(FAIL|CRASH|WATCHDOG)|^  lifecycle/'
        grep -E "$pat" "$log" | head -n 25 | sed 's/^/    | /'
        echo "    | ---- last lines of the other output:"
        # (without mpirun's boilerplate about non-zero exit codes)
        grep -Ev "$pat" "$log" | grep -v '^\s*$' |
            grep -Ev '^-{20,}$|Primary job +terminated normally|a non-zero exit code\. Per user-direction|mpirun (detected|noticed) that|the job to be terminated\. The first|^ +(Process name|Exit code):' |
            tail -n 15 | sed 's/^/    | /'
        nfail=$((nfail + 1))
        failed_names+=("$name")
    fi
}

bin() {
    if [ -x "$TEST_BINDIR/$1" ]; then echo "$TEST_BINDIR/$1"; else echo "$TEST_BINDIR/$1-NOT-BUILT"; fi
}

if [ $list_only -eq 0 ]; then
    echo "pnbc tests: coll=$PNBC_COLL mpirun=$MPIRUN bindir=$TEST_BINDIR timeout=${TEST_TIMEOUT}s"
    echo "            component path: ${OMPI_MCA_mca_base_component_path:-<Open MPI default>}"
    echo "            mpirun args: $PNBC_MPI_ARGS"
fi

CONF_FAMILIES=${CONF_FAMILIES:-"gather alltoall reduce_scatter neighbor inter"}

# shellcheck disable=SC2046
run_case smoke-np2 "$MPIRUN" $(mpiargs 2) "$(bin smoke)"

for np in 1 2 3; do
    # shellcheck disable=SC2046
    run_case "copy_distance-np$np" "$MPIRUN" $(mpiargs $np) "$(bin copy_distance)"
done

for np in 1 2 3 4; do
    # shellcheck disable=SC2046
    run_case "conformance-np$np" "$MPIRUN" $(mpiargs $np) "$(bin conformance)"
done

for np in 1 2 3 4; do
    for t in $LIFECYCLE_SUBTESTS; do
        # shellcheck disable=SC2046
        run_case "lifecycle-$t-np$np" "$MPIRUN" $(mpiargs $np) "$(bin lifecycle)" "$t"
    done
done

# The other collectives (every persistent collective of MPI-4.1):
# one conformance program per family, at np = 1..5.
for family in $CONF_FAMILIES; do
    for np in 1 2 3 4 5; do
        # shellcheck disable=SC2046
        run_case "conf_$family-np$np" "$MPIRUN" $(mpiargs $np) "$(bin "conf_$family")"
    done
done

# expect_output NAME PATTERN COMMAND... (bash -c "$expect_output" expect ...):
# the command passes and its verbose output has at least one line matching
# PATTERN (grep -E), e.g. a counter that says a path was taken.
# shellcheck disable=SC2016
expect_output='
name=$1 pattern=$2; shift 2
out=$("$@" 2>&1); rc=$?
echo "$out" | grep -v "coll:pnbc" | tail -n 20
[ $rc -eq 0 ] || { echo "FAIL $name: exit $rc"; exit 1; }
n=$(echo "$out" | grep -cE "$pattern")
[ "$n" -gt 0 ] || { echo "FAIL $name: no line says: $pattern"; exit 1; }
echo "PASS $name ($n lines say: $pattern)"
'

# The shared-memory transport (coll_pnbc_transport_shm.c): many requests in
# flight, 100000 start+wait cycles, no files left after MPI_Finalize (also
# with requests never freed), receivers that cannot create their files.
for np in 2 3; do
    # shellcheck disable=SC2046
    run_case "shm-np$np" "$MPIRUN" $(mpiargs $np) "$(bin shm_test)" 100000
done
# shellcheck disable=SC2046
run_case shm-unfreed-np2 "$MPIRUN" $(mpiargs 2) "$(bin shm_test)" 2000 unfreed
# shellcheck disable=SC2046
run_case shm-fallback-np3 "$MPIRUN" $(mpiargs 3) "$(bin shm_test)" 2000 fallback
# Messages above a shm box (alltoall, allgather blocks of 16-80 KiB): with boxes of
# 1 KiB, read in one copy (process_vm_readv) or streamed through boxes
# (single copy off: convertors packing fragments of non-contiguous data);
# and a receiver that refuses single copy (rank 0) while its peers offer it.
SHM_SMALL_BOX="--mca coll_pnbc_shm_frag_bytes 1024"
# shellcheck disable=SC2046,SC2086
run_case conf_alltoall-shm-single-copy-np3 "$MPIRUN" $(mpiargs 3) $SHM_SMALL_BOX "$(bin conf_alltoall)"
# shellcheck disable=SC2046,SC2086
run_case conf_alltoall-shm-stream-np3 "$MPIRUN" $(mpiargs 3) $SHM_SMALL_BOX \
    --mca coll_pnbc_shm_single_copy 0 "$(bin conf_alltoall)"
# shellcheck disable=SC2046,SC2086
run_case conf_gather-shm-single-copy-np3 "$MPIRUN" $(mpiargs 3) $SHM_SMALL_BOX "$(bin conf_gather)" --quick
# shellcheck disable=SC2046,SC2086
run_case conf_gather-shm-stream-np3 "$MPIRUN" $(mpiargs 3) $SHM_SMALL_BOX \
    --mca coll_pnbc_shm_single_copy 0 "$(bin conf_gather)" --quick
# Reductions folded straight from the shm boxes: reduce streamed in
# fragments of 1001 bytes (elements split between fragments), allreduce
# with 64 KiB boxes; every reduce and allreduce algorithm.
for alg in linear binomial pipeline reduce_scatter_gather; do
    # shellcheck disable=SC2046
    run_case "conformance-shm-fold-reduce-$alg-np4" "$MPIRUN" $(mpiargs 4) --mca coll_pnbc_shm_frag_bytes 1024 \
        --mca coll_pnbc_shm_stream_frag_bytes 1001 --mca coll_pnbc_reduce_algorithm $alg "$(bin conformance)" --quick
done
for alg in recursive_doubling rabenseifner ring reduce_bcast direct; do
    # shellcheck disable=SC2046
    run_case "conformance-shm-fold-allreduce-$alg-np3" "$MPIRUN" $(mpiargs 3) --mca coll_pnbc_shm_frag_bytes 65536 \
        --mca coll_pnbc_allreduce_algorithm $alg "$(bin conformance)" --quick
done
# shellcheck disable=SC2046
run_case conf_reduce_scatter-shm-fold-np3 "$MPIRUN" $(mpiargs 3) --mca coll_pnbc_shm_frag_bytes 1024 \
    --mca coll_pnbc_shm_stream_frag_bytes 1001 "$(bin conf_reduce_scatter)"
# shellcheck disable=SC2046,SC2086
run_case conf_alltoall-shm-refused-np3 "$MPIRUN" $(mpiargs 3) $SHM_SMALL_BOX \
    "$here/rank0-env.sh" OMPI_MCA_coll_pnbc_shm_single_copy=0 -- "$(bin conf_alltoall)"
# gather above a box: a root invites its senders to write into its buffer
# (process_vm_writev, conf_gather-shm-single-copy-np3 above); here rank 0
# neither invites nor accepts invitations, so as a sender to an inviting
# root it streams through the boxes instead
# shellcheck disable=SC2046,SC2086
run_case conf_gather-shm-uninvited-np3 "$MPIRUN" $(mpiargs 3) $SHM_SMALL_BOX \
    "$here/rank0-env.sh" OMPI_MCA_coll_pnbc_shm_single_copy=0 -- "$(bin conf_gather)" --quick
# bcast above a box, as on a node with a CPU per process (coll_pnbc_oversubscribed
# 0 at 3 ranks): offered messages copied by both sides (shared copy: the sender
# writes the upper half into the receiver's buffer while it reads the lower),
# with boxes of 1 KiB and sharing from 1 KiB so that the sweep's counts 1000 and
# 65539 take it, persistent and nonblocking, through every bcast tree; the
# senders did share.  Then rank 0 without single copy: it neither offers, reads
# nor helps; its peers stream to it and read its streams.
SHM_SHARED="--mca coll_pnbc_oversubscribed 0 $SHM_SMALL_BOX --mca coll_pnbc_shm_shared_copy_min_bytes 1024"
for alg in knomial pipeline binary_pipeline scatter_allgather; do
    # shellcheck disable=SC2046,SC2086
    run_case "conformance-shm-shared-$alg-np3" bash -c "$expect_output" expect "shared-$alg" \
        "[1-9][0-9]* offered messages copied by both sides" "$MPIRUN" $(mpiargs 3) $SHM_SHARED \
        --mca coll_pnbc_verbose 2 --mca coll_pnbc_bcast_algorithm $alg "$(bin conformance)"
done
# shellcheck disable=SC2046,SC2086
run_case nbc-shm-shared-np3 bash -c "$expect_output" expect nbc-shared \
    "[1-9][0-9]* offered messages copied by both sides" "$MPIRUN" $(mpiargs 3) $SHM_SHARED \
    --mca coll_pnbc_verbose 2 "$(bin nbc_test)" 20
# shellcheck disable=SC2046,SC2086
run_case conformance-shm-shared-refused-np3 "$MPIRUN" $(mpiargs 3) $SHM_SHARED \
    "$here/rank0-env.sh" OMPI_MCA_coll_pnbc_shm_single_copy=0 -- "$(bin conformance)" --quick
# Receivers that decline single copy, as on a machine where a
# process_vm_readv is dear (coll_pnbc_shm_single_copy_dear_ns): every
# receiver declines every message (blocks of 16-80 KiB, 1 KiB boxes: they
# stream); then rank 0 alone declines while its peers offer, invite and
# share, so each side of a message decides differently and the receiver's
# word (its slot's entry) must prevail -- alltoall, gather, bcast shared
# copies, nonblocking calls.  Last, the measurement itself (the default):
# each process says what it measured and chose.
SHM_DEAR="--mca coll_pnbc_shm_single_copy_dear_ns 1 --mca coll_pnbc_shm_single_copy_dear_min_bytes 100000000"
# shellcheck disable=SC2046,SC2086
run_case shm-dear-alltoall-np3 bash -c "$expect_output" expect dear-alltoall \
    "[1-9][0-9]* slots declined single copy" "$MPIRUN" $(mpiargs 3) $SHM_SMALL_BOX $SHM_DEAR \
    --mca coll_pnbc_verbose 2 "$(bin conf_alltoall)"
DEAR_RANK0="$here/rank0-env.sh OMPI_MCA_coll_pnbc_shm_single_copy_dear_ns=1 OMPI_MCA_coll_pnbc_shm_single_copy_dear_min_bytes=100000000 --"
# shellcheck disable=SC2046,SC2086
run_case shm-dear-mixed-alltoall-np3 "$MPIRUN" $(mpiargs 3) \
    $SHM_SMALL_BOX $DEAR_RANK0 "$(bin conf_alltoall)"
# shellcheck disable=SC2046,SC2086
run_case shm-dear-mixed-gather-np3 "$MPIRUN" $(mpiargs 3) \
    $SHM_SMALL_BOX $DEAR_RANK0 "$(bin conf_gather)" --quick
# shellcheck disable=SC2046,SC2086
run_case shm-dear-mixed-shared-np3 bash -c "$expect_output" expect dear-mixed-shared \
    "[1-9][0-9]* offered messages copied by both sides" "$MPIRUN" $(mpiargs 3) \
    $SHM_SHARED --mca coll_pnbc_verbose 2 $DEAR_RANK0 "$(bin conformance)" --quick
# shellcheck disable=SC2046,SC2086
run_case shm-dear-mixed-nbc-np3 "$MPIRUN" $(mpiargs 3) \
    $SHM_SHARED $DEAR_RANK0 "$(bin nbc_test)" 10
# Boxes filled with non-temporal stores (coll_pnbc_shm_nt_min_bytes), here
# of every size, so that the copy's partial lines at either end and whole
# lines meet every alignment the sweep's counts give (1 KiB boxes and
# streamed fragments, single copy off), with coll_pnbc_oversubscribed 0 as
# on a node with a CPU per process (where processes outnumber CPUs they are
# never used); the senders must say they used them.  Persistent and
# nonblocking calls.
SHM_NT_ANY="--mca coll_pnbc_oversubscribed 0 --mca coll_pnbc_shm_single_copy 0 --mca coll_pnbc_shm_nt_min_bytes 1 --mca coll_pnbc_shm_nt_measured_min_bytes 1 --mca coll_pnbc_verbose 2"
SHM_NT="$SHM_NT_ANY --mca coll_pnbc_shm_nt_max_bytes 2147483647 --mca coll_pnbc_shm_nt_ratio 0"
# shellcheck disable=SC2046,SC2086
run_case conformance-shm-nt-np3 bash -c "$expect_output" expect shm-nt \
    "[1-9][0-9]* fills with non-temporal stores" "$MPIRUN" $(mpiargs 3) $SHM_SMALL_BOX $SHM_NT \
    "$(bin conformance)"
# shellcheck disable=SC2046,SC2086
run_case nbc-shm-nt-np3 bash -c "$expect_output" expect nbc-shm-nt \
    "[1-9][0-9]* fills with non-temporal stores" "$MPIRUN" $(mpiargs 3) $SHM_NT \
    --mca coll_pnbc_nbc_shm_min_bytes 0 "$(bin nbc_test)" 20
# The same with every fill measured (pnbc_fill(); nt_max 0: no box is
# always filled so): each ring and slot tries both ways in its first
# fills, and a ratio of 1 flips between them as the timings go, so the
# messages of one ring or slot take both ways.
SHM_NT_MEASURED="$SHM_NT_ANY --mca coll_pnbc_shm_nt_max_bytes 0 --mca coll_pnbc_shm_nt_ratio 1"
# shellcheck disable=SC2046,SC2086
run_case nbc-shm-nt-measured-np3 bash -c "$expect_output" expect nbc-shm-nt-measured \
    "[1-9][0-9]* fills with non-temporal stores" "$MPIRUN" $(mpiargs 3) $SHM_NT_MEASURED \
    --mca coll_pnbc_nbc_shm_min_bytes 0 "$(bin nbc_test)" 20
# Nonblocking messages of 8-256 KiB to a receiver that declines take the
# large mailbox ring, by the floor it published in the modex (both sides
# read the same): with rank 0 alone declining, an alltoall (its row asks for
# no large ring) builds large rings at rank 0 and at no other rank.
expect_dear_cells='
out=$("$@" 2>&1); rc=$?
echo "$out" | grep -v "coll:pnbc" | tail -n 20
[ $rc -eq 0 ] || { echo "FAIL dear-cells: exit $rc"; exit 1; }
big="[0-9]+ rings of [0-9]+ units \\(messages of up to [0-9]{5,} bytes\\)"
echo "$out" | grep -qE "rank 0: $big" || { echo "FAIL dear-cells: rank 0 built no large ring"; exit 1; }
! echo "$out" | grep -E "rank [1-9][0-9]*: $big" || { echo "FAIL dear-cells: a rank that takes single copy built a large ring"; exit 1; }
echo "PASS dear-cells"
'
# shellcheck disable=SC2046,SC2086
run_case shm-dear-mixed-nbc-cells-np3 bash -c "$expect_dear_cells" expect "$MPIRUN" $(mpiargs 3) \
    --mca coll_pnbc_verbose 2 $DEAR_RANK0 "$(bin nbc_test)" 10 alltoall
# shellcheck disable=SC2046
run_case shm-dear-measured-np2 bash -c "$expect_output" expect dear-measured \
    "process_vm_readv of 64 KiB takes [0-9]+ ns here: single copy from [0-9]+ bytes on" \
    env -u OMPI_MCA_coll_pnbc_shm_single_copy_dear_ns "$MPIRUN" $(mpiargs 2) --mca coll_pnbc_verbose 1 \
    "$(bin conf_alltoall)"
# A sender preempted while its receiver answers its offer, completes, frees
# the request and gives the block to the next one: the sender must not take
# the new request's slot for its answer (it used to read `refused` there and
# stream into the new block, which then hung or corrupted the next case).
# bcast pipelines of offered messages (1 KiB boxes) with a CPU burner beside
# the three ranks, so that they are preempted often.
# shellcheck disable=SC2016
with_burner='timeout 600 sh -c "while :; do :; done" & b=$!; "$@"; rc=$?; kill $b; exit $rc'
# shellcheck disable=SC2046,SC2086
run_case conformance-shm-offer-reuse-np3 bash -c "$with_burner" burner "$MPIRUN" $(mpiargs 3) \
    --mca coll_pnbc_oversubscribed 0 $SHM_SMALL_BOX --mca coll_pnbc_shm_shared_copy_min_bytes 100000000 \
    --mca coll_pnbc_bcast_algorithm pipeline "$(bin conformance)"
# The kernel refusing, as under Yama ptrace scope or seccomp (deny_cma.c
# preloaded on rank 0): DENY_CMA=write, its halves of shared copies fail and
# its receivers read them too (gather: its invited writes fail, it streams);
# DENY_CMA=read, it refuses offers, shared ones included, whose other half
# the sender had written already, and those messages stream.  Each case
# also asserts that the refusal happened.
DENY_SO="$TEST_BINDIR/deny_cma.so"
for deny in "write:helps refused by the kernel" "read:offers refused"; do
    # shellcheck disable=SC2046,SC2086
    run_case "conformance-shm-shared-deny${deny%%:*}-np3" bash -c "$expect_output" expect "deny${deny%%:*}" \
        "[1-9][0-9]* ${deny#*:}" "$MPIRUN" $(mpiargs 3) $SHM_SHARED --mca coll_pnbc_verbose 2 \
        "$here/rank0-env.sh" LD_PRELOAD="$DENY_SO" DENY_CMA="${deny%%:*}" -- "$(bin conformance)"
done

# Bcast whose ranks describe the buffer by different (count, datatype)
# pairs of one signature: every algorithm (hints), segments smaller than
# the root's element, persistent and MPI_Ibcast.
for np in 2 3 4 5; do
    # shellcheck disable=SC2046
    run_case "bcast-layouts-np$np" "$MPIRUN" $(mpiargs $np) "$(bin bcast_layouts)"
done

# Forced bcast/reduce algorithms (full sweep at np 3 and 4); the segmented
# ones also with many tiny segments (--quick) at np 2..5.
for np in 3 4; do
    for alg in knomial pipeline binary_pipeline scatter_allgather; do
        # shellcheck disable=SC2046
        run_case "conformance-bcast-$alg-np$np" "$MPIRUN" $(mpiargs $np) --mca coll_pnbc_bcast_algorithm $alg "$(bin conformance)"
    done
    for alg in pipeline reduce_scatter_gather; do
        # shellcheck disable=SC2046
        run_case "conformance-reduce-$alg-np$np" "$MPIRUN" $(mpiargs $np) --mca coll_pnbc_reduce_algorithm $alg "$(bin conformance)"
    done
done
for np in 2 3 4 5; do
    for c in bcast:pipeline bcast:binary_pipeline reduce:pipeline; do
        # shellcheck disable=SC2046
        run_case "conformance-${c%%:*}-${c#*:}-seg64-np$np" "$MPIRUN" $(mpiargs $np) \
            --mca "coll_pnbc_${c%%:*}_algorithm" "${c#*:}" --mca coll_pnbc_segsize 64 "$(bin conformance)" --quick
    done
done

# The performance portfolio: algorithms the automatic rules rarely pick
# at these sizes, forced (ring with 64-byte segments: many segments).
A2A_WIN="--mca coll_pnbc_alltoall_algorithm windowed_linear --mca coll_pnbc_alltoallv_algorithm windowed_linear --mca coll_pnbc_alltoallw_algorithm windowed_linear"
for np in 1 2 3 4 5; do
    for alg in rabenseifner ring direct; do
        # shellcheck disable=SC2046
        run_case "conformance-$alg-np$np" "$MPIRUN" $(mpiargs $np) --mca coll_pnbc_allreduce_algorithm $alg "$(bin conformance)"
    done
    # shellcheck disable=SC2046
    run_case "conformance-ring-seg64-np$np" "$MPIRUN" $(mpiargs $np) --mca coll_pnbc_allreduce_algorithm ring --mca coll_pnbc_segsize 64 "$(bin conformance)" --quick
    # shellcheck disable=SC2046
    run_case "conf_gather-neighbor_exchange-np$np" "$MPIRUN" $(mpiargs $np) --mca coll_pnbc_allgather_algorithm neighbor_exchange "$(bin conf_gather)"
    # shellcheck disable=SC2046,SC2086
    run_case "conf_alltoall-windowed_linear-np$np" "$MPIRUN" $(mpiargs $np) $A2A_WIN "$(bin conf_alltoall)"
done
# shellcheck disable=SC2046
run_case conf_gather-neighbor_exchange-np6 "$MPIRUN" $(mpiargs 6) --mca coll_pnbc_allgather_algorithm neighbor_exchange "$(bin conf_gather)"
# shellcheck disable=SC2046,SC2086
run_case conf_alltoall-windowed_linear-np10 "$MPIRUN" $(mpiargs 10) $A2A_WIN "$(bin conf_alltoall)"

# alloc_args: mpirun arguments preloading the allocation counter
# (alloc_counter.c) and naming the library whose allocations it counts.
ALLOC_SO="$TEST_BINDIR/alloc_counter.so-NOT-BUILT"
for f in "$TEST_BINDIR/alloc_counter.so" "$TEST_BINDIR/.libs/libAllocCounter.so" "$TEST_BINDIR/.libs/alloc_counter.so"; do
    if [ -f "$f" ]; then ALLOC_SO=$f; break; fi
done
alloc_args() {
    echo -x "LD_PRELOAD=$ALLOC_SO" -x "ALLOC_COUNTER_MATCH=$ALLOC_COUNTER_MATCH"
}

# Cases of the other clients of the engine (partitioned, MPI-4 names, ...):
# one file each in cases.d/, sourced here; they use run_case, mpiargs, bin,
# alloc_args.
for cases in "$here"/cases.d/*.sh; do
    [ -f "$cases" ] || continue
    # shellcheck disable=SC1090
    . "$cases"
done

# shellcheck disable=SC2046
run_case alloc-np2 "$MPIRUN" $(mpiargs 2) $(alloc_args) "$(bin alloc_test)"

# shellcheck disable=SC2046
run_case leak-cycles-np4 "$MPIRUN" $(mpiargs 4) "$(bin leak_test)" cycles
# shellcheck disable=SC2046
run_case leak-longloop-np2 "$MPIRUN" $(mpiargs 2) "$(bin leak_test)" longloop

run_case valgrind-np2 bash "$here/valgrind_test.sh"
run_case selection bash "$here/selection_test.sh"

[ $list_only -eq 1 ] && exit 0

total=$(awk -v a="$t_suite" -v b="$(date +%s.%N)" 'BEGIN { printf("%.0f", b - a) }')
if [ $nfail -gt 0 ]; then
    echo "failed cases: ${failed_names[*]}"
fi
if [ "${TEST_KEEP_LOGS:-0}" = 1 ] || [ $nfail -gt 0 ]; then
    echo "logs: $logdir (total ${total}s)"
else
    rm -rf "$logdir"
    echo "total ${total}s"
fi
if [ $nskip -gt 0 ]; then
    echo "$npass passed, $nfail failed, $nskip skipped"
else
    echo "$npass passed, $nfail failed"
fi
[ $nfail -eq 0 ]
