/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Component: identity, MCA parameters, open/close, and the progress hook.
 */

#include "coll_pnbc.h"
#include "coll_pnbc_algorithms.h"
#include "common_pnbc_transport.h"

#include "opal/mca/base/mca_base_var.h"
#include "ompi/runtime/mpiruntime.h"

#include <limits.h>

const char *mca_coll_pnbc_component_version_string =
    "pnbc: persistent nonblocking collectives for Open MPI";

static int pnbc_register(void);
static int pnbc_open(void);
static int pnbc_close(void);
static int pnbc_init_query(bool enable_progress_threads, bool enable_mpi_threads);

mca_coll_pnbc_component_t mca_coll_pnbc_component = {
    .super = {
        .collm_version = {
            PNBC_COLL_BASE_VERSION,
            .mca_component_name = "pnbc",
            MCA_BASE_MAKE_VERSION(component, 0, 1, 0),
            .mca_open_component = pnbc_open,
            .mca_close_component = pnbc_close,
            .mca_register_component_params = pnbc_register,
        },
        .collm_data = {
            MCA_BASE_METADATA_PARAM_NONE
        },
        .collm_init_query = pnbc_init_query,
        .collm_comm_query = mca_coll_pnbc_comm_query,
    },
    /* Above libnbc (10) so an installed pnbc serves the persistent slots
     * it implements without any flag; below tuned (30) is irrelevant, as
     * tuned fills no persistent slot. */
    .priority = 40,
    .segsize = 0,
    .cache_entries = 8192,
    .cache_bytes = 64 << 20,
    .cache_probation = 8,
};

/* One MCA parameter of the component: its name (after coll_pnbc_), help
 * text, type, info level, scope and storage; pnbc_register() registers
 * them all in this order, each with its storage's initial value as its
 * default. */
typedef struct pnbc_param_t {
    const char *name;
    const char *help;
    mca_base_var_type_t type;
    mca_base_var_info_lvl_t level;
    mca_base_var_scope_t scope;
    void *storage;
} pnbc_param_t;

static const pnbc_param_t pnbc_params[] = {
    { "priority",
      "Priority of the pnbc coll component (libnbc's is 10; --mca coll ^pnbc "
      "disables pnbc)",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
      &mca_coll_pnbc_component.priority },
    { "verbose",
      "Verbosity of pnbc: at 1 or more, one line per *_init naming the collective, "
      "the algorithm chosen and the communicator size; at 2, also how many of its "
      "messages use the shared memory transport, one line per nonblocking call that "
      "missed the schedule cache, and the cache's hits, misses and evictions when "
      "its communicator is freed",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_LOCAL,
      &mca_common_pnbc_params.verbose },
    { "segsize",
      "Pipeline segment size in bytes for segmented algorithms (0: each algorithm's "
      "own default); the MPI_Info key pnbc_segsize overrides it per request",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL,
      &mca_coll_pnbc_component.segsize },
    { "cache_entries",
      "Nonblocking collectives: committed schedules kept per communicator for calls "
      "repeated with the same arguments (least recently used evicted first; 0: no "
      "cache, every call builds its schedule)",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL,
      &mca_coll_pnbc_component.cache_entries },
    { "cache_bytes",
      "Nonblocking collectives: bytes of the schedules kept per communicator "
      "(schedules, temporary buffers, keys; 0: no cache)",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL,
      &mca_coll_pnbc_component.cache_bytes },
    { "cache_probation",
      "Nonblocking collectives: of the cached schedules whose arguments came only "
      "once (no hit yet), keep at most this many idle ones, evicting the oldest "
      "first, so calls that never repeat reuse memory instead of taking new pages "
      "(a hit promotes a schedule, so does a second miss of arguments evicted this way; "
      "0: no such bound)",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL,
      &mca_coll_pnbc_component.cache_probation },
    /* Both sides of a message choose its transport alone: these two must
     * be equal on all processes. */
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
      "on-node message a receiver takes in one copy (0: every size)",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL,
      &mca_common_pnbc_params.shm_single_copy_dear_min_bytes },
    { "oversubscribed",
      "Whether this node runs more of the job's processes than it has CPUs, where two "
      "processes that must meet often wait for the other to be scheduled: nonblocking "
      "allreduce then streams its on-node messages instead of reading them in one copy "
      "(-1 = find out: local processes > online CPUs, 0 = no, 1 = yes; docs/nbc.md)",
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
    /* Only the receiver reads this one (its file tells the sender). */
    { "shm_stream_frag_bytes",
      "Shared memory transport: box size for messages streamed in fragments, so that "
      "the sender's copy in and the receiver's copy out (or reduction) of consecutive "
      "fragments overlap (minimum 256)",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL,
      &mca_common_pnbc_params.shm_stream_frag_bytes },
    { "shm_nt_min_bytes",
      "Shared memory transport: a sender fills boxes of this many bytes up to "
      "coll_pnbc_shm_nt_max_bytes with non-temporal stores, which write whole lines without "
      "fetching them from the receiver's cache first, and other boxes and the messages of "
      "nonblocking calls' mailbox rings of at least coll_pnbc_shm_nt_measured_min_bytes as "
      "coll_pnbc_shm_nt_ratio says; never where processes outnumber CPUs (0: never; "
      "docs/design-measurements.md)",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL,
      &mca_common_pnbc_params.shm_nt_min_bytes },
    { "shm_nt_max_bytes",
      "Shared memory transport: see coll_pnbc_shm_nt_min_bytes",
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
    /* Each side decides alone: a receiver that cannot read refuses the
     * offer and the message streams instead. */
    { "shm_single_copy",
      "Shared memory transport: copy messages larger than coll_pnbc_shm_frag_bytes "
      "straight from the sender's buffer with process_vm_readv when both layouts "
      "allow (0: always through boxes)",
      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL,
      &mca_common_pnbc_params.shm_single_copy },
    /* The pool: each receiver sizes its own (its directory tells the
     * senders), so these may differ between processes. */
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

static int pnbc_register(void)
{
    for (size_t i = 0; i < sizeof(pnbc_params) / sizeof(pnbc_params[0]); ++i) {
        const pnbc_param_t *p = &pnbc_params[i];
        (void) mca_base_component_var_register(&mca_coll_pnbc_component.super.collm_version,
                                               p->name, p->help, p->type, NULL, 0, 0,
                                               p->level, p->scope, p->storage);
    }
    mca_coll_pnbc_select_register();
    return OMPI_SUCCESS;
}

static int pnbc_open(void)
{
    /* In MPI_Init (not ompi_info), before the modex fence: the single
     * copy's cost here reaches the node's other processes with it, and
     * they find the transports' shared state (the shm pool) once it is
     * over. */
    if (OMPI_MPI_STATE_INIT_STARTED == ompi_mpi_state) {
        mca_common_pnbc_modex_send();
        pnbc_transport_open();
    }
    return mca_common_pnbc_init();
}

static int pnbc_close(void)
{
    mca_common_pnbc_fini();
    mca_coll_pnbc_select_close();
    return OMPI_SUCCESS;
}

static int pnbc_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    return OMPI_SUCCESS;
}
