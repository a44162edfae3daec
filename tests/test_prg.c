/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PRG suite, through the public API only: the known-answer vectors and a
 * differential test against OpenSSL's AES for every PRG implementation the
 * engine offers, the engine's argument checks, and the variable-time policy.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "engine/verify/kat.h"
#include "testutil.h"

#define MAX_IMPLS 16
#define PATTERN 0xA5

static size_t prg_impls(const char **names)
{
    return tu_impls(tu_engine(1), MPCE_PRIM_PRG, names, MAX_IMPLS);
}

/* Independent AES-128: OpenSSL, ECB without padding. */
static void ref_ecb(const uint8_t key[16], const uint8_t *in, uint8_t *out, size_t n)
{
    EVP_CIPHER_CTX *c;
    int len = 0;

    if (n == 0)
        return;
    c = EVP_CIPHER_CTX_new();
    CU_ASSERT_FATAL(c != NULL);
    CU_ASSERT_FATAL(EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), NULL, key, NULL) == 1);
    EVP_CIPHER_CTX_set_padding(c, 0);
    CU_ASSERT_FATAL(EVP_EncryptUpdate(c, out, &len, in, (int)(16 * n)) == 1);
    CU_ASSERT_EQUAL(len, (int)(16 * n));
    EVP_CIPHER_CTX_free(c);
}

static void ref_mmo(const uint8_t *keys, size_t m, const uint8_t *seeds, uint8_t *out, size_t n)
{
    uint8_t *tmp = malloc(16 * n + 1);

    CU_ASSERT_FATAL(tmp != NULL);
    for (size_t j = 0; j < m; j++) {
        ref_ecb(keys + 16 * j, seeds, tmp, n);
        for (size_t i = 0; i < n; i++)
            for (size_t b = 0; b < 16; b++)
                out[16 * (i * m + j) + b] = tmp[16 * i + b] ^ seeds[16 * i + b];
    }
    free(tmp);
}

static void ref_ctr(const uint8_t key[16], uint64_t c0, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t c = c0 + (uint64_t)i;
        memset(out + 16 * i, 0, 16);
        for (unsigned b = 0; b < 8; b++)
            out[16 * i + b] = (uint8_t)(c >> (8 * b));
    }
    ref_ecb(key, out, out, n);
}

static int all_bytes(const uint8_t *p, size_t len, uint8_t v)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] != v)
            return 0;
    return 1;
}

/* ---- (0) both soft implementations are offered -------------------------- */

static void test_impls_listed(void)
{
    const char *names[MAX_IMPLS];
    size_t n = prg_impls(names);
    int bitslice = 0, ttable = 0;

    for (size_t i = 0; i < n; i++) {
        bitslice |= strcmp(names[i], "prg-soft-bitslice") == 0;
        ttable |= strcmp(names[i], "prg-soft-ttable") == 0;
    }
    CU_ASSERT(bitslice);
    CU_ASSERT(ttable);
}

/* ---- (1) known answers ------------------------------------------------- */

static int kat_record(const char *impl, const struct mpce_kat_record *rec)
{
    mpce_engine *engine = tu_engine(1);
    uint8_t *keys = NULL, *in = NULL, *want = NULL, *got = NULL;
    size_t keys_len = 0, in_len = 0, want_len = 0;
    uint64_t n = 0, m = 1, c0 = 0;
    mpce_prg *ctx = NULL;
    mpce_status st;
    int ok = 0;

    if (mpce_kat_u64(rec, "n", &n) || mpce_kat_hex(rec, "out", &want, &want_len))
        goto done;
    if (strcmp(rec->op, "mmo") == 0) {
        if (mpce_kat_u64(rec, "m", &m) || mpce_kat_hex(rec, "keys", &keys, &keys_len)
            || mpce_kat_hex(rec, "in", &in, &in_len))
            goto done;
    } else if (mpce_kat_hex(rec, "key", &keys, &keys_len)) {
        goto done;
    }
    if (strcmp(rec->op, "ecb") == 0 && mpce_kat_hex(rec, "in", &in, &in_len))
        goto done;
    if (strcmp(rec->op, "ctr") == 0 && mpce_kat_u64(rec, "c0", &c0))
        goto done;
    if (keys_len != 16 * m || want_len != 16 * n * m || (in && in_len != 16 * n))
        goto done;

    got = malloc(want_len + 1);
    if (!got || mpce_prg_new(engine, keys, (size_t)m, &ctx) != MPCE_OK)
        goto done;
    CU_ASSERT_EQUAL(mpce_prg_key_count(ctx), (size_t)m);
    if (strcmp(rec->op, "ecb") == 0)
        st = mpce_prg_ecb(ctx, impl, 0, in, got, (size_t)n);
    else if (strcmp(rec->op, "mmo") == 0)
        st = mpce_prg_mmo(ctx, impl, in, got, (size_t)n);
    else if (strcmp(rec->op, "ctr") == 0)
        st = mpce_prg_ctr(ctx, impl, 0, c0, got, (size_t)n);
    else
        goto done;
    ok = st == MPCE_OK && memcmp(got, want, want_len) == 0;
done:
    if (!ok)
        fprintf(stderr, "  %s: prg.txt line %u (op %s) failed: %s\n", impl, rec->line, rec->op,
                mpce_last_error());
    mpce_prg_free(ctx);
    free(keys);
    free(in);
    free(want);
    free(got);
    return ok;
}

static void test_kat(void)
{
    const char *names[MAX_IMPLS];
    size_t nimpl = prg_impls(names);
    tu_kat_run("prg.txt", 20, names, nimpl, kat_record);
}

/* ---- (2) differential against OpenSSL ----------------------------------- */

static const size_t diff_lens[] = {0, 1, 3, 7, 9, 17, 31, 33, 65, 127, 1000};
#define NLENS (sizeof(diff_lens) / sizeof(diff_lens[0]))

static void test_diff_ecb(void)
{
    const char *names[MAX_IMPLS];
    size_t nimpl = prg_impls(names);
    uint8_t keys[3 * 16];
    mpce_prg *ctx;

    tu_splitmix_bytes(1, keys, sizeof(keys));
    CU_ASSERT_FATAL(mpce_prg_new(tu_engine(1), keys, 3, &ctx) == MPCE_OK);
    for (size_t k = 0; k < nimpl; k++) {
        for (size_t li = 0; li < NLENS; li++) {
            size_t n = diff_lens[li], bytes = 16 * n, ki = (k + li) % 3;
            uint8_t *in = tu_alloc_misaligned(bytes + 16, 1 + li);
            uint8_t *out = tu_alloc_misaligned(bytes + 16, 7 + 2 * li);
            uint8_t *want = malloc(bytes + 16);

            CU_ASSERT_FATAL(in && out && want);
            tu_splitmix_bytes(100 + li, in, bytes);
            ref_ecb(keys + 16 * ki, in, want, n);
            memset(out, PATTERN, bytes + 16);
            CU_ASSERT_EQUAL(mpce_prg_ecb(ctx, names[k], ki, in, out, n), MPCE_OK);
            CU_ASSERT(memcmp(out, want, bytes) == 0);
            CU_ASSERT(all_bytes(out + bytes, 16, PATTERN)); /* nothing past the end */
            /* In place. */
            CU_ASSERT_EQUAL(mpce_prg_ecb(ctx, names[k], ki, in, in, n), MPCE_OK);
            CU_ASSERT(memcmp(in, want, bytes) == 0);
            tu_free_misaligned(in);
            tu_free_misaligned(out);
            free(want);
        }
    }
    mpce_prg_free(ctx);
}

static void test_diff_mmo(void)
{
    static const size_t ms[] = {1, 2, 3, 8};
    const char *names[MAX_IMPLS];
    size_t nimpl = prg_impls(names);

    for (size_t mi = 0; mi < sizeof(ms) / sizeof(ms[0]); mi++) {
        size_t m = ms[mi];
        uint8_t keys[MPCE_PRG_MAX_KEYS * 16];
        mpce_prg *ctx;

        tu_splitmix_bytes(10 + m, keys, sizeof(keys));
        CU_ASSERT_FATAL(mpce_prg_new(tu_engine(1), keys, m, &ctx) == MPCE_OK);
        for (size_t k = 0; k < nimpl; k++) {
            for (size_t li = 0; li < NLENS; li++) {
                size_t n = diff_lens[li], outb = 16 * n * m;
                uint8_t *seeds = tu_alloc_misaligned(16 * n + 16, 3 + li);
                uint8_t *out = tu_alloc_misaligned(outb + 16, 5 + mi);
                uint8_t *want = malloc(outb + 16);

                CU_ASSERT_FATAL(seeds && out && want);
                tu_splitmix_bytes(200 + li, seeds, 16 * n);
                ref_mmo(keys, m, seeds, want, n);
                memset(out, PATTERN, outb + 16);
                CU_ASSERT_EQUAL(mpce_prg_mmo(ctx, names[k], seeds, out, n), MPCE_OK);
                CU_ASSERT(memcmp(out, want, outb) == 0);
                CU_ASSERT(all_bytes(out + outb, 16, PATTERN));
                tu_free_misaligned(seeds);
                tu_free_misaligned(out);
                free(want);
            }
        }
        mpce_prg_free(ctx);
    }
}

static void test_diff_ctr(void)
{
    /* The last two wrap past 2^64 - 1 within the longer lengths. */
    static const uint64_t c0s[] = {0, 0x0123456789abcdefull, UINT64_MAX - 5, UINT64_MAX};
    const char *names[MAX_IMPLS];
    size_t nimpl = prg_impls(names);
    uint8_t keys[2 * 16];
    mpce_prg *ctx;

    tu_splitmix_bytes(3, keys, sizeof(keys));
    CU_ASSERT_FATAL(mpce_prg_new(tu_engine(1), keys, 2, &ctx) == MPCE_OK);
    for (size_t k = 0; k < nimpl; k++) {
        for (size_t ci = 0; ci < sizeof(c0s) / sizeof(c0s[0]); ci++) {
            for (size_t li = 0; li < NLENS; li++) {
                size_t n = diff_lens[li], bytes = 16 * n, ki = (ci + li) % 2;
                uint8_t *out = tu_alloc_misaligned(bytes + 16, 9 + ci);
                uint8_t *want = malloc(bytes + 16);

                CU_ASSERT_FATAL(out && want);
                ref_ctr(keys + 16 * ki, c0s[ci], want, n);
                memset(out, PATTERN, bytes + 16);
                CU_ASSERT_EQUAL(mpce_prg_ctr(ctx, names[k], ki, c0s[ci], out, n), MPCE_OK);
                CU_ASSERT(memcmp(out, want, bytes) == 0);
                CU_ASSERT(all_bytes(out + bytes, 16, PATTERN));
                tu_free_misaligned(out);
                free(want);
            }
        }
    }
    mpce_prg_free(ctx);
}

/* One context shared by several threads, every implementation at once. */
#define NTHREADS 4
#define THREAD_BLOCKS 333

struct thread_arg {
    mpce_prg *ctx;
    const char *impl;
    const uint8_t *want;
    int ok;
};

static void *thread_main(void *p)
{
    struct thread_arg *a = p;
    uint8_t *out = malloc(16 * THREAD_BLOCKS);

    a->ok = out != NULL;
    for (int rep = 0; a->ok && rep < 20; rep++)
        a->ok = mpce_prg_ctr(a->ctx, a->impl, 1, 42, out, THREAD_BLOCKS) == MPCE_OK
                && memcmp(out, a->want, 16 * THREAD_BLOCKS) == 0;
    free(out);
    return NULL;
}

static void test_threads(void)
{
    const char *names[MAX_IMPLS];
    size_t nimpl = prg_impls(names);
    uint8_t keys[2 * 16], want[16 * THREAD_BLOCKS];
    struct thread_arg args[NTHREADS];
    pthread_t tid[NTHREADS];
    mpce_prg *ctx;

    CU_ASSERT_FATAL(nimpl > 0);
    tu_splitmix_bytes(4, keys, sizeof(keys));
    ref_ctr(keys + 16, 42, want, THREAD_BLOCKS);
    CU_ASSERT_FATAL(mpce_prg_new(tu_engine(1), keys, 2, &ctx) == MPCE_OK);
    for (size_t t = 0; t < NTHREADS; t++) {
        args[t] = (struct thread_arg){ctx, names[t % nimpl], want, 0};
        CU_ASSERT_FATAL(pthread_create(&tid[t], NULL, thread_main, &args[t]) == 0);
    }
    for (size_t t = 0; t < NTHREADS; t++) {
        pthread_join(tid[t], NULL);
        CU_ASSERT(args[t].ok);
    }
    mpce_prg_free(ctx);
}

/* ---- (3) invalid input ------------------------------------------------- */

#define OUT_BLOCKS 16

static void test_invalid_new(void)
{
    uint8_t keys[9 * 16];
    mpce_prg *ctx = (mpce_prg *)(uintptr_t)1; /* must not be written on failure */

    tu_splitmix_bytes(5, keys, sizeof(keys));
    TU_ASSERT_ERROR(mpce_prg_new(tu_engine(1), NULL, 1, &ctx), MPCE_ERR_ARG, "keys");
    TU_ASSERT_ERROR(mpce_prg_new(tu_engine(1), keys, 0, &ctx), MPCE_ERR_ARG, "m");
    TU_ASSERT_ERROR(mpce_prg_new(tu_engine(1), keys, 9, &ctx), MPCE_ERR_ARG, "m");
    CU_ASSERT(ctx == (mpce_prg *)(uintptr_t)1);
    TU_ASSERT_ERROR(mpce_prg_new(tu_engine(1), keys, 1, NULL), MPCE_ERR_ARG, "out");
}

static void invalid_ops(const char *impl)
{
    const size_t m = 3;
    uint8_t keys[3 * 16], in[16 * OUT_BLOCKS], out[16 * OUT_BLOCKS * 8];
    mpce_prg *ctx;

    tu_splitmix_bytes(6, keys, sizeof(keys));
    tu_splitmix_bytes(7, in, sizeof(in));
    CU_ASSERT_FATAL(mpce_prg_new(tu_engine(1), keys, m, &ctx) == MPCE_OK);
    memset(out, PATTERN, sizeof(out));

    TU_ASSERT_ERROR(mpce_prg_ecb(NULL, impl, 0, in, out, 1), MPCE_ERR_ARG, "ctx");
    TU_ASSERT_ERROR(mpce_prg_ecb(ctx, impl, 0, NULL, out, 1), MPCE_ERR_ARG, "in");
    TU_ASSERT_ERROR(mpce_prg_ecb(ctx, impl, 0, in, NULL, 1), MPCE_ERR_ARG, "out");
    TU_ASSERT_ERROR(mpce_prg_ecb(ctx, impl, m, in, out, 1), MPCE_ERR_ARG, "key_index");
    TU_ASSERT_ERROR(mpce_prg_ecb(ctx, impl, SIZE_MAX, in, out, 1), MPCE_ERR_ARG, "key_index");
    TU_ASSERT_ERROR(mpce_prg_ecb(ctx, impl, 0, in, out, SIZE_MAX / 16 + 1), MPCE_ERR_ARG, "n");
    TU_ASSERT_ERROR(mpce_prg_ecb(ctx, impl, 0, in, out, SIZE_MAX), MPCE_ERR_ARG, "n");

    TU_ASSERT_ERROR(mpce_prg_mmo(NULL, impl, in, out, 1), MPCE_ERR_ARG, "ctx");
    TU_ASSERT_ERROR(mpce_prg_mmo(ctx, impl, NULL, out, 1), MPCE_ERR_ARG, "seeds");
    TU_ASSERT_ERROR(mpce_prg_mmo(ctx, impl, in, NULL, 1), MPCE_ERR_ARG, "out");
    /* n * 16 fits but n * m * 16 does not. */
    TU_ASSERT_ERROR(mpce_prg_mmo(ctx, impl, in, out, SIZE_MAX / (16 * m) + 1), MPCE_ERR_ARG,
                    "n");
    TU_ASSERT_ERROR(mpce_prg_mmo(ctx, impl, in, out, SIZE_MAX / 16 + 1), MPCE_ERR_ARG, "n");

    TU_ASSERT_ERROR(mpce_prg_ctr(NULL, impl, 0, 0, out, 1), MPCE_ERR_ARG, "ctx");
    TU_ASSERT_ERROR(mpce_prg_ctr(ctx, impl, 0, 0, NULL, 1), MPCE_ERR_ARG, "out");
    TU_ASSERT_ERROR(mpce_prg_ctr(ctx, impl, m, 0, out, 1), MPCE_ERR_ARG, "key_index");
    TU_ASSERT_ERROR(mpce_prg_ctr(ctx, impl, 0, 0, out, SIZE_MAX / 16 + 1), MPCE_ERR_ARG, "n");

    CU_ASSERT(all_bytes(out, sizeof(out), PATTERN));
    mpce_prg_free(ctx);
}

static void test_invalid_ops(void)
{
    const char *names[MAX_IMPLS];
    size_t nimpl = prg_impls(names);

    invalid_ops("auto");
    for (size_t k = 0; k < nimpl; k++)
        invalid_ops(names[k]);
}

static void test_m8_mmo_overflow(void)
{
    uint8_t keys[8 * 16], seeds[16], out[16 * 8];
    mpce_prg *ctx;

    tu_splitmix_bytes(8, keys, sizeof(keys));
    tu_splitmix_bytes(9, seeds, sizeof(seeds));
    memset(out, PATTERN, sizeof(out));
    CU_ASSERT_FATAL(mpce_prg_new(tu_engine(1), keys, 8, &ctx) == MPCE_OK);
    TU_ASSERT_ERROR(mpce_prg_mmo(ctx, NULL, seeds, out, SIZE_MAX / 128 + 1), MPCE_ERR_ARG, "n");
    CU_ASSERT_EQUAL(mpce_prg_ecb(ctx, NULL, 7, seeds, out, 1), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_prg_ecb(ctx, NULL, 0, seeds, out, 0), MPCE_OK);
    TU_ASSERT_ERROR(mpce_prg_ecb(ctx, NULL, 8, seeds, out, 1), MPCE_ERR_ARG, "key_index");
    mpce_prg_free(ctx);
}

static void test_unknown_impl(void)
{
    uint8_t key[16], in[16], out[16];
    mpce_prg *ctx;

    tu_splitmix_bytes(10, key, sizeof(key));
    tu_splitmix_bytes(11, in, sizeof(in));
    memset(out, PATTERN, sizeof(out));
    CU_ASSERT_FATAL(mpce_prg_new(tu_engine(1), key, 1, &ctx) == MPCE_OK);
    TU_ASSERT_ERROR(mpce_prg_ecb(ctx, "prg-no-such-impl", 0, in, out, 1), MPCE_ERR_NOIMPL,
                    "prg-no-such-impl");
    TU_ASSERT_ERROR(mpce_prg_ctr(ctx, "prg-no-such-impl", 0, 0, out, 1), MPCE_ERR_NOIMPL,
                    "prg-no-such-impl");
    /* An implementation of another primitive is not a PRG. */
    CU_ASSERT_EQUAL(mpce_prg_ecb(ctx, "ntt-soft", 0, in, out, 1), MPCE_ERR_NOIMPL);
    CU_ASSERT(all_bytes(out, sizeof(out), PATTERN));
    mpce_prg_free(ctx);
}

/* ---- (4) policy -------------------------------------------------------- */

static void test_policy(void)
{
    mpce_engine *strict = tu_engine(0);
    uint8_t key[16], in[16], out[16], want[16];
    const char *resolved;
    mpce_prg *ctx;

    tu_splitmix_bytes(12, key, sizeof(key));
    tu_splitmix_bytes(13, in, sizeof(in));
    memset(out, PATTERN, sizeof(out));
    CU_ASSERT_FATAL(mpce_prg_new(strict, key, 1, &ctx) == MPCE_OK);
    TU_ASSERT_ERROR(mpce_prg_ecb(ctx, "prg-soft-ttable", 0, in, out, 1), MPCE_ERR_NOIMPL,
                    "allow_variable_time");
    CU_ASSERT(all_bytes(out, sizeof(out), PATTERN));

    /* Whatever backend wins (aesni where loaded), for every op and size, it
     * is a constant-time one. */
    static const char *const ops[] = {"prg.ecb", "prg.mmo", "prg.ctr"};
    static const size_t sizes[] = {1, 100, 5000, 300000};
    for (size_t o = 0; o < 3; o++) {
        for (size_t z = 0; z < 4; z++) {
            CU_ASSERT_FATAL(mpce_prg_resolve(ctx, NULL, ops[o], sizes[z], &resolved) == MPCE_OK);
            CU_ASSERT(tu_impl_flags(strict, resolved) & MPCE_IMPL_CONSTANT_TIME);
        }
    }

    /* The constant-time default still works under the strict policy. */
    ref_ecb(key, in, want, 1);
    CU_ASSERT_EQUAL(mpce_prg_ecb(ctx, "auto", 0, in, out, 1), MPCE_OK);
    CU_ASSERT(memcmp(out, want, 16) == 0);
    CU_ASSERT_EQUAL(mpce_prg_ecb(ctx, "prg-soft-bitslice", 0, in, out, 1), MPCE_OK);
    CU_ASSERT(memcmp(out, want, 16) == 0);
    mpce_prg_free(ctx);
}

static const struct tu_test tests[] = {
    {"impls_listed", test_impls_listed},
    {"kat", test_kat},
    {"diff_ecb", test_diff_ecb},
    {"diff_mmo", test_diff_mmo},
    {"diff_ctr", test_diff_ctr},
    {"threads", test_threads},
    {"invalid_new", test_invalid_new},
    {"invalid_ops", test_invalid_ops},
    {"m8_mmo_overflow", test_m8_mmo_overflow},
    {"unknown_impl", test_unknown_impl},
    {"policy", test_policy},
    {NULL, NULL},
};

int main(void)
{
    return tu_main("prg", tests);
}
