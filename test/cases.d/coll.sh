# shellcheck shell=bash
#
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# cases.d/coll.sh: the persistent collectives (coll/pnbc), sourced by
# run-tests.sh before every other area (uses its run_case, mpiargs, bin,
# MPIRUN):
#   smoke-np2                     smoke: the four persistent collectives at all
#   copy_distance-np1..3          copy_distance: local copies at 0..63 bytes off
#   conformance-np1..4            conformance: every collective and algorithm
#   lifecycle-<subtest>-np1..4    lifecycle: request states (LIFECYCLE_SUBTESTS)
#   conf_<family>-np1..5          one conformance program per family
#                                 (CONF_FAMILIES, which the environment may set)
# What each program checks: test/README.md.

LIFECYCLE_SUBTESTS="a-start-order b-startall-permuted c-mixed-p2p d-wait-never-started
e-startall-active e-start-active f-free-active g-free-never-started h-freed-type-op i-comm-self"

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
