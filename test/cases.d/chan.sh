# shellcheck shell=bash
#
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# cases.d/chan.sh: persistent point-to-point channels and K-slack channels
# (libpnbc: MPIX_Bind_channel, ...), sourced by run-tests.sh (uses its
# run_case, mpiargs, bin, MPIRUN, TEST_BINDIR, ALLOC_COUNTER_MATCH).  The
# programs are chan_*.c (see each file's header):
#   chan-np1..4          chan_test: ping-pong and ring 8 B..4 MiB, contiguous
#                        and strided types; K-slack K = 1, 2, 5, 16 with
#                        default, positive and negative increments; binds in
#                        opposite orders on two communicators; channels in one
#                        MPI_Startall with a persistent collective, a
#                        partitioned pair and ob1 requests.  On one node the
#                        shm transport carries them: its files must exist while
#                        bound (CHAN_EXPECT_SHM=1) and be gone after unbind.
#   chan-noshm-np2..4    the same with the shm transport off (--mca
#                        coll_pnbc_shm 0): all through the PML, no file.
#   chan-long-np2        100000 8-byte transfers each way, each checked
#   chan-long-noshm-np2  (CHAN_LONG_CYCLES overrides the 100000), with shm
#                        and without.
#   chan-misuse-np1..4   chan_misuse: every misuse and its error class.
#   chan-alloc-np2       chan_alloc under the alloc_counter preload library:
#                        no heap call from "pnbc" objects per channel start;
#                        none kept over bind/unbind rounds.
#   chan-slack-np2,4     chan_slack: K-slack channels started with
#                        MPIX_Start_slack / MPIX_Startall_slack under 5.0's
#                        rule for MPI_Start (an active request is refused),
#                        emulated by the program on any series; the old way
#                        (a second MPI_Start) must be refused by it.
#   chan-slack-native-np2  the same under this Open MPI's own MPI_Start
#                        (default mpi_param_check): 4.1.5+ and 5.0 must
#                        refuse the old way, 4.1.4 accept it.
#   chan-example-*       contrib/examples/kslack_ring.c (the producer/consumer
#                        circular buffer, checking its data): K = 8 with shm,
#                        K = 5 without, K = 16 at np 3.

for chan_np in 1 2 3 4; do
    # shellcheck disable=SC2046
    run_case "chan-np$chan_np" "$MPIRUN" $(mpiargs $chan_np) -x CHAN_EXPECT_SHM=1 "$(bin chan_test)"
    # shellcheck disable=SC2046
    run_case "chan-misuse-np$chan_np" "$MPIRUN" $(mpiargs $chan_np) "$(bin chan_misuse)"
done
for chan_np in 2 3 4; do
    # shellcheck disable=SC2046
    run_case "chan-noshm-np$chan_np" "$MPIRUN" $(mpiargs $chan_np) --mca coll_pnbc_shm 0 \
        -x CHAN_EXPECT_SHM=0 "$(bin chan_test)"
done
# shellcheck disable=SC2046
run_case chan-long-np2 "$MPIRUN" $(mpiargs 2) "$(bin chan_test)" long "${CHAN_LONG_CYCLES:-100000}"
# shellcheck disable=SC2046
run_case chan-long-noshm-np2 "$MPIRUN" $(mpiargs 2) --mca coll_pnbc_shm 0 "$(bin chan_test)" long \
    "${CHAN_LONG_CYCLES:-100000}"

# shellcheck disable=SC2046
run_case chan-alloc-np2 "$MPIRUN" $(mpiargs 2) $(alloc_args) "$(bin chan_alloc)"

for chan_np in 2 4; do
    # shellcheck disable=SC2046
    run_case "chan-slack-np$chan_np" "$MPIRUN" $(mpiargs $chan_np) "$(bin chan_slack)"
done
# shellcheck disable=SC2046
run_case chan-slack-native-np2 "$MPIRUN" $(mpiargs 2) -x CHAN_SLACK_NATIVE=1 "$(bin chan_slack)"

# shellcheck disable=SC2046
run_case chan-example-np2 "$MPIRUN" $(mpiargs 2) "$(bin chan_example)" 8
# shellcheck disable=SC2046
run_case chan-example-noshm-np2 "$MPIRUN" $(mpiargs 2) --mca coll_pnbc_shm 0 "$(bin chan_example)" 5
# shellcheck disable=SC2046
run_case chan-example-np3 "$MPIRUN" $(mpiargs 3) "$(bin chan_example)" 16 20000
unset chan_np
