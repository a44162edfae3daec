/* Test module: refused: its probe says it cannot run here. */
#include "config.h"

#include <stdio.h>

#include "tests/modules/evp_prg.h"

EVP_PRG_IMPL(impl, "prg-test-probe", 200);
static const struct mpce_impl *const impls[] = {&impl};

static int probe(const struct mpce_host *host, char *why, size_t why_len)
{
    (void)host;
    snprintf(why, why_len, "no test device present");
    return 1;
}

static const struct mpce_plugin plugin = {
    .struct_size = sizeof(struct mpce_plugin),
    .abi_major = MPCE_PLUGIN_ABI_MAJOR,
    .abi_minor = MPCE_PLUGIN_ABI_MINOR,
    .name = "testprobe",
    .version = "1",
    .probe = probe,
    .n_impls = 1,
    .impls = impls,
};

MPCE_API const struct mpce_plugin *mpce_plugin_entry_v1(const struct mpce_host *host);
const struct mpce_plugin *mpce_plugin_entry_v1(const struct mpce_host *host)
{
    (void)host;
    return &plugin;
}
