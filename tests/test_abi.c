/*
 * Pins the plugin ABI's layout on LP64 targets. Modules built against one
 * libmpcengine must keep working with the next: a field may only be added at
 * the end of a struct (and the minor version bumped). If this suite fails,
 * the change broke every installed plugin; append instead.
 */
#include "config.h"

#include <stddef.h>

#include "engine/internal.h"
#include "mpcengine/plugin.h"
#include "tests/testutil.h"

#define PIN(type, field, off) CU_ASSERT_EQUAL(offsetof(type, field), (size_t)(off))

static void test_abi_version(void)
{
    CU_ASSERT_EQUAL(MPCE_PLUGIN_ABI_MAJOR, 1);
    CU_ASSERT_STRING_EQUAL(MPCE_PLUGIN_ENTRY_SYMBOL, "mpce_plugin_entry_v1");
    CU_ASSERT_EQUAL(MPCE_PRIM_PRG, 0);
    CU_ASSERT_EQUAL(MPCE_PRIM_NTT, 1);
    CU_ASSERT_EQUAL(MPCE_PRIM_LPN, 2);
    CU_ASSERT_EQUAL(MPCE_PRIM_DPF, 3);
    CU_ASSERT_EQUAL(MPCE_IMPL_CONSTANT_TIME, 1);
    CU_ASSERT_EQUAL(MPCE_IMPL_VARIABLE_TIME, 2);
    CU_ASSERT_EQUAL(MPCE_IMPL_DEVICE, 4);
}

/* Every struct starts with its own size: the loader reads that first. */
static void test_size_first(void)
{
    PIN(struct mpce_host, struct_size, 0);
    PIN(struct mpce_impl, struct_size, 0);
    PIN(struct mpce_plugin, struct_size, 0);
    PIN(struct mpce_prg_vtable, struct_size, 0);
    PIN(struct mpce_ntt_vtable, struct_size, 0);
    PIN(struct mpce_lpn_vtable, struct_size, 0);
    PIN(struct mpce_dpf_vtable, struct_size, 0);
}

static void test_lp64_layout(void)
{
#if UINTPTR_MAX == UINT64_MAX && SIZE_MAX == UINT64_MAX
    CU_ASSERT_EQUAL(sizeof(struct mpce_host), 40);
    PIN(struct mpce_host, abi_major, 8);
    PIN(struct mpce_host, log, 16);
    PIN(struct mpce_host, set_error, 24);
    PIN(struct mpce_host, host_data, 32);
    CU_ASSERT_EQUAL(sizeof(struct mpce_impl), 48);
    PIN(struct mpce_impl, primitive, 8);
    PIN(struct mpce_impl, name, 16);
    PIN(struct mpce_impl, priority, 24);
    PIN(struct mpce_impl, flags, 28);
    PIN(struct mpce_impl, vtable, 32);
    PIN(struct mpce_impl, probe, 40);
    CU_ASSERT_EQUAL(sizeof(struct mpce_plugin), 56);
    PIN(struct mpce_plugin, abi_major, 8);
    PIN(struct mpce_plugin, abi_minor, 12);
    PIN(struct mpce_plugin, name, 16);
    PIN(struct mpce_plugin, version, 24);
    PIN(struct mpce_plugin, probe, 32);
    PIN(struct mpce_plugin, n_impls, 40);
    PIN(struct mpce_plugin, impls, 48);
    CU_ASSERT_EQUAL(sizeof(struct mpce_prg_vtable), 48);
    PIN(struct mpce_prg_vtable, ctx_new, 8);
    PIN(struct mpce_prg_vtable, ctx_free, 16);
    PIN(struct mpce_prg_vtable, ecb, 24);
    PIN(struct mpce_prg_vtable, mmo, 32);
    PIN(struct mpce_prg_vtable, ctr, 40);
    CU_ASSERT_EQUAL(sizeof(struct mpce_ntt_vtable), 48);
    PIN(struct mpce_ntt_vtable, ctx_new, 8);
    PIN(struct mpce_ntt_vtable, forward, 24);
    PIN(struct mpce_ntt_vtable, inverse, 32);
    PIN(struct mpce_ntt_vtable, mul, 40);
    CU_ASSERT_EQUAL(sizeof(struct mpce_lpn_vtable), 32);
    PIN(struct mpce_lpn_vtable, ctx_new, 8);
    PIN(struct mpce_lpn_vtable, fold, 24);
    CU_ASSERT_EQUAL(sizeof(struct mpce_dpf_vtable), 64);
    PIN(struct mpce_dpf_vtable, ctx_new, 8);
    PIN(struct mpce_dpf_vtable, gen, 24);
    PIN(struct mpce_dpf_vtable, eval, 32);
    PIN(struct mpce_dpf_vtable, eval_keys, 40);
    PIN(struct mpce_dpf_vtable, evalall, 48);
    PIN(struct mpce_dpf_vtable, evalall_range, 56);
    CU_ASSERT_EQUAL(sizeof(struct mpce_dpf_key_v1), 1100);
    PIN(struct mpce_dpf_key_v1, kl, 4);
    PIN(struct mpce_dpf_key_v1, kr, 20);
    PIN(struct mpce_dpf_key_v1, seed, 36);
    PIN(struct mpce_dpf_key_v1, cw_s, 52);
    PIN(struct mpce_dpf_key_v1, cw_tr, 1076);
    PIN(struct mpce_dpf_key_v1, cw_out, 1084);
#else
    fprintf(stderr, "skipped: layout pins are for LP64 targets\n");
#endif
}

/* The ABI says ops return 0 or an mpce_status; a plugin that returns some
 * other int (here -1) must still give the caller a real status. */
static int ctx_new_minus_one(const struct mpce_impl *impl, const void *args, void **state)
{
    (void)impl;
    (void)args;
    (void)state;
    return -1;
}

static void test_odd_ctx_new_code(void)
{
    static const struct mpce_impl fake = {.struct_size = sizeof(fake), .name = "prg-fake"};
    struct mpce_state_cache cache;
    void *state = NULL;
    mpce_state_cache_init(&cache);
    TU_ASSERT_ERROR(mpce_state_cache_get(&cache, &fake, ctx_new_minus_one, NULL, &state),
                    MPCE_ERR_BACKEND, "prg-fake");
    CU_ASSERT_PTR_NULL(state);
    mpce_state_cache_destroy(&cache, NULL);
}

static const struct tu_test tests[] = {
    {"ABI version, primitive and flag values", test_abi_version},
    {"every struct begins with struct_size", test_size_first},
    {"LP64 layout of descriptor, impl, host, vtables, DPF key", test_lp64_layout},
    {"a ctx_new code that is no status becomes MPCE_ERR_BACKEND", test_odd_ctx_new_code},
    {NULL, NULL},
};

int main(void)
{
    return tu_main("abi", tests);
}
