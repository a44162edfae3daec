/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The skeletons' knobs, seen from below: plugin "skelrec" runs the shared
 * LPN fold and DPF walks (plugins/common) over a PRG (OpenSSL EVP AES) that
 * records the size of every call it gets, so a test can tell which knob
 * values reached the skeleton through the engine's routes, pool slices and
 * evalall_range slices: the fold's chunk sets its largest ctr call (10
 * chunk / 4 + 2 blocks), and the full-domain tile its largest mmo call
 * (2^(tile-1) parents). With SKEL_RECORD set to a file, each PRG call
 * appends "ctr N", "mmo N" or "ecb N". Implementations lpn-skelrec and
 * dpf-skelrec, portable class at priority 1 (never "auto"'s default), with
 * the skeletons' knobs as soft declares them.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "plugins/common/skeleton_knobs.h"
#include "tests/modules/evp_prg.h"

static void record(const char *what, size_t n)
{
    const char *path = getenv("SKEL_RECORD");
    if (path == NULL || path[0] == '\0')
        return;
    FILE *f = fopen(path, "a");
    if (f != NULL) {
        fprintf(f, "%s %zu\n", what, n);
        fclose(f);
    }
}

static int rec_ecb(void *state, const struct mpce_call *call, size_t key_index,
                   const uint8_t *in, uint8_t *out, size_t n)
{
    record("ecb", n);
    return evp_prg_ecb(state, call, key_index, in, out, n);
}

static int rec_mmo(void *state, const struct mpce_call *call, const uint8_t *seeds,
                   uint8_t *out, size_t n)
{
    record("mmo", n);
    return evp_prg_mmo(state, call, seeds, out, n);
}

static int rec_ctr(void *state, const struct mpce_call *call, size_t key_index, uint64_t c0,
                   uint8_t *out, size_t n)
{
    record("ctr", n);
    return evp_prg_ctr(state, call, key_index, c0, out, n);
}

static const struct mpce_prg_ops rec_prg_ops = {
    .struct_size = sizeof(struct mpce_prg_ops),
    .ctx_new = evp_prg_ctx_new,
    .ctx_free = evp_prg_ctx_free,
    .ecb = rec_ecb,
    .mmo = rec_mmo,
    .ctr = rec_ctr,
};

MPCE_LPN_SKELETON_OPS(skel_lpn_ops, &rec_prg_ops);
MPCE_DPF_SKELETON_OPS(skel_dpf_ops, &rec_prg_ops, NULL);

static const struct mpce_impl lpn_impl = {
    .struct_size = sizeof(struct mpce_impl),
    .primitive = MPCE_PRIM_LPN,
    .name = "lpn-skelrec",
    .impl_class = MPCE_CLASS_PORTABLE,
    .priority = 1,
    .flags = MPCE_IMPL_CONSTANT_TIME,
    .memory = MPCE_MEM_HOST,
    .ops = &skel_lpn_ops,
    .n_knobs = MPCE_LPN_N_KNOBS,
    .knobs = mpce_lpn_skeleton_knobs,
};
static const struct mpce_impl dpf_impl = {
    .struct_size = sizeof(struct mpce_impl),
    .primitive = MPCE_PRIM_DPF,
    .name = "dpf-skelrec",
    .impl_class = MPCE_CLASS_PORTABLE,
    .priority = 1,
    .flags = MPCE_IMPL_CONSTANT_TIME,
    .memory = MPCE_MEM_HOST,
    .ops = &skel_dpf_ops,
    .n_knobs = MPCE_DPF_N_KNOBS,
    .knobs = mpce_dpf_generic_knobs,
};
static const struct mpce_impl *const impls[] = {&lpn_impl, &dpf_impl};

static const struct mpce_plugin plugin = {
    .struct_size = sizeof(struct mpce_plugin),
    .abi_major = MPCE_PLUGIN_ABI_MAJOR,
    .abi_minor = MPCE_PLUGIN_ABI_MINOR,
    .name = "skelrec",
    .version = "1",
    .n_impls = 2,
    .impls = impls,
};

MPCE_API const struct mpce_plugin *mpce_plugin_entry_v2(void);
const struct mpce_plugin *mpce_plugin_entry_v2(void)
{
    return &plugin;
}
