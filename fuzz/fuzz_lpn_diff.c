/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Differential: the LPN fold through every implementation this CPU can run,
 * each compared byte for byte with soft's, and soft's byte for byte with the
 * test suite's independent reference on OpenSSL's AES (tests/ref_lpn.h), so
 * that a soft fold that does nothing, or the wrong thing, cannot pass. Soft
 * also against what the fold must be whatever its indices (SPEC.md section
 * 3): out ^= (a sum of table
 * blocks), so folding into a non-zero out is out XOR the fold into zeros,
 * folding table A XOR table B is the fold of A XOR the fold of B, and the
 * stream blocks consumed are 5*L4/2 + 3*(n mod 4) with L4 = n - n mod 4.
 * Lengths 0, 1, 3 favoured; buffers unaligned.
 *
 * Input: logk (1..12), length, misalignment, the counter (8 bytes), the
 * seed (16 bytes), a seed for the table and out, then bytes that replace
 * the first table bytes.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "tests/ref_lpn.h"

#define MAX_IMPLS 16
#define MAX_LOGK 12
#define MAX_N 600

static void fill(uint8_t *p, size_t len, uint64_t *state)
{
    for (size_t i = 0; i < len; i += 8) {
        uint64_t v = fuzz_splitmix64(state);
        for (size_t j = 0; j < 8 && i + j < len; j++)
            p[i + j] = (uint8_t)(v >> (8 * j));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *impls[MAX_IMPLS];
    static size_t nimpl;
    mpce_engine *e = fuzz_engine(1);
    if (nimpl == 0)
        nimpl = fuzz_impls(e, MPCE_PRIM_LPN, impls, MAX_IMPLS);

    struct fuzz_in in = {data, size};
    unsigned logk = 1 + fuzz_u8(&in) % MAX_LOGK;
    uint8_t lsel = fuzz_u8(&in);
    size_t n = lsel < 48 ? (size_t[]){0, 1, 3}[lsel % 3]
                         : ((size_t)lsel * 5 + fuzz_u8(&in)) % MAX_N;
    size_t mis = fuzz_u8(&in);
    uint64_t c0 = fuzz_u64(&in);
    uint8_t seed[16];
    fuzz_bytes(&in, seed, sizeof(seed));
    uint64_t state = fuzz_u64(&in);

    const size_t tblocks = (size_t)1 << logk, tlen = 16 * tblocks, olen = 16 * n;
    uint8_t *table = fuzz_alloc_misaligned(tlen, mis);
    uint8_t *table2 = fuzz_alloc_misaligned(tlen, mis + 1);
    uint8_t *init = malloc(olen + 1), *want = malloc(olen + 1), *zero_a = malloc(olen + 1),
            *zero_b = malloc(olen + 1), *zero_ab = malloc(olen + 1), *ref = malloc(olen + 1);
    FUZZ_CHECK(init && want && zero_a && zero_b && zero_ab && ref, "out of memory");
    fill(table, tlen, &state);
    fill(table2, tlen, &state);
    fill(init, olen, &state);
    size_t take = in.left < tlen ? in.left : tlen;
    fuzz_bytes(&in, table, take);

    mpce_lpn *ctx = NULL;
    FUZZ_CHECK(mpce_lpn_new(e, seed, logk, &ctx) == MPCE_OK, "mpce_lpn_new: %s",
               mpce_last_error());
    const uint64_t l4 = n - n % 4, expect_used = 5 * l4 / 2 + 3 * (n % 4);
    FUZZ_CHECK(mpce_lpn_blocks_consumed(n) == expect_used, "blocks consumed for n = %zu", n);
    for (size_t i = 0; i < nimpl; i++) {
        uint8_t *out = fuzz_alloc_misaligned(olen, mis + 3 * i + 2);
        memcpy(out, init, olen);
        uint64_t used = 0;
        FUZZ_CHECK(mpce_lpn_fold(ctx, impls[i], c0, table, tblocks, out, n, &used) == MPCE_OK,
                   "%s: %s", impls[i], mpce_last_error());
        FUZZ_CHECK(used == expect_used, "%s: consumed %llu blocks for n = %zu", impls[i],
                   (unsigned long long)used, n);
        if (i == 0)
            memcpy(want, out, olen);
        else
            FUZZ_CHECK(memcmp(want, out, olen) == 0, "%s: n = %zu, logk = %u: differs from soft",
                       impls[i], n, logk);
        fuzz_free_misaligned(out);
    }

    /* soft: the reference's fold, byte for byte. */
    memcpy(ref, init, olen);
    FUZZ_CHECK(ref_fold(seed, logk, c0, table, ref, n) == 0, "the reference fold failed");
    for (size_t i = 0; i < olen; i++)
        FUZZ_CHECK(want[i] == ref[i], "%s: n = %zu, logk = %u, c0 = %llu: differs from the "
                   "reference at byte %zu (output %zu)", impls[0], n, logk,
                   (unsigned long long)c0, i, i / 16);

    /* soft: linear in out and in the table. */
    memset(zero_a, 0, olen);
    memset(zero_b, 0, olen);
    memset(zero_ab, 0, olen);
    FUZZ_CHECK(mpce_lpn_fold(ctx, impls[0], c0, table, tblocks, zero_a, n, NULL) == MPCE_OK &&
                   mpce_lpn_fold(ctx, impls[0], c0, table2, tblocks, zero_b, n, NULL) ==
                       MPCE_OK,
               "soft: %s", mpce_last_error());
    for (size_t i = 0; i < olen; i++)
        FUZZ_CHECK((init[i] ^ zero_a[i]) == want[i], "soft: folding into out is not out XOR "
                   "the fold (byte %zu)", i);
    for (size_t i = 0; i < tlen; i++)
        table2[i] ^= table[i];
    FUZZ_CHECK(mpce_lpn_fold(ctx, impls[0], c0, table2, tblocks, zero_ab, n, NULL) == MPCE_OK,
               "soft: %s", mpce_last_error());
    for (size_t i = 0; i < olen; i++)
        FUZZ_CHECK((zero_a[i] ^ zero_b[i]) == zero_ab[i], "soft: the fold is not linear in "
                   "the table (byte %zu)", i);

    mpce_lpn_free(ctx);
    free(init);
    free(want);
    free(zero_a);
    free(zero_b);
    free(zero_ab);
    free(ref);
    fuzz_free_misaligned(table);
    fuzz_free_misaligned(table2);
    return 0;
}
