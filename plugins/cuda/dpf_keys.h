/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DPF keys as the cuda kernels read them (struct cudak_dpf_keys): level-
 * major, in one allocation that the module uploads as it is. Built from
 * parsed keys (eval, eval_keys, evalall) or from a slice of an engine batch
 * (eval_batch). Plain C; tests/test_cuda_emu.c uses it in host memory.
 */
#ifndef MPCE_CUDA_DPF_KEYS_H
#define MPCE_CUDA_DPF_KEYS_H

#include <stdlib.h>
#include <string.h>

#include "mpcengine/plugin.h"
#include "plugins/cuda/kernels.h"

struct cuda_dpf_host_keys {
    unsigned char *bytes;
    size_t len, nkeys;
    size_t off_seed, off_out, off_cws, off_tr, off_party;
};

static inline int cuda_dpf_keys_alloc(size_t nkeys, unsigned bits, struct cuda_dpf_host_keys *t)
{
    const size_t b16 = 16 * nkeys;
    t->nkeys = nkeys;
    t->off_seed = 0;
    t->off_out = b16;
    t->off_cws = 2 * b16;
    t->off_tr = t->off_cws + (size_t)bits * b16;
    t->off_party = t->off_tr + 8 * nkeys;
    t->len = t->off_party + ((nkeys + 15) & ~(size_t)15);
    t->bytes = calloc(1, t->len);
    return t->bytes == NULL ? MPCE_ERR_NOMEM : 0;
}

static inline uint64_t cuda_dpf_tr_word(const uint8_t tr[8])
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 8; i++)
        v |= (uint64_t)tr[i] << (8 * i);
    return v;
}

/* Key j is *keys[j]. */
static inline int cuda_dpf_keys_build(const struct mpce_dpf_key_v1 *const *keys, size_t nkeys,
                                      unsigned bits, struct cuda_dpf_host_keys *t)
{
    int rc = cuda_dpf_keys_alloc(nkeys, bits, t);
    if (rc != 0)
        return rc;
    for (size_t j = 0; j < nkeys; j++) {
        const struct mpce_dpf_key_v1 *k = keys[j];
        memcpy(t->bytes + t->off_seed + 16 * j, k->seed, 16);
        memcpy(t->bytes + t->off_out + 16 * j, k->cw_out, 16);
        for (unsigned i = 0; i < bits; i++)
            memcpy(t->bytes + t->off_cws + 16 * ((size_t)i * nkeys + j), k->cw_s[i], 16);
        const uint64_t tr = cuda_dpf_tr_word(k->cw_tr);
        memcpy(t->bytes + t->off_tr + 8 * j, &tr, 8);
        t->bytes[t->off_party + j] = k->party;
    }
    return 0;
}

/* Keys first .. first + n - 1 of an engine batch. */
static inline int cuda_dpf_keys_from_batch(const struct mpce_dpf_batch_v1 *b, size_t first,
                                           size_t n, unsigned bits, struct cuda_dpf_host_keys *t)
{
    int rc = cuda_dpf_keys_alloc(n, bits, t);
    if (rc != 0)
        return rc;
    memcpy(t->bytes + t->off_seed, b->seed + first, 16 * n);
    memcpy(t->bytes + t->off_out, b->cw_out + first, 16 * n);
    for (unsigned i = 0; i < bits; i++)
        memcpy(t->bytes + t->off_cws + 16 * (size_t)i * n, b->cw_s + (size_t)i * b->nkeys + first,
               16 * n);
    memcpy(t->bytes + t->off_tr, b->cw_tr + first, 8 * n);
    memcpy(t->bytes + t->off_party, b->party + first, n);
    return 0;
}

/* The kernels' view of keys whose bytes start at base (host or device). */
static inline struct cudak_dpf_keys cuda_dpf_keys_view(const struct cuda_dpf_host_keys *t,
                                                       const void *base)
{
    const unsigned char *p = base;
    return (struct cudak_dpf_keys){
        .nkeys = t->nkeys,
        .seed = (const uint32_t *)(const void *)(p + t->off_seed),
        .party = p + t->off_party,
        .cw_tr = (const uint64_t *)(const void *)(p + t->off_tr),
        .cw_out = (const uint32_t *)(const void *)(p + t->off_out),
        .cw_s = (const uint32_t *)(const void *)(p + t->off_cws),
    };
}

#endif
