/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the selector measures: for every routed operation the harness can
 * time, per variant and size class, one production-like shape inside the
 * class (Ferret's LPN table, FHE's N and batch, a DPF's domain
 * and key count). Effort picks the classes and how long each is timed.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench/bench.h"
#include "tools/probe/probe.h"

enum { QUICK = 1, MEASURE = 2, PATIENT = 4, ALL = 7, NOT_QUICK = 6 };

static const struct plan_entry {
    const char *op;
    const char *variant;      /* "" for none */
    const char *size_class;
    unsigned efforts;
    const char *shape;
} plan[] = {
    {"prg.ecb", "", "tiny", PATIENT, "n=16"},
    {"prg.ecb", "", "small", ALL, "n=1024"},
    {"prg.ecb", "", "medium", ALL, "n=32768"},
    {"prg.ecb", "", "large", ALL, "n=262144"},
    {"prg.ctr", "", "tiny", PATIENT, "n=16"},
    {"prg.ctr", "", "small", ALL, "n=1024"},
    {"prg.ctr", "", "medium", ALL, "n=32768"},
    {"prg.ctr", "", "large", ALL, "n=262144"},
    {"prg.mmo", "", "tiny", PATIENT, "m=2,n=16"},
    {"prg.mmo", "", "small", ALL, "m=2,n=512"},
    {"prg.mmo", "", "medium", ALL, "m=2,n=16384"},
    {"prg.mmo", "", "large", ALL, "m=2,n=131072"},
    /* NTT: the 50-bit modulus is in IFMA's range, the 61-bit one is not. */
    {"ntt.forward", "q50", "tiny", PATIENT, "N=32,B=1,q=50bit"},
    {"ntt.forward", "q50", "small", ALL, "N=1024,B=1,q=50bit"},
    {"ntt.forward", "q50", "medium", ALL, "N=4096,B=8,q=50bit"},
    {"ntt.forward", "q50", "large", ALL, "N=16384,B=16,q=50bit"},
    {"ntt.forward", "qwide", "tiny", PATIENT, "N=32,B=1,q=61bit"},
    {"ntt.forward", "qwide", "small", ALL, "N=1024,B=1,q=61bit"},
    {"ntt.forward", "qwide", "medium", ALL, "N=4096,B=8,q=61bit"},
    {"ntt.forward", "qwide", "large", ALL, "N=16384,B=16,q=61bit"},
    {"ntt.inverse", "q50", "tiny", PATIENT, "N=32,B=1,q=50bit"},
    {"ntt.inverse", "q50", "small", ALL, "N=1024,B=1,q=50bit"},
    {"ntt.inverse", "q50", "medium", ALL, "N=4096,B=8,q=50bit"},
    {"ntt.inverse", "q50", "large", ALL, "N=16384,B=16,q=50bit"},
    {"ntt.inverse", "qwide", "tiny", PATIENT, "N=32,B=1,q=61bit"},
    {"ntt.inverse", "qwide", "small", ALL, "N=1024,B=1,q=61bit"},
    {"ntt.inverse", "qwide", "medium", ALL, "N=4096,B=8,q=61bit"},
    {"ntt.inverse", "qwide", "large", ALL, "N=16384,B=16,q=61bit"},
    /* Products in the NTT domain: IFMA below 2^50 as for the transforms. */
    {"ntt.mul", "q50", "tiny", PATIENT, "N=32,B=1,q=50bit"},
    {"ntt.mul", "q50", "small", ALL, "N=1024,B=1,q=50bit"},
    {"ntt.mul", "q50", "medium", ALL, "N=4096,B=8,q=50bit"},
    {"ntt.mul", "q50", "large", ALL, "N=16384,B=16,q=50bit"},
    {"ntt.mul", "qwide", "tiny", PATIENT, "N=32,B=1,q=61bit"},
    {"ntt.mul", "qwide", "small", ALL, "N=1024,B=1,q=61bit"},
    {"ntt.mul", "qwide", "medium", ALL, "N=4096,B=8,q=61bit"},
    {"ntt.mul", "qwide", "large", ALL, "N=16384,B=16,q=61bit"},
    /* LPN: a table in L2 (2^16 blocks) and Ferret's 2^19-block table. */
    {"lpn.fold", "k16", "tiny", PATIENT, "logk=16,n=32"},
    {"lpn.fold", "k16", "small", ALL, "logk=16,n=1024"},
    {"lpn.fold", "k16", "medium", ALL, "logk=16,n=32768"},
    {"lpn.fold", "k16", "large", ALL, "logk=16,n=262144"},
    {"lpn.fold", "kbig", "tiny", PATIENT, "logk=19,n=32"},
    {"lpn.fold", "kbig", "small", ALL, "logk=19,n=1024"},
    {"lpn.fold", "kbig", "medium", ALL, "logk=19,n=32768"},
    {"lpn.fold", "kbig", "large", ALL, "logk=19,n=262144"},
    {"dpf.evalall", "", "tiny", PATIENT, "bits=5"},
    {"dpf.evalall", "", "small", ALL, "bits=10"},
    {"dpf.evalall", "", "medium", ALL, "bits=14"},
    {"dpf.evalall", "", "large", ALL, "bits=18"},
    {"dpf.eval_keys", "", "tiny", PATIENT, "bits=20,keys=16"},
    {"dpf.eval_keys", "", "small", ALL, "bits=20,keys=1024"},
    {"dpf.eval_keys", "", "medium", ALL, "bits=20,keys=16384"},
    {"dpf.eval_keys", "", "large", NOT_QUICK, "bits=20,keys=262144"},
};

#define N_PLAN (sizeof(plan) / sizeof(plan[0]))

static unsigned effort_bit(const char *effort)
{
    if (strcmp(effort, "quick") == 0)
        return QUICK;
    if (strcmp(effort, "measure") == 0)
        return MEASURE;
    if (strcmp(effort, "patient") == 0)
        return PATIENT;
    return 0;
}

static int fill(const struct plan_entry *p, struct probe_row *r)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->key, sizeof(r->key), "%s%s%s.%s", p->op, p->variant[0] ? "." : "", p->variant,
             p->size_class);
    snprintf(r->bench_op, sizeof(r->bench_op), "%s", p->op);
    snprintf(r->shape, sizeof(r->shape), "%s", p->shape);
    return mpce_row_parse(r->key, &r->op, &r->variant, &r->size_class);
}

int probe_plan(const char *effort, const char *primitive, struct probe_row **rows,
               size_t *count)
{
    unsigned bit = effort_bit(effort);
    if (!bit) {
        fprintf(stderr, "mpcengine-probe: --effort %s: use quick, measure or patient\n",
                effort);
        return -1;
    }
    if (primitive && strcmp(primitive, "prg") && strcmp(primitive, "ntt") &&
        strcmp(primitive, "lpn") && strcmp(primitive, "dpf")) {
        fprintf(stderr, "mpcengine-probe: --primitive %s: use prg, ntt, lpn or dpf\n",
                primitive);
        return -1;
    }
    struct probe_row *r = calloc(N_PLAN, sizeof(*r));
    if (!r) {
        fprintf(stderr, "mpcengine-probe: out of memory\n");
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i < N_PLAN; i++) {
        if (!(plan[i].efforts & bit))
            continue;
        if (primitive && strncmp(plan[i].op, primitive, 3) != 0)
            continue;
        if (fill(&plan[i], &r[n]) != 0) {
            fprintf(stderr, "mpcengine-probe: internal: plan row %s.%s does not parse\n",
                    plan[i].op, plan[i].size_class);
            free(r);
            return -1;
        }
        n++;
    }
    *rows = r;
    *count = n;
    return 0;
}

int probe_plan_find(const char *key, struct probe_row *out)
{
    for (size_t i = 0; i < N_PLAN; i++)
        if (fill(&plan[i], out) == 0 && strcmp(out->key, key) == 0)
            return 0;
    return -1;
}

void probe_timing(const char *effort, struct mpce_bench_timing *t)
{
    memset(t, 0, sizeof(*t));
    /* DESIGN.md's method: at least 5 interleaved rounds, the best of at
     * least 3 windows per round, the median over rounds. */
    switch (effort_bit(effort)) {
    case PATIENT:
        t->rounds = 11;
        t->windows = 5;
        t->window_s = 0.005;
        break;
    case MEASURE:
        t->rounds = 7;
        t->windows = 3;
        t->window_s = 0.002;
        break;
    default:
        t->rounds = 5;
        t->windows = 3;
        t->window_s = 0.0003;
        break;
    }
}

/* How many calls the census counted for key (0 when none). */
static unsigned long long calls_of(const struct mpce_census_entry *c, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(c[i].key, key) == 0)
            return c[i].calls;
    return 0;
}

int probe_plan_census(const char *dir, const char *primitive, struct probe_row **rows,
                      size_t *count, size_t *added)
{
    struct mpce_census_entry *c = NULL;
    size_t nc = 0;
    *added = 0;
    if (mpce_census_read(dir, &c, &nc) != 0 || nc == 0) {
        free(c);
        return 0;
    }
    /* Classes the application calls that the effort would skip. */
    for (size_t i = 0; i < nc; i++) {
        struct probe_row r;
        int have = 0;
        for (size_t k = 0; k < *count && !have; k++)
            have = strcmp((*rows)[k].key, c[i].key) == 0;
        if (have || c[i].calls == 0 || probe_plan_find(c[i].key, &r) != 0 ||
            (primitive && strncmp(r.key, primitive, 3) != 0))
            continue;
        struct probe_row *grown = realloc(*rows, (*count + 1) * sizeof(*grown));
        if (!grown)
            break;
        grown[(*count)++] = r;
        *rows = grown;
        (*added)++;
    }
    /* Most called first (a stable insertion sort: the plan's order otherwise). */
    for (size_t i = 1; i < *count; i++) {
        struct probe_row r = (*rows)[i];
        unsigned long long n = calls_of(c, nc, r.key);
        size_t j = i;
        while (j > 0 && calls_of(c, nc, (*rows)[j - 1].key) < n) {
            (*rows)[j] = (*rows)[j - 1];
            j--;
        }
        (*rows)[j] = r;
    }
    free(c);
    return 0;
}
