/* Test module: broken: built for plugin ABI major 2. */
#include "config.h"

#include "tests/modules/evp_prg.h"

EVP_PRG_IMPL(impl, "prg-test-abimajor", 200);
static const struct mpce_impl *const impls[] = {&impl};

static const struct mpce_plugin plugin = {
    .struct_size = sizeof(struct mpce_plugin),
    .abi_major = MPCE_PLUGIN_ABI_MAJOR + 1,
    .abi_minor = 0,
    .name = "testabimajor",
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
