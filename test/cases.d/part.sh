# shellcheck shell=bash
#
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# cases.d/part.sh: partitioned communication (libpnbc), sourced by
# run-tests.sh (uses its run_case, mpiargs, bin, MPIRUN, TEST_BINDIR,
# ALLOC_COUNTER_MATCH).  The programs are part_*.c (see each file's header):
#   part-np1..4            part_test: data (partition counts equal and unequal
#                          both ways, 1..64 partitions, 8 B..4 MiB, contiguous/
#                          vector/struct-with-holes, zero count, Pready orders,
#                          _range, _list, every Wait*/Test*), staged Parrived,
#                          several requests with the same (comm, tag, source)
#   part-misuse-np1..4     part_misuse: error classes of every misuse, the
#                          request working afterwards, MPI_PROC_NULL, truncation
#   part-mixed-np1..4      part_mixed: partitioned + persistent collectives +
#                          MPI_Send_init/Recv_init in one MPI_Startall; init
#                          never waiting for the peer
#   part-long-np2          part_mixed long: 100000 start/Pready/wait cycles
#   part-threads-np1..3    part_threads: Pready from 4 threads (SKIP without
#                          MPI_THREAD_MULTIPLE)
#   part-conform-np1..3    part_conform: MPI_Parrived on inactive and null
#                          requests (flag true), zero partitions on either
#                          side, each byte checked
#   part-alloc-np2         part_alloc with the alloc_counter preload library:
#                          no heap call from "pnbc" objects per cycle after
#                          warm-up; none kept over init/misuse/free rounds
# PART_LONG_CYCLES overrides the 100000 cycles of part-long-np2.

for part_np in 1 2 3 4; do
    # shellcheck disable=SC2046
    run_case "part-np$part_np" "$MPIRUN" $(mpiargs $part_np) "$(bin part_test)"
    # shellcheck disable=SC2046
    run_case "part-misuse-np$part_np" "$MPIRUN" $(mpiargs $part_np) "$(bin part_misuse)"
    # shellcheck disable=SC2046
    run_case "part-mixed-np$part_np" "$MPIRUN" $(mpiargs $part_np) "$(bin part_mixed)"
done
# shellcheck disable=SC2046
run_case part-long-np2 "$MPIRUN" $(mpiargs 2) "$(bin part_mixed)" long "${PART_LONG_CYCLES:-100000}"
for part_np in 1 2 3; do
    # shellcheck disable=SC2046
    run_case "part-conform-np$part_np" "$MPIRUN" $(mpiargs $part_np) "$(bin part_conform)"
    # shellcheck disable=SC2046
    run_case "part-threads-np$part_np" "$MPIRUN" $(mpiargs $part_np) "$(bin part_threads)"
done

# shellcheck disable=SC2046
run_case part-alloc-np2 "$MPIRUN" $(mpiargs 2) $(alloc_args) "$(bin part_alloc)"
unset part_np
