# shellcheck shell=bash
#
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# cases.d/fault.sh: a lost process, sourced by run-tests.sh (uses its
# run_case, mpiargs, bin, MPIRUN).  The program is fault_kill.c: the ranks
# loop over persistent allreduce/bcast (8 B and 64 KiB, shm transport) and
# a partitioned ring; one rank kills itself with SIGKILL in the middle of a
# round (after MPI_Startall and half of its MPI_Pready calls).
#   fault-kill-np3-victim2, fault-kill-np4-victim1, fault-kill-np3-victim0
#       FAULT_RUNS (default 3) runs each, the kill in rounds 150, 151, ...:
#       mpirun returns with a non-zero status (not the timeout's) and its
#       report names the signal, at most FAULT_LIMIT (10) s after the
#       victim's kill time (CLOCK_REALTIME, written by the victim just
#       before raise(SIGKILL); the script takes the time when mpirun has
#       returned); the job had pnbc directories in /dev/shm before the kill
#       (listed by rank 0) and none of that job's directories
#       (pnbc.<node>.<uid>.<jobid hex>.*) is left once mpirun has returned.
#       Other jobs' directories are never looked at (the job id tells
#       them apart); directories this job left are reported, then removed.
#   fault-launcher-kill-np3
#       the launcher lost instead: mpirun (this node's daemon, which runs
#       the cleanup registered with PMIx) is killed with SIGKILL during the
#       loop; the ranks must be gone within FAULT_LIMIT s.  Nobody is left
#       to remove the job's directories then; the next pnbc job on the node
#       does (its local rank 0 removes every directory whose owner's lock it
#       can take, common_pnbc_shm_dir.c): a short run of the same program
#       must end with PASS and leave neither its own directories nor the
#       killed job's.  Planted beside them: a named directory nobody holds
#       and a temporary one of a dead creator over a minute old (both must
#       go), a new one of a dead creator, an old one of a live creator and
#       a named one without the file "flocked" (an older pnbc's: all three
#       must stay).  Open MPI's own vader segments of the killed job are
#       removed afterwards (not pnbc's to remove).
# shellcheck disable=SC2016
fault_script='
prog=$1 victim=$2; shift 2
runs=${FAULT_RUNS:-3} limit=${FAULT_LIMIT:-10}
d=$(mktemp -d "${TMPDIR:-/tmp}/pnbc-fault.XXXXXX")
bad=0
fail() { echo "FAIL fault-kill run $i (victim $victim, round $kr): $*"; bad=1; }
for i in $(seq 1 "$runs"); do
    kr=$((149 + i))
    f=$d/run$i
    timeout -k 5 120 "$@" "$prog" --out "$f" --victim "$victim" --kill-round "$kr" >"$f.log" 2>&1
    rc=$?
    tend=$(date +%s.%N)
    left=""
    tok=""
    if [ -s "$f.dirs" ]; then
        tok=$(head -n 1 "$f.dirs")
        left=$(cd /dev/shm && for e in pnbc.*"$tok"*; do [ -e "$e" ] && echo "$e"; done)
    fi
    ndirs=$(($(wc -l <"$f.dirs" 2>/dev/null || echo 1) - 1))
    tkill=$(cat "$f.kill" 2>/dev/null)
    dt=$(awk -v a="${tkill:-0}" -v b="$tend" "BEGIN { printf(\"%.2f\", b - a) }")
    echo "run $i: kill in round $kr, mpirun status $rc, returned ${dt}s after the kill, $ndirs shm directories before, left: ${left:-none}"
    sed "s/^/    | /" "$f.log" | grep -Ev "^    \| *$" | head -n 20
    [ -n "$tkill" ] || fail "the victim did not write its kill time (did it reach round $kr?)"
    [ -n "$tok" ] && [ "$ndirs" -ge 1 ] || fail "rank 0 saw no pnbc shm directory of its job before the kill"
    [ $rc -ne 0 ] || fail "mpirun returned status 0 after a rank was killed"
    [ $rc -eq 124 ] && fail "mpirun did not return within 120 s (killed by timeout)"
    grep -Eq "signal 9|Killed" "$f.log" || fail "mpirun did not report the killed process (signal 9)"
    grep -q "^FAIL" "$f.log" && fail "the program reported wrong results before the kill"
    if [ -n "$tkill" ] && awk -v t="$dt" -v l="$limit" "BEGIN { exit !(t > l) }"; then
        fail "mpirun returned ${dt}s after the kill (more than ${limit}s)"
    fi
    if [ -n "$left" ]; then
        fail "directories of the job left in /dev/shm after mpirun returned: $(echo $left)"
        sleep 3
        still=$(cd /dev/shm && for e in $left; do [ -e "$e" ] && echo "$e"; done)
        echo "    3 s later still there: ${still:-none}; contents: $(cd /dev/shm && ls -la $still 2>/dev/null | tr "\n" " ")"
        (cd /dev/shm && for e in $still; do rm -rf -- "/dev/shm/$e"; done)
    fi
done
[ $bad -eq 0 ] || { echo "logs: $d"; exit 1; }
rm -rf "$d"
echo "PASS fault-kill: $runs runs"
'
# shellcheck disable=SC2046
run_case fault-kill-np3-victim2 bash -c "$fault_script" fault "$(bin fault_kill)" 2 "$MPIRUN" $(mpiargs 3)
# shellcheck disable=SC2046
run_case fault-kill-np4-victim1 bash -c "$fault_script" fault "$(bin fault_kill)" 1 "$MPIRUN" $(mpiargs 4)
# shellcheck disable=SC2046
run_case fault-kill-np3-victim0 bash -c "$fault_script" fault "$(bin fault_kill)" 0 "$MPIRUN" $(mpiargs 3)

# shellcheck disable=SC2016
fault_launcher_script='
prog=$1; shift
limit=${FAULT_LIMIT:-10}
d=$(mktemp -d "${TMPDIR:-/tmp}/pnbc-fault.XXXXXX")
"$@" "$prog" --out "$d/run" --rounds 1000000000 --kill-round 2000000000 >"$d/log" 2>&1 &
mp=$!
for _ in $(seq 1 300); do [ -s "$d/run.dirs" ] && break; sleep 0.1; done
tok=$(head -n 1 "$d/run.dirs" 2>/dev/null)
procs() { pgrep -f -- "--out $d/run" | grep -vx "$mp"; }
job_dirs() { [ -n "$1" ] && (cd /dev/shm && for e in pnbc.*"$1"*; do [ -e "$e" ] && echo "$e"; done); }
bad=0
if [ -z "$tok" ]; then echo "FAIL fault-launcher-kill: rank 0 did not list its shm directories"; bad=1; fi
kill -KILL "$mp" 2>/dev/null
t0=$(date +%s)
while [ -n "$(procs)" ] && [ $(($(date +%s) - t0)) -le "$limit" ]; do sleep 0.2; done
left_procs=$(procs | tr "\n" " ")
echo "mpirun killed; ranks still running after ${limit}s: ${left_procs:-none}; directories left: $(echo $(job_dirs "$tok"))"
[ -z "$left_procs" ] || { echo "FAIL fault-launcher-kill: ranks still running ${limit}s after mpirun was killed"; bad=1; }
for p in $left_procs; do kill -KILL "$p" 2>/dev/null; done
sleep 0.5
# planted beside them: a named directory nobody holds, temporary ones
# ("being made") of a dead creator (old: removed; new: kept) and of a
# live one (kept)
uid=$(id -u); first=$(sed -n 2p "$d/run.dirs" 2>/dev/null); node=${first#pnbc.}; node=${node%%"$tok"*}
sleep 0 & deadpid=$!; wait $deadpid
planted_gone="pnbc.$node.$uid.deadbeef.0.0123456789abcdef pnbc-new.$node.$uid.$deadpid.dead.0"
planted_kept="pnbc-new.$node.$uid.$deadpid.young.0 pnbc-new.$node.$uid.$$.live.0 pnbc.$node.$uid.deadbeef.1.0123456789abcdef"
if [ -n "$first" ]; then
    for e in $planted_gone $planted_kept; do mkdir -p "/dev/shm/$e"; done
    touch "/dev/shm/pnbc.$node.$uid.deadbeef.0.0123456789abcdef/pool.dir" \
          "/dev/shm/pnbc.$node.$uid.deadbeef.0.0123456789abcdef/flocked"
    touch -d "2 minutes ago" "/dev/shm/pnbc-new.$node.$uid.$deadpid.dead.0" "/dev/shm/pnbc-new.$node.$uid.$$.live.0"
fi
# the next job on the node removes what the killed one left
timeout -k 5 120 "$@" "$prog" --out "$d/next" --rounds 20 --kill-round 2000000000 >"$d/next.log" 2>&1
rc=$?
if [ -n "$first" ]; then
    for e in $planted_gone; do [ -e "/dev/shm/$e" ] && { echo "FAIL fault-launcher-kill: $e (owner gone) outlived the next job"; bad=1; }; done
    for e in $planted_kept; do [ -e "/dev/shm/$e" ] || { echo "FAIL fault-launcher-kill: $e was removed (its creator lives, or it is new)"; bad=1; }; done
    for e in $planted_gone $planted_kept; do rm -rf "/dev/shm/$e"; done
else
    echo "FAIL fault-launcher-kill: rank 0 listed no directory names"; bad=1
fi
next=$(head -n 1 "$d/next.dirs" 2>/dev/null)
grep -q "^PASS fault_kill" "$d/next.log" || { echo "FAIL fault-launcher-kill: the next job did not pass (status $rc)"; sed "s/^/    next: /" "$d/next.log" | head -20; bad=1; }
left=$(job_dirs "$tok")
[ -z "$left" ] || { echo "FAIL fault-launcher-kill: the killed job'"'"'s directories outlived the next job: $(echo $left)"; bad=1; }
[ -z "$next" ] || [ -z "$(job_dirs "$next")" ] || { echo "FAIL fault-launcher-kill: the next job left its directories"; bad=1; }
echo "after the next job: killed job'"'"'s directories left: $(echo ${left:-none})"
for t in "$tok" "$next"; do
    [ -n "$t" ] || continue
    jh=${t#.*.}; jh=${jh%.}
    (cd /dev/shm && for e in pnbc.*"$t"* vader_segment.*."$jh".*; do [ -e "$e" ] && rm -rf -- "/dev/shm/$e"; done)
done
rm -rf "$d"
[ $bad -eq 0 ] && echo "PASS fault-launcher-kill"
exit $bad
'
# shellcheck disable=SC2046
run_case fault-launcher-kill-np3 bash -c "$fault_launcher_script" fault "$(bin fault_kill)" "$MPIRUN" $(mpiargs 3)
unset fault_script fault_launcher_script
