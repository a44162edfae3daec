/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The VAES kernels' shared body (plugins/aesni/aes_vaes_body.h) on a model
 * of a LANES-block register built from AES-NI's 128-bit one, for the
 * constant-time check: valgrind 3.19 cannot run VAES, but it runs AES-NI,
 * and what the check looks for (a branch or an address that depends on a
 * key or a block) is the body's C, which this compiles unchanged. Not a
 * header of its own: model2.c and model4.c define MODEL_LANES and include
 * it. The model's own helpers mirror aes_vaes256.c's and aes_vaes512.c's:
 * they branch only on counts (public), never on data; ct_vaes.c checks
 * that the model computes what the AES-NI kernel does.
 */
#ifndef MPCE_CT_VAES_MODEL_H
#define MPCE_CT_VAES_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include <emmintrin.h>
#include <wmmintrin.h>

#include "plugins/aesni/aesni.h"

#define LANES MODEL_LANES
#if LANES == 2
#define KW 32
#define RK_LANES rk2
#define SEL_LANES sel2
#elif LANES == 4
#define KW 64
#define RK_LANES rk4
#define SEL_LANES sel4
#else
#error "MODEL_LANES is 2 (the ymm kernels) or 4 (the zmm kernels)"
#endif

typedef struct {
    __m128i b[LANES];
} vec;

/* How many of register l's blocks are among the first cnt. */
typedef size_t vmask;

static inline vmask lanes(size_t cnt, unsigned l)
{
    size_t have = cnt > (size_t)LANES * l ? cnt - (size_t)LANES * l : 0;
    return have < LANES ? have : LANES;
}

static inline __m128i ld1(const uint8_t *p)
{
    return _mm_loadu_si128((const __m128i *)p);
}

static inline vec ld(const uint8_t *p)
{
    vec v;
    for (unsigned h = 0; h < LANES; h++)
        v.b[h] = ld1(p + 16 * h);
    return v;
}

static inline void st(uint8_t *p, vec v)
{
    for (unsigned h = 0; h < LANES; h++)
        _mm_storeu_si128((__m128i *)(p + 16 * h), v.b[h]);
}

static inline vec ldm(const uint8_t *p, vmask have)
{
    vec v;
    for (unsigned h = 0; h < LANES; h++)
        v.b[h] = h < have ? ld1(p + 16 * h) : _mm_setzero_si128();
    return v;
}

static inline void stm(uint8_t *p, vmask have, vec v)
{
    for (unsigned h = 0; h < LANES && h < have; h++)
        _mm_storeu_si128((__m128i *)(p + 16 * h), v.b[h]);
}

static inline vec ld_key(const uint8_t *p)
{
    vec v;
    for (unsigned h = 0; h < LANES; h++)
        v.b[h] = _mm_load_si128((const __m128i *)(p + 16 * h));
    return v;
}

static inline vec bcast_block(const uint8_t *p)
{
    vec v;
    for (unsigned h = 0; h < LANES; h++)
        v.b[h] = ld1(p);
    return v;
}

#define MODEL_LANEWISE(name, expr)                                                          \
    static inline vec name(vec a, vec k)                                                    \
    {                                                                                       \
        for (unsigned h = 0; h < LANES; h++)                                                \
            a.b[h] = expr;                                                                  \
        return a;                                                                           \
    }
MODEL_LANEWISE(vxor, _mm_xor_si128(a.b[h], k.b[h]))
MODEL_LANEWISE(vadd64, _mm_add_epi64(a.b[h], k.b[h]))
MODEL_LANEWISE(aesenc, _mm_aesenc_si128(a.b[h], k.b[h]))
MODEL_LANEWISE(aesenclast, _mm_aesenclast_si128(a.b[h], k.b[h]))

static inline vec ctr_first(uint64_t c0)
{
    vec v;
    for (unsigned h = 0; h < LANES; h++)
        v.b[h] = _mm_set_epi64x(0, (long long)(c0 + h));
    return v;
}

static inline vec ctr_splat(uint64_t x)
{
    vec v;
    for (unsigned h = 0; h < LANES; h++)
        v.b[h] = _mm_set_epi64x(0, (long long)x);
    return v;
}

static inline vec ld_blocks(const uint8_t *const p[LANES])
{
    vec v;
    for (unsigned h = 0; h < LANES; h++)
        v.b[h] = ld1(p[h]);
    return v;
}

/* The m = 2 layout: LANES / 2 seeds, each twice; `have` of them exist (a
 * missing one reads as zero, as the zmm kernels' masked load gives, or as
 * `safe`, as the ymm kernels' pointer select reads). */
static inline vec dup_seeds(const uint8_t *p, const uint8_t *safe, size_t have)
{
    vec v;
    for (unsigned h = 0; h < LANES; h++) {
        const unsigned seed = h / 2;
        v.b[h] = seed < have ? ld1(p + 16 * seed)
                             : (LANES == 2 ? ld1(safe) : _mm_setzero_si128());
    }
    return v;
}

/* A node's control bit (bit 0 of its 32-bit word 3) as a block mask. */
static inline vec tmask(vec x)
{
    for (unsigned h = 0; h < LANES; h++)
        x.b[h] = _mm_shuffle_epi32(_mm_srai_epi32(_mm_slli_epi32(x.b[h], 31), 31), 0xff);
    return x;
}

static inline vec clr_t(vec x)
{
    for (unsigned h = 0; h < LANES; h++)
        x.b[h] = _mm_andnot_si128(_mm_set_epi32(1, 0, 0, 0), x.b[h]);
    return x;
}

static inline vec xor_and(vec a, vec c, vec m)
{
    for (unsigned h = 0; h < LANES; h++)
        a.b[h] = _mm_xor_si128(a.b[h], _mm_and_si128(c.b[h], m.b[h]));
    return a;
}

static inline vec bcast_cw_pair(const uint8_t cw[2][16])
{
    vec v;
    for (unsigned h = 0; h < LANES; h++)
        v.b[h] = ld1(cw[h & 1]);
    return v;
}

#include "plugins/aesni/aes_vaes_body.h"

#endif
