/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "engine/internal.h"
#include "engine/selector/selector.h"
#include "tools/cli_engine.h"
#include "tools/cli_verbose.h"

int cli_verbose(const struct cli_cmd *cmd)
{
    return cli_value(cmd, "verbose") != NULL;
}

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The route's source, "priority", "[pins] KEY = NAME (FILE:LINE)",
 * "MPCENGINE_FORCE entry KEY:NAME" or "measured: ...", as a reason. */
static void reason(const mpce_route_info *r, char *buf, size_t len)
{
    if (strcmp(r->source, "priority") == 0)
        snprintf(buf, len, "priority order (%s)", r->order);
    else if (starts(r->source, "measured: "))
        snprintf(buf, len, "the tuned pins file (`mpcengine tune`): %s",
                 r->source + strlen("measured: "));
    else if (starts(r->source, "[pins]") || starts(r->source, "MPCENGINE_FORCE"))
        snprintf(buf, len, "pinned by %s", r->source);
    else
        snprintf(buf, len, "%s", r->source);
}

void cli_verbose_ran(const struct cli_cmd *cmd, const char *op, const struct mpce_params *params,
                     uint64_t elements, const char *ran)
{
    const char *impl = cli_impl(cmd);
    const char *size_class = mpce_size_class_name(mpce_size_class(elements));
    const char *variant =
        mpce_variant_name((mpce_primitive)params->primitive, mpce_shape_variant(params));
    char what[256], detail[2600];

    if (variant == NULL)
        variant = "";
    snprintf(what, sizeof(what), "%s%s%s, size class %s (%llu work element%s)", op,
             variant[0] ? " " : "", variant, size_class, (unsigned long long)elements,
             elements == 1 ? "" : "s");
    if (impl != NULL && strcmp(impl, "auto") != 0) {
        fprintf(stderr, "%s: %s: ran %s: named by --impl %s\n", cmd->prog, what, ran, impl);
        return;
    }

    const mpce_route_info *rows = NULL, *r = NULL;
    size_t count = 0;
    if (mpce_routes(NULL, &rows, &count) == MPCE_OK)
        for (size_t i = 0; i < count && r == NULL; i++)
            if (strcmp(rows[i].op, op) == 0 && strcmp(rows[i].size_class, size_class) == 0 &&
                strcmp(rows[i].variant, variant) == 0)
                r = &rows[i];
    if (r == NULL) {
        cli_engine_detail(cli_last_error_or("no route row"), detail, sizeof(detail));
        fprintf(stderr, "%s: %s: ran %s (what decided is unknown: %s)\n", cmd->prog, what, ran,
                detail);
        return;
    }
    /* The route's source names files and pins, never API fields: as is. */
    reason(r, detail, sizeof(detail));
    if (strcmp(r->impl, ran) == 0)
        fprintf(stderr, "%s: %s: ran %s%s%s: %s\n", cmd->prog, what, ran, r->knobs[0] ? ":" : "",
                r->knobs, detail);
    else if (strcmp(r->source, "priority") == 0)
        /* The route names implementations before any context's parameters
         * are known; one that does not serve these passes the call on. */
        fprintf(stderr, "%s: %s: ran %s: %s, in which %s comes first but does not serve "
                "this context's parameters\n", cmd->prog, what, ran, detail,
                r->impl[0] ? r->impl : "(none)");
    else
        fprintf(stderr, "%s: %s: ran %s: %s; in its order (%s) %s comes first but does not "
                "serve this context's parameters\n", cmd->prog, what, ran, detail, r->order,
                r->impl[0] ? r->impl : "(none)");
}
