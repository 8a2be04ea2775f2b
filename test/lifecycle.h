/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * What the files of the lifecycle program share: the harness of the
 * sub-tests (lifecycle.c, with main), the sub-tests that start and complete
 * requests (lifecycle_start.c: a, b, c, i) and the ones that misuse or free
 * them (lifecycle_misuse.c: d, e, f, g, h).  See lifecycle.c for the list.
 */
#ifndef PNBC_TEST_LIFECYCLE_H
#define PNBC_TEST_LIFECYCLE_H

#include "common.h"

#define TMO 10.0

extern int wrank, wsize;
extern int sub_fail, tainted;
extern uint64_t next_id;

void sfail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define CHK(call)                                                                        \
    do {                                                                                 \
        int rc_ = (call);                                                                \
        if (rc_ != MPI_SUCCESS) sfail("line %d: %s -> %s", __LINE__, #call, err_class_str(rc_)); \
    } while (0)

MPI_Comm sub_begin(const char *name);
void sub_end(MPI_Comm *c);
/* MPI_Test loop with timeout.  0 = complete, -1 = timeout/error (reported). */
int wait_tmo(MPI_Request *r, MPI_Status *st, const char *what);
/* the same with MPI_Testall */
int waitall_tmo(int n, MPI_Request *r, const char *what);
int check_p(preq_t *p, int it, const char *what);
int init_p(preq_t *p);
void setup(preq_t *p, coll_t coll, MPI_Comm comm, const dtype_t *dt, opk_t opk, int count,
           int root, int inplace);
void free_p(preq_t *p);
/* one ordinary start/complete/check round */
int normal_round(preq_t *p, int it, const char *what);

/* the sub-tests: lifecycle_start.c */
void test_a(void);
void test_b(void);
void test_c(void);
void test_i(void);
/* lifecycle_misuse.c */
void test_d(void);
void test_e_startall(void);
void test_e_start(void);
void test_f(void);
void test_g(void);
void test_h(void);

#endif
