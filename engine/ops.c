/* SPDX-License-Identifier: Apache-2.0 */
/* The op facts generated from plugin.h's lists, and the per-minor sizes the
 * loader checks modules against. */
#include "config.h"

#include <string.h>

#include "engine/ops.h"

#define MPCE__CA(t, n) +1u MPCE__CB
#define MPCE__CB(t, n) +1u MPCE__CA
#define MPCE__CA_END
#define MPCE__CB_END
#define MPCE__COUNT(seq) MPCE__END(MPCE__CA seq)

const struct mpce_op_info mpce_op_info[MPCE_OP_COUNT] = {
#define MPCE__OP_INFO(p_, n_, since_, required_, ret_, args_)                              \
    [MPCE_OP_##p_##_##n_] = {                                                              \
        .name = #p_ "." #n_,                                                               \
        .prim = MPCE__PRIM_##p_,                                                           \
        .offset = offsetof(struct mpce_##p_##_ops, n_),                                    \
        .since = since_,                                                                   \
        .required = required_,                                                             \
        .nargs = 1u MPCE__COUNT(args_),                                                    \
    },
    MPCE_ALL_OPS(MPCE__OP_INFO)
#undef MPCE__OP_INFO
};

/* Appending is the only change a minor may make: ops of a later minor come
 * after every op of an earlier one, and are optional (an older module lacks
 * them). test_abi checks both over the table. */

enum mpce_op_id mpce_op_first(mpce_primitive prim)
{
    for (unsigned i = 0; i < MPCE_OP_COUNT; i++)
        if (mpce_op_info[i].prim == prim)
            return (enum mpce_op_id)i;
    return MPCE_OP_COUNT;
}

int mpce_op_is_data(enum mpce_op_id id)
{
    /* Every table starts with ctx_new and ctx_free (test_abi checks it). */
    return id < MPCE_OP_COUNT &&
           (unsigned)id - (unsigned)mpce_op_first(mpce_op_info[id].prim) >= 2u;
}

int mpce_op_routed(enum mpce_op_id id)
{
    return mpce_op_is_data(id) && mpce_op_info[id].required;
}

unsigned mpce_op_count_of(mpce_primitive prim)
{
    unsigned n = 0;
    for (unsigned i = 0; i < MPCE_OP_COUNT; i++)
        n += mpce_op_info[i].prim == prim;
    return n;
}

enum mpce_op_id mpce_op_by_name(const char *name)
{
    for (unsigned i = 0; name != NULL && i < MPCE_OP_COUNT; i++)
        if (strcmp(mpce_op_info[i].name, name) == 0)
            return (enum mpce_op_id)i;
    return MPCE_OP_COUNT;
}

static size_t ops_size(mpce_primitive prim, unsigned minor, int required_only)
{
    size_t size = sizeof(size_t); /* struct_size */
    for (unsigned i = 0; i < MPCE_OP_COUNT; i++) {
        const struct mpce_op_info *o = &mpce_op_info[i];
        if (o->prim != prim || o->since > minor || (required_only && !o->required))
            continue;
        size_t end = o->offset + sizeof(void (*)(void));
        if (end > size)
            size = end;
    }
    return size;
}

size_t mpce_ops_size(mpce_primitive prim, unsigned minor)
{
    return ops_size(prim, minor, 0);
}

size_t mpce_ops_required_size(mpce_primitive prim, unsigned minor)
{
    return ops_size(prim, minor, 1);
}
