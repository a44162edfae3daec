/* Test module: broken: prg-test-wrong's ecb flips one output bit, so it fails
 * the self-test and is never selectable. */
#include "config.h"

#include "tests/modules/evp_prg.h"

static int wrong_ecb(void *state, size_t key_index, const uint8_t *in, uint8_t *out, size_t n)
{
    int rc = evp_prg_ecb(state, key_index, in, out, n);
    if (rc == 0)
        out[0] ^= 1;
    return rc;
}

static const struct mpce_prg_vtable wrong_vtable = {
    .struct_size = sizeof(struct mpce_prg_vtable),
    .ctx_new = evp_prg_ctx_new,
    .ctx_free = evp_prg_ctx_free,
    .ecb = wrong_ecb,
    .mmo = evp_prg_mmo,
    .ctr = evp_prg_ctr,
};

/* The highest priority of all: "auto" would pick it if the self-test let it. */
static const struct mpce_impl impl = {
    .struct_size = sizeof(struct mpce_impl),
    .primitive = MPCE_PRIM_PRG,
    .name = "prg-test-wrong",
    .priority = 900,
    .flags = MPCE_IMPL_CONSTANT_TIME,
    .vtable = &wrong_vtable,
};
static const struct mpce_impl *const impls[] = {&impl};

static const struct mpce_plugin plugin = {
    .struct_size = sizeof(struct mpce_plugin),
    .abi_major = MPCE_PLUGIN_ABI_MAJOR,
    .abi_minor = MPCE_PLUGIN_ABI_MINOR,
    .name = "testwrong",
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
