#!/bin/bash
#
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# multihost-agent.sh: the "ssh" of test/multihost.sh.  mpirun (plm/rsh,
# --mca plm_rsh_agent "bash multihost-agent.sh") calls it as
#     multihost-agent.sh [ssh options...] HOST WORD...
# to start an orted on HOST; like ssh, it joins the WORDs with spaces and
# runs them with /bin/sh -c, here inside the network namespace of HOST and a
# new UTS namespace whose hostname is that host's name.
#
# The hosts it knows come from the environment (set by multihost.sh and
# inherited through mpirun):
#     PNBC_MH_HOSTS      "IP=NETNS=HOSTNAME IP=NETNS=HOSTNAME ..."
#     PNBC_MH_AGENT_LOG  if set, one line per launch is appended to it
# An unknown HOST is an error (exit 255, as ssh does when it cannot connect).

set -u
# skip ssh-style options (plm_rsh_args); none take a value here
while [ $# -gt 0 ]; do
    case $1 in
        -*) shift ;;
        *) break ;;
    esac
done
if [ $# -lt 2 ]; then
    echo "multihost-agent: usage: multihost-agent.sh HOST COMMAND..." >&2
    exit 255
fi
host=$1
shift

ns=""
name=""
for entry in ${PNBC_MH_HOSTS:-}; do
    ip=${entry%%=*}
    rest=${entry#*=}
    if [ "$ip" = "$host" ] || [ "${rest#*=}" = "$host" ]; then
        ns=${rest%%=*}
        name=${rest#*=}
        break
    fi
done
if [ -z "$ns" ]; then
    echo "multihost-agent: unknown host '$host' (PNBC_MH_HOSTS='${PNBC_MH_HOSTS:-}')" >&2
    exit 255
fi
if [ ! -e "/run/netns/$ns" ]; then
    echo "multihost-agent: network namespace $ns of host $host does not exist" >&2
    exit 255
fi
if [ -n "${PNBC_MH_AGENT_LOG:-}" ]; then
    echo "launch host=$host netns=$ns hostname=$name" >>"$PNBC_MH_AGENT_LOG"
fi

# nsenter and unshare exec their command (no fork): the orted ends up as
# this process, so mpirun's signals and its wait reach it directly.
# shellcheck disable=SC2016
exec nsenter --net="/run/netns/$ns" unshare --uts \
    /bin/sh -c 'hostname "$1" || exit 255; exec /bin/sh -c "$2"' multihost-agent "$name" "$*"
