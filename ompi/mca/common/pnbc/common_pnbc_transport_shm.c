/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The shared-memory transport: a SEND/RECV between two processes of the
 * same node travels through a slot of a file both map, so a start is a
 * memory copy and two counter writes -- no matching, no PML request, no
 * allocation.  Measured here (np=2, 8 B, half round trip): a flag in a
 * shared mapping 0.16-0.24 us, ob1 isend/irecv 0.45 us.
 *
 * Who creates what, without any communication at init
 * ----------------------------------------------------
 * MPI-4 persistent *_init calls must not wait for other processes, so the
 * two sides of a message meet through a name both can compute.  The
 * RECEIVER owns one file per request, in its own directory:
 *
 *     /dev/shm/pnbc.<node>.<uid>.<jobid>.<vpid>.<job key>/<cid>.<tag>
 *
 * (the job session directory instead of /dev/shm where that is not
 * writable; <job key>: see shm_job_key_locked()).  It is built at commit
 * under a temporary name and rename()d into place when complete, so a
 * sender never sees half a file.  It holds one slot per message this
 * process receives through shm in the request, found by (sender's rank,
 * pair_seq):
 *
 *     header | table[nslots] {sender, pair_seq, offset, capacity, depth}
 *            | slots
 *
 * The SENDER maps the file lazily, at its first post: if the receiver
 * has not reached its *_init yet the file is not there, and the action
 * simply stays in flight while test() retries (progress, not blocking).
 * Several SENDs of a request to the same peer share one mapping.
 *
 * Slot protocol (one producer, one consumer, reused at every start)
 * ----------------------------------------------------------------
 * A message travels as fragments of at most `frag` bytes: one up to the
 * collective's box size, else boxes of coll_pnbc_shm_stream_frag_bytes
 * (see slot_shape()); the last fragment is flagged.
 * Both sides count the fragments they have moved through the slot: q = 1,
 * 2, ...  MPI makes every process start a request equally often, so the
 * q-th fragment written is the q-th read.  A slot is the receiver's
 * counter and `depth` boxes; fragment q uses box q % depth:
 *
 *     slot:  [consumed | refused]       written by the receiver only
 *            [full | len | last | data] box 0 \  written by the sender
 *            [full | len | last | data] box 1  } only; small messages
 *            ...                               /  share full's line
 *
 *     sender, fragment q:   wait consumed >= q - depth  (acquire: box q %
 *                           depth has been read), write len and data,
 *                           box.full = q (release)
 *     receiver, fragment q: wait box.full == q (acquire), read the data,
 *                           consumed = q (release)
 *
 * so a sender runs at most `depth` fragments ahead of its receiver: for
 * small messages like an eager protocol with that many buffers, for large
 * ones a pipeline in which the receiver copies fragment q out while the
 * sender copies q + 1 in, on the other core.  Every counter and box
 * starts on its own pair of cache lines.
 *
 * Single copy.  A message larger than a box whose sender's data lies in
 * one piece is not copied in and out: the sender's first box holds an
 * offer {pid, PID namespace, address, bytes}, the receiver copies the data straight from
 * the sender's buffer with process_vm_readv (into a non-contiguous buffer
 * through the offer's box, a box at a time) and counts the offer's box
 * consumed, which completes the send.  A receiver that cannot read the
 * sender's memory (seccomp, Yama ptrace scope, another PID namespace,
 * coll_pnbc_shm_single_copy 0 on its side) sets the slot's `refused`
 * flag first, and the sender streams the message through the boxes
 * instead -- this one and, as the flag stays, all later ones.
 *
 * Agreement.  Both sides must pick this transport for the same messages,
 * from what each knows alone: same node and same job, intracommunicator,
 * not self, the message's BYTES <= coll_pnbc_shm_max_bytes and, above
 * the box size, a collective whose large messages take shm (both from
 * mca_coll_pnbc_large_msgs() unless coll_pnbc_shm_frag_bytes says;
 * these parameters, like coll_pnbc_shm, must be equal everywhere).  This relies on the schedule rule that a
 * SEND and its RECV have the same type signature.
 * The layouts may differ (same signature, different type maps), so the
 * layout is not part of the decision: non-contiguous data is packed into
 * / unpacked from the box by convertors prepared at bind.
 *
 * If the receiver cannot build its file (e.g. /dev/shm is full) it leaves
 * an EMPTY file under the final name instead and carries those messages
 * over pml; a sender finding an empty file switches them to pml too, so
 * both sides still agree (on which tag, and in which order: see
 * fallback_post()).
 *
 * Cleanup.  The receiver unlinks its file when the request is freed; the
 * component's close removes the whole directory (requests never freed);
 * and the directory is registered with the runtime's cleanup (PMIx),
 * which removes it when the process ends, even by a signal.
 */

#include "common_pnbc_transport.h"

#include "ompi/mca/pml/pml.h"
#include "ompi/proc/proc.h"
#include "ompi/request/request.h"
#include "opal/datatype/opal_convertor.h"
#include "opal/mca/pmix/pmix.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define SHM_MAGIC       UINT64_C(0x31636e62702d6d73)   /* "sm-pbnc1" */
#define SHM_LINE        128     /* two cache lines: the adjacent-line
                                   prefetcher moves them as a pair */
#define SHM_TRUNCATED   UINT64_MAX  /* len: the message did not fit */
#define SHM_OFFER       (UINT64_MAX - 1)  /* len: the box holds a shm_offer_t */
#define SHM_DEEP        8       /* boxes per slot for one-box messages */
#define SHM_STREAM_DEPTH 4      /* boxes per slot of a streamed message */
#define SHM_FRAG_MIN    1024
#define SHM_STREAM_FRAG_MIN 256 /* > the largest element a fold carries */

/* ------------------------------------------------------------------ */
/* File layout                                                        */
/* ------------------------------------------------------------------ */

typedef struct shm_header_t {
    uint64_t magic;
    uint32_t nslots;
    uint32_t pad;
} shm_header_t;

typedef struct shm_entry_t {
    int32_t sender;         /* rank in the communicator */
    uint32_t pair_seq;
    uint64_t offset;        /* of the slot, from the start of the file */
    uint64_t capacity;      /* bytes the receiver expects */
    uint64_t depth;         /* boxes in the slot */
    uint64_t frag;          /* bytes per box */
} shm_entry_t;

/* A slot: the receiver's counter, then `depth` boxes; fragment q goes
 * into box q % depth. */
typedef struct shm_slot_t {
    volatile uint64_t consumed;
    volatile uint64_t refused;      /* the receiver cannot take offers */
    char pad[SHM_LINE - 2 * sizeof(uint64_t)];
} shm_slot_t;

/* A box's data when its len is SHM_OFFER: where the sender's message is
 * (single copy, see send_offer()). */
typedef struct shm_offer_t {
    uint64_t pid;
    uint64_t pid_ns;        /* see pid_namespace() */
    uint64_t addr;
    uint64_t bytes;
} shm_offer_t;

typedef struct shm_box_t {
    volatile uint64_t full;
    uint64_t len;
    uint64_t last;          /* the message's last fragment */
    char data[];            /* frag bytes */
} shm_box_t;

static size_t shm_box_size(size_t frag)
{
    size_t bytes = sizeof(shm_box_t) + frag;
    return (bytes + SHM_LINE - 1) & ~(size_t) (SHM_LINE - 1);
}

static size_t shm_slot_size(size_t frag, size_t depth)
{
    return sizeof(shm_slot_t) + depth * shm_box_size(frag);
}

/* ------------------------------------------------------------------ */
/* Per-action and shared state                                        */
/* ------------------------------------------------------------------ */

/* A mapped request file: the receiver's own, or a peer's seen by a
 * sender.  Shared (refcount) by the actions of one request using it. */
typedef struct shm_region_t {
    int refs;
    bool owner;             /* we created it: unlink at the last release */
    char *path;
    void *base;             /* NULL until mapped */
    size_t size;
    /* Sender: its actions sending to this peer, in schedule order (they
     * switch to pml together, see region_fall_back()). */
    struct pnbc_action_t **acts;
    uint32_t nacts;
} shm_region_t;

typedef struct shm_action_t {
    shm_region_t *region;
    shm_slot_t *slot;       /* NULL until found (sender: at first map) */
    char *boxes;            /* the slot's first box */
    size_t box_size;
    uint64_t depth;
    uint64_t frag;          /* bytes per box */
    uint64_t seen;          /* sender: the receiver's `consumed`, last read */
    uint64_t q;             /* fragments moved through the slot so far */
    uint64_t moved;         /* bytes of this post moved so far */
    bool offer;             /* sender: offer single copy (see send_offer) */
    bool offered;           /* sender: an offer is out */
    bool done;              /* this post has finished */
    int err;
    pnbc_channel_t ch;      /* test() has none: kept for the sender's
                               first map and the fallback */
    size_t bytes;           /* of this side's data */
    uint64_t capacity;      /* sender: the receiver's byte count */
    char *flat;             /* contiguous data, or NULL: use conv */
    opal_convertor_t *conv; /* non-contiguous data, prepared at bind */
    bool fallback;          /* the receiver has no file: pml, see below */
    ompi_request_t *req;    /* its PML request then */
    /* Receiver folding the message into a reduction (see recv_fold()). */
    ompi_op_t *fold_op;     /* NULL: copy the data out */
    ompi_datatype_t *fold_dtype;
    size_t fold_elsize;
    char *fold_acc;         /* acc = data (op) acc, or */
    char *fold_operand;     /* landing = operand (op) data */
    char carry[64];         /* an element split between two fragments */
} shm_action_t;

typedef struct shm_shape_t {
    size_t frag;            /* bytes per box */
    size_t depth;           /* boxes, a power of two */
} shm_shape_t;

/* The receiver's choice of boxes for a message of `bytes` (the sender
 * reads it from the file).  Several boxes let a sender start message n
 * while its receiver is still reading n-1: in an exchange (allreduce)
 * each side finishes as soon as it has the other's message, so with one
 * box the faster one would wait for the slower one's read at its next
 * start, a cache-line round trip on the critical path; and a root
 * repeating a bcast runs ahead as it would over an eager PML protocol
 * (np=2, bcast in a loop: 8 B 0.18 us with 8 boxes vs 0.40 with 1; 4 KiB
 * 0.64 with 8, 0.85 with 2, 2.0 with 1; 16 KiB 1.8 with 8, 2.4 with 2;
 * 64 KiB 5.2 with 8, 6.6 with 4).
 * Larger messages stream through a few boxes of
 * coll_pnbc_shm_stream_frag_bytes, so a slot's memory does not grow with
 * the message. */
static size_t shm_box_max(const pnbc_channel_t *ch)
{
    const int forced = mca_common_pnbc_params.shm_frag_bytes;
    const size_t box = (forced > 0) ? (size_t) forced : ch->large.box_max;
    return (box < SHM_FRAG_MIN) ? SHM_FRAG_MIN : box;
}

static shm_shape_t slot_shape(const shm_action_t *t)
{
    const size_t bytes = t->bytes;
    if (bytes <= shm_box_max(&t->ch)) {
        return (shm_shape_t) { bytes, SHM_DEEP };
    }
    const int stream = mca_common_pnbc_params.shm_stream_frag_bytes;
    return (shm_shape_t) { (stream < SHM_STREAM_FRAG_MIN) ? SHM_STREAM_FRAG_MIN : (size_t) stream,
                           SHM_STREAM_DEPTH };
}

/* ------------------------------------------------------------------ */
/* The process's directory                                            */
/* ------------------------------------------------------------------ */

/* Process-wide state, set up on first use (under shm_lock: *_init calls
 * on different communicators may run concurrently). */
static pthread_mutex_t shm_lock = PTHREAD_MUTEX_INITIALIZER;
static bool shm_ready = false;
static const char *shm_base;    /* where the directories go */
static uint64_t shm_key;        /* this job instance */
static bool shm_dir_tried = false;
static char *shm_own_dir = NULL;

/* What tells this job instance from an earlier one with the same jobid
 * (jobids repeat: they hash mpirun's pid) whose files a killed mpirun
 * left behind: the job session directory, created anew for each job --
 * its path (holds mpirun's pid) and inode.  Not its times: they change
 * as the processes add their own directories to it. */
static uint64_t job_key(void)
{
    const char *dir = opal_process_info.job_session_dir;
    struct stat st;
    uint64_t h = UINT64_C(0xcbf29ce484222325);      /* FNV-1a */

    for (const char *c = dir; NULL != c && '\0' != *c; ++c) {
        h = (h ^ (unsigned char) *c) * UINT64_C(0x100000001b3);
    }
    if (NULL != dir && 0 == stat(dir, &st)) {
        h ^= (uint64_t) st.st_ino * UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t) st.st_dev;
    }
    return h;
}

/* The directory of process `name`'s files.  /dev/shm like btl/vader
 * (memory, not disk), else the job session directory: every process of
 * the node makes the same choice.  The name carries the job key, so
 * files a dead job left under a recycled jobid are never looked at.
 * Caller holds shm_lock. */
static char *shm_dir_path_locked(const opal_process_name_t *name)
{
    char *path = NULL;

    if (!shm_ready) {
        shm_base = (0 == access("/dev/shm", W_OK)) ? "/dev/shm"
                                                   : opal_process_info.job_session_dir;
        shm_key = job_key();
        shm_ready = true;
    }
    if (NULL == shm_base ||
        0 > asprintf(&path, "%s/pnbc.%s.%u.%x.%u.%016" PRIx64, shm_base,
                     opal_process_info.nodename, (unsigned) geteuid(),
                     (unsigned) name->jobid, (unsigned) name->vpid, shm_key)) {
        return NULL;
    }
    return path;
}

static char *shm_dir_path(const opal_process_name_t *name)
{
    pthread_mutex_lock(&shm_lock);
    char *path = shm_dir_path_locked(name);
    pthread_mutex_unlock(&shm_lock);
    return path;
}

/* Remove every file in `dir` (our own directory: nobody else writes it). */
static void shm_dir_empty(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[PATH_MAX];

    if (NULL == d) {
        return;
    }
    while (NULL != (e = readdir(d))) {
        if ('.' == e->d_name[0]) {
            continue;
        }
        if ((int) sizeof(path) > snprintf(path, sizeof(path), "%s/%s", dir, e->d_name)) {
            (void) unlink(path);
        }
    }
    closedir(d);
}

/* Create our directory once (first request that receives through shm)
 * and hand it to the runtime's cleanup, which removes it when this
 * process ends, even by a signal. */
static const char *shm_own_dir_get(void)
{
    pthread_mutex_lock(&shm_lock);
    if (!shm_dir_tried) {
        char *dir = shm_dir_path_locked(&ompi_proc_local()->super.proc_name);
        if (NULL != dir && 0 != mkdir(dir, 0700) && EEXIST != errno) {
            free(dir);
            dir = NULL;
        }
        if (NULL != dir && NULL != opal_pmix.register_cleanup) {
            (void) opal_pmix.register_cleanup(dir, true, false, false);
        }
        shm_own_dir = dir;
        shm_dir_tried = true;
    }
    pthread_mutex_unlock(&shm_lock);
    return shm_own_dir;
}

void pnbc_transport_shm_finalize(void)
{
    pthread_mutex_lock(&shm_lock);
    if (NULL != shm_own_dir) {
        shm_dir_empty(shm_own_dir);
        (void) rmdir(shm_own_dir);
        free(shm_own_dir);
        shm_own_dir = NULL;
    }
    shm_dir_tried = false;
    pthread_mutex_unlock(&shm_lock);
}

/* ------------------------------------------------------------------ */
/* Regions                                                            */
/* ------------------------------------------------------------------ */

static shm_region_t *region_new(char *path, bool owner)
{
    shm_region_t *r = calloc(1, sizeof(*r));
    if (NULL == r) {
        free(path);
        return NULL;
    }
    r->refs = 1;
    r->owner = owner;
    r->path = path;
    return r;
}

static void region_release(shm_region_t *r)
{
    if (NULL == r || --r->refs > 0) {
        return;
    }
    if (NULL != r->base) {
        munmap(r->base, r->size);
    }
    if (r->owner && NULL != r->path) {
        (void) unlink(r->path);
    }
    free(r->acts);
    free(r->path);
    free(r);
}

static char *request_file_path(const char *dir, const pnbc_channel_t *ch, const char *suffix)
{
    char *path = NULL;
    if (0 > asprintf(&path, "%s/%x.%x%s", dir, (unsigned) ch->comm->c_contextid,
                     (unsigned) ch->tag, suffix)) {
        return NULL;
    }
    return path;
}

/* Sender: map the receiver's file if it is there and current.  Returns
 * false while it is not (yet): the caller retries at the next test. */
static bool region_try_map(shm_region_t *r)
{
    struct stat st;
    int fd = open(r->path, O_RDWR);

    if (fd < 0) {
        return false;
    }
    if (0 != fstat(fd, &st)) {
        close(fd);
        return false;
    }
    if (0 == st.st_size) {          /* the receiver's fallback marker */
        close(fd);
        return true;
    }
    void *base = NULL;
    if ((size_t) st.st_size >= sizeof(shm_header_t)) {
        base = mmap(NULL, (size_t) st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    }
    close(fd);
    if (NULL == base || MAP_FAILED == base) {
        return false;
    }
    const shm_header_t *h = base;
    if (SHM_MAGIC != h->magic ||
        sizeof(shm_header_t) + h->nslots * sizeof(shm_entry_t) > (size_t) st.st_size) {
        munmap(base, (size_t) st.st_size);  /* not ours: cannot happen */
        return false;
    }
    r->base = base;
    r->size = (size_t) st.st_size;
    return true;
}

/* ------------------------------------------------------------------ */
/* bind / unbind                                                      */
/* ------------------------------------------------------------------ */

static bool shm_peer_ok(const pnbc_action_t *a, const pnbc_channel_t *ch)
{
    ompi_communicator_t *comm = ch->comm;

    if (!mca_common_pnbc_params.shm || a->local || OMPI_COMM_IS_INTER(comm) ||
        a->peer == ompi_comm_rank(comm)) {
        return false;
    }
    ompi_proc_t *peer = ompi_comm_peer_lookup(comm, a->peer);
    /* Peers of another job (dynamic processes) would have their files in
     * another job's namespace: leave them to pml. */
    return NULL != peer && OPAL_PROC_ON_LOCAL_NODE(peer->super.proc_flags) &&
           peer->super.proc_name.jobid == ompi_proc_local()->super.proc_name.jobid;
}

static bool shm_bind(pnbc_action_t *a, const pnbc_channel_t *ch)
{
    const size_t bytes = (NULL == a->buf.dtype) ? 0 : a->buf.count * a->buf.dtype->super.size;

    /* Both sides decide alike: same algorithm, same parameters, and a
     * SEND has the type signature of its RECV. */
    const int max_bytes = mca_common_pnbc_params.shm_max_bytes;
    if (max_bytes < 0 || ch->sizes_may_differ || bytes > (size_t) max_bytes || !shm_peer_ok(a, ch) ||
        (bytes > shm_box_max(ch) && bytes > ch->large.shm_max)) {
        return false;
    }
    /* From here on the action is ours whatever happens: the peer takes
     * the same decision without knowing about our memory.  A failure
     * leaves tstate NULL and makes the commit fail. */
    shm_action_t *t = calloc(1, sizeof(*t));
    if (NULL == t) {
        return true;
    }
    t->bytes = bytes;
    t->ch = *ch;
    if (bytes > 0) {
        if (ompi_datatype_is_contiguous_memory_layout(a->buf.dtype, a->buf.count)) {
            ptrdiff_t true_lb, true_extent;
            ompi_datatype_get_true_extent(a->buf.dtype, &true_lb, &true_extent);
            t->flat = (char *) a->buf.addr + true_lb;
        } else {
            t->conv = pnbc_prepared_convertor(&a->buf, PNBC_ACT_SEND == a->kind);
            if (NULL == t->conv) {
                free(t);
                return true;
            }
        }
    }
    /* The region is attached by shm_commit once every action is bound. */
    a->tstate = t;
    return true;
}

static void shm_unbind(pnbc_action_t *a)
{
    shm_action_t *t = a->tstate;
    if (NULL == t) {
        return;
    }
    region_release(t->region);
    if (NULL != t->conv) {
        OBJ_RELEASE(t->conv);
    }
    free(t);
    a->tstate = NULL;
}

/* ------------------------------------------------------------------ */
/* commit: build the receiver's file, share the senders' mappings     */
/* ------------------------------------------------------------------ */

static bool is_shm(const pnbc_action_t *a, pnbc_action_kind_t kind)
{
    return a->kind == kind && a->transport == &pnbc_transport_shm;
}

static void slot_attach(shm_action_t *t, char *slot, uint64_t frag, uint64_t depth)
{
    t->slot = (shm_slot_t *) slot;
    t->boxes = slot + sizeof(shm_slot_t);
    t->box_size = shm_box_size(frag);
    t->depth = depth;
    t->frag = frag;
}

/* Receiver: do the REDUCE that consumes this message (a->fold, see
 * find_folds()) while copying the message out of the boxes -- instead of
 * copying it to its landing zone and reducing it in the next round. */
static void recv_take_fold(pnbc_action_t *a, shm_action_t *t)
{
    pnbc_action_t *x = a->fold;
    if (NULL == x) {
        return;
    }
    t->fold_op = x->op;
    t->fold_dtype = x->buf.dtype;
    t->fold_elsize = x->buf.dtype->super.size;
    if (x->src.addr == a->buf.addr) {
        t->fold_acc = x->buf.addr;
    } else {
        t->fold_operand = x->src.addr;
    }
    x->folded = true;
}

/* Write the whole file under a temporary name, then rename it into
 * place.  Returns the mapped region, or NULL (nothing left behind). */
static shm_region_t *recv_file_create(pnbc_schedule_t *s, const char *dir,
                                      const pnbc_channel_t *ch, uint32_t nslots)
{
    char *path = request_file_path(dir, ch, "");
    char *tmp = request_file_path(dir, ch, ".tmp");
    shm_region_t *r = NULL;
    size_t size = sizeof(shm_header_t) + nslots * sizeof(shm_entry_t);
    int fd = -1;

    size = (size + SHM_LINE - 1) & ~(size_t) (SHM_LINE - 1);
    const size_t table_end = size;
    for (uint32_t i = 0; i < s->nactions; ++i) {
        if (is_shm(&s->actions[i], PNBC_ACT_RECV)) {
            const shm_shape_t shape = slot_shape(s->actions[i].tstate);
            size += shm_slot_size(shape.frag, shape.depth);
        }
    }
    if (NULL == path || NULL == tmp) {
        goto out;
    }
    fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        goto out;
    }
    /* posix_fallocate: on tmpfs, running out of space must show here,
     * not as SIGBUS at the first store into the mapping. */
    int rc = posix_fallocate(fd, 0, (off_t) size);
    if (0 != rc) {
        errno = rc;
        goto out;
    }
    void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (MAP_FAILED == base) {
        goto out;
    }
    r = region_new(path, true);
    if (NULL == r) {
        path = NULL;
        munmap(base, size);
        goto out;
    }
    path = NULL;
    r->base = base;
    r->size = size;
    r->refs = 0;    /* one per action, below */

    shm_header_t *h = base;
    shm_entry_t *table = (shm_entry_t *) (h + 1);
    size_t offset = table_end;
    uint32_t k = 0;
    for (uint32_t i = 0; i < s->nactions; ++i) {
        pnbc_action_t *a = &s->actions[i];
        if (!is_shm(a, PNBC_ACT_RECV)) {
            continue;
        }
        shm_action_t *t = a->tstate;
        const shm_shape_t shape = slot_shape(t);
        table[k].sender = a->peer;
        table[k].pair_seq = a->pair_seq;
        table[k].offset = offset;
        table[k].capacity = t->bytes;
        table[k].depth = shape.depth;
        table[k].frag = shape.frag;
        slot_attach(t, (char *) base + offset, shape.frag, shape.depth);  /* zeroed */
        recv_take_fold(a, t);
        t->region = r;
        r->refs++;
        offset += shm_slot_size(shape.frag, shape.depth);
        k++;
    }
    h->nslots = nslots;
    h->magic = SHM_MAGIC;
    if (0 != rename(tmp, r->path)) {
        r->owner = false;   /* never published: nothing to unlink */
        for (uint32_t i = 0; i < s->nactions; ++i) {
            if (is_shm(&s->actions[i], PNBC_ACT_RECV)) {
                ((shm_action_t *) s->actions[i].tstate)->region = NULL;
            }
        }
        r->refs = 1;
        region_release(r);
        r = NULL;
    }
out:;
    const int err = errno;     /* why it failed, for the caller's message */
    if (fd >= 0) {
        close(fd);
    }
    if (NULL == r && NULL != tmp) {
        (void) unlink(tmp);
    }
    free(tmp);
    free(path);
    errno = err;
    return r;
}

/* The receiver could not build its file: publish an empty one (the
 * senders' cue) and carry our shm receives over pml. */
static int recv_fall_back(pnbc_schedule_t *s, const char *dir, const pnbc_channel_t *ch)
{
    const int why = errno;
    char *path = (NULL == dir) ? NULL : request_file_path(dir, ch, "");
    int fd = (NULL == path) ? -1 : open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

    for (uint32_t i = 0; i < s->nactions; ++i) {
        if (is_shm(&s->actions[i], PNBC_ACT_RECV)) {
            ((shm_action_t *) s->actions[i].tstate)->fallback = true;
        }
    }
    if (fd < 0) {
        free(path);
        /* Senders on this node would wait for a file forever. */
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    close(fd);
    /* The marker is unlinked with the directory (free or finalize). */
    free(path);
    if (mca_common_pnbc_params.verbose >= 1) {
        opal_output(0, "coll:pnbc: shm segment for cid %u tag %d not created (%s), "
                    "receiving through pml", (unsigned) ch->comm->c_contextid, ch->tag,
                    strerror(why));
    }
    return OMPI_SUCCESS;
}

static int shm_commit_recvs(pnbc_schedule_t *s, const pnbc_channel_t *ch)
{
    uint32_t nslots = 0;
    for (uint32_t i = 0; i < s->nactions; ++i) {
        nslots += is_shm(&s->actions[i], PNBC_ACT_RECV);
    }
    if (0 == nslots) {
        return OMPI_SUCCESS;
    }
    const char *dir = shm_own_dir_get();
    if (NULL != dir && NULL != recv_file_create(s, dir, ch, nslots)) {
        return OMPI_SUCCESS;
    }
    return recv_fall_back(s, dir, ch);
}

/* The region of the receiver `peer`'s file, shared with an earlier
 * send to it, or new. */
static shm_region_t *send_region(pnbc_schedule_t *s, uint32_t upto, int peer,
                                 const pnbc_channel_t *ch)
{
    for (uint32_t j = 0; j < upto; ++j) {
        if (is_shm(&s->actions[j], PNBC_ACT_SEND) && s->actions[j].peer == peer) {
            shm_region_t *r = ((shm_action_t *) s->actions[j].tstate)->region;
            r->refs++;
            return r;
        }
    }
    ompi_proc_t *proc = ompi_comm_peer_lookup(ch->comm, peer);
    char *dir = shm_dir_path(&proc->super.proc_name);
    char *path = (NULL == dir) ? NULL : request_file_path(dir, ch, "");
    free(dir);
    return (NULL == path) ? NULL : region_new(path, false);
}

/* Senders: one region (the receiver's file, mapped lazily) per peer. */
static int shm_commit_sends(pnbc_schedule_t *s, const pnbc_channel_t *ch)
{
    for (uint32_t i = 0; i < s->nactions; ++i) {
        pnbc_action_t *a = &s->actions[i];
        if (!is_shm(a, PNBC_ACT_SEND)) {
            continue;
        }
        shm_action_t *t = a->tstate;
        t->region = send_region(s, i, a->peer, ch);
        if (NULL == t->region) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        shm_region_t *r = t->region;
        pnbc_action_t **grown = realloc(r->acts, (r->nacts + 1) * sizeof(*grown));
        if (NULL == grown) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        r->acts = grown;
        r->acts[r->nacts++] = a;
    }
    return OMPI_SUCCESS;
}

static int shm_commit(pnbc_schedule_t *s, const pnbc_channel_t *ch)
{
    for (uint32_t i = 0; i < s->nactions; ++i) {
        if (s->actions[i].transport == &pnbc_transport_shm && NULL == s->actions[i].tstate) {
            return OMPI_ERR_OUT_OF_RESOURCE;    /* see shm_bind */
        }
    }
    int rc = shm_commit_recvs(s, ch);
    if (OMPI_SUCCESS == rc) {
        rc = shm_commit_sends(s, ch);
    }
    if (mca_common_pnbc_params.verbose >= 2) {
        uint32_t nsend = 0, nrecv = 0, nfold = 0;
        for (uint32_t i = 0; i < s->nactions; ++i) {
            nsend += is_shm(&s->actions[i], PNBC_ACT_SEND);
            nrecv += is_shm(&s->actions[i], PNBC_ACT_RECV);
            nfold += s->actions[i].folded;
        }
        opal_output(0, "coll:pnbc: shm cid %u tag %d rank %d: %u sends, %u receives "
                    "(%u folded into a reduction)", (unsigned) ch->comm->c_contextid, ch->tag,
                    ompi_comm_rank(ch->comm), nsend, nrecv, nfold);
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* post / test                                                        */
/* ------------------------------------------------------------------ */

/* Sender: find our slot in the receiver's freshly mapped table. */
static bool send_find_slot(const pnbc_action_t *a, shm_action_t *t)
{
    const shm_region_t *r = t->region;
    const shm_header_t *h = r->base;
    const shm_entry_t *table = (const shm_entry_t *) (h + 1);
    const int me = ompi_comm_rank(t->ch.comm);

    for (uint32_t k = 0; k < h->nslots; ++k) {
        const shm_entry_t *e = &table[k];
        if (e->sender == me && e->pair_seq == a->pair_seq &&
            e->depth > 0 && 0 == (e->depth & (e->depth - 1)) && e->depth <= r->size &&
            e->frag <= r->size && (e->frag > 0 || 0 == e->capacity) &&
            e->offset + shm_slot_size(e->frag, e->depth) <= r->size) {
            slot_attach(t, (char *) r->base + e->offset, e->frag, e->depth);
            t->capacity = e->capacity;
            return true;
        }
    }
    return false;
}

/*
 * Fallback: the receiver could not build its file (recv_fall_back), so
 * the messages of the pair that were to use shm go over pml instead.
 * Not on the request's tag: a sender learns of the fallback only at its
 * first post, when it finds the marker, and by then it may have posted
 * this round's pml-bound messages to the same peer ahead of the waiting
 * shm-bound ones, which the receiver posted first -- pml would match
 * them crosswise.  So they travel on the request's mirrored tag
 * (pnbc_local_tag), which on an intracommunicator nothing else
 * uses (it carries intercommunicator local-group traffic, on the
 * internal c_local_comm only), and among themselves keep schedule order:
 * the sender switches all its actions to that peer at once, posting the
 * waiting ones in order (region_fall_back).
 */
static int fallback_post(pnbc_action_t *a, shm_action_t *t)
{
    const int tag = pnbc_local_tag(pnbc_channel_tag(&t->ch, a));
    if (PNBC_ACT_SEND == a->kind) {
        return MCA_PML_CALL(isend(a->buf.addr, a->buf.count, a->buf.dtype, a->peer, tag,
                                  MCA_PML_BASE_SEND_STANDARD, t->ch.comm, &t->req));
    }
    return MCA_PML_CALL(irecv(a->buf.addr, a->buf.count, a->buf.dtype, a->peer, tag,
                              t->ch.comm, &t->req));
}

/* Sender: the receiver's file is the fallback marker. */
static void region_fall_back(shm_region_t *r)
{
    for (uint32_t i = 0; i < r->nacts; ++i) {
        pnbc_action_t *a = r->acts[i];
        shm_action_t *t = a->tstate;
        t->fallback = true;
        if (a->inflight && !t->done) {      /* posted, waiting for the file */
            int rc = fallback_post(a, t);
            if (OMPI_SUCCESS != rc) {
                t->err = rc;
                t->done = true;
            }
        }
    }
}

static shm_box_t *box_of(const shm_action_t *t, uint64_t q)
{
    return (shm_box_t *) (t->boxes + (q & (t->depth - 1)) * t->box_size);
}

/* Sender: may fragment q go into its box?  Box q % depth last held
 * fragment q - depth: has it been read?  The receiver's counter is read
 * only when the last value seen does not tell: each read is a cache-line
 * transfer, and makes the receiver's next write of it one too. */
static bool send_box_free(shm_action_t *t, uint64_t q)
{
    if (t->seen + t->depth < q) {
        t->seen = __atomic_load_n(&t->slot->consumed, __ATOMIC_ACQUIRE);
    }
    return t->seen + t->depth >= q;
}

/* Sender, first post: map the receiver's file and find our slot.  False
 * while the file is not there (or once the action has failed). */
static bool send_attach(pnbc_action_t *a, shm_action_t *t)
{
    shm_region_t *r = t->region;
    if (NULL == r->base) {
        if (!region_try_map(r)) {
            return false;                   /* the receiver is not there yet */
        }
        if (NULL == r->base) {
            region_fall_back(r);            /* this action included */
            return false;
        }
    }
    if (!send_find_slot(a, t)) {
        t->err = MPI_ERR_INTERN;            /* the two sides disagree */
        t->done = true;
        return false;
    }
    /* Single copy for large messages in one piece, where the collective
     * takes it. */
    t->offer = mca_common_pnbc_params.shm_single_copy && t->ch.large.single_copy &&
               NULL != t->flat && t->bytes > shm_box_max(&t->ch) && t->bytes == t->capacity;
    return true;
}

/* This process's PID namespace (the inode of /proc/self/ns/pid; 0 if
 * unknown).  A pid names the sender only to a receiver in the same
 * namespace: in another one (containers sharing /dev/shm) it could name
 * an unrelated process, so such offers are refused. */
static uint64_t pid_namespace(void)
{
    static uint64_t ns = UINT64_MAX;
    if (UINT64_MAX == ns) {
        struct stat st;
        ns = (0 == stat("/proc/self/ns/pid", &st)) ? (uint64_t) st.st_ino : 0;
    }
    return ns;
}

/* Sender, single copy: describe our buffer in the message's first box;
 * the receiver copies straight out of it (process_vm_readv). */
static bool send_offer(shm_action_t *t)
{
    const uint64_t q = t->q + 1;
    if (!send_box_free(t, q)) {
        return false;
    }
    shm_box_t *box = box_of(t, q);
    shm_offer_t *o = (shm_offer_t *) box->data;
    o->pid = (uint64_t) getpid();
    o->pid_ns = pid_namespace();
    o->addr = (uint64_t) (uintptr_t) t->flat;
    o->bytes = t->bytes;
    box->len = SHM_OFFER;
    box->last = 0;
    __atomic_store_n(&box->full, q, __ATOMIC_RELEASE);
    t->q = q;
    t->offered = true;
    return true;
}

/* Sender: has the receiver answered our offer (counted its box
 * consumed)?  Either it read our buffer -- the message is delivered -- or
 * it refused (it cannot read other processes' memory: seccomp, ptrace
 * scope) and set `refused` first: then the message follows as fragments,
 * and so do all later ones, as the receiver refuses for good. */
static bool send_offer_answered(shm_action_t *t)
{
    t->seen = __atomic_load_n(&t->slot->consumed, __ATOMIC_ACQUIRE);
    if (t->seen < t->q) {
        return false;
    }
    t->offered = false;
    if (t->slot->refused) {
        t->offer = false;
    }
    return true;
}

/* Sender: copy fragments into free boxes (copy in, copy out); true once
 * the last one is written.  A convertor packs whole elements only, so a
 * fragment of non-contiguous data may fall short of the box: the last
 * fragment is flagged rather than counted. */
static bool send_stream(shm_action_t *t)
{
    uint64_t last = 0;
    while (!last && send_box_free(t, t->q + 1)) {
        const uint64_t q = t->q + 1;
        shm_box_t *box = box_of(t, q);
        uint64_t len = t->bytes - t->moved;
        len = (len > t->frag) ? t->frag : len;
        if (OPAL_UNLIKELY(t->bytes > t->capacity)) {
            len = SHM_TRUNCATED;            /* tell the receiver too */
            t->err = MPI_ERR_TRUNCATE;
        } else if (NULL != t->flat) {
            memcpy(box->data, t->flat + t->moved, len);
        } else if (len > 0) {
            len = pnbc_convert_part(t->conv, box->data, len, t->moved, true);
        }
        if (SHM_TRUNCATED != len) {
            t->moved += len;
        }
        last = (SHM_TRUNCATED == len || t->moved == t->bytes || 0 == len);
        if (OPAL_UNLIKELY(0 == len && t->moved < t->bytes)) {
            t->err = MPI_ERR_INTERN;        /* the convertor made no progress */
        }
        box->len = len;
        box->last = last;
        __atomic_store_n(&box->full, q, __ATOMIC_RELEASE);
        t->q = q;
    }
    return last;
}

/* Sender: move this post's message as far as the receiver lets us;
 * t->done once it needs nothing more from our buffer. */
static void send_progress(pnbc_action_t *a, shm_action_t *t)
{
    if (OPAL_UNLIKELY(NULL == t->slot) && !send_attach(a, t)) {
        return;
    }
    if (t->offered) {
        if (!send_offer_answered(t)) {
            return;
        }
        if (t->offer) {
            t->done = true;                 /* read in one copy */
            return;
        }
    } else if (t->offer) {
        (void) send_offer(t);               /* or its box is still busy */
        return;
    }
    t->done = send_stream(t);
}

/* Copy `len` bytes at `addr` in process `pid` to `here`; false if the
 * kernel refuses (seccomp, ptrace scope, no such process). */
static bool read_peer(uint64_t pid, uint64_t addr, char *here, uint64_t len)
{
    for (uint64_t got = 0; got < len;) {
        struct iovec mine = { here + got, len - got };
        struct iovec theirs = { (void *) (uintptr_t) (addr + got), len - got };
        ssize_t n = process_vm_readv((pid_t) pid, &mine, 1, &theirs, 1, 0);
        if (n <= 0) {
            return false;
        }
        got += (uint64_t) n;
    }
    return true;
}

/* The offered message into a non-contiguous buffer: through `bounce`
 * (the offer's own box, ours until we count it consumed), a box at a
 * time. */
static bool recv_read_packed(shm_action_t *t, const shm_offer_t *o, uint64_t bytes,
                             char *bounce)
{
    for (uint64_t at = 0; at < bytes; at += t->frag) {
        const uint64_t len = (bytes - at < t->frag) ? bytes - at : t->frag;
        if (!read_peer(o->pid, o->addr + at, bounce, len)) {
            return false;
        }
        if (pnbc_convert_part(t->conv, bounce, len, at, false) != len) {
            t->err = MPI_ERR_TRUNCATE;
        }
    }
    return true;
}

/* Receiver: box q holds the sender's offer.  Copy the message straight
 * from its buffer (true), or refuse (false: it follows as fragments);
 * either way the offer's box is consumed. */
static bool recv_take_offer(shm_action_t *t, shm_box_t *box, uint64_t q)
{
    const shm_offer_t o = *(const shm_offer_t *) box->data;
    uint64_t bytes = o.bytes;
    if (OPAL_UNLIKELY(bytes > t->bytes)) {
        t->err = MPI_ERR_TRUNCATE;          /* the sender completes anyway */
        bytes = 0;
    }
    const bool read = mca_common_pnbc_params.shm_single_copy && !t->slot->refused &&
                      NULL == t->fold_op && 0 != o.pid_ns && pid_namespace() == o.pid_ns &&
                      (NULL != t->flat ? read_peer(o.pid, o.addr, t->flat, bytes)
                                       : recv_read_packed(t, &o, bytes, box->data));
    if (OPAL_UNLIKELY(!read)) {
        t->slot->refused = 1;               /* before consumed: see send_offer_answered */
        t->err = MPI_SUCCESS;
    }
    __atomic_store_n(&t->slot->consumed, q, __ATOMIC_RELEASE);
    t->q = q;
    return read;
}

/* Fold `n` whole elements that start `at` bytes into the message. */
static void fold_elements(shm_action_t *t, const char *data, uint64_t at, uint64_t n)
{
    if (NULL != t->fold_acc) {
        ompi_op_reduce(t->fold_op, (void *) data, t->fold_acc + at, (int) n, t->fold_dtype);
    } else {
        /* landing = operand (op) data; for a user op the 3-buffer form
         * computes source2 (op) source1 */
        ompi_3buff_op_reduce(t->fold_op, (void *) data, t->fold_operand + at,
                             (char *) t->flat + at, (int) n, t->fold_dtype);
    }
}

/* Receiver: reduce the fragment's data into the result straight from the
 * box.  A fragment may end inside an element (a sender's convertor packs
 * whole primitives only): its first bytes wait in t->carry. */
static void recv_fold(shm_action_t *t, const char *data, uint64_t len)
{
    const uint64_t el = t->fold_elsize;
    const uint64_t partial = t->moved % el;
    uint64_t used = 0;
    if (partial > 0) {
        used = (el - partial < len) ? el - partial : len;
        memcpy(t->carry + partial, data, used);
        if (partial + used == el) {
            fold_elements(t, t->carry, t->moved - partial, 1);
        }
    }
    const uint64_t whole = (len - used) / el;
    if (whole > 0) {
        fold_elements(t, data + used, t->moved + used, whole);
        used += whole * el;
    }
    memcpy(t->carry, data + used, len - used);
    t->moved += len;
}

/* Receiver: take the fragments that are there; t->done after the last. */
static void recv_progress(shm_action_t *t)
{
    for (;;) {
        const uint64_t q = t->q + 1;
        shm_box_t *box = box_of(t, q);
        if (__atomic_load_n(&box->full, __ATOMIC_ACQUIRE) != q) {
            return;
        }
        const uint64_t len = box->len;
        if (SHM_OFFER == len && 0 == t->moved) {
            if (recv_take_offer(t, box, q)) {
                t->done = true;
                return;
            }
            continue;
        }
        const bool last = box->last;
        if (OPAL_UNLIKELY(len > t->frag || t->moved + len > t->bytes)) {
            t->err = MPI_ERR_TRUNCATE;      /* also SHM_TRUNCATED */
        } else if (NULL != t->fold_op) {
            recv_fold(t, box->data, len);
        } else if (NULL != t->flat) {
            memcpy(t->flat + t->moved, box->data, len);
            t->moved += len;
        } else if (len > 0) {
            if (pnbc_convert_part(t->conv, box->data, len, t->moved, false) != len) {
                t->err = MPI_ERR_TRUNCATE;
            }
            t->moved += len;
        }
        __atomic_store_n(&t->slot->consumed, q, __ATOMIC_RELEASE);
        t->q = q;
        if (last) {
            t->done = true;
            return;
        }
    }
}

static int shm_post(pnbc_action_t *a, const pnbc_channel_t *ch)
{
    shm_action_t *t = a->tstate;

    (void) ch;  /* the same as t->ch */
    t->moved = 0;
    t->err = MPI_SUCCESS;
    t->done = false;
    a->inflight = true;
    if (OPAL_UNLIKELY(t->fallback)) {
        int rc = fallback_post(a, t);
        a->inflight = (OMPI_SUCCESS == rc);
        return rc;
    }
    if (PNBC_ACT_SEND == a->kind) {
        send_progress(a, t);
    } else {
        recv_progress(t);
    }
    return OMPI_SUCCESS;
}

static bool shm_test(pnbc_action_t *a, int *err)
{
    shm_action_t *t = a->tstate;

    if (!t->done) {
        if (OPAL_UNLIKELY(t->fallback)) {
            if (!REQUEST_COMPLETE(t->req)) {
                return false;
            }
            t->err = t->req->req_status.MPI_ERROR;
            ompi_request_free(&t->req);
            t->req = NULL;
            t->done = true;
        } else {
            if (PNBC_ACT_SEND == a->kind) {
                send_progress(a, t);
            } else {
                recv_progress(t);
            }
            if (!t->done) {
                return false;
            }
        }
    }
    a->inflight = false;
    *err = t->err;
    return true;
}

const pnbc_transport_t pnbc_transport_shm = {
    .name = "shm",
    .bind = shm_bind,
    .commit = shm_commit,
    .post = shm_post,
    .test = shm_test,
    .unbind = shm_unbind,
};
