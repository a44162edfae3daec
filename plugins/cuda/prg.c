/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cuda PRG op tables: bitsliced (constant time) and T-table (variable
 * time) AES, the schedules expanded on the host once per context and kept
 * in device memory. Device-memory calls launch on the call's stream;
 * host-memory calls go through the staged pipeline (device.c).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "plugins/common/key_state.h"
#include "plugins/cuda/cuda.h"
#include "plugins/cuda/k_aes.h"

static int prg_new(void *module, const uint8_t *keys, size_t m, int ttable, void **state)
{
    struct cuda_module *mod = module;
    struct cuda_prg *p = calloc(1, sizeof(*p));
    const size_t words = ttable ? CUDA_TT_RK_WORDS * 4 : CUDA_BS_RK_WORDS * 8;
    unsigned char *sched = calloc(m, words);
    if (p == NULL || sched == NULL) {
        free(p);
        free(sched);
        mod->host->set_error(mod->host, "cuda0: out of host memory for %zu AES key schedules",
                             m);
        return MPCE_ERR_NOMEM;
    }
    for (size_t j = 0; j < m; j++) {
        if (ttable)
            mpce_aes_expand_words(keys + 16 * j, (uint32_t *)(void *)(sched + words * j));
        else
            kd_bs_expand(keys + 16 * j, (uint64_t *)(void *)(sched + words * j));
    }
    void *rk = NULL;
    cudaError_t e = cudaMalloc(&rk, m * words);
    if (e == cudaSuccess)
        e = cuda_upload(rk, sched, m * words);
    mpce_wipe(sched, m * words);
    free(sched);
    if (e != cudaSuccess) {
        cudaFree(rk);
        free(p);
        return cuda_fail(mod, e, "prg ctx_new: the key schedules to device memory");
    }
    p->m = mod;
    p->keys = (struct cudak_prg_keys){
        .ttable = ttable, .m = (unsigned)m, .rk = rk, .t0 = ttable ? mod->t0 : NULL};
    *state = p;
    return 0;
}

static int prg_bs_new(void *module, const uint8_t *keys, size_t m, void **state)
{
    return prg_new(module, keys, m, 0, state);
}

static int prg_tt_new(void *module, const uint8_t *keys, size_t m, void **state)
{
    return prg_new(module, keys, m, 1, state);
}

static void prg_free(void *state)
{
    struct cuda_prg *p = state;
    if (p == NULL)
        return;
    /* Round keys are key material: zeroed before the memory is released. */
    const size_t bytes =
        p->keys.m * (p->keys.ttable ? CUDA_TT_RK_WORDS * 4 : CUDA_BS_RK_WORDS * 8);
    cudaMemset((void *)p->keys.rk, 0, bytes);
    cudaFree((void *)p->keys.rk);
    /* Nothing to report from a free; nothing may be left for the next
     * call's launch check either. */
    (void)cudaGetLastError();
    free(p);
}

/* ---- the pipeline's launchers (units: blocks, or seeds for mmo) ---- */

struct prg_call {
    const struct cuda_prg *p;
    size_t key_index;
    uint64_t c0;
};

static void launch_ecb(const void *ctx, cudaStream_t s, const void *din0, const void *din1,
                       void *dout, size_t first, size_t n)
{
    const struct prg_call *c = ctx;
    cudak_prg_ecb(s, &c->p->keys, c->key_index, din0, dout, n);
}

static void launch_ctr(const void *ctx, cudaStream_t s, const void *din0, const void *din1,
                       void *dout, size_t first, size_t n)
{
    const struct prg_call *c = ctx;
    cudak_prg_ctr(s, &c->p->keys, c->key_index, c->c0 + (uint64_t)first, dout, n);
}

static void launch_mmo(const void *ctx, cudaStream_t s, const void *din0, const void *din1,
                       void *dout, size_t first, size_t n)
{
    const struct prg_call *c = ctx;
    cudak_prg_mmo(s, &c->p->keys, din0, dout, n);
}

static int prg_ecb(void *state, const struct mpce_call *call, size_t key_index, const uint8_t *in,
                   uint8_t *out, size_t n)
{
    const struct cuda_prg *p = state;
    if (call->memory == MPCE_MEM_DEVICE) {
        cudaStream_t s = cuda_call_stream(p->m, call);
        cuda_launch_begin();
        cudak_prg_ecb(s, &p->keys, key_index, in, out, n);
        return cuda_finish(p->m, call, s, "prg.ecb");
    }
    const struct prg_call c = {.p = p, .key_index = key_index};
    const struct cuda_pipe_op op = {
        .what = "prg.ecb", .units = {.in = {16, 0}, .out = 16, .align = 4}, .launch = launch_ecb};
    return cuda_pipe_run(p->m, &op, &c, in, NULL, out, n);
}

static int prg_ctr(void *state, const struct mpce_call *call, size_t key_index, uint64_t c0,
                   uint8_t *out, size_t n)
{
    const struct cuda_prg *p = state;
    if (call->memory == MPCE_MEM_DEVICE) {
        cudaStream_t s = cuda_call_stream(p->m, call);
        cuda_launch_begin();
        cudak_prg_ctr(s, &p->keys, key_index, c0, out, n);
        return cuda_finish(p->m, call, s, "prg.ctr");
    }
    const struct prg_call c = {.p = p, .key_index = key_index, .c0 = c0};
    const struct cuda_pipe_op op = {
        .what = "prg.ctr", .units = {.out = 16, .align = 4}, .launch = launch_ctr};
    return cuda_pipe_run(p->m, &op, &c, NULL, NULL, out, n);
}

static int prg_mmo(void *state, const struct mpce_call *call, const uint8_t *seeds, uint8_t *out,
                   size_t n)
{
    const struct cuda_prg *p = state;
    if (call->memory == MPCE_MEM_DEVICE) {
        cudaStream_t s = cuda_call_stream(p->m, call);
        cuda_launch_begin();
        cudak_prg_mmo(s, &p->keys, seeds, out, n);
        return cuda_finish(p->m, call, s, "prg.mmo");
    }
    const struct prg_call c = {.p = p};
    const struct cuda_pipe_op op = {
        .what = "prg.mmo",
        .units = {.in = {16, 0}, .out = 16 * (size_t)p->keys.m, .align = 4},
        .launch = launch_mmo};
    return cuda_pipe_run(p->m, &op, &c, seeds, NULL, out, n);
}

const struct mpce_prg_ops cuda_prg_bs_ops = {
    .struct_size = sizeof(struct mpce_prg_ops),
    .ctx_new = prg_bs_new,
    .ctx_free = prg_free,
    .ecb = prg_ecb,
    .mmo = prg_mmo,
    .ctr = prg_ctr,
};

const struct mpce_prg_ops cuda_prg_tt_ops = {
    .struct_size = sizeof(struct mpce_prg_ops),
    .ctx_new = prg_tt_new,
    .ctx_free = prg_free,
    .ecb = prg_ecb,
    .mmo = prg_mmo,
    .ctr = prg_ctr,
};
