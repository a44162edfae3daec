/* SPDX-License-Identifier: Apache-2.0 */
/*
 * LPN fold suite, through the public API only: every lpn.txt record, a
 * differential test against a straightforward reference on OpenSSL's AES,
 * continuation across calls, and the engine's argument checks, for every
 * LPN implementation the engine offers.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "engine/verify/kat.h"
#include "ref_lpn.h"
#include "testutil.h"

#define MAX_IMPLS 16
#define PATTERN 0xA5

static size_t lpn_impls(const char **names)
{
    return tu_impls(tu_engine(0), MPCE_PRIM_LPN, names, MAX_IMPLS);
}

static int all_bytes(const uint8_t *p, size_t len, uint8_t v)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] != v)
            return 0;
    return 1;
}

static void sha256(const uint8_t *p, size_t len, uint8_t md[32])
{
    unsigned mdlen = 0;
    CU_ASSERT_FATAL(EVP_Digest(p, len, md, &mdlen, EVP_sha256(), NULL) == 1);
}

/* The independent reference, ref_fold: tests/ref_lpn.h. */

/* ---- (1) known answers ---------------------------------------------------- */

/* ctr(key, 0, n) through the engine's PRG (the vectors' pre_ctr_key rule). */
static int engine_ctr(const uint8_t *key, size_t key_len, uint8_t *out, size_t n)
{
    mpce_prg *prg = NULL;
    int ok = key_len == 16 && mpce_prg_new(tu_engine(0), key, 1, &prg) == MPCE_OK &&
             mpce_prg_ctr(prg, NULL, 0, 0, out, n) == MPCE_OK;
    mpce_prg_free(prg);
    return ok;
}

static int kat_record(const char *impl, const struct mpce_kat_record *rec)
{
    uint8_t *seed = NULL, *pre = NULL, *out = NULL, *key = NULL, md[32];
    size_t seed_len = 0, pre_len = 0, key_len = 0;
    uint64_t logk = 0, c0 = 0, n = 0, want_consumed = 0, consumed = 0;
    const char *out_in;
    mpce_lpn *ctx = NULL;
    int ok = 0;

    if (mpce_kat_hex(rec, "seed", &seed, &seed_len) || mpce_kat_u64(rec, "logk", &logk) ||
        mpce_kat_u64(rec, "c0", &c0) || mpce_kat_u64(rec, "n", &n) ||
        mpce_kat_u64(rec, "blocks_consumed", &want_consumed) || logk < 1 || logk > 30)
        goto done;
    const size_t k = (size_t)1 << logk;
    if (mpce_kat_get(rec, "pre")) {
        if (mpce_kat_hex(rec, "pre", &pre, &pre_len) || pre_len != 16 * k)
            goto done;
    } else {
        pre = malloc(16 * k);
        if (!pre || mpce_kat_hex(rec, "pre_ctr_key", &key, &key_len) ||
            !engine_ctr(key, key_len, pre, k))
            goto done;
        if (mpce_kat_get(rec, "pre_sha256")) {
            sha256(pre, 16 * k, md);
            if (!tu_kat_expect_hex(rec, "pre_sha256", md, 32))
                goto done;
        }
    }
    out = calloc(n ? n : 1, 16);
    if (!out)
        goto done;
    out_in = mpce_kat_get(rec, "out_in");
    if (out_in && strcmp(out_in, "zeros") != 0) {
        uint8_t *in = NULL;
        size_t in_len = 0;
        if (mpce_kat_hex(rec, "out_in", &in, &in_len) || in_len != 16 * n) {
            free(in);
            goto done;
        }
        memcpy(out, in, in_len);
        free(in);
    } else if (mpce_kat_get(rec, "out_in_ctr_key")) {
        free(key);
        key = NULL;
        if (mpce_kat_hex(rec, "out_in_ctr_key", &key, &key_len) ||
            !engine_ctr(key, key_len, out, n))
            goto done;
    }
    if (mpce_lpn_new(tu_engine(0), seed, (unsigned)logk, &ctx) != MPCE_OK ||
        mpce_lpn_fold(ctx, impl, c0, pre, k, out, n, &consumed) != MPCE_OK)
        goto done;
    ok = consumed == want_consumed && mpce_lpn_blocks_consumed(n) == want_consumed;
    if (mpce_kat_get(rec, "out"))
        ok &= tu_kat_expect_hex(rec, "out", out, 16 * n);
    if (mpce_kat_get(rec, "out_sha256")) {
        sha256(out, 16 * n, md);
        ok &= tu_kat_expect_hex(rec, "out_sha256", md, 32);
    }
    if (mpce_kat_get(rec, "out_first"))
        ok &= tu_kat_expect_hex(rec, "out_first", out, 16);
    if (mpce_kat_get(rec, "out_last"))
        ok &= tu_kat_expect_hex(rec, "out_last", out + 16 * (n - 1), 16);
done:
    if (!ok)
        fprintf(stderr, "  %s: lpn.txt line %u (op %s) failed: %s\n", impl, rec->line, rec->op,
                mpce_last_error());
    mpce_lpn_free(ctx);
    free(seed);
    free(pre);
    free(out);
    free(key);
    return ok;
}

static void test_kat(void)
{
    const char *names[MAX_IMPLS];
    size_t nimpl = lpn_impls(names);
    tu_kat_run("lpn.txt", 12, names, nimpl, kat_record);
}

/* ---- (2) differential against the reference ------------------------------ */

static void test_diff(void)
{
    static const size_t ns[] = {0, 1, 3, 7, 9, 17, 31, 33, 65, 127, 1000};
    static const uint64_t c0s[] = {0, 5, 0xfffffffffffffff9ull, 0xfffffffffffff000ull,
                                   0x123456789abcdefull};
    const char *names[MAX_IMPLS];
    size_t nimpl = lpn_impls(names);

    for (size_t i = 0; i < nimpl; i++) {
        for (size_t a = 0; a < sizeof(ns) / sizeof(ns[0]); a++) {
            for (size_t b = 0; b < sizeof(c0s) / sizeof(c0s[0]); b++) {
                unsigned logk = 1 + (unsigned)((3 * a + 5 * b) % 14);
                size_t n = ns[a], k = (size_t)1 << logk;
                uint8_t seed[16];
                uint8_t *table = tu_alloc_misaligned(16 * k, 1 + b);
                uint8_t *out = tu_alloc_misaligned(16 * n + 16, 3 + a);
                uint8_t *want = malloc(16 * n + 16);
                uint64_t consumed = 0;
                mpce_lpn *ctx;

                CU_ASSERT_FATAL(table && out && want);
                tu_splitmix_bytes(1000 + 10 * a + b, seed, 16);
                tu_splitmix_bytes(2000 + 10 * a + b, table, 16 * k);
                tu_splitmix_bytes(3000 + 10 * a + b, want, 16 * n);
                memcpy(out, want, 16 * n);
                memset(out + 16 * n, PATTERN, 16);
                CU_ASSERT_FATAL(ref_fold(seed, logk, c0s[b], table, want, n) == 0);
                CU_ASSERT_FATAL(mpce_lpn_new(tu_engine(0), seed, logk, &ctx) == MPCE_OK);
                CU_ASSERT_EQUAL(mpce_lpn_fold(ctx, names[i], c0s[b], table, k, out, n,
                                              &consumed),
                                MPCE_OK);
                CU_ASSERT(memcmp(out, want, 16 * n) == 0);
                CU_ASSERT(all_bytes(out + 16 * n, 16, PATTERN));
                CU_ASSERT_EQUAL(consumed, mpce_lpn_blocks_consumed(n));
                mpce_lpn_free(ctx);
                tu_free_misaligned(table);
                tu_free_misaligned(out);
                free(want);
            }
        }
    }
}

/* The skeleton's row loop at every knob value that changes its path: the
 * prefetched and the plain part of a chunk, a chunk that ends mid-call or
 * is shorter than the prefetch distance, odd lengths, the n mod 4 tail
 * alone (n < 4) and after a main part, tables of 2 rows (every output sees
 * repeated indices, which cancel in pairs) up to 2^20 rows (16 MiB, past
 * the index bits of a 32-bit byte offset's low half), and outputs at every
 * misalignment. The reference is the same output-by-output loop as above. */
static int has_lpn_knobs(const char *impl)
{
    const mpce_impl_info *rows;
    size_t n;
    if (mpce_list(tu_engine(0), 0, &rows, &n) != MPCE_OK)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].impl, impl) == 0)
            return rows[i].knobs != NULL && strstr(rows[i].knobs, "prefetch (") != NULL;
    return 0;
}

static void test_knob_paths(void)
{
    static const size_t ns[] = {1, 2, 3, 4, 5, 6, 7, 17, 18, 19, 63, 64, 65, 66, 67, 130, 1029};
    static const unsigned logks[] = {1, 4, 13, 20};
    static const char *const knobs[] = {"", ":chunk=64:prefetch=16", ":chunk=64:prefetch=2",
                                        ":chunk=128:prefetch=8", ":chunk=512:prefetch=4",
                                        ":chunk=64:prefetch=0"};
    const char *names[MAX_IMPLS];
    size_t nimpl = lpn_impls(names);

    for (size_t l = 0; l < sizeof(logks) / sizeof(logks[0]); l++) {
        const size_t k = (size_t)1 << logks[l];
        uint8_t *table = tu_alloc_misaligned(16 * k, l);
        uint8_t seed[16];
        mpce_lpn *ctx;
        CU_ASSERT_FATAL(table != NULL);
        tu_splitmix_bytes(40 + l, seed, 16);
        tu_splitmix_bytes(50 + l, table, 16 * k);
        CU_ASSERT_FATAL(mpce_lpn_new(tu_engine(0), seed, logks[l], &ctx) == MPCE_OK);
        for (size_t a = 0; a < sizeof(ns) / sizeof(ns[0]); a++) {
            const size_t n = ns[a];
            const uint64_t c0 = 1000 * a + 0xfffffffffffff000ull * (a % 2);
            uint8_t *want = malloc(16 * n);
            CU_ASSERT_FATAL(want != NULL);
            tu_splitmix_bytes(60 + a, want, 16 * n);
            uint8_t *in = malloc(16 * n);
            CU_ASSERT_FATAL(in != NULL);
            memcpy(in, want, 16 * n);
            CU_ASSERT_FATAL(ref_fold(seed, logks[l], c0, table, want, n) == 0);
            for (size_t i = 0; i < nimpl; i++) {
                const int knobbed = has_lpn_knobs(names[i]);
                for (size_t v = 0; v < (knobbed ? sizeof(knobs) / sizeof(knobs[0]) : 1); v++) {
                    char spec[96];
                    snprintf(spec, sizeof(spec), "%s%s", names[i], knobs[v]);
                    uint8_t *out = tu_alloc_misaligned(16 * n + 16, (a + v) % 16);
                    uint64_t consumed = 0;
                    CU_ASSERT_FATAL(out != NULL);
                    memcpy(out, in, 16 * n);
                    memset(out + 16 * n, PATTERN, 16);
                    CU_ASSERT_EQUAL(mpce_lpn_fold(ctx, spec, c0, table, k, out, n, &consumed),
                                    MPCE_OK);
                    if (memcmp(out, want, 16 * n) != 0)
                        fprintf(stderr, "  %s logk=%u n=%zu differs from the reference\n", spec,
                                logks[l], n);
                    CU_ASSERT(memcmp(out, want, 16 * n) == 0);
                    CU_ASSERT(all_bytes(out + 16 * n, 16, PATTERN));
                    CU_ASSERT_EQUAL(consumed, mpce_lpn_blocks_consumed(n));
                    tu_free_misaligned(out);
                }
            }
            free(in);
            free(want);
        }
        mpce_lpn_free(ctx);
        tu_free_misaligned(table);
    }
}

/* An implementation that fails its self-test is skipped, and every test
 * above then runs without it and passes: this one fails instead, so that a
 * wrong fold (say, a fast path only some CPUs take) cannot pass unseen. */
static void test_no_failed_selftest(void)
{
    const mpce_impl_info *rows;
    size_t n;
    CU_ASSERT_FATAL(mpce_list(tu_engine(0), 1, &rows, &n) == MPCE_OK);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(rows[i].primitive, "lpn") != 0)
            continue;
        if (strcmp(rows[i].selftest, "fail") == 0)
            fprintf(stderr, "  %s: %s\n", rows[i].impl, rows[i].reason);
        CU_ASSERT(strcmp(rows[i].selftest, "fail") != 0);
    }
}

/* ---- (3) a call split in two continues the stream ------------------------ */

static void test_continue(void)
{
    static const size_t ns[] = {4, 8, 17, 1000, 1003};
    const char *names[MAX_IMPLS];
    size_t nimpl = lpn_impls(names);
    const unsigned logk = 12;
    const size_t k = (size_t)1 << logk;
    const uint64_t c0 = 0xfffffffffffffe00ull; /* the second part wraps */
    uint8_t seed[16];
    uint8_t *table = malloc(16 * k);
    mpce_lpn *ctx;

    CU_ASSERT_FATAL(table != NULL);
    tu_splitmix_bytes(11, seed, 16);
    tu_splitmix_bytes(12, table, 16 * k);
    CU_ASSERT_FATAL(mpce_lpn_new(tu_engine(0), seed, logk, &ctx) == MPCE_OK);
    for (size_t i = 0; i < nimpl; i++) {
        for (size_t a = 0; a < sizeof(ns) / sizeof(ns[0]); a++) {
            size_t n = ns[a];
            uint8_t *whole = calloc(n, 16), *parts = calloc(n, 16);
            uint64_t used_whole = 0, used1 = 0, used2 = 0;

            CU_ASSERT_FATAL(whole && parts);
            CU_ASSERT_EQUAL(mpce_lpn_fold(ctx, names[i], c0, table, k, whole, n, &used_whole),
                            MPCE_OK);
            for (size_t m = 0; m <= n; m += 4) {
                if (m > 48 && m + 48 < n && m % 200 != 0)
                    continue; /* the ends and a few interior split points */
                memset(parts, 0, 16 * n);
                CU_ASSERT_EQUAL(mpce_lpn_fold(ctx, names[i], c0, table, k, parts, m, &used1),
                                MPCE_OK);
                CU_ASSERT_EQUAL(mpce_lpn_fold(ctx, names[i], c0 + used1, table, k,
                                              parts + 16 * m, n - m, &used2),
                                MPCE_OK);
                CU_ASSERT(memcmp(whole, parts, 16 * n) == 0);
                CU_ASSERT_EQUAL(used1 + used2, used_whole);
            }
            free(whole);
            free(parts);
        }
    }
    mpce_lpn_free(ctx);
    free(table);
}

static void test_blocks_consumed(void)
{
    static const uint64_t want[] = {0, 3, 6, 9, 10, 13, 16, 19, 20, 23};
    for (uint64_t n = 0; n < 10; n++)
        CU_ASSERT_EQUAL(mpce_lpn_blocks_consumed(n), want[n]);
    CU_ASSERT_EQUAL(mpce_lpn_blocks_consumed(8192), 20480u);
    CU_ASSERT_EQUAL(mpce_lpn_blocks_consumed(4194304), 10485760u);
}

/* ---- (4) invalid arguments -------------------------------------------------- */

static void test_invalid_new(void)
{
    uint8_t seed[16] = {1};
    mpce_lpn *ctx = (mpce_lpn *)&seed; /* a sentinel that must survive */

    TU_ASSERT_ERROR(mpce_lpn_new(tu_engine(0), NULL, 10, &ctx), MPCE_ERR_ARG, "seed");
    TU_ASSERT_ERROR(mpce_lpn_new(tu_engine(0), seed, 0, &ctx), MPCE_ERR_ARG, "logk");
    TU_ASSERT_ERROR(mpce_lpn_new(tu_engine(0), seed, 31, &ctx), MPCE_ERR_ARG, "logk");
    CU_ASSERT(ctx == (mpce_lpn *)&seed);
}

static void test_invalid_fold(void)
{
    const unsigned logk = 6;
    const size_t k = (size_t)1 << logk, n = 9;
    uint8_t seed[16] = {2}, table[16 * 64 + 16], out[16 * 9];
    uint64_t consumed = 77;
    mpce_lpn *ctx;

    tu_splitmix_bytes(5, table, sizeof(table));
    CU_ASSERT_FATAL(mpce_lpn_new(tu_engine(0), seed, logk, &ctx) == MPCE_OK);
    memset(out, PATTERN, sizeof(out));
    TU_ASSERT_ERROR(mpce_lpn_fold(ctx, NULL, 0, NULL, k, out, n, &consumed), MPCE_ERR_ARG,
                    "table");
    TU_ASSERT_ERROR(mpce_lpn_fold(ctx, NULL, 0, table, k, NULL, n, &consumed), MPCE_ERR_ARG,
                    "out");
    TU_ASSERT_ERROR(mpce_lpn_fold(ctx, NULL, 0, table, k - 1, out, n, &consumed), MPCE_ERR_ARG,
                    "table_blocks");
    TU_ASSERT_ERROR(mpce_lpn_fold(ctx, NULL, 0, table, k + 1, out, n, &consumed), MPCE_ERR_ARG,
                    "table_blocks");
    TU_ASSERT_ERROR(mpce_lpn_fold(NULL, NULL, 0, table, k, out, n, &consumed), MPCE_ERR_ARG,
                    "ctx");
    CU_ASSERT(all_bytes(out, sizeof(out), PATTERN));
    CU_ASSERT_EQUAL(consumed, 77u);
    /* n = 0 folds nothing and consumes nothing. */
    CU_ASSERT_EQUAL(mpce_lpn_fold(ctx, NULL, 0, table, k, out, 0, &consumed), MPCE_OK);
    CU_ASSERT_EQUAL(consumed, 0u);
    CU_ASSERT(all_bytes(out, sizeof(out), PATTERN));
    mpce_lpn_free(ctx);
}

static const struct tu_test tests[] = {
    {"no LPN implementation failed its self-test", test_no_failed_selftest},
    {"known answers (every record, every implementation)", test_kat},
    {"differential against a reference on OpenSSL AES", test_diff},
    {"every knob path: chunk ends, prefetch, tails, misaligned out, 2 to 2^20 rows",
     test_knob_paths},
    {"a fold split in two continues with c0 + consumed", test_continue},
    {"blocks consumed", test_blocks_consumed},
    {"invalid context arguments", test_invalid_new},
    {"invalid fold arguments", test_invalid_fold},
    {NULL, NULL},
};

int main(void)
{
    return tu_main("lpn", tests);
}
