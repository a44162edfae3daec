/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DPF key batches through the public API: for every implementation, a
 * batch (made from parsed keys or parsed from serialized ones) gives the
 * outputs eval_keys gives for the same keys, on odd counts, offsets into
 * the batch, misaligned outputs, every domain size class and both groups;
 * and every refusal names what is wrong without writing an output.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define MAX_IMPLS 16
#define PATTERN 0xA5

static size_t dpf_impls(const char **names)
{
    return tu_impls(tu_engine(0), MPCE_PRIM_DPF, names, MAX_IMPLS);
}

/* nkeys keys of ctx with random alphas, betas and seeds; each key a party's
 * at random, so consecutive keys share nothing. */
static mpce_dpf_key **random_keys(mpce_dpf *ctx, unsigned bits, size_t nkeys, uint64_t seed)
{
    mpce_dpf_key **keys = calloc(nkeys ? nkeys : 1, sizeof(*keys));
    CU_ASSERT_FATAL(keys != NULL);
    uint64_t st = seed;
    for (size_t i = 0; i < nkeys; i++) {
        uint8_t beta[16] = {0}, s0[16], s1[16];
        uint64_t alpha = tu_splitmix64(&st);
        if (bits < 64)
            alpha &= ((uint64_t)1 << bits) - 1;
        tu_splitmix_bytes(tu_splitmix64(&st), beta, 8);
        tu_splitmix_bytes(tu_splitmix64(&st), s0, 16);
        tu_splitmix_bytes(tu_splitmix64(&st), s1, 16);
        mpce_dpf_key *k[2];
        CU_ASSERT_FATAL(mpce_dpf_gen(ctx, "dpf-soft", alpha, beta, s0, s1, &k[0], &k[1]) ==
                        MPCE_OK);
        unsigned p = (unsigned)(tu_splitmix64(&st) & 1u);
        keys[i] = k[p];
        mpce_dpf_key_free(k[1 - p]);
    }
    return keys;
}

static void free_keys(mpce_dpf_key **keys, size_t nkeys)
{
    for (size_t i = 0; i < nkeys; i++)
        mpce_dpf_key_free(keys[i]);
    free(keys);
}

/* Points: half at each key's alpha would need the alphas; random points
 * and a few at the domain's ends are what the walk cares about. */
static uint64_t *random_points(unsigned bits, size_t n, uint64_t seed)
{
    uint64_t *x = malloc((n ? n : 1) * sizeof(*x)), st = seed;
    CU_ASSERT_FATAL(x != NULL);
    for (size_t i = 0; i < n; i++) {
        x[i] = tu_splitmix64(&st);
        if (i % 7 == 3)
            x[i] = UINT64_MAX;
        if (i % 7 == 5)
            x[i] = 0;
        if (bits < 64)
            x[i] &= ((uint64_t)1 << bits) - 1;
    }
    return x;
}

/* eval_batch over keys first .. first + n - 1 equals eval_keys over the
 * same keys, for a batch from parsed keys and one from serialized keys. */
static void check_case(const char *impl, unsigned bits, mpce_dpf_group g, size_t nkeys,
                       size_t first, size_t n)
{
    uint8_t kl[16], kr[16];
    tu_splitmix_bytes(bits * 31 + (uint64_t)g, kl, 16);
    tu_splitmix_bytes(bits * 37 + (uint64_t)g, kr, 16);
    mpce_dpf *ctx;
    CU_ASSERT_FATAL(mpce_dpf_new(tu_engine(0), bits, g, kl, kr, &ctx) == MPCE_OK);
    mpce_dpf_key **keys = random_keys(ctx, bits, nkeys, 1000 * bits + nkeys);
    uint64_t *x = random_points(bits, n, 77 + n);
    const size_t osz = mpce_dpf_output_size(g);
    uint8_t *want = malloc(n * osz + 1), *got = tu_alloc_misaligned(n * osz + 1, 5);
    CU_ASSERT_FATAL(want && got);

    CU_ASSERT_EQUAL(mpce_dpf_eval_keys(ctx, "dpf-soft", (const mpce_dpf_key *const *)keys + first,
                                       x, n, want),
                    MPCE_OK);
    mpce_dpf_keys *bt = NULL;
    CU_ASSERT_FATAL(mpce_dpf_keys_new(ctx, (const mpce_dpf_key *const *)keys, nkeys, &bt) ==
                    MPCE_OK);
    CU_ASSERT_EQUAL(mpce_dpf_keys_count(bt), nkeys);
    memset(got, PATTERN, n * osz + 1);
    CU_ASSERT_EQUAL(mpce_dpf_eval_batch(ctx, impl, bt, first, x, n, got), MPCE_OK);
    if (memcmp(got, want, n * osz) != 0)
        printf("\n  %s: bits %u group %d keys %zu first %zu n %zu: differs from eval_keys\n",
               impl, bits, (int)g, nkeys, first, n);
    CU_ASSERT(memcmp(got, want, n * osz) == 0);
    CU_ASSERT_EQUAL(got[n * osz], PATTERN); /* nothing past the last output */
    mpce_dpf_keys_free(bt);

    /* The same keys serialized back to back. */
    const size_t klen = mpce_dpf_key_size(bits);
    uint8_t *ser = malloc(nkeys * klen + 1);
    CU_ASSERT_FATAL(ser != NULL);
    for (size_t i = 0; i < nkeys; i++)
        CU_ASSERT_FATAL(mpce_dpf_key_serialize(keys[i], ser + i * klen, klen, NULL) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_dpf_keys_parse(ctx, ser, nkeys * klen, nkeys, &bt) == MPCE_OK);
    memset(got, PATTERN, n * osz + 1);
    CU_ASSERT_EQUAL(mpce_dpf_eval_batch(ctx, impl, bt, first, x, n, got), MPCE_OK);
    CU_ASSERT(memcmp(got, want, n * osz) == 0);
    mpce_dpf_keys_free(bt);

    free(ser);
    free(want);
    tu_free_misaligned(got);
    free(x);
    free_keys(keys, nkeys);
    mpce_dpf_free(ctx);
}

static void test_same_as_eval_keys(void)
{
    static const unsigned bit_list[] = {1, 2, 7, 8, 9, 20, 33, 63, 64};
    /* {nkeys, first, n}: empty, one, a few, around one 32-key walk, and
     * slices that start and end inside a walk. */
    static const size_t shapes[][3] = {{0, 0, 0},   {1, 0, 1},    {3, 0, 3},  {3, 1, 2},
                                       {31, 0, 31}, {32, 0, 32},  {33, 0, 33}, {70, 5, 61},
                                       {300, 1, 299}, {300, 37, 3}};
    const char *names[MAX_IMPLS];
    size_t nimpl = dpf_impls(names);
    CU_ASSERT_FATAL(nimpl >= 1);
    for (size_t i = 0; i < nimpl; i++)
        for (size_t b = 0; b < sizeof(bit_list) / sizeof(bit_list[0]); b++)
            for (int g = 0; g < 2; g++)
                for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
                    /* The portable walk is slow: the large shapes at a few
                     * sizes only. */
                    if (shapes[s][0] > 40 && strcmp(names[i], "dpf-soft") == 0 && b % 3 != 0)
                        continue;
                    check_case(names[i], bit_list[b], g ? MPCE_DPF_U64 : MPCE_DPF_BYTES,
                               shapes[s][0], shapes[s][1], shapes[s][2]);
                }
}

/* Many keys split over the engine's worker threads. */
static void test_threads(void)
{
    mpce_engine *e;
    CU_ASSERT_FATAL(tu_engine_conf("[engine]\nthreads = 3\n", &e) == MPCE_OK);
    mpce_dpf *ctx;
    CU_ASSERT_FATAL(mpce_dpf_new(e, 20, MPCE_DPF_BYTES, NULL, NULL, &ctx) == MPCE_OK);
    const size_t nkeys = 20000, n = nkeys - 3;
    mpce_dpf_key **keys = random_keys(ctx, 20, nkeys, 5);
    uint64_t *x = random_points(20, n, 6);
    uint8_t *want = malloc(16 * n), *got = malloc(16 * n);
    CU_ASSERT_FATAL(want && got);
    mpce_dpf_keys *bt;
    CU_ASSERT_FATAL(mpce_dpf_keys_new(ctx, (const mpce_dpf_key *const *)keys, nkeys, &bt) ==
                    MPCE_OK);
    const char *names[MAX_IMPLS];
    size_t nimpl = tu_impls(e, MPCE_PRIM_DPF, names, MAX_IMPLS);
    CU_ASSERT_EQUAL(mpce_dpf_eval_keys(ctx, NULL, (const mpce_dpf_key *const *)keys + 2, x, n,
                                       want),
                    MPCE_OK);
    for (size_t i = 0; i < nimpl; i++) {
        memset(got, 0, 16 * n);
        CU_ASSERT_EQUAL(mpce_dpf_eval_batch(ctx, names[i], bt, 2, x, n, got), MPCE_OK);
        CU_ASSERT(memcmp(got, want, 16 * n) == 0);
    }
    mpce_dpf_keys_free(bt);
    free(want);
    free(got);
    free(x);
    free_keys(keys, nkeys);
    mpce_dpf_free(ctx);
    mpce_engine_free(e);
}

static void test_refusals(void)
{
    mpce_dpf *ctx, *wrong_bits, *wrong_group, *wrong_keys;
    uint8_t other_kl[16] = {1}, other_kr[16] = {2}, out[64];
    CU_ASSERT_FATAL(mpce_dpf_new(tu_engine(0), 8, MPCE_DPF_BYTES, NULL, NULL, &ctx) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_dpf_new(tu_engine(0), 9, MPCE_DPF_BYTES, NULL, NULL, &wrong_bits) ==
                    MPCE_OK);
    CU_ASSERT_FATAL(mpce_dpf_new(tu_engine(0), 8, MPCE_DPF_U64, NULL, NULL, &wrong_group) ==
                    MPCE_OK);
    CU_ASSERT_FATAL(mpce_dpf_new(tu_engine(0), 8, MPCE_DPF_BYTES, other_kl, other_kr,
                                 &wrong_keys) == MPCE_OK);
    mpce_dpf_key **keys = random_keys(ctx, 8, 4, 9);
    mpce_dpf_key **odd = random_keys(wrong_keys, 8, 1, 10);
    mpce_dpf_keys *bt = NULL;
    uint64_t x[4] = {1, 2, 3, 4};

    /* Making a batch. */
    TU_ASSERT_ERROR(mpce_dpf_keys_new(NULL, (const mpce_dpf_key *const *)keys, 4, &bt),
                    MPCE_ERR_ARG, "ctx");
    TU_ASSERT_ERROR(mpce_dpf_keys_new(ctx, (const mpce_dpf_key *const *)keys, 4, NULL),
                    MPCE_ERR_ARG, "out");
    TU_ASSERT_ERROR(mpce_dpf_keys_new(ctx, NULL, 4, &bt), MPCE_ERR_ARG, "keys");
    {
        const mpce_dpf_key *mixed[3] = {keys[0], odd[0], keys[1]};
        TU_ASSERT_ERROR(mpce_dpf_keys_new(ctx, mixed, 3, &bt), MPCE_ERR_ARG, "keys[1]");
        mixed[1] = NULL;
        TU_ASSERT_ERROR(mpce_dpf_keys_new(ctx, mixed, 3, &bt), MPCE_ERR_ARG, "keys[1] is NULL");
    }
    TU_ASSERT_ERROR(mpce_dpf_keys_new(wrong_bits, (const mpce_dpf_key *const *)keys, 4, &bt),
                    MPCE_ERR_ARG, "domain bits");
    TU_ASSERT_ERROR(mpce_dpf_keys_new(wrong_group, (const mpce_dpf_key *const *)keys, 4, &bt),
                    MPCE_ERR_ARG, "group");
    CU_ASSERT_PTR_NULL(bt);

    /* Parsing one: the length, and a malformed key named by its index. */
    const size_t klen = mpce_dpf_key_size(8);
    uint8_t *ser = malloc(4 * klen);
    CU_ASSERT_FATAL(ser != NULL);
    for (size_t i = 0; i < 4; i++)
        CU_ASSERT_FATAL(mpce_dpf_key_serialize(keys[i], ser + i * klen, klen, NULL) == MPCE_OK);
    TU_ASSERT_ERROR(mpce_dpf_keys_parse(ctx, ser, 4 * klen - 1, 4, &bt), MPCE_ERR_FORMAT,
                    "4 keys of 8 domain bits");
    TU_ASSERT_ERROR(mpce_dpf_keys_parse(ctx, NULL, 4 * klen, 4, &bt), MPCE_ERR_ARG, "buf");
    ser[2 * klen + 7] = 2; /* key 2's party */
    TU_ASSERT_ERROR(mpce_dpf_keys_parse(ctx, ser, 4 * klen, 4, &bt), MPCE_ERR_FORMAT,
                    "key 2: field 'party'");
    ser[2 * klen + 7] = 0;
    ser[3 * klen] = 'X'; /* key 3's magic */
    TU_ASSERT_ERROR(mpce_dpf_keys_parse(ctx, ser, 4 * klen, 4, &bt), MPCE_ERR_FORMAT,
                    "key 3: field 'magic'");
    ser[3 * klen] = 'M';
    ser[1 * klen + 5] = 9; /* key 1 claims 9 domain bits: its length no longer fits */
    TU_ASSERT_ERROR(mpce_dpf_keys_parse(ctx, ser, 4 * klen, 4, &bt), MPCE_ERR_FORMAT, "key 1:");
    ser[1 * klen + 5] = 8;
    CU_ASSERT_PTR_NULL(bt);

    /* Evaluating one. */
    CU_ASSERT_FATAL(mpce_dpf_keys_parse(ctx, ser, 4 * klen, 4, &bt) == MPCE_OK);
    memset(out, PATTERN, sizeof(out));
    TU_ASSERT_ERROR(mpce_dpf_eval_batch(wrong_bits, NULL, bt, 0, x, 4, out), MPCE_ERR_ARG,
                    "9 bits");
    TU_ASSERT_ERROR(mpce_dpf_eval_batch(wrong_group, NULL, bt, 0, x, 4, out), MPCE_ERR_ARG,
                    "u64 group");
    TU_ASSERT_ERROR(mpce_dpf_eval_batch(wrong_keys, NULL, bt, 0, x, 4, out), MPCE_ERR_ARG,
                    "other PRG keys");
    TU_ASSERT_ERROR(mpce_dpf_eval_batch(ctx, NULL, bt, 1, x, 4, out), MPCE_ERR_ARG,
                    "past the batch's 4 keys");
    TU_ASSERT_ERROR(mpce_dpf_eval_batch(ctx, NULL, bt, 5, x, 0, out), MPCE_ERR_ARG,
                    "past the batch's 4 keys");
    TU_ASSERT_ERROR(mpce_dpf_eval_batch(ctx, NULL, bt, SIZE_MAX, x, 2, out), MPCE_ERR_ARG,
                    "past the batch");
    TU_ASSERT_ERROR(mpce_dpf_eval_batch(ctx, NULL, NULL, 0, x, 4, out), MPCE_ERR_ARG, "batch");
    TU_ASSERT_ERROR(mpce_dpf_eval_batch(ctx, NULL, bt, 0, NULL, 4, out), MPCE_ERR_ARG, "points");
    TU_ASSERT_ERROR(mpce_dpf_eval_batch(ctx, NULL, bt, 0, x, 4, NULL), MPCE_ERR_ARG, "out");
    x[2] = 256;
    TU_ASSERT_ERROR(mpce_dpf_eval_batch(ctx, NULL, bt, 0, x, 4, out), MPCE_ERR_ARG,
                    "points[2] = 256");
    x[2] = 3;
    for (size_t i = 0; i < sizeof(out); i++)
        CU_ASSERT_EQUAL_FATAL(out[i], PATTERN);
    CU_ASSERT_EQUAL(mpce_dpf_eval_batch(ctx, NULL, bt, 4, x, 0, out), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_dpf_eval_batch(ctx, NULL, bt, 0, x, 4, out), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_dpf_keys_count(NULL), 0);
    mpce_dpf_keys_free(NULL);
    mpce_dpf_keys_free(bt);

    free(ser);
    free_keys(keys, 4);
    free_keys(odd, 1);
    mpce_dpf_free(ctx);
    mpce_dpf_free(wrong_bits);
    mpce_dpf_free(wrong_group);
    mpce_dpf_free(wrong_keys);
}

static const struct tu_test tests[] = {
    {"eval_batch equals eval_keys: every implementation, odd shapes", test_same_as_eval_keys},
    {"eval_batch over worker threads", test_threads},
    {"refusals name what is wrong and write nothing", test_refusals},
    {NULL, NULL},
};

int main(void)
{
    return tu_main("dpf_batch", tests);
}
