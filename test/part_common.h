/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Shared helpers of the partitioned-communication tests (part_*.c).
 *
 * The programs use the MPI-4 names (pnbc_mpi4.h maps them onto pnbc's
 * MPIX_ functions under Open MPI 4.1 and does nothing under an MPI-4
 * library), so the same source builds against MPICH 4 too, which is how
 * the tests themselves were validated before pnbc's implementation existed.
 *
 * Data model: element k of a message (k = 0 .. total-1, over all
 * partitions; partition i starts at element i*count) has fields whose
 * values are a hash of (seed, k, field): every rank can compute what any
 * peer sends.  Receive buffers are poisoned (POISON_RECV) before every
 * start, including a guard area behind the buffer: holes of the datatype
 * and the guard must keep the poison.  Send buffers hold JUNK_SEND until
 * the program writes a partition's data, right before it readies it.
 */
#ifndef PNBC_PART_COMMON_H
#define PNBC_PART_COMMON_H

#include "pnbc_mpi4.h"
#include "common.h"

#include <stddef.h>
#include <stdint.h>

#define PT_GUARD 64             /* poisoned bytes behind every receive buffer */
#define PT_POLL_LIMIT 30.0      /* seconds a Parrived / Test loop may spin */

/* ---------------------------------------------------------------- program */
/* The ring of the tests: *comm = a duplicate of MPI_COMM_WORLD with
 * MPI_ERRORS_RETURN; world rank r sends to *dst = r+1, receives from
 * *src = r-1 (np=1: itself). */
void pt_ring(MPI_Comm *comm, int *dst, int *src);
/* The end of a program (collective): the watchdog armed for "<prog> final",
 * the counters summed, "PASS|FAIL <prog> np=N: C cases, K checks, F
 * failures" from world rank 0; returns the exit status (1 on a failure). */
int pt_report(const char *prog);

/* ---------------------------------------------------------------- data */
/* Write the fields of elements [lo, hi) of data set `seed` (holes untouched). */
void pt_fill(unsigned char *buf, const dtype_t *dt, size_t lo, size_t hi, uint64_t seed);
/* exp = POISON_RECV over bytes + PT_GUARD, then the fields of n elements of `seed`. */
void pt_expect(unsigned char *exp, size_t bytes, const dtype_t *dt, size_t n, uint64_t seed);
/* 0 when got == exp in [lo, hi); otherwise describe the first difference. */
int pt_cmp(const unsigned char *got, const unsigned char *exp, size_t lo, size_t hi, const dtype_t *dt,
           char *msg, size_t len);
/* Seed of the data rank `rank` sends in iteration `it` of case `id` (request k). */
static inline uint64_t pt_seed(int id, int it, int rank, int k)
{
    return input_seed((uint64_t)id * 64 + (uint64_t)k, it, rank);
}

/* ---------------------------------------------------------------- random */
static inline uint64_t pt_rand(uint64_t *s)
{
    *s = mix64(*s);
    return *s;
}
void pt_shuffle(int *a, int n, uint64_t *rng);

/* ---------------------------------------------------------------- Pready plans
 * The order and grouping in which a sender readies its partitions.  Group g
 * holds order[gstart[g] .. gstart[g+1]) and is readied with one call of its
 * kind: 'p' MPI_Pready (one partition), 'r' MPI_Pready_range (ascending,
 * contiguous), 'l' MPI_Pready_list (any order).                           */
typedef enum { PM_INORDER, PM_REVERSE, PM_RANDOM, PM_RANGE, PM_LIST, PM_MIXED, PM_NMODES } pmode_t;
const char *pt_mode_name(pmode_t m);

typedef struct {
    int n, ngroups;
    int *order, *gstart;
    char *gkind;
} pt_plan_t;
void pt_plan_make(pt_plan_t *p, int parts, pmode_t mode, uint64_t seed);
void pt_plan_free(pt_plan_t *p);
/* Ready group g on req: the return code of the MPI call. */
int pt_plan_exec(const pt_plan_t *p, int g, MPI_Request req);

/* ---------------------------------------------------------------- completion
 * Complete all n (started) requests with one family of calls; st[i] gets the
 * status of rq[i].  Returns the first error code (MPI_ERR_IN_STATUS from the
 * Wait/Test-all and -some calls is resolved to the status' error).  A Test* loop gives up
 * after PT_POLL_LIMIT s (returns MPI_ERR_PENDING, says so in *timedout).   */
enum { CM_WAIT, CM_WAITALL, CM_WAITANY, CM_WAITSOME, CM_TEST, CM_TESTALL, CM_TESTANY, CM_TESTSOME, CM_N };
const char *pt_method_name(int m);
int pt_complete(int method, int n, MPI_Request *rq, MPI_Status *st, int *timedout);

/* ---------------------------------------------------------------- errors */
int pt_class(int rc);           /* MPI_Error_class */
/* Check that rc has error class `cls`; on mismatch case_fail with `what`.
 * Returns 1 when it matched. */
int pt_expect_class(int rc, int cls, const char *what, int it);
const char *pt_class_name(int cls);

/* ---------------------------------------------------------------- status */
/* Check a receive's status: source, tag, MPI_Get_count(dt) == n. */
int pt_check_status(const MPI_Status *st, int src, int tag, MPI_Datatype dt, MPI_Count n, int it);

#endif
