#!/usr/bin/env bash
#
# Copyright (c) 2026 The pnbc developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Run a command of this tree inside a Debian 13 (trixie) root, whose
# Open MPI is the 5.0 series -- how a Debian 12 machine tests pnbc on both
# series.  The root is made once with debootstrap from the Debian mirror
# this machine's apt already uses (about a minute), kept for later runs,
# and reused; /proc, /sys, /dev and /dev/shm are bound into it for the
# command and unbound afterwards (also on failure or interrupt).  The tree
# (its tracked and untracked-but-not-ignored files) is copied to /pnbc in
# the root, fresh each time, so nothing configured for the host's series
# is reused.
#
# Usage: contrib/debian13-root.sh [COMMAND...]
#   default COMMAND: bash contrib/test-all.sh (the README's test command,
#   as a newcomer on Debian 13 runs it: it installs what it needs there)
# Environment:
#   PNBC_DEBIAN13_ROOT  where the root lives (default /var/tmp/pnbc-debian13)
#   PNBC_DEBIAN13_MIRROR  the mirror to debootstrap from (default: the
#                       first Debian mirror of this machine's apt sources)
# Safe to run again: an existing root is reused (no second debootstrap),
# binds already in place are left as they are, one run at a time per root
# (a lock file next to it).
# Needs root (debootstrap, mount, chroot).  Exit status: the command's, or
# 2 when the root cannot be made.

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
root=${PNBC_DEBIAN13_ROOT:-/var/tmp/pnbc-debian13}
say() { echo "debian13-root: $*"; }

if [ "$(id -u)" -ne 0 ]; then
    say "needs root (debootstrap, mount, chroot)" >&2
    exit 2
fi

# The Debian mirror apt uses here: deb822 .sources files first, then
# one-line sources.list entries.
apt_mirror() {
    local f m
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        m=$(awk 'tolower($1) == "uris:" { for (i = 2; i <= NF; i++) print $i }' "$f" |
            grep -v -- '-security' | grep -m1 '/debian/*$') && { echo "${m%/}"; return 0; }
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        m=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' "$f" |
            grep -v -- '-security' | grep -m1 '/debian/*$') && { echo "${m%/}"; return 0; }
    done
    return 1
}

make_root() {
    if [ -f "$root/.pnbc-debian13-ready" ]; then
        return 0
    fi
    local mirror=${PNBC_DEBIAN13_MIRROR:-}
    if [ -z "$mirror" ] && ! mirror=$(apt_mirror); then
        say "no Debian mirror found in /etc/apt/sources.list*; set PNBC_DEBIAN13_MIRROR" >&2
        return 2
    fi
    if ! command -v debootstrap >/dev/null 2>&1; then
        say "installing debootstrap"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap </dev/null >/dev/null ||
            { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive \
                  apt-get install -y -q debootstrap </dev/null >/dev/null; } ||
            { say "cannot install debootstrap" >&2; return 2; }
    fi
    say "making a Debian 13 root in $root from $mirror (once; about a minute)"
    # A half-made root is removed first: never while something is mounted
    # under it (rm -rf would descend into the host's /proc, /sys, /dev).
    if [ -d "$root" ] && awk -v r="$root/" 'index($2 "/", r) == 1 { found = 1 } END { exit !found }' /proc/mounts; then
        say "$root is half made and has mounts under it; unmount them first" >&2
        return 2
    fi
    rm -rf "$root"
    mkdir -p "$root"
    local t0=$SECONDS
    if ! debootstrap --variant=minbase trixie "$root" "$mirror" >"$root.debootstrap.log" 2>&1; then
        tail -n 20 "$root.debootstrap.log" >&2
        say "debootstrap failed (log: $root.debootstrap.log)" >&2
        return 2
    fi
    touch "$root/.pnbc-debian13-ready"
    say "root made in $((SECONDS - t0)) s"
}

mounted=()
unmount_all() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        umount -l "${mounted[$i]}" 2>/dev/null || true
    done
    mounted=()
}

bind() {
    local d=$1
    mkdir -p "$root$d"
    if ! mountpoint -q "$root$d"; then
        mount --bind "$d" "$root$d"
        mounted+=("$root$d")
    fi
}

# One run at a time per root (the tree is copied to the same /pnbc).
mkdir -p "$(dirname "$root")"
exec 9>"$root.lock"
if ! flock -w 3600 9; then
    say "another run holds $root.lock" >&2
    exit 2
fi
make_root || exit 2
trap unmount_all EXIT
trap 'unmount_all; exit 130' INT TERM
for d in /proc /sys /dev /dev/shm; do
    bind "$d"
done
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
cp /etc/hosts "$root/etc/hosts" 2>/dev/null || true

# The tree, fresh: git's files when it is a git checkout, else all of it.
rm -rf "$root/pnbc"
mkdir -p "$root/pnbc"
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
    (cd "$top" && git ls-files -co --exclude-standard -z | tar --null -cf - -T - 2>/dev/null) |
        tar -xf - -C "$root/pnbc"
else
    tar -C "$top" --exclude=./config.status -cf - . | tar -xf - -C "$root/pnbc"
fi

if [ $# -eq 0 ]; then
    set -- bash contrib/test-all.sh
fi
say "running in the Debian 13 root: $*"
set +e
chroot "$root" /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    ${CI:+CI=$CI} ${PNBC_MAKE_JOBS:+PNBC_MAKE_JOBS=$PNBC_MAKE_JOBS} \
    ${TEST_BUDGET:+TEST_BUDGET=$TEST_BUDGET} ${TEST_TIMEOUT:+TEST_TIMEOUT=$TEST_TIMEOUT} \
    bash -c 'cd /pnbc && "$@"' pnbc-root "$@"
rc=$?
set -e
exit $rc
