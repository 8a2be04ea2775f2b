# shellcheck shell=bash
#
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# cases.d/multihost.sh: pnbc across two "hosts" on this machine (two
# network namespaces joined by a veth pair, each with its own hostname;
# mpirun in host A starts host B's orted through test/multihost-agent.sh),
# 4 ranks, 2 per host: every collective has on-node peers (pnbc's shm
# transport) and off-node ones (the PML over TCP).  Sourced by
# run-tests.sh (uses its run_case, MPIRUN, TEST_BINDIR, PNBC_COLL and the
# exported LD_LIBRARY_PATH / OMPI_MCA_mca_base_component_path).  One case
# per group of test/multihost.sh (see its header), each with its own pair
# of namespaces:
#   multihost-locality     hostnames, MPI_COMM_TYPE_SHARED, one shm peer per
#                          rank in a 4-rank alltoall (coll_pnbc_verbose 2);
#                          (also --map-by node); control: 3 with the 4 ranks
#                          on one host
#   multihost-conformance  conformance, conf_gather, conf_alltoall,
#                          conf_reduce_scatter, conf_neighbor, conf_inter
#   multihost-algorithms   forced algorithms (conformance/conf_* --quick)
#   multihost-layout       --map-by node (0,2 on A; 1,3 on B) and 3 + 1 ranks
#   multihost-shm          shm_test 2000, and its fallback mode
#   multihost-part         part_test, part_mixed (+ long 5000)
#   multihost-chan         chan_test
#   multihost-nbc          nbc_test 10, nbc_misc
#   multihost-example      contrib/examples/jacobi_persistent.c, pnbc and
#                          libnbc, same solution
# Each SKIPs (with the reason) when namespaces cannot be made: not root,
# no ip/nsenter/unshare, "ip netns add" or "unshare --uts" refused.

mh_script=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/multihost.sh
for mh_group in locality conformance algorithms layout shm part chan nbc example; do
    run_case "multihost-$mh_group" env MPIRUN="$MPIRUN" TEST_BINDIR="$TEST_BINDIR" PNBC_COLL="$PNBC_COLL" \
        bash "$mh_script" "$mh_group"
done
unset mh_group mh_script
