/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * conf_inter, building the test cases (see conf_inter.c): per case the
 * blocks each buffer carries (which group's rank produced them for whom),
 * their placement, the buffers and the MPI arguments of the rooted
 * (bcast, gather(v), scatter(v)), all-to-all (allgather(v), alltoall(v,w))
 * and reduction (reduce, allreduce, reduce_scatter(_block)) cases.
 */
#define _GNU_SOURCE
#include "conf_inter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ================================================================ test cases */

static const char *const kind_names[] = {
    "bcast", "gather", "gatherv", "scatter", "scatterv", "allgather", "allgatherv",
    "alltoall", "alltoallv", "alltoallw", "reduce", "allreduce", "reduce_scatter",
    "reduce_scatter_block"
};

static uint64_t next_id = 1;

/* Bytes needed for the blocks, plus slack (stays poisoned). */
static size_t blocks_bytes(const blk_t *b, int n)
{
    size_t end = 0;
    for (int k = 0; k < n; ++k) {
        size_t e = b[k].disp + (size_t) b[k].cnt * b[k].ty->ext;
        if (e > end) {
            end = e;
        }
    }
    return end + 16;
}

/* Place n blocks in reverse order with a one-element gap (plus `extra`
 * bytes: byte displacements need not be multiples of the extent) between
 * them: displacements that are neither sorted nor dense. */
static void place_scattered(blk_t *b, int n, size_t extra)
{
    size_t pos = 0;
    for (int k = n - 1; k >= 0; --k) {
        b[k].disp = pos;
        pos += (size_t) (b[k].cnt + 1) * b[k].ty->ext + extra;
    }
}

static void place_strided(blk_t *b, int n)
{
    for (int k = 0; k < n; ++k) {
        b[k].disp = (size_t) k * b[k].cnt * b[k].ty->ext;
    }
}

static tcase_t *tc_new(kind_t kind, const ictx_t *ic)
{
    tcase_t *t = xcalloc(1, sizeof *t);
    t->kind = kind;
    t->ic = ic;
    t->id = next_id++;
    t->root = MPI_PROC_NULL;
    t->stype = t->rtype = MPI_DATATYPE_NULL;
    t->op = MPI_OP_NULL;
    t->req = MPI_REQUEST_NULL;
    t->blocking_ref = 1;
    return t;
}

static void tc_alloc(tcase_t *t)
{
    t->sbytes = t->nsb ? blocks_bytes(t->sb, t->nsb) : 16;
    if (K_BCAST == t->kind && t->nsb) {     /* the root's one buffer holds its data */
        t->rbytes = blocks_bytes(t->sb, t->nsb);
    } else if (t->nrb) {
        t->rbytes = blocks_bytes(t->rb, t->nrb);
    } else if (t->rty) {
        t->rbytes = (size_t) t->res_cnt * t->rty->ext + 16;
    } else {
        t->rbytes = 16;
    }
    if (t->kind >= K_REDUCE) {
        t->sbytes = (size_t) t->count * t->rty->ext + 16;
    }
    t->sbuf = xcalloc(t->sbytes, 1);
    t->rbuf = xcalloc(t->rbytes, 1);
    t->sref = xcalloc(t->sbytes, 1);
    t->exp = xcalloc(t->rbytes, 1);
    t->ref = xcalloc(t->rbytes, 1);
    memset(t->sbuf, POISON_SEND, t->sbytes);
    memset(t->rbuf, POISON_RECV, t->rbytes);
}

/* ================================================================ case builders */

/* Send/receive type pairs with equal signatures per int: (s, r); NPAIRS
 * (conf_inter.h) of them. */
static ty_t *const type_pairs[][2] = {
    { &TY_INT, &TY_INT }, { &TY_PAIR, &TY_VPAIR }, { &TY_VPAIR, &TY_LB }, { &TY_LB, &TY_INT },
};

/* Ints per block (always even, so every type divides it). */
static int v_ints(int salt, int g, int i, int j)
{
    return 2 * ((i + 2 * j + g + salt) % 3);
}

/* MPI root argument for a rooted case with the root at group rg, rank rr. */
static int root_arg(const ictx_t *ic, int rg, int rr)
{
    if (ic->gid != rg) {
        return rr;
    }
    return ic->lrank == rr ? MPI_ROOT : MPI_PROC_NULL;
}

static blk_t blk(const ty_t *ty, int ints, int g, int i, int key)
{
    blk_t b = { ty, ints / ty->nf, 0, g, i, key };
    return b;
}

/*
 * Rooted data movement (bcast, gather(v), scatter(v)).  The root is rank rr
 * of group rg; k is the ints per block (-1: varying, for the v forms);
 * tp selects the type pair (types differ between the two sides).
 */
tcase_t *rooted(kind_t kind, const ictx_t *ic, int rg, int rr, int k, int tp)
{
    tcase_t *t = tc_new(kind, ic);
    const ty_t *sty = type_pairs[tp % NPAIRS][0], *rty = type_pairs[tp % NPAIRS][1];
    const int og = 1 - rg, am_root = (ic->gid == rg && ic->lrank == rr);
    const int other = (ic->gid == og), vec = (K_GATHERV == kind || K_SCATTERV == kind);
    const int salt = (int) (t->id % 3);

    t->root = root_arg(ic, rg, rr);
    t->stype = sty->t;
    t->rtype = rty->t;
    /* No blocking reference where Open MPI 4.1.4 has none to offer: coll/inter's
     * MPI_Scatterv takes the root's counts (sendtype units) as counts of the
     * receive type, and MPI_Scatter is served through MPI_Scatterv here (see
     * tc_call).  Decided from the case alone, so all ranks skip the call. */
    if ((K_SCATTER == kind || K_SCATTERV == kind) && sty->nf != rty->nf) {
        t->blocking_ref = 0;
    }
    snprintf(t->desc, sizeof t->desc, "%s %s (%d,%d) root=g%d:%d ints=%d types=%s->%s",
             kind_names[kind], ic->name, ic->gsize[0], ic->gsize[1], rg, rr, k, sty->name,
             rty->name);
    switch (kind) {
    case K_BCAST:   /* root's data (key -1) to everyone of the other group */
        if (am_root) {
            t->sb[t->nsb++] = blk(sty, k, rg, rr, -1);
            t->rtype = sty->t;
            t->rcount = t->sb[0].cnt;
        } else if (other) {
            t->rb[t->nrb++] = blk(rty, k, rg, rr, -1);
            t->rcount = t->rb[0].cnt;
        }
        break;
    case K_GATHER:
    case K_GATHERV:     /* other group's rank j sends its block (key -1) to the root */
        if (am_root) {
            for (int j = 0; j < ic->rsize; ++j) {
                t->rb[t->nrb++] = blk(rty, vec ? v_ints(salt, og, j, 0) : k, og, j, -1);
                t->rcounts[j] = t->rb[j].cnt;
            }
            vec ? place_scattered(t->rb, t->nrb, 0) : place_strided(t->rb, t->nrb);
            for (int j = 0; j < ic->rsize; ++j) {
                t->rdispls[j] = (int) (t->rb[j].disp / (size_t) rty->ext);
            }
            t->rcount = t->rcounts[0];
        } else if (other) {
            t->sb[t->nsb++] = blk(sty, vec ? v_ints(salt, og, ic->lrank, 0) : k, og,
                                  ic->lrank, -1);
            t->scount = t->sb[0].cnt;
        }
        break;
    case K_SCATTER:
    case K_SCATTERV:    /* the root sends block j (key j) to remote rank j */
        if (am_root) {
            for (int j = 0; j < ic->rsize; ++j) {
                t->sb[t->nsb++] = blk(sty, vec ? v_ints(salt, og, j, 0) : k, rg, rr, j);
                t->scounts[j] = t->sb[j].cnt;
            }
            vec ? place_scattered(t->sb, t->nsb, 0) : place_strided(t->sb, t->nsb);
            for (int j = 0; j < ic->rsize; ++j) {
                t->sdispls[j] = (int) (t->sb[j].disp / (size_t) sty->ext);
            }
            t->scount = t->scounts[0];
        } else if (other) {
            t->rb[t->nrb++] = blk(rty, vec ? v_ints(salt, og, ic->lrank, 0) : k, rg, rr,
                                  ic->lrank);
            t->rcount = t->rb[0].cnt;
        }
        break;
    default:
        break;
    }
    tc_alloc(t);
    return t;
}

/*
 * Non-rooted data movement (allgather(v), alltoall(v,w)).  Group g sends
 * k_g ints per block (k_0 = k, k_1 = k + 2 unless k == 0: the two
 * directions differ); the v/w forms vary the ints per pair.
 */
tcase_t *all_to(kind_t kind, const ictx_t *ic, int k, int tp)
{
    tcase_t *t = tc_new(kind, ic);
    const int me = ic->lrank, g = ic->gid, rg = 1 - g, salt = (int) (t->id % 3);
    const ty_t *sty = type_pairs[(tp + g) % NPAIRS][0];
    const ty_t *rty = type_pairs[(tp + rg) % NPAIRS][1];
    const int k_send = (k && g) ? k + 2 : k, k_recv = (k && rg) ? k + 2 : k;
    const int gather = (K_ALLGATHER == kind || K_ALLGATHERV == kind);
    const int vec = (K_ALLGATHERV == kind || K_ALLTOALLV == kind || K_ALLTOALLW == kind);

    t->stype = sty->t;
    t->rtype = rty->t;
    snprintf(t->desc, sizeof t->desc, "%s %s (%d,%d) ints=%d tp=%d", kind_names[kind],
             ic->name, ic->gsize[0], ic->gsize[1], k, tp);
    if (gather) {   /* my block (key -1) to everyone; block j from remote j */
        t->sb[t->nsb++] = blk(sty, vec ? v_ints(salt, g, me, 0) : k_send, g, me, -1);
        t->scount = t->sb[0].cnt;
    }
    for (int j = 0; j < ic->rsize; ++j) {
        const ty_t *s = sty, *r = rty;
        if (K_ALLTOALLW == kind) {      /* per-peer types */
            s = type_pairs[(tp + j + g) % NPAIRS][0];
            r = type_pairs[(tp + j + rg + 1) % NPAIRS][1];
        }
        if (!gather) {                  /* block j (key j) to remote rank j */
            t->sb[t->nsb++] = blk(s, vec ? v_ints(salt, g, me, j) : k_send, g, me, j);
        }
        t->rb[t->nrb++] = blk(r, vec ? v_ints(salt, rg, j, gather ? 0 : me) : k_recv, rg, j,
                              gather ? -1 : me);
        t->stypes[j] = s->t;
        t->rtypes[j] = r->t;
    }
    if (vec) {
        const size_t extra = (K_ALLTOALLW == kind) ? 4 : 0;
        place_scattered(t->rb, t->nrb, extra);
        if (!gather) {
            place_scattered(t->sb, t->nsb, extra);
        }
    } else {
        place_strided(t->rb, t->nrb);
        if (!gather) {
            place_strided(t->sb, t->nsb);
        }
    }
    for (int j = 0; j < ic->rsize; ++j) {
        t->rcounts[j] = t->rb[j].cnt;
        t->rdispls[j] = (K_ALLTOALLW == kind) ? (int) t->rb[j].disp
                                              : (int) (t->rb[j].disp / (size_t) rty->ext);
        if (!gather) {
            t->scounts[j] = t->sb[j].cnt;
            t->sdispls[j] = (K_ALLTOALLW == kind) ? (int) t->sb[j].disp
                                                  : (int) (t->sb[j].disp / (size_t) sty->ext);
        }
    }
    t->rcount = t->rcounts[0];
    if (!gather) {
        t->scount = t->scounts[0];
    }
    tc_alloc(t);
    return t;
}

static int gcd(int a, int b)
{
    return b ? gcd(b, a % b) : a;
}

/* Split `total` over n ranks, some of them getting nothing. */
static void split_counts(int total, int n, int salt, int *out)
{
    int left = total;
    for (int i = 0; i < n; ++i) {
        int c = (i + salt) % 3;
        out[i] = (i == n - 1) ? left : (c < left ? c : left);
        left -= out[i];
    }
}

/*
 * Reductions.  count: elements each rank contributes (reduce, allreduce)
 * or the total vector length (reduce_scatter; for reduce_scatter_block a
 * multiple of lcm(group sizes) is taken).
 */
tcase_t *reduction(kind_t kind, const ictx_t *ic, redop_t opk, const ty_t *ty, int count,
                   int rg, int rr)
{
    tcase_t *t = tc_new(kind, ic);
    t->opk = opk;
    t->op = op_handle(opk);
    t->rty = ty;
    t->count = count;
    t->res_first = 0;
    t->res_cnt = count;
    /* Non-commutative ops have no blocking reference: coll/basic's
     * intercommunicator reductions in Open MPI 4.1.4 fold the remote ranks
     * in reverse order (rbuf = x_i op rbuf, i = 1, 2, ...); the local
     * canonical-order reference alone judges them. */
    t->blocking_ref = (OPK_AFFINE != opk);
    switch (kind) {
    case K_REDUCE:
        t->root = root_arg(ic, rg, rr);
        if (MPI_ROOT != t->root) {
            t->res_cnt = 0;
        }
        snprintf(t->desc, sizeof t->desc, "reduce %s (%d,%d) root=g%d:%d op=%s type=%s count=%d",
                 ic->name, ic->gsize[0], ic->gsize[1], rg, rr, opk_names[opk], ty->name, count);
        break;
    case K_ALLREDUCE:
        snprintf(t->desc, sizeof t->desc, "allreduce %s (%d,%d) op=%s type=%s count=%d",
                 ic->name, ic->gsize[0], ic->gsize[1], opk_names[opk], ty->name, count);
        break;
    case K_RS:
    case K_RSB: {
        const int a = ic->gsize[0], b = ic->gsize[1];
        if (K_RSB == kind) {
            t->count = count * (a / gcd(a, b) * b);
            t->rcount = t->count / ic->lsize;
            for (int i = 0; i < ic->lsize; ++i) {
                t->rcounts[i] = t->rcount;
            }
        } else {
            split_counts(count, ic->lsize, (int) (t->id % 3) + ic->gid, t->rcounts);
        }
        for (int i = 0; i < ic->lrank; ++i) {
            t->res_first += t->rcounts[i];
        }
        t->res_cnt = t->rcounts[ic->lrank];
        snprintf(t->desc, sizeof t->desc, "%s %s (%d,%d) op=%s type=%s total=%d",
                 kind_names[kind], ic->name, a, b, opk_names[opk], ty->name, t->count);
        break;
    }
    default:
        break;
    }
    tc_alloc(t);
    return t;
}
