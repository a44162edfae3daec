/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `mpcengine-probe pipeline`: the knobs of two ops that share the cache in a
 * real protocol, scored together. In a Ferret extension (emp-ot's silent
 * OT) the full-domain expansion of a tree writes a buffer that the LPN fold
 * then XORs into, while reading its 8 MiB table: a DPF tile and an LPN
 * chunk that each win alone can lose together (emp-ot found exactly that of
 * its tree tile and LPN batch). So after each op's own knobs are measured,
 * the best few combinations of each (the supervisor passes them, ranked)
 * are timed as one pipeline: dpf.evalall at the large row's domain into X,
 * then lpn.fold of as many outputs into X over a production table (2^19
 * blocks), through the public API on one thread. Every pair's X is first
 * compared with the defaults' byte for byte. The pair the ops' own tunes
 * chose is kept unless another beats it by more than both spreads and 1 %
 * (probe_clears),
 * in this run and again with new buffers.
 *
 *   args: dpf.evalall.large=SPEC|SPEC|... lpn.fold.kbig.large=SPEC|SPEC|...
 *         each SPEC IMPL or IMPL:KNOB=VALUE:..., the chosen one first
 *   lines: enter KEY SPEC; pipeline DPF_PICK LPN_PICK VERDICT...
 *          (picks as knob lists, "-" for the defaults); done KEY (both)
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/runtime/knobs.h"
#include "spec/spec.h"
#include "tools/bench/bench.h"
#include "tools/probe/probe.h"

#define PIPE_DPF_KEY "dpf.evalall.large"
#define PIPE_LPN_KEY "lpn.fold.kbig.large"
#define PIPE_BITS 18u
#define PIPE_LOGK 19u
#define PIPE_MAX_SIDE 4

struct side {
    char specs[PIPE_MAX_SIDE][200];
    size_t n;
};

struct shared {
    mpce_engine *e;              /* private, one thread */
    mpce_dpf *dpf;
    mpce_lpn *lpn;
    mpce_dpf_key *key;
    uint8_t *table;
};

struct pipe_cand {
    const struct shared *sh;
    const char *dpf_spec, *lpn_spec;
    uint8_t *x;                  /* 2^PIPE_BITS blocks: the tree's output, the fold's */
};

static int say_step(const char *spec)
{
    printf("enter %s %s\n", strncmp(spec, "dpf", 3) == 0 ? PIPE_DPF_KEY : PIPE_LPN_KEY, spec);
    return fflush(stdout);
}

/* One pipeline: the tree, then the fold into its output. The enter lines
 * name the module each step calls, so a crash is blamed on the right one;
 * two short writes against milliseconds of work. */
static int run_pipe(void *arg)
{
    struct pipe_cand *c = arg;
    const size_t n = (size_t)1 << PIPE_BITS;
    say_step(c->dpf_spec);
    mpce_status st = mpce_dpf_evalall(c->sh->dpf, c->dpf_spec, c->sh->key, c->x, 16 * n);
    if (st != MPCE_OK)
        return (int)st;
    say_step(c->lpn_spec);
    return (int)mpce_lpn_fold(c->sh->lpn, c->lpn_spec, 0, c->sh->table, (size_t)1 << PIPE_LOGK,
                              c->x, n, NULL);
}

static void teardown_pipe(void *arg)
{
    struct pipe_cand *c = arg;
    free(c->x);
    free(c);
}

static int parse_side(const char *arg, const char *key, struct side *sd)
{
    size_t klen = strlen(key);
    if (strncmp(arg, key, klen) != 0 || arg[klen] != '=')
        return -1;
    const char *p = arg + klen + 1;
    sd->n = 0;
    while (*p && sd->n < PIPE_MAX_SIDE) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == 0 || len >= sizeof(sd->specs[0]))
            return -1;
        memcpy(sd->specs[sd->n], p, len);
        sd->specs[sd->n++][len] = '\0';
        if (!bar)
            break;
        p = bar + 1;
    }
    return sd->n ? 0 : -1;
}

/* spec with only the values that differ from the defaults ("-" if none). */
static void pick_of(mpce_engine *e, const char *spec, char *buf, size_t len)
{
    struct mpce_slot *s;
    uint32_t v[MPCE_KNOB_MAX];
    int has;
    buf[0] = '\0';
    if (mpce_registry_find_spec(e, spec, "", &s, v, &has) == MPCE_OK)
        mpce_knobs_format_changed(s, v, buf, len);
    if (!buf[0])
        snprintf(buf, len, "-");
}

static mpce_status shared_new(mpce_engine *base, const char *dpf_impl, struct shared *sh)
{
    memset(sh, 0, sizeof(*sh));
    uint8_t seed[16], beta[16] = {0x5a}, s0[16], s1[16];
    mpce_status st = mpce_bench_private_engine(base, 1, &sh->e);
    if (st == MPCE_OK)
        st = mpce_dpf_new(sh->e, PIPE_BITS, MPCE_DPF_BYTES, NULL, NULL, &sh->dpf);
    uint64_t state = 19;
    for (int i = 0; i < 16; i++) {
        seed[i] = (uint8_t)mpce_spec_splitmix64(&state);
        s0[i] = (uint8_t)mpce_spec_splitmix64(&state);
        s1[i] = (uint8_t)mpce_spec_splitmix64(&state);
    }
    s0[MPCE_SPEC_DPF_TBIT_BYTE] &= 0xfe;
    s1[MPCE_SPEC_DPF_TBIT_BYTE] &= 0xfe;
    mpce_dpf_key *other = NULL;
    if (st == MPCE_OK)
        st = mpce_dpf_gen(sh->dpf, dpf_impl, 12345, beta, s0, s1, &sh->key, &other);
    mpce_dpf_key_free(other);
    if (st == MPCE_OK)
        st = mpce_lpn_new(sh->e, seed, PIPE_LOGK, &sh->lpn);
    if (st == MPCE_OK && !(sh->table = malloc((size_t)16 << PIPE_LOGK)))
        st = mpce_error(MPCE_ERR_NOMEM, "out of memory for the LPN table");
    for (size_t i = 0; st == MPCE_OK && i < ((size_t)16 << PIPE_LOGK); i += 8) {
        uint64_t w = mpce_spec_splitmix64(&state);
        memcpy(sh->table + i, &w, 8);
    }
    return st;
}

static void shared_free(struct shared *sh)
{
    mpce_dpf_key_free(sh->key);
    mpce_dpf_free(sh->dpf);
    mpce_lpn_free(sh->lpn);
    free(sh->table);
    mpce_engine_free(sh->e);
}

/* The pairs, incumbent first, as bench candidates, each run once and its
 * output compared with the first pair's (every pair must give the same
 * bytes). 0, -1 (why: it failed) or -2 (why: a pair's bytes differ). */
static int make_pairs(const struct shared *sh, const struct side *d, const struct side *l,
                      struct mpce_bench_cand *c, size_t *n, char *why, size_t len)
{
    const size_t blocks = (size_t)1 << PIPE_BITS;
    uint8_t *want = NULL;
    *n = 0;
    for (size_t i = 0; i < d->n; i++)
        for (size_t j = 0; j < l->n; j++) {
            struct pipe_cand *pc = calloc(1, sizeof(*pc));
            struct mpce_bench_cand *bc = &c[*n];
            if (!pc || !(pc->x = malloc(16 * blocks))) {
                free(pc);
                snprintf(why, len, "out of memory");
                free(want);
                return -1;
            }
            pc->sh = sh;
            pc->dpf_spec = d->specs[i];
            pc->lpn_spec = l->specs[j];
            memset(pc->x, 0, 16 * blocks);
            memset(bc, 0, sizeof(*bc));
            bc->baseline = -1;
            snprintf(bc->name, sizeof(bc->name), "%.94s+%.94s", d->specs[i], l->specs[j]);
            bc->run = run_pipe;
            bc->teardown = teardown_pipe;
            bc->state = pc;
            (*n)++;
            mpce_bench_error_clear();
            if (run_pipe(pc) != 0) {
                snprintf(why, len, "%s: %s", bc->name, mpce_last_error());
                free(want);
                return -1;
            }
            if (want == NULL) {
                want = malloc(16 * blocks);
                if (!want) {
                    snprintf(why, len, "out of memory");
                    return -1;
                }
                memcpy(want, pc->x, 16 * blocks);
            } else if (memcmp(want, pc->x, 16 * blocks) != 0) {
                snprintf(why, len, "%s gives other bytes than %s: a knob changes an output",
                         bc->name, c[0].name);
                free(want);
                return -2;
            }
        }
    free(want);
    return 0;
}

static void free_pairs(struct mpce_bench_cand *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(c[i].samples);
        if (c[i].teardown)
            c[i].teardown(c[i].state);
    }
}

/* The noise between two pairs: the larger of their spreads. */
static double pair_noise(const struct mpce_bench_cand *a, const struct mpce_bench_cand *b)
{
    return probe_spread(a) > probe_spread(b) ? probe_spread(a) : probe_spread(b);
}

/* The best challenger of c[0] by the gate's rule, or 0. */
static size_t challenger(const struct mpce_bench_cand *c, size_t n, double *gain)
{
    size_t best = 0;
    *gain = 0;
    for (size_t i = 1; i < n; i++) {
        if (c[i].failed || c[0].failed)
            continue;
        double g = 1.0 - c[i].median / c[0].median;
        if (probe_clears(g, pair_noise(&c[0], &c[i])) && g > *gain) {
            best = i;
            *gain = g;
        }
    }
    return best;
}

static void pipeline(mpce_engine *e, const struct probe_opts *o, const struct side *d,
                     const struct side *l)
{
    struct shared sh;
    struct mpce_bench_cand c[PIPE_MAX_SIDE * PIPE_MAX_SIDE], c2[2];
    size_t n = 0, n2 = 0;
    char why[600] = "", dpick[160], lpick[160], verdict[900];
    memset(c2, 0, sizeof(c2));
    mpce_status st = shared_new(e, d->specs[0], &sh);
    int rc = st == MPCE_OK ? make_pairs(&sh, d, l, c, &n, why, sizeof(why)) : -1;
    if (st != MPCE_OK)
        snprintf(why, sizeof(why), "%s", mpce_last_error());
    pick_of(e, d->specs[0], dpick, sizeof(dpick));
    pick_of(e, l->specs[0], lpick, sizeof(lpick));
    /* rc -2: a pair's bytes differ. Which module's knob did it is not known
     * here, so neither is blamed, and the ops' own picks stay (each passed
     * its own check). */
    if (rc != 0) {
        snprintf(verdict, sizeof(verdict), "not measured: %s", why);
        goto say;
    }
    struct mpce_bench_timing t;
    probe_timing(o->effort, &t);
    if (mpce_bench_measure(c, n, &t) != MPCE_OK || c[0].failed) {
        snprintf(verdict, sizeof(verdict), "not measured: %s",
                 c[0].failed ? c[0].why : mpce_last_error());
        goto say;
    }
    double gain;
    size_t best = challenger(c, n, &gain);
    int used = snprintf(verdict, sizeof(verdict), "in the pipeline (dpf.evalall bits=%u feeding "
                        "lpn.fold logk=%u over its %u outputs, one thread), %zu pairs: ",
                        PIPE_BITS, PIPE_LOGK, 1u << PIPE_BITS, n);
    if (n == 1) {
        snprintf(verdict + used, sizeof(verdict) - (size_t)used, "nothing to compare: each "
                 "side has its pick alone");
        goto say;
    }
    if (best == 0) {
        size_t fast = 0;
        for (size_t i = 1; i < n; i++)
            if (!c[i].failed && (fast == 0 || c[i].median < c[fast].median))
                fast = i;
        if (fast == 0 || c[fast].median >= c[0].median)
            snprintf(verdict + used, sizeof(verdict) - (size_t)used, "the ops' own picks are "
                     "fastest");
        else
            snprintf(verdict + used, sizeof(verdict) - (size_t)used, "the ops' own picks "
                     "kept: the fastest other pair, %s, is %.1f %% faster, within the noise "
                     "(%.1f %%) or below 1 %%", c[fast].name,
                     100.0 * (1.0 - c[fast].median / c[0].median),
                     100.0 * pair_noise(&c[0], &c[fast]));
        goto say;
    }
    /* Again with new buffers: the incumbent and the challenger alone. */
    const size_t bi = best / l->n, bj = best % l->n;
    struct side inc_d = {.n = 1}, inc_l = {.n = 1}, ch_d = {.n = 1}, ch_l = {.n = 1};
    snprintf(inc_d.specs[0], sizeof(inc_d.specs[0]), "%s", d->specs[0]);
    snprintf(inc_l.specs[0], sizeof(inc_l.specs[0]), "%s", l->specs[0]);
    snprintf(ch_d.specs[0], sizeof(ch_d.specs[0]), "%s", d->specs[bi]);
    snprintf(ch_l.specs[0], sizeof(ch_l.specs[0]), "%s", l->specs[bj]);
    size_t k = 0;
    rc = make_pairs(&sh, &inc_d, &inc_l, &c2[0], &k, why, sizeof(why));
    n2 = k;
    if (rc == 0) {
        rc = make_pairs(&sh, &ch_d, &ch_l, &c2[1], &k, why, sizeof(why));
        n2 += k;
    }
    double gain2 = 0;
    if (rc != 0) {
        snprintf(verdict + used, sizeof(verdict) - (size_t)used, "%s was %.1f %% faster, but "
                 "could not be run again: %s; the ops' own picks kept", c[best].name,
                 100.0 * gain, why);
    } else if (mpce_bench_measure(c2, 2, &t) != MPCE_OK || challenger(c2, 2, &gain2) != 1) {
        snprintf(verdict + used, sizeof(verdict) - (size_t)used,
                 "%s was %.1f %% faster than the ops' own picks, but not again with new "
                 "buffers: their picks kept", c[best].name, 100.0 * gain);
    } else {
        pick_of(e, d->specs[bi], dpick, sizeof(dpick));
        pick_of(e, l->specs[bj], lpick, sizeof(lpick));
        snprintf(verdict + used, sizeof(verdict) - (size_t)used,
                 "%s is %.1f %% faster than the ops' own picks, and %.1f %% again with new "
                 "buffers: pinned on both rows", c[best].name, 100.0 * gain, 100.0 * gain2);
    }
say:
    printf("pipeline %s %s %s\n", dpick, lpick, verdict);
    free_pairs(c, n);
    free_pairs(c2, n2);
    shared_free(&sh);
}

int probe_pipeline(mpce_engine *e, const struct probe_opts *o)
{
    struct side d = {0}, l = {0};
    int have_d = 0, have_l = 0;
    for (size_t i = 0; i < o->n_rows; i++) {
        if (parse_side(o->rows[i], PIPE_DPF_KEY, &d) == 0)
            have_d = 1;
        else if (parse_side(o->rows[i], PIPE_LPN_KEY, &l) == 0)
            have_l = 1;
        else {
            fprintf(stderr, "mpcengine-probe pipeline: expected %s=SPEC|... or %s=SPEC|..., "
                    "got %s\n", PIPE_DPF_KEY, PIPE_LPN_KEY, o->rows[i]);
            return 2;
        }
    }
    if (have_d && have_l)
        pipeline(e, o, &d, &l);
    else
        printf("pipeline - - not measured: it needs both %s and %s\n", PIPE_DPF_KEY,
               PIPE_LPN_KEY);
    if (have_d)
        printf("done %s\n", PIPE_DPF_KEY);
    if (have_l)
        printf("done %s\n", PIPE_LPN_KEY);
    fflush(stdout);
    return 0;
}
