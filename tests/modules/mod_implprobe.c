/* Test module: refused per implementation: the plugin loads, but its only
 * implementation's probe says this CPU lacks what it needs. */
#include "config.h"

#include <stdio.h>

#include "tests/modules/evp_prg.h"

static int probe(const struct mpce_host *host, char *why, size_t why_len)
{
    (void)host;
    snprintf(why, why_len, "no imaginary AES-1024 instructions");
    return 1;
}

static const struct mpce_impl impl = {
    .struct_size = sizeof(struct mpce_impl),
    .primitive = MPCE_PRIM_PRG,
    .name = "prg-test-implprobe",
    .priority = 200,
    .flags = MPCE_IMPL_CONSTANT_TIME,
    .vtable = &evp_prg_vtable,
    .probe = probe,
};
static const struct mpce_impl *const impls[] = {&impl};

static const struct mpce_plugin plugin = {
    .struct_size = sizeof(struct mpce_plugin),
    .abi_major = MPCE_PLUGIN_ABI_MAJOR,
    .abi_minor = MPCE_PLUGIN_ABI_MINOR,
    .name = "testimplprobe",
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
