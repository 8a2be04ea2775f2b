/*
 * smoke: one persistent barrier, bcast, reduce and allreduce on
 * MPI_COMM_WORLD, each started twice and checked.  Used by selection_test.sh
 * (with --mca coll_pnbc_verbose 1) and as a quick first case.
 */
#include "common.h"

#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, bad = 0;
    int ib[16], ir[16], is[16];
    double ds[8], dr[8];
    MPI_Request rq[4];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    watchdog_init("smoke", rank);
    watchdog_arm(60, "smoke");
    MPIX_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &rq[0]);
    MPIX_Bcast_init(ib, 16, MPI_INT, size - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[1]);
    MPIX_Reduce_init(is, ir, 16, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[2]);
    MPIX_Allreduce_init(ds, dr, 8, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[3]);
    for (int it = 0; it < 2; it++) {
        for (int i = 0; i < 16; i++) {
            ib[i] = rank == size - 1 ? 100 * it + i : -1;
            is[i] = rank + i + it;
            ir[i] = -1;
        }
        for (int i = 0; i < 8; i++) {
            ds[i] = (double)((rank + i + it) % size);
            dr[i] = -1;
        }
        MPI_Startall(4, rq);
        MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
        for (int i = 0; i < 16; i++) {
            if (ib[i] != 100 * it + i) bad = 1;
            if (rank == 0 && ir[i] != size * (i + it) + size * (size - 1) / 2) bad = 1;
        }
        for (int i = 0; i < 8; i++)
            if (dr[i] != (double)(size - 1)) bad = 1;
    }
    for (int i = 0; i < 4; i++) MPI_Request_free(&rq[i]);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) printf("%s smoke np=%d\n", bad ? "FAIL" : "PASS", size);
    MPI_Finalize();
    return bad;
}
