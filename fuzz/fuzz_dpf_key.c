/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DPF keys, format v1 (SPEC.md section 4): one key through the public
 * mpce_dpf_key_parse (engine/spec/dpf_key.c mpce_dpf_key_v1_read), and the
 * same bytes as a batch through mpce_dpf_keys_parse (dpf_keys.c). The first
 * input byte is the batch's key count (0..7); the rest is the key bytes. A
 * key that parses must serialize back to the same bytes and evaluate; a
 * batch that parses must hold that many keys and evaluate like the keys one
 * by one.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"

/* Points to evaluate at: the domain's ends and a middle. */
static void points_for(unsigned bits, uint64_t pts[3])
{
    uint64_t top = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    pts[0] = 0;
    pts[1] = top;
    pts[2] = top / 3;
}

static void one_key(mpce_engine *e, const uint8_t *buf, size_t len)
{
    mpce_dpf_key *key = NULL;
    fuzz_clear_error();
    if (mpce_dpf_key_parse(buf, len, &key) != MPCE_OK) {
        FUZZ_CHECK(key == NULL, "a refused key was handed out");
        FUZZ_CHECK(mpce_last_error()[0] != '\0', "refused without a reason");
        return;
    }
    unsigned bits = mpce_dpf_key_bits(key);
    mpce_dpf_group group = mpce_dpf_key_group(key);
    FUZZ_CHECK(bits >= 1 && bits <= 64 && len == mpce_dpf_key_size(bits), "bits %u, len %zu",
               bits, len);
    FUZZ_CHECK(mpce_dpf_key_party(key) <= 1, "party %u", mpce_dpf_key_party(key));
    uint8_t *again = malloc(len);
    size_t written = 0;
    FUZZ_CHECK(again != NULL, "out of memory");
    FUZZ_CHECK(mpce_dpf_key_serialize(key, again, len, &written) == MPCE_OK &&
                   written == len && memcmp(again, buf, len) == 0,
               "a parsed key does not serialize to its own bytes");
    free(again);

    mpce_dpf *ctx = NULL;
    FUZZ_CHECK(mpce_dpf_new_for_key(e, key, &ctx) == MPCE_OK, "no context for a valid key: %s",
               mpce_last_error());
    uint64_t pts[3];
    uint8_t out[3 * 16];
    points_for(bits, pts);
    FUZZ_CHECK(mpce_dpf_eval(ctx, NULL, key, pts, 3, out) == MPCE_OK,
               "a valid key does not evaluate: %s", mpce_last_error());
    if (bits <= 6) {
        size_t osz = mpce_dpf_output_size(group);
        size_t all_len = ((size_t)1 << bits) * osz;
        uint8_t *all = malloc(all_len);
        FUZZ_CHECK(all != NULL, "out of memory");
        FUZZ_CHECK(mpce_dpf_evalall(ctx, NULL, key, all, all_len) == MPCE_OK, "evalall: %s",
                   mpce_last_error());
        for (int i = 0; i < 3; i++)
            FUZZ_CHECK(memcmp(all + pts[i] * osz, out + i * osz, osz) == 0,
                       "eval and evalall differ at %d", i);
        free(all);
    }
    mpce_dpf_free(ctx);
    mpce_dpf_key_free(key);
}

static void batch(mpce_engine *e, size_t nkeys, const uint8_t *buf, size_t len)
{
    /* The context the first key claims, so that a batch can match it. */
    unsigned bits = len > 5 && buf[5] >= 1 && buf[5] <= 64 ? buf[5] : 8;
    mpce_dpf_group group = len > 6 && buf[6] == 1 ? MPCE_DPF_U64 : MPCE_DPF_BYTES;
    uint8_t kl[16] = {0}, kr[16] = {0};
    if (len >= 40) {
        memcpy(kl, buf + 8, 16);
        memcpy(kr, buf + 24, 16);
    }
    mpce_dpf *ctx = NULL;
    FUZZ_CHECK(mpce_dpf_new(e, bits, group, kl, kr, &ctx) == MPCE_OK, "mpce_dpf_new: %s",
               mpce_last_error());
    mpce_dpf_keys *b = NULL;
    fuzz_clear_error();
    if (mpce_dpf_keys_parse(ctx, buf, len, nkeys, &b) == MPCE_OK) {
        FUZZ_CHECK(mpce_dpf_keys_count(b) == nkeys, "%zu keys in a batch of %zu",
                   mpce_dpf_keys_count(b), nkeys);
        size_t ksz = mpce_dpf_key_size(bits), osz = mpce_dpf_output_size(group);
        uint64_t pts[8];
        uint8_t got[8 * 16], want[16];
        for (size_t i = 0; i < nkeys; i++) {
            uint64_t three[3];
            points_for(bits, three);
            pts[i] = three[i % 3];
        }
        FUZZ_CHECK(mpce_dpf_eval_batch(ctx, NULL, b, 0, pts, nkeys, got) == MPCE_OK,
                   "eval_batch: %s", mpce_last_error());
        for (size_t i = 0; i < nkeys; i++) {
            mpce_dpf_key *k = NULL;
            FUZZ_CHECK(mpce_dpf_key_parse(buf + i * ksz, ksz, &k) == MPCE_OK,
                       "key %zu of a valid batch does not parse alone: %s", i,
                       mpce_last_error());
            FUZZ_CHECK(mpce_dpf_eval(ctx, NULL, k, &pts[i], 1, want) == MPCE_OK, "eval: %s",
                       mpce_last_error());
            FUZZ_CHECK(memcmp(want, got + i * osz, osz) == 0,
                       "key %zu: the batch evaluates differently", i);
            mpce_dpf_key_free(k);
        }
        mpce_dpf_keys_free(b);
    } else {
        FUZZ_CHECK(b == NULL, "a refused batch was handed out");
        FUZZ_CHECK(mpce_last_error()[0] != '\0', "refused without a reason");
    }
    mpce_dpf_free(ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    mpce_engine *e = fuzz_engine(0);
    size_t nkeys = data[0] % 8;
    data++, size--;
    /* An exact copy, so that a read past the key is caught as such. */
    uint8_t *buf = malloc(size ? size : 1);
    FUZZ_CHECK(buf != NULL, "out of memory");
    memcpy(buf, data, size);
    one_key(e, buf, size);
    batch(e, nkeys, buf, size);
    free(buf);
    return 0;
}
