# shellcheck shell=bash
#
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# cases.d/shm.sh: the shared-memory transport of the collectives (boxes,
# single copy, streaming, shared copies, receivers that decline, non-temporal
# fills, the kernel refusing), sourced by run-tests.sh (uses its run_case,
# mpiargs, bin, expect_output, MPIRUN, TEST_BINDIR, here).  The shm-dear-*
# cases set coll_pnbc_shm_single_copy_dear_ns themselves; run-tests.sh pins
# it to 0 for every other case.

# The shared-memory transport (coll_pnbc_transport_shm.c): many requests in
# flight, 100000 start+wait cycles, no files left after MPI_Finalize (also
# with requests never freed), receivers that cannot create their files.
for np in 2 3; do
    # shellcheck disable=SC2046
    run_case "shm-np$np" "$MPIRUN" $(mpiargs $np) "$(bin shm_test)" 100000
done
# shellcheck disable=SC2046
run_case shm-unfreed-np2 "$MPIRUN" $(mpiargs 2) "$(bin shm_test)" 2000 unfreed
# shellcheck disable=SC2046
run_case shm-fallback-np3 "$MPIRUN" $(mpiargs 3) "$(bin shm_test)" 2000 fallback
# The express path of one-box messages (common_pnbc_shm_express.c): small
# collectives over 20000 starts with new data at each, every result checked
# (express_test.c); with requests parked on bells from 2 active ones; with
# the shm transport off (the same results over pml).
for np in 2 3; do
    # shellcheck disable=SC2046
    run_case "express-np$np" "$MPIRUN" $(mpiargs $np) "$(bin express_test)"
done
# shellcheck disable=SC2046
run_case express-park-np3 "$MPIRUN" $(mpiargs 3) --mca coll_pnbc_progress_park_min 2 \
    "$(bin express_test)" 5000
# shellcheck disable=SC2046
run_case express-noshm-np2 "$MPIRUN" $(mpiargs 2) --mca coll_pnbc_shm 0 "$(bin express_test)" 5000
# Messages above a shm box (alltoall, allgather blocks of 16-80 KiB): with boxes of
# 1 KiB, read in one copy (process_vm_readv) or streamed through boxes
# (single copy off: convertors packing fragments of non-contiguous data);
# and a receiver that refuses single copy (rank 0) while its peers offer it.
SHM_SMALL_BOX="--mca coll_pnbc_shm_frag_bytes 1024"
# shellcheck disable=SC2046,SC2086
run_case conf_alltoall-shm-single-copy-np3 "$MPIRUN" $(mpiargs 3) $SHM_SMALL_BOX "$(bin conf_alltoall)"
# shellcheck disable=SC2046,SC2086
run_case conf_alltoall-shm-stream-np3 "$MPIRUN" $(mpiargs 3) $SHM_SMALL_BOX \
    --mca coll_pnbc_shm_single_copy 0 "$(bin conf_alltoall)"
# shellcheck disable=SC2046,SC2086
run_case conf_gather-shm-single-copy-np3 "$MPIRUN" $(mpiargs 3) $SHM_SMALL_BOX "$(bin conf_gather)" --quick
# shellcheck disable=SC2046,SC2086
run_case conf_gather-shm-stream-np3 "$MPIRUN" $(mpiargs 3) $SHM_SMALL_BOX \
    --mca coll_pnbc_shm_single_copy 0 "$(bin conf_gather)" --quick
# Reductions folded straight from the shm boxes: reduce streamed in
# fragments of 1001 bytes (elements split between fragments), allreduce
# with 64 KiB boxes; every reduce and allreduce algorithm.
for alg in linear binomial pipeline reduce_scatter_gather; do
    # shellcheck disable=SC2046
    run_case "conformance-shm-fold-reduce-$alg-np4" "$MPIRUN" $(mpiargs 4) --mca coll_pnbc_shm_frag_bytes 1024 \
        --mca coll_pnbc_shm_stream_frag_bytes 1001 --mca coll_pnbc_reduce_algorithm $alg "$(bin conformance)" --quick
done
for alg in recursive_doubling rabenseifner ring reduce_bcast direct; do
    # shellcheck disable=SC2046
    run_case "conformance-shm-fold-allreduce-$alg-np3" "$MPIRUN" $(mpiargs 3) --mca coll_pnbc_shm_frag_bytes 65536 \
        --mca coll_pnbc_allreduce_algorithm $alg "$(bin conformance)" --quick
done
# shellcheck disable=SC2046
run_case conf_reduce_scatter-shm-fold-np3 "$MPIRUN" $(mpiargs 3) --mca coll_pnbc_shm_frag_bytes 1024 \
    --mca coll_pnbc_shm_stream_frag_bytes 1001 "$(bin conf_reduce_scatter)"
# shellcheck disable=SC2046,SC2086
run_case conf_alltoall-shm-refused-np3 "$MPIRUN" $(mpiargs 3) $SHM_SMALL_BOX \
    "$here/rank0-env.sh" OMPI_MCA_coll_pnbc_shm_single_copy=0 -- "$(bin conf_alltoall)"
# gather above a box: a root invites its senders to write into its buffer
# (process_vm_writev, conf_gather-shm-single-copy-np3 above); here rank 0
# neither invites nor accepts invitations, so as a sender to an inviting
# root it streams through the boxes instead
# shellcheck disable=SC2046,SC2086
run_case conf_gather-shm-uninvited-np3 "$MPIRUN" $(mpiargs 3) $SHM_SMALL_BOX \
    "$here/rank0-env.sh" OMPI_MCA_coll_pnbc_shm_single_copy=0 -- "$(bin conf_gather)" --quick
# bcast above a box, as on a node with a CPU per process (coll_pnbc_oversubscribed
# 0 at 3 ranks): offered messages copied by both sides (shared copy: the sender
# writes the upper half into the receiver's buffer while it reads the lower),
# with boxes of 1 KiB and sharing from 1 KiB so that the sweep's counts 1000 and
# 65539 take it, persistent and nonblocking, through every bcast tree; the
# senders did share.  Then rank 0 without single copy: it neither offers, reads
# nor helps; its peers stream to it and read its streams.
SHM_SHARED="--mca coll_pnbc_oversubscribed 0 $SHM_SMALL_BOX --mca coll_pnbc_shm_shared_copy_min_bytes 1024"
for alg in knomial pipeline binary_pipeline scatter_allgather; do
    # shellcheck disable=SC2046,SC2086
    run_case "conformance-shm-shared-$alg-np3" bash -c "$expect_output" expect "shared-$alg" \
        "[1-9][0-9]* offered messages copied by both sides" "$MPIRUN" $(mpiargs 3) $SHM_SHARED \
        --mca coll_pnbc_verbose 2 --mca coll_pnbc_bcast_algorithm $alg "$(bin conformance)"
done
# shellcheck disable=SC2046,SC2086
run_case nbc-shm-shared-np3 bash -c "$expect_output" expect nbc-shared \
    "[1-9][0-9]* offered messages copied by both sides" "$MPIRUN" $(mpiargs 3) $SHM_SHARED \
    --mca coll_pnbc_verbose 2 "$(bin nbc_test)" 20
# shellcheck disable=SC2046,SC2086
run_case conformance-shm-shared-refused-np3 "$MPIRUN" $(mpiargs 3) $SHM_SHARED \
    "$here/rank0-env.sh" OMPI_MCA_coll_pnbc_shm_single_copy=0 -- "$(bin conformance)" --quick
# Receivers that decline single copy, as on a machine where a
# process_vm_readv is dear (coll_pnbc_shm_single_copy_dear_ns): every
# receiver declines every message (blocks of 16-80 KiB, 1 KiB boxes: they
# stream); then rank 0 alone declines while its peers offer, invite and
# share, so each side of a message decides differently and the receiver's
# word (its slot's entry) must prevail -- alltoall, gather, bcast shared
# copies, nonblocking calls.  Last, the measurement itself (the default):
# each process says what it measured and chose.
SHM_DEAR="--mca coll_pnbc_shm_single_copy_dear_ns 1 --mca coll_pnbc_shm_single_copy_dear_min_bytes 100000000"
# shellcheck disable=SC2046,SC2086
run_case shm-dear-alltoall-np3 bash -c "$expect_output" expect dear-alltoall \
    "[1-9][0-9]* slots declined single copy" "$MPIRUN" $(mpiargs 3) $SHM_SMALL_BOX $SHM_DEAR \
    --mca coll_pnbc_verbose 2 "$(bin conf_alltoall)"
DEAR_RANK0="$here/rank0-env.sh OMPI_MCA_coll_pnbc_shm_single_copy_dear_ns=1 OMPI_MCA_coll_pnbc_shm_single_copy_dear_min_bytes=100000000 --"
# shellcheck disable=SC2046,SC2086
run_case shm-dear-mixed-alltoall-np3 "$MPIRUN" $(mpiargs 3) \
    $SHM_SMALL_BOX $DEAR_RANK0 "$(bin conf_alltoall)"
# shellcheck disable=SC2046,SC2086
run_case shm-dear-mixed-gather-np3 "$MPIRUN" $(mpiargs 3) \
    $SHM_SMALL_BOX $DEAR_RANK0 "$(bin conf_gather)" --quick
# shellcheck disable=SC2046,SC2086
run_case shm-dear-mixed-shared-np3 bash -c "$expect_output" expect dear-mixed-shared \
    "[1-9][0-9]* offered messages copied by both sides" "$MPIRUN" $(mpiargs 3) \
    $SHM_SHARED --mca coll_pnbc_verbose 2 $DEAR_RANK0 "$(bin conformance)" --quick
# shellcheck disable=SC2046,SC2086
run_case shm-dear-mixed-nbc-np3 "$MPIRUN" $(mpiargs 3) \
    $SHM_SHARED $DEAR_RANK0 "$(bin nbc_test)" 10
# An exchange (allgather, alltoall: every process copies at once) with
# coll_pnbc_shm_exchange_boxes 1, where each process has a CPU (coll_pnbc_oversubscribed 0): a receiver that finds
# single copy dear declines it for the exchange's messages of every size,
# not only below its floor (here 1 byte, above which it declined nothing),
# and allgather's beyond its row's 64 KiB take the boxes, not the PML.
# Every receiver, persistent and nonblocking; then rank 0 alone, so that
# both sides of each message must agree on the receiver's word (which
# transport: boxes towards rank 0, the PML from it).
SHM_EXCHANGE="--mca coll_pnbc_shm_exchange_boxes 1 --mca coll_pnbc_oversubscribed 0 --mca coll_pnbc_verbose 2"
DEAR_EXCHANGE="--mca coll_pnbc_shm_single_copy_dear_ns 1 --mca coll_pnbc_shm_single_copy_dear_min_bytes 1"
# shellcheck disable=SC2046,SC2086
run_case shm-dear-exchange-np3 bash -c "$expect_output" expect dear-exchange \
    "[1-9][0-9]* slots declined single copy" "$MPIRUN" $(mpiargs 3) $SHM_SMALL_BOX \
    $SHM_EXCHANGE $DEAR_EXCHANGE "$(bin conf_alltoall)"
# shellcheck disable=SC2046,SC2086
run_case shm-dear-exchange-nbc-np2 bash -c "$expect_output" expect dear-exchange-nbc \
    "[1-9][0-9]* slots declined single copy" "$MPIRUN" $(mpiargs 2) $SHM_EXCHANGE \
    $DEAR_EXCHANGE --mca coll_pnbc_nbc_mailbox_large_cells 0 "$(bin nbc_test)" 10
# shellcheck disable=SC2046,SC2086
run_case shm-dear-exchange-mixed-np3 "$MPIRUN" $(mpiargs 3) $SHM_SMALL_BOX $SHM_EXCHANGE \
    "$here/rank0-env.sh" OMPI_MCA_coll_pnbc_shm_single_copy_dear_ns=1 \
    OMPI_MCA_coll_pnbc_shm_single_copy_dear_min_bytes=1 -- "$(bin conf_alltoall)"
# A persistent allreduce where single copy is dear streams its messages
# above the box through the boxes, folded out of them, at every size
# (pnbc_shm_declined_below()), not through the PML: conformance's
# allreduces check the sums, and the receivers must have declined single
# copy in ten slots or more (without the rule the other collectives of the
# sweep decline 3 here).
# shellcheck disable=SC2046,SC2086
run_case shm-dear-allreduce-np2 bash -c "$expect_output" expect dear-allreduce \
    "[1-9][0-9]+ slots declined single copy" "$MPIRUN" $(mpiargs 2) $SHM_SMALL_BOX \
    --mca coll_pnbc_oversubscribed 0 --mca coll_pnbc_verbose 2 $DEAR_EXCHANGE \
    "$(bin conformance)" --quick
# Boxes filled with non-temporal stores (coll_pnbc_shm_nt_min_bytes), here
# of every size, so that the copy's partial lines at either end and whole
# lines meet every alignment the sweep's counts give (1 KiB boxes and
# streamed fragments, single copy off), with coll_pnbc_oversubscribed 0 as
# on a node with a CPU per process (where processes outnumber CPUs they are
# never used); the senders must say they used them.  Persistent and
# nonblocking calls.
SHM_NT_ANY="--mca coll_pnbc_oversubscribed 0 --mca coll_pnbc_shm_single_copy 0 --mca coll_pnbc_shm_nt_min_bytes 1 --mca coll_pnbc_shm_nt_measured_min_bytes 1 --mca coll_pnbc_verbose 2"
SHM_NT="$SHM_NT_ANY --mca coll_pnbc_shm_nt_max_bytes 2147483647 --mca coll_pnbc_shm_nt_ratio 0"
# shellcheck disable=SC2046,SC2086
run_case conformance-shm-nt-np3 bash -c "$expect_output" expect shm-nt \
    "[1-9][0-9]* fills with non-temporal stores" "$MPIRUN" $(mpiargs 3) $SHM_SMALL_BOX $SHM_NT \
    "$(bin conformance)"
# shellcheck disable=SC2046,SC2086
run_case nbc-shm-nt-np3 bash -c "$expect_output" expect nbc-shm-nt \
    "[1-9][0-9]* fills with non-temporal stores" "$MPIRUN" $(mpiargs 3) $SHM_NT \
    --mca coll_pnbc_nbc_shm_min_bytes 0 "$(bin nbc_test)" 20
# The same with every fill measured (pnbc_fill(); nt_max 0: no box is
# always filled so): each ring and slot tries both ways in its first
# fills, and a ratio of 1 flips between them as the timings go, so the
# messages of one ring or slot take both ways.
SHM_NT_MEASURED="$SHM_NT_ANY --mca coll_pnbc_shm_nt_max_bytes 0 --mca coll_pnbc_shm_nt_ratio 1"
# shellcheck disable=SC2046,SC2086
run_case nbc-shm-nt-measured-np3 bash -c "$expect_output" expect nbc-shm-nt-measured \
    "[1-9][0-9]* fills with non-temporal stores" "$MPIRUN" $(mpiargs 3) $SHM_NT_MEASURED \
    --mca coll_pnbc_nbc_shm_min_bytes 0 "$(bin nbc_test)" 20
# Nonblocking messages of 8-256 KiB to a receiver that declines take the
# large mailbox ring, by the floor it published in the modex (both sides
# read the same): with rank 0 alone declining, an alltoall (its row asks for
# no large ring) builds large rings at rank 0 and at no other rank.
# shellcheck disable=SC2016
expect_dear_cells='
out=$("$@" 2>&1); rc=$?
echo "$out" | grep -v "coll:pnbc" | tail -n 20
[ $rc -eq 0 ] || { echo "FAIL dear-cells: exit $rc"; exit 1; }
big="[0-9]+ rings of [0-9]+ units \\(messages of up to [0-9]{5,} bytes\\)"
echo "$out" | grep -qE "rank 0: $big" || { echo "FAIL dear-cells: rank 0 built no large ring"; exit 1; }
! echo "$out" | grep -E "rank [1-9][0-9]*: $big" || { echo "FAIL dear-cells: a rank that takes single copy built a large ring"; exit 1; }
echo "PASS dear-cells"
'
# shellcheck disable=SC2046,SC2086
run_case shm-dear-mixed-nbc-cells-np3 bash -c "$expect_dear_cells" expect "$MPIRUN" $(mpiargs 3) \
    --mca coll_pnbc_verbose 2 $DEAR_RANK0 "$(bin nbc_test)" 10 alltoall
# shellcheck disable=SC2046
run_case shm-dear-measured-np2 bash -c "$expect_output" expect dear-measured \
    "process_vm_readv of 64 KiB takes [0-9]+ ns here: single copy from [0-9]+ bytes on" \
    env -u OMPI_MCA_coll_pnbc_shm_single_copy_dear_ns "$MPIRUN" $(mpiargs 2) --mca coll_pnbc_verbose 1 \
    "$(bin conf_alltoall)"
# A sender preempted while its receiver answers its offer, completes, frees
# the request and gives the block to the next one: the sender must not take
# the new request's slot for its answer (it used to read `refused` there and
# stream into the new block, which then hung or corrupted the next case).
# bcast pipelines of offered messages (1 KiB boxes) with a CPU burner beside
# the three ranks, so that they are preempted often.
# shellcheck disable=SC2016
with_burner='timeout 600 sh -c "while :; do :; done" & b=$!; "$@"; rc=$?; kill $b; exit $rc'
# shellcheck disable=SC2046,SC2086
run_case conformance-shm-offer-reuse-np3 bash -c "$with_burner" burner "$MPIRUN" $(mpiargs 3) \
    --mca coll_pnbc_oversubscribed 0 $SHM_SMALL_BOX --mca coll_pnbc_shm_shared_copy_min_bytes 100000000 \
    --mca coll_pnbc_bcast_algorithm pipeline "$(bin conformance)"
# The kernel refusing, as under Yama ptrace scope or seccomp (deny_cma.c
# preloaded on rank 0): DENY_CMA=write, its halves of shared copies fail and
# its receivers read them too (gather: its invited writes fail, it streams);
# DENY_CMA=read, it refuses offers, shared ones included, whose other half
# the sender had written already, and those messages stream.  Each case
# also asserts that the refusal happened.
DENY_SO="$TEST_BINDIR/deny_cma.so"
for deny in "write:helps refused by the kernel" "read:offers refused"; do
    # shellcheck disable=SC2046,SC2086
    run_case "conformance-shm-shared-deny${deny%%:*}-np3" bash -c "$expect_output" expect "deny${deny%%:*}" \
        "[1-9][0-9]* ${deny#*:}" "$MPIRUN" $(mpiargs 3) $SHM_SHARED --mca coll_pnbc_verbose 2 \
        "$here/rank0-env.sh" LD_PRELOAD="$DENY_SO" DENY_CMA="${deny%%:*}" -- "$(bin conformance)"
done
