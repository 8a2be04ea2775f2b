/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The 22 persistent-collective slots.  Each one only normalises its MPI
 * arguments into a pnbc_coll_args_t (resolving MPI_IN_PLACE) and takes
 * the common path, mca_coll_pnbc_coll_init().
 */

#include "coll_pnbc.h"

#include "ompi/mca/topo/base/base.h"

/* The head of a slot's definition: its MPI arguments, then Open MPI's. */
#define PNBC_DECLARE_INIT(name, ...) \
    int mca_coll_pnbc_##name##_init(__VA_ARGS__, struct ompi_communicator_t *comm, \
                                    struct ompi_info_t *info, ompi_request_t **request, \
                                    mca_coll_base_module_t *module)

#define PNBC_INIT(args) mca_coll_pnbc_coll_init(&(args), info, request, module)

static bool is_in_place(const void *buf)
{
    return MPI_IN_PLACE == buf;
}

/* Whether the receive (recv_side) or the send buffer of coll is
 * significant at this rank: the receive buffer of reduce/gather(v) and
 * the send buffer of scatter(v) at the root only (on an
 * intercommunicator: MPI_ROOT receives / sends, the other group the
 * reverse, MPI_PROC_NULL nothing). */
static bool buffer_significant(pnbc_coll_t coll, bool recv_side, int root,
                               ompi_communicator_t *comm)
{
    bool to_root;   /* data flows towards the root */
    switch (coll) {
    case PNBC_REDUCE: case PNBC_GATHER: case PNBC_GATHERV:
        to_root = true;
        break;
    case PNBC_SCATTER: case PNBC_SCATTERV:
        to_root = false;
        break;
    default:
        return true;
    }
    bool at_root;
    if (OMPI_COMM_IS_INTER(comm)) {
        if (MPI_PROC_NULL == root) {
            return false;
        }
        at_root = (MPI_ROOT == root);
    } else {
        at_root = (root == ompi_comm_rank(comm));
        if (at_root) {
            return true;    /* the root sends to itself too */
        }
    }
    /* the root's side: receive when data flows to it, else send */
    return at_root ? (recv_side == to_root) : (recv_side != to_root);
}

/* Whether MPI_IN_PLACE may stand for that buffer: intracommunicators
 * only; the receive buffer at the root of scatter(v), the send buffer at
 * the root of reduce/gather(v) and everywhere in the unrooted collectives
 * that have an in-place form. */
static bool in_place_allowed(pnbc_coll_t coll, bool recv_side, int root,
                             ompi_communicator_t *comm)
{
    if (OMPI_COMM_IS_INTER(comm)) {
        return false;
    }
    const bool at_root = (root == ompi_comm_rank(comm));
    switch (coll) {
    case PNBC_SCATTER: case PNBC_SCATTERV:
        return recv_side && at_root;
    case PNBC_REDUCE: case PNBC_GATHER: case PNBC_GATHERV:
        return !recv_side && at_root;
    case PNBC_ALLREDUCE: case PNBC_SCAN: case PNBC_EXSCAN: case PNBC_REDUCE_SCATTER:
    case PNBC_REDUCE_SCATTER_BLOCK: case PNBC_ALLGATHER: case PNBC_ALLGATHERV:
    case PNBC_ALLTOALL: case PNBC_ALLTOALLV: case PNBC_ALLTOALLW:
        return !recv_side;
    default:
        return false;
    }
}

static bool bad_in_place(pnbc_coll_t coll, const void *buf, bool recv_side, int root,
                         ompi_communicator_t *comm)
{
    return is_in_place(buf) && buffer_significant(coll, recv_side, root, comm) &&
           !in_place_allowed(coll, recv_side, root, comm);
}

/* MPI_ERR_BUFFER for MPI_IN_PLACE where it is not allowed (Open MPI's
 * wrappers catch most of these, not all: MPIX_Exscan_init, ...). */
static int check_in_place(pnbc_coll_t coll, const void *sbuf, const void *rbuf, int root,
                          ompi_communicator_t *comm)
{
    if (bad_in_place(coll, sbuf, false, root, comm) || bad_in_place(coll, rbuf, true, root, comm)) {
        return MPI_ERR_BUFFER;
    }
    return MPI_SUCCESS;
}

/* sbuf, or NULL when it is MPI_IN_PLACE */
static const void *send_buffer(const void *sbuf)
{
    return is_in_place(sbuf) ? NULL : sbuf;
}

int mca_coll_pnbc_barrier_init(struct ompi_communicator_t *comm, struct ompi_info_t *info,
                               ompi_request_t **request, mca_coll_base_module_t *module)
{
    pnbc_coll_args_t a = { .coll = PNBC_BARRIER, .comm = comm };
    return PNBC_INIT(a);
}

PNBC_DECLARE_INIT(bcast, void *buf, int count, struct ompi_datatype_t *dtype, int root)
{
    pnbc_coll_args_t a = { .coll = PNBC_BCAST, .comm = comm, .sbuf = buf, .rbuf = buf,
                           .count = (size_t) count, .dtype = dtype, .root = root };
    return PNBC_INIT(a);
}

/* Reductions whose input lives in rbuf when sbuf is MPI_IN_PLACE. */
static int reduction_init(pnbc_coll_t coll, const void *sbuf, void *rbuf, int count,
                          ompi_datatype_t *dtype, ompi_op_t *op, int root,
                          ompi_communicator_t *comm, struct ompi_info_t *info,
                          ompi_request_t **request, mca_coll_base_module_t *module)
{
    int err = check_in_place(coll, sbuf, rbuf, root, comm);
    if (MPI_SUCCESS != err) {
        return err;
    }
    bool in_place = is_in_place(sbuf);
    pnbc_coll_args_t a = { .coll = coll, .comm = comm, .sbuf = in_place ? rbuf : sbuf,
                           .rbuf = rbuf, .count = (size_t) count, .dtype = dtype,
                           .op = op, .root = root, .in_place = in_place };
    return PNBC_INIT(a);
}

PNBC_DECLARE_INIT(reduce, const void *sbuf, void *rbuf, int count,
                  struct ompi_datatype_t *dtype, struct ompi_op_t *op, int root)
{
    return reduction_init(PNBC_REDUCE, sbuf, rbuf, count, dtype, op, root, comm, info,
                          request, module);
}

PNBC_DECLARE_INIT(allreduce, const void *sbuf, void *rbuf, int count,
                  struct ompi_datatype_t *dtype, struct ompi_op_t *op)
{
    return reduction_init(PNBC_ALLREDUCE, sbuf, rbuf, count, dtype, op, 0, comm, info,
                          request, module);
}

PNBC_DECLARE_INIT(scan, const void *sbuf, void *rbuf, int count,
                  struct ompi_datatype_t *dtype, struct ompi_op_t *op)
{
    return reduction_init(PNBC_SCAN, sbuf, rbuf, count, dtype, op, 0, comm, info,
                          request, module);
}

PNBC_DECLARE_INIT(exscan, const void *sbuf, void *rbuf, int count,
                  struct ompi_datatype_t *dtype, struct ompi_op_t *op)
{
    return reduction_init(PNBC_EXSCAN, sbuf, rbuf, count, dtype, op, 0, comm, info,
                          request, module);
}

PNBC_DECLARE_INIT(reduce_scatter_block, const void *sbuf, void *rbuf, int rcount,
                  struct ompi_datatype_t *dtype, struct ompi_op_t *op)
{
    return reduction_init(PNBC_REDUCE_SCATTER_BLOCK, sbuf, rbuf, rcount, dtype, op, 0,
                          comm, info, request, module);
}

PNBC_DECLARE_INIT(reduce_scatter, const void *sbuf, void *rbuf, const int *rcounts,
                  struct ompi_datatype_t *dtype, struct ompi_op_t *op)
{
    int err = check_in_place(PNBC_REDUCE_SCATTER, sbuf, rbuf, 0, comm);
    if (MPI_SUCCESS != err) {
        return err;
    }
    bool in_place = is_in_place(sbuf);
    pnbc_coll_args_t a = { .coll = PNBC_REDUCE_SCATTER, .comm = comm,
                           .sbuf = in_place ? rbuf : sbuf, .rbuf = rbuf,
                           .rcounts = rcounts, .dtype = dtype, .op = op,
                           .in_place = in_place };
    return PNBC_INIT(a);
}

/* gather/scatter/allgather/alltoall and their neighbourhood forms */
static int block_init(pnbc_coll_t coll, const void *sbuf, int scount, ompi_datatype_t *sdtype,
                      void *rbuf, int rcount, ompi_datatype_t *rdtype, int root,
                      ompi_communicator_t *comm, struct ompi_info_t *info,
                      ompi_request_t **request, mca_coll_base_module_t *module)
{
    int err = check_in_place(coll, sbuf, rbuf, root, comm);
    if (MPI_SUCCESS != err) {
        return err;
    }
    pnbc_coll_args_t a = { .coll = coll, .comm = comm, .root = root,
                           .in_place = is_in_place(sbuf) || is_in_place(rbuf),
                           .sbuf = send_buffer(sbuf), .scount = (size_t) scount,
                           .sdtype = sdtype, .rbuf = is_in_place(rbuf) ? NULL : rbuf,
                           .rcount = (size_t) rcount, .rdtype = rdtype };
    return PNBC_INIT(a);
}

PNBC_DECLARE_INIT(gather, const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                  void *rbuf, int rcount, struct ompi_datatype_t *rdtype, int root)
{
    return block_init(PNBC_GATHER, sbuf, scount, sdtype, rbuf, rcount, rdtype, root, comm,
                      info, request, module);
}

PNBC_DECLARE_INIT(scatter, const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                  void *rbuf, int rcount, struct ompi_datatype_t *rdtype, int root)
{
    return block_init(PNBC_SCATTER, sbuf, scount, sdtype, rbuf, rcount, rdtype, root, comm,
                      info, request, module);
}

PNBC_DECLARE_INIT(allgather, const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                  void *rbuf, int rcount, struct ompi_datatype_t *rdtype)
{
    return block_init(PNBC_ALLGATHER, sbuf, scount, sdtype, rbuf, rcount, rdtype, 0, comm,
                      info, request, module);
}

PNBC_DECLARE_INIT(alltoall, const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                  void *rbuf, int rcount, struct ompi_datatype_t *rdtype)
{
    return block_init(PNBC_ALLTOALL, sbuf, scount, sdtype, rbuf, rcount, rdtype, 0, comm,
                      info, request, module);
}

PNBC_DECLARE_INIT(neighbor_allgather, const void *sbuf, int scount,
                  struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                  struct ompi_datatype_t *rdtype)
{
    return block_init(PNBC_NEIGHBOR_ALLGATHER, sbuf, scount, sdtype, rbuf, rcount, rdtype,
                      0, comm, info, request, module);
}

PNBC_DECLARE_INIT(neighbor_alltoall, const void *sbuf, int scount,
                  struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                  struct ompi_datatype_t *rdtype)
{
    return block_init(PNBC_NEIGHBOR_ALLTOALL, sbuf, scount, sdtype, rbuf, rcount, rdtype,
                      0, comm, info, request, module);
}

/* The v variants: per-peer counts and displacements on one or both sides. */
static int vector_init(pnbc_coll_args_t *a, ompi_communicator_t *comm,
                       struct ompi_info_t *info, ompi_request_t **request,
                       mca_coll_base_module_t *module)
{
    int err = check_in_place(a->coll, a->sbuf, a->rbuf, a->root, comm);
    if (MPI_SUCCESS != err) {
        return err;
    }
    a->comm = comm;
    a->in_place = is_in_place(a->sbuf) || is_in_place(a->rbuf);
    a->sbuf = send_buffer(a->sbuf);
    a->rbuf = is_in_place(a->rbuf) ? NULL : a->rbuf;
    return mca_coll_pnbc_coll_init(a, info, request, module);
}

PNBC_DECLARE_INIT(gatherv, const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                  void *rbuf, const int *rcounts, const int *displs,
                  struct ompi_datatype_t *rdtype, int root)
{
    pnbc_coll_args_t a = { .coll = PNBC_GATHERV, .sbuf = sbuf, .scount = (size_t) scount,
                           .sdtype = sdtype, .rbuf = rbuf, .rcounts = rcounts,
                           .rdispls = displs, .rdtype = rdtype, .root = root };
    return vector_init(&a, comm, info, request, module);
}

PNBC_DECLARE_INIT(scatterv, const void *sbuf, const int *scounts, const int *displs,
                  struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                  struct ompi_datatype_t *rdtype, int root)
{
    pnbc_coll_args_t a = { .coll = PNBC_SCATTERV, .sbuf = sbuf, .scounts = scounts,
                           .sdispls = displs, .sdtype = sdtype, .rbuf = rbuf,
                           .rcount = (size_t) rcount, .rdtype = rdtype, .root = root };
    return vector_init(&a, comm, info, request, module);
}

PNBC_DECLARE_INIT(allgatherv, const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                  void *rbuf, const int *rcounts, const int *displs,
                  struct ompi_datatype_t *rdtype)
{
    pnbc_coll_args_t a = { .coll = PNBC_ALLGATHERV, .sbuf = sbuf, .scount = (size_t) scount,
                           .sdtype = sdtype, .rbuf = rbuf, .rcounts = rcounts,
                           .rdispls = displs, .rdtype = rdtype };
    return vector_init(&a, comm, info, request, module);
}

PNBC_DECLARE_INIT(alltoallv, const void *sbuf, const int *scounts, const int *sdispls,
                  struct ompi_datatype_t *sdtype, void *rbuf, const int *rcounts,
                  const int *rdispls, struct ompi_datatype_t *rdtype)
{
    pnbc_coll_args_t a = { .coll = PNBC_ALLTOALLV, .sbuf = sbuf, .scounts = scounts,
                           .sdispls = sdispls, .sdtype = sdtype, .rbuf = rbuf,
                           .rcounts = rcounts, .rdispls = rdispls, .rdtype = rdtype };
    return vector_init(&a, comm, info, request, module);
}

PNBC_DECLARE_INIT(alltoallw, const void *sbuf, const int *scounts, const int *sdispls,
                  struct ompi_datatype_t *const *sdtypes, void *rbuf, const int *rcounts,
                  const int *rdispls, struct ompi_datatype_t *const *rdtypes)
{
    /* the per-peer arrays have one entry per rank of the remote group */
    int n = OMPI_COMM_IS_INTER(comm) ? ompi_comm_remote_size(comm) : ompi_comm_size(comm);
    pnbc_coll_args_t a = { .coll = PNBC_ALLTOALLW, .sbuf = sbuf, .scounts = scounts,
                           .sdispls = sdispls, .sdtypes = is_in_place(sbuf) ? NULL : sdtypes,
                           .rbuf = rbuf, .rcounts = rcounts, .rdispls = rdispls,
                           .rdtypes = rdtypes, .nsend_entries = n, .nrecv_entries = n };
    return vector_init(&a, comm, info, request, module);
}

PNBC_DECLARE_INIT(neighbor_allgatherv, const void *sbuf, int scount,
                  struct ompi_datatype_t *sdtype, void *rbuf, const int *rcounts,
                  const int *displs, struct ompi_datatype_t *rdtype)
{
    pnbc_coll_args_t a = { .coll = PNBC_NEIGHBOR_ALLGATHERV, .sbuf = sbuf,
                           .scount = (size_t) scount, .sdtype = sdtype, .rbuf = rbuf,
                           .rcounts = rcounts, .rdispls = displs, .rdtype = rdtype };
    return vector_init(&a, comm, info, request, module);
}

PNBC_DECLARE_INIT(neighbor_alltoallv, const void *sbuf, const int *scounts,
                  const int *sdispls, struct ompi_datatype_t *sdtype, void *rbuf,
                  const int *rcounts, const int *rdispls, struct ompi_datatype_t *rdtype)
{
    pnbc_coll_args_t a = { .coll = PNBC_NEIGHBOR_ALLTOALLV, .sbuf = sbuf,
                           .scounts = scounts, .sdispls = sdispls, .sdtype = sdtype,
                           .rbuf = rbuf, .rcounts = rcounts, .rdispls = rdispls,
                           .rdtype = rdtype };
    return vector_init(&a, comm, info, request, module);
}

PNBC_DECLARE_INIT(neighbor_alltoallw, const void *sbuf, const int *scounts,
                  const MPI_Aint *sdispls, struct ompi_datatype_t *const *sdtypes,
                  void *rbuf, const int *rcounts, const MPI_Aint *rdispls,
                  struct ompi_datatype_t *const *rdtypes)
{
    int indegree = 0, outdegree = 0;
    int rc = mca_topo_base_neighbor_count(comm, &indegree, &outdegree);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    pnbc_coll_args_t a = { .coll = PNBC_NEIGHBOR_ALLTOALLW, .sbuf = sbuf,
                           .scounts = scounts, .sdispls_bytes = sdispls, .sdtypes = sdtypes,
                           .rbuf = rbuf, .rcounts = rcounts, .rdispls_bytes = rdispls,
                           .rdtypes = rdtypes, .nsend_entries = outdegree,
                           .nrecv_entries = indegree };
    return vector_init(&a, comm, info, request, module);
}
