/* SPDX-License-Identifier: Apache-2.0 */
/* The services the engine offers a module (struct mpce_host). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/runtime/exec.h"
#include "engine/runtime/host.h"

static const struct mpce_host_rec *rec_of(const struct mpce_host *host)
{
    return host ? (const struct mpce_host_rec *)host->host_data : NULL;
}

static void host_log(const struct mpce_host *host, mpce_log_level level, const char *fmt, ...)
{
    const struct mpce_host_rec *r = rec_of(host);
    if (r == NULL)
        return;
    va_list ap;
    va_start(ap, fmt);
    mpce_vlog(&r->engine->log, level, r->plugin, fmt, ap);
    va_end(ap);
}

static void host_set_error(const struct mpce_host *host, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    mpce_plugin_detail_set(host, msg);
}

static const char *host_getenv(const struct mpce_host *host, const char *name)
{
    const struct mpce_host_rec *r = rec_of(host);
    return r && name ? mpce_config_env(&r->engine->cfg, name) : NULL;
}

static void host_complete(const struct mpce_host *host, struct mpce_completion *done, int status,
                          const char *message)
{
    (void)host;
    if (done != NULL)
        mpce_completion_signal(done, status, message);
}

struct mpce_host_rec *mpce_host_new(mpce_engine *e, const char *label)
{
    struct mpce_host_rec *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return NULL;
    r->host.struct_size = sizeof(struct mpce_host);
    r->host.abi_major = MPCE_PLUGIN_ABI_MAJOR;
    r->host.abi_minor = MPCE_PLUGIN_ABI_MINOR;
    r->host.log = host_log;
    r->host.set_error = host_set_error;
    r->host.getenv = host_getenv;
    r->host.complete = host_complete;
    r->host.host_data = r;
    r->engine = e;
    mpce_host_rename(r, label);
    return r;
}

void mpce_host_rename(struct mpce_host_rec *r, const char *label)
{
    snprintf(r->plugin, sizeof(r->plugin), "%s", label);
}
