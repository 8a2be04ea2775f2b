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
# paths everywhere; the shm-dear-* cases (cases.d/shm.sh) set it
# themselves.  Set it in the environment to run the suite otherwise (1: as
# where it is dear).
export OMPI_MCA_coll_pnbc_shm_single_copy_dear_ns=${OMPI_MCA_coll_pnbc_shm_single_copy_dear_ns:-0}
export MPIRUN PNBC_COLL TEST_BINDIR PNBC_MPI_ARGS

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

# expect_output NAME PATTERN COMMAND... (bash -c "$expect_output" expect ...):
# the command passes and its verbose output has at least one line matching
# PATTERN (grep -E), e.g. a counter that says a path was taken.
# shellcheck disable=SC2016,SC2034
expect_output='
name=$1 pattern=$2; shift 2
out=$("$@" 2>&1); rc=$?
echo "$out" | grep -v "coll:pnbc" | tail -n 20
[ $rc -eq 0 ] || { echo "FAIL $name: exit $rc"; exit 1; }
n=$(echo "$out" | grep -cE "$pattern")
[ "$n" -gt 0 ] || { echo "FAIL $name: no line says: $pattern"; exit 1; }
echo "PASS $name ($n lines say: $pattern)"
'

# alloc_args: mpirun arguments preloading the allocation counter
# (alloc_counter.c) and naming the library whose allocations it counts.
ALLOC_SO="$TEST_BINDIR/alloc_counter.so-NOT-BUILT"
for f in "$TEST_BINDIR/alloc_counter.so" "$TEST_BINDIR/.libs/libAllocCounter.so" "$TEST_BINDIR/.libs/alloc_counter.so"; do
    if [ -f "$f" ]; then ALLOC_SO=$f; break; fi
done
alloc_args() {
    echo -x "LD_PRELOAD=$ALLOC_SO" -x "ALLOC_COUNTER_MATCH=$ALLOC_COUNTER_MATCH"
}

# The cases: one file per area in cases.d/, sourced here (they use run_case,
# skip_case, mpiargs, bin, expect_output, alloc_args).  The collectives'
# own files run first (a broken component fails there, early), the
# whole-library checks last (allocation counter, leaks, valgrind, then
# selection); every other file in between, in name order, so a new file
# needs no line here.
CASES_FIRST="coll shm algorithms"
CASES_LAST="resources selection"
case_files=()
for cases in $CASES_FIRST; do case_files+=("$here/cases.d/$cases.sh"); done
for cases in "$here"/cases.d/*.sh; do
    case " $CASES_FIRST $CASES_LAST " in
    *" $(basename "$cases" .sh) "*) ;;
    *) case_files+=("$cases") ;;
    esac
done
for cases in $CASES_LAST; do case_files+=("$here/cases.d/$cases.sh"); done
for cases in "${case_files[@]}"; do
    [ -f "$cases" ] || { echo "run-tests.sh: no $cases" >&2; exit 1; }
    # shellcheck disable=SC1090
    . "$cases"
done

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
