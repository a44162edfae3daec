/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the engine generates from the op lists of mpcengine/plugin.h: op ids,
 * the per-op facts the loader and the self-test need, the normalized op
 * tables the dispatch calls through, and typed call wrappers. Not installed.
 */
#ifndef MPCE_ENGINE_OPS_H
#define MPCE_ENGINE_OPS_H

#include <stddef.h>

#include "mpcengine/plugin.h"

#define MPCE__PRIM_prg MPCE_PRIM_PRG
#define MPCE__PRIM_ntt MPCE_PRIM_NTT
#define MPCE__PRIM_lpn MPCE_PRIM_LPN
#define MPCE__PRIM_dpf MPCE_PRIM_DPF

/* MPCE_OP_prg_ecb, ...: every op of every primitive, in table order. */
enum mpce_op_id {
#define MPCE__OP_ID(prim, name, since, required, ret, args) MPCE_OP_##prim##_##name,
    MPCE_ALL_OPS(MPCE__OP_ID)
#undef MPCE__OP_ID
        MPCE_OP_COUNT
};

struct mpce_op_info {
    const char *name;       /* "prg.ecb" */
    mpce_primitive prim;
    size_t offset;          /* of the function pointer in the op table */
    unsigned since;         /* the minor that added it */
    int required;           /* must be non-NULL in every table */
    unsigned nargs;         /* self included */
};

/* Indexed by enum mpce_op_id. */
extern const struct mpce_op_info mpce_op_info[MPCE_OP_COUNT];

/* The first op id of a primitive, and how many it has. */
enum mpce_op_id mpce_op_first(mpce_primitive prim);
unsigned mpce_op_count_of(mpce_primitive prim);
/* Whether id is a data op: any op but ctx_new and ctx_free. */
int mpce_op_is_data(enum mpce_op_id id);
/* Whether id is one of the operations callers make, which "auto" routes per
 * size class (the required data ops; optional ones such as
 * dpf.evalall_range serve an operation's slices). */
int mpce_op_routed(enum mpce_op_id id);

/* The op id of "prim.op" ("dpf.eval"), or MPCE_OP_COUNT. */
enum mpce_op_id mpce_op_by_name(const char *name);

/* A primitive's op table as a module of ABI 2.minor lays it out: the bytes up
 * to its last op of that minor, and up to its last required one. */
size_t mpce_ops_size(mpce_primitive prim, unsigned minor);
size_t mpce_ops_required_size(mpce_primitive prim, unsigned minor);

/* An op table copied out of a module at its full current size, ops past the
 * module's struct_size zeroed: the engine then calls an optional op when it
 * is non-NULL, with no size arithmetic on the hot path. The structs share
 * their initial members (struct_size, ctx_new, ctx_free). */
union mpce_ops {
    struct mpce_prg_ops prg;
    struct mpce_ntt_ops ntt;
    struct mpce_lpn_ops lpn;
    struct mpce_dpf_ops dpf;
};

/* The function pointer of op `id` in a normalized table (NULL if absent). */
static inline void (*mpce_ops_fn(const union mpce_ops *ops, enum mpce_op_id id))(void)
{
    void (*fn)(void);
    __builtin_memcpy(&fn, (const char *)ops + mpce_op_info[id].offset, sizeof(fn));
    return fn;
}

/* ctx_free of any primitive's table (a member of the common initial part). */
static inline void mpce_ops_ctx_free(const union mpce_ops *ops, void *state)
{
    ops->prg.ctx_free(state);
}

/* Typed wrappers: mpce_op_ntt_forward(&ops->ntt, state, call, in, out, batch)
 * and so on, checked by the compiler against the one definition of each op. */
#define MPCE__RETURN_int return
#define MPCE__RETURN_void
#define MPCE__OP_WRAPPER(prim, name, since, required, ret, args)                           \
    static inline ret mpce_op_##prim##_##name(const struct mpce_##prim##_ops *ops,         \
                                              void *self MPCE_PARAMS(args))                \
    {                                                                                      \
        MPCE__RETURN_##ret ops->name(self MPCE_ARG_NAMES(args));                           \
    }
MPCE_ALL_OPS(MPCE__OP_WRAPPER)
#undef MPCE__OP_WRAPPER

#endif
