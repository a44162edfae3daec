/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A row's inputs and outputs, shared by its candidates: built once, outside
 * every timing, from splitmix64 (SPEC.md section 5) so runs are repeatable.
 * Every buffer is written here, so no candidate pays for first-touch faults.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine/spec/dpf_key.h"
#include "engine/spec/ntt_params.h"
#include "spec/spec.h"
#include "tools/bench/bench.h"

#define MAX_DPF_KEYS (1u << 20)

static void fill(uint64_t seed, void *buf, size_t len)
{
    uint8_t *p = buf;
    for (size_t i = 0; i < len; i += 8) {
        uint64_t v = mpce_spec_splitmix64(&seed);
        for (size_t b = 0; b < 8 && i + b < len; b++)
            p[i + b] = (uint8_t)(v >> (8 * b));
    }
}

/* A written buffer of len bytes (at least one). */
static void *buffer(size_t len, uint64_t seed)
{
    void *p = malloc(len ? len : 1);
    if (p)
        fill(seed, p, len);
    return p;
}

static mpce_status prg(const struct mpce_bench_shape *s, struct mpce_bench_fixture *f)
{
    size_t in_blocks = strcmp(s->op, "prg.ctr") == 0 ? 0 : (size_t)s->n;
    size_t out_blocks = (size_t)(strcmp(s->op, "prg.mmo") == 0 ? s->n * s->m : s->n);
    f->in_len = 16 * in_blocks;
    f->out_len = 16 * out_blocks;
    f->in = buffer(f->in_len, 2);
    f->out = buffer(f->out_len, 3);
    return f->in && f->out ? MPCE_OK : MPCE_ERR_NOMEM;
}

static mpce_status ntt(const struct mpce_bench_shape *s, struct mpce_bench_fixture *f)
{
    uint64_t g;
    mpce_status st = mpce_ntt_params((size_t)s->N, &s->q, 1, &g, &f->psi);
    if (st != MPCE_OK)
        return st;
    size_t words = (size_t)(s->N * s->B);
    f->in_len = f->out_len = 8 * words;
    f->in = malloc(f->in_len);
    f->out = buffer(f->out_len, 3);
    if (!f->in || !f->out)
        return MPCE_ERR_NOMEM;
    uint64_t seed = 2, *w = (uint64_t *)f->in;
    for (size_t i = 0; i < words; i++)
        w[i] = mpce_spec_splitmix64(&seed) % s->q;
    if (strcmp(mpce_bench_engine_op(s), "ntt.mul") == 0) {
        if (!(f->in2 = malloc(f->in_len)))
            return MPCE_ERR_NOMEM;
        w = (uint64_t *)f->in2;
        for (size_t i = 0; i < words; i++)
            w[i] = mpce_spec_splitmix64(&seed) % s->q;
    }
    /* In place, out is the input: canonical, and the transforms keep it so. */
    if (s->inplace)
        memcpy(f->out, f->in, f->in_len);
    return MPCE_OK;
}

static mpce_status lpn(const struct mpce_bench_shape *s, struct mpce_bench_fixture *f)
{
    fill(4, f->seed, sizeof(f->seed));
    f->table = buffer((size_t)16 << s->logk, 5);
    f->out_len = 16 * (size_t)s->n;
    f->out = buffer(f->out_len, 3);
    return f->table && f->out ? MPCE_OK : MPCE_ERR_NOMEM;
}

static mpce_status dpf(const struct mpce_bench_shape *s, struct mpce_bench_fixture *f)
{
    mpce_status st = mpce_dpf_default_keys(f->keys, f->keys + 16);
    if (st != MPCE_OK)
        return st;
    int all = strcmp(s->op, "dpf.evalall") == 0;
    size_t outputs = all ? (size_t)1 << s->bits : (size_t)s->keys;
    f->out_len = 16 * outputs;
    f->out = buffer(f->out_len, 3);
    if (!f->out)
        return MPCE_ERR_NOMEM;
    /* eval: one key (at s->keys points); eval_keys: distinct keys. */
    const int one_key = all || strcmp(s->op, "dpf.eval") == 0;
    f->n_dkeys = one_key ? 1 : (s->keys < MAX_DPF_KEYS ? (size_t)s->keys : MAX_DPF_KEYS);
    f->dkeys = calloc(f->n_dkeys, sizeof(*f->dkeys));
    if (!f->dkeys)
        return MPCE_ERR_NOMEM;
    if (!all) {
        uint64_t mask = mpce_spec_dpf_domain_mask((unsigned)s->bits);
        uint64_t seed = 6;
        f->points = malloc((size_t)s->keys * sizeof(uint64_t));
        f->dkey_ptrs = malloc((size_t)s->keys * sizeof(*f->dkey_ptrs));
        if (!f->points || !f->dkey_ptrs)
            return MPCE_ERR_NOMEM;
        for (size_t i = 0; i < s->keys; i++) {
            f->points[i] = mpce_spec_splitmix64(&seed) & mask;
            f->dkey_ptrs[i] = &f->dkeys[i % f->n_dkeys];
        }
    }
    if (s->threads <= 1) {
        /* The floor is the AES a DPF cannot avoid: EvalAll expands 2^n - 1
         * inner nodes with two blocks each (about 2^(n+1)); a point eval
         * needs at least one block per level of each key or point
         * (n * keys), timed as one call (throughput: one point's levels
         * are a dependent chain, slower than this). */
        f->floor_blocks = all ? UINT64_C(2) << s->bits : s->bits * s->keys;
        f->floor_buf = buffer(16 * (size_t)f->floor_blocks, 7);
        if (!f->floor_buf)
            return MPCE_ERR_NOMEM;
    }
    return MPCE_OK;
}

mpce_status mpce_bench_fixture_new(const struct mpce_bench_shape *s,
                                   struct mpce_bench_fixture **out)
{
    struct mpce_bench_fixture *f = calloc(1, sizeof(*f));
    if (!f)
        return mpce_error(MPCE_ERR_NOMEM, "benchmark: out of memory");
    fill(1, f->keys, sizeof(f->keys));
    mpce_status st;
    switch (s->prim) {
    case MPCE_PRIM_PRG:
        st = prg(s, f);
        break;
    case MPCE_PRIM_NTT:
        st = ntt(s, f);
        break;
    case MPCE_PRIM_LPN:
        st = lpn(s, f);
        break;
    default:
        st = dpf(s, f);
        break;
    }
    if (st != MPCE_OK) {
        mpce_bench_fixture_free(f);
        if (st == MPCE_ERR_NOMEM)
            return mpce_error(MPCE_ERR_NOMEM, "%s %s: out of memory for the buffers", s->op,
                              s->text);
        return st;
    }
    *out = f;
    return MPCE_OK;
}

void mpce_bench_fixture_free(struct mpce_bench_fixture *f)
{
    if (!f)
        return;
    free(f->in);
    free(f->in2);
    free(f->out);
    free(f->table);
    free(f->floor_buf);
    free(f->dkeys);
    free(f->dkey_ptrs);
    free(f->dbatch_mem);
    free(f->points);
    free(f);
}

void mpce_bench_chain_point(struct mpce_bench_fixture *f)
{
    uint64_t prev;
    memcpy(&prev, f->out, sizeof(prev));
    /* Read as volatile: a compiler that saw the zero (LTO) still may not
     * drop the dependency. */
    const volatile uint64_t *mask = &f->chain_mask;
    f->points[0] ^= prev & *mask;
}
