/* SPDX-License-Identifier: Apache-2.0 */
/* OpenSSL EVP AES-128 behind the PRG ops (test modules only). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "mpcengine/prg.h"
#include "tests/modules/evp_prg.h"

/* Raw keys only: a fresh EVP context per call keeps concurrent calls on one
 * state safe, and speed does not matter here. */
struct evp_state {
    size_t m;
    uint8_t keys[MPCE_PRG_MAX_KEYS][16];
};

int evp_prg_ctx_new(void *module, const uint8_t *keys, size_t m, void **state)
{
    if (m == 0 || m > MPCE_PRG_MAX_KEYS)
        return MPCE_ERR_ARG;
    struct evp_state *s = calloc(1, sizeof(*s));
    if (!s)
        return MPCE_ERR_NOMEM;
    s->m = m;
    memcpy(s->keys, keys, 16 * m);
    *state = s;
    return 0;
}

void evp_prg_ctx_free(void *state)
{
    free(state);
}

static int encrypt(const uint8_t key[16], const uint8_t *in, uint8_t *out, size_t n)
{
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int ok = c && EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), NULL, key, NULL) == 1 &&
             EVP_CIPHER_CTX_set_padding(c, 0) == 1;
    for (size_t done = 0; ok && done < n;) {
        size_t chunk = n - done < 65536 ? n - done : 65536;
        int outl;
        ok = EVP_EncryptUpdate(c, out + 16 * done, &outl, in + 16 * done, (int)(16 * chunk)) == 1;
        done += chunk;
    }
    EVP_CIPHER_CTX_free(c);
    return ok ? 0 : MPCE_ERR_BACKEND;
}

int evp_prg_ecb(void *state, const struct mpce_call *call, size_t key_index, const uint8_t *in,
                uint8_t *out, size_t n)
{
    struct evp_state *s = state;
    if (key_index >= s->m)
        return MPCE_ERR_ARG;
    return encrypt(s->keys[key_index], in, out, n);
}

int evp_prg_mmo(void *state, const struct mpce_call *call, const uint8_t *seeds, uint8_t *out,
                size_t n)
{
    struct evp_state *s = state;
    uint8_t blk[16];
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < s->m; j++) {
            if (encrypt(s->keys[j], seeds + 16 * i, blk, 1) != 0)
                return MPCE_ERR_BACKEND;
            for (int b = 0; b < 16; b++)
                out[16 * (i * s->m + j) + b] = blk[b] ^ seeds[16 * i + b];
        }
    }
    return 0;
}

int evp_prg_ctr(void *state, const struct mpce_call *call, size_t key_index, uint64_t c0,
                uint8_t *out, size_t n)
{
    struct evp_state *s = state;
    if (key_index >= s->m)
        return MPCE_ERR_ARG;
    for (size_t i = 0; i < n; i++) {
        uint64_t c = c0 + i;
        for (int b = 0; b < 8; b++)
            out[16 * i + b] = (uint8_t)(c >> (8 * b));
        memset(out + 16 * i + 8, 0, 8);
    }
    return encrypt(s->keys[key_index], out, out, n);
}

const struct mpce_prg_ops evp_prg_ops = {
    .struct_size = sizeof(struct mpce_prg_ops),
    .ctx_new = evp_prg_ctx_new,
    .ctx_free = evp_prg_ctx_free,
    .ecb = evp_prg_ecb,
    .mmo = evp_prg_mmo,
    .ctr = evp_prg_ctr,
};
