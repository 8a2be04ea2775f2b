/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Algorithm selection.  One table per collective lists its algorithms in
 * order of preference; the automatic choice is the first usable entry,
 * and coll_pnbc_<coll>_algorithm forces one by name.  Every input to the
 * choice (communicator size, counts, datatype, op) is the same on every
 * rank, so every rank builds matching schedules without talking.
 */

#include "coll_pnbc_algorithms.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/util/output.h"

static const pnbc_algorithm_t barrier_algorithms[] = {
    { "dissemination", pnbc_barrier_dissemination, NULL },
    { "recursive_doubling", pnbc_barrier_recursive_doubling, NULL },
    { NULL, NULL, NULL }
};

static const pnbc_algorithm_t bcast_algorithms[] = {
    { "binomial", pnbc_bcast_binomial, NULL },
    { "linear", pnbc_bcast_linear, NULL },
    { NULL, NULL, NULL }
};

static const pnbc_algorithm_t reduce_algorithms[] = {
    { "binomial", pnbc_reduce_binomial, NULL },
    { "linear", pnbc_reduce_linear, NULL },
    { NULL, NULL, NULL }
};

static const pnbc_algorithm_t allreduce_algorithms[] = {
    { "recursive_doubling", pnbc_allreduce_recursive_doubling, NULL },
    { "reduce_bcast", pnbc_allreduce_reduce_bcast, NULL },
    { NULL, NULL, NULL }
};

typedef struct pnbc_coll_desc_t {
    const char *name;
    const pnbc_algorithm_t *algorithms;
    int forced;     /* MCA parameter: 0 = automatic, i = algorithms[i-1] */
} pnbc_coll_desc_t;

static pnbc_coll_desc_t coll_table[PNBC_NCOLLS] = {
    [PNBC_BARRIER] = { "barrier", barrier_algorithms, 0 },
    [PNBC_BCAST] = { "bcast", bcast_algorithms, 0 },
    [PNBC_REDUCE] = { "reduce", reduce_algorithms, 0 },
    [PNBC_ALLREDUCE] = { "allreduce", allreduce_algorithms, 0 },
};

const char *mca_coll_pnbc_coll_name(pnbc_coll_t coll)
{
    return coll_table[coll].name;
}

static bool usable(const pnbc_algorithm_t *alg, const pnbc_coll_args_t *a)
{
    return NULL == alg->usable || alg->usable(a);
}

const pnbc_algorithm_t *mca_coll_pnbc_select(const pnbc_coll_args_t *a)
{
    const pnbc_coll_desc_t *d = &coll_table[a->coll];

    if (d->forced > 0) {
        const pnbc_algorithm_t *alg = &d->algorithms[d->forced - 1];
        if (usable(alg, a)) {
            return alg;
        }
        if (mca_coll_pnbc_component.verbose >= 1) {
            opal_output(0, "coll:pnbc: %s_init: algorithm %s cannot serve this call; "
                        "choosing automatically", d->name, alg->name);
        }
    }
    for (const pnbc_algorithm_t *alg = d->algorithms; NULL != alg->name; ++alg) {
        if (usable(alg, a)) {
            return alg;
        }
    }
    return &d->algorithms[0];
}

/* Register coll_pnbc_<coll>_algorithm for every collective, as an enum
 * whose values are "auto" and the table's algorithm names. */
void mca_coll_pnbc_select_register(void)
{
    for (int c = 0; c < PNBC_NCOLLS; ++c) {
        pnbc_coll_desc_t *d = &coll_table[c];
        mca_base_var_enum_value_t values[16];
        int n = 0;
        char name[64], help[256];

        values[n++] = (mca_base_var_enum_value_t) { 0, "auto" };
        for (const pnbc_algorithm_t *alg = d->algorithms; NULL != alg->name && n < 15; ++alg) {
            values[n] = (mca_base_var_enum_value_t) { n, alg->name };
            n++;
        }
        values[n] = (mca_base_var_enum_value_t) { 0, NULL };

        mca_base_var_enum_t *new_enum = NULL;
        snprintf(name, sizeof(name), "pnbc_%s_algorithms", d->name);
        if (OPAL_SUCCESS != mca_base_var_enum_create(name, values, &new_enum)) {
            continue;
        }
        snprintf(name, sizeof(name), "%s_algorithm", d->name);
        snprintf(help, sizeof(help),
                 "Algorithm for persistent %s (auto: pnbc's own choice at init)", d->name);
        d->forced = 0;
        (void) mca_base_component_var_register(&mca_coll_pnbc_component.super.collm_version,
                                               name, help, MCA_BASE_VAR_TYPE_INT, new_enum,
                                               0, 0, OPAL_INFO_LVL_5,
                                               MCA_BASE_VAR_SCOPE_ALL, &d->forced);
        OBJ_RELEASE(new_enum);
    }
}
