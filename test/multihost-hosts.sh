#!/bin/bash
#
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# multihost-hosts.sh: two "hosts" on one machine, sourced by
# test/multihost.sh (the tests) and contrib/bench/run-multihost-bench.sh
# (the benchmarks).  Sourcing it checks that the machine can make them
# (else prints "SKIP multihost: <reason>" and exits 77), names them after
# the caller's PID and sets the traps that clean up; setup_hosts makes
# them: network namespaces $nsA and $nsB joined by a veth pair (both ends
# named pnbcmh0, addresses $ipA and $ipB), each host's processes in a UTS
# namespace with the namespace's name as hostname; mpirun runs in host A
# and starts host B's orted through multihost-agent.sh.  Clean-up: the
# job in flight, every process left in the namespaces, the veth, the
# namespaces, and the two hostnames' files in /dev/shm and Open MPI's
# session directories.
#
# The caller sets MPIRUN and MH_TIMEOUT (seconds per in_host_a command).

mh_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

skip() {
    echo "SKIP multihost: $*"
    exit 77
}

# ---- can this machine make two hosts? ----
[ "$(id -u)" = 0 ] || skip "not root (network and UTS namespaces need CAP_SYS_ADMIN)"
for c in ip nsenter unshare hostname timeout; do
    command -v "$c" >/dev/null 2>&1 || skip "'$c' not found (packages iproute2, util-linux, hostname, coreutils)"
done
command -v "$MPIRUN" >/dev/null 2>&1 || skip "'$MPIRUN' not found"
if ! err=$(unshare --uts /bin/sh -c 'hostname pnbc-mh-probe' 2>&1); then
    skip "unshare --uts + hostname fails: ${err:-exit status $?}"
fi

# ---- names: the PID keeps parallel runs apart ----
tag=$$
nsA=pnbc-mh$tag-a
nsB=pnbc-mh$tag-b
hostA=$nsA
hostB=$nsB
ifname=pnbcmh0
net=10.213.$((tag % 254 + 1))
ipA=$net.1
ipB=$net.2
work=$(mktemp -d "${TMPDIR:-/tmp}/pnbc-multihost.XXXXXX") || exit 1
agent_log=$work/agent.log
made_ns=()
job=""
ran_cleanup=0

# ---- clean-up ----
ns_pids() {
    local ns
    for ns in "${made_ns[@]}"; do
        ip netns pids "$ns" 2>/dev/null
    done
}

kill_ns_procs() {
    local sig=$1 p
    for p in $(ns_pids); do
        kill "-$sig" "$p" 2>/dev/null
    done
}

cleanup() {
    [ $ran_cleanup -eq 1 ] && return
    ran_cleanup=1
    if [ -n "$job" ]; then
        kill -TERM "$job" 2>/dev/null        # timeout passes it on to mpirun
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            kill -0 "$job" 2>/dev/null || break
            sleep 0.5
        done
        kill -KILL "$job" 2>/dev/null
        wait "$job" 2>/dev/null
        job=""
    fi
    if [ -n "$(ns_pids)" ]; then
        kill_ns_procs TERM
        sleep 1
        kill_ns_procs KILL
        sleep 0.2
    fi
    local ns
    for ns in "${made_ns[@]}"; do
        ip -n "$ns" link del "$ifname" 2>/dev/null
        ip netns del "$ns" 2>/dev/null
    done
    made_ns=()
    local h
    for h in "$hostA" "$hostB"; do
        rm -rf /dev/shm/pnbc."$h".* /dev/shm/vader_segment."$h".* /tmp/ompi."$h".* \
            "${TMPDIR:-/tmp}"/ompi."$h".* 2>/dev/null
    done
    if [ "${MULTIHOST_KEEP_LOGS:-0}" = 1 ]; then
        echo "multihost: logs kept in $work"
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT
trap 'echo "multihost: interrupted"; cleanup; exit 130' INT
trap 'echo "multihost: terminated"; cleanup; exit 143' TERM HUP

# ---- the two hosts ----
setup_hosts() {
    local err ns
    # a namespace of this name can only be left by a killed run whose PID
    # was ours: no live run uses it
    for ns in "$nsA" "$nsB"; do
        [ -e "/run/netns/$ns" ] && ip netns del "$ns" 2>/dev/null
    done
    err=$(ip netns add "$nsA" 2>&1) || skip "ip netns add fails: $err"
    made_ns+=("$nsA")
    err=$(ip netns add "$nsB" 2>&1) || skip "ip netns add fails: $err"
    made_ns+=("$nsB")
    err=$(ip link add "$ifname" netns "$nsA" type veth peer name "$ifname" netns "$nsB" 2>&1) ||
        skip "cannot create a veth pair: $err"
    local ip
    for ns in "$nsA:$ipA" "$nsB:$ipB"; do
        ip=${ns#*:}
        ns=${ns%%:*}
        err=$( { ip -n "$ns" link set lo up && ip -n "$ns" addr add "$ip/24" dev "$ifname" &&
                 ip -n "$ns" link set "$ifname" up; } 2>&1) || skip "cannot configure $ifname in $ns: $err"
    done
    echo "multihost: host A $hostA ($ipA, netns $nsA), host B $hostB ($ipB, netns $nsB), veth $ifname"
}

export PNBC_MH_HOSTS="$ipA=$nsA=$hostA $ipB=$nsB=$hostB"
export PNBC_MH_AGENT_LOG=$agent_log

# mh_launch_args HOSTS: mpirun's arguments for ranks on the two hosts
# (HOSTS: "$ipA:2,$ipB:2" and the like), host B's orted started through
# the agent, TCP on the veth only, LD_LIBRARY_PATH and (when set) the
# component path passed on
mh_launch_args() {
    # shellcheck disable=SC2054
    printf '%s\n' --host "$1" --bind-to none \
        --mca plm_rsh_agent "bash $mh_here/multihost-agent.sh" --mca plm_rsh_no_tree_spawn 1 \
        --mca pml ob1 --mca btl self,vader,tcp \
        --mca btl_tcp_if_include "$ifname" --mca oob_tcp_if_include "$ifname" -x LD_LIBRARY_PATH
    if [ -n "${OMPI_MCA_mca_base_component_path:-}" ]; then
        printf '%s\n' -x OMPI_MCA_mca_base_component_path
    fi
}

# mh_mpirun_wrapper FILE HOSTS: write an executable FILE that runs
# "$MPIRUN ARGS..." in host A with mh_launch_args HOSTS before ARGS (the
# component path as set when it runs), for scripts that take their mpirun
# from $MPIRUN (contrib/bench/run-bench.sh)
mh_mpirun_wrapper() {
    local f=$1 a q=""
    while IFS= read -r a; do
        q+=" $(printf '%q' "$a")"
    done < <(OMPI_MCA_mca_base_component_path="" mh_launch_args "$2")
    cat >"$f" <<EOF
#!/bin/bash
# mpirun across the hosts of test/multihost-hosts.sh ($hostA, $hostB)
export LD_LIBRARY_PATH=\${LD_LIBRARY_PATH:-}
cp=()
[ -z "\${OMPI_MCA_mca_base_component_path:-}" ] || cp=(-x OMPI_MCA_mca_base_component_path)
exec nsenter --net=/run/netns/$nsA unshare --uts /bin/sh -c 'hostname "\$1" || exit 125; shift; exec "\$@"' \\
    multihost $hostA $(printf '%q' "$MPIRUN")$q "\${cp[@]}" "\$@"
EOF
    chmod +x "$f"
}

# in_host_a LOG CMD...: CMD in host A (its netns, a UTS namespace named
# hostA), under the timeout, in the background so that a signal reaches the
# trap at once; returns CMD's status
in_host_a() {
    local log=$1 rc
    shift
    export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
    # shellcheck disable=SC2016
    timeout -k 10 "$MH_TIMEOUT" nsenter --net="/run/netns/$nsA" unshare --uts \
        /bin/sh -c 'hostname "$1" || exit 125; shift; exec "$@"' multihost "$hostA" "$@" \
        >"$log" 2>&1 </dev/null &
    job=$!
    wait "$job"
    rc=$?
    job=""
    return $rc
}
