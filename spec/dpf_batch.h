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

#endif
