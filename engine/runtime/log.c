/* SPDX-License-Identifier: Apache-2.0 */
/* Messages go to the embedder's callback, never to a stream of its process. */
#include "config.h"

#include <stdio.h>

#include "engine/internal.h"

void mpce_vlog(const struct mpce_logger *log, mpce_log_level level, const char *plugin,
               const char *fmt, va_list ap)
{
    if (log == NULL || log->fn == NULL || level < log->level)
        return;
    char msg[1024];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    log->fn(log->arg, level, plugin, msg);
}

void mpce_log(const struct mpce_logger *log, mpce_log_level level, const char *plugin,
              const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mpce_vlog(log, level, plugin, fmt, ap);
    va_end(ap);
}
