#include "config.h"

#include <stdio.h>
#include <string.h>

#include "tools/cli.h"
#include "tools/cli_engine.h"

static int started;

int cli_engine_start(const struct cli_cmd *cmd)
{
    const char *config = cli_value(cmd, "config");
    mpce_status st;

    if (config != NULL) {
        mpce_options opts;
        memset(&opts, 0, sizeof(opts));
        opts.struct_size = sizeof(opts);
        opts.config_path = config;
        st = mpce_init_with(&opts);
    } else {
        st = mpce_init();
    }
    if (st != MPCE_OK)
        return cli_engine_fail(cmd, st);
    started = 1;
    return 0;
}

void cli_engine_stop(void)
{
    if (started)
        mpce_shutdown();
    started = 0;
}

int cli_engine_fail(const struct cli_cmd *cmd, mpce_status status)
{
    const char *detail = mpce_last_error();

    if (detail == NULL || detail[0] == '\0')
        detail = mpce_status_name(status);
    /* One line whatever the detail holds: the message is meant for grep. */
    fprintf(stderr, "%s: ", cmd->prog);
    for (const char *p = detail; *p != '\0'; p++)
        fputc(*p == '\n' || *p == '\r' ? ' ' : *p, stderr);
    fputc('\n', stderr);
    return CLI_EXIT_ENGINE;
}

const char *cli_impl(const struct cli_cmd *cmd)
{
    return cli_value(cmd, "impl");
}
