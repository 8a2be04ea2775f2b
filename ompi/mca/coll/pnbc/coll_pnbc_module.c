/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The module: which slots pnbc fills on a communicator, and the single
 * path every *_init slot takes:
 *
 *     normalise arguments -> choose algorithm -> build schedule
 *         -> commit (temporaries, addresses, transports) -> request
 *
 * pnbc fills the persistent and the nonblocking slots of the collectives
 * it implements (per kind of communicator); the blocking ones stay with
 * the other components (tuned/han).
 */

#include "coll_pnbc.h"
#include "coll_pnbc_algorithms.h"
#include "common_pnbc_request.h"
#include "common_pnbc_transport.h"

#include "ompi/info/info.h"
#include "ompi/mca/topo/base/base.h"
#include "ompi/proc/proc.h"
#include "opal/class/opal_hash_table.h"
#include "opal/util/output.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Transports set up what the communicator's first requests share (shm:
 * the peers' pools, once per process). */
static int pnbc_module_enable(mca_coll_base_module_t *module, struct ompi_communicator_t *comm)
{
    (void) module;
    pnbc_transport_comm_enable(comm);
    return OMPI_SUCCESS;
}

static void pnbc_module_construct(mca_coll_pnbc_module_t *module)
{
    module->ninit = 0;
    module->ncalls = 0;
    module->has_cid = false;
    module->multinode = false;
    module->node_of = NULL;
    memset(&module->cache, 0, sizeof(module->cache));
}

/* At communicator free: the nonblocking schedule cache goes with it
 * (no call is running then: each holds the communicator). */
static void pnbc_module_destruct(mca_coll_pnbc_module_t *module)
{
    mca_coll_pnbc_cache_fini(module);
    free(module->node_of);
    if (module->has_cid) {
        pnbc_transport_comm_free(module->cid);
    }
}

OBJ_CLASS_INSTANCE(mca_coll_pnbc_module_t, mca_coll_base_module_t,
                   pnbc_module_construct, pnbc_module_destruct);

/* Refusals on an intercommunicator.  Open MPI 4.1.4's MPIX_Exscan_init,
 * MPI_Iexscan, MPIX_Neighbor_allgather_init and MPI_Ineighbor_allgather
 * call the slot without checking the kind of communicator; no component
 * fills these slots on an intercommunicator, so the call jumps to NULL.
 * pnbc fills them there with a refusal: MPI_ERR_COMM (exscan is defined
 * on intracommunicators only), MPI_ERR_TOPOLOGY (an intercommunicator
 * has no topology). */
static int refuse_iexscan(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                          struct ompi_op_t *op, struct ompi_communicator_t *comm,
                          ompi_request_t **request, mca_coll_base_module_t *module)
{
    (void) sbuf, (void) rbuf, (void) count, (void) dtype, (void) op, (void) comm;
    (void) request, (void) module;
    return MPI_ERR_COMM;
}

static int refuse_exscan_init(const void *sbuf, void *rbuf, int count,
                              struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                              struct ompi_communicator_t *comm, struct ompi_info_t *info,
                              ompi_request_t **request, mca_coll_base_module_t *module)
{
    (void) info;
    return refuse_iexscan(sbuf, rbuf, count, dtype, op, comm, request, module);
}

static int refuse_ineighbor_allgather(const void *sbuf, int scount,
                                      struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                                      struct ompi_datatype_t *rdtype,
                                      struct ompi_communicator_t *comm,
                                      ompi_request_t **request, mca_coll_base_module_t *module)
{
    (void) sbuf, (void) scount, (void) sdtype, (void) rbuf, (void) rcount, (void) rdtype;
    (void) comm, (void) request, (void) module;
    return MPI_ERR_TOPOLOGY;
}

static int refuse_neighbor_allgather_init(const void *sbuf, int scount,
                                          struct ompi_datatype_t *sdtype, void *rbuf,
                                          int rcount, struct ompi_datatype_t *rdtype,
                                          struct ompi_communicator_t *comm,
                                          struct ompi_info_t *info, ompi_request_t **request,
                                          mca_coll_base_module_t *module)
{
    (void) info;
    return refuse_ineighbor_allgather(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm,
                                      request, module);
}

/* Claim a persistent and the nonblocking slot only when the collective
 * has an algorithm for this kind of communicator (and the refusals above
 * on intercommunicators). */
static void fill_slots(mca_coll_base_module_t *m, bool inter)
{
#define PNBC_FILL_SLOT(ID, name, groups, large, pace) \
    m->coll_##name##_init = mca_coll_pnbc_implemented(PNBC_##ID, inter) \
                                ? mca_coll_pnbc_##name##_init : NULL; \
    m->coll_i##name = mca_coll_pnbc_implemented(PNBC_##ID, inter) \
                          ? mca_coll_pnbc_i##name : NULL;
    PNBC_COLLECTIVES(PNBC_FILL_SLOT)
#undef PNBC_FILL_SLOT
    if (inter) {
        m->coll_exscan_init = refuse_exscan_init;
        m->coll_iexscan = refuse_iexscan;
        m->coll_neighbor_allgather_init = refuse_neighbor_allgather_init;
        m->coll_ineighbor_allgather = refuse_ineighbor_allgather;
    }
}

/* Are an intracommunicator's ranks on more than one node? */
static bool spans_nodes(ompi_communicator_t *comm)
{
    const int me = ompi_comm_rank(comm);
    for (int r = 0; r < ompi_comm_size(comm); ++r) {
        const ompi_proc_t *p = (r == me) ? NULL : ompi_comm_peer_lookup(comm, r);
        if (NULL != p && !OPAL_PROC_ON_LOCAL_NODE(p->super.proc_flags)) {
            return true;
        }
    }
    return false;
}

/* Each rank's node, numbered in order of first appearance, from the
 * hostnames the modex gives every process alike for the others (NULL: no
 * memory).  A process knows its own host by another name (its nodename,
 * not the launcher's): it takes a peer's on its node, or is alone there.
 * A hash of the names seen keeps it one lookup a rank, however many
 * nodes. */
static int *nodes_of(ompi_communicator_t *comm)
{
    const int p = ompi_comm_size(comm), me = ompi_comm_rank(comm);
    int *node = malloc(sizeof(int) * (size_t) p);
    const char **name = malloc(sizeof(char *) * (size_t) p);
    opal_hash_table_t seen;     /* hostname -> its node */
    int nnodes = 0, rc = OPAL_ERR_OUT_OF_RESOURCE;

    OBJ_CONSTRUCT(&seen, opal_hash_table_t);
    if (NULL != node && NULL != name) {
        rc = opal_hash_table_init(&seen, (size_t) p);
    }
    if (OPAL_SUCCESS == rc) {
        name[me] = NULL;
        for (int r = 0; r < p; ++r) {
            const ompi_proc_t *proc = ompi_comm_peer_lookup(comm, r);
            if (r != me) {
                name[r] = opal_get_proc_hostname(&proc->super);
                if (NULL == name[me] && OPAL_PROC_ON_LOCAL_NODE(proc->super.proc_flags)) {
                    name[me] = name[r];
                }
            }
        }
    }
    for (int r = 0; r < p && OPAL_SUCCESS == rc; ++r) {
        void *known;
        if (NULL == name[r]) {          /* no name: a node of its own */
            node[r] = nnodes++;
        } else if (OPAL_SUCCESS == opal_hash_table_get_value_ptr(&seen, name[r], strlen(name[r]),
                                                                 &known)) {
            node[r] = (int) (intptr_t) known;
        } else {
            node[r] = nnodes++;
            rc = opal_hash_table_set_value_ptr(&seen, name[r], strlen(name[r]),
                                               (void *) (intptr_t) node[r]);
        }
    }
    OBJ_DESTRUCT(&seen);
    free((void *) name);
    if (OPAL_SUCCESS != rc) {
        free(node);
        return NULL;
    }
    if (mca_common_pnbc_params.verbose >= 2) {
        char list[3 * 64 + 8] = "";
        size_t len = 0;
        for (int r = 0; r < p && r < 64; ++r) {
            len += (size_t) snprintf(list + len, sizeof(list) - len, " %d", node[r]);
        }
        opal_output(0, "coll:pnbc: cid %u rank %d: %d nodes, node of each rank:%s%s",
                    (unsigned) pnbc_comm_key(comm), me, nnodes, list, (p > 64) ? " ..." : "");
    }
    return node;
}

mca_coll_base_module_t *mca_coll_pnbc_comm_query(struct ompi_communicator_t *comm,
                                                  int *priority)
{
    mca_coll_pnbc_module_t *module = OBJ_NEW(mca_coll_pnbc_module_t);
    if (NULL == module) {
        return NULL;
    }
    *priority = mca_coll_pnbc_component.priority;
    module->super.coll_module_enable = pnbc_module_enable;
    module->cid = pnbc_comm_key(comm);
    module->has_cid = true;
    module->multinode = !OMPI_COMM_IS_INTER(comm) && spans_nodes(comm);
    module->node_of = module->multinode ? nodes_of(comm) : NULL;
    fill_slots(&module->super, OMPI_COMM_IS_INTER(comm));
    return &module->super;
}

/* ------------------------------------------------------------------ */
/* The common *_init path                                             */
/* ------------------------------------------------------------------ */

/* Keep every user datatype and op the schedule refers to. */
static int retain_objects(pnbc_request_t *req, const pnbc_coll_args_t *args)
{
    int rc = OMPI_SUCCESS;
    ompi_datatype_t *singles[] = { args->dtype, args->sdtype, args->rdtype };

    pnbc_request_retain_op(req, args->op);
    for (size_t i = 0; i < sizeof(singles) / sizeof(singles[0]) && OMPI_SUCCESS == rc; ++i) {
        rc = pnbc_request_retain_dtype(req, singles[i]);
    }
    for (int i = 0; NULL != args->sdtypes && i < args->nsend_entries && OMPI_SUCCESS == rc; ++i) {
        rc = pnbc_request_retain_dtype(req, args->sdtypes[i]);
    }
    for (int i = 0; NULL != args->rdtypes && i < args->nrecv_entries && OMPI_SUCCESS == rc; ++i) {
        rc = pnbc_request_retain_dtype(req, args->rdtypes[i]);
    }
    return rc;
}

/* The pipeline segment for this request: hint, else MCA parameter. */
static size_t request_segsize(struct ompi_info_t *info)
{
    char value[32];
    int flag = 0;
    if (OMPI_SUCCESS == pnbc_info_get(info, "pnbc_segsize", value, sizeof(value), &flag) &&
        flag && atol(value) > 0) {
        return (size_t) atol(value);
    }
    return (size_t) (mca_coll_pnbc_component.segsize > 0 ? mca_coll_pnbc_component.segsize : 0);
}

char mca_coll_pnbc_nonblocking_marker;

int mca_coll_pnbc_build(pnbc_request_t *req, pnbc_coll_args_t *args,
                        const pnbc_algorithm_t *alg)
{
    req->name = mca_coll_pnbc_coll_name(args->coll);
    req->algorithm = alg->name;
    alg->build(&req->sched, args);
    req->sched.large = mca_coll_pnbc_large_msgs(args->coll);
    int rc = pnbc_sched_commit(&req->sched, args->sbuf, args->rbuf, args->comm, req->exec.tag);
    if (OMPI_SUCCESS == rc) {
        rc = retain_objects(req, args);
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* Argument checks                                                    */
/* ------------------------------------------------------------------ */

/* Open MPI's wrappers (MPIX_<Coll>_init, MPI_I<coll>) check the
 * communicator and most arguments before calling a slot, but not all of
 * them (none checks the request pointer; MPIX_Scatter_init lets a bad
 * root-side count or datatype through, ...).  Every argument significant
 * at this rank is checked here, before anything is created: an MPI error
 * class, MPI_SUCCESS when all are valid.  The entry points cast counts
 * to size_t, so a negative count arrives above INT_MAX. */

static int check_count(size_t count)
{
    return (count > (size_t) INT_MAX) ? MPI_ERR_COUNT : MPI_SUCCESS;
}

static int check_type(const ompi_datatype_t *dtype)
{
    if (NULL == dtype || &ompi_mpi_datatype_null.dt == dtype ||
        !ompi_datatype_is_committed(dtype)) {
        return MPI_ERR_TYPE;
    }
    return MPI_SUCCESS;
}

/* count elements of dtype: the count first, as the wrappers do */
static int check_block(size_t count, const ompi_datatype_t *dtype)
{
    int err = check_count(count);
    return (MPI_SUCCESS == err) ? check_type(dtype) : err;
}

static int check_counts(const int *counts, int n)
{
    if (n > 0 && NULL == counts) {
        return MPI_ERR_ARG;
    }
    for (int i = 0; i < n; ++i) {
        if (counts[i] < 0) {
            return MPI_ERR_COUNT;
        }
    }
    return MPI_SUCCESS;
}

/* counts[n] with one datatype, or with types[n] when types is given */
static int check_vector(const int *counts, int n, const ompi_datatype_t *dtype,
                        ompi_datatype_t *const *types, bool per_peer)
{
    int err = check_counts(counts, n);
    if (MPI_SUCCESS != err || !per_peer) {
        return (MPI_SUCCESS == err) ? check_type(dtype) : err;
    }
    if (n > 0 && NULL == types) {
        return MPI_ERR_ARG;
    }
    for (int i = 0; i < n && MPI_SUCCESS == err; ++i) {
        err = check_type(types[i]);
    }
    return err;
}

/* A predefined op must be defined on the (predefined) datatype; a user op
 * cannot be checked. */
static int check_op(ompi_op_t *op, ompi_datatype_t *dtype)
{
    if (NULL == op || &ompi_mpi_op_null.op == op) {
        return MPI_ERR_OP;
    }
    if (ompi_op_is_intrinsic(op) && ompi_datatype_is_predefined(dtype)) {
        char *msg = NULL;
        bool ok = ompi_op_is_valid(op, dtype, &msg, "pnbc");
        free(msg);
        return ok ? MPI_SUCCESS : MPI_ERR_OP;
    }
    return MPI_SUCCESS;
}

/* Which side of a rooted collective this rank is on. */
typedef enum { SIDE_ROOT, SIDE_LEAF, SIDE_NONE, SIDE_BAD } side_t;

static side_t rooted_side(const pnbc_coll_args_t *a)
{
    if (a->inter) {
        if (MPI_ROOT == a->root) {
            return SIDE_ROOT;
        }
        if (MPI_PROC_NULL == a->root) {
            return SIDE_NONE;
        }
        return (a->root >= 0 && a->root < a->remote_size) ? SIDE_LEAF : SIDE_BAD;
    }
    if (a->root < 0 || a->root >= a->size) {
        return SIDE_BAD;
    }
    return (a->root == a->rank) ? SIDE_ROOT : SIDE_LEAF;
}

/* The first error among up to two checks. */
#define PNBC_FIRST(e1, e2) ((MPI_SUCCESS != (e1)) ? (e1) : (e2))

int mca_coll_pnbc_check_args(const pnbc_coll_args_t *a, ompi_request_t **request)
{
    if (NULL == request) {
        return MPI_ERR_ARG;
    }
    const int n = a->inter ? a->remote_size : a->size;    /* per-peer entries */
    int indeg = 0, outdeg = 0;
    bool send_side = !a->in_place;  /* a send buffer of this rank's own */
    side_t side = SIDE_LEAF;

    switch (a->coll) {
    case PNBC_BCAST: case PNBC_REDUCE: case PNBC_GATHER: case PNBC_GATHERV:
    case PNBC_SCATTER: case PNBC_SCATTERV:
        side = rooted_side(a);
        if (SIDE_BAD == side) {
            return MPI_ERR_ROOT;
        }
        break;
    case PNBC_NEIGHBOR_ALLGATHER: case PNBC_NEIGHBOR_ALLGATHERV: case PNBC_NEIGHBOR_ALLTOALL:
    case PNBC_NEIGHBOR_ALLTOALLV: case PNBC_NEIGHBOR_ALLTOALLW:
        if (OMPI_SUCCESS != mca_topo_base_neighbor_count(a->comm, &indeg, &outdeg)) {
            return MPI_ERR_TOPOLOGY;
        }
        break;
    default:
        break;
    }
    if (SIDE_NONE == side) {
        return MPI_SUCCESS;     /* an intercommunicator rank not taking part */
    }

    switch (a->coll) {
    case PNBC_BARRIER:
        return MPI_SUCCESS;
    case PNBC_BCAST:
        return check_block(a->count, a->dtype);
    case PNBC_REDUCE: case PNBC_ALLREDUCE: case PNBC_SCAN: case PNBC_EXSCAN:
    case PNBC_REDUCE_SCATTER_BLOCK: {
        int err = check_block(a->count, a->dtype);
        return PNBC_FIRST(err, check_op(a->op, a->dtype));
    }
    case PNBC_REDUCE_SCATTER: {
        int err = check_vector(a->rcounts, a->size, a->dtype, NULL, false);
        return PNBC_FIRST(err, check_op(a->op, a->dtype));
    }
    case PNBC_GATHER: case PNBC_GATHERV: {
        /* the root of an intracommunicator sends too, unless in place */
        int err = (SIDE_LEAF == side || (!a->inter && send_side))
                      ? check_block(a->scount, a->sdtype) : MPI_SUCCESS;
        if (MPI_SUCCESS != err || SIDE_ROOT != side) {
            return err;
        }
        return (PNBC_GATHER == a->coll) ? check_block(a->rcount, a->rdtype)
                                        : check_vector(a->rcounts, n, a->rdtype, NULL, false);
    }
    case PNBC_SCATTER: case PNBC_SCATTERV: {
        int err = MPI_SUCCESS;
        if (SIDE_ROOT == side) {
            err = (PNBC_SCATTER == a->coll) ? check_block(a->scount, a->sdtype)
                                            : check_vector(a->scounts, n, a->sdtype, NULL, false);
        }
        if (MPI_SUCCESS == err && (SIDE_LEAF == side || (!a->inter && !a->in_place))) {
            err = check_block(a->rcount, a->rdtype);
        }
        return err;
    }
    case PNBC_ALLGATHER: case PNBC_ALLTOALL: {
        int err = send_side ? check_block(a->scount, a->sdtype) : MPI_SUCCESS;
        return PNBC_FIRST(err, check_block(a->rcount, a->rdtype));
    }
    case PNBC_ALLGATHERV: {
        int err = send_side ? check_block(a->scount, a->sdtype) : MPI_SUCCESS;
        return PNBC_FIRST(err, check_vector(a->rcounts, n, a->rdtype, NULL, false));
    }
    case PNBC_ALLTOALLV: case PNBC_ALLTOALLW: {
        bool w = (PNBC_ALLTOALLW == a->coll);
        int err = send_side ? check_vector(a->scounts, n, a->sdtype, a->sdtypes, w) : MPI_SUCCESS;
        return PNBC_FIRST(err, check_vector(a->rcounts, n, a->rdtype, a->rdtypes, w));
    }
    case PNBC_NEIGHBOR_ALLGATHER: case PNBC_NEIGHBOR_ALLTOALL: {
        int err = check_block(a->scount, a->sdtype);
        return PNBC_FIRST(err, check_block(a->rcount, a->rdtype));
    }
    case PNBC_NEIGHBOR_ALLGATHERV: {
        int err = check_block(a->scount, a->sdtype);
        return PNBC_FIRST(err, check_vector(a->rcounts, indeg, a->rdtype, NULL, false));
    }
    case PNBC_NEIGHBOR_ALLTOALLV: case PNBC_NEIGHBOR_ALLTOALLW: {
        bool w = (PNBC_NEIGHBOR_ALLTOALLW == a->coll);
        int err = check_vector(a->scounts, outdeg, a->sdtype, a->sdtypes, w);
        return PNBC_FIRST(err, check_vector(a->rcounts, indeg, a->rdtype, a->rdtypes, w));
    }
    default:
        return MPI_SUCCESS;
    }
}

int mca_coll_pnbc_coll_init(pnbc_coll_args_t *args, struct ompi_info_t *info,
                            ompi_request_t **request, mca_coll_base_module_t *module)
{
    mca_coll_pnbc_module_t *pmod = (mca_coll_pnbc_module_t *) module;

    args->rank = ompi_comm_rank(args->comm);
    args->size = ompi_comm_size(args->comm);
    args->inter = OMPI_COMM_IS_INTER(args->comm);
    args->remote_size = args->inter ? ompi_comm_remote_size(args->comm) : 0;
    args->multinode = pmod->multinode;
    args->node_of = pmod->node_of;
    if (PNBC_NONBLOCKING == info) {
        /* the call checks its arguments when it misses the cache */
        if (NULL == request) {
            return MPI_ERR_ARG;
        }
        args->segsize = request_segsize(NULL);
        return mca_coll_pnbc_nbc_call(args, request, pmod);
    }
    int err = mca_coll_pnbc_check_args(args, request);
    if (MPI_SUCCESS != err) {
        return err;
    }
    args->segsize = request_segsize(info);
    const pnbc_algorithm_t *alg = mca_coll_pnbc_select(args, info);

    pnbc_request_t *req =
        pnbc_request_new(args->comm, mca_coll_pnbc_next_tag(pmod));
    if (NULL == req) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    int rc = mca_coll_pnbc_build(req, args, alg);
    if (OMPI_SUCCESS != rc) {
        req->super.req_state = OMPI_REQUEST_INVALID;
        OBJ_RELEASE(req);
        return rc;
    }
    if (mca_common_pnbc_params.verbose >= 1) {
        opal_output(0, "coll:pnbc: %s_init algorithm=%s comm_size=%d rank=%d "
                    "rounds=%u actions=%u tmp_bytes=%zu",
                    req->name, req->algorithm, args->size, args->rank,
                    req->sched.nrounds, req->sched.nactions, req->sched.tmp_size);
    }
    *request = &req->super;
    return OMPI_SUCCESS;
}
