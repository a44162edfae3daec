/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DPF key batches: the public opaque type mpce_dpf_keys, built once from
 * parsed or serialized keys into plugin.h's level-major layout.
 */
#ifndef MPCE_ENGINE_DPF_KEYS_H
#define MPCE_ENGINE_DPF_KEYS_H

#include <stdint.h>

#include "mpcengine/dpf.h"
#include "mpcengine/plugin.h"

struct mpce_dpf_keys {
    struct mpce_dpf_batch_v1 b;
    unsigned bits, group;       /* of every key, and of the contexts it serves */
    uint8_t kl[16], kr[16];
    void *mem;                  /* the arrays, one allocation */
    size_t mem_len;
};

/* The context a batch must be made for and evaluated with. */
struct mpce_dpf_keys_ctx {
    unsigned bits, group;
    const uint8_t *kl, *kr;
};

/* Whether key k (NULL: refused as such) belongs to ctx. A refusal names it
 * "ARG" (i = (size_t)-1), "ARG[i]" (indexed) or "ARG i"; the name is
 * formatted only then. */
mpce_status mpce_dpf_key_fits(const char *fn, const char *arg, size_t i, int indexed,
                              const struct mpce_dpf_keys_ctx *ctx,
                              const struct mpce_dpf_key_v1 *k);

/* A batch of nkeys keys for ctx: from parsed keys (keys != NULL) or from
 * nkeys serialized keys back to back in buf, len bytes. Errors name fn and
 * the key's index. */
mpce_status mpce_dpf_keys_build(const char *fn, const struct mpce_dpf_keys_ctx *ctx,
                                const mpce_dpf_key *const *keys, const uint8_t *buf, size_t len,
                                size_t nkeys, mpce_dpf_keys **out);

#endif
