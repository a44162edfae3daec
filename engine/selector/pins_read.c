/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading the pins file (pins.h) strictly: the layout is in pins_text.h.
 *
 * The reader trusts nothing it has not checked: the seal first, on the raw
 * bytes; then the text line by line (syntax as iniparser reads it, no
 * duplicate sections or keys, which iniparser would silently merge), both
 * pins_scan.c's; then iniparser's dictionary, which must hold exactly the
 * sections and keys the text has, every one known and every value
 * well-formed; last what the values mean together (a winner that is one of
 * its row's ok candidates, no row or module twice...). The checks are the
 * writer's too (pins_text.h): what one writes the other reads, and what one
 * refuses the other does.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#ifdef HAVE_INIPARSER_INIPARSER_H
#include <iniparser/iniparser.h>
#else
#include <iniparser.h>
#endif

#include "engine/runtime/module_file.h"
#include "engine/selector/pins.h"
#include "engine/runtime/conf.h"
#include "engine/selector/pins_text.h"

/* Highest section, cand and why number accepted. */
#define PINS_MAX_INDEX 1000000u

/* Keys of each section kind, in the order the writer writes them. */
static const char *const k_pins_keys[] = {"format", "engine", "date", "effort", "cpu",
                                          "policy"};
static const char *const k_module_keys[] = {"plugin", "path", "size", "mtime", "sha256",
                                            "devices"};
static const char *const k_row_keys[] = {"key",       "shape",   "winner",
                                         "runner_up", "verdict", "plugins"};
/* A row's optional keys: the pool's measured threshold for its winner, and
 * the winner's measured knob values. */
static const char *const k_row_optional[] = {"slice_min",      "slice_verdict",
                                             "knobs",          "knob_verdict",
                                             "crossover",      "crossover_impl",
                                             "crossover_verdict"};
/* How many of them a format 2 file may hold (format 3 added the crossover). */
#define ROW_OPTIONAL_FORMAT2 4
static const char *const k_blacklist_keys[] = {"path", "size", "mtime", "reason"};

enum sec_kind { SEC_PINS, SEC_MODULE, SEC_ROW, SEC_BLACKLIST };
/* Section names by kind: [pins], then [module.N], [row.N], [blacklist.N]. */
static const char *const k_sec_names[] = {"pins", "module", "row", "blacklist"};

static int span_is(const char *a, size_t al, const char *s)
{
    return mpce_pins_span_cmp(a, al, s, strlen(s)) == 0;
}

/* The line of [sec] key (key NULL: of the header), 0 if not found. */
static unsigned line_of(const struct pins_rd *r, const char *sec, const char *key)
{
    for (size_t s = 0; s < r->nsec; s++) {
        if (!span_is(r->secs[s].name, r->secs[s].len, sec))
            continue;
        if (!key)
            return r->secs[s].line;
        for (size_t k = 0; k < r->nkey; k++)
            if (r->keys[k].sec == s && span_is(r->keys[k].name, r->keys[k].len, key))
                return r->keys[k].line;
        return r->secs[s].line;
    }
    return 0;
}

/* "PATH:LINE: [sec] key: msg", CORRUPT. */
static enum mpce_pins_read_result rd_bad(struct pins_rd *r, const char *sec, const char *key,
                                         const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static enum mpce_pins_read_result rd_bad(struct pins_rd *r, const char *sec, const char *key,
                                         const char *fmt, ...)
{
    char msg[1100];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    unsigned line = line_of(r, sec, key);
    if (key)
        return mpce_pins_rd_fail(r, MPCE_PINS_READ_CORRUPT, line, "[%s] %s: %s", sec, key, msg);
    return mpce_pins_rd_fail(r, MPCE_PINS_READ_CORRUPT, line, "[%s] %s", sec, msg);
}

/* Whether iniparser's name for an entry is [s] (k NULL) or [s] k. */
static int same_name(const char *dkey, const struct pins_raw_sec *s, const struct pins_raw_key *k)
{
    if (strncasecmp(dkey, s->name, s->len) != 0)
        return 0;
    dkey += s->len;
    if (!k)
        return *dkey == '\0';
    return *dkey == ':' && strncasecmp(dkey + 1, k->name, k->len) == 0 &&
           dkey[1 + k->len] == '\0';
}

/*
 * iniparser parsed the file again, by name: its dictionary must hold
 * exactly the sections, keys and values of the text whose seal was checked,
 * or the file changed in place in between (a writer never does that: it
 * renames a new file over the old one). Without deletions iniparser keeps
 * its entries in the order of the file, sections before their keys.
 */
static enum mpce_pins_read_result check_parsed(struct pins_rd *r, dictionary *d)
{
    size_t s = 0, k = 0;
    for (ssize_t i = 0; i < d->size; i++) {
        const char *dk = d->key[i], *dv = d->val[i];
        if (!dk)
            continue;
        int ok;
        if (k < r->nkey && s > 0 && r->keys[k].sec == s - 1) {
            const struct pins_raw_key *rk = &r->keys[k++];
            ok = same_name(dk, &r->secs[rk->sec], rk) && dv && strlen(dv) == rk->vlen &&
                 memcmp(dv, rk->val, rk->vlen) == 0;
        } else {
            ok = s < r->nsec && same_name(dk, &r->secs[s++], NULL);
        }
        if (!ok)
            return mpce_pins_rd_fail(r, MPCE_PINS_READ_ERROR, 0,
                                     "changed while it was read, or memory ran out: iniparser "
                                     "found '%.100s' where the checked text has something "
                                     "else: try again", dk);
    }
    /* iniparser 4.1 also reads a line it could not copy (out of memory) as
     * an empty one: a transient failure, not a damaged file. */
    if (s != r->nsec || k != r->nkey)
        return mpce_pins_rd_fail(r, MPCE_PINS_READ_ERROR, 0,
                                 "changed while it was read, or memory ran out: iniparser "
                                 "found fewer entries than the checked text has: try again");
    return MPCE_PINS_READ_OK;
}

/* "N" of "module.N", "cand.N"...: 1 to PINS_MAX_INDEX, no leading zeros. */
static int parse_index(const char *s, size_t len, size_t *out)
{
    if (len == 0 || len > 7 || s[0] == '0')
        return -1;
    size_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (size_t)(s[i] - '0');
    }
    if (v > PINS_MAX_INDEX)
        return -1;
    *out = v;
    return 0;
}

/* "prefix.N" with the given prefix (case as iniparser folds it). */
static int parse_numbered(const char *s, size_t len, const char *prefix, size_t *idx)
{
    size_t pl = strlen(prefix);
    return len > pl + 1 && strncasecmp(s, prefix, pl) == 0 && s[pl] == '.'
               ? parse_index(s + pl + 1, len - pl - 1, idx)
               : -1;
}

static int parse_section(const char *s, size_t len, enum sec_kind *kind, size_t *idx)
{
    if (span_is(s, len, k_sec_names[SEC_PINS])) {
        *kind = SEC_PINS;
        *idx = 0;
        return 0;
    }
    for (int k = SEC_MODULE; k <= SEC_BLACKLIST; k++) {
        if (parse_numbered(s, len, k_sec_names[k], idx) == 0) {
            *kind = (enum sec_kind)k;
            return 0;
        }
    }
    return -1;
}

static int parse_u64(const char *s, uint64_t *out)
{
    if (!*s || (s[0] == '0' && s[1]))
        return -1;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static int parse_i64(const char *s, int64_t *out)
{
    int neg = *s == '-';
    uint64_t v;
    if (parse_u64(s + neg, &v) != 0)
        return -1;
    if (neg) {
        if (v == 0 || v > (uint64_t)INT64_MAX + 1)
            return -1;
        *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    } else {
        if (v > (uint64_t)INT64_MAX)
            return -1;
        *out = (int64_t)v;
    }
    return 0;
}

/* A time as the writer prints it, under the C locale set by the caller. */
static int parse_time(const char *s, double *out)
{
    if (!*s || *s == '-' || *s == '+')
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || !mpce_pins_valid_time(v))
        return -1;
    *out = v;
    return 0;
}

/* What pass one of the dictionary found for one row. */
struct row_tmp {
    const char *f[PINS_COUNT(k_row_keys)];
    const char *opt[PINS_COUNT(k_row_optional)];
    const char **cand, **why;
    size_t ncand, cmax, nwhy, wmax;
};

struct vals {
    const char *hdr[PINS_COUNT(k_pins_keys)];
    const char *(*mod)[PINS_COUNT(k_module_keys)];
    struct row_tmp *row;
    const char *(*bl)[PINS_COUNT(k_blacklist_keys)];
    size_t nmod, nrow, nbl;
    /* The section the seal line sits in: "seal" is its key there. */
    enum sec_kind seal_kind;
    size_t seal_idx;
};

static void vals_free(struct vals *v)
{
    free(v->mod);
    for (size_t i = 0; v->row && i < v->nrow; i++) {
        free(v->row[i].cand);
        free(v->row[i].why);
    }
    free(v->row);
    free(v->bl);
}

static const char *sec_name(char *buf, size_t len, enum sec_kind kind, size_t idx)
{
    if (kind == SEC_PINS)
        snprintf(buf, len, "%s", k_sec_names[kind]);
    else
        snprintf(buf, len, "%s.%zu", k_sec_names[kind], idx);
    return buf;
}

/* [pins] format first: a file of another format may be laid out otherwise. */
static enum mpce_pins_read_result check_format(struct pins_rd *r, dictionary *d)
{
    int have = 0;
    for (size_t s = 0; s < r->nsec; s++)
        if (span_is(r->secs[s].name, r->secs[s].len, "pins"))
            have = 1;
    if (!have)
        return mpce_pins_rd_fail(r, MPCE_PINS_READ_CORRUPT, 0, "no [pins] section");
    const char *v = iniparser_getstring(d, "pins:format", NULL);
    uint64_t f;
    if (!v)
        return rd_bad(r, "pins", NULL, "missing key 'format'");
    if (parse_u64(v, &f) != 0)
        return rd_bad(r, "pins", "format", "'%s' is not a number", v);
    if (f < MPCE_PINS_FORMAT_OLDEST || f > MPCE_PINS_FORMAT)
        return rd_bad(r, "pins", "format", "%" PRIu64 ": this engine reads formats %u to %u",
                      f, MPCE_PINS_FORMAT_OLDEST, MPCE_PINS_FORMAT);
    r->format = (unsigned)f;
    return MPCE_PINS_READ_OK;
}

/* Section names, numbering, and the arrays pass one fills. */
static enum mpce_pins_read_result check_sections(struct pins_rd *r, struct vals *v)
{
    size_t max[4] = {0}, count[4] = {0};
    unsigned max_line[4] = {0};
    for (size_t s = 0; s < r->nsec; s++) {
        enum sec_kind kind;
        size_t idx;
        if (parse_section(r->secs[s].name, r->secs[s].len, &kind, &idx) != 0)
            return mpce_pins_rd_fail(r, MPCE_PINS_READ_CORRUPT, r->secs[s].line,
                                     "unknown section [%.*s]", (int)r->secs[s].len,
                                     r->secs[s].name);
        count[kind]++;
        if (idx > max[kind]) {
            max[kind] = idx;
            max_line[kind] = r->secs[s].line;
        }
    }
    for (int k = SEC_MODULE; k <= SEC_BLACKLIST; k++)
        if (count[k] != max[k])
            return mpce_pins_rd_fail(r, MPCE_PINS_READ_CORRUPT, max_line[k],
                                     "[%s.%zu] but only %zu %s sections: they must be "
                                     "numbered 1, 2, 3... without gaps", k_sec_names[k],
                                     max[k], count[k], k_sec_names[k]);
    v->nmod = count[SEC_MODULE];
    v->nrow = count[SEC_ROW];
    v->nbl = count[SEC_BLACKLIST];
    if ((v->nmod && !(v->mod = calloc(v->nmod, sizeof(*v->mod)))) ||
        (v->nrow && !(v->row = calloc(v->nrow, sizeof(*v->row)))) ||
        (v->nbl && !(v->bl = calloc(v->nbl, sizeof(*v->bl)))))
        return mpce_pins_rd_nomem(r);
    /* The seal line is the last key the scan saw. */
    const struct pins_raw_sec *ss = &r->secs[r->keys[r->nkey - 1].sec];
    parse_section(ss->name, ss->len, &v->seal_kind, &v->seal_idx);
    return MPCE_PINS_READ_OK;
}

/*
 * One pass over iniparser's dictionary: every entry is a section the scan
 * saw or "section:key" with a known key. Pass one (fill 0) records simple
 * keys and counts cand.N/why.N; pass two (fill 1) records those.
 */
static enum mpce_pins_read_result dict_pass(struct pins_rd *r, dictionary *d, struct vals *v,
                                            int fill)
{
    char sec[64];
    for (ssize_t i = 0; i < d->size; i++) {
        const char *k = d->key[i];
        if (!k)
            continue;
        const char *colon = strchr(k, ':');
        if (!colon)
            continue; /* a section: checked on the text */
        const char *key = colon + 1;
        const char *val = d->val[i] ? d->val[i] : "";
        enum sec_kind kind;
        size_t idx;
        if (parse_section(k, (size_t)(colon - k), &kind, &idx) != 0)
            return mpce_pins_rd_fail(r, MPCE_PINS_READ_CORRUPT, 0, "unexpected entry '%s'", k);
        sec_name(sec, sizeof(sec), kind, idx);
        if (kind == v->seal_kind && idx == v->seal_idx && strcmp(key, "seal") == 0)
            continue;
        int f = -1;
        size_t n;
        switch (kind) {
        case SEC_PINS:
            f = mpce_pins_index_of(key, k_pins_keys, PINS_COUNT(k_pins_keys));
            if (f >= 0 && !fill)
                v->hdr[f] = val;
            break;
        case SEC_MODULE:
            f = mpce_pins_index_of(key, k_module_keys, PINS_COUNT(k_module_keys));
            if (f >= 0 && !fill)
                v->mod[idx - 1][f] = val;
            break;
        case SEC_BLACKLIST:
            f = mpce_pins_index_of(key, k_blacklist_keys, PINS_COUNT(k_blacklist_keys));
            if (f >= 0 && !fill)
                v->bl[idx - 1][f] = val;
            break;
        case SEC_ROW: {
            struct row_tmp *rt = &v->row[idx - 1];
            if ((f = mpce_pins_index_of(key, k_row_keys, PINS_COUNT(k_row_keys))) >= 0) {
                if (!fill)
                    rt->f[f] = val;
            } else if ((f = mpce_pins_index_of(key, k_row_optional,
                                               r->format >= 3 ? PINS_COUNT(k_row_optional)
                                                              : ROW_OPTIONAL_FORMAT2)) >= 0) {
                if (!fill)
                    rt->opt[f] = val;
            } else if (parse_numbered(key, strlen(key), "cand", &n) == 0) {
                f = 0;
                if (fill)
                    rt->cand[n - 1] = val;
                else {
                    rt->ncand++;
                    rt->cmax = n > rt->cmax ? n : rt->cmax;
                }
            } else if (parse_numbered(key, strlen(key), "why", &n) == 0) {
                f = 0;
                if (fill)
                    rt->why[n - 1] = val;
                else {
                    rt->nwhy++;
                    rt->wmax = n > rt->wmax ? n : rt->wmax;
                }
            }
            break;
        }
        }
        if (f < 0)
            return rd_bad(r, sec, key, "unknown key");
    }
    return MPCE_PINS_READ_OK;
}

/* The counts of cand.N and why.N, and their arrays for pass two. */
static enum mpce_pins_read_result check_cands(struct pins_rd *r, struct vals *v)
{
    char sec[64];
    for (size_t i = 0; i < v->nrow; i++) {
        struct row_tmp *rt = &v->row[i];
        sec_name(sec, sizeof(sec), SEC_ROW, i + 1);
        if (rt->ncand != rt->cmax)
            return rd_bad(r, sec, NULL, "cand.%zu but only %zu cand keys: they must be "
                          "numbered 1, 2, 3... without gaps", rt->cmax, rt->ncand);
        if (rt->nwhy != rt->wmax)
            return rd_bad(r, sec, NULL, "why.%zu but only %zu why keys: they must be "
                          "numbered 1, 2, 3... without gaps", rt->wmax, rt->nwhy);
        if (rt->ncand != rt->nwhy)
            return rd_bad(r, sec, NULL, "%zu cand keys but %zu why keys: each cand.N needs "
                          "its why.N", rt->ncand, rt->nwhy);
        if (rt->ncand && (!(rt->cand = calloc(rt->ncand, sizeof(*rt->cand))) ||
                          !(rt->why = calloc(rt->ncand, sizeof(*rt->why)))))
            return mpce_pins_rd_nomem(r);
    }
    return MPCE_PINS_READ_OK;
}

static enum mpce_pins_read_result missing(struct pins_rd *r, const char *const *vals,
                                          const char *const *keys, size_t n, const char *sec)
{
    for (size_t i = 0; i < n; i++)
        if (!vals[i])
            return rd_bad(r, sec, NULL, "missing key '%s'", keys[i]);
    return MPCE_PINS_READ_OK;
}

/* [sec] key must pass check, one of pins_text.h's (the writer's too). */
static enum mpce_pins_read_result rd_check(struct pins_rd *r, const char *sec, const char *key,
                                           const char *value,
                                           const char *(*check)(const char *))
{
    const char *wanted = check(value);
    return wanted ? rd_bad(r, sec, key, "'%s' is not %s", value, wanted) : MPCE_PINS_READ_OK;
}

#define SDUP(dst, src)                                                                   \
    do {                                                                                 \
        if (!((dst) = strdup(src)))                                                      \
            return mpce_pins_rd_nomem(r);                                                          \
    } while (0)

static enum mpce_pins_read_result conv_header(struct pins_rd *r, const struct vals *v,
                                              struct mpce_pins *out)
{
    enum mpce_pins_read_result res =
        missing(r, v->hdr, k_pins_keys, PINS_COUNT(k_pins_keys), "pins");
    if (res == MPCE_PINS_READ_OK)
        res = rd_check(r, "pins", "date", v->hdr[2], mpce_pins_check_date);
    if (res == MPCE_PINS_READ_OK)
        res = rd_check(r, "pins", "effort", v->hdr[3], mpce_pins_check_effort);
    if (res == MPCE_PINS_READ_OK)
        res = rd_check(r, "pins", "policy", v->hdr[5], mpce_pins_check_policy);
    if (res != MPCE_PINS_READ_OK)
        return res;
    out->format = r->format;
    SDUP(out->engine_version, v->hdr[1]);
    SDUP(out->date, v->hdr[2]);
    SDUP(out->effort, v->hdr[3]);
    SDUP(out->cpu, v->hdr[4]);
    SDUP(out->policy, v->hdr[5]);
    return MPCE_PINS_READ_OK;
}

static enum mpce_pins_read_result conv_size_mtime(struct pins_rd *r, const char *sec,
                                                  const char *size, const char *mtime,
                                                  uint64_t *so, int64_t *mo)
{
    if (parse_u64(size, so) != 0)
        return rd_bad(r, sec, "size", "'%s' is not a size in bytes", size);
    if (parse_i64(mtime, mo) != 0)
        return rd_bad(r, sec, "mtime", "'%s' is not a time in seconds", mtime);
    return MPCE_PINS_READ_OK;
}

static enum mpce_pins_read_result conv_module(struct pins_rd *r, size_t i, const char *const *f,
                                              struct mpce_pins_module *m)
{
    char sec[64];
    sec_name(sec, sizeof(sec), SEC_MODULE, i + 1);
    enum mpce_pins_read_result res =
        missing(r, f, k_module_keys, PINS_COUNT(k_module_keys), sec);
    if (res == MPCE_PINS_READ_OK)
        res = rd_check(r, sec, "plugin", f[0], mpce_pins_check_name);
    if (res == MPCE_PINS_READ_OK)
        res = conv_size_mtime(r, sec, f[2], f[3], &m->size, &m->mtime);
    if (res == MPCE_PINS_READ_OK)
        res = rd_check(r, sec, "sha256", f[4], mpce_pins_check_sha256);
    if (res != MPCE_PINS_READ_OK)
        return res;
    SDUP(m->plugin, f[0]);
    SDUP(m->path, f[1]);
    SDUP(m->sha256, f[4]);
    SDUP(m->devices, f[5]);
    return MPCE_PINS_READ_OK;
}

static enum mpce_pins_read_result conv_blacklist(struct pins_rd *r, size_t i, const char *const *f,
                                                 struct mpce_pins_blacklist *b)
{
    char sec[64];
    sec_name(sec, sizeof(sec), SEC_BLACKLIST, i + 1);
    enum mpce_pins_read_result res =
        missing(r, f, k_blacklist_keys, PINS_COUNT(k_blacklist_keys), sec);
    if (res == MPCE_PINS_READ_OK)
        res = conv_size_mtime(r, sec, f[1], f[2], &b->size, &b->mtime);
    if (res != MPCE_PINS_READ_OK)
        return res;
    SDUP(b->path, f[0]);
    SDUP(b->reason, f[3]);
    return MPCE_PINS_READ_OK;
}

/* cand.N = "IMPL STATUS MEDIAN SPREAD", single spaces. */
static enum mpce_pins_read_result conv_cand(struct pins_rd *r, const char *sec, size_t n,
                                            const char *val, const char *why,
                                            struct mpce_pins_cand *c)
{
    char key[32], buf[PINS_MAX_LINE + 1];
    snprintf(key, sizeof(key), "cand.%zu", n);
    char *tok[4];
    size_t nt = 0;
    size_t len = strlen(val);
    int ok = len < sizeof(buf);
    if (ok) {
        memcpy(buf, val, len + 1);
        char *s = buf;
        for (;;) {
            char *sp = strchr(s, ' ');
            if (nt == 4 || (sp ? sp == s : !*s)) {
                ok = 0;
                break;
            }
            tok[nt++] = s;
            if (!sp)
                break;
            *sp = '\0';
            s = sp + 1;
        }
    }
    ok = ok && nt == 4 && !mpce_pins_check_name(tok[0]) && !mpce_pins_check_status(tok[1]) &&
         parse_time(tok[2], &c->median) == 0 && parse_time(tok[3], &c->spread) == 0;
    if (!ok)
        return rd_bad(r, sec, key,
                      "expected 'IMPL STATUS MEDIAN SPREAD' (STATUS " PINS_STATUS_WORDS
                      "; times finite, not negative), not '%.200s'", val);
    SDUP(c->impl, tok[0]);
    SDUP(c->status, tok[1]);
    SDUP(c->why, why);
    return MPCE_PINS_READ_OK;
}

/* plugins = "a b c": names split at single spaces, "" for none. */
static enum mpce_pins_read_result conv_plugins(struct pins_rd *r, const char *sec, const char *list,
                                               struct mpce_pins_row *row)
{
    if (!*list)
        return MPCE_PINS_READ_OK;
    size_t np = 1;
    for (const char *c = list; *c; c++)
        np += *c == ' ';
    if (!(row->plugins = calloc(np, sizeof(*row->plugins))))
        return mpce_pins_rd_nomem(r);
    const char *s = list;
    for (size_t k = 0; k < np; k++) {
        const char *sp = strchr(s, ' ');
        size_t len = sp ? (size_t)(sp - s) : strlen(s);
        if (!(row->plugins[k] = strndup(s, len)))
            return mpce_pins_rd_nomem(r);
        row->n_plugins = k + 1;
        if (mpce_pins_check_name(row->plugins[k]))
            return rd_bad(r, sec, "plugins", "expected plugin names separated by single spaces");
        s += len + 1;
    }
    return MPCE_PINS_READ_OK;
}

static enum mpce_pins_read_result conv_row(struct pins_rd *r, size_t i, const struct row_tmp *rt,
                                           struct mpce_pins_row *row)
{
    char sec[64];
    sec_name(sec, sizeof(sec), SEC_ROW, i + 1);
    const char *const *f = rt->f;
    enum mpce_pins_read_result res = missing(r, f, k_row_keys, PINS_COUNT(k_row_keys), sec);
    if (res != MPCE_PINS_READ_OK)
        return res;
    if ((res = rd_check(r, sec, "key", f[0], mpce_pins_check_row_key)) != MPCE_PINS_READ_OK)
        return res;
    for (int k = 2; k <= 3 && res == MPCE_PINS_READ_OK; k++)
        res = rd_check(r, sec, k_row_keys[k], f[k], mpce_pins_check_optional_name);
    if (res != MPCE_PINS_READ_OK)
        return res;
    SDUP(row->key, f[0]);
    SDUP(row->shape, f[1]);
    SDUP(row->winner, f[2]);
    SDUP(row->runner_up, f[3]);
    SDUP(row->verdict, f[4]);
    if ((res = conv_plugins(r, sec, f[5], row)) != MPCE_PINS_READ_OK)
        return res;
    /* slice_verdict may stand alone; slice_min without one is caught with
     * the row's meaning below. The writer leaves out an empty verdict. */
    const char *smin = rt->opt[0], *sverdict = rt->opt[1];
    if (smin && strcmp(smin, "never") == 0)
        row->slice_min = MPCE_PINS_NEVER;
    else if (smin && (parse_u64(smin, &row->slice_min) != 0 ||
                      !mpce_pins_valid_slice_min(row->slice_min) ||
                      row->slice_min == MPCE_PINS_NEVER))
        return rd_bad(r, sec, "slice_min", "'%s' is not " PINS_SLICE_WORDS, smin);
    if (sverdict && !*sverdict)
        return rd_bad(r, sec, "slice_verdict", "empty: a row without one has no slice_verdict");
    SDUP(row->slice_verdict, sverdict ? sverdict : "");
    const char *knobs = rt->opt[2], *kverdict = rt->opt[3];
    if (knobs && !*knobs)
        return rd_bad(r, sec, "knobs", "empty: a row with default knob values has no knobs key");
    if (kverdict && !*kverdict)
        return rd_bad(r, sec, "knob_verdict", "empty: a row without one has no knob_verdict");
    SDUP(row->knobs, knobs ? knobs : "");
    SDUP(row->knob_verdict, kverdict ? kverdict : "");
    /* Format 3's crossover: the number, the implementation, the verdict
     * (which may stand alone: a search that found none says so). */
    const char *xo = rt->opt[4], *ximpl = rt->opt[5], *xverdict = rt->opt[6];
    if (xo && (parse_u64(xo, &row->crossover) != 0 || row->crossover == 0 ||
               !mpce_pins_valid_slice_min(row->crossover) || row->crossover == MPCE_PINS_NEVER))
        return rd_bad(r, sec, "crossover", "'%s' is not " PINS_CROSSOVER_WORDS, xo);
    if (ximpl && !*ximpl)
        return rd_bad(r, sec, "crossover_impl", "empty: a row without a crossover has no "
                      "crossover_impl");
    if (xverdict && !*xverdict)
        return rd_bad(r, sec, "crossover_verdict", "empty: a row without one has no "
                      "crossover_verdict");
    SDUP(row->crossover_impl, ximpl ? ximpl : "");
    SDUP(row->crossover_verdict, xverdict ? xverdict : "");
    if (rt->ncand) {
        if (!(row->cands = calloc(rt->ncand, sizeof(*row->cands))))
            return mpce_pins_rd_nomem(r);
        row->n_cands = rt->ncand;
        for (size_t k = 0; k < rt->ncand; k++)
            if ((res = conv_cand(r, sec, k + 1, rt->cand[k], rt->why[k], &row->cands[k])) !=
                MPCE_PINS_READ_OK)
                return res;
    }
    char key[32], msg[400];
    int bad = mpce_pins_check_row(row, key, sizeof(key), msg, sizeof(msg));
    if (bad < 0)
        return mpce_pins_rd_nomem(r);
    return bad ? rd_bad(r, sec, key, "%s", msg) : MPCE_PINS_READ_OK;
}

/* What only the whole file shows: a plugin's module or a row's key twice,
 * of which the selector could only ever see one. */
static enum mpce_pins_read_result check_unique(struct pins_rd *r, const struct mpce_pins *p)
{
    char sec[64];
    size_t first = 0, again = 0;
    int dup = mpce_pins_find_dup(p->modules, p->n_modules, sizeof(*p->modules),
                                 offsetof(struct mpce_pins_module, plugin), &first, &again);
    if (dup > 0)
        return rd_bad(r, sec_name(sec, sizeof(sec), SEC_MODULE, again + 1), "plugin",
                      "'%s' is also the plugin of [module.%zu]", p->modules[again].plugin,
                      first + 1);
    if (dup == 0)
        dup = mpce_pins_find_dup(p->rows, p->n_rows, sizeof(*p->rows),
                                 offsetof(struct mpce_pins_row, key), &first, &again);
    if (dup > 0)
        return rd_bad(r, sec_name(sec, sizeof(sec), SEC_ROW, again + 1), "key",
                      "'%s' is also the key of [row.%zu]", p->rows[again].key, first + 1);
    return dup < 0 ? mpce_pins_rd_nomem(r) : MPCE_PINS_READ_OK;
}

/* The checked dictionary into out (which the caller frees on failure). */
static enum mpce_pins_read_result convert(struct pins_rd *r, dictionary *d, struct mpce_pins *out)
{
    struct vals v = {0};
    enum mpce_pins_read_result res = check_format(r, d);
    if (res == MPCE_PINS_READ_OK)
        res = check_sections(r, &v);
    if (res == MPCE_PINS_READ_OK)
        res = dict_pass(r, d, &v, 0);
    if (res == MPCE_PINS_READ_OK)
        res = check_cands(r, &v);
    if (res == MPCE_PINS_READ_OK)
        res = dict_pass(r, d, &v, 1);
    if (res == MPCE_PINS_READ_OK)
        res = conv_header(r, &v, out);
    if (res == MPCE_PINS_READ_OK && v.nmod) {
        if (!(out->modules = calloc(v.nmod, sizeof(*out->modules))))
            res = mpce_pins_rd_nomem(r);
        else
            out->n_modules = v.nmod;
    }
    for (size_t i = 0; res == MPCE_PINS_READ_OK && i < v.nmod; i++)
        res = conv_module(r, i, v.mod[i], &out->modules[i]);
    if (res == MPCE_PINS_READ_OK && v.nrow) {
        if (!(out->rows = calloc(v.nrow, sizeof(*out->rows))))
            res = mpce_pins_rd_nomem(r);
        else
            out->n_rows = v.nrow;
    }
    for (size_t i = 0; res == MPCE_PINS_READ_OK && i < v.nrow; i++)
        res = conv_row(r, i, &v.row[i], &out->rows[i]);
    if (res == MPCE_PINS_READ_OK && v.nbl) {
        if (!(out->blacklist = calloc(v.nbl, sizeof(*out->blacklist))))
            res = mpce_pins_rd_nomem(r);
        else
            out->n_blacklist = v.nbl;
    }
    for (size_t i = 0; res == MPCE_PINS_READ_OK && i < v.nbl; i++)
        res = conv_blacklist(r, i, v.bl[i], &out->blacklist[i]);
    if (res == MPCE_PINS_READ_OK)
        res = check_unique(r, out);
    vals_free(&v);
    return res;
}

/* iniparser reads by name: give it the descriptor's, so it parses the file
 * whose seal was checked, whatever the path names now. */
static enum mpce_pins_read_result load_dict(struct pins_rd *r, int fd, dictionary **dp)
{
    char fd_name[64];
    if (mpce_fd_proc_name(fd, fd_name) != 0)
        return mpce_pins_rd_fail(r, MPCE_PINS_READ_ERROR, 0,
                                 "cannot parse the checked file through /proc/self/fd: "
                                 "mount /proc");
    const char *error;
    *dp = mpce_ini_load(fd_name, &error);
    if (*dp)
        return MPCE_PINS_READ_OK;
    char pins_ini_msg[256];
    snprintf(pins_ini_msg, sizeof(pins_ini_msg), "%s", error);
    for (char *c = pins_ini_msg; *c; c++)
        if (*c == '\n')
            *c = ' ';
    /* The text passed the line check: only running out of memory, or a file
     * changed in place since, makes iniparser fail. */
    if (strstr(pins_ini_msg, "memory") || strstr(pins_ini_msg, "cannot open"))
        return mpce_pins_rd_fail(r, MPCE_PINS_READ_ERROR, 0, "%s", pins_ini_msg);
    return mpce_pins_rd_fail(r, MPCE_PINS_READ_CORRUPT, 0, "changed while it was read (%s)",
                             pins_ini_msg[0] ? pins_ini_msg : "iniparser failed");
}

/* convert() reads numbers as the writer wrote them: in the C locale. */
static enum mpce_pins_read_result convert_in_c_locale(struct pins_rd *r, dictionary *d,
                                                      struct mpce_pins *out)
{
    locale_t c = mpce_pins_c_locale();
    if (c == (locale_t)0)
        return mpce_pins_rd_fail(r, MPCE_PINS_READ_ERROR, 0, "cannot set up the C locale: %s",
                                 strerror(errno));
    locale_t old = uselocale(c);
    enum mpce_pins_read_result res = convert(r, d, out);
    uselocale(old);
    freelocale(c);
    return res;
}

enum mpce_pins_read_result mpce_pins_read(const char *path, struct mpce_pins *out, char *why,
                                          size_t why_len)
{
    memset(out, 0, sizeof(*out));
    if (why && why_len)
        why[0] = '\0';
    struct pins_rd r = {.path = path, .why = why, .why_len = why_len};
    int fd;
    enum mpce_pins_read_result res = mpce_pins_scan(&r, &fd);
    if (fd < 0)
        return res; /* not opened: nothing to free */
    dictionary *d = NULL;
    if (res == MPCE_PINS_READ_OK)
        res = load_dict(&r, fd, &d);
    if (res == MPCE_PINS_READ_OK)
        res = check_parsed(&r, d);
    if (res == MPCE_PINS_READ_OK)
        res = convert_in_c_locale(&r, d, out);
    if (d)
        iniparser_freedict(d);
    close(fd);
    free(r.text);
    free(r.secs);
    free(r.keys);
    if (res != MPCE_PINS_READ_OK)
        mpce_pins_free(out);
    else if (why && why_len)
        why[0] = '\0';
    return res;
}
