/* Test module: broken: the descriptor's struct_size is too small to hold impls. */
#include "config.h"

#include <stddef.h>

#include "tests/modules/evp_prg.h"

EVP_PRG_IMPL(impl, "prg-test-short", 200);
static const struct mpce_impl *const impls[] = {&impl};

static const struct mpce_plugin plugin = {
    .struct_size = offsetof(struct mpce_plugin, n_impls),
    .abi_major = MPCE_PLUGIN_ABI_MAJOR,
    .abi_minor = MPCE_PLUGIN_ABI_MINOR,
    .name = "testshort",
    .version = "1",
    .n_impls = 1,
    .impls = impls,
};

MPCE_API const struct mpce_plugin *mpce_plugin_entry_v1(const struct mpce_host *host);
const struct mpce_plugin *mpce_plugin_entry_v1(const struct mpce_host *host)
{
    (void)host;
    return &plugin;
}
