/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/internal.h"
#include "engine/selector/selector.h"
#include "tools/build_tree.h"
#include "tools/cli.h"
#include "tools/cli_engine.h"

static int started;
/* The plugin directories came from --plugin-path, not from plugin_path. */
static int plugin_path_given;

/* The library writes nothing itself: the command prints its messages, one
 * line each, on stderr. */
static void log_to_stderr(void *arg, mpce_log_level level, const char *plugin,
                          const char *message)
{
    static const char setting[] = "check plugin_path";
    const int loud = level >= MPCE_LOG_WARNING;
    char text[4096];
    (void)arg;
    cli_engine_detail(message, text, sizeof(text));
    /* The loader's advice names the setting; this user set the option. */
    char *at = plugin_path_given ? strstr(text, setting) : NULL;
    if (at != NULL && at[sizeof(setting) - 1] == '\0')
        snprintf(at, sizeof(text) - (size_t)(at - text), "check --plugin-path");
    fprintf(stderr, "mpcengine: %s%s%s%s%s%s\n", loud ? mpce_log_level_name(level) : "",
            loud ? ": " : "", plugin ? "plugin " : "", plugin ? plugin : "", plugin ? ": " : "",
            text);
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
        /* The source ends with why it is unusable (not installed, failed
         * its self-test, variable-time, disabled, wrong primitive), so the
         * hint stays general. */
        fprintf(stderr, "%s: warning: %s; the calls it routes fail: fix or remove the pin as "
                        "the reason says (see 'mpcengine config')\n",
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

void cli_use_build_tree(void)
{
#if defined(MPCE_BUILD_TREE_TOOLS)
    static char helper[sizeof(MPCE_BUILD_TREE_TOOLS) + 32];
    struct stat sb;
    if (!mpce_tools_build_tree(MPCE_BUILD_TREE_TOOLS, MPCE_BUILD_TREE_TOOLS))
        return;
    snprintf(helper, sizeof(helper), "%s/probe/mpcengine-probe", MPCE_BUILD_TREE_TOOLS);
    if (stat(helper, &sb) == 0)
        mpce_selector_default_helper_override = helper;
#endif
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
    plugin_path_given = opts.plugin_path != NULL;
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

/* The library names its API: the option fields the command filled from its
 * own options, the functions it called and their arguments. A command-line
 * user knows them by the options, so messages are translated back. */
static const struct {
    const char *field, *option;
} option_names[] = {
    {"mpce_options.config_path", "--config"},
    {"mpce_options.plugin_path", "--plugin-path (relative entries made absolute)"},
    {"mpce_options.flags MPCE_OPT_NO_TUNE", "this command, which never tunes"},
};

#define N_OPTION_NAMES (sizeof(option_names) / sizeof(option_names[0]))

/* Array arguments, named with an index: "moduli[0]", "in[17]". */
static const struct {
    const char *arg, *format; /* format takes the index, shown from `base` */
    unsigned base;
} array_names[] = {
    {"moduli", "--moduli value %llu", 1},
    {"in", "word %llu of --in", 0},
    {"a", "word %llu of --in", 0},  /* ntt mul: the first operand */
    {"b", "word %llu of --in2", 0}, /* and the second */
    {"points", "--points value %llu", 1},
};

/* A message that starts with the function that refused ("mpce_ntt_forward: "):
 * the command's own prefix says that already, except for the key parser,
 * which speaks of the --key file. */
static size_t api_prefix(const char *s, const char **replacement)
{
    size_t n = 0;

    *replacement = "";
    if (strncmp(s, "mpce_", 5) != 0)
        return 0;
    n = 5;
    while ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9') || s[n] == '_')
        n++;
    if (s[n] != ':' || s[n + 1] != ' ')
        return 0;
    if (strncmp(s, "mpce_dpf_key_parse:", 19) == 0)
        *replacement = "--key: ";
    return n + 2;
}

/* "NAME[digits]" at s: the length matched (0: none) and the translation in
 * buf. */
static size_t array_ref(const char *s, char *buf, size_t len)
{
    for (size_t k = 0; k < sizeof(array_names) / sizeof(array_names[0]); k++) {
        size_t n = strlen(array_names[k].arg);
        if (strncmp(s, array_names[k].arg, n) != 0 || s[n] != '[')
            continue;
        char *end;
        unsigned long long index = strtoull(s + n + 1, &end, 10);
        if (end == s + n + 1 || *end != ']')
            continue;
        snprintf(buf, len, array_names[k].format, index + array_names[k].base);
        return (size_t)(end + 1 - s);
    }
    return 0;
}

/* An argument's name starts a word of the message: after a space or a
 * parenthesis, never inside a path ("/tmp/in[1]/x") or another name. */
static int starts_word(const char *msg, const char *p)
{
    return p == msg || p[-1] == ' ' || p[-1] == '(';
}

/* Append text to buf (len bytes, *used of them taken), cut short if need
 * be; *used stays below len. */
static void append(char *buf, size_t len, size_t *used, const char *text)
{
    int n = snprintf(buf + *used, len - *used, "%s", text);
    if (n > 0)
        *used += (size_t)n < len - *used ? (size_t)n : len - *used - 1;
}

const char *cli_engine_detail(const char *detail, char *buf, size_t len)
{
    size_t used = 0;
    const char *rep;

    if (len == 0)
        return buf;
    buf[0] = '\0';
    const char *p = detail + api_prefix(detail, &rep);
    append(buf, len, &used, rep);
    for (; *p != '\0' && used + 1 < len; p++) {
        size_t k = 0;
        while (k < N_OPTION_NAMES &&
               strncmp(p, option_names[k].field, strlen(option_names[k].field)) != 0)
            k++;
        if (k < N_OPTION_NAMES) {
            append(buf, len, &used, option_names[k].option);
            p += strlen(option_names[k].field) - 1;
            continue;
        }
        char ref[96];
        size_t n = starts_word(detail, p) ? array_ref(p, ref, sizeof(ref)) : 0;
        if (n > 0) {
            append(buf, len, &used, ref);
            p += n - 1;
            continue;
        }
        /* One line whatever the detail holds: the message is meant for grep. */
        buf[used++] = *p == '\n' || *p == '\r' ? ' ' : *p;
        buf[used] = '\0';
    }
    return buf;
}

const char *cli_source_name(const char *source)
{
    for (size_t k = 0; k < N_OPTION_NAMES; k++)
        if (strcmp(source, option_names[k].field) == 0)
            return option_names[k].option;
    return source;
}

const char *cli_last_error_or(const char *fallback)
{
    const char *detail = mpce_last_error();
    return detail != NULL && detail[0] != '\0' ? detail : fallback;
}

int cli_engine_fail(const struct cli_cmd *cmd, mpce_status status)
{
    char text[4096];

    fprintf(stderr, "%s: %s\n", cmd->prog,
            cli_engine_detail(cli_last_error_or(mpce_status_name(status)), text, sizeof(text)));
    return CLI_EXIT_ENGINE;
}

const char *cli_impl(const struct cli_cmd *cmd)
{
    return cli_value(cmd, "impl");
}
