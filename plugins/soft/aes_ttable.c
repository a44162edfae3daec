/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Classic 32-bit T-table AES-128 encryption: one table lookup per byte per
 * round. Faster than the bitsliced core but the lookup addresses depend on
 * key and data, so it leaks through the cache; the engine offers it only
 * under allow_variable_time = yes.
 *
 * Columns are big-endian words (byte 0 of a column in the top 8 bits). The
 * tables are computed once, on first key expansion, rather than written out.
 */
#include "config.h"

#include <pthread.h>

#include "plugins/soft/aes.h"

#define ROUNDS 10

struct tt_schedule {
    uint32_t rk[4 * (ROUNDS + 1)];
};

static uint8_t sbox[256];
/* te[k][x]: column contribution of S(x) entering at row k,
 * te[0][x] = (2S, S, S, 3S) and te[k] = te[0] rotated right by 8k. */
static uint32_t te[4][256];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static uint8_t xtime(uint8_t x)
{
    return (uint8_t)((x << 1) ^ ((x >> 7) * 0x1b));
}

static void build_tables(void)
{
    uint8_t exp3[255], log3[256] = {0};
    uint8_t x = 1;

    /* 3 generates GF(2^8)^*: walk its powers to get log and antilog. */
    for (unsigned i = 0; i < 255; i++) {
        exp3[i] = x;
        log3[x] = (uint8_t)i;
        x ^= xtime(x);
    }
    for (unsigned v = 0; v < 256; v++) {
        uint8_t inv = v ? exp3[(255 - log3[v]) % 255] : 0;
        uint8_t s = inv;
        for (unsigned k = 1; k < 5; k++)
            s ^= (uint8_t)((inv << k) | (inv >> (8 - k)));
        sbox[v] = s ^ 0x63;
    }
    for (unsigned v = 0; v < 256; v++) {
        uint32_t s = sbox[v], s2 = xtime(sbox[v]);
        uint32_t t = s2 << 24 | s << 16 | s << 8 | (s2 ^ s);
        for (unsigned k = 0; k < 4; k++)
            te[k][v] = k ? (t >> (8 * k)) | (t << (32 - 8 * k)) : t;
    }
}

static inline uint32_t load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static inline void store_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline uint32_t sub_word(uint32_t w)
{
    return (uint32_t)sbox[w >> 24] << 24 | (uint32_t)sbox[(w >> 16) & 0xff] << 16
           | (uint32_t)sbox[(w >> 8) & 0xff] << 8 | sbox[w & 0xff];
}

static void tt_expand(void *ks, const uint8_t key[16])
{
    struct tt_schedule *sched = ks;
    uint32_t *w = sched->rk;
    uint32_t rcon = 0x01;

    pthread_once(&tables_once, build_tables);
    for (unsigned i = 0; i < 4; i++)
        w[i] = load_be32(key + 4 * i);
    for (unsigned i = 4; i < 4 * (ROUNDS + 1); i++) {
        uint32_t t = w[i - 1];
        if (i % 4 == 0) {
            t = sub_word((t << 8) | (t >> 24)) ^ (rcon << 24);
            rcon = xtime((uint8_t)rcon);
        }
        w[i] = w[i - 4] ^ t;
    }
}

/* Column j of the next state takes row k from column j + k (ShiftRows). */
#define TT_COLUMN(a, b, c, d, rkw)                                             \
    (te[0][(a) >> 24] ^ te[1][((b) >> 16) & 0xff] ^ te[2][((c) >> 8) & 0xff]  \
     ^ te[3][(d) & 0xff] ^ (rkw))

#define TT_LAST(a, b, c, d, rkw)                                               \
    (((uint32_t)sbox[(a) >> 24] << 24 | (uint32_t)sbox[((b) >> 16) & 0xff] << 16 \
      | (uint32_t)sbox[((c) >> 8) & 0xff] << 8 | (uint32_t)sbox[(d) & 0xff]) ^ (rkw))

static void tt_encrypt_block(const uint32_t *rk, const uint8_t *in, uint8_t *out)
{
    uint32_t s0 = load_be32(in) ^ rk[0], s1 = load_be32(in + 4) ^ rk[1];
    uint32_t s2 = load_be32(in + 8) ^ rk[2], s3 = load_be32(in + 12) ^ rk[3];

    for (unsigned r = 1; r < ROUNDS; r++) {
        const uint32_t *k = rk + 4 * r;
        uint32_t t0 = TT_COLUMN(s0, s1, s2, s3, k[0]);
        uint32_t t1 = TT_COLUMN(s1, s2, s3, s0, k[1]);
        uint32_t t2 = TT_COLUMN(s2, s3, s0, s1, k[2]);
        uint32_t t3 = TT_COLUMN(s3, s0, s1, s2, k[3]);
        s0 = t0;
        s1 = t1;
        s2 = t2;
        s3 = t3;
    }
    const uint32_t *k = rk + 4 * ROUNDS;
    store_be32(out, TT_LAST(s0, s1, s2, s3, k[0]));
    store_be32(out + 4, TT_LAST(s1, s2, s3, s0, k[1]));
    store_be32(out + 8, TT_LAST(s2, s3, s0, s1, k[2]));
    store_be32(out + 12, TT_LAST(s3, s0, s1, s2, k[3]));
}

static void tt_encrypt(const void *ks, const uint8_t *in, uint8_t *out, size_t n)
{
    const struct tt_schedule *sched = ks;

    for (size_t i = 0; i < n; i++)
        tt_encrypt_block(sched->rk, in + 16 * i, out + 16 * i);
}

const struct mpce_aes_core mpce_aes_ttable_core = {
    .ks_bytes = sizeof(struct tt_schedule),
    .pass_blocks = 1,
    .expand = tt_expand,
    .encrypt = tt_encrypt,
};
