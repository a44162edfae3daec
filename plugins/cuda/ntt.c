/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cuda NTT: the shared Harvey tables (ntt_tables.h) uploaded once per
 * context; forward, inverse and mul on the call's stream for device
 * buffers, through the staged pipeline (units: polynomials) for host ones.
 */
#include "config.h"

#include <stdlib.h>

#include "plugins/cuda/cuda.h"
#include "plugins/cuda/ntt_tables.h"

struct cuda_ntt {
    struct cuda_module *m;
    void *dev;              /* the tables' bytes in device memory */
    struct cudak_ntt d;     /* their view */
};

static int ntt_new(void *module, size_t n, size_t l, const uint64_t *q, const uint64_t *psi,
                   void **state)
{
    struct cuda_module *mod = module;
    struct cuda_ntt_host_tables t = {0};
    struct cuda_ntt *s = calloc(1, sizeof(*s));
    int rc = s == NULL ? MPCE_ERR_NOMEM : cuda_ntt_tables_build(n, l, q, psi, &t);
    if (rc != 0) {
        free(s);
        mod->host->set_error(mod->host, "cuda0: ntt ctx_new(n=%zu, l=%zu): %s", n, l,
                             rc == MPCE_ERR_NOMEM ? "out of host memory for the twiddles"
                                                  : "n is not a power of two >= 2, or l is 0");
        return rc;
    }
    cudaError_t e = cudaMalloc(&s->dev, t.len);
    if (e == cudaSuccess)
        e = cuda_upload(s->dev, t.bytes, t.len);
    if (e != cudaSuccess) {
        cudaFree(s->dev);
        free(t.bytes);
        free(s);
        return cuda_fail(mod, e, "ntt ctx_new: the twiddle tables to device memory");
    }
    s->m = mod;
    s->d = cuda_ntt_view(&t, n, l, s->dev);
    free(t.bytes);
    *state = s;
    return 0;
}

static void ntt_free(void *state)
{
    struct cuda_ntt *s = state;
    if (s == NULL)
        return;
    cudaFree(s->dev);
    (void)cudaGetLastError(); /* no failure of a free may reach the next call's check */
    free(s);
}

enum ntt_kind { NTT_FORWARD, NTT_INVERSE, NTT_MUL };

struct ntt_call {
    const struct cuda_ntt *s;
    enum ntt_kind kind;
};

static void ntt_launch(const struct cuda_ntt *s, enum ntt_kind kind, cudaStream_t st,
                       const uint64_t *a, const uint64_t *b, uint64_t *out, size_t batch)
{
    const size_t rows = batch * s->d.l;
    if (kind == NTT_FORWARD)
        cudak_ntt_forward(st, &s->d, a, out, rows);
    else if (kind == NTT_INVERSE)
        cudak_ntt_inverse(st, &s->d, a, out, rows);
    else
        cudak_ntt_mul(st, &s->d, a, b, out, rows);
}

static void pipe_launch(const void *ctx, cudaStream_t st, const void *din0, const void *din1,
                        void *dout, size_t first, size_t n)
{
    const struct ntt_call *c = ctx;
    ntt_launch(c->s, c->kind, st, din0, din1, dout, n);
}

static int ntt_run(void *state, const struct mpce_call *call, enum ntt_kind kind,
                   const uint64_t *a, const uint64_t *b, uint64_t *out, size_t batch)
{
    static const char *const what[] = {"ntt.forward", "ntt.inverse", "ntt.mul"};
    const struct cuda_ntt *s = state;
    if (call->memory == MPCE_MEM_DEVICE) {
        cudaStream_t st = cuda_call_stream(s->m, call);
        cuda_launch_begin();
        ntt_launch(s, kind, st, a, b, out, batch);
        return cuda_finish(s->m, call, st, what[kind]);
    }
    const size_t poly = s->d.l * s->d.n * sizeof(uint64_t);
    const struct ntt_call c = {.s = s, .kind = kind};
    const struct cuda_pipe_op op = {
        .what = what[kind],
        .units = {.in = {poly, kind == NTT_MUL ? poly : 0}, .out = poly, .align = 1},
        .launch = pipe_launch};
    return cuda_pipe_run(s->m, &op, &c, a, b, out, batch);
}

static int ntt_forward(void *state, const struct mpce_call *call, const uint64_t *in,
                       uint64_t *out, size_t batch)
{
    return ntt_run(state, call, NTT_FORWARD, in, NULL, out, batch);
}

static int ntt_inverse(void *state, const struct mpce_call *call, const uint64_t *in,
                       uint64_t *out, size_t batch)
{
    return ntt_run(state, call, NTT_INVERSE, in, NULL, out, batch);
}

static int ntt_mul(void *state, const struct mpce_call *call, const uint64_t *a,
                   const uint64_t *b, uint64_t *out, size_t batch)
{
    return ntt_run(state, call, NTT_MUL, a, b, out, batch);
}

const struct mpce_ntt_ops cuda_ntt_ops = {
    .struct_size = sizeof(struct mpce_ntt_ops),
    .ctx_new = ntt_new,
    .ctx_free = ntt_free,
    .forward = ntt_forward,
    .inverse = ntt_inverse,
    .mul = ntt_mul,
};
