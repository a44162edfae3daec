/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Knobs (plugin ABI 2.2): every knob of every implementation this tree
 * builds gives byte-identical outputs at its extreme values, on every op it
 * names, on random and odd shapes (emp-ot's test_tuning_invariance, for the
 * whole engine); the IMPL:KNOB=VALUE names that carry values are checked,
 * with errors that list what is declared; listings and routes show them.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/internal.h"
#include "mpcengine.h"
#include "tests/testutil.h"

/* An engine of every backend built here, 3 threads, and every call split
 * as finely as the front ends allow: a full-domain evaluation then reaches
 * the plugins as evalall_range slices, which carry the knob values too. */
static mpce_engine *engine_split(void)
{
    static mpce_engine *e;
    if (e)
        return e;
    if (tu_engine_conf("[engine]\nallow_variable_time = yes\nthreads = 3\n", &e) != MPCE_OK) {
        fprintf(stderr, "engine: %s\n", mpce_last_error());
        abort();
    }
    e->slice_min_shift = 64;
    return e;
}

/* ---- one op, run on fixed odd shapes ------------------------------------------- */

struct outbuf {
    uint8_t *p;
    size_t len, cap;
};

static uint8_t *room(struct outbuf *o, size_t len)
{
    if (o->len + len > o->cap) {
        size_t cap = (o->len + len) * 2;
        uint8_t *grown = realloc(o->p, cap);
        CU_ASSERT_FATAL(grown != NULL);
        o->p = grown;
        o->cap = cap;
    }
    uint8_t *at = o->p + o->len;
    o->len += len;
    return at;
}

/* Shapes: lengths 1, 3 and past the largest batch and chunk a knob takes
 * (and not a multiple of any), buffers one byte off alignment. */
static const size_t k_lengths[] = {1, 3, 301, 2053};

static int run_prg(mpce_engine *e, const char *spec, const char *op, struct outbuf *o)
{
    uint8_t keys[3 * 16];
    tu_splitmix_bytes(11, keys, sizeof(keys));
    mpce_prg *ctx;
    CU_ASSERT_FATAL(mpce_prg_new(e, keys, 3, &ctx) == MPCE_OK);
    int ok = 1;
    for (size_t i = 0; i < sizeof(k_lengths) / sizeof(k_lengths[0]) && ok; i++) {
        size_t n = k_lengths[i];
        uint8_t *in = tu_alloc_misaligned(16 * n, 1);
        tu_splitmix_bytes(n, in, 16 * n);
        mpce_status st;
        if (strcmp(op, "prg.ecb") == 0) {
            st = mpce_prg_ecb(ctx, spec, 1, in, room(o, 16 * n), n);
        } else if (strcmp(op, "prg.ctr") == 0) {
            st = mpce_prg_ctr(ctx, spec, 2, UINT64_MAX - 1, room(o, 16 * n), n);
        } else {
            st = mpce_prg_mmo(ctx, spec, in, room(o, 3 * 16 * n), n);
        }
        if (st != MPCE_OK) {
            fprintf(stderr, "  %s %s n=%zu: %s\n", spec, op, n, mpce_last_error());
            ok = 0;
        }
        tu_free_misaligned(in);
    }
    mpce_prg_free(ctx);
    return ok;
}

static int run_lpn(mpce_engine *e, const char *spec, struct outbuf *o)
{
    static const unsigned logks[] = {5, 12};
    uint8_t seed[16];
    tu_splitmix_bytes(12, seed, sizeof(seed));
    int ok = 1;
    for (size_t k = 0; k < 2 && ok; k++) {
        const size_t blocks = (size_t)1 << logks[k];
        uint8_t *table = malloc(16 * blocks);
        CU_ASSERT_FATAL(table != NULL);
        tu_splitmix_bytes(logks[k], table, 16 * blocks);
        mpce_lpn *ctx;
        CU_ASSERT_FATAL(mpce_lpn_new(e, seed, logks[k], &ctx) == MPCE_OK);
        for (size_t i = 0; i < sizeof(k_lengths) / sizeof(k_lengths[0]) && ok; i++) {
            size_t n = k_lengths[i];
            uint8_t *out = tu_alloc_misaligned(16 * n, 1);
            tu_splitmix_bytes(100 + n, out, 16 * n); /* fold XORs into it */
            mpce_status st = mpce_lpn_fold(ctx, spec, 7 + n, table, blocks, out, n, NULL);
            if (st != MPCE_OK) {
                fprintf(stderr, "  %s lpn.fold n=%zu: %s\n", spec, n, mpce_last_error());
                ok = 0;
            }
            memcpy(room(o, 16 * n), out, 16 * n);
            tu_free_misaligned(out);
        }
        mpce_lpn_free(ctx);
        free(table);
    }
    return ok;
}

/* Domains below, at and above every tile a knob takes (2^10 .. 2^13
 * leaves), in both groups. */
static int run_dpf(mpce_engine *e, const char *spec, const char *op, struct outbuf *o)
{
    static const unsigned bits[] = {9, 15, 17};
    int ok = 1;
    for (size_t b = 0; b < 3 && ok; b++)
        for (int g = 0; g < 2 && ok; g++) {
            const mpce_dpf_group group = g ? MPCE_DPF_U64 : MPCE_DPF_BYTES;
            const size_t osz = mpce_dpf_output_size(group);
            mpce_dpf *ctx;
            CU_ASSERT_FATAL(mpce_dpf_new(e, bits[b], group, NULL, NULL, &ctx) == MPCE_OK);
            uint8_t beta[16] = {0}, s0[16], s1[16];
            tu_splitmix_bytes(20 + b, s0, 16);
            tu_splitmix_bytes(30 + b, s1, 16);
            tu_splitmix_bytes(40 + b, beta, 8);
            mpce_dpf_key *k0, *k1;
            const uint64_t alpha = (UINT64_C(0x5a5a5a5a) >> 1) & ((UINT64_C(1) << bits[b]) - 1);
            /* Keys from soft's gen: gen has no knobs, and one key set keeps
             * every implementation's outputs comparable. */
            CU_ASSERT_FATAL(mpce_dpf_gen(ctx, "dpf-soft", alpha, beta, s0, s1, &k0, &k1) ==
                            MPCE_OK);
            mpce_status st = MPCE_OK;
            if (strcmp(op, "dpf.evalall") == 0 || strcmp(op, "dpf.evalall_range") == 0) {
                const size_t len = osz << bits[b];
                uint8_t *out = tu_alloc_misaligned(len, 1);
                st = mpce_dpf_evalall(ctx, spec, k1, out, len);
                memcpy(room(o, len), out, len);
                tu_free_misaligned(out);
            }
            for (size_t i = 0; i < sizeof(k_lengths) / sizeof(k_lengths[0]) && st == MPCE_OK &&
                               (strcmp(op, "dpf.eval") == 0 || strcmp(op, "dpf.eval_keys") == 0);
                 i++) {
                size_t n = k_lengths[i];
                uint64_t *points = malloc(8 * n);
                const mpce_dpf_key **keys = malloc(sizeof(*keys) * n);
                CU_ASSERT_FATAL(points && keys);
                uint64_t state = n;
                for (size_t j = 0; j < n; j++) {
                    points[j] = j % 7 == 0 ? alpha
                                           : tu_splitmix64(&state) & ((UINT64_C(1) << bits[b]) - 1);
                    keys[j] = j % 2 ? k0 : k1;
                }
                uint8_t *out = tu_alloc_misaligned(osz * n, 1);
                st = strcmp(op, "dpf.eval") == 0
                         ? mpce_dpf_eval(ctx, spec, k0, points, n, out)
                         : mpce_dpf_eval_keys(ctx, spec, keys, points, n, out);
                memcpy(room(o, osz * n), out, osz * n);
                tu_free_misaligned(out);
                free(points);
                free(keys);
            }
            if (st != MPCE_OK) {
                fprintf(stderr, "  %s %s bits=%u: %s\n", spec, op, bits[b], mpce_last_error());
                ok = 0;
            }
            mpce_dpf_key_free(k0);
            mpce_dpf_key_free(k1);
            mpce_dpf_free(ctx);
        }
    return ok;
}

/* 1 and the outputs of op through spec, or 0 (reported) for an op this
 * suite has no runner for: a new knob on such an op must come with one. */
static int run_op(mpce_engine *e, const char *spec, const char *op, struct outbuf *o)
{
    o->len = 0;
    if (strncmp(op, "prg.", 4) == 0)
        return run_prg(e, spec, op, o);
    if (strcmp(op, "lpn.fold") == 0)
        return run_lpn(e, spec, o);
    if (strncmp(op, "dpf.", 4) == 0 && strcmp(op, "dpf.gen") != 0)
        return run_dpf(e, spec, op, o);
    fprintf(stderr, "  no runner for %s (a knob of %s names it): add one\n", op, spec);
    CU_FAIL("a knob names an op this suite cannot run");
    return 0;
}

/* ---- the invariance ------------------------------------------------------------- */

/* The soft implementation of a primitive: the reference. */
static const char *reference_of(mpce_primitive prim)
{
    static const char *const ref[] = {"prg-soft-bitslice", "ntt-soft", "lpn-soft", "dpf-soft"};
    return prim < MPCE_PRIM_COUNT ? ref[prim] : NULL;
}

static void test_every_knob_extremes_same_bytes(void)
{
    mpce_engine *e = engine_split();
    struct outbuf want = {0}, ref = {0}, got = {0};
    size_t checked = 0, knobs = 0;
    for (size_t i = 0; i < e->n_slots; i++) {
        const struct mpce_slot *s = e->slots[i];
        if (s->n_knobs == 0 || mpce_slot_state(s) == MPCE_ST_SKIPPED)
            continue;
        for (unsigned k = 0; k < s->n_knobs; k++) {
            const struct mpce_knob *kn = s->knobs[k];
            knobs++;
            for (unsigned op = 0; op < MPCE_OP_COUNT; op++) {
                if (!((s->knob_ops[k] >> op) & 1u))
                    continue;
                const char *opname = mpce_op_info[op].name;
                if (!run_op(e, s->impl->name, opname, &want))
                    continue;
                /* The defaults against the reference, once per op. */
                CU_ASSERT_FATAL(run_op(e, reference_of(s->prim), opname, &ref));
                CU_ASSERT(ref.len == want.len && memcmp(ref.p, want.p, ref.len) == 0);
                const uint32_t extremes[2] = {kn->values[0], kn->values[kn->n_values - 1]};
                for (int x = 0; x < 2; x++) {
                    char spec[160];
                    snprintf(spec, sizeof(spec), "%s:%s=%u", s->impl->name, kn->name,
                             (unsigned)extremes[x]);
                    CU_ASSERT_FATAL(run_op(e, spec, opname, &got));
                    int same = got.len == want.len && memcmp(got.p, want.p, got.len) == 0;
                    if (!same)
                        fprintf(stderr, "  %s: %s differs from the defaults\n", spec, opname);
                    CU_ASSERT(same);
                    checked++;
                }
            }
        }
    }
    printf("\n  %zu knobs, %zu (knob, op, extreme) checks", knobs, checked);
    /* soft alone declares lpn chunk and prefetch, dpf tile, batch and
     * key_prefetch: a suite that checked fewer tested nothing it should. */
    CU_ASSERT(knobs >= 5);
    CU_ASSERT(checked >= 2 * 7);
    free(want.p);
    free(ref.p);
    free(got.p);
}

/* Every knob value at once, the other extreme of each: the knobs of one
 * implementation are tuned jointly, so they must be invariant together. */
static void test_all_knobs_together_same_bytes(void)
{
    mpce_engine *e = engine_split();
    struct outbuf want = {0}, got = {0};
    size_t checked = 0;
    for (size_t i = 0; i < e->n_slots; i++) {
        const struct mpce_slot *s = e->slots[i];
        if (s->n_knobs == 0 || mpce_slot_state(s) == MPCE_ST_SKIPPED)
            continue;
        for (int x = 0; x < 2; x++) {
            char spec[200];
            size_t used = (size_t)snprintf(spec, sizeof(spec), "%s", s->impl->name);
            uint32_t ops = 0;
            for (unsigned k = 0; k < s->n_knobs; k++) {
                const struct mpce_knob *kn = s->knobs[k];
                used += (size_t)snprintf(spec + used, sizeof(spec) - used, ":%s=%u", kn->name,
                                         (unsigned)(x ? kn->values[kn->n_values - 1]
                                                      : kn->values[0]));
                ops |= s->knob_ops[k];
            }
            for (unsigned op = 0; op < MPCE_OP_COUNT; op++) {
                if (!((ops >> op) & 1u))
                    continue;
                const char *opname = mpce_op_info[op].name;
                if (!run_op(e, s->impl->name, opname, &want))
                    continue;
                CU_ASSERT_FATAL(run_op(e, spec, opname, &got));
                CU_ASSERT(got.len == want.len && memcmp(got.p, want.p, got.len) == 0);
                checked++;
            }
        }
    }
    CU_ASSERT(checked >= 2 * 4);
    free(want.p);
    free(got.p);
}

/* ---- names with values ---------------------------------------------------------- */

static void test_spec_errors(void)
{
    mpce_engine *e = tu_engine(0);
    uint8_t seed[16] = {1}, table[16 * 32] = {0}, out[16 * 4];
    mpce_lpn *ctx;
    CU_ASSERT_FATAL(mpce_lpn_new(e, seed, 5, &ctx) == MPCE_OK);
    CU_ASSERT_EQUAL(mpce_lpn_fold(ctx, "lpn-soft:chunk=64:prefetch=0", 0, table, 32, out, 4,
                                  NULL), MPCE_OK);
    TU_ASSERT_ERROR(mpce_lpn_fold(ctx, "lpn-soft:nosuch=1", 0, table, 32, out, 4, NULL),
                    MPCE_ERR_ARG,
                    "lpn-soft has no knob 'nosuch': its knobs are chunk (64 128 [256] 512), "
                    "prefetch ([0] 2 4 8 16)");
    TU_ASSERT_ERROR(mpce_lpn_fold(ctx, "lpn-soft:chunk=100", 0, table, 32, out, 4, NULL),
                    MPCE_ERR_ARG, "lpn-soft: knob chunk takes no value 100");
    TU_ASSERT_ERROR(mpce_lpn_fold(ctx, "lpn-soft:chunk", 0, table, 32, out, 4, NULL),
                    MPCE_ERR_ARG, "'chunk' is not a knob list: write KNOB=VALUE[:KNOB=VALUE...]");
    TU_ASSERT_ERROR(mpce_lpn_fold(ctx, "lpn-soft:chunk=64:chunk=512", 0, table, 32, out, 4, NULL),
                    MPCE_ERR_ARG, "lpn-soft: knob chunk is named twice");
    TU_ASSERT_ERROR(mpce_lpn_fold(ctx, "lpn-soft:", 0, table, 32, out, 4, NULL), MPCE_ERR_ARG,
                    "ends in ':' with no knob after it");
    TU_ASSERT_ERROR(mpce_lpn_fold(ctx, "lpn-soft:chunk=64,prefetch=0", 0, table, 32, out, 4,
                                  NULL), MPCE_ERR_ARG, "is not a knob list");
    TU_ASSERT_ERROR(mpce_lpn_fold(ctx, "lpn-nosuch:chunk=64", 0, table, 32, out, 4, NULL),
                    MPCE_ERR_NOIMPL, "unknown implementation 'lpn-nosuch' for lpn");
    mpce_lpn_free(ctx);

    uint8_t key[16] = {2}, in[16] = {0}, blk[16];
    mpce_prg *prg;
    CU_ASSERT_FATAL(mpce_prg_new(e, key, 1, &prg) == MPCE_OK);
    TU_ASSERT_ERROR(mpce_prg_ecb(prg, "prg-soft-bitslice:batch=1", 0, in, blk, 1), MPCE_ERR_ARG,
                    "prg-soft-bitslice declares no knobs");
    mpce_prg_free(prg);
}

/* A [pins] entry may carry values; its route shows them; a wrong value is
 * an error at first use that names the pin. */
static void test_pin_with_knobs(void)
{
    char *conf = tu_write_temp("[engine]\nallow_variable_time = no\n"
                               "[pins]\nlpn.fold = lpn-soft:chunk=64\n"
                               "dpf.evalall = dpf-soft:tile=13:chunk=1\n");
    mpce_options opts = {.struct_size = sizeof(opts),
                         .config_path = conf,
                         .flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_ENV |
                                  MPCE_OPT_NO_SYSTEM_CONFIG | MPCE_OPT_NO_PLUGINS};
    mpce_engine *e;
    CU_ASSERT_FATAL(mpce_engine_new(&opts, &e) == MPCE_OK);
    const mpce_route_info *rows;
    size_t n, seen = 0, bad = 0;
    (void)mpce_error(MPCE_OK, "%s", "before");
    CU_ASSERT_FATAL(mpce_routes(e, &rows, &n) == MPCE_OK);
    CU_ASSERT_STRING_EQUAL(mpce_last_error(), "before"); /* a listing leaves it alone */
    for (size_t i = 0; i < n; i++) {
        if (strcmp(rows[i].op, "lpn.fold") == 0) {
            CU_ASSERT_STRING_EQUAL(rows[i].impl, "lpn-soft");
            CU_ASSERT_STRING_EQUAL(rows[i].knobs, "chunk=64:prefetch=0");
            seen++;
        } else if (strcmp(rows[i].op, "dpf.evalall") == 0) {
            /* The unusable pin says why where `mpcengine config` shows it. */
            CU_ASSERT_STRING_EQUAL(rows[i].impl, "");
            CU_ASSERT(strstr(rows[i].source, "[pins] dpf.evalall = dpf-soft:tile=13:chunk=1") &&
                      strstr(rows[i].source, ": unusable: dpf-soft has no knob 'chunk'"));
            bad++;
        } else {
            CU_ASSERT_STRING_EQUAL(rows[i].knobs, "");
        }
    }
    CU_ASSERT(seen == 2 * MPCE_SIZE_CLASSES); /* both variants */
    CU_ASSERT(bad == MPCE_SIZE_CLASSES);
    uint8_t seed[16] = {1}, table[16 * 32] = {0}, out[16 * 4] = {0};
    mpce_lpn *lpn;
    CU_ASSERT_FATAL(mpce_lpn_new(e, seed, 5, &lpn) == MPCE_OK);
    CU_ASSERT_EQUAL(mpce_lpn_fold(lpn, NULL, 0, table, 32, out, 4, NULL), MPCE_OK);
    mpce_lpn_free(lpn);
    mpce_dpf *dpf;
    CU_ASSERT_FATAL(mpce_dpf_new(e, 8, MPCE_DPF_BYTES, NULL, NULL, &dpf) == MPCE_OK);
    mpce_dpf_key *k0, *k1;
    uint8_t beta[16] = {3};
    CU_ASSERT_FATAL(mpce_dpf_gen(dpf, NULL, 5, beta, NULL, NULL, &k0, &k1) == MPCE_OK);
    uint8_t full[16 * 256];
    TU_ASSERT_ERROR(mpce_dpf_evalall(dpf, NULL, k0, full, sizeof(full)), MPCE_ERR_ARG,
                    "[pins] dpf.evalall = dpf-soft:tile=13:chunk=1");
    CU_ASSERT(tu_error_mentions("dpf-soft has no knob 'chunk'"));
    mpce_dpf_key_free(k0);
    mpce_dpf_key_free(k1);
    mpce_dpf_free(dpf);
    mpce_engine_free(e);

    /* A value that is not a name with knobs is a configuration error. */
    tu_write_text(conf, "[pins]\nlpn.fold = lpn-soft:chunk\n", 0644);
    TU_ASSERT_ERROR(mpce_engine_new(&opts, &e), MPCE_ERR_CONFIG,
                    "optional knob values (IMPL:KNOB=VALUE[:KNOB=VALUE...])");
    unlink(conf);
    free(conf);
}

/* ---- the values reach the skeleton --------------------------------------------- */

/* The largest "WHAT N" the recording module logged, and how many lines. */
static size_t largest(const char *path, const char *what, size_t *lines)
{
    FILE *f = fopen(path, "r");
    char w[16];
    size_t n, max = 0;
    *lines = 0;
    while (f != NULL && fscanf(f, "%15s %zu", w, &n) == 2)
        if (strcmp(w, what) == 0) {
            (*lines)++;
            max = n > max ? n : max;
        }
    if (f != NULL)
        fclose(f);
    unlink(path);
    return max;
}

/*
 * Through every path "auto" takes (a [pins] route, on 3 threads with every
 * call split into slices, evalall into evalall_range), the skeleton gets
 * the pinned values: chunk=64 keeps every ctr call of the fold to at most
 * 10 * 64 / 4 + 1 blocks, tile=10 every mmo call of a full-domain
 * evaluation to 2^9 parents; named values and the defaults go further (a
 * call of 8191 outputs makes slices of about 680, more than a 512 chunk).
 */
static void test_values_reach_the_skeleton(void)
{
    char *conf = tu_write_temp("[engine]\nthreads = 3\n[pins]\nlpn.fold = lpn-skelrec:chunk=64\n"
                               "dpf.evalall = dpf-skelrec:tile=10\n");
    mpce_options opts = {.struct_size = sizeof(opts),
                         .config_path = conf,
                         .plugin_path = SKEL_DIR,
                         .flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_ENV |
                                  MPCE_OPT_NO_SYSTEM_CONFIG};
    mpce_engine *e;
    CU_ASSERT_FATAL(mpce_engine_new(&opts, &e) == MPCE_OK);
    unlink(conf);
    free(conf);
    e->slice_min_shift = 64;
    /* The self-tests first: their calls are not the ones looked at. */
    CU_ASSERT_FATAL(mpce_selftest(e, "lpn-skelrec", NULL, NULL) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_selftest(e, "dpf-skelrec", NULL, NULL) == MPCE_OK);
    char *dir = tu_temp_dir();
    char path[4200];
    snprintf(path, sizeof(path), "%s/record", dir);
    CU_ASSERT_FATAL(setenv("SKEL_RECORD", path, 1) == 0);
    size_t lines;

    uint8_t seed[16] = {4};
    static uint8_t table[16 << 12], out[16 * 8191];
    mpce_lpn *lpn;
    CU_ASSERT_FATAL(mpce_lpn_new(e, seed, 12, &lpn) == MPCE_OK);
    for (int call = 0; call < 3; call++)
        CU_ASSERT(mpce_lpn_fold(lpn, NULL, 0, table, 1u << 12, out, 8191, NULL) == MPCE_OK);
    CU_ASSERT(largest(path, "ctr", &lines) <= 161);
    CU_ASSERT(lines >= 3 * 128); /* 3 calls of 8191 outputs in chunks of 64 */
    CU_ASSERT(mpce_lpn_fold(lpn, "lpn-skelrec:chunk=512", 0, table, 1u << 12, out, 8191,
                            NULL) == MPCE_OK);
    CU_ASSERT(largest(path, "ctr", &lines) > 641);
    CU_ASSERT(mpce_lpn_fold(lpn, "lpn-skelrec", 0, table, 1u << 12, out, 8191, NULL) ==
              MPCE_OK);
    size_t def = largest(path, "ctr", &lines);
    CU_ASSERT(def > 161 && def <= 641);
    mpce_lpn_free(lpn);

    mpce_dpf *dpf;
    CU_ASSERT_FATAL(mpce_dpf_new(e, 15, MPCE_DPF_U64, NULL, NULL, &dpf) == MPCE_OK);
    mpce_dpf_key *k0, *k1;
    uint8_t beta[16] = {7};
    CU_ASSERT_FATAL(mpce_dpf_gen(dpf, "dpf-skelrec", 99, beta, NULL, NULL, &k0, &k1) == MPCE_OK);
    static uint8_t full[8u << 15];
    unlink(path);
    for (int call = 0; call < 2; call++)
        CU_ASSERT(mpce_dpf_evalall(dpf, NULL, k0, full, sizeof(full)) == MPCE_OK);
    CU_ASSERT(largest(path, "mmo", &lines) == 512);
    CU_ASSERT(lines > 0);
    CU_ASSERT(mpce_dpf_evalall(dpf, "dpf-skelrec:tile=13", k0, full, sizeof(full)) == MPCE_OK);
    CU_ASSERT(largest(path, "mmo", &lines) == 4096);
    mpce_dpf_key_free(k0);
    mpce_dpf_key_free(k1);
    mpce_dpf_free(dpf);
    unsetenv("SKEL_RECORD");
    tu_remove_dir(dir);
    mpce_engine_free(e);
}

/* The listing shows each implementation's knobs, defaults in brackets. */
static void test_listing_shows_knobs(void)
{
    mpce_engine *e = tu_engine(0);
    const mpce_impl_info *rows;
    size_t n, seen = 0;
    CU_ASSERT_FATAL(mpce_list(e, 0, &rows, &n) == MPCE_OK);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(rows[i].impl, "lpn-soft") == 0) {
            CU_ASSERT_STRING_EQUAL(rows[i].knobs, "chunk (64 128 [256] 512), prefetch ([0] 2 4 "
                                                  "8 16)");
            seen++;
        } else if (strcmp(rows[i].impl, "dpf-soft") == 0) {
            CU_ASSERT_STRING_EQUAL(rows[i].knobs, "tile (10 11 [12] 13), batch (32 64 128 "
                                                  "[256]), key_prefetch (0 2 [4] 8) "
                                                  "informational");
            seen++;
        } else if (strcmp(rows[i].impl, "prg-soft-bitslice") == 0) {
            CU_ASSERT_STRING_EQUAL(rows[i].knobs, "");
            seen++;
        }
    }
    CU_ASSERT_EQUAL(seen, 3);
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"every knob's extreme values give the defaults' bytes, on every op it names",
         test_every_knob_extremes_same_bytes},
        {"all of an implementation's knobs at once give the same bytes",
         test_all_knobs_together_same_bytes},
        {"IMPL:KNOB=VALUE names: errors list what is declared", test_spec_errors},
        {"a [pins] entry carries knob values; a bad one names the pin", test_pin_with_knobs},
        {"the values reach the skeleton on every call, split or not",
         test_values_reach_the_skeleton},
        {"the listing shows knobs and their defaults", test_listing_shows_knobs},
        {NULL, NULL},
    };
    return tu_main("knobs", tests);
}
