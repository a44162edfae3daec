/* SPDX-License-Identifier: Apache-2.0 */
/* INI configuration layers, validation and environment overrides. */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/auxv.h>
#endif

#ifdef HAVE_INIPARSER_INIPARSER_H
#include <iniparser/iniparser.h>
#else
#include <iniparser.h>
#endif

#include "engine/internal.h"
#include "engine/runtime/knobs.h"
#include "engine/runtime/conf.h"
#include "engine/runtime/module_file.h"
#include "mpcengine/plugin.h"

/* The compiled-in module directory is named after the plugin ABI
 * (plugins-N, configure.ac's MPCE_PLUGIN_ABI): a bump of one without the
 * other would install new modules where old engines look, or the reverse. */
_Static_assert(MPCE_PLUGINDIR_ABI == MPCE_PLUGIN_ABI_MAJOR,
               "MPCE_PLUGIN_ABI in configure.ac must equal MPCE_PLUGIN_ABI_MAJOR");

/* Larger files are not configuration; refusing them bounds the line scan. */
#define CONFIG_MAX_BYTES (1u << 20)

const char *mpce_secure_getenv(const char *name)
{
#ifdef HAVE_SECURE_GETENV
    return secure_getenv(name);
#else
    return getenv(name);
#endif
}

int mpce_config_privileged(void)
{
    if (geteuid() == 0)
        return 1;
#if defined(__linux__)
    if (getauxval(AT_SECURE))
        return 1;
#endif
    return 0;
}

/* ---- directory listing ------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void mpce_dir_list_free(char **names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
}

int mpce_dir_list(const char *dir, const char *suffix, char ***names, size_t *count)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    char **list = NULL;
    size_t n = 0, cap = 0;
    size_t sl = strlen(suffix);
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        size_t len = strlen(ent->d_name);
        if (ent->d_name[0] == '.' || len <= sl || strcmp(ent->d_name + len - sl, suffix) != 0)
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            char **tmp = realloc(list, ncap * sizeof(*tmp));
            if (!tmp)
                goto nomem;
            list = tmp;
            cap = ncap;
        }
        if (!(list[n] = strdup(ent->d_name)))
            goto nomem;
        n++;
    }
    closedir(d);
    if (n)
        qsort(list, n, sizeof(*list), cmp_str);
    *names = list;
    *count = n;
    return 0;
nomem:
    closedir(d);
    mpce_dir_list_free(list, n);
    errno = ENOMEM;
    return -1;
}

/* ---- small helpers ----------------------------------------------------- */

static int parse_bool(const char *v, int *out)
{
    static const char *const yes[] = {"yes", "true", "on", "1"};
    static const char *const no[] = {"no", "false", "off", "0"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(v, yes[i]) == 0) {
            *out = 1;
            return 0;
        }
        if (strcasecmp(v, no[i]) == 0) {
            *out = 0;
            return 0;
        }
    }
    return -1;
}

static int prim_index(const char *name)
{
    for (int p = 0; p < MPCE_PRIM_COUNT; p++)
        if (strcasecmp(name, mpce_primitive_name((mpce_primitive)p)) == 0)
            return p;
    return -1;
}

static void free_dirs(struct mpce_config *cfg)
{
    mpce_dir_list_free(cfg->plugin_dirs, cfg->n_plugin_dirs);
    cfg->plugin_dirs = NULL;
    cfg->n_plugin_dirs = 0;
}

/* Split a colon-separated list of absolute directories; `where` prefixes
 * the error ("FILE:LINE: [engine] plugin_path = v" or "MPCENGINE_PLUGIN_PATH=v"). */
static mpce_status set_plugin_dirs(struct mpce_config *cfg, const char *value, const char *where)
{
    char **dirs = NULL;
    size_t n = 0;
    const char *p = value;
    if (*value) {
        for (;;) {
            const char *end = strchr(p, ':');
            size_t len = end ? (size_t)(end - p) : strlen(p);
            if (len == 0) {
                mpce_dir_list_free(dirs, n);
                return mpce_error(MPCE_ERR_CONFIG,
                                  "%s: entry %zu is empty: expected absolute directories "
                                  "separated by ':'", where, n + 1);
            }
            if (p[0] != '/') {
                mpce_dir_list_free(dirs, n);
                return mpce_error(MPCE_ERR_CONFIG,
                                  "%s: '%.*s' is a relative directory: expected absolute "
                                  "directories separated by ':'", where, (int)len, p);
            }
            char **tmp = realloc(dirs, (n + 1) * sizeof(*tmp));
            if (!tmp || !(tmp[n] = strndup(p, len))) {
                mpce_dir_list_free(tmp ? tmp : dirs, n);
                return mpce_error(MPCE_ERR_NOMEM, "out of memory reading plugin_path");
            }
            dirs = tmp;
            n++;
            if (!end)
                break;
            p = end + 1;
        }
    }
    free_dirs(cfg);
    cfg->plugin_dirs = dirs;
    cfg->n_plugin_dirs = n;
    cfg->plugin_dirs_default = 0;
    return MPCE_OK;
}

/* Record the effective value of [section] key and the layer that set it. */
static mpce_status remember_setting(struct mpce_config *cfg, const char *section,
                                    const char *key, const char *value, const char *source)
{
    struct mpce_setting_rec *r = NULL;
    for (size_t i = 0; i < cfg->n_settings; i++)
        if (strcmp(cfg->settings[i].section, section) == 0 &&
            strcmp(cfg->settings[i].key, key) == 0)
            r = &cfg->settings[i];
    if (r == NULL) {
        struct mpce_setting_rec *tmp =
            realloc(cfg->settings, (cfg->n_settings + 1) * sizeof(*tmp));
        if (tmp == NULL)
            return mpce_error(MPCE_ERR_NOMEM, "out of memory reading the configuration");
        cfg->settings = tmp;
        r = &tmp[cfg->n_settings];
        memset(r, 0, sizeof(*r));
        if (!(r->section = strdup(section)) || !(r->key = strdup(key))) {
            free(r->section);
            free(r->key);
            return mpce_error(MPCE_ERR_NOMEM, "out of memory reading the configuration");
        }
        cfg->n_settings++;
    }
    char *v = strdup(value), *src = strdup(source);
    if (v == NULL || src == NULL) {
        free(v);
        free(src);
        return mpce_error(MPCE_ERR_NOMEM, "out of memory reading the configuration");
    }
    free(r->value);
    free(r->source);
    r->value = v;
    r->source = src;
    return MPCE_OK;
}

/* Pin keys: PRIM, PRIM.OP or PRIM.OP.SIZE, with OP one of the primitive's
 * operations and SIZE a size class. 0 if valid, else -1 with what is accepted. */
static int check_pin_key(const char *key, char *expected, size_t len)
{
    char buf[96];
    snprintf(buf, sizeof(buf), "%s", key);
    char *op = strchr(buf, '.');
    char *size = op ? strchr(op + 1, '.') : NULL;
    if (op)
        *op++ = '\0';
    if (size)
        *size++ = '\0';
    int prim = prim_index(buf);
    if (prim < 0 || strlen(key) >= sizeof(buf)) {
        snprintf(expected, len, "a key naming a primitive (prg, ntt, lpn or dpf), optionally "
                 "with an operation and a size class, e.g. dpf.eval.large");
        return -1;
    }
    if (op != NULL) {
        char full[96];
        snprintf(full, sizeof(full), "%s.%s", mpce_primitive_name((mpce_primitive)prim), op);
        enum mpce_op_id id = mpce_op_by_name(full);
        if (id == MPCE_OP_COUNT || !mpce_op_routed(id)) {
            size_t used = (size_t)snprintf(expected, len, "an operation of %s after the dot:",
                                           mpce_primitive_name((mpce_primitive)prim));
            enum mpce_op_id first = mpce_op_first((mpce_primitive)prim);
            for (unsigned k = 0; k < mpce_op_count_of((mpce_primitive)prim); k++) {
                enum mpce_op_id o = (enum mpce_op_id)(first + k);
                if (mpce_op_routed(o) && used < len)
                    used += (size_t)snprintf(expected + used, len - used, " %s",
                                             strchr(mpce_op_info[o].name, '.') + 1);
            }
            return -1;
        }
    }
    if (size != NULL) {
        unsigned c;
        for (c = 0; c < MPCE_SIZE_CLASSES; c++)
            if (strcmp(size, mpce_size_class_name(c)) == 0)
                break;
        if (c == MPCE_SIZE_CLASSES) {
            snprintf(expected, len, "a size class after the operation: tiny, small, medium or "
                     "large");
            return -1;
        }
    }
    return 0;
}

/* Set (name != "auto") or clear the pin of a (validated) key. Keys are
 * stored in lowercase canonical form. */
static mpce_status set_pin(struct mpce_config *cfg, const char *key, const char *name,
                           const char *src)
{
    char canon[96];
    size_t kl = strlen(key);
    if (kl >= sizeof(canon))
        kl = sizeof(canon) - 1;
    for (size_t i = 0; i < kl; i++)
        canon[i] = (char)tolower((unsigned char)key[i]);
    canon[kl] = '\0';
    for (size_t i = 0; i < cfg->n_pins; i++) {
        if (strcmp(cfg->pins[i].key, canon) == 0) {
            free(cfg->pins[i].key);
            free(cfg->pins[i].name);
            free(cfg->pins[i].source);
            cfg->pins[i] = cfg->pins[--cfg->n_pins];
            break;
        }
    }
    if (strcmp(name, "auto") == 0)
        return MPCE_OK;
    struct mpce_pin *tmp = realloc(cfg->pins, (cfg->n_pins + 1) * sizeof(*tmp));
    if (tmp == NULL)
        return mpce_error(MPCE_ERR_NOMEM, "out of memory reading pins");
    cfg->pins = tmp;
    struct mpce_pin *p = &tmp[cfg->n_pins];
    p->key = strdup(canon);
    p->name = strdup(name);
    p->source = strdup(src);
    if (!p->key || !p->name || !p->source) {
        free(p->key);
        free(p->name);
        free(p->source);
        return mpce_error(MPCE_ERR_NOMEM, "out of memory reading pins");
    }
    cfg->n_pins++;
    return MPCE_OK;
}

const struct mpce_pin *mpce_config_pin(const struct mpce_config *cfg, const char *op,
                                       unsigned size_class)
{
    char full[96], prim[16];
    snprintf(full, sizeof(full), "%s.%s", op, mpce_size_class_name(size_class));
    snprintf(prim, sizeof(prim), "%.*s", (int)strcspn(op, "."), op);
    const struct mpce_pin *best = NULL;
    int best_rank = -1;
    for (size_t i = 0; i < cfg->n_pins; i++) {
        const char *k = cfg->pins[i].key;
        int rank = strcmp(k, full) == 0 ? 2 : strcmp(k, op) == 0 ? 1 : strcmp(k, prim) == 0 ? 0
                                                                                           : -1;
        if (rank > best_rank) {
            best_rank = rank;
            best = &cfg->pins[i];
        }
    }
    return best;
}

static struct mpce_plugin_setting *plugin_setting(struct mpce_config *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->n_plugins; i++)
        if (strcasecmp(cfg->plugins[i].name, name) == 0)
            return &cfg->plugins[i];
    struct mpce_plugin_setting *tmp =
        realloc(cfg->plugins, (cfg->n_plugins + 1) * sizeof(*tmp));
    if (!tmp)
        return NULL;
    cfg->plugins = tmp;
    struct mpce_plugin_setting *s = &tmp[cfg->n_plugins];
    s->name = strdup(name);
    s->enabled = 1;
    s->where = NULL;
    if (!s->name)
        return NULL;
    cfg->n_plugins++;
    return s;
}

const struct mpce_plugin_setting *mpce_config_plugin(const struct mpce_config *cfg,
                                                     const char *name)
{
    for (size_t i = 0; i < cfg->n_plugins; i++)
        if (strcasecmp(cfg->plugins[i].name, name) == 0)
            return &cfg->plugins[i];
    return NULL;
}

/* ---- one file ---------------------------------------------------------- */

/* iniparser reports errors through one process-wide callback, to stderr
 * unless one is set, and the library never writes there: every load (the
 * configuration's, the pins file's) goes through mpce_ini_load, whose
 * callback puts the text in this thread's buffer. */
static _Thread_local char ini_msg[512];

/* The first message is the one to report: later ones follow from it. */
static int ini_error_cb(const char *fmt, ...)
{
    if (ini_msg[0])
        return 0;
    va_list ap;
    va_start(ap, fmt);
    int r = vsnprintf(ini_msg, sizeof(ini_msg), fmt, ap);
    va_end(ap);
    return r;
}

/* iniparser 4.1 does not check every allocation: a failed copy of a key
 * leaves an empty slot counted in d->n, a failed copy of a value leaves a
 * key without one (only sections have none), and the load still succeeds.
 * A dictionary like that lacks settings without saying so: it is refused
 * as the out-of-memory failure it is. */
/* Whether the file at path has a header [name], compared as iniparser 4.1
 * does (what lies between '[' and the first ']', trimmed, any case). Only
 * asked about a value-less entry with ':' in its name, which is either a
 * section so named or a key whose value copy failed: the file tells which. */
static int section_in_file(const char *path, const char *name)
{
    FILE *fp = fopen(path, "re");
    if (!fp)
        return 0;
    char line[1100];
    int found = 0;
    while (!found && fgets(line, sizeof(line), fp)) {
        const char *b = line;
        while (isspace((unsigned char)*b))
            b++;
        if (*b++ != '[')
            continue;
        const char *e = strchr(b, ']');
        if (!e)
            continue;
        while (b < e && isspace((unsigned char)*b))
            b++;
        while (e > b && isspace((unsigned char)e[-1]))
            e--;
        found = strlen(name) == (size_t)(e - b) && strncasecmp(b, name, (size_t)(e - b)) == 0;
    }
    fclose(fp);
    return found;
}

static int dict_whole(const dictionary *d, const char *path)
{
    if (!d->key || !d->val || !d->hash)
        return 0;
    ssize_t keys = 0;
    for (ssize_t i = 0; i < d->size; i++) {
        if (!d->key[i])
            continue;
        keys++;
        if (!d->val[i] && strchr(d->key[i], ':') && !section_in_file(path, d->key[i]))
            return 0;
    }
    return keys == (ssize_t)d->n;
}

dictionary *mpce_ini_load(const char *path, const char **error)
{
    ini_msg[0] = '\0';
    iniparser_set_error_callback(ini_error_cb);
    dictionary *d = iniparser_load(path);
    if (d && !dict_whole(d, path)) {
        iniparser_freedict(d);
        d = NULL;
        snprintf(ini_msg, sizeof(ini_msg), "iniparser: memory allocation failure\n");
    }
    if (error)
        *error = ini_msg;
    return d;
}

/* One meaningful line of a file: a key outside any section, a section
 * header or a key in a section, as spans of the file's text. */
enum line_kind { LINE_OUTSIDE = 0, LINE_HEADER = 1, LINE_KEY = 2 };
struct line_rec {
    const char *sec_b, *sec_e, *key_b, *key_e;
    unsigned line;
    enum line_kind kind;
};

/* The text of one file and its name, for line lookups. iniparser keeps no
 * line numbers, so the file is read once more into `lines`, sorted by kind,
 * section, key and line: each lookup is then a binary search, and a file
 * full of keys to report costs n log n, not n^2. */
struct ini_file {
    const char *path;
    char *text;
    struct line_rec *lines;
    size_t n_lines;
};

static void trim(const char **b, const char **e)
{
    while (*b < *e && isspace((unsigned char)**b))
        (*b)++;
    while (*e > *b && isspace((unsigned char)(*e)[-1]))
        (*e)--;
}

/* The next line of the text at *p, trimmed into [*b, *e); 0 past the end. */
static int next_line(const char **p, const char **b, const char **e)
{
    if (**p == '\0')
        return 0;
    const char *eol = strchr(*p, '\n');
    if (!eol)
        eol = *p + strlen(*p);
    *b = *p;
    *e = eol;
    trim(b, e);
    *p = *eol ? eol + 1 : eol;
    return 1;
}

static int span_cmp(const char *ab, const char *ae, const char *bb, const char *be)
{
    size_t la = (size_t)(ae - ab), lb = (size_t)(be - bb);
    int c = strncasecmp(ab, bb, la < lb ? la : lb);
    return c != 0 ? c : (la > lb) - (la < lb);
}

/* Sections and keys compare without case, as iniparser stores them. */
static int line_rec_cmp(const void *pa, const void *pb)
{
    const struct line_rec *a = pa, *b = pb;
    int c = (a->kind > b->kind) - (a->kind < b->kind);
    if (c == 0)
        c = span_cmp(a->sec_b, a->sec_e, b->sec_b, b->sec_e);
    if (c == 0)
        c = span_cmp(a->key_b, a->key_e, b->key_b, b->key_e);
    return c != 0 ? c : (a->line > b->line) - (a->line < b->line);
}

/*
 * Index f's lines the way iniparser reads them: comments skipped, a key
 * needs '=', a header needs ']' (a header seen again continues its
 * section), keys before the first header are outside any section. On
 * memory exhaustion the index stays short and lookups answer "no line":
 * messages lose a line number, the file is not refused.
 */
static void index_lines(struct ini_file *f)
{
    size_t cap = 0;
    const char *sec_b = NULL, *sec_e = NULL;
    int any_header = 0;
    unsigned line = 0;
    const char *p = f->text, *b, *e;
    while (next_line(&p, &b, &e)) {
        line++;
        if (b >= e || *b == '#' || *b == ';')
            continue;
        struct line_rec rec = {0};
        if (*b == '[') {
            any_header = 1;
            const char *close = memchr(b, ']', (size_t)(e - b));
            if (!close)
                continue;
            sec_b = b + 1;
            sec_e = close;
            trim(&sec_b, &sec_e);
            rec = (struct line_rec){sec_b, sec_e, "", "", line, LINE_HEADER};
        } else {
            const char *eq = memchr(b, '=', (size_t)(e - b));
            if (!eq || (any_header && !sec_b))
                continue;
            const char *kb = b, *ke = eq;
            trim(&kb, &ke);
            rec = any_header ? (struct line_rec){sec_b, sec_e, kb, ke, line, LINE_KEY}
                             : (struct line_rec){"", "", kb, ke, line, LINE_OUTSIDE};
        }
        if (f->n_lines == cap) {
            size_t ncap = cap ? 2 * cap : 32;
            struct line_rec *grown = realloc(f->lines, ncap * sizeof(*grown));
            if (!grown)
                break;
            f->lines = grown;
            cap = ncap;
        }
        f->lines[f->n_lines++] = rec;
    }
    if (f->n_lines > 1)
        qsort(f->lines, f->n_lines, sizeof(*f->lines), line_rec_cmp);
}

/* iniparser 4.1 reads a line it could not copy (out of memory) as an empty
 * one, and loads the rest: every key line of the index must be in d, or
 * settings went missing without a word. A file with continuation lines is
 * not checked: the index does not join them as iniparser does. */
static int dict_has_every_line(dictionary *d, const struct ini_file *f)
{
    if (strstr(f->text, "\\\n"))
        return 1;
    for (size_t i = 0; i < f->n_lines; i++) {
        const struct line_rec *l = &f->lines[i];
        char name[1100];
        int n = l->kind == LINE_HEADER
                    ? snprintf(name, sizeof(name), "%.*s", (int)(l->sec_e - l->sec_b), l->sec_b)
                    : snprintf(name, sizeof(name), "%.*s:%.*s", (int)(l->sec_e - l->sec_b),
                               l->sec_b, (int)(l->key_e - l->key_b), l->key_b);
        if (n < 0 || (size_t)n >= sizeof(name))
            continue;
        for (char *c = name; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        if (!iniparser_find_entry(d, name))
            return 0;
    }
    return 1;
}

/* The line that set `key` in `section` (key NULL: the section header;
 * section NULL: before any header); the last assignment wins in iniparser,
 * so the last line is answered. 0 if none. */
static unsigned find_line(const struct ini_file *f, const char *section, const char *key)
{
    struct line_rec probe = {section ? section : "", NULL, key ? key : "", NULL, UINT_MAX,
                             section == NULL ? LINE_OUTSIDE : key ? LINE_KEY : LINE_HEADER};
    probe.sec_e = probe.sec_b + strlen(probe.sec_b);
    probe.key_e = probe.key_b + strlen(probe.key_b);
    /* The first record after every match (the probe's line is above all). */
    size_t lo = 0, hi = f->n_lines;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (line_rec_cmp(&f->lines[mid], &probe) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return 0;
    const struct line_rec *last = &f->lines[lo - 1];
    probe.line = last->line;
    return line_rec_cmp(last, &probe) == 0 ? last->line : 0;
}

/* "FILE:LINE" or "FILE" when the line is unknown. */
static void where_of(char *buf, size_t len, const struct ini_file *f, const char *section,
                     const char *key)
{
    unsigned line = find_line(f, section, key);
    if (line)
        snprintf(buf, len, "%s:%u", f->path, line);
    else
        snprintf(buf, len, "%s", f->path);
}

static void warn(const struct mpce_config *cfg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void warn(const struct mpce_config *cfg, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mpce_vlog(cfg->log, MPCE_LOG_WARNING, NULL, fmt, ap);
    va_end(ap);
}

/* iniparser joins a line that ends in '\\' with the next one before it
 * looks at either, comments included: a setting under such a comment is
 * read as part of it and vanishes without a word. Say so (the pins file,
 * which this engine writes, refuses it instead). */
static void warn_swallowed_lines(const struct mpce_config *cfg, const struct ini_file *f)
{
    unsigned line = 0;
    int continued = 0, in_comment = 0;
    const char *p = f->text, *b, *e;
    while (next_line(&p, &b, &e)) {
        line++;
        if (!continued)
            in_comment = b < e && (*b == '#' || *b == ';');
        else if (in_comment && b < e && *b != '#' && *b != ';')
            warn(cfg, "%s:%u: ignored: the comment above ends in '\\', which joins this line "
                 "to it; remove that backslash", f->path, line);
        continued = b < e && e[-1] == '\\';
    }
}

/* A key set twice in one section of one file: iniparser keeps the last
 * value without a word, so say which lines. The index is sorted by
 * section, key and line, so each repeat follows its first setting; keys
 * before any section are reported as ignored elsewhere. */
static void warn_duplicates(const struct mpce_config *cfg, const struct ini_file *f)
{
    const struct line_rec *first = NULL;
    for (size_t i = 0; i < f->n_lines; i++) {
        const struct line_rec *r = &f->lines[i];
        if (r->kind != LINE_KEY || r->sec_b == r->sec_e)
            continue;
        if (!first || span_cmp(r->sec_b, r->sec_e, first->sec_b, first->sec_e) != 0 ||
            span_cmp(r->key_b, r->key_e, first->key_b, first->key_e) != 0) {
            first = r;
            continue;
        }
        warn(cfg, "%s:%u: [%.*s] %.*s is set again (first set at line %u): the last setting "
                  "is used; keep one",
             f->path, r->line, (int)(r->sec_e - r->sec_b), r->sec_b, (int)(r->key_e - r->key_b),
             r->key_b, first->line);
    }
}

static mpce_status bad_value(const struct ini_file *f, const char *sec, const char *key,
                             const char *value, const char *expected)
{
    char where[1024];
    where_of(where, sizeof(where), f, sec, key);
    return mpce_error(MPCE_ERR_CONFIG, "%s: [%s] %s = %s: expected %s", where, sec, key, value,
                      expected);
}

static mpce_status apply_bool(const struct ini_file *f, const char *sec, const char *key,
                              const char *value, int *out)
{
    if (parse_bool(value, out) != 0)
        return bad_value(f, sec, key, value,
                         "yes or no (also accepted: true, on, 1 and false, off, 0)");
    return MPCE_OK;
}

/* Decimal 0..MPCE_CONFIG_MAX_THREADS, or auto (= 0). */
static mpce_status apply_threads(struct mpce_config *cfg, const struct ini_file *f,
                                 const char *value)
{
    char expected[128];
    snprintf(expected, sizeof(expected),
             "auto or an integer from 0 (one thread per online CPU) to %u",
             MPCE_CONFIG_MAX_THREADS);
    if (strcasecmp(value, "auto") == 0) {
        cfg->threads = 0;
        return MPCE_OK;
    }
    unsigned v = 0;
    size_t len = strlen(value);
    if (len == 0 || len > 3)
        return bad_value(f, "engine", "threads", value, expected);
    for (size_t i = 0; i < len; i++) {
        if (value[i] < '0' || value[i] > '9')
            return bad_value(f, "engine", "threads", value, expected);
        v = v * 10u + (unsigned)(value[i] - '0');
    }
    if (v > MPCE_CONFIG_MAX_THREADS)
        return bad_value(f, "engine", "threads", value, expected);
    cfg->threads = v;
    return MPCE_OK;
}

static mpce_status apply_engine(struct mpce_config *cfg, const struct ini_file *f,
                                const char *key, const char *value)
{
    char loc[1024];
    mpce_status st;
    where_of(loc, sizeof(loc), f, "engine", key);
    if (strcmp(key, "plugin_path") == 0) {
        char where[1280];
        snprintf(where, sizeof(where), "%s: [engine] plugin_path = %s", loc, value);
        st = set_plugin_dirs(cfg, value, where);
    } else if (strcmp(key, "allow_variable_time") == 0) {
        st = apply_bool(f, "engine", key, value, &cfg->allow_variable_time);
    } else if (strcmp(key, "strict") == 0) {
        st = apply_bool(f, "engine", key, value, &cfg->strict);
    } else if (strcmp(key, "user_config") == 0) {
        st = apply_bool(f, "engine", key, value, &cfg->user_config);
    } else if (strcmp(key, "threads") == 0) {
        st = apply_threads(cfg, f, value);
    } else {
        warn(cfg, "%s: unknown key '%s' in [engine] ignored: the keys are plugin_path, "
             "allow_variable_time, strict, user_config and threads", loc, key);
        return MPCE_OK;
    }
    return st == MPCE_OK ? remember_setting(cfg, "engine", key, value, loc) : st;
}

static const char *const tune_modes[] = {"auto", "background", "off", "force", "warn"};

/* An absolute path for [tune] dir and helper (they are used from any working
 * directory, and by a helper the engine spawns). */
static mpce_status apply_tune_path(const struct ini_file *f, const char *key, const char *value,
                                   char **out)
{
    if (value[0] != '/')
        return bad_value(f, "tune", key, value, "an absolute path");
    char *copy = strdup(value);
    if (!copy)
        return mpce_error(MPCE_ERR_NOMEM, "out of memory reading [tune] %s", key);
    free(*out);
    *out = copy;
    return MPCE_OK;
}

static mpce_status apply_tune(struct mpce_config *cfg, const struct ini_file *f, const char *key,
                              const char *value)
{
    char loc[1024];
    mpce_status st = MPCE_OK;
    where_of(loc, sizeof(loc), f, "tune", key);
    if (strcmp(key, "mode") == 0) {
        size_t i = 0, n = sizeof(tune_modes) / sizeof(tune_modes[0]);
        while (i < n && strcmp(value, tune_modes[i]) != 0)
            i++;
        if (i == n)
            return bad_value(f, "tune", key, value, "auto, background, off, force or warn");
        cfg->tune.mode = (enum mpce_tune_mode)i;
        cfg->tune.mode_set = 1;
    } else if (strcmp(key, "timeout") == 0 || strcmp(key, "hang_timeout") == 0 ||
               strcmp(key, "vet_timeout") == 0) {
        char *end = NULL;
        errno = 0;
        double sec = strtod(value, &end);
        const double lo = key[0] == 't' ? 0 : key[0] == 'v' ? 0.1 : 1;
        if (value[0] == '\0' || *end != '\0' || errno != 0 || !(sec >= lo && sec <= 3600))
            return bad_value(f, "tune", key, value,
                             key[0] == 't'   ? "seconds from 0 to 3600, e.g. 10 or 2.5"
                             : key[0] == 'v' ? "seconds from 0.1 to 3600, e.g. 10"
                                             : "seconds from 1 to 3600, e.g. 30");
        *(key[0] == 't'   ? &cfg->tune.timeout_ms
          : key[0] == 'v' ? &cfg->tune.vet_ms
                          : &cfg->tune.hang_ms) = (unsigned)(sec * 1000.0 + 0.5);
    } else if (strcmp(key, "census") == 0) {
        st = apply_bool(f, "tune", key, value, &cfg->tune.census);
    } else if (strcmp(key, "vet") == 0) {
        st = apply_bool(f, "tune", key, value, &cfg->tune.vet);
    } else if (strcmp(key, "dir") == 0) {
        st = apply_tune_path(f, key, value, &cfg->tune.dir);
    } else if (strcmp(key, "helper") == 0) {
        st = apply_tune_path(f, key, value, &cfg->tune.helper);
    } else {
        warn(cfg, "%s: unknown key '%s' in [tune] ignored: the keys are mode, timeout, "
             "hang_timeout, vet, vet_timeout, census, dir and helper", loc, key);
        return MPCE_OK;
    }
    return st == MPCE_OK ? remember_setting(cfg, "tune", key, value, loc) : st;
}

const char *mpce_tune_mode_name(enum mpce_tune_mode mode)
{
    return (unsigned)mode < sizeof(tune_modes) / sizeof(tune_modes[0]) ? tune_modes[mode] : "";
}

static mpce_status apply_pin(struct mpce_config *cfg, const struct ini_file *f, const char *key,
                             const char *value)
{
    char exp[320];
    if (check_pin_key(key, exp, sizeof(exp)) != 0)
        return bad_value(f, "pins", key, value, exp);
    if (strcmp(value, "auto") != 0 && !mpce_impl_spec_valid(value))
        return bad_value(f, "pins", key, value,
                         "auto, or an implementation name from `mpcengine list` with "
                         "optional knob values (IMPL:KNOB=VALUE[:KNOB=VALUE...])");
    char where[1024], src[1400];
    where_of(where, sizeof(where), f, "pins", key);
    snprintf(src, sizeof(src), "[pins] %s = %s (%s)", key, value, where);
    mpce_status st = set_pin(cfg, key, value, src);
    return st == MPCE_OK ? remember_setting(cfg, "pins", key, value, where) : st;
}

static mpce_status apply_plugin(struct mpce_config *cfg, const struct ini_file *f,
                                const char *sec, const char *name, const char *key,
                                const char *value)
{
    if (strcmp(key, "enabled") != 0) {
        char where[1024];
        where_of(where, sizeof(where), f, sec, key);
        warn(cfg, "%s: unknown key '%s' in [%s] ignored: the only key is enabled", where, key,
             sec);
        return MPCE_OK;
    }
    int on = 1;
    mpce_status st = apply_bool(f, sec, key, value, &on);
    if (st != MPCE_OK)
        return st;
    char loc[1024];
    where_of(loc, sizeof(loc), f, sec, key);
    if (!on && strcmp(name, MPCE_BUILTIN_PLUGIN) == 0) {
        warn(cfg, "%s: [%s] enabled = no ignored: the built-in %s backend cannot be disabled",
             loc, sec, MPCE_BUILTIN_PLUGIN);
        return MPCE_OK; /* not recorded: the listing shows what runs */
    }
    struct mpce_plugin_setting *s = plugin_setting(cfg, name);
    char *where = strdup(loc);
    if (!s || !where) {
        free(where);
        return mpce_error(MPCE_ERR_NOMEM, "out of memory reading [%s]", sec);
    }
    free(s->where);
    s->where = where;
    s->enabled = on;
    return remember_setting(cfg, sec, key, on ? "yes" : "no", loc);
}

static mpce_status apply_section(struct mpce_config *cfg, dictionary *d,
                                 const struct ini_file *f, const char *sec)
{
    enum { S_ENGINE, S_PINS, S_PLUGIN, S_TUNE } kind;
    const char *plugin = NULL;
    if (strcmp(sec, "engine") == 0) {
        kind = S_ENGINE;
    } else if (strcmp(sec, "tune") == 0) {
        kind = S_TUNE;
    } else if (strcmp(sec, "pins") == 0) {
        kind = S_PINS;
    } else if (strncmp(sec, "plugin.", 7) == 0 && mpce_registry_valid_name(sec + 7)) {
        kind = S_PLUGIN;
        plugin = sec + 7;
    } else {
        char where[1024];
        where_of(where, sizeof(where), f, sec, NULL);
        warn(cfg, "%s: unknown section [%s] ignored: the sections are [engine], [tune], [pins] "
             "and [plugin.NAME]", where, sec);
        return MPCE_OK;
    }
    int nkeys = iniparser_getsecnkeys(d, sec);
    if (nkeys <= 0)
        return MPCE_OK;
    const char **keys = calloc((size_t)nkeys, sizeof(*keys));
    if (!keys)
        return mpce_error(MPCE_ERR_NOMEM, "out of memory reading %s", f->path);
    mpce_status st = MPCE_OK;
    if (!iniparser_getseckeys(d, sec, keys))
        nkeys = 0;
    size_t prefix = strlen(sec) + 1; /* "section:" */
    for (int i = 0; i < nkeys && st == MPCE_OK; i++) {
        const char *full = keys[i];
        const char *key = strlen(full) >= prefix ? full + prefix : full;
        const char *value = iniparser_getstring(d, full, "");
        if (!value)
            value = "";
        switch (kind) {
        case S_ENGINE:
            st = apply_engine(cfg, f, key, value);
            break;
        case S_PINS:
            st = apply_pin(cfg, f, key, value);
            break;
        case S_PLUGIN:
            st = apply_plugin(cfg, f, sec, plugin, key, value);
            break;
        case S_TUNE:
            st = apply_tune(cfg, f, key, value);
            break;
        }
    }
    free(keys);
    return st;
}

/* Read the whole file from fd: NULL with errno set if it cannot be read;
 * *too_big is 1 for a file over the limit, 2 for something that is not a
 * regular file (checked on the descriptor, so a FIFO is never read). */
static char *slurp(int fd, int *too_big, size_t *len)
{
    *too_big = 0;
    struct stat sb;
    if (fstat(fd, &sb) != 0)
        return NULL;
    if (!S_ISREG(sb.st_mode)) {
        *too_big = 2;
        errno = S_ISDIR(sb.st_mode) ? EISDIR : EINVAL;
        return NULL;
    }
    if ((unsigned long long)sb.st_size > CONFIG_MAX_BYTES) {
        *too_big = 1;
        return NULL;
    }
    char *buf = malloc((size_t)sb.st_size + 1);
    if (!buf) {
        errno = ENOMEM;
        return NULL;
    }
    size_t n = 0;
    while (n < (size_t)sb.st_size) {
        ssize_t got = pread(fd, buf + n, (size_t)sb.st_size - n, (off_t)n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            free(buf);
            return NULL;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* The descriptor of the configuration file at path: for root and
 * setuid/setgid programs after the trust check, otherwise opened without
 * blocking (a FIFO must not hang the engine). -1 with errno for a missing or
 * unreadable file; -2 with why filled when the trust check refused it; -3
 * with errno EISDIR or EINVAL for something that is not a file at all. */
static int open_config(const struct mpce_config *cfg, const char *path, char *why, size_t len)
{
    if (!cfg->privileged)
        return open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat sb, target;
    if (lstat(path, &sb) != 0 ||
        (S_ISLNK(sb.st_mode) && stat(path, &target) != 0 && errno == ENOENT))
        return -1; /* missing (or a link to nothing): the caller decides */
    if (!S_ISREG(sb.st_mode) && !S_ISLNK(sb.st_mode)) {
        errno = S_ISDIR(sb.st_mode) ? EISDIR : EINVAL; /* not a trust question */
        return -3;
    }
    errno = 0;
    int fd = mpce_file_open_trusted(path, why, len);
    return fd >= 0 ? fd : errno == ENOMEM ? -4 : -2;
}

static mpce_status not_a_file(const char *path, const char *origin, int is_dir)
{
    return mpce_error(MPCE_ERR_CONFIG, "%s (named by %s) is %s, not a regular file: name an INI "
                      "file (an empty file means no settings)", path,
                      origin ? origin : "the default layers",
                      is_dir ? "a directory" : "a device or special file");
}

/* Turn "iniparser: syntax error in FILE (LINE):\n-> TEXT\n" into one line. */
static mpce_status syntax_error(const char *path)
{
    char *msg = ini_msg;
    size_t len = strlen(msg);
    while (len && (msg[len - 1] == '\n' || msg[len - 1] == '\r'))
        msg[--len] = '\0';
    const char *lp = strstr(msg, " (");
    const char *arrow = strstr(msg, "-> ");
    unsigned line = 0;
    if (lp && sscanf(lp, " (%u)", &line) == 1 && arrow)
        return mpce_error(MPCE_ERR_CONFIG,
                          "%s:%u: syntax error in '%s': expected [section], key = value, "
                          "or a # comment", path, line, arrow + 3);
    for (char *c = msg; *c; c++)
        if (*c == '\n')
            *c = ' ';
    return mpce_error(MPCE_ERR_CONFIG, "%s: cannot be parsed (%s): fix the file's syntax",
                      path, *msg ? msg : "unknown error");
}

static mpce_status remember_file(struct mpce_config *cfg, const char *path)
{
    char **tmp = realloc(cfg->files, (cfg->n_files + 1) * sizeof(*tmp));
    if (!tmp)
        return mpce_error(MPCE_ERR_NOMEM, "out of memory reading %s", path);
    cfg->files = tmp;
    if (!(tmp[cfg->n_files] = strdup(path)))
        return mpce_error(MPCE_ERR_NOMEM, "out of memory reading %s", path);
    cfg->n_files++;
    return MPCE_OK;
}

/* A drop-in entry that is no configuration: a warning, not a reason to
 * refuse every setting. */
static mpce_status skip_dropin(const struct mpce_config *cfg, const char *path, int err)
{
    if (err == ENOENT)
        warn(cfg, "%s: skipped: a symbolic link to nothing (or removed while read): %s", path,
             cfg->privileged ? "replace it with a file (root and setuid/setgid programs read "
                               "no links)"
                             : "remove it or point it at a file");
    else
        warn(cfg, "%s: skipped: not a regular file (%s): drop-in configuration must be plain "
             "files", path, err == EISDIR ? "a directory" : "a special file");
    return MPCE_OK;
}

mpce_status mpce_config_read_file(struct mpce_config *cfg, const char *path,
                                  enum mpce_conf_need need, const char *origin)
{
    char why[1024];
    int fd = open_config(cfg, path, why, sizeof(why));
    if (fd == -4) /* a shortage while checking it: no fault of the file's */
        return mpce_error(MPCE_ERR_NOMEM, "out of memory checking %s (named by %s): %s", path,
                          origin ? origin : "the default layers", why);
    if (fd == -2)
        return mpce_error(MPCE_ERR_CONFIG, "%s (named by %s) refused: %s (root and "
                          "setuid/setgid programs read only configuration that no other user "
                          "can change)", path, origin ? origin : "the default layers", why);
    if (fd == -3)
        return need == MPCE_CONF_DROPIN ? skip_dropin(cfg, path, errno)
                                        : not_a_file(path, origin, errno == EISDIR);
    if (fd < 0) {
        if (errno == ENOENT && need == MPCE_CONF_DROPIN)
            return skip_dropin(cfg, path, ENOENT);
        if (errno == ENOENT && need == MPCE_CONF_OPTIONAL)
            return MPCE_OK;
        return mpce_error(MPCE_ERR_CONFIG,
                          "cannot read configuration file %s: %s (named by %s): check the "
                          "path and its permissions", path, strerror(errno),
                          origin ? origin : "the default layers");
    }
    int too_big;
    size_t text_len = 0;
    struct ini_file f = {path, slurp(fd, &too_big, &text_len), NULL, 0};
    if (!f.text) {
        int err = errno;
        close(fd);
        errno = err;
        if (too_big == 1)
            return mpce_error(MPCE_ERR_CONFIG,
                              "%s: larger than %u bytes: not a configuration file", path,
                              CONFIG_MAX_BYTES);
        if (too_big == 2)
            return need == MPCE_CONF_DROPIN ? skip_dropin(cfg, path, errno)
                                            : not_a_file(path, origin, errno == EISDIR);
        if (errno == ENOMEM)
            return mpce_error(MPCE_ERR_NOMEM, "out of memory reading %s", path);
        return mpce_error(MPCE_ERR_CONFIG,
                          "cannot read configuration file %s: %s (named by %s): check the "
                          "path and its permissions", path, strerror(errno),
                          origin ? origin : "the default layers");
    }
    /* The text is handled as a C string from here on (and iniparser stops
     * a line at a NUL): what follows a NUL would be dropped unseen. */
    const char *nul = memchr(f.text, '\0', text_len);
    if (nul) {
        unsigned line = 1;
        for (const char *c = f.text; c < nul; c++)
            line += *c == '\n';
        close(fd);
        free(f.text);
        return mpce_error(MPCE_ERR_CONFIG, "%s:%u: a NUL byte: not a text file; configuration "
                          "files are INI text", path, line);
    }
    /* iniparser reads by name: give it a private copy of the text read
     * here, so that it parses exactly what was read (and checked), and the
     * index's line numbers match what it parsed, even when the file is
     * rewritten in place meanwhile; failing that, the descriptor's name, so
     * it parses the file that was opened rather than whatever the path
     * names by now. Without /proc only an unprivileged engine falls back to
     * the path. */
    char fd_name[64];
    const char *load_name = fd_name;
    int snap = -1;
#ifdef MFD_CLOEXEC
    snap = memfd_create("mpcengine-config", MFD_CLOEXEC);
    if (snap >= 0) {
        size_t len = strlen(f.text), done = 0;
        while (done < len) {
            ssize_t w = write(snap, f.text + done, len - done);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                break;
            done += (size_t)w;
        }
        if (done != len || mpce_fd_proc_name(snap, fd_name) != 0) {
            close(snap);
            snap = -1;
        }
    }
#endif
    if (snap < 0 && mpce_fd_proc_name(fd, fd_name) != 0) {
        if (cfg->privileged) {
            close(fd);
            free(f.text);
            return mpce_error(MPCE_ERR_CONFIG, "%s: cannot read the checked file through "
                              "/proc/self/fd: mount /proc (root and setuid/setgid programs "
                              "parse only the file they checked)", path);
        }
        load_name = path;
    }
    errno = 0;
    dictionary *d = mpce_ini_load(load_name, NULL); /* syntax_error reads the message */
    const int load_errno = errno;
    close(fd);
    if (snap >= 0)
        close(snap);
    if (!d) {
        free(f.text);
        /* iniparser's own allocations: no fault of the file's. */
        if (strstr(ini_msg, "memory allocation"))
            return mpce_error(MPCE_ERR_NOMEM, "out of memory reading %s", path);
        /* The file was opened and checked already: iniparser's fopen of it
         * failing is no fault of its syntax (memory, descriptors, or the
         * file gone where it is read by path). */
        if (strstr(ini_msg, "cannot open") && load_errno == ENOMEM)
            return mpce_error(MPCE_ERR_NOMEM, "out of memory reading %s", path);
        if (strstr(ini_msg, "cannot open") && (load_errno == EMFILE || load_errno == ENFILE))
            return mpce_error(MPCE_ERR_IO, "cannot read %s: %s (this process is at its limit "
                              "of open files: raise ulimit -n)", path, strerror(load_errno));
        if (strstr(ini_msg, "cannot open") && load_errno != 0)
            return mpce_error(MPCE_ERR_IO, "cannot read %s: %s", path, strerror(load_errno));
        return syntax_error(path);
    }
    index_lines(&f);
    if (!dict_has_every_line(d, &f)) {
        iniparser_freedict(d);
        free(f.lines);
        free(f.text);
        return mpce_error(MPCE_ERR_NOMEM, "%s: settings went missing while it was parsed "
                          "(out of memory, or the file changed while it was read): try again",
                          path);
    }
    mpce_status st = remember_file(cfg, path);
    if (st == MPCE_OK)
        warn_duplicates(cfg, &f);
    /* Keys before any section land under "" in iniparser and would be
     * silently ignored; say so. */
    for (int i = 0; st == MPCE_OK && i < d->size; i++) {
        if (d->key[i] && d->key[i][0] == ':') {
            const char *key = d->key[i] + 1;
            char exp[320];
            unsigned line = find_line(&f, NULL, key);
            char where[1100];
            if (line)
                snprintf(where, sizeof(where), "%s:%u", path, line);
            else
                snprintf(where, sizeof(where), "%s", path);
            warn(cfg, "%s: key '%s' outside any section ignored: put it under %s", where, key,
                 check_pin_key(key, exp, sizeof(exp)) == 0 ? "[pins]" : "[engine]");
        }
    }
    int nsec = iniparser_getnsec(d);
    for (int i = 0; st == MPCE_OK && i < nsec; i++) {
        const char *sec = iniparser_getsecname(d, i);
        if (sec)
            st = apply_section(cfg, d, &f, sec);
    }
    if (st == MPCE_OK)
        warn_swallowed_lines(cfg, &f);
    /* iniparser counts a name with its key separator as no section at all:
     * without this, such a section and its keys vanish without a word. */
    for (size_t i = 0; st == MPCE_OK && i < f.n_lines; i++) {
        const struct line_rec *l = &f.lines[i];
        if (l->kind == LINE_HEADER && memchr(l->sec_b, ':', (size_t)(l->sec_e - l->sec_b)))
            warn(cfg, "%s:%u: unknown section [%.*s] ignored: a section name cannot contain "
                 "':'; the sections are [engine], [tune], [pins] and [plugin.NAME]", path,
                 l->line, (int)(l->sec_e - l->sec_b), l->sec_b);
    }
    iniparser_freedict(d);
    free(f.lines);
    free(f.text);
    return st;
}

mpce_status mpce_config_read_dir(struct mpce_config *cfg, const char *dir)
{
    char **names;
    size_t n;
    if (mpce_dir_list(dir, ".conf", &names, &n) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return MPCE_OK;
        if (errno == ENOMEM)
            return mpce_error(MPCE_ERR_NOMEM, "out of memory reading configuration directory "
                              "%s", dir);
        return mpce_error(MPCE_ERR_CONFIG, "cannot read configuration directory %s: %s", dir,
                          strerror(errno));
    }
    mpce_status st = MPCE_OK;
    for (size_t i = 0; i < n && st == MPCE_OK; i++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        st = mpce_config_read_file(cfg, path, MPCE_CONF_DROPIN, NULL);
    }
    mpce_dir_list_free(names, n);
    return st;
}

/* MPCENGINE_FORCE=KEY:NAME[,KEY:NAME...] with KEY a [pins] key. */
mpce_status mpce_config_parse_force(struct mpce_config *cfg, const char *value)
{
    const char *p = value;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char item[192], exp[320] = "";
        const char *colon = memchr(p, ':', len); /* the key's: knobs follow the name */
        int ok = len > 0 && len < sizeof(item) && colon;
        if (ok) {
            memcpy(item, p, len);
            item[len] = '\0';
            item[colon - p] = '\0';
            const char *name = item + (colon - p) + 1;
            ok = check_pin_key(item, exp, sizeof(exp)) == 0 && mpce_impl_spec_valid(name);
            if (ok) {
                char src[400];
                snprintf(src, sizeof(src), "MPCENGINE_FORCE entry %s:%s", item, name);
                mpce_status st = set_pin(cfg, item, name, src);
                if (st == MPCE_OK)
                    st = remember_setting(cfg, "pins", item, name, "MPCENGINE_FORCE");
                if (st != MPCE_OK)
                    return st;
            }
        }
        if (!ok)
            return mpce_error(MPCE_ERR_CONFIG,
                              "MPCENGINE_FORCE=%s: entry '%.*s' is malformed: expected "
                              "KEY:IMPLEMENTATION[:KNOB=VALUE...][,...] with KEY a [pins] key "
                              "such as prg, ntt.forward or dpf.eval.large (e.g. "
                              "prg:prg-soft-bitslice, lpn:lpn-soft:chunk=64)%s%s",
                              value, (int)(len > 64 ? 64 : len), p, exp[0] ? "; KEY: " : "",
                              exp);
        if (!end)
            break;
        p = end + 1;
    }
    return MPCE_OK;
}

static mpce_status read_user_config(struct mpce_config *cfg)
{
    char path[4096];
    const char *xdg = mpce_secure_getenv("XDG_CONFIG_HOME");
    const char *home = mpce_secure_getenv("HOME");
    if (xdg && xdg[0] == '/')
        snprintf(path, sizeof(path), "%s/mpcengine/engine.conf", xdg);
    else if (home && home[0] == '/')
        snprintf(path, sizeof(path), "%s/.config/mpcengine/engine.conf", home);
    else
        return MPCE_OK;
    return mpce_config_read_file(cfg, path, MPCE_CONF_OPTIONAL, NULL);
}

mpce_status mpce_config_init(struct mpce_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->user_config = 1;
    cfg->tune.timeout_ms = 10000;
    cfg->tune.hang_ms = 30000;
    cfg->tune.vet_ms = 10000;
    cfg->tune.vet = 1;
    mpce_status st = set_plugin_dirs(cfg, MPCE_PLUGINDIR, "compiled-in plugin directory");
    cfg->plugin_dirs_default = 1;
    return st;
}

void mpce_config_free(struct mpce_config *cfg)
{
    free_dirs(cfg);
    for (size_t i = 0; i < cfg->n_plugins; i++) {
        free(cfg->plugins[i].name);
        free(cfg->plugins[i].where);
    }
    free(cfg->plugins);
    for (size_t i = 0; i < cfg->n_pins; i++) {
        free(cfg->pins[i].key);
        free(cfg->pins[i].name);
        free(cfg->pins[i].source);
    }
    free(cfg->pins);
    for (size_t i = 0; i < cfg->n_settings; i++) {
        free(cfg->settings[i].section);
        free(cfg->settings[i].key);
        free(cfg->settings[i].value);
        free(cfg->settings[i].source);
    }
    free(cfg->settings);
    free(cfg->tune.dir);
    free(cfg->tune.helper);
    mpce_dir_list_free(cfg->files, cfg->n_files);
    memset(cfg, 0, sizeof(*cfg));
}

static const char *const env_names[] = {"MPCENGINE_CONF", "MPCENGINE_PLUGIN_PATH",
                                        "MPCENGINE_FORCE", "MPCENGINE_AESNI_DISABLE",
                                        "MPCENGINE_NEON_DISABLE"};

const char *mpce_config_env(const struct mpce_config *cfg, const char *name)
{
    return cfg->use_env ? mpce_secure_getenv(name) : NULL;
}

/* The defaults, so that every key mpce_config_info shows has a source. */
static mpce_status remember_defaults(struct mpce_config *cfg)
{
    static const char *const keys[][2] = {
        {"plugin_path", MPCE_PLUGINDIR}, {"allow_variable_time", "no"}, {"strict", "no"},
        {"user_config", "yes"},          {"threads", "auto"},
    };
    mpce_status st = MPCE_OK;
    for (size_t i = 0; st == MPCE_OK && i < sizeof(keys) / sizeof(keys[0]); i++)
        st = remember_setting(cfg, "engine", keys[i][0], keys[i][1], "default");
    if (st == MPCE_OK)
        st = remember_setting(cfg, "tune", "timeout", "10", "default");
    if (st == MPCE_OK)
        st = remember_setting(cfg, "tune", "hang_timeout", "30", "default");
    if (st == MPCE_OK)
        st = remember_setting(cfg, "tune", "vet_timeout", "10", "default");
    if (st == MPCE_OK)
        st = remember_setting(cfg, "tune", "vet", "yes", "default");
    if (st == MPCE_OK)
        st = remember_setting(cfg, "tune", "census", "no", "default");
    return st;
}

mpce_status mpce_config_load(struct mpce_config *cfg, const mpce_options *opts,
                             const struct mpce_logger *log)
{
    mpce_status st = mpce_config_init(cfg);
    cfg->log = log;
    if (st == MPCE_OK)
        st = remember_defaults(cfg);
    if (st != MPCE_OK) {
        mpce_config_free(cfg);
        return st;
    }
    unsigned flags = opts ? opts->flags : 0;
    const char *config_path = opts ? opts->config_path : NULL;
    const char *plugin_path = opts ? opts->plugin_path : NULL;
    int privileged = mpce_config_privileged();
    int use_env = !(flags & MPCE_OPT_NO_ENV) && !privileged;
    cfg->privileged = privileged;
    cfg->use_env = use_env;

    if (!(flags & MPCE_OPT_NO_ENV) && privileged) {
        for (size_t i = 0; i < sizeof(env_names) / sizeof(env_names[0]); i++)
            if (getenv(env_names[i]))
                warn(cfg, "%s ignored: environment overrides do not apply to root or "
                     "setuid/setgid programs; use engine.conf", env_names[i]);
    }

    if (!(flags & MPCE_OPT_NO_SYSTEM_CONFIG))
        st = mpce_config_read_dir(cfg, MPCE_SNIPPETDIR);

    const char *env_conf = use_env ? mpce_secure_getenv("MPCENGINE_CONF") : NULL;
    if (st == MPCE_OK) {
        if (config_path)
            st = mpce_config_read_file(cfg, config_path, MPCE_CONF_REQUIRED,
                                       "mpce_options.config_path");
        else if (env_conf && *env_conf)
            st = mpce_config_read_file(cfg, env_conf, MPCE_CONF_REQUIRED, "MPCENGINE_CONF");
        else if (!(flags & MPCE_OPT_NO_SYSTEM_CONFIG)) {
            st = mpce_config_read_file(cfg, MPCE_CONFDIR "/engine.conf", MPCE_CONF_OPTIONAL,
                                       NULL);
            if (st == MPCE_OK)
                st = mpce_config_read_dir(cfg, MPCE_CONFDIR "/engine.conf.d");
        }
    }

    if (st == MPCE_OK && !(flags & MPCE_OPT_NO_USER_CONFIG) && !privileged && cfg->user_config)
        st = read_user_config(cfg);

    if (st == MPCE_OK && use_env) {
        const char *pp = mpce_secure_getenv("MPCENGINE_PLUGIN_PATH");
        if (pp) {
            char where[1100];
            snprintf(where, sizeof(where), "MPCENGINE_PLUGIN_PATH=%.1000s", pp);
            st = set_plugin_dirs(cfg, pp, where);
            if (st == MPCE_OK)
                st = remember_setting(cfg, "engine", "plugin_path", pp, "MPCENGINE_PLUGIN_PATH");
        }
        const char *force = mpce_secure_getenv("MPCENGINE_FORCE");
        if (st == MPCE_OK && force && *force)
            st = mpce_config_parse_force(cfg, force);
    }

    if (st == MPCE_OK && plugin_path) {
        char where[1100];
        snprintf(where, sizeof(where), "mpce_options.plugin_path = %.1000s", plugin_path);
        st = set_plugin_dirs(cfg, plugin_path, where);
        if (st == MPCE_OK)
            st = remember_setting(cfg, "engine", "plugin_path", plugin_path,
                                  "mpce_options.plugin_path");
    }
    if (flags & MPCE_OPT_NO_PLUGINS)
        cfg->no_plugins = 1;
    /* Pins are the system's state: an engine that skips the system's
     * configuration skips them too unless its own file asks. Kept apart from
     * the mode in force so that `mpcengine pins`, which starts without
     * tuning, can still say what the files configure. */
    cfg->tune.configured_mode =
        cfg->tune.mode_set ? cfg->tune.mode
                           : (flags & MPCE_OPT_NO_SYSTEM_CONFIG) ? MPCE_TUNE_OFF : MPCE_TUNE_AUTO;
    if (st == MPCE_OK && (flags & MPCE_OPT_NO_TUNE)) {
        cfg->tune.mode = MPCE_TUNE_OFF;
        st = remember_setting(cfg, "tune", "mode", "off", "mpce_options.flags MPCE_OPT_NO_TUNE");
    } else if (st == MPCE_OK && !cfg->tune.mode_set) {
        cfg->tune.mode = cfg->tune.configured_mode;
        st = remember_setting(cfg, "tune", "mode", mpce_tune_mode_name(cfg->tune.mode),
                              (flags & MPCE_OPT_NO_SYSTEM_CONFIG)
                                  ? "default (MPCE_OPT_NO_SYSTEM_CONFIG)"
                                  : "default");
    }
    if (st != MPCE_OK)
        mpce_config_free(cfg);
    return st;
}
