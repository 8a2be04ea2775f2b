/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The engine's MCA parameters, registered by the engine itself as
 * common_pnbc_<name> (framework "common", component "pnbc"), whichever
 * client loads it: the coll component, the part component (Open MPI 5)
 * or libpnbc (Open MPI 4.1, without the coll component).  Each is also
 * known by its earlier name coll_pnbc_<name> (a synonym), so settings
 * written for the coll component keep working.  Every client calls
 * mca_common_pnbc_register() when it registers its own parameters and
 * mca_common_pnbc_deregister() when it closes; the last one out takes the
 * variables away before the library (their storage) may be unloaded.
 */

#include "common_pnbc.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/base/mca_base_var_group.h"

/* The engine's parameters, after common_pnbc_ (pnbc_param_t). */
static const pnbc_param_t engine_params[] = {
    { "verbose",
      "Verbosity of pnbc: at 1 or more, one line per *_init naming the collective, "
      "the algorithm chosen and the communicator size; at 2, also how many of its "
      "messages use the shared memory transport, one line per nonblocking call that "
      "missed the schedule cache, and the cache's hits, misses and evictions when "
      "its communicator is freed",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_LOCAL,
      &mca_common_pnbc_params.verbose },
    { "shm",
      "Carry messages between processes of the same node through shared memory "
      "slots set up at init (0: all messages go through the PML). Must be the "
      "same on all processes",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL_EQ,
      &mca_common_pnbc_params.shm },
    { "shm_max_bytes",
      "Largest message (bytes) carried by the shared memory transport; larger ones "
      "go through the PML (vader: single copy). Must be the same on all processes",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL_EQ,
      &mca_common_pnbc_params.shm_max_bytes },
    { "nbc_shm_min_bytes",
      "Nonblocking collectives: smallest on-node message paired per call with the "
      "receiver's cached instance through the shared memory slots; smaller ones go "
      "through the mailbox (coll_pnbc_nbc_mailbox_cells), where a sender writes at once, "
      "and set its largest message (docs/nbc.md). Must be the same on all processes",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL_EQ,
      &mca_common_pnbc_params.shm_retag_min_bytes },
    { "nbc_mailbox_cells",
      "Nonblocking collectives: on-node messages below coll_pnbc_nbc_shm_min_bytes go "
      "through a ring per pair of processes (whatever the communicator), matched by the "
      "call, so a sender writes at once; the ring has room for about this many of the "
      "largest messages, and smaller ones take less room (a message of up to 96 bytes "
      "takes 128; 0: through the PML). Must be the same on all processes",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL_EQ,
      &mca_common_pnbc_params.nbc_mailbox_cells },
    { "nbc_mailbox_large_cells",
      "Nonblocking collectives whose senders gain from running ahead (bcast, reduce): on-node "
      "messages from coll_pnbc_nbc_shm_min_bytes up to coll_pnbc_nbc_mailbox_large_bytes "
      "go through a second mailbox ring per pair of processes, with room for about this many "
      "of them, instead of slots paired per call (0: paired; must be the same on all "
      "processes; docs/nbc.md)",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL_EQ,
      &mca_common_pnbc_params.nbc_mailbox_large_cells },
    { "nbc_mailbox_large_bytes",
      "Nonblocking collectives: the largest message of the mailbox's large ring "
      "(coll_pnbc_nbc_mailbox_large_cells); must be the same on all processes",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL_EQ,
      &mca_common_pnbc_params.nbc_mailbox_large_bytes },
    { "nbc_mailbox_declined_bytes",
      "Nonblocking collectives: the largest message of the large ring at a receiver that declines "
      "single copy (coll_pnbc_shm_single_copy_dear_ns), whose on-node messages up to this "
      "size and below its coll_pnbc_shm_single_copy_dear_min_bytes all take the large ring "
      "(at most the larger of this and coll_pnbc_nbc_mailbox_large_bytes; must be the same "
      "on all processes; docs/nbc.md)",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL_EQ,
      &mca_common_pnbc_params.nbc_mailbox_declined_bytes },
    { "nbc_single_copy_min_bytes",
      "Nonblocking collectives: on-node messages of at least this many bytes paired "
      "through the shared memory slots are read in one copy from the sender's buffer "
      "(process_vm_readv; coll_pnbc_shm_single_copy) where its data is in one piece, "
      "instead of two copies through the slot's boxes, which a call cannot overlap with "
      "the next (0: never; docs/nbc.md)",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL,
      &mca_common_pnbc_params.nbc_single_copy_min_bytes },
    { "shm_shared_copy_min_bytes",
      "On-node messages of at least this many bytes that go in one copy (a sender's offer "
      "of its buffer) are copied by both processes at once, half each, where the receiver's "
      "buffer is in one piece and the node is not oversubscribed: the sender writes the "
      "upper half into the receiver's buffer (process_vm_writev) while the receiver reads "
      "the lower half (bcast; 0: never; must be the same on all processes; docs/nbc.md)",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL_EQ,
      &mca_common_pnbc_params.shm_shared_copy_min_bytes },
    { "shm_single_copy_dear_ns",
      "A process_vm_readv of 64 KiB that takes at least this many ns (the best of 8 reads of "
      "the process's own memory, measured once, in MPI_Init) makes single copy dear: this "
      "process then takes on-node messages below coll_pnbc_shm_single_copy_dear_min_bytes "
      "through its boxes instead of reading, sharing or being written them in one copy, and "
      "nonblocking collectives' messages to it up to coll_pnbc_nbc_mailbox_declined_bytes "
      "through the large mailbox cells (0: never; each receiver decides for itself and "
      "publishes its choice; docs/design-measurements.md, docs/nbc.md)",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL,
      &mca_common_pnbc_params.shm_single_copy_dear_ns },
    { "shm_single_copy_dear_min_bytes",
      "Where single copy is dear (coll_pnbc_shm_single_copy_dear_ns): the smallest "
      "on-node message a receiver takes in one copy (0: every size); a persistent "
      "allreduce's messages, where each process has a CPU, stream through the boxes at "
      "every size instead of going to the PML",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL,
      &mca_common_pnbc_params.shm_single_copy_dear_min_bytes },
    { "oversubscribed",
      "Whether this node runs more of the job's processes than it has CPUs, where two "
      "processes that must meet often wait for the other to be scheduled: nonblocking "
      "allreduce then streams its on-node messages instead of reading them in one copy "
      "(-1 = find out: local processes > online CPUs, 0 = no, 1 = yes; docs/nbc.md); "
      "with coll_pnbc_shm_exchange_boxes, allgather and alltoall also choose their on-node "
      "transport by it, so set it alike on all processes of a node",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL,
      &mca_common_pnbc_params.oversubscribed },
    { "progress_park_min",
      "From this many active pnbc requests on, a request whose in-flight messages all "
      "wait on one peer's shared-memory bell (or on the PML) is polled only after that "
      "bell rang, so the cost of progress does not grow with requests that cannot "
      "advance (0: poll every active request at every pass; docs/many/progress.md)",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL,
      &mca_common_pnbc_params.progress_park_min },
    { "shm_frag_bytes",
      "Shared memory transport: messages up to this size go through one box (copy "
      "in, copy out); larger ones, for the collectives that take them, are read "
      "straight from the sender's buffer (coll_pnbc_shm_single_copy) or stream "
      "through boxes of coll_pnbc_shm_stream_frag_bytes. 0: each collective's own "
      "measured size (16 KiB, 64 KiB for bcast, reduce and allreduce); else at least "
      "1024. Must be the same on all processes",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL_EQ,
      &mca_common_pnbc_params.shm_frag_bytes },
    { "shm_stream_frag_bytes",
      "Shared memory transport: box size for messages streamed in fragments, so that "
      "the sender's copy in and the receiver's copy out (or reduction) of consecutive "
      "fragments overlap (minimum 256)",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL,
      &mca_common_pnbc_params.shm_stream_frag_bytes },
    { "shm_nt_min_bytes",
      "Shared memory transport: a sender fills the boxes of this many bytes up to "
      "coll_pnbc_shm_nt_max_bytes always with non-temporal stores, which write whole lines "
      "without fetching them from the receiver's cache first; other boxes and the messages "
      "of nonblocking calls' mailbox rings of at least coll_pnbc_shm_nt_measured_min_bytes "
      "get them as coll_pnbc_shm_nt_ratio says; "
      "never where processes outnumber CPUs (0: never; docs/design-measurements.md)",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL,
      &mca_common_pnbc_params.shm_nt_min_bytes },
    { "shm_nt_max_bytes",
      "Shared memory transport: see coll_pnbc_shm_nt_min_bytes (below it: no box always "
      "gets non-temporal stores)",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL,
      &mca_common_pnbc_params.shm_nt_max_bytes },
    { "shm_nt_ratio",
      "Shared memory transport: messages of at least coll_pnbc_shm_nt_measured_min_bytes "
      "outside the boxes of coll_pnbc_shm_nt_min_bytes to _max_bytes get non-temporal "
      "stores only while their sender measures its ordinary stores more than this many "
      "times as dear, trying the other way now and then (0: always)",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL,
      &mca_common_pnbc_params.shm_nt_ratio },
    { "shm_nt_measured_min_bytes",
      "Shared memory transport: see coll_pnbc_shm_nt_ratio (smaller messages: ordinary "
      "stores)",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL,
      &mca_common_pnbc_params.shm_nt_measured_min_bytes },
    { "shm_exchange_boxes",
      "Shared memory transport: allgather and alltoall, on a node where single copy is "
      "measured dear and each process has a CPU, exchange messages of every size through "
      "boxes filled as their sender measures (1), instead of single copy above the offer "
      "floor and non-temporal stores in the boxes of coll_pnbc_shm_nt_min_bytes to "
      "_max_bytes (0): faster in most launches of a 2-vCPU VM, twice as slow in the others "
      "(docs/design-measurements.md). Must be the same on all processes",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL_EQ,
      &mca_common_pnbc_params.shm_exchange_boxes },
    { "shm_single_copy",
      "Shared memory transport: copy messages larger than coll_pnbc_shm_frag_bytes "
      "straight from the sender's buffer with process_vm_readv when both layouts "
      "allow (0: always through boxes)",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL,
      &mca_common_pnbc_params.shm_single_copy },
    { "shm_pool_comm_bytes",
      "Shared memory transport: bytes of a process's pool that the requests of one "
      "communicator may hold; a request that does not fit (or, with more than a "
      "quarter used, gets fewer boxes per slot) sends through the PML "
      "(said at coll_pnbc_verbose >= 1)",
      MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL,
      &mca_common_pnbc_params.shm_pool_comm_bytes },
    { "shm_pool_node_bytes",
      "Shared memory transport: bytes the job's pools on one node may take together "
      "(split evenly between the job's processes there)",
      MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL,
      &mca_common_pnbc_params.shm_pool_node_bytes },
    { "shm_pool_step_bytes",
      "Shared memory transport: a pool grows by segments of this many bytes (one "
      "file and one mapping each)",
      MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_ALL,
      &mca_common_pnbc_params.shm_pool_step_bytes },
    { "shm_pool_entries",
      "Shared memory transport: live requests receiving through a process's pool "
      "(the size of its directory); later ones fall back to a file each",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_ALL,
      &mca_common_pnbc_params.shm_pool_entries },
    { "shm_prefault_max_bytes",
      "Shared memory transport: a persistent request whose receives take a new block of "
      "the pool of at most this many bytes has the block's pages mapped at init "
      "(MADV_POPULATE_WRITE), so that its first starts take no page faults on its boxes "
      "(0: never; docs/many/prefault.md)",
      MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_ALL,
      &mca_common_pnbc_params.shm_prefault_max_bytes },
};

static pnbc_lock_t register_lock = PNBC_LOCK_INITIALIZER;
static int registered;

int mca_common_pnbc_register(void)
{
    pnbc_lock(&register_lock);
    if (0 == registered++) {
        for (size_t i = 0; i < sizeof(engine_params) / sizeof(engine_params[0]); ++i) {
            const pnbc_param_t *p = &engine_params[i];
            const int idx = mca_base_var_register("ompi", "common", "pnbc", p->name, p->help,
                                                  p->type, NULL, 0, 0, p->level, p->scope,
                                                  p->storage);
            if (idx >= 0) {
                (void) mca_base_var_register_synonym(idx, "ompi", "coll", "pnbc", p->name, 0);
            }
        }
    }
    pnbc_unlock(&register_lock);
    return OMPI_SUCCESS;
}

void mca_common_pnbc_deregister(void)
{
    pnbc_lock(&register_lock);
    if (registered > 0 && 0 == --registered) {
        const int group = mca_base_var_group_find("ompi", "common", "pnbc");
        if (group >= 0) {
            (void) mca_base_var_group_deregister(group);
        }
    }
    pnbc_unlock(&register_lock);
}
