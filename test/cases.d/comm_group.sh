# shellcheck shell=bash
#
# Copyright (c) 2026 The pnbc developers.
# SPDX-License-Identifier: BSD-3-Clause
#
# cases.d/comm_group.sh: collectives on communicators made by
# MPI_Comm_create_from_group (Open MPI 5.0; 4.1 does not have the call:
# SKIP there), whose shared-memory key comes from the extended context id
# (comm_from_group.c).  comm-from-group-np2..4.
# (uses run_case, mpiargs, bin, MPIRUN, OMPI_INFO from run-tests.sh)

comm_group_series=$("${OMPI_INFO:-ompi_info}" --parsable 2>/dev/null |
    sed -n 's/^ompi:version:full:\([0-9]*\.[0-9]*\).*/\1/p' | head -n 1)
for comm_group_np in 2 3 4; do
    if [ "$comm_group_series" = 4.1 ]; then
        run_case "comm-from-group-np$comm_group_np" bash -c \
            'echo "SKIP Open MPI 4.1 has no MPI_Comm_create_from_group"; exit 77'
    else
        # shellcheck disable=SC2046
        run_case "comm-from-group-np$comm_group_np" "$MPIRUN" $(mpiargs $comm_group_np) \
            "$(bin comm_from_group)"
    fi
done
