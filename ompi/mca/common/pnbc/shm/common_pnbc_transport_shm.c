/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The shared-memory transport: a SEND/RECV between two processes of the
 * same node travels through a slot of a file both map, so a start is a
 * memory copy and two counter writes -- no matching, no PML request, no
 * allocation: a flag in a shared mapping takes about half of an ob1
 * message (docs/design-measurements.md, "shm").
 *
 * Who creates what, without any communication at init
 * ----------------------------------------------------
 * MPI-4 persistent *_init calls must not wait for other processes, so the
 * two sides of a message meet through a key both can compute: the
 * request's (cid, tag).  The RECEIVER places each request's slots in one
 * block of its process's pool (common_pnbc_shm_pool.c): segments of
 * shared memory in its own directory
 *
 *     /dev/shm/pnbc.<node>.<uid>.<jobid>.<vpid>.<job key>/pool.<k>
 *
 * (the job session directory instead of /dev/shm where that is not
 * writable; <job key>: see job_key() in common_pnbc_shm_file.c), created
 * once and grown in large steps, so a request costs no file and no
 * mapping.  The block holds one slot per message this process receives
 * through shm in the request, found by (sender's rank, pair_seq):
 *
 *     header | table[nslots] {sender, pair_seq, offset, capacity, depth}
 *            | slots
 *
 * and is published, complete, in the pool's directory (pool.dir) under
 * (cid, tag).  The SENDER looks it up lazily, at its first post: if the
 * receiver has not reached its *_init yet the entry is not there, and the
 * action simply stays in flight while test() retries (progress, not
 * blocking).  A sender maps each segment of a peer's pool once.
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
 * Sender writes.  Where the collective asks for it
 * (pnbc_large_msgs_t.sender_writes: a gather root, whose receives would
 * otherwise all be copied by the root, one after the other), a receiver
 * whose buffer lies in one piece invites the sender instead: its slot's
 * entry holds {address, pid, PID namespace}, and at each post it stores
 * its post count in the slot's `invited`, as its buffer is the message's
 * from then on.  The sender waits until `invited` equals its own post
 * count, writes the message there with process_vm_writev, then fills
 * its next box with SHM_WRITTEN (no data), which completes both sides.
 * The senders of one root write at once.  A sender that cannot write
 * (its data not in one piece or of another size, another PID namespace,
 * coll_pnbc_shm_single_copy 0 on its side, the kernel refusing) streams
 * through the slot's two boxes (of the collective's box size, 4 KiB
 * under pool pressure) instead.  In a retagged schedule the sender
 * writes once it has paired with the slot for this call (the slot is
 * armed for the call: the receiver has posted it), whatever the two
 * sides' post counts.
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
 * If the receiver has no room for the request's block (its pool is
 * bounded, see common_pnbc_shm_pool.c) or no pool at all (e.g. /dev/shm
 * is full), it publishes that instead and carries those messages over
 * pml; a sender finding it switches them to pml too, so both sides still
 * agree (on which tag, and in which order: see fallback_post()).
 *
 * Retagged schedules (a cached nonblocking instance, run under each new
 * call's tag; the two sides of a call may be instances of different
 * ages) cannot pair at init, nor count starts per request.  So they pair
 * at each start instead (shm_retag()): the receiver arms its slots for
 * the call -- each slot's `armed` = (cid, call tag), its `base` = the
 * fragments it carried so far -- and publishes the block under the
 * call's tag (its directory entry is reserved at commit, so this cannot
 * fail; with none left, the instance stays on pml and says so by a
 * marker file per call); a sender first checks the slot it used at its last call (the
 * same instances usually meet again: no lookup), else looks the block up,
 * and numbers its fragments from `base`.  Once the receives of the call
 * are done the receiver withdraws and disarms the block.  An instance
 * earns its block only at its second start (until then its receives are
 * announced as fallback), and slots of one-box messages have one box:
 * a sender cannot run ahead into a call the receiver has not armed.
 *
 * Cleanup.  The receiver gives the block back to its pool when the
 * request is freed; the engine's finalize removes the whole directory;
 * and the directory is registered with the runtime's cleanup (PMIx),
 * which removes it when the process ends, even by a signal.
 *
 * The code.  This file binds actions to the transport and commits a
 * schedule's shm actions (the receiver's block, the senders' regions);
 * common_pnbc_shm_pool.c (owner) and common_pnbc_shm_peer.c (senders)
 * the pool, common_pnbc_shm_file.c the directory, regions, building a
 * block and the cleanup, common_pnbc_shm_slot.c the slot protocol
 * (post/test, streaming, the fallback), common_pnbc_shm_copy.c single
 * copy and folding, common_pnbc_shm_express.c the express path of
 * one-box messages (a post: a copy and a flag), and common_pnbc_shm.h
 * what they share.
 */

#include "common_pnbc_shm.h"

#include "ompi/proc/proc.h"
#include "opal/util/output.h"

#include <stdlib.h>

/* ------------------------------------------------------------------ */
/* bind / unbind                                                      */
/* ------------------------------------------------------------------ */

bool pnbc_shm_peer_local(ompi_communicator_t *comm, int rank)
{
    ompi_proc_t *peer = ompi_comm_peer_lookup(comm, rank);
    /* Peers of another job (dynamic processes) would have their files in
     * another job's namespace: leave them to pml. */
    return NULL != peer && OPAL_PROC_ON_LOCAL_NODE(peer->super.proc_flags) &&
           peer->super.proc_name.jobid == OMPI_PROC_MY_NAME->jobid;
}

bool pnbc_shm_peer_ok(const pnbc_action_t *a, const pnbc_channel_t *ch)
{
    ompi_communicator_t *comm = ch->comm;

    if (!mca_common_pnbc_params.shm || a->local || OMPI_COMM_IS_INTER(comm) ||
        a->peer == ompi_comm_rank(comm)) {
        return false;
    }
    return pnbc_shm_peer_local(comm, a->peer);
}

bool pnbc_shm_bind_data(const pnbc_action_t *a, size_t bytes, char **flat,
                        opal_convertor_t **conv)
{
    *flat = NULL;
    *conv = NULL;
    if (0 == bytes) {
        return true;
    }
    if (ompi_datatype_is_contiguous_memory_layout(a->buf.dtype, a->buf.count)) {
        ptrdiff_t true_lb, true_extent;
        ompi_datatype_get_true_extent(a->buf.dtype, &true_lb, &true_extent);
        *flat = (char *) a->buf.addr + true_lb;
        return true;
    }
    *conv = pnbc_prepared_convertor(&a->buf, PNBC_ACT_SEND == a->kind);
    return NULL != *conv;
}

static bool shm_bind(pnbc_action_t *a, const pnbc_channel_t *ch)
{
    const size_t bytes = (NULL == a->buf.dtype) ? 0 : a->buf.count * a->buf.dtype->super.size;

    /* Both sides decide alike: same algorithm, same parameters, and a
     * SEND has the type signature of its RECV.  A message the row leaves
     * to the PML above the boxes (whose own single copy is as dear) goes
     * through them where its receiver declines single copy
     * (pnbc_shm_declined_below() its published offer floor). */
    const int max_bytes = mca_common_pnbc_params.shm_max_bytes;
    /* pnbc_shm_peer_ok() first: the tier and the floor look the peer up
     * in the communicator's group, which an intercommunicator's `local`
     * action's peer is not a rank of. */
    if (max_bytes < 0 || ch->sizes_may_differ || bytes > (size_t) max_bytes ||
        !pnbc_shm_peer_ok(a, ch) ||
        (ch->retag && (bytes < (size_t) mca_common_pnbc_params.shm_retag_min_bytes ||
                       1 == pnbc_mbox_tier(ch, a, bytes))) ||
        (bytes > shm_box_max(ch) && bytes > ch->large.shm_max &&
         bytes >= pnbc_shm_declined_below(ch, pnbc_shm_pair_floor(ch, a)))) {
        return false;
    }
    /* From here on the action is ours whatever happens: the peer takes
     * the same decision without knowing about our memory.  A failure
     * leaves tstate.ptr NULL and makes the commit fail. */
    shm_action_t *t = malloc(sizeof(*t));   /* (calloc skips malloc's thread cache) */
    if (NULL == t) {
        return true;
    }
    *t = (shm_action_t) { .bytes = bytes, .ch = *ch };
    if (!pnbc_shm_bind_data(a, bytes, &t->flat, &t->conv)) {
        free(t);
        return true;
    }
    /* The region is attached by shm_commit once every action is bound. */
    a->tstate.ptr = t;
    return true;
}

static void shm_unbind(pnbc_action_t *a)
{
    shm_action_t *t = a->tstate.ptr;
    if (NULL == t) {
        return;
    }
    pnbc_shm_region_release(t->region);
    if (NULL != t->conv) {
        OBJ_RELEASE(t->conv);
    }
    free(t->fold);
    free(t);
    a->tstate.ptr = NULL;
}

/* ------------------------------------------------------------------ */
/* commit: build the receiver's file, share the senders' mappings     */
/* ------------------------------------------------------------------ */

static int shm_commit_recvs(pnbc_schedule_t *s, const pnbc_channel_t *ch)
{
    uint32_t nslots = 0;
    for (uint32_t i = 0; i < s->nactions; ++i) {
        nslots += is_shm(&s->actions[i], PNBC_ACT_RECV);
    }
    if (0 == nslots) {
        return OMPI_SUCCESS;
    }
    return pnbc_shm_recv_block_build(s, ch, nslots);
}

/* The region of the receiver `peer`'s block, shared with an earlier
 * send to it, or new. */
static shm_region_t *send_region(pnbc_schedule_t *s, uint32_t upto, int peer,
                                 const pnbc_channel_t *ch)
{
    for (uint32_t j = 0; j < upto; ++j) {
        if (is_shm(&s->actions[j], PNBC_ACT_SEND) && s->actions[j].peer == peer) {
            shm_region_t *r = ((shm_action_t *) s->actions[j].tstate.ptr)->region;
            r->refs++;
            return r;
        }
    }
    shm_region_t *r = pnbc_shm_region_new(ch, false);
    if (NULL != r) {
        r->peer = ompi_comm_peer_lookup(ch->comm, peer)->super.proc_name;
    }
    return r;
}

/* Senders: one region (the receiver's block, found lazily) per peer. */
static int shm_commit_sends(pnbc_schedule_t *s, const pnbc_channel_t *ch)
{
    for (uint32_t i = 0; i < s->nactions; ++i) {
        pnbc_action_t *a = &s->actions[i];
        if (!is_shm(a, PNBC_ACT_SEND)) {
            continue;
        }
        shm_action_t *t = a->tstate.ptr;
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
    int rc = pnbc_transport_bound_all(s, &pnbc_transport_shm);     /* see shm_bind */
    if (OMPI_SUCCESS == rc) {
        rc = shm_commit_recvs(s, ch);
    }
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
                    "(%u folded into a reduction)", (unsigned) pnbc_comm_key(ch->comm), ch->tag,
                    ompi_comm_rank(ch->comm), nsend, nrecv, nfold);
    }
    return rc;
}

/* A retagged schedule's start (a nonblocking call, run by whichever
 * cached instance each rank picked): the receiver announces its block
 * under the call's tag, each slot numbering on from its own count; a
 * sender forgets the block it found last time and looks it up again at
 * its first post, taking the numbering from the block's table. */
static void shm_retag(pnbc_action_t *a, const pnbc_channel_t *ch)
{
    shm_action_t *t = a->tstate.ptr;
    shm_region_t *r = t->region;

    t->ch.tag = ch->tag;
    if (PNBC_ACT_SEND == a->kind) {
        t->unpaired = true;     /* the slot is kept: see send_pair() */
        t->fallback = false;
        if (r->acts[0] == a) {
            r->tag = ch->tag;
            r->base = NULL;
        }
    } else if (NULL != r && r->acts[0] == a) {
        pnbc_shm_region_announce(r, ch->tag);
    }
}

/* The engine's last release: the single-copy report (verbose 2), the
 * pools (pnbc_shm_pool_finalize()), then our directory with the files
 * of requests never freed. */
static void shm_fini(void)
{
    pnbc_shm_copy_report();
    pnbc_shm_pool_finalize();
    pnbc_shm_own_dir_remove();
}

const pnbc_transport_t pnbc_transport_shm = {
    .name = "shm",
    /* a SEND is done once its data is in the receiver's box (or, single
     * copy, read), and a RECV can fold its message into a reduction */
    .caps = PNBC_TCAP_EAGER_SEND | PNBC_TCAP_FOLD,
    .bind = shm_bind,
    .commit = shm_commit,
    .post = pnbc_shm_post,
    .test = pnbc_shm_test,
    .express = pnbc_shm_express,
    .xpost = pnbc_shm_xpost,
    .xtest = pnbc_shm_xtest,
    .bell = pnbc_shm_bell,
    .retag = shm_retag,
    .unbind = shm_unbind,
    .open = pnbc_shm_pool_open,
    .comm_enable = pnbc_shm_comm_enable,
    .fini = shm_fini,
};
