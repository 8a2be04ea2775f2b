#!/usr/bin/env bash
#
# Copyright (c) 2026 The pnbc developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Install everything needed to build and test pnbc on Debian/Ubuntu.
# Idempotent: does nothing when all packages are already installed.
# Runs apt-get as root, or through sudo when not root.

set -euo pipefail

packages=(
    libopenmpi-dev openmpi-bin
    autoconf automake libtool make gcc perl
    valgrind
    libmpich-dev mpich
    gnuplot-nox
    iproute2 util-linux procps
    man-db
    pkg-config
    # the Debian package (debian/, test case deb-package-np2)
    build-essential debhelper dpkg-dev fakeroot lintian
)
# Debian 13 and later (Open MPI 5): the tests of Open MPI's own Fortran and
# Python bindings reaching pnbc.
if [ -r /etc/os-release ] && . /etc/os-release && [ "${ID:-}" = debian ] &&
   [ "${VERSION_ID:-0}" -ge 13 ] 2>/dev/null; then
    packages+=(gfortran python3-mpi4py python3-numpy)
fi

if ! command -v dpkg >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps.sh: not a Debian-like system (no dpkg/apt-get); install these by hand:" >&2
    echo "  ${packages[*]}" >&2
    exit 0
fi

missing=()
for p in "${packages[@]}"; do
    if ! dpkg -s "$p" 2>/dev/null | grep -q '^Status: install ok installed$'; then
        missing+=("$p")
    fi
done

if [ "${#missing[@]}" -eq 0 ]; then
    echo "install-deps.sh: all dependencies are installed"
    exit 0
fi

echo "install-deps.sh: installing: ${missing[*]}"

if [ "$(id -u)" -eq 0 ]; then
    as_root=()
elif command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
else
    echo "install-deps.sh: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
fi

"${as_root[@]}" apt-get update
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${packages[@]}" </dev/null
