/*
 * NTT suite, through the public API only: every ntt.txt record, the roots of
 * each context, inverse(forward(x)) == x over the whole range of N, moduli
 * counts and batches (in place and out of place), agreement with schoolbook
 * negacyclic multiplication, agreement between implementations, and the
 * engine's argument and canonical-input checks, for every NTT implementation
 * that passed its self-test.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "engine/kat.h"
#include "testutil.h"

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

static uint64_t mulmod(uint64_t a, uint64_t b, uint64_t q)
{
    return (uint64_t)(((unsigned __int128)a * b) % q);
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
            x = mulmod(x, x, mods[r]);
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

/* ---- multiplication ----------------------------------------------------- */

/* c = a * b mod (X^n + 1, q), the definition. */
static void schoolbook(const uint64_t *a, const uint64_t *b, uint64_t *c, size_t n, uint64_t q)
{
    memset(c, 0, n * sizeof(uint64_t));
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            uint64_t p = mulmod(a[i], b[j], q);
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
        const char *impl = names[k];
        /* A word equal to its row's modulus is out of range (Q50 is row 1's). */
        in[bad] = Q50;
        fill_pattern(out, words);
        TU_ASSERT_ERROR(mpce_ntt_forward(ctx, impl, in, out, batch), MPCE_ERR_ARG, "in[53]");
        CU_ASSERT(all_pattern(out, words));
        TU_ASSERT_ERROR(mpce_ntt_inverse(ctx, impl, in, out, batch), MPCE_ERR_ARG, "in[53]");
        CU_ASSERT(all_pattern(out, words));
        TU_ASSERT_ERROR(mpce_ntt_mul(ctx, impl, in, b, out, batch), MPCE_ERR_ARG, "a[53]");
        CU_ASSERT(all_pattern(out, words));
        TU_ASSERT_ERROR(mpce_ntt_mul(ctx, impl, b, in, out, batch), MPCE_ERR_ARG, "b[53]");
        CU_ASSERT(all_pattern(out, words));
        /* The same value is fine in row 0 (Q50 < Q61). */
        in[bad] = 0;
        in[5] = Q50;
        CU_ASSERT_EQUAL(mpce_ntt_forward(ctx, impl, in, out, batch), MPCE_OK);
        in[5] = UINT64_MAX;
        fill_pattern(out, words);
        TU_ASSERT_ERROR(mpce_ntt_forward(ctx, impl, in, out, batch), MPCE_ERR_ARG, "in[5]");
        CU_ASSERT(all_pattern(out, words));
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
    {"mul_schoolbook", test_mul_schoolbook},
    {"invalid_new", test_invalid_new},
    {"invalid_ops", test_invalid_ops},
    {NULL, NULL},
};

int main(void)
{
    return tu_main("ntt", tests);
}
