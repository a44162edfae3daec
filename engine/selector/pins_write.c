/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Writing the pins file (pins.h): the whole text is made and sealed in
 * memory first, then written to a temporary file beside the target and
 * renamed over it. The layout is in pins_text.h.
 *
 * iniparser 4.1 has no escapes and reads lines of at most 1022 bytes, so the
 * writer (1) writes every string double-quoted with '"', '\\' and control
 * characters (CR, LF, ...) replaced by '?': reasons and verdicts are for
 * people, and a path or name with such characters then simply matches
 * nothing, which makes its rows stale, which is safe; (2) keeps every line
 * within PINS_MAX_LINE bytes: text for people (verdict, why, reason) is cut
 * short with "...", while a longer identifying value (a path, a key, the CPU
 * signature...) makes the write fail rather than be stored altered. The
 * writer refuses any value the reader would reject (the checks of
 * pins_text.h), so what it writes always reads back.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine/selector/pins.h"
#include "engine/selector/pins_text.h"

/* The text being made. After the first refusal or failed allocation every
 * further put is dropped, so the generators need not check as they go. */
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

/* "PATH: cannot write: Cannot allocate memory", -1 and errno ENOMEM. */
static int fail_nomem(const char *path, char *why, size_t why_len)
{
    mpce_pins_why(why, why_len, "%s: cannot write: %s", path, strerror(ENOMEM));
    errno = ENOMEM;
    return -1;
}

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

/* "PATH: cannot write [sec] key: msg"; only the first refusal is kept. */
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
    mpce_pins_why(w->why, w->why_len, "%s: cannot write %s %s: %s", w->path, w->sec, key, msg);
}

/* Refuse value unless it passes check, one of pins_text.h's. */
static void wr_check(struct wr *w, const char *key, const char *value,
                     const char *(*check)(const char *))
{
    const char *wanted = check(value);
    if (wanted)
        wr_refuse(w, key, "'%.80s' is not %s", value, wanted);
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

/* key = "value" for a value that must pass check; NULL stands for "". */
static void wr_checked_str(struct wr *w, const char *key, const char *value,
                           const char *(*check)(const char *))
{
    const char *v = value ? value : "";
    wr_check(w, key, v, check);
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
    wr_checked_str(w, "date", p->date, mpce_pins_check_date);
    wr_checked_str(w, "effort", p->effort, mpce_pins_check_effort);
    wr_str(w, "cpu", p->cpu, 0);
    /* No default: a file must not claim a policy its measurer did not say. */
    if (!p->policy || !*p->policy)
        wr_refuse(w, "policy", "missing: constant-time or variable-time "
                  "(mpce_pins_set_policy)");
    wr_checked_str(w, "policy", p->policy, mpce_pins_check_policy);
}

static void wr_module(struct wr *w, size_t index, const struct mpce_pins_module *m)
{
    wr_section(w, "module", index);
    wr_checked_str(w, "plugin", m->plugin, mpce_pins_check_name);
    wr_str(w, "path", m->path, 0);
    wr_printf(w, "size = %" PRIu64 "\n", m->size);
    wr_printf(w, "mtime = %" PRId64 "\n", m->mtime);
    wr_checked_str(w, "sha256", m->sha256, mpce_pins_check_sha256);
    wr_str(w, "devices", m->devices, 0);
}

/* plugins = "a b c" */
static void wr_plugins(struct wr *w, const struct mpce_pins_row *r)
{
    size_t total = 0;
    for (size_t i = 0; i < r->n_plugins; i++) {
        const char *n = r->plugins[i] ? r->plugins[i] : "";
        wr_check(w, "plugins", n, mpce_pins_check_name);
        total += strlen(n) + 1;
    }
    if (w->bad)
        return;
    char *list = malloc(total + 1);
    if (!list) {
        w->nomem = 1;
        return;
    }
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
}

/* cand.N = "IMPL STATUS MEDIAN SPREAD" and why.N = "...". */
static void wr_cand(struct wr *w, size_t n, const struct mpce_pins_cand *c)
{
    char key[32];
    snprintf(key, sizeof(key), "cand.%zu", n);
    const char *impl = c->impl ? c->impl : "";
    const char *status = c->status ? c->status : "";
    wr_check(w, key, impl, mpce_pins_check_name);
    wr_check(w, key, status, mpce_pins_check_status);
    if (!mpce_pins_valid_time(c->median) || !mpce_pins_valid_time(c->spread))
        wr_refuse(w, key, "median %g and spread %g must be finite and not negative",
                  c->median, c->spread);
    wr_printf(w, "%s = \"%s %s %.6e %.6e\"\n", key, impl, status, c->median, c->spread);
    snprintf(key, sizeof(key), "why.%zu", n);
    wr_str(w, key, c->why, 1);
}

static void wr_row(struct wr *w, size_t index, const struct mpce_pins_row *r)
{
    wr_section(w, "row", index);
    wr_checked_str(w, "key", r->key, mpce_pins_check_row_key);
    wr_str(w, "shape", r->shape, 0);
    wr_checked_str(w, "winner", r->winner, mpce_pins_check_optional_name);
    wr_checked_str(w, "runner_up", r->runner_up, mpce_pins_check_optional_name);
    wr_str(w, "verdict", r->verdict, 1);
    wr_plugins(w, r);
    for (size_t i = 0; i < r->n_cands; i++)
        wr_cand(w, i + 1, &r->cands[i]);
    /* Optional: slice_min only where the winner's threshold was measured,
     * slice_verdict wherever there is one (a threshold that could not be
     * measured keeps its reason). */
    if (r->slice_min == MPCE_PINS_NEVER)
        wr_printf(w, "slice_min = never\n");
    else if (r->slice_min != 0)
        wr_printf(w, "slice_min = %" PRIu64 "\n", r->slice_min);
    if (r->slice_verdict && *r->slice_verdict)
        wr_str(w, "slice_verdict", r->slice_verdict, 1);
    if (r->knobs && *r->knobs)
        wr_str(w, "knobs", r->knobs, 0);
    if (r->knob_verdict && *r->knob_verdict)
        wr_str(w, "knob_verdict", r->knob_verdict, 1);
    /* Format 3: a device implementation's crossover, where one was found,
     * and how the search went wherever it ran. */
    if (r->crossover != 0) {
        wr_printf(w, "crossover = %" PRIu64 "\n", r->crossover);
        wr_checked_str(w, "crossover_impl", r->crossover_impl, mpce_pins_check_name);
    }
    if (r->crossover_verdict && *r->crossover_verdict)
        wr_str(w, "crossover_verdict", r->crossover_verdict, 1);
    char key[32], msg[400];
    int bad = mpce_pins_check_row(r, key, sizeof(key), msg, sizeof(msg));
    if (bad < 0)
        w->nomem = 1;
    else if (bad)
        wr_refuse(w, key, "%s", msg);
}

/* What only the whole file shows: a plugin's module or a row's key twice
 * (the reader could not tell which one is meant). */
static void wr_unique(struct wr *w, const struct mpce_pins *p)
{
    size_t first = 0, again = 0;
    int dup = mpce_pins_find_dup(p->modules, p->n_modules, sizeof(*p->modules),
                                 offsetof(struct mpce_pins_module, plugin), &first, &again);
    if (dup > 0) {
        snprintf(w->sec, sizeof(w->sec), "[module.%zu]", again + 1);
        wr_refuse(w, "plugin", "'%.80s' is also the plugin of [module.%zu]",
                  p->modules[again].plugin ? p->modules[again].plugin : "", first + 1);
    }
    if (dup == 0)
        dup = mpce_pins_find_dup(p->rows, p->n_rows, sizeof(*p->rows),
                                 offsetof(struct mpce_pins_row, key), &first, &again);
    if (dup > 0) {
        snprintf(w->sec, sizeof(w->sec), "[row.%zu]", again + 1);
        wr_refuse(w, "key", "'%.80s' is also the key of [row.%zu]",
                  p->rows[again].key ? p->rows[again].key : "", first + 1);
    }
    if (dup < 0)
        w->nomem = 1;
}

static void wr_blacklist(struct wr *w, size_t index, const struct mpce_pins_blacklist *b)
{
    wr_section(w, "blacklist", index);
    wr_str(w, "path", b->path, 0);
    wr_printf(w, "size = %" PRIu64 "\n", b->size);
    wr_printf(w, "mtime = %" PRId64 "\n", b->mtime);
    wr_str(w, "reason", b->reason, 1);
}

/* The whole text, sealed, in w->buf; 0, or -1 with errno and why set. */
static int wr_text(struct wr *w, const struct mpce_pins *p)
{
    locale_t c = mpce_pins_c_locale();
    if (c == (locale_t)0) {
        mpce_pins_why(w->why, w->why_len, "%s: cannot set up the C locale: %s", w->path,
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
    wr_unique(w, p);
    wr_put(w, "\n", 1);
    uselocale(old);
    freelocale(c);
    if (w->bad) {
        errno = EINVAL;
        return -1;
    }
    if (w->nomem)
        return fail_nomem(w->path, w->why, w->why_len);
    if (w->len > PINS_MAX_BYTES - PINS_SEAL_LINE_LEN) {
        mpce_pins_why(w->why, w->why_len, "%s: cannot write: %zu bytes, more than a pins "
                      "file holds (%u)", w->path, w->len, PINS_MAX_BYTES);
        errno = EFBIG;
        return -1;
    }
    char hex[65];
    if (mpce_pins_seal_hex(w->buf, w->len, hex) != 0) {
        mpce_pins_why(w->why, w->why_len, "%s: cannot seal: OpenSSL SHA-256 failed: check "
                      "the libcrypto installation", w->path);
        errno = EIO;
        return -1;
    }
    wr_printf(w, PINS_SEAL_PREFIX "%s\"\n", hex);
    return w->nomem ? fail_nomem(w->path, w->why, w->why_len) : 0;
}

/* The directory of path and a temporary name beside it, ".NAME.XXXXXX"
 * for mkostemp, both allocated. 0, or -1 with errno and why set. */
static int temp_names(const char *path, char **dirp, char **tmpp, char *why, size_t why_len)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dlen = slash ? (slash == path ? 1 : (size_t)(slash - path)) : 1;
    size_t tlen = strlen(path) + 16;
    char *dir = malloc(dlen + 1);
    char *tmp = malloc(tlen);
    if (!dir || !tmp) {
        free(dir);
        free(tmp);
        return fail_nomem(path, why, why_len);
    }
    if (slash)
        memcpy(dir, path, dlen);
    else
        dir[0] = '.';
    dir[dlen] = '\0';
    snprintf(tmp, tlen, "%.*s.%s.XXXXXX", (int)(base - path), path, base);
    *dirp = dir;
    *tmpp = tmp;
    if (!*base) {
        mpce_pins_why(why, why_len, "%s: cannot write: names a directory, not a file", path);
        errno = EISDIR;
        return -1;
    }
    return 0;
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

/* buf into a new temporary file tmp (its XXXXXX replaced), 0644, on disk,
 * then renamed over path; the temporary is removed on failure. 0, or -1
 * with errno and why set. */
static int replace_file(const char *path, char *tmp, const char *dir, const char *buf,
                        size_t len, const char *(*hint)(int err), char *why, size_t why_len)
{
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        mpce_pins_why(why, why_len, "%s: cannot create a temporary file in %s: %s%s", path,
                      dir, strerror(err), hint ? hint(err) : "");
        errno = err;
        return -1;
    }
    const char *what = NULL;
    if (write_all(fd, buf, len) != 0)
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
    if (what)
        mpce_pins_why(why, why_len, "%s: %s of %s failed: %s%s", path, what, tmp,
                      strerror(errno), hint ? hint(errno) : "");
    else if (rename(tmp, path) != 0)
        mpce_pins_why(why, why_len, "%s: cannot rename %s into place: %s%s", path, tmp,
                      strerror(errno), hint ? hint(errno) : "");
    else
        return 0;
    int err = errno;
    unlink(tmp);
    errno = err;
    return -1;
}

/* The rename itself must reach the disk. Some file systems cannot fsync a
 * directory (EINVAL): nothing more can be done there. */
static int sync_dir(const char *path, const char *dir, char *why, size_t why_len)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = dfd < 0 || (fsync(dfd) != 0 && errno != EINVAL) ? -1 : 0;
    int err = errno;
    if (rc != 0)
        mpce_pins_why(why, why_len, "%s: written, but fsync of directory %s failed: %s", path,
                      dir, strerror(err));
    if (dfd >= 0)
        close(dfd);
    errno = err;
    return rc;
}

/* A writer killed between its temporary file and the rename leaves the
 * temporary behind. Ones over an hour old are nobody's any more (a write
 * takes milliseconds): they are removed, so a directory of pins does not
 * fill up with them. Best effort: failures change nothing. */
#define STALE_TEMP_S 3600

static void remove_stale_temps(const char *dir, const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char prefix[300];
    int plen = snprintf(prefix, sizeof(prefix), ".%s.", base);
    if (plen <= 0 || (size_t)plen >= sizeof(prefix))
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    const time_t now = time(NULL);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        struct stat sb;
        if (strncmp(de->d_name, prefix, (size_t)plen) != 0 || strlen(de->d_name) != (size_t)plen + 6)
            continue;
        if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode) &&
            sb.st_mtime < now - STALE_TEMP_S)
            unlinkat(dirfd(d), de->d_name, 0);
    }
    closedir(d);
}

int mpce_state_file_replace(const char *path, const char *buf, size_t len,
                            const char *(*hint)(int err), char *why, size_t why_len)
{
    char *dir = NULL, *tmp = NULL;
    int rc = -1;
    if (temp_names(path, &dir, &tmp, why, why_len) == 0 &&
        mpce_pins_make_dir(dir, path, why, why_len) == 0 &&
        (remove_stale_temps(dir, path), 1) &&
        replace_file(path, tmp, dir, buf, len, hint, why, why_len) == 0 &&
        sync_dir(path, dir, why, why_len) == 0)
        rc = 0;
    int err = errno;
    free(dir);
    free(tmp);
    errno = err;
    if (rc == 0 && why && why_len)
        why[0] = '\0';
    return rc;
}

int mpce_pins_write(const char *path, const struct mpce_pins *p, char *why, size_t why_len)
{
    struct wr w = {.path = path, .why = why, .why_len = why_len};
    int rc = -1;
    if (wr_text(&w, p) == 0)
        rc = mpce_state_file_replace(path, w.buf, w.len, mpce_pins_write_hint, why, why_len);
    int err = errno;
    free(w.buf);
    errno = err;
    return rc;
}
