/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The configuration reader (engine/runtime/config.c): one input is a stack
 * of layers separated by FUZZ_CONFIG_SEP lines; the first is the file given
 * as engine.conf (mpce_config_read_file), the others the *.conf files of a
 * drop-in directory read after it (mpce_config_read_dir), so that the
 * layering, not only one file, is exercised. iniparser 4.1 reads only from
 * a path, hence the files in this process's temporary directory. What
 * follows a FUZZ_FORCE_SEP line is a value of MPCENGINE_FORCE: applied over
 * the layers (mpce_config_parse_force), and, where the environment applies
 * (not root or setuid), set in the environment for a full
 * mpce_config_load over the first layer, and unset after.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef HAVE_INIPARSER_INIPARSER_H
#include <iniparser/iniparser.h>
#else
#include <iniparser.h>
#endif

#include "engine/runtime/conf.h"
#include "fuzz/fuzz.h"

#define FUZZ_CONFIG_SEP "\n--8<--\n"
#define FUZZ_FORCE_SEP "\n--force--\n"
#define MAX_LAYERS 8

static const char *const pin_ops[] = {"prg.ecb", "prg.mmo", "prg.ctr", "ntt.forward",
                                      "ntt.inverse", "ntt.mul", "lpn.fold", "dpf.gen",
                                      "dpf.eval", "dpf.evalall", "dpf.eval_keys"};

/* The first occurrence of sep in [data, end), or NULL; by hand, not
 * memmem/memcmp (libFuzzer hooks memcmp at every byte). */
static const uint8_t *find_sep(const uint8_t *data, const uint8_t *end, const char *sep)
{
    const size_t seplen = strlen(sep);
    for (const uint8_t *q = data; q + seplen <= end; q++) {
        size_t k = 0;
        while (k < seplen && q[k] == (uint8_t)sep[k])
            k++;
        if (k == seplen)
            return q;
    }
    return NULL;
}

/* Every refusal says what is wrong; what is accepted is well formed. */
static void check_config(const struct mpce_config *cfg, mpce_status st, const char *what)
{
    if (st != MPCE_OK) {
        const char *why = mpce_last_error();
        FUZZ_CHECK(why != NULL && why[0] != '\0', "%s: status %d without a message", what,
                   (int)st);
        return;
    }
    FUZZ_CHECK(cfg->threads <= MPCE_CONFIG_MAX_THREADS, "%s: threads = %u", what, cfg->threads);
    for (size_t i = 0; i < cfg->n_plugin_dirs; i++)
        FUZZ_CHECK(cfg->plugin_dirs[i][0] == '/', "%s: relative plugin dir '%s'", what,
                   cfg->plugin_dirs[i]);
    for (size_t i = 0; i < cfg->n_settings; i++)
        FUZZ_CHECK(cfg->settings[i].source != NULL && cfg->settings[i].key != NULL,
                   "%s: setting %zu without key or source", what, i);
    for (size_t i = 0; i < sizeof(pin_ops) / sizeof(pin_ops[0]); i++)
        for (unsigned sc = 0; sc < 4; sc++) {
            const struct mpce_pin *pin = mpce_config_pin(cfg, pin_ops[i], sc);
            FUZZ_CHECK(pin == NULL || (pin->name != NULL && pin->source != NULL),
                       "%s: pin for %s without a name or source", what, pin_ops[i]);
        }
    const struct mpce_plugin_setting *soft = mpce_config_plugin(cfg, MPCE_BUILTIN_PLUGIN);
    (void)soft;
    (void)mpce_tune_mode_name(cfg->tune.mode);
}


static char *dropin_dir(void)
{
    static char *dir;
    if (!dir) {
        size_t len = strlen(fuzz_temp_dir()) + sizeof("/engine.conf.d");
        dir = malloc(len);
        if (!dir)
            abort();
        snprintf(dir, len, "%s/engine.conf.d", fuzz_temp_dir());
        if (mkdir(dir, 0700) != 0)
            abort();
    }
    return dir;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *dir = dropin_dir();
    static unsigned last_layers;
    char name[32];

    /* The previous input's drop-ins must not leak into this one. */
    for (unsigned i = 0; i < last_layers; i++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%02u.conf", dir, i);
        unlink(path);
    }
    const uint8_t *p = data, *end = data + size;
    const size_t seplen = strlen(FUZZ_CONFIG_SEP);
    char *force = NULL;
    const uint8_t *fcut = find_sep(data, end, FUZZ_FORCE_SEP);
    if (fcut) {
        const uint8_t *v = fcut + strlen(FUZZ_FORCE_SEP);
        force = fuzz_strndup(v, (size_t)(end - v));
        end = fcut;
    }
    char *main_path = NULL;
    unsigned layers = 0;
    while (layers <= MAX_LAYERS) {
        /* By hand, not memcmp: libFuzzer's memcmp hook at every byte cost
         * more than the parse (the dictionary holds the separator). */
        const uint8_t *cut = NULL;
        for (const uint8_t *q = p; !cut && q + seplen <= end; q++) {
            size_t k = 0;
            while (k < seplen && q[k] == (uint8_t)FUZZ_CONFIG_SEP[k])
                k++;
            if (k == seplen)
                cut = q;
        }
        size_t len = (size_t)((cut ? cut : end) - p);
        if (layers == 0) {
            main_path = fuzz_write(fuzz_temp_dir(), "engine.conf", p, len);
        } else {
            snprintf(name, sizeof(name), "%02u.conf", layers - 1);
            free(fuzz_write(dir, name, p, len));
        }
        layers++;
        if (!cut)
            break;
        p = cut + seplen;
    }
    last_layers = layers - 1;

    /* mpce_ini_load, the INI loader every reader shares, runs inside
     * mpce_config_read_file; its message must be set whenever it fails. */
    struct mpce_config cfg;
    FUZZ_CHECK(mpce_config_init(&cfg) == MPCE_OK, "%s", mpce_last_error());
    fuzz_clear_error();
    mpce_status st = mpce_config_read_file(&cfg, main_path, MPCE_CONF_REQUIRED, "fuzz");
    if (st == MPCE_OK)
        st = mpce_config_read_dir(&cfg, dir);
    if (st != MPCE_OK) {
        const char *err = NULL;
        dictionary *d = mpce_ini_load(main_path, &err);
        /* A refusal by iniparser itself always comes with its reason. */
        FUZZ_CHECK(err != NULL && (d != NULL || err[0] != '\0'),
                   "iniparser refused without a message");
        if (d)
            iniparser_freedict(d);
    }
    if (st == MPCE_OK && force) {
        fuzz_clear_error();
        st = mpce_config_parse_force(&cfg, force);
    }
    check_config(&cfg, st, force ? "layers and MPCENGINE_FORCE" : "layers");
    mpce_config_free(&cfg);

    /* The variable through the environment, as an engine opening reads it:
     * over the first layer alone, no system or user files. Root ignores
     * the variable, so there only the direct parse above runs: said once. */
    static int said_privileged;
    if (force && mpce_config_privileged() && !said_privileged) {
        said_privileged = 1;
        fprintf(stderr, "fuzz_config: running as root, which ignores MPCENGINE_FORCE: its "
                "environment pass is skipped (mpce_config_parse_force is fuzzed directly); "
                "run as another user for that pass\n");
    }
    if (force && !mpce_config_privileged()) {
        FUZZ_CHECK(setenv("MPCENGINE_FORCE", force, 1) == 0, "setenv");
        mpce_options opts = {
            .struct_size = sizeof(opts),
            .config_path = main_path,
            .flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_SYSTEM_CONFIG | MPCE_OPT_NO_TUNE,
        };
        fuzz_clear_error();
        st = mpce_config_load(&cfg, &opts, NULL);
        unsetenv("MPCENGINE_FORCE");
        check_config(&cfg, st, "mpce_config_load with MPCENGINE_FORCE");
        mpce_config_free(&cfg); /* a no-op on what a failed load freed */
    }
    free(force);
    free(main_path);
    return 0;
}
