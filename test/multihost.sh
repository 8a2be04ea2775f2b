#!/bin/bash
#
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# multihost.sh: pnbc across two "hosts" on one machine.
#
# Two network namespaces joined by a veth pair (one end in each, both named
# pnbcmh0, 10.213.X.1/24 and 10.213.X.2/24, loopback up), each "host" with
# its own UTS namespace and hostname (the namespace's name).  mpirun runs in
# host A and starts the orted of host B through multihost-agent.sh (its
# plm_rsh_agent), so Open MPI sees two nodes: 4 ranks, 2 per host (--host
# A:2,B:2), btl self,vader,tcp and the TCP traffic (btl and oob) on the veth.
# pnbc then has on-node peers (its shm transport) and off-node ones (the
# PML, over TCP) in every collective.
#
# Usage: multihost.sh [GROUP...]          (default: all groups)
#   locality     proves the setup: the ranks' processor names are the two
#                hostnames (0,1 on A; 2,3 on B), MPI_COMM_TYPE_SHARED splits
#                2 + 2, and an alltoall at 4 ranks (linear) committed with
#                coll_pnbc_verbose 2 has, on every rank, one shm schedule line
#                "1 sends, 1 receives" (its one on-node peer); the same probe
#                with the 4 ranks on host A must show "3 sends, 3 receives"
#                (the check can see the difference); and --map-by node (0, 2
#                on A; 1, 3 on B): one shm peer each again.  An 8 B bcast
#                by the default rules: binomial across the hosts, knomial
#                with the 4 ranks on A (the rules for communicators that
#                span nodes, coll_pnbc_select.c); every rank numbers the
#                ranks' nodes alike (0 0 1 1, 0 1 0 1; none on one host)
#   conformance  conformance, conf_gather, conf_alltoall, conf_reduce_scatter,
#                conf_neighbor, conf_inter (full runs)
#   algorithms   conformance --quick with forced allreduce/bcast/reduce/
#                barrier algorithms (4 runs: every algorithm of the four
#                once, segsize 64, shm folds in 1001-byte fragments),
#                conf_alltoall with pairwise, bruck + windowed_linear, and
#                shm boxes of 1 KiB streamed (single copy off), conf_gather
#                --quick with allgather neighbor_exchange / bruck and linear /
#                binomial gather+scatter, conf_reduce_scatter --quick with
#                linear scan/exscan
#   layout       --map-by node (ranks alternate: 0,2 on A, 1,3 on B):
#                conformance --quick, conf_alltoall, nbc_test 10; 3 ranks on
#                A + 1 on B: conformance --quick, conf_neighbor --quick
#   shm          shm_test 2000, shm_test 2000 fallback
#   part         part_test, part_mixed (mixed init, then long 5000)
#   chan         chan_test (data slack order mixed)
#   nbc          nbc_test 10, nbc_misc
#   example      contrib/examples/jacobi_persistent.c (built here with
#                $MPICC): pnbc and libnbc across the hosts, each converged and
#                agreeing with its blocking twin, the two solutions equal
#   all          all of the above
# Every run must exit 0 with no FAIL line, the agent must have started host
# B's orted, no process may be left in the namespaces, and no /dev/shm/pnbc.*
# directory of the two hostnames may be left after a run.
#
# Environment: MPIRUN (mpirun), MPICC (mpicc), TEST_BINDIR (this directory),
#   PNBC_COLL (pnbc,basic,libnbc,tuned,self), MULTIHOST_TIMEOUT (seconds per
#   mpirun, default 150), MULTIHOST_KEEP_LOGS=1 (keep the logs);
#   LD_LIBRARY_PATH and OMPI_MCA_mca_base_component_path are passed on (as
#   run-tests.sh sets them from PNBC_LIBRARY_PATH / PNBC_COMPONENT_PATH).
# Exit status: 0 all passed; 1 a failure; 77 SKIP (not root, or namespaces
# cannot be made: the reason is printed on a "SKIP multihost:" line).
# Clean-up (also on failure, SIGINT, SIGTERM): the jobs it started and every
# process left in its namespaces are killed, the veth and the namespaces
# deleted, and /dev/shm/pnbc.* (and Open MPI's vader segments and session
# directories) whose names contain its two hostnames removed.

set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
MPIRUN=${MPIRUN:-mpirun}
MPICC=${MPICC:-mpicc}
TEST_BINDIR=${TEST_BINDIR:-$here}
PNBC_COLL=${PNBC_COLL:-pnbc,basic,libnbc,tuned,self}
MH_TIMEOUT=${MULTIHOST_TIMEOUT:-150}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

all_groups="locality conformance algorithms layout shm part chan nbc example"
groups=()
for g in "${@:-all}"; do
    case $g in
        all) read -r -a groups <<<"$all_groups" ;;
        locality | conformance | algorithms | layout | shm | part | chan | nbc | example) groups+=("$g") ;;
        *) echo "usage: multihost.sh [all | $all_groups]..." >&2; exit 2 ;;
    esac
done

# shellcheck source=multihost-hosts.sh
. "$here/multihost-hosts.sh"

# mpirun arguments: 2 + 2 ranks on A and B (or HOSTS), TCP on the veth only
mpi_args() {
    printf '%s\n' -np 4 --oversubscribe --mca mpi_yield_when_idle 1 --mca coll "$PNBC_COLL"
    mh_launch_args "${1:-$ipA:2,$ipB:2}"
}

nfail=0
nrun=0
nskip=0
# after a run: nothing left in the namespaces nor in /dev/shm
check_leftovers() {
    local what=$1 left
    for _ in $(seq 1 20); do
        [ -z "$(ns_pids)" ] && break
        sleep 0.25
    done
    if [ -n "$(ns_pids)" ]; then
        echo "FAIL multihost $what: processes left in the namespaces after mpirun: $(ns_pids | tr '\n' ' ')"
        kill_ns_procs KILL
        nfail=$((nfail + 1))
    fi
    left=$(ls -d /dev/shm/pnbc."$hostA".* /dev/shm/pnbc."$hostB".* 2>/dev/null)
    if [ -n "$left" ]; then
        echo "FAIL multihost $what: shm directories left after the run: $left"
        rm -rf /dev/shm/pnbc."$hostA".* /dev/shm/pnbc."$hostB".*
        nfail=$((nfail + 1))
    fi
}

# run NAME [--hosts H] [--mca-extra ARGS...] -- PROGRAM ARGS...: a
# test program across the hosts; PASS if it exits 0, prints no FAIL line,
# and host B's orted was started by the agent
run() {
    local name=$1 hosts=""
    shift
    if [ "$1" = --hosts ]; then hosts=$2; shift 2; fi
    local extra=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do extra+=("$1"); shift; done
    shift
    local log=$work/$name.log t0 t1 rc why=""
    local args
    mapfile -t args < <(mpi_args "$hosts")
    : >"$agent_log"
    t0=$(date +%s.%N)
    echo "+ $MPIRUN ${args[*]} ${extra[*]} $*" >"$log.cmd"
    in_host_a "$log" "$MPIRUN" "${args[@]}" "${extra[@]}" "$@"
    rc=$?
    t1=$(date +%s.%N)
    nrun=$((nrun + 1))
    [ $rc -eq 0 ] || why="exit status $rc"
    [ $rc -eq 124 ] && why="TIMEOUT after ${MH_TIMEOUT}s"
    if [ -z "$why" ] && grep -qE '^(FAIL|WATCHDOG|CRASH)' "$log"; then why="FAIL lines"; fi
    if [ -z "$why" ] && [[ -z $hosts || $hosts == *"$ipB"* ]] && ! grep -q "host=$ipB " "$agent_log"; then
        why="the agent did not start host B's orted"
    fi
    LAST_LOG=$log
    local dur
    dur=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf("%.1f", b - a) }')
    if [ -z "$why" ]; then
        echo "ok   $name (${dur}s): $(tail -n 1 "$log" | cut -c1-110)"
    else
        echo "FAIL multihost $name (${dur}s): $why"
        cat "$log.cmd"
        grep -E '^(FAIL|WATCHDOG|CRASH)' "$log" | head -n 20 | sed 's/^/    | /'
        echo "    | ---- last lines:"
        grep -Ev '^(FAIL|WATCHDOG|CRASH)' "$log" | grep -v '^\s*$' | tail -n 15 | sed 's/^/    | /'
        nfail=$((nfail + 1))
    fi
    check_leftovers "$name"
    [ -z "$why" ]
}

bin() {
    if [ -x "$TEST_BINDIR/$1" ]; then echo "$TEST_BINDIR/$1"; else echo "$TEST_BINDIR/$1-NOT-BUILT"; fi
}

# ---- locality: the probe ----
write_probe() {
    cat >"$work/mh_probe.c" <<'EOF'
/* multihost probe: processor names, MPI_COMM_TYPE_SHARED, and a
 * persistent alltoall between markers (its pnbc verbose lines are on
 * stderr, like the markers, so they stay in order per rank). */
#include <mpi.h>
#include <mpi-ext.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static void on_alarm(int sig) { (void) sig; static const char m[] = "WATCHDOG mh_probe\n";
    (void) !write(1, m, sizeof m - 1); _exit(124); }
int main(int argc, char **argv)
{
    int rank, size, len, nsize, errs = 0;
    char name[MPI_MAX_PROCESSOR_NAME];
    signal(SIGALRM, on_alarm);
    alarm(60);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(name, &len);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nsize);
    MPI_Comm_free(&node);
    printf("MH-HOST rank %d host %s node_size %d\n", rank, name, nsize);
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    int sb[64], rb[64];
    MPI_Request req;
    fprintf(stderr, "MH-A2A-BEGIN rank %d\n", rank);
    fflush(stderr);
    MPIX_Alltoall_init(sb, 2, MPI_INT, rb, 2, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    for (int it = 0; it < 3; ++it) {
        for (int j = 0; j < size; ++j)
            for (int k = 0; k < 2; ++k) { sb[2 * j + k] = it * 1000 + rank * 100 + j * 10 + k; rb[2 * j + k] = -1; }
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (int j = 0; j < size; ++j)
            for (int k = 0; k < 2; ++k)
                if (rb[2 * j + k] != it * 1000 + j * 100 + rank * 10 + k) {
                    printf("FAIL mh_probe rank %d: alltoall start %d block %d[%d] = %d, expected %d\n", rank,
                           it, j, k, rb[2 * j + k], it * 1000 + j * 100 + rank * 10 + k);
                    errs++;
                }
    }
    MPI_Request_free(&req);
    fprintf(stderr, "MH-A2A-END rank %d\n", rank);
    fflush(stderr);
    /* an 8 B bcast by the default rules: its coll_pnbc_verbose line names
     * the algorithm chosen for this communicator's reach */
    double v = (0 == rank) ? 42.5 : -1;
    MPIX_Bcast_init(&v, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    MPI_Start(&req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Request_free(&req);
    if (42.5 != v) {
        printf("FAIL mh_probe rank %d: bcast gave %g, expected 42.5\n", rank, v);
        errs++;
    }
    MPI_Finalize();
    return errs ? 1 : 0;
}
EOF
    "$MPICC" -O1 -Wall -o "$work/mh_probe" "$work/mh_probe.c" >"$work/mh_probe.build" 2>&1
}

# check_probe LOG HOST0 HOST1 HOST2 HOST3 NODESIZE SENDS BCAST NODES: the
# probe's output (BCAST: the algorithm the rules choose for its 8 B bcast;
# NODES: the node of each rank as every rank numbers them for
# MPI_COMM_WORLD, "" on one host, where none is numbered)
check_probe() {
    local log=$1 bad=0 r line n
    local want_host=("$2" "$3" "$4" "$5") want_size=$6 want_n=$7 want_bcast=$8 want_nodes=$9
    for r in 0 1 2 3; do
        line=$(grep -m1 "MH-HOST rank $r " "$log")
        if [ "$line" != "MH-HOST rank $r host ${want_host[$r]} node_size $want_size" ] &&
           [ "${line#*\]<stdout>:}" != "MH-HOST rank $r host ${want_host[$r]} node_size $want_size" ]; then
            echo "FAIL multihost locality: rank $r: '$line', expected host ${want_host[$r]} node_size $want_size"
            bad=1
        fi
        # this rank's stderr lines between its markers (--tag-output: [1,R]<stderr>:)
        n=$(awk -v r="[1,$r]<stderr>:" 'index($0, r) == 1 { s = substr($0, length(r) + 1)
                 if (s ~ /^MH-A2A-BEGIN/) on = 1; else if (s ~ /^MH-A2A-END/) on = 0
                 else if (on && s ~ /coll:pnbc: shm cid/) print s }' "$log")
        echo "  rank $r (${want_host[$r]}): ${n:-no shm schedule line}"
        if [ "$(printf '%s\n' "$n" | grep -c 'shm cid')" != 1 ] ||
           ! printf '%s\n' "$n" | grep -q ": $want_n sends, $want_n receives"; then
            echo "FAIL multihost locality: rank $r: expected one shm schedule line with $want_n sends, $want_n receives"
            bad=1
        fi
        if ! grep -q "^\[1,$r\]<stderr>:.*bcast_init algorithm=$want_bcast " "$log"; then
            echo "FAIL multihost locality: rank $r: expected its 8 B bcast_init line to name $want_bcast"
            bad=1
        fi
        line=$(grep -m1 "^\[1,$r\]<stderr>:.*coll:pnbc: cid 0 rank $r: .* nodes, node of each rank:" "$log")
        if [ "${line##*node of each rank: }" != "$want_nodes" ] || { [ -z "$want_nodes" ] && [ -n "$line" ]; }; then
            echo "FAIL multihost locality: rank $r: node of each rank '${line##*node of each rank: }', expected '$want_nodes'"
            bad=1
        fi
    done
    return $bad
}

group_locality() {
    case ",$PNBC_COLL," in
        *,pnbc,*) ;;
        *)
            echo "SKIP multihost locality: PNBC_COLL=$PNBC_COLL does not select pnbc (its verbose lines are the proof)"
            nskip=$((nskip + 1))
            return
            ;;
    esac
    if ! write_probe; then
        echo "FAIL multihost locality: cannot build the probe with $MPICC:"
        sed 's/^/    | /' "$work/mh_probe.build"
        nfail=$((nfail + 1))
        return
    fi
    local v=(--tag-output --mca coll_pnbc_verbose 2 --mca coll_pnbc_alltoall_algorithm linear)
    echo "multihost locality: 2 + 2 ranks on $hostA and $hostB"
    if run locality-2hosts "${v[@]}" -- "$work/mh_probe"; then
        check_probe "$LAST_LOG" "$hostA" "$hostA" "$hostB" "$hostB" 2 1 binomial "0 0 1 1" || nfail=$((nfail + 1))
    fi
    echo "multihost locality: --map-by node (ranks 0, 2 on $hostA; 1, 3 on $hostB)"
    if run locality-map-by-node --map-by node "${v[@]}" -- "$work/mh_probe"; then
        check_probe "$LAST_LOG" "$hostA" "$hostB" "$hostA" "$hostB" 2 1 binomial "0 1 0 1" || nfail=$((nfail + 1))
    fi
    echo "multihost locality: control, 4 ranks on $hostA"
    if run locality-1host --hosts "$ipA:4" "${v[@]}" -- "$work/mh_probe"; then
        check_probe "$LAST_LOG" "$hostA" "$hostA" "$hostA" "$hostA" 4 3 knomial "" || nfail=$((nfail + 1))
    fi
}

group_conformance() {
    run conformance -- "$(bin conformance)"
    run conf_gather -- "$(bin conf_gather)"
    run conf_alltoall -- "$(bin conf_alltoall)"
    run conf_reduce_scatter -- "$(bin conf_reduce_scatter)"
    run conf_neighbor -- "$(bin conf_neighbor)"
    run conf_inter -- "$(bin conf_inter)"
}

# forced algorithms: every rank has on-node (shm) and off-node (pml)
# peers in every one of them; several collectives' choices per run
alg() {
    local a=() kv
    for kv in "$@"; do a+=(--mca "coll_pnbc_${kv%%=*}" "${kv#*=}"); done
    printf '%s\n' "${a[@]}"
}
group_algorithms() {
    local conf a
    conf=$(bin conformance)
    mapfile -t a < <(alg allreduce_algorithm=ring bcast_algorithm=knomial reduce_algorithm=pipeline segsize=64)
    run alg-ring-knomial-pipeline-seg64 "${a[@]}" -- "$conf" --quick
    mapfile -t a < <(alg allreduce_algorithm=rabenseifner bcast_algorithm=pipeline \
        reduce_algorithm=reduce_scatter_gather barrier_algorithm=dissemination)
    run alg-rabenseifner-pipeline-rsg "${a[@]}" -- "$conf" --quick
    mapfile -t a < <(alg allreduce_algorithm=recursive_doubling bcast_algorithm=binary_pipeline \
        reduce_algorithm=binomial shm_frag_bytes=1024 shm_stream_frag_bytes=1001)
    run alg-rd-binpipe-binomial-shmfold "${a[@]}" -- "$conf" --quick
    mapfile -t a < <(alg allreduce_algorithm=reduce_bcast bcast_algorithm=scatter_allgather \
        reduce_algorithm=linear barrier_algorithm=recursive_doubling)
    run alg-reducebcast-scatterallgather-linear "${a[@]}" -- "$conf" --quick
    mapfile -t a < <(alg alltoall_algorithm=pairwise alltoallv_algorithm=pairwise alltoallw_algorithm=pairwise)
    run alg-alltoall-pairwise "${a[@]}" -- "$(bin conf_alltoall)"
    mapfile -t a < <(alg alltoall_algorithm=bruck alltoallv_algorithm=windowed_linear \
        alltoallw_algorithm=windowed_linear)
    run alg-alltoall-bruck-windowed "${a[@]}" -- "$(bin conf_alltoall)"
    mapfile -t a < <(alg shm_frag_bytes=1024 shm_single_copy=0)
    run alg-alltoall-shm-stream "${a[@]}" -- "$(bin conf_alltoall)"
    mapfile -t a < <(alg allgather_algorithm=neighbor_exchange allgatherv_algorithm=linear \
        gather_algorithm=linear scatter_algorithm=linear)
    run alg-allgather-neighbor_exchange "${a[@]}" -- "$(bin conf_gather)" --quick
    mapfile -t a < <(alg allgather_algorithm=bruck gather_algorithm=binomial scatter_algorithm=binomial)
    run alg-allgather-bruck "${a[@]}" -- "$(bin conf_gather)" --quick
    mapfile -t a < <(alg scan_algorithm=linear exscan_algorithm=linear)
    run alg-scan-linear "${a[@]}" -- "$(bin conf_reduce_scatter)" --quick
}

# other layouts: ranks alternating between the hosts (--map-by node), and
# 3 + 1 (a host with one rank: no on-node peer at all)
group_layout() {
    run map-by-node-conformance --map-by node -- "$(bin conformance)" --quick
    run map-by-node-conf_alltoall --map-by node -- "$(bin conf_alltoall)"
    run map-by-node-nbc_test --map-by node -- "$(bin nbc_test)" 10
    run 3+1-conformance --hosts "$ipA:3,$ipB:1" -- "$(bin conformance)" --quick
    run 3+1-conf_neighbor --hosts "$ipA:3,$ipB:1" -- "$(bin conf_neighbor)" --quick
}

# the shm transport's own test with off-node peers: 2000 start+wait
# cycles, many requests in flight, no file left; odd ranks unable to
# create their files (both sides of those pairs must fall back to pml)
group_shm() {
    run shm_test -- "$(bin shm_test)" 2000
    run shm_test-fallback -- "$(bin shm_test)" 2000 fallback
}

group_part() {
    run part_test -- "$(bin part_test)"
    run part_mixed -- "$(bin part_mixed)"
    run part_mixed-long -- "$(bin part_mixed)" long 5000
}

group_chan() {
    run chan_test -- "$(bin chan_test)" data slack order mixed
}

group_nbc() {
    run nbc_test -- "$(bin nbc_test)" 10
    run nbc_misc -- "$(bin nbc_misc)"
}

# the example: pnbc and libnbc across the hosts, same solution
group_example() {
    local exe=$work/jacobi_persistent src=$top/contrib/examples/jacobi_persistent.c
    if ! "$MPICC" -O2 -Wall -o "$exe" "$src" -lm >"$work/jacobi.build" 2>&1; then
        echo "FAIL multihost example: cannot build $src with $MPICC:"
        sed 's/^/    | /' "$work/jacobi.build"
        nfail=$((nfail + 1))
        return
    fi
    local res_p="" res_l=""
    if run jacobi-pnbc -- "$exe" -n 32 -r 3 -l pnbc -q; then res_p=$(grep '^RESULT ' "$LAST_LOG" | tail -n 1); fi
    if PNBC_COLL=basic,libnbc,tuned,self run jacobi-libnbc -- "$exe" -n 32 -r 3 -l libnbc -q; then
        res_l=$(grep '^RESULT ' "$LAST_LOG" | tail -n 1)
    fi
    [ -n "$res_p" ] && [ -n "$res_l" ] || return
    field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
    local f ok=1
    for f in agree converged; do
        for r in "$res_p" "$res_l"; do
            [ "$(field "$r" "$f")" = yes ] || { echo "FAIL multihost example: $f=no in: $r"; ok=0; }
        done
    done
    if [ "$(field "$res_p" iters)" != "$(field "$res_l" iters)" ] ||
       ! awk -v x="$(field "$res_p" checksum)" -v y="$(field "$res_l" checksum)" \
           'BEGIN { d = x - y; if (d < 0) d = -d; s = (x < 0 ? -x : x); exit !(d <= 1e-10 * s) }'; then
        echo "FAIL multihost example: pnbc and libnbc solutions differ:"
        echo "    | $res_p"
        echo "    | $res_l"
        ok=0
    fi
    [ $ok -eq 1 ] && echo "  pnbc and libnbc agree: iters=$(field "$res_p" iters) checksum=$(field "$res_p" checksum)"
    [ $ok -eq 1 ] || nfail=$((nfail + 1))
}

setup_hosts
t_start=$(date +%s)
for g in "${groups[@]}"; do
    "group_$g"
done
echo "multihost: groups ${groups[*]}: $nrun runs, $nfail failure(s), $(($(date +%s) - t_start))s"
if [ $nfail -eq 0 ] && [ $nrun -eq 0 ] && [ $nskip -gt 0 ]; then
    exit 77
fi
[ $nfail -eq 0 ] && echo "PASS multihost ${groups[*]}"
[ $nfail -eq 0 ]
