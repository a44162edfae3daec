/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The selector's crossover fixture: one plugin ("xover") with two PRG
 * implementations on OpenSSL EVP AES (evp_prg.c), costed as
 * tests/modules/xover.h says:
 *
 *   prg-xover-host  PORTABLE, priority 1: busy-waits a per-element cost
 *                   before its AES, so it beats soft's bitsliced AES on
 *                   every size and is never "auto"'s default by priority
 *   prg-xover-dev   ACCEL, MPCE_IMPL_ASYNC, host memory: a fixed cost per
 *                   call (a GPU's launch and transfers) and a small
 *                   per-element one; with a completion it finishes the call,
 *                   completes it through host->complete and returns
 *                   MPCE_OP_PENDING (the ABI allows the completion first),
 *                   without one it returns the result
 *
 * With MPCE_TEST_XOVER_FIXED_NS=T in the environment, the device's fixed
 * cost per call is T nanoseconds instead of xover.h's (a larger one moves
 * its crossover above the large class's top).
 *
 * With MPCE_TEST_XOVER_WRONG_ABOVE=E in the environment, prg-xover-dev
 * answers wrongly (one flipped bit) on calls of more than E work elements:
 * right at a row's own shape, wrong where the crossover search goes above
 * it.
 *
 * Waits are busy waits on the thread's CPU time, so they cost the same in
 * any build and stretch with the real work on a loaded machine. A work
 * element is a 16-byte block (mmo: blocks x keys).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/modules/evp_prg.h"
#include "tests/modules/xover.h"

/* On the calling thread's CPU time, not the wall clock: on a loaded
 * machine the modelled costs then stretch as the AES beside them does, and
 * the model's ratios (not only its differences) hold. */
static void busy_wait_ns(long ns)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    do
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < ns);
}

struct xover_state {
    const struct mpce_host *host;
    void *evp;
    size_t m;
};

static int xo_init(const struct mpce_host *host, void **module_state, char *why, size_t len)
{
    (void)why;
    (void)len;
    *module_state = (void *)host;
    return 0;
}

static int xo_ctx_new(void *module, const uint8_t *keys, size_t m, void **state)
{
    struct xover_state *s = calloc(1, sizeof(*s));
    if (!s)
        return MPCE_ERR_NOMEM;
    int rc = evp_prg_ctx_new(module, keys, m, &s->evp);
    if (rc != 0) {
        free(s);
        return rc;
    }
    s->host = module;
    s->m = m;
    *state = s;
    return 0;
}

static void xo_ctx_free(void *state)
{
    struct xover_state *s = state;
    if (s)
        evp_prg_ctx_free(s->evp);
    free(s);
}

/* MMO's AES as EVP ECB per key over chunks (as mod_tune.c does). */
static int mmo(struct xover_state *s, const struct mpce_call *call, const uint8_t *seeds,
               uint8_t *out, size_t n)
{
    enum { CHUNK = 16384 };
    size_t cap = n < CHUNK ? n : CHUNK;
    uint8_t *tmp = malloc(16 * cap);
    if (!tmp)
        return MPCE_ERR_NOMEM;
    int rc = 0;
    for (size_t done = 0; rc == 0 && done < n; done += cap) {
        size_t k = n - done < cap ? n - done : cap;
        const uint8_t *in = seeds + 16 * done;
        for (size_t j = 0; rc == 0 && j < s->m; j++) {
            rc = evp_prg_ecb(s->evp, call, j, in, tmp, k);
            for (size_t i = 0; rc == 0 && i < k; i++) {
                uint8_t *o = out + 16 * ((done + i) * s->m + j);
                for (int b = 0; b < 16; b++)
                    o[b] = tmp[16 * i + b] ^ in[16 * i + b];
            }
        }
    }
    free(tmp);
    return rc;
}

/* ---- the host implementation ------------------------------------------------ */

static int host_ecb(void *state, const struct mpce_call *call, size_t key_index,
                    const uint8_t *in, uint8_t *out, size_t n)
{
    struct xover_state *s = state;
    busy_wait_ns(XOVER_HOST_PER_NS * (long)n);
    return evp_prg_ecb(s->evp, call, key_index, in, out, n);
}

static int host_mmo(void *state, const struct mpce_call *call, const uint8_t *seeds,
                    uint8_t *out, size_t n)
{
    struct xover_state *s = state;
    busy_wait_ns(XOVER_HOST_PER_NS * (long)(n * s->m));
    return mmo(s, call, seeds, out, n);
}

static int host_ctr(void *state, const struct mpce_call *call, size_t key_index, uint64_t c0,
                    uint8_t *out, size_t n)
{
    struct xover_state *s = state;
    busy_wait_ns(XOVER_HOST_PER_NS * (long)n);
    return evp_prg_ctr(s->evp, call, key_index, c0, out, n);
}

/* ---- the "device" implementation -------------------------------------------- */

/* The call's result: completed and MPCE_OP_PENDING when it carries a
 * completion, else returned. */
static int dev_finish(struct xover_state *s, const struct mpce_call *call, int rc)
{
    if (call->done == NULL)
        return rc;
    s->host->complete(s->host, call->done, rc, rc != 0 ? "xover: the AES failed" : NULL);
    return MPCE_OP_PENDING;
}

static void dev_cost(uint64_t elements)
{
    const char *fixed = getenv("MPCE_TEST_XOVER_FIXED_NS");
    const long fixed_ns = fixed && *fixed ? strtol(fixed, NULL, 10) : XOVER_DEV_FIXED_NS;
    busy_wait_ns(fixed_ns + XOVER_DEV_PER_NS * (long)elements);
}

/* The wrong variant (MPCE_TEST_XOVER_WRONG_ABOVE): one bit flipped in a
 * call of more than that many work elements. */
static void dev_spoil(uint8_t *out, uint64_t elements, int rc)
{
    const char *above = getenv("MPCE_TEST_XOVER_WRONG_ABOVE");
    if (rc == 0 && above && *above && elements > strtoull(above, NULL, 10))
        out[0] ^= 1;
}

static int dev_ecb(void *state, const struct mpce_call *call, size_t key_index,
                   const uint8_t *in, uint8_t *out, size_t n)
{
    struct xover_state *s = state;
    dev_cost(n);
    struct mpce_call sync = MPCE_CALL_HOST_INIT;
    int rc = evp_prg_ecb(s->evp, &sync, key_index, in, out, n);
    dev_spoil(out, n, rc);
    return dev_finish(s, call, rc);
}

static int dev_mmo(void *state, const struct mpce_call *call, const uint8_t *seeds,
                   uint8_t *out, size_t n)
{
    struct xover_state *s = state;
    dev_cost((uint64_t)n * s->m);
    struct mpce_call sync = MPCE_CALL_HOST_INIT;
    int rc = mmo(s, &sync, seeds, out, n);
    dev_spoil(out, (uint64_t)n * s->m, rc);
    return dev_finish(s, call, rc);
}

static int dev_ctr(void *state, const struct mpce_call *call, size_t key_index, uint64_t c0,
                   uint8_t *out, size_t n)
{
    struct xover_state *s = state;
    dev_cost(n);
    struct mpce_call sync = MPCE_CALL_HOST_INIT;
    int rc = evp_prg_ctr(s->evp, &sync, key_index, c0, out, n);
    dev_spoil(out, n, rc);
    return dev_finish(s, call, rc);
}

static const struct mpce_prg_ops host_ops = {
    .struct_size = sizeof(struct mpce_prg_ops),
    .ctx_new = xo_ctx_new,
    .ctx_free = xo_ctx_free,
    .ecb = host_ecb,
    .mmo = host_mmo,
    .ctr = host_ctr,
};

static const struct mpce_prg_ops dev_ops = {
    .struct_size = sizeof(struct mpce_prg_ops),
    .ctx_new = xo_ctx_new,
    .ctx_free = xo_ctx_free,
    .ecb = dev_ecb,
    .mmo = dev_mmo,
    .ctr = dev_ctr,
};

static const struct mpce_impl host_impl = {
    .struct_size = sizeof(struct mpce_impl),
    .primitive = MPCE_PRIM_PRG,
    .name = "prg-xover-host",
    .impl_class = MPCE_CLASS_PORTABLE,
    .priority = 1,
    .flags = MPCE_IMPL_CONSTANT_TIME,
    .memory = MPCE_MEM_HOST,
    .ops = &host_ops,
};

static const struct mpce_impl dev_impl = {
    .struct_size = sizeof(struct mpce_impl),
    .primitive = MPCE_PRIM_PRG,
    .name = "prg-xover-dev",
    .impl_class = MPCE_CLASS_ACCEL,
    .priority = 400,
    .flags = MPCE_IMPL_CONSTANT_TIME | MPCE_IMPL_ASYNC,
    .memory = MPCE_MEM_HOST,
    .ops = &dev_ops,
};

static const struct mpce_impl *const impls[] = {&host_impl, &dev_impl};

static const struct mpce_plugin plugin = {
    .struct_size = sizeof(struct mpce_plugin),
    .abi_major = MPCE_PLUGIN_ABI_MAJOR,
    .abi_minor = MPCE_PLUGIN_ABI_MINOR,
    .name = "xover",
    .version = "1",
    .init = xo_init,
    .n_impls = 2,
    .impls = impls,
};

MPCE_API const struct mpce_plugin *mpce_plugin_entry_v2(void);
const struct mpce_plugin *mpce_plugin_entry_v2(void)
{
    return &plugin;
}
