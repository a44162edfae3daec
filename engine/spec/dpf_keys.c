/* SPDX-License-Identifier: Apache-2.0 */
/* DPF key batches: checked once, packed level-major, wiped when freed. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "engine/internal.h"
#include "engine/spec/dpf_key.h"
#include "engine/spec/dpf_keys.h"
#include "spec/dpf_batch.h"

static const char *group_name(unsigned group)
{
    return group == MPCE_DPF_U64 ? "u64" : "bytes";
}

mpce_status mpce_dpf_key_fits(const char *fn, const char *arg, size_t i, int indexed,
                              const struct mpce_dpf_keys_ctx *ctx,
                              const struct mpce_dpf_key_v1 *k)
{
    if (k != NULL && k->bits == ctx->bits && k->group == ctx->group &&
        memcmp(k->kl, ctx->kl, 16) == 0 && memcmp(k->kr, ctx->kr, 16) == 0)
        return MPCE_OK;
    char name[48];
    if (i == (size_t)-1)
        snprintf(name, sizeof(name), "%s", arg);
    else
        snprintf(name, sizeof(name), indexed ? "%s[%zu]" : "%s %zu", arg, i);
    if (k == NULL)
        return mpce_error(MPCE_ERR_ARG, "%s: %s is NULL", fn, name);
    if (k->bits != ctx->bits)
        return mpce_error(MPCE_ERR_ARG,
                          "%s: %s has %u domain bits, the context %u; make the context with "
                          "mpce_dpf_new_for_key",
                          fn, name, k->bits, ctx->bits);
    if (k->group != ctx->group)
        return mpce_error(MPCE_ERR_ARG, "%s: %s is for the %s group, the context for %s", fn,
                          name, group_name(k->group), group_name(ctx->group));
    return mpce_error(MPCE_ERR_ARG,
                      "%s: %s was made with other PRG keys (kL, kR) than the context's", fn,
                      name);
}

mpce_status mpce_dpf_keys_build(const char *fn, const struct mpce_dpf_keys_ctx *ctx,
                                const mpce_dpf_key *const *keys, const uint8_t *buf, size_t len,
                                size_t nkeys, mpce_dpf_keys **out)
{
    const size_t mem_len = mpce_spec_dpf_batch_size(nkeys, ctx->bits);
    if (mem_len == 0)
        return mpce_error(MPCE_ERR_ARG, "%s: nkeys = %zu overflows the address space", fn, nkeys);
    const size_t key_len = mpce_dpf_key_size(ctx->bits);
    if (!keys && nkeys > SIZE_MAX / key_len)
        return mpce_error(MPCE_ERR_ARG, "%s: nkeys = %zu overflows the address space", fn, nkeys);
    if (!keys && len != nkeys * key_len)
        return mpce_error(MPCE_ERR_FORMAT,
                          "%s: len = %zu bytes, but %zu keys of %u domain bits are %zu bytes "
                          "each (%zu in all)",
                          fn, len, nkeys, ctx->bits, key_len, nkeys * key_len);
    struct mpce_spec_dpf_batch_rw rw;
    struct mpce_dpf_keys *bt = calloc(1, sizeof(*bt));
    void *mem = bt ? mpce_spec_dpf_batch_alloc(nkeys, ctx->bits, &rw) : NULL;
    if (!mem) {
        free(bt);
        return mpce_error(MPCE_ERR_NOMEM, "%s: out of memory for %zu keys (%zu bytes)", fn,
                          nkeys, mem_len);
    }
    bt->b = mpce_spec_dpf_batch_view(&rw);
    bt->bits = ctx->bits;
    bt->group = ctx->group;
    memcpy(bt->kl, ctx->kl, 16);
    memcpy(bt->kr, ctx->kr, 16);
    bt->mem = mem;
    bt->mem_len = mem_len;

    struct mpce_dpf_key_v1 *tmp = keys ? NULL : malloc(sizeof(*tmp));
    mpce_status st = keys || tmp ? MPCE_OK : mpce_error(MPCE_ERR_NOMEM, "%s: out of memory", fn);
    for (size_t i = 0; st == MPCE_OK && i < nkeys; i++) {
        const struct mpce_dpf_key_v1 *k;
        if (keys) {
            k = keys[i] ? &keys[i]->k : NULL;
        } else {
            st = mpce_dpf_key_v1_read(fn, i, buf + i * key_len, key_len, tmp);
            k = tmp;
        }
        if (st == MPCE_OK)
            st = mpce_dpf_key_fits(fn, keys ? "keys" : "key", i, keys != NULL, ctx, k);
        if (st == MPCE_OK)
            mpce_spec_dpf_batch_put(&rw, i, ctx->bits, k);
    }
    if (tmp) {
        OPENSSL_cleanse(tmp, sizeof(*tmp));
        free(tmp);
    }
    if (st != MPCE_OK) {
        mpce_dpf_keys_free(bt);
        return st;
    }
    *out = bt;
    return MPCE_OK;
}

MPCE_API size_t mpce_dpf_keys_count(const mpce_dpf_keys *batch)
{
    return batch ? batch->b.nkeys : 0;
}

MPCE_API void mpce_dpf_keys_free(mpce_dpf_keys *batch)
{
    if (!batch)
        return;
    /* Seeds and correction words are one party's secret shares. */
    OPENSSL_cleanse(batch->mem, batch->mem_len);
    free(batch->mem);
    free(batch);
}
