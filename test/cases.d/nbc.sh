# shellcheck shell=bash
#
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# cases.d/nbc.sh: nonblocking collectives (MPI_I<coll>, served by coll/pnbc
# from its cache of committed schedules), sourced by run-tests.sh (uses its
# run_case, mpiargs, bin, MPIRUN, TEST_BINDIR, ALLOC_COUNTER_MATCH).  The
# programs are nbc_*.c (see each file's header):
#   nbc-np1..5             nbc_test: the 17 intracommunicator collectives
#                          (+ the 5 neighbourhood ones from 3 ranks) against
#                          local references, MPI_LONG and a strided type with
#                          holes, in place, the same arguments 100 times
#                          (hits) and changing buffers/counts/roots (misses)
#   nbc-misc-np1..4        nbc_misc: 1000 outstanding calls, nonblocking +
#                          persistent + blocking + point-to-point interleaved,
#                          datatypes/ops freed while outstanding and cached,
#                          calls differing from the one before in one
#                          argument (the memo must not confuse them),
#                          calls on 8 duplicated communicators outstanding
#                          together (their messages share the mailbox's
#                          ring per pair of processes), intercommunicators
#   nbc-cache1-np3, nbc-cache0-np3, nbc-misc-cache1-np2, nbc-misc-bigcache-np2,
#   nbc-misc-probation-np2
#                          the same with coll_pnbc_cache_entries 1 (eviction
#                          on almost every call), 0 (no cache) and 100000
#                          (over 1000 instances: the hash chains grow), with
#                          the probation bound off and on (evictions)
#   nbc-mbox2-np3, nbc-misc-mbox2-np3, nbc-mbox-off-np3, nbc-mbox-fallback-np3
#                          small messages (below coll_pnbc_nbc_shm_min_bytes)
#                          through the mailbox with rings of 2 cells (full
#                          rings: senders wait, receivers move messages
#                          aside), with the mailbox off (pml), and with a
#                          pool share too small for it (published
#                          fallback: pml on the mirrored tag)
#   nbc-misc-ring-np2      nbc_misc ring: 3000 ibcasts of 8 B to 8 KiB in a
#                          ring of 256 units, whose middles read like the
#                          headers of the ring's next lap (a sender must
#                          clear where its receiver looks next)
#   nbc-mbox-large-fallback-np3, nbc-mbox-large1-np3, nbc-noncomm-large1-np3
#                          ibcast's and ireduce's messages of 8-64 KiB through the
#                          mailbox's large cells (folded into the result from
#                          the cell): a share with room for the small cells'
#                          block only (fallback on the large cells' own tag
#                          window), rings of one large cell
#   nbc-nolibnbc-np3, nbc-misc-nolibnbc-np3
#                          with --mca coll pnbc,basic,tuned,self: pnbc serves
#                          every nonblocking slot (also communicator creation)
#   nbc-shm-np2..4, nbc-misc-shm-np3, nbc-shm-cache1-np3, nbc-alloc-shm-np2,
#   nbc-shm-fulldir-np3
#                          with coll_pnbc_nbc_shm_min_bytes 0: every on-node
#                          message through shm, paired afresh at each call
#                          (with a cache of 1, mostly through the directory,
#                          as instances are rebuilt); nbc-shm-fulldir-np3:
#                          a 64-entry pool directory, so most instances
#                          announce their fallback by marker files
#   nbc-shm-nooffer-np3    the same with coll_pnbc_nbc_single_copy_min_bytes
#                          0: messages of 16 KiB and more stream through the
#                          slot's pieces instead of being read in one copy
#   nbc-noncomm-np2..3, nbc-noncomm-big-np2, nbc-noncomm-nooffer-np3,
#   nbc-noncomm-os0-np3, nbc-noncomm-os1-np2
#                          ireduce/iallreduce with a non-commutative user op
#                          (2x2 matrix products) of 64 KiB and 320 KiB:
#                          offered messages folded where the result lands
#                          keep MPI's order; with the offer off as well; and
#                          with coll_pnbc_oversubscribed 0 / 1 (iallreduce
#                          offers at 3 ranks on 2 CPUs / streams at 2)
#   nbc-alloc-np2          nbc_alloc with the alloc_counter preload library:
#                          no heap call from "pnbc" objects per call + wait
#                          after the first call
#   nbc-valgrind-np2       nbc_misc freed + interleave under valgrind: no
#                          memory error whose stack mentions pnbc (SKIP
#                          without valgrind)

for nbc_np in 1 2 3 4 5; do
    # shellcheck disable=SC2046
    run_case "nbc-np$nbc_np" "$MPIRUN" $(mpiargs $nbc_np) "$(bin nbc_test)"
done
for nbc_np in 1 2 3 4; do
    # shellcheck disable=SC2046
    run_case "nbc-misc-np$nbc_np" "$MPIRUN" $(mpiargs $nbc_np) "$(bin nbc_misc)"
done
# shellcheck disable=SC2046
run_case nbc-cache1-np3 "$MPIRUN" $(mpiargs 3) --mca coll_pnbc_cache_entries 1 "$(bin nbc_test)" 20
# shellcheck disable=SC2046
run_case nbc-cache0-np3 "$MPIRUN" $(mpiargs 3) --mca coll_pnbc_cache_entries 0 "$(bin nbc_test)" 20
# shellcheck disable=SC2046
run_case nbc-misc-cache1-np2 "$MPIRUN" $(mpiargs 2) --mca coll_pnbc_cache_entries 1 "$(bin nbc_misc)"
for nbc_np in 2 3 4; do
    # shellcheck disable=SC2046
    run_case "nbc-shm-np$nbc_np" "$MPIRUN" $(mpiargs $nbc_np) --mca coll_pnbc_nbc_shm_min_bytes 0 \
        "$(bin nbc_test)"
done
# shellcheck disable=SC2046
run_case nbc-misc-shm-np3 "$MPIRUN" $(mpiargs 3) --mca coll_pnbc_nbc_shm_min_bytes 0 "$(bin nbc_misc)"
# shellcheck disable=SC2046
run_case nbc-shm-cache1-np3 "$MPIRUN" $(mpiargs 3) --mca coll_pnbc_nbc_shm_min_bytes 0 \
    --mca coll_pnbc_cache_entries 1 "$(bin nbc_test)" 20
# shellcheck disable=SC2046
run_case nbc-shm-fulldir-np3 "$MPIRUN" $(mpiargs 3) --mca coll_pnbc_nbc_shm_min_bytes 0 \
    --mca coll_pnbc_shm_pool_entries 64 "$(bin nbc_test)" 20
# shellcheck disable=SC2046
run_case nbc-shm-nooffer-np3 "$MPIRUN" $(mpiargs 3) --mca coll_pnbc_nbc_shm_min_bytes 0 \
    --mca coll_pnbc_nbc_single_copy_min_bytes 0 "$(bin nbc_test)" 20
for nbc_np in 2 3; do
    # shellcheck disable=SC2046
    run_case "nbc-noncomm-np$nbc_np" "$MPIRUN" $(mpiargs $nbc_np) "$(bin nbc_noncomm)"
done
# shellcheck disable=SC2046
run_case nbc-noncomm-big-np2 "$MPIRUN" $(mpiargs 2) "$(bin nbc_noncomm)" 20000
# shellcheck disable=SC2046
run_case nbc-noncomm-nooffer-np3 "$MPIRUN" $(mpiargs 3) \
    --mca coll_pnbc_nbc_single_copy_min_bytes 0 "$(bin nbc_noncomm)"
# shellcheck disable=SC2046
run_case nbc-noncomm-os0-np3 "$MPIRUN" $(mpiargs 3) --mca coll_pnbc_oversubscribed 0 "$(bin nbc_noncomm)"
# shellcheck disable=SC2046
run_case nbc-noncomm-os1-np2 "$MPIRUN" $(mpiargs 2) --mca coll_pnbc_oversubscribed 1 "$(bin nbc_noncomm)"
# shellcheck disable=SC2046
run_case nbc-mbox2-np3 "$MPIRUN" $(mpiargs 3) --mca coll_pnbc_nbc_mailbox_cells 2 "$(bin nbc_test)" 20
# rings of 2 cells, and the receivers did move messages aside (the results
# of messages taken from the spill list are checked too)
# shellcheck disable=SC2046
run_case nbc-misc-mbox2-np3 bash -c "$expect_output" expect nbc-misc-mbox2 \
    "[1-9][0-9]* messages moved aside" "$MPIRUN" $(mpiargs 3) \
    --mca coll_pnbc_nbc_mailbox_cells 2 --mca coll_pnbc_verbose 2 "$(bin nbc_misc)"
# coll_pnbc_nbc_mailbox_cells 4: rings of 256 units (room for 4 messages of 8 KiB, 3
# pages each), as the program's layout assumes: the receiver says so
# shellcheck disable=SC2046
run_case nbc-misc-ring-np2 bash -c "$expect_output" expect nbc-misc-ring \
    "tier 0 rank 1: 1 rings of 256 units" "$MPIRUN" $(mpiargs 2) \
    --mca coll_pnbc_nbc_mailbox_cells 4 --mca coll_pnbc_verbose 2 "$(bin nbc_misc)" ring 256
# a cache far larger than its first hash chains (8), no probation bound: every instance
# kept (misses = instances, at least the 1000 distinct calls' and at most
# one per call: the chains doubled, every instance rehashed), and the
# second round of 1000 distinct outstanding calls found every one of them
# (at least 1000 hits; the 1000 outstanding ibarriers add one hit for
# each that found an idle instance, one whose call had ended within it)
# shellcheck disable=SC2046
run_case nbc-misc-bigcache-np2 bash -c "$expect_output" expect nbc-misc-bigcache \
    ': (1[0-9]{3}|2000) hits, (1[0-9]{3}|200[0-2]) misses, 0 evictions, \2 instances' \
    "$MPIRUN" $(mpiargs 2) \
    --mca coll_pnbc_cache_entries 100000 --mca coll_pnbc_cache_probation 0 --mca coll_pnbc_verbose 2 \
    "$(bin nbc_misc)" outstanding
# the same with the probation bound (8): instances whose calls ended within
# them and were not hit again are evicted as new ones come in, results still
# checked by nbc_misc
# shellcheck disable=SC2046
run_case nbc-misc-probation-np2 bash -c "$expect_output" expect nbc-misc-probation \
    ': [0-9]+ hits, [0-9]+ misses, [1-9][0-9]* evictions' \
    "$MPIRUN" $(mpiargs 2) \
    --mca coll_pnbc_cache_entries 100000 --mca coll_pnbc_verbose 2 "$(bin nbc_misc)" outstanding
# the default cache (8192 entries, probation bound 8) and three rounds of the
# 1000 distinct outstanding calls: on a rank whose calls ended within them,
# each instance left probation unhit and was evicted, so its arguments were
# noted as ghosts and came back at the second round's misses to stay: both
# ranks report 700 hits or more (a ghost overwritten by another key's costs
# its call one more round)
# shellcheck disable=SC2046
run_case nbc-misc-ghosts-np2 bash -c 'out=$("$@" 2>&1) || { echo "$out" | tail -n 20; exit 1; }
echo "$out" | grep "schedule cache"
n=$(echo "$out" | grep -cE ": ([7-9][0-9]{2}|[1-9][0-9]{3}) hits")
[ "$n" -eq 2 ] || { echo "FAIL nbc-misc-ghosts: $n of 2 ranks hit 700 times or more"; exit 1; }' \
    ghosts "$MPIRUN" $(mpiargs 2) --mca coll_pnbc_verbose 2 "$(bin nbc_misc)" outstanding 3
# the same calls through rings of 256 units: senders find them full, receivers
# move messages aside and find them again through their ring's index (results
# checked by nbc_misc); the index's lookups read at most 3 slots each on
# average (1.0-1.5 measured; a hash that sent consecutive keys to every fourth
# slot read 6 and 60)
# shellcheck disable=SC2046
run_case nbc-misc-spill-np2 bash -c 'out=$("$@" 2>&1) || { echo "$out" | tail -n 20; exit 1; }
echo "$out" | grep "moved aside"
echo "$out" | grep -qE ": [1-9][0-9]* messages moved aside" || { echo "FAIL nbc-misc-spill: none moved aside"; exit 1; }
echo "$out" | grep "moved aside" | sed -E "s/.*index: ([0-9]+) lookups, ([0-9]+) slots read.*/\1 \2/" |
    awk "\$2 > 3 * \$1 { bad = 1 } END { exit bad }" || { echo "FAIL nbc-misc-spill: lookups read over 3 slots each"; exit 1; }' \
    spill "$MPIRUN" $(mpiargs 2) --mca coll_pnbc_nbc_mailbox_cells 4 \
    --mca coll_pnbc_verbose 2 "$(bin nbc_misc)" outstanding 3
# 4 KiB calls (512 longs) through rings of 256 units: four of them fill a ring
# before any search has passed over enough messages to make its index, so the
# first message moved aside makes it; every message moved aside is found
# again through it (none passed over in a walk of the list: the tree before
# passed over a million), results checked by nbc_misc
# shellcheck disable=SC2046
run_case nbc-misc-spill4k-np2 bash -c 'out=$("$@" 2>&1) || { echo "$out" | tail -n 20; exit 1; }
echo "$out" | grep "moved aside"
echo "$out" | grep -qE ": [1-9][0-9]* messages moved aside" || { echo "FAIL nbc-misc-spill4k: none moved aside"; exit 1; }
! echo "$out" | grep -qE ", [1-9][0-9]* passed over unindexed" || { echo "FAIL nbc-misc-spill4k: messages passed over in the spill list"; exit 1; }' \
    spill4k "$MPIRUN" $(mpiargs 2) --mca coll_pnbc_nbc_mailbox_cells 4 \
    --mca coll_pnbc_verbose 2 "$(bin nbc_misc)" outstanding 3 512
# shellcheck disable=SC2046
run_case nbc-mbox-off-np3 "$MPIRUN" $(mpiargs 3) --mca coll_pnbc_nbc_mailbox_cells 0 "$(bin nbc_test)" 20
# no room for the mailbox: the receivers did fall back
# shellcheck disable=SC2046
run_case nbc-mbox-fallback-np3 bash -c "$expect_output" expect nbc-mbox-fallback \
    "nonblocking messages for small cells to this process go through pml \(the shm pool is full\)" \
    "$MPIRUN" $(mpiargs 3) --mca coll_pnbc_shm_pool_comm_bytes 65536 --mca coll_pnbc_verbose 1 \
    "$(bin nbc_test)" 20
# the same for the large cells (ibcast's and ireduce's messages of 8-64 KiB): a
# 256 KiB share holds the small cells' block, not the large one's
# shellcheck disable=SC2046
run_case nbc-mbox-large-fallback-np3 bash -c "$expect_output" expect nbc-mbox-large-fallback \
    "nonblocking messages for large cells to this process go through pml \(the shm pool is full\)" \
    "$MPIRUN" $(mpiargs 3) --mca coll_pnbc_shm_pool_comm_bytes 262144 --mca coll_pnbc_verbose 1 \
    "$(bin nbc_test)" 20
# rings of one large cell: a root's senders wait for every message taken
# shellcheck disable=SC2046
run_case nbc-mbox-large1-np3 "$MPIRUN" $(mpiargs 3) --mca coll_pnbc_nbc_mailbox_large_cells 1 \
    "$(bin nbc_test)" 20
# shellcheck disable=SC2046
run_case nbc-noncomm-large1-np3 "$MPIRUN" $(mpiargs 3) --mca coll_pnbc_nbc_mailbox_large_cells 1 \
    "$(bin nbc_noncomm)"
# shellcheck disable=SC2046
run_case nbc-nolibnbc-np3 "$MPIRUN" $(PNBC_COLL=pnbc,basic,tuned,self mpiargs 3) "$(bin nbc_test)" 20
# shellcheck disable=SC2046
run_case nbc-misc-nolibnbc-np3 "$MPIRUN" $(PNBC_COLL=pnbc,basic,tuned,self mpiargs 3) "$(bin nbc_misc)"

# shellcheck disable=SC2046
run_case nbc-alloc-np2 "$MPIRUN" $(mpiargs 2) $(alloc_args) "$(bin nbc_alloc)"
# shellcheck disable=SC2046
run_case nbc-alloc-shm-np2 "$MPIRUN" $(mpiargs 2) --mca coll_pnbc_nbc_shm_min_bytes 0 \
    $(alloc_args) "$(bin nbc_alloc)"

# valgrind: the program's own status, then every error block of the logs
# that is an invalid access/free or a use of uninitialised memory and whose
# stack mentions pnbc.
# shellcheck disable=SC2016
nbc_valgrind='
command -v valgrind >/dev/null 2>&1 || { echo "SKIP nbc-valgrind: valgrind is not installed"; exit 77; }
d=$(mktemp -d "${TMPDIR:-/tmp}/pnbc-nbc-vg.XXXXXX")
supp=/usr/share/openmpi/openmpi-valgrind.supp; sa=""; [ -f "$supp" ] && sa="--suppressions=$supp"
vgawk=$1 prog=$2; shift 2
for part in freed interleave; do
    "$@" valgrind --tool=memcheck --error-exitcode=0 --leak-check=no --num-callers=40 $sa \
        --log-file="$d/vg.$part.%p.log" "$prog" "$part" || { echo "FAIL nbc-valgrind: nbc_misc $part"; exit 1; }
done
bad=$(awk -f "$vgawk" "$d"/vg.*.log)
echo "$bad" | tail -n 60
case "$bad" in *"offending=0 "*) rm -rf "$d"; echo "PASS nbc-valgrind"; exit 0;; esac
echo "FAIL nbc-valgrind: memory errors in pnbc (logs: $d)"; exit 1
'
# shellcheck disable=SC2046
run_case nbc-valgrind-np2 bash -c "$nbc_valgrind" nbc-valgrind "$here/vg_errors.awk" "$(bin nbc_misc)" "$MPIRUN" $(mpiargs 2)
unset nbc_np nbc_valgrind
