/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shape classes: what the selector measures and pins separately. A call's
 * size class comes from its work elements (internal.h); a context's variant
 * from its parameters, for the primitives where the best implementation
 * depends on them and not only on size: the NTT on the moduli's width (IFMA
 * serves q < 2^50 only), the LPN fold on whether its table fits in L2.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "engine/selector/selector.h"

/* The widest modulus IFMA's 52-bit multiplier serves. */
#define NTT_NARROW_BITS 50u
/* Tables up to 2^16 blocks (1 MiB) sit in a core's L2 on current CPUs; a
 * larger one is gathered from L3 or DRAM and wants a different kernel. */
#define LPN_SMALL_LOGK 16u

static const char *const variant_names[][MPCE_VARIANTS] = {
    [MPCE_PRIM_PRG] = {"", NULL},
    [MPCE_PRIM_NTT] = {"q50", "qwide"},
    [MPCE_PRIM_LPN] = {"k16", "kbig"},
    [MPCE_PRIM_DPF] = {"", NULL},
};

unsigned mpce_variant_count(mpce_primitive prim)
{
    if ((unsigned)prim >= sizeof(variant_names) / sizeof(variant_names[0]))
        return 1;
    return variant_names[prim][1] ? 2u : 1u;
}

const char *mpce_variant_name(mpce_primitive prim, unsigned variant)
{
    if (variant >= mpce_variant_count(prim))
        return NULL;
    return variant_names[prim][variant];
}

unsigned mpce_shape_variant(const struct mpce_params *p)
{
    switch ((mpce_primitive)p->primitive) {
    case MPCE_PRIM_NTT:
        for (size_t i = 0; i < p->ntt_l; i++)
            if (p->ntt_q == NULL || (p->ntt_q[i] >> NTT_NARROW_BITS) != 0)
                return 1;
        return 0;
    case MPCE_PRIM_LPN:
        return p->lpn_logk > LPN_SMALL_LOGK;
    default:
        return 0;
    }
}

void mpce_row_key(enum mpce_op_id op, unsigned variant, unsigned size_class, char *buf,
                  size_t len)
{
    const char *v = mpce_variant_name(mpce_op_info[op].prim, variant);
    snprintf(buf, len, "%s%s%s.%s", mpce_op_info[op].name, v && v[0] ? "." : "", v ? v : "",
             mpce_size_class_name(size_class));
}

/* The rest of key after part and a dot, or NULL. */
static const char *after_part(const char *key, const char *part)
{
    size_t n = strlen(part);
    return strncmp(key, part, n) == 0 && key[n] == '.' ? key + n + 1 : NULL;
}

/* Piece by piece, in mpce_row_key's order and with its first match: a
 * census or pins file holds a key a line, and formatting every row's key to
 * compare with each took most of their reading time. */
int mpce_row_parse(const char *key, enum mpce_op_id *op, unsigned *variant,
                   unsigned *size_class)
{
    for (unsigned o = 0; o < MPCE_OP_COUNT; o++) {
        if (!mpce_op_routed((enum mpce_op_id)o))
            continue;
        const char *rest = after_part(key, mpce_op_info[o].name);
        if (rest == NULL)
            continue;
        mpce_primitive prim = mpce_op_info[o].prim;
        for (unsigned v = 0; v < mpce_variant_count(prim); v++) {
            const char *vn = mpce_variant_name(prim, v);
            const char *cls = vn && vn[0] ? after_part(rest, vn) : rest;
            if (cls == NULL)
                continue;
            for (unsigned sc = 0; sc < MPCE_SIZE_CLASSES; sc++)
                if (strcmp(cls, mpce_size_class_name(sc)) == 0) {
                    *op = (enum mpce_op_id)o;
                    *variant = v;
                    *size_class = sc;
                    return 0;
                }
        }
    }
    return -1;
}
