# shellcheck shell=bash
#
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# cases.d/many.sh: cost that does not grow with the number of live requests
# (many_test.c), sourced by run-tests.sh:
#   many-np2            10^4 live requests (allreduce, bcast, reduce,
#                       allgather, alltoall of 4 B - 16 KiB, two
#                       communicators) started by one MPI_Startall in
#                       rank-dependent orders, 3 rounds, all checked
#   many-np4            10^3 of them at np=4
#   many-big-np3        2000 with the largest 80 000 bytes: past a sixteenth
#                       of the pool's share those are offered for single copy
#                       (folded through a bounce buffer in allreduce/reduce),
#                       the 16 and 64 KiB ones stream through two small boxes
#   many-tinypool-np3   300 of them with a 64 KiB pool per communicator:
#                       most receivers have no room and fall back to the
#                       PML (the case checks that they said so at
#                       coll_pnbc_verbose 1), results still right
#   many-churn-np2      5000 init/start/wait/free cycles: flat resident set,
#                       no file per request in the shm directory
#   many-fulldir-np2    300 of them with a 64-entry pool directory: the
#                       requests past it fall back by marker file (folded
#                       reductions unfolded), results still right
#   many-late-np3       2000 of them, one rank starting each round 20 ms
#                       late: the others' requests wait parked on their
#                       peers' bells, and wake when its messages arrive
#   many-late-tinypool-np4  500 with a 64 KiB pool: parked on bells that
#                       PML completions ring as well
#   many-late-park1-np4 12 with coll_pnbc_progress_park_min 1 (every
#                       request that waits is parked)
#   many-noprefault-np3, many-big-prefaultall-np3
#                       1000 of them with no block's pages mapped at init
#                       (coll_pnbc_shm_prefault_max_bytes 0), and 2000 with
#                       the largest 80 000 bytes and every new block's pages
#                       mapped at init however large: results still right
#                       (the default maps blocks up to 512 KiB)
#   conformance-park1-np4, nbc-shm-park1-np3, alloc-park1-np2: the
#                       conformance suite (every persistent collective),
#                       the nonblocking suite with every message paired
#                       through shm slots, and the allocation counter, all
#                       with every waiting request parked

# many_fallback CASE NP REASON MCA_NAME MCA_VALUE: 300 live requests with
# coll_pnbc_verbose 1 and the given pool limit; passes when the run passes
# and at least one receiver said "receives through pml (REASON)".
many_fallback() {
    local name=$1 np=$2 reason=$3 var=$4 value=$5
    # shellcheck disable=SC2046
    run_case "$name" bash -c 'reason=$1; shift; log=$(mktemp); "$@" > "$log" 2>&1; rc=$?
        cat "$log"; n=$(grep -cF "receives through pml ($reason)" "$log"); rm -f "$log"
        [ $rc -eq 0 ] || exit $rc
        echo "$n receiver(s) fell back: $reason"
        [ "$n" -gt 0 ] || { echo "FAIL: no receiver fell back ($reason)"; exit 1; }' \
        many-fallback "$reason" "$MPIRUN" $(mpiargs "$np") --mca "$var" "$value" \
        --mca coll_pnbc_verbose 1 "$(bin many_test)" many 300
}

# shellcheck disable=SC2046
run_case many-np2 "$MPIRUN" $(mpiargs 2) "$(bin many_test)" many 10000
# shellcheck disable=SC2046
run_case many-np4 "$MPIRUN" $(mpiargs 4) "$(bin many_test)" many 1000
# shellcheck disable=SC2046
run_case many-big-np3 "$MPIRUN" $(mpiargs 3) "$(bin many_test)" big 2000
many_fallback many-tinypool-np3 3 "the shm pool is full" coll_pnbc_shm_pool_comm_bytes 65536
# shellcheck disable=SC2046
run_case many-churn-np2 "$MPIRUN" $(mpiargs 2) "$(bin many_test)" churn 5000
many_fallback many-fulldir-np2 2 "the pool's directory is full" coll_pnbc_shm_pool_entries 64
# shellcheck disable=SC2046
run_case many-late-np3 "$MPIRUN" $(mpiargs 3) "$(bin many_test)" late 2000
# shellcheck disable=SC2046
run_case many-late-tinypool-np4 "$MPIRUN" $(mpiargs 4) --mca coll_pnbc_shm_pool_comm_bytes 65536 \
    "$(bin many_test)" late 500
# shellcheck disable=SC2046
run_case many-late-park1-np4 "$MPIRUN" $(mpiargs 4) --mca coll_pnbc_progress_park_min 1 \
    "$(bin many_test)" late 12
# shellcheck disable=SC2046
run_case many-noprefault-np3 "$MPIRUN" $(mpiargs 3) --mca coll_pnbc_shm_prefault_max_bytes 0 \
    "$(bin many_test)" many 1000
# shellcheck disable=SC2046
run_case many-big-prefaultall-np3 "$MPIRUN" $(mpiargs 3) \
    --mca coll_pnbc_shm_prefault_max_bytes 1073741824 "$(bin many_test)" big 2000
# shellcheck disable=SC2046
run_case conformance-park1-np4 "$MPIRUN" $(mpiargs 4) --mca coll_pnbc_progress_park_min 1 \
    "$(bin conformance)"
# shellcheck disable=SC2046
run_case nbc-shm-park1-np3 "$MPIRUN" $(mpiargs 3) --mca coll_pnbc_progress_park_min 1 \
    --mca coll_pnbc_nbc_shm_min_bytes 0 "$(bin nbc_test)" 20
# shellcheck disable=SC2046
run_case alloc-park1-np2 "$MPIRUN" $(mpiargs 2) --mca coll_pnbc_progress_park_min 1 \
    $(alloc_args) "$(bin alloc_test)"
