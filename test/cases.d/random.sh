# shellcheck shell=bash
#
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# cases.d/random.sh: random sequences of operations (random_ops.c),
# sourced by run-tests.sh (uses its run_case, mpiargs, bin, MPIRUN).
# random_ops draws, from a seed, persistent collectives (all 17
# intracommunicator ones), nonblocking collectives and partitioned
# send/receive pairs with random counts (0 included), predefined and
# derived types (vector, indexed, struct with holes; some freed right after
# init), ops, roots, in place, two communicators; keeps the persistent and
# partitioned requests in a pool for several epochs, starts them in
# rank-dependent orders, completes with every MPI_Wait*/MPI_Test* and checks
# every result against local references (see random_ops.c).
#   random-np<N>-<seed>[-<variant>]   a fixed seed; 10^4 operations in all:
#       default        the automatic algorithm choice
#       algA           other algorithms forced (knomial bcast, pipelined
#                      reduce, rabenseifner, bruck, recursive halving,
#                      linear scans, ...) with 64-byte segments; (also
#                      algC, nolibnbc-cache1) nonblocking collectives take
#                      shm for every size (coll_pnbc_nbc_shm_min_bytes 0)
#       algC           dissemination barrier, scatter_allgather bcast,
#                      reduce_bcast, neighbor_exchange, reduce_then_scatter,
#                      recursive doubling scans; shm boxes of 1 KiB, no
#                      single copy (everything above 1 KiB streamed)
#       pml            no shm transport, binary_pipeline bcast, segments of
#                      64 bytes
#       nolibnbc-cache1  pnbc serves every nonblocking collective with a
#                      schedule cache of one entry
#       mbox2          small nonblocking messages through mailbox rings of
#                      2 cells (coll_pnbc_nbc_mailbox_cells), a cache of 4
#       smallpool      a 256 KiB pool share per communicator: most requests
#                      find the pool under pressure (messages above 4 KiB
#                      offered for single copy, streamed through two small
#                      boxes from non-contiguous senders) or full (pml)
#   random-shm-stream-np3   shm boxes of 1 KiB (coll_pnbc_shm_frag_bytes, the
#                      minimum) with single copy on and a stream fragment
#                      of 1000 bytes.  It hung before the shm pool's block
#                      incarnation number (common_pnbc_shm_copy.c): a
#                      receiver that had answered a single-copy offer,
#                      completed and freed the request before the sender
#                      looked had its block recycled (zeroed) by the next
#                      *_init, and the sender waited for a counter that had
#                      gone back to 0 (a persistent allgather of 1968-byte
#                      blocks, seed 1, op 652, at np 3).
# A failure prints "FAIL random_ops seed=S op=I ...": rerun random_ops with
# --seed S --ops I+1 (and the case's np and MCA options) to reproduce;
# --only I,J,... runs only some ops of the sequence.

rnd_p="--mca coll_pnbc"
rnd_algA="$rnd_p""_barrier_algorithm recursive_doubling $rnd_p""_bcast_algorithm knomial
 $rnd_p""_reduce_algorithm pipeline $rnd_p""_allreduce_algorithm rabenseifner $rnd_p""_gather_algorithm binomial
 $rnd_p""_scatter_algorithm binomial $rnd_p""_allgather_algorithm bruck $rnd_p""_allgatherv_algorithm ring
 $rnd_p""_alltoall_algorithm bruck $rnd_p""_alltoallv_algorithm pairwise $rnd_p""_alltoallw_algorithm pairwise
 $rnd_p""_reduce_scatter_algorithm recursive_halving $rnd_p""_reduce_scatter_block_algorithm recursive_halving
 $rnd_p""_scan_algorithm linear $rnd_p""_exscan_algorithm linear $rnd_p""_segsize 64
 $rnd_p""_nbc_shm_min_bytes 0"
rnd_algC="$rnd_p""_barrier_algorithm dissemination $rnd_p""_bcast_algorithm scatter_allgather
 $rnd_p""_reduce_algorithm linear $rnd_p""_allreduce_algorithm reduce_bcast
 $rnd_p""_allgather_algorithm neighbor_exchange $rnd_p""_alltoall_algorithm pairwise
 $rnd_p""_alltoallv_algorithm linear $rnd_p""_alltoallw_algorithm linear
 $rnd_p""_reduce_scatter_algorithm reduce_then_scatter $rnd_p""_reduce_scatter_block_algorithm reduce_then_scatter
 $rnd_p""_scan_algorithm recursive_doubling $rnd_p""_exscan_algorithm recursive_doubling
 $rnd_p""_shm_single_copy 0 $rnd_p""_shm_frag_bytes 1024 $rnd_p""_nbc_shm_min_bytes 0"
rnd_pml="$rnd_p""_shm 0 $rnd_p""_bcast_algorithm binary_pipeline $rnd_p""_segsize 64"
rnd_cache1="$rnd_p""_cache_entries 1 $rnd_p""_nbc_shm_min_bytes 0"
rnd_mbox2="$rnd_p""_nbc_mailbox_cells 2 $rnd_p""_cache_entries 4"
rnd_smallpool="$rnd_p""_shm_pool_comm_bytes 262144"

# name np seed ops coll-list "mca options" [program options]
rnd_case() {
    local name=$1 np=$2 seed=$3 ops=$4 coll=$5 mca=${6:-}
    shift 5
    [ $# -gt 0 ] && shift
    # shellcheck disable=SC2046,SC2086
    run_case "$name" "$MPIRUN" $(PNBC_COLL=$coll mpiargs "$np") $mca "$(bin random_ops)" --seed "$seed" --ops "$ops" "$@"
}
rnd_coll=$PNBC_COLL
rnd_case random-np2-101 2 101 1500 "$rnd_coll"
rnd_case random-np2-102-algA 2 102 1000 "$rnd_coll" "$rnd_algA"
rnd_case random-np2-103-pml 2 103 500 "$rnd_coll" "$rnd_pml"
rnd_case random-np3-201 3 201 1500 "$rnd_coll"
rnd_case random-np3-202-algC 3 202 1000 "$rnd_coll" "$rnd_algC"
rnd_case random-np3-203-nolibnbc-cache1 3 203 1000 "${rnd_coll/libnbc,/}" "$rnd_cache1"
rnd_case random-np4-301 4 301 1500 "$rnd_coll"
rnd_case random-np4-302-algA 4 302 1000 "$rnd_coll" "$rnd_algA"
rnd_case random-np4-303-pml 4 303 500 "$rnd_coll" "$rnd_pml"
rnd_case random-np4-304-algC 4 304 500 "$rnd_coll" "$rnd_algC"
rnd_case random-np3-205-mbox2 3 205 1500 "$rnd_coll" "$rnd_mbox2"
rnd_case random-np4-305-mbox2 4 305 1000 "$rnd_coll" "$rnd_mbox2"
rnd_case random-np3-206-smallpool 3 206 1500 "$rnd_coll" "$rnd_smallpool"
rnd_case random-np2-106-smallpool 2 106 1500 "$rnd_coll" "$rnd_smallpool"
rnd_case random-shm-stream-np3 3 1 1000 "$rnd_coll" \
    "$rnd_p""_shm_frag_bytes 1024 $rnd_p""_shm_stream_frag_bytes 1000" --timeout 60
unset rnd_p rnd_algA rnd_algC rnd_pml rnd_cache1 rnd_mbox2 rnd_smallpool rnd_coll
unset -f rnd_case
