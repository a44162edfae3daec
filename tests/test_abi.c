/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pins plugin ABI 2 on LP64 targets, and the rules its op lists must keep.
 * Modules built against one libmpcengine must keep working with the next: a
 * field or op may only be added at the end of a struct, with the minor
 * version bumped, and an op added by a minor is optional (older modules lack
 * it). If this suite fails, the change broke every installed plugin; append
 * instead.
 */
#include "config.h"

#include <stddef.h>

#include "engine/internal.h"
#include "engine/verify/opdesc.h"
#include "mpcengine/plugin.h"
#include "tests/testutil.h"

#define PIN(type, field, off) CU_ASSERT_EQUAL(offsetof(type, field), (size_t)(off))

static void test_abi_version(void)
{
    CU_ASSERT_EQUAL(MPCE_PLUGIN_ABI_MAJOR, 2);
    CU_ASSERT_EQUAL(MPCE_PLUGIN_ABI_MINOR, 5);
    CU_ASSERT_STRING_EQUAL(MPCE_PLUGIN_ENTRY_SYMBOL, "mpce_plugin_entry_v2");
    CU_ASSERT_EQUAL(MPCE_PRIM_PRG, 0);
    CU_ASSERT_EQUAL(MPCE_PRIM_NTT, 1);
    CU_ASSERT_EQUAL(MPCE_PRIM_LPN, 2);
    CU_ASSERT_EQUAL(MPCE_PRIM_DPF, 3);
    CU_ASSERT_EQUAL(MPCE_IMPL_CONSTANT_TIME, 0x1);
    CU_ASSERT_EQUAL(MPCE_IMPL_VARIABLE_TIME, 0x2);
    CU_ASSERT_EQUAL(MPCE_IMPL_ASYNC, 0x100);
    CU_ASSERT_EQUAL(MPCE_MEM_HOST, 0x1);
    CU_ASSERT_EQUAL(MPCE_MEM_DEVICE, 0x2);
    CU_ASSERT_EQUAL(MPCE_CLASS_PORTABLE, 0);
    CU_ASSERT_EQUAL(MPCE_CLASS_SIMD, 1);
    CU_ASSERT_EQUAL(MPCE_CLASS_ACCEL, 2);
    CU_ASSERT_EQUAL(MPCE_OP_PENDING, 0x10000);
    CU_ASSERT_EQUAL(MPCE_KNOB_MAX, 4);
    CU_ASSERT_EQUAL(MPCE_KNOB_MAX_VALUES, 8);
    CU_ASSERT_EQUAL(MPCE_KNOB_INFORMATIONAL, 0x1);
}

/* Every struct starts with its own size: the loader reads that first. */
static void test_size_first(void)
{
    PIN(struct mpce_host, struct_size, 0);
    PIN(struct mpce_call, struct_size, 0);
    PIN(struct mpce_impl, struct_size, 0);
    PIN(struct mpce_knob, struct_size, 0);
    PIN(struct mpce_plugin, struct_size, 0);
    PIN(struct mpce_device, struct_size, 0);
    PIN(struct mpce_params, struct_size, 0);
    PIN(struct mpce_shape, struct_size, 0);
    PIN(struct mpce_prg_ops, struct_size, 0);
    PIN(struct mpce_ntt_ops, struct_size, 0);
    PIN(struct mpce_lpn_ops, struct_size, 0);
    PIN(struct mpce_dpf_ops, struct_size, 0);
}

static void test_lp64_layout(void)
{
#if UINTPTR_MAX == UINT64_MAX && SIZE_MAX == UINT64_MAX
    CU_ASSERT_EQUAL(sizeof(struct mpce_host), 56);
    PIN(struct mpce_host, abi_major, 8);
    PIN(struct mpce_host, log, 16);
    PIN(struct mpce_host, set_error, 24);
    PIN(struct mpce_host, getenv, 32);
    PIN(struct mpce_host, complete, 40);
    PIN(struct mpce_host, host_data, 48);
    CU_ASSERT_EQUAL(sizeof(struct mpce_call), 48);
    PIN(struct mpce_call, memory, 8);
    PIN(struct mpce_call, queue, 16);
    PIN(struct mpce_call, done, 24);
    PIN(struct mpce_call, knobs, 32); /* 2.2 */
    PIN(struct mpce_call, n_knobs, 40);
    CU_ASSERT_EQUAL(sizeof(struct mpce_impl), 88);
    PIN(struct mpce_impl, primitive, 8);
    PIN(struct mpce_impl, name, 16);
    PIN(struct mpce_impl, impl_class, 24);
    PIN(struct mpce_impl, priority, 28);
    PIN(struct mpce_impl, flags, 32);
    PIN(struct mpce_impl, memory, 36);
    PIN(struct mpce_impl, device, 40);
    PIN(struct mpce_impl, ops, 48);
    PIN(struct mpce_impl, probe, 56);
    PIN(struct mpce_impl, serves, 64);
    PIN(struct mpce_impl, n_knobs, 72); /* 2.2: a 2.0/2.1 impl ends here */
    PIN(struct mpce_impl, knobs, 80);
    CU_ASSERT_EQUAL(sizeof(struct mpce_knob), 56);
    PIN(struct mpce_knob, name, 8);
    PIN(struct mpce_knob, ops, 16);
    PIN(struct mpce_knob, about, 24);
    PIN(struct mpce_knob, flags, 32);
    PIN(struct mpce_knob, default_value, 36);
    PIN(struct mpce_knob, n_values, 40);
    PIN(struct mpce_knob, values, 48);
    CU_ASSERT_EQUAL(sizeof(struct mpce_plugin), 96);
    PIN(struct mpce_plugin, abi_major, 8);
    PIN(struct mpce_plugin, abi_minor, 12);
    PIN(struct mpce_plugin, name, 16);
    PIN(struct mpce_plugin, version, 24);
    PIN(struct mpce_plugin, probe, 32);
    PIN(struct mpce_plugin, init, 40);
    PIN(struct mpce_plugin, fini, 48);
    PIN(struct mpce_plugin, describe, 56);
    PIN(struct mpce_plugin, n_devices, 64);
    PIN(struct mpce_plugin, devices, 72);
    PIN(struct mpce_plugin, n_impls, 80);
    PIN(struct mpce_plugin, impls, 88);
    CU_ASSERT_EQUAL(sizeof(struct mpce_device), 72);
    PIN(struct mpce_device, name, 8);
    PIN(struct mpce_device, alloc, 16);
    PIN(struct mpce_device, free, 24);
    PIN(struct mpce_device, queue_new, 32);
    PIN(struct mpce_device, queue_free, 40);
    PIN(struct mpce_device, upload, 48);
    PIN(struct mpce_device, download, 56);
    PIN(struct mpce_device, copy, 64);
    CU_ASSERT_EQUAL(sizeof(struct mpce_params), 64);
    PIN(struct mpce_params, prg_keys, 16);
    PIN(struct mpce_params, ntt_n, 24);
    PIN(struct mpce_params, ntt_q, 40);
    PIN(struct mpce_params, lpn_logk, 48);
    PIN(struct mpce_params, dpf_bits, 52);
    PIN(struct mpce_params, dpf_group, 56);
    CU_ASSERT_EQUAL(sizeof(struct mpce_shape), 32);
    PIN(struct mpce_shape, op, 8);
    PIN(struct mpce_shape, memory, 16);
    PIN(struct mpce_shape, units, 24);
    CU_ASSERT_EQUAL(sizeof(struct mpce_prg_ops), 48);
    PIN(struct mpce_prg_ops, ctx_new, 8);
    PIN(struct mpce_prg_ops, ctx_free, 16);
    PIN(struct mpce_prg_ops, ecb, 24);
    PIN(struct mpce_prg_ops, mmo, 32);
    PIN(struct mpce_prg_ops, ctr, 40);
    CU_ASSERT_EQUAL(sizeof(struct mpce_ntt_ops), 48);
    PIN(struct mpce_ntt_ops, forward, 24);
    PIN(struct mpce_ntt_ops, inverse, 32);
    PIN(struct mpce_ntt_ops, mul, 40);
    CU_ASSERT_EQUAL(sizeof(struct mpce_lpn_ops), 32);
    PIN(struct mpce_lpn_ops, fold, 24);
    CU_ASSERT_EQUAL(sizeof(struct mpce_dpf_ops), 72);
    PIN(struct mpce_dpf_ops, gen, 24);
    PIN(struct mpce_dpf_ops, eval, 32);
    PIN(struct mpce_dpf_ops, eval_keys, 40);
    PIN(struct mpce_dpf_ops, evalall, 48);
    PIN(struct mpce_dpf_ops, evalall_range, 56);
    PIN(struct mpce_dpf_ops, eval_batch, 64); /* 2.3 */
    CU_ASSERT_EQUAL(sizeof(struct mpce_dpf_batch_v1), 48);
    PIN(struct mpce_dpf_batch_v1, seed, 8);
    PIN(struct mpce_dpf_batch_v1, party, 16);
    PIN(struct mpce_dpf_batch_v1, cw_tr, 24);
    PIN(struct mpce_dpf_batch_v1, cw_out, 32);
    PIN(struct mpce_dpf_batch_v1, cw_s, 40);
    CU_ASSERT_EQUAL(sizeof(struct mpce_dpf_key_v1), 1100);
    PIN(struct mpce_dpf_key_v1, kl, 4);
    PIN(struct mpce_dpf_key_v1, seed, 36);
    PIN(struct mpce_dpf_key_v1, cw_s, 52);
    PIN(struct mpce_dpf_key_v1, cw_tr, 1076);
    PIN(struct mpce_dpf_key_v1, cw_out, 1084);
#else
    printf("\n  skipped: not an LP64 target; the layout pins are LP64's\n");
#endif
}

/* The sizes the loader accepts per minor: 2.0's DPF table ends before
 * evalall_range, 2.1's and 2.2's before eval_batch; everything else is the
 * same at every minor. */
static void test_minor_sizes(void)
{
    CU_ASSERT_EQUAL(mpce_ops_size(MPCE_PRIM_DPF, 0), offsetof(struct mpce_dpf_ops, evalall_range));
    CU_ASSERT_EQUAL(mpce_ops_size(MPCE_PRIM_DPF, 1), offsetof(struct mpce_dpf_ops, eval_batch));
    CU_ASSERT_EQUAL(mpce_ops_size(MPCE_PRIM_DPF, 2), offsetof(struct mpce_dpf_ops, eval_batch));
    CU_ASSERT_EQUAL(mpce_ops_size(MPCE_PRIM_DPF, 3), sizeof(struct mpce_dpf_ops));
    CU_ASSERT_EQUAL(mpce_ops_required_size(MPCE_PRIM_DPF, 3),
                    offsetof(struct mpce_dpf_ops, evalall_range));
    CU_ASSERT_EQUAL(mpce_ops_size(MPCE_PRIM_PRG, 0), sizeof(struct mpce_prg_ops));
    CU_ASSERT_EQUAL(mpce_ops_size(MPCE_PRIM_NTT, 0), sizeof(struct mpce_ntt_ops));
    CU_ASSERT_EQUAL(mpce_ops_size(MPCE_PRIM_LPN, 0), sizeof(struct mpce_lpn_ops));
    for (int p = 0; p < MPCE_PRIM_COUNT; p++)
        CU_ASSERT_EQUAL(mpce_ops_size((mpce_primitive)p, MPCE_PLUGIN_ABI_MINOR),
                        mpce_ops_size((mpce_primitive)p, 99));
}

/* The rules the lists must keep, for every op of every primitive. */
static void test_op_lists(void)
{
    for (int p = 0; p < MPCE_PRIM_COUNT; p++) {
        enum mpce_op_id first = mpce_op_first((mpce_primitive)p);
        unsigned n = mpce_op_count_of((mpce_primitive)p);
        char name[32];
        snprintf(name, sizeof(name), "%s.ctx_new", mpce_primitive_name((mpce_primitive)p));
        CU_ASSERT_STRING_EQUAL(mpce_op_info[first].name, name);
        snprintf(name, sizeof(name), "%s.ctx_free", mpce_primitive_name((mpce_primitive)p));
        CU_ASSERT_STRING_EQUAL(mpce_op_info[first + 1].name, name);
        unsigned since = 0;
        size_t offset = 0;
        for (unsigned k = 0; k < n; k++) {
            const struct mpce_op_info *o = &mpce_op_info[first + k];
            CU_ASSERT_EQUAL(o->prim, (mpce_primitive)p);
            /* Appended only, in minor order, each after the last. */
            CU_ASSERT(o->since >= since);
            CU_ASSERT(o->offset > offset);
            since = o->since;
            offset = o->offset;
            /* An op a later minor added cannot be required. */
            if (o->since > 0)
                CU_ASSERT_FALSE(o->required);
            CU_ASSERT(o->since <= MPCE_PLUGIN_ABI_MINOR);
            CU_ASSERT_EQUAL(mpce_op_by_name(o->name), (enum mpce_op_id)(first + k));
            /* Data ops take (self, call, ...). */
            CU_ASSERT(o->nargs >= (k >= 2 ? 3u : 1u));
        }
    }
    CU_ASSERT_EQUAL(mpce_op_by_name("dpf.nonsense"), MPCE_OP_COUNT);
    CU_ASSERT(mpce_op_routed(MPCE_OP_prg_ecb));
    CU_ASSERT(mpce_op_routed(MPCE_OP_dpf_evalall));
    CU_ASSERT_FALSE(mpce_op_routed(MPCE_OP_dpf_evalall_range));
    CU_ASSERT_FALSE(mpce_op_routed(MPCE_OP_ntt_ctx_new));
}

/* The libffi descriptors come from the same lists as the structs: the size
 * each passes for every argument is the size of the C parameter type. */
#define ARG_SIZES_A(t, n) sizeof(t), ARG_SIZES_B
#define ARG_SIZES_B(t, n) sizeof(t), ARG_SIZES_A
#define ARG_SIZES_A_END
#define ARG_SIZES_B_END
#define CHECK_OP(prim, name, since, required, ret, args)                                   \
    {                                                                                      \
        const size_t sizes[] = {sizeof(void *), MPCE__END(ARG_SIZES_A args) 0};            \
        for (unsigned i = 0; sizes[i] != 0; i++)                                            \
            CU_ASSERT_EQUAL(mpce_op_arg_size(MPCE_OP_##prim##_##name, i), sizes[i]);        \
        CU_ASSERT_EQUAL(mpce_op_info[MPCE_OP_##prim##_##name].nargs,                       \
                        sizeof(sizes) / sizeof(sizes[0]) - 1);                             \
    }

static void test_ffi_types(void)
{
    MPCE_ALL_OPS(CHECK_OP)
}

static const struct tu_test tests[] = {
    {"ABI version and constants", test_abi_version},
    {"every struct starts with struct_size", test_size_first},
    {"LP64 layout of descriptor, impl, device, host, call, op tables, DPF key",
     test_lp64_layout},
    {"op table sizes per minor", test_minor_sizes},
    {"op lists: appended in minor order, later ops optional", test_op_lists},
    {"libffi argument sizes match the C types", test_ffi_types},
    {NULL, NULL},
};

int main(void)
{
    return tu_main("abi", tests);
}
