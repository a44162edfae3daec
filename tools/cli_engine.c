/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/internal.h"
#include "tools/cli.h"
#include "tools/cli_engine.h"

static int started;

/* The library writes nothing itself: the command prints its messages, one
 * line each, on stderr. */
static void log_to_stderr(void *arg, mpce_log_level level, const char *plugin,
                          const char *message)
{
    const int loud = level >= MPCE_LOG_WARNING;
    (void)arg;
    fprintf(stderr, "mpcengine: %s%s%s%s%s%s\n", loud ? mpce_log_level_name(level) : "",
            loud ? ": " : "", plugin ? "plugin " : "", plugin ? plugin : "", plugin ? ": " : "",
            message);
}

/* MPCENGINE_LOG=debug|info|warning|error: how much of it (default warning). */
static mpce_log_level log_level(void)
{
    const char *v = getenv("MPCENGINE_LOG");
    for (int i = MPCE_LOG_DEBUG; v != NULL && i <= MPCE_LOG_ERROR; i++)
        if (strcmp(v, mpce_log_level_name((mpce_log_level)i)) == 0)
            return (mpce_log_level)i;
    return MPCE_LOG_WARNING;
}

size_t cli_warn_dangling_pins(const struct cli_cmd *cmd)
{
    const mpce_route_info *rows = NULL;
    size_t count = 0, printed = 0;
    if (mpce_routes(NULL, &rows, &count) != MPCE_OK)
        return 0; /* the command's own calls report the engine's state */
    for (size_t i = 0; i < count; i++) {
        const char *src = rows[i].source;
        if (strstr(src, ": unusable: ") == NULL)
            continue;
        /* One pin routes many rows (every size class): say it once. */
        size_t j = 0;
        while (j < i && strcmp(rows[j].source, src) != 0)
            j++;
        if (j < i)
            continue;
        fprintf(stderr, "%s: warning: %s; the calls it routes fail: fix or remove the pin, or "
                        "install the plugin it names (see 'mpcengine config')\n",
                cmd->prog, src);
        printed++;
    }
    return printed;
}

int cli_plugin_path(const struct cli_cmd *cmd, const char **path)
{
    static char abs[8192];
    const char *v = cli_value(cmd, "plugin-path");
    char cwd[4096];
    size_t used = 0;

    *path = NULL;
    if (v == NULL)
        return 0;
    if (getcwd(cwd, sizeof(cwd)) == NULL)
        return cli_fail(cmd, CLI_EXIT_USAGE, "--plugin-path: cannot resolve relative "
                        "directories: the working directory is unknown");
    for (const char *p = v;;) {
        size_t len = strcspn(p, ":");
        int n = snprintf(abs + used, sizeof(abs) - used, "%s%s%s%.*s", used ? ":" : "",
                         len && p[0] != '/' ? cwd : "", len && p[0] != '/' ? "/" : "", (int)len,
                         p);
        if (n < 0 || (size_t)n >= sizeof(abs) - used)
            return cli_fail(cmd, CLI_EXIT_USAGE, "--plugin-path: too long");
        used += (size_t)n;
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    *path = abs;
    return 0;
}

int cli_engine_start(const struct cli_cmd *cmd)
{
    return cli_engine_start_flags(cmd, 0);
}

int cli_engine_start_flags(const struct cli_cmd *cmd, unsigned flags)
{
    mpce_options opts;
    memset(&opts, 0, sizeof(opts));
    opts.struct_size = sizeof(opts);
    opts.config_path = cli_value(cmd, "config");
    int rc = cli_plugin_path(cmd, &opts.plugin_path);
    if (rc != 0)
        return rc;
    opts.flags = flags;
    opts.log = log_to_stderr;
    opts.log_level = log_level();
    mpce_status st = mpce_init_with(&opts);
    if (st != MPCE_OK)
        return cli_engine_fail(cmd, st);
    started = 1;
    return 0;
}

int cli_engine_untuned(const struct cli_cmd *cmd, mpce_engine **e)
{
    int rc = cli_engine_start_flags(cmd, MPCE_OPT_NO_TUNE);
    if (rc != 0)
        return rc;
    if (mpce_engine_acquire(NULL, e) != MPCE_OK)
        return cli_engine_fail(cmd, MPCE_ERR_STATE);
    return 0;
}

void cli_engine_stop(void)
{
    if (started)
        mpce_shutdown();
    started = 0;
}

/* The library names the option fields the command filled from its own
 * options; a command-line user knows them by those. */
static const struct {
    const char *field, *option;
} option_names[] = {
    {"mpce_options.config_path", "--config"},
    {"mpce_options.plugin_path", "--plugin-path (relative entries made absolute)"},
};

const char *cli_source_name(const char *source)
{
    for (size_t k = 0; k < sizeof(option_names) / sizeof(option_names[0]); k++)
        if (strcmp(source, option_names[k].field) == 0)
            return option_names[k].option;
    return source;
}

int cli_engine_fail(const struct cli_cmd *cmd, mpce_status status)
{
    const char *detail = mpce_last_error();

    if (detail == NULL || detail[0] == '\0')
        detail = mpce_status_name(status);
    /* One line whatever the detail holds: the message is meant for grep. */
    fprintf(stderr, "%s: ", cmd->prog);
    for (const char *p = detail; *p != '\0'; p++) {
        size_t k = 0, n = sizeof(option_names) / sizeof(option_names[0]);
        while (k < n && strncmp(p, option_names[k].field, strlen(option_names[k].field)) != 0)
            k++;
        if (k < n) {
            fputs(option_names[k].option, stderr);
            p += strlen(option_names[k].field) - 1;
            continue;
        }
        fputc(*p == '\n' || *p == '\r' ? ' ' : *p, stderr);
    }
    fputc('\n', stderr);
    return CLI_EXIT_ENGINE;
}

const char *cli_impl(const struct cli_cmd *cmd)
{
    return cli_value(cmd, "impl");
}
