/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The level-major key batch of plugin.h (struct mpce_dpf_batch_v1), one key
 * in and out: the engine packs keys this way once, and whatever evaluates
 * a batch without a kernel for its layout (the skeleton's portable walk,
 * the engine's fallback for tables without eval_batch) unpacks them. Both
 * sides read these two functions, so they cannot disagree on the layout.
 */
#ifndef MPCE_SPEC_DPF_BATCH_H
#define MPCE_SPEC_DPF_BATCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpcengine/plugin.h"

/* The arrays of a batch, writable, as the engine fills them. */
struct mpce_spec_dpf_batch_rw {
    size_t nkeys;
    uint8_t (*seed)[16];
    uint8_t *party;
    uint64_t *cw_tr;
    uint8_t (*cw_out)[16];
    uint8_t (*cw_s)[16];
};

/* Bytes of one zeroed block holding the arrays of nkeys keys of `bits`
 * levels, each on a 64-byte boundary as plugin.h promises; 0 when that
 * overflows. */
static inline size_t mpce_spec_dpf_batch_size(size_t nkeys, unsigned bits)
{
    const size_t per_key = 16u * ((size_t)bits + 2u) + 1u + 8u;
    if (nkeys > (SIZE_MAX - 6u * 64u) / per_key)
        return 0;
    return ((16u * nkeys + 63u) & ~(size_t)63) * 2u + ((nkeys + 63u) & ~(size_t)63) +
           ((8u * nkeys + 63u) & ~(size_t)63) + ((16u * (size_t)bits * nkeys + 63u) & ~(size_t)63) +
           64u;
}

/* That block, allocated (free() releases it) and laid out into *rw; NULL
 * when mpce_spec_dpf_batch_size is 0 or memory runs out. The engine, the
 * self-test and the benchmark all build their batches here. */
static inline void *mpce_spec_dpf_batch_alloc(size_t nkeys, unsigned bits,
                                              struct mpce_spec_dpf_batch_rw *rw)
{
    const size_t size = mpce_spec_dpf_batch_size(nkeys, bits);
    uint8_t *m = size ? aligned_alloc(64, size) : NULL;
    if (m == NULL)
        return NULL;
    memset(m, 0, size);
    const size_t blocks = (16u * nkeys + 63u) & ~(size_t)63;
    rw->nkeys = nkeys;
    rw->seed = (uint8_t (*)[16])m;
    rw->cw_out = (uint8_t (*)[16])(m + blocks);
    rw->party = m + 2u * blocks;
    rw->cw_tr = (uint64_t *)(void *)(rw->party + ((nkeys + 63u) & ~(size_t)63));
    rw->cw_s = (uint8_t (*)[16])(void *)((uint8_t *)rw->cw_tr + ((8u * nkeys + 63u) & ~(size_t)63));
    return m;
}

/* The read-only view of a batch that the op takes. */
static inline struct mpce_dpf_batch_v1 mpce_spec_dpf_batch_view(const struct mpce_spec_dpf_batch_rw *rw)
{
    struct mpce_dpf_batch_v1 b = {.nkeys = rw->nkeys,
                                  .seed = (const uint8_t (*)[16])rw->seed,
                                  .party = rw->party,
                                  .cw_tr = rw->cw_tr,
                                  .cw_out = (const uint8_t (*)[16])rw->cw_out,
                                  .cw_s = (const uint8_t (*)[16])rw->cw_s};
    return b;
}

static inline uint64_t mpce_spec_dpf_tr_word(const uint8_t cw_tr[8])
{
    uint64_t v = 0;
    for (unsigned b = 0; b < 8; b++)
        v |= (uint64_t)cw_tr[b] << (8 * b);
    return v;
}

/* Key j of the batch, k's levels 0 .. bits - 1. */
static inline void mpce_spec_dpf_batch_put(const struct mpce_spec_dpf_batch_rw *b, size_t j,
                                           unsigned bits, const struct mpce_dpf_key_v1 *k)
{
    memcpy(b->seed[j], k->seed, 16);
    b->party[j] = k->party;
    b->cw_tr[j] = mpce_spec_dpf_tr_word(k->cw_tr);
    memcpy(b->cw_out[j], k->cw_out, 16);
    for (unsigned i = 0; i < bits; i++)
        memcpy(b->cw_s[(size_t)i * b->nkeys + j], k->cw_s[i], 16);
}

/* Key j of the batch as a whole key of a context with these bits, group and
 * PRG keys (levels past bits zero, as a parsed key has them). */
static inline void mpce_spec_dpf_batch_get(const struct mpce_dpf_batch_v1 *b, size_t j,
                                           unsigned bits, unsigned group, const uint8_t kl[16],
                                           const uint8_t kr[16], struct mpce_dpf_key_v1 *k)
{
    memset(k, 0, sizeof(*k));
    k->bits = (uint8_t)bits;
    k->group = (uint8_t)group;
    k->party = b->party[j];
    memcpy(k->kl, kl, 16);
    memcpy(k->kr, kr, 16);
    memcpy(k->seed, b->seed[j], 16);
    for (unsigned i = 0; i < bits; i++)
        memcpy(k->cw_s[i], b->cw_s[(size_t)i * b->nkeys + j], 16);
    for (unsigned by = 0; by < 8; by++)
        k->cw_tr[by] = (uint8_t)(b->cw_tr[j] >> (8 * by));
    memcpy(k->cw_out, b->cw_out[j], 16);
}

/* Keys first .. first + cnt - 1 of a batch as whole keys, ptrs[j] =
 * &keys[j]: what an eval_keys table is given when nothing walks the layout
 * itself (the engine's fall-back and the skeleton's portable walk). */
static inline void mpce_spec_dpf_batch_unpack(const struct mpce_dpf_batch_v1 *b, size_t first,
                                              size_t cnt, unsigned bits, unsigned group,
                                              const uint8_t kl[16], const uint8_t kr[16],
                                              struct mpce_dpf_key_v1 *keys,
                                              const struct mpce_dpf_key_v1 **ptrs)
{
    for (size_t j = 0; j < cnt; j++) {
        mpce_spec_dpf_batch_get(b, first + j, bits, group, kl, kr, &keys[j]);
        ptrs[j] = &keys[j];
    }
}

#endif
