/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NTT suite, through the public API only: every ntt.txt record, the roots of
 * each context, inverse(forward(x)) == x over the whole range of N, moduli
 * counts and batches (in place and out of place), agreement with schoolbook
 * negacyclic multiplication, agreement between implementations, and the
 * engine's argument and canonical-input checks, for every NTT implementation
 * that passed its self-test; and every implementation against an independent
 * O(N^2) evaluation of SPEC.md's sums on random canonical inputs.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "engine/spec/ntt_params.h"
#include "mpcengine/plugin.h"
#include "engine/verify/kat.h"
#include "testutil.h"
#include "tests/ref_modarith.h"

#define MAX_IMPLS 16
#define PATTERN UINT64_C(0xA5A5A5A5A5A5A5A5)

/* q - 1 divisible by: 2^21, 2^17, 2^18, 2^18 (so valid up to 2N of that). */
static const uint64_t Q61 = UINT64_C(0x1fffffffffe00001);
static const uint64_t Q50 = UINT64_C(0x0003ffffffd20001);
static const uint64_t Q61B = UINT64_C(0x1fffffffffc80001);
static const uint64_t Q60 = UINT64_C(0x0ffffffffffc0001);

static size_t ntt_impls(const char **names)
{
    return tu_impls(tu_engine(0), MPCE_PRIM_NTT, names, MAX_IMPLS);
}

static mpce_ntt *make_ctx(size_t n, const uint64_t *moduli, size_t l)
{
    mpce_ntt *ctx = NULL;
    mpce_status st = mpce_ntt_new(tu_engine(0), n, moduli, l, &ctx);
    if (st != MPCE_OK)
        fprintf(stderr, "  mpce_ntt_new(n = %zu, l = %zu): %s\n", n, l, mpce_last_error());
    CU_ASSERT_EQUAL_FATAL(st, MPCE_OK);
    return ctx;
}

static uint64_t *alloc_words(size_t count)
{
    uint64_t *p = malloc((count ? count : 1) * sizeof(uint64_t));
    CU_ASSERT_FATAL(p != NULL);
    return p;
}

/* B*L*N values from splitmix64, each reduced mod its own row's modulus. */
static void fill_random(uint64_t *v, size_t n, const uint64_t *q, size_t l, size_t batch,
                        uint64_t *seed)
{
    for (size_t b = 0; b < batch; b++)
        for (size_t r = 0; r < l; r++)
            for (size_t i = 0; i < n; i++)
                v[(b * l + r) * n + i] = tu_splitmix64(seed) % q[r];
}

static void fill_pattern(uint64_t *v, size_t count)
{
    for (size_t i = 0; i < count; i++)
        v[i] = PATTERN;
}

static int all_pattern(const uint64_t *v, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (v[i] != PATTERN)
            return 0;
    return 1;
}

static int all_zero(const uint64_t *v, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (v[i] != 0)
            return 0;
    return 1;
}

/* ---- implementations ---------------------------------------------------- */

static void test_impls_listed(void)
{
    const char *names[MAX_IMPLS];
    size_t n = ntt_impls(names), soft = 0;
    CU_ASSERT(n >= 1);
    for (size_t i = 0; i < n; i++)
        soft += strcmp(names[i], "ntt-soft") == 0;
    CU_ASSERT_EQUAL(soft, 1);
}

/* ---- known answers ------------------------------------------------------ */

static void sha256_le(const uint64_t *v, size_t count, char hex[65])
{
    uint8_t *bytes = malloc(count * 8);
    uint8_t d[SHA256_DIGEST_LENGTH];
    CU_ASSERT_FATAL(bytes != NULL);
    for (size_t i = 0; i < count; i++)
        for (unsigned b = 0; b < 8; b++)
            bytes[8 * i + b] = (uint8_t)(v[i] >> (8 * b));
    SHA256(bytes, count * 8, d);
    for (size_t i = 0; i < sizeof(d); i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    free(bytes);
}

/* The field as a list of exactly `count` values (NULL and a failure else). */
static uint64_t *kat_list(const struct mpce_kat_record *rec, const char *name, size_t count)
{
    uint64_t *v = NULL;
    size_t got = 0;
    if (mpce_kat_u64_list(rec, name, &v, &got) != 0 || got != count) {
        fprintf(stderr, "  ntt.txt:%u: field %s: %zu values, expected %zu\n", rec->line, name,
                got, count);
        CU_FAIL("malformed ntt.txt record");
        free(v);
        return NULL;
    }
    return v;
}

static int kat_field(const struct mpce_kat_record *rec, const char *name, uint64_t *v)
{
    if (mpce_kat_u64(rec, name, v) == 0)
        return 0;
    fprintf(stderr, "  ntt.txt:%u: %s\n", rec->line, mpce_last_error());
    CU_FAIL("malformed ntt.txt record");
    return -1;
}

static void report(const struct mpce_kat_record *rec, const char *impl, const char *what, int ok)
{
    if (!ok) {
        fprintf(stderr, "  ntt.txt:%u (%s) %s: %s mismatch\n", rec->line, rec->op, impl, what);
        CU_FAIL("NTT known answer mismatch");
    }
}

/* One record through one implementation. */
static void kat_record(const struct mpce_kat_record *rec, const char *impl)
{
    const char *op = rec->op;
    int rns = strcmp(op, "rns_forward") == 0;
    uint64_t n64, l64 = 1, b64 = 1;
    uint64_t *q = NULL, *g = NULL, *psi = NULL, *in = NULL, *want = NULL, *out = NULL;
    uint64_t *back = NULL, *a = NULL, *b = NULL, *first = NULL;
    mpce_ntt *ctx = NULL;

    if (kat_field(rec, "N", &n64) || (rns && (kat_field(rec, "L", &l64) ||
                                              kat_field(rec, "B", &b64))))
        return;
    const size_t n = (size_t)n64, l = (size_t)l64, batch = (size_t)b64;
    const size_t words = n * l * batch;
    if (rns) {
        q = kat_list(rec, "moduli", l);
        g = kat_list(rec, "g", l);
        psi = kat_list(rec, "psi", l);
        if (!q || !g || !psi)
            goto done;
    } else {
        q = alloc_words(1);
        if (kat_field(rec, "q", q))
            goto done;
        if (mpce_kat_get(rec, "g")) {
            g = alloc_words(1);
            psi = alloc_words(1);
            if (kat_field(rec, "g", g) || kat_field(rec, "psi", psi))
                goto done;
        }
    }
    ctx = make_ctx(n, q, l);
    if (!tu_ntt_serves(ctx, impl))
        goto done;
    if (g) {
        for (size_t r = 0; r < l; r++) {
            uint64_t gr = 0, pr = 0;
            CU_ASSERT_EQUAL(mpce_ntt_roots(ctx, r, &gr, &pr), MPCE_OK);
            report(rec, impl, "g", gr == g[r]);
            report(rec, impl, "psi", pr == psi[r]);
        }
    }
    out = alloc_words(words);
    back = alloc_words(words);

    if (strcmp(op, "mul") == 0) {
        a = kat_list(rec, "a", n);
        b = kat_list(rec, "b", n);
        want = kat_list(rec, "out", n);
        if (!a || !b || !want)
            goto done;
        CU_ASSERT_EQUAL(mpce_ntt_mul(ctx, impl, a, b, out, 1), MPCE_OK);
        report(rec, impl, "mul", memcmp(out, want, n * 8) == 0);
        goto done;
    }
    if (strcmp(op, "inverse") == 0) {
        in = kat_list(rec, "in", n);
        want = kat_list(rec, "out", n);
        if (!in || !want)
            goto done;
        CU_ASSERT_EQUAL(mpce_ntt_inverse(ctx, impl, in, out, 1), MPCE_OK);
        report(rec, impl, "inverse", memcmp(out, want, n * 8) == 0);
        CU_ASSERT_EQUAL(mpce_ntt_forward(ctx, impl, out, back, 1), MPCE_OK);
        report(rec, impl, "forward(inverse)", memcmp(back, in, n * 8) == 0);
        goto done;
    }
    if (strcmp(op, "forward_hash") == 0) {
        uint64_t seed, last;
        char hex[65];
        const char *rule = mpce_kat_get(rec, "in_rule");
        CU_ASSERT(rule != NULL && strcmp(rule, "splitmix64") == 0);
        if (kat_field(rec, "in_seed", &seed) || kat_field(rec, "out_last", &last))
            goto done;
        in = alloc_words(n);
        fill_random(in, n, q, 1, 1, &seed);
        sha256_le(in, n, hex);
        report(rec, impl, "in_sha256", strcmp(hex, mpce_kat_get(rec, "in_sha256")) == 0);
        CU_ASSERT_EQUAL(mpce_ntt_forward(ctx, impl, in, out, 1), MPCE_OK);
        sha256_le(out, n, hex);
        report(rec, impl, "out_sha256", strcmp(hex, mpce_kat_get(rec, "out_sha256")) == 0);
        first = kat_list(rec, "out_first", 4);
        report(rec, impl, "out_first", first && memcmp(out, first, 4 * 8) == 0);
        report(rec, impl, "out_last", out[n - 1] == last);
    } else if (strcmp(op, "forward") == 0 || rns) {
        in = kat_list(rec, "in", words);
        want = kat_list(rec, "out", words);
        if (!in || !want)
            goto done;
        CU_ASSERT_EQUAL(mpce_ntt_forward(ctx, impl, in, out, batch), MPCE_OK);
        report(rec, impl, "forward", memcmp(out, want, words * 8) == 0);
    } else {
        fprintf(stderr, "  ntt.txt:%u: unknown op %s\n", rec->line, op);
        CU_FAIL("unknown ntt.txt op");
        goto done;
    }
    /* Every forward record is an inverse record too. */
    CU_ASSERT_EQUAL(mpce_ntt_inverse(ctx, impl, out, back, batch), MPCE_OK);
    report(rec, impl, "inverse(out)", memcmp(back, in, words * 8) == 0);
done:
    mpce_ntt_free(ctx);
    free(q);
    free(g);
    free(psi);
    free(in);
    free(want);
    free(out);
    free(back);
    free(a);
    free(b);
    free(first);
}

static void test_kat(void)
{
    struct mpce_kat_set set;
    const char *names[MAX_IMPLS];
    size_t ni = ntt_impls(names);
    if (mpce_kat_load("ntt.txt", &set) != 0) {
        fprintf(stderr, "  %s\n", mpce_last_error());
        CU_FAIL_FATAL("cannot load ntt.txt");
    }
    CU_ASSERT(set.count >= 17);
    for (size_t i = 0; i < ni; i++)
        for (size_t r = 0; r < set.count; r++)
            kat_record(&set.records[r], names[i]);
    mpce_kat_free(&set);
}

/* Every forward record's roots come out of mpce_ntt_new for its q and N. */
static void test_roots(void)
{
    mpce_ntt *ctx = make_ctx(8, &Q61, 1);
    uint64_t g = 0, psi = 0;
    CU_ASSERT_EQUAL(mpce_ntt_roots(ctx, 0, &g, &psi), MPCE_OK);
    CU_ASSERT_EQUAL(g, 37);
    CU_ASSERT_EQUAL(psi, UINT64_C(2167469528306259317));
    TU_ASSERT_ERROR(mpce_ntt_roots(ctx, 1, &g, &psi), MPCE_ERR_ARG, "l = 1");
    CU_ASSERT_EQUAL(mpce_ntt_degree(ctx), 8);
    CU_ASSERT_EQUAL(mpce_ntt_modulus_count(ctx), 1);
    mpce_ntt_free(ctx);

    /* psi is a primitive 2N-th root: psi^N = -1 for every supported N. */
    const uint64_t mods[] = {Q61, Q60, Q61B, Q61};
    ctx = make_ctx(1u << 17, mods, 4);
    for (size_t r = 0; r < 4; r++) {
        CU_ASSERT_EQUAL(mpce_ntt_roots(ctx, r, &g, &psi), MPCE_OK);
        uint64_t x = psi;
        for (int k = 0; k < 17; k++)
            x = ref_mulmod(x, x, mods[r]);
        CU_ASSERT_EQUAL(x, mods[r] - 1);
        CU_ASSERT(g >= 3);
    }
    mpce_ntt_free(ctx);
}

/* ---- round trips -------------------------------------------------------- */

static void round_trip(const char *impl, size_t n, const uint64_t *q, size_t l, size_t batch,
                       uint64_t *seed)
{
    const size_t words = n * l * batch;
    mpce_ntt *ctx = make_ctx(n, q, l);
    if (!tu_ntt_serves(ctx, impl)) {
        mpce_ntt_free(ctx);
        return;
    }
    uint64_t *x = alloc_words(words), *y = alloc_words(words), *z = alloc_words(words);
    fill_random(x, n, q, l, batch, seed);

    CU_ASSERT_EQUAL(mpce_ntt_forward(ctx, impl, x, y, batch), MPCE_OK);
    int canonical = 1;
    for (size_t b = 0; b < batch; b++)
        for (size_t r = 0; r < l; r++)
            for (size_t i = 0; i < n; i++)
                canonical &= y[(b * l + r) * n + i] < q[r];
    CU_ASSERT(canonical);
    CU_ASSERT_EQUAL(mpce_ntt_inverse(ctx, impl, y, z, batch), MPCE_OK);
    int ok = memcmp(x, z, words * 8) == 0;

    /* In place gives the same words. */
    memcpy(z, x, words * 8);
    CU_ASSERT_EQUAL(mpce_ntt_forward(ctx, impl, z, z, batch), MPCE_OK);
    ok &= memcmp(z, y, words * 8) == 0;
    CU_ASSERT_EQUAL(mpce_ntt_inverse(ctx, impl, z, z, batch), MPCE_OK);
    ok &= memcmp(z, x, words * 8) == 0;
    if (!ok)
        fprintf(stderr, "  %s: round trip failed at N = %zu, L = %zu, B = %zu\n", impl, n, l,
                batch);
    CU_ASSERT(ok);
    free(x);
    free(y);
    free(z);
    mpce_ntt_free(ctx);
}

static void test_round_trip(void)
{
    const char *names[MAX_IMPLS];
    size_t ni = ntt_impls(names);
    const uint64_t mods[] = {Q61, Q50, Q61B};
    const uint64_t big[] = {Q61, Q60};
    uint64_t seed = 1;
    for (size_t i = 0; i < ni; i++) {
        for (size_t n = 8; n <= (1u << 14); n <<= 1)
            for (size_t l = 1; l <= 3; l++)
                for (size_t batch = 1; batch <= 3; batch++)
                    round_trip(names[i], n, mods, l, batch, &seed);
        round_trip(names[i], 1u << 17, big, 2, 1, &seed);
    }
}

/* Extreme coefficients (all q - 1) survive both directions. */
static void test_extremes(void)
{
    const char *names[MAX_IMPLS];
    size_t ni = ntt_impls(names);
    const size_t n = 1024;
    const uint64_t mods[] = {Q61, Q60};
    uint64_t *x = alloc_words(2 * n), *y = alloc_words(2 * n);
    for (size_t i = 0; i < 2 * n; i++)
        x[i] = mods[i / n] - 1;
    mpce_ntt *ctx = make_ctx(n, mods, 2);
    for (size_t k = 0; k < ni; k++) {
        if (!tu_ntt_serves(ctx, names[k]))
            continue;
        CU_ASSERT_EQUAL(mpce_ntt_forward(ctx, names[k], x, y, 1), MPCE_OK);
        CU_ASSERT_EQUAL(mpce_ntt_inverse(ctx, names[k], y, y, 1), MPCE_OK);
        CU_ASSERT(memcmp(x, y, 2 * n * 8) == 0);
        CU_ASSERT_EQUAL(mpce_ntt_inverse(ctx, names[k], x, y, 1), MPCE_OK);
        CU_ASSERT_EQUAL(mpce_ntt_forward(ctx, names[k], y, y, 1), MPCE_OK);
        CU_ASSERT(memcmp(x, y, 2 * n * 8) == 0);
        CU_ASSERT_EQUAL(mpce_ntt_mul(ctx, names[k], x, x, y, 1), MPCE_OK);
        for (size_t i = 0; i < 2 * n; i++)
            CU_ASSERT_EQUAL(y[i], 1); /* (-1)^2 */
    }
    mpce_ntt_free(ctx);
    free(x);
    free(y);
}

/* Every implementation writes the same words as the first one. */
static void test_cross_impl(void)
{
    const char *names[MAX_IMPLS];
    size_t ni = ntt_impls(names);
    const uint64_t mods[] = {Q61, Q50, Q61B};
    uint64_t seed = 7;
    if (ni == 0)
        return; /* impls_listed reports it */
    for (size_t n = 8; n <= 4096; n <<= 2) {
        const size_t words = n * 3 * 4;
        mpce_ntt *ctx = make_ctx(n, mods, 3);
        uint64_t *x = alloc_words(words), *ref = alloc_words(words), *y = alloc_words(words);
        fill_random(x, n, mods, 3, 4, &seed);
        CU_ASSERT_EQUAL(mpce_ntt_forward(ctx, names[0], x, ref, 4), MPCE_OK);
        for (size_t k = 1; k < ni; k++) {
            if (!tu_ntt_serves(ctx, names[k]))
                continue;
            CU_ASSERT_EQUAL(mpce_ntt_forward(ctx, names[k], x, y, 4), MPCE_OK);
            CU_ASSERT(memcmp(y, ref, words * 8) == 0);
            CU_ASSERT_EQUAL(mpce_ntt_inverse(ctx, names[k], x, y, 4), MPCE_OK);
            CU_ASSERT_EQUAL(mpce_ntt_inverse(ctx, names[0], x, ref, 4), MPCE_OK);
            CU_ASSERT(memcmp(y, ref, words * 8) == 0);
        }
        free(x);
        free(ref);
        free(y);
        mpce_ntt_free(ctx);
    }
}

/* Inputs at the extremes of [0, q) through both directions at sizes that
 * take every path of the vector kernels (their smallest rows, both stage
 * parities, rows split into blocks), one modulus at a time so that IFMA
 * serves the 50-bit one: every implementation writes what the first does. */
static void test_extremes_every_path(void)
{
    const char *names[MAX_IMPLS];
    size_t ni = ntt_impls(names);
    static const size_t sizes[] = {16, 32, 64, 128, 256, 2048, 4096, 8192, 16384};
    const uint64_t mods[] = {Q61, Q50, Q60};
    if (ni == 0)
        return; /* impls_listed reports it */
    for (size_t m = 0; m < sizeof(mods) / sizeof(mods[0]); m++) {
        const uint64_t q = mods[m];
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
            const size_t n = sizes[s];
            mpce_ntt *ctx = make_ctx(n, &q, 1);
            uint64_t *x = alloc_words(n), *ref = alloc_words(n), *y = alloc_words(n);
            for (int pattern = 0; pattern < 4; pattern++) {
                for (size_t i = 0; i < n; i++) {
                    switch (pattern) {
                    case 0: x[i] = q - 1; break;
                    case 1: x[i] = (i & 1) ? q - 1 : 0; break;
                    case 2: x[i] = i < n / 2 ? q - 1 : 0; break;
                    default: x[i] = q - 1 - (i * 7919 % 64); break;
                    }
                }
                for (int dir = 0; dir < 2; dir++) {
                    mpce_status (*op)(mpce_ntt *, const char *, const uint64_t *, uint64_t *,
                                      size_t) = dir ? mpce_ntt_inverse : mpce_ntt_forward;
                    CU_ASSERT_EQUAL(op(ctx, names[0], x, ref, 1), MPCE_OK);
                    for (size_t k = 1; k < ni; k++) {
                        if (!tu_ntt_serves(ctx, names[k]))
                            continue;
                        memcpy(y, x, n * 8);
                        CU_ASSERT_EQUAL(op(ctx, names[k], y, y, 1), MPCE_OK);
                        if (memcmp(y, ref, n * 8) != 0) {
                            fprintf(stderr, "  %s %s: q = %#llx, N = %zu, pattern %d\n",
                                    names[k], dir ? "inverse" : "forward",
                                    (unsigned long long)q, n, pattern);
                            CU_FAIL("extreme input mismatch");
                        }
                    }
                }
            }
            free(x);
            free(ref);
            free(y);
            mpce_ntt_free(ctx);
        }
    }
}

/* ---- multiplication ----------------------------------------------------- */

/* c = a * b mod (X^n + 1, q), the definition. */
static void schoolbook(const uint64_t *a, const uint64_t *b, uint64_t *c, size_t n, uint64_t q)
{
    memset(c, 0, n * sizeof(uint64_t));
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            uint64_t p = ref_mulmod(a[i], b[j], q);
            size_t k = i + j;
            if (k < n)
                c[k] = (c[k] + p) % q;
            else
                c[k - n] = (c[k - n] + q - p) % q; /* X^n = -1 */
        }
}

static void test_mul_schoolbook(void)
{
    const char *names[MAX_IMPLS];
    size_t ni = ntt_impls(names);
    const uint64_t mods[] = {Q61, Q50};
    const size_t l = 2, batch = 2;
    static const size_t sizes[] = {8, 16, 64, 256};
    uint64_t seed = 11;
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        const size_t n = sizes[s], words = n * l * batch;
        mpce_ntt *ctx = make_ctx(n, mods, l);
        uint64_t *a = alloc_words(words), *b = alloc_words(words), *want = alloc_words(words);
        uint64_t *fa = alloc_words(words), *fb = alloc_words(words), *c = alloc_words(words);
        fill_random(a, n, mods, l, batch, &seed);
        fill_random(b, n, mods, l, batch, &seed);
        for (size_t p = 0; p < batch; p++)
            for (size_t r = 0; r < l; r++) {
                const size_t off = (p * l + r) * n;
                schoolbook(a + off, b + off, want + off, n, mods[r]);
            }
        for (size_t k = 0; k < ni; k++) {
            if (!tu_ntt_serves(ctx, names[k]))
                continue;
            CU_ASSERT_EQUAL(mpce_ntt_forward(ctx, names[k], a, fa, batch), MPCE_OK);
            CU_ASSERT_EQUAL(mpce_ntt_forward(ctx, names[k], b, fb, batch), MPCE_OK);
            CU_ASSERT_EQUAL(mpce_ntt_mul(ctx, names[k], fa, fb, c, batch), MPCE_OK);
            CU_ASSERT_EQUAL(mpce_ntt_inverse(ctx, names[k], c, c, batch), MPCE_OK);
            if (memcmp(c, want, words * 8) != 0) {
                fprintf(stderr, "  %s: negacyclic product wrong at N = %zu\n", names[k], n);
                CU_FAIL("mul disagrees with schoolbook multiplication");
            }
            /* In place over the first operand. */
            CU_ASSERT_EQUAL(mpce_ntt_mul(ctx, names[k], fa, fb, fa, batch), MPCE_OK);
            CU_ASSERT_EQUAL(mpce_ntt_inverse(ctx, names[k], fa, fa, batch), MPCE_OK);
            CU_ASSERT(memcmp(fa, want, words * 8) == 0);
        }
        free(a);
        free(b);
        free(want);
        free(fa);
        free(fb);
        free(c);
        mpce_ntt_free(ctx);
    }
}

/* ---- independent reference ---------------------------------------------- */

/*
 * SPEC.md section 2 evaluated straight from its formulas, sharing nothing
 * with the engine: its own primality test, factoring and root search, and
 * O(N^2) sums. Random canonical inputs over many (N, q) pairs catch what the
 * fixed vectors cannot (a twiddle table wrong for one q, a lazy bound that
 * only overflows near 2^61, a reduction that fails for small q).
 */

static uint64_t ref_gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* A proper factor of the odd composite n (Pollard's rho, Floyd cycles). */
static uint64_t ref_rho(uint64_t n)
{
    for (uint64_t c = 1;; c++) {
        uint64_t x = 2, y = 2, d = 1;
        while (d == 1) {
            x = (ref_mulmod(x, x, n) + c) % n;
            y = (ref_mulmod(y, y, n) + c) % n;
            y = (ref_mulmod(y, y, n) + c) % n;
            d = ref_gcd(x > y ? x - y : y - x, n);
        }
        if (d != n)
            return d;
    }
}

static void ref_add_factor(uint64_t p, uint64_t *f, size_t *nf)
{
    for (size_t k = 0; k < *nf; k++)
        if (f[k] == p)
            return;
    CU_ASSERT_FATAL(*nf < 64);
    f[(*nf)++] = p;
}

/* The distinct prime factors of n, appended to f (no small factor left). */
static void ref_split(uint64_t n, uint64_t *f, size_t *nf)
{
    if (n == 1)
        return;
    if (ref_is_prime(n)) {
        ref_add_factor(n, f, nf);
        return;
    }
    uint64_t d = ref_rho(n);
    ref_split(d, f, nf);
    ref_split(n / d, f, nf);
}

static size_t ref_factor(uint64_t n, uint64_t *f)
{
    size_t nf = 0;
    for (uint64_t p = 2; p < 1000 && p * p <= n; p++)
        if (n % p == 0) {
            ref_add_factor(p, f, &nf);
            while (n % p == 0)
                n /= p;
        }
    ref_split(n, f, &nf);
    return nf;
}

/* Lattigo's g: the smallest primitive root >= 3 (2 is never tried). */
static uint64_t ref_generator(uint64_t q)
{
    uint64_t f[64];
    size_t nf = ref_factor(q - 1, f);
    for (size_t k = 0; k < nf; k++)
        CU_ASSERT_FATAL(ref_is_prime(f[k]) && (q - 1) % f[k] == 0);
    for (uint64_t g = 3;; g++) {
        int primitive = 1;
        for (size_t k = 0; k < nf && primitive; k++)
            primitive = ref_powmod(g, (q - 1) / f[k], q) != 1;
        if (primitive)
            return g;
    }
}

/* The largest prime q < bound with q = 1 mod 2n. */
static uint64_t ref_prime_below(uint64_t bound, size_t n)
{
    const uint64_t step = 2 * (uint64_t)n;
    for (uint64_t k = (bound - 2) / step; k > 0; k--)
        if (ref_is_prime(k * step + 1))
            return k * step + 1;
    CU_FAIL_FATAL("no NTT prime below the bound");
    return 0;
}

static size_t ref_brv(size_t j, size_t n)
{
    size_t r = 0;
    for (size_t bit = 1; bit < n; bit <<= 1) {
        r = (r << 1) | (j & 1);
        j >>= 1;
    }
    return r;
}

/*
 * out_j = sum_i in_i * psi^((2 brv(j) + 1) i) (forward), or
 * out_i = N^-1 sum_j in_j * psi^-((2 brv(j) + 1) i) (inverse). Products are
 * below 2^122, so 32 of them fit the 128-bit accumulator between reductions.
 */
static void ref_transform(const uint64_t *in, uint64_t *out, size_t n, uint64_t q, uint64_t psi,
                          int inverse)
{
    const size_t mask = 2 * n - 1; /* exponents live mod 2N */
    uint64_t *pw = alloc_words(2 * n), *odd = alloc_words(n);
    pw[0] = 1;
    for (size_t k = 1; k <= mask; k++)
        pw[k] = ref_mulmod(pw[k - 1], psi, q);
    for (size_t j = 0; j < n; j++)
        odd[j] = 2 * ref_brv(j, n) + 1;
    const uint64_t ninv = ref_powmod(n, q - 2, q);

    for (size_t o = 0; o < n; o++) {
        unsigned __int128 acc = 0;
        for (size_t k = 0; k < n; k++) {
            /* forward: o = j, k = i; inverse: o = i, k = j, negated exponent */
            size_t e = inverse ? (2 * n - ((odd[k] * o) & mask)) & mask : (odd[o] * k) & mask;
            acc += (unsigned __int128)in[k] * pw[e];
            if ((k & 31) == 31)
                acc %= q;
        }
        out[o] = (uint64_t)(acc % q);
        if (inverse)
            out[o] = ref_mulmod(out[o], ninv, q);
    }
    free(pw);
    free(odd);
}

/* g and psi of the context's row r against the reference's own search. */
static void ref_check_roots(mpce_ntt *ctx, size_t r, size_t n, uint64_t q, uint64_t *psi_out)
{
    uint64_t g = 0, psi = 0;
    CU_ASSERT_EQUAL_FATAL(mpce_ntt_roots(ctx, r, &g, &psi), MPCE_OK);
    const uint64_t want_g = ref_generator(q);
    const uint64_t want_psi = ref_powmod(want_g, (q - 1) / (2 * n), q);
    if (g != want_g || psi != want_psi) {
        fprintf(stderr, "  q = %#llx, N = %zu: roots (%llu, %llu), reference (%llu, %llu)\n",
                (unsigned long long)q, n, (unsigned long long)g, (unsigned long long)psi,
                (unsigned long long)want_g, (unsigned long long)want_psi);
        CU_FAIL("g or psi differs from the reference root search");
    }
    /* A primitive 2N-th root: psi^N = -1 (so its order is exactly 2N). */
    CU_ASSERT(ref_powmod(psi, n, q) == q - 1);
    CU_ASSERT(ref_powmod(psi, 2 * n, q) == 1);
    *psi_out = want_psi;
}

/* Canonical words for every row, with 0 and q - 1 planted at both ends. */
static void ref_fill(uint64_t *v, size_t n, const uint64_t *q, size_t l, size_t batch,
                     uint64_t seed)
{
    tu_splitmix_bytes(seed, v, n * l * batch * sizeof(uint64_t));
    for (size_t p = 0; p < batch; p++)
        for (size_t r = 0; r < l; r++) {
            uint64_t *row = v + (p * l + r) * n;
            for (size_t i = 0; i < n; i++)
                row[i] %= q[r];
            row[0] = q[r] - 1;
            row[n - 1] = 0;
            row[n / 2] = q[r] - 1;
        }
}

static int ref_report(const char *impl, const char *op, const uint64_t *got,
                      const uint64_t *want, size_t n, const uint64_t *q, size_t l, size_t batch)
{
    static unsigned said; /* the first few mismatches say it all */
    for (size_t w = 0; w < n * l * batch; w++)
        if (got[w] != want[w]) {
            if (said++ >= 20)
                return 0;
            fprintf(stderr,
                    "  %s %s: N = %zu, L = %zu, B = %zu, q[%zu] = %#llx: word %zu is %llu, "
                    "SPEC's sum gives %llu\n",
                    impl, op, n, l, batch, (w / n) % l, (unsigned long long)q[(w / n) % l], w,
                    (unsigned long long)got[w], (unsigned long long)want[w]);
            return 0;
        }
    return 1;
}

/* One shape against the reference, for every implementation. */
static void ref_shape(const char **names, size_t ni, size_t n, const uint64_t *q, size_t l,
                      size_t batch, uint64_t seed)
{
    const size_t words = n * l * batch;
    mpce_ntt *ctx = make_ctx(n, q, l);
    uint64_t *x = alloc_words(words), *y = alloc_words(words);
    uint64_t *fwd = alloc_words(words), *inv = alloc_words(words), *got = alloc_words(words);
    uint64_t psi[8];

    CU_ASSERT_FATAL(l <= 8);
    for (size_t r = 0; r < l; r++)
        ref_check_roots(ctx, r, n, q[r], &psi[r]);
    ref_fill(x, n, q, l, batch, seed);
    ref_fill(y, n, q, l, batch, seed ^ UINT64_C(0x5851f42d4c957f2d));
    for (size_t p = 0; p < batch; p++)
        for (size_t r = 0; r < l; r++) {
            const size_t off = (p * l + r) * n;
            ref_transform(x + off, fwd + off, n, q[r], psi[r], 0);
            ref_transform(y + off, inv + off, n, q[r], psi[r], 1);
        }
    for (size_t k = 0; k < ni; k++) {
        if (!tu_ntt_serves(ctx, names[k]))
            continue;
        int ok = 1;
        fill_pattern(got, words);
        CU_ASSERT_EQUAL(mpce_ntt_forward(ctx, names[k], x, got, batch), MPCE_OK);
        ok &= ref_report(names[k], "forward", got, fwd, n, q, l, batch);
        fill_pattern(got, words);
        CU_ASSERT_EQUAL(mpce_ntt_inverse(ctx, names[k], y, got, batch), MPCE_OK);
        ok &= ref_report(names[k], "inverse", got, inv, n, q, l, batch);
        if (batch > 1) {
            memcpy(got, x, words * 8);
            CU_ASSERT_EQUAL(mpce_ntt_forward(ctx, names[k], got, got, batch), MPCE_OK);
            ok &= ref_report(names[k], "forward in place", got, fwd, n, q, l, batch);
            memcpy(got, y, words * 8);
            CU_ASSERT_EQUAL(mpce_ntt_inverse(ctx, names[k], got, got, batch), MPCE_OK);
            ok &= ref_report(names[k], "inverse in place", got, inv, n, q, l, batch);
        }
        CU_ASSERT(ok);
    }
    free(x);
    free(y);
    free(fwd);
    free(inv);
    free(got);
    mpce_ntt_free(ctx);
}

static void test_reference(void)
{
    const char *names[MAX_IMPLS];
    size_t ni = ntt_impls(names);
    static const unsigned bounds[] = {61, 50, 40, 30, 20, 14};
    enum { NB = sizeof(bounds) / sizeof(bounds[0]) };
    uint64_t seed = 0x7e57;

    /* The reference's own number theory, on moduli with known answers. */
    CU_ASSERT(ref_is_prime(Q61) && ref_is_prime(Q60) && ref_is_prime(Q50));
    CU_ASSERT(!ref_is_prime(UINT64_C(0x400040001)) && !ref_is_prime(UINT64_C(3215031751)));
    CU_ASSERT_EQUAL(ref_generator(Q61), 37);
    CU_ASSERT_EQUAL(ref_generator(12289), 11);

    for (size_t n = 8; n <= 1024; n <<= 1) {
        uint64_t mods[NB + 2];
        size_t nm = 0;
        mods[nm++] = Q61;
        mods[nm++] = Q60;
        for (size_t b = 0; b < NB; b++)
            if ((UINT64_C(1) << bounds[b]) > 2 * n + 1)
                mods[nm++] = ref_prime_below(UINT64_C(1) << bounds[b], n);
        for (size_t m = 0; m < nm; m++)
            ref_shape(names, ni, n, &mods[m], 1, 1, seed++);
        /* RNS rows with unrelated moduli, and batches. */
        const uint64_t two[] = {mods[2], mods[nm - 1]};
        const uint64_t three[] = {mods[3], Q61, mods[4]};
        ref_shape(names, ni, n, two, 2, 2, seed++);
        ref_shape(names, ni, n, three, 3, 2, seed++);
        ref_shape(names, ni, n, &mods[5], 1, 3, seed++);
    }
}

/* ---- argument checks ---------------------------------------------------- */

static void test_invalid_new(void)
{
    static char marker;
    mpce_ntt *const sentinel = (mpce_ntt *)(void *)&marker;
    mpce_ntt *ctx = sentinel;
    mpce_engine *e = tu_engine(0);
    const uint64_t composite = UINT64_C(0x400040001); /* (2^17 + 1)^2, 1 mod 2^18 */
    const uint64_t not_one = UINT64_C(0x000000fffffffe21);  /* prime, 1 mod 32 only */
    const uint64_t too_big = (UINT64_C(1) << 61) + 1;
    const uint64_t pair[] = {Q61, composite};

    TU_ASSERT_ERROR(mpce_ntt_new(e, 0, &Q61, 1, &ctx), MPCE_ERR_ARG, "n = 0");
    TU_ASSERT_ERROR(mpce_ntt_new(e, 4, &Q61, 1, &ctx), MPCE_ERR_ARG, "n = 4");
    TU_ASSERT_ERROR(mpce_ntt_new(e, 12, &Q61, 1, &ctx), MPCE_ERR_ARG, "n = 12");
    TU_ASSERT_ERROR(mpce_ntt_new(e, 1u << 18, &Q61, 1, &ctx), MPCE_ERR_ARG, "n = 262144");
    CU_ASSERT(tu_error_mentions("131072"));
    TU_ASSERT_ERROR(mpce_ntt_new(e, 8, pair, 2, &ctx), MPCE_ERR_ARG, "moduli[1]");
    CU_ASSERT(tu_error_mentions("composite"));
    TU_ASSERT_ERROR(mpce_ntt_new(e, 64, &not_one, 1, &ctx), MPCE_ERR_ARG, "moduli[0]");
    CU_ASSERT(tu_error_mentions("not 1 mod 2N = 128"));
    TU_ASSERT_ERROR(mpce_ntt_new(e, 8, &too_big, 1, &ctx), MPCE_ERR_ARG, "moduli[0]");
    CU_ASSERT(tu_error_mentions("2^61"));
    TU_ASSERT_ERROR(mpce_ntt_new(e, 8, &Q61, 0, &ctx), MPCE_ERR_ARG, "l = 0");
    TU_ASSERT_ERROR(mpce_ntt_new(e, 8, NULL, 1, &ctx), MPCE_ERR_ARG, "moduli");
    TU_ASSERT_ERROR(mpce_ntt_new(e, 8, &Q61, 1, NULL), MPCE_ERR_ARG, "out");
    CU_ASSERT(ctx == sentinel);

    /* Duplicated moduli are allowed; every row uses the same root. */
    const uint64_t dup[] = {Q61, Q61};
    CU_ASSERT_EQUAL(mpce_ntt_new(e, 8, dup, 2, &ctx), MPCE_OK);
    uint64_t g0, g1, p0, p1;
    CU_ASSERT_EQUAL(mpce_ntt_roots(ctx, 0, &g0, &p0), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_ntt_roots(ctx, 1, &g1, &p1), MPCE_OK);
    CU_ASSERT(g0 == g1 && p0 == p1);
    mpce_ntt_free(ctx);
}

/* The canonical check works eight words a step (a row, N >= 8 words, is a
 * whole number of steps): a bad word is found at every position of a row,
 * for the values around q and at the top of the range, and q - 1 passes. */
static void test_canonical_every_position(void)
{
    static const uint64_t mods[] = {Q61, Q50};
    for (size_t m = 0; m < 2; m++) {
        const uint64_t q = mods[m];
        const uint64_t bad_values[] = {q, q + 1, UINT64_C(1) << 61, UINT64_C(1) << 62,
                                       UINT64_C(1) << 63, UINT64_MAX};
        for (size_t n = 8; n <= 32; n *= 2) {
            mpce_ntt *ctx = make_ctx(n, &q, 1);
            uint64_t *in = alloc_words(n), *out = alloc_words(n);
            for (size_t i = 0; i < n; i++)
                in[i] = q - 1 - i;
            CU_ASSERT_EQUAL(mpce_ntt_forward(ctx, NULL, in, out, 1), MPCE_OK);
            for (size_t pos = 0; pos < n; pos++)
                for (size_t v = 0; v < sizeof(bad_values) / sizeof(bad_values[0]); v++) {
                    const uint64_t keep = in[pos];
                    char want[32];
                    in[pos] = bad_values[v];
                    snprintf(want, sizeof(want), "in[%zu] = ", pos);
                    TU_ASSERT_ERROR(mpce_ntt_forward(ctx, NULL, in, out, 1), MPCE_ERR_ARG,
                                    want);
                    in[pos] = keep;
                }
            free(in);
            free(out);
            mpce_ntt_free(ctx);
        }
    }
}

/* Every variant of the input check this CPU runs (portable, AVX2,
 * AVX-512: the API uses only the best) on rows of every length around the
 * vector steps, from a misaligned start: q - 1 everywhere passes, one bad
 * word anywhere fails. */
static void test_check_variants(void)
{
    static const uint64_t mods[] = {Q61, Q50};
    for (size_t m = 0; m < 2; m++) {
        const uint64_t q = mods[m];
        const uint64_t bad_values[] = {q, q + 1, UINT64_C(1) << 62, UINT64_MAX};
        uint64_t *buf = alloc_words(72);
        uint64_t *row = buf + 1; /* 8-byte aligned, not 64 */
        for (size_t n = 1; n <= 70; n++) {
            int v[4];
            for (size_t i = 0; i < n; i++)
                row[i] = q - 1 - (i % 3);
            unsigned k = mpce_ntt_check_variants(row, n, q, v);
            CU_ASSERT_FATAL(k >= 1 && k <= 3);
            for (unsigned j = 0; j < k; j++)
                CU_ASSERT_EQUAL(v[j], 0);
            for (size_t pos = 0; pos < n; pos++)
                for (size_t b = 0; b < sizeof(bad_values) / sizeof(bad_values[0]); b++) {
                    const uint64_t keep = row[pos];
                    row[pos] = bad_values[b];
                    mpce_ntt_check_variants(row, n, q, v);
                    for (unsigned j = 0; j < k; j++)
                        if (v[j] != 1) {
                            printf("\n  check variant %u missed %llu at %zu of %zu\n", j,
                                   (unsigned long long)bad_values[b], pos, n);
                            CU_FAIL("a check variant missed a bad word");
                        }
                    row[pos] = keep;
                }
        }
        free(buf);
    }
}

/*
 * Implementations that check inputs as they read them
 * (MPCE_IMPL_CHECKS_NTT_INPUT) get out-of-place calls unchecked. Every
 * first pass of the kernels (n = 16 alone; 32 and 8192 a radix-2 stage;
 * 64 and 256 a radix-4 pass inside the block; 4096 radix-4 over the whole
 * row; the inverse's head) must see a bad word anywhere in any row, and the
 * engine must then zero out and name the first bad word, as its own check
 * does for the other implementations. Also through two threads, the bad
 * word in the second slice.
 */
static void refusal_case(mpce_ntt *ctx, const char *impl, size_t n, const uint64_t *q,
                         size_t words, uint64_t *in, uint64_t *b, uint64_t *out)
{
    const size_t l = 2;
    static const char *const what[] = {"forward", "inverse", "mul a", "mul b"};
    for (size_t row = 0; row < words / n; row++) {
        const uint64_t qr = q[row % l];
        const size_t at[] = {0, n / 4, n / 2 + 1, n - 1};
        /* 2^52: past IFMA's limbs; for a 61-bit q, 2^61 instead. */
        const uint64_t limb = qr < (UINT64_C(1) << 52) ? UINT64_C(1) << 52 : UINT64_C(1) << 61;
        const uint64_t vals[] = {qr, qr + 1, limb, UINT64_MAX};
        for (size_t p = 0; p < 4; p++) {
            const size_t idx = row * n + at[p];
            const uint64_t keep = in[idx];
            in[idx] = vals[p];
            for (int op = 0; op < 4; op++) {
                char want[48];
                snprintf(want, sizeof(want), "%s[%zu] = %llu", op == 2 ? "a" : op == 3 ? "b" : "in",
                         idx, (unsigned long long)vals[p]);
                fill_pattern(out, words);
                mpce_status st = op == 0   ? mpce_ntt_forward(ctx, impl, in, out, words / n / l)
                                 : op == 1 ? mpce_ntt_inverse(ctx, impl, in, out, words / n / l)
                                 : op == 2 ? mpce_ntt_mul(ctx, impl, in, b, out, words / n / l)
                                           : mpce_ntt_mul(ctx, impl, b, in, out, words / n / l);
                if (st != MPCE_ERR_ARG || strstr(mpce_last_error(), want) == NULL ||
                    !all_zero(out, words)) {
                    fprintf(stderr, "  %s %s N = %zu: word %zu = %llu: %s (%s)\n", impl,
                            what[op], n, idx, (unsigned long long)vals[p], mpce_status_name(st),
                            mpce_last_error());
                    CU_FAIL("a bad input word was not refused as ntt.h says");
                }
            }
            in[idx] = keep;
        }
    }
}

typedef void (*refusal_fn)(mpce_ntt *ctx, const char *impl, size_t n, const uint64_t *q,
                           size_t words, uint64_t *in, uint64_t *b, uint64_t *out);

/* Every implementation that serves it, through case_fn, at each size whose
 * kernels take a different first pass (n = 16 alone; 32 and 8192 a radix-2
 * stage; 64 and 256 a radix-4 pass inside the block; 2048 and 4096 radix-4
 * over the whole row), two moduli a polynomial (61 and 50 bits, or 50 and 50
 * for IFMA), two polynomials a call. */
static void refusal_shapes(refusal_fn case_fn, uint64_t seed0)
{
    static const uint64_t sets[2][2] = {{Q61, Q50}, {Q50, Q50}};
    static const size_t sizes[] = {8, 16, 32, 64, 256, 2048, 4096, 8192};
    const char *names[MAX_IMPLS];
    size_t ni = ntt_impls(names);
    const size_t l = 2, batch = 2;
    for (size_t m = 0; m < 2; m++) {
        const uint64_t *q = sets[m];
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
            const size_t n = sizes[s], words = n * l * batch;
            mpce_ntt *ctx = make_ctx(n, q, l);
            uint64_t *in = alloc_words(words), *b = alloc_words(words), *out = alloc_words(words);
            uint64_t seed = seed0 + s;
            fill_random(in, n, q, l, batch, &seed);
            fill_random(b, n, q, l, batch, &seed);
            for (size_t k = 0; k < ni; k++)
                if (tu_ntt_serves(ctx, names[k]))
                    case_fn(ctx, names[k], n, q, words, in, b, out);
            free(in);
            free(b);
            free(out);
            mpce_ntt_free(ctx);
        }
    }
}

/* Whether impl carries MPCE_IMPL_CHECKS_NTT_IN_PLACE (and is not async). */
static int impl_checks_in_place(const char *impl)
{
    const unsigned flags = tu_impl_flags(tu_engine(0), impl);
    return (flags & MPCE_IMPL_CHECKS_NTT_IN_PLACE) && !(flags & MPCE_IMPL_ASYNC);
}

/*
 * In place under MPCE_NTT_REFUSAL_ZERO the kernels flagged
 * MPCE_IMPL_CHECKS_NTT_IN_PLACE get their inputs unchecked too: every first
 * pass must see a bad word before it overwrites it, and the array must come
 * back zeroed. The message names the word where the engine checked, or
 * where it lies in mul's operand that out is not (left intact), and says
 * it cannot where a kernel refused the array it overwrote. Under KEEP, the
 * array is untouched and named.
 */
static void refusal_case_in_place(mpce_ntt *ctx, const char *impl, size_t n, const uint64_t *q,
                                  size_t words, uint64_t *in, uint64_t *b, uint64_t *buf)
{
    const size_t l = 2, batch = words / n / l;
    const int kernel = impl_checks_in_place(impl);
    /* 4, 5: the bad word in the operand out is not: nameable either way. */
    static const char *const what[] = {"forward", "inverse", "mul a",
                                       "mul b",   "mul b (out = a)", "mul a (out = b)"};
    uint64_t *other = alloc_words(words);
    for (size_t row = 0; row < words / n; row++) {
        const uint64_t qr = q[row % l];
        const size_t at[] = {0, n / 2 + 1, n - 1};
        /* 2^52: past IFMA's limbs; for a 61-bit q, 2^61 instead. */
        const uint64_t limb = qr < (UINT64_C(1) << 52) ? UINT64_C(1) << 52 : UINT64_C(1) << 61;
        const uint64_t vals[] = {qr, limb, UINT64_MAX};
        for (size_t p = 0; p < 3; p++) {
            const size_t idx = row * n + at[p];
            for (unsigned mode = MPCE_NTT_REFUSAL_KEEP; mode <= MPCE_NTT_REFUSAL_ZERO; mode++) {
                CU_ASSERT_FATAL(mpce_ntt_set_refusal(ctx, mode) == MPCE_OK);
                for (int op = 0; op < 6; op++) {
                    memcpy(buf, in, words * 8);
                    memcpy(other, b, words * 8);
                    (op < 4 ? buf : other)[idx] = vals[p];
                    mpce_status st = op == 0   ? mpce_ntt_forward(ctx, impl, buf, buf, batch)
                                     : op == 1 ? mpce_ntt_inverse(ctx, impl, buf, buf, batch)
                                     : op == 2 ? mpce_ntt_mul(ctx, impl, buf, b, buf, batch)
                                     : op == 3 ? mpce_ntt_mul(ctx, impl, b, buf, buf, batch)
                                     : op == 4 ? mpce_ntt_mul(ctx, impl, buf, other, buf, batch)
                                               : mpce_ntt_mul(ctx, impl, other, buf, buf, batch);
                    char want[64];
                    if (mode == MPCE_NTT_REFUSAL_ZERO && kernel && op < 4)
                        snprintf(want, sizeof(want), "cannot be named");
                    else
                        snprintf(want, sizeof(want), "%s[%zu] = %llu",
                                 op == 2 || op == 5 ? "a" : op >= 3 ? "b" : "in", idx,
                                 (unsigned long long)vals[p]);
                    int left_ok = 1;
                    if (op >= 4) {
                        /* The operand out is not: never written. */
                        other[idx] = b[idx];
                        left_ok = memcmp(other, b, words * 8) == 0;
                    }
                    if (mode == MPCE_NTT_REFUSAL_ZERO) {
                        left_ok = left_ok && all_zero(buf, words);
                    } else if (op >= 4) {
                        left_ok = memcmp(buf, in, words * 8) == 0;
                    } else {
                        const uint64_t keep = buf[idx];
                        buf[idx] = in[idx];
                        left_ok = keep == vals[p] && memcmp(buf, in, words * 8) == 0;
                    }
                    if (st != MPCE_ERR_ARG || strstr(mpce_last_error(), want) == NULL ||
                        !left_ok) {
                        fprintf(stderr, "  %s %s in place (%s) N = %zu: word %zu = %llu: %s "
                                "(%s)%s\n", impl, what[op],
                                mode == MPCE_NTT_REFUSAL_ZERO ? "zero" : "keep", n, idx,
                                (unsigned long long)vals[p], mpce_status_name(st),
                                mpce_last_error(), left_ok ? "" : "; the array was changed");
                        CU_FAIL("a bad input word in place was not refused as ntt.h says");
                    }
                }
            }
        }
    }
    free(other);
    CU_ASSERT(mpce_ntt_set_refusal(ctx, MPCE_NTT_REFUSAL_KEEP) == MPCE_OK);
}

static void test_kernel_checks_in_place(void)
{
    const char *names[MAX_IMPLS];
    size_t ni = ntt_impls(names);
    static const uint64_t q61_50[2] = {Q61, Q50};
    const size_t l = 2, batch = 2;
    refusal_shapes(refusal_case_in_place, 23);
    /* A good call in place is the same under either mode. */
    const size_t n = 4096, words = n * l * batch;
    mpce_ntt *ctx = make_ctx(n, q61_50, l);
    uint64_t *in = alloc_words(words), *x = alloc_words(words), *y = alloc_words(words);
    uint64_t seed = 31;
    fill_random(in, n, q61_50, l, batch, &seed);
    for (size_t k = 0; k < ni; k++) {
        if (!tu_ntt_serves(ctx, names[k]))
            continue;
        memcpy(x, in, words * 8);
        memcpy(y, in, words * 8);
        CU_ASSERT(mpce_ntt_set_refusal(ctx, MPCE_NTT_REFUSAL_KEEP) == MPCE_OK);
        CU_ASSERT(mpce_ntt_forward(ctx, names[k], x, x, batch) == MPCE_OK);
        CU_ASSERT(mpce_ntt_mul(ctx, names[k], x, in, x, batch) == MPCE_OK);
        CU_ASSERT(mpce_ntt_set_refusal(ctx, MPCE_NTT_REFUSAL_ZERO) == MPCE_OK);
        CU_ASSERT(mpce_ntt_forward(ctx, names[k], y, y, batch) == MPCE_OK);
        CU_ASSERT(mpce_ntt_mul(ctx, names[k], y, in, y, batch) == MPCE_OK);
        CU_ASSERT_EQUAL(memcmp(x, y, words * 8), 0);
        CU_ASSERT(mpce_ntt_inverse(ctx, names[k], y, y, batch) == MPCE_OK);
    }
    CU_ASSERT_EQUAL(mpce_ntt_refusal(ctx), MPCE_NTT_REFUSAL_ZERO);
    TU_ASSERT_ERROR(mpce_ntt_set_refusal(ctx, 2), MPCE_ERR_ARG, "mode = 2");
    CU_ASSERT_EQUAL(mpce_ntt_refusal(ctx), MPCE_NTT_REFUSAL_ZERO);
    CU_ASSERT_EQUAL(mpce_ntt_refusal(NULL), MPCE_NTT_REFUSAL_KEEP);
    /* The *_buf calls check host buffers first under either mode. */
    {
        mpce_buffer *hb = NULL;
        mpce_queue *hq = NULL;
        CU_ASSERT_FATAL(mpce_buffer_new(tu_engine(0), MPCE_MEMORY_HOST, words * 8, &hb) ==
                        MPCE_OK);
        CU_ASSERT_FATAL(mpce_queue_new(tu_engine(0), MPCE_MEMORY_HOST, &hq) == MPCE_OK);
        memcpy(x, in, words * 8);
        x[7] = Q61;
        CU_ASSERT(mpce_buffer_upload(hq, hb, 0, x, words * 8) == MPCE_OK);
        TU_ASSERT_ERROR(mpce_ntt_forward_buf(ctx, hq, NULL, hb, hb, batch), MPCE_ERR_ARG,
                        "[7] = ");
        CU_ASSERT(mpce_queue_wait(hq) == MPCE_OK);
        CU_ASSERT(mpce_buffer_download(hq, y, hb, 0, words * 8) == MPCE_OK);
        CU_ASSERT(mpce_queue_wait(hq) == MPCE_OK);
        CU_ASSERT_EQUAL(memcmp(x, y, words * 8), 0);
        mpce_queue_free(hq);
        mpce_buffer_free(hb);
    }
    TU_ASSERT_ERROR(mpce_ntt_set_refusal(NULL, MPCE_NTT_REFUSAL_ZERO), MPCE_ERR_ARG,
                    "ctx is NULL");
    free(in);
    free(x);
    free(y);
    mpce_ntt_free(ctx);
}

static void test_kernel_checks_every_path(void)
{
    const char *names[MAX_IMPLS];
    size_t ni = ntt_impls(names);
    static const uint64_t q61_50[2] = {Q61, Q50};
    const size_t l = 2;
    refusal_shapes(refusal_case, 11);
    /* Sliced: 64 polynomials of 4096 words over two threads. */
    mpce_engine *e = NULL;
    CU_ASSERT_FATAL(tu_engine_conf("[engine]\nthreads = 2\n", &e) == MPCE_OK);
    const size_t n = 4096, polys = 64, words = n * l * polys;
    mpce_ntt *ctx = NULL;
    CU_ASSERT_FATAL(mpce_ntt_new(e, n, q61_50, l, &ctx) == MPCE_OK);
    uint64_t *in = alloc_words(words), *out = alloc_words(words);
    uint64_t seed = 5;
    fill_random(in, n, q61_50, l, polys, &seed);
    const size_t late = words - 3, early = words / 2 + n + 7; /* row 65 */
    in[late] = UINT64_MAX;
    in[early] = Q50; /* row 1's modulus: the first bad word */
    for (size_t k = 0; k < ni; k++) {
        if (!tu_ntt_serves(ctx, names[k]))
            continue;
        char want[48];
        snprintf(want, sizeof(want), "in[%zu] = %llu", early, (unsigned long long)Q50);
        fill_pattern(out, words);
        TU_ASSERT_ERROR(mpce_ntt_forward(ctx, names[k], in, out, polys), MPCE_ERR_ARG, want);
        CU_ASSERT(all_zero(out, words));
        /* In place under ZERO, the slices on both threads zeroed. */
        memcpy(out, in, words * 8);
        CU_ASSERT(mpce_ntt_set_refusal(ctx, MPCE_NTT_REFUSAL_ZERO) == MPCE_OK);
        TU_ASSERT_ERROR(mpce_ntt_forward(ctx, names[k], out, out, polys), MPCE_ERR_ARG,
                        impl_checks_in_place(names[k]) ? "cannot be named" : want);
        CU_ASSERT(all_zero(out, words));
        /* mul in place on a good a, the bad words in b, over both threads:
         * b is named (it is intact) and out zeroed. */
        uint64_t *good = alloc_words(words);
        fill_random(good, n, q61_50, l, polys, &seed);
        memcpy(out, good, words * 8);
        snprintf(want, sizeof(want), "b[%zu] = %llu", early, (unsigned long long)Q50);
        TU_ASSERT_ERROR(mpce_ntt_mul(ctx, names[k], out, in, out, polys), MPCE_ERR_ARG, want);
        CU_ASSERT(all_zero(out, words));
        free(good);
        CU_ASSERT(mpce_ntt_set_refusal(ctx, MPCE_NTT_REFUSAL_KEEP) == MPCE_OK);
    }
    free(in);
    free(out);
    mpce_ntt_free(ctx);
    mpce_engine_free(e);
}

static void test_invalid_ops(void)
{
    const char *names[MAX_IMPLS];
    size_t ni = ntt_impls(names);
    const uint64_t mods[] = {Q61, Q50};
    const size_t n = 16, l = 2, batch = 2, words = n * l * batch;
    const size_t bad = (1 * l + 1) * n + 5; /* polynomial 1, row 1, coefficient 5 */
    mpce_ntt *ctx = make_ctx(n, mods, l);
    uint64_t *in = alloc_words(words), *b = alloc_words(words), *out = alloc_words(words);
    uint64_t seed = 3;
    fill_random(in, n, mods, l, batch, &seed);
    fill_random(b, n, mods, l, batch, &seed);

    for (size_t k = 0; k < ni; k++) {
        if (!tu_ntt_serves(ctx, names[k]))
            continue;
        const char *impl = names[k];
        /* A word equal to its row's modulus is out of range (Q50 is row 1's).
         * Out of place, out is zeroed (ntt.h), whether the engine or the
         * kernel found it; the message is the engine's either way. */
        in[bad] = Q50;
        fill_pattern(out, words);
        TU_ASSERT_ERROR(mpce_ntt_forward(ctx, impl, in, out, batch), MPCE_ERR_ARG, "in[53]");
        CU_ASSERT(all_zero(out, words));
        fill_pattern(out, words);
        TU_ASSERT_ERROR(mpce_ntt_inverse(ctx, impl, in, out, batch), MPCE_ERR_ARG, "in[53]");
        CU_ASSERT(all_zero(out, words));
        fill_pattern(out, words);
        TU_ASSERT_ERROR(mpce_ntt_mul(ctx, impl, in, b, out, batch), MPCE_ERR_ARG, "a[53]");
        CU_ASSERT(all_zero(out, words));
        fill_pattern(out, words);
        TU_ASSERT_ERROR(mpce_ntt_mul(ctx, impl, b, in, out, batch), MPCE_ERR_ARG, "b[53]");
        CU_ASSERT(all_zero(out, words));
        /* In place, nothing is written: not the input, not the other operand. */
        uint64_t *copy = alloc_words(words), *bcopy = alloc_words(words);
        memcpy(copy, in, words * 8);
        memcpy(bcopy, b, words * 8);
        TU_ASSERT_ERROR(mpce_ntt_forward(ctx, impl, in, in, batch), MPCE_ERR_ARG, "in[53]");
        TU_ASSERT_ERROR(mpce_ntt_inverse(ctx, impl, in, in, batch), MPCE_ERR_ARG, "in[53]");
        TU_ASSERT_ERROR(mpce_ntt_mul(ctx, impl, in, b, in, batch), MPCE_ERR_ARG, "a[53]");
        TU_ASSERT_ERROR(mpce_ntt_mul(ctx, impl, b, in, b, batch), MPCE_ERR_ARG, "b[53]");
        CU_ASSERT_EQUAL(memcmp(copy, in, words * 8), 0);
        CU_ASSERT_EQUAL(memcmp(bcopy, b, words * 8), 0);
        free(copy);
        free(bcopy);
        /* The same value is fine in row 0 (Q50 < Q61). */
        in[bad] = 0;
        in[5] = Q50;
        CU_ASSERT_EQUAL(mpce_ntt_forward(ctx, impl, in, out, batch), MPCE_OK);
        in[5] = UINT64_MAX;
        fill_pattern(out, words);
        TU_ASSERT_ERROR(mpce_ntt_forward(ctx, impl, in, out, batch), MPCE_ERR_ARG, "in[5]");
        CU_ASSERT(all_zero(out, words));
        in[5] = 0;

        /* batch = 0 does nothing and succeeds. */
        fill_pattern(out, words);
        CU_ASSERT_EQUAL(mpce_ntt_forward(ctx, impl, in, out, 0), MPCE_OK);
        CU_ASSERT_EQUAL(mpce_ntt_inverse(ctx, impl, in, out, 0), MPCE_OK);
        CU_ASSERT_EQUAL(mpce_ntt_mul(ctx, impl, in, b, out, 0), MPCE_OK);
        CU_ASSERT(all_pattern(out, words));

        TU_ASSERT_ERROR(mpce_ntt_forward(ctx, impl, NULL, out, 1), MPCE_ERR_ARG, "in");
        TU_ASSERT_ERROR(mpce_ntt_forward(ctx, impl, in, NULL, 1), MPCE_ERR_ARG, "out");
        TU_ASSERT_ERROR(mpce_ntt_inverse(ctx, impl, NULL, out, 1), MPCE_ERR_ARG, "in");
        TU_ASSERT_ERROR(mpce_ntt_inverse(ctx, impl, in, NULL, 1), MPCE_ERR_ARG, "out");
        TU_ASSERT_ERROR(mpce_ntt_mul(ctx, impl, NULL, b, out, 1), MPCE_ERR_ARG, "a");
        TU_ASSERT_ERROR(mpce_ntt_mul(ctx, impl, in, NULL, out, 1), MPCE_ERR_ARG, "b");
        TU_ASSERT_ERROR(mpce_ntt_mul(ctx, impl, in, b, NULL, 1), MPCE_ERR_ARG, "out");
        CU_ASSERT(all_pattern(out, words));

        /* Shifted by one coefficient: neither in place nor separate. */
        uint64_t *big = alloc_words(words + 1);
        memcpy(big, in, words * 8);
        TU_ASSERT_ERROR(mpce_ntt_forward(ctx, impl, big, big + 1, batch), MPCE_ERR_ARG,
                        "in and out overlap without being the same array");
        TU_ASSERT_ERROR(mpce_ntt_inverse(ctx, impl, big + 1, big, batch), MPCE_ERR_ARG,
                        "in and out overlap");
        TU_ASSERT_ERROR(mpce_ntt_mul(ctx, impl, big, b, big + 1, batch), MPCE_ERR_ARG,
                        "a and out overlap");
        TU_ASSERT_ERROR(mpce_ntt_mul(ctx, impl, b, big + 1, big, batch), MPCE_ERR_ARG,
                        "b and out overlap");
        CU_ASSERT_EQUAL(memcmp(big, in, words * 8), 0); /* nothing written */
        /* Exactly in place, for every operand, is fine. */
        CU_ASSERT_EQUAL(mpce_ntt_mul(ctx, impl, big, big, big, batch), MPCE_OK);
        free(big);
    }
    TU_ASSERT_ERROR(mpce_ntt_forward(NULL, "auto", in, out, 1), MPCE_ERR_ARG, "ctx");
    CU_ASSERT_EQUAL(mpce_ntt_forward(ctx, "no-such-ntt", in, out, 1), MPCE_ERR_NOIMPL);
    free(in);
    free(b);
    free(out);
    mpce_ntt_free(ctx);
}

static const struct tu_test tests[] = {
    {"impls_listed", test_impls_listed},
    {"kat", test_kat},
    {"roots", test_roots},
    {"round_trip", test_round_trip},
    {"extremes", test_extremes},
    {"cross_impl", test_cross_impl},
    {"extremes at every kernel path", test_extremes_every_path},
    {"mul_schoolbook", test_mul_schoolbook},
    {"forward equals SPEC's sum on random inputs", test_reference},
    {"invalid_new", test_invalid_new},
    {"invalid_ops", test_invalid_ops},
    {"canonical check: every position, every bad value", test_canonical_every_position},
    {"canonical check: every variant this CPU runs, lengths 1..70", test_check_variants},
    {"canonical check inside the kernels: every first pass", test_kernel_checks_every_path},
    {"canonical check in place: MPCE_NTT_REFUSAL_KEEP and _ZERO", test_kernel_checks_in_place},
    {NULL, NULL},
};

int main(void)
{
    return tu_main("ntt", tests);
}
