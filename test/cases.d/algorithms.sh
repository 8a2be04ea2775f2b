# shellcheck shell=bash
#
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# cases.d/algorithms.sh: the collectives' algorithms forced one by one
# (bcast layouts, bcast/reduce/allreduce/allgather/alltoall algorithms,
# small segments), sourced by run-tests.sh after coll.sh and shm.sh (uses its
# run_case, mpiargs, bin, MPIRUN).

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
