/* SPDX-License-Identifier: Apache-2.0 */
/* The aesni LPN fold: the shared index arithmetic over the fastest AES
 * kernel this CPU runs. With VAES-512 the AES moves into the row loop
 * (mpce_lpn_fold_fused): its blocks then come out while the table misses
 * wait instead of in a phase of their own. */
#include "config.h"

#include <immintrin.h>

#include "plugins/aesni/aesni.h"
#include "plugins/common/lpn_fold.h"

/* Only this function and the one below run VAES-512 instructions; the
 * fold picks them only where the module's best PRG is the VAES-512 one,
 * which the CPU probe (and MPCENGINE_AESNI_DISABLE) allowed. */
#define AESNI_LPN_VAES512 __attribute__((target("aes,vaes,avx512f,avx512bw")))

/* The 20 blocks ctr(seed, b .. b+19): five zmm of four counters each,
 * LE64(b + i mod 2^64) in each lane's low half. key: 11 zmm round keys. */
AESNI_LPN_VAES512 static inline __attribute__((always_inline)) void
aesni_lpn_gen20(const void *key, uint64_t b, uint8_t *dst)
{
    const __m512i *rk = key;
    const __m512i four = _mm512_set_epi64(0, 4, 0, 4, 0, 4, 0, 4);
    /* Five named registers, not an array: GCC at -O2 keeps an array of
     * vectors on the stack and reloads it around every round. */
    __m512i x0 = _mm512_set_epi64(0, (long long)(b + 3u), 0, (long long)(b + 2u), 0,
                                  (long long)(b + 1u), 0, (long long)b);
    __m512i x1 = _mm512_add_epi64(x0, four);
    __m512i x2 = _mm512_add_epi64(x1, four);
    __m512i x3 = _mm512_add_epi64(x2, four);
    __m512i x4 = _mm512_add_epi64(x3, four);

    x0 = _mm512_xor_si512(x0, rk[0]);
    x1 = _mm512_xor_si512(x1, rk[0]);
    x2 = _mm512_xor_si512(x2, rk[0]);
    x3 = _mm512_xor_si512(x3, rk[0]);
    x4 = _mm512_xor_si512(x4, rk[0]);
    for (int r = 1; r < 10; r++) {
        x0 = _mm512_aesenc_epi128(x0, rk[r]);
        x1 = _mm512_aesenc_epi128(x1, rk[r]);
        x2 = _mm512_aesenc_epi128(x2, rk[r]);
        x3 = _mm512_aesenc_epi128(x3, rk[r]);
        x4 = _mm512_aesenc_epi128(x4, rk[r]);
    }
    _mm512_storeu_si512(dst, _mm512_aesenclast_epi128(x0, rk[10]));
    _mm512_storeu_si512(dst + 64, _mm512_aesenclast_epi128(x1, rk[10]));
    _mm512_storeu_si512(dst + 128, _mm512_aesenclast_epi128(x2, rk[10]));
    _mm512_storeu_si512(dst + 192, _mm512_aesenclast_epi128(x3, rk[10]));
    _mm512_storeu_si512(dst + 256, _mm512_aesenclast_epi128(x4, rk[10]));
}

AESNI_LPN_VAES512 static int aesni_lpn_fold_vaes512(const struct mpce_lpn_ctx *s,
                                                    const struct mpce_lpn_tuning *t, uint64_t c0,
                                                    const uint8_t *table, uint8_t *out, size_t n)
{
    const struct aesni_prg *p = s->prg_state;
    __m512i rk[11];

    _Static_assert(MPCE_LPN_GROUP_BLOCKS == 20, "aesni_lpn_gen20 makes 20 blocks");
    /* With one key, rk4's four lanes all hold key 0's round r. */
    for (int r = 0; r < 11; r++)
        rk[r] = _mm512_load_si512((const void *)p->ks.rk4[0][r]);
    return mpce_lpn_fold_fused(aesni_lpn_gen20, rk, s->prg, s->prg_state, t, s->logk, c0, table,
                               out, n);
}

static int aesni_lpn_ctx_new(void *module, const uint8_t *seed, unsigned logk, void **state)
{
    return mpce_lpn_ctx_new(aesni_best_prg_ops(module), module, seed, logk, state);
}

static int aesni_lpn_fold(void *state, const struct mpce_call *call, uint64_t c0,
                          const uint8_t *table, uint8_t *out, size_t n)
{
    const struct mpce_lpn_ctx *s = state;
    const struct mpce_lpn_tuning t = mpce_lpn_tuning_of(call);

    if (s->prg == &aesni_prg_vaes512_ops)
        return aesni_lpn_fold_vaes512(s, &t, c0, table, out, n);
    return mpce_lpn_fold_all(s->prg, s->prg_state, &t, s->logk, c0, table, out, n);
}

const struct mpce_lpn_ops aesni_lpn_ops = {
    .struct_size = sizeof(struct mpce_lpn_ops),
    .ctx_new = aesni_lpn_ctx_new,
    .ctx_free = mpce_lpn_ctx_free,
    .fold = aesni_lpn_fold,
};
