/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Engine configuration: the INI layers of DESIGN.md (plugins.d snippets, the
 * administrator's engine.conf and engine.conf.d, the user's file), then the
 * MPCENGINE_* environment and the caller's options. Later layers win key by
 * key, and every setting remembers which layer made it. The schema is
 * documented in conf/engine.conf.
 */
#ifndef MPCE_ENGINE_CONF_H
#define MPCE_ENGINE_CONF_H

#include <stddef.h>

#include "mpcengine/common.h"

#ifndef MPCE_PLUGINDIR
#define MPCE_PLUGINDIR "/usr/local/lib/mpcengine/plugins-2"
#define MPCE_PLUGINDIR_ABI 2
#endif
#ifndef MPCE_CONFDIR
#define MPCE_CONFDIR "/usr/local/etc/mpcengine"
#endif
/* The largest [engine] threads value accepted. */
#define MPCE_CONFIG_MAX_THREADS 256u

#ifndef MPCE_SNIPPETDIR
#define MPCE_SNIPPETDIR "/usr/local/share/mpcengine/plugins.d"
#endif

/* [plugin.NAME] settings. */
struct mpce_plugin_setting {
    char *name;
    int enabled;
    char *where;   /* "FILE:LINE" of the layer that set enabled */
};

/* An explicit choice for "auto": key "prg" (the whole primitive), "prg.ecb"
 * (one op) or "prg.ecb.large" (one op and size class); the most specific
 * key wins. */
struct mpce_pin {
    char *key;
    char *name;    /* the implementation */
    char *source;  /* "[pins] prg.ecb = x (FILE:LINE)", "MPCENGINE_FORCE entry ..." */
};

/* One effective setting and its source, for mpce_config_info. */
struct mpce_setting_rec {
    char *section;
    char *key;
    char *value;
    char *source;  /* "FILE:LINE", "MPCENGINE_*", "mpce_options", "default" */
};

/* [tune] mode: what the first engine that finds no valid pins does. */
enum mpce_tune_mode {
    MPCE_TUNE_AUTO = 0,      /* run the quick tune out of process, wait at most timeout */
    MPCE_TUNE_BACKGROUND,    /* start it and do not wait */
    MPCE_TUNE_OFF,           /* priority order; pins files are not read */
    MPCE_TUNE_FORCE,         /* re-tune at every start, wait at most timeout */
    MPCE_TUNE_WARN           /* use stale pins, and log why they may be stale */
};

/* [tune] settings. */
struct mpce_tune_config {
    enum mpce_tune_mode mode;
    int mode_set;            /* set by a file or option, not the default */
    enum mpce_tune_mode configured_mode; /* the files' or the default's mode, before
                                          * MPCE_OPT_NO_TUNE turns tuning off */
    unsigned timeout_ms;     /* how long auto and force wait (default 10 s) */
    unsigned hang_ms;        /* silence after which a candidate is hung (30 s) */
    unsigned vet_ms;         /* how long a module's vet may take (10 s) */
    int vet;                 /* vet modules out of process first (yes) */
    char *dir;               /* the one pins directory to use; NULL: system, then user */
    char *helper;            /* the probe helper; NULL: the compiled-in one */
    int census;              /* count the calls per shape class (selector/census.c) */
};

struct mpce_logger;

/* The plugin built into the library. It keeps every primitive served, so
 * the configuration cannot disable it. */
#define MPCE_BUILTIN_PLUGIN "soft"

struct mpce_config {
    char **plugin_dirs;          /* absolute directories, in search order */
    size_t n_plugin_dirs;
    int plugin_dirs_default;     /* still the compiled-in directory */
    int allow_variable_time;
    int strict;
    int user_config;
    int no_plugins;              /* MPCE_OPT_NO_PLUGINS */
    unsigned threads;            /* [engine] threads; 0: one per online CPU */
    int privileged;              /* root or setuid: files must be trusted */
    int use_env;                 /* MPCENGINE_* may be read */
    struct mpce_plugin_setting *plugins;
    size_t n_plugins;
    struct mpce_pin *pins;
    size_t n_pins;
    struct mpce_tune_config tune;
    struct mpce_setting_rec *settings;
    size_t n_settings;
    char **files;                /* files read, in order */
    size_t n_files;
    const struct mpce_logger *log; /* where warnings go (not owned) */
};

/* Defaults: the compiled-in plugin directory, every flag at its default. */
mpce_status mpce_config_init(struct mpce_config *cfg);

/* How much a file must be there: a missing one is fine (OPTIONAL), an error
 * (REQUIRED), or, in a drop-in directory, skipped with a warning like
 * anything there that is not a regular file (DROPIN). */
enum mpce_conf_need { MPCE_CONF_OPTIONAL = 0, MPCE_CONF_REQUIRED = 1, MPCE_CONF_DROPIN = 2 };

/*
 * Apply one INI file over cfg. A missing file is handled as `need` says
 * (REQUIRED: MPCE_ERR_CONFIG naming the file and `origin`, e.g.
 * "MPCENGINE_CONF").
 * Unknown sections and keys are logged as warnings; malformed values fail
 * with MPCE_ERR_CONFIG "FILE:LINE: [section] key = value: expected ...". In a
 * privileged process the file and its directories must be trusted (owned by
 * root or the user, not writable by others).
 */
mpce_status mpce_config_read_file(struct mpce_config *cfg, const char *path,
                                  enum mpce_conf_need need, const char *origin);

/* Every *.conf of a drop-in directory, sorted by name; a missing directory
 * is fine, and an entry that is not a regular file (a directory, a FIFO) is
 * skipped with a warning. */
mpce_status mpce_config_read_dir(struct mpce_config *cfg, const char *dir);

/* Every layer, environment and option for an engine (opts may be NULL);
 * warnings go to log. */
mpce_status mpce_config_load(struct mpce_config *cfg, const mpce_options *opts,
                             const struct mpce_logger *log);

void mpce_config_free(struct mpce_config *cfg);

/* Apply MPCENGINE_FORCE's value (KEY:IMPLEMENTATION[:KNOB=VALUE...][,...])
 * over cfg as mpce_config_load does when the environment applies; a
 * malformed entry fails with MPCE_ERR_CONFIG. Here for fuzz/fuzz_config.c,
 * whose process may be root (the environment then never applies). */
mpce_status mpce_config_parse_force(struct mpce_config *cfg, const char *value);

/* getenv, but NULL in a setuid/setgid process (secure_getenv where there is
 * one): for variables that are not overrides, such as HOME. */
const char *mpce_secure_getenv(const char *name);

/* An environment variable under the engine's rules: NULL for root and
 * setuid/setgid processes and with MPCE_OPT_NO_ENV. */
const char *mpce_config_env(const struct mpce_config *cfg, const char *name);

/* The pin that decides "auto" for op id `op` ("prg.ecb") and size class sc,
 * or NULL. */
const struct mpce_pin *mpce_config_pin(const struct mpce_config *cfg, const char *op,
                                       unsigned size_class);

/* "auto", "background", "off", "force", "warn". */
const char *mpce_tune_mode_name(enum mpce_tune_mode mode);

/* iniparser_load with its error text kept in this thread's buffer (*error,
 * if not NULL; "" when none) instead of printed on stderr: every INI file
 * the library reads is loaded through it. */
struct _dictionary_;
struct _dictionary_ *mpce_ini_load(const char *path, const char **error);

/* The [plugin.NAME] section for a plugin, or NULL. */
const struct mpce_plugin_setting *mpce_config_plugin(const struct mpce_config *cfg,
                                                     const char *name);

/*
 * Regular-or-linked entries of dir whose names end in suffix, sorted by
 * strcmp (locale-independent, so every run loads in the same order).
 * Returns 0, or -1 with errno set (ENOENT for a missing directory).
 */
int mpce_dir_list(const char *dir, const char *suffix, char ***names, size_t *count);
void mpce_dir_list_free(char **names, size_t count);

/* Whether user configuration and environment overrides must be ignored
 * (root, or a setuid/setgid process). */
int mpce_config_privileged(void);

#endif
