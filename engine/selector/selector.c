/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which pins "auto" follows. The engine never measures in process (a CUDA
 * context does not survive a fork, and a module that crashes while being
 * timed must not take the application with it): it reads the pins files,
 * checks each row against the modules it actually loaded, and asks the
 * probe helper (spawn.c) for new ones when [tune] mode says so. Nothing here
 * can fail an engine: a missing helper, a corrupt file or a timeout leaves
 * "auto" in priority order and says so in the log.
 */
#include "config.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/runtime/module_file.h"
#include "engine/selector/selector.h"

#define ROW_INDEX(op, v, sc) \
    (((size_t)(op) * MPCE_VARIANTS + (v)) * MPCE_SIZE_CLASSES + (sc))
#define N_ROWS ((size_t)MPCE_OP_COUNT * MPCE_VARIANTS * MPCE_SIZE_CLASSES)

const char *mpce_selector_system_dir_override;

size_t mpce_selector_dirs(const struct mpce_config *cfg, char dirs[2][4096])
{
    if (cfg->tune.dir) {
        snprintf(dirs[0], 4096, "%s", cfg->tune.dir);
        return 1;
    }
    snprintf(dirs[0], 4096, "%s",
             mpce_selector_system_dir_override ? mpce_selector_system_dir_override
                                               : MPCE_PINSDIR);
    if (cfg->privileged)
        return 1;
    /* XDG_CACHE_HOME and HOME say where the user's cache is, not how the
     * engine behaves: MPCE_OPT_NO_ENV (MPCENGINE_* overrides) leaves them be,
     * so that an application and `mpcengine tune` agree on the directory. */
    const char *xdg = mpce_secure_getenv("XDG_CACHE_HOME");
    const char *home = mpce_secure_getenv("HOME");
    if (!home || home[0] != '/') {
        const struct passwd *pw = getpwuid(getuid());
        home = pw ? pw->pw_dir : NULL;
    }
    if (xdg && xdg[0] == '/')
        snprintf(dirs[1], 4096, "%s/mpcengine/" MPCE_STATE_NAME, xdg);
    else if (home && home[0] == '/')
        snprintf(dirs[1], 4096, "%s/.cache/mpcengine/" MPCE_STATE_NAME, home);
    else
        return 1;
    return 2;
}

const char *mpce_selector_policy(const mpce_engine *e)
{
    return e->cfg.allow_variable_time ? "variable-time" : "constant-time";
}

void mpce_selector_module_record(const mpce_engine *e, const struct mpce_module *m,
                                 struct mpce_pins_module *out, char *devices, size_t dlen)
{
    size_t used = 0;
    devices[0] = '\0';
    for (size_t i = 0; i < e->n_devices; i++)
        if (e->devices[i]->module == m && used < dlen)
            used += (size_t)snprintf(devices + used, dlen - used, "%s%s", used ? " " : "",
                                     e->devices[i]->name);
    /* A device's driver shows in what describe() found (the version line). */
    if (used && used < dlen)
        snprintf(devices + used, dlen - used, " (%s)", m->version);
    out->plugin = m->name ? m->name : "";
    out->path = m->path;
    out->size = m->size;
    out->mtime = m->mtime;
    out->sha256 = (char *)m->sha256; /* read only: a record to compare or write */
    out->devices = devices;
}

static const struct mpce_module *loaded_module(const mpce_engine *e, const char *plugin)
{
    for (size_t i = 0; i < e->n_modules; i++) {
        const struct mpce_module *m = e->modules[i];
        if (!m->skipped && m->name && strcmp(m->name, plugin) == 0)
            return m;
    }
    return NULL;
}

static const struct mpce_pins_module *pinned_module(const struct mpce_pins *p,
                                                    const char *plugin)
{
    for (size_t i = 0; i < p->n_modules; i++)
        if (strcmp(p->modules[i].plugin, plugin) == 0)
            return &p->modules[i];
    return NULL;
}

static int row_names_plugin(const struct mpce_pins_row *row, const char *plugin)
{
    for (size_t i = 0; i < row->n_plugins; i++)
        if (strcmp(row->plugins[i], plugin) == 0)
            return 1;
    return 0;
}

static void this_cpu(const mpce_engine *e, char *buf, size_t len)
{
    if (e->selector && e->selector->cpu[0])
        snprintf(buf, len, "%s", e->selector->cpu);
    else
        mpce_signature_cpu(buf, len);
}

int mpce_selector_header_current(const mpce_engine *e, const struct mpce_pins *p, char *why,
                                 size_t len)
{
    char cpu[512];
    this_cpu(e, cpu, sizeof(cpu));
    if (strcmp(p->cpu, cpu) != 0) {
        snprintf(why, len, "measured on another CPU (%.200s; this one is %.200s)", p->cpu, cpu);
        return 0;
    }
    if (strcmp(p->engine_version, mpce_version()) != 0) {
        snprintf(why, len, "measured with libmpcengine %.40s (this is %s)", p->engine_version,
                 mpce_version());
        return 0;
    }
    if (strcmp(p->policy, mpce_selector_policy(e)) != 0) {
        snprintf(why, len, "measured with allow_variable_time = %s (it is %s now)",
                 strcmp(p->policy, "variable-time") == 0 ? "yes" : "no",
                 e->cfg.allow_variable_time ? "yes" : "no");
        return 0;
    }
    return 1;
}

/* An asynchronous implementation loaded here that the row declined (as
 * the tuner did before pins format 3), or NULL. */
static const char *declined_async(const mpce_engine *e, const struct mpce_pins_row *row)
{
    for (size_t i = 0; i < row->n_cands; i++) {
        if (strcmp(row->cands[i].status, "declined") != 0)
            continue;
        for (size_t k = 0; k < e->n_slots; k++) {
            const struct mpce_slot *s = e->slots[k];
            if ((s->flags & MPCE_IMPL_ASYNC) && strcmp(s->impl->name, row->cands[i].impl) == 0)
                return s->impl->name;
        }
    }
    return NULL;
}

int mpce_selector_row_current(const mpce_engine *e, const struct mpce_pins *p,
                              const struct mpce_pins_row *row, char *why, size_t len)
{
    if (!mpce_selector_header_current(e, p, why, len))
        return 0;
    enum mpce_op_id op;
    unsigned v, sc;
    if (mpce_row_parse(row->key, &op, &v, &sc) != 0) {
        snprintf(why, len, "row %.100s names no operation of this engine", row->key);
        return 0;
    }
    for (size_t i = 0; i < row->n_plugins; i++) {
        const char *name = row->plugins[i];
        const struct mpce_pins_module *rec = pinned_module(p, name);
        const struct mpce_module *m = loaded_module(e, name);
        if (m == NULL) {
            snprintf(why, len, "plugin %.64s, which took part, is no longer loaded", name);
            return 0;
        }
        char devices[512];
        struct mpce_pins_module now;
        mpce_selector_module_record(e, m, &now, devices, sizeof(devices));
        if (rec == NULL || strcmp(rec->path, now.path) != 0 || rec->size != now.size ||
            rec->mtime != now.mtime || strcmp(rec->sha256, now.sha256) != 0 ||
            strcmp(rec->devices, now.devices) != 0) {
            snprintf(why, len, "plugin %.64s changed since it was measured (%.300s)", name,
                     now.path);
            return 0;
        }
    }
    if (p->format < MPCE_PINS_FORMAT_TIMES_ASYNC) {
        const char *declined = declined_async(e, row);
        if (declined) {
            snprintf(why, len, "%.64s, an asynchronous (device) implementation, was not timed: "
                     "this pins format %u file predates the tuner's end-to-end timing and "
                     "crossover search", declined, p->format);
            return 0;
        }
    }
    const mpce_primitive prim = mpce_op_info[op].prim;
    for (size_t i = 0; i < e->n_slots; i++) {
        const struct mpce_slot *s = e->slots[i];
        if (s->prim == prim && mpce_slot_state(s) != MPCE_ST_SKIPPED && s->module->name &&
            !row_names_plugin(row, s->module->name)) {
            snprintf(why, len, "plugin %.64s (%.64s) was added since it was measured",
                     s->module->name, s->impl->name);
            return 0;
        }
    }
    return 1;
}

enum mpce_pins_read_result mpce_selector_read(const mpce_engine *e, const char *dir,
                                              struct mpce_pins *out, char *path, size_t plen,
                                              char *why, size_t wlen)
{
    snprintf(path, plen, "%s/%s", dir, MPCE_PINS_FILE);
    memset(out, 0, sizeof(*out));
    if (e->cfg.privileged && access(path, F_OK) == 0) {
        /* Pins reorder what root runs: trusted like its configuration. */
        char reason[1024];
        int fd = mpce_file_open_trusted(path, reason, sizeof(reason));
        if (fd < 0) {
            snprintf(why, wlen, "%s", reason);
            return MPCE_PINS_READ_ERROR;
        }
        close(fd);
    }
    return mpce_pins_read(path, out, why, wlen);
}

const char *mpce_selector_blacklisted(const mpce_engine *e, const struct mpce_module *m)
{
    const struct mpce_selector *sel = e->selector;
    if (sel == NULL || m->fd < 0)
        return NULL;
    for (size_t f = 0; f < MPCE_SELECTOR_FILES; f++)
        for (size_t i = 0; sel->loaded[f] && i < sel->pins[f].n_blacklist; i++) {
            const struct mpce_pins_blacklist *b = &sel->pins[f].blacklist[i];
            if (strcmp(b->path, m->path) == 0 && b->size == m->size && b->mtime == m->mtime)
                return b->reason;
        }
    return NULL;
}

const struct mpce_pins_row *mpce_selector_row(const mpce_engine *e, enum mpce_op_id op,
                                              unsigned variant, unsigned size_class,
                                              const char **path, const char **date)
{
    const struct mpce_selector *sel = e->selector;
    if (sel == NULL || sel->by_key == NULL || variant >= MPCE_VARIANTS ||
        size_class >= MPCE_SIZE_CLASSES)
        return NULL;
    size_t at = ROW_INDEX(op, variant, size_class);
    const struct mpce_pins_row *row = sel->by_key[at];
    if (row && path)
        *path = sel->path[sel->by_file[at]];
    if (row && date)
        *date = sel->pins[sel->by_file[at]].date;
    return row;
}

uint64_t mpce_selector_slice_min(const mpce_engine *e, enum mpce_op_id op,
                                 const struct mpce_slot *slot)
{
    const struct mpce_selector *sel = e->selector;
    if (sel == NULL || sel->slice_min == NULL || slot == NULL || op >= MPCE_OP_COUNT)
        return 0;
    return sel->slice_min[(size_t)op * e->n_slots + slot->index];
}

/* Read every pins directory's file; 1 if any was loaded. */
static int load(mpce_engine *e, struct mpce_selector *sel, int quiet)
{
    char dirs[2][4096];
    size_t n = mpce_selector_dirs(&e->cfg, dirs);
    int any = 0;
    for (size_t i = 0; i < MPCE_SELECTOR_FILES; i++) {
        mpce_pins_free(&sel->pins[i]);
        sel->loaded[i] = 0;
    }
    for (size_t i = 0; i < n; i++) {
        char why[1024] = "";
        enum mpce_pins_read_result r =
            mpce_selector_read(e, dirs[i], &sel->pins[i], sel->path[i], sizeof(sel->path[i]),
                               why, sizeof(why));
        if (r == MPCE_PINS_READ_MISSING)
            continue;
        if (r != MPCE_PINS_READ_OK) {
            if (!quiet)
                mpce_log(&e->log, MPCE_LOG_WARNING, NULL, "pins file not used: %s; the next "
                         "tune replaces it (`mpcengine tune`)", why);
            continue;
        }
        sel->loaded[i] = 1;
        any = 1;
    }
    return any;
}

/* Put file f's rows into the index where no row is yet: current ones (pass
 * 0), or, for mode warn, the stale ones left (pass 1). stale[] marks keys
 * with a stale row. */
static void index_file(mpce_engine *e, struct mpce_selector *sel, size_t f, int pass,
                       unsigned char *stale, char *first_why, size_t wlen)
{
    for (size_t i = 0; sel->loaded[f] && i < sel->pins[f].n_rows; i++) {
        const struct mpce_pins_row *row = &sel->pins[f].rows[i];
        enum mpce_op_id op;
        unsigned v, sc;
        char why[512];
        if (mpce_row_parse(row->key, &op, &v, &sc) != 0)
            continue; /* a key of another engine version */
        const size_t at = ROW_INDEX(op, v, sc);
        if (sel->by_key[at])
            continue;
        if (pass == 0 && !mpce_selector_row_current(e, &sel->pins[f], row, why, sizeof(why))) {
            stale[at] = 1;
            if (!first_why[0])
                snprintf(first_why, wlen, "%.100s: %.480s", row->key, why);
            continue;
        }
        sel->by_key[at] = row;
        sel->by_file[at] = (unsigned char)f;
    }
}

/* Index the rows in use: per key the system file's if current, else the
 * user's; with mode warn, stale rows too (one line says so). */
static void index_rows(mpce_engine *e, struct mpce_selector *sel, int quiet)
{
    memset(sel->by_key, 0, sizeof(*sel->by_key) * N_ROWS);
    memset(sel->slice_min, 0, sizeof(*sel->slice_min) * MPCE_OP_COUNT * e->n_slots);
    sel->n_stale = 0;
    unsigned char *stale = calloc(N_ROWS, 1);
    if (!stale)
        return; /* out of memory: priority order */
    char first_why[600] = "";
    for (size_t f = 0; f < MPCE_SELECTOR_FILES; f++)
        index_file(e, sel, f, 0, stale, first_why, sizeof(first_why));
    for (size_t at = 0; at < N_ROWS; at++)
        sel->n_stale += stale[at] && !sel->by_key[at];
    if (e->cfg.tune.mode == MPCE_TUNE_WARN && sel->n_stale) {
        for (size_t f = 0; f < MPCE_SELECTOR_FILES; f++)
            index_file(e, sel, f, 1, stale, first_why, sizeof(first_why));
        if (!quiet)
            mpce_log(&e->log, MPCE_LOG_WARNING, NULL,
                     "%u pins rows may be stale and are used anyway ([tune] mode = warn); the "
                     "first: %s; `mpcengine tune` measures them again", sel->n_stale,
                     first_why);
    }
    free(stale);
    /* The pool's thresholds of the rows in use. Two variants may share a
     * winner with different crossovers: the larger one never makes a call
     * slower than one thread. */
    for (size_t at = 0; at < N_ROWS; at++) {
        const struct mpce_pins_row *row = sel->by_key[at];
        const struct mpce_slot *s = row && row->slice_min ? mpce_registry_find(e, row->winner)
                                                          : NULL;
        if (s != NULL) {
            size_t op = at / (MPCE_VARIANTS * MPCE_SIZE_CLASSES);
            uint64_t *slot_min = &sel->slice_min[op * e->n_slots + s->index];
            if (row->slice_min > *slot_min)
                *slot_min = row->slice_min;
        }
    }
}

mpce_status mpce_selector_start(mpce_engine *e, const mpce_options *opts)
{
    struct mpce_selector *sel = calloc(1, sizeof(*sel));
    const struct mpce_pins_row **by_key = calloc(N_ROWS, sizeof(*by_key));
    unsigned char *by_file = calloc(N_ROWS, 1);
    uint64_t *slice_min = calloc((size_t)MPCE_OP_COUNT * (e->n_slots ? e->n_slots : 1),
                                 sizeof(*slice_min));
    if (!sel || !by_key || !by_file || !slice_min) {
        free(sel);
        free(by_key);
        free(by_file);
        free(slice_min);
        return mpce_error(MPCE_ERR_NOMEM, "out of memory starting the selector");
    }
    sel->by_key = by_key;
    sel->by_file = by_file;
    sel->slice_min = slice_min;
    e->selector = sel;
    const enum mpce_tune_mode mode = e->cfg.tune.mode;
    if (mode == MPCE_TUNE_OFF)
        return MPCE_OK;
    mpce_signature_cpu(sel->cpu, sizeof(sel->cpu));
    int any = load(e, sel, 0);
    index_rows(e, sel, 0);
    if (mode == MPCE_TUNE_WARN) {
        if (!any)
            mpce_log(&e->log, MPCE_LOG_INFO, NULL, "no pins file ([tune] mode = warn does not "
                     "tune): \"auto\" keeps priority order until `mpcengine tune` runs");
        return MPCE_OK;
    }
    if (mode == MPCE_TUNE_FORCE || !any || sel->n_stale > 0) {
        const int wait = mode == MPCE_TUNE_AUTO || mode == MPCE_TUNE_FORCE;
        if (mpce_selector_spawn(e, opts, mode == MPCE_TUNE_FORCE,
                                wait ? e->cfg.tune.timeout_ms : 0)) {
            load(e, sel, 1);
            index_rows(e, sel, 1);
        }
    }
    return MPCE_OK;
}

void mpce_selector_free(mpce_engine *e)
{
    struct mpce_selector *sel = e->selector;
    if (!sel)
        return;
    for (size_t i = 0; i < MPCE_SELECTOR_FILES; i++)
        mpce_pins_free(&sel->pins[i]);
    free(sel->by_key);
    free(sel->by_file);
    free(sel->slice_min);
    free(sel);
    e->selector = NULL;
}
