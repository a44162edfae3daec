/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Differential: PRG ecb, mmo and ctr through every implementation this CPU
 * can run (the built-in soft plugin's and the modules of this build), each
 * compared byte for byte with soft's, and soft's with OpenSSL's AES-128.
 * Lengths from 0 blocks up, 0, 1 and 3 favoured; buffers unaligned by the
 * input's choice and ending where their allocation does (ASan sees a
 * kernel's access one byte past them); ecb also in place.
 *
 * Input: key count (1..8), op, length, misalignment, key index, in-place
 * flag, the counter (8 bytes), the keys (16 bytes each), then the blocks
 * (zero-filled past the input's end).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "fuzz/fuzz.h"

#define MAX_IMPLS 16
#define MAX_BLOCKS 300

static void ref_ecb(const uint8_t key[16], const uint8_t *in, uint8_t *out, size_t n)
{
    if (n == 0)
        return;
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int len = 0;
    FUZZ_CHECK(c != NULL && EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), NULL, key, NULL) == 1,
               "OpenSSL AES");
    EVP_CIPHER_CTX_set_padding(c, 0);
    FUZZ_CHECK(EVP_EncryptUpdate(c, out, &len, in, (int)(16 * n)) == 1 && len == (int)(16 * n),
               "OpenSSL AES");
    EVP_CIPHER_CTX_free(c);
}

/* What the op should give, from OpenSSL alone. */
static void reference(int op, const uint8_t *keys, size_t m, size_t ki, uint64_t c0,
                      const uint8_t *in, uint8_t *out, size_t n)
{
    if (op == 0) {
        ref_ecb(keys + 16 * ki, in, out, n);
    } else if (op == 1) {
        uint8_t *tmp = malloc(16 * n + 1);
        FUZZ_CHECK(tmp != NULL, "out of memory");
        for (size_t j = 0; j < m; j++) {
            ref_ecb(keys + 16 * j, in, tmp, n);
            for (size_t i = 0; i < n; i++)
                for (size_t b = 0; b < 16; b++)
                    out[16 * (i * m + j) + b] = tmp[16 * i + b] ^ in[16 * i + b];
        }
        free(tmp);
    } else {
        for (size_t i = 0; i < n; i++) {
            uint64_t c = c0 + (uint64_t)i;
            memset(out + 16 * i, 0, 16);
            for (unsigned b = 0; b < 8; b++)
                out[16 * i + b] = (uint8_t)(c >> (8 * b));
        }
        ref_ecb(keys + 16 * ki, out, out, n);
    }
}

static const char *const op_names[] = {"ecb", "mmo", "ctr"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *impls[MAX_IMPLS];
    static size_t nimpl;
    mpce_engine *e = fuzz_engine(1);
    if (nimpl == 0)
        nimpl = fuzz_impls(e, MPCE_PRIM_PRG, impls, MAX_IMPLS);

    struct fuzz_in in = {data, size};
    size_t m = 1 + fuzz_u8(&in) % MPCE_PRG_MAX_KEYS;
    int op = fuzz_u8(&in) % 3;
    uint8_t lsel = fuzz_u8(&in);
    /* 0, 1 and 3 blocks often; otherwise any length up to MAX_BLOCKS. */
    size_t n = lsel < 48 ? (size_t[]){0, 1, 3}[lsel % 3] : (size_t)(lsel * 7 + fuzz_u8(&in)) % MAX_BLOCKS;
    size_t mis = fuzz_u8(&in) % 64;
    size_t ki = fuzz_u8(&in) % m;
    int in_place = op == 0 && (fuzz_u8(&in) & 1);
    uint64_t c0 = fuzz_u64(&in);
    uint8_t keys[16 * MPCE_PRG_MAX_KEYS];
    fuzz_bytes(&in, keys, 16 * m);

    size_t in_len = 16 * n, out_len = op == 1 ? 16 * n * m : 16 * n;
    uint8_t *src = fuzz_alloc_misaligned(in_len, mis);
    fuzz_bytes(&in, src, in_len);
    uint8_t *want = malloc(out_len + 1);
    FUZZ_CHECK(want != NULL, "out of memory");
    reference(op, keys, m, ki, c0, src, want, n);

    mpce_prg *ctx = NULL;
    FUZZ_CHECK(mpce_prg_new(e, keys, m, &ctx) == MPCE_OK, "mpce_prg_new: %s", mpce_last_error());
    for (size_t i = 0; i < nimpl; i++) {
        /* Each implementation its own misalignment, so in and out differ. */
        uint8_t *out = fuzz_alloc_misaligned(out_len, mis + 3 * i + 1);
        memset(out, 0xa5, out_len);
        mpce_status st;
        if (op == 0 && in_place) {
            memcpy(out, src, in_len);
            st = mpce_prg_ecb(ctx, impls[i], ki, out, out, n);
        } else if (op == 0) {
            st = mpce_prg_ecb(ctx, impls[i], ki, src, out, n);
        } else if (op == 1) {
            st = mpce_prg_mmo(ctx, impls[i], src, out, n);
        } else {
            st = mpce_prg_ctr(ctx, impls[i], ki, c0, out, n);
        }
        FUZZ_CHECK(st == MPCE_OK, "%s %s on %zu blocks: %s", impls[i], op_names[op], n,
                   mpce_last_error());
        FUZZ_CHECK(memcmp(out, want, out_len) == 0, "%s %s on %zu blocks (m = %zu%s): %s",
                   impls[i], op_names[op], n, m, in_place ? ", in place" : "",
                   i == 0 ? "soft differs from OpenSSL" : "differs from soft");
        fuzz_free_misaligned(out);
    }
    mpce_prg_free(ctx);
    free(want);
    fuzz_free_misaligned(src);
    return 0;
}
