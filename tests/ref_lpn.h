/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The independent LPN fold reference (SPEC.md section 3, output by output,
 * on OpenSSL's AES) that tests/test_lpn.c and fuzz/fuzz_lpn_diff.c compare
 * the engine's implementations with. No engine code: a mistake shared with
 * the engine's soft fold cannot hide behind it. Link with libcrypto.
 */
#ifndef MPCE_TESTS_REF_LPN_H
#define MPCE_TESTS_REF_LPN_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

/* n AES-128 blocks of key over the counters c0, c0 + 1, ... (each as 8
 * little-endian bytes then 8 zero bytes). 0, or -1 when OpenSSL fails. */
static inline int ref_lpn_ctr(const uint8_t key[16], uint64_t c0, uint8_t *out, size_t n)
{
    int len = 0, ok;

    for (size_t i = 0; i < n; i++) {
        uint64_t ctr = c0 + (uint64_t)i;
        memset(out + 16 * i, 0, 16);
        for (unsigned b = 0; b < 8; b++)
            out[16 * i + b] = (uint8_t)(ctr >> (8 * b));
    }
    if (n == 0)
        return 0;
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    if (c == NULL)
        return -1;
    ok = EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), NULL, key, NULL) == 1 &&
         EVP_CIPHER_CTX_set_padding(c, 0) == 1 &&
         EVP_EncryptUpdate(c, out, &len, out, (int)(16 * n)) == 1 && len == (int)(16 * n);
    EVP_CIPHER_CTX_free(c);
    return ok ? 0 : -1;
}

static inline uint32_t ref_lpn_word_at(const uint8_t *stream, uint64_t w)
{
    const uint8_t *p = stream + 4 * w;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* out[o] ^= the ten table blocks the stream's words index, for o < n: the
 * fold of the 2^logk-block table from counter c0. 0, or -1 when out of
 * memory or OpenSSL fails. */
static inline int ref_fold(const uint8_t seed[16], unsigned logk, uint64_t c0,
                           const uint8_t *table, uint8_t *out, size_t n)
{
    size_t l4 = n - n % 4;
    size_t blocks = 5 * (l4 / 2) + 3 * (n % 4);
    uint8_t *stream = malloc(16 * blocks + 16);

    if (stream == NULL || ref_lpn_ctr(seed, c0, stream, blocks) != 0) {
        free(stream);
        return -1;
    }
    for (size_t o = 0; o < n; o++) {
        for (unsigned r = 0; r < 10; r++) {
            uint64_t w = o < l4 ? 10 * (uint64_t)o + r : 4 * (5 * (l4 / 2) + 3 * (o - l4)) + r;
            uint32_t idx = ref_lpn_word_at(stream, w) & (uint32_t)((1u << logk) - 1);
            for (unsigned b = 0; b < 16; b++)
                out[16 * o + b] ^= table[16 * (size_t)idx + b];
        }
    }
    free(stream);
    return 0;
}

#endif
