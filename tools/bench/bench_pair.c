/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A device implementation against a host one at one size: what the
 * selector's crossover search (tools/probe/crossover.c) and `mpcengine pins
 * --verify` (tools/pins_verify.c) time. A row's shape is scaled to a number
 * of work elements by its count (blocks, seeds, polynomials, outputs, keys,
 * or a DPF's domain bits); both implementations run through their op
 * tables, the asynchronous one end to end on host memory (bench_impl.c),
 * their outputs compared once, then timed interleaved.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench/bench.h"

void mpce_bench_class_span(unsigned size_class, uint64_t *lo, uint64_t *top)
{
    /* mpce_size_class (engine/internal.h): 64, 4096 and 262144 elements. */
    static const uint64_t low[] = {1, 64, 4096, 262144};
    const unsigned sc = size_class < 4 ? size_class : 3;
    *lo = low[sc];
    *top = sc < 3 ? low[sc + 1] / 2 : low[3] * 4;
}

/* The shape's count key and how many work elements one unit of it is. */
static const char *count_key(const struct mpce_bench_shape *s, uint64_t *per_unit)
{
    *per_unit = 1;
    if (strcmp(s->op, "prg.mmo") == 0) {
        *per_unit = s->m;
        return "n";
    }
    switch (s->prim) {
    case MPCE_PRIM_PRG:
        return "n";
    case MPCE_PRIM_NTT:
        *per_unit = s->N;
        return "B";
    case MPCE_PRIM_LPN:
        return "n";
    default:
        return strcmp(s->op, "dpf.evalall") == 0 ? "bits" : "keys";
    }
}

int mpce_bench_shape_at(const char *op, const char *text, uint64_t elements,
                        struct mpce_bench_shape *out)
{
    struct mpce_bench_shape s;
    if (mpce_bench_shape_parse(op, text, &s) != MPCE_OK || elements == 0)
        return -1;
    /* An LPN shape's chunk is the call: only the plan's (chunk = n) scales. */
    if (s.prim == MPCE_PRIM_LPN && s.chunk != s.n)
        return -1;
    uint64_t per = 1, value;
    const char *key = count_key(&s, &per);
    if (strcmp(key, "bits") == 0) {
        if (elements & (elements - 1))
            return -1;
        value = 0;
        while ((UINT64_C(1) << value) < elements)
            value++;
    } else {
        if (per == 0 || elements % per != 0)
            return -1;
        value = elements / per;
    }
    /* The text again with the count replaced: parsed, so range-checked. */
    char buf[128], scaled[128];
    snprintf(buf, sizeof(buf), "%s", text);
    size_t used = 0;
    int found = 0;
    scaled[0] = '\0';
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        size_t klen = eq ? (size_t)(eq - tok) : strlen(tok);
        int n;
        if (eq && klen == strlen(key) && strncmp(tok, key, klen) == 0) {
            n = snprintf(scaled + used, sizeof(scaled) - used, "%s%s=%" PRIu64,
                         used ? "," : "", key, value);
            found = 1;
        } else {
            n = snprintf(scaled + used, sizeof(scaled) - used, "%s%s", used ? "," : "", tok);
        }
        if (n < 0 || (size_t)n >= sizeof(scaled) - used)
            return -1;
        used += (size_t)n;
    }
    if (!found || mpce_bench_shape_parse(op, scaled, out) != MPCE_OK)
        return -1;
    return mpce_bench_work_elements(out) == elements ? 0 : -1;
}

void mpce_bench_row_op(const char *row_key, char *op, size_t len)
{
    snprintf(op, len, "%s", row_key);
    char *dot = strchr(op, '.');
    dot = dot ? strchr(dot + 1, '.') : NULL;
    if (dot)
        *dot = '\0';
}

uint64_t mpce_bench_count_unit(const char *op, const char *text)
{
    struct mpce_bench_shape s;
    if (mpce_bench_shape_parse(op, text, &s) != MPCE_OK)
        return 0;
    uint64_t per = 1;
    return strcmp(count_key(&s, &per), "bits") == 0 ? 0 : per;
}

int mpce_bench_count_text(const char *op, const char *text, uint64_t elements, char *buf,
                          size_t len)
{
    struct mpce_bench_shape s;
    if (mpce_bench_shape_at(op, text, elements, &s) != 0)
        return -1;
    uint64_t per = 1;
    const char *key = count_key(&s, &per);
    int n;
    if (strcmp(key, "bits") == 0)
        n = snprintf(buf, len, "bits=%llu (2^%llu outputs a key)", (unsigned long long)s.bits,
                     (unsigned long long)s.bits);
    else if (strcmp(key, "B") == 0)
        n = snprintf(buf, len, "B=%llu (polynomials of N=%llu)", (unsigned long long)s.B,
                     (unsigned long long)s.N);
    else if (strcmp(key, "keys") == 0)
        n = snprintf(buf, len, "keys=%llu (keys, a point each)", (unsigned long long)s.keys);
    else if (strcmp(s.op, "prg.mmo") == 0)
        n = snprintf(buf, len, "n=%llu (seeds, m=%llu keys each)", (unsigned long long)s.n,
                     (unsigned long long)s.m);
    else
        n = snprintf(buf, len, "n=%llu (%s)", (unsigned long long)s.n,
                     s.prim == MPCE_PRIM_LPN ? "outputs" : "blocks");
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

mpce_status mpce_bench_pair(const struct mpce_slot *dev, const uint32_t *dev_knobs,
                            const struct mpce_slot *host, const uint32_t *host_knobs,
                            const struct mpce_bench_shape *s, const struct mpce_bench_timing *t,
                            struct mpce_bench_pair *out)
{
    memset(out, 0, sizeof(*out));
    struct mpce_bench_fixture *f = NULL;
    struct mpce_bench_cand c[2];
    memset(c, 0, sizeof(c));
    c[0].baseline = c[1].baseline = -1;
    mpce_status st = mpce_bench_fixture_new(s, &f);
    if (st != MPCE_OK) {
        snprintf(out->why, sizeof(out->why), "%s", mpce_last_error());
        return st;
    }
    unsigned char *want = NULL;
    /* The host first: its setup makes the shared inputs (DPF keys). Each
     * is announced before its setup and its check, so that a supervisor
     * knows whose code crashed or hung. */
    snprintf(c[1].name, sizeof(c[1].name), "%s", host->impl->name);
    snprintf(c[0].name, sizeof(c[0].name), "%s", dev->impl->name);
    if (t->on_enter)
        t->on_enter(t->on_enter_arg, &c[1]);
    if ((st = mpce_bench_impl_cand_knobs(host, s, f, host_knobs, &c[1])) != MPCE_OK) {
        snprintf(out->why, sizeof(out->why), "%s: %s", host->impl->name, mpce_last_error());
        goto done;
    }
    if (t->on_enter)
        t->on_enter(t->on_enter_arg, &c[0]);
    if ((st = mpce_bench_impl_cand_knobs(dev, s, f, dev_knobs, &c[0])) != MPCE_OK) {
        snprintf(out->why, sizeof(out->why), "%s: %s", dev->impl->name, mpce_last_error());
        goto done;
    }
    /* The same bytes from both, once, before anything is timed. */
    want = malloc(f->out_len ? f->out_len : 1);
    if (want == NULL) {
        st = mpce_error(MPCE_ERR_NOMEM, "benchmark: out of memory");
        snprintf(out->why, sizeof(out->why), "out of memory");
        goto done;
    }
    for (int k = 1; k >= 0; k--) {
        if (t->on_enter)
            t->on_enter(t->on_enter_arg, &c[k]);
        memset(f->out, 0xa5, f->out_len);
        mpce_bench_error_clear();
        if ((st = (mpce_status)c[k].run(c[k].state)) != MPCE_OK) {
            snprintf(out->why, sizeof(out->why), "%s", mpce_last_error());
            out->failed = k == 0 ? dev : host;
            goto done;
        }
        if (k == 1) {
            memcpy(want, f->out, f->out_len);
        } else if (memcmp(want, f->out, f->out_len) != 0) {
            size_t at = 0;
            while (at < f->out_len && want[at] == f->out[at])
                at++;
            snprintf(out->why, sizeof(out->why), "output differs from %s's at byte %zu of %zu "
                     "on %s", host->impl->name, at, f->out_len, s->text);
            out->wrong = 1;
            st = MPCE_ERR_BACKEND;
            goto done;
        }
    }
    if ((st = mpce_bench_measure(c, 2, t)) != MPCE_OK || c[0].failed || c[1].failed) {
        snprintf(out->why, sizeof(out->why), "%s",
                 c[0].failed ? c[0].why : c[1].failed ? c[1].why : mpce_last_error());
        out->failed = c[0].failed ? dev : c[1].failed ? host : NULL;
        if (st == MPCE_OK)
            st = MPCE_ERR_BACKEND;
        goto done;
    }
    for (int k = 0; k < 2; k++) {
        out->median[k] = c[k].median;
        out->spread[k] = c[k].median > 0 ? (c[k].max - c[k].min) / c[k].median : 0;
    }
done:
    for (int k = 0; k < 2; k++) {
        free(c[k].samples);
        if (c[k].teardown)
            c[k].teardown(c[k].state);
    }
    free(want);
    mpce_bench_fixture_free(f);
    return st;
}
