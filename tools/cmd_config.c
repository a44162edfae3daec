/* SPDX-License-Identifier: Apache-2.0 */
/* mpcengine config: the configuration the engine runs with, where each
 * setting came from, and what "auto" means per operation and size class. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "tools/cli.h"
#include "tools/cli_args.h"
#include "tools/cli_engine.h"
#include "tools/cli_io.h"

const char cli_usage_config[] =
    "usage: mpcengine config [--json] [--config FILE] [--plugin-path DIRS]\n"
    "  The effective configuration: the files read, in order; every setting with\n"
    "  the file and line (or variable, or \"default\") that set it; and, per\n"
    "  operation, variant (\"q50\"/\"qwide\": NTT moduli below 2^50 or not;\n"
    "  \"k16\"/\"kbig\": LPN tables up to 2^16 blocks or larger) and size class\n"
    "  (tiny < 64, small < 4096, medium < 262144 units, large), the implementation\n"
    "  \"auto\" runs (with the knob values it passes, as IMPL:KNOB=VALUE), the order\n"
    "  it tries them in and what decided (a pin, the\n"
    "  selector's measurement or the priorities). A context whose parameters an\n"
    "  implementation does not serve moves on down the order.\n"
    "  --json             one object with keys files, settings (section, key,\n"
    "                     value, source) and routes (op, variant, size_class, impl,\n"
    "                     knobs, order, source)\n"
    "  --config FILE      read FILE instead of the administrator's engine.conf\n"
    "  --plugin-path DIRS module directories, ':'-separated, replacing plugin_path\n"
    "  --help             show this text\n";

static void print_json(const char *const *files, size_t nfiles, const mpce_setting_info *set,
                       size_t nset, const mpce_route_info *routes, size_t nroutes)
{
    printf("{\"files\": [");
    for (size_t i = 0; i < nfiles; i++) {
        printf("%s", i ? ", " : "");
        cli_json_string(files[i]);
    }
    printf("],\n \"settings\": [");
    for (size_t i = 0; i < nset; i++) {
        const char *const kv[] = {"section", set[i].section, "key",    set[i].key,
                                  "value",   set[i].value,   "source", cli_source_name(set[i].source)};
        printf("%s\n  {", i ? "," : "");
        cli_json_fields(kv, 4);
        putchar('}');
    }
    printf("],\n \"routes\": [");
    for (size_t i = 0; i < nroutes; i++) {
        const mpce_route_info *r = &routes[i];
        const char *const kv[] = {"op",    r->op,    "variant", r->variant, "size_class",
                                  r->size_class, "impl", r->impl, "knobs", r->knobs,
                                  "order", r->order, "source", r->source};
        printf("%s\n  {", i ? "," : "");
        cli_json_fields(kv, 7);
        putchar('}');
    }
    printf("]}\n");
}

/* The choice as a pin would name it: "lpn-aesni:chunk=128:prefetch=8". */
static int route_impl(const mpce_route_info *r, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s%s%s", r->impl[0] ? r->impl : "-", r->knobs[0] ? ":" : "",
                     r->knobs);
    return n < 0 ? 0 : n;
}

static void print_text(const char *const *files, size_t nfiles, const mpce_setting_info *set,
                       size_t nset, const mpce_route_info *routes, size_t nroutes)
{
    printf("files read, in order:%s\n", nfiles ? "" : " none");
    for (size_t i = 0; i < nfiles; i++)
        printf("  %s\n", files[i]);
    printf("settings:\n");
    int w = 0;
    char line[512];
    for (size_t i = 0; i < nset; i++) {
        int n = snprintf(line, sizeof(line), "[%s] %s = %s", set[i].section, set[i].key,
                         set[i].value);
        w = n > w ? n : w;
    }
    for (size_t i = 0; i < nset; i++) {
        snprintf(line, sizeof(line), "[%s] %s = %s", set[i].section, set[i].key, set[i].value);
        printf("  %-*s  (%s)\n", w, line, cli_source_name(set[i].source));
    }
    int wop = 2, wimpl = 4;
    char opv[64], impl[200];
    for (size_t i = 0; i < nroutes; i++) {
        int a = snprintf(opv, sizeof(opv), "%s%s%s", routes[i].op, routes[i].variant[0] ? " " : "",
                         routes[i].variant);
        int b = route_impl(&routes[i], impl, sizeof(impl));
        wop = a > wop ? a : wop;
        wimpl = b > wimpl ? b : wimpl;
    }
    printf("auto, per operation, variant and size class:\n  %-*s  %-6s  %-*s  %s\n", wop, "OP", "SIZE",
           wimpl, "IMPL", "DECIDED BY; ORDER");
    for (size_t i = 0; i < nroutes; i++) {
        snprintf(opv, sizeof(opv), "%s%s%s", routes[i].op, routes[i].variant[0] ? " " : "",
                 routes[i].variant);
        route_impl(&routes[i], impl, sizeof(impl));
        printf("  %-*s  %-6s  %-*s  %s; %s\n", wop, opv, routes[i].size_class, wimpl, impl,
               routes[i].source,
               routes[i].order[0] ? routes[i].order : "(none usable)");
    }
}

int cmd_config(int argc, char **argv)
{
    struct cli_opt opts[] = {{"json", 0, NULL}, CLI_COMMON_OPTS};
    const struct cli_cmd cmd = {"mpcengine config", cli_usage_config, opts};
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_PARSED)
        return cli_parse_exit(rc);
    if (cli_impl(&cmd) != NULL)
        return cli_fail(&cmd, CLI_EXIT_USAGE, "--impl: config shows every implementation's "
                        "route; it takes no --impl");
    rc = cli_engine_start(&cmd);
    if (rc != 0)
        return rc;
    const char *const *files;
    const mpce_setting_info *set;
    const mpce_route_info *routes;
    size_t nfiles, nset, nroutes;
    mpce_status st = mpce_config_info(NULL, &files, &nfiles, &set, &nset);
    if (st == MPCE_OK)
        st = mpce_routes(NULL, &routes, &nroutes);
    if (st != MPCE_OK)
        return cli_engine_fail(&cmd, st);
    if (cli_value(&cmd, "json") != NULL)
        print_json(files, nfiles, set, nset, routes, nroutes);
    else
        print_text(files, nfiles, set, nset, routes, nroutes);
    return CLI_EXIT_OK;
}
