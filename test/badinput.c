/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * badinput: every entry point called with each invalid argument it can
 * detect locally, under MPI_ERRORS_RETURN (MPI_COMM_WORLD and every
 * communicator used).  Each call must return the MPI error class of the
 * standard, create nothing (the output request handle keeps the value it
 * had, or becomes MPI_REQUEST_NULL) and leave MPI usable: afterwards
 * correct operations run and their results are checked against values
 * computed locally.
 *
 *   badinput [rounds]      (default 1; the misuse sequence is repeated
 *                           `rounds` times; with rounds >= 20 the resident
 *                           set size may grow by at most 2 MiB between the
 *                           end of round 2 and the end of the last round)
 *
 * This file: the 22 persistent collectives MPIX_<Coll>_init and the 22
 * nonblocking MPI_I<coll>, on a duplicate of MPI_COMM_WORLD, on
 * MPI_COMM_SELF (every rank is the root: root-only arguments are checked
 * in the nonblocking form too), on a periodic 1-D Cartesian communicator
 * (neighbourhood collectives) and on an intercommunicator (np >= 2).
 * Invalid arguments (each alone; the expected class in brackets):
 *   comm MPI_COMM_NULL (also what MPI_Comm_free leaves) [COMM];
 *   request pointer NULL [ARG];
 *   count -1, one entry -1 of a count array [COUNT];
 *   datatype MPI_DATATYPE_NULL, an uncommitted datatype, one entry
 *   MPI_DATATYPE_NULL of an alltoallw type array [TYPE];
 *   op MPI_OP_NULL, a predefined op on a type it is not defined for
 *   (MPI_BAND on MPI_FLOAT) [OP];
 *   root -1, root = size, MPI_ROOT on an intracommunicator, root = remote
 *   size on an intercommunicator [ROOT];
 *   recvbuf MPI_IN_PLACE where it may not be, sendbuf MPI_IN_PLACE on an
 *   intercommunicator or in a neighbourhood collective [BUFFER; Open MPI's
 *   wrappers answer most of these with ARG];
 *   a neighbourhood collective on a communicator without topology
 *   [TOPOLOGY]; scan/exscan/neighbourhood on an intercommunicator [COMM,
 *   or TOPOLOGY for the neighbourhood ones].
 * Arguments significant only at the root (gather's recvcount, ...) are
 * made invalid at the root only, and only the root calls: the call fails
 * there, so no collective begins.
 * badinput_pc.c: partitioned communication and channels.
 * Calls an MPI library does not survive itself are left out
 * (wrapper_crashes(): Open MPI 4.1.4's, and MPICH 4.0.2's for the
 * cross-check build); BI_SKIP="<what>;<what>" leaves out more, by the
 * text the FAIL lines print (for trying other MPI libraries).
 */
#include "badinput.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bi_wrank, bi_wsize, bi_round;
long bi_tried;
MPI_Request bi_sentinel = MPI_REQUEST_NULL;

/* ------------------------------------------------------------ the collectives */
enum { K_BARRIER, K_BCAST, K_REDUCE, K_ALLREDUCE, K_GATHER, K_GATHERV, K_SCATTER, K_SCATTERV,
       K_ALLGATHER, K_ALLGATHERV, K_ALLTOALL, K_ALLTOALLV, K_ALLTOALLW, K_RS, K_RSB, K_SCAN,
       K_EXSCAN, K_NAG, K_NAGV, K_NA2A, K_NA2AV, K_NA2AW, NK };

/* What a collective takes, and where it is significant. */
#define F_ROOT  0x001   /* root argument */
#define F_OP    0x002   /* op argument */
#define F_CNT   0x004   /* one count + datatype (bcast, reductions) */
#define F_S1    0x008   /* sendcount + sendtype everywhere */
#define F_R1    0x010   /* recvcount + recvtype everywhere */
#define F_SV    0x020   /* sendcounts[] everywhere */
#define F_RV    0x040   /* recvcounts[] everywhere */
#define F_W     0x080   /* per-peer datatypes */
#define F_NB    0x100   /* neighbourhood collective */
#define F_R1ROOT 0x200  /* recvcount + recvtype at the root only (gather) */
#define F_RVROOT 0x400  /* recvcounts[] at the root only (gatherv) */
#define F_S1ROOT 0x800  /* sendcount + sendtype at the root only (scatter) */
#define F_SVROOT 0x1000 /* sendcounts[] at the root only (scatterv) */
#define F_NOINTER 0x2000 /* not defined on intercommunicators */
#define F_RBUF  0x4000  /* recvbuf MPI_IN_PLACE is invalid everywhere */

static const struct { const char *name; unsigned f; } coll[NK] = {
    [K_BARRIER] = { "barrier", 0 },
    [K_BCAST] = { "bcast", F_ROOT | F_CNT },
    [K_REDUCE] = { "reduce", F_ROOT | F_OP | F_CNT },
    [K_ALLREDUCE] = { "allreduce", F_OP | F_CNT | F_RBUF },
    [K_GATHER] = { "gather", F_ROOT | F_S1 | F_R1ROOT },
    [K_GATHERV] = { "gatherv", F_ROOT | F_S1 | F_RVROOT },
    [K_SCATTER] = { "scatter", F_ROOT | F_R1 | F_S1ROOT },
    [K_SCATTERV] = { "scatterv", F_ROOT | F_R1 | F_SVROOT },
    [K_ALLGATHER] = { "allgather", F_S1 | F_R1 | F_RBUF },
    [K_ALLGATHERV] = { "allgatherv", F_S1 | F_RV | F_RBUF },
    [K_ALLTOALL] = { "alltoall", F_S1 | F_R1 | F_RBUF },
    [K_ALLTOALLV] = { "alltoallv", F_SV | F_RV | F_RBUF },
    [K_ALLTOALLW] = { "alltoallw", F_SV | F_RV | F_W | F_RBUF },
    [K_RS] = { "reduce_scatter", F_OP | F_RV | F_RBUF },
    [K_RSB] = { "reduce_scatter_block", F_OP | F_CNT | F_RBUF },
    [K_SCAN] = { "scan", F_OP | F_CNT | F_NOINTER | F_RBUF },
    [K_EXSCAN] = { "exscan", F_OP | F_CNT | F_NOINTER | F_RBUF },
    [K_NAG] = { "neighbor_allgather", F_NB | F_S1 | F_R1 },
    [K_NAGV] = { "neighbor_allgatherv", F_NB | F_S1 | F_RV },
    [K_NA2A] = { "neighbor_alltoall", F_NB | F_S1 | F_R1 },
    [K_NA2AV] = { "neighbor_alltoallv", F_NB | F_SV | F_RV },
    [K_NA2AW] = { "neighbor_alltoallw", F_NB | F_SV | F_RV | F_W },
};

#define B 2             /* elements per block */

typedef struct {
    MPI_Comm comm;
    const void *sbuf;
    void *rbuf;
    int scount, rcount;
    int scounts[MAXN], rcounts[MAXN], sdispls[MAXN], rdispls[MAXN];
    MPI_Aint sdispb[MAXN], rdispb[MAXN];
    MPI_Datatype stype, rtype, stypes[MAXN], rtypes[MAXN];
    MPI_Op op;
    int root;
    MPI_Request *req;
} args_t;

static int sbuf[MAXN * MAXN * B], rbuf[MAXN * MAXN * B];

/* The persistent (nb = 0) or the nonblocking (nb = 1) form. */
#define PI(iname, pname, ...) (nb ? iname(__VA_ARGS__, a->req) : pname(__VA_ARGS__, MPI_INFO_NULL, a->req))

static int call(int k, const args_t *a, int nb)
{
    switch (k) {
    case K_BARRIER: return PI(MPI_Ibarrier, MPIX_Barrier_init, a->comm);
    case K_BCAST: return PI(MPI_Ibcast, MPIX_Bcast_init, a->rbuf, a->scount, a->stype, a->root, a->comm);
    case K_REDUCE:
        return PI(MPI_Ireduce, MPIX_Reduce_init, a->sbuf, a->rbuf, a->scount, a->stype, a->op, a->root, a->comm);
    case K_ALLREDUCE:
        return PI(MPI_Iallreduce, MPIX_Allreduce_init, a->sbuf, a->rbuf, a->scount, a->stype, a->op, a->comm);
    case K_GATHER:
        return PI(MPI_Igather, MPIX_Gather_init, a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype,
                  a->root, a->comm);
    case K_GATHERV:
        return PI(MPI_Igatherv, MPIX_Gatherv_init, a->sbuf, a->scount, a->stype, a->rbuf, a->rcounts,
                  a->rdispls, a->rtype, a->root, a->comm);
    case K_SCATTER:
        return PI(MPI_Iscatter, MPIX_Scatter_init, a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype,
                  a->root, a->comm);
    case K_SCATTERV:
        return PI(MPI_Iscatterv, MPIX_Scatterv_init, a->sbuf, a->scounts, a->sdispls, a->stype, a->rbuf,
                  a->rcount, a->rtype, a->root, a->comm);
    case K_ALLGATHER:
        return PI(MPI_Iallgather, MPIX_Allgather_init, a->sbuf, a->scount, a->stype, a->rbuf, a->rcount,
                  a->rtype, a->comm);
    case K_ALLGATHERV:
        return PI(MPI_Iallgatherv, MPIX_Allgatherv_init, a->sbuf, a->scount, a->stype, a->rbuf, a->rcounts,
                  a->rdispls, a->rtype, a->comm);
    case K_ALLTOALL:
        return PI(MPI_Ialltoall, MPIX_Alltoall_init, a->sbuf, a->scount, a->stype, a->rbuf, a->rcount,
                  a->rtype, a->comm);
    case K_ALLTOALLV:
        return PI(MPI_Ialltoallv, MPIX_Alltoallv_init, a->sbuf, a->scounts, a->sdispls, a->stype, a->rbuf,
                  a->rcounts, a->rdispls, a->rtype, a->comm);
    case K_ALLTOALLW:
        return PI(MPI_Ialltoallw, MPIX_Alltoallw_init, a->sbuf, a->scounts, a->sdispls, a->stypes, a->rbuf,
                  a->rcounts, a->rdispls, a->rtypes, a->comm);
    case K_RS:
        return PI(MPI_Ireduce_scatter, MPIX_Reduce_scatter_init, a->sbuf, a->rbuf, a->rcounts, a->stype,
                  a->op, a->comm);
    case K_RSB:
        return PI(MPI_Ireduce_scatter_block, MPIX_Reduce_scatter_block_init, a->sbuf, a->rbuf, a->scount,
                  a->stype, a->op, a->comm);
    case K_SCAN: return PI(MPI_Iscan, MPIX_Scan_init, a->sbuf, a->rbuf, a->scount, a->stype, a->op, a->comm);
    case K_EXSCAN:
        return PI(MPI_Iexscan, MPIX_Exscan_init, a->sbuf, a->rbuf, a->scount, a->stype, a->op, a->comm);
    case K_NAG:
        return PI(MPI_Ineighbor_allgather, MPIX_Neighbor_allgather_init, a->sbuf, a->scount, a->stype, a->rbuf,
                  a->rcount, a->rtype, a->comm);
    case K_NAGV:
        return PI(MPI_Ineighbor_allgatherv, MPIX_Neighbor_allgatherv_init, a->sbuf, a->scount, a->stype,
                  a->rbuf, a->rcounts, a->rdispls, a->rtype, a->comm);
    case K_NA2A:
        return PI(MPI_Ineighbor_alltoall, MPIX_Neighbor_alltoall_init, a->sbuf, a->scount, a->stype, a->rbuf,
                  a->rcount, a->rtype, a->comm);
    case K_NA2AV:
        return PI(MPI_Ineighbor_alltoallv, MPIX_Neighbor_alltoallv_init, a->sbuf, a->scounts, a->sdispls,
                  a->stype, a->rbuf, a->rcounts, a->rdispls, a->rtype, a->comm);
    default:
        return PI(MPI_Ineighbor_alltoallw, MPIX_Neighbor_alltoallw_init, a->sbuf, a->scounts, a->sdispb,
                  a->stypes, a->rbuf, a->rcounts, a->rdispb, a->rtypes, a->comm);
    }
}

/* ------------------------------------------------------------ communicators */

static MPI_Datatype uncommitted;

/* Valid arguments of collective k on c, output handle at *r. */
static void valid_args(args_t *a, int k, const cx_t *c, MPI_Request *r)
{
    int n = c->inter ? c->remote : c->topo ? 2 : c->size;
    memset(a, 0, sizeof *a);
    a->comm = c->comm;
    a->sbuf = sbuf;
    a->rbuf = rbuf;
    a->scount = a->rcount = B;
    for (int i = 0; i < MAXN; i++) {
        a->scounts[i] = a->rcounts[i] = B;
        a->sdispls[i] = a->rdispls[i] = i * B;
        a->sdispb[i] = a->rdispb[i] = (MPI_Aint)(i * B * sizeof(int));
        a->stypes[i] = a->rtypes[i] = MPI_INT;
    }
    /* intercommunicator reduce_scatter: both groups must reduce vectors
     * of one length, local size * remote size blocks here */
    if (c->inter && k == K_RS)
        for (int i = 0; i < MAXN; i++) a->rcounts[i] = B * c->remote;
    (void)n;
    a->stype = a->rtype = MPI_INT;
    a->op = MPI_SUM;
    a->root = 0;
    if (c->inter) a->root = c->root_here ? (c->rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    a->req = r;
}

/* ------------------------------------------------------------ the invalid arguments */
typedef struct {
    const char *name;
    int cls, alt;       /* expected class (alt: also accepted, -1 none) */
    int everywhere;     /* detected at every rank (else at the root only) */
} pert_t;

enum { P_COMM, P_REQ, P_COUNT, P_TYPE_NULL, P_TYPE_UNC, P_RCOUNT, P_RTYPE, P_OP_NULL, P_OP_TYPE, P_ROOT_NEG, P_ROOT_BIG,
       P_ROOT_ROOT, P_VCOUNT, P_WTYPE, P_RBUF, P_RCOUNT_ROOT, P_RTYPE_ROOT, P_VCOUNT_ROOT, P_NOTOPO,
       P_INTER, P_SBUF, NP };

static const pert_t pert[NP] = {
    [P_COMM] = { "comm=MPI_COMM_NULL", MPI_ERR_COMM, -1, 1 },
    [P_REQ] = { "request=NULL", MPI_ERR_ARG, -1, 1 },
    [P_COUNT] = { "count=-1", MPI_ERR_COUNT, -1, 1 },
    [P_TYPE_NULL] = { "datatype=MPI_DATATYPE_NULL", MPI_ERR_TYPE, -1, 1 },
    [P_TYPE_UNC] = { "datatype uncommitted", MPI_ERR_TYPE, -1, 1 },
    [P_RCOUNT] = { "recvcount=-1", MPI_ERR_COUNT, -1, 1 },
    [P_RTYPE] = { "recvtype uncommitted", MPI_ERR_TYPE, -1, 1 },
    [P_OP_NULL] = { "op=MPI_OP_NULL", MPI_ERR_OP, -1, 1 },
    [P_OP_TYPE] = { "op=MPI_BAND on MPI_FLOAT", MPI_ERR_OP, -1, 1 },
    [P_ROOT_NEG] = { "root=-1", MPI_ERR_ROOT, -1, 1 },
    [P_ROOT_BIG] = { "root=size (inter: remote size)", MPI_ERR_ROOT, -1, 1 },
    [P_ROOT_ROOT] = { "root=MPI_ROOT on an intracommunicator", MPI_ERR_ROOT, -1, 1 },
    [P_VCOUNT] = { "counts[last]=-1", MPI_ERR_COUNT, -1, 1 },
    [P_WTYPE] = { "types[0]=MPI_DATATYPE_NULL", MPI_ERR_TYPE, -1, 1 },
    [P_RBUF] = { "recvbuf=MPI_IN_PLACE", MPI_ERR_BUFFER, -1, 1 },
    [P_RCOUNT_ROOT] = { "root-only count=-1", MPI_ERR_COUNT, -1, 0 },
    [P_RTYPE_ROOT] = { "root-only datatype=MPI_DATATYPE_NULL", MPI_ERR_TYPE, -1, 0 },
    [P_VCOUNT_ROOT] = { "root-only counts[last]=-1", MPI_ERR_COUNT, -1, 0 },
    [P_NOTOPO] = { "no topology", MPI_ERR_TOPOLOGY, -1, 1 },
    [P_SBUF] = { "sendbuf=MPI_IN_PLACE (intercommunicator, neighbourhood)", MPI_ERR_BUFFER, -1, 1 },
    [P_INTER] = { "not defined on an intercommunicator", MPI_ERR_COMM, MPI_ERR_TOPOLOGY, 1 },
};

/* Whether p applies to k on c; if so make a invalid accordingly. */
static int apply(int p, int k, const cx_t *c, args_t *a)
{
    unsigned f = coll[k].f;
    int nent = c->inter ? c->remote : (c->topo && (f & F_NB)) ? 2 : c->size;
    int defined = !(c->inter && (f & (F_NOINTER | F_NB))) && !(!c->topo && (f & F_NB));
    int rooted_inter = c->inter && (f & F_ROOT);

    if (p == P_INTER) {
        if (!(c->inter && (f & (F_NOINTER | F_NB)))) return 0;
        return 1;
    }
    if (p == P_NOTOPO) {
        if (!(f & F_NB) || c->topo || c->inter) return 0;
        return 1;
    }
    if (!defined) return 0;
    switch (p) {
    case P_COMM: a->comm = MPI_COMM_NULL; return 1;
    case P_REQ: a->req = NULL; return 1;
    case P_COUNT:
    case P_TYPE_NULL:
    case P_TYPE_UNC: {
        if (rooted_inter) return 0;
        MPI_Datatype t = p == P_TYPE_NULL ? MPI_DATATYPE_NULL : uncommitted;
        if (f & (F_CNT | F_S1)) {
            if (p == P_COUNT) a->scount = -1; else a->stype = t;
        } else if (f & F_R1) {
            if (p == P_COUNT) a->rcount = -1; else a->rtype = t;
        } else if ((f & F_RV) && !(f & F_W)) {
            if (p == P_COUNT) return 0;     /* P_VCOUNT */
            if (k == K_RS) a->stype = t; else a->rtype = t;
        } else {
            return 0;
        }
        return 1;
    }
    case P_RCOUNT:
    case P_RTYPE:
        /* the receive side of a collective that also has a send side */
        if (rooted_inter || !(f & F_S1)) return 0;
        if (f & F_R1) {
            if (p == P_RCOUNT) a->rcount = -1; else a->rtype = uncommitted;
        } else if ((f & F_RV) && p == P_RTYPE) {
            a->rtype = uncommitted;
        } else {
            return 0;
        }
        return 1;
    case P_OP_NULL: if (!(f & F_OP)) return 0; a->op = MPI_OP_NULL; return 1;
    case P_OP_TYPE:
        if (!(f & F_OP)) return 0;
        a->op = MPI_BAND;
        a->stype = MPI_FLOAT;
        return 1;
    case P_ROOT_NEG:
        if (!(f & F_ROOT)) return 0;
        a->root = c->inter ? -7 : -1;
        return 1;
    case P_ROOT_BIG:
        if (!(f & F_ROOT)) return 0;
        a->root = c->inter ? c->remote : c->size;
        return 1;
    case P_ROOT_ROOT:
        if (!(f & F_ROOT) || c->inter) return 0;
        a->root = MPI_ROOT;
        return 1;
    case P_VCOUNT:
        if (!(f & (F_SV | F_RV)) || (c->inter && k == K_RS)) return 0;
        if (f & F_RV) a->rcounts[(k == K_RS ? c->size : nent) - 1] = -1;
        else a->scounts[nent - 1] = -1;
        return 1;
    case P_WTYPE:
        if (!(f & F_W)) return 0;
        a->stypes[0] = MPI_DATATYPE_NULL;
        return 1;
    case P_SBUF:
        /* no in-place form on intercommunicators nor for neighbours */
        if (!((c->inter && (f & F_RBUF)) || (f & F_NB))) return 0;
        a->sbuf = MPI_IN_PLACE;
        return 1;
    case P_RBUF:
        if (!(f & F_RBUF)) return 0;
        a->rbuf = MPI_IN_PLACE;
        return 1;
    case P_RCOUNT_ROOT:
    case P_RTYPE_ROOT:
        if (c->inter) return 0;
        if (f & F_R1ROOT) {
            if (p == P_RCOUNT_ROOT) a->rcount = -1; else a->rtype = MPI_DATATYPE_NULL;
        } else if (f & F_S1ROOT) {
            if (p == P_RCOUNT_ROOT) a->scount = -1; else a->stype = MPI_DATATYPE_NULL;
        } else if ((f & F_RVROOT) && p == P_RTYPE_ROOT) {
            a->rtype = MPI_DATATYPE_NULL;
        } else if ((f & F_SVROOT) && p == P_RTYPE_ROOT) {
            a->stype = MPI_DATATYPE_NULL;
        } else {
            return 0;
        }
        return 1;
    case P_VCOUNT_ROOT:
        if (c->inter || !(f & (F_RVROOT | F_SVROOT))) return 0;
        if (f & F_RVROOT) a->rcounts[c->size - 1] = -1; else a->scounts[c->size - 1] = -1;
        return 1;
    }
    return 0;
}

/* Invalid calls Open MPI 4.1.4 itself does not survive (its wrapper
 * crashes before or without calling the component): not tried there. */
static int wrapper_crashes(int p, int k, const cx_t *c, int nb, const char *what)
{
    const char *skip = getenv("BI_SKIP");   /* development: ';'-separated texts */
    if (skip) {
        char buf[4096], *save = NULL;
        snprintf(buf, sizeof buf, "%s", skip);
        for (char *tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save))
            if (!strcmp(tok, what)) return 1;
    }
#if defined(OPEN_MPI) && !defined(MPICH_VERSION)
    /* MPI_Ibcast on one process writes *request itself */
    if (p == P_REQ && nb && k == K_BCAST && !c->inter && c->size == 1) return 1;
    /* MPIX_Allgather_init, MPI_Iallgather and the neighbour allgather
     * forms look into the communicator before checking it */
    if (p == P_COMM && (k == K_ALLGATHER || k == K_NAG)) return 1;
#elif defined(MPICH_VERSION)
    /* MPICH 4.0.2 (cross-check builds): a negative count in these
     * nonblocking reductions, and neighbour v forms without topology */
    if (p == P_COUNT && nb && (k == K_REDUCE || k == K_ALLREDUCE || k == K_RSB)) return 1;
    if (p == P_NOTOPO && (k == K_NAGV || k == K_NA2AV || (nb && k == K_NA2AW))) return 1;
    /* ... runs a sendbuf MPI_IN_PLACE as data; asserts on scan on an
     * intercommunicator */
    if (p == P_SBUF || p == P_INTER) return 1;
    (void)c;
#else
    (void)p, (void)k, (void)c, (void)nb;
#endif
    return 0;
}

/* Every invalid form of collective k in mode nb on c. */
static void misuse_coll(int k, const cx_t *c, int nb)
{
    for (int p = 0; p < NP; p++) {
        args_t a;
        MPI_Request r = bi_sentinel;
        valid_args(&a, k, c, &r);
        if (!apply(p, k, c, &a)) continue;
        int at_root = c->inter || a.root == MPI_ROOT || (coll[k].f & F_ROOT ? c->rank == 0 : 1);
        int fails = pert[p].everywhere || at_root;
        /* a root-only argument: only the root calls (the call fails there,
         * so no collective is started; a non-root calling too would begin
         * one the root never joins -- MPICH 4.0.2 hangs there as well) */
        if (!fails) continue;
        char what[200];
        snprintf(what, sizeof what, "%s %s%s on %s", pert[p].name, nb ? "MPI_I" : "MPIX_", coll[k].name,
                 c->name);
        if (wrapper_crashes(p, k, c, nb, what)) continue;
        watchdog_note("badinput: %s", what);
        int rc = call(k, &a, nb);
        /* a datatype the op cannot take: MPI_ERR_OP is also what Open MPI's
         * wrappers and MPICH return for a reduction's bad datatype */
        int alt = pert[p].alt;
        if ((coll[k].f & F_OP) && (p == P_TYPE_NULL || p == P_TYPE_UNC)) alt = MPI_ERR_OP;
#if defined(OPEN_MPI) && !defined(MPICH_VERSION)
        /* Open MPI's wrappers answer most of these with MPI_ERR_ARG */
        if (p == P_RBUF || p == P_SBUF) alt = MPI_ERR_ARG;
#endif
        bi_expect(rc, pert[p].cls, alt, "%s", what);
        if (a.req != NULL) bi_untouched(&r, bi_sentinel, what);
    }
}

/* One valid call of each collective (round 0 only): the baseline the
 * invalid forms differ from in one argument is itself valid. */
static void baseline(int k, const cx_t *c, int nb)
{
    args_t a;
    MPI_Request r = MPI_REQUEST_NULL;
    unsigned f = coll[k].f;
    if ((c->inter && (f & (F_NOINTER | F_NB))) || (!c->topo && (f & F_NB))) return;
    /* reduce_scatter_block between groups of different sizes has no valid
     * arguments of this shape */
    if (c->inter && k == K_RSB && c->size != c->remote) return;
    valid_args(&a, k, c, &r);
    int rc = call(k, &a, nb);
    bi_check(rc == MPI_SUCCESS, "valid %s%s on %s returned %s", nb ? "MPI_I" : "MPIX_", coll[k].name,
             c->name, bi_class_name(bi_class(rc)));
    if (rc != MPI_SUCCESS) return;
    if (nb) {
        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        bi_check(rc == MPI_SUCCESS, "wait of valid MPI_I%s on %s", coll[k].name, c->name);
    } else {
        MPI_Request_free(&r);
    }
}

static void misuse_comm(const cx_t *c)
{
    for (int k = 0; k < NK; k++) {
        case_begin("%s on %s", coll[k].name, c->name);
        for (int nb = 0; nb < 2; nb++) {
            if (bi_round == 0) baseline(k, c, nb);
            misuse_coll(k, c, nb);
        }
    }
}

/* ------------------------------------------------------------ main */
int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 1;
    max_print = 400;
    test_init(&argc, &argv, "badinput", &bi_wrank, &bi_wsize);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (bi_wsize > MAXN / 2) {
        if (bi_wrank == 0) printf("SKIP badinput: more than %d ranks\n", MAXN / 2);
        MPI_Finalize();
        return 0;
    }
    MPI_Type_contiguous(2, MPI_INT, &uncommitted);
    MPI_Send_init(sbuf, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_SELF, &bi_sentinel);

    cx_t w = { "dup(world)", MPI_COMM_NULL, 0, 0, 0, 0, 0, 0 }, s = w, t = w, ic = w;
    MPI_Comm_dup(MPI_COMM_WORLD, &w.comm);
    w.rank = bi_wrank;
    w.size = bi_wsize;
    s.name = "MPI_COMM_SELF";
    s.comm = MPI_COMM_SELF;
    s.rank = 0;
    s.size = 1;
    int dims[1] = { bi_wsize }, periods[1] = { 1 };
    t.name = "cart(1-D periodic)";
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &t.comm);
    MPI_Comm_rank(t.comm, &t.rank);
    MPI_Comm_size(t.comm, &t.size);
    t.topo = 1;
    ic.name = "intercomm";
    if (bi_wsize >= 2) {
        MPI_Comm half;
        int h = bi_wsize / 2, low = bi_wrank < h;
        MPI_Comm_split(MPI_COMM_WORLD, low, bi_wrank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? h : 0, 17, &ic.comm);
        MPI_Comm_free(&half);
        MPI_Comm_rank(ic.comm, &ic.rank);
        MPI_Comm_size(ic.comm, &ic.size);
        MPI_Comm_remote_size(ic.comm, &ic.remote);
        ic.inter = 1;
        ic.root_here = low;
    }

    long rss_start = -1;
    for (bi_round = 0; bi_round < rounds; bi_round++) {
        misuse_comm(&w);
        misuse_comm(&s);
        misuse_comm(&t);
        if (ic.comm != MPI_COMM_NULL) misuse_comm(&ic);
        bi_partitioned();
        bi_channels();
        if (bi_round == 1) rss_start = rss_bytes();
    }
    bi_verify_colls(&w, &t, &ic);
    bi_pc_verify();
    if (rounds >= 20 && rss_start > 0) {
        long grown = rss_bytes() - rss_start;
        n_checks++;
        if (grown > 2L * 1024 * 1024)
            fail_line("badinput leak", rounds, "RSS grew by %ld bytes over %d rounds of invalid calls", grown,
                      rounds - 2);
        else if (bi_wrank == 0)
            printf("badinput: RSS growth %ld bytes over %d rounds\n", grown, rounds - 2);
    }
    watchdog_disarm();

    long tried = 0;
    MPI_Reduce(&bi_tried, &tried, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    totals_t t_all = totals_sum();
    if (bi_wrank == 0)
        printf("badinput: np=%d rounds=%d invalid calls=%ld checks=%ld failed=%ld\n", bi_wsize, rounds, tried,
               t_all.checks, t_all.failed);
    MPI_Request_free(&bi_sentinel);
    MPI_Type_free(&uncommitted);
    MPI_Comm_free(&w.comm);
    MPI_Comm_free(&t.comm);
    if (ic.comm != MPI_COMM_NULL) MPI_Comm_free(&ic.comm);
    MPI_Finalize();
    return t_all.failed ? 1 : 0;
}
