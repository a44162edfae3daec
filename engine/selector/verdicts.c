/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The vet verdicts' cache (runtime/vet.h): one small text file per module
 * path, STATE/verdicts/<hash of the path>.txt beside the pins, written to a
 * temporary file and renamed into place like the pins, so a reader sees a
 * whole old file or a whole new one. The file opens with the fingerprint it
 * was made for, which must match line for line:
 *
 *   mpcengine-verdict 2
 *   path /usr/lib/.../aesni.so
 *   size 123456
 *   mtime 1700000000
 *   dev 2049
 *   inode 393222
 *   sha256 <64 hex>
 *   cpu <the selector's CPU signature>
 *   engine <engine version>
 *   env <16 hex: the MPCENGINE_* variables a module may read, 0 for none>
 *   verdict pass | verdict fail <reason>
 *   plugin <name>          (the plugin's name, once its entry point ran)
 *   late                   (failed in code only an enabled plugin runs)
 *   warning <text>         (passed, but kept descriptors after init)
 *   impl <name> pass | impl <name> fail <reason>    (any number)
 *   end
 *
 * A module replaced on disk (even by rename with the same size and mtime)
 * has another inode and usually other bytes; a new CPU or engine version
 * may change a self-test's outcome, and another feature mask (such as
 * MPCENGINE_AESNI_DISABLE) the implementations its probes offer: each makes
 * the entry stale, and the module is vetted again.
 *
 * Where no state directory can be written (a read-only container, a
 * service without a home), the same text is kept in this process's memory
 * instead, so that its later engines do not vet every module again.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/runtime/vet.h"
#include "engine/selector/pins_text.h"
#include "engine/selector/selector.h"

#define VERDICT_MAGIC "mpcengine-verdict 2\n"

extern char **environ;

/* The engine's own variables: they change what the engine does, never what
 * a module's probe sees. */
static int engine_variable(const char *entry)
{
    static const char *const own[] = {"MPCENGINE_CONF=", "MPCENGINE_PLUGIN_PATH=",
                                      "MPCENGINE_FORCE=", "MPCENGINE_LOG="};
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
        if (strncmp(entry, own[i], strlen(own[i])) == 0)
            return 1;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* FNV-1a over the MPCENGINE_* variables a module may read (a backend's
 * feature mask, say), sorted: another mask gives another verdict, since its
 * probes then offer other implementations. 0 with none set; -1 when memory
 * ran out. */
static int environment_hash(unsigned long long *out)
{
    size_t n = 0;
    for (char **e = environ; e && *e; e++)
        n += strncmp(*e, "MPCENGINE_", 10) == 0 && !engine_variable(*e);
    const char **vars = n ? malloc(n * sizeof(*vars)) : NULL;
    if (n && !vars)
        return -1;
    size_t k = 0;
    for (char **e = environ; e && *e && k < n; e++)
        if (strncmp(*e, "MPCENGINE_", 10) == 0 && !engine_variable(*e))
            vars[k++] = *e;
    if (k) /* qsort's base may not be NULL, even for no elements */
        qsort(vars, k, sizeof(*vars), by_name);
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < k; i++)
        for (const unsigned char *p = (const unsigned char *)vars[i];; p++) {
            h = (h ^ *p) * 0x100000001b3ull;
            if (!*p)
                break;
        }
    free(vars);
    *out = k ? (unsigned long long)h : 0;
    return 0;
}

/* The fingerprint block; -1 when a field holds a newline (nothing cached). */
static int fingerprint(const struct mpce_module_file *f, char *buf, size_t len)
{
    char cpu[512];
    unsigned long long env;
    mpce_signature_cpu(cpu, sizeof(cpu));
    if (strchr(f->path, '\n') || strchr(cpu, '\n') || !f->sha256[0] ||
        environment_hash(&env) != 0)
        return -1;
    int n = snprintf(buf, len,
                     VERDICT_MAGIC "path %s\nsize %llu\nmtime %lld\ndev %llu\ninode %llu\n"
                     "sha256 %s\ncpu %s\nengine %s\nenv %016llx\n",
                     f->path, f->size, f->mtime, f->dev, f->ino, f->sha256, cpu,
                     mpce_version(), env);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

/* FNV-1a of the path: names the file; the path inside is what is checked.
 * -1 where dir is too long for out: a truncated name would be some other
 * file, so the caller treats it as no verdict. */
static int file_name(const char *dir, const char *path, char *out, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)path; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    int w = snprintf(out, len, "%s/verdicts/%016llx.txt", dir, (unsigned long long)h);
    return w < 0 || (size_t)w >= len ? -1 : 0;
}

static int add_impl(struct mpce_verdict *v, const char *name, int pass, const char *reason)
{
    struct mpce_vet_impl *grown = realloc(v->impls, (v->n_impls + 1) * sizeof(*grown));
    if (!grown)
        return -1;
    v->impls = grown;
    struct mpce_vet_impl *im = &v->impls[v->n_impls++];
    snprintf(im->name, sizeof(im->name), "%s", name);
    im->pass = pass;
    snprintf(im->reason, sizeof(im->reason), "%s", reason ? reason : "");
    return 0;
}

int mpce_verdict_parse(char *body, struct mpce_verdict *v)
{
    int have_verdict = 0, ended = 0;
    for (char *line = body, *nl; line && *line && !ended; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (!nl)
            return -1; /* a cut-off line: a torn or foreign file */
        *nl = '\0';
        if (strcmp(line, "end") == 0) {
            ended = 1;
        } else if (strcmp(line, "verdict pass") == 0) {
            v->pass = have_verdict = 1;
        } else if (strncmp(line, "verdict fail ", 13) == 0) {
            if (!line[13])
                return -1; /* a fail says why; the writer never leaves it out */
            v->pass = 0;
            have_verdict = 1;
            snprintf(v->reason, sizeof(v->reason), "%s", line + 13);
        } else if (strncmp(line, "plugin ", 7) == 0) {
            if (!mpce_registry_valid_name(line + 7))
                return -1;
            snprintf(v->plugin, sizeof(v->plugin), "%s", line + 7);
        } else if (strcmp(line, "late") == 0) {
            v->late = 1;
        } else if (strncmp(line, "warning ", 8) == 0) {
            snprintf(v->warning, sizeof(v->warning), "%s", line + 8);
        } else if (strncmp(line, "impl ", 5) == 0) {
            char *name = line + 5, *sp = strchr(name, ' ');
            if (!sp)
                return -1;
            *sp = '\0';
            const char *rest = sp + 1;
            int pass = strcmp(rest, "pass") == 0;
            if (!pass && strncmp(rest, "fail ", 5) != 0)
                return -1;
            if (!mpce_registry_valid_name(name) ||
                add_impl(v, name, pass, pass ? "" : rest + 5) != 0)
                return -1;
        } else {
            return -1;
        }
    }
    return have_verdict && ended ? 0 : -1;
}

/* One line of text without newlines (reasons come from a module's words). */
static void put_line(FILE *out, const char *prefix, const char *text)
{
    fputs(prefix, out);
    for (const char *p = text; *p; p++)
        fputc(*p == '\n' || *p == '\r' ? ' ' : *p, out);
    fputc('\n', out);
}

/* The whole text of a verdict: its fingerprint, then its body. */
static void put_verdict(FILE *out, const char *want, const struct mpce_verdict *v)
{
    fputs(want, out);
    put_line(out, v->pass ? "verdict pass" : "verdict fail ", v->pass ? "" : v->reason);
    if (v->plugin[0])
        fprintf(out, "plugin %s\n", v->plugin);
    if (v->late && !v->pass)
        fputs("late\n", out);
    if (v->warning[0])
        put_line(out, "warning ", v->warning);
    for (size_t i = 0; i < v->n_impls; i++) {
        char prefix[128];
        snprintf(prefix, sizeof(prefix), "impl %s %s", v->impls[i].name,
                 v->impls[i].pass ? "pass" : "fail ");
        put_line(out, prefix, v->impls[i].pass ? "" : v->impls[i].reason);
    }
    fputs("end\n", out);
}

/* ---- in this process's memory, when no directory can be written ---------- */

/* Bounded: an application that loads ever new module files (it should
 * not) spawns helpers again rather than growing without end. */
#define MEMORY_MAX 256

struct remembered {
    char *text; /* fingerprint and body, as in a file */
    struct remembered *next;
};
static struct remembered *memory;
static unsigned n_memory;
static pthread_mutex_t memory_lock = PTHREAD_MUTEX_INITIALIZER;

static int read_memory(const char *want, struct mpce_verdict *v)
{
    size_t wl = strlen(want);
    char *body = NULL;
    pthread_mutex_lock(&memory_lock);
    for (struct remembered *r = memory; r; r = r->next)
        if (strncmp(r->text, want, wl) == 0) {
            body = strdup(r->text + wl);
            break;
        }
    pthread_mutex_unlock(&memory_lock);
    if (!body)
        return 0;
    memset(v, 0, sizeof(*v));
    int bad = mpce_verdict_parse(body, v) != 0;
    free(body);
    if (bad) {
        mpce_verdict_free(v);
        return 0;
    }
    v->cache = 1;
    snprintf(v->source, sizeof(v->source), "%s", MPCE_VERDICT_IN_MEMORY);
    return 1;
}

/* glibc's memstream can lose its buffer in fclose's final realloc and
 * still return 0, leaving text NULL: that is a shortage too, not an empty
 * verdict. */
char *mpce_verdict_text(const char *want, const struct mpce_verdict *v, size_t *len)
{
    char *text = NULL;
    *len = 0;
    FILE *out = open_memstream(&text, len);
    if (!out)
        return NULL;
    put_verdict(out, want, v);
    int bad = ferror(out);
    bad |= fclose(out) != 0;
    if (bad || text == NULL || *len == 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* 0 when kept; a newer verdict for the same fingerprint replaces the old. */
static int write_memory(const char *want, const struct mpce_verdict *v)
{
    size_t len;
    char *text = mpce_verdict_text(want, v, &len);
    if (!text)
        return -1;
    size_t wl = strlen(want);
    int kept = -1;
    pthread_mutex_lock(&memory_lock);
    for (struct remembered *r = memory; r && kept; r = r->next)
        if (strncmp(r->text, want, wl) == 0) {
            free(r->text);
            r->text = text;
            kept = 0;
        }
    if (kept && n_memory < MEMORY_MAX) {
        struct remembered *r = malloc(sizeof(*r));
        if (r) {
            *r = (struct remembered){text, memory};
            memory = r;
            n_memory++;
            kept = 0;
        }
    }
    pthread_mutex_unlock(&memory_lock);
    if (kept)
        free(text);
    return kept;
}

static int read_one(const mpce_engine *e, const char *dir, const char *want,
                    const struct mpce_module_file *f, struct mpce_verdict *v)
{
    char path[4200], why[256];
    if (file_name(dir, f->path, path, sizeof(path)) != 0)
        return 0;
    /* A privileged process trusts only what it could trust as configuration:
     * a cached pass skips the self-test. */
    int fd = e->cfg.privileged ? mpce_file_open_trusted(path, why, sizeof(why))
                               : open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return 0;
    /* Sized from the file: its impl lines grow with the module. A file
     * that is not a small regular one is not a verdict. */
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size > (1 << 24)) {
        close(fd);
        return 0;
    }
    size_t cap = (size_t)sb.st_size + 1;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        return 0;
    }
    size_t have = 0;
    ssize_t got;
    while (have < cap - 1 &&
           ((got = read(fd, buf + have, cap - 1 - have)) > 0 || (got < 0 && errno == EINTR)))
        have += got > 0 ? (size_t)got : 0;
    close(fd);
    buf[have] = '\0';
    size_t wl = strlen(want);
    if (have <= wl || memcmp(buf, want, wl) != 0) {
        free(buf);
        return 0; /* stale: another file, CPU or engine version */
    }
    memset(v, 0, sizeof(*v));
    int bad = mpce_verdict_parse(buf + wl, v) != 0;
    free(buf);
    if (bad) {
        mpce_verdict_free(v);
        return 0;
    }
    v->cache = 1;
    snprintf(v->source, sizeof(v->source), "%s", path);
    return 1;
}

int mpce_verdict_read(const mpce_engine *e, const struct mpce_module_file *f,
                      struct mpce_verdict *v)
{
    char want[8192], dirs[2][4096];
    if (fingerprint(f, want, sizeof(want)) != 0)
        return 0;
    size_t nd = mpce_selector_dirs(&e->cfg, dirs);
    for (size_t i = 0; i < nd; i++)
        if (read_one(e, dirs[i], want, f, v))
            return 1;
    return read_memory(want, v);
}

static int write_one(const char *dir, const char *want, const struct mpce_verdict *v,
                     const struct mpce_module_file *f, char *where, size_t len)
{
    char path[4200];
    if (file_name(dir, f->path, path, sizeof(path)) != 0) {
        snprintf(where, len, "%.900s: the directory name is too long for a verdict file "
                 "(set a shorter [tune] dir)", dir);
        return -1;
    }
    size_t n;
    char *text = mpce_verdict_text(want, v, &n);
    if (!text) {
        snprintf(where, len, "%.900s: out of memory", path);
        return -1;
    }
    /* Readable by all, like the pins: it says nothing secret. No hint: the
     * caller says that it is kept in memory instead. */
    int rc = mpce_state_file_replace(path, text, n, NULL, where, len);
    free(text);
    if (rc == 0)
        snprintf(where, len, "%s", path);
    return rc;
}

int mpce_verdict_write(const mpce_engine *e, const struct mpce_module_file *f,
                       const struct mpce_verdict *v, char *where, size_t len)
{
    char want[8192], dirs[2][4096];
    if (fingerprint(f, want, sizeof(want)) != 0) {
        snprintf(where, len, "%s: a path with a newline is never cached", f->path);
        return -1;
    }
    size_t nd = mpce_selector_dirs(&e->cfg, dirs);
    char why[2][4400] = {"", ""};
    for (size_t i = 0; i < nd; i++)
        if (write_one(dirs[i], want, v, f, why[i], sizeof(why[i])) == 0) {
            snprintf(where, len, "%s", why[i]);
            return 0;
        }
    snprintf(where, len, "%.2000s%s%.2000s", why[0], nd > 1 ? "; " : "", nd > 1 ? why[1] : "");
    return write_memory(want, v) == 0 ? 1 : -1;
}

void mpce_verdict_forget(const mpce_engine *e, const struct mpce_module_file *f)
{
    char want[8192], dirs[2][4096], path[4200];
    size_t nd = mpce_selector_dirs(&e->cfg, dirs);
    for (size_t i = 0; i < nd; i++) {
        if (file_name(dirs[i], f->path, path, sizeof(path)) == 0)
            unlink(path);
    }
    if (fingerprint(f, want, sizeof(want)) != 0)
        return;
    const size_t wl = strlen(want);
    pthread_mutex_lock(&memory_lock);
    for (struct remembered **at = &memory; *at;) {
        struct remembered *r = *at;
        if (strncmp(r->text, want, wl) == 0) {
            *at = r->next;
            free(r->text);
            free(r);
            n_memory--;
        } else {
            at = &r->next;
        }
    }
    pthread_mutex_unlock(&memory_lock);
}

void mpce_verdict_memory_clear(void)
{
    pthread_mutex_lock(&memory_lock);
    while (memory) {
        struct remembered *r = memory;
        memory = r->next;
        free(r->text);
        free(r);
    }
    n_memory = 0;
    pthread_mutex_unlock(&memory_lock);
}

void mpce_verdict_free(struct mpce_verdict *v)
{
    free(v->impls);
    v->impls = NULL;
    v->n_impls = 0;
}
