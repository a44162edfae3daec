/* SPDX-License-Identifier: Apache-2.0 */
/* The libffi descriptors of the ops, and the generic call. */
#include "config.h"

#include <ffi.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "engine/verify/opdesc.h"

/* The libffi type of a C type, chosen by the compiler from the type itself;
 * every pointer (the default) is passed as a pointer. A floating type would
 * be a compile error: no op takes one. */
#define MPCE_FFI_TYPE(T)                                                                   \
    _Generic(*(T *)0,                                                                      \
        int: &ffi_type_sint,                                                               \
        unsigned: &ffi_type_uint,                                                          \
        long: &ffi_type_slong,                                                             \
        unsigned long: &ffi_type_ulong,                                                    \
        long long: &ffi_type_sint64,                                                       \
        unsigned long long: &ffi_type_uint64,                                              \
        float: (void)0,                                                                    \
        double: (void)0,                                                                   \
        default: &ffi_type_pointer)

#define MPCE__FA(t, n) MPCE_FFI_TYPE(t), MPCE__FB
#define MPCE__FB(t, n) MPCE_FFI_TYPE(t), MPCE__FA
#define MPCE__FA_END
#define MPCE__FB_END
#define MPCE_FFI_TYPES(seq) MPCE__END(MPCE__FA seq)

#define MPCE__FFI_RET_int (&ffi_type_sint)
#define MPCE__FFI_RET_void (&ffi_type_void)

/* Argument types of every op: self, then the list's parameters. */
#define MPCE__ARGS(prim, name, since, required, ret, args)                                 \
    static ffi_type *args_##prim##_##name[] = {&ffi_type_pointer, MPCE_FFI_TYPES(args) NULL};
MPCE_ALL_OPS(MPCE__ARGS)
#undef MPCE__ARGS

static ffi_type **const op_args[MPCE_OP_COUNT] = {
#define MPCE__ARGV(prim, name, since, required, ret, args)                                 \
    [MPCE_OP_##prim##_##name] = args_##prim##_##name,
    MPCE_ALL_OPS(MPCE__ARGV)
#undef MPCE__ARGV
};

static ffi_type *const op_ret[MPCE_OP_COUNT] = {
#define MPCE__RET(prim, name, since, required, ret, args)                                  \
    [MPCE_OP_##prim##_##name] = MPCE__FFI_RET_##ret,
    MPCE_ALL_OPS(MPCE__RET)
#undef MPCE__RET
};

static ffi_cif cifs[MPCE_OP_COUNT];
static int cif_ok[MPCE_OP_COUNT];
static pthread_once_t cif_once = PTHREAD_ONCE_INIT;

/* All cifs at once: a few microseconds, and one once-flag keeps it simple. */
static void prepare_all(void)
{
    for (unsigned i = 0; i < MPCE_OP_COUNT; i++)
        cif_ok[i] = ffi_prep_cif(&cifs[i], FFI_DEFAULT_ABI, mpce_op_info[i].nargs, op_ret[i],
                                 op_args[i]) == FFI_OK;
}

mpce_status mpce_op_call(enum mpce_op_id id, const union mpce_ops *ops, void **argv,
                         unsigned argc, int *ret)
{
    pthread_once(&cif_once, prepare_all);
    if ((unsigned)id >= MPCE_OP_COUNT || ops == NULL)
        return mpce_error(MPCE_ERR_ARG, "mpce_op_call: no such op or no op table");
    const struct mpce_op_info *o = &mpce_op_info[id];
    if (argc != o->nargs)
        return mpce_error(MPCE_ERR_ARG, "op %s takes %u arguments, the caller gave %u", o->name,
                          o->nargs, argc);
    void (*fn)(void) = mpce_ops_fn(ops, id);
    if (fn == NULL)
        return mpce_error(MPCE_ERR_NOIMPL, "op %s is not in this implementation's table",
                          o->name);
    if (!cif_ok[id])
        return mpce_error(MPCE_ERR_BACKEND, "op %s: libffi could not prepare the call", o->name);
    ffi_arg rv = 0;
    ffi_call(&cifs[id], fn, op_ret[id] == &ffi_type_void ? NULL : &rv, argv);
    if (ret)
        *ret = op_ret[id] == &ffi_type_void ? 0 : (int)rv;
    return MPCE_OK;
}

size_t mpce_op_arg_size(enum mpce_op_id id, unsigned i)
{
    if ((unsigned)id >= MPCE_OP_COUNT || i >= mpce_op_info[id].nargs)
        return 0;
    return op_args[id][i]->size;
}
