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

typedef struct pnbc_coll_desc_t {
    const char *name;
    const pnbc_algorithm_t *algorithms;         /* intracommunicators */
    const pnbc_algorithm_t *inter_algorithms;   /* intercommunicators */
    int forced;     /* MCA parameter: 0 = automatic, i = algorithms[i-1] */
} pnbc_coll_desc_t;

static const pnbc_algorithm_t none[] = { { NULL, NULL, NULL } };

#define PNBC_COLL(id, coll) [PNBC_##id] = { #coll, pnbc_##coll##_algorithms, none, 0 }
#define PNBC_COLL_INTER(id, coll) \
    [PNBC_##id] = { #coll, pnbc_##coll##_algorithms, pnbc_inter_##coll##_algorithms, 0 }
static pnbc_coll_desc_t coll_table[PNBC_NCOLLS] = {
    PNBC_COLL_INTER(BARRIER, barrier),
    PNBC_COLL_INTER(BCAST, bcast),
    PNBC_COLL_INTER(REDUCE, reduce),
    PNBC_COLL_INTER(ALLREDUCE, allreduce),
    PNBC_COLL_INTER(GATHER, gather),
    PNBC_COLL_INTER(GATHERV, gatherv),
    PNBC_COLL_INTER(SCATTER, scatter),
    PNBC_COLL_INTER(SCATTERV, scatterv),
    PNBC_COLL_INTER(ALLGATHER, allgather),
    PNBC_COLL_INTER(ALLGATHERV, allgatherv),
    PNBC_COLL_INTER(ALLTOALL, alltoall),
    PNBC_COLL_INTER(ALLTOALLV, alltoallv),
    PNBC_COLL_INTER(ALLTOALLW, alltoallw),
    PNBC_COLL_INTER(REDUCE_SCATTER, reduce_scatter),
    PNBC_COLL_INTER(REDUCE_SCATTER_BLOCK, reduce_scatter_block),
    PNBC_COLL(SCAN, scan),
    PNBC_COLL(EXSCAN, exscan),
    PNBC_COLL(NEIGHBOR_ALLGATHER, neighbor_allgather),
    PNBC_COLL(NEIGHBOR_ALLGATHERV, neighbor_allgatherv),
    PNBC_COLL(NEIGHBOR_ALLTOALL, neighbor_alltoall),
    PNBC_COLL(NEIGHBOR_ALLTOALLV, neighbor_alltoallv),
    PNBC_COLL(NEIGHBOR_ALLTOALLW, neighbor_alltoallw),
};
#undef PNBC_COLL
#undef PNBC_COLL_INTER

static const pnbc_algorithm_t *algorithms_for(const pnbc_coll_desc_t *d, bool inter)
{
    return inter ? d->inter_algorithms : d->algorithms;
}

bool mca_coll_pnbc_implemented(pnbc_coll_t coll, bool inter)
{
    return NULL != algorithms_for(&coll_table[coll], inter)[0].name;
}

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
    const pnbc_algorithm_t *table = algorithms_for(d, a->inter);

    /* The MCA override names an intracommunicator algorithm. */
    if (d->forced > 0 && !a->inter) {
        const pnbc_algorithm_t *alg = &d->algorithms[d->forced - 1];
        if (usable(alg, a)) {
            return alg;
        }
        if (mca_coll_pnbc_component.verbose >= 1) {
            opal_output(0, "coll:pnbc: %s_init: algorithm %s cannot serve this call; "
                        "choosing automatically", d->name, alg->name);
        }
    }
    for (const pnbc_algorithm_t *alg = table; NULL != alg->name; ++alg) {
        if (usable(alg, a)) {
            return alg;
        }
    }
    return &table[0];
}

/* Register coll_pnbc_<coll>_algorithm for every collective, as an enum
 * whose values are "auto" and the table's algorithm names. */
void mca_coll_pnbc_select_register(void)
{
    for (int c = 0; c < PNBC_NCOLLS; ++c) {
        pnbc_coll_desc_t *d = &coll_table[c];
        if (!mca_coll_pnbc_implemented((pnbc_coll_t) c, false)) {
            continue;
        }
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
