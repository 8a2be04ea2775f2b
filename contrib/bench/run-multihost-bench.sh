#!/bin/bash
# Copyright (c) 2026 The pnbc developers
# SPDX-License-Identifier: BSD-3-Clause
#
# The benchmark suite (run-bench.sh) across two "hosts" on one machine:
# network namespaces joined by a veth pair, TCP between them, shared memory
# within each (test/multihost-hosts.sh; root, iproute2 and util-linux
# needed):
#
#   bash contrib/bench/run-multihost-bench.sh [--ranks NA,NB] [run-bench.sh options]
#   bash contrib/bench/run-multihost-bench.sh [--ranks NA,NB] --tune FILE
#   bash contrib/bench/run-multihost-bench.sh [--ranks NA,NB] --run ARGS...
#
# NA ranks on host A and NB on host B (default 2,2; ranks are numbered host
# by host); run-bench.sh gets --np NA+NB and the other options, e.g.
# --nonblocking --out DIR.  Without --impls it runs pnbc,libnbc,tuned
# (with --nonblocking pnbc-nb,libnbc-nb,tuned,pnbc): MPICH's launcher does
# not go through the hosts' agent.  --tune FILE runs the tuner
# (contrib/tuner/pnbc-tune.sh) across the hosts instead: its rules in FILE
# are marked for communicators spanning nodes.  --run ARGS... runs one
# mpirun across the hosts with ARGS after its -np and launch arguments
# (--mca mpi_yield_when_idle 1 included; e.g. --run --mca coll
# pnbc,basic,libnbc,tuned,self ./first_comm 200, first_comm built from
# first_comm.c with mpicc), the component path from PNBC_COMPONENT_PATH as
# run-bench.sh takes it.  Both hosts share the
# machine's cores, and TCP over the veth costs CPU time on both: compare
# numbers only within one run.  Exit status: the script's it runs; 77 when
# the hosts cannot be made.

set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MPIRUN=${MPIRUN:-mpirun}
MH_TIMEOUT=${MULTIHOST_TIMEOUT:-7200}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

ranks=2,2
tune=""
run=0
args=()
impls_given=0 nonblocking=0
while [ $# -gt 0 ]; do
    case $1 in
        --ranks) ranks=$2; shift ;;
        --tune) tune=$(realpath -m "$2"); shift ;;
        --run) run=1; shift; args=("$@"); break ;;
        --np) echo "run-multihost-bench.sh: give --ranks NA,NB instead of --np" >&2; exit 2 ;;
        *)
            [ "$1" = --impls ] && impls_given=1
            [ "$1" = --nonblocking ] && nonblocking=1
            args+=("$1") ;;
    esac
    shift
done
na=${ranks%,*}
nb=${ranks#*,}
case "$na,$nb" in
    *[!0-9,]* | ,* | *,) echo "run-multihost-bench.sh: --ranks NA,NB (numbers)" >&2; exit 2 ;;
esac
if [ "$impls_given" = 0 ] && [ "$run" = 0 ]; then
    if [ "$nonblocking" = 1 ]; then args+=(--impls pnbc-nb,libnbc-nb,tuned,pnbc)
    else args+=(--impls pnbc,libnbc,tuned); fi
fi

# shellcheck source=../../test/multihost-hosts.sh
. "$HERE/../../test/multihost-hosts.sh"
setup_hosts
mh_mpirun_wrapper "$work/mpirun" "$ipA:$na,$ipB:$nb"
echo "run-multihost-bench: $na rank(s) on $hostA, $nb on $hostB"
if [ "$run" = 1 ]; then
    # shellcheck source=mpi-env.sh
    . "$HERE/mpi-env.sh"
    pnbc_setup_component_path
    timeout -k 10 "$MH_TIMEOUT" "$work/mpirun" -np $((na + nb)) --mca mpi_yield_when_idle 1 \
        "${args[@]}" &
elif [ -n "$tune" ]; then
    MPIRUN=$work/mpirun timeout -k 10 "$MH_TIMEOUT" bash "$HERE/../tuner/pnbc-tune.sh" \
        $((na + nb)) "$tune" &
else
    MPIRUN=$work/mpirun timeout -k 10 "$MH_TIMEOUT" bash "$HERE/run-bench.sh" --np $((na + nb)) \
        "${args[@]}" &
fi
job=$!
wait "$job"
rc=$?
job=""
exit $rc
