/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The independent DPF reference that tests/test_dpf.c and
 * fuzz/fuzz_dpf_diff.c compare the engine's implementations with: SPEC.md
 * section 4 written out again, level by level, with OpenSSL's AES one block
 * at a time and the v1 layout built byte by byte. It shares no code with
 * the engine, so agreement on random parameters shows every implementation
 * bit-exact with the spec beyond the fixed vectors. Link with libcrypto.
 */
#ifndef MPCE_TESTS_REF_DPF_H
#define MPCE_TESTS_REF_DPF_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "mpcengine.h"

#define REF_MAX_KEY (72 + 16 * 64 + 8)

struct ref_prg {
    EVP_CIPHER_CTX *aes[2]; /* kL, kR */
};

struct ref_key {
    unsigned n, group, party;
    uint8_t kl[16], kr[16], seed[16];
    uint8_t cw_s[64][16]; /* tLCW in the t-bit */
    uint8_t cw_tr[64];
    uint8_t cw_out[16];
};

/* 0, or -1 when OpenSSL fails (p then holds nothing to free). */
static inline int ref_prg_init(struct ref_prg *p, const uint8_t kl[16], const uint8_t kr[16])
{
    const uint8_t *keys[2] = {kl, kr};
    p->aes[0] = p->aes[1] = NULL;
    for (int c = 0; c < 2; c++) {
        p->aes[c] = EVP_CIPHER_CTX_new();
        if (p->aes[c] == NULL ||
            EVP_EncryptInit_ex(p->aes[c], EVP_aes_128_ecb(), NULL, keys[c], NULL) != 1 ||
            EVP_CIPHER_CTX_set_padding(p->aes[c], 0) != 1) {
            EVP_CIPHER_CTX_free(p->aes[0]);
            EVP_CIPHER_CTX_free(p->aes[1]);
            p->aes[0] = p->aes[1] = NULL;
            return -1;
        }
    }
    return 0;
}

static inline void ref_prg_free(struct ref_prg *p)
{
    EVP_CIPHER_CTX_free(p->aes[0]);
    EVP_CIPHER_CTX_free(p->aes[1]);
}

static inline uint64_t ref_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static inline void ref_put64(uint8_t *p, uint64_t v)
{
    for (unsigned i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* G(s) = (AES_kL(s) ^ s, AES_kR(s) ^ s); the t-bits are taken, then cleared.
 * An initialized context's one-block encryption cannot fail short of a
 * broken libcrypto: that aborts. */
static inline void ref_expand(const struct ref_prg *p, const uint8_t s[16], uint8_t child[2][16],
                              unsigned t[2])
{
    for (int c = 0; c < 2; c++) {
        int len = 0;
        if (EVP_EncryptUpdate(p->aes[c], child[c], &len, s, 16) != 1 || len != 16) {
            fprintf(stderr, "ref_expand: EVP_EncryptUpdate failed\n");
            abort();
        }
        for (int i = 0; i < 16; i++)
            child[c][i] ^= s[i];
        t[c] = child[c][12] & 1u;
        child[c][12] &= 0xfe;
    }
}

static inline unsigned ref_bit(uint64_t x, unsigned n, unsigned level)
{
    return (unsigned)(x >> (n - 1 - level)) & 1u;
}

/* SPEC.md's Gen pseudo-code, line by line. */
static inline void ref_gen(const struct ref_prg *p, const uint8_t kl[16], const uint8_t kr[16],
                    unsigned n, unsigned group, uint64_t alpha, const uint8_t beta_in[16],
                    const uint8_t seed0[16], const uint8_t seed1[16], struct ref_key k[2])
{
    uint8_t s[2][16], beta[16];
    unsigned t[2] = {0, 1};

    memcpy(s[0], seed0, 16);
    memcpy(s[1], seed1, 16);
    s[0][12] &= 0xfe;
    s[1][12] &= 0xfe;
    for (unsigned b = 0; b < 2; b++) {
        memset(&k[b], 0, sizeof(k[b]));
        k[b].n = n;
        k[b].group = group;
        k[b].party = b;
        memcpy(k[b].kl, kl, 16);
        memcpy(k[b].kr, kr, 16);
        memcpy(k[b].seed, s[b], 16);
    }
    for (unsigned i = 0; i < n; i++) {
        uint8_t ch[2][2][16], scw[16];
        unsigned tc[2][2], tcw[2];
        ref_expand(p, s[0], ch[0], tc[0]);
        ref_expand(p, s[1], ch[1], tc[1]);
        const unsigned a = ref_bit(alpha, n, i), keep = a, lose = 1 - a;
        for (int j = 0; j < 16; j++)
            scw[j] = ch[0][lose][j] ^ ch[1][lose][j];
        tcw[0] = tc[0][0] ^ tc[1][0] ^ a ^ 1;
        tcw[1] = tc[0][1] ^ tc[1][1] ^ a;
        for (unsigned b = 0; b < 2; b++) {
            for (int j = 0; j < 16; j++)
                s[b][j] = ch[b][keep][j] ^ (t[b] ? scw[j] : 0);
            t[b] = tc[b][keep] ^ (t[b] & tcw[keep]);
        }
        for (unsigned b = 0; b < 2; b++) {
            memcpy(k[b].cw_s[i], scw, 16);
            k[b].cw_s[i][12] |= (uint8_t)tcw[0];
            k[b].cw_tr[i] = (uint8_t)tcw[1];
        }
    }
    memcpy(beta, beta_in, 16);
    uint8_t out[16] = {0};
    if (group == MPCE_DPF_BYTES) {
        beta[12] &= 0xfe;
        for (int j = 0; j < 16; j++)
            out[j] = beta[j] ^ s[0][j] ^ s[1][j]; /* -CW = CW */
    } else {
        uint64_t v = ref_le64(beta) - ref_le64(s[0]) + ref_le64(s[1]);
        ref_put64(out, t[1] ? (uint64_t)0 - v : v);
    }
    memcpy(k[0].cw_out, out, 16);
    memcpy(k[1].cw_out, out, 16);
}

/* Eval at one point: output_size bytes into y. */
static inline void ref_eval(const struct ref_prg *p, const struct ref_key *k, uint64_t x,
                            uint8_t *y)
{
    uint8_t s[16];
    unsigned t = k->party;

    memcpy(s, k->seed, 16);
    for (unsigned i = 0; i < k->n; i++) {
        uint8_t ch[2][16];
        unsigned tc[2];
        ref_expand(p, s, ch, tc);
        if (t) {
            for (int c = 0; c < 2; c++)
                for (int j = 0; j < 16; j++)
                    ch[c][j] ^= j == 12 ? (uint8_t)(k->cw_s[i][j] & 0xfe) : k->cw_s[i][j];
            tc[0] ^= k->cw_s[i][12] & 1u;
            tc[1] ^= k->cw_tr[i];
        }
        const unsigned bit = ref_bit(x, k->n, i);
        memcpy(s, ch[bit], 16);
        t = tc[bit];
    }
    if (k->group == MPCE_DPF_BYTES) {
        for (int j = 0; j < 16; j++)
            y[j] = s[j] ^ (t ? k->cw_out[j] : 0);
    } else {
        uint64_t v = ref_le64(s) + (t ? ref_le64(k->cw_out) : 0);
        ref_put64(y, k->party ? (uint64_t)0 - v : v);
    }
}

/* Format v1, field by field; returns the length. */
static inline size_t ref_serialize(const struct ref_key *k, uint8_t *buf)
{
    size_t off = 0;
    memset(buf, 0, REF_MAX_KEY);
    memcpy(buf, "MDPF", 4);
    buf[4] = 1;
    buf[5] = (uint8_t)k->n;
    buf[6] = (uint8_t)k->group;
    buf[7] = (uint8_t)k->party;
    memcpy(buf + 8, k->kl, 16);
    memcpy(buf + 24, k->kr, 16);
    memcpy(buf + 40, k->seed, 16);
    off = 56;
    for (unsigned i = 0; i < k->n; i++, off += 16)
        memcpy(buf + off, k->cw_s[i], 16);
    for (unsigned i = 0; i < k->n; i++)
        buf[off + i / 8] |= (uint8_t)(k->cw_tr[i] << (i % 8));
    off += (k->n + 7) / 8;
    memcpy(buf + off, k->cw_out, 16);
    return off + 16;
}

#endif
