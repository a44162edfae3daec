/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Implementation knobs (plugin ABI 2.2, struct mpce_knob): checking what a
 * module declares, and the one syntax every caller uses to name values,
 * "IMPL:KNOB=VALUE[:KNOB=VALUE...]" ("lpn-aesni:chunk=128"), in
 * [pins], MPCENGINE_FORCE, the API's implementation arguments and the pins
 * file's rows.
 */
#ifndef MPCE_RUNTIME_KNOBS_H
#define MPCE_RUNTIME_KNOBS_H

#include <stddef.h>
#include <stdint.h>

#include "engine/internal.h"

#define MPCE_KNOB_NAME_MAX 15u

/* Whether spec is NAME or NAME:KNOB=VALUE[:KNOB=VALUE...] in form: a valid
 * implementation name, knob names [a-z0-9_], decimal values below 2^32. */
int mpce_impl_spec_valid(const char *spec);
/* Whether list is KNOB=VALUE[:KNOB=VALUE...] in form. */
int mpce_knob_list_valid(const char *list);
/* The length of spec's implementation name (up to its ':'). */
size_t mpce_impl_spec_name_len(const char *spec);
/* The knob list after the ':', or NULL. */
const char *mpce_impl_spec_knobs(const char *spec);

/* "" if im's knobs are acceptable for a module of ABI 2.minor serving prim,
 * else why (for the loader's refusal). A module before 2.2 has none. */
void mpce_knobs_check(const struct mpce_impl *im, unsigned minor, mpce_primitive prim,
                      char *why, size_t len);
/* Record checked knobs on the slot (its impl's, when the module's minor has them). */
void mpce_knobs_attach(struct mpce_slot *s, unsigned minor);

/* Whether knob k of s changes op id. */
static inline int mpce_knob_affects(const struct mpce_slot *s, unsigned k, enum mpce_op_id op)
{
    return (s->knob_ops[k] >> (unsigned)op) & 1u;
}

/* values[] for s: every knob's default, then list's (NULL or "" for none)
 * over them. MPCE_OK, or MPCE_ERR_ARG prefixed with `what` naming the knob
 * or value and listing what s declares. */
mpce_status mpce_knobs_values(const struct mpce_slot *s, const char *list, const char *what,
                              uint32_t values[MPCE_KNOB_MAX]);
/* "chunk=128:prefetch=8" for values (every knob), "" if s has none. */
void mpce_knobs_format(const struct mpce_slot *s, const uint32_t *values, char *buf,
                       size_t len);
/* The same for the knobs whose value is not the default ("" if none): what
 * a tune pins. Returns how many there are. */
size_t mpce_knobs_format_changed(const struct mpce_slot *s, const uint32_t *values, char *buf,
                                 size_t len);
/* What s declares, for messages and listings: "chunk (64 128 [256] 512),
 * prefetch (...)", the default in brackets; "none" if nothing. */
void mpce_knobs_describe(const struct mpce_slot *s, char *buf, size_t len);

/* The slot whose name spec's implementation part is, or NULL. */
struct mpce_slot *mpce_registry_find_named(mpce_engine *e, const char *spec);

/* The slot spec names (its implementation part) and its knob values.
 * *has_knobs is 1 when spec named any. MPCE_ERR_NOIMPL with *slot NULL and
 * no error set for an unknown name (the caller says it, in its terms);
 * MPCE_ERR_ARG for a knob the slot lacks or a value it does not take, the
 * message prefixed with `what`. */
mpce_status mpce_registry_find_spec(mpce_engine *e, const char *spec, const char *what,
                                    struct mpce_slot **slot, uint32_t values[MPCE_KNOB_MAX],
                                    int *has_knobs);

#endif
