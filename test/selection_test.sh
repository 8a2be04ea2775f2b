#!/bin/bash
# selection_test.sh: the pnbc component is found, exposes its parameters and
# is the one serving the persistent collectives.
#   1. ompi_info (with the component path) lists "MCA coll: pnbc"
#   2. ompi_info --param coll pnbc --level 9 lists coll_pnbc_priority and
#      coll_pnbc_verbose
#   3. smoke at np=2 with --mca coll_pnbc_verbose 1 prints, for barrier,
#      bcast, reduce and allreduce, a line
#        coll:pnbc: <coll>_init algorithm=<name> comm_size=2
#   4. with --mca coll ^pnbc no such line appears (and smoke still passes)
#   5. a coll_pnbc_tuning_file whose rules name a reach (one node here):
#      "nodes" rules are passed over, "node" and unmarked ones apply, a line
#      with an unknown reach is skipped
# Exit: 0 pass, 1 fail, 77 skip (PNBC_COLL does not select pnbc).
# Environment: MPIRUN, OMPI_INFO (ompi_info), TEST_BINDIR, PNBC_COLL,
#   PNBC_MPI_ARGS (other mpirun arguments), OMPI_MCA_mca_base_component_path.
set -u
here=$(cd "$(dirname "$0")" && pwd)
MPIRUN=${MPIRUN:-mpirun}
OMPI_INFO=${OMPI_INFO:-ompi_info}
BIN=${TEST_BINDIR:-$here}
COLL=${PNBC_COLL:-pnbc,basic,libnbc,tuned,self}
ARGS=${PNBC_MPI_ARGS:-}

case ",$COLL," in
    *,pnbc,*) ;;
    *) echo "SKIP selection: PNBC_COLL=$COLL does not select pnbc"; exit 77 ;;
esac

fail=0
bad() { echo "FAIL selection: $*"; fail=1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pnbc-selection.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "component path: ${OMPI_MCA_mca_base_component_path:-<default>}"
"$OMPI_INFO" >"$tmp/info.txt" 2>&1
if grep -Eq 'MCA coll: pnbc( |$|\()' "$tmp/info.txt"; then
    echo "ok: $(grep -E 'MCA coll: pnbc' "$tmp/info.txt" | head -n 1 | sed 's/^ *//')"
else
    bad "ompi_info does not list 'MCA coll: pnbc'; coll components found:"
    grep 'MCA coll:' "$tmp/info.txt" | sed 's/^/    /'
fi

"$OMPI_INFO" --param coll pnbc --level 9 >"$tmp/param.txt" 2>&1
for p in coll_pnbc_priority coll_pnbc_verbose; do
    if grep -q "\"$p\"\|$p" "$tmp/param.txt"; then echo "ok: parameter $p"
    else bad "ompi_info --param coll pnbc --level 9 does not list $p"; fi
done

if [ ! -x "$BIN/smoke" ]; then
    bad "$BIN/smoke not built"
    exit 1
fi
# shellcheck disable=SC2086
"$MPIRUN" -np 2 $ARGS --mca coll "$COLL" --mca coll_pnbc_verbose 1 "$BIN/smoke" >"$tmp/on.txt" 2>&1
rc=$?
[ $rc -eq 0 ] || { bad "smoke with pnbc exited with $rc"; tail -n 20 "$tmp/on.txt"; }
for c in barrier bcast reduce allreduce; do
    line=$(grep -E "coll:pnbc: ${c}_init algorithm=[^ ]+" "$tmp/on.txt" | head -n 1)
    if [ -z "$line" ]; then
        bad "no 'coll:pnbc: ${c}_init algorithm=' line with --mca coll_pnbc_verbose 1"
    elif ! echo "$line" | grep -q "comm_size=2"; then
        bad "${c}: verbose line lacks comm_size=2: $line"
    else
        echo "ok: coll:pnbc: ${line#*coll:pnbc: }"
    fi
done
if grep -q "coll:pnbc:" "$tmp/on.txt"; then :; else
    echo "---- output of the verbose run:"; tail -n 30 "$tmp/on.txt"
fi

# shellcheck disable=SC2086
"$MPIRUN" -np 2 $ARGS --mca coll ^pnbc --mca coll_pnbc_verbose 1 "$BIN/smoke" >"$tmp/off.txt" 2>&1
rc=$?
[ $rc -eq 0 ] || { bad "smoke with --mca coll ^pnbc exited with $rc"; tail -n 20 "$tmp/off.txt"; }
if grep -q "coll:pnbc: .*_init algorithm=" "$tmp/off.txt"; then
    bad "pnbc lines printed although --mca coll ^pnbc:"
    grep "coll:pnbc:" "$tmp/off.txt" | head -n 5
else
    echo "ok: no pnbc lines with --mca coll ^pnbc"
fi

cat >"$tmp/rules.txt" <<'EOF'
# coll max_comm_size max_bytes algorithm [reach]
bcast 0 0 binomial nodes
bcast 0 0 linear node
reduce 0 0 linear nodes
reduce 0 0 binomial
allreduce 0 0 direct bogus
allreduce 0 0 reduce_bcast
EOF
# shellcheck disable=SC2086
"$MPIRUN" -np 2 $ARGS --mca coll "$COLL" --mca coll_pnbc_verbose 1 \
    --mca coll_pnbc_tuning_file "$tmp/rules.txt" "$BIN/smoke" >"$tmp/rules.out" 2>&1
rc=$?
[ $rc -eq 0 ] || { bad "smoke with a tuning file exited with $rc"; tail -n 20 "$tmp/rules.out"; }
for want in bcast:linear reduce:binomial allreduce:reduce_bcast; do
    c=${want%%:*}
    got=$(sed -n "s/.*coll:pnbc: ${c}_init algorithm=\([^ ]*\) .*/\1/p" "$tmp/rules.out" | sort -u)
    if [ "$got" = "${want#*:}" ]; then
        echo "ok: tuning file with reaches: ${c} takes $got"
    else
        bad "tuning file with reaches: ${c} took '${got:-nothing}', expected ${want#*:}"
    fi
done

if [ $fail -eq 0 ]; then echo "PASS selection"; fi
exit $fail
