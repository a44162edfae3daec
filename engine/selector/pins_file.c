/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pins file (pins.h): the data's copies and frees, the strict reader,
 * the atomic sealed writer and the directory's lock.
 *
 * The file is INI read back with iniparser 4.1, laid out as
 *
 *   # libmpcengine pins: written by the selector (`mpcengine tune`). ...
 *   [pins]
 *   format = 1
 *   engine = "0.1.0"
 *   date = "2026-11-30T17:04:05Z"
 *   effort = "quick"
 *   cpu = "..."
 *
 *   [module.1]      plugin path size mtime sha256 devices
 *   [row.1]         key shape winner runner_up verdict plugins
 *                   cand.N = "IMPL STATUS MEDIAN SPREAD", why.N = "..."
 *   [blacklist.1]   path size mtime reason
 *
 *   seal = "sha256:<64 hex>"
 *
 * Sections and cand.N/why.N are numbered densely from 1. iniparser lowercases
 * section and key names, so names only ever appear in values. The seal is
 * the last line, the SHA-256 of every byte before it; iniparser sees it as a
 * key of the last section.
 *
 * iniparser 4.1 has no escapes and reads lines of at most 1022 bytes, so the
 * writer (1) writes every string double-quoted with '"', '\\' and control
 * characters (CR, LF, ...) replaced by '?': reasons and verdicts are for
 * people, and a path or name with such characters then simply matches
 * nothing, which makes its rows stale, which is safe; (2) keeps every line
 * within PINS_MAX_LINE bytes: text for people (verdict, why, reason) is cut
 * short with "...", while a longer identifying value (a path, a key, the CPU
 * signature...) makes the write fail rather than be stored altered. The
 * writer refuses any value the reader would reject (bad names, statuses,
 * dates, NaN or negative times), so what it writes always reads back.
 *
 * The reader trusts nothing it has not checked: the seal first, on the raw
 * bytes; then the text line by line (syntax as iniparser reads it, no
 * duplicate sections or keys, which iniparser would silently merge); then
 * iniparser's dictionary, which must hold exactly the sections and keys the
 * text has, every one known and every value well-formed.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#ifdef HAVE_INIPARSER_INIPARSER_H
#include <iniparser/iniparser.h>
#else
#include <iniparser.h>
#endif

#include "engine/internal.h"
#include "engine/runtime/module_file.h"
#include "engine/selector/pins.h"

/* Larger files are no pins file; refusing them bounds the work. */
#define PINS_MAX_BYTES (4u << 20)
/* Longest line written or accepted, newline excluded (iniparser 4.1 reads
 * at most 1022). */
#define PINS_MAX_LINE 1000
/* Highest section, cand and why number accepted. */
#define PINS_MAX_INDEX 1000000u
/* Poll interval of mpce_pins_lock. */
#define PINS_LOCK_POLL_MS 10u

#define SEAL_PREFIX "seal = \"sha256:"
#define SEAL_PREFIX_LEN (sizeof(SEAL_PREFIX) - 1)
/* The whole seal line: prefix, 64 hex digits, closing quote, newline. */
#define SEAL_LINE_LEN (SEAL_PREFIX_LEN + 64 + 2)

static const char *const k_statuses[] = {"ok", "wrong", "crashed", "hung", "failed", "declined"};
static const char *const k_efforts[] = {"quick", "measure", "patient", "imported"};

/* Keys of each section kind, in the order the writer writes them. */
static const char *const k_pins_keys[] = {"format", "engine", "date", "effort", "cpu"};
static const char *const k_module_keys[] = {"plugin", "path", "size", "mtime", "sha256",
                                            "devices"};
static const char *const k_row_keys[] = {"key",       "shape",   "winner",
                                         "runner_up", "verdict", "plugins"};
static const char *const k_blacklist_keys[] = {"path", "size", "mtime", "reason"};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

enum sec_kind { SEC_PINS, SEC_MODULE, SEC_ROW, SEC_BLACKLIST };

static void set_why(char *why, size_t why_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_why(char *why, size_t why_len, const char *fmt, ...)
{
    if (!why || why_len == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_len, fmt, ap);
    va_end(ap);
}

/* ---- checks shared by the writer and the reader ------------------------- */

static int in_list(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, list[i]) == 0)
            return 1;
    return 0;
}

static int is_sha256_hex(const char *s)
{
    size_t i = 0;
    for (; s[i]; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return i == 64;
}

/* "YYYY-MM-DDTHH:MM:SSZ" in shape (digits where digits go). */
static int is_iso_date(const char *s)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";
    for (size_t i = 0; i < sizeof(shape) - 1; i++) {
        if (shape[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != shape[i])
            return 0;
    }
    return s[sizeof(shape) - 1] == '\0';
}

/* A space-separated list of plugin names, "" for none. */
static int is_name_list(const char *s)
{
    if (!*s)
        return 1;
    char buf[MPCE_NAME_MAX + 1];
    for (;;) {
        const char *sp = strchr(s, ' ');
        size_t len = sp ? (size_t)(sp - s) : strlen(s);
        if (len == 0 || len > MPCE_NAME_MAX)
            return 0;
        memcpy(buf, s, len);
        buf[len] = '\0';
        if (!mpce_registry_valid_name(buf))
            return 0;
        if (!sp)
            return 1;
        s = sp + 1;
    }
}

static int valid_time(double v)
{
    return isfinite(v) && v >= 0.0;
}

/* The C locale for numbers, whatever the application set: a file written
 * under "de_DE" must read back under "C" and the other way round. */
static locale_t c_locale(void)
{
    return newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

/* ---- copies and frees -------------------------------------------------- */

/* Copies turn NULL strings into "": the file cannot tell them apart. */
static int copy_str(char **dst, const char *src)
{
    *dst = strdup(src ? src : "");
    return *dst ? 0 : -1;
}

static void module_free(struct mpce_pins_module *m)
{
    free(m->plugin);
    free(m->path);
    free(m->sha256);
    free(m->devices);
    memset(m, 0, sizeof(*m));
}

static int module_copy(struct mpce_pins_module *d, const struct mpce_pins_module *s)
{
    memset(d, 0, sizeof(*d));
    d->size = s->size;
    d->mtime = s->mtime;
    if (copy_str(&d->plugin, s->plugin) || copy_str(&d->path, s->path) ||
        copy_str(&d->sha256, s->sha256) || copy_str(&d->devices, s->devices)) {
        module_free(d);
        return -1;
    }
    return 0;
}

static void cand_free(struct mpce_pins_cand *c)
{
    free(c->impl);
    free(c->status);
    free(c->why);
    memset(c, 0, sizeof(*c));
}

static void row_free(struct mpce_pins_row *r)
{
    free(r->key);
    free(r->shape);
    free(r->winner);
    free(r->runner_up);
    free(r->verdict);
    for (size_t i = 0; r->plugins && i < r->n_plugins; i++)
        free(r->plugins[i]);
    free(r->plugins);
    for (size_t i = 0; r->cands && i < r->n_cands; i++)
        cand_free(&r->cands[i]);
    free(r->cands);
    memset(r, 0, sizeof(*r));
}

static int row_copy(struct mpce_pins_row *d, const struct mpce_pins_row *s)
{
    memset(d, 0, sizeof(*d));
    if (copy_str(&d->key, s->key) || copy_str(&d->shape, s->shape) ||
        copy_str(&d->winner, s->winner) || copy_str(&d->runner_up, s->runner_up) ||
        copy_str(&d->verdict, s->verdict))
        goto fail;
    if (s->n_plugins) {
        if (!(d->plugins = calloc(s->n_plugins, sizeof(*d->plugins))))
            goto fail;
        d->n_plugins = s->n_plugins;
        for (size_t i = 0; i < s->n_plugins; i++)
            if (copy_str(&d->plugins[i], s->plugins[i]))
                goto fail;
    }
    if (s->n_cands) {
        if (!(d->cands = calloc(s->n_cands, sizeof(*d->cands))))
            goto fail;
        d->n_cands = s->n_cands;
        for (size_t i = 0; i < s->n_cands; i++) {
            const struct mpce_pins_cand *sc = &s->cands[i];
            struct mpce_pins_cand *dc = &d->cands[i];
            dc->median = sc->median;
            dc->spread = sc->spread;
            if (copy_str(&dc->impl, sc->impl) || copy_str(&dc->status, sc->status) ||
                copy_str(&dc->why, sc->why))
                goto fail;
        }
    }
    return 0;
fail:
    row_free(d);
    return -1;
}

static void blacklist_free(struct mpce_pins_blacklist *b)
{
    free(b->path);
    free(b->reason);
    memset(b, 0, sizeof(*b));
}

static int blacklist_copy(struct mpce_pins_blacklist *d, const struct mpce_pins_blacklist *s)
{
    memset(d, 0, sizeof(*d));
    d->size = s->size;
    d->mtime = s->mtime;
    if (copy_str(&d->path, s->path) || copy_str(&d->reason, s->reason)) {
        blacklist_free(d);
        return -1;
    }
    return 0;
}

void mpce_pins_free(struct mpce_pins *p)
{
    if (!p)
        return;
    free(p->engine_version);
    free(p->date);
    free(p->effort);
    free(p->cpu);
    for (size_t i = 0; p->modules && i < p->n_modules; i++)
        module_free(&p->modules[i]);
    free(p->modules);
    for (size_t i = 0; p->rows && i < p->n_rows; i++)
        row_free(&p->rows[i]);
    free(p->rows);
    for (size_t i = 0; p->blacklist && i < p->n_blacklist; i++)
        blacklist_free(&p->blacklist[i]);
    free(p->blacklist);
    memset(p, 0, sizeof(*p));
}

int mpce_pins_set_header(struct mpce_pins *p, const char *engine_version, const char *date,
                         const char *effort, const char *cpu)
{
    char *v = NULL, *d = NULL, *e = NULL, *c = NULL;
    if (copy_str(&v, engine_version) || copy_str(&d, date) || copy_str(&e, effort) ||
        copy_str(&c, cpu)) {
        free(v);
        free(d);
        free(e);
        free(c);
        return -1;
    }
    free(p->engine_version);
    free(p->date);
    free(p->effort);
    free(p->cpu);
    p->engine_version = v;
    p->date = d;
    p->effort = e;
    p->cpu = c;
    p->format = MPCE_PINS_FORMAT;
    return 0;
}

int mpce_pins_add_module(struct mpce_pins *p, const struct mpce_pins_module *m)
{
    struct mpce_pins_module copy;
    if (module_copy(&copy, m))
        return -1;
    struct mpce_pins_module *tmp = realloc(p->modules, (p->n_modules + 1) * sizeof(*tmp));
    if (!tmp) {
        module_free(&copy);
        return -1;
    }
    p->modules = tmp;
    p->modules[p->n_modules++] = copy;
    return 0;
}

int mpce_pins_add_row(struct mpce_pins *p, const struct mpce_pins_row *row)
{
    struct mpce_pins_row copy;
    if (row_copy(&copy, row))
        return -1;
    struct mpce_pins_row *tmp = realloc(p->rows, (p->n_rows + 1) * sizeof(*tmp));
    if (!tmp) {
        row_free(&copy);
        return -1;
    }
    p->rows = tmp;
    p->rows[p->n_rows++] = copy;
    return 0;
}

int mpce_pins_add_blacklist(struct mpce_pins *p, const struct mpce_pins_blacklist *b)
{
    struct mpce_pins_blacklist copy;
    if (blacklist_copy(&copy, b))
        return -1;
    struct mpce_pins_blacklist *tmp =
        realloc(p->blacklist, (p->n_blacklist + 1) * sizeof(*tmp));
    if (!tmp) {
        blacklist_free(&copy);
        return -1;
    }
    p->blacklist = tmp;
    p->blacklist[p->n_blacklist++] = copy;
    return 0;
}

const struct mpce_pins_row *mpce_pins_find_row(const struct mpce_pins *p, const char *key)
{
    if (!p || !key)
        return NULL;
    for (size_t i = 0; i < p->n_rows; i++)
        if (p->rows[i].key && strcmp(p->rows[i].key, key) == 0)
            return &p->rows[i];
    return NULL;
}

int mpce_pins_put_row(struct mpce_pins *p, const struct mpce_pins_row *row)
{
    const char *key = row->key ? row->key : "";
    for (size_t i = 0; i < p->n_rows; i++) {
        if (p->rows[i].key && strcmp(p->rows[i].key, key) == 0) {
            struct mpce_pins_row copy;
            if (row_copy(&copy, row))
                return -1;
            row_free(&p->rows[i]);
            p->rows[i] = copy;
            return 0;
        }
    }
    return mpce_pins_add_row(p, row);
}

/* ---- the seal ---------------------------------------------------------- */

static int sha256_hex(const void *data, size_t len, char hex[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    if (EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32)
        return -1;
    static const char digits[] = "0123456789abcdef";
    for (unsigned i = 0; i < 32; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[64] = '\0';
    return 0;
}

/* ---- the writer -------------------------------------------------------- */

struct wr {
    char *buf;
    size_t len, cap;
    int nomem;
    int bad;            /* a value was refused: why says which */
    const char *path;
    char sec[40];       /* "[row.12]", for messages */
    char *why;
    size_t why_len;
};

static void wr_put(struct wr *w, const char *s, size_t n)
{
    if (w->nomem || w->bad)
        return;
    if (w->len + n + 1 > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap < w->len + n + 1)
            cap *= 2;
        char *tmp = realloc(w->buf, cap);
        if (!tmp) {
            w->nomem = 1;
            return;
        }
        w->buf = tmp;
        w->cap = cap;
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len] = '\0';
}

static void wr_printf(struct wr *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void wr_printf(struct wr *w, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0) {
        w->nomem = 1;
        return;
    }
    if ((size_t)n < sizeof(small)) {
        wr_put(w, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        w->nomem = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    wr_put(w, big, (size_t)n);
    free(big);
}

static void wr_refuse(struct wr *w, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void wr_refuse(struct wr *w, const char *key, const char *fmt, ...)
{
    if (w->bad || w->nomem)
        return;
    w->bad = 1;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    set_why(w->why, w->why_len, "%s: cannot write %s %s: %s", w->path, w->sec, key, msg);
}

static void wr_section(struct wr *w, const char *kind, size_t index)
{
    if (index)
        snprintf(w->sec, sizeof(w->sec), "[%s.%zu]", kind, index);
    else
        snprintf(w->sec, sizeof(w->sec), "[%s]", kind);
    wr_printf(w, "\n%s\n", w->sec);
}

/* Characters iniparser cannot carry inside "...": replaced by '?'. */
static int unwritable(unsigned char c)
{
    return c == '"' || c == '\\' || c < 0x20 || c == 0x7f;
}

/* key = "value": sanitized; text for people (free_text) is cut short to fit
 * the line, anything else that does not fit is refused. */
static void wr_str(struct wr *w, const char *key, const char *value, int free_text)
{
    const char *v = value ? value : "";
    size_t vlen = strlen(v);
    size_t room = PINS_MAX_LINE - strlen(key) - 5; /* ` = ""` */
    int cut = 0;
    if (vlen > room) {
        if (!free_text) {
            wr_refuse(w, key, "%zu bytes long, longer than the %zu a pins file line holds",
                      vlen, room);
            return;
        }
        vlen = room - 3;
        /* Not inside a UTF-8 sequence. */
        while (vlen > 0 && ((unsigned char)v[vlen] & 0xC0) == 0x80)
            vlen--;
        cut = 1;
    }
    wr_printf(w, "%s = \"", key);
    size_t start = 0;
    for (size_t i = 0; i < vlen; i++) {
        if (unwritable((unsigned char)v[i])) {
            wr_put(w, v + start, i - start);
            wr_put(w, "?", 1);
            start = i + 1;
        }
    }
    wr_put(w, v + start, vlen - start);
    if (cut)
        wr_put(w, "...", 3);
    wr_put(w, "\"\n", 2);
}

/* An implementation or plugin name ("" allowed where allow_empty). */
static void wr_name(struct wr *w, const char *key, const char *value, int allow_empty)
{
    const char *v = value ? value : "";
    if (!(allow_empty && !*v) && !mpce_registry_valid_name(v)) {
        wr_refuse(w, key, "'%.80s' is not a name (1 to %d of A-Z a-z 0-9 - _ . +)", v,
                  MPCE_NAME_MAX);
        return;
    }
    wr_str(w, key, v, 0);
}

static void wr_header(struct wr *w, const struct mpce_pins *p)
{
    static const char banner[] =
        "# libmpcengine pins: written by the selector (`mpcengine tune`). Do not edit:\n"
        "# a changed file fails its seal and is replaced at the next tune.\n";
    wr_put(w, banner, sizeof(banner) - 1);
    wr_section(w, "pins", 0);
    wr_printf(w, "format = %u\n", MPCE_PINS_FORMAT);
    wr_str(w, "engine", p->engine_version, 0);
    if (!p->date || !is_iso_date(p->date))
        wr_refuse(w, "date", "'%.80s' is not a UTC time as YYYY-MM-DDTHH:MM:SSZ",
                  p->date ? p->date : "");
    wr_str(w, "date", p->date, 0);
    if (!p->effort || !in_list(p->effort, k_efforts, COUNT(k_efforts)))
        wr_refuse(w, "effort", "'%.80s' is not quick, measure, patient or imported",
                  p->effort ? p->effort : "");
    wr_str(w, "effort", p->effort, 0);
    wr_str(w, "cpu", p->cpu, 0);
}

static void wr_module(struct wr *w, size_t index, const struct mpce_pins_module *m)
{
    wr_section(w, "module", index);
    wr_name(w, "plugin", m->plugin, 0);
    wr_str(w, "path", m->path, 0);
    wr_printf(w, "size = %" PRIu64 "\n", m->size);
    wr_printf(w, "mtime = %" PRId64 "\n", m->mtime);
    if (m->sha256 && *m->sha256 && !is_sha256_hex(m->sha256))
        wr_refuse(w, "sha256", "'%.80s' is not 64 lowercase hex digits (or \"\")", m->sha256);
    wr_str(w, "sha256", m->sha256, 0);
    wr_str(w, "devices", m->devices, 0);
}

static void wr_row(struct wr *w, size_t index, const struct mpce_pins_row *r)
{
    wr_section(w, "row", index);
    if (!r->key || !*r->key)
        wr_refuse(w, "key", "empty");
    wr_str(w, "key", r->key, 0);
    wr_str(w, "shape", r->shape, 0);
    wr_name(w, "winner", r->winner, 1);
    wr_name(w, "runner_up", r->runner_up, 1);
    wr_str(w, "verdict", r->verdict, 1);
    /* plugins = "a b c" */
    size_t total = 0;
    for (size_t i = 0; i < r->n_plugins; i++) {
        const char *n = r->plugins[i] ? r->plugins[i] : "";
        if (!mpce_registry_valid_name(n))
            wr_refuse(w, "plugins", "'%.80s' is not a plugin name", n);
        total += strlen(n) + 1;
    }
    if (w->bad)
        return;
    char *list = malloc(total + 1);
    if (!list) {
        w->nomem = 1;
        return;
    }
    list[0] = '\0';
    size_t at = 0;
    for (size_t i = 0; i < r->n_plugins; i++) {
        size_t n = strlen(r->plugins[i]);
        if (i)
            list[at++] = ' ';
        memcpy(list + at, r->plugins[i], n);
        at += n;
    }
    list[at] = '\0';
    wr_str(w, "plugins", list, 0);
    free(list);
    for (size_t i = 0; i < r->n_cands; i++) {
        const struct mpce_pins_cand *c = &r->cands[i];
        char key[32];
        snprintf(key, sizeof(key), "cand.%zu", i + 1);
        const char *impl = c->impl ? c->impl : "";
        const char *status = c->status ? c->status : "";
        if (!mpce_registry_valid_name(impl))
            wr_refuse(w, key, "'%.80s' is not an implementation name", impl);
        else if (!in_list(status, k_statuses, COUNT(k_statuses)))
            wr_refuse(w, key, "'%.80s' is not a status (ok, wrong, crashed, hung, failed, "
                      "declined)", status);
        else if (!valid_time(c->median) || !valid_time(c->spread))
            wr_refuse(w, key, "median %g and spread %g must be finite and not negative",
                      c->median, c->spread);
        else
            wr_printf(w, "%s = \"%s %s %.6e %.6e\"\n", key, impl, status, c->median,
                      c->spread);
        snprintf(key, sizeof(key), "why.%zu", i + 1);
        wr_str(w, key, c->why, 1);
    }
}

static void wr_blacklist(struct wr *w, size_t index, const struct mpce_pins_blacklist *b)
{
    wr_section(w, "blacklist", index);
    wr_str(w, "path", b->path, 0);
    wr_printf(w, "size = %" PRIu64 "\n", b->size);
    wr_printf(w, "mtime = %" PRId64 "\n", b->mtime);
    wr_str(w, "reason", b->reason, 1);
}

/* The whole text, sealed, in w->buf; 0, or -1 with why set. */
static int wr_text(struct wr *w, const struct mpce_pins *p)
{
    locale_t c = c_locale();
    if (c == (locale_t)0) {
        set_why(w->why, w->why_len, "%s: cannot set up the C locale: %s", w->path,
                strerror(errno));
        return -1;
    }
    locale_t old = uselocale(c);
    wr_header(w, p);
    for (size_t i = 0; i < p->n_modules; i++)
        wr_module(w, i + 1, &p->modules[i]);
    for (size_t i = 0; i < p->n_rows; i++)
        wr_row(w, i + 1, &p->rows[i]);
    for (size_t i = 0; i < p->n_blacklist; i++)
        wr_blacklist(w, i + 1, &p->blacklist[i]);
    wr_put(w, "\n", 1);
    uselocale(old);
    freelocale(c);
    if (w->bad) {
        errno = EINVAL;
        return -1;
    }
    if (w->nomem)
        goto nomem;
    if (w->len > PINS_MAX_BYTES - SEAL_LINE_LEN) {
        set_why(w->why, w->why_len, "%s: cannot write: %zu bytes, more than a pins file holds "
                "(%u)", w->path, w->len, PINS_MAX_BYTES);
        errno = EFBIG;
        return -1;
    }
    char hex[65];
    if (sha256_hex(w->buf, w->len, hex) != 0) {
        set_why(w->why, w->why_len, "%s: cannot seal: OpenSSL SHA-256 failed: check the "
                "libcrypto installation", w->path);
        errno = EIO;
        return -1;
    }
    wr_printf(w, SEAL_PREFIX "%s\"\n", hex);
    if (!w->nomem)
        return 0;
nomem:
    set_why(w->why, w->why_len, "%s: cannot write: %s", w->path, strerror(ENOMEM));
    errno = ENOMEM;
    return -1;
}

static int write_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0) {
            errno = EIO;
            return -1;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

int mpce_pins_write(const char *path, const struct mpce_pins *p, char *why, size_t why_len)
{
    struct wr w = {.path = path, .why = why, .why_len = why_len};
    if (wr_text(&w, p) != 0) {
        int err = errno;
        free(w.buf);
        errno = err;
        return -1;
    }
    /* DIR and the temporary ".NAME.XXXXXX" beside the target. */
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dlen = slash ? (slash == path ? 1 : (size_t)(slash - path)) : 1;
    size_t plen = strlen(path);
    char *dir = malloc(dlen + 1);
    char *tmp = malloc(plen + 16);
    if (!dir || !tmp) {
        free(dir);
        free(tmp);
        free(w.buf);
        set_why(why, why_len, "%s: cannot write: %s", path, strerror(ENOMEM));
        errno = ENOMEM;
        return -1;
    }
    if (slash)
        memcpy(dir, path, dlen);
    else
        dir[0] = '.';
    dir[dlen] = '\0';
    if (!*base) {
        set_why(why, why_len, "%s: cannot write: names a directory, not a file", path);
        errno = EISDIR;
        goto fail_nofile;
    }
    snprintf(tmp, plen + 16, "%.*s.%s.XXXXXX", (int)(base - path), path, base);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        set_why(why, why_len, "%s: cannot create directory %s: %s", path, dir, strerror(errno));
        goto fail_nofile;
    }
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        set_why(why, why_len, "%s: cannot create a temporary file in %s: %s", path, dir,
                strerror(errno));
        goto fail_nofile;
    }
    const char *what = NULL;
    if (write_all(fd, w.buf, w.len) != 0)
        what = "write";
    else if (fchmod(fd, 0644) != 0)
        what = "chmod";
    else if (fsync(fd) != 0)
        what = "fsync";
    if (what) {
        int err = errno;
        close(fd);
        errno = err;
    } else if (close(fd) != 0) {
        what = "close";
    }
    if (what) {
        set_why(why, why_len, "%s: %s of %s failed: %s", path, what, tmp, strerror(errno));
        goto fail_unlink;
    }
    if (rename(tmp, path) != 0) {
        set_why(why, why_len, "%s: cannot rename %s into place: %s", path, tmp,
                strerror(errno));
        goto fail_unlink;
    }
    /* The rename itself must reach the disk. Some file systems cannot
     * fsync a directory (EINVAL): nothing more can be done there. */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || (fsync(dfd) != 0 && errno != EINVAL)) {
        int err = errno;
        set_why(why, why_len, "%s: written, but fsync of directory %s failed: %s", path, dir,
                strerror(err));
        if (dfd >= 0)
            close(dfd);
        free(dir);
        free(tmp);
        free(w.buf);
        errno = err;
        return -1;
    }
    close(dfd);
    free(dir);
    free(tmp);
    free(w.buf);
    if (why && why_len)
        why[0] = '\0';
    return 0;

fail_unlink: {
    int err = errno;
    unlink(tmp);
    errno = err;
}
fail_nofile: {
    int err = errno;
    free(dir);
    free(tmp);
    free(w.buf);
    errno = err;
    return -1;
}
}

/* ---- the lock ---------------------------------------------------------- */

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int mpce_pins_lock(const char *dir, unsigned wait_ms, char *why, size_t why_len)
{
    size_t dl = strlen(dir);
    char *path = malloc(dl + sizeof(MPCE_PINS_LOCK) + 1);
    if (!path) {
        set_why(why, why_len, "%s/%s: %s", dir, MPCE_PINS_LOCK, strerror(ENOMEM));
        errno = ENOMEM;
        return -1;
    }
    snprintf(path, dl + sizeof(MPCE_PINS_LOCK) + 1, "%s/%s", dir, MPCE_PINS_LOCK);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        int err = errno;
        set_why(why, why_len, "%s: cannot create directory %s: %s", path, dir, strerror(err));
        free(path);
        errno = err;
        return -1;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0644);
    if (fd < 0) {
        int err = errno;
        set_why(why, why_len, "%s: cannot open: %s", path, strerror(err));
        free(path);
        errno = err;
        return -1;
    }
    uint64_t start = now_ms();
    for (;;) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
            break;
        int err = errno;
        if (err == EINTR)
            continue;
        uint64_t waited = now_ms() - start;
        if (err != EWOULDBLOCK) {
            set_why(why, why_len, "%s: cannot lock: %s", path, strerror(err));
        } else if (waited >= wait_ms) {
            set_why(why, why_len, "%s: held by another process for %u ms", path, wait_ms);
        } else {
            uint64_t left = wait_ms - waited;
            uint64_t ms = left < PINS_LOCK_POLL_MS ? left : PINS_LOCK_POLL_MS;
            struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)(ms * 1000000u)};
            nanosleep(&ts, NULL);
            continue;
        }
        close(fd);
        free(path);
        errno = err;
        return -1;
    }
    free(path);
    return fd;
}

void mpce_pins_unlock(int fd)
{
    if (fd < 0)
        return;
    flock(fd, LOCK_UN);
    close(fd);
}

/* ---- the reader -------------------------------------------------------- */

/* iniparser reports errors through one process-wide callback, to stderr
 * unless one is set; the library never writes there. The text lands in this
 * thread's buffer (only an allocation failure can produce one once the text
 * has passed the line check). */
static _Thread_local char pins_ini_msg[256];

static int pins_ini_error_cb(const char *fmt, ...)
{
    if (pins_ini_msg[0])
        return 0;
    va_list ap;
    va_start(ap, fmt);
    int r = vsnprintf(pins_ini_msg, sizeof(pins_ini_msg), fmt, ap);
    va_end(ap);
    for (char *c = pins_ini_msg; *c; c++)
        if (*c == '\n')
            *c = ' ';
    return r;
}

/* A section or key as the text has it (not NUL-terminated). */
struct raw_sec {
    const char *name;
    size_t len;
    unsigned line;
};

struct raw_key {
    size_t sec;
    const char *name;
    size_t len;
    const char *val;           /* the value without its quotes */
    size_t vlen;
    unsigned line;
};

struct rd {
    const char *path;
    char *why;
    size_t why_len;
    const char *text;          /* the whole file, NUL-terminated */
    size_t len;
    struct raw_sec *secs;
    size_t nsec, capsec;
    struct raw_key *keys;
    size_t nkey, capkey;
};

static enum mpce_pins_read_result rd_fail(struct rd *r, enum mpce_pins_read_result res,
                                          unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static enum mpce_pins_read_result rd_fail(struct rd *r, enum mpce_pins_read_result res,
                                          unsigned line, const char *fmt, ...)
{
    char msg[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (line)
        set_why(r->why, r->why_len, "%s:%u: %s", r->path, line, msg);
    else
        set_why(r->why, r->why_len, "%s: %s", r->path, msg);
    return res;
}

static int span_cmp(const char *a, size_t al, const char *b, size_t bl)
{
    int c = strncasecmp(a, b, al < bl ? al : bl);
    return c ? c : (al > bl) - (al < bl);
}

static int span_is(const char *a, size_t al, const char *s)
{
    return span_cmp(a, al, s, strlen(s)) == 0;
}

/* The line of [sec] key (key NULL: of the header), 0 if not found. */
static unsigned line_of(const struct rd *r, const char *sec, const char *key)
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
static enum mpce_pins_read_result rd_bad(struct rd *r, const char *sec, const char *key,
                                         const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static enum mpce_pins_read_result rd_bad(struct rd *r, const char *sec, const char *key,
                                         const char *fmt, ...)
{
    char msg[1100];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    unsigned line = line_of(r, sec, key);
    if (key)
        return rd_fail(r, MPCE_PINS_READ_CORRUPT, line, "[%s] %s: %s", sec, key, msg);
    return rd_fail(r, MPCE_PINS_READ_CORRUPT, line, "[%s] %s", sec, msg);
}

static enum mpce_pins_read_result rd_nomem(struct rd *r)
{
    errno = ENOMEM;
    return rd_fail(r, MPCE_PINS_READ_ERROR, 0, "%s", strerror(ENOMEM));
}

static void trim(const char **b, const char **e)
{
    while (*b < *e && (**b == ' ' || **b == '\t'))
        (*b)++;
    while (*e > *b && ((*e)[-1] == ' ' || (*e)[-1] == '\t'))
        (*e)--;
}

static int push_sec(struct rd *r, const char *name, size_t len, unsigned line)
{
    if (r->nsec == r->capsec) {
        size_t cap = r->capsec ? r->capsec * 2 : 64;
        struct raw_sec *tmp = realloc(r->secs, cap * sizeof(*tmp));
        if (!tmp)
            return -1;
        r->secs = tmp;
        r->capsec = cap;
    }
    r->secs[r->nsec++] = (struct raw_sec){name, len, line};
    return 0;
}

static int push_key(struct rd *r, size_t sec, const char *name, size_t len, const char *val,
                    size_t vlen, unsigned line)
{
    if (r->nkey == r->capkey) {
        size_t cap = r->capkey ? r->capkey * 2 : 256;
        struct raw_key *tmp = realloc(r->keys, cap * sizeof(*tmp));
        if (!tmp)
            return -1;
        r->keys = tmp;
        r->capkey = cap;
    }
    r->keys[r->nkey++] = (struct raw_key){sec, name, len, val, vlen, line};
    return 0;
}

static int cmp_raw_sec(const void *a, const void *b)
{
    const struct raw_sec *x = a, *y = b;
    int c = span_cmp(x->name, x->len, y->name, y->len);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

static int cmp_raw_key(const void *a, const void *b)
{
    const struct raw_key *x = a, *y = b;
    if (x->sec != y->sec)
        return x->sec < y->sec ? -1 : 1;
    int c = span_cmp(x->name, x->len, y->name, y->len);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* Sections and keys that iniparser would merge. */
static enum mpce_pins_read_result raw_duplicates(struct rd *r)
{
    enum mpce_pins_read_result res = MPCE_PINS_READ_OK;
    if (r->nsec > 1) {
        struct raw_sec *s = malloc(r->nsec * sizeof(*s));
        if (!s)
            return rd_nomem(r);
        memcpy(s, r->secs, r->nsec * sizeof(*s));
        qsort(s, r->nsec, sizeof(*s), cmp_raw_sec);
        for (size_t i = 1; i < r->nsec && res == MPCE_PINS_READ_OK; i++)
            if (span_cmp(s[i - 1].name, s[i - 1].len, s[i].name, s[i].len) == 0)
                res = rd_fail(r, MPCE_PINS_READ_CORRUPT, s[i].line,
                              "[%.*s] appears twice (also at line %u)", (int)s[i].len,
                              s[i].name, s[i - 1].line);
        free(s);
    }
    if (res == MPCE_PINS_READ_OK && r->nkey > 1) {
        struct raw_key *k = malloc(r->nkey * sizeof(*k));
        if (!k)
            return rd_nomem(r);
        memcpy(k, r->keys, r->nkey * sizeof(*k));
        qsort(k, r->nkey, sizeof(*k), cmp_raw_key);
        for (size_t i = 1; i < r->nkey && res == MPCE_PINS_READ_OK; i++)
            if (k[i - 1].sec == k[i].sec &&
                span_cmp(k[i - 1].name, k[i - 1].len, k[i].name, k[i].len) == 0)
                res = rd_fail(r, MPCE_PINS_READ_CORRUPT, k[i].line,
                              "[%.*s] %.*s: set twice (also at line %u)",
                              (int)r->secs[k[i].sec].len, r->secs[k[i].sec].name,
                              (int)k[i].len, k[i].name, k[i - 1].line);
        free(k);
    }
    return res;
}

/*
 * The text line by line, as iniparser reads it but stricter: blank lines,
 * # or ; comments, [section] and key = value, where value is "..." without
 * '"' inside or a bare word without quotes, ';' or '#' (which iniparser
 * would cut it at); no control characters, no line iniparser would join to
 * the next (a trailing backslash) or find too long; no duplicates.
 */
static enum mpce_pins_read_result raw_scan(struct rd *r)
{
    const char *p = r->text, *end = r->text + r->len;
    unsigned line = 0;
    size_t cur = SIZE_MAX;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end; /* not reached: the seal check wants a final newline */
        line++;
        if ((size_t)(eol - p) > PINS_MAX_LINE)
            return rd_fail(r, MPCE_PINS_READ_CORRUPT, line, "longer than %d bytes",
                           PINS_MAX_LINE);
        for (const char *q = p; q < eol; q++)
            if ((unsigned char)*q < 0x20 || *q == 0x7f)
                return rd_fail(r, MPCE_PINS_READ_CORRUPT, line,
                               "control character (byte 0x%02x)", (unsigned char)*q);
        const char *b = p, *e = eol;
        p = eol + 1;
        trim(&b, &e);
        if (b == e || *b == '#' || *b == ';')
            continue;
        if (e[-1] == '\\')
            return rd_fail(r, MPCE_PINS_READ_CORRUPT, line,
                           "ends in a backslash (would continue on the next line)");
        if (*b == '[') {
            const char *nb = b + 1, *ne = e - 1;
            if (e - b < 2 || *ne != ']')
                return rd_fail(r, MPCE_PINS_READ_CORRUPT, line,
                               "expected [section], key = value or a # comment");
            trim(&nb, &ne);
            if (nb == ne || memchr(nb, ':', (size_t)(ne - nb)) ||
                memchr(nb, '[', (size_t)(ne - nb)) || memchr(nb, ']', (size_t)(ne - nb)))
                return rd_fail(r, MPCE_PINS_READ_CORRUPT, line, "malformed section name");
            if (push_sec(r, nb, (size_t)(ne - nb), line))
                return rd_nomem(r);
            cur = r->nsec - 1;
            continue;
        }
        const char *eq = memchr(b, '=', (size_t)(e - b));
        if (!eq)
            return rd_fail(r, MPCE_PINS_READ_CORRUPT, line,
                           "expected [section], key = value or a # comment");
        const char *kb = b, *ke = eq, *vb = eq + 1, *ve = e;
        trim(&kb, &ke);
        trim(&vb, &ve);
        if (kb == ke || memchr(kb, ':', (size_t)(ke - kb)))
            return rd_fail(r, MPCE_PINS_READ_CORRUPT, line, "malformed key name");
        size_t vl = (size_t)(ve - vb);
        int ok;
        if (vl && *vb == '"')
            ok = vl >= 2 && ve[-1] == '"' && !memchr(vb + 1, '"', vl - 2);
        else
            ok = vl && !memchr(vb, '"', vl) && !memchr(vb, '\'', vl) &&
                 !memchr(vb, ';', vl) && !memchr(vb, '#', vl);
        if (!ok)
            return rd_fail(r, MPCE_PINS_READ_CORRUPT, line,
                           "%.*s: expected a number or a \"string\" without '\"' inside",
                           (int)(ke - kb), kb);
        if (cur == SIZE_MAX)
            return rd_fail(r, MPCE_PINS_READ_CORRUPT, line, "%.*s: outside any section",
                           (int)(ke - kb), kb);
        if (*vb == '"') {
            vb++;
            vl -= 2;
        }
        if (push_key(r, cur, kb, (size_t)(ke - kb), vb, vl, line))
            return rd_nomem(r);
    }
    return raw_duplicates(r);
}

/* The seal line must end the file and match the bytes before it. */
static enum mpce_pins_read_result check_seal(struct rd *r)
{
    const char *t = r->text;
    size_t len = r->len;
    size_t at = len >= SEAL_LINE_LEN ? len - SEAL_LINE_LEN : 0;
    int shaped = len >= SEAL_LINE_LEN && (at == 0 || t[at - 1] == '\n') &&
                 memcmp(t + at, SEAL_PREFIX, SEAL_PREFIX_LEN) == 0 &&
                 t[len - 2] == '"' && t[len - 1] == '\n';
    if (shaped) {
        for (size_t i = at + SEAL_PREFIX_LEN; i < len - 2; i++)
            if (!((t[i] >= '0' && t[i] <= '9') || (t[i] >= 'a' && t[i] <= 'f')))
                shaped = 0;
    }
    if (!shaped) {
        /* A seal line followed by more text, or none at all. */
        unsigned line = 1;
        for (size_t i = 0; i < len; i++) {
            if ((i == 0 || t[i - 1] == '\n') && len - i >= SEAL_PREFIX_LEN &&
                memcmp(t + i, SEAL_PREFIX, SEAL_PREFIX_LEN) == 0)
                return rd_fail(r, MPCE_PINS_READ_CORRUPT, line,
                               "text after the seal line (edited by hand or torn)");
            if (t[i] == '\n')
                line++;
        }
        return rd_fail(r, MPCE_PINS_READ_CORRUPT, 0,
                       "no seal line at the end (not written by the selector, or torn)");
    }
    char hex[65];
    if (sha256_hex(t, at, hex) != 0)
        return rd_fail(r, MPCE_PINS_READ_ERROR, 0,
                       "cannot check the seal: OpenSSL SHA-256 failed: check the libcrypto "
                       "installation");
    if (memcmp(hex, t + at + SEAL_PREFIX_LEN, 64) != 0)
        return rd_fail(r, MPCE_PINS_READ_CORRUPT, 0,
                       "seal does not match the contents (edited by hand or torn)");
    return MPCE_PINS_READ_OK;
}

/* Whether iniparser's name for an entry is [s] (k NULL) or [s] k. */
static int same_name(const char *dkey, const struct raw_sec *s, const struct raw_key *k)
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
static enum mpce_pins_read_result check_parsed(struct rd *r, dictionary *d)
{
    size_t s = 0, k = 0;
    for (ssize_t i = 0; i < d->size; i++) {
        const char *dk = d->key[i], *dv = d->val[i];
        if (!dk)
            continue;
        int ok;
        if (k < r->nkey && s > 0 && r->keys[k].sec == s - 1) {
            const struct raw_key *rk = &r->keys[k++];
            ok = same_name(dk, &r->secs[rk->sec], rk) && dv && strlen(dv) == rk->vlen &&
                 memcmp(dv, rk->val, rk->vlen) == 0;
        } else {
            ok = s < r->nsec && same_name(dk, &r->secs[s++], NULL);
        }
        if (!ok)
            return rd_fail(r, MPCE_PINS_READ_CORRUPT, 0,
                           "changed while it was read: iniparser found '%.100s' where the "
                           "checked text has something else", dk);
    }
    if (s != r->nsec || k != r->nkey)
        return rd_fail(r, MPCE_PINS_READ_CORRUPT, 0,
                       "changed while it was read: iniparser found fewer entries than the "
                       "checked text has");
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
    if (span_is(s, len, "pins")) {
        *kind = SEC_PINS;
        *idx = 0;
        return 0;
    }
    static const struct {
        const char *prefix;
        enum sec_kind kind;
    } kinds[] = {{"module", SEC_MODULE}, {"row", SEC_ROW}, {"blacklist", SEC_BLACKLIST}};
    for (size_t i = 0; i < COUNT(kinds); i++) {
        if (parse_numbered(s, len, kinds[i].prefix, idx) == 0) {
            *kind = kinds[i].kind;
            return 0;
        }
    }
    return -1;
}

static int key_index(const char *key, const char *const *keys, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(key, keys[i]) == 0)
            return (int)i;
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
    if (end == s || *end || !valid_time(v))
        return -1;
    *out = v;
    return 0;
}

/* What pass one of the dictionary found for one row. */
struct row_tmp {
    const char *f[COUNT(k_row_keys)];
    const char **cand, **why;
    size_t ncand, cmax, nwhy, wmax;
};

struct vals {
    const char *hdr[COUNT(k_pins_keys)];
    const char *(*mod)[COUNT(k_module_keys)];
    struct row_tmp *row;
    const char *(*bl)[COUNT(k_blacklist_keys)];
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
    static const char *const names[] = {"pins", "module", "row", "blacklist"};
    if (kind == SEC_PINS)
        snprintf(buf, len, "pins");
    else
        snprintf(buf, len, "%s.%zu", names[kind], idx);
    return buf;
}

/* [pins] format first: a file of another format may be laid out otherwise. */
static enum mpce_pins_read_result check_format(struct rd *r, dictionary *d)
{
    int have = 0;
    for (size_t s = 0; s < r->nsec; s++)
        if (span_is(r->secs[s].name, r->secs[s].len, "pins"))
            have = 1;
    if (!have)
        return rd_fail(r, MPCE_PINS_READ_CORRUPT, 0, "no [pins] section");
    const char *v = iniparser_getstring(d, "pins:format", NULL);
    uint64_t f;
    if (!v)
        return rd_bad(r, "pins", NULL, "missing key 'format'");
    if (parse_u64(v, &f) != 0)
        return rd_bad(r, "pins", "format", "'%s' is not a number", v);
    if (f != MPCE_PINS_FORMAT)
        return rd_bad(r, "pins", "format", "%" PRIu64 ": this engine reads format %u only",
                      f, MPCE_PINS_FORMAT);
    return MPCE_PINS_READ_OK;
}

/* Section names, numbering, and the arrays pass one fills. */
static enum mpce_pins_read_result check_sections(struct rd *r, struct vals *v)
{
    size_t max[4] = {0}, count[4] = {0};
    unsigned max_line[4] = {0};
    for (size_t s = 0; s < r->nsec; s++) {
        enum sec_kind kind;
        size_t idx;
        if (parse_section(r->secs[s].name, r->secs[s].len, &kind, &idx) != 0)
            return rd_fail(r, MPCE_PINS_READ_CORRUPT, r->secs[s].line,
                           "unknown section [%.*s]", (int)r->secs[s].len, r->secs[s].name);
        count[kind]++;
        if (idx > max[kind]) {
            max[kind] = idx;
            max_line[kind] = r->secs[s].line;
        }
    }
    static const char *const names[] = {"pins", "module", "row", "blacklist"};
    for (int k = SEC_MODULE; k <= SEC_BLACKLIST; k++)
        if (count[k] != max[k])
            return rd_fail(r, MPCE_PINS_READ_CORRUPT, max_line[k],
                           "[%s.%zu] but only %zu %s sections: they must be numbered 1, 2, "
                           "3... without gaps", names[k], max[k], count[k], names[k]);
    v->nmod = count[SEC_MODULE];
    v->nrow = count[SEC_ROW];
    v->nbl = count[SEC_BLACKLIST];
    if ((v->nmod && !(v->mod = calloc(v->nmod, sizeof(*v->mod)))) ||
        (v->nrow && !(v->row = calloc(v->nrow, sizeof(*v->row)))) ||
        (v->nbl && !(v->bl = calloc(v->nbl, sizeof(*v->bl)))))
        return rd_nomem(r);
    /* The seal line is the last key the scan saw. */
    const struct raw_sec *ss = &r->secs[r->keys[r->nkey - 1].sec];
    parse_section(ss->name, ss->len, &v->seal_kind, &v->seal_idx);
    return MPCE_PINS_READ_OK;
}

/*
 * One pass over iniparser's dictionary: every entry is a section the scan
 * saw or "section:key" with a known key. Pass one (fill 0) records simple
 * keys and counts cand.N/why.N; pass two (fill 1) records those.
 */
static enum mpce_pins_read_result dict_pass(struct rd *r, dictionary *d, struct vals *v,
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
            return rd_fail(r, MPCE_PINS_READ_CORRUPT, 0, "unexpected entry '%s'", k);
        sec_name(sec, sizeof(sec), kind, idx);
        if (kind == v->seal_kind && idx == v->seal_idx && strcmp(key, "seal") == 0)
            continue;
        int f = -1;
        size_t n;
        switch (kind) {
        case SEC_PINS:
            if ((f = key_index(key, k_pins_keys, COUNT(k_pins_keys))) >= 0 && !fill)
                v->hdr[f] = val;
            break;
        case SEC_MODULE:
            if ((f = key_index(key, k_module_keys, COUNT(k_module_keys))) >= 0 && !fill)
                v->mod[idx - 1][f] = val;
            break;
        case SEC_BLACKLIST:
            if ((f = key_index(key, k_blacklist_keys, COUNT(k_blacklist_keys))) >= 0 && !fill)
                v->bl[idx - 1][f] = val;
            break;
        case SEC_ROW: {
            struct row_tmp *rt = &v->row[idx - 1];
            if ((f = key_index(key, k_row_keys, COUNT(k_row_keys))) >= 0) {
                if (!fill)
                    rt->f[f] = val;
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
static enum mpce_pins_read_result check_cands(struct rd *r, struct vals *v)
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
            return rd_nomem(r);
    }
    return MPCE_PINS_READ_OK;
}

static enum mpce_pins_read_result missing(struct rd *r, const char *const *vals,
                                          const char *const *keys, size_t n, const char *sec)
{
    for (size_t i = 0; i < n; i++)
        if (!vals[i])
            return rd_bad(r, sec, NULL, "missing key '%s'", keys[i]);
    return MPCE_PINS_READ_OK;
}

#define SDUP(dst, src)                                                                   \
    do {                                                                                 \
        if (!((dst) = strdup(src)))                                                      \
            return rd_nomem(r);                                                          \
    } while (0)

static enum mpce_pins_read_result conv_header(struct rd *r, const struct vals *v,
                                              struct mpce_pins *out)
{
    enum mpce_pins_read_result res =
        missing(r, v->hdr, k_pins_keys, COUNT(k_pins_keys), "pins");
    if (res != MPCE_PINS_READ_OK)
        return res;
    if (!is_iso_date(v->hdr[2]))
        return rd_bad(r, "pins", "date", "'%s' is not a UTC time as YYYY-MM-DDTHH:MM:SSZ",
                      v->hdr[2]);
    if (!in_list(v->hdr[3], k_efforts, COUNT(k_efforts)))
        return rd_bad(r, "pins", "effort", "'%s' is not quick, measure, patient or imported",
                      v->hdr[3]);
    out->format = MPCE_PINS_FORMAT;
    SDUP(out->engine_version, v->hdr[1]);
    SDUP(out->date, v->hdr[2]);
    SDUP(out->effort, v->hdr[3]);
    SDUP(out->cpu, v->hdr[4]);
    return MPCE_PINS_READ_OK;
}

static enum mpce_pins_read_result conv_size_mtime(struct rd *r, const char *sec,
                                                  const char *size, const char *mtime,
                                                  uint64_t *so, int64_t *mo)
{
    if (parse_u64(size, so) != 0)
        return rd_bad(r, sec, "size", "'%s' is not a size in bytes", size);
    if (parse_i64(mtime, mo) != 0)
        return rd_bad(r, sec, "mtime", "'%s' is not a time in seconds", mtime);
    return MPCE_PINS_READ_OK;
}

static enum mpce_pins_read_result conv_module(struct rd *r, size_t i, const char *const *f,
                                              struct mpce_pins_module *m)
{
    char sec[64];
    sec_name(sec, sizeof(sec), SEC_MODULE, i + 1);
    enum mpce_pins_read_result res =
        missing(r, f, k_module_keys, COUNT(k_module_keys), sec);
    if (res == MPCE_PINS_READ_OK && !mpce_registry_valid_name(f[0]))
        res = rd_bad(r, sec, "plugin", "'%s' is not a plugin name", f[0]);
    if (res == MPCE_PINS_READ_OK)
        res = conv_size_mtime(r, sec, f[2], f[3], &m->size, &m->mtime);
    if (res == MPCE_PINS_READ_OK && *f[4] && !is_sha256_hex(f[4]))
        res = rd_bad(r, sec, "sha256", "expected 64 lowercase hex digits or \"\"");
    if (res != MPCE_PINS_READ_OK)
        return res;
    SDUP(m->plugin, f[0]);
    SDUP(m->path, f[1]);
    SDUP(m->sha256, f[4]);
    SDUP(m->devices, f[5]);
    return MPCE_PINS_READ_OK;
}

static enum mpce_pins_read_result conv_blacklist(struct rd *r, size_t i, const char *const *f,
                                                 struct mpce_pins_blacklist *b)
{
    char sec[64];
    sec_name(sec, sizeof(sec), SEC_BLACKLIST, i + 1);
    enum mpce_pins_read_result res =
        missing(r, f, k_blacklist_keys, COUNT(k_blacklist_keys), sec);
    if (res == MPCE_PINS_READ_OK)
        res = conv_size_mtime(r, sec, f[1], f[2], &b->size, &b->mtime);
    if (res != MPCE_PINS_READ_OK)
        return res;
    SDUP(b->path, f[0]);
    SDUP(b->reason, f[3]);
    return MPCE_PINS_READ_OK;
}

/* cand.N = "IMPL STATUS MEDIAN SPREAD", single spaces. */
static enum mpce_pins_read_result conv_cand(struct rd *r, const char *sec, size_t n,
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
    ok = ok && nt == 4 && mpce_registry_valid_name(tok[0]) &&
         in_list(tok[1], k_statuses, COUNT(k_statuses)) &&
         parse_time(tok[2], &c->median) == 0 && parse_time(tok[3], &c->spread) == 0;
    if (!ok)
        return rd_bad(r, sec, key,
                      "expected 'IMPL STATUS MEDIAN SPREAD' (STATUS ok, wrong, crashed, hung, "
                      "failed or declined; times finite, not negative), not '%.200s'", val);
    SDUP(c->impl, tok[0]);
    SDUP(c->status, tok[1]);
    SDUP(c->why, why);
    return MPCE_PINS_READ_OK;
}

static enum mpce_pins_read_result conv_row(struct rd *r, size_t i, const struct row_tmp *rt,
                                           struct mpce_pins_row *row)
{
    char sec[64];
    sec_name(sec, sizeof(sec), SEC_ROW, i + 1);
    const char *const *f = rt->f;
    enum mpce_pins_read_result res = missing(r, f, k_row_keys, COUNT(k_row_keys), sec);
    if (res != MPCE_PINS_READ_OK)
        return res;
    if (!*f[0])
        return rd_bad(r, sec, "key", "empty");
    for (int k = 2; k <= 3; k++)
        if (*f[k] && !mpce_registry_valid_name(f[k]))
            return rd_bad(r, sec, k_row_keys[k], "'%s' is not an implementation name", f[k]);
    if (!is_name_list(f[5]))
        return rd_bad(r, sec, "plugins", "expected plugin names separated by single spaces");
    SDUP(row->key, f[0]);
    SDUP(row->shape, f[1]);
    SDUP(row->winner, f[2]);
    SDUP(row->runner_up, f[3]);
    SDUP(row->verdict, f[4]);
    if (*f[5]) {
        size_t np = 1;
        for (const char *c = f[5]; *c; c++)
            np += *c == ' ';
        if (!(row->plugins = calloc(np, sizeof(*row->plugins))))
            return rd_nomem(r);
        const char *s = f[5];
        for (size_t k = 0; k < np; k++) {
            const char *sp = strchr(s, ' ');
            size_t len = sp ? (size_t)(sp - s) : strlen(s);
            if (!(row->plugins[k] = strndup(s, len)))
                return rd_nomem(r);
            row->n_plugins = k + 1;
            s += len + 1;
        }
    }
    if (rt->ncand) {
        if (!(row->cands = calloc(rt->ncand, sizeof(*row->cands))))
            return rd_nomem(r);
        row->n_cands = rt->ncand;
        for (size_t k = 0; k < rt->ncand; k++)
            if ((res = conv_cand(r, sec, k + 1, rt->cand[k], rt->why[k], &row->cands[k])) !=
                MPCE_PINS_READ_OK)
                return res;
    }
    return MPCE_PINS_READ_OK;
}

/* The checked dictionary into out (which the caller frees on failure). */
static enum mpce_pins_read_result convert(struct rd *r, dictionary *d, struct mpce_pins *out)
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
            res = rd_nomem(r);
        else
            out->n_modules = v.nmod;
    }
    for (size_t i = 0; res == MPCE_PINS_READ_OK && i < v.nmod; i++)
        res = conv_module(r, i, v.mod[i], &out->modules[i]);
    if (res == MPCE_PINS_READ_OK && v.nrow) {
        if (!(out->rows = calloc(v.nrow, sizeof(*out->rows))))
            res = rd_nomem(r);
        else
            out->n_rows = v.nrow;
    }
    for (size_t i = 0; res == MPCE_PINS_READ_OK && i < v.nrow; i++)
        res = conv_row(r, i, &v.row[i], &out->rows[i]);
    if (res == MPCE_PINS_READ_OK && v.nbl) {
        if (!(out->blacklist = calloc(v.nbl, sizeof(*out->blacklist))))
            res = rd_nomem(r);
        else
            out->n_blacklist = v.nbl;
    }
    for (size_t i = 0; res == MPCE_PINS_READ_OK && i < v.nbl; i++)
        res = conv_blacklist(r, i, v.bl[i], &out->blacklist[i]);
    vals_free(&v);
    return res;
}

/* The whole file from fd (at most PINS_MAX_BYTES), NUL-terminated. */
static enum mpce_pins_read_result slurp(struct rd *r, int fd, const struct stat *st,
                                        char **textp)
{
    if (st->st_size > (off_t)PINS_MAX_BYTES)
        return rd_fail(r, MPCE_PINS_READ_CORRUPT, 0,
                       "too large (%jd bytes, a pins file holds at most %u)",
                       (intmax_t)st->st_size, PINS_MAX_BYTES);
    size_t cap = (size_t)st->st_size + 1, len = 0;
    char *buf = malloc(cap + 1);
    if (!buf)
        return rd_nomem(r);
    for (;;) {
        if (len == cap) {
            if (cap > PINS_MAX_BYTES) {
                free(buf);
                return rd_fail(r, MPCE_PINS_READ_CORRUPT, 0,
                               "too large (a pins file holds at most %u bytes)",
                               PINS_MAX_BYTES);
            }
            size_t ncap = cap * 2 > PINS_MAX_BYTES + 1u ? PINS_MAX_BYTES + 1u : cap * 2;
            char *tmp = realloc(buf, ncap + 1);
            if (!tmp) {
                free(buf);
                return rd_nomem(r);
            }
            buf = tmp;
            cap = ncap;
        }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int err = errno;
            free(buf);
            errno = err;
            return rd_fail(r, MPCE_PINS_READ_ERROR, 0, "cannot read: %s", strerror(err));
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    if (memchr(buf, '\0', len)) {
        free(buf);
        return rd_fail(r, MPCE_PINS_READ_CORRUPT, 0, "contains NUL bytes: not a pins file");
    }
    *textp = buf;
    r->text = buf;
    r->len = len;
    return MPCE_PINS_READ_OK;
}

enum mpce_pins_read_result mpce_pins_read(const char *path, struct mpce_pins *out, char *why,
                                          size_t why_len)
{
    memset(out, 0, sizeof(*out));
    if (why && why_len)
        why[0] = '\0';
    struct rd r = {.path = path, .why = why, .why_len = why_len};
    /* O_NONBLOCK: a FIFO at the path must not block the open. */
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        int err = errno;
        if (err == ENOENT)
            return rd_fail(&r, MPCE_PINS_READ_MISSING, 0, "no such file");
        if (err == ELOOP)
            return rd_fail(&r, MPCE_PINS_READ_CORRUPT, 0,
                           "is a symbolic link: pins files are never read through links");
        return rd_fail(&r, MPCE_PINS_READ_ERROR, 0, "cannot open: %s", strerror(err));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        return rd_fail(&r, MPCE_PINS_READ_ERROR, 0, "cannot stat: %s", strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return rd_fail(&r, MPCE_PINS_READ_ERROR, 0, "is %s, not a pins file",
                       S_ISDIR(st.st_mode) ? "a directory" : "a device or special file");
    }
    char *text = NULL;
    enum mpce_pins_read_result res = slurp(&r, fd, &st, &text);
    if (res == MPCE_PINS_READ_OK)
        res = check_seal(&r);
    if (res == MPCE_PINS_READ_OK)
        res = raw_scan(&r);
    dictionary *d = NULL;
    if (res == MPCE_PINS_READ_OK) {
        /* iniparser reads by name: give it the descriptor's, so it parses
         * the file whose seal was checked, whatever the path names now. */
        char fd_name[64];
        if (mpce_fd_proc_name(fd, fd_name) != 0) {
            res = rd_fail(&r, MPCE_PINS_READ_ERROR, 0,
                          "cannot parse the checked file through /proc/self/fd: mount /proc");
        } else {
            pins_ini_msg[0] = '\0';
            iniparser_set_error_callback(pins_ini_error_cb);
            d = iniparser_load(fd_name);
            /* The text passed the line check: only running out of memory,
             * or a file changed in place since, makes iniparser fail. */
            if (!d && (strstr(pins_ini_msg, "memory") || strstr(pins_ini_msg, "cannot open")))
                res = rd_fail(&r, MPCE_PINS_READ_ERROR, 0, "%s", pins_ini_msg);
            else if (!d)
                res = rd_fail(&r, MPCE_PINS_READ_CORRUPT, 0, "changed while it was read (%s)",
                              pins_ini_msg[0] ? pins_ini_msg : "iniparser failed");
        }
    }
    if (res == MPCE_PINS_READ_OK)
        res = check_parsed(&r, d);
    if (res == MPCE_PINS_READ_OK) {
        locale_t c = c_locale();
        if (c == (locale_t)0) {
            res = rd_fail(&r, MPCE_PINS_READ_ERROR, 0, "cannot set up the C locale: %s",
                          strerror(errno));
        } else {
            locale_t old = uselocale(c);
            res = convert(&r, d, out);
            uselocale(old);
            freelocale(c);
        }
    }
    if (d)
        iniparser_freedict(d);
    close(fd);
    free(text);
    free(r.secs);
    free(r.keys);
    if (res != MPCE_PINS_READ_OK)
        mpce_pins_free(out);
    else if (why && why_len)
        why[0] = '\0';
    return res;
}
