/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which pins "auto" follows, and when to ask the probe helper for new ones.
 * The engine never measures in process (a CUDA context does not survive a
 * fork, and a module that crashes while being timed must not take the
 * application with it): it reads the pins file, checks each row against the
 * modules it actually loaded, and spawns the helper when [tune] mode says so.
 * Nothing here can fail an engine: a missing helper, a corrupt file or a
 * timeout leaves "auto" in priority order and says so in the log.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/selector/selector.h"

extern char **environ;

#define ROW_INDEX(op, v, sc) \
    (((size_t)(op) * MPCE_VARIANTS + (v)) * MPCE_SIZE_CLASSES + (sc))

size_t mpce_selector_dirs(const struct mpce_config *cfg, char dirs[2][4096])
{
    if (cfg->tune.dir) {
        snprintf(dirs[0], 4096, "%s", cfg->tune.dir);
        return 1;
    }
    snprintf(dirs[0], 4096, "%s", MPCE_PINSDIR);
    if (cfg->privileged)
        return 1;
    const char *xdg = mpce_config_env(cfg, "XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (xdg && xdg[0] == '/')
        snprintf(dirs[1], 4096, "%s/mpcengine", xdg);
    else if (home && home[0] == '/')
        snprintf(dirs[1], 4096, "%s/.cache/mpcengine", home);
    else
        return 1;
    return 2;
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

/* The whole file's half of the signature: CPU and engine. */
static int header_current(const struct mpce_pins *p, char *why, size_t len)
{
    char cpu[512];
    mpce_signature_cpu(cpu, sizeof(cpu));
    if (strcmp(p->cpu, cpu) != 0) {
        snprintf(why, len, "measured on another CPU (%.200s; this one is %.200s)", p->cpu, cpu);
        return 0;
    }
    if (strcmp(p->engine_version, mpce_version()) != 0) {
        snprintf(why, len, "measured with libmpcengine %.40s (this is %s)", p->engine_version,
                 mpce_version());
        return 0;
    }
    return 1;
}

int mpce_selector_row_current(const mpce_engine *e, const struct mpce_pins *p,
                              const struct mpce_pins_row *row, char *why, size_t len)
{
    if (!header_current(p, why, len))
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

const char *mpce_selector_blacklisted(const mpce_engine *e, const struct mpce_module *m)
{
    const struct mpce_selector *sel = e->selector;
    if (sel == NULL || !sel->loaded || m->fd < 0)
        return NULL;
    for (size_t i = 0; i < sel->pins.n_blacklist; i++) {
        const struct mpce_pins_blacklist *b = &sel->pins.blacklist[i];
        if (strcmp(b->path, m->path) == 0 && b->size == m->size && b->mtime == m->mtime)
            return b->reason;
    }
    return NULL;
}

const struct mpce_pins_row *mpce_selector_row(const mpce_engine *e, enum mpce_op_id op,
                                              unsigned variant, unsigned size_class)
{
    const struct mpce_selector *sel = e->selector;
    if (sel == NULL || sel->by_key == NULL || variant >= MPCE_VARIANTS ||
        size_class >= MPCE_SIZE_CLASSES)
        return NULL;
    return sel->by_key[ROW_INDEX(op, variant, size_class)];
}

/* Read the first usable pins file; 1 if one was loaded. */
static int load(mpce_engine *e, struct mpce_selector *sel, int quiet)
{
    char dirs[2][4096];
    size_t n = mpce_selector_dirs(&e->cfg, dirs);
    mpce_pins_free(&sel->pins);
    sel->loaded = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4200], why[1024] = "";
        snprintf(path, sizeof(path), "%s/%s", dirs[i], MPCE_PINS_FILE);
        struct mpce_pins p;
        enum mpce_pins_read_result r = mpce_pins_read(path, &p, why, sizeof(why));
        if (r == MPCE_PINS_READ_MISSING)
            continue;
        if (r != MPCE_PINS_READ_OK) {
            if (!quiet)
                mpce_log(&e->log, MPCE_LOG_WARNING, NULL,
                         "pins file not used: %s; the next tune replaces it (`mpcengine tune`)",
                         why);
            continue;
        }
        if (!header_current(&p, why, sizeof(why))) {
            if (!quiet)
                mpce_log(&e->log, MPCE_LOG_INFO, NULL, "%s: %s", path, why);
            /* warn keeps stale pins: the first file found, for what it is worth. */
            if (e->cfg.tune.mode != MPCE_TUNE_WARN) {
                mpce_pins_free(&p);
                continue;
            }
        }
        sel->pins = p;
        sel->loaded = 1;
        snprintf(sel->path, sizeof(sel->path), "%s", path);
        return 1;
    }
    return 0;
}

/* Index the current rows (with mode warn: every row, stale ones logged). */
static void index_rows(mpce_engine *e, struct mpce_selector *sel, int quiet)
{
    memset(sel->by_key, 0, sizeof(*sel->by_key) * MPCE_OP_COUNT * MPCE_VARIANTS *
                               MPCE_SIZE_CLASSES);
    memset(sel->slice_min, 0, sizeof(*sel->slice_min) * MPCE_OP_COUNT * e->n_slots);
    sel->n_current = sel->n_stale = 0;
    if (!sel->loaded)
        return;
    for (size_t i = 0; i < sel->pins.n_rows; i++) {
        const struct mpce_pins_row *row = &sel->pins.rows[i];
        enum mpce_op_id op;
        unsigned v, sc;
        char why[512];
        if (mpce_row_parse(row->key, &op, &v, &sc) != 0)
            continue;
        if (mpce_selector_row_current(e, &sel->pins, row, why, sizeof(why))) {
            sel->n_current++;
        } else {
            sel->n_stale++;
            if (e->cfg.tune.mode != MPCE_TUNE_WARN)
                continue;
            if (!quiet)
                mpce_log(&e->log, MPCE_LOG_WARNING, NULL,
                         "%s: row %s is kept although it may be stale ([tune] mode = warn): %s",
                         sel->path, row->key, why);
        }
        sel->by_key[ROW_INDEX(op, v, sc)] = row;
        /* Two variants may share a winner with different crossovers: the
         * larger threshold is right for both often enough and never makes
         * a call slower than one thread. */
        const struct mpce_slot *s = row->slice_min ? mpce_registry_find(e, row->winner) : NULL;
        if (s != NULL) {
            uint64_t *at = &sel->slice_min[(size_t)op * e->n_slots + s->index];
            if (row->slice_min > *at)
                *at = row->slice_min;
        }
    }
}

uint64_t mpce_selector_slice_min(const mpce_engine *e, enum mpce_op_id op,
                                 const struct mpce_slot *slot)
{
    const struct mpce_selector *sel = e->selector;
    if (sel == NULL || sel->slice_min == NULL || slot == NULL || op >= MPCE_OP_COUNT)
        return 0;
    return sel->slice_min[(size_t)op * e->n_slots + slot->index];
}

/* Milliseconds on the monotonic clock. */
static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Log the helper's lines as they come, until it closes its end or the
 * deadline passes (then 1). */
static int relay(mpce_engine *e, int fd, long long deadline)
{
    char buf[4096];
    size_t have = 0;
    for (;;) {
        long long left = deadline - now_ms();
        if (left <= 0)
            return 1;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int r = poll(&pfd, 1, (int)(left > 1000000 ? 1000000 : left));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue;
        ssize_t got = read(fd, buf + have, sizeof(buf) - 1 - have);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        have += (size_t)got;
        buf[have] = '\0';
        char *line = buf, *nl;
        while ((nl = strchr(line, '\n')) != NULL) {
            *nl = '\0';
            if (line[0])
                mpce_log(&e->log, MPCE_LOG_INFO, NULL, "tune: %s", line);
            line = nl + 1;
        }
        have = strlen(line);
        memmove(buf, line, have);
        if (have == sizeof(buf) - 1) {
            buf[have] = '\0';
            mpce_log(&e->log, MPCE_LOG_INFO, NULL, "tune: %s", buf);
            have = 0;
        }
    }
    if (have) {
        buf[have] = '\0';
        mpce_log(&e->log, MPCE_LOG_INFO, NULL, "tune: %s", buf);
    }
    return 0;
}

/* Whether the helper may be run by this process: a privileged one runs only
 * a root-owned file that nobody else can change. */
static int helper_ok(const mpce_engine *e, const char *helper, char *why, size_t len)
{
    struct stat sb;
    if (stat(helper, &sb) != 0) {
        snprintf(why, len, "%s: %s", helper, strerror(errno));
        return 0;
    }
    if (!S_ISREG(sb.st_mode) || !(sb.st_mode & S_IXUSR)) {
        snprintf(why, len, "%s is not an executable file", helper);
        return 0;
    }
    if (e->cfg.privileged && (sb.st_uid != 0 || (sb.st_mode & (S_IWGRP | S_IWOTH)))) {
        snprintf(why, len, "%s is not owned by root or is writable by others: a privileged "
                 "process does not run it", helper);
        return 0;
    }
    return 1;
}

/*
 * Spawn the helper: `mpcengine-probe tune --for-engine ...` detaches at once
 * (its first process exits, so nothing is left for this one to reap) and
 * writes its progress to the pipe. wait_ms 0: do not wait. Returns 1 if it
 * finished within wait_ms.
 */
static int run_helper(mpce_engine *e, const mpce_options *opts, int force, unsigned wait_ms)
{
    const char *helper = e->cfg.tune.helper ? e->cfg.tune.helper : MPCE_PROBE_HELPER;
    char why[4200];
    if (!helper_ok(e, helper, why, sizeof(why))) {
        static int said;
        if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
            mpce_log(&e->log, MPCE_LOG_INFO, NULL,
                     "no probe helper (%s): \"auto\" keeps priority order until `mpcengine "
                     "tune` runs", why);
        return 0;
    }
    char flags[32], timeout[32];
    snprintf(flags, sizeof(flags), "%u", opts ? opts->flags : 0u);
    snprintf(timeout, sizeof(timeout), "%u", e->cfg.tune.timeout_ms);
    const char *argv[16];
    size_t n = 0;
    argv[n++] = helper;
    argv[n++] = "tune";
    argv[n++] = "--for-engine";
    argv[n++] = "--effort";
    argv[n++] = "quick";
    argv[n++] = "--flags";
    argv[n++] = flags;
    if (force)
        argv[n++] = "--force";
    if (opts && opts->config_path) {
        argv[n++] = "--config";
        argv[n++] = opts->config_path;
    }
    if (opts && opts->plugin_path) {
        argv[n++] = "--plugin-path";
        argv[n++] = opts->plugin_path;
    }
    argv[n] = NULL;

    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        mpce_log(&e->log, MPCE_LOG_WARNING, NULL, "cannot start the probe helper: pipe: %s",
                 strerror(errno));
        return 0;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
#ifdef HAVE_POSIX_SPAWN_FILE_ACTIONS_ADDCLOSEFROM_NP
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
#endif
    /* The application's signal mask and dispositions are its own. */
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid;
    int rc = posix_spawn(&pid, helper, &fa, &attr, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        mpce_log(&e->log, MPCE_LOG_WARNING, NULL, "cannot start the probe helper %s: %s",
                 helper, strerror(rc));
        return 0;
    }
    /* The first process only detaches: reap it now. */
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    int done = 0;
    if (wait_ms > 0) {
        done = !relay(e, fds[0], now_ms() + wait_ms);
        if (!done)
            mpce_log(&e->log, MPCE_LOG_INFO, NULL,
                     "the tune did not finish within [tune] timeout = %.1f s: \"auto\" keeps "
                     "priority order in this process; the helper goes on and writes pins "
                     "for the next one", wait_ms / 1000.0);
    } else {
        mpce_log(&e->log, MPCE_LOG_INFO, NULL,
                 "tuning in the background ([tune] mode = background): \"auto\" keeps "
                 "priority order in this process");
    }
    close(fds[0]);
    return done;
}

mpce_status mpce_selector_start(mpce_engine *e, const mpce_options *opts)
{
    struct mpce_selector *sel = calloc(1, sizeof(*sel));
    const struct mpce_pins_row **by_key =
        calloc((size_t)MPCE_OP_COUNT * MPCE_VARIANTS * MPCE_SIZE_CLASSES, sizeof(*by_key));
    uint64_t *slice_min = calloc((size_t)MPCE_OP_COUNT * (e->n_slots ? e->n_slots : 1),
                                 sizeof(*slice_min));
    if (!sel || !by_key || !slice_min) {
        free(sel);
        free(by_key);
        free(slice_min);
        return mpce_error(MPCE_ERR_NOMEM, "out of memory starting the selector");
    }
    sel->by_key = by_key;
    sel->slice_min = slice_min;
    e->selector = sel;
    const enum mpce_tune_mode mode = e->cfg.tune.mode;
    if (mode == MPCE_TUNE_OFF) {
        snprintf(sel->status, sizeof(sel->status), "[tune] mode = off: priority order");
        return MPCE_OK;
    }
    load(e, sel, 0);
    index_rows(e, sel, 0);
    int need = mode == MPCE_TUNE_FORCE || !sel->loaded || sel->n_stale > 0;
    if (need && mode != MPCE_TUNE_WARN) {
        const int wait = mode == MPCE_TUNE_AUTO || mode == MPCE_TUNE_FORCE;
        if (run_helper(e, opts, mode == MPCE_TUNE_FORCE, wait ? e->cfg.tune.timeout_ms : 0)) {
            load(e, sel, 1);
            index_rows(e, sel, 1);
        }
    }
    if (sel->loaded)
        snprintf(sel->status, sizeof(sel->status), "%s (%s, %s effort): %u rows current, %u "
                 "stale", sel->path, sel->pins.date, sel->pins.effort, sel->n_current,
                 sel->n_stale);
    else
        snprintf(sel->status, sizeof(sel->status), "no pins file: priority order");
    return MPCE_OK;
}

void mpce_selector_free(mpce_engine *e)
{
    struct mpce_selector *sel = e->selector;
    if (!sel)
        return;
    mpce_pins_free(&sel->pins);
    free(sel->by_key);
    free(sel->slice_min);
    free(sel);
    e->selector = NULL;
}
