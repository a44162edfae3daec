/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The x86-64 module's NTT implementations against ntt-soft, through the
 * public API: random inputs at every N from 8 to 2^14 (and 2^17 once), one
 * to three moduli (a repeated one included) and one to three polynomials,
 * in place and out of place on unaligned buffers, moduli on both sides of
 * the 52-bit IFMA limit, inputs at the extremes, and IFMA's refusal of
 * moduli at or above 2^50 while "auto" still computes them.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine/spec/ntt_params.h"
#include "testutil.h"
#include "vs_soft.h"

#define MAX_IMPLS 16
#define IFMA_MAX_Q (UINT64_C(1) << 50)

static const char *const aesni_names[] = {"ntt-aesni-avx512", "ntt-aesni-ifma"};
static const unsigned prime_bits[] = {30, 40, 49, 50, 59, 60, 61};
#define NBITS (sizeof(prime_bits) / sizeof(prime_bits[0]))

static int listed(const char *name)
{
    const mpce_impl_info *rows;
    size_t count;
    if (mpce_list(tu_engine(0), 1, &rows, &count) != MPCE_OK)
        return 0;
    for (size_t i = 0; i < count; i++)
        if (strcmp(rows[i].impl, name) == 0)
            return 1;
    return 0;
}

/* The aesni NTT implementations that passed their self-test here; tu_impls
 * prints a "skipped:" line for each that is listed but unusable, and one is
 * printed here for each not loaded at all. */
static size_t aesni_impls(const char **out)
{
    const char *names[MAX_IMPLS];
    size_t n = tu_impls(tu_engine(0), MPCE_PRIM_NTT, names, MAX_IMPLS), found = 0;
    for (size_t k = 0; k < 2; k++) {
        size_t i;
        for (i = 0; i < n && strcmp(names[i], aesni_names[k]) != 0; i++)
            ;
        if (i < n)
            out[found++] = aesni_names[k];
        else if (!listed(aesni_names[k]))
            printf("\n  skipped: %s: not loaded (module not built or not found)\n",
                   aesni_names[k]);
    }
    return found;
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

static int ifma_serves(const char *impl, const uint64_t *q, size_t l)
{
    if (strcmp(impl, "ntt-aesni-ifma") != 0)
        return 1;
    for (size_t i = 0; i < l; i++)
        if (q[i] >= IFMA_MAX_Q)
            return 0;
    return 1;
}

static void random_words(uint64_t *v, size_t n, const uint64_t *q, size_t l, size_t batch,
                         uint64_t *seed)
{
    for (size_t b = 0; b < batch; b++)
        for (size_t r = 0; r < l; r++)
            for (size_t i = 0; i < n; i++)
                v[(b * l + r) * n + i] = tu_splitmix64(seed) % q[r];
}

/* One context of n, l moduli of `bits` bits ({p0, p1, p0}: the repeat
 * shares tables) through every aesni impl that serves it, every batch. */
static void run_shape(const char **impls, size_t nimpls, size_t n, unsigned bits, size_t l,
                      size_t max_batch, uint64_t *seed)
{
    uint64_t q[3] = {vs_find_prime(bits, 0), vs_find_prime(bits, 1), vs_find_prime(bits, 0)};
    mpce_ntt *ctx = make_ctx(n, q, l);
    uint64_t *in = malloc(max_batch * l * n * sizeof(uint64_t));
    CU_ASSERT_FATAL(in != NULL);
    for (size_t batch = 1; batch <= max_batch; batch++) {
        random_words(in, n, q, l, batch, seed);
        for (size_t k = 0; k < nimpls; k++)
            if (ifma_serves(impls[k], q, l))
                CU_ASSERT(vs_ntt_compare(ctx, impls[k], in, batch * l * n, batch, "random"));
    }
    free(in);
    mpce_ntt_free(ctx);
}

static void test_random_all_sizes(void)
{
    const char *impls[2];
    size_t nimpls = aesni_impls(impls);
    uint64_t seed = 0x5eed;
    for (size_t b = 0; b < NBITS; b++)
        for (size_t n = 8; n <= 16384; n <<= 1)
            for (size_t l = 1; l <= 3; l++)
                run_shape(impls, nimpls, n, prime_bits[b], l, 3, &seed);
}

static void test_largest_n(void)
{
    const char *impls[2];
    size_t nimpls = aesni_impls(impls);
    uint64_t seed = 0x217;
    run_shape(impls, nimpls, MPCE_NTT_MAX_N, 61, 1, 1, &seed);
    run_shape(impls, nimpls, MPCE_NTT_MAX_N, 49, 1, 1, &seed);
}

/* All q - 1 (the largest lazy values every stage sees), and q - 1 / 0
 * alternating. */
static void test_extremes(void)
{
    const char *impls[2];
    size_t nimpls = aesni_impls(impls);
    for (size_t b = 0; b < NBITS; b++) {
        for (size_t n = 8; n <= 4096; n <<= 2) {
            uint64_t q[2] = {vs_find_prime(prime_bits[b], 0), vs_find_prime(prime_bits[b], 1)};
            mpce_ntt *ctx = make_ctx(n, q, 2);
            uint64_t *in = malloc(2 * n * sizeof(uint64_t));
            CU_ASSERT_FATAL(in != NULL);
            for (int pattern = 0; pattern < 2; pattern++) {
                for (size_t i = 0; i < 2 * n; i++)
                    in[i] = (pattern == 0 || (i & 1)) ? q[i / n] - 1 : 0;
                for (size_t k = 0; k < nimpls; k++)
                    if (ifma_serves(impls[k], q, 2))
                        CU_ASSERT(vs_ntt_compare(ctx, impls[k], in, 2 * n, 1,
                                                 pattern ? "q-1/0" : "all q-1"));
            }
            free(in);
            mpce_ntt_free(ctx);
        }
    }
}

/* Named explicitly, IFMA refuses q >= 2^50 and says why; "auto" falls back
 * and still matches ntt-soft; just below the limit IFMA serves. */
static void test_ifma_limit(void)
{
    const char *impls[2];
    size_t nimpls = aesni_impls(impls), has = 0;
    for (size_t k = 0; k < nimpls; k++)
        has |= strcmp(impls[k], "ntt-aesni-ifma") == 0;
    if (!has)
        return;
    const size_t n = 1024;
    const uint64_t step = UINT64_C(1) << 18;
    uint64_t above = IFMA_MAX_Q + 1; /* the smallest usable prime >= 2^50 */
    while (!mpce_is_prime64(above))
        above += step;
    const uint64_t below = vs_find_prime(50, 0);
    uint64_t seed = 0x1f3a;
    uint64_t *in = malloc(n * sizeof(uint64_t)), *want = malloc(n * sizeof(uint64_t));
    uint64_t *got = malloc(n * sizeof(uint64_t));
    CU_ASSERT_FATAL(in && want && got);

    mpce_ntt *ctx = make_ctx(n, &above, 1);
    random_words(in, n, &above, 1, 1, &seed);
    TU_ASSERT_ERROR(mpce_ntt_forward(ctx, "ntt-aesni-ifma", in, got, 1), MPCE_ERR_NOIMPL,
                    "needs q < 2^50");
    TU_ASSERT_ERROR(mpce_ntt_inverse(ctx, "ntt-aesni-ifma", in, got, 1), MPCE_ERR_NOIMPL,
                    "ntt-aesni-ifma");
    CU_ASSERT_EQUAL(mpce_ntt_forward(ctx, "ntt-soft", in, want, 1), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_ntt_forward(ctx, "auto", in, got, 1), MPCE_OK);
    CU_ASSERT(memcmp(want, got, n * sizeof(uint64_t)) == 0);
    mpce_ntt_free(ctx);

    /* One modulus above the limit among several is enough to refuse. */
    const uint64_t mixed[2] = {below, above};
    uint64_t *in2 = malloc(2 * n * sizeof(uint64_t)), *want2 = malloc(2 * n * sizeof(uint64_t));
    uint64_t *got2 = malloc(2 * n * sizeof(uint64_t));
    CU_ASSERT_FATAL(in2 && want2 && got2);
    ctx = make_ctx(n, mixed, 2);
    random_words(in2, n, mixed, 2, 1, &seed);
    TU_ASSERT_ERROR(mpce_ntt_forward(ctx, "ntt-aesni-ifma", in2, got2, 1), MPCE_ERR_NOIMPL,
                    "moduli[1]");
    CU_ASSERT_EQUAL(mpce_ntt_inverse(ctx, "ntt-soft", in2, want2, 1), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_ntt_inverse(ctx, "auto", in2, got2, 1), MPCE_OK);
    CU_ASSERT(memcmp(want2, got2, 2 * n * sizeof(uint64_t)) == 0);
    mpce_ntt_free(ctx);

    ctx = make_ctx(n, &below, 1);
    random_words(in, n, &below, 1, 1, &seed);
    CU_ASSERT_EQUAL(mpce_ntt_forward(ctx, "ntt-soft", in, want, 1), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_ntt_forward(ctx, "ntt-aesni-ifma", in, got, 1), MPCE_OK);
    CU_ASSERT(memcmp(want, got, n * sizeof(uint64_t)) == 0);
    mpce_ntt_free(ctx);
    free(in);
    free(want);
    free(got);
    free(in2);
    free(want2);
    free(got2);
}

static const struct tu_test tests[] = {
    {"random inputs, N 8..2^14, 30..61-bit moduli, L and B 1..3", test_random_all_sizes},
    {"random inputs at N = 2^17", test_largest_n},
    {"extreme inputs", test_extremes},
    {"IFMA refuses q >= 2^50, auto falls back", test_ifma_limit},
    {NULL, NULL},
};

int main(void)
{
    return tu_main("aesni_ntt", tests);
}
