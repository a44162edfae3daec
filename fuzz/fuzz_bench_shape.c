/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The benchmark's shape parser (tools/bench/bench_shape.c
 * mpce_bench_shape_parse), which reads `mpcengine bench --shape` and the
 * shapes stored in pins rows. Its verdict and the values it keeps are
 * compared with a reference written here from the documented forms
 * (`mpcengine bench --help`): comma-separated key=value (empty items
 * skipped), each key of the op's once, decimal values in the key's range
 * (q: 61bit, 60bit or 50bit; op: forward, inverse or mul; inplace: keep
 * or zero), the required
 * keys present, chunk at most n (n when absent), N a power of two and N*B
 * at most 2^26 words, the text shorter than 128 bytes. A refusal must say
 * which op it was about.
 *
 * Input: an op selector byte, then the shape text.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "tools/bench/bench.h"

struct ref_key {
    const char *name;
    size_t offset;
    int required;
    uint64_t min, max;
};

#define RK(nm, field, req, lo, hi) {nm, offsetof(struct mpce_bench_shape, field), req, lo, hi}
#define RTHREADS RK("threads", threads, 0, 1, 256)
#define REND {NULL, 0, 0, 0, 0}
#define P2(k) (UINT64_C(1) << (k))

static const struct ref_key k_prg[] = {RK("n", n, 1, 1, P2(26)), RTHREADS, REND};
static const struct ref_key k_mmo[] = {RK("m", m, 1, 1, 8), RK("n", n, 1, 1, P2(23)), RTHREADS,
                                       REND};
static const struct ref_key k_pdisp[] = {RK("n", n, 1, 1, 65536), REND};
static const struct ref_key k_ntt[] = {RK("N", N, 1, 8, 131072), RK("B", B, 1, 1, 4096),
                                       RK("q", q, 1, 0, 0), RTHREADS, REND};
static const struct ref_key k_ndisp[] = {RK("N", N, 1, 8, 131072), RK("B", B, 1, 1, 4096),
                                         RK("q", q, 1, 0, 0), RK("op", transform, 0, 0, 0),
                                         RK("inplace", inplace, 0, 0, 0), REND};
static const struct ref_key k_lpn[] = {RK("logk", logk, 1, 1, 26), RK("n", n, 1, 1, P2(26)),
                                       RK("chunk", chunk, 0, 1, P2(26)), RTHREADS, REND};
static const struct ref_key k_all[] = {RK("bits", bits, 1, 1, 26), RTHREADS, REND};
static const struct ref_key k_keys[] = {RK("bits", bits, 1, 1, 64),
                                        RK("keys", keys, 1, 1, P2(22)), RTHREADS, REND};
static const struct ref_key k_points[] = {RK("bits", bits, 1, 1, 64),
                                          RK("points", keys, 1, 1, P2(22)), RTHREADS, REND};

static const struct {
    const char *op;
    const struct ref_key *keys;
} ops[] = {
    {"prg.ecb", k_prg},         {"prg.mmo", k_mmo},          {"prg.ctr", k_prg},
    {"prg.dispatch", k_pdisp},  {"ntt.forward", k_ntt},      {"ntt.inverse", k_ntt},
    {"ntt.mul", k_ntt},         {"ntt.dispatch", k_ndisp},   {"lpn.fold", k_lpn},
    {"dpf.evalall", k_all},     {"dpf.eval_keys", k_keys},   {"dpf.eval", k_points},
    {"dpf.eval_batch", k_keys}, {"dpf.nosuch", NULL},
};

/* One value by the documented forms; 0 when accepted. */
static int ref_value(const struct ref_key *k, const char *v, uint64_t *dst)
{
    if (strcmp(k->name, "q") == 0) {
        static const char *const names[] = {"61bit", "60bit", "50bit"};
        static const uint64_t qs[] = {MPCE_BENCH_Q61, MPCE_BENCH_Q60, MPCE_BENCH_Q50};
        for (int i = 0; i < 3; i++)
            if (strcmp(v, names[i]) == 0) {
                *dst = qs[i];
                return 0;
            }
        return -1;
    }
    if (strcmp(k->name, "op") == 0) {
        static const char *const names[] = {"forward", "inverse", "mul"};
        for (uint64_t i = 0; i < 3; i++)
            if (strcmp(v, names[i]) == 0) {
                *dst = i;
                return 0;
            }
        return -1;
    }
    if (strcmp(k->name, "inplace") == 0) {
        if (strcmp(v, "keep") != 0 && strcmp(v, "zero") != 0)
            return -1;
        *dst = v[0] == 'k' ? MPCE_BENCH_INPLACE_KEEP : MPCE_BENCH_INPLACE_ZERO;
        return 0;
    }
    if (v[0] == '\0' || strspn(v, "0123456789") != strlen(v))
        return -1;
    uint64_t x = 0;
    for (const char *c = v; *c; c++) {
        if (x > (UINT64_MAX - (uint64_t)(*c - '0')) / 10)
            return -1; /* overflow */
        x = x * 10 + (uint64_t)(*c - '0');
    }
    if (x < k->min || x > k->max)
        return -1;
    *dst = x;
    return 0;
}

/* The reference verdict (0 accepted) and, when accepted, the values. */
static int ref_parse(const struct ref_key *keys, const char *shape, struct mpce_bench_shape *s)
{
    memset(s, 0, sizeof(*s));
    s->threads = 1;
    if (strlen(shape) >= sizeof(s->text))
        return -1;
    unsigned seen = 0;
    const char *p = shape;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > 0) {
            char item[128];
            memcpy(item, p, len);
            item[len] = '\0';
            char *eq = strchr(item, '=');
            if (!eq)
                return -1;
            *eq = '\0';
            unsigned ki = 0;
            while (keys[ki].name && strcmp(keys[ki].name, item) != 0)
                ki++;
            if (!keys[ki].name || (seen & (1u << ki)))
                return -1;
            seen |= 1u << ki;
            if (ref_value(&keys[ki], eq + 1, (uint64_t *)((char *)s + keys[ki].offset)) != 0)
                return -1;
        }
        p += len + (end != NULL);
    }
    for (unsigned ki = 0; keys[ki].name; ki++)
        if (keys[ki].required && !(seen & (1u << ki)))
            return -1;
    if (keys == k_lpn) {
        if (!s->chunk)
            s->chunk = s->n;
        if (s->chunk > s->n)
            return -1;
    }
    if ((keys == k_ntt || keys == k_ndisp) &&
        (s->N * s->B > P2(26) || (s->N & (s->N - 1)) != 0))
        return -1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const size_t oi = data[0] % (sizeof(ops) / sizeof(ops[0]));
    char *shape = fuzz_strndup(data + 1, size - 1);
    FUZZ_CHECK(shape != NULL, "out of memory");
    struct mpce_bench_shape got, want;
    fuzz_clear_error();
    mpce_status st = mpce_bench_shape_parse(ops[oi].op, shape, &got);
    if (ops[oi].keys == NULL) {
        FUZZ_CHECK(st == MPCE_ERR_ARG && strstr(mpce_last_error(), "unknown benchmark op"),
                   "op %s: status %d: %s", ops[oi].op, (int)st, mpce_last_error());
        free(shape);
        return 0;
    }
    const int ref = ref_parse(ops[oi].keys, shape, &want);
    FUZZ_CHECK((st == MPCE_OK) == (ref == 0), "%s '%s': status %d (%s), the reference %s",
               ops[oi].op, shape, (int)st, st == MPCE_OK ? "accepted" : mpce_last_error(),
               ref == 0 ? "accepts it" : "refuses it");
    if (st == MPCE_OK) {
        FUZZ_CHECK(strcmp(got.op, ops[oi].op) == 0 && strcmp(got.text, shape) == 0,
                   "op or text not kept");
        FUZZ_CHECK(got.n == want.n && got.m == want.m && got.N == want.N && got.B == want.B &&
                       got.logk == want.logk && got.chunk == want.chunk &&
                       got.bits == want.bits && got.keys == want.keys &&
                       got.threads == want.threads && got.q == want.q &&
                       got.transform == want.transform && got.inplace == want.inplace,
                   "%s '%s': the values differ from the reference's", ops[oi].op, shape);
        FUZZ_CHECK(got.dispatch == (strstr(ops[oi].op, ".dispatch") != NULL), "dispatch flag");
    } else {
        FUZZ_CHECK(st == MPCE_ERR_ARG && strstr(mpce_last_error(), ops[oi].op) != NULL,
                   "%s '%s': status %d, message '%s' does not name the op", ops[oi].op, shape,
                   (int)st, mpce_last_error());
    }
    free(shape);
    return 0;
}
