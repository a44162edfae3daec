/* SPDX-License-Identifier: Apache-2.0 */
/* The soft backend's descriptor: what it implements and how it ranks. */
#include "config.h"

#include "plugins/common/skeleton_knobs.h"
#include "plugins/soft/soft.h"

/* The module state is the host: the only thing soft's ops ever need from
 * their engine is set_error. */
static int soft_init(const struct mpce_host *host, void **module_state, char *why,
                     size_t why_len)
{
    (void)why;
    (void)why_len;
    *module_state = (void *)host;
    return 0;
}

#define SOFT_IMPL(var, prim, nm, prio, fl, table, nk, kl)                                  \
    static const struct mpce_impl var = {                                                  \
        .struct_size = sizeof(struct mpce_impl),                                           \
        .primitive = prim,                                                                 \
        .name = nm,                                                                        \
        .impl_class = MPCE_CLASS_PORTABLE,                                                 \
        .priority = prio,                                                                  \
        .flags = fl,                                                                       \
        .memory = MPCE_MEM_HOST,                                                           \
        .ops = table,                                                                      \
        .n_knobs = nk,                                                                     \
        .knobs = kl,                                                                       \
    }

SOFT_IMPL(prg_bitslice, MPCE_PRIM_PRG, "prg-soft-bitslice", 100, MPCE_IMPL_CONSTANT_TIME,
          &mpce_soft_prg_bitslice_ops, 0, NULL);
/* Below the bitsliced AES: faster, but table lookups leak the key through the
 * cache, so it runs only when named and allowed (allow_variable_time = yes). */
SOFT_IMPL(prg_ttable, MPCE_PRIM_PRG, "prg-soft-ttable", 90, MPCE_IMPL_VARIABLE_TIME,
          &mpce_soft_prg_ttable_ops, 0, NULL);
SOFT_IMPL(ntt_soft, MPCE_PRIM_NTT, "ntt-soft", 100, MPCE_IMPL_CONSTANT_TIME,
          &mpce_soft_ntt_ops, 0, NULL);
/* Table reads at stream-derived indices are inherent to the LPN fold; the
 * index stream is public in Ferret, so this is not a key leak. */
SOFT_IMPL(lpn_soft, MPCE_PRIM_LPN, "lpn-soft", 100, MPCE_IMPL_CONSTANT_TIME,
          &mpce_soft_lpn_ops, MPCE_LPN_N_KNOBS, mpce_lpn_skeleton_knobs);
SOFT_IMPL(dpf_soft, MPCE_PRIM_DPF, "dpf-soft", 100, MPCE_IMPL_CONSTANT_TIME,
          &mpce_soft_dpf_ops, MPCE_DPF_N_KNOBS, mpce_dpf_generic_knobs);

static const struct mpce_impl *const soft_impls[] = {
    &prg_bitslice, &prg_ttable, &ntt_soft, &lpn_soft, &dpf_soft,
};

static const struct mpce_plugin soft_plugin = {
    .struct_size = sizeof(struct mpce_plugin),
    .abi_major = MPCE_PLUGIN_ABI_MAJOR,
    .abi_minor = MPCE_PLUGIN_ABI_MINOR,
    .name = "soft",
    .version = PACKAGE_VERSION,
    .init = soft_init,
    .n_impls = sizeof(soft_impls) / sizeof(soft_impls[0]),
    .impls = soft_impls,
};

const struct mpce_plugin *mpce_soft_plugin_entry(void)
{
    return &soft_plugin;
}
