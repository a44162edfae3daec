/* The soft backend's descriptor: what it implements and how it ranks. */
#include "config.h"

#include "engine/internal.h"
#include "plugins/soft/soft.h"

const struct mpce_host *mpce_soft_host;

static const struct mpce_impl prg_bitslice = {
    .struct_size = sizeof(struct mpce_impl),
    .primitive = MPCE_PRIM_PRG,
    .name = "prg-soft-bitslice",
    .priority = 100,
    .flags = MPCE_IMPL_CONSTANT_TIME,
    .vtable = &mpce_soft_prg_bitslice_vtable,
};

/* Below the bitsliced AES: faster, but table lookups leak the key through the
 * cache, so it runs only when named and allowed (allow_variable_time = yes). */
static const struct mpce_impl prg_ttable = {
    .struct_size = sizeof(struct mpce_impl),
    .primitive = MPCE_PRIM_PRG,
    .name = "prg-soft-ttable",
    .priority = 90,
    .flags = MPCE_IMPL_VARIABLE_TIME,
    .vtable = &mpce_soft_prg_ttable_vtable,
};

static const struct mpce_impl ntt_soft = {
    .struct_size = sizeof(struct mpce_impl),
    .primitive = MPCE_PRIM_NTT,
    .name = "ntt-soft",
    .priority = 100,
    .flags = MPCE_IMPL_CONSTANT_TIME,
    .vtable = &mpce_soft_ntt_vtable,
};

/* Table reads at secret-derived indices are inherent to the LPN fold; the
 * index stream is public in Ferret, so this is not a key leak. */
static const struct mpce_impl lpn_soft = {
    .struct_size = sizeof(struct mpce_impl),
    .primitive = MPCE_PRIM_LPN,
    .name = "lpn-soft",
    .priority = 100,
    .flags = MPCE_IMPL_CONSTANT_TIME,
    .vtable = &mpce_soft_lpn_vtable,
};

static const struct mpce_impl dpf_soft = {
    .struct_size = sizeof(struct mpce_impl),
    .primitive = MPCE_PRIM_DPF,
    .name = "dpf-soft",
    .priority = 100,
    .flags = MPCE_IMPL_CONSTANT_TIME,
    .vtable = &mpce_soft_dpf_vtable,
};

static const struct mpce_impl *const soft_impls[] = {
    &prg_bitslice, &prg_ttable, &ntt_soft, &lpn_soft, &dpf_soft,
};

static const struct mpce_plugin soft_plugin = {
    .struct_size = sizeof(struct mpce_plugin),
    .abi_major = MPCE_PLUGIN_ABI_MAJOR,
    .abi_minor = MPCE_PLUGIN_ABI_MINOR,
    .name = "soft",
    .version = PACKAGE_VERSION,
    .probe = NULL,
    .n_impls = sizeof(soft_impls) / sizeof(soft_impls[0]),
    .impls = soft_impls,
};

const struct mpce_plugin *mpce_soft_plugin_entry(const struct mpce_host *host)
{
    mpce_soft_host = host;
    return &soft_plugin;
}
