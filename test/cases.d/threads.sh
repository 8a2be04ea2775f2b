# shellcheck shell=bash
#
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# cases.d/threads.sh: pnbc's requests from many threads at once under
# MPI_THREAD_MULTIPLE (test/mt_stress.c, see its header), sourced by
# run-tests.sh (uses its run_case, mpiargs, bin, MPIRUN).
#   threads-np2-x20      mt_stress 20 times in a row at np=2 (THREADS_RUNS
#                        overrides the 20): 4 worker threads x 10000
#                        iterations of persistent collectives, nonblocking
#                        collectives, partitioned and channel requests, with
#                        re-inits every 25 iterations (and a new
#                        communicator made and freed in the thread every
#                        200), nonblocking requests completed by another
#                        thread, a waiter thread, and 8 threads readying one
#                        partitioned send; the case FAILs on the first
#                        failing or hanging run (each run has the program's
#                        watchdog and a timeout of THREADS_RUN_TIMEOUT s,
#                        default 120)
#   threads-noshm-np2    one run with the shm transport off (all through ob1)
#   threads-np3          one run at np=3 (rings over three ranks)
#   threads-park1-np2    5 runs with coll_pnbc_progress_park_min 1: every
#                        request that waits is parked on its peer's bell
#                        (docs/many/progress.md), rung by shm boxes and by
#                        PML completions on whichever thread progresses
#   threads-park1-noshm-np2  one run of those with the shm transport off: every
#                        parked request is woken by PML completion callbacks
# The np=2 runs add --mca mpi_yield_when_idle 1 (mpiargs does it above 2
# ranks): 2 x 5, then 2 x 9 threads share the 2 cores; without it a run
# takes minutes instead of seconds (Open MPI 4.1's blocking waits with
# several threads in them take milliseconds per call on an oversubscribed
# node, with ob1 alone too).

# threads_loop RUNS TIMEOUT CMD...: CMD RUNS times, stop at the first failure.
# shellcheck disable=SC2016
threads_loop='runs=$1; per=$2; shift 2
for i in $(seq "$runs"); do
    t0=$(date +%s)
    timeout -k 10 "$per" "$@"
    rc=$?
    if [ $rc -ne 0 ]; then
        why="exit status $rc"
        [ $rc -eq 124 ] && why="no end within ${per}s"
        echo "FAIL mt_stress run $i of $runs: $why"
        exit 1
    fi
    echo "run $i of $runs passed ($(( $(date +%s) - t0 ))s)"
done'

# shellcheck disable=SC2046
run_case threads-np2-x20 bash -c "$threads_loop" threads "${THREADS_RUNS:-20}" "${THREADS_RUN_TIMEOUT:-120}" \
    "$MPIRUN" $(mpiargs 2) --mca mpi_yield_when_idle 1 "$(bin mt_stress)"
# shellcheck disable=SC2046
run_case threads-noshm-np2 bash -c "$threads_loop" threads 1 "${THREADS_RUN_TIMEOUT:-120}" \
    "$MPIRUN" $(mpiargs 2) --mca mpi_yield_when_idle 1 --mca coll_pnbc_shm 0 "$(bin mt_stress)"
# shellcheck disable=SC2046
run_case threads-np3 bash -c "$threads_loop" threads 1 "${THREADS_RUN_TIMEOUT:-120}" \
    "$MPIRUN" $(mpiargs 3) "$(bin mt_stress)"
# shellcheck disable=SC2046
run_case threads-park1-np2 bash -c "$threads_loop" threads 5 "${THREADS_RUN_TIMEOUT:-120}" \
    "$MPIRUN" $(mpiargs 2) --mca mpi_yield_when_idle 1 --mca coll_pnbc_progress_park_min 1 \
    "$(bin mt_stress)"
# shellcheck disable=SC2046
run_case threads-park1-noshm-np2 bash -c "$threads_loop" threads 1 "${THREADS_RUN_TIMEOUT:-120}" \
    "$MPIRUN" $(mpiargs 2) --mca mpi_yield_when_idle 1 --mca coll_pnbc_progress_park_min 1 \
    --mca coll_pnbc_shm 0 "$(bin mt_stress)"
unset threads_loop
