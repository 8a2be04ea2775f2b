# shellcheck shell=bash
#
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# cases.d/ompi5.sh: pnbc reached through Open MPI 5.0's own MPI-4 names,
# with no pnbc header, library or wrapper, from C (test/ompi5_names.c, built
# by plain mpicc in test/Makefile.am), Fortran "use mpi_f08"
# (test/ompi5_f08.f90, built here by mpifort into TEST_BINDIR) and Python
# (test/ompi5_mpi4py.py, mpi4py 4 and numpy).  Each case checks the
# program's data checks passed (its PASS line, exit 0) and, as asked:
#   coll       every persistent collective request came from coll/pnbc:
#              one "coll:pnbc: <name>_init" verbose line per request on
#              every rank, as many as the program says it made;
#   no-coll    with "--mca coll ^pnbc": not a single coll:pnbc line (the
#              data checks pass on Open MPI's own components);
#   part-pnbc  every partitioned request came from part/pnbc: ompi_info
#              lists it, and one "part:pnbc: psend_init" / "precv_init"
#              verbose line per request on every rank, as many as the
#              program says it made.
# On Open MPI 4.1 every case SKIPs (its mpi.h has no MPI-4 names); a case
# SKIPs when mpifort / python3 with mpi4py and numpy is missing.
#
# Sourced by run-tests.sh, where it adds the ompi5-* cases; each case runs
# this file as a script:
#     bash ompi5.sh PROGRAM CHECKS MPIRUN ARGS...
#   PROGRAM: c-coll | c-part | c-all (ompi5_names coll|part|all) | f08 | py
#   CHECKS:  comma-separated from coll, no-coll, part-pnbc ("data": none)

if [[ "${BASH_SOURCE[0]}" != "$0" ]]; then
    # ---- sourced by run-tests.sh: the cases ----
    ompi5_self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
    for ompi5_np in 2 3; do
        # shellcheck disable=SC2046
        run_case "ompi5-c-coll-np$ompi5_np" bash "$ompi5_self" c-coll coll "$MPIRUN" $(mpiargs $ompi5_np)
        # shellcheck disable=SC2046
        run_case "ompi5-c-part-np$ompi5_np" bash "$ompi5_self" c-part part-pnbc "$MPIRUN" \
            $(mpiargs $ompi5_np)
    done
    # Open MPI's own collectives: the same data checks pass
    # shellcheck disable=SC2046
    run_case ompi5-c-no-coll-pnbc-np2 bash "$ompi5_self" c-all no-coll,part-pnbc "$MPIRUN" \
        $(PNBC_COLL='^pnbc' mpiargs 2)
    # shellcheck disable=SC2046
    run_case ompi5-f08-np2 bash "$ompi5_self" f08 coll,part-pnbc "$MPIRUN" $(mpiargs 2)
    # shellcheck disable=SC2046
    run_case ompi5-py-np2 bash "$ompi5_self" py coll,part-pnbc "$MPIRUN" $(mpiargs 2)
    unset ompi5_np ompi5_self
    return 0
fi

# ---- run as a case ----
set -u
prog=${1:-}
checks=${2:-}
shift 2 || { echo "usage: bash $0 PROGRAM CHECKS MPIRUN ARGS..." >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
bindir=${TEST_BINDIR:-$here}
ompi_info=${OMPI_INFO:-ompi_info}

skip() {
    echo "SKIP $*"
    exit 77
}
nfail=0
fail() {
    echo "FAIL ompi5 $prog: $*"
    nfail=$((nfail + 1))
}
has_check() {
    case ",$checks," in *",$1,"*) return 0 ;; esac
    return 1
}

series=$("$ompi_info" --parsable 2>/dev/null |
    sed -n 's/^ompi:version:full:\([0-9]*\.[0-9]*\).*/\1/p' | head -n 1)
case $series in
    4.1) skip "Open MPI 4.1's mpi.h has no MPI-4 names (MPI_Allreduce_init, MPI_Psend_init, ...)" ;;
    "") echo "FAIL ompi5 $prog: $ompi_info --parsable names no Open MPI version"; exit 1 ;;
esac

# the program and the name of its PASS line
case $prog in
    c-coll | c-part | c-all)
        cmd=("$bindir/ompi5_names" "${prog#c-}")
        pass=ompi5_names
        if [ ! -x "${cmd[0]}" ]; then
            echo "FAIL ompi5 $prog: ${cmd[0]} is not built (make check builds it on Open MPI 5.0)"
            exit 1
        fi
        ;;
    f08)
        command -v mpifort >/dev/null 2>&1 || skip "no mpifort (Debian: gfortran and libopenmpi-dev)"
        pass=ompi5_f08
        cmd=("$bindir/ompi5_f08")
        # a directory of its own: the .mod file must not land in the cwd
        tmp=$(mktemp -d "${TMPDIR:-/tmp}/pnbc-ompi5.XXXXXX") || exit 1
        trap 'rm -rf "$tmp"' EXIT
        echo "+ mpifort -O2 -o ${cmd[0]} $here/ompi5_f08.f90"
        if ! (cd "$tmp" && mpifort -O2 -o "${cmd[0]}" "$here/ompi5_f08.f90"); then
            echo "FAIL ompi5 $prog: mpifort could not build ompi5_f08.f90"
            exit 1
        fi
        ;;
    py)
        command -v python3 >/dev/null 2>&1 || skip "no python3"
        python3 -c 'import mpi4py' 2>/dev/null || skip "python3 has no mpi4py (Debian: python3-mpi4py)"
        python3 -c 'import numpy' 2>/dev/null || skip "python3 has no numpy (Debian: python3-numpy)"
        pass=ompi5_mpi4py
        cmd=(python3 "$here/ompi5_mpi4py.py")
        ;;
    *)
        echo "usage: bash $0 c-coll|c-part|c-all|f08|py CHECKS MPIRUN ARGS..." >&2
        exit 2
        ;;
esac

if [ $# -lt 1 ]; then
    echo "FAIL ompi5 $prog: no mpirun command given"
    exit 1
fi
np=
for ((i = 1; i < $#; i++)); do
    [ "${!i}" = -np ] && { j=$((i + 1)); np=${!j}; }
done
# coll_pnbc_verbose is the engine's common_pnbc_verbose: part/pnbc says too
extra=(--mca coll_pnbc_verbose 1)

out=$(mktemp "${TMPDIR:-/tmp}/pnbc-ompi5-out.XXXXXX") || exit 1
trap 'rm -rf "$out" ${tmp:+"$tmp"}' EXIT
echo "+ $* ${extra[*]} ${cmd[*]}"
"$@" "${extra[@]}" "${cmd[@]}" >"$out" 2>&1
rc=$?
# the program's own lines (the verbose lines are counted below)
grep -v -E '(coll|part):pnbc: [a-z_]+_init ' "$out" | tail -n 40

# the data: exit status 0 and the PASS line
[ $rc -eq 0 ] || fail "exit status $rc"
grep -q "^PASS $pass" "$out" || fail "no PASS line from $pass"

# served WHO LABEL: for each NAME=N on the program's "LABEL:" line (N
# requests per rank), N times np lines "WHO:pnbc: NAME " (its verbose line)
served() {
    local who=$1 label=$2 inits kv name want got
    inits=$(sed -n "s/^$label://p" "$out" | head -n 1)
    if [ -z "$inits" ]; then
        fail "the program printed no '$label:' line"
        return
    fi
    for kv in $inits; do
        name=${kv%%=*} want=$((${kv#*=} * ${np:-0}))
        got=$(grep -c -E "$who:pnbc: $name " "$out")
        if [ "$got" -ne "$want" ] || [ "$want" -eq 0 ]; then
            fail "$who/pnbc served $got of the $want MPI_${name^} requests ($kv per rank, np ${np:-?})"
        else
            echo "$who/pnbc served all $got MPI_${name^} requests"
        fi
    done
}

# coll: one coll:pnbc line per persistent collective request on every rank
has_check coll && served coll 'inits per rank'

# no-coll: coll/pnbc excluded, none of its lines
if has_check no-coll; then
    got=$(grep -c -E 'coll:pnbc: [a-z_]+_init ' "$out")
    [ "$got" -eq 0 ] || fail "coll ^pnbc, yet $got coll:pnbc *_init lines"
fi

# part-pnbc: part/pnbc is there, one part:pnbc line per partitioned
# request on every rank
if has_check part-pnbc; then
    if ! "$ompi_info" --parsable 2>/dev/null | grep -q '^mca:part:pnbc:'; then
        fail "ompi_info lists no part/pnbc component"
    fi
    served part 'part inits per rank'
fi

if [ $nfail -gt 0 ]; then
    echo "FAIL ompi5 $prog ($checks): $nfail check(s) failed"
    exit 1
fi
echo "PASS ompi5 $prog ($checks)"
exit 0
