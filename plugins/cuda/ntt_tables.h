/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cuda NTT's tables, laid out in host memory as the kernels read them
 * (struct cudak_ntt): built from the shared Harvey state, so the GPU and the
 * CPU backends use the same twiddles. Plain C; the module uploads the
 * result, tests/test_cuda_emu.c uses it where it is.
 */
#ifndef MPCE_CUDA_NTT_TABLES_H
#define MPCE_CUDA_NTT_TABLES_H

#include <stdlib.h>
#include <string.h>

#include "plugins/common/ntt_harvey.h"
#include "plugins/cuda/kernels.h"

/* One allocation: mods[ntables], rowmod[l] (padded to 8 bytes), words. */
struct cuda_ntt_host_tables {
    void *bytes;
    size_t len;
    size_t off_rowmod, off_words;
    size_t ntables;
};

static inline int cuda_ntt_tables_build(size_t n, size_t l, const uint64_t *q, const uint64_t *psi,
                                        struct cuda_ntt_host_tables *out)
{
    struct mpce_harvey_state *h = NULL;
    int rc = mpce_harvey_state_new(n, l, q, psi, &h);
    if (rc != 0)
        return rc;
    const size_t nt = h->ntables;
    const size_t off_rowmod = nt * sizeof(struct cudak_ntt_mod);
    const size_t off_words = off_rowmod + ((l * sizeof(uint32_t) + 7) & ~(size_t)7);
    const size_t len = off_words + nt * 4 * n * sizeof(uint64_t);
    unsigned char *b = calloc(1, len);
    if (b == NULL) {
        mpce_harvey_state_free(h);
        return MPCE_ERR_NOMEM;
    }
    struct cudak_ntt_mod *mods = (struct cudak_ntt_mod *)(void *)b;
    uint32_t *rowmod = (uint32_t *)(void *)(b + off_rowmod);
    uint64_t *words = (uint64_t *)(void *)(b + off_words);
    for (size_t j = 0; j < nt; j++) {
        const struct mpce_harvey_tables *t = &h->tables[j];
        mods[j] = (struct cudak_ntt_mod){.q = t->q,
                                         .ninv = t->ninv,
                                         .ninv_shoup = t->ninv_shoup,
                                         .last_w = t->last_w,
                                         .last_w_shoup = t->last_w_shoup,
                                         .bar_mu = t->bar_mu,
                                         .bar_shift = t->bar_shift};
        uint64_t *w = words + 4 * n * j;
        memcpy(w, t->w, n * sizeof(uint64_t));
        memcpy(w + n, t->w_shoup, n * sizeof(uint64_t));
        memcpy(w + 2 * n, t->iw, n * sizeof(uint64_t));
        memcpy(w + 3 * n, t->iw_shoup, n * sizeof(uint64_t));
    }
    for (size_t i = 0; i < l; i++)
        rowmod[i] = (uint32_t)(h->row[i] - h->tables);
    mpce_harvey_state_free(h);
    *out = (struct cuda_ntt_host_tables){
        .bytes = b, .len = len, .off_rowmod = off_rowmod, .off_words = off_words, .ntables = nt};
    return 0;
}

/* The kernels' view of tables whose bytes start at base (host or device). */
static inline struct cudak_ntt cuda_ntt_view(const struct cuda_ntt_host_tables *t, size_t n,
                                             size_t l, const void *base)
{
    const unsigned char *b = base;
    return (struct cudak_ntt){.n = n,
                              .l = l,
                              .mods = (const struct cudak_ntt_mod *)(const void *)b,
                              .rowmod = (const uint32_t *)(const void *)(b + t->off_rowmod),
                              .words = (const uint64_t *)(const void *)(b + t->off_words)};
}

#endif
