#!/bin/sh
#
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# rank0-env.sh VAR=VALUE... -- PROGRAM [ARGS...]
# Run PROGRAM with the VAR=VALUE settings in world rank 0 of the job only
# (the other ranks keep the environment as it is): how a case gives one
# rank other MCA parameters or an LD_PRELOAD library without mpirun's
# multi-program form "A : B", which the mpirun of Open MPI 5.0.7 cannot run
# (it crashes: Open MPI issue 13303).
rank=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-}}
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    if [ "$rank" = 0 ]; then
        export "${1?}"
    fi
    shift
done
[ $# -gt 0 ] && shift
exec "$@"
