/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pins file's raw text, before iniparser sees it (the reading and
 * converting are pins_read.c's). The file is read whole through the one
 * descriptor iniparser parses afterwards; the seal is checked on those
 * bytes; then the text is scanned line by line as iniparser reads it but
 * stricter, and each section and key indexed with its line, so that the
 * reader can check iniparser's dictionary against the sealed text and
 * name the line of whatever it refuses. Duplicates are refused here, since
 * iniparser would silently merge them.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/selector/pins.h"
#include "engine/selector/pins_text.h"

enum mpce_pins_read_result mpce_pins_rd_fail(struct pins_rd *r, enum mpce_pins_read_result res,
                                             unsigned line, const char *fmt, ...)
{
    char msg[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (line)
        mpce_pins_why(r->why, r->why_len, "%s:%u: %s", r->path, line, msg);
    else
        mpce_pins_why(r->why, r->why_len, "%s: %s", r->path, msg);
    return res;
}

int mpce_pins_span_cmp(const char *a, size_t al, const char *b, size_t bl)
{
    int c = strncasecmp(a, b, al < bl ? al : bl);
    return c ? c : (al > bl) - (al < bl);
}

enum mpce_pins_read_result mpce_pins_rd_nomem(struct pins_rd *r)
{
    errno = ENOMEM;
    return mpce_pins_rd_fail(r, MPCE_PINS_READ_ERROR, 0, "%s", strerror(ENOMEM));
}

static void trim(const char **b, const char **e)
{
    while (*b < *e && (**b == ' ' || **b == '\t'))
        (*b)++;
    while (*e > *b && ((*e)[-1] == ' ' || (*e)[-1] == '\t'))
        (*e)--;
}

static int push_sec(struct pins_rd *r, const char *name, size_t len, unsigned line)
{
    if (r->nsec == r->capsec) {
        size_t cap = r->capsec ? r->capsec * 2 : 64;
        struct pins_raw_sec *tmp = realloc(r->secs, cap * sizeof(*tmp));
        if (!tmp)
            return -1;
        r->secs = tmp;
        r->capsec = cap;
    }
    r->secs[r->nsec++] = (struct pins_raw_sec){name, len, line};
    return 0;
}

static int push_key(struct pins_rd *r, size_t sec, const char *name, size_t len, const char *val,
                    size_t vlen, unsigned line)
{
    if (r->nkey == r->capkey) {
        size_t cap = r->capkey ? r->capkey * 2 : 256;
        struct pins_raw_key *tmp = realloc(r->keys, cap * sizeof(*tmp));
        if (!tmp)
            return -1;
        r->keys = tmp;
        r->capkey = cap;
    }
    r->keys[r->nkey++] = (struct pins_raw_key){sec, name, len, val, vlen, line};
    return 0;
}

static int cmp_raw_sec(const void *a, const void *b)
{
    const struct pins_raw_sec *x = a, *y = b;
    int c = mpce_pins_span_cmp(x->name, x->len, y->name, y->len);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

static int cmp_raw_key(const void *a, const void *b)
{
    const struct pins_raw_key *x = a, *y = b;
    if (x->sec != y->sec)
        return x->sec < y->sec ? -1 : 1;
    int c = mpce_pins_span_cmp(x->name, x->len, y->name, y->len);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* Sections and keys that iniparser would merge. */
static enum mpce_pins_read_result raw_duplicates(struct pins_rd *r)
{
    enum mpce_pins_read_result res = MPCE_PINS_READ_OK;
    if (r->nsec > 1) {
        struct pins_raw_sec *s = malloc(r->nsec * sizeof(*s));
        if (!s)
            return mpce_pins_rd_nomem(r);
        memcpy(s, r->secs, r->nsec * sizeof(*s));
        qsort(s, r->nsec, sizeof(*s), cmp_raw_sec);
        for (size_t i = 1; i < r->nsec && res == MPCE_PINS_READ_OK; i++)
            if (mpce_pins_span_cmp(s[i - 1].name, s[i - 1].len, s[i].name, s[i].len) == 0)
                res = mpce_pins_rd_fail(r, MPCE_PINS_READ_CORRUPT, s[i].line,
                                        "[%.*s] appears twice (also at line %u)", (int)s[i].len,
                                        s[i].name, s[i - 1].line);
        free(s);
    }
    if (res == MPCE_PINS_READ_OK && r->nkey > 1) {
        struct pins_raw_key *k = malloc(r->nkey * sizeof(*k));
        if (!k)
            return mpce_pins_rd_nomem(r);
        memcpy(k, r->keys, r->nkey * sizeof(*k));
        qsort(k, r->nkey, sizeof(*k), cmp_raw_key);
        for (size_t i = 1; i < r->nkey && res == MPCE_PINS_READ_OK; i++)
            if (k[i - 1].sec == k[i].sec &&
                mpce_pins_span_cmp(k[i - 1].name, k[i - 1].len, k[i].name, k[i].len) == 0)
                res = mpce_pins_rd_fail(r, MPCE_PINS_READ_CORRUPT, k[i].line,
                                        "[%.*s] %.*s: set twice (also at line %u)",
                                        (int)r->secs[k[i].sec].len, r->secs[k[i].sec].name,
                                        (int)k[i].len, k[i].name, k[i - 1].line);
        free(k);
    }
    return res;
}

/* Section and key names the engine writes are ASCII; iniparser lowercases
 * names bytewise through a signed char, so for other bytes its names and
 * these need not agree (found by fuzz_pins). Values may hold any UTF-8. */
static int ascii_name(const char *b, const char *e)
{
    for (; b < e; b++)
        if ((unsigned char)*b >= 0x80)
            return 0;
    return 1;
}

/*
 * The text line by line, as iniparser reads it but stricter: blank lines,
 * # or ; comments, [section] and key = value, where value is "..." without
 * '"' inside or a bare word without quotes, ';' or '#' (which iniparser
 * would cut it at); names in ASCII; no control characters, no line iniparser would join to
 * the next (a trailing backslash) or find too long; no duplicates.
 */
static enum mpce_pins_read_result raw_scan(struct pins_rd *r)
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
            return mpce_pins_rd_fail(r, MPCE_PINS_READ_CORRUPT, line, "longer than %d bytes",
                                     PINS_MAX_LINE);
        for (const char *q = p; q < eol; q++)
            if ((unsigned char)*q < 0x20 || *q == 0x7f)
                return mpce_pins_rd_fail(r, MPCE_PINS_READ_CORRUPT, line,
                                         "control character (byte 0x%02x)", (unsigned char)*q);
        const char *b = p, *e = eol;
        p = eol + 1;
        trim(&b, &e);
        if (b == e)
            continue;
        /* Before comments: iniparser joins any line that ends so, a
         * comment too, and the next line would vanish into it (found by
         * fuzz_pins). */
        if (e[-1] == '\\')
            return mpce_pins_rd_fail(r, MPCE_PINS_READ_CORRUPT, line,
                                     "ends in a backslash (would continue on the next line)");
        if (*b == '#' || *b == ';')
            continue;
        if (*b == '[') {
            const char *nb = b + 1, *ne = e - 1;
            if (e - b < 2 || *ne != ']')
                return mpce_pins_rd_fail(r, MPCE_PINS_READ_CORRUPT, line,
                                         "expected [section], key = value or a # comment");
            trim(&nb, &ne);
            if (nb == ne || memchr(nb, ':', (size_t)(ne - nb)) ||
                memchr(nb, '[', (size_t)(ne - nb)) || memchr(nb, ']', (size_t)(ne - nb)) ||
                !ascii_name(nb, ne))
                return mpce_pins_rd_fail(r, MPCE_PINS_READ_CORRUPT, line, "malformed section name");
            if (push_sec(r, nb, (size_t)(ne - nb), line))
                return mpce_pins_rd_nomem(r);
            cur = r->nsec - 1;
            continue;
        }
        const char *eq = memchr(b, '=', (size_t)(e - b));
        if (!eq)
            return mpce_pins_rd_fail(r, MPCE_PINS_READ_CORRUPT, line,
                                     "expected [section], key = value or a # comment");
        const char *kb = b, *ke = eq, *vb = eq + 1, *ve = e;
        trim(&kb, &ke);
        trim(&vb, &ve);
        if (kb == ke || memchr(kb, ':', (size_t)(ke - kb)) || !ascii_name(kb, ke))
            return mpce_pins_rd_fail(r, MPCE_PINS_READ_CORRUPT, line, "malformed key name");
        size_t vl = (size_t)(ve - vb);
        int ok;
        if (vl && *vb == '"')
            ok = vl >= 2 && ve[-1] == '"' && !memchr(vb + 1, '"', vl - 2);
        else
            ok = vl && !memchr(vb, '"', vl) && !memchr(vb, '\'', vl) &&
                 !memchr(vb, ';', vl) && !memchr(vb, '#', vl);
        if (!ok)
            return mpce_pins_rd_fail(r, MPCE_PINS_READ_CORRUPT, line,
                                     "%.*s: expected a number or a \"string\" without '\"' inside",
                                     (int)(ke - kb), kb);
        if (cur == SIZE_MAX)
            return mpce_pins_rd_fail(r, MPCE_PINS_READ_CORRUPT, line, "%.*s: outside any section",
                                     (int)(ke - kb), kb);
        if (*vb == '"') {
            vb++;
            vl -= 2;
        }
        if (push_key(r, cur, kb, (size_t)(ke - kb), vb, vl, line))
            return mpce_pins_rd_nomem(r);
    }
    return raw_duplicates(r);
}

/* The seal line must end the file and match the bytes before it. */
static enum mpce_pins_read_result check_seal(struct pins_rd *r)
{
    const char *t = r->text;
    size_t len = r->len;
    size_t at = len >= PINS_SEAL_LINE_LEN ? len - PINS_SEAL_LINE_LEN : 0;
    int shaped = len >= PINS_SEAL_LINE_LEN && (at == 0 || t[at - 1] == '\n') &&
                 memcmp(t + at, PINS_SEAL_PREFIX, PINS_SEAL_PREFIX_LEN) == 0 &&
                 mpce_pins_is_hex(t + at + PINS_SEAL_PREFIX_LEN, 64) &&
                 t[len - 2] == '"' && t[len - 1] == '\n';
    if (!shaped) {
        /* A seal line followed by more text, or none at all. */
        unsigned line = 1;
        for (size_t i = 0; i < len; i++) {
            if ((i == 0 || t[i - 1] == '\n') && len - i >= PINS_SEAL_PREFIX_LEN &&
                memcmp(t + i, PINS_SEAL_PREFIX, PINS_SEAL_PREFIX_LEN) == 0)
                return mpce_pins_rd_fail(r, MPCE_PINS_READ_CORRUPT, line,
                                         "text after the seal line (edited by hand or torn)");
            if (t[i] == '\n')
                line++;
        }
        return mpce_pins_rd_fail(r, MPCE_PINS_READ_CORRUPT, 0,
                                 "no seal line at the end (not written by the selector, or torn)");
    }
    char hex[65];
    if (mpce_pins_seal_hex(t, at, hex) != 0)
        return mpce_pins_rd_fail(r, MPCE_PINS_READ_ERROR, 0,
                                 "cannot check the seal: OpenSSL SHA-256 failed: check the "
                                 "libcrypto installation");
    if (memcmp(hex, t + at + PINS_SEAL_PREFIX_LEN, 64) != 0)
        return mpce_pins_rd_fail(r, MPCE_PINS_READ_CORRUPT, 0,
                                 "seal does not match the contents (edited by hand or torn)");
    return MPCE_PINS_READ_OK;
}

/* The whole file from fd (at most PINS_MAX_BYTES), NUL-terminated, into r->text. */
static enum mpce_pins_read_result slurp(struct pins_rd *r, int fd, const struct stat *st)
{
    if (st->st_size > (off_t)PINS_MAX_BYTES)
        return mpce_pins_rd_fail(r, MPCE_PINS_READ_CORRUPT, 0,
                                 "too large (%jd bytes, a pins file holds at most %u)",
                                 (intmax_t)st->st_size, PINS_MAX_BYTES);
    size_t cap = (size_t)st->st_size + 1, len = 0;
    char *buf = malloc(cap + 1);
    if (!buf)
        return mpce_pins_rd_nomem(r);
    for (;;) {
        if (len == cap) {
            if (cap > PINS_MAX_BYTES) {
                free(buf);
                return mpce_pins_rd_fail(r, MPCE_PINS_READ_CORRUPT, 0,
                                         "too large (a pins file holds at most %u bytes)",
                                         PINS_MAX_BYTES);
            }
            size_t ncap = cap * 2 > PINS_MAX_BYTES + 1u ? PINS_MAX_BYTES + 1u : cap * 2;
            char *tmp = realloc(buf, ncap + 1);
            if (!tmp) {
                free(buf);
                return mpce_pins_rd_nomem(r);
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
            return mpce_pins_rd_fail(r, MPCE_PINS_READ_ERROR, 0, "cannot read: %s", strerror(err));
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    if (memchr(buf, '\0', len)) {
        free(buf);
        return mpce_pins_rd_fail(r, MPCE_PINS_READ_CORRUPT, 0,
                                 "contains NUL bytes: not a pins file");
    }
    r->text = buf;
    r->len = len;
    return MPCE_PINS_READ_OK;
}

/* O_NONBLOCK: a FIFO at the path must not block the open, and what is
 * opened is then checked to be a regular file. */
static enum mpce_pins_read_result open_file(struct pins_rd *r, int *fdp, struct stat *st)
{
    int fd = open(r->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        int err = errno;
        if (err == ENOENT)
            return mpce_pins_rd_fail(r, MPCE_PINS_READ_MISSING, 0, "no such file");
        if (err == ELOOP)
            return mpce_pins_rd_fail(r, MPCE_PINS_READ_CORRUPT, 0,
                                     "is a symbolic link: pins files are never read through links");
        return mpce_pins_rd_fail(r, MPCE_PINS_READ_ERROR, 0, "cannot open: %s", strerror(err));
    }
    if (fstat(fd, st) != 0) {
        int err = errno;
        close(fd);
        return mpce_pins_rd_fail(r, MPCE_PINS_READ_ERROR, 0, "cannot stat: %s", strerror(err));
    }
    if (!S_ISREG(st->st_mode)) {
        close(fd);
        return mpce_pins_rd_fail(r, MPCE_PINS_READ_ERROR, 0, "is %s, not a pins file",
                                 S_ISDIR(st->st_mode) ? "a directory" : "a device or special file");
    }
    *fdp = fd;
    return MPCE_PINS_READ_OK;
}

enum mpce_pins_read_result mpce_pins_scan(struct pins_rd *r, int *fdp)
{
    struct stat st;
    *fdp = -1;
    enum mpce_pins_read_result res = open_file(r, fdp, &st);
    if (res == MPCE_PINS_READ_OK)
        res = slurp(r, *fdp, &st);
    if (res == MPCE_PINS_READ_OK)
        res = check_seal(r);
    if (res == MPCE_PINS_READ_OK)
        res = raw_scan(r);
    return res;
}
