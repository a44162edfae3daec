/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Implementation knobs: the loader's checks of what a module declares, and
 * "IMPL:KNOB=VALUE:..." wherever a person or the selector names values.
 * A module's knob table is its own memory; the engine keeps pointers to it
 * only while the module is loaded (slots live exactly that long).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/runtime/knobs.h"

_Static_assert(MPCE_OP_COUNT <= 32, "knob_ops is a 32-bit mask of op ids");

static int knob_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

static int valid_knob_name(const char *s, size_t len)
{
    if (len == 0 || len > MPCE_KNOB_NAME_MAX)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!knob_char(s[i]))
            return 0;
    return 1;
}

/* A decimal value below 2^32 in [p, end). */
static int parse_value(const char *p, const char *end, uint32_t *out)
{
    uint64_t v = 0;
    if (p == end || end - p > 10)
        return 0;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        v = v * 10u + (uint64_t)(*p - '0');
    }
    if (v > UINT32_MAX)
        return 0;
    *out = (uint32_t)v;
    return 1;
}

/* Calls fn for each KNOB=VALUE item of list (':' between them: a list never
 * holds a comma, which separates MPCENGINE_FORCE's entries); 0, or -1 at the
 * first item
 * that is not of that form (fn's non-zero return stops it too). */
static int each_item(const char *list, int (*fn)(void *arg, const char *name, size_t len,
                                                 uint32_t value),
                     void *arg)
{
    const char *p = list;
    while (*p) {
        const char *end = strchr(p, ':');
        if (end == NULL)
            end = p + strlen(p);
        const char *eq = memchr(p, '=', (size_t)(end - p));
        uint32_t v;
        if (eq == NULL || !valid_knob_name(p, (size_t)(eq - p)) || !parse_value(eq + 1, end, &v))
            return -1;
        if (fn != NULL && fn(arg, p, (size_t)(eq - p), v) != 0)
            return -1;
        if (*end == '\0')
            break;
        p = end + 1;
        if (*p == '\0')
            return -1; /* a trailing ':' */
    }
    return 0;
}

int mpce_knob_list_valid(const char *list)
{
    return list[0] != '\0' && each_item(list, NULL, NULL) == 0;
}

size_t mpce_impl_spec_name_len(const char *spec)
{
    const char *colon = strchr(spec, ':');
    return colon ? (size_t)(colon - spec) : strlen(spec);
}

const char *mpce_impl_spec_knobs(const char *spec)
{
    const char *colon = strchr(spec, ':');
    return colon ? colon + 1 : NULL;
}

int mpce_impl_spec_valid(const char *spec)
{
    char name[MPCE_NAME_MAX + 1];
    size_t len = mpce_impl_spec_name_len(spec);
    if (len == 0 || len > MPCE_NAME_MAX)
        return 0;
    memcpy(name, spec, len);
    name[len] = '\0';
    if (!mpce_registry_valid_name(name))
        return 0;
    const char *knobs = mpce_impl_spec_knobs(spec);
    return knobs == NULL || (knobs[0] != '\0' && each_item(knobs, NULL, NULL) == 0);
}

/* The op ids a knob's ops string names, as a mask; 0 with why if one is not
 * a data op of prim. */
static uint32_t ops_mask(const char *ops, mpce_primitive prim, char *why, size_t len)
{
    uint32_t mask = 0;
    const char *p = ops;
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        const char *end = strchr(p, ' ');
        if (end == NULL)
            end = p + strlen(p);
        char name[32];
        size_t n = (size_t)(end - p);
        enum mpce_op_id id = MPCE_OP_COUNT;
        if (n < sizeof(name)) {
            memcpy(name, p, n);
            name[n] = '\0';
            id = mpce_op_by_name(name);
        }
        if (id >= MPCE_OP_COUNT || mpce_op_info[id].prim != prim || !mpce_op_is_data(id)) {
            snprintf(why, len, "names '%.*s', which is not one of its primitive's data ops",
                     (int)(n < 32 ? n : 32), p);
            return 0;
        }
        mask |= 1u << (unsigned)id;
        p = end;
    }
    if (mask == 0)
        snprintf(why, len, "names no op (ops is empty)");
    return mask;
}

void mpce_knobs_check(const struct mpce_impl *im, unsigned minor, mpce_primitive prim,
                      char *why, size_t len)
{
    why[0] = '\0';
    if (minor < 2 || im->n_knobs == 0)
        return;
    if (im->n_knobs > MPCE_KNOB_MAX || im->knobs == NULL) {
        if (im->knobs)
            snprintf(why, len, "declares %zu knobs (at most %u)", im->n_knobs, MPCE_KNOB_MAX);
        else
            snprintf(why, len, "declares %zu knobs but no knobs array", im->n_knobs);
        return;
    }
    for (size_t i = 0; i < im->n_knobs; i++) {
        const struct mpce_knob *k = im->knobs[i];
        char sub[160] = "";
        if (k == NULL || k->struct_size != sizeof(struct mpce_knob)) {
            snprintf(why, len, "knobs[%zu] is %s: rebuild the plugin against mpcengine/plugin.h",
                     i, k ? "of the wrong struct_size" : "NULL");
            return;
        }
        if (k->name == NULL || !valid_knob_name(k->name, strlen(k->name))) {
            snprintf(why, len, "knobs[%zu] has no valid name (a word of at most %u characters "
                     "[a-z0-9_])", i, MPCE_KNOB_NAME_MAX);
            return;
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(im->knobs[j]->name, k->name) == 0) {
                snprintf(why, len, "knob '%s' is declared twice", k->name);
                return;
            }
        if (k->flags & ~MPCE_KNOB_INFORMATIONAL) {
            snprintf(why, len, "knob '%s': flags 0x%x has unknown bits", k->name,
                     (unsigned)k->flags);
            return;
        }
        if (k->ops == NULL || ops_mask(k->ops, prim, sub, sizeof(sub)) == 0) {
            snprintf(why, len, "knob '%s': ops %s", k->name, k->ops ? sub : "is NULL");
            return;
        }
        if (k->n_values == 0 || k->n_values > MPCE_KNOB_MAX_VALUES || k->values == NULL) {
            snprintf(why, len, "knob '%s' has %zu values%s (1..%u)", k->name, k->n_values,
                     k->values ? "" : " and no values array", MPCE_KNOB_MAX_VALUES);
            return;
        }
        int has_default = 0;
        for (size_t v = 0; v < k->n_values; v++) {
            if (v > 0 && k->values[v] <= k->values[v - 1]) {
                snprintf(why, len, "knob '%s': values must be strictly ascending (%u after %u)",
                         k->name, (unsigned)k->values[v], (unsigned)k->values[v - 1]);
                return;
            }
            has_default |= k->values[v] == k->default_value;
        }
        if (!has_default) {
            snprintf(why, len, "knob '%s': its default %u is not one of its values", k->name,
                     (unsigned)k->default_value);
            return;
        }
    }
}

void mpce_knobs_attach(struct mpce_slot *s, unsigned minor)
{
    const struct mpce_impl *im = s->impl;
    char why[160];
    s->n_knobs = 0;
    if (minor < 2 || s->prim >= MPCE_PRIM_COUNT)
        return;
    for (size_t i = 0; i < im->n_knobs && i < MPCE_KNOB_MAX; i++) {
        s->knobs[i] = im->knobs[i];
        s->knob_ops[i] = ops_mask(im->knobs[i]->ops, s->prim, why, sizeof(why));
        s->n_knobs++;
    }
}

static int knob_takes(const struct mpce_knob *k, uint32_t v)
{
    for (size_t i = 0; i < k->n_values; i++)
        if (k->values[i] == v)
            return 1;
    return 0;
}

void mpce_knobs_describe(const struct mpce_slot *s, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    if (s->n_knobs == 0) {
        snprintf(buf, len, "none");
        return;
    }
    for (unsigned k = 0; k < s->n_knobs && used < len; k++) {
        const struct mpce_knob *kn = s->knobs[k];
        used += (size_t)snprintf(buf + used, len - used, "%s%s (", k ? ", " : "", kn->name);
        for (size_t v = 0; v < kn->n_values && used < len; v++)
            used += (size_t)snprintf(buf + used, len - used,
                                     kn->values[v] == kn->default_value ? "%s[%u]" : "%s%u",
                                     v ? " " : "", (unsigned)kn->values[v]);
        if (used < len)
            used += (size_t)snprintf(buf + used, len - used, ")%s",
                                     (kn->flags & MPCE_KNOB_INFORMATIONAL) ? " informational"
                                                                           : "");
    }
}

struct values_arg {
    const struct mpce_slot *s;
    uint32_t *values;
    const char *what;
    mpce_status st;
    unsigned seen;               /* knobs named so far, a bit each */
};

static int set_item(void *arg, const char *name, size_t len, uint32_t value)
{
    struct values_arg *a = arg;
    char have[400];
    for (unsigned k = 0; k < a->s->n_knobs; k++) {
        const struct mpce_knob *kn = a->s->knobs[k];
        if (strlen(kn->name) != len || memcmp(kn->name, name, len) != 0)
            continue;
        if (a->seen & (1u << k)) {
            a->st = mpce_error(MPCE_ERR_ARG, "%s%s: knob %s is named twice: give each knob "
                               "one value", a->what, a->s->impl->name, kn->name);
            return -1;
        }
        a->seen |= 1u << k;
        if (!knob_takes(kn, value)) {
            mpce_knobs_describe(a->s, have, sizeof(have));
            a->st = mpce_error(MPCE_ERR_ARG, "%s%s: knob %s takes no value %u: its knobs are %s",
                               a->what, a->s->impl->name, kn->name, (unsigned)value, have);
            return -1;
        }
        a->values[k] = value;
        return 0;
    }
    mpce_knobs_describe(a->s, have, sizeof(have));
    a->st = mpce_error(MPCE_ERR_ARG, "%s%s has no knob '%.*s': its knobs are %s", a->what,
                       a->s->impl->name, (int)len, name, have);
    return -1;
}

mpce_status mpce_knobs_values(const struct mpce_slot *s, const char *list, const char *what,
                              uint32_t values[MPCE_KNOB_MAX])
{
    for (unsigned k = 0; k < MPCE_KNOB_MAX; k++)
        values[k] = k < s->n_knobs ? s->knobs[k]->default_value : 0;
    if (list == NULL || list[0] == '\0')
        return MPCE_OK;
    struct values_arg a = {.s = s, .values = values, .what = what, .st = MPCE_OK};
    if (each_item(list, set_item, &a) != 0)
        return a.st != MPCE_OK
                   ? a.st
                   : mpce_error(MPCE_ERR_ARG, "%s'%.200s' is not a knob list: write "
                                "KNOB=VALUE[:KNOB=VALUE...]", what, list);
    return MPCE_OK;
}

void mpce_knobs_format(const struct mpce_slot *s, const uint32_t *values, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned k = 0; k < s->n_knobs && used < len; k++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s=%u", k ? ":" : "",
                                 s->knobs[k]->name, (unsigned)values[k]);
}

struct mpce_slot *mpce_registry_find_named(mpce_engine *e, const char *spec)
{
    char name[MPCE_NAME_MAX + 1];
    size_t len = mpce_impl_spec_name_len(spec);
    if (len > MPCE_NAME_MAX)
        return NULL;
    memcpy(name, spec, len);
    name[len] = '\0';
    return mpce_registry_find(e, name);
}

size_t mpce_knobs_format_changed(const struct mpce_slot *s, const uint32_t *values, char *buf,
                                 size_t len)
{
    size_t used = 0, n = 0;
    buf[0] = '\0';
    for (unsigned k = 0; k < s->n_knobs && used < len; k++)
        if (values[k] != s->knobs[k]->default_value) {
            used += (size_t)snprintf(buf + used, len - used, "%s%s=%u", used ? ":" : "",
                                     s->knobs[k]->name, (unsigned)values[k]);
            n++;
        }
    return n;
}

mpce_status mpce_registry_find_spec(mpce_engine *e, const char *spec, const char *what,
                                    struct mpce_slot **slot, uint32_t values[MPCE_KNOB_MAX],
                                    int *has_knobs)
{
    *slot = NULL;
    *has_knobs = 0;
    struct mpce_slot *s = mpce_registry_find_named(e, spec);
    if (s == NULL)
        return MPCE_ERR_NOIMPL;
    const char *list = mpce_impl_spec_knobs(spec);
    /* A refused implementation's knobs were never attached: its callers say
     * why it was refused, which matters more than its knobs. */
    if (mpce_slot_state(s) == MPCE_ST_SKIPPED)
        list = NULL;
    if (list != NULL && list[0] == '\0')
        return mpce_error(MPCE_ERR_ARG, "%s'%.100s' ends in ':' with no knob after it: write "
                          "IMPL or IMPL:KNOB=VALUE[:KNOB=VALUE...]", what, spec);
    if (list != NULL && s->n_knobs == 0)
        return mpce_error(MPCE_ERR_ARG, "%s%s declares no knobs, so '%.100s' names none it "
                          "has", what, s->impl->name, list);
    mpce_status st = mpce_knobs_values(s, list, what, values);
    if (st != MPCE_OK)
        return st;
    *slot = s;
    *has_knobs = list != NULL;
    return MPCE_OK;
}
