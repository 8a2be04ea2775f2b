/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * mpi4_names: an MPI-4 program that uses the MPI-4 names unchanged (it
 * includes only <mpi.h>).  Under an MPI-4 library (MPICH 4) it builds as
 * it is; under Open MPI 4.1 it builds only with pnbc's wrapper compiler
 * (mpicc-pnbc) or with "pkg-config --cflags --libs pnbc", which map the
 * names onto Open MPI's and pnbc's MPIX_ functions.
 *
 * It runs all 22 MPI_<Coll>_init (small int data, the neighbourhood ones
 * on a periodic 1-D Cartesian ring), one epoch at a time and then all
 * together in one MPI_Startall, and partitioned exchanges (MPI_Psend_init,
 * MPI_Precv_init, MPI_Pready, MPI_Pready_range, MPI_Pready_list,
 * MPI_Parrived) around the ring, started together with a persistent
 * collective.  Every result is compared with values computed locally.
 *
 * Usage: mpirun -np N mpi4_names      (N = 1..8; prints PASS or FAIL lines)
 */

#include <mpi.h>
#include <stdio.h>
#include <string.h>

#if MPI_VERSION < 4 && !defined(PNBC_MPI4_H) && !(defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#error "this MPI has no MPI-4 names: build with mpicc-pnbc or $(pkg-config --cflags --libs pnbc)"
#endif

enum { MAXP = 8, C = 3, NCOLL = 22, EPOCHS = 3, SENT = -7777 };

static int rank, n, left, right, nerr;
static MPI_Comm ring;

static void chk(int rc, const char *what, int line)
{
    if (rc != MPI_SUCCESS) {
        char s[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, s, &len);
        fprintf(stderr, "FAIL rank %d: %s (line %d): %s\n", rank, what, line, s);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}
#define CHK(call) chk((call), #call, __LINE__)

/* The value a process `src` puts at position (b, k) in epoch `it`. */
static int val(int src, int b, int k, int it)
{
    return 1 + it * 100000 + src * 10000 + b * 100 + k;
}

static void expect(const char *what, int it, int pos, int got, int want)
{
    if (got == want)
        return;
    if (nerr < 30)
        fprintf(stderr, "FAIL rank %d: %s epoch %d [%d]: got %d, expected %d\n",
                rank, what, it, pos, got, want);
    nerr++;
}

static void fill(int *a, int len, int v)
{
    for (int i = 0; i < len; i++)
        a[i] = v;
}

/* Per-peer counts of the v/w variants (small, different per pair). */
static int cnt_v(int p) { return p % 3 + 1; }
static int cnt_a2av(int s, int d) { return (s + 2 * d) % 3 + 1; }
static int cnt_a2aw(int s, int d) { return (2 * s + d) % 2 + 1; }
static int cnt_rs(int p) { return p % 2 + 1; }
/* Neighbour counts: dir 0 = towards left, dir 1 = towards right.  With
 * n < 3 both neighbours are one process, so both directions carry the
 * same amount (and the same values) and the result is unambiguous. */
static int cnt_nb(int dir) { return n < 3 ? 2 : dir + 1; }
static int nbdir(int dir) { return n < 3 ? 0 : dir; }

/* ---- buffers of the 22 persistent collectives ---- */
static int bc[C], red_s[C], red_r[C], ar_s[C], ar_r[C];
static int ga_s[C], ga_r[MAXP * C], gv_s[3], gv_r[MAXP * 5];
static int gv_cnt[MAXP], gv_dsp[MAXP];
static int sc_s[MAXP * C], sc_r[C], sv_s[MAXP * 5], sv_r[3];
static int ag_s[C], ag_r[MAXP * C], agv_s[3], agv_r[MAXP * 5];
static int a2a_s[MAXP * C], a2a_r[MAXP * C];
static int a2av_s[MAXP * 4], a2av_r[MAXP * 4];
static int a2av_sc[MAXP], a2av_sd[MAXP], a2av_rc[MAXP], a2av_rd[MAXP];
static int a2aw_s[MAXP * 3], a2aw_r[MAXP * 3];
static int a2aw_sc[MAXP], a2aw_sd[MAXP], a2aw_rc[MAXP], a2aw_rd[MAXP];
static MPI_Datatype a2aw_t[MAXP];
static int rs_s[MAXP * 2], rs_r[2], rs_cnt[MAXP], rsb_s[MAXP * C], rsb_r[C];
static int scan_s[C], scan_r[C], exs_s[C], exs_r[C];
static int nag_s[C], nag_r[2 * C], nagv_s[3], nagv_r[2 * 3 + 2];
static int nagv_cnt[2], nagv_dsp[2];
static int na2a_s[2 * C], na2a_r[2 * C];
static int na2av_s[4 + 2], na2av_r[4 + 2];
static int na2av_sc[2], na2av_sd[2], na2av_rc[2], na2av_rd[2];
static int na2aw_s[4 + 2], na2aw_r[4 + 2];
static int na2aw_sc[2], na2aw_rc[2];
static MPI_Aint na2aw_sd[2], na2aw_rd[2];
static MPI_Datatype na2aw_t[2];

static MPI_Request creq[NCOLL];
/* The 22 MPI-4 names, in creq[] order (also compared with pnbc's list). */
static const char *cname[NCOLL] = {
    "MPI_Barrier_init", "MPI_Bcast_init", "MPI_Reduce_init", "MPI_Allreduce_init",
    "MPI_Gather_init", "MPI_Gatherv_init", "MPI_Scatter_init", "MPI_Scatterv_init",
    "MPI_Allgather_init", "MPI_Allgatherv_init", "MPI_Alltoall_init",
    "MPI_Alltoallv_init", "MPI_Alltoallw_init", "MPI_Reduce_scatter_init",
    "MPI_Reduce_scatter_block_init", "MPI_Scan_init", "MPI_Exscan_init",
    "MPI_Neighbor_allgather_init", "MPI_Neighbor_allgatherv_init",
    "MPI_Neighbor_alltoall_init", "MPI_Neighbor_alltoallv_init",
    "MPI_Neighbor_alltoallw_init"};

/* Displacements of variable blocks with a one-element gap after each. */
static void gapped(const int *cnt, int *dsp, int m)
{
    int off = 0;
    for (int i = 0; i < m; i++) {
        dsp[i] = off;
        off += cnt[i] + 1;
    }
}

static void init_collectives(void)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int i, off;

    for (i = 0; i < n; i++)
        gv_cnt[i] = cnt_v(i);
    gapped(gv_cnt, gv_dsp, n);
    for (i = 0; i < n; i++) {
        a2av_sc[i] = cnt_a2av(rank, i);
        a2av_rc[i] = cnt_a2av(i, rank);
    }
    gapped(a2av_sc, a2av_sd, n);
    gapped(a2av_rc, a2av_rd, n);
    /* alltoallw: byte displacements, peers packed in reverse order */
    for (i = n - 1, off = 0; i >= 0; i--) {
        a2aw_sc[i] = cnt_a2aw(rank, i);
        a2aw_sd[i] = off * (int) sizeof(int);
        off += a2aw_sc[i];
    }
    for (i = n - 1, off = 0; i >= 0; i--) {
        a2aw_rc[i] = cnt_a2aw(i, rank);
        a2aw_rd[i] = off * (int) sizeof(int);
        off += a2aw_rc[i];
        a2aw_t[i] = MPI_INT;
    }
    for (i = 0; i < n; i++)
        rs_cnt[i] = cnt_rs(i);
    /* neighbours of a 1-D Cartesian ring: 0 = left, 1 = right */
    nagv_cnt[0] = cnt_v(left);
    nagv_cnt[1] = cnt_v(right);
    gapped(nagv_cnt, nagv_dsp, 2);
    for (i = 0; i < 2; i++) {
        na2av_sc[i] = cnt_nb(i);
        na2av_rc[i] = cnt_nb(1 - i); /* the neighbour's opposite direction */
        na2aw_sc[i] = na2av_sc[i];
        na2aw_rc[i] = na2av_rc[i];
        na2aw_t[i] = MPI_INT;
    }
    gapped(na2av_sc, na2av_sd, 2);
    gapped(na2av_rc, na2av_rd, 2);
    /* alltoallw neighbour blocks reversed: right first */
    na2aw_sd[1] = 0;
    na2aw_sd[0] = (MPI_Aint) (na2aw_sc[1] * sizeof(int));
    na2aw_rd[1] = 0;
    na2aw_rd[0] = (MPI_Aint) (na2aw_rc[1] * sizeof(int));

    MPI_Info in = MPI_INFO_NULL;
    CHK(MPI_Barrier_init(w, in, &creq[0]));
    CHK(MPI_Bcast_init(bc, C, MPI_INT, n - 1, w, in, &creq[1]));
    CHK(MPI_Reduce_init(red_s, red_r, C, MPI_INT, MPI_SUM, 0, w, in, &creq[2]));
    CHK(MPI_Allreduce_init(ar_s, ar_r, C, MPI_INT, MPI_MAX, w, in, &creq[3]));
    CHK(MPI_Gather_init(ga_s, C, MPI_INT, ga_r, C, MPI_INT, 1 % n, w, in, &creq[4]));
    CHK(MPI_Gatherv_init(gv_s, cnt_v(rank), MPI_INT, gv_r, gv_cnt, gv_dsp, MPI_INT,
                         0, w, in, &creq[5]));
    CHK(MPI_Scatter_init(sc_s, C, MPI_INT, sc_r, C, MPI_INT, 0, w, in, &creq[6]));
    CHK(MPI_Scatterv_init(sv_s, gv_cnt, gv_dsp, MPI_INT, sv_r, cnt_v(rank), MPI_INT,
                          n - 1, w, in, &creq[7]));
    CHK(MPI_Allgather_init(ag_s, C, MPI_INT, ag_r, C, MPI_INT, w, in, &creq[8]));
    CHK(MPI_Allgatherv_init(agv_s, cnt_v(rank), MPI_INT, agv_r, gv_cnt, gv_dsp, MPI_INT,
                            w, in, &creq[9]));
    CHK(MPI_Alltoall_init(a2a_s, C, MPI_INT, a2a_r, C, MPI_INT, w, in, &creq[10]));
    CHK(MPI_Alltoallv_init(a2av_s, a2av_sc, a2av_sd, MPI_INT, a2av_r, a2av_rc, a2av_rd,
                           MPI_INT, w, in, &creq[11]));
    CHK(MPI_Alltoallw_init(a2aw_s, a2aw_sc, a2aw_sd, a2aw_t, a2aw_r, a2aw_rc, a2aw_rd,
                           a2aw_t, w, in, &creq[12]));
    CHK(MPI_Reduce_scatter_init(rs_s, rs_r, rs_cnt, MPI_INT, MPI_SUM, w, in, &creq[13]));
    CHK(MPI_Reduce_scatter_block_init(rsb_s, rsb_r, C, MPI_INT, MPI_MIN, w, in, &creq[14]));
    CHK(MPI_Scan_init(scan_s, scan_r, C, MPI_INT, MPI_SUM, w, in, &creq[15]));
    CHK(MPI_Exscan_init(exs_s, exs_r, C, MPI_INT, MPI_SUM, w, in, &creq[16]));
    CHK(MPI_Neighbor_allgather_init(nag_s, C, MPI_INT, nag_r, C, MPI_INT, ring, in,
                                    &creq[17]));
    CHK(MPI_Neighbor_allgatherv_init(nagv_s, cnt_v(rank), MPI_INT, nagv_r, nagv_cnt,
                                     nagv_dsp, MPI_INT, ring, in, &creq[18]));
    CHK(MPI_Neighbor_alltoall_init(na2a_s, C, MPI_INT, na2a_r, C, MPI_INT, ring, in,
                                   &creq[19]));
    CHK(MPI_Neighbor_alltoallv_init(na2av_s, na2av_sc, na2av_sd, MPI_INT, na2av_r,
                                    na2av_rc, na2av_rd, MPI_INT, ring, in, &creq[20]));
    CHK(MPI_Neighbor_alltoallw_init(na2aw_s, na2aw_sc, na2aw_sd, na2aw_t, na2aw_r,
                                    na2aw_rc, na2aw_rd, na2aw_t, ring, in, &creq[21]));
}

/* Send buffers for epoch `it`; receive buffers to the sentinel. */
static void fill_collectives(int it)
{
    int i, k;
    for (k = 0; k < C; k++) {
        bc[k] = rank == n - 1 ? val(rank, 0, k, it) : SENT;
        red_s[k] = ar_s[k] = ga_s[k] = ag_s[k] = val(rank, 0, k, it);
        scan_s[k] = exs_s[k] = nag_s[k] = val(rank, 0, k, it);
    }
    fill(red_r, C, SENT); fill(ar_r, C, SENT); fill(ga_r, MAXP * C, SENT);
    fill(gv_r, MAXP * 5, SENT); fill(sc_r, C, SENT); fill(sv_r, 3, SENT);
    fill(ag_r, MAXP * C, SENT); fill(agv_r, MAXP * 5, SENT);
    fill(a2a_r, MAXP * C, SENT); fill(a2av_r, MAXP * 4, SENT);
    fill(a2aw_r, MAXP * 3, SENT); fill(rs_r, 2, SENT); fill(rsb_r, C, SENT);
    fill(scan_r, C, SENT); fill(exs_r, C, SENT); fill(nag_r, 2 * C, SENT);
    fill(nagv_r, 2 * 3 + 2, SENT); fill(na2a_r, 2 * C, SENT);
    fill(na2av_r, 6, SENT); fill(na2aw_r, 6, SENT);
    for (k = 0; k < cnt_v(rank); k++)
        gv_s[k] = agv_s[k] = nagv_s[k] = val(rank, 0, k, it);
    for (i = 0; i < n; i++) {
        for (k = 0; k < C; k++) {
            sc_s[i * C + k] = val(rank, i, k, it);
            a2a_s[i * C + k] = val(rank, i, k, it);
            rsb_s[i * C + k] = val(rank, i, k, it);
        }
        for (k = 0; k < gv_cnt[i]; k++)
            sv_s[gv_dsp[i] + k] = val(rank, i, k, it);
        for (k = 0; k < a2av_sc[i]; k++)
            a2av_s[a2av_sd[i] + k] = val(rank, i, k, it);
        for (k = 0; k < a2aw_sc[i]; k++)
            a2aw_s[a2aw_sd[i] / (int) sizeof(int) + k] = val(rank, i, k, it);
    }
    for (i = 0, k = 0; i < n; i++)
        for (int j = 0; j < rs_cnt[i]; j++, k++)
            rs_s[k] = val(rank, i, j, it);
    for (i = 0; i < 2; i++)
        for (k = 0; k < C; k++)
            na2a_s[i * C + k] = val(rank, nbdir(i), k, it);
    for (i = 0; i < 2; i++)
        for (k = 0; k < na2av_sc[i]; k++) {
            na2av_s[na2av_sd[i] + k] = val(rank, nbdir(i), k, it);
            na2aw_s[na2aw_sd[i] / (MPI_Aint) sizeof(int) + k] = val(rank, nbdir(i), k, it);
        }
}

/* Sum over the processes s in [lo, hi) of val(s, b, k, it). */
static int sum(int lo, int hi, int b, int k, int it)
{
    int t = 0;
    for (int s = lo; s < hi; s++)
        t += val(s, b, k, it);
    return t;
}

/* Receive block of `cnt` elements from `src` (block index b) at a[0..];
 * the element after it (gap) must stay untouched when `gap` is set. */
static void block(const char *w, int it, const int *a, int src, int b, int cnt, int gap)
{
    for (int k = 0; k < cnt; k++)
        expect(w, it, k, a[k], val(src, b, k, it));
    if (gap)
        expect(w, it, cnt, a[cnt], SENT);
}

static void check_collectives(int it)
{
    int i, k;
    for (k = 0; k < C; k++) {
        expect("MPI_Bcast_init", it, k, bc[k], val(n - 1, 0, k, it));
        if (rank == 0)
            expect("MPI_Reduce_init", it, k, red_r[k], sum(0, n, 0, k, it));
        expect("MPI_Allreduce_init", it, k, ar_r[k], val(n - 1, 0, k, it));
        expect("MPI_Scatter_init", it, k, sc_r[k], val(0, rank, k, it));
        expect("MPI_Reduce_scatter_block_init", it, k, rsb_r[k], val(0, rank, k, it));
        expect("MPI_Scan_init", it, k, scan_r[k], sum(0, rank + 1, 0, k, it));
        if (rank > 0)
            expect("MPI_Exscan_init", it, k, exs_r[k], sum(0, rank, 0, k, it));
    }
    for (i = 0; i < n; i++) {
        if (rank == 1 % n)
            block("MPI_Gather_init", it, ga_r + i * C, i, 0, C, 0);
        if (rank == 0)
            block("MPI_Gatherv_init", it, gv_r + gv_dsp[i], i, 0, gv_cnt[i], 1);
        block("MPI_Allgather_init", it, ag_r + i * C, i, 0, C, 0);
        block("MPI_Allgatherv_init", it, agv_r + gv_dsp[i], i, 0, gv_cnt[i], 1);
        block("MPI_Alltoall_init", it, a2a_r + i * C, i, rank, C, 0);
        block("MPI_Alltoallv_init", it, a2av_r + a2av_rd[i], i, rank, a2av_rc[i], 1);
        block("MPI_Alltoallw_init", it, a2aw_r + a2aw_rd[i] / (int) sizeof(int), i, rank,
              a2aw_rc[i], 0);
    }
    block("MPI_Scatterv_init", it, sv_r, n - 1, rank, cnt_v(rank), 0);
    for (k = 0; k < rs_cnt[rank]; k++)
        expect("MPI_Reduce_scatter_init", it, k, rs_r[k], sum(0, n, rank, k, it));
    /* neighbours: block 0 from the left, block 1 from the right; a block
     * sent towards direction d arrives from the opposite one */
    block("MPI_Neighbor_allgather_init", it, nag_r, left, 0, C, 0);
    block("MPI_Neighbor_allgather_init", it, nag_r + C, right, 0, C, 0);
    block("MPI_Neighbor_allgatherv_init", it, nagv_r + nagv_dsp[0], left, 0, nagv_cnt[0], 1);
    block("MPI_Neighbor_allgatherv_init", it, nagv_r + nagv_dsp[1], right, 0, nagv_cnt[1], 1);
    block("MPI_Neighbor_alltoall_init", it, na2a_r, left, nbdir(1), C, 0);
    block("MPI_Neighbor_alltoall_init", it, na2a_r + C, right, nbdir(0), C, 0);
    block("MPI_Neighbor_alltoallv_init", it, na2av_r + na2av_rd[0], left, nbdir(1),
          na2av_rc[0], 1);
    block("MPI_Neighbor_alltoallv_init", it, na2av_r + na2av_rd[1], right, nbdir(0),
          na2av_rc[1], 1);
    block("MPI_Neighbor_alltoallw_init", it, na2aw_r + na2aw_rd[0] / (MPI_Aint) sizeof(int),
          left, nbdir(1), na2aw_rc[0], 0);
    block("MPI_Neighbor_alltoallw_init", it, na2aw_r + na2aw_rd[1] / (MPI_Aint) sizeof(int),
          right, nbdir(0), na2aw_rc[1], 0);
}

static void collectives(void)
{
    MPI_Status st[NCOLL];

    init_collectives();
    for (int it = 0; it < EPOCHS; it++) {
        fill_collectives(it);
        if (it < EPOCHS - 1) {
            for (int c = 0; c < NCOLL; c++) { /* one at a time */
                chk(MPI_Start(&creq[c]), cname[c], __LINE__);
                chk(MPI_Wait(&creq[c], &st[0]), cname[c], __LINE__);
            }
        } else { /* all 22 in flight at once */
            CHK(MPI_Startall(NCOLL, creq));
            CHK(MPI_Waitall(NCOLL, creq, st));
        }
        check_collectives(it);
    }
    for (int c = 0; c < NCOLL; c++)
        CHK(MPI_Request_free(&creq[c]));
}

/* ---- partitioned communication ----
 * A: to the right on MPI_COMM_WORLD, 8 send partitions of 3 ints received
 *    as 4 partitions of 6 ints (receive partition j = send partitions
 *    2j and 2j+1).
 * B: to the left on the ring communicator, 4 partitions of 5 ints.
 * Both pairs are started in one MPI_Startall with a persistent allreduce.
 * Half the send partitions are readied, the receive partitions polled
 * once (MPI_Parrived), the rest readied, then every receive partition
 * polled until it has arrived and checked at once; every epoch uses
 * MPI_Pready, MPI_Pready_range and MPI_Pready_list. */
enum { PA = 8, CA = 3, PRA = 4, CRA = 6, PB = 4, CB = 5 };

/* Receive partition rp (c_recv elements) of a message from src sent in
 * partitions of c_send elements. */
static void check_part(const char *w, int it, const int *a, int src, int c_send, int rp,
                       int c_recv)
{
    for (int e = 0; e < c_recv; e++) {
        int g = rp * c_recv + e; /* element index in the whole message */
        expect(w, it, g, a[g], val(src, g / c_send, g % c_send, it));
    }
}

/* One MPI_Parrived on each receive partition not seen yet; the ones that
 * have arrived are checked.  Returns how many arrived. */
static int poll_part(const char *w, int it, MPI_Request r, int *got, const int *a, int src,
                     int c_send, int parts, int c_recv)
{
    int j, flag, now = 0;
    for (j = 0; j < parts; j++) {
        if (got[j])
            continue;
        flag = 0;
        CHK(MPI_Parrived(r, j, &flag));
        if (flag) {
            got[j] = 1;
            now++;
            check_part(w, it, a, src, c_send, j, c_recv);
        }
    }
    return now;
}

static void ready_a(MPI_Request s, int it, int second_half)
{
    int l0[] = {2, 0, 3, 1}, l1[] = {7, 4}, l2[] = {5, 4};
    if (!second_half) {
        if (it % 3 == 0)
            for (int i = 3; i >= 0; i--)
                CHK(MPI_Pready(i, s));
        else if (it % 3 == 1)
            CHK(MPI_Pready_range(0, 3, s));
        else
            CHK(MPI_Pready_list(4, l0, s));
    } else if (it % 3 == 0) {
        CHK(MPI_Pready_range(6, 7, s));
        CHK(MPI_Pready_list(2, l2, s));
    } else if (it % 3 == 1) {
        CHK(MPI_Pready_list(2, l1, s));
        CHK(MPI_Pready(6, s));
        CHK(MPI_Pready(5, s));
    } else {
        CHK(MPI_Pready(4, s));
        CHK(MPI_Pready_range(5, 7, s));
    }
}

static void ready_b(MPI_Request s, int it, int second_half)
{
    int l[] = {1, 0}, l2[] = {3, 2};
    if (!second_half) {
        if (it % 3 == 0)
            CHK(MPI_Pready_list(2, l, s));
        else if (it % 3 == 1) {
            CHK(MPI_Pready_range(0, 0, s));
            CHK(MPI_Pready(1, s));
        } else
            CHK(MPI_Pready_range(0, 1, s));
    } else if (it % 3 == 0) {
        CHK(MPI_Pready(3, s));
        CHK(MPI_Pready_range(2, 2, s));
    } else if (it % 3 == 1) {
        CHK(MPI_Pready_range(2, 3, s));
    } else {
        CHK(MPI_Pready_list(2, l2, s));
    }
}

static void partitioned(void)
{
    static int a_s[PA * CA], a_r[PA * CA], b_s[PB * CB], b_r[PB * CB];
    int ar_in, ar_out, got_a[PRA], got_b[PB], seen, j, e;
    MPI_Request req[5];
    MPI_Status st[5];

    /* receives initialised first everywhere: init must not wait for the peer */
    CHK(MPI_Precv_init(a_r, PRA, CRA, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_INFO_NULL,
                       &req[1]));
    CHK(MPI_Precv_init(b_r, PB, CB, MPI_INT, right, 9, ring, MPI_INFO_NULL, &req[4]));
    CHK(MPI_Psend_init(a_s, PA, CA, MPI_INT, right, 7, MPI_COMM_WORLD, MPI_INFO_NULL,
                       &req[0]));
    CHK(MPI_Allreduce_init(&ar_in, &ar_out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                           MPI_INFO_NULL, &req[2]));
    CHK(MPI_Psend_init(b_s, PB, CB, MPI_INT, left, 9, ring, MPI_INFO_NULL, &req[3]));

    for (int it = 0; it < EPOCHS; it++) {
        for (e = 0; e < PA * CA; e++)
            a_s[e] = val(rank, e / CA, e % CA, it);
        for (e = 0; e < PB * CB; e++)
            b_s[e] = val(rank, e / CB, e % CB, it);
        fill(a_r, PA * CA, SENT);
        fill(b_r, PB * CB, SENT);
        ar_in = val(rank, 0, 0, it);
        ar_out = SENT;
        memset(got_a, 0, sizeof(got_a));
        memset(got_b, 0, sizeof(got_b));

        CHK(MPI_Startall(5, req));
        ready_a(req[0], it, 0);
        ready_b(req[3], it, 0);
        /* a first look: partitions may or may not have arrived yet (an
         * MPI may transfer them only once all are ready) */
        seen = poll_part("MPI_Parrived A", it, req[1], got_a, a_r, left, CA, PRA, CRA);
        seen += poll_part("MPI_Parrived B", it, req[4], got_b, b_r, right, CB, PB, CB);
        ready_a(req[0], it, 1);
        ready_b(req[3], it, 1);
        /* every partition, checked as soon as it has arrived */
        while (seen < PRA + PB) {
            seen += poll_part("MPI_Parrived A", it, req[1], got_a, a_r, left, CA, PRA, CRA);
            seen += poll_part("MPI_Parrived B", it, req[4], got_b, b_r, right, CB, PB, CB);
        }
        CHK(MPI_Waitall(5, req, st));
        for (j = 0; j < PRA; j++)
            check_part("MPI_Precv_init A", it, a_r, left, CA, j, CRA);
        for (j = 0; j < PB; j++)
            check_part("MPI_Precv_init B", it, b_r, right, CB, j, CB);
        expect("MPI_Allreduce_init (with partitioned)", it, 0, ar_out, sum(0, n, 0, 0, it));
    }
    for (j = 0; j < 5; j++)
        CHK(MPI_Request_free(&req[j]));
}

/* When the MPI-4 names come from pnbc's mapping header, its list of the
 * persistent collectives must be exactly the 22 used here (and every
 * entry must name a declared function). */
static void check_mapping_list(void)
{
#ifdef PNBC_MPI4_COLLECTIVES
#define MPI4_NAME(name) "MPI_" #name "_init",
#define MPI4_ADDR(name) (void (*)(void)) &MPI_##name##_init,
    static const char *listed[] = {PNBC_MPI4_COLLECTIVES(MPI4_NAME)};
    static void (*const fns[])(void) = {PNBC_MPI4_COLLECTIVES(MPI4_ADDR)};
    int nl = (int) (sizeof(listed) / sizeof(listed[0]));
    expect("PNBC_MPI4_COLLECTIVES: number of names", 0, 0, nl, NCOLL);
    for (int i = 0; i < nl; i++) {
        int found = 0;
        for (int c = 0; c < NCOLL; c++)
            found += strcmp(listed[i], cname[c]) == 0;
        expect(listed[i], 0, i, found, 1);
        expect("PNBC_MPI4_COLLECTIVES: function", 0, i, fns[i] != NULL, 1);
    }
#endif
}

int main(int argc, char **argv)
{
    int dims[1], periods[1] = {1}, total = 0, ver, sub;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n > MAXP) {
        if (rank == 0)
            fprintf(stderr, "FAIL mpi4_names: at most %d processes (got %d)\n", MAXP, n);
        MPI_Finalize();
        return 1;
    }
    dims[0] = n;
    CHK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN);
    CHK(MPI_Cart_shift(ring, 0, 1, &left, &right));

    check_mapping_list();
    collectives();
    partitioned();

    CHK(MPI_Allreduce(&nerr, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MPI_Get_version(&ver, &sub);
    if (rank == 0) {
        if (total == 0)
            printf("PASS mpi4_names np=%d: %d persistent collectives x %d epochs, "
                   "partitioned x %d epochs (MPI %d.%d)\n", n, NCOLL, EPOCHS, EPOCHS, ver, sub);
        else
            printf("FAIL mpi4_names np=%d: %d wrong values\n", n, total);
    }
    MPI_Comm_free(&ring);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
