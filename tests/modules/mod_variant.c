/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The loader's test modules, built from this one source: each is compiled
 * with one -DVARIANT_<NAME> and differs from a correct module in exactly the
 * way its name says. tests/test_loader.c checks what the engine makes of
 * each: refused with a one-line reason, or accepted and working, and the
 * host alive either way.
 *
 *   GOOD         correct: prg-test-good, selectable by name
 *   WRONG        prg-test-wrong's ecb flips one output bit: fails the self-test
 *   NOENTRY      exports an unversioned entry name
 *   ABIMAJOR     built for ABI major 3
 *   NEWMINOR     built for a minor newer than the engine's
 *   SHORT        the descriptor's struct_size is too small
 *   DUPNAME      calls itself "soft", the built-in plugin's name
 *   PROBE        its probe refuses: not usable here
 *   IMPLPROBE    its implementation's probe refuses
 *   NULLOP       a required op (ctx_free) is NULL
 *   NOTIMING     flags carry neither constant- nor variable-time, at priority
 *                INT_MAX (it would have become "auto" and failed the
 *                constant-time policy open)
 *   BOTHTIMING   flags carry both
 *   UNKNOWNFLAG  flags carry a bit the ABI does not define
 *   PRIOHIGH     priority INT_MAX in the SIMD class: clamped to 399, works
 *   BADCLASS     an impl_class the ABI does not define
 *   NOHOST       memory lacks MPCE_MEM_HOST
 *   OLDMINOR     built for ABI 2.0: a DPF table cut before evalall_range;
 *                loads, passes, and full-domain evaluation works unsplit
 *   DECLINEALL   serves() declines every context: it checked nothing, so it
 *                must fail its self-test rather than pass untested
 *   BADPRIM      an implementation of primitive 9, which does not exist
 *   BADDEVICE    devices "bad0" (no functions) and "bad1" (wrong struct_size),
 *                and an implementation that serves bad1: both devices are
 *                refused, and so, with bad1's reason, is the implementation
 *   ONEKEY       serves() takes contexts of one key only: the mmo records with
 *                m = 1 run, but no ecb or ctr record (they use two keys, the
 *                record's behind a decoy) does, so it fails
 *   REFUSEM4     ctx_new refuses four keys (as a plugin may for sizes it
 *                lacks): the mmo m = 4 records are declined, the rest run, it
 *                passes; the refusals write error detail during the lazy
 *                self-test that a successful call must not leave behind
 *   KNOBDUP      two knobs named "batch"
 *   KNOBORDER    a knob's values not ascending (64 after 128)
 *   KNOBDEFAULT  a knob whose default (100) is not among its values
 *   CHECKSPRG    a PRG implementation claims MPCE_IMPL_CHECKS_NTT_INPUT
 *   NTTOLDFLAG   ntt-test-nttoldflag, built for ABI 2.3, claims it too
 *   NTTLIAR      ntt-test-nttliar claims it but never checks: it must fail
 *                its self-test, or the engine would transform bad inputs
 *   NTT24        ntt-test-ntt24, built for ABI 2.4, claims it and checks out
 *                of place only, as the flag asks: it passes, and in place the
 *                engine still checks first, under either refusal mode
 *   NTT25        ntt-test-ntt25: NTT24 built for this header's minor, as a
 *                2.4 plugin rebuilt against 2.5 is: the same promise, the
 *                same outcome
 *   NTTPLACELIAR ntt-test-nttplaceliar claims MPCE_IMPL_CHECKS_NTT_IN_PLACE
 *                too, but checks out of place only: it fails its self-test
 *   NTTPLACEOLD  ntt-test-nttplaceold, built for 2.4, claims both: refused
 *   NTTPLACEALONE ntt-test-nttplacealone claims IN_PLACE without INPUT:
 *                refused
 *   KNOBOPS      a knob naming lpn.fold, an op of another primitive
 */
#include "config.h"

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "plugins/common/dpf_walk.h"
#include "tests/modules/evp_prg.h"

#define STR_(x) #x
#define STR(x) STR_(x)

#if defined(VARIANT_GOOD)
#define V good
#elif defined(VARIANT_WRONG)
#define V wrong
#elif defined(VARIANT_NOENTRY)
#define V noentry
#elif defined(VARIANT_ABIMAJOR)
#define V abimajor
#elif defined(VARIANT_NEWMINOR)
#define V newminor
#elif defined(VARIANT_SHORT)
#define V short
#elif defined(VARIANT_DUPNAME)
#define V dupname
#elif defined(VARIANT_PROBE)
#define V probe
#elif defined(VARIANT_IMPLPROBE)
#define V implprobe
#elif defined(VARIANT_NULLOP)
#define V nullop
#elif defined(VARIANT_NOTIMING)
#define V notiming
#elif defined(VARIANT_BOTHTIMING)
#define V bothtiming
#elif defined(VARIANT_UNKNOWNFLAG)
#define V unknownflag
#elif defined(VARIANT_PRIOHIGH)
#define V priohigh
#elif defined(VARIANT_BADCLASS)
#define V badclass
#elif defined(VARIANT_NOHOST)
#define V nohost
#elif defined(VARIANT_OLDMINOR)
#define V oldminor
#elif defined(VARIANT_DECLINEALL)
#define V declineall
#elif defined(VARIANT_BADPRIM)
#define V badprim
#elif defined(VARIANT_BADDEVICE)
#define V baddevice
#elif defined(VARIANT_ONEKEY)
#define V onekey
#elif defined(VARIANT_REFUSEM4)
#define V refusem4
#elif defined(VARIANT_KNOBDUP)
#define V knobdup
#elif defined(VARIANT_KNOBORDER)
#define V knoborder
#elif defined(VARIANT_KNOBDEFAULT)
#define V knobdefault
#elif defined(VARIANT_CHECKSPRG)
#define V checksprg
#elif defined(VARIANT_NTTOLDFLAG)
#define V nttoldflag
#elif defined(VARIANT_NTTLIAR)
#define V nttliar
#elif defined(VARIANT_NTT24)
#define V ntt24
#elif defined(VARIANT_NTT25)
#define V ntt25
#elif defined(VARIANT_NTTPLACELIAR)
#define V nttplaceliar
#elif defined(VARIANT_NTTPLACEOLD)
#define V nttplaceold
#elif defined(VARIANT_NTTPLACEALONE)
#define V nttplacealone
#elif defined(VARIANT_KNOBOPS)
#define V knobops
#else
#error "build with one -DVARIANT_<NAME>"
#endif

/* ---- the implementation's ops ---------------------------------------------- */

#if defined(VARIANT_NTTOLDFLAG) || defined(VARIANT_NTTLIAR) || defined(VARIANT_NTT24) || \
    defined(VARIANT_NTT25) || defined(VARIANT_NTTPLACELIAR) || defined(VARIANT_NTTPLACEOLD) || \
    defined(VARIANT_NTTPLACEALONE)
#define VARIANT_NTT 1
#include <string.h>

#include "plugins/common/ntt_harvey.h"

/* A correct portable NTT, but for the check it claims to make. */
static int ntt_new(void *module, size_t n, size_t l, const uint64_t *q, const uint64_t *psi,
                   void **state)
{
    return mpce_harvey_state_new(n, l, q, psi, (struct mpce_harvey_state **)state);
}

static void ntt_free(void *state)
{
    mpce_harvey_state_free(state);
}

/* NTT24 and NTTPLACELIAR: whether a word of the batch is not reduced,
 * checked out of place only. */
static int unreduced(const struct mpce_harvey_state *s, const uint64_t *in, const uint64_t *out,
                     size_t batch)
{
#if defined(VARIANT_NTT24) || defined(VARIANT_NTT25) || defined(VARIANT_NTTPLACELIAR)
    if (in != out)
        for (size_t i = 0; i < batch * s->l * s->n; i++)
            if (in[i] >= s->row[(i / s->n) % s->l]->q)
                return 1;
#else
    (void)s, (void)in, (void)out, (void)batch;
#endif
    return 0;
}

static int ntt_rows(const struct mpce_harvey_state *s, int inverse, const uint64_t *in,
                    uint64_t *out, size_t batch)
{
    if (unreduced(s, in, out, batch))
        return MPCE_OP_NONCANONICAL;
    for (size_t i = 0; i < batch * s->l; i++) {
        memmove(out + i * s->n, in + i * s->n, s->n * sizeof(uint64_t));
        (inverse ? mpce_harvey_inverse_row : mpce_harvey_forward_row)(s->row[i % s->l], s->n,
                                                                       out + i * s->n);
    }
    return 0;
}

static int ntt_forward(void *state, const struct mpce_call *call, const uint64_t *in,
                       uint64_t *out, size_t batch)
{
    return ntt_rows(state, 0, in, out, batch);
}

static int ntt_inverse(void *state, const struct mpce_call *call, const uint64_t *in,
                       uint64_t *out, size_t batch)
{
    return ntt_rows(state, 1, in, out, batch);
}

static int ntt_mul(void *state, const struct mpce_call *call, const uint64_t *a,
                   const uint64_t *b, uint64_t *out, size_t batch)
{
    const struct mpce_harvey_state *s = state;
    if (unreduced(s, a, out, batch) || unreduced(s, b, out, batch))
        return MPCE_OP_NONCANONICAL;
    for (size_t i = 0; i < batch * s->l; i++)
        mpce_harvey_mul_row(s->row[i % s->l], s->n, a + i * s->n, b + i * s->n, out + i * s->n);
    return 0;
}

static const struct mpce_ntt_ops ntt_ops = {
    .struct_size = sizeof(struct mpce_ntt_ops),
    .ctx_new = ntt_new,
    .ctx_free = ntt_free,
    .forward = ntt_forward,
    .inverse = ntt_inverse,
    .mul = ntt_mul,
};
#endif

#if defined(VARIANT_WRONG)
static int wrong_ecb(void *state, const struct mpce_call *call, size_t key_index,
                     const uint8_t *in, uint8_t *out, size_t n)
{
    int rc = evp_prg_ecb(state, call, key_index, in, out, n);
    if (rc == 0)
        out[0] ^= 1;
    return rc;
}
#endif

#if defined(VARIANT_REFUSEM4)
static int refuse_m4(void *module, const uint8_t *keys, size_t m, void **state)
{
    return m == 4 ? MPCE_ERR_NOIMPL : evp_prg_ctx_new(module, keys, m, state);
}
#define VARIANT_CTX_NEW refuse_m4
#else
#define VARIANT_CTX_NEW evp_prg_ctx_new
#endif

#if defined(VARIANT_WRONG) || defined(VARIANT_NULLOP) || defined(VARIANT_REFUSEM4)
static const struct mpce_prg_ops variant_ops = {
    .struct_size = sizeof(struct mpce_prg_ops),
    .ctx_new = VARIANT_CTX_NEW,
#if defined(VARIANT_WRONG)
    .ctx_free = evp_prg_ctx_free,
    .ecb = wrong_ecb,
#elif defined(VARIANT_NULLOP)
    .ctx_free = NULL,
    .ecb = evp_prg_ecb,
#else
    .ctx_free = evp_prg_ctx_free,
    .ecb = evp_prg_ecb,
#endif
    .mmo = evp_prg_mmo,
    .ctr = evp_prg_ctr,
};
#define PRG_OPS (&variant_ops)
#else
#define PRG_OPS (&evp_prg_ops)
#endif

#if defined(VARIANT_OLDMINOR)
/* The DPF skeleton over the EVP PRG, as a module built for ABI 2.0 lays out
 * its table: it ends before evalall_range, the op 2.1 added. */
static int old_ctx_new(void *module, unsigned bits, unsigned group, const uint8_t *kl,
                       const uint8_t *kr, void **state)
{
    return mpce_dpfw_ctx_new(&evp_prg_ops, module, NULL, bits, group, kl, kr, state);
}

/* Past the 2.0 table's end, where an engine that ignored struct_size would
 * look: a module built for 2.0 has no such member, so anything may be there. */
static int not_in_table(void *state, const struct mpce_call *call,
                        const struct mpce_dpf_key_v1 *key, uint64_t x_begin, uint64_t x_end,
                        uint8_t *out)
{
    fprintf(stderr, "mod_oldminor: evalall_range called beyond the table's struct_size\n");
    abort();
}

static const struct mpce_dpf_ops old_dpf_ops = {
    .struct_size = offsetof(struct mpce_dpf_ops, evalall_range),
    .ctx_new = old_ctx_new,
    .ctx_free = mpce_dpfw_ctx_free,
    .gen = mpce_dpfw_op_gen,
    .eval = mpce_dpfw_op_eval,
    .eval_keys = mpce_dpfw_op_eval_keys,
    .evalall = mpce_dpfw_op_evalall,
    .evalall_range = not_in_table,
};
#endif

#if defined(VARIANT_DECLINEALL)
static int decline_all(void *module_state, const struct mpce_params *params,
                       const struct mpce_shape *shape, char *why, size_t why_len)
{
    snprintf(why, why_len, "serves only contexts no test has");
    return 1;
}
#define IMPL_SERVES decline_all
#elif defined(VARIANT_ONEKEY)
static int one_key(void *module_state, const struct mpce_params *params,
                   const struct mpce_shape *shape, char *why, size_t why_len)
{
    if (params->prg_keys == 1)
        return 0;
    snprintf(why, why_len, "serves contexts of one key only");
    return 1;
}
#define IMPL_SERVES one_key
#else
#define IMPL_SERVES NULL
#endif

#if defined(VARIANT_IMPLPROBE)
static int impl_probe(void *module_state, char *why, size_t why_len)
{
    snprintf(why, why_len, "no imaginary AES-1024 instructions");
    return 1;
}
#define IMPL_PROBE impl_probe
#else
#define IMPL_PROBE NULL
#endif

#if defined(VARIANT_BADDEVICE)
static const struct mpce_device bad_device0 = {
    .struct_size = sizeof(struct mpce_device),
    .name = "bad0",
};
static const struct mpce_device bad_device1 = {
    .struct_size = sizeof(struct mpce_device) + 8,
    .name = "bad1",
};
static const struct mpce_device *const devices[] = {&bad_device0, &bad_device1};
#endif

/* ---- the implementation ------------------------------------------------------ */

/* Knob declarations, each broken as its variant says (the first is sound). */
#if defined(VARIANT_KNOBDUP) || defined(VARIANT_KNOBORDER) || defined(VARIANT_KNOBDEFAULT) || \
    defined(VARIANT_KNOBOPS)
static const uint32_t good_values[] = {32, 64, 128};
static const struct mpce_knob knob_batch = {
    .struct_size = sizeof(struct mpce_knob), .name = "batch", .ops = "prg.ecb prg.ctr",
    .default_value = 64, .n_values = 3, .values = good_values};
static const struct mpce_knob knob_second = {
    .struct_size = sizeof(struct mpce_knob),
#if defined(VARIANT_KNOBDUP)
    .name = "batch",
#else
    .name = "tile",
#endif
#if defined(VARIANT_KNOBOPS)
    .ops = "prg.mmo lpn.fold",
#else
    .ops = "prg.mmo",
#endif
#if defined(VARIANT_KNOBDEFAULT)
    .default_value = 100,
#else
    .default_value = 32,
#endif
    .n_values = 3,
#if defined(VARIANT_KNOBORDER)
    .values = (const uint32_t[]){32, 128, 64},
#else
    .values = good_values,
#endif
};
static const struct mpce_knob *const knobs[] = {&knob_batch, &knob_second};
#endif

static const struct mpce_impl impl = {
#if defined(VARIANT_OLDMINOR)
    /* A 2.0 implementation ends before the knobs (2.2). */
    .struct_size = offsetof(struct mpce_impl, n_knobs),
#else
    .struct_size = sizeof(struct mpce_impl),
#endif
#if defined(VARIANT_OLDMINOR)
    .primitive = MPCE_PRIM_DPF,
    .name = "dpf-test-oldminor",
    .ops = &old_dpf_ops,
#elif defined(VARIANT_BADPRIM)
    .primitive = 9,
    .name = "prg-test-badprim",
    .ops = PRG_OPS,
#elif defined(VARIANT_NTT)
    .primitive = MPCE_PRIM_NTT,
    .name = "ntt-test-" STR(V),
    .ops = &ntt_ops,
#else
    .primitive = MPCE_PRIM_PRG,
    .name = "prg-test-" STR(V),
    .ops = PRG_OPS,
#endif
#if defined(VARIANT_BADCLASS)
    .impl_class = 7,
#else
    .impl_class = MPCE_CLASS_SIMD,
#endif
#if defined(VARIANT_PRIOHIGH) || defined(VARIANT_NOTIMING)
    .priority = INT_MAX,
#elif defined(VARIANT_WRONG)
    .priority = 399, /* the top of its class: "auto" would pick it if the self-test let it */
#else
    .priority = 200,
#endif
#if defined(VARIANT_NOTIMING)
    .flags = 0,
#elif defined(VARIANT_BOTHTIMING)
    .flags = MPCE_IMPL_CONSTANT_TIME | MPCE_IMPL_VARIABLE_TIME,
#elif defined(VARIANT_UNKNOWNFLAG)
    .flags = MPCE_IMPL_CONSTANT_TIME | 0x80000000u,
#elif defined(VARIANT_NTTPLACELIAR) || defined(VARIANT_NTTPLACEOLD)
    .flags = MPCE_IMPL_CONSTANT_TIME | MPCE_IMPL_CHECKS_NTT_INPUT | MPCE_IMPL_CHECKS_NTT_IN_PLACE,
#elif defined(VARIANT_NTTPLACEALONE)
    .flags = MPCE_IMPL_CONSTANT_TIME | MPCE_IMPL_CHECKS_NTT_IN_PLACE,
#elif defined(VARIANT_CHECKSPRG) || defined(VARIANT_NTT)
    .flags = MPCE_IMPL_CONSTANT_TIME | MPCE_IMPL_CHECKS_NTT_INPUT,
#else
    .flags = MPCE_IMPL_CONSTANT_TIME,
#endif
#if defined(VARIANT_NOHOST)
    .memory = MPCE_MEM_DEVICE,
#elif defined(VARIANT_BADDEVICE)
    .memory = MPCE_MEM_HOST | MPCE_MEM_DEVICE,
    .device = &bad_device1,
#else
    .memory = MPCE_MEM_HOST,
#endif
    .probe = IMPL_PROBE,
    .serves = IMPL_SERVES,
#if defined(VARIANT_KNOBDUP) || defined(VARIANT_KNOBORDER) || defined(VARIANT_KNOBDEFAULT) || \
    defined(VARIANT_KNOBOPS)
    .n_knobs = 2,
    .knobs = knobs,
#endif
};
static const struct mpce_impl *const impls[] = {&impl};

/* ---- the module ----------------------------------------------------------------- */

#if defined(VARIANT_PROBE)
static int probe(const struct mpce_host *host, char *why, size_t why_len)
{
    snprintf(why, why_len, "no test device present");
    return 1;
}
#define PLUGIN_PROBE probe
#else
#define PLUGIN_PROBE NULL
#endif

static const struct mpce_plugin plugin = {
#if defined(VARIANT_SHORT)
    .struct_size = offsetof(struct mpce_plugin, n_impls),
#else
    .struct_size = sizeof(struct mpce_plugin),
#endif
#if defined(VARIANT_ABIMAJOR)
    .abi_major = 3,
#else
    .abi_major = MPCE_PLUGIN_ABI_MAJOR,
#endif
#if defined(VARIANT_NEWMINOR)
    .abi_minor = MPCE_PLUGIN_ABI_MINOR + 1,
#elif defined(VARIANT_OLDMINOR)
    .abi_minor = 0,
#elif defined(VARIANT_NTTOLDFLAG)
    .abi_minor = 3,
#elif defined(VARIANT_NTT24) || defined(VARIANT_NTTPLACEOLD)
    .abi_minor = 4,
#else
    .abi_minor = MPCE_PLUGIN_ABI_MINOR,
#endif
#if defined(VARIANT_DUPNAME)
    .name = "soft",
#else
    .name = "test" STR(V),
#endif
    .version = "1",
    .probe = PLUGIN_PROBE,
#if defined(VARIANT_BADDEVICE)
    .n_devices = 2,
    .devices = devices,
#endif
    .n_impls = 1,
    .impls = impls,
};

#if defined(VARIANT_NOENTRY)
#define ENTRY mpce_plugin_entry
#else
#define ENTRY mpce_plugin_entry_v2
#endif

MPCE_API const struct mpce_plugin *ENTRY(void);
const struct mpce_plugin *ENTRY(void)
{
    return &plugin;
}
