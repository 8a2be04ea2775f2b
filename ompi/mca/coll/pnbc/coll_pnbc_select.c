/*
 * Copyright (c) 2026 The pnbc developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Algorithm selection, made once at init and identically on every rank:
 * every input (communicator size, message size, op, hints, whether the
 * communicator spans nodes) is the same everywhere, so all ranks build
 * matching schedules without talking.
 *
 * In order, the first that names a usable algorithm wins:
 *   1. the request's MPI_Info hint "pnbc_algorithm"
 *   2. the MCA parameter coll_pnbc_<coll>_algorithm
 *   3. the decision rules: those of coll_pnbc_tuning_file for this
 *      collective if it has any (written by contrib/tuner), else the
 *      built-in ones below
 *   4. the first usable entry of the collective's algorithm table
 * A hint or override that cannot serve the call falls through, and says
 * so at coll_pnbc_verbose >= 1.
 */

#include "coll_pnbc_algorithms.h"

#include "ompi/info/info.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/util/output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pnbc_coll_desc_t {
    const char *name;
    const pnbc_algorithm_t *algorithms;         /* intracommunicators */
    const pnbc_algorithm_t *inter_algorithms;   /* intercommunicators */
    int forced;     /* MCA parameter: 0 = automatic, i = algorithms[i-1] */
    pnbc_large_msgs_t large;    /* see PNBC_COLLECTIVES */
    bool lockstep;              /* pace LOCKSTEP */
} pnbc_coll_desc_t;

static const pnbc_algorithm_t none[] = { { NULL, NULL, NULL } };

#define PNBC_INTER_TABLE_INTER(name) pnbc_inter_##name##_algorithms
#define PNBC_INTER_TABLE_INTRA(name) none
#define PNBC_PACE_AHEAD false
#define PNBC_PACE_LOCKSTEP true
#define PNBC_COLL_DESC(ID, name, groups, large, pace) \
    [PNBC_##ID] = { #name, pnbc_##name##_algorithms, PNBC_INTER_TABLE_##groups(name), 0, large, \
                    PNBC_PACE_##pace },
static pnbc_coll_desc_t coll_table[PNBC_NCOLLS] = { PNBC_COLLECTIVES(PNBC_COLL_DESC) };
#undef PNBC_COLL_DESC
#undef PNBC_PACE_AHEAD
#undef PNBC_PACE_LOCKSTEP
#undef PNBC_INTER_TABLE_INTER
#undef PNBC_INTER_TABLE_INTRA

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

pnbc_large_msgs_t mca_coll_pnbc_large_msgs(pnbc_coll_t coll)
{
    pnbc_large_msgs_t large = coll_table[coll].large;
    large.lockstep = coll_table[coll].lockstep;
    if (large.shared_copy) {
        if (pnbc_shm_shared_possible()) {
            large.box_max = large.shared_box_max;
            large.shm_max = SIZE_MAX;
            large.single_copy = true;
        } else {
            large.shared_copy = false;
        }
    }
    return large;
}

bool pnbc_usable_commutative(const pnbc_coll_args_t *a)
{
    return pnbc_op_commutative(a->op);
}

static bool usable(const pnbc_algorithm_t *alg, const pnbc_coll_args_t *a)
{
    return NULL == alg->usable || alg->usable(a);
}

static const pnbc_algorithm_t *find_algorithm(const pnbc_algorithm_t *table, const char *name)
{
    for (const pnbc_algorithm_t *alg = table; NULL != alg->name; ++alg) {
        if (0 == strcmp(alg->name, name)) {
            return alg;
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Decision rules                                                     */
/* ------------------------------------------------------------------ */

/* Which communicators a rule is for: any, those whose ranks are all on
 * one node, or those spanning nodes (pnbc_coll_args_t.multinode). */
typedef enum { PNBC_REACH_ANY, PNBC_REACH_NODE, PNBC_REACH_NODES } pnbc_reach_t;
static const char *const reach_names[] = { "any", "node", "nodes" };

/* A rule applies when the communicator has at most max_comm_size ranks,
 * the call moves at most max_bytes (see call_bytes; 0 = no bound for
 * either) and the communicator is within its reach.  Rules are tried in
 * order. */
typedef struct pnbc_rule_t {
    pnbc_coll_t coll;
    int max_comm_size;
    size_t max_bytes;
    const char *algorithm;
    pnbc_reach_t reach;
} pnbc_rule_t;

/* Built-in rules, from measurements on a 2-core node (np > 2 there is
 * oversubscribed; contrib/tuner writes rules for other machines; how
 * they were measured: docs/selection.md).  A rule naming an algorithm
 * that cannot serve the call (commutative op, even or power-of-two p)
 * falls through to the next.  On one node, large blocks go straight from
 * their owner to their destination (linear gather, scatter, allgather):
 * forwarding them through intermediate ranks only adds copies.
 *
 * Across nodes (the PNBC_REACH_NODES rules, measured between two hosts
 * joined by a network, docs/selection.md "Across nodes") a root that
 * sends to, or receives from, each rank of the other nodes in turn
 * (knomial, linear) is slowest: from 3 ranks on, small bcasts and reduces
 * take binomial trees, which cross between nodes once per level (ranks
 * are numbered node by node under the default mapping), and large bcasts
 * scatter then allgather.  Two ranks on two nodes exchange whole vectors
 * in an allreduce only up to 32 KiB: above, halves (rabenseifner), as
 * from 4 ranks on one node.  The other collectives, reduces above 64 KiB
 * (binomial, then pipeline) and bcasts of two ranks follow the one-node
 * rules. */
static const pnbc_rule_t builtin_rules[] = {
    { PNBC_BCAST, 2, 0, "knomial", PNBC_REACH_ANY },
    { PNBC_BCAST, 8, 16384, "binomial", PNBC_REACH_NODES },
    { PNBC_BCAST, 8, 0, "scatter_allgather", PNBC_REACH_NODES },
    { PNBC_REDUCE, 8, 65536, "binomial", PNBC_REACH_NODES },
    { PNBC_ALLREDUCE, 2, 32768, "recursive_doubling", PNBC_REACH_NODES },
    { PNBC_ALLREDUCE, 2, 0, "rabenseifner", PNBC_REACH_NODES },
    { PNBC_BCAST, 4, 131072, "knomial", PNBC_REACH_ANY },
    { PNBC_BCAST, 4, 0, "scatter_allgather", PNBC_REACH_ANY },
    { PNBC_BCAST, 0, 1048576, "knomial", PNBC_REACH_ANY },
    { PNBC_BCAST, 0, 0, "scatter_allgather", PNBC_REACH_ANY },
    { PNBC_REDUCE, 4, 65536, "linear", PNBC_REACH_ANY },
    { PNBC_REDUCE, 0, 524288, "binomial", PNBC_REACH_ANY },
    { PNBC_REDUCE, 8, 0, "pipeline", PNBC_REACH_ANY },
    { PNBC_REDUCE, 0, 0, "reduce_scatter_gather", PNBC_REACH_ANY },
    { PNBC_ALLREDUCE, 2, 1048576, "recursive_doubling", PNBC_REACH_ANY },
    { PNBC_ALLREDUCE, 2, 0, "rabenseifner", PNBC_REACH_ANY },
    { PNBC_ALLREDUCE, 0, 256, "recursive_doubling", PNBC_REACH_ANY },
    { PNBC_ALLREDUCE, 3, 65536, "reduce_bcast", PNBC_REACH_ANY },
    { PNBC_ALLREDUCE, 0, 8192, "recursive_doubling", PNBC_REACH_ANY },
    { PNBC_ALLREDUCE, 0, 16384, "reduce_bcast", PNBC_REACH_ANY },
    { PNBC_ALLREDUCE, 0, 0, "rabenseifner", PNBC_REACH_ANY },
    { PNBC_ALLREDUCE, 0, 0, "reduce_bcast", PNBC_REACH_ANY },
    { PNBC_GATHER, 8, 0, "linear", PNBC_REACH_ANY },
    { PNBC_GATHER, 0, 1024, "binomial", PNBC_REACH_ANY },
    { PNBC_GATHER, 0, 0, "linear", PNBC_REACH_ANY },
    { PNBC_SCATTER, 8, 0, "linear", PNBC_REACH_ANY },
    { PNBC_SCATTER, 0, 1024, "binomial", PNBC_REACH_ANY },
    { PNBC_SCATTER, 0, 0, "linear", PNBC_REACH_ANY },
    { PNBC_ALLGATHER, 2, 0, "neighbor_exchange", PNBC_REACH_ANY },
    { PNBC_ALLGATHER, 8, 4096, "neighbor_exchange", PNBC_REACH_ANY },
    { PNBC_ALLGATHER, 8, 0, "linear", PNBC_REACH_ANY },
    { PNBC_ALLGATHER, 0, 1024, "recursive_doubling", PNBC_REACH_ANY },
    { PNBC_ALLGATHER, 0, 1024, "bruck", PNBC_REACH_ANY },
    { PNBC_ALLGATHER, 16, 262144, "linear", PNBC_REACH_ANY },
    { PNBC_ALLGATHER, 0, 0, "neighbor_exchange", PNBC_REACH_ANY },
    { PNBC_ALLGATHER, 0, 0, "ring", PNBC_REACH_ANY },
    { PNBC_ALLTOALL, 16, 0, "linear", PNBC_REACH_ANY },
    { PNBC_ALLTOALL, 0, 256, "bruck", PNBC_REACH_ANY },
    { PNBC_ALLTOALL, 0, 0, "windowed_linear", PNBC_REACH_ANY },
    { PNBC_ALLTOALLV, 16, 0, "linear", PNBC_REACH_ANY },
    { PNBC_ALLTOALLV, 0, 0, "windowed_linear", PNBC_REACH_ANY },
    { PNBC_ALLTOALLW, 16, 0, "linear", PNBC_REACH_ANY },
    { PNBC_ALLTOALLW, 0, 0, "windowed_linear", PNBC_REACH_ANY },
};

static pnbc_rule_t *file_rules;     /* from coll_pnbc_tuning_file */
static size_t nfile_rules;
static bool file_loaded;
static char *tuning_file;

/* The size a rule compares: bytes of one rank's contribution, computed
 * only from arguments that are significant on every rank so that all
 * ranks agree (the whole vector for reductions and bcast, one block for
 * the block collectives; v/w variants have no common size: 0, so only
 * communicator-size bounds apply to them). */
static size_t type_bytes(size_t count, const ompi_datatype_t *dtype)
{
    return (NULL == dtype) ? 0 : count * dtype->super.size;
}

static size_t call_bytes(const pnbc_coll_args_t *a)
{
    const bool at_root = (a->rank == a->root);
    switch (a->coll) {
    case PNBC_BCAST: case PNBC_REDUCE: case PNBC_ALLREDUCE: case PNBC_SCAN:
    case PNBC_EXSCAN: case PNBC_REDUCE_SCATTER_BLOCK:
        return type_bytes(a->count, a->dtype);
    case PNBC_GATHER:
        return at_root ? type_bytes(a->rcount, a->rdtype) : type_bytes(a->scount, a->sdtype);
    case PNBC_SCATTER:
        return at_root ? type_bytes(a->scount, a->sdtype) : type_bytes(a->rcount, a->rdtype);
    case PNBC_ALLGATHER: case PNBC_ALLTOALL: case PNBC_NEIGHBOR_ALLGATHER:
    case PNBC_NEIGHBOR_ALLTOALL:
        return type_bytes(a->rcount, a->rdtype);
    default:
        return 0;
    }
}

static bool rule_applies(const pnbc_rule_t *r, const pnbc_coll_args_t *a)
{
    return r->coll == a->coll && (0 == r->max_comm_size || a->size <= r->max_comm_size) &&
           (0 == r->max_bytes || call_bytes(a) <= r->max_bytes) &&
           (PNBC_REACH_ANY == r->reach || (PNBC_REACH_NODES == r->reach) == a->multinode);
}

/* Parse "<coll> <max_comm_size> <max_bytes> <algorithm> [any|node|nodes]"
 * lines; '#' starts a comment.  A line naming an unknown collective or
 * reach is skipped. */
static void load_tuning_file(void)
{
    file_loaded = true;
    if (NULL == tuning_file || '\0' == tuning_file[0]) {
        return;
    }
    FILE *f = fopen(tuning_file, "r");
    if (NULL == f) {
        opal_output(0, "coll:pnbc: cannot read coll_pnbc_tuning_file %s; using built-in rules",
                    tuning_file);
        return;
    }
    char line[256], coll[64], alg[64], word[16];
    int max_p;
    size_t max_bytes;
    while (NULL != fgets(line, sizeof(line), f)) {
        const int n = ('#' == line[0]) ? 0 : sscanf(line, "%63s %d %zu %63s %15s", coll, &max_p,
                                                    &max_bytes, alg, word);
        int reach = PNBC_REACH_ANY;
        while (5 == n && reach <= PNBC_REACH_NODES && 0 != strcmp(word, reach_names[reach])) {
            reach++;
        }
        if (n < 4 || reach > PNBC_REACH_NODES) {
            continue;
        }
        for (int c = 0; c < PNBC_NCOLLS; ++c) {
            const pnbc_algorithm_t *known = find_algorithm(coll_table[c].algorithms, alg);
            if (0 != strcmp(coll, coll_table[c].name) || NULL == known) {
                continue;
            }
            pnbc_rule_t *grown = realloc(file_rules, (nfile_rules + 1) * sizeof(*grown));
            if (NULL != grown) {
                file_rules = grown;
                file_rules[nfile_rules++] = (pnbc_rule_t) { (pnbc_coll_t) c, max_p, max_bytes,
                                                            known->name, (pnbc_reach_t) reach };
            }
        }
    }
    fclose(f);
}

static bool file_has_rules_for(pnbc_coll_t coll)
{
    for (size_t i = 0; i < nfile_rules; ++i) {
        if (file_rules[i].coll == coll) {
            return true;
        }
    }
    return false;
}

static const pnbc_algorithm_t *by_rules(const pnbc_algorithm_t *table,
                                        const pnbc_coll_args_t *a)
{
    const pnbc_rule_t *rules = builtin_rules;
    size_t n = sizeof(builtin_rules) / sizeof(builtin_rules[0]);

    if (!file_loaded) {
        load_tuning_file();
    }
    if (file_has_rules_for(a->coll)) {
        rules = file_rules;
        n = nfile_rules;
    }
    for (size_t i = 0; i < n; ++i) {
        const pnbc_algorithm_t *alg = rule_applies(&rules[i], a)
                                          ? find_algorithm(table, rules[i].algorithm) : NULL;
        if (NULL != alg && usable(alg, a)) {
            return alg;
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* The choice                                                         */
/* ------------------------------------------------------------------ */

static void say_unusable(const pnbc_coll_desc_t *d, const char *source, const char *name)
{
    if (mca_common_pnbc_params.verbose >= 1) {
        opal_output(0, "coll:pnbc: %s_init: %s algorithm \"%s\" unknown or unusable for this "
                    "call; choosing automatically", d->name, source, name);
    }
}

/* The algorithm an MPI_Info hint asks for, if any and usable. */
static const pnbc_algorithm_t *by_hint(const pnbc_coll_desc_t *d,
                                       const pnbc_algorithm_t *table,
                                       const pnbc_coll_args_t *a, struct ompi_info_t *info)
{
    char value[64];
    int flag = 0;

    if (OMPI_SUCCESS != pnbc_info_get(info, "pnbc_algorithm", value, sizeof(value), &flag) ||
        !flag) {
        return NULL;
    }
    const pnbc_algorithm_t *alg = find_algorithm(table, value);
    if (NULL != alg && usable(alg, a)) {
        return alg;
    }
    say_unusable(d, "MPI_Info pnbc_algorithm", value);
    return NULL;
}

const pnbc_algorithm_t *mca_coll_pnbc_select(const pnbc_coll_args_t *a, struct ompi_info_t *info)
{
    const pnbc_coll_desc_t *d = &coll_table[a->coll];
    const pnbc_algorithm_t *table = algorithms_for(d, a->inter);
    const pnbc_algorithm_t *alg = by_hint(d, table, a, info);

    /* The MCA override names an intracommunicator algorithm. */
    if (NULL == alg && d->forced > 0 && !a->inter) {
        alg = &d->algorithms[d->forced - 1];
        if (!usable(alg, a)) {
            say_unusable(d, "MCA", alg->name);
            alg = NULL;
        }
    }
    if (NULL == alg && !a->inter) {
        alg = by_rules(table, a);
    }
    for (const pnbc_algorithm_t *cand = table; NULL == alg && NULL != cand->name; ++cand) {
        if (usable(cand, a)) {
            alg = cand;
        }
    }
    return (NULL != alg) ? alg : &table[0];
}

void mca_coll_pnbc_select_close(void)
{
    free(file_rules);
    file_rules = NULL;
    nfile_rules = 0;
    file_loaded = false;
}

/* Register coll_pnbc_<coll>_algorithm for every collective, as an enum
 * whose values are "auto" and the table's algorithm names. */
void mca_coll_pnbc_select_register(void)
{
    tuning_file = NULL;
    (void) mca_base_component_var_register(&mca_coll_pnbc_component.super.collm_version,
        "tuning_file",
        "Decision file written by contrib/tuner/pnbc-tune: lines \"<coll> <max_comm_size> "
        "<max_bytes> <algorithm> [any|node|nodes]\" (0 = unbounded; the last field: for "
        "every communicator (default), those on one node, those spanning nodes), first "
        "match wins; replaces the built-in rules of every collective it mentions",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_5,
        MCA_BASE_VAR_SCOPE_READONLY, &tuning_file);

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
