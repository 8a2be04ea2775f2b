/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The shared-memory transport's single copy and folding (see
 * common_pnbc_transport_shm.c): a sender's offer of its buffer, the
 * receiver reading it with process_vm_readv (or refusing), and a receiver
 * reducing a message into its result straight from the boxes.
 */

#include "common_pnbc_shm.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* This process's PID namespace (the inode of /proc/self/ns/pid; 0 if
 * unknown).  A pid names the sender only to a receiver in the same
 * namespace: in another one (containers sharing /dev/shm) it could name
 * an unrelated process, so such offers are refused. */
uint64_t pnbc_shm_pid_namespace(void)
{
    static uint64_t ns = UINT64_MAX;
    if (UINT64_MAX == ns) {
        struct stat st;
        ns = (0 == stat("/proc/self/ns/pid", &st)) ? (uint64_t) st.st_ino : 0;
    }
    return ns;
}

/* Do the job's processes on this node outnumber its CPUs?  Then two
 * processes that must meet (an offer is read only while its sender
 * waits) often wait for the other to be scheduled: a collective whose
 * nonblocking calls chain such meetings round after round streams its
 * messages instead (pnbc_large_msgs_t.chained).
 * coll_pnbc_oversubscribed: -1 finds out, 0 no, 1 yes. */
bool pnbc_shm_oversubscribed(void)
{
    static int found = -1;      /* computed once (a race computes the same
                                   value twice) */
    const int forced = mca_common_pnbc_params.oversubscribed;
    if (forced >= 0) {
        return 0 != forced;
    }
    if (found < 0) {
        const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        const long procs = 1 + (long) opal_process_info.num_local_peers;
        found = (cpus > 0 && procs > cpus) ? 1 : 0;
    }
    return 0 != found;
}

/* Non-temporal stores never where processes share CPUs: a receiver then
 * often runs where its sender ran and would find the lines in its cache.
 * Elsewhere from the least size either rule of pnbc_fill_t covers (a
 * ring's: the measured one only). */
void pnbc_fill_init(pnbc_fill_t *f, bool box)
{
    const pnbc_engine_params_t *p = &mca_common_pnbc_params;
    *f = (pnbc_fill_t) { .from = SIZE_MAX, .box = box };
    if (p->shm_nt_min_bytes > 0 && !pnbc_shm_oversubscribed()) {
        const int from = (box && p->shm_nt_min_bytes < p->shm_nt_measured_min_bytes)
                             ? p->shm_nt_min_bytes : p->shm_nt_measured_min_bytes;
        f->from = (size_t) (from > 0 ? from : 0);
    }
}

/* Offered messages this process helped copy, helps the kernel refused,
 * offers it refused as a receiver (coll_pnbc_verbose 2); slots whose
 * single copy it declined (pnbc_shm_offer_floor()). */
static uint64_t shared_copies, helps_refused, offers_refused;
uint64_t pnbc_shm_declined_slots;

void pnbc_shm_copy_report(void)
{
    if (mca_common_pnbc_params.verbose >= 2) {
        opal_output(0, "coll:pnbc: shm: %llu offered messages copied by both sides, %llu helps "
                    "refused by the kernel, %llu offers refused, %llu slots declined single copy, "
                    "%llu fills with non-temporal stores",
                    (unsigned long long) __atomic_load_n(&shared_copies, __ATOMIC_RELAXED),
                    (unsigned long long) __atomic_load_n(&helps_refused, __ATOMIC_RELAXED),
                    (unsigned long long) __atomic_load_n(&offers_refused, __ATOMIC_RELAXED),
                    (unsigned long long) __atomic_load_n(&pnbc_shm_declined_slots,
                                                         __ATOMIC_RELAXED),
                    (unsigned long long) pnbc_fill_nt_count());
    }
}

bool pnbc_shm_shared_possible(void)
{
    return mca_common_pnbc_params.shm_shared_copy_min_bytes > 0 && !pnbc_shm_oversubscribed();
}

/* Receiver: take help with offered messages (shared copy)?  For a
 * collective whose senders would be idle (pnbc_large_msgs_t.shared_copy),
 * a message large enough for two system calls to pay, each process with
 * a CPU of its own (else the helper takes the receiver's), a buffer in
 * one piece, the message copied as it is (not folded into a reduction),
 * and single copy on here. */
bool pnbc_shm_recv_help(const shm_action_t *t)
{
    return pnbc_shm_shared_size(&t->ch, t->bytes) && NULL != t->flat && NULL == t->fold &&
           mca_common_pnbc_params.shm_single_copy;
}

/* Where a shared copy splits a message: in the middle, on a page (the
 * kernel pins the pages each side copies). */
static uint64_t help_split(uint64_t bytes)
{
    const uint64_t half = bytes / 2;
    return (half >= 4096) ? half & ~(uint64_t) 4095 : half & ~(uint64_t) 63;
}

/* Sender: write [from, bytes) of our message into the receiver's buffer. */
static bool write_peer(shm_action_t *t, uint64_t from)
{
    for (uint64_t put = from; put < t->bytes;) {
        struct iovec mine = { t->flat + put, t->bytes - put };
        struct iovec theirs = { (void *) (uintptr_t) (t->invite_addr + put), t->bytes - put };
        ssize_t n = process_vm_writev((pid_t) t->invite_pid, &mine, 1, &theirs, 1, 0);
        if (n <= 0) {
            return false;
        }
        put += (uint64_t) n;
    }
    return true;
}

/* Sender, single copy: describe our buffer in the message's first box;
 * the receiver copies straight out of it (process_vm_readv).
 *
 * Shared copy.  A sender would then sit idle until the receiver has read
 * it all, one core copying while the other waits.  Where the receiver
 * takes help (its slot's entry says so, see pnbc_shm_recv_help()) and
 * has posted this start (a retagged slot is armed for the call once
 * paired; else its `invited` is our post count), so that its buffer is
 * the message's, and the send is the last action of its round (`last`:
 * our copy delays none of the round's other sends or copies), the offer
 * leaves the upper part to us: we write it there at once, in this call,
 * and say so in the offer's `helped`.  The receiver reads the lower part
 * meanwhile and answers the offer only after `helped`, so nothing is
 * written into its block after its answer (the block may then be
 * freed).  A receiver that cannot be helped gets a whole offer. */
bool pnbc_shm_send_offer(shm_action_t *t, bool last)
{
    const uint64_t q = t->q + 1;
    if (!send_box_free(t, q)) {
        return false;
    }
    /* A receiver that takes help and has not posted yet will: wait for
     * it rather than hand it the whole message.  We would wait for its
     * read of the offer anyway, and our send is the last thing our round
     * does; its post rings us (pnbc_shm_post). */
    const bool share = t->help && last;
    if (share && !t->ch.retag &&
        __atomic_load_n(&t->slot->invited, __ATOMIC_ACQUIRE) != t->posts) {
        return false;
    }
    shm_box_t *box = box_of(t, q);
    shm_offer_t *o = (shm_offer_t *) box->data;
    const uint64_t split = share ? help_split(t->bytes) : 0;
    o->pid = (uint64_t) getpid();
    o->pid_ns = pnbc_shm_pid_namespace();
    o->addr = (uint64_t) (uintptr_t) t->flat;
    o->bytes = t->bytes;
    o->split = split;
    o->helped = SHM_HELP_PENDING;
    box->len = SHM_OFFER;
    box->last = 0;
    __atomic_store_n(&box->full, q, __ATOMIC_RELEASE);
    shm_ring(t);
    t->q = q;
    t->offered = true;
    if (share) {
        const bool wrote = write_peer(t, split);
        t->help = wrote;        /* a refusal stands: help no more */
        __atomic_add_fetch(wrote ? &shared_copies : &helps_refused, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&o->helped, wrote ? SHM_HELP_DONE : SHM_HELP_FAILED, __ATOMIC_RELEASE);
        shm_ring(t);
    }
    return true;
}

/* Sender: has the receiver answered our offer (counted its box
 * consumed)?  Either it read our buffer -- the message is delivered -- or
 * it refused (it cannot read other processes' memory: seccomp, ptrace
 * scope) and set `refused` first: then the message follows as fragments,
 * and so do all later ones, as the receiver refuses for good.  A receiver
 * that answered may also have completed and freed the request before we
 * looked, and its block may be someone else's by now: a new incarnation
 * number says so (and that the offer was read). */
bool pnbc_shm_send_offer_answered(shm_action_t *t)
{
    t->seen = __atomic_load_n(&t->slot->consumed, __ATOMIC_ACQUIRE);
    const bool refused = (0 != t->slot->refused);
    /* Read after the slot: a block given to another request since we
     * read it has another incarnation by now (block_fill clears it
     * first), and then what we read belongs to that request.  Our
     * receiver is then done with the offer, and it had read it: one that
     * refuses waits for the fragments, so its block cannot go. */
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&t->hdr->gen, __ATOMIC_ACQUIRE) != t->gen) {
        t->offered = false;
        return true;
    }
    if (t->seen < t->q) {
        return false;
    }
    t->offered = false;
    if (refused) {
        t->offer = false;
    }
    return true;
}

/* Sender, invited (pnbc_large_msgs_t.sender_writes): the receiver has
 * posted this start (its slot's `invited` says so, see send_progress), so
 * its buffer is the message's: write the message there and tell it in
 * the next box.  False if the kernel refuses the write (seccomp, ptrace
 * scope) or the box is not free yet; after a refusal t->invited is
 * cleared and the message streams through the boxes, as will all later
 * ones of this action. */
bool pnbc_shm_send_write(shm_action_t *t)
{
    const uint64_t q = t->q + 1;
    if (!send_box_free(t, q)) {
        return false;
    }
    if (!write_peer(t, 0)) {
        t->invited = false;
        return false;
    }
    shm_box_t *box = box_of(t, q);
    box->len = SHM_WRITTEN;
    box->last = 1;
    __atomic_store_n(&box->full, q, __ATOMIC_RELEASE);
    shm_ring(t);
    t->q = q;
    return true;
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

/* Can the offered message be read where the result lands, in one system
 * call, and the operand folded into it there?  landing = operand (op)
 * data keeps its order as landing = operand (op) landing (ompi_op_reduce:
 * target = source (op) target), so any op can; not when the operand
 * overlaps the landing. */
static bool fold_in_landing(const shm_action_t *t, uint64_t bytes)
{
    const shm_fold_t *f = t->fold;
    if (NULL != f->acc || NULL == t->flat || 0 != t->moved || 0 == bytes ||
        0 != bytes % f->elsize || bytes / f->elsize > INT_MAX) {
        return false;
    }
    const char *land = t->flat;
    return f->operand + bytes <= land || land + bytes <= f->operand;
}

/* The offered message folded into a reduction (a retagged schedule's or
 * a pool under pressure, see slot_shape()): read into the landing and
 * folded there, or else through a bounce buffer on the stack, a piece at
 * a time.  Only a failed first read can be refused -- the message then
 * follows as fragments -- as later ones have folded part of it already. */
static bool recv_read_fold(shm_action_t *t, const shm_offer_t *o, uint64_t bytes)
{
    if (fold_in_landing(t, bytes)) {
        if (!read_peer(o->pid, o->addr, t->flat, bytes)) {
            return false;       /* nothing written that the fragments will not */
        }
        ompi_op_reduce(t->fold->op, t->fold->operand, t->flat, (int) (bytes / t->fold->elsize),
                       t->fold->dtype);
        t->moved += bytes;
        return true;
    }
    char bounce[16384];
    for (uint64_t at = 0; at < bytes; at += sizeof(bounce)) {
        const uint64_t len = (bytes - at < sizeof(bounce)) ? bytes - at : sizeof(bounce);
        if (!read_peer(o->pid, o->addr + at, bounce, len)) {
            if (0 == at) {
                return false;
            }
            t->err = MPI_ERR_INTERN;
            return true;
        }
        pnbc_shm_recv_fold(t, bounce, len);
    }
    return true;
}

/* Receiver of a shared copy (see pnbc_shm_send_offer()), our part read:
 * has the sender written its part?  If it could not, read it too. */
static bool recv_help_done(shm_action_t *t, const shm_offer_t *o)
{
    const uint64_t helped = __atomic_load_n(&o->helped, __ATOMIC_ACQUIRE);
    if (SHM_HELP_PENDING == helped) {
        return false;
    }
    if (SHM_HELP_DONE != helped &&
        !read_peer(o->pid, o->addr + o->split, t->flat + o->split, o->bytes - o->split)) {
        t->err = MPI_ERR_INTERN;            /* half of it read: too late to refuse */
    }
    return true;
}

/* Receiver: answer the offer in box q (count it consumed). */
static void recv_answer(shm_action_t *t, uint64_t q)
{
    __atomic_store_n(&t->slot->consumed, q, __ATOMIC_RELEASE);
    shm_ring(t);
    t->q = q;
}

/* Receiver: box q holds the sender's offer.  Copy the message straight
 * from its buffer (SHM_TAKE_DONE; SHM_TAKE_PENDING while the sender still
 * writes its part of a shared copy), or refuse (SHM_TAKE_REFUSED: it
 * follows as fragments); either way the offer's box is consumed once
 * done with. */
int pnbc_shm_recv_take_offer(shm_action_t *t, shm_box_t *box, uint64_t q)
{
    const shm_offer_t *live = (const shm_offer_t *) box->data;
    if (!t->help_wait) {
        const shm_offer_t o = *live;
        uint64_t bytes = o.bytes;
        if (OPAL_UNLIKELY(bytes > t->bytes)) {
            t->err = MPI_ERR_TRUNCATE;      /* the sender completes anyway */
            bytes = 0;
        }
        /* a split we did not ask for, or out of range: read it all */
        const bool split = t->help && 0 != o.split && o.split < bytes;
        const bool read = mca_common_pnbc_params.shm_single_copy && !t->slot->refused &&
                          0 != o.pid_ns && pnbc_shm_pid_namespace() == o.pid_ns &&
                          (NULL != t->fold ? recv_read_fold(t, &o, bytes)
                           : NULL != t->flat  ? read_peer(o.pid, o.addr, t->flat,
                                                          split ? o.split : bytes)
                                              : recv_read_packed(t, &o, bytes, box->data));
        if (OPAL_UNLIKELY(!read)) {
            /* the sender may be writing its part: the fragments bring
             * the same bytes after it */
            t->slot->refused = 1;           /* before consumed: see pnbc_shm_send_offer_answered */
            t->err = MPI_SUCCESS;
            __atomic_add_fetch(&offers_refused, 1, __ATOMIC_RELAXED);
            recv_answer(t, q);
            return SHM_TAKE_REFUSED;
        }
        t->help_wait = split;
    }
    if (t->help_wait && !recv_help_done(t, live)) {
        return SHM_TAKE_PENDING;
    }
    t->help_wait = false;
    recv_answer(t, q);
    return SHM_TAKE_DONE;
}

static void fold_elements(shm_action_t *t, const char *data, uint64_t at, uint64_t n)
{
    pnbc_shm_fold_run(t->fold, data, at, n, t->flat);
}

/* Receiver: reduce the fragment's data into the result straight from the
 * box.  A fragment may end inside an element (a sender's convertor packs
 * whole primitives only): its first bytes wait in t->fold->carry. */
void pnbc_shm_recv_fold(shm_action_t *t, const char *data, uint64_t len)
{
    char *carry = t->fold->carry;
    const uint64_t el = t->fold->elsize;
    const uint64_t partial = t->moved % el;
    uint64_t used = 0;
    if (partial > 0) {
        used = (el - partial < len) ? el - partial : len;
        memcpy(carry + partial, data, used);
        if (partial + used == el) {
            fold_elements(t, carry, t->moved - partial, 1);
        }
    }
    const uint64_t whole = (len - used) / el;
    if (whole > 0) {
        fold_elements(t, data + used, t->moved + used, whole);
        used += whole * el;
    }
    memcpy(carry, data + used, len - used);
    t->moved += len;
}

/* Receiver: take over the REDUCE that consumes RECV a's message (a->fold,
 * see find_folds()), to do it while the message is taken out of the
 * transport's buffers instead of copying it to its landing zone and
 * reducing it in the next round.  f: the receive's state to reuse, or
 * NULL; returns it filled in, or NULL (out of memory: the REDUCE runs as
 * usual).  The slots and the mailbox share it. */
shm_fold_t *pnbc_shm_fold_take(pnbc_action_t *a, shm_fold_t *f)
{
    pnbc_action_t *x = a->fold;
    if (NULL == f && NULL == (f = calloc(1, sizeof(*f)))) {
        return NULL;
    }
    f->op = x->op;
    f->dtype = x->buf.dtype;
    f->elsize = x->buf.dtype->super.size;
    f->count = x->buf.count;
    f->acc = f->operand = NULL;
    if (x->src.addr == a->buf.addr) {
        f->acc = x->buf.addr;
    } else {
        f->operand = x->src.addr;
    }
    x->folded = true;
    return f;
}

void pnbc_shm_recv_take_fold(pnbc_action_t *a, shm_action_t *t)
{
    if (NULL != a->fold) {
        t->fold = pnbc_shm_fold_take(a, t->fold);
    }
}
