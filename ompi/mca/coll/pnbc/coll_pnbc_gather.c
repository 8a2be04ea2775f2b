/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Gather and scatter algorithms (and their v variants).
 *
 * The four are one "rooted" pattern seen from two directions: the root
 * holds an array of p blocks (gather's rbuf, scatter's sbuf), every rank
 * holds one block of its own (gather's sbuf, scatter's rbuf), and data
 * flows towards the root (gather) or away from it (scatter).  A rooted_t
 * describes both ends once, so every builder below serves both
 * directions or is the mirror image of its partner.
 *
 * Only what MPI makes significant on a rank is read there: the root's
 * array arguments at the root, the own-block arguments elsewhere (and at
 * the root unless it passed MPI_IN_PLACE).  Whether a block is empty is
 * decided from its signature size (count * type size), which the two
 * ends of every message agree on even when their datatypes differ.
 */

#include "coll_pnbc_algorithms.h"

typedef struct rooted_t {
    bool to_root;               /* gather(v): data flows towards the root */
    /* The root's array of p blocks; significant at the root only. */
    pnbc_buf_t all;
    size_t all_count;           /* per block, unless all_counts */
    const int *all_counts;      /* v variants: per-block counts ... */
    const int *all_displs;      /* ... and displacements (in elements) */
    ompi_datatype_t *all_type;
    ptrdiff_t all_extent;
    /* This rank's own block. */
    pnbc_buf_t one;
    size_t one_count;
    ompi_datatype_t *one_type;
    bool own_in_place;          /* root passed MPI_IN_PLACE: its block stays put */
} rooted_t;

static size_t signature_bytes(size_t count, ompi_datatype_t *dtype)
{
    return count * pnbc_type_size(dtype);
}

static void rooted_view(const pnbc_coll_args_t *a, rooted_t *r)
{
    const bool gathering = (PNBC_GATHER == a->coll || PNBC_GATHERV == a->coll);
    const bool at_root = (a->rank == a->root);

    *r = (rooted_t) { .to_root = gathering, .own_in_place = at_root && a->in_place };
    if (gathering) {
        r->all = PNBC_BUF_RECV;
        r->all_count = a->rcount;
        r->all_counts = a->rcounts;
        r->all_displs = a->rdispls;
        r->all_type = a->rdtype;
        r->one = PNBC_BUF_SEND;
        r->one_count = a->scount;
        r->one_type = a->sdtype;
    } else {
        r->all = PNBC_BUF_SEND;
        r->all_count = a->scount;
        r->all_counts = a->scounts;
        r->all_displs = a->sdispls;
        r->all_type = a->sdtype;
        r->one = PNBC_BUF_RECV;
        r->one_count = a->rcount;
        r->one_type = a->rdtype;
    }
    if (at_root) {
        r->all_extent = pnbc_extent(r->all_type);
    }
}

/* Block i of the root's array. */
static size_t all_block_count(const rooted_t *r, int i)
{
    return (NULL != r->all_counts) ? (size_t) r->all_counts[i] : r->all_count;
}

static pnbc_ref_t all_block(const rooted_t *r, int i)
{
    ptrdiff_t elements = (NULL != r->all_displs) ? r->all_displs[i]
                                                 : (ptrdiff_t) i * (ptrdiff_t) r->all_count;
    return pnbc_ref(r->all, elements * r->all_extent);
}

/* Signature size of one block (not for v variants), computed from the
 * arguments significant on this rank: the same number everywhere. */
static size_t rooted_block_bytes(const pnbc_coll_args_t *a, const rooted_t *r)
{
    return (a->rank == a->root) ? signature_bytes(r->all_count, r->all_type)
                                : signature_bytes(r->one_count, r->one_type);
}

/* The root's own block moves between its array and its own buffer
 * locally -- unless MPI_IN_PLACE says it already sits in the array. */
static void own_block_copy(pnbc_schedule_t *s, const rooted_t *r, int root)
{
    pnbc_ref_t slot = all_block(r, root), own = pnbc_ref(r->one, 0);

    if (r->own_in_place) {
        return;
    }
    if (r->to_root) {
        pnbc_sched_copy(s, own, r->one_count, r->one_type, slot, all_block_count(r, root),
                        r->all_type);
    } else {
        pnbc_sched_copy(s, slot, all_block_count(r, root), r->all_type, own, r->one_count,
                        r->one_type);
    }
}

/* One message of the rooted pattern, posted on the root's side
 * (at_root) or on the other rank's side: the direction decides which of
 * the two sends. */
static void rooted_message(pnbc_schedule_t *s, const rooted_t *r, bool at_root,
                           pnbc_ref_t ref, size_t count, ompi_datatype_t *dtype, int peer)
{
    if (at_root != r->to_root) {
        pnbc_sched_send(s, ref, count, dtype, peer);
    } else {
        pnbc_sched_recv(s, ref, count, dtype, peer);
    }
}

/*
 * pnbc_rooted_linear -- "linear" of gather, gatherv, scatter, scatterv
 *   Accepts: any size, root, counts (zero on any rank), datatypes,
 *            MPI_IN_PLACE at the root.
 *   Moves:   one round; the root exchanges one message with every other
 *            rank, straight between the user's buffers (no temporary):
 *            block i of the root's array <-> rank i's own buffer.  A
 *            block of zero bytes is not sent at all: for the v variants
 *            the root sees it in counts[i], rank i in its own count.
 *            The root copies its own block after posting its messages,
 *            so the copy overlaps their transfer.
 *
 *   gather, p=4, root 1:   0->1 2->1 3->1   (rank i lands in rbuf block i)
 *   scatter, p=4, root 1:  1->2 1->3 1->0   (block i of sbuf goes to rank i)
 */
void pnbc_rooted_linear(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    const int p = a->size, root = a->root;
    rooted_t r;

    rooted_view(a, &r);
    pnbc_sched_round(s);
    if (a->rank != root) {
        if (signature_bytes(r.one_count, r.one_type) > 0) {
            rooted_message(s, &r, false, pnbc_ref(r.one, 0), r.one_count, r.one_type, root);
        }
        return;
    }
    for (int i = 1; i < p; ++i) {
        const int peer = (root + i) % p;
        const size_t count = all_block_count(&r, peer);
        if (signature_bytes(count, r.all_type) > 0) {
            rooted_message(s, &r, true, all_block(&r, peer), count, r.all_type, peer);
        }
    }
    own_block_copy(s, &r, root);    /* while the others' messages move */
}

/* ------------------------------------------------------------------ */
/* Binomial trees (gather, scatter)                                   */
/* ------------------------------------------------------------------ */

/*
 * The tree is built on virtual ranks v = rank - root (mod p), so the root
 * is v = 0.  v's subtree is the contiguous range [v, v + span(v)) with
 * span(v) = min(lowest set bit of v, p - v) (all of [0, p) for the root);
 * v's parent is v minus its lowest set bit; its children are v + m for
 * the powers of two m below that bit (any power of two below p for the
 * root) with v + m < p.  A subtree's blocks therefore travel as one
 * message, in virtual order.
 */
static int tree_span(int v, int p)
{
    if (0 == v) {
        return p;
    }
    const int low = v & -v;
    return (low < p - v) ? low : p - v;
}

/* v's children, largest subtree first: child i is virtual rank
 * child[i].v heading the subtree [child[i].v, child[i].v + child[i].span). */
typedef struct tree_child_t {
    int v, span;
} tree_child_t;

#define TREE_MAX_CHILDREN 31    /* one per bit of a positive int */

static int tree_children(int v, int p, tree_child_t child[TREE_MAX_CHILDREN])
{
    int m = 1, n = 0;

    if (0 != v) {
        m = (v & -v) >> 1;
    } else {
        while (2 * m < p) {
            m <<= 1;
        }
    }
    for (; m > 0 && p > 1; m >>= 1) {
        if (v + m < p) {
            child[n++] = (tree_child_t) { v + m, tree_span(v + m, p) };
        }
    }
    return n;
}

static int tree_real(const pnbc_coll_args_t *a, int v)
{
    return (v + a->root) % a->size;
}

/* Element offset of virtual block j inside a subtree's buffer. */
static pnbc_ref_t tree_block(pnbc_ref_t base, int j, size_t count, ompi_datatype_t *dtype)
{
    return pnbc_ref_shift(base, (ptrdiff_t) j * (ptrdiff_t) count * pnbc_extent(dtype));
}

/* Does the subtree [v, v + n) cross from real rank p-1 to real rank 0?
 * Then its blocks are not contiguous in the root's array. */
static bool tree_wraps(const pnbc_coll_args_t *a, int v, int n)
{
    return tree_real(a, v) + n > a->size;
}

/*
 * At the root, a wrapping subtree goes through `staging` (its blocks in
 * virtual order).  Copy between staging and the root's array in two
 * pieces, split at the wrap: towards the array for gather, from it for
 * scatter.
 */
static void tree_unstage(pnbc_schedule_t *s, const pnbc_coll_args_t *a, const rooted_t *r,
                         pnbc_ref_t staging, int v, int n)
{
    const int first = tree_real(a, v);
    const int head = a->size - first;   /* blocks before the wrap */
    const struct { int stage_block, array_block, nblocks; } piece[2] = {
        { 0, first, head }, { head, 0, n - head }
    };

    for (int k = 0; k < 2; ++k) {
        pnbc_ref_t st = tree_block(staging, piece[k].stage_block, r->all_count, r->all_type);
        pnbc_ref_t ar = all_block(r, piece[k].array_block);
        size_t count = (size_t) piece[k].nblocks * r->all_count;
        if (r->to_root) {
            pnbc_sched_copy(s, st, count, r->all_type, ar, count, r->all_type);
        } else {
            pnbc_sched_copy(s, ar, count, r->all_type, st, count, r->all_type);
        }
    }
}

/* The root's end of child subtree [c, c + n): the user's array itself
 * when the subtree's blocks are contiguous there, else a staging area
 * (*staged set).  At most one subtree of the root can wrap. */
static pnbc_ref_t tree_root_end(pnbc_schedule_t *s, const pnbc_coll_args_t *a,
                                const rooted_t *r, int c, int n, bool *staged)
{
    *staged = tree_wraps(a, c, n);
    return *staged ? pnbc_sched_tmp(s, (size_t) n * r->all_count, r->all_type)
                   : all_block(r, tree_real(a, c));
}

/* v's parent, as a real rank */
static int tree_parent(const pnbc_coll_args_t *a, int v)
{
    return tree_real(a, v - (v & -v));
}

/* Gather at the root: its own block, then every child's subtree straight
 * into rbuf (the one wrapping subtree through staging, placed in the
 * next round once it has arrived). */
static void gather_binomial_root(pnbc_schedule_t *s, const pnbc_coll_args_t *a,
                                 const rooted_t *r)
{
    pnbc_ref_t staging = PNBC_REF_NONE;
    int staged_child = -1;
    tree_child_t child[TREE_MAX_CHILDREN];
    const int nchildren = tree_children(0, a->size, child);

    pnbc_sched_round(s);
    own_block_copy(s, r, a->root);
    for (int i = 0; i < nchildren; ++i) {
        bool staged;
        pnbc_ref_t end = tree_root_end(s, a, r, child[i].v, child[i].span, &staged);
        pnbc_sched_recv(s, end, (size_t) child[i].span * r->all_count, r->all_type,
                        tree_real(a, child[i].v));
        if (staged) {
            staging = end;
            staged_child = i;
        }
    }
    if (staged_child >= 0) {
        pnbc_sched_round(s);
        tree_unstage(s, a, r, staging, child[staged_child].v, child[staged_child].span);
    }
}

/* A rank below the root (virtual rank v): its subtree [v, v + span), its
 * children, and the buffer the subtree's blocks meet in, in virtual
 * order -- a leaf's own block as it is, else a temporary. */
typedef struct tree_member_t {
    int v, span, nchildren;
    tree_child_t child[TREE_MAX_CHILDREN];
    pnbc_ref_t acc;
} tree_member_t;

static void tree_member(pnbc_schedule_t *s, const pnbc_coll_args_t *a, const rooted_t *r,
                        int v, tree_member_t *m)
{
    m->v = v;
    m->span = tree_span(v, a->size);
    m->nchildren = tree_children(v, a->size, m->child);
    m->acc = pnbc_ref(r->one, 0);
    if (m->span > 1) {
        m->acc = pnbc_sched_tmp(s, (size_t) m->span * r->one_count, r->one_type);
    }
}

/* A member's messages with its children: each child's subtree, at its
 * place in acc, received from it (gather) or sent to it (scatter). */
static void tree_member_children(pnbc_schedule_t *s, const pnbc_coll_args_t *a,
                                 const rooted_t *r, const tree_member_t *m)
{
    for (int i = 0; i < m->nchildren; ++i) {
        rooted_message(s, r, true,
                       tree_block(m->acc, m->child[i].v - m->v, r->one_count, r->one_type),
                       (size_t) m->child[i].span * r->one_count, r->one_type,
                       tree_real(a, m->child[i].v));
    }
}

/* Gather below the root: collect the subtree [v, v + span) in a
 * temporary (a leaf sends its sbuf as it is), then pass it up. */
static void gather_binomial_member(pnbc_schedule_t *s, const pnbc_coll_args_t *a,
                                   const rooted_t *r, int v)
{
    tree_member_t m;

    tree_member(s, a, r, v, &m);
    if (m.span > 1) {
        pnbc_sched_round(s);
        pnbc_sched_copy(s, pnbc_ref(r->one, 0), r->one_count, r->one_type, m.acc, r->one_count,
                        r->one_type);
        tree_member_children(s, a, r, &m);
    }
    pnbc_sched_round(s);
    pnbc_sched_send(s, m.acc, (size_t) m.span * r->one_count, r->one_type, tree_parent(a, v));
}

/* Binomial gather and scatter share their shape: the root's part and a
 * member's part (v = virtual rank, root = 0), nothing for empty blocks. */
typedef void (*rooted_root_part_t)(pnbc_schedule_t *, const pnbc_coll_args_t *,
                                   const rooted_t *);
typedef void (*rooted_member_part_t)(pnbc_schedule_t *, const pnbc_coll_args_t *,
                                     const rooted_t *, int);

static void rooted_binomial(pnbc_schedule_t *s, const pnbc_coll_args_t *a,
                            rooted_root_part_t root_part, rooted_member_part_t member_part)
{
    const int v = (a->rank - a->root + a->size) % a->size;
    rooted_t r;

    rooted_view(a, &r);
    if (0 == rooted_block_bytes(a, &r)) {
        return;
    }
    if (0 == v) {
        root_part(s, a, &r);
    } else {
        member_part(s, a, &r, v);
    }
}

/*
 * pnbc_gather_binomial
 *   Accepts: any size, root, count, datatypes, MPI_IN_PLACE at the root.
 *   Moves:   binomial tree on v = rank - root (mod p).  A leaf sends its
 *            sbuf to its parent.  An interior rank gathers its subtree in
 *            a temporary (own block first, then each child's subtree at
 *            its virtual offset, all children at once) and sends it up
 *            as one message.  The root receives each child's subtree
 *            straight into rbuf at the children's real ranks; only the
 *            one subtree that wraps past rank p-1 is staged and copied in
 *            two pieces.  log2(p) steps; interior ranks forward data.
 *
 *   p=6, root 3 (v = rank - 3 mod 6; real rank in brackets):
 *        round 1: v1[4]->v0, v3[0]->v2[5], v5[2]->v4[1]
 *        round 2: v2[5]->v0 with blocks v2,v3 = real 5,0: wraps, staged
 *                 v4[1]->v0 with blocks v4,v5 = real 1,2: into rbuf
 *        at the root: staging -> rbuf block 5 and rbuf block 0
 *   (each rank posts all its receives at once; "round" here is the
 *   earliest a message can move.)
 */
void pnbc_gather_binomial(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    rooted_binomial(s, a, gather_binomial_root, gather_binomial_member);
}

/* Scatter at the root: every child's subtree straight from sbuf (the
 * wrapping one staged first), then its own block. */
static void scatter_binomial_root(pnbc_schedule_t *s, const pnbc_coll_args_t *a,
                                  const rooted_t *r)
{
    tree_child_t child[TREE_MAX_CHILDREN];
    const int nchildren = tree_children(0, a->size, child);

    pnbc_sched_round(s);
    for (int i = 0; i < nchildren; ++i) {
        bool staged;
        pnbc_ref_t end = tree_root_end(s, a, r, child[i].v, child[i].span, &staged);
        if (staged) {
            tree_unstage(s, a, r, end, child[i].v, child[i].span);
        }
        pnbc_sched_send(s, end, (size_t) child[i].span * r->all_count, r->all_type,
                        tree_real(a, child[i].v));
    }
    own_block_copy(s, r, a->root);
}

/* Scatter below the root: receive the subtree [v, v + span) (a leaf
 * straight into rbuf), pass the children's parts on, keep block 0. */
static void scatter_binomial_member(pnbc_schedule_t *s, const pnbc_coll_args_t *a,
                                    const rooted_t *r, int v)
{
    tree_member_t m;

    tree_member(s, a, r, v, &m);
    pnbc_sched_round(s);
    pnbc_sched_recv(s, m.acc, (size_t) m.span * r->one_count, r->one_type, tree_parent(a, v));
    if (1 == m.span) {
        return;
    }
    pnbc_sched_round(s);
    tree_member_children(s, a, r, &m);
    pnbc_sched_copy(s, m.acc, r->one_count, r->one_type, pnbc_ref(r->one, 0), r->one_count,
                    r->one_type);
}

/*
 * pnbc_scatter_binomial
 *   Accepts: any size, root, count, datatypes, MPI_IN_PLACE at the root.
 *   Moves:   the mirror image of pnbc_gather_binomial.  The root sends
 *            each child its subtree's blocks straight from sbuf, largest
 *            subtree first (only a subtree that wraps past rank p-1 is
 *            first copied into a staging area in virtual order).  An
 *            interior rank receives its subtree into a temporary, passes
 *            the children's parts on and copies its own block to rbuf;
 *            a leaf receives straight into rbuf.
 *
 *   p=5, root 0:  0->4 (block 4) 0->2 (blocks 2,3) 0->1 (block 1) | 2->3
 */
void pnbc_scatter_binomial(pnbc_schedule_t *s, const pnbc_coll_args_t *a)
{
    rooted_binomial(s, a, scatter_binomial_root, scatter_binomial_member);
}

/*
 * Preference: the binomial tree, then linear.  Both serve every call;
 * linear is the better choice on small communicators (p <= 4), where a
 * tree only adds a hop, and for large blocks (>= 32 KiB), where
 * forwarding whole subtrees through interior ranks costs more than the
 * root's p-1 messages -- a size-dependent rule, so it belongs in the
 * decision rules of coll_pnbc_select.c, not in usable(): usable() also
 * vets forced algorithms, and both must stay forceable everywhere.
 */
const pnbc_algorithm_t pnbc_gather_algorithms[] = {
    { "binomial", pnbc_gather_binomial, NULL },
    { "linear", pnbc_rooted_linear, NULL },
    { NULL, NULL, NULL }
};

const pnbc_algorithm_t pnbc_gatherv_algorithms[] = {
    { "linear", pnbc_rooted_linear, NULL },
    { NULL, NULL, NULL }
};

const pnbc_algorithm_t pnbc_scatter_algorithms[] = {
    { "binomial", pnbc_scatter_binomial, NULL },
    { "linear", pnbc_rooted_linear, NULL },
    { NULL, NULL, NULL }
};

const pnbc_algorithm_t pnbc_scatterv_algorithms[] = {
    { "linear", pnbc_rooted_linear, NULL },
    { NULL, NULL, NULL }
};
