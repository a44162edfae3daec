/*
 * Engine configuration: the INI layers of DESIGN.md (plugins.d snippets, the
 * administrator's engine.conf and engine.conf.d, the user's file), then the
 * MPCENGINE_* environment and the caller's options. Later layers win key by
 * key. The schema is documented in conf/engine.conf.
 */
#ifndef MPCE_ENGINE_CONF_H
#define MPCE_ENGINE_CONF_H

#include <stddef.h>

#include "mpcengine/common.h"

#ifndef MPCE_PLUGINDIR
#define MPCE_PLUGINDIR "/usr/local/lib/mpcengine/plugins"
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
    char *where;   /* "FILE" of the layer that set enabled */
};

struct mpce_config {
    char **plugin_dirs;          /* absolute directories, in search order */
    size_t n_plugin_dirs;
    int plugin_dirs_default;     /* still the compiled-in directory */
    int allow_variable_time;
    int strict;
    int user_config;
    int no_plugins;              /* MPCE_OPT_NO_PLUGINS */
    unsigned threads;            /* [engine] threads; 0: one per online CPU */
    struct mpce_plugin_setting *plugins;
    size_t n_plugins;
    /* Explicit choice per primitive (NULL: auto) and where it was made,
     * e.g. "[pins] prg = x (/etc/mpcengine/engine.conf:12)". */
    char *pin[MPCE_PRIM_COUNT];
    char *pin_src[MPCE_PRIM_COUNT];
    char **files;                /* files read, in order */
    size_t n_files;
};

/* Defaults: the compiled-in plugin directory, every flag at its default. */
mpce_status mpce_config_init(struct mpce_config *cfg);

/*
 * Apply one INI file over cfg. A missing file is fine unless must_exist
 * (then MPCE_ERR_CONFIG naming the file and `origin`, e.g. "MPCENGINE_CONF").
 * Unknown sections and keys warn on stderr; malformed values fail with
 * MPCE_ERR_CONFIG "FILE:LINE: [section] key = value: expected ...".
 */
mpce_status mpce_config_read_file(struct mpce_config *cfg, const char *path, int must_exist,
                                  const char *origin);

/* Every layer, environment and option for an engine (opts may be NULL). */
mpce_status mpce_config_load(struct mpce_config *cfg, const mpce_options *opts);

void mpce_config_free(struct mpce_config *cfg);

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
