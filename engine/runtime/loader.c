/* SPDX-License-Identifier: Apache-2.0 */
/* Plugin discovery and descriptor validation. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/runtime/host.h"
#include "engine/runtime/knobs.h"
#include "engine/runtime/loader.h"
#include "engine/runtime/module_file.h"
#include "engine/runtime/vet.h"

#define MAX_IMPLS 256

/* The vetting helper follows the module's code step by step (vet.h). */
static void step(const char *what, const char *impl)
{
    if (mpce_vet_step_hook)
        mpce_vet_step_hook(what, impl);
}

/* Whether [plugin.NAME] enabled = no keeps the module from starting. A vet
 * (the step hook set) starts it anyway: a verdict is for the file, whatever
 * configuration a later engine reads. */
static int disabled(const struct mpce_plugin_setting *ps)
{
    return ps && !ps->enabled && !mpce_vet_step_hook;
}

/* Does struct_size cover `field` of `type`? Checked before every read, so a
 * struct shorter than the engine's is never read past its end. */
#define HAS_FIELD(p, type, field) \
    ((p)->struct_size >= offsetof(type, field) + sizeof(((type *)0)->field))

/* The descriptor structs' sizes at each minor of ABI 2: 2.2 added the
 * implementation's knobs. */
static size_t plugin_size(unsigned minor)
{
    (void)minor;
    return sizeof(struct mpce_plugin);
}

static size_t impl_size(unsigned minor)
{
    return minor < 2 ? offsetof(struct mpce_impl, n_knobs) : sizeof(struct mpce_impl);
}

static size_t device_size(unsigned minor)
{
    (void)minor;
    return sizeof(struct mpce_device);
}

/* Priority ranges of the classes (plugin.h). */
static const int class_lo[] = {1, 200, 400};
static const int class_hi[] = {199, 399, 599};

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

static int name_taken(mpce_engine *e, const char *name)
{
    for (size_t i = 0; i < e->n_modules; i++) {
        const struct mpce_module *o = e->modules[i];
        if (!o->skipped && o->name && strcmp(o->name, name) == 0)
            return 1;
    }
    return 0;
}

/* Checks of the descriptor itself; 0, or -1 with m->reason set. */
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
        set_reason(m, 1, "built for ABI %u.%u, newer than this engine's %u.%u: upgrade "
                   "libmpcengine, or rebuild the plugin against this one's plugin.h",
                   (unsigned)d->abi_major, (unsigned)d->abi_minor,
                   (unsigned)MPCE_PLUGIN_ABI_MAJOR, (unsigned)MPCE_PLUGIN_ABI_MINOR);
        return -1;
    }
    m->minor = d->abi_minor;
    if (d->struct_size != plugin_size(m->minor)) {
        set_reason(m, 1, "descriptor struct_size %zu does not match ABI 2.%u's %zu: rebuild "
                   "the plugin against mpcengine/plugin.h", d->struct_size, m->minor,
                   plugin_size(m->minor));
        return -1;
    }
    if (!mpce_registry_valid_name(d->name)) {
        set_reason(m, 1, "descriptor name is missing or not a plain word of at most %d "
                   "characters [A-Za-z0-9._+-]", MPCE_NAME_MAX);
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
    if (d->n_devices > MPCE_MODULE_MAX_DEVICES || (d->n_devices && !d->devices)) {
        set_reason(m, 1, "plugin '%s' declares %zu devices %s", d->name, d->n_devices,
                   d->devices ? "(more than 16)" : "but no devices array");
        return -1;
    }
    for (size_t i = 0; i < d->n_impls; i++) {
        const struct mpce_impl *im = d->impls[i];
        if (!im) {
            set_reason(m, 1, "plugin '%s': impls[%zu] is NULL", d->name, i);
            return -1;
        }
        if (im->struct_size != impl_size(m->minor)) {
            set_reason(m, 1, "plugin '%s': impls[%zu] struct_size %zu does not match ABI "
                       "2.%u's %zu: rebuild the plugin against mpcengine/plugin.h", d->name, i,
                       im->struct_size, m->minor, impl_size(m->minor));
            return -1;
        }
        if (!mpce_registry_valid_name(im->name)) {
            set_reason(m, 1, "plugin '%s': impls[%zu] has no valid name (a plain word of at "
                       "most %d characters)", d->name, i, MPCE_NAME_MAX);
            return -1;
        }
    }
    return 0;
}

/* Why a device cannot be registered ("" if it can). */
static void check_device(mpce_engine *e, const struct mpce_module *m,
                         const struct mpce_device *dev, char *why, size_t len)
{
    why[0] = '\0';
    if (dev == NULL || dev->struct_size != device_size(m->minor)) {
        snprintf(why, len, "a device descriptor is %s: rebuild the plugin against "
                 "mpcengine/plugin.h", dev ? "of the wrong struct_size" : "NULL");
        return;
    }
    if (!mpce_registry_valid_name(dev->name) || strcmp(dev->name, MPCE_MEMORY_HOST) == 0) {
        snprintf(why, len, "a device has no valid name (a plain word other than \"host\")");
        return;
    }
    if (mpce_registry_device(e, dev->name)) {
        snprintf(why, len, "device '%s' is already provided by another module", dev->name);
        return;
    }
    static const char *const fns[] = {"alloc",  "free",     "queue_new", "queue_free",
                                      "upload", "download", "copy"};
    void (*const ptrs[])(void) = {
        (void (*)(void))dev->alloc,  (void (*)(void))dev->free,
        (void (*)(void))dev->queue_new, (void (*)(void))dev->queue_free,
        (void (*)(void))dev->upload, (void (*)(void))dev->download,
        (void (*)(void))dev->copy,
    };
    for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
        if (ptrs[i] == NULL) {
            snprintf(why, len, "device '%s': required function %s is NULL", dev->name, fns[i]);
            return;
        }
}

/* The op table of im checked against the minor the module was built for and
 * copied at full size: ops it does not have are NULL. "" if fine. */
static void check_ops(const struct mpce_module *m, const struct mpce_impl *im,
                      union mpce_ops *out, char *why, size_t len)
{
    const mpce_primitive prim = (mpce_primitive)im->primitive;
    const char *pname = mpce_primitive_name(prim);
    size_t vsize = 0;
    why[0] = '\0';
    if (im->ops == NULL) {
        snprintf(why, len, "its %s op table (ops) is NULL", pname);
        return;
    }
    memcpy(&vsize, im->ops, sizeof(vsize));
    size_t need = mpce_ops_required_size(prim, m->minor), most = mpce_ops_size(prim, m->minor);
    if (vsize < need || vsize > most) {
        snprintf(why, len, "its %s op table has struct_size %zu, but ABI 2.%u's is %zu%s: "
                 "rebuild the plugin against mpcengine/plugin.h", pname, vsize, m->minor, most,
                 vsize < need ? " (too small for the required ops)" : "");
        return;
    }
    memset(out, 0, sizeof(*out));
    memcpy(out, im->ops, vsize);
    out->prg.struct_size = sizeof(*out);
    enum mpce_op_id first = mpce_op_first(prim);
    for (unsigned k = 0; k < mpce_op_count_of(prim); k++) {
        enum mpce_op_id id = (enum mpce_op_id)(first + k);
        if (mpce_op_info[id].required && mpce_op_info[id].since <= m->minor &&
            mpce_ops_fn(out, id) == NULL) {
            snprintf(why, len, "required op %s is NULL: a module must implement every "
                     "required op of its primitive", mpce_op_info[id].name);
            return;
        }
    }
}

/* Why one implementation cannot be registered as usable ("" if it can);
 * *broken tells a fault from a refusal. *prio is the priority it runs at,
 * with a note if it had to be clamped. */
static void check_impl(mpce_engine *e, const struct mpce_module *m, const struct mpce_impl *im,
                       union mpce_ops *ops, const struct mpce_devrec **dev, int *prio,
                       char *note, size_t note_len, char *why, size_t len, int *broken)
{
    *broken = 1;
    why[0] = note[0] = '\0';
    *dev = NULL;
    *prio = im->priority;
    if (im->primitive >= MPCE_PRIM_COUNT) {
        snprintf(why, len, "unknown primitive %u (this engine knows 0..%d)",
                 (unsigned)im->primitive, MPCE_PRIM_COUNT - 1);
        return;
    }
    struct mpce_slot *other = mpce_registry_find(e, im->name);
    if (other) {
        snprintf(why, len, "duplicate implementation name: '%s' is already provided by plugin "
                 "%s (%s)", im->name, other->module->name, other->module->path);
        return;
    }
    if (im->impl_class > MPCE_CLASS_ACCEL) {
        snprintf(why, len, "impl_class %u is unknown: use MPCE_CLASS_PORTABLE, _SIMD or _ACCEL",
                 (unsigned)im->impl_class);
        return;
    }
    const uint32_t known = MPCE_IMPL_CONSTANT_TIME | MPCE_IMPL_VARIABLE_TIME | MPCE_IMPL_ASYNC |
                           MPCE_IMPL_CHECKS_NTT_INPUT | MPCE_IMPL_CHECKS_NTT_IN_PLACE;
    const uint32_t timing = im->flags & (MPCE_IMPL_CONSTANT_TIME | MPCE_IMPL_VARIABLE_TIME);
    if (im->flags & ~known) {
        snprintf(why, len, "flags 0x%x has unknown bits 0x%x: this engine knows "
                 "MPCE_IMPL_CONSTANT_TIME, _VARIABLE_TIME, _ASYNC, _CHECKS_NTT_INPUT and "
                 "_CHECKS_NTT_IN_PLACE",
                 (unsigned)im->flags, (unsigned)(im->flags & ~known));
        return;
    }
    /* A 2.3 module's bit 0x200 meant nothing; trusting it would skip the
     * engine's input check for a kernel that never checks. */
    if ((im->flags & MPCE_IMPL_CHECKS_NTT_INPUT) &&
        (m->minor < 4 || im->primitive != MPCE_PRIM_NTT)) {
        snprintf(why, len, "flags 0x%x carry MPCE_IMPL_CHECKS_NTT_INPUT, which %s",
                 (unsigned)im->flags,
                 im->primitive != MPCE_PRIM_NTT ? "only an NTT implementation may carry"
                                                : "needs a module of ABI 2.4 or later: "
                                                  "rebuild it against mpcengine/plugin.h");
        return;
    }
    /* The in-place promise extends the check's; alone, or from a module
     * older than 2.5 (whose bit 0x400 meant nothing), it cannot be kept. */
    if ((im->flags & MPCE_IMPL_CHECKS_NTT_IN_PLACE) &&
        (im->primitive != MPCE_PRIM_NTT || m->minor < 5 ||
         !(im->flags & MPCE_IMPL_CHECKS_NTT_INPUT))) {
        snprintf(why, len, "flags 0x%x carry MPCE_IMPL_CHECKS_NTT_IN_PLACE, which %s",
                 (unsigned)im->flags,
                 im->primitive != MPCE_PRIM_NTT ? "only an NTT implementation may carry"
                 : m->minor < 5 ? "needs a module of ABI 2.5 or later: rebuild it against "
                                  "mpcengine/plugin.h"
                                : "extends MPCE_IMPL_CHECKS_NTT_INPUT and needs it too");
        return;
    }
    if (timing != MPCE_IMPL_CONSTANT_TIME && timing != MPCE_IMPL_VARIABLE_TIME) {
        snprintf(why, len, "flags 0x%x must carry exactly one of MPCE_IMPL_CONSTANT_TIME and "
                 "MPCE_IMPL_VARIABLE_TIME (it has %s): the constant-time policy needs to know",
                 (unsigned)im->flags, timing ? "both" : "neither");
        return;
    }
    if (!(im->memory & MPCE_MEM_HOST) || (im->memory & ~(MPCE_MEM_HOST | MPCE_MEM_DEVICE))) {
        snprintf(why, len, "memory 0x%x must include MPCE_MEM_HOST (the self-test and plain "
                 "calls run there) and nothing but MPCE_MEM_HOST and MPCE_MEM_DEVICE",
                 (unsigned)im->memory);
        return;
    }
    if ((im->memory & MPCE_MEM_DEVICE) != 0) {
        int listed = 0;
        for (size_t i = 0; i < m->desc->n_devices; i++)
            listed |= im->device != NULL && m->desc->devices[i] == im->device;
        if (!listed) {
            snprintf(why, len, "serves MPCE_MEM_DEVICE but its device is %s",
                     im->device ? "not one of the module's devices" : "NULL");
            return;
        }
        /* A module that was not started (disabled) registered no device. */
        *dev = m->inited ? mpce_registry_device(e, im->device->name) : NULL;
        if (m->inited && (*dev == NULL || (*dev)->module != m)) {
            const char *fault = "see the module's messages";
            for (size_t k = 0; k < m->n_device_faults; k++) {
                const struct mpce_device *bad = m->device_faults[k].dev;
                if (bad == im->device || (bad && bad->name && im->device->name &&
                                          strcmp(bad->name, im->device->name) == 0))
                    fault = m->device_faults[k].why;
            }
            snprintf(why, len, "its device %s was refused: %s", im->device->name, fault);
            *dev = NULL;
            return;
        }
    } else if (im->device != NULL) {
        snprintf(why, len, "names a device but its memory lacks MPCE_MEM_DEVICE");
        return;
    }
    check_ops(m, im, ops, why, len);
    if (why[0])
        return;
    mpce_knobs_check(im, m->minor, (mpce_primitive)im->primitive, why, len);
    if (why[0])
        return;
    int lo = class_lo[im->impl_class], hi = class_hi[im->impl_class];
    if (im->priority < lo || im->priority > hi) {
        *prio = im->priority < lo ? lo : hi;
        snprintf(note, note_len, "priority %d clamped to %d, the %s of the %s class (%d..%d)",
                 im->priority, *prio, *prio == lo ? "bottom" : "top",
                 mpce_impl_class_name(im->impl_class), lo, hi);
        mpce_log(&e->log, MPCE_LOG_WARNING, m->name, "%s: %s", im->name, note);
    }
    *broken = 0;
    const struct mpce_plugin_setting *ps = mpce_config_plugin(&e->cfg, m->name);
    if (disabled(ps)) {
        snprintf(why, len, "disabled by %s", ps->where ? ps->where : "configuration");
        return;
    }
    if (im->probe) {
        char pw[200] = "";
        step("implprobe", im->name);
        if (im->probe(m->state, pw, sizeof(pw)) != 0) {
            pw[sizeof(pw) - 1] = '\0';
            snprintf(why, len, "not usable here: %s", pw[0] ? pw : "the probe refused");
        }
    }
}

static void report_skip(mpce_engine *e, const struct mpce_module *m)
{
    mpce_log(&e->log, m->broken ? MPCE_LOG_WARNING : MPCE_LOG_INFO, NULL, "skipping %s: %s",
             m->path, m->reason);
}

/* probe, init and describe of a validated, enabled module. */
static void start_module(mpce_engine *e, struct mpce_module *m)
{
    const struct mpce_plugin *d = m->desc;
    char pw[256] = "";
    if (d->probe)
        step("probe", NULL);
    if (d->probe && d->probe(&m->host->host, pw, sizeof(pw)) != 0) {
        pw[sizeof(pw) - 1] = '\0';
        set_reason(m, 0, "plugin '%s' is not usable here: %s", d->name,
                   pw[0] ? pw : "its probe refused");
        return;
    }
    if (d->init || d->describe)
        step("init", NULL);
    if (d->init) {
        pw[0] = '\0';
        int rc = d->init(&m->host->host, &m->state, pw, sizeof(pw));
        if (rc != 0) {
            pw[sizeof(pw) - 1] = '\0';
            set_reason(m, 1, "plugin '%s': init failed (%s)%s%s", d->name,
                       mpce_status_name(mpce_status_of_rc(rc)), pw[0] ? ": " : "", pw);
            m->init_no_memory = mpce_status_of_rc(rc) == MPCE_ERR_NOMEM;
            return;
        }
    }
    m->inited = 1;
    char what[256] = "";
    if (d->describe)
        d->describe(m->state, what, sizeof(what));
    what[sizeof(what) - 1] = '\0';
    snprintf(m->version, sizeof(m->version), "%s%s%s", d->version ? d->version : "",
             what[0] ? ", " : "", what);
}

/* Validate the descriptor from `entry` and register it; the record is kept
 * either way (skipped modules appear in listings). */
static mpce_status add_module(mpce_engine *e, struct mpce_module *m, mpce_plugin_entry_fn entry)
{
    const struct mpce_plugin *d = entry();
    if (check_descriptor(e, m, d) == 0) {
        m->desc = d;
        if (!(m->name = strdup(d->name))) {
            mpce_status st = mpce_error(MPCE_ERR_NOMEM, "out of memory loading %s", m->path);
            mpce_loader_free_module(m); /* not kept yet: nobody else frees it */
            return st;
        }
        mpce_host_rename(m->host, d->name);
        /* Its name, for a host whose configuration disables it (vet.h). */
        step("plugin", d->name);
        if (!disabled(mpce_config_plugin(&e->cfg, d->name)))
            start_module(e, m);
    }
    if (m->skipped) {
        /* As for a file that could not be read for want of memory
         * (skip_file): an error, not an engine without the module. */
        const int no_memory = m->init_no_memory;
        if (!no_memory)
            report_skip(e, m);
        mpce_status st = mpce_registry_keep_module(e, m);
        /* m is the registry's now, freed with the engine. */
        if (st == MPCE_OK && no_memory)
            st = mpce_error(MPCE_ERR_NOMEM, "out of memory starting %s: %s", m->path,
                            m->reason);
        return st;
    }
    mpce_status st = mpce_registry_keep_module(e, m);
    for (size_t i = 0; st == MPCE_OK && m->inited && i < d->n_devices; i++) {
        char why[256];
        check_device(e, m, d->devices[i], why, sizeof(why));
        if (why[0]) {
            m->broken = 1;
            struct mpce_device_fault *fault = &m->device_faults[m->n_device_faults++];
            fault->dev = d->devices[i];
            snprintf(fault->why, sizeof(fault->why), "%s", why);
            mpce_log(&e->log, MPCE_LOG_WARNING, NULL, "%s: skipping a device: %s", m->path, why);
            continue;
        }
        st = mpce_registry_add_device(e, m, d->devices[i]);
    }
    for (size_t i = 0; st == MPCE_OK && i < d->n_impls; i++) {
        const struct mpce_impl *im = d->impls[i];
        char why[320], note[160];
        int broken, prio;
        union mpce_ops ops;
        const struct mpce_devrec *dev;
        memset(&ops, 0, sizeof(ops));
        check_impl(e, m, im, &ops, &dev, &prio, note, sizeof(note), why, sizeof(why), &broken);
        if (broken) {
            m->broken = 1;
            mpce_log(&e->log, MPCE_LOG_WARNING, NULL, "%s: skipping implementation %s: %s",
                     m->path, im->name, why);
        }
        st = mpce_registry_add_slot(e, m, im, &ops, dev, prio,
                                    why[0] ? MPCE_ST_SKIPPED : MPCE_ST_UNTESTED, why, broken,
                                    note);
        if (st == MPCE_OK && !broken)
            mpce_knobs_attach(e->slots[e->n_slots - 1], m->minor);
    }
    return st;
}

static struct mpce_module *new_module(mpce_engine *e, const char *path, const char *label)
{
    struct mpce_module *m = calloc(1, sizeof(*m));
    if (m)
        m->fd = -1;
    if (m && (!(m->path = strdup(path)) || !(m->host = mpce_host_new(e, label)))) {
        free(m->path);
        free(m);
        m = NULL;
    }
    return m;
}

void mpce_loader_free_module(struct mpce_module *m)
{
    if (!m)
        return;
    if (m->inited && m->desc && m->desc->fini) {
        step("fini", NULL);
        m->desc->fini(m->state);
    }
    if (m->handle) {
        step("unload", NULL); /* its destructors and atexit handlers run here */
        dlclose(m->handle);
    }
    if (m->fd >= 0)
        close(m->fd);
    free(m->host);
    free(m->path);
    free(m->name);
    free(m);
}

mpce_status mpce_loader_add_builtin(mpce_engine *e, const char *label, mpce_plugin_entry_fn entry)
{
    struct mpce_module *m = new_module(e, "(built-in)", label);
    if (!m)
        return mpce_error(MPCE_ERR_NOMEM, "out of memory registering %s", label);
    mpce_status st = add_module(e, m, entry);
    if (st == MPCE_OK && m->skipped)
        st = mpce_error(MPCE_ERR_PLUGIN, "built-in plugin %s: %s", label, m->reason);
    return st;
}

/* The host's label before the plugin names itself: the file name less ".so". */
static void file_label(const char *name, char *label, size_t len)
{
    snprintf(label, len, "%.100s", name);
    size_t ll = strlen(label);
    if (ll > 3 && strcmp(label + ll - 3, ".so") == 0)
        label[ll - 3] = '\0';
}

/* m's file f could not be opened, checked or loaded (why): listed as
 * skipped, or, when memory ran out, an error. An engine up without the
 * module for want of memory would pick and pin as if it were broken, and
 * that would outlast the shortage. */
static mpce_status skip_file(mpce_engine *e, struct mpce_module *m,
                             const struct mpce_module_file *f, const char *why)
{
    set_reason(m, 1, "%s", why);
    mpce_status st = mpce_registry_keep_module(e, m);
    if (st == MPCE_OK && f->no_memory)
        return mpce_error(MPCE_ERR_NOMEM, "out of memory loading %s: %s", f->path, why);
    if (st == MPCE_OK)
        report_skip(e, m);
    return st;
}

/* dlopen the checked file f (its descriptor passes to m) and register the
 * module; v, if not NULL, is its passed verdict, whose self-test results
 * then apply to its implementations. */
static mpce_status load_checked(mpce_engine *e, struct mpce_module *m,
                                struct mpce_module_file *f, const struct mpce_verdict *v)
{
    char why[1024];
    snprintf(m->sha256, sizeof(m->sha256), "%s", f->sha256);
    m->size = f->size;
    m->mtime = f->mtime;
    step("load", NULL);
    m->handle = mpce_module_file_load(f, why, sizeof(why));
    if (!m->handle)
        return skip_file(e, m, f, why);
    m->fd = f->fd; /* the module's name while it is loaded */
    f->fd = -1;
    void *sym = dlsym(m->handle, MPCE_PLUGIN_ENTRY_SYMBOL);
    if (!sym) {
        set_reason(m, 1, "no entry symbol %s: not an mpcengine ABI %u plugin (or built for "
                   "another ABI major)", MPCE_PLUGIN_ENTRY_SYMBOL, MPCE_PLUGIN_ABI_MAJOR);
        report_skip(e, m);
        step("unload", NULL);
        dlclose(m->handle);
        m->handle = NULL;
        close(m->fd);
        m->fd = -1;
        return mpce_registry_keep_module(e, m);
    }
    mpce_plugin_entry_fn entry;
    memcpy(&entry, &sym, sizeof(entry)); /* object pointer to function pointer (POSIX) */
    step("entry", NULL);
    const size_t first_slot = e->n_slots;
    mpce_status st = add_module(e, m, entry);
    /* add_module kept m (or freed it on failure): look at it only through
     * the slots it registered. */
    if (st == MPCE_OK && v && e->n_slots > first_slot &&
        mpce_vet_apply(e, e->slots[first_slot]->module, v) > 0)
        mpce_verdict_forget(e, f); /* so that the next engine vets it again */
    return st;
}

static mpce_status load_file(mpce_engine *e, const char *dir, const char *name)
{
    char path[4096], label[128], why[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    file_label(name, label, sizeof(label));
    struct mpce_module *m = new_module(e, path, label);
    if (!m)
        return mpce_error(MPCE_ERR_NOMEM, "out of memory loading %s", path);
    struct mpce_module_file f;
    if (mpce_module_file_open(dir, name, &f, why, sizeof(why)) != 0)
        return skip_file(e, m, &f, why);
    /* Vetted out of process first: a module that crashes, hangs or leaks
     * there is never loaded here. */
    struct mpce_verdict v;
    enum mpce_vet_result vr = mpce_vet_module(e, &f, &v);
    mpce_status st;
    if (vr == MPCE_VET_FAIL && v.no_memory) {
        /* As skip_file: a shortage says nothing about the module. */
        set_reason(m, 1, "%.440s", v.reason);
        st = mpce_registry_keep_module(e, m);
        if (st == MPCE_OK)
            st = mpce_error(MPCE_ERR_NOMEM, "out of memory vetting %s: %s", f.path, v.reason);
    } else if (vr == MPCE_VET_FAIL) {
        snprintf(m->sha256, sizeof(m->sha256), "%s", f.sha256);
        m->size = f.size;
        m->mtime = f.mtime;
        /* Not vetted is not known to be safe: skipped as broken (strict
         * fails), and counted as a failure like a failed vet. */
        if (v.unvetted)
            set_reason(m, 1, "%.440s", v.reason);
        else
            set_reason(m, 1, "failed its vet in the probe helper: %.440s; remove or update "
                       "the module", v.reason);
        m->vet_failed = 1;
        report_skip(e, m);
        st = mpce_registry_keep_module(e, m);
    } else if (vr == MPCE_VET_DISABLED) {
        /* Its vet failed in its probe or later, which this configuration
         * never runs; but the helper died there, so its destructors never
         * ran out of process: nothing of it is run here, not even to learn
         * its name, which the verdict already holds. */
        const struct mpce_plugin_setting *ps = mpce_config_plugin(&e->cfg, v.plugin);
        snprintf(m->sha256, sizeof(m->sha256), "%s", f.sha256);
        m->size = f.size;
        m->mtime = f.mtime;
        set_reason(m, 0, "plugin %s, disabled by %s, is not loaded: its vet failed in code "
                   "that it runs only when enabled (%.300s)", v.plugin,
                   ps && ps->where ? ps->where : "configuration", v.reason);
        report_skip(e, m);
        st = mpce_registry_keep_module(e, m);
    } else {
        /* OFF: isolation is off. */
        st = load_checked(e, m, &f, vr == MPCE_VET_PASS ? &v : NULL);
    }
    mpce_verdict_free(&v);
    mpce_module_file_close(&f);
    return st;
}

mpce_status mpce_loader_load_fd(mpce_engine *e, int fd, const char *path)
{
    const char *slash = strrchr(path, '/');
    char label[128];
    file_label(slash ? slash + 1 : path, label, sizeof(label));
    struct mpce_module *m = new_module(e, path, label);
    if (!m)
        return mpce_error(MPCE_ERR_NOMEM, "out of memory loading %s", path);
    struct mpce_module_file f;
    memset(&f, 0, sizeof(f));
    f.fd = fd;
    snprintf(f.path, sizeof(f.path), "%s", path);
    mpce_status st = load_checked(e, m, &f, NULL);
    mpce_module_file_close(&f);
    return st;
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
                mpce_log(&e->log, MPCE_LOG_WARNING, NULL, "plugin directory %s: %s: check "
                         "plugin_path", dir, strerror(errno));
            continue;
        }
        for (size_t j = 0; st == MPCE_OK && j < n; j++)
            st = load_file(e, dir, names[j]);
        mpce_dir_list_free(names, n);
    }
    return st;
}
