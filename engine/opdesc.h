/*
 * Op descriptors: the signature of every vtable op as data, so that one
 * libffi harness can call any op of any implementation (self-test,
 * benchmark, trace) without per-op glue. Adding an op to a vtable means
 * adding one row to the table in opdesc.c.
 */
#ifndef MPCE_ENGINE_OPDESC_H
#define MPCE_ENGINE_OPDESC_H

#include <stddef.h>

#include "mpcengine/common.h"

struct mpce_opdesc {
    const char *name;        /* "prg.ecb", "ntt.ctx_new", ... */
    mpce_primitive prim;
    size_t offset;           /* of the function pointer in the vtable */
    int returns_void;        /* ctx_free */
    unsigned nargs;
    size_t index;            /* position in the table (its prepared cif) */
};

/* The descriptor of an op, or NULL. */
const struct mpce_opdesc *mpce_op_find(const char *name);
size_t mpce_op_count(void);
const struct mpce_opdesc *mpce_op_at(size_t i);

/*
 * Call op d of `vtable` (a struct mpce_<prim>_vtable) with argv[i] pointing
 * at the i-th argument's value. Returns MPCE_OK with the op's own return
 * value in *ret (0 for void ops), or MPCE_ERR_PLUGIN if the vtable is too
 * small to hold the op or the op is NULL, MPCE_ERR_BACKEND if libffi cannot
 * prepare the call.
 */
mpce_status mpce_op_call(const struct mpce_opdesc *d, const void *vtable, void **argv, int *ret);

#endif
