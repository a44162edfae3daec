/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cuda DPF: gen, point evaluation (one key at many points, many keys,
 * level-major batches: one thread per 4 walks) and full-domain evaluation
 * (level by level in device memory, in chunks of at most 2^20 leaves) on
 * the GPU (k_dpf.h). Keys are always host memory: each call lays the keys
 * it needs out level-major (dpf_keys.h) and uploads them; points and
 * outputs are the call's memory kind.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "plugins/common/key_state.h"
#include "plugins/cuda/cuda.h"
#include "plugins/cuda/dpf_keys.h"
#include "plugins/cuda/k_aes.h"

/* Leaves per full-domain chunk, log2: what one staged copy to host memory
 * holds (16 MiB of u64 outputs, 32 of byte blocks). */
#define CUDA_DPF_CHUNK_LOG 20u
/* Leaves per subtree (one block of cudak_dpf_subtrees), log2, from the
 * domain: at most 2^12 and at least 2^8 (a block's shared-memory frontier),
 * and otherwise small enough for about 1024 blocks (a wave of an H200's 132
 * multiprocessors several times over): 2^20 leaves are 1024 subtrees of
 * 2^10, each expanded to 256 frontier nodes and walked 2 levels further
 * depth first. */
static unsigned subtree_log(unsigned bits)
{
    if (bits <= 8)
        return bits;
    const unsigned want = bits > 10 ? bits - 10 : 0;
    return want < 8 ? 8 : want > 12 ? 12 : want;
}

struct cuda_dpf {
    struct cuda_module *m;
    struct cudak_dpf d;        /* d.rk in device memory */
    uint8_t kl[16], kr[16];
};

static int dpf_new(void *module, unsigned bits, unsigned group, const uint8_t *kl,
                   const uint8_t *kr, void **state)
{
    struct cuda_module *mod = module;
    struct cuda_dpf *p = calloc(1, sizeof(*p));
    uint64_t rk[2 * CUDA_BS_RK_WORDS];
    if (p == NULL) {
        mod->host->set_error(mod->host, "cuda0: dpf ctx_new: out of host memory");
        return MPCE_ERR_NOMEM;
    }
    kd_bs_expand(kl, rk);
    kd_bs_expand(kr, rk + CUDA_BS_RK_WORDS);
    void *dev = NULL;
    cudaError_t e = cudaMalloc(&dev, sizeof(rk));
    if (e == cudaSuccess)
        e = cuda_upload(dev, rk, sizeof(rk));
    if (e != cudaSuccess) {
        cudaFree(dev);
        free(p);
        return cuda_fail(mod, e, "dpf ctx_new: the PRG key schedules to device memory");
    }
    p->m = mod;
    p->d = (struct cudak_dpf){.bits = bits, .group = group, .rk = dev};
    memcpy(p->kl, kl, 16);
    memcpy(p->kr, kr, 16);
    *state = p;
    return 0;
}

static void dpf_free(void *state)
{
    struct cuda_dpf *p = state;
    if (p == NULL)
        return;
    cudaFree((void *)p->d.rk);
    (void)cudaGetLastError(); /* no failure of a free may reach the next call's check */
    free(p);
}

/* ---- a call's stream and scratch ---- */

struct dpf_run {
    struct cuda_module *m;
    const struct mpce_call *call;
    cudaStream_t s;
    int own;            /* s is the call's own (host memory): wait and destroy at the end */
    void *scratch[4];
    unsigned ns;
    int rc;
    const char *what;
};

static void run_begin(struct dpf_run *r, struct cuda_module *m, const struct mpce_call *call,
                      const char *what)
{
    *r = (struct dpf_run){.m = m, .call = call, .what = what};
    cuda_launch_begin();
    if (call->memory == MPCE_MEM_DEVICE) {
        r->s = cuda_call_stream(m, call);
        return;
    }
    cudaError_t e = cudaStreamCreateWithFlags(&r->s, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        r->s = NULL;
        r->rc = cuda_fail(m, e, "a stream for the call (cudaStreamCreateWithFlags)");
        return;
    }
    r->own = 1;
}

static void *run_alloc(struct dpf_run *r, size_t bytes)
{
    if (r->rc != 0)
        return NULL;
    void *p = cuda_pipe_scratch(r->m, r->s, bytes, r->what);
    if (p == NULL) {
        r->rc = MPCE_ERR_NOMEM;
        return NULL;
    }
    r->scratch[r->ns++] = p;
    return p;
}

static void run_copy(struct dpf_run *r, void *dst, const void *src, size_t len,
                     enum cudaMemcpyKind kind)
{
    if (r->rc != 0)
        return;
    cudaError_t e = cudaMemcpyAsync(dst, src, len, kind, r->s);
    if (e != cudaSuccess)
        r->rc = cuda_fail(r->m, e, kind == cudaMemcpyHostToDevice ? "uploading (cudaMemcpyAsync)"
                                                                   : "downloading (cudaMemcpyAsync)");
}

/* Device memory holding len bytes of the call's memory at p: p itself on
 * device calls, else a copy. */
static const void *run_input(struct dpf_run *r, const void *p, size_t len)
{
    if (r->call->memory == MPCE_MEM_DEVICE)
        return p;
    void *d = run_alloc(r, len);
    if (d != NULL)
        run_copy(r, d, p, len, cudaMemcpyHostToDevice);
    return d;
}

/* The keys uploaded (t's host bytes may be freed once this returns: a copy
 * from pageable memory has read them by then). */
static struct cudak_dpf_keys run_keys(struct dpf_run *r, const struct cuda_dpf_host_keys *t)
{
    void *d = run_alloc(r, t->len);
    if (d != NULL)
        run_copy(r, d, t->bytes, t->len, cudaMemcpyHostToDevice);
    return cuda_dpf_keys_view(t, d != NULL ? d : t->bytes);
}

static int run_end(struct dpf_run *r)
{
    if (r->s == NULL)
        return r->rc;
    if (r->rc == 0) {
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            r->rc = cuda_fail(r->m, e, "queueing the kernels");
    }
    for (unsigned i = 0; i < r->ns; i++)
        cudaFreeAsync(r->scratch[i], r->s);
    if (!r->own && r->rc == 0)
        return cuda_finish(r->m, r->call, r->s, r->what);
    cudaError_t e = cudaStreamSynchronize(r->s);
    if (r->rc == 0 && e != cudaSuccess)
        r->rc = cuda_fail(r->m, e, "running on the GPU");
    if (r->own)
        cudaStreamDestroy(r->s);
    /* The teardown's failures follow one already reported, or are the
     * context's (sticky): none may be left for this thread's next check. */
    (void)cudaGetLastError();
    return r->rc;
}

/* ---- ops ---- */

static int dpf_gen(void *state, const struct mpce_call *call, uint64_t alpha, const uint8_t *beta,
                   const uint8_t *s0, const uint8_t *s1, struct mpce_dpf_key_v1 *key0,
                   struct mpce_dpf_key_v1 *key1)
{
    const struct cuda_dpf *p = state;
    const struct mpce_call host = MPCE_CALL_HOST_INIT; /* keys are host memory */
    struct {
        uint64_t alpha;
        uint32_t beta[4], s0[4], s1[4];
    } in;
    struct {
        uint32_t cws[64][4];
        uint64_t tr;
        uint32_t cwout[4];
    } res;
    struct dpf_run r;
    in.alpha = alpha;
    memcpy(in.beta, beta, 16);
    memcpy(in.s0, s0, 16);
    memcpy(in.s1, s1, 16);
    run_begin(&r, p->m, &host, "dpf.gen");
    unsigned char *din = run_alloc(&r, sizeof(in));
    unsigned char *dout = run_alloc(&r, sizeof(res));
    run_copy(&r, din, &in, sizeof(in), cudaMemcpyHostToDevice);
    if (r.rc == 0) {
        cudak_dpf_gen(r.s, &p->d, 1, (const uint64_t *)(void *)din,
                      (const uint32_t *)(void *)(din + offsetof(__typeof__(in), beta)),
                      (const uint32_t *)(void *)(din + offsetof(__typeof__(in), s0)),
                      (const uint32_t *)(void *)(din + offsetof(__typeof__(in), s1)),
                      (uint32_t *)(void *)dout,
                      (uint64_t *)(void *)(dout + offsetof(__typeof__(res), tr)),
                      (uint32_t *)(void *)(dout + offsetof(__typeof__(res), cwout)));
        run_copy(&r, &res, dout, sizeof(res), cudaMemcpyDeviceToHost);
    }
    int rc = run_end(&r);
    mpce_wipe(&in, sizeof(in));
    if (rc != 0)
        return rc;
    memset(key0, 0, sizeof(*key0));
    key0->bits = (uint8_t)p->d.bits;
    key0->group = (uint8_t)p->d.group;
    memcpy(key0->kl, p->kl, 16);
    memcpy(key0->kr, p->kr, 16);
    for (unsigned i = 0; i < p->d.bits; i++)
        memcpy(key0->cw_s[i], res.cws[i], 16);
    for (unsigned i = 0; i < 8; i++)
        key0->cw_tr[i] = (uint8_t)(res.tr >> (8 * i));
    memcpy(key0->cw_out, res.cwout, 16);
    *key1 = *key0;
    key0->party = 0;
    key1->party = 1;
    memcpy(key0->seed, s0, 16);
    memcpy(key1->seed, s1, 16);
    key0->seed[12] &= 0xfe;
    key1->seed[12] &= 0xfe;
    mpce_wipe(&res, sizeof(res));
    return 0;
}

/* n walks over uploaded keys, the points and out in the call's memory. */
static int eval_run(const struct cuda_dpf *p, const struct mpce_call *call, const char *what,
                    const struct cuda_dpf_host_keys *t, unsigned key_step, const uint64_t *points,
                    size_t n, uint8_t *out)
{
    const size_t osz = p->d.group ? 8u : 16u;
    struct dpf_run r;
    run_begin(&r, p->m, call, what);
    const struct cudak_dpf_keys dk = run_keys(&r, t);
    const uint64_t *dp = run_input(&r, points, 8 * n);
    uint8_t *dout = call->memory == MPCE_MEM_DEVICE ? out : run_alloc(&r, osz * n);
    if (r.rc == 0) {
        cudak_dpf_eval(r.s, &p->d, &dk, key_step, dp, n, dout);
        if (dout != out)
            run_copy(&r, out, dout, osz * n, cudaMemcpyDeviceToHost);
    }
    return run_end(&r);
}

static int dpf_eval(void *state, const struct mpce_call *call, const struct mpce_dpf_key_v1 *key,
                    const uint64_t *points, size_t npoints, uint8_t *out)
{
    const struct cuda_dpf *p = state;
    struct cuda_dpf_host_keys t = {0};
    if (cuda_dpf_keys_build(&key, 1, p->d.bits, &t) != 0) {
        p->m->host->set_error(p->m->host, "cuda0: dpf.eval: out of host memory for the key");
        return MPCE_ERR_NOMEM;
    }
    const int rc = eval_run(p, call, "dpf.eval", &t, 0, points, npoints, out);
    free(t.bytes);
    return rc;
}

static int dpf_eval_keys(void *state, const struct mpce_call *call,
                         const struct mpce_dpf_key_v1 *const *keys, const uint64_t *points,
                         size_t nkeys, uint8_t *out)
{
    const struct cuda_dpf *p = state;
    struct cuda_dpf_host_keys t = {0};
    if (cuda_dpf_keys_build(keys, nkeys, p->d.bits, &t) != 0) {
        p->m->host->set_error(p->m->host,
                              "cuda0: dpf.eval_keys: out of host memory for %zu keys", nkeys);
        return MPCE_ERR_NOMEM;
    }
    const int rc = eval_run(p, call, "dpf.eval_keys", &t, 1, points, nkeys, out);
    free(t.bytes);
    return rc;
}

static int dpf_eval_batch(void *state, const struct mpce_call *call,
                          const struct mpce_dpf_batch_v1 *batch, size_t first,
                          const uint64_t *points, size_t n, uint8_t *out)
{
    const struct cuda_dpf *p = state;
    struct cuda_dpf_host_keys t = {0};
    if (cuda_dpf_keys_from_batch(batch, first, n, p->d.bits, &t) != 0) {
        p->m->host->set_error(p->m->host,
                              "cuda0: dpf.eval_batch: out of host memory for %zu keys", n);
        return MPCE_ERR_NOMEM;
    }
    const int rc = eval_run(p, call, "dpf.eval_batch", &t, 1, points, n, out);
    free(t.bytes);
    return rc;
}

static int dpf_evalall(void *state, const struct mpce_call *call,
                       const struct mpce_dpf_key_v1 *key, uint8_t *out)
{
    const struct cuda_dpf *p = state;
    const unsigned bits = p->d.bits;
    const int dev = call->memory == MPCE_MEM_DEVICE;
    /* Device memory takes the whole domain in one launch; host memory is
     * staged a chunk at a time. */
    const unsigned cl = dev || bits < CUDA_DPF_CHUNK_LOG ? bits : CUDA_DPF_CHUNK_LOG;
    const unsigned sl = subtree_log(bits) < cl ? subtree_log(bits) : cl;
    const size_t chunks = (size_t)1 << (bits - cl), leaves = (size_t)1 << cl;
    const size_t per_chunk = (size_t)1 << (cl - sl), subtrees = chunks * per_chunk;
    const size_t osz = p->d.group ? 8u : 16u;
    struct cuda_dpf_host_keys t = {0};
    /* Each subtree's first leaf: the walk to its root follows its high bits. */
    uint64_t *points = malloc(8 * subtrees);
    if (points == NULL || cuda_dpf_keys_build(&key, 1, bits, &t) != 0) {
        free(points);
        p->m->host->set_error(p->m->host, "cuda0: dpf.evalall: out of host memory");
        return MPCE_ERR_NOMEM;
    }
    for (size_t i = 0; i < subtrees; i++)
        points[i] = (uint64_t)i << sl;
    struct dpf_run r;
    run_begin(&r, p->m, call, "dpf.evalall");
    const struct cudak_dpf_keys dk = run_keys(&r, &t);
    uint64_t *dpoints = run_alloc(&r, 8 * subtrees);
    run_copy(&r, dpoints, points, 8 * subtrees, cudaMemcpyHostToDevice);
    uint8_t *roots = run_alloc(&r, 16 * per_chunk);
    uint8_t *dout = dev ? out : run_alloc(&r, osz * leaves);
    for (size_t c = 0; c < chunks && r.rc == 0; c++) {
        uint8_t *o = dev ? out + c * leaves * osz : dout;
        /* One key: its subtrees all belong to key 0 (per_key covers them). */
        cudak_dpf_subtrees(r.s, &p->d, &dk, subtrees, dpoints + c * per_chunk, per_chunk, sl,
                           roots, o);
        /* Into pageable memory this copy waits for the chunk, so dout is
         * free again for the next one. */
        if (!dev)
            run_copy(&r, out + c * leaves * osz, dout, osz * leaves, cudaMemcpyDeviceToHost);
    }
    const int rc = run_end(&r);
    free(points);
    free(t.bytes);
    return rc;
}

const struct mpce_dpf_ops cuda_dpf_ops = {
    .struct_size = sizeof(struct mpce_dpf_ops),
    .ctx_new = dpf_new,
    .ctx_free = dpf_free,
    .gen = dpf_gen,
    .eval = dpf_eval,
    .eval_keys = dpf_eval_keys,
    .evalall = dpf_evalall,
    .eval_batch = dpf_eval_batch,
};
