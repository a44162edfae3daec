/* Plugin discovery, file safety checks and descriptor validation. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/loader.h"

#define MAX_IMPLS 256
#define MAX_NAME 63

/* Does struct_size cover `field` of `type`? Checked before every read, so a
 * module built against an older, shorter struct is never read past its end. */
#define HAS_FIELD(p, type, field) \
    ((p)->struct_size >= offsetof(type, field) + sizeof(((type *)0)->field))

static const size_t vtable_v1_size[MPCE_PRIM_COUNT] = {
    sizeof(struct mpce_prg_vtable),
    sizeof(struct mpce_ntt_vtable),
    sizeof(struct mpce_lpn_vtable),
    sizeof(struct mpce_dpf_vtable),
};

static void set_reason(struct mpce_module *m, int broken, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_reason(struct mpce_module *m, int broken, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->reason, sizeof(m->reason), fmt, ap);
    va_end(ap);
    m->skipped = 1;
    m->broken = broken;
}

static int valid_name(const char *s)
{
    size_t len = s ? strnlen(s, MAX_NAME + 1) : 0;
    if (len == 0 || len > MAX_NAME)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.' || c == '+'))
            return 0;
    }
    return 1;
}

static int name_taken(mpce_engine *e, const char *name)
{
    for (size_t i = 0; i < e->n_modules; i++) {
        const struct mpce_module *o = e->modules[i];
        if (!o->skipped && o->name && strcmp(o->name, name) == 0)
            return 1;
    }
    return 0;
}

/* Checks of the descriptor itself; 0 or -1 with m->reason set. */
static int check_descriptor(mpce_engine *e, struct mpce_module *m, const struct mpce_plugin *d)
{
    if (!d) {
        set_reason(m, 1, "%s returned no descriptor (NULL): the plugin is broken",
                   MPCE_PLUGIN_ENTRY_SYMBOL);
        return -1;
    }
    if (!HAS_FIELD(d, struct mpce_plugin, abi_minor)) {
        set_reason(m, 1, "descriptor struct_size %zu is too small to hold the ABI version: "
                   "not an mpcengine plugin descriptor", d->struct_size);
        return -1;
    }
    if (d->abi_major != MPCE_PLUGIN_ABI_MAJOR) {
        set_reason(m, 1, "built for plugin ABI %u.%u, this engine supports ABI %u.x: rebuild "
                   "the plugin against this libmpcengine", (unsigned)d->abi_major,
                   (unsigned)d->abi_minor, (unsigned)MPCE_PLUGIN_ABI_MAJOR);
        return -1;
    }
    if (d->abi_minor > MPCE_PLUGIN_ABI_MINOR) {
        set_reason(m, 1, "built for ABI %u.%u, this engine supports %u.%u: upgrade libmpcengine",
                   (unsigned)d->abi_major, (unsigned)d->abi_minor,
                   (unsigned)MPCE_PLUGIN_ABI_MAJOR, (unsigned)MPCE_PLUGIN_ABI_MINOR);
        return -1;
    }
    if (!HAS_FIELD(d, struct mpce_plugin, impls)) {
        set_reason(m, 1, "descriptor struct_size %zu is too small to hold impls (needs %zu): "
                   "rebuild the plugin against mpcengine/plugin.h", d->struct_size,
                   offsetof(struct mpce_plugin, impls) + sizeof(d->impls));
        return -1;
    }
    if (!valid_name(d->name)) {
        set_reason(m, 1, "descriptor name is missing or not a plain word of at most %d "
                   "characters [A-Za-z0-9._+-]", MAX_NAME);
        return -1;
    }
    if (name_taken(e, d->name)) {
        set_reason(m, 1, "duplicate plugin name '%s': another module with that name is "
                   "already loaded; remove one of them", d->name);
        return -1;
    }
    if (d->n_impls > MAX_IMPLS || (d->n_impls && !d->impls)) {
        set_reason(m, 1, "plugin '%s' declares %zu implementations %s", d->name, d->n_impls,
                   d->impls ? "(more than 256)" : "but no impls array");
        return -1;
    }
    for (size_t i = 0; i < d->n_impls; i++) {
        const struct mpce_impl *im = d->impls[i];
        if (!im) {
            set_reason(m, 1, "plugin '%s': impls[%zu] is NULL", d->name, i);
            return -1;
        }
        if (!HAS_FIELD(im, struct mpce_impl, vtable)) {
            set_reason(m, 1, "plugin '%s': impls[%zu] struct_size %zu is too small (needs "
                       "%zu): rebuild the plugin against mpcengine/plugin.h", d->name, i,
                       im->struct_size, offsetof(struct mpce_impl, vtable) + sizeof(im->vtable));
            return -1;
        }
        if (!valid_name(im->name)) {
            set_reason(m, 1, "plugin '%s': impls[%zu] has no valid name (a plain word of at "
                       "most %d characters)", d->name, i, MAX_NAME);
            return -1;
        }
    }
    return 0;
}

/* Why one implementation cannot be registered as usable ("" if it can);
 * *broken tells a fault from a refusal. */
static void check_impl(mpce_engine *e, const struct mpce_module *m, const struct mpce_impl *im,
                       const struct mpce_host *host, char *why, size_t len, int *broken)
{
    *broken = 1;
    why[0] = '\0';
    if (im->primitive >= MPCE_PRIM_COUNT) {
        snprintf(why, len, "unknown primitive %u (this engine knows 0..%d)",
                 (unsigned)im->primitive, MPCE_PRIM_COUNT - 1);
        return;
    }
    struct mpce_slot *other = mpce_registry_find(e, im->name);
    if (other) {
        snprintf(why, len, "duplicate implementation name: '%s' is already provided by plugin "
                 "%s (%s)", im->name, other->plugin, other->path);
        return;
    }
    size_t vsize = 0;
    if (im->vtable)
        memcpy(&vsize, im->vtable, sizeof(vsize));
    if (!im->vtable || vsize < vtable_v1_size[im->primitive]) {
        snprintf(why, len, "%s vtable is %s (struct_size %zu, needs at least %zu): rebuild "
                 "the plugin against mpcengine/plugin.h", mpce_primitive_name(im->primitive),
                 im->vtable ? "too small" : "missing", vsize, vtable_v1_size[im->primitive]);
        return;
    }
    *broken = 0;
    const struct mpce_plugin_setting *ps = mpce_config_plugin(&e->cfg, m->name);
    if (ps && !ps->enabled) {
        snprintf(why, len, "disabled by %s", ps->where ? ps->where : "configuration");
        return;
    }
    if (HAS_FIELD(im, struct mpce_impl, probe) && im->probe) {
        char pw[200] = "";
        if (im->probe(host, pw, sizeof(pw)) != 0) {
            pw[sizeof(pw) - 1] = '\0';
            snprintf(why, len, "not usable here: %s", pw[0] ? pw : "the probe refused");
        }
    }
}

static void report_skip(const struct mpce_module *m)
{
    fprintf(stderr, "mpcengine: skipping %s: %s\n", m->path, m->reason);
}

/* Validate the descriptor from `entry` and register it; the record is kept
 * either way (skipped modules appear in listings). */
static mpce_status add_module(mpce_engine *e, struct mpce_module *m, mpce_plugin_entry_fn entry,
                              const struct mpce_host *host)
{
    const struct mpce_plugin *d = entry(host);
    if (check_descriptor(e, m, d) == 0) {
        m->desc = d;
        if (!(m->name = strdup(d->name))) {
            mpce_status st = mpce_error(MPCE_ERR_NOMEM, "out of memory loading %s", m->path);
            mpce_loader_free_module(m); /* not kept yet: nobody else frees it */
            return st;
        }
        const struct mpce_plugin_setting *ps = mpce_config_plugin(&e->cfg, d->name);
        int disabled = ps && !ps->enabled;
        char pw[200] = "";
        if (!disabled && HAS_FIELD(d, struct mpce_plugin, probe) && d->probe &&
            d->probe(host, pw, sizeof(pw)) != 0) {
            pw[sizeof(pw) - 1] = '\0';
            set_reason(m, 0, "plugin '%s' is not usable here: %s", d->name,
                       pw[0] ? pw : "its probe refused");
        }
    }
    if (m->skipped) {
        report_skip(m);
        if (m->handle) {
            dlclose(m->handle);
            m->handle = NULL;
        }
        m->desc = NULL;
        return mpce_registry_keep_module(e, m);
    }
    mpce_status st = mpce_registry_keep_module(e, m);
    for (size_t i = 0; st == MPCE_OK && i < m->desc->n_impls; i++) {
        const struct mpce_impl *im = m->desc->impls[i];
        char why[256];
        int broken;
        check_impl(e, m, im, host, why, sizeof(why), &broken);
        if (broken) {
            m->broken = 1;
            fprintf(stderr, "mpcengine: %s: skipping implementation %s: %s\n", m->path,
                    im->name, why);
        }
        st = mpce_registry_add_slot(e, m, im, why[0] ? MPCE_ST_SKIPPED : MPCE_ST_UNTESTED, why);
    }
    return st;
}

static struct mpce_module *new_module(const char *path)
{
    struct mpce_module *m = calloc(1, sizeof(*m));
    if (m && !(m->path = strdup(path))) {
        free(m);
        m = NULL;
    }
    return m;
}

void mpce_loader_free_module(struct mpce_module *m)
{
    if (!m)
        return;
    if (m->handle)
        dlclose(m->handle);
    free(m->path);
    free(m->name);
    free(m);
}

mpce_status mpce_loader_add_builtin(mpce_engine *e, const char *label, mpce_plugin_entry_fn entry)
{
    struct mpce_module *m = new_module("(built-in)");
    const struct mpce_host *host = mpce_host_get(label);
    if (!m || !host) {
        mpce_loader_free_module(m);
        return mpce_error(MPCE_ERR_NOMEM, "out of memory registering %s", label);
    }
    mpce_status st = add_module(e, m, entry, host);
    if (st == MPCE_OK && m->skipped)
        st = mpce_error(MPCE_ERR_PLUGIN, "built-in plugin %s: %s", label, m->reason);
    return st;
}

/* Group/world-writable or foreign-owned files let another user swap the code
 * this process runs. */
static int unsafe(const struct stat *sb, const char *what, const char *path, char *why,
                  size_t len)
{
    uid_t me = geteuid();
    if (sb->st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(why, len, "%s %.200s is %s-writable (mode %04o): run chmod go-w %.200s", what, path,
                 (sb->st_mode & S_IWOTH) ? "world" : "group",
                 (unsigned)(sb->st_mode & 07777), path);
        return 1;
    }
    if (sb->st_uid != 0 && sb->st_uid != me) {
        snprintf(why, len, "%s %.200s is owned by uid %u, not by root or the running user "
                 "(uid %u): run chown root %.200s or remove it", what, path, (unsigned)sb->st_uid,
                 (unsigned)me, path);
        return 1;
    }
    return 0;
}

static mpce_status load_file(mpce_engine *e, const char *path, const char *dir_problem)
{
    struct mpce_module *m = new_module(path);
    if (!m)
        return mpce_error(MPCE_ERR_NOMEM, "out of memory loading %s", path);
    struct stat sb;
    char why[1024];
    if (dir_problem) {
        set_reason(m, 1, "%s", dir_problem);
    } else if (lstat(path, &sb) != 0 || (S_ISLNK(sb.st_mode) && stat(path, &sb) != 0)) {
        set_reason(m, 1, "cannot stat: %s", strerror(errno));
    } else if (!S_ISREG(sb.st_mode)) {
        set_reason(m, 1, "not a regular file");
    } else if (unsafe(&sb, "file", path, why, sizeof(why))) {
        set_reason(m, 1, "%s", why);
    } else if (mpce_file_sha256(path, m->sha256, why, sizeof(why)) != 0) {
        set_reason(m, 1, "%s", why);
    } else {
        dlerror();
        m->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!m->handle) {
            const char *err = dlerror();
            set_reason(m, 1, "dlopen failed: %s", err ? err : "unknown error");
        }
    }
    if (m->skipped) {
        report_skip(m);
        return mpce_registry_keep_module(e, m);
    }
    void *sym = dlsym(m->handle, MPCE_PLUGIN_ENTRY_SYMBOL);
    if (!sym) {
        set_reason(m, 1, "no entry symbol %s: not an mpcengine plugin", MPCE_PLUGIN_ENTRY_SYMBOL);
        report_skip(m);
        dlclose(m->handle);
        m->handle = NULL;
        return mpce_registry_keep_module(e, m);
    }
    mpce_plugin_entry_fn entry;
    memcpy(&entry, &sym, sizeof(entry)); /* object pointer to function pointer (POSIX) */
    /* Label the host by file name: the plugin's own name is not known yet. */
    const char *base = strrchr(path, '/');
    char label[128];
    snprintf(label, sizeof(label), "%.100s", base ? base + 1 : path);
    size_t ll = strlen(label);
    if (ll > 3 && strcmp(label + ll - 3, ".so") == 0)
        label[ll - 3] = '\0';
    const struct mpce_host *host = mpce_host_get(label);
    if (!host) {
        mpce_loader_free_module(m);
        return mpce_error(MPCE_ERR_NOMEM, "out of memory loading %s", path);
    }
    return add_module(e, m, entry, host);
}

mpce_status mpce_loader_load_dirs(mpce_engine *e)
{
    mpce_status st = MPCE_OK;
    for (size_t i = 0; st == MPCE_OK && i < e->cfg.n_plugin_dirs; i++) {
        const char *dir = e->cfg.plugin_dirs[i];
        char **names;
        size_t n;
        if (mpce_dir_list(dir, ".so", &names, &n) != 0) {
            if (errno == ENOMEM)
                return mpce_error(MPCE_ERR_NOMEM, "out of memory listing %s", dir);
            /* The compiled-in directory exists only once a plugin is installed. */
            if (!(errno == ENOENT && e->cfg.plugin_dirs_default))
                fprintf(stderr, "mpcengine: warning: plugin directory %s: %s: check "
                        "plugin_path\n", dir, strerror(errno));
            continue;
        }
        struct stat sb;
        char dir_why[1024];
        const char *dir_problem = NULL;
        if (stat(dir, &sb) == 0 && unsafe(&sb, "directory", dir, dir_why, sizeof(dir_why)))
            dir_problem = dir_why;
        for (size_t j = 0; st == MPCE_OK && j < n; j++) {
            char path[4096];
            if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, names[j]) >= sizeof(path))
                continue;
            st = load_file(e, path, dir_problem);
        }
        mpce_dir_list_free(names, n);
    }
    return st;
}
